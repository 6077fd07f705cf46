#!/usr/bin/env bash
# Reproduces every figure in BENCHMARKS.md: each scenario side by side
# against the peers, results and charts under docs/bench/SCENARIO/.
#
#   scripts/bench/figures.sh            # all
#   scripts/bench/figures.sh throughput-16 latency-1
#
# Machine layout (2 cores): emulator on CPU 0, the controller under test on
# CPU 1. Needs the peers (scripts/install-peers.sh, run here first).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-peers.sh >/dev/null
cargo build --release -p baton
B=target/release/baton
run() { local s=$1; shift; echo "== $s"; $B bench compare "$s" --out "docs/bench/$s" "$@"; }
all=(throughput-16 throughput-64 latency-1 latency-16 fairness-uniform fairness-skewed fairness-skewed-1-worker ibt-phases few-switches switch-scaling cbench-16 cbench-64)
for s in "${@:-${all[@]}}"; do
    case "$s" in
    throughput-16 | throughput-64 | latency-1 | latency-16)
        run "$s" --targets responder,baton:all,ovs-testcontroller,os-ken --runs 3 --duration 5 --warmup 1 ;;
    fairness-uniform | fairness-skewed)
        # Two workers sharing CPU 1, overloaded by a 2 µs pipeline stage.
        run "$s" --targets baton:fair,baton:round-robin,baton:static-partition,baton:dynamic-partition,baton:shared-queue \
            --workers 2 --runs 3 --duration 10 --warmup 2 \
            --baton-args "--apps burn:2000,learning-switch --bdu-us 1000" ;;
    fairness-skewed-1-worker)
        # The same with baton's default single worker (the issue's setting
        # for the probe-delay target).
        echo "== $s"
        $B bench compare fairness-skewed --out "docs/bench/$s" \
            --targets baton:fair,baton:round-robin,baton:static-partition,baton:dynamic-partition \
            --workers 1 --runs 3 --duration 10 --warmup 2 \
            --baton-args "--apps burn:2000,learning-switch --bdu-us 1000" ;;
    ibt-phases)
        run "$s" --targets baton:fair,baton:static-partition --runs 1 \
            --baton-args "--apps burn:2000,learning-switch --bdu-us 1000" ;;
    few-switches)
        run "$s" --targets baton:all --workers 2 --runs 3 --duration 5 --warmup 1 ;;
    switch-scaling)
        run "$s" --targets responder,baton:fair,baton:static-partition --runs 1 --duration 4 --warmup 1 ;;
    cbench-16 | cbench-64)
        # baton bench and real cbench side by side (BENCHMARKS.md, "cbench
        # and `baton bench` side by side"): responder and baton, 5 s
        # counted after 1 s (cbench -l 6 -w 1), 11 interleaved rounds (the
        # machine's speed drifts by tens of percent between runs). Needs
        # cbench: build it with scripts/bench/build-cbench.sh (default
        # place below). On a shared machine, as root, give the benchmark
        # the CPUs first: setsid sh -c 'echo -20 >/proc/self/autogroup &&
        # exec scripts/bench/figures.sh cbench-16 cbench-64'
        echo "== $s"
        $B bench compare "throughput-${s#cbench-}" --out "docs/bench/$s" \
            --targets responder,responder:learning,responder:learning-exact,baton:fair,baton:static-partition --workers 1 --runs 11 --duration 5 --warmup 1 \
            --cbench "${CBENCH:-target/peers/cbench}" ;;
    *) run "$s" ;;
    esac
done
