#!/usr/bin/env bash
# Installs what the end-to-end laboratory (crates/netlab) runs: Open vSwitch
# (ovsdb-server, ovs-vswitchd, ovs-vsctl, ovs-ofctl), ovs-testcontroller,
# ping, ethtool, ip, ss, tcpdump, unshare, nsenter, taskset (`netlab
# measure forwarding` pins the switch and the generator), openssl (test
# certificates for OpenFlow over TLS), python3 (frames forged by hand),
# and etcd with etcdctl (crates/cluster's tests run etcd members on
# loopback). crates/netlab/src/deps.rs lists the same tools and runs this
# script when one is missing; so does crates/cluster/src/local_etcd.rs when
# etcd is.
#
# Idempotent and fast when everything is present: it checks for each tool
# first and calls apt only for what is missing (apt-get update only if the
# first install fails). Run as root, or it uses sudo.
set -euo pipefail

# tool -> the Debian package that provides it
TOOLS=(
    "ovs-vsctl:openvswitch-switch"
    "ovs-vswitchd:openvswitch-switch"
    "ovsdb-server:openvswitch-switch"
    "ovsdb-tool:openvswitch-switch"
    "ovs-ofctl:openvswitch-switch"
    "ovs-testcontroller:openvswitch-testcontroller"
    "ping:iputils-ping"
    "ethtool:ethtool"
    "ip:iproute2"
    "ss:iproute2"
    "tcpdump:tcpdump"
    "unshare:util-linux"
    "nsenter:util-linux"
    "taskset:util-linux"
    "openssl:openssl"
    "python3:python3"
    "etcd:etcd-server"
    "etcdctl:etcd-client"
)

have() {
    # sbin directories are not always on a non-root PATH.
    PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1
}

missing=()
for entry in "${TOOLS[@]}"; do
    tool=${entry%%:*}
    pkg=${entry#*:}
    if ! have "$tool"; then
        case " ${missing[*]-} " in
            *" $pkg "*) ;;
            *) missing+=("$pkg") ;;
        esac
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=300)
echo "install-e2e-deps: installing ${missing[*]}" >&2
if ! $SUDO "${APT[@]}" install -y --no-install-recommends "${missing[@]}"; then
    $SUDO "${APT[@]}" update
    $SUDO "${APT[@]}" install -y --no-install-recommends "${missing[@]}"
fi

# The Debian packages start the system's daemons when they can (Open
# vSwitch; etcd on 2379); the laboratory never uses them (each lab runs its
# own in a private namespace, each test its own etcd on free ports), and
# leaves them alone.
for entry in "${TOOLS[@]}"; do
    tool=${entry%%:*}
    if ! have "$tool"; then
        echo "install-e2e-deps: $tool is still missing after installing ${missing[*]}" >&2
        exit 1
    fi
done
