#!/usr/bin/env bash
# What the operator interface costs the learning switch (issue 11): the
# same `baton run` twice, one with the API off and one with the REST API,
# /metrics, the UI's live feed and the sampler on while a client scrapes
# /metrics every second and another holds the UI's event stream open.
# Both pinned to CPU 1, the emulator to CPU 0; `baton bench compare`
# interleaves the rounds, so the ratio is from one run.
#
#   scripts/bench/api-overhead.sh [SCENARIO] [RUNS]   # default throughput-16 5
set -euo pipefail
cd "$(dirname "$0")/../.."
scenario=${1:-throughput-16}
runs=${2:-5}
cargo build --release -p baton >/dev/null
B=target/release/baton
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
OFF=$(port) ON=$(port) API=$(port)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
RUST_LOG=warn taskset -c 1 $B run --workers 1 --apps learning-switch --listen 127.0.0.1:$OFF --api off &
pids+=($!)
RUST_LOG=warn taskset -c 1 $B run --workers 1 --apps learning-switch --listen 127.0.0.1:$ON --api 127.0.0.1:$API &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$API/api/v1/health" >/dev/null && break; sleep 0.1; done
# The clients: a Prometheus-like scrape every second, and an open UI.
taskset -c 0 bash -c "while sleep 1; do curl -sf http://127.0.0.1:$API/metrics >/dev/null; done" &
pids+=($!)
taskset -c 0 curl -sfN "http://127.0.0.1:$API/api/v1/events" >/dev/null &
pids+=($!)
$B bench compare "$scenario" --runs "$runs" --out "target/bench/api-overhead-$scenario" \
    --targets "external:127.0.0.1:$OFF,external:127.0.0.1:$ON"
echo "scrapes answered: $(curl -sf http://127.0.0.1:$API/metrics | grep -c '^baton_' || true) samples in the last one"
