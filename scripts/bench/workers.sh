#!/usr/bin/env bash
# Scaling across cores (Maestro §4.4, Fig. 12-13: throughput as worker threads grow;
# McNettle's cores): the responder and baton's learning switch with N
# workers, each worker pinned to its own core (CPUs 0..N-1), under one
# emulator whose threads run on the CPUs above the largest N. Rounds are
# interleaved; each case prints responses/s and the controller's CPU per
# 1,000 responses (from /proc), whose flatness across N is the scaling.
# Needs more cores than the largest N: on a 2-core machine use the one-core
# proxy in BENCHMARKS.md ("Workers on one core") instead.
#
#   scripts/bench/workers.sh BATON_BIN [N...]        (default N: 1 2 4 8)
#   env: SWITCHES (64), RUNS (3), DURATION (3), WARMUP (1),
#        TARGETS (responder fair static-partition), OUT (target/bench/workers)
set -euo pipefail
bin=$(realpath "$1")
shift
[ $# -gt 0 ] || set -- 1 2 4 8
cd "$(dirname "$0")/../.."
out=${OUT:-target/bench/workers}
mkdir -p "$out"
cpus=$(nproc)
max=0
for n in "$@"; do [ "$n" -gt "$max" ] && max=$n; done
if [ "$max" -ge "$cpus" ]; then
    echo "workers.sh: $cpus CPUs; the largest N ($max) must leave CPUs for the emulator" >&2
    exit 2
fi
gen_cpus="$max-$((cpus - 1))"
gen_threads=$((cpus - max))
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
echo "# $cpus CPUs; emulator: $gen_threads threads on CPUs $gen_cpus, ${SWITCHES:-64} switches"
echo "round target workers responses_per_s cpu_ms_per_1k cores_used jain generator_wait_pct"
for round in $(seq "${RUNS:-3}"); do
    for n in "$@"; do
        for target in ${TARGETS:-responder fair static-partition}; do
            p=$(port)
            if [ "$target" = responder ]; then
                taskset -c "0-$((n - 1))" "$bin" bench responder --threads "$n" --listen "127.0.0.1:$p" \
                    >/dev/null 2>&1 &
            else
                RUST_LOG=warn taskset -c "0-$((n - 1))" "$bin" run --workers "$n" --pin --scheduler "$target" \
                    --apps learning-switch --api off --listen "127.0.0.1:$p" >/dev/null 2>&1 &
            fi
            pid=$!
            sleep 1
            json="$out/$target-$n-$round.json"
            taskset -c "$gen_cpus" "$bin" bench --controller "127.0.0.1:$p" --switches "${SWITCHES:-64}" \
                --threads "$gen_threads" --duration "${DURATION:-3}" --warmup "${WARMUP:-1}" \
                --controller-pid "$pid" --json "$json" --quiet >/dev/null
            kill "$pid"
            wait "$pid" 2>/dev/null || true
            pid=
            python3 - "$json" "$round" "$target" "$n" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], sys.argv[4], round(d["responses_per_sec"]),
      round(d["cpu"]["per_1k_responses"] * 1000, 4) if d.get("cpu") else "-",
      round(d["cpu"]["utilisation"], 2) if d.get("cpu") else "-",
      round(d["jain"], 4), round(d["wait"]["generator_pct"], 1) if d.get("wait") else "-")
EOF
        done
    done
done
