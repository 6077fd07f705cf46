#!/usr/bin/env bash
# Builds cbench, the controller benchmark of the oflops suite, from local
# copies of its sources, without network access. cbench is a measurement
# peer of `baton bench` (`baton bench compare` runs it beside the emulator
# when it is on PATH or given with --cbench); nothing in the build or the
# tests needs it, and no third-party code is kept in this repository.
#
#   scripts/bench/build-cbench.sh [OFLOPS_DIR OPENFLOW_DIR [OUT]]
#
# The directories may also come from the environment (OFLOPS_DIR,
# OPENFLOW_DIR, and CBENCH for OUT); arguments win.
#
# OFLOPS_DIR    a clone of https://github.com/mininet/oflops (cbench/ and
#               msgbuf.c are used)
# OPENFLOW_DIR  a clone of https://github.com/mininet/openflow (its
#               include/openflow/openflow.h, the OpenFlow 1.0 headers)
# OUT           the binary to write (default: target/peers/cbench)
#
# Tested with oflops b6cbd02 and openflow 82ad07d, gcc 12.
set -euo pipefail

usage() {
    cat >&2 <<'USAGE'
usage: scripts/bench/build-cbench.sh [OFLOPS_DIR OPENFLOW_DIR [OUT]]
       (or OFLOPS_DIR=... OPENFLOW_DIR=... [CBENCH=OUT] scripts/bench/build-cbench.sh)

Get the sources first (once, with network access):
    git clone https://github.com/mininet/oflops    /path/to/oflops
    git clone https://github.com/mininet/openflow  /path/to/openflow
then
    scripts/bench/build-cbench.sh /path/to/oflops /path/to/openflow
and put the binary on PATH (or pass it to `baton bench compare --cbench`).
Needs gcc (Debian: apt-get install gcc libc6-dev).
USAGE
    exit 2
}

[ $# = 0 ] || [ $# = 2 ] || [ $# = 3 ] || usage
oflops=${1:-${OFLOPS_DIR:-}}
openflow=${2:-${OPENFLOW_DIR:-}}
out=${3:-${CBENCH:-target/peers/cbench}}
[ -n "$oflops" ] && [ -n "$openflow" ] || {
    echo "build-cbench: where are the sources? Give OFLOPS_DIR and OPENFLOW_DIR (arguments or environment)" >&2
    usage
}

missing=0
for f in "$oflops/cbench/cbench.c" "$oflops/cbench/fakeswitch.c" "$oflops/cbench/myargs.c" "$oflops/msgbuf.c" "$oflops/msgbuf.h"; do
    [ -f "$f" ] || { echo "build-cbench: $f not found: OFLOPS_DIR must be a clone of https://github.com/mininet/oflops" >&2; missing=1; }
done
[ -f "$openflow/include/openflow/openflow.h" ] || {
    echo "build-cbench: $openflow/include/openflow/openflow.h not found: OPENFLOW_DIR must be a clone of https://github.com/mininet/openflow" >&2
    missing=1
}
[ $missing = 0 ] || usage
command -v gcc >/dev/null || { echo "build-cbench: gcc not found (Debian: apt-get install gcc libc6-dev)" >&2; exit 1; }

# cbench's sources include "config.h" for VERSION, which oflops' autoconf
# would write; a build directory of our own holds it, so the source trees
# stay untouched.
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
version=$(git -C "$oflops" describe --always 2>/dev/null || echo unknown)
printf '#define VERSION "oflops-%s"\n' "$version" >"$build/config.h"

mkdir -p "$(dirname "$out")"
(
    cd "$oflops/cbench"
    gcc -O2 -w -I"$build" -I"$oflops" -I"$openflow/include" \
        cbench.c fakeswitch.c myargs.c ../msgbuf.c -lm -o "$build/cbench"
)
cp "$build/cbench" "$out"
echo "built $out (oflops $version)"
