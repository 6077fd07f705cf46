#!/usr/bin/env bash
# The learning switch serving OpenFlow 1.3 switches against serving 1.0
# switches (issue 12, item 5; issue 28, target 3): rounds of `baton bench
# --of 10` then `--of 13`, each against a freshly started controller, so
# that the two versions of a round share the machine's state of the
# moment; prints each round's rates and 1.3/1.0 ratio, the medians, and the
# median of the per-round ratios (the figure to quote on a noisy machine).
#
#   scripts/bench/versions.sh [CONTROLLER...]
#   CONTROLLER: a baton binary (default target/release/baton), or
#       `responder:learning-l2`: the learning responder answering with the
#       same L2 FLOW_MOD, the limit a minimal program reaches (its ratio is
#       what the larger 1.3 messages cost anything). Several are
#       interleaved within each round.
#   env: ROUNDS (default 7), SWITCHES (16), DURATION (6), BATON_ARGS
#        (extra `baton run` flags)
#
# The controller runs pinned to CPU 1 (one worker, learning switch, API
# off), the emulator to CPU 0. On a shared machine, as root, give the run
# the CPUs first:
#   setsid sh -c 'echo -20 >/proc/self/autogroup && exec scripts/bench/versions.sh'
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p baton >/dev/null
B=target/release/baton
[ $# -gt 0 ] || set -- "$B"
out=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$out"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for round in $(seq 1 "${ROUNDS:-7}"); do
    c=0
    for ctl in "$@"; do
        c=$((c + 1))
        for of in 10 13; do
            p=$(port)
            if [ "$ctl" = responder:learning-l2 ]; then
                taskset -c 1 $B bench responder --threads 1 --learning --l2-match \
                    --listen 127.0.0.1:$p >/dev/null 2>&1 &
            else
                # shellcheck disable=SC2086
                RUST_LOG=warn taskset -c 1 "$ctl" run --workers 1 --api off --apps learning-switch \
                    ${BATON_ARGS:-} --listen 127.0.0.1:$p &
            fi
            pid=$!
            sleep 1
            taskset -c 0 $B bench --controller 127.0.0.1:$p --switches "${SWITCHES:-16}" --threads 1 \
                --duration "${DURATION:-6}" --warmup 2 --of $of --quiet \
                --json "$out/$c-$round-$of.json" >/dev/null
            kill "$pid"
            wait "$pid" 2>/dev/null || true
            pid=
        done
    done
done
python3 - "$out" "${ROUNDS:-7}" "$@" <<'PY'
import json, statistics, sys
out, rounds, controllers = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for c, name in enumerate(controllers, 1):
    rate = lambda r, of: json.load(open(f"{out}/{c}-{r}-{of}.json"))["responses_per_sec"]
    rows = [(rate(r, 10), rate(r, 13)) for r in range(1, rounds + 1)]
    print(f"# {name}")
    for i, (a, b) in enumerate(rows, 1):
        print(f"round {i}: 1.0 {a:,.0f}  1.3 {b:,.0f}  1.3/1.0 {b / a:.3f}")
    m10 = statistics.median(a for a, _ in rows)
    m13 = statistics.median(b for _, b in rows)
    paired = statistics.median(b / a for a, b in rows)
    print(f"medians: 1.0 {m10:,.0f}  1.3 {m13:,.0f} responses/s; ratio of medians {m13 / m10:.3f}, "
          f"median of the rounds' ratios {paired:.3f}")
PY
