//! The link-state IGP each router runs (OSPF-like, as the thesis's
//! simulated routers do): a link-state database of every router's
//! advertisement, newest by sequence number, and a shortest-path-first
//! computation over it. Flooding and the hold-down timer are the
//! simulator's ([`crate::sim`]): they are timing, this is state.
//!
//! A link is used only if both its ends advertise it (OSPF's two-way
//! check), so a router that has heard of a failure from one end stops
//! using the link. Equal-cost paths are not split (no ECMP, as the
//! thesis's evaluation): ties go to the lower-numbered first hop, so every
//! run routes alike.

use crate::topo::{LinkId, NodeId, Topology};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// One link a router advertises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Adjacency {
    /// The router at its other end.
    pub neighbour: NodeId,
    /// The link.
    pub link: LinkId,
    /// Its weight (the controller's link cost).
    pub weight: u32,
}

/// A router's link-state advertisement: its live links, numbered.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lsa {
    /// The router it describes.
    pub origin: NodeId,
    /// Its sequence number: one more at each change of the router's own
    /// links (the thesis's `seq_n(t)`).
    pub seq: u64,
    /// Its live links.
    pub links: Vec<Adjacency>,
}

/// Where a router sends traffic for one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The next router.
    pub next: NodeId,
    /// The link to it.
    pub link: LinkId,
    /// The path's cost.
    pub cost: u64,
}

/// A router's IGP state.
#[derive(Debug, Clone)]
pub struct Router {
    /// Its number.
    pub id: NodeId,
    lsdb: Vec<Option<Arc<Lsa>>>,
    routes: Vec<Option<Route>>,
}

impl Router {
    /// A router of a network of `n` that knows nothing yet.
    pub fn new(id: NodeId, n: usize) -> Router {
        Router {
            id,
            lsdb: vec![None; n],
            routes: vec![None; n],
        }
    }

    /// The advertisement of `origin` it holds.
    pub fn lsa(&self, origin: NodeId) -> Option<&Arc<Lsa>> {
        self.lsdb[origin].as_ref()
    }

    /// Takes `lsa` if it is newer than the one held from its origin;
    /// whether it did.
    pub fn install(&mut self, lsa: Arc<Lsa>) -> bool {
        let slot = &mut self.lsdb[lsa.origin];
        if slot.as_ref().is_some_and(|held| held.seq >= lsa.seq) {
            return false;
        }
        *slot = Some(lsa);
        true
    }

    /// The sequence number held for each router (0: none), by router:
    /// what the thesis's fingerprint hashes.
    pub fn seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.lsdb.iter().map(|l| l.as_ref().map_or(0, |l| l.seq))
    }

    /// The sum of [`Router::seqs`]: the fingerprint's order.
    pub fn seq_sum(&self) -> u64 {
        self.seqs().sum()
    }

    /// Its route to `dst` (none to itself, or when unreachable).
    pub fn route(&self, dst: NodeId) -> Option<Route> {
        self.routes[dst]
    }

    /// Every route, by destination.
    pub fn routes(&self) -> &[Option<Route>] {
        &self.routes
    }

    /// Whether its database has `a`'s link `link` to `b` both ways, and
    /// at which weight from `a`.
    fn two_way(&self, a: NodeId, adj: &Adjacency) -> bool {
        self.lsdb[adj.neighbour].as_ref().is_some_and(|l| {
            l.links
                .iter()
                .any(|back| back.neighbour == a && back.link == adj.link)
        })
    }

    /// Shortest paths from this router over its database (Dijkstra); the
    /// destinations whose route changed.
    pub fn spf(&mut self) -> Vec<NodeId> {
        let n = self.lsdb.len();
        // (cost, first hop, first link) per router; lexicographic order
        // breaks ties towards the lower first hop.
        let mut best: Vec<Option<(u64, NodeId, LinkId)>> = vec![None; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        best[self.id] = Some((0, self.id, usize::MAX));
        heap.push(Reverse((0u64, self.id, self.id, usize::MAX)));
        while let Some(Reverse((cost, u, first, first_link))) = heap.pop() {
            if done[u] || best[u] != Some((cost, first, first_link)) {
                continue;
            }
            done[u] = true;
            let Some(lsa) = self.lsdb[u].clone() else {
                continue;
            };
            for adj in &lsa.links {
                if done[adj.neighbour] || !self.two_way(u, adj) {
                    continue;
                }
                let via = if u == self.id {
                    (adj.neighbour, adj.link)
                } else {
                    (first, first_link)
                };
                let cand = (cost + u64::from(adj.weight), via.0, via.1);
                if best[adj.neighbour].is_none_or(|b| cand < b) {
                    best[adj.neighbour] = Some(cand);
                    heap.push(Reverse((cand.0, adj.neighbour, cand.1, cand.2)));
                }
            }
        }
        let mut changed = Vec::new();
        for (dst, b) in best.iter().enumerate() {
            let route = b
                .filter(|_| dst != self.id)
                .map(|(cost, next, link)| Route { next, link, cost });
            if self.routes[dst] != route {
                self.routes[dst] = route;
                changed.push(dst);
            }
        }
        changed
    }
}

/// A converged network: every router's advertisement of its links `up`
/// at `weights` (sequence 1), installed in every router, SPF run.
pub fn converged(topo: &Topology, weights: &[u32], up: &[bool]) -> Vec<Router> {
    let n = topo.nodes.len();
    let adj = topo.adjacency();
    let lsas: Vec<Arc<Lsa>> = (0..n)
        .map(|r| {
            Arc::new(Lsa {
                origin: r,
                seq: 1,
                links: adj[r]
                    .iter()
                    .filter(|&&(_, l)| up[l])
                    .map(|&(neighbour, link)| Adjacency {
                        neighbour,
                        link,
                        weight: weights[link],
                    })
                    .collect(),
            })
        })
        .collect();
    (0..n)
        .map(|r| {
            let mut router = Router::new(r, n);
            for l in &lsas {
                router.install(l.clone());
            }
            router.spf();
            router
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsa(origin: NodeId, seq: u64, links: &[(NodeId, LinkId, u32)]) -> Arc<Lsa> {
        Arc::new(Lsa {
            origin,
            seq,
            links: links
                .iter()
                .map(|&(neighbour, link, weight)| Adjacency {
                    neighbour,
                    link,
                    weight,
                })
                .collect(),
        })
    }

    /// 0 - 1 - 2 and 0 - 2 directly at weight 3.
    fn triangle(r: &mut Router, w02: u32) {
        r.install(lsa(0, 1, &[(1, 0, 1), (2, 2, w02)]));
        r.install(lsa(1, 1, &[(0, 0, 1), (2, 1, 1)]));
        r.install(lsa(2, 1, &[(1, 1, 1), (0, 2, w02)]));
    }

    #[test]
    fn routes_go_the_cheapest_way_and_only_over_two_way_links() {
        let mut r = Router::new(0, 3);
        triangle(&mut r, 3);
        assert_eq!(r.spf(), vec![1, 2]);
        assert_eq!(
            r.route(2),
            Some(Route {
                next: 1,
                link: 0,
                cost: 2
            })
        );
        // Router 1 says its link to 2 is gone: 0 goes direct.
        assert!(r.install(lsa(1, 2, &[(0, 0, 1)])));
        assert_eq!(r.spf(), vec![2]);
        assert_eq!(
            r.route(2),
            Some(Route {
                next: 2,
                link: 2,
                cost: 3
            })
        );
        // An older advertisement changes nothing.
        assert!(!r.install(lsa(1, 1, &[(0, 0, 1), (2, 1, 1)])));
        assert_eq!(r.seq_sum(), 1 + 2 + 1);
    }

    #[test]
    fn ties_go_to_the_lower_first_hop() {
        let mut r = Router::new(0, 3);
        triangle(&mut r, 2);
        r.spf();
        assert_eq!(r.route(2).map(|x| (x.next, x.cost)), Some((1, 2)));
    }
}
