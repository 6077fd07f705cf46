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
//! destination in use rather than all pairs.
//!
//! The searches are written here rather than taken from petgraph: a
//! route needs the *port* each hop leaves by, which petgraph's `Bfs` does
//! not report, and its `dijkstra` returns no predecessors.

use crate::sync::lock;
use crate::views::{Link, PortRef, Topology};
use baton_openflow::{DatapathId, PortNo};
use baton_runtime::env::{Versioned, View};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// For every switch that can reach one destination, the port it sends
/// towards it by.
pub type NextHops = HashMap<DatapathId, PortNo>;

/// Shortest paths and the flooding tree of one topology version.
pub struct Routes {
    topology: Versioned<Topology>,
    /// Each switch's usable links: (its port, the far end), by port.
    adjacency: BTreeMap<DatapathId, Vec<(PortNo, PortRef)>>,
    /// Both ends of every link of the spanning tree.
    tree: BTreeSet<PortRef>,
    /// Next hops towards each destination asked for so far.
    towards: Mutex<HashMap<DatapathId, Arc<NextHops>>>,
}

impl View for Routes {
    const NAME: &'static str = "routes";
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("topology_version", &self.topology.version())
            .field("tree", &self.tree)
            .finish()
    }
}

impl Routes {
    /// The routes of `topology`: its adjacency and spanning tree now,
    /// shortest paths as they are asked for.
    pub fn compute(topology: Versioned<Topology>) -> Routes {
        let mut adjacency: BTreeMap<DatapathId, Vec<(PortNo, PortRef)>> =
            topology.switches.keys().map(|&d| (d, Vec::new())).collect();
        for l in topology.bidirectional_links() {
            if !(adjacency.contains_key(&l.src.dpid) && adjacency.contains_key(&l.dst.dpid)) {
                continue;
            }
            for (a, b) in [(l.src, l.dst), (l.dst, l.src)] {
                if let Some(v) = adjacency.get_mut(&a.dpid) {
                    v.push((a.port, b));
                }
            }
        }
        for v in adjacency.values_mut() {
            v.sort();
        }
        let tree = spanning_tree(&adjacency);
        Routes {
            topology,
            adjacency,
            tree,
            towards: Mutex::new(HashMap::new()),
        }
    }

    /// The topology these routes were computed from.
    pub fn topology(&self) -> &Versioned<Topology> {
        &self.topology
    }

    /// For every switch that can reach `dst`, the port towards it.
    pub fn next_hops(&self, dst: DatapathId) -> Arc<NextHops> {
        if let Some(n) = lock(&self.towards).get(&dst) {
            return n.clone();
        }
        let n = Arc::new(next_hops(&self.adjacency, dst));
        lock(&self.towards).insert(dst, n.clone());
        n
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
        if !self.adjacency.contains_key(&from) || !self.adjacency.contains_key(&to) {
            return None;
        }
        let hops = self.next_hops(to);
        let mut path = Vec::new();
        let mut at = from;
        while at != to {
            let port = *hops.get(&at)?;
            path.push(PortRef::new(at, port));
            let far = self.adjacency[&at]
                .iter()
                .find(|(p, _)| *p == port)
                .map(|(_, far)| far.dpid)?;
            at = far;
            if path.len() > self.adjacency.len() {
                return None;
            }
        }
        Some(path)
    }

    /// The links a path uses, as [`Routes::path`] lists its ports.
    pub fn path_links(&self, path: &[PortRef]) -> Vec<Link> {
        path.iter()
            .filter_map(|&src| self.topology.link_from(src).map(|dst| Link { src, dst }))
            .collect()
    }

    /// Whether port `p` is on the spanning tree.
    pub fn is_tree_port(&self, p: PortRef) -> bool {
        self.tree.contains(&p)
    }

    /// The ports a broadcast or a packet for an unknown destination leaves
    /// switch `dpid` by when it arrived on `in_port`: every edge port and
    /// every tree port but the one it came in by. `None` when it arrived on
    /// a link that is not on the tree (a copy that went round a loop):
    /// it must be dropped.
    pub fn flood_ports(&self, dpid: DatapathId, in_port: PortNo) -> Option<Vec<PortNo>> {
        let arrived = PortRef::new(dpid, in_port);
        if self.topology.is_link_port(arrived) && !self.tree.contains(&arrived) {
            return None;
        }
        let mut ports = self.topology.edge_ports(dpid);
        ports.extend(
            self.adjacency
                .get(&dpid)
                .into_iter()
                .flatten()
                .map(|(p, _)| *p)
                .filter(|&p| self.tree.contains(&PortRef::new(dpid, p))),
        );
        ports.retain(|&p| p != in_port);
        ports.sort();
        ports.dedup();
        Some(ports)
    }
}

/// Breadth-first search from `dst`: for every switch that reaches it, the
/// port of its first hop. Between equally short paths, the one the search
/// meets first wins (each switch's links in port order, from `dst`
/// outwards), so the result does not depend on hashing.
fn next_hops(
    adjacency: &BTreeMap<DatapathId, Vec<(PortNo, PortRef)>>,
    dst: DatapathId,
) -> NextHops {
    let mut hops = NextHops::new();
    if !adjacency.contains_key(&dst) {
        return hops;
    }
    let mut seen: BTreeSet<DatapathId> = [dst].into();
    let mut queue = VecDeque::from([dst]);
    while let Some(u) = queue.pop_front() {
        for &(_, far) in &adjacency[&u] {
            if seen.insert(far.dpid) {
                // `far.port` is the far switch's port on the link back to u.
                hops.insert(far.dpid, far.port);
                queue.push_back(far.dpid);
            }
        }
    }
    hops
}

/// A spanning tree of every connected part of the graph, grown breadth
/// first from each part's lowest datapath id: both ends of each tree link.
fn spanning_tree(adjacency: &BTreeMap<DatapathId, Vec<(PortNo, PortRef)>>) -> BTreeSet<PortRef> {
    let mut tree = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for &root in adjacency.keys() {
        if !seen.insert(root) {
            continue;
        }
        let mut queue = VecDeque::from([root]);
        while let Some(u) = queue.pop_front() {
            for &(port, far) in &adjacency[&u] {
                if seen.insert(far.dpid) {
                    tree.insert(PortRef::new(u, port));
                    tree.insert(far);
                    queue.push_back(far.dpid);
                }
            }
        }
    }
    tree
}

#[cfg(test)]
mod tests;
