//! [`Lab`]'s switches, hosts and links: made from a [`Topology`] (one
//! node or link is a topology too), cut and restored.

use super::{Lab, State};
use crate::cmd::{Cmd, Place};
use crate::error::{Context, Error, Result};
use crate::net::{self, EndSetup};
use crate::ovs::{self, SwitchKind, SwitchOptions};
use crate::topo::{self, End, HostSpec, LinkSpec, Topology};
use std::collections::BTreeMap;

impl Lab {
    /// Adds switch `name` with datapath id `dpid`: an OVS bridge, or for
    /// [`SwitchOptions::veth_only`] nothing until its links are made.
    pub fn add_switch(&self, name: &str, dpid: u64, opts: &SwitchOptions) -> Result<()> {
        let mut t = Topology::new();
        t.switch(name, dpid);
        self.build(&t, opts)
            .context(|| format!("adding switch {name}"))
    }

    /// Adds host `name` (a network namespace) with address `ip_cidr`
    /// (`10.0.0.1/24`) and Ethernet address `mac`, both given to its first
    /// link's interface.
    pub fn add_host(&self, name: &str, ip_cidr: &str, mac: &str) -> Result<()> {
        let mut t = Topology::new();
        t.host(HostSpec::new(name, ip_cidr, mac)?);
        self.build(&t, &SwitchOptions::default())
            .context(|| format!("adding host {name}"))
    }

    /// Links port `a_port` of node `a` with port `b_port` of node `b`
    /// (switches or hosts already added) with a veth pair, named
    /// `<a>-eth<a_port>` and `<b>-eth<b_port>`; an OVS switch's end
    /// becomes its OpenFlow port of that number.
    pub fn link(&self, a: &str, a_port: u16, b: &str, b_port: u16) -> Result<()> {
        let mut t = Topology::new();
        t.link(a, a_port, b, b_port);
        self.build(&t, &SwitchOptions::default())
            .context(|| format!("linking {a} port {a_port} to {b} port {b_port}"))
    }

    /// Makes a whole topology, its switches as `opts` says, in two steps
    /// (after starting OVS if needed): one shell script for the hosts and
    /// veth pairs, one `ovs-vsctl` transaction for every bridge and port.
    /// Links may also join nodes added before. [`Topology::switch_links`]
    /// and [`Topology::host_attachments`] then say what was made. If it
    /// fails, the lab may hold part of the topology: make a new lab.
    pub fn build(&self, topo: &Topology, opts: &SwitchOptions) -> Result<()> {
        let st = self.state();
        for name in topo
            .switches
            .iter()
            .map(|s| &s.name)
            .chain(topo.hosts.iter().map(|h| &h.name))
        {
            topo::check_name(name)?;
            if st.has(name) {
                return Err(Error::new(format!("the lab already has a node `{name}`")));
            }
        }
        // Check the links against the lab's nodes and the topology's.
        let mut all = Topology::new();
        for (name, (dpid, _)) in &st.switches {
            all.switch(name, dpid.0);
        }
        all.switches.extend(topo.switches.iter().cloned());
        all.hosts.extend(st.hosts.values().map(|h| h.0.clone()));
        all.hosts.extend(topo.hosts.iter().cloned());
        all.links.extend(st.links.iter().cloned());
        all.links.extend(topo.links.iter().cloned());
        all.validate()?;

        let kind_of = |st: &State, name: &str| {
            topo.switches
                .iter()
                .find(|s| s.name == name)
                .map(|_| opts.kind)
                .or_else(|| st.switches.get(name).map(|s| s.1.kind))
        };
        let mut script = String::new();
        for h in &topo.hosts {
            script.push_str(&net::host_script(h));
        }
        let mut addressed: BTreeMap<String, bool> =
            st.hosts.iter().map(|(n, h)| (n.clone(), h.1)).collect();
        addressed.extend(topo.hosts.iter().map(|h| (h.name.clone(), false)));
        let host_of = |name: &str| {
            topo.hosts
                .iter()
                .find(|h| h.name == name)
                .or_else(|| st.hosts.get(name).map(|h| &h.0))
        };
        let mut vsctl: Vec<String> = Vec::new();
        for s in &topo.switches {
            if opts.kind == SwitchKind::Ovs {
                vsctl.extend(ovs::bridge_args(&s.name, s.dpid, opts));
            }
        }
        for l in &topo.links {
            let mut ends = Vec::new();
            for e in [&l.a, &l.b] {
                if kind_of(&st, &e.node) == Some(SwitchKind::Ovs) {
                    vsctl.extend(ovs::port_args(&e.node, &e.interface(), e.port));
                }
                ends.push(match host_of(&e.node) {
                    Some(h) => {
                        let first =
                            !std::mem::replace(addressed.get_mut(&h.name).expect("listed"), true);
                        EndSetup::Host {
                            ns: &h.name,
                            iface: e.interface(),
                            addr: first.then_some(h),
                        }
                    }
                    None => EndSetup::Switch {
                        iface: e.interface(),
                    },
                });
            }
            script.push_str(&net::link_script(&ends[0], &ends[1]));
        }
        let needs_ovs = !vsctl.is_empty();
        drop(st);
        if needs_ovs {
            self.ovs()?;
        }
        if !script.is_empty() {
            self.script(&script).context(|| "making hosts and links")?;
        }
        if needs_ovs {
            self.vsctl(vsctl).context(|| "making bridges and ports")?;
        }
        let mut st = self.state();
        for s in &topo.switches {
            st.switches.insert(s.name.clone(), (s.dpid, opts.clone()));
        }
        for h in &topo.hosts {
            st.hosts.insert(h.name.clone(), (h.clone(), false));
        }
        for (name, done) in addressed {
            if let Some(h) = st.hosts.get_mut(&name) {
                h.1 = done;
            }
        }
        st.links.extend(topo.links.iter().cloned());
        Ok(())
    }

    /// The packet and byte counters of `node`'s interface for `port`
    /// (a host's or a switch's), as its namespace's `/proc/net/dev` has
    /// them.
    pub fn counters(&self, node: &str, port: u16) -> Result<Counters> {
        let place = if self.state().hosts.contains_key(node) {
            Place::Host(node.to_string())
        } else {
            Place::Lab
        };
        let iface = topo::interface_name(node, port);
        let dev = self
            .exec(Cmd::new("cat").arg("/proc/net/dev").place(place))?
            .stdout;
        Counters::parse(&dev, &iface).ok_or_else(|| {
            Error::new(format!(
                "no interface {iface} in {node}'s /proc/net/dev:\n{dev}"
            ))
        })
    }

    /// The hosts, in name order.
    pub fn hosts(&self) -> Vec<HostSpec> {
        self.state().hosts.values().map(|h| h.0.clone()).collect()
    }

    /// The links made so far.
    pub fn links(&self) -> Vec<LinkSpec> {
        self.state().links.clone()
    }

    /// Cuts every link between nodes `a` and `b`: their switch-side
    /// interfaces go down (a veth's peer then loses its carrier, as with a
    /// pulled cable; a host keeps its address and routes).
    pub fn set_link_down(&self, a: &str, b: &str) -> Result<()> {
        self.set_link(a, b, false)
    }

    /// Restores what [`Lab::set_link_down`] cut.
    pub fn set_link_up(&self, a: &str, b: &str) -> Result<()> {
        self.set_link(a, b, true)
    }

    fn set_link(&self, a: &str, b: &str, up: bool) -> Result<()> {
        let st = self.state();
        let mut ends: Vec<(Option<String>, String)> = Vec::new();
        for l in st
            .links
            .iter()
            .filter(|l| (l.a.node == a && l.b.node == b) || (l.a.node == b && l.b.node == a))
        {
            let switch_ends: Vec<&End> = [&l.a, &l.b]
                .into_iter()
                .filter(|e| st.switches.contains_key(&e.node))
                .collect();
            if switch_ends.is_empty() {
                ends.push((Some(l.a.node.clone()), l.a.interface()));
            }
            ends.extend(switch_ends.into_iter().map(|e| (None, e.interface())));
        }
        drop(st);
        if ends.is_empty() {
            return Err(Error::new(format!(
                "there is no link between `{a}` and `{b}`"
            )));
        }
        let ends: Vec<(Option<&str>, String)> = ends
            .iter()
            .map(|(n, i)| (n.as_deref(), i.clone()))
            .collect();
        self.script(&net::link_state_script(&ends, up))
            .map(drop)
            .context(|| {
                format!(
                    "setting the link {a}-{b} {}",
                    if up { "up" } else { "down" }
                )
            })
    }
}

/// An interface's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

impl Counters {
    /// `iface`'s counters in the text of `/proc/net/dev` (`name: rx_bytes
    /// rx_packets errs drop fifo frame compressed multicast tx_bytes
    /// tx_packets ...`).
    fn parse(dev: &str, iface: &str) -> Option<Counters> {
        let line = dev
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{iface}:")))?;
        let n: Vec<u64> = line
            .split_once(':')?
            .1
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        (n.len() >= 10).then(|| Counters {
            rx_bytes: n[0],
            rx_packets: n[1],
            tx_bytes: n[8],
            tx_packets: n[9],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_from_proc_net_dev() {
        let dev = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
h3-eth0: 1234567   20220    0    0    0     0          0         0      84       2    0    0    0     0       0          0
";
        let c = Counters::parse(dev, "h3-eth0").unwrap();
        assert_eq!(
            c,
            Counters {
                rx_bytes: 1234567,
                rx_packets: 20220,
                tx_bytes: 84,
                tx_packets: 2
            }
        );
        assert_eq!(Counters::parse(dev, "h3-eth1"), None);
    }
}
