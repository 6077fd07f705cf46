#!/usr/bin/env bash
# Builds the independent minimal learning switch in C
# (scripts/bench/minimal-learning.c), a reference for baton's learning
# switch, into target/peers/minimal-learning, where `baton bench compare`
# finds it (target `minimal-learning`). Needs gcc (Debian: gcc libc6-dev).
#
#   scripts/bench/build-minimal-learning.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/peers/minimal-learning}
mkdir -p "$(dirname "$out")"
command -v gcc >/dev/null || { echo "build-minimal-learning: gcc not found (Debian: apt-get install gcc libc6-dev)" >&2; exit 1; }
gcc -O2 -Wall -Wextra -o "$out" scripts/bench/minimal-learning.c
echo "built $out"
