//! [`Routes`]: shortest paths and a spanning tree over one version of the
//! [`Topology`], published as a view together with that version, so a
//! reader never uses a path through a link its topology does not have
//! (Maestro's IntradomainRoutingApp, Maestro §3.1 Fig. 2; Beacon §3.3).
//!
//! Paths are hop counts over the links known in both directions. The
//! shortest paths towards a destination switch are a breadth-first search
//! from it; each destination's is computed the first time it is asked for
//! (or in advance for the switches with hosts, off the packet-in path) and
//! kept with the routes, so a large network costs one search per
//! destination in use rather than all pairs. A search and what it keeps
//! span only the destination's connected part of the network: 10,000
//! switches with hosts and no links between them cost 10,000 one-switch
//! searches, not 10,000 vectors of 10,000 entries (800 MB and a second
//! of CPU at each new topology, measured in a 10,000-switch soak). A
//! topology with links taken away keeps the searches whose trees did not
//! use them (the same search would find the same tree).
//!
//! Floods have two ways: over the spanning tree, hop by hop, and in one
//! step, a PACKET_OUT from the controller to every switch of a connected
//! part with edge ports ([`Routes::edge_flood`], worked out once per
//! version of the edge ports at the first flood).
//!
//! The searches are written here rather than taken from petgraph: a
//! route needs the *port* each hop leaves by, which petgraph's `Bfs` does
//! not report, and its `dijkstra` returns no predecessors.
//! `examples/route_times.rs` measures them (BENCHMARKS.md, "The network services on Open vSwitch").

use crate::views::{Link, PortRef, PortSet, Topology};
use baton_openflow::neutral::ActionSpec;
use baton_openflow::{DatapathId, PortNo};
use baton_runtime::SwitchId;
use baton_runtime::env::{Versioned, View};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};

/// The hash of the switch numbering: datapath ids are the switches' own,
/// one each, so a sender cannot make them collide by the thousand, and a
/// path's every hop looks one up (SipHash cost 60-80 instructions a
/// look-up; foldhash a few).
type DpidHasher = foldhash::fast::FixedState;

/// For every switch that can reach one destination, the port it sends
/// towards it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextHops {
    /// The destination's connected part ([`Numbering::part`]).
    part: u32,
    /// By position in that part ([`Numbering::place`]).
    ports: HopPorts,
    numbering: Arc<Numbering>,
}

/// The ports of a [`NextHops`], by position: two bytes a switch where
/// every port number fits (0, never a port, for the destination), eight
/// otherwise. The routes keep one per destination in use, each the size
/// of its part: at 10,000 switches with hosts on 2,000 of them, eight
/// bytes a switch were 160 MB per version of the routes (a soak,
/// BENCHMARKS.md).
#[derive(Debug, Clone, PartialEq, Eq)]
enum HopPorts {
    Narrow(Box<[u16]>),
    Wide(Box<[Option<PortNo>]>),
}

impl HopPorts {
    fn get(&self, place: usize) -> Option<PortNo> {
        match self {
            HopPorts::Narrow(p) => p
                .get(place)
                .filter(|&&n| n != 0)
                .map(|&n| PortNo(u32::from(n))),
            HopPorts::Wide(p) => p.get(place).copied().flatten(),
        }
    }

    fn len(&self) -> usize {
        match self {
            HopPorts::Narrow(p) => p.len(),
            HopPorts::Wide(p) => p.len(),
        }
    }
}

impl NextHops {
    /// The port `dpid` sends towards the destination by.
    pub fn get(&self, dpid: &DatapathId) -> Option<PortNo> {
        self.at(*self.numbering.index.get(dpid)?)
    }

    /// The port switch `i` (by index) sends towards the destination by.
    fn at(&self, i: u32) -> Option<PortNo> {
        let i = i as usize;
        if self.numbering.part.get(i) != Some(&self.part) {
            return None;
        }
        let place = *self.numbering.place.get(i)? as usize;
        self.ports.get(place)
    }

    /// How many switches reach the destination (itself not counted).
    pub fn len(&self) -> usize {
        (0..self.ports.len())
            .filter(|&i| self.ports.get(i).is_some())
            .count()
    }

    /// True when no other switch reaches it.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How switches are numbered: densely by datapath id order (the index),
/// and by connected part of the network, each switch with its position in
/// its part, so a search towards a destination runs over vectors the size
/// of that part.
#[derive(Debug, PartialEq, Eq)]
struct Numbering {
    index: HashMap<DatapathId, u32, DpidHasher>,
    /// Each switch's connected part, by index.
    part: Vec<u32>,
    /// Each switch's position in its part, by index.
    place: Vec<u32>,
    /// Each part's number of switches.
    sizes: Vec<u32>,
}

impl Numbering {
    /// The numbering of the switches of `index` linked as `adjacency`
    /// says: parts found breadth first from each part's lowest index.
    fn new(index: HashMap<DatapathId, u32, DpidHasher>, adjacency: &[Vec<Edge>]) -> Numbering {
        let unseen = u32::MAX;
        let mut part = vec![unseen; adjacency.len()];
        let mut place = vec![0; adjacency.len()];
        let mut sizes: Vec<u32> = Vec::new();
        for root in 0..adjacency.len() {
            if part[root] != unseen {
                continue;
            }
            let p = sizes.len() as u32;
            part[root] = p;
            let mut found = vec![root as u32];
            let mut next = 0;
            while let Some(&u) = found.get(next) {
                next += 1;
                for e in &adjacency[u as usize] {
                    if part[e.far as usize] == unseen {
                        part[e.far as usize] = p;
                        found.push(e.far);
                    }
                }
            }
            // Positions in index order, so that a network of one part is
            // searched in the same order as by index.
            found.sort_unstable();
            for (at, &i) in found.iter().enumerate() {
                place[i as usize] = at as u32;
            }
            sizes.push(found.len() as u32);
        }
        Numbering {
            index,
            part,
            place,
            sizes,
        }
    }
}

/// One usable link of a switch: its port, and the far switch (by index)
/// and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    port: PortNo,
    far: u32,
    far_port: PortNo,
    /// The far switch's position in its connected part
    /// ([`Numbering::place`]), for the searches.
    far_place: u32,
}

/// Shortest paths and the flooding tree of one topology version.
///
/// Switches are numbered densely (by datapath id order) so the searches
/// run over vectors: at 10,000 switches a search is a fraction of a
/// millisecond rather than the tens a tree of maps costs.
pub struct Routes {
    topology: Versioned<Topology>,
    paths: Arc<Paths>,
    /// Worked out at the first flood: the routes of a cut are computed
    /// without it.
    edge_flood: Arc<OnceLock<EdgeFlood>>,
}

/// What the routes take from a topology: its switches and the links known
/// both ways. Routes of topologies that differ only in the rest (a port
/// that settled, a port where hosts were seen) share them, searches
/// already made included ([`Routes::follow`]): under a MAC flood every
/// first host on a port is a new topology, and each recomputed the routes
/// and searched again towards every switch with hosts (a 10,000-switch
/// soak, BENCHMARKS.md).
struct Paths {
    dpids: Vec<DatapathId>,
    /// The links known both ways, as [`Topology::bidirectional_links`]
    /// lists them.
    links: Vec<Link>,
    numbering: Arc<Numbering>,
    /// Each switch's usable links, by port.
    adjacency: Vec<Vec<Edge>>,
    /// Both ends of every link of the spanning tree.
    tree: BTreeSet<PortRef>,
    /// Next hops towards each destination switch asked for so far, by its
    /// index: written once, then read by every worker without a lock (a
    /// path's look-up took a lock shared by every worker).
    towards: Box<[OnceLock<Arc<NextHops>>]>,
}

impl View for Routes {
    const NAME: &'static str = "routes";
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("topology_version", &self.topology.version())
            .field("tree", &self.paths.tree)
            .finish()
    }
}

impl Routes {
    /// The routes of `topology`: its adjacency and spanning tree now,
    /// shortest paths as they are asked for.
    pub fn compute(topology: Versioned<Topology>) -> Routes {
        let paths = Arc::new(Paths::new(&topology));
        Routes {
            paths,
            topology,
            edge_flood: Arc::default(),
        }
    }

    /// The routes of `topology`, a later version of these routes'
    /// topology: these routes' paths and searches if it has the same
    /// switches and links (known both ways), computed anew otherwise,
    /// with the searches that links taken away leave as they were
    /// (`Paths::keep_searches`).
    pub fn follow(&self, topology: Versioned<Topology>) -> Routes {
        let paths = &self.paths;
        let same = topology.switches.keys().eq(paths.dpids.iter())
            && topology
                .bidirectional_links()
                .eq(paths.links.iter().copied());
        if !same {
            let routes = Routes::compute(topology);
            routes.paths.keep_searches(paths);
            return routes;
        }
        // The edge ports change with the ports and their settling, not
        // with the host ports a MAC flood adds at every first host.
        let was = &self.topology;
        let same_edges = topology.switches_changed_since(was).is_empty()
            && topology.settling.diff(&was.settling).next().is_none();
        let edge_flood = match same_edges {
            true => self.edge_flood.clone(),
            false => Arc::default(),
        };
        Routes {
            topology,
            paths: paths.clone(),
            edge_flood,
        }
    }

    /// Whether these routes and `other` share their paths: the same
    /// switches and links, and the searches made for either.
    pub fn same_paths(&self, other: &Routes) -> bool {
        Arc::ptr_eq(&self.paths, &other.paths)
    }

    /// The links the paths use (known both ways), in order.
    pub fn links(&self) -> &[Link] {
        &self.paths.links
    }

    /// The topology these routes were computed from.
    pub fn topology(&self) -> &Versioned<Topology> {
        &self.topology
    }

    /// For every switch that can reach `dst`, the port towards it.
    pub fn next_hops(&self, dst: DatapathId) -> Arc<NextHops> {
        let numbering = &self.paths.numbering;
        let Some(&d) = numbering.index.get(&dst) else {
            return Arc::new(NextHops {
                part: u32::MAX,
                ports: HopPorts::Narrow(Box::default()),
                numbering: numbering.clone(),
            });
        };
        self.paths.towards[d as usize]
            .get_or_init(|| {
                let part = numbering.part[d as usize];
                let size = numbering.sizes[part as usize] as usize;
                Arc::new(NextHops {
                    part,
                    ports: next_hops(&self.paths.adjacency, numbering, size, d),
                    numbering: numbering.clone(),
                })
            })
            .clone()
    }

    /// Computes the next hops towards each of `dsts` now (the routing
    /// application does this for switches with hosts when the topology
    /// changes, off the packet-in path).
    pub fn prepare(&self, dsts: impl IntoIterator<Item = DatapathId>) {
        for d in dsts {
            self.next_hops(d);
        }
    }

    /// The ports a packet leaves by on its way from switch `from` to switch
    /// `to`, one per switch, `from` first; empty when `from` is `to`;
    /// `None` when `to` cannot be reached.
    pub fn path(&self, from: DatapathId, to: DatapathId) -> Option<Vec<PortRef>> {
        let (mut path, mut links) = (Vec::new(), Vec::new());
        self.path_into(from, to, (&mut path, &mut links))
            .then_some(path)
    }

    /// [`Routes::path`] into buffers the caller keeps (the packet-in
    /// path's, which allocates nothing): the ports onto `ports`, and the
    /// link each leads onto onto `links`, as many; false, with part of the
    /// way pushed, when `to` cannot be reached.
    pub fn path_into(
        &self,
        from: DatapathId,
        to: DatapathId,
        (ports, links): (&mut Vec<PortRef>, &mut Vec<Link>),
    ) -> bool {
        let index = &self.paths.numbering.index;
        let (Some(&f), Some(&t)) = (index.get(&from), index.get(&to)) else {
            return false;
        };
        if f == t {
            return true;
        }
        let hops = self.next_hops(to);
        let dpids = &self.paths.dpids;
        let mut at = f;
        while at != t {
            let Some(port) = hops.at(at) else {
                return false;
            };
            let Some(e) = self.paths.adjacency[at as usize]
                .iter()
                .find(|e| e.port == port)
            else {
                return false;
            };
            let src = PortRef::new(dpids[at as usize], port);
            ports.push(src);
            links.push(Link {
                src,
                dst: PortRef::new(dpids[e.far as usize], e.far_port),
            });
            at = e.far;
            if ports.len() > dpids.len() {
                return false;
            }
        }
        true
    }

    /// The links a path uses, as [`Routes::path`] lists its ports.
    pub fn path_links(&self, path: &[PortRef]) -> Vec<Link> {
        path.iter()
            .filter_map(|&src| self.topology.link_from(src).map(|dst| Link { src, dst }))
            .collect()
    }

    /// Whether port `p` is on the spanning tree.
    pub fn is_tree_port(&self, p: PortRef) -> bool {
        self.paths.tree.contains(&p)
    }

    /// The ports a broadcast or a packet for an unknown destination leaves
    /// switch `dpid` by when it arrived on `in_port`: every edge port and
    /// every tree port but the one it came in by. `None` when it arrived on
    /// a link that is not on the tree (a copy that went round a loop):
    /// it must be dropped. Works the switch's ports out at each call: the
    /// packet-in path keeps them per switch ([`Routes::switch_flood`]).
    pub fn flood_ports(&self, dpid: DatapathId, in_port: PortNo) -> Option<Vec<PortNo>> {
        Some(self.switch_flood(dpid).from(in_port)?.ports().collect())
    }

    /// The switches of `dpid`'s connected part and their edge ports, for
    /// a flood sent to every edge port at once ([module docs](self)); `None`
    /// when the part has a switch this instance does not serve (another
    /// member's in a cluster), or `dpid` is unknown.
    pub fn edge_flood(&self, dpid: DatapathId) -> Option<Arc<[EdgeSwitch]>> {
        let numbering = &self.paths.numbering;
        let part = numbering.part[*numbering.index.get(&dpid)? as usize];
        let flood = self
            .edge_flood
            .get_or_init(|| EdgeFlood::new(&self.topology, numbering));
        flood.parts.get(part as usize)?.clone()
    }

    /// How switch `dpid` floods on these routes: its edge and tree ports,
    /// and the link ports off the tree, where a flood's copy that went
    /// round a loop arrives.
    pub fn switch_flood(&self, dpid: DatapathId) -> SwitchFlood {
        let mut ports = self.topology.edge_ports(dpid);
        let mut off_tree = PortSet::default();
        if let Some(&i) = self.paths.numbering.index.get(&dpid) {
            for e in &self.paths.adjacency[i as usize] {
                match self.paths.tree.contains(&PortRef::new(dpid, e.port)) {
                    true => ports.push(e.port),
                    false => off_tree.insert(e.port),
                }
            }
        }
        // Links known one way only are not in the adjacency: off the tree.
        for l in self.topology.links_from_switch(dpid) {
            if !self.paths.tree.contains(&l.src) {
                off_tree.insert(l.src.port);
            }
        }
        for l in self.topology.links_to_switch(dpid) {
            if !self.paths.tree.contains(&l.dst) {
                off_tree.insert(l.dst.port);
            }
        }
        ports.sort();
        ports.dedup();
        SwitchFlood {
            ports: ports.into(),
            off_tree,
        }
    }
}

/// How one switch floods on one version of the routes
/// ([`Routes::switch_flood`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchFlood {
    /// Its edge ports and tree ports, in order.
    ports: Arc<[PortNo]>,
    /// Its link ports off the spanning tree.
    off_tree: PortSet,
}

impl SwitchFlood {
    /// The ports a packet that arrived on `in_port` is flooded by; `None`
    /// if it arrived on a link off the tree.
    #[inline]
    pub fn from(&self, in_port: PortNo) -> Option<Flood<'_>> {
        if self.off_tree.contains(in_port) {
            return None;
        }
        Some(Flood {
            ports: &self.ports,
            except: in_port,
        })
    }
}

/// The ports one flooded packet leaves a switch by ([`SwitchFlood::from`]).
#[derive(Debug, Clone, Copy)]
pub struct Flood<'a> {
    ports: &'a [PortNo],
    except: PortNo,
}

impl Flood<'_> {
    /// The ports, in order.
    pub fn ports(&self) -> impl Iterator<Item = PortNo> + '_ {
        self.ports.iter().copied().filter(|&p| p != self.except)
    }

    /// Whether it leaves by no port.
    pub fn is_empty(&self) -> bool {
        self.ports().next().is_none()
    }
}

/// Where a flood goes in one step: for each connected part of the
/// network, the switches with edge ports and those ports. The packet-in
/// path floods a broadcast that came in on an edge port by one
/// PACKET_OUT to each of them, rather than over the spanning tree hop by
/// hop (a packet-in and a PACKET_OUT at every switch, one controller
/// round trip per hop: at 10,000 switches an ARP request cost 10,000
/// packet-ins and about 100 round trips, and a few dozen a second
/// saturated a worker; BENCHMARKS.md, "10,000 switches").
#[derive(Debug)]
struct EdgeFlood {
    /// By part ([`Numbering::part`]); `None` for a part with a switch
    /// this instance does not serve, which is flooded over the tree.
    parts: Vec<Option<Arc<[EdgeSwitch]>>>,
}

/// A switch a one-step flood reaches ([`Routes::edge_flood`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeSwitch {
    /// The switch.
    pub dpid: DatapathId,
    /// Its connection here.
    pub id: SwitchId,
    /// Its edge ports, in order, as output actions.
    pub outputs: Arc<[ActionSpec]>,
}

impl EdgeFlood {
    fn new(topology: &Topology, numbering: &Numbering) -> EdgeFlood {
        let mut parts: Vec<Option<Vec<EdgeSwitch>>> = vec![Some(Vec::new()); numbering.sizes.len()];
        // The numbering's index follows the switches' order.
        for (i, (&dpid, node)) in topology.switches.iter().enumerate() {
            let Some(part) = numbering
                .part
                .get(i)
                .and_then(|&p| parts.get_mut(p as usize))
            else {
                continue;
            };
            let Some(switches) = part else {
                continue;
            };
            let Some(id) = node.here() else {
                *part = None;
                continue;
            };
            let outputs: Arc<[ActionSpec]> = topology
                .edge_ports(dpid)
                .into_iter()
                .map(ActionSpec::output)
                .collect();
            if !outputs.is_empty() {
                switches.push(EdgeSwitch { dpid, id, outputs });
            }
        }
        EdgeFlood {
            parts: parts.into_iter().map(|p| p.map(Arc::from)).collect(),
        }
    }
}

impl Paths {
    fn new(topology: &Topology) -> Paths {
        let dpids: Vec<DatapathId> = topology.switches.keys().copied().collect();
        let index: HashMap<DatapathId, u32, DpidHasher> = dpids
            .iter()
            .enumerate()
            .map(|(i, d)| (*d, i as u32))
            .collect();
        let mut adjacency = vec![Vec::new(); dpids.len()];
        let links: Vec<Link> = topology.bidirectional_links().collect();
        for l in &links {
            let (Some(&a), Some(&b)) = (index.get(&l.src.dpid), index.get(&l.dst.dpid)) else {
                continue;
            };
            adjacency[a as usize].push(Edge {
                port: l.src.port,
                far: b,
                far_port: l.dst.port,
                far_place: 0,
            });
            adjacency[b as usize].push(Edge {
                port: l.dst.port,
                far: a,
                far_port: l.src.port,
                far_place: 0,
            });
        }
        let numbering = Numbering::new(index, &adjacency);
        for v in &mut adjacency {
            v.sort();
            for e in v {
                e.far_place = numbering.place[e.far as usize];
            }
        }
        let tree = spanning_tree(&dpids, &adjacency);
        Paths {
            towards: dpids.iter().map(|_| OnceLock::new()).collect(),
            dpids,
            links,
            numbering: Arc::new(numbering),
            adjacency,
            tree,
        }
    }
}

impl Paths {
    /// Takes over the searches of `before` that these paths would repeat
    /// exactly: where the switches are the same and numbered the same
    /// (no part split) and links were only taken away, a search whose
    /// tree used none of them meets every switch in the same order, from
    /// the same neighbour ([`next_hops`]: a link off the tree only ever
    /// found its far end already met). A cut on a torus keeps about half
    /// of them: at 10,000 switches, a search per switch with hosts after
    /// every cut was most of routing's DAG (BENCHMARKS.md, the soak).
    fn keep_searches(&self, before: &Paths) {
        if self.dpids != before.dpids || *self.numbering != *before.numbering {
            return;
        }
        let now: HashSet<&Link> = self.links.iter().collect();
        let was: HashSet<&Link> = before.links.iter().collect();
        if !now.is_subset(&was) {
            return;
        }
        let gone: Vec<&Link> = was.difference(&now).copied().collect();
        let index = &self.numbering.index;
        let leaves_by = |hops: &NextHops, end: &PortRef| {
            index
                .get(&end.dpid)
                .is_some_and(|&i| hops.at(i) == Some(end.port))
        };
        for (mine, theirs) in self.towards.iter().zip(before.towards.iter()) {
            let Some(hops) = theirs.get() else {
                continue;
            };
            let on_tree = gone
                .iter()
                .any(|l| leaves_by(hops, &l.src) || leaves_by(hops, &l.dst));
            if !on_tree {
                let _ = mine.set(hops.clone());
            }
        }
    }
}

/// Breadth-first search from switch `dst` over its connected part, whose
/// switches number `size`: for every other switch of the part, by its
/// position in it, the port of its first hop. Between equally short
/// paths, the one the search meets first wins (each switch's links in
/// port order, from `dst` outwards), so the result does not depend on
/// hashing.
fn next_hops(adjacency: &[Vec<Edge>], numbering: &Numbering, size: usize, dst: u32) -> HopPorts {
    let mut hops = vec![None; size];
    let mut seen = vec![false; size];
    seen[numbering.place[dst as usize] as usize] = true;
    let mut queue = VecDeque::from([dst]);
    let mut narrow = true;
    while let Some(u) = queue.pop_front() {
        for e in &adjacency[u as usize] {
            let far = e.far_place as usize;
            if !seen[far] {
                seen[far] = true;
                // `far_port` is the far switch's port on the link back to u.
                hops[far] = Some(e.far_port);
                narrow &= (1..=u32::from(u16::MAX)).contains(&e.far_port.0);
                queue.push_back(e.far);
            }
        }
    }
    match narrow {
        true => HopPorts::Narrow(hops.iter().map(|p| p.map_or(0, |p| p.0 as u16)).collect()),
        false => HopPorts::Wide(hops.into()),
    }
}

/// A spanning tree of every connected part of the graph, grown breadth
/// first from each part's lowest datapath id: both ends of each tree link.
fn spanning_tree(dpids: &[DatapathId], adjacency: &[Vec<Edge>]) -> BTreeSet<PortRef> {
    let mut tree = BTreeSet::new();
    let mut seen = vec![false; adjacency.len()];
    for root in 0..adjacency.len() {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut queue = VecDeque::from([root as u32]);
        while let Some(u) = queue.pop_front() {
            for e in &adjacency[u as usize] {
                if !seen[e.far as usize] {
                    seen[e.far as usize] = true;
                    tree.insert(PortRef::new(dpids[u as usize], e.port));
                    tree.insert(PortRef::new(dpids[e.far as usize], e.far_port));
                    queue.push_back(e.far);
                }
            }
        }
    }
    tree
}

#[cfg(test)]
mod tests;
