#!/usr/bin/env bash
# Instructions per response of a baton build's worker thread, under
# callgrind (repeatable where timings are not): the controller runs with
# one worker and the learning switch on CPU 1, `baton bench` (throughput
# mode, no warm-up) drives SWITCHES emulated switches from CPU 0 for
# DURATION seconds, and the worker thread's instructions are divided by
# the responses the bench counted (its handshakes and the few requests
# in flight at the end are in the numerator: the same in every build).
# The controller's other threads (the views thread, which runs the DAGs)
# are summed and reported beside.
#
#   scripts/bench/callgrind.sh BIN [SWITCHES [VERSION]]
#   env: DURATION (default 10), OUT (default target/bench/callgrind),
#        MACS (source addresses per switch, default 100000),
#        APPS (`--apps` of `baton run`, default learning-switch; `default`
#        runs what `baton run` runs with no --apps),
#        BATON_ARGS (more arguments to `baton run`, e.g.
#        "--scheduler static-partition"; the tag then says which)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$1
switches=${2:-16}
version=${3:-10}
duration=${DURATION:-10}
out=${OUT:-target/bench/callgrind}
mkdir -p "$out"
cargo build --release -p baton >/dev/null
B=target/release/baton
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
extra=${BATON_ARGS:-}
apps=${APPS:-learning-switch}
macs=${MACS:-100000}
apps_args=(--apps "$apps")
[ "$apps" = default ] && apps_args=()
tag="$(basename "$bin")-$switches-of$version-$apps-m$macs${extra:+-$(echo "$extra" | tr -c 'a-zA-Z0-9\n' '_')}"
rm -f "$out/$tag".out*
RUST_LOG=warn taskset -c 1 valgrind --tool=callgrind --separate-threads=yes \
    --callgrind-out-file="$out/$tag.out" "$bin" run --workers 1 --api off \
    "${apps_args[@]}" --listen "127.0.0.1:$port" $extra 2>"$out/$tag.vg" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 4
taskset -c 0 $B bench --controller "127.0.0.1:$port" --switches "$switches" --threads 1 \
    --macs "$macs" --of "$version" --duration "$duration" --warmup 0 >"$out/$tag.bench" 2>&1
kill -INT $pid
wait $pid || true
rate=$(sed -n 's/^summary: \([0-9]*\) responses.*/\1/p' "$out/$tag.bench")
# The worker is the thread that ran the most instructions.
worker=$(grep -h '^summary:' "$out/$tag.out"-* | awk '{print $2}' | sort -n | tail -1)
all=$(grep -h '^summary:' "$out/$tag.out"-* | awk '{s += $2} END {printf "%d\n", s}')
python3 - "$tag" "$worker" "$all" "$rate" "$duration" <<'EOF'
import sys
tag, ir, total, rate, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
responses = rate * secs
print(f"{tag}: {ir / responses:.0f} instructions per response "
      f"(worker {ir:,} over {responses:,} responses; "
      f"every thread {total / responses:.0f} per response)")
EOF
