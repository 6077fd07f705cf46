#!/usr/bin/env bash
# Installs what the web UI's browser test (crates/baton/tests/ui.rs) runs:
# Debian's chromium (driven headless over the DevTools protocol on a pipe,
# so no chromedriver and no Node) and a font for its screenshots. The test
# runs this script when chromium is missing.
#
# Idempotent and fast when everything is present: apt is called only for
# what is missing (apt-get update only if the first install fails). Run as
# root, or it uses sudo.
set -euo pipefail

have() {
    PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1
}

missing=()
have chromium || missing+=(chromium)
# Any TrueType font will do; without one, text draws as boxes.
if ! ls /usr/share/fonts/truetype/*/*.ttf >/dev/null 2>&1; then
    missing+=(fonts-dejavu-core)
fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=300)
echo "install-ui-deps: installing ${missing[*]}" >&2
if ! $SUDO "${APT[@]}" install -y --no-install-recommends "${missing[@]}"; then
    $SUDO "${APT[@]}" update
    $SUDO "${APT[@]}" install -y --no-install-recommends "${missing[@]}"
fi
if ! have chromium; then
    echo "install-ui-deps: chromium is still missing after installing ${missing[*]}" >&2
    exit 1
fi
