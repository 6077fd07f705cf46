#!/bin/bash
# The figures of docs/contract.md: CONTRACT against No Coordination in the
# simulator, as the Maestro thesis's §5.4.3-5.4.4 varies them. Writes the
# JSON of every sweep and the tables into OUT (default target/contract):
#
#     scripts/contract/grid.sh [OUT]
#
# About an hour on 2 cores: every failure of ta2 for 5 seeds; one
# setting at a time (link failures, 3 seeds, 54 of the 108 links drawn from
# seed 1); a link toggled 10 times at several rates; the larger networks
# with 6 link failures each.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/target/contract}
mkdir -p "$out"
cargo build --release -q -p baton --manifest-path "$root/Cargo.toml"
baton=$root/target/release/baton
sweep() {
    local name=$1
    shift
    echo "$name: baton contract sweep $*" >&2
    "$baton" contract sweep --json "$out/$name.json" "$@" >"$out/$name.txt"
}
sweep main --topology ta2 --seeds 5 --plot "$out/main-sla.svg"
grid() { sweep "$@" --topology ta2 --scenario link-failure --seeds 3 --sample 54; }
grid default
for l in 0.01 0.02 0.1; do grid "load-$l" --load "$l"; done
for k in 1.1 2 4; do grid "k-$k" --pareto-k "$k"; done
for n in 0.1 0.5 1.0; do grid "noise-$n" --noise "$n"; done
for b in 0 1000 5000 8000; do grid "budget-$b" --budget "$b"; done
for h in 0 250 500 2000; do grid "hold-$h" --hold-down "$h"; done
grid optimiser-local --optimiser local-search
for ms in 20 100 150 200 400; do grid "toggle-$ms" --toggles 10 --toggle-every "$ms"; done
for ms in 20 100 200 400 1000; do
    grid "fast-toggle-$ms" --toggles 10 --toggle-every "$ms" --hold-down 100
done
for t in brain north-america south-america; do
    sweep "size-$t" --topology "$t" --scenario link-failure --sample 6
done
python3 "$root/scripts/contract/tables.py" "$out" | tee "$out/tables.md"
