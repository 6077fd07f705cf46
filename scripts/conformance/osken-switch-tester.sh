#!/usr/bin/env bash
# Runs the OpenFlow 1.3 switch conformance suite of os-ken (Ryu's "switch
# tester", os_ken/tests/switch/tester.py with the JSON cases under
# os_ken/tests/switch/of13/: match, action, group, meter; 991 cases) against
# a target switch, with Open vSwitch's userspace datapath as the tester switch.
#
# Usage:
#   scripts/conformance/osken-switch-tester.sh baton|ovs [TEST-DIR-SUBSET]
#
#   baton   target = `baton switch --of 13` on AF_PACKET (dpid 1)
#   ovs     target = an Open vSwitch bridge, datapath_type=netdev (dpid 1),
#           the baseline
#   TEST-DIR-SUBSET  a path under of13/ (e.g. `match`, `action/25_SET_FIELD`,
#           `meter/01_DROP_00_KBPS_00_1M.json`); default: all of of13/
#
# Topology (the tester's default port numbers), in a private network, PID and
# mount namespace (unshare), so nothing is left behind and 127.0.0.1:PORT is
# private:
#
#        controller (osken-manager + os_ken.tests.switch.tester, tcp:6653)
#          |                                  |
#   target (dpid 1)  port 1  tgt-p1 <-veth-> tst-p1  port 1  tester (dpid 2)
#                    port 2  tgt-p2 <-veth-> tst-p2  port 2  OVS netdev
#                    port 3  tgt-p3 <-veth-> tst-p3  port 3
#
# Veths have tx/gso/tso offloads off and IPv6 disabled.
#
# Installs (once, if missing): apt packages openvswitch-switch, ethtool,
# iproute2; a Python venv at $VENV (default /tmp/conformance/venv) with
# os-ken==3.1.1 (the last release that ships `osken-manager`; 4.x dropped
# os_ken/cmd but has the same tester.py and JSON files).
# Uses $BATON (default target/release/baton; build it with
# `cargo build --release -p baton --locked`).
#
# Output, under $OUT (default /tmp/conformance/results):
#   <target>-<subset>.log          the tester's log (per case OK/ERROR + report)
#   <target>-<subset>.switch.log   baton switch's stderr (target=baton) or
#                                  ovs-vswitchd's log of the target side
#   <target>-<subset>.ovs.log      ovs-vswitchd's log
#   <target>-<subset>.pcap         with CAPTURE=1: the OpenFlow traffic on lo
#                                  (decode: ovs-ofctl ofp-parse-pcap FILE 6653)
# Summarise with scripts/conformance/summarise.py.
#
# Duration (measured on 2 shared cores, 2026-11; baton / ovs): match
# 4.5 / 6 min, action 7 s / 65 s, group 7.5 / 7.5 min (15 throughput cases
# of 30 s each), meter 9 min / 2 s (36 throughput cases of 30 s each; those
# a switch refuses end at once), so ~21 min (baton) and ~15 min (ovs) for
# the whole of13/ tree. DURATION=N (seconds) rewrites the
# cases' `duration_time` in a copy of the test tree to shorten throughput
# cases (then it is no longer the stock suite; say so when reporting).
# SUITE_TIMEOUT (seconds, default 4200) bounds the tester run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VENV=${VENV:-/tmp/conformance/venv}
OUT=${OUT:-/tmp/conformance/results}
BATON=${BATON:-$ROOT/target/release/baton}
OFPORT=${OFPORT:-6653}
CAPTURE=${CAPTURE:-0}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-4200}
OSKEN_VERSION=${OSKEN_VERSION:-3.1.1}

usage() {
    echo "usage: $0 baton|ovs [TEST-DIR-SUBSET]" >&2
    exit 2
}

# ---------------------------------------------------------------------------
# Inner part: runs as PID 1 of the private namespaces.
# ---------------------------------------------------------------------------
if [[ ${1:-} == __inner ]]; then
    TARGET=$2 TESTDIR=$3 LOG=$4 SWLOG=$5 OVSLOG=$6 WORK=$7
    PIDS=()
    cleanup() {
        local rc=$?
        set +e
        # Stop what we started, newest first; the namespace's end kills the rest.
        for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
            kill "${PIDS[i]}" 2>/dev/null
        done
        if [[ -n ${OVS_RUNDIR:-} && -e $OVS_RUNDIR/ovs-vswitchd.pid ]]; then
            ovs-appctl -t "$OVS_RUNDIR/ovs-vswitchd.$(cat "$OVS_RUNDIR/ovs-vswitchd.pid").ctl" exit 2>/dev/null
        fi
        [[ -n ${OVS_LOGDIR:-} && -e $OVS_LOGDIR/ovs-vswitchd.log ]] && cp "$OVS_LOGDIR/ovs-vswitchd.log" "$OVSLOG"
        sleep 0.5
        exit "$rc"
    }
    trap cleanup EXIT
    trap 'exit 143' TERM INT

    ip link set lo up
    for i in 1 2 3; do
        ip link add "tgt-p$i" type veth peer name "tst-p$i"
        for ifc in "tgt-p$i" "tst-p$i"; do
            sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1"
            ethtool -K "$ifc" tx off gso off tso off >/dev/null 2>&1 || true
            ip link set "$ifc" up
        done
    done

    # Private Open vSwitch (userspace datapath).
    export OVS_RUNDIR=$WORK/ovs OVS_LOGDIR=$WORK/ovs OVS_DBDIR=$WORK/ovs
    mkdir -p "$OVS_RUNDIR"
    ovsdb-tool create "$OVS_DBDIR/conf.db" /usr/share/openvswitch/vswitch.ovsschema
    ovsdb-server "$OVS_DBDIR/conf.db" --remote="punix:$OVS_RUNDIR/db.sock" \
        --pidfile --detach --log-file -vconsole:off
    ovs-vsctl --no-wait init
    ovs-vswitchd --pidfile --detach --log-file -vconsole:off
    vsctl() { timeout 30 ovs-vsctl "$@"; }
    mkbridge() { # NAME DPID PREFIX
        vsctl add-br "$1" -- set bridge "$1" datapath_type=netdev \
            protocols=OpenFlow13 fail_mode=secure \
            other-config:datapath-id="$2" \
            other-config:disable-in-band=true
        for i in 1 2 3; do
            vsctl add-port "$1" "$3-p$i" -- set interface "$3-p$i" ofport_request=$i
        done
        vsctl set-controller "$1" "tcp:127.0.0.1:$OFPORT"
        vsctl set controller "$1" max_backoff=1000
    }

    if [[ ${CAPTURE:-0} == 1 ]]; then
        tcpdump -i lo -s 0 -U -w "${LOG%.log}.pcap" "tcp port $OFPORT" 2>/dev/null &
        PIDS+=("$!")
        sleep 0.5
    fi

    # The controller first, so the switches find it listening.
    "$VENV/bin/osken-manager" --ofp-tcp-listen-port "$OFPORT" \
        --test-switch-target 0000000000000001 \
        --test-switch-tester 0000000000000002 \
        --test-switch-dir "$TESTDIR" \
        os_ken.tests.switch.tester >"$LOG" 2>&1 &
    CTL=$!
    PIDS+=("$CTL")
    for _ in $(seq 100); do
        ss -Hltn "sport = :$OFPORT" | grep -q . && break
        sleep 0.2
    done

    mkbridge tester 0000000000000002 tst
    if [[ $TARGET == baton ]]; then
        RUST_LOG=${RUST_LOG:-info} "$BATON" switch --dpid 1 --of 13 \
            --controller "tcp:127.0.0.1:$OFPORT" \
            --port tgt-p1 tgt-p2 tgt-p3 >"$SWLOG" 2>&1 &
        SWITCH_PID=$!
        PIDS+=("$SWITCH_PID")
    else
        mkbridge target 0000000000000001 tgt
        echo "target is the OVS bridge 'target'; see $OVSLOG" >"$SWLOG"
    fi

    # The tester ends itself (SIGTERM to its own process) after the report.
    set +e
    timeout --foreground "$SUITE_TIMEOUT" tail --pid="$CTL" -f /dev/null
    rc=$?
    set -e
    if [[ $rc == 124 ]]; then
        echo "!!! suite timed out after ${SUITE_TIMEOUT}s" | tee -a "$LOG" >&2
    fi
    if [[ $TARGET == baton ]]; then
        if ! kill -0 "$SWITCH_PID" 2>/dev/null; then
            echo "!!! baton switch exited during the run" | tee -a "$LOG" >&2
        fi
        if grep -q "panicked" "$SWLOG"; then
            echo "!!! baton switch panicked, see $SWLOG" | tee -a "$LOG" >&2
        fi
    fi
    exit 0
fi

# ---------------------------------------------------------------------------
# Outer part.
# ---------------------------------------------------------------------------
[[ $# -ge 1 && $# -le 2 ]] || usage
TARGET=$1
SUBSET=${2:-}
[[ $TARGET == baton || $TARGET == ovs ]] || usage
[[ $(id -u) == 0 ]] || { echo "needs root (namespaces, veths)" >&2; exit 1; }

need=()
command -v ovs-vswitchd >/dev/null || need+=(openvswitch-switch)
command -v ethtool >/dev/null || need+=(ethtool)
command -v ip >/dev/null || need+=(iproute2)
if ((${#need[@]})); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 "${need[@]}"
fi
if [[ ! -x $VENV/bin/osken-manager ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "os-ken==$OSKEN_VERSION"
fi
if [[ $TARGET == baton && ! -x $BATON ]]; then
    echo "no $BATON; run: cargo build --release -p baton --locked" >&2
    exit 1
fi

SUITE=$("$VENV/bin/python" -c 'import os, os_ken.tests.switch as m; print(os.path.dirname(m.__file__))')/of13
[[ -e $SUITE/${SUBSET} ]] || { echo "no $SUITE/$SUBSET" >&2; exit 1; }

mkdir -p "$OUT"
TAG=$TARGET-$(echo "${SUBSET:-all}" | tr '/' '_' | sed 's/\.json$//')
LOG=$OUT/$TAG.log
SWLOG=$OUT/$TAG.switch.log
OVSLOG=$OUT/$TAG.ovs.log
WORK=$(mktemp -d /tmp/conformance/run.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

TESTDIR=$SUITE/$SUBSET
if [[ -n ${DURATION:-} ]]; then
    # A copy of the tree with shorter throughput cases.
    mkdir -p "$WORK/of13"
    cp -r "$SUITE/." "$WORK/of13/"
    find "$WORK/of13" -name '*.json' -exec \
        sed -i "s/\"duration_time\":[0-9]*/\"duration_time\":$DURATION/" {} +
    TESTDIR=$WORK/of13/$SUBSET
fi

echo "target=$TARGET tests=$TESTDIR"
echo "log: $LOG  switch log: $SWLOG  ovs log: $OVSLOG"
start=$(date +%s)
export VENV BATON OFPORT SUITE_TIMEOUT CAPTURE
# In the background, so that a TERM or INT to this script stops the run:
# unshare --kill-child then kills the namespace's PID 1 and with it everything
# inside (switches, controller, veths).
timeout --kill-after=30 $((SUITE_TIMEOUT + 120)) \
    unshare --net --pid --fork --kill-child --mount-proc --mount \
    bash "$0" __inner "$TARGET" "$TESTDIR" "$LOG" "$SWLOG" "$OVSLOG" "$WORK" &
RUN=$!
trap 'kill -TERM "$RUN" 2>/dev/null || true; wait "$RUN" || true; rm -rf "$WORK"' EXIT
trap 'exit 143' TERM INT
wait "$RUN" || true
echo "took $(($(date +%s) - start)) s"
grep -E '^(OK|ERROR)\([0-9]+\) / ' "$LOG" || { echo "no final report in $LOG" >&2; tail -5 "$LOG" >&2; exit 1; }
