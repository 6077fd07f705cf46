#!/usr/bin/env bash
# Instructions per new host of the default pipeline (topology, devices,
# routing) with KNOWN hosts already learnt, for each KNOWN given (default
# 1,000, 100,000 and 1,000,000): the `host_learning` example in the test
# harness under callgrind, collecting only its 100,000 new hosts (their
# PACKET_INs, the proxy ARP replies, the view changes and routing's DAG).
#
#   scripts/bench/host-learning.sh [KNOWN...]
#   env: OUT (default target/bench/host-learning)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-target/bench/host-learning}
mkdir -p "$out"
cargo build --release -p baton-apps --example host_learning >/dev/null
bin=target/release/examples/host_learning
[ $# -gt 0 ] || set -- 1000 100000 1000000
for known in "$@"; do
    rm -f "$out/$known.out"
    valgrind --tool=callgrind --toggle-collect='host_learning::learn_new_hosts' \
        --callgrind-out-file="$out/$known.out" "$bin" "$known" 2>"$out/$known.vg" >"$out/$known.txt"
    ir=$(sed -n 's/^summary: //p' "$out/$known.out")
    python3 -c "import sys; k, ir = sys.argv[1], int(sys.argv[2]); print(f'{int(k):>9,} known: {ir / 100000:,.0f} instructions per new host')" "$known" "$ir"
done
