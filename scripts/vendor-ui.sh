#!/usr/bin/env bash
# Refreshes the web UI's front-end libraries in crates/operator/ui/vendor/
# from npm: cytoscape (the topology graph) and uPlot (the charts). Each is
# fetched with `npm pack` (the registry's tarball, checked against its
# integrity hash by npm), the files the UI loads are copied with the
# package's licence, and vendor/VERSIONS records name, version, licence and
# the tarball's integrity. The controller embeds these files in its binary
# (crates/operator/src/ui.rs): nothing is fetched at run time, and nothing
# of this script runs at build or test time.
#
# Usage: scripts/vendor-ui.sh                 # the versions pinned below
#        CYTOSCAPE=3.34.4 UPLOT=1.6.32 scripts/vendor-ui.sh
# Needs npm. After a refresh, run the browser test
# (cargo test -p baton --test ui) and commit the vendor directory.
set -euo pipefail

CYTOSCAPE=${CYTOSCAPE:-3.34.4}
UPLOT=${UPLOT:-1.6.32}

cd "$(dirname "$0")/.."
VENDOR=crates/operator/ui/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# package@version, then "tarball-path:vendored-name" pairs.
fetch() {
    local spec=$1
    shift
    (cd "$work" && npm pack --silent "$spec" >/dev/null)
    local name=${spec%@*} version=${spec##*@}
    local tgz="$work/$name-$version.tgz"
    local dir="$work/$name"
    mkdir -p "$dir"
    tar xzf "$tgz" -C "$dir"
    for pair in "$@"; do
        cp "$dir/package/${pair%%:*}" "$VENDOR/${pair#*:}"
    done
    cp "$dir/package/LICENSE" "$VENDOR/LICENSE-$name"
    local licence integrity
    licence=$(node -p "require('$dir/package/package.json').license")
    integrity=$(cd "$work" && npm view --silent "$spec" dist.integrity)
    printf '%s\t%s\t%s\t%s\n' "$name" "$version" "$licence" "$integrity" >>"$VENDOR/VERSIONS.new"
}

mkdir -p "$VENDOR"
printf '# name\tversion\tlicence\tnpm integrity (sha512 of the tarball)\n' >"$VENDOR/VERSIONS.new"
fetch "cytoscape@$CYTOSCAPE" dist/cytoscape.esm.min.mjs:cytoscape.esm.min.mjs
fetch "uplot@$UPLOT" dist/uPlot.esm.js:uPlot.esm.js dist/uPlot.min.css:uPlot.min.css
mv "$VENDOR/VERSIONS.new" "$VENDOR/VERSIONS"
cat "$VENDOR/VERSIONS"
