//! The `ip` and `ethtool` commands that make hosts and links, as shell
//! script text run inside the lab (`sh -e -x`, so a failure shows the
//! line that failed). No I/O here.

use crate::cmd::quote;
use crate::topo::HostSpec;
use std::fmt::Write as _;

/// IPv6 off: else router solicitations and MLD reports reach a controller
/// as extra PACKET_INs (OVS-NOTES). Written only where the kernel has it.
const NO_IPV6: &str = "for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 \
    /proc/sys/net/ipv6/conf/default/disable_ipv6; do [ ! -e \"$f\" ] || echo 1 > \"$f\"; done";

/// Makes host `h`'s network namespace, with IPv6 off and its loopback up
/// (its interfaces come with its links).
pub(crate) fn host_script(h: &HostSpec) -> String {
    let n = &h.name;
    format!(
        "ip netns add {n}\n\
         nsenter --net=/run/netns/{n} sh -c {}\n\
         ip -n {n} link set lo up\n",
        quote(NO_IPV6)
    )
}

/// One end of a link being made.
pub(crate) enum EndSetup<'a> {
    /// A switch's port, left in the lab's namespace (an OVS port or a
    /// plain veth end).
    Switch {
        /// The interface.
        iface: String,
    },
    /// A host's interface, moved into the host's namespace; `addr` is the
    /// host when this interface carries its address and MAC.
    Host {
        /// The host's name (its namespace).
        ns: &'a str,
        /// The interface.
        iface: String,
        /// The host, if this interface is its addressed one.
        addr: Option<&'a HostSpec>,
    },
}

impl EndSetup<'_> {
    fn iface(&self) -> &str {
        match self {
            EndSetup::Switch { iface } | EndSetup::Host { iface, .. } => iface,
        }
    }

    /// `netns NS` where the device must be made, empty in the lab's own.
    fn netns(&self) -> String {
        match self {
            EndSetup::Switch { .. } => String::new(),
            EndSetup::Host { ns, .. } => format!(" netns {ns}"),
        }
    }

    fn configure(&self, s: &mut String) {
        match self {
            EndSetup::Switch { iface } => {
                let _ = writeln!(s, "ip link set {iface} up");
            }
            EndSetup::Host { ns, iface, addr } => {
                if let Some(h) = addr {
                    let _ = writeln!(s, "ip -n {ns} link set {iface} address {}", h.mac);
                    let _ = writeln!(
                        s,
                        "ip -n {ns} addr add {}/{} dev {iface}",
                        h.ip, h.prefix_len
                    );
                }
                let _ = writeln!(s, "ip -n {ns} link set {iface} up");
                // Without it TCP and UDP checksums are never filled in on
                // OVS's userspace datapath (OVS-NOTES).
                let _ = writeln!(
                    s,
                    "nsenter --net=/run/netns/{ns} ethtool -K {iface} tx off >/dev/null"
                );
            }
        }
    }
}

/// Makes the veth pair of a link, each end in its namespace, configured.
pub(crate) fn link_script(a: &EndSetup<'_>, b: &EndSetup<'_>) -> String {
    let mut s = format!(
        "ip link add {}{} type veth peer name {}{}\n",
        a.iface(),
        a.netns(),
        b.iface(),
        b.netns()
    );
    a.configure(&mut s);
    b.configure(&mut s);
    s
}

/// Sets a link's interfaces up or down: `(namespace, interface)`, the
/// namespace `None` for the lab's own.
pub(crate) fn link_state_script(ends: &[(Option<&str>, String)], up: bool) -> String {
    let state = if up { "up" } else { "down" };
    let mut s = String::new();
    for (ns, iface) in ends {
        match ns {
            Some(ns) => {
                let _ = writeln!(s, "ip -n {ns} link set {iface} {state}");
            }
            None => {
                let _ = writeln!(s, "ip link set {iface} {state}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_link_moves_one_end_and_addresses_it() {
        let h = HostSpec::new("h1", "10.0.0.1/24", "00:00:00:00:00:01").unwrap();
        let s = link_script(
            &EndSetup::Host {
                ns: "h1",
                iface: "h1-eth0".into(),
                addr: Some(&h),
            },
            &EndSetup::Switch {
                iface: "s1-eth1".into(),
            },
        );
        assert_eq!(
            s,
            "ip link add h1-eth0 netns h1 type veth peer name s1-eth1\n\
             ip -n h1 link set h1-eth0 address 00:00:00:00:00:01\n\
             ip -n h1 addr add 10.0.0.1/24 dev h1-eth0\n\
             ip -n h1 link set h1-eth0 up\n\
             nsenter --net=/run/netns/h1 ethtool -K h1-eth0 tx off >/dev/null\n\
             ip link set s1-eth1 up\n"
        );
        let hs = host_script(&h);
        assert!(hs.starts_with("ip netns add h1\nnsenter --net=/run/netns/h1 sh -c 'for f in"));
        assert!(hs.ends_with("ip -n h1 link set lo up\n"));
    }

    #[test]
    fn a_switch_link_stays_in_the_lab() {
        let s = link_script(
            &EndSetup::Switch {
                iface: "s1-eth3".into(),
            },
            &EndSetup::Switch {
                iface: "s2-eth2".into(),
            },
        );
        assert_eq!(
            s,
            "ip link add s1-eth3 type veth peer name s2-eth2\nip link set s1-eth3 up\nip link set s2-eth2 up\n"
        );
        let down = link_state_script(
            &[(None, "s1-eth3".into()), (Some("h1"), "h1-eth0".into())],
            false,
        );
        assert_eq!(
            down,
            "ip link set s1-eth3 down\nip -n h1 link set h1-eth0 down\n"
        );
    }
}
