#!/usr/bin/env bash
# Runs `baton bench compare` for the given scenarios (default: the ones
# behind the README's figures) with release builds, the peers installed,
# and the results under target/bench/SCENARIO/ (compare.md, compare.json,
# charts, controller logs).
#
#   scripts/bench/compare.sh                      # default scenarios
#   scripts/bench/compare.sh throughput-16 latency-1 -- --runs 5
#
# Everything after `--` goes to every `compare` invocation (e.g. --targets,
# --runs, --controller-cpus, --bench-cpus).
set -euo pipefail
cd "$(dirname "$0")/../.."

scenarios=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    scenarios+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
if [ ${#scenarios[@]} -eq 0 ]; then
    scenarios=(throughput-16 latency-1 fairness-skewed ibt-phases few-switches)
fi

scripts/install-peers.sh
cargo build --release -p baton

for s in "${scenarios[@]}"; do
    echo "== $s"
    target/release/baton bench compare "$s" "$@"
done
