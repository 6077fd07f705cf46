#!/usr/bin/env bash
# Installs the controllers `baton bench compare` measures baton against, on
# a fresh Debian machine. Idempotent: what is already there is kept.
#
#   ovs-testcontroller   Debian package openvswitch-testcontroller
#   os-ken               a virtualenv at $PEERS/osken-venv with os-ken 3.1.1,
#                        plus simple_switch.py and simple_switch_13.py taken
#                        from the os-ken 1.4.1 package (3.x no longer ships
#                        them), run as
#                        osken-manager --ofp-tcp-listen-port PORT simple_switch.py
#   fonts-dejavu-core    the font the benchmark's charts are drawn with
#
# PEERS defaults to target/peers in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
PEERS=${PEERS:-target/peers}
mkdir -p "$PEERS"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
APT_UPDATED=""
apt_install() {
    if ! $SUDO apt-get install -y -o DPkg::Lock::Timeout=300 "$@"; then
        if [ -z "$APT_UPDATED" ]; then
            $SUDO apt-get update -o DPkg::Lock::Timeout=300
            APT_UPDATED=1
        fi
        $SUDO apt-get install -y -o DPkg::Lock::Timeout=300 "$@"
    fi
}

if ! command -v ovs-testcontroller >/dev/null 2>&1; then
    apt_install openvswitch-testcontroller
fi
if ! ls /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf >/dev/null 2>&1; then
    apt_install fonts-dejavu-core
fi

VENV="$PEERS/osken-venv"
if ! "$VENV/bin/python" -c "import os_ken" >/dev/null 2>&1; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c "import ensurepip" >/dev/null 2>&1; then
        apt_install python3-venv
    fi
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check os-ken==3.1.1
fi

if [ ! -f "$PEERS/simple_switch.py" ] || [ ! -f "$PEERS/simple_switch_13.py" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # The wheel if there is one, else the source package.
    if ! "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps \
            --only-binary :all: os-ken==1.4.1 -d "$tmp" 2>/dev/null; then
        "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps \
            --no-binary :all: os-ken==1.4.1 -d "$tmp"
    fi
    "$VENV/bin/python" - "$tmp" "$PEERS" <<'PY'
import pathlib, sys, tarfile, zipfile
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
want = {"os_ken/app/simple_switch.py", "os_ken/app/simple_switch_13.py"}
found = {}
for f in src.iterdir():
    if f.suffix == ".whl":
        with zipfile.ZipFile(f) as z:
            for n in z.namelist():
                if n in want:
                    found[n] = z.read(n)
    elif f.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(f) as t:
            for m in t.getmembers():
                tail = "/".join(m.name.split("/")[1:])
                if tail in want:
                    found[tail] = t.extractfile(m).read()
missing = want - found.keys()
if missing:
    sys.exit(f"os-ken 1.4.1 does not contain {sorted(missing)}")
for n, data in found.items():
    (dst / pathlib.Path(n).name).write_bytes(data)
PY
fi

echo "peers installed:"
echo "  ovs-testcontroller: $(command -v ovs-testcontroller)"
echo "  os-ken:             $VENV/bin/osken-manager ($("$VENV/bin/python" -c 'import os_ken; print(os_ken.__version__)' 2>/dev/null || echo '?'))"
echo "  simple_switch:      $PEERS/simple_switch.py, $PEERS/simple_switch_13.py"
