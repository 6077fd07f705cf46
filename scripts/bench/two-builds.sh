#!/usr/bin/env bash
# Two builds of baton side by side, with the responder, under the emulator
# and (when built, see build-cbench.sh) real cbench: a before/after of a
# change, measured in one interleaved run. Each build runs as an
# `external:` target pinned to CPU 1 (one worker, learning switch, API
# off); `baton bench compare` pins its load generators to CPU 0.
#
#   scripts/bench/two-builds.sh BEFORE_BIN AFTER_BIN [SCENARIO...]
#   env: RUNS (default 5), BATON_ARGS (extra `baton run` flags for both;
#        default --apps learning-switch), BEFORE_ARGS / AFTER_ARGS (for one
#        side only, in place of BATON_ARGS)
#
# The same binary twice with other flags compares configurations, e.g. the
# cost of an application:
#   BEFORE_ARGS="--apps topology,devices,routing" \
#   AFTER_ARGS="--apps topology,devices,bandwidth,routing" \
#   scripts/bench/two-builds.sh target/release/baton target/release/baton throughput-16
#
# Build the "before" binary from another commit first, e.g.
#   git worktree add /tmp/before COMMIT && (cd /tmp/before && cargo build --release -p baton)
# On a shared machine, as root, give the run the CPUs first:
#   setsid sh -c 'echo -20 >/proc/self/autogroup && exec scripts/bench/two-builds.sh A B'
set -euo pipefail
cd "$(dirname "$0")/../.."
before=$1
after=$2
shift 2
[ $# -gt 0 ] || set -- throughput-16 throughput-64
cargo build --release -p baton >/dev/null
B=target/release/baton
cbench=()
[ -x target/peers/cbench ] && cbench=(--cbench target/peers/cbench)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
P1=$(port) P2=$(port)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
# shellcheck disable=SC2086
RUST_LOG=warn taskset -c 1 "$before" run --workers 1 --api off ${BEFORE_ARGS:-${BATON_ARGS:---apps learning-switch}} --listen 127.0.0.1:$P1 &
pids+=($!)
# shellcheck disable=SC2086
RUST_LOG=warn taskset -c 1 "$after" run --workers 1 --api off ${AFTER_ARGS:-${BATON_ARGS:---apps learning-switch}} --listen 127.0.0.1:$P2 &
pids+=($!)
sleep 1
echo "before: $before on 127.0.0.1:$P1, after: $after on 127.0.0.1:$P2"
for s in "$@"; do
    $B bench compare "$s" --runs "${RUNS:-5}" --duration 5 --warmup 1 --out "target/bench/two-builds-$s" \
        --targets "responder,external:127.0.0.1:$P1,external:127.0.0.1:$P2" "${cbench[@]}"
done
