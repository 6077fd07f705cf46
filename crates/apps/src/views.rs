//! The network state the network applications share, as views of the
//! runtime's environment (`baton_runtime::env`): the [`Topology`]
//! (switches, ports, links; written by `topology`), the [`Hosts`] (written
//! by `devices`) and the [`crate::routes::Routes`] (written by `routing`),
//! and in a cluster the [`Peers`] (what the other members know; written by
//! the cluster layer, read by `topology` and `devices`, which merge it into
//! theirs).
//!
//! Views are immutable: a writer builds the next version and publishes it
//! whole; what does not change between versions is shared (`Arc`, and the
//! persistent maps of `imbl`), so a new version of a large topology costs
//! the path it changes, not a copy of the whole. The hosts are the
//! exception: their versions share one table, changed in place, with a
//! log of what changed (the `hosts` module says why).
//!
//! The packet-in paths class a packet's port (edge, link) through
//! [`SwitchPorts`], which each application keeps per switch and works out
//! once per topology version, rather than through the topology's maps.

mod hosts;

pub use hosts::{
    Batch, Behind, Host, HostCache, HostChange, HostEvent, HostTable, Hosts, PROBE_MAC, Put, Seen,
    Sender, Silent,
};

use baton_openflow::neutral::PortDesc;
use baton_openflow::{DatapathId, MacAddr, PortNo};
use baton_runtime::SwitchId;
use baton_runtime::env::{Versioned, View};
use imbl::ordmap::DiffItem;
use imbl::{OrdMap, OrdSet};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;

/// A switch port: one end of a link, or where a host is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortRef {
    /// The switch.
    pub dpid: DatapathId,
    /// Its port.
    pub port: PortNo,
}

impl PortRef {
    /// Port `port` of switch `dpid`.
    pub const fn new(dpid: DatapathId, port: PortNo) -> PortRef {
        PortRef { dpid, port }
    }

    /// Every port of switch `dpid`, as a range of port references: they
    /// order by switch first, so a switch's ports are together in an
    /// ordered map or set, and `range(PortRef::of_switch(dpid))` visits
    /// that switch's alone.
    pub const fn of_switch(dpid: DatapathId) -> RangeInclusive<PortRef> {
        PortRef::new(dpid, PortNo(0))..=PortRef::new(dpid, PortNo(u32::MAX))
    }
}

impl fmt::Display for PortRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.dpid, self.port.0)
    }
}

impl std::str::FromStr for PortRef {
    type Err = String;

    /// Reads `DPID/PORT` as [`PortRef`]'s `Display` writes it, the
    /// datapath id in any form [`DatapathId`] reads (`1/2`,
    /// `00:00:00:00:00:00:00:01/2`).
    fn from_str(s: &str) -> Result<PortRef, String> {
        let (dpid, port) = s
            .rsplit_once('/')
            .ok_or_else(|| format!("bad port {s:?}: expected DPID/PORT, such as 1/2"))?;
        let port = port
            .parse::<u32>()
            .map_err(|_| format!("bad port number in {s:?}: expected DPID/PORT"))?;
        Ok(PortRef::new(dpid.parse()?, PortNo(port)))
    }
}

/// A link between two switch ports, in one direction: a probe sent out of
/// `src` arrived on `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Link {
    /// Where the probe left.
    pub src: PortRef,
    /// Where it arrived.
    pub dst: PortRef,
}

impl Link {
    /// The same link the other way.
    pub fn reversed(&self) -> Link {
        Link {
            src: self.dst,
            dst: self.src,
        }
    }

    /// The link with its lower end first, to name a link in either
    /// direction once.
    pub fn canonical(&self) -> Link {
        if self.src <= self.dst {
            *self
        } else {
            self.reversed()
        }
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.src, self.dst)
    }
}

/// Who sends to a switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// This instance, through the runtime's connection with this id.
    Here(SwitchId),
    /// The member of the cluster with this name, which masters it: its
    /// applications install the flows there (a path across switches of
    /// several members is installed hop by hop, each member its own).
    Peer(Arc<str>),
    /// In a cluster, this instance mastered it until a moment ago and
    /// another member masters it now: nobody here sends to it, but its
    /// facts (ports, the links arriving on it, its hosts) stay this
    /// instance's until the new master has published its own, so that no
    /// member's view loses them through the handover.
    HandedOver,
}

/// A connected switch and its ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchNode {
    /// Who sends to it.
    pub served: Served,
    /// Its datapath id.
    pub dpid: DatapathId,
    /// Its ports, live or not, by number.
    pub ports: BTreeMap<PortNo, PortDesc>,
}

impl SwitchNode {
    /// The runtime's id of its connection, if this instance serves it.
    pub fn here(&self) -> Option<SwitchId> {
        match self.served {
            Served::Here(id) => Some(id),
            Served::Peer(_) | Served::HandedOver => None,
        }
    }

    /// Whether its facts are this instance's to publish: it serves it, or
    /// did until a handover ([`Served::HandedOver`]).
    pub fn publishes(&self) -> bool {
        matches!(self.served, Served::Here(_) | Served::HandedOver)
    }

    /// The cluster member that masters it, `None` for this instance
    /// (whichever connection it came on).
    pub fn peer(&self) -> Option<&str> {
        match &self.served {
            Served::Here(_) | Served::HandedOver => None,
            Served::Peer(name) => Some(name),
        }
    }

    /// Its live numbered ports.
    pub fn live_ports(&self) -> impl Iterator<Item = &PortDesc> {
        self.ports
            .values()
            .filter(|p| p.is_live() && p.is_physical())
    }
}

/// The switches, their ports and the links between them.
///
/// Its collections are persistent ordered maps and sets (`imbl`), not
/// `BTreeMap`s: the `topology` application publishes a new version at
/// every switch event (switch up or down, port up or down, link found or
/// lost: about five per switch as it connects), and the versions share
/// what they do not change, so a version costs the path from the root to
/// what changed and a clone costs a pointer copy. With whole copies, every
/// event copied (and every replaced version dropped) every switch, link
/// and port, so 10,000 switches connecting or leaving cost a time
/// quadratic in the switches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    /// Every connected switch.
    pub switches: OrdMap<DatapathId, Arc<SwitchNode>>,
    /// Every link, by the port it leaves from.
    links: OrdMap<PortRef, PortRef>,
    /// The same links, by the port they arrive on.
    arrivals: OrdMap<PortRef, PortRef>,
    /// Ports that came up too recently for discovery to have found a link
    /// on them: neither edge nor link ports yet.
    pub settling: OrdSet<PortRef>,
    /// Ports where host traffic was seen (settled, with no link): probes
    /// arriving on them or claiming to come from them are not believed,
    /// until the port goes down (in a cluster, every member's, so a host
    /// cannot relay probes between two members' switches either).
    pub host_ports: OrdSet<PortRef>,
}

impl View for Topology {
    const NAME: &'static str = "topology";
}

impl Topology {
    /// Adds a link, replacing the one that left its source port or
    /// arrived on its destination port, if any (a port has one cable).
    /// Returns the links it replaced, or `None` if it was there already.
    pub fn add_link(&mut self, link: Link) -> Option<Vec<Link>> {
        if self.links.get(&link.src) == Some(&link.dst) {
            return None;
        }
        let mut displaced = Vec::new();
        if let Some(old_dst) = self.links.remove(&link.src) {
            self.arrivals.remove(&old_dst);
            displaced.push(Link {
                src: link.src,
                dst: old_dst,
            });
        }
        if let Some(old_src) = self.arrivals.remove(&link.dst) {
            self.links.remove(&old_src);
            displaced.push(Link {
                src: old_src,
                dst: link.dst,
            });
        }
        self.links.insert(link.src, link.dst);
        self.arrivals.insert(link.dst, link.src);
        Some(displaced)
    }

    /// Removes the links that leave port `p` or arrive on it (the cable at
    /// `p`, both directions). Returns them.
    pub fn remove_port_links(&mut self, p: PortRef) -> Vec<Link> {
        let mut gone = Vec::new();
        if let Some(dst) = self.links.remove(&p) {
            self.arrivals.remove(&dst);
            gone.push(Link { src: p, dst });
        }
        if let Some(src) = self.arrivals.remove(&p) {
            self.links.remove(&src);
            gone.push(Link { src, dst: p });
        }
        gone
    }

    /// Removes one link (one direction); true if it was there.
    pub fn remove_link(&mut self, link: Link) -> bool {
        if self.links.get(&link.src) != Some(&link.dst) {
            return false;
        }
        self.links.remove(&link.src);
        self.arrivals.remove(&link.dst);
        true
    }

    /// Removes a switch and every link that touches it. Returns the links,
    /// in order. Costs the switch's links, not all of them.
    pub fn remove_switch(&mut self, dpid: DatapathId) -> Vec<Link> {
        self.switches.remove(&dpid);
        let mut touching: Vec<Link> = self.links_from_switch(dpid).collect();
        // (A link between two ports of the switch is in both.)
        touching.extend(self.links_to_switch(dpid).filter(|l| l.src.dpid != dpid));
        touching.sort_unstable();
        for l in &touching {
            self.remove_link(*l);
        }
        touching
    }

    /// The switches that differ from `before`'s: came, went, or changed
    /// (ports, who serves them), and both ends of each link that came or
    /// went. Empty for topologies that differ only in their settling ports
    /// and host ports. Costs what the two do not share (the persistent
    /// maps' diff skips shared nodes).
    pub fn switches_changed_since(&self, before: &Topology) -> BTreeSet<DatapathId> {
        let mut changed = BTreeSet::new();
        for d in before.switches.diff(&self.switches) {
            changed.insert(match d {
                DiffItem::Add(dpid, _) | DiffItem::Remove(dpid, _) => *dpid,
                DiffItem::Update { new, .. } => *new.0,
            });
        }
        for d in before.links.diff(&self.links) {
            match d {
                DiffItem::Add(src, dst) | DiffItem::Remove(src, dst) => {
                    changed.extend([src.dpid, dst.dpid]);
                }
                DiffItem::Update { old, new } => {
                    changed.extend([old.0.dpid, old.1.dpid, new.1.dpid]);
                }
            }
        }
        changed
    }

    /// Forgets which ports of switch `dpid` are settling or host ports
    /// (the switch left). Costs those ports, not every switch's.
    pub fn remove_switch_ports(&mut self, dpid: DatapathId) {
        for set in [&mut self.settling, &mut self.host_ports] {
            let ports: Vec<PortRef> = set.range(PortRef::of_switch(dpid)).copied().collect();
            for p in &ports {
                set.remove(p);
            }
        }
    }

    /// The links leaving ports of switch `dpid`.
    pub fn links_from_switch(&self, dpid: DatapathId) -> impl Iterator<Item = Link> + '_ {
        self.links
            .range(PortRef::of_switch(dpid))
            .map(|(&src, &dst)| Link { src, dst })
    }

    /// The links arriving on ports of switch `dpid`.
    pub fn links_to_switch(&self, dpid: DatapathId) -> impl Iterator<Item = Link> + '_ {
        self.arrivals
            .range(PortRef::of_switch(dpid))
            .map(|(&dst, &src)| Link { src, dst })
    }

    /// Every link, one direction at a time.
    pub fn links(&self) -> impl Iterator<Item = Link> + '_ {
        self.links.iter().map(|(&src, &dst)| Link { src, dst })
    }

    /// The links known in both directions, each named once (lower end
    /// first): the links traffic may use.
    pub fn bidirectional_links(&self) -> impl Iterator<Item = Link> + '_ {
        self.links()
            .filter(|l| l.src < l.dst && self.links.get(&l.dst) == Some(&l.src))
    }

    /// The far end of the link leaving `p`, if one does.
    pub fn link_from(&self, p: PortRef) -> Option<PortRef> {
        self.links.get(&p).copied()
    }

    /// The near end of the link arriving on `p`, if one does.
    pub fn link_to(&self, p: PortRef) -> Option<PortRef> {
        self.arrivals.get(&p).copied()
    }

    /// Whether a link leaves or arrives on `p`.
    pub fn is_link_port(&self, p: PortRef) -> bool {
        self.links.contains_key(&p) || self.arrivals.contains_key(&p)
    }

    /// Whether `p` came up too recently to tell whether it has a link.
    pub fn is_settling(&self, p: PortRef) -> bool {
        self.settling.contains(&p)
    }

    /// Whether `p` is a live port of a known switch with no link, settled:
    /// where hosts are.
    pub fn is_edge_port(&self, p: PortRef) -> bool {
        self.switches
            .get(&p.dpid)
            .and_then(|s| s.ports.get(&p.port))
            .is_some_and(|d| d.is_live() && d.is_physical())
            && !self.is_link_port(p)
            && !self.is_settling(p)
    }

    /// The edge ports of `dpid` ([`Topology::is_edge_port`]), in order.
    /// Costs a range of each map per switch rather than a look-up of
    /// each per port: a flood in one step asks it of every switch.
    pub fn edge_ports(&self, dpid: DatapathId) -> Vec<PortNo> {
        let Some(s) = self.switches.get(&dpid) else {
            return Vec::new();
        };
        let mut not_edge = PortSet::default();
        for l in self.links_from_switch(dpid) {
            not_edge.insert(l.src.port);
        }
        for l in self.links_to_switch(dpid) {
            not_edge.insert(l.dst.port);
        }
        for p in self.settling.range(PortRef::of_switch(dpid)) {
            not_edge.insert(p.port);
        }
        s.live_ports()
            .map(|p| p.no)
            .filter(|&no| !not_edge.contains(no))
            .collect()
    }
}

/// A set of port numbers, for a switch's handful: a bit per port below
/// 64, a sorted list above.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortSet {
    low: u64,
    high: Vec<PortNo>,
}

impl PortSet {
    /// Adds `port`.
    pub fn insert(&mut self, port: PortNo) {
        match port.0 {
            n @ 0..64 => self.low |= 1 << n,
            _ => {
                if let Err(i) = self.high.binary_search(&port) {
                    self.high.insert(i, port);
                }
            }
        }
    }

    /// Takes `port` out.
    pub fn remove(&mut self, port: PortNo) {
        match port.0 {
            n @ 0..64 => self.low &= !(1 << n),
            _ => {
                if let Ok(i) = self.high.binary_search(&port) {
                    self.high.remove(i);
                }
            }
        }
    }

    /// Whether it holds `port`.
    #[inline]
    pub fn contains(&self, port: PortNo) -> bool {
        match port.0 {
            n @ 0..64 => self.low & (1 << n) != 0,
            _ => self.high.binary_search(&port).is_ok(),
        }
    }

    /// Its ports, in order.
    pub fn iter(&self) -> impl Iterator<Item = PortNo> + '_ {
        let low = self.low;
        (0..64u32)
            .filter(move |n| low & (1 << n) != 0)
            .map(PortNo)
            .chain(self.high.iter().copied())
    }
}

impl FromIterator<PortNo> for PortSet {
    fn from_iter<I: IntoIterator<Item = PortNo>>(ports: I) -> PortSet {
        let mut set = PortSet::default();
        for p in ports {
            set.insert(p);
        }
        set
    }
}

/// One switch's edge and link ports as one version of the topology has
/// them ([`Topology::is_edge_port`], [`Topology::is_link_port`]), for the
/// packet-in paths: an application keeps one per switch in the switch's
/// own state and brings it up to date with [`SwitchPorts::follow`], which
/// works them out again only when the version changed. Classing each
/// packet's port in the topology's maps cost about 400 instructions per
/// packet across the default pipeline (three look-ups in persistent maps
/// for each of `devices` and `routing`; BENCHMARKS.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchPorts {
    /// The topology version they were worked out from (0: none yet).
    version: u64,
    edge: PortSet,
    link: PortSet,
}

impl SwitchPorts {
    /// Switch `dpid`'s ports as `topo` has them, worked out again only if
    /// `topo` is another version than last time.
    #[inline]
    pub fn follow(&mut self, topo: &Versioned<Topology>, dpid: DatapathId) -> &SwitchPorts {
        if self.version != topo.version() {
            *self = SwitchPorts::of(topo, dpid);
        }
        self
    }

    /// Switch `dpid`'s ports in `topo`.
    pub fn of(topo: &Versioned<Topology>, dpid: DatapathId) -> SwitchPorts {
        let edge = topo.edge_ports(dpid).into_iter().collect();
        let link = topo
            .links_from_switch(dpid)
            .map(|l| l.src.port)
            .chain(topo.links_to_switch(dpid).map(|l| l.dst.port))
            .collect();
        SwitchPorts {
            version: topo.version(),
            edge,
            link,
        }
    }

    /// Whether `port` is an edge port ([`Topology::is_edge_port`]).
    #[inline]
    pub fn is_edge(&self, port: PortNo) -> bool {
        self.edge.contains(port)
    }

    /// Whether a link leaves or arrives on `port`
    /// ([`Topology::is_link_port`]).
    #[inline]
    pub fn is_link(&self, port: PortNo) -> bool {
        self.link.contains(port)
    }
}

/// What the other members of a cluster know of the network and this
/// instance does not: the switches they master with their ports, the links
/// arriving on those switches (a link is discovered where its probe
/// arrives) and the hosts attached to them. Published by the cluster layer
/// (`baton-cluster`) from etcd; absent on a standalone controller, so its
/// presence is how an application knows it runs in a cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peers {
    /// The key every member signs and checks discovery probes with, so
    /// that a probe one member sends is believed by the member whose
    /// switch it arrives on (`None` until etcd has given it).
    pub probe_key: Option<[u8; 32]>,
    /// Each other member's facts, by its name.
    pub members: BTreeMap<Arc<str>, Arc<PeerFacts>>,
}

impl View for Peers {
    const NAME: &'static str = "peers";
}

/// One member's facts ([`Peers`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerFacts {
    /// The switches it masters, and their ports.
    pub switches: BTreeMap<DatapathId, BTreeMap<PortNo, PortDesc>>,
    /// The links it discovered: those arriving on its switches.
    pub links: BTreeSet<Link>,
    /// The hosts it learnt: those attached to its switches.
    pub hosts: BTreeMap<MacAddr, Arc<Host>>,
    /// The host ports of its switches ([`Topology::host_ports`]).
    pub host_ports: BTreeSet<PortRef>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(d: u64, n: u32) -> PortRef {
        PortRef::new(DatapathId(d), PortNo(n))
    }

    #[test]
    fn switches_changed_are_those_that_came_went_changed_or_were_linked() {
        let node = |d: u64, ports: u32| {
            let ports = (1..=ports).map(|n| (PortNo(n), baton_runtime::testing::port(n)));
            Arc::new(SwitchNode {
                served: Served::Here(SwitchId::new(d as u32, 0)),
                dpid: DatapathId(d),
                ports: ports.collect(),
            })
        };
        let mut before = Topology::default();
        for d in 1..=4 {
            before.switches.insert(DatapathId(d), node(d, 2));
        }
        let mut now = before.clone();
        now.host_ports.insert(p(1, 1));
        now.settling.insert(p(1, 2));
        assert!(now.switches_changed_since(&before).is_empty());
        now.switches.remove(&DatapathId(4));
        now.switches.insert(DatapathId(2), node(2, 3));
        now.switches.insert(DatapathId(5), node(5, 1));
        now.add_link(Link {
            src: p(1, 2),
            dst: p(3, 1),
        });
        let changed: Vec<u64> = now
            .switches_changed_since(&before)
            .iter()
            .map(|d| d.0)
            .collect();
        assert_eq!(changed, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn links_are_kept_by_both_ends() {
        let mut t = Topology::default();
        let ab = Link {
            src: p(1, 1),
            dst: p(2, 1),
        };
        assert_eq!(t.add_link(ab), Some(vec![]));
        assert_eq!(t.add_link(ab), None);
        assert!(t.is_link_port(p(1, 1)) && t.is_link_port(p(2, 1)));
        assert_eq!(t.bidirectional_links().count(), 0, "one direction only");
        t.add_link(ab.reversed());
        assert_eq!(t.bidirectional_links().collect::<Vec<_>>(), vec![ab]);
        // A port re-cabled elsewhere replaces its old link.
        let ac = Link {
            src: p(1, 1),
            dst: p(3, 2),
        };
        assert_eq!(t.add_link(ac), Some(vec![ab]));
        assert_eq!(t.link_from(p(1, 1)), Some(p(3, 2)));
        assert_eq!(t.links().count(), 2);
        let gone = t.remove_port_links(p(1, 1));
        assert_eq!(gone.len(), 2);
        assert_eq!(t.links().count(), 0);
    }

    #[test]
    fn removing_a_switch_removes_its_links() {
        let mut t = Topology::default();
        for (a, b) in [(1, 2), (2, 3)] {
            let l = Link {
                src: p(a, 1),
                dst: p(b, 2),
            };
            t.add_link(l);
            t.add_link(l.reversed());
        }
        assert_eq!(t.remove_switch(DatapathId(2)).len(), 4);
        assert_eq!(t.links().count(), 0);
    }

    #[test]
    fn port_sets_hold_low_and_high_numbers() {
        let mut set: PortSet = [PortNo(3), PortNo(63), PortNo(64), PortNo(70000)]
            .into_iter()
            .collect();
        for n in [3, 63, 64, 70000] {
            assert!(set.contains(PortNo(n)), "{n}");
        }
        assert!(!set.contains(PortNo(4)) && !set.contains(PortNo(65)));
        set.remove(PortNo(63));
        set.remove(PortNo(64));
        set.insert(PortNo(3));
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![PortNo(3), PortNo(70000)]
        );
    }

    #[test]
    fn a_switch_s_ports_are_classed_as_the_topology_version_has_them() {
        let node = |d: u64| {
            let ports = (1..=3).map(|n| (PortNo(n), baton_runtime::testing::port(n)));
            Arc::new(SwitchNode {
                served: Served::Here(SwitchId::new(d as u32, 0)),
                dpid: DatapathId(d),
                ports: ports.collect(),
            })
        };
        let mut t = Topology::default();
        t.switches.insert(DatapathId(1), node(1));
        t.switches.insert(DatapathId(2), node(2));
        t.add_link(Link {
            src: p(1, 1),
            dst: p(2, 1),
        });
        t.settling.insert(p(1, 3));
        let v1 = Versioned::new(1, t.clone());
        let mut ports = SwitchPorts::default();
        let s1 = ports.follow(&v1, DatapathId(1)).clone();
        for n in 1..=3 {
            let at = p(1, n);
            assert_eq!(s1.is_edge(PortNo(n)), v1.is_edge_port(at), "{at}");
            assert_eq!(s1.is_link(PortNo(n)), v1.is_link_port(at), "{at}");
        }
        assert!(s1.is_link(PortNo(1)) && s1.is_edge(PortNo(2)) && !s1.is_edge(PortNo(3)));
        // The far end sees the link arriving on its port 1.
        assert!(SwitchPorts::of(&v1, DatapathId(2)).is_link(PortNo(1)));
        // The same version again is not looked at; a new one is.
        t.settling.remove(&p(1, 3));
        let v2 = Versioned::new(2, t);
        assert!(!ports.follow(&v1, DatapathId(1)).is_edge(PortNo(3)));
        assert!(ports.follow(&v2, DatapathId(1)).is_edge(PortNo(3)));
    }
}
