#!/usr/bin/env bash
# Controllers compared in each of the two regimes that throughput mode
# falls into (issue 28, target 4), rather than in whichever each round
# happens to land in:
#
# - shallow: the controller keeps up with the load generator, the kernel
#   queues a few milliseconds of requests, the controller idles part of
#   the time and the generator sets the rate;
# - deep: the controller is behind, the switches' sockets are full (with
#   4 MiB receive buffers about a second of requests), it is busy all the
#   time and reads requests written long before. Once there it stays: it
#   serves less in this regime than in the shallow one, less than the
#   generator sends.
#
# Which regime a round lands in depends on the first seconds (the MAC
# tables filling), so a plain `compare` round mixes them. Here each
# controller runs `baton bench --intervals 1` for 12 s; at 3 s it is
# stopped (SIGSTOP) for 1.5 s, which puts it in the deep regime. Seconds
# 2-3 are reported as the regime the run started in (with their queueing
# delay, which says which one it was), seconds 7-12 as deep. CPU per
# response is the controller's CPU time over responses, which the deep
# regime's rate is the inverse of (it is busy all the time).
#
#   scripts/bench/regimes.sh ROUNDS SWITCHES "TAG|BIN|RUN ARGS" ...
#   e.g. scripts/bench/regimes.sh 5 64 "fair|target/release/baton|" \
#            "static|target/release/baton|--scheduler static-partition"
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=$1
switches=$2
shift 2
cargo build --release -p baton >/dev/null
B=target/release/baton
out=target/bench/regimes
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pid= bench=
# Interrupted, the controller may be stopped: continue it, and stop both.
cleanup() {
    [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
    [ -n "$bench" ] && kill "$bench" 2>/dev/null
    wait 2>/dev/null || true
}
trap cleanup EXIT
: >"$out/rounds.tsv"
for r in $(seq "$rounds"); do
    for spec in "$@"; do
        IFS='|' read -r tag bin args <<<"$spec"
        # shellcheck disable=SC2086 # ARGS are words
        RUST_LOG=warn taskset -c 1 "$bin" run $args --workers 1 --api off \
            --apps learning-switch --listen "127.0.0.1:$port" &
        pid=$!
        sleep 1
        taskset -c 0 $B bench --controller "127.0.0.1:$port" --switches "$switches" \
            --threads 1 --duration 12 --warmup 1 --intervals 1 --controller-pid "$pid" \
            >"$out/$tag.$r.txt" 2>&1 &
        bench=$!
        sleep 4
        kill -STOP "$pid"
        sleep 1.5
        kill -CONT "$pid"
        wait "$bench"
        bench=
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        pid=
        # phase, responses/s, p50 ms, controller CPU s
        # (the phase table only: with few switches a per-switch one follows)
        awk -v r="$r" -v t="$tag" '/^phase / {p = 1; next} /^ *dpid / {p = 0}
            p && /^ +[0-9]+ / {split($8, l, "/"); print r "\t" t "\t" $1 "\t" $4 "\t" l[1] "\t" $10}' \
            "$out/$tag.$r.txt" >>"$out/rounds.tsv"
    done
done
python3 - "$out/rounds.tsv" "$@" <<'EOF'
import sys, statistics as st
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines()]
tags = [s.split('|')[0] for s in sys.argv[2:]]
def regime(phases):
    got = {}
    for r, t, p, rate, p50, cpu in rows:
        if int(p) in phases and float(rate) > 0:
            got.setdefault((int(r), t), []).append((float(rate), float(p50), float(cpu)))
    return {k: (st.median(x[0] for x in v), st.median(x[1] for x in v),
                st.median(x[2] / x[0] * 1e9 for x in v)) for k, v in got.items()}
for name, phases in (('start (s 2-3)', {2, 3}), ('deep (s 7-12)', set(range(7, 13)))):
    m = regime(phases)
    print(f'{name}: per target, median over rounds of the per-round medians')
    for t in tags:
        v = [m[k] for k in sorted(m) if k[1] == t]
        if v:
            print(f'  {t:10} {st.median(x[0] for x in v)/1e6:6.2f} M/s  p50 {st.median(x[1] for x in v):8.1f} ms  '
                  f'{st.median(x[2] for x in v):6.1f} ns CPU/response  rounds: '
                  + ' '.join(f'{x[0]/1e6:.2f}@{x[1]:.0f}ms' for x in v))
    for t in tags[1:]:
        ratios = [m[(r, tags[0])][0] / m[(r, t)][0] for r in range(1, 1 + max(k[0] for k in m))
                  if (r, tags[0]) in m and (r, t) in m]
        if ratios:
            s = sorted(ratios)
            print(f'  {tags[0]} / {t}, paired by round: median {st.median(ratios):.3f} (range {s[0]:.2f}-{s[-1]:.2f})')
EOF
