//! CONTRACT's router side (thesis §5.3.1-5.3.2): what a router keeps so
//! that it adapts on its own yet only from states the controller
//! approved, with no timing (the simulator, [`crate::sim`], delivers the
//! messages).
//!
//! - [`Fingerprint`]: a link-state database's identity and order
//!   (Fig. 5.1): a secure hash (SHA-256) of the sequence number it holds
//!   for every router, and their sum.
//! - [`Entries`]: the approval state of a router's routing entries. An
//!   entry its SPF changed is unapproved, stamped with the fingerprint of
//!   the database it came from (Fig. 5.1), and its traffic goes in the low
//!   class; an approval approves every entry whose fingerprint's sum is at
//!   most the approval's (Fig. 5.2), so an approval that arrives late, out
//!   of order or twice changes nothing it should not.
//! - [`adjust_filter`]: Fig. 5.3, a filter moved to where the traffic it
//!   blocks now enters its router.

use crate::igp::Router;
use crate::topo::{Dir, NodeId, Topology};
use sha2::{Digest, Sha256};

/// The identity and order of a link-state database (the thesis's
/// `(SecureHash(x_n(t_i)), Σ_m seq_m^n(t_i))`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint {
    /// The sum of the sequence numbers: a later state of one router's
    /// database has a larger one.
    pub seq_sum: u64,
    /// SHA-256 of the sequence numbers, router by router.
    pub hash: [u8; 32],
}

impl Fingerprint {
    /// The fingerprint of `r`'s database.
    pub fn of(r: &Router) -> Fingerprint {
        let mut h = Sha256::new();
        let mut sum = 0u64;
        for s in r.seqs() {
            h.update(s.to_le_bytes());
            sum += s;
        }
        Fingerprint {
            seq_sum: sum,
            hash: h.finalize().into(),
        }
    }
}

/// The approval state of one routing entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The fingerprint of the database it was computed from.
    pub fp: Fingerprint,
    /// Whether the controller approved it (its traffic has normal
    /// priority).
    pub approved: bool,
}

/// A router's entries' approval state, by destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entries(pub Vec<Entry>);

impl Entries {
    /// Every entry approved at `fp` (the network's converged start).
    pub fn approved(n: usize, fp: Fingerprint) -> Entries {
        Entries(vec![Entry { fp, approved: true }; n])
    }

    /// The entries for `changed` destinations, recomputed from a database
    /// with fingerprint `fp`: unapproved (Fig. 5.1).
    pub fn changed(&mut self, changed: &[NodeId], fp: Fingerprint) {
        for &d in changed {
            self.0[d] = Entry {
                fp,
                approved: false,
            };
        }
    }

    /// An approval of state `fp`: approves every entry whose state is not
    /// later by its sum (Fig. 5.2); how many it approved.
    pub fn approve(&mut self, fp: Fingerprint) -> usize {
        let mut n = 0;
        for e in &mut self.0 {
            if !e.approved && e.fp.seq_sum <= fp.seq_sum {
                e.approved = true;
                n += 1;
            }
        }
        n
    }

    /// Whether the entry for `dst` is approved.
    pub fn is_approved(&self, dst: NodeId) -> bool {
        self.0[dst].approved
    }
}

/// The path from `src` to `dst` by router `view`'s database: the
/// directed links, from the shortest paths every router would compute
/// from that database (the thesis's routers keep "all-pair shortest
/// path routing state of the entire network", §5.3.2).
pub fn path_in_view(topo: &Topology, view: &Router, src: NodeId, dst: NodeId) -> Vec<Dir> {
    let mut at = src;
    let mut path = Vec::new();
    while at != dst && path.len() <= topo.nodes.len() {
        let mut r = Router::new(at, topo.nodes.len());
        for o in 0..topo.nodes.len() {
            if let Some(l) = view.lsa(o) {
                r.install(l.clone());
            }
        }
        r.spf();
        let Some(route) = r.route(dst) else {
            return Vec::new();
        };
        path.push(topo.links[route.link].dir_from(route.link, at));
        at = route.next;
    }
    path
}

/// Fig. 5.3 for one filter on directed link `on`, blocking the flow from
/// `src` to `dst`, held by router `owner` (the link's tail: an outbound
/// filter): where it goes now that `owner`'s database changed. The same
/// link if the flow still leaves by it, the link it now leaves by if it
/// still passes `owner`, and the same link otherwise (the change is
/// upstream: only the controller can restore the filter's meaning).
pub fn adjust_filter(topo: &Topology, owner: &Router, on: Dir, src: NodeId, dst: NodeId) -> Dir {
    let path = path_in_view(topo, owner, src, dst);
    if path.contains(&on) {
        return on;
    }
    path.iter()
        .copied()
        .find(|d| topo.tail(*d) == owner.id)
        .unwrap_or(on)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::igp::{Adjacency, Lsa};
    use std::sync::Arc;

    fn fp(sum: u64) -> Fingerprint {
        Fingerprint {
            seq_sum: sum,
            hash: [sum as u8; 32],
        }
    }

    #[test]
    fn approvals_approve_what_is_not_later_and_late_ones_change_nothing() {
        let mut e = Entries::approved(4, fp(4));
        e.changed(&[1], fp(5));
        e.changed(&[2, 3], fp(7));
        assert!(!e.is_approved(1) && !e.is_approved(2));
        assert_eq!(e.approve(fp(6)), 1);
        assert!(e.is_approved(1) && !e.is_approved(3));
        let before = e.clone();
        assert_eq!(e.approve(fp(5)), 0, "out of order: a no-op");
        assert_eq!(e, before);
        assert_eq!(e.approve(fp(7)), 2);
        assert_eq!(e.approve(fp(7)), 0, "twice: a no-op");
    }

    proptest::proptest! {
        /// However approvals are ordered or repeated, what a router ends
        /// with is what the largest of them alone would give it.
        #[test]
        fn approvals_in_any_order_or_twice_end_alike(
            changes in proptest::collection::vec((0usize..6, 1u64..40), 0..30),
            approvals in proptest::collection::vec(1u64..40, 0..10),
            order in proptest::collection::vec(0usize..10, 0..20),
        ) {
            let mut e = Entries::approved(6, fp(0));
            for (d, sum) in &changes {
                e.changed(&[*d], fp(*sum));
            }
            let mut in_order = e.clone();
            for a in &approvals {
                in_order.approve(fp(*a));
            }
            let mut shuffled = e.clone();
            for i in &order {
                if let Some(a) = approvals.get(*i) {
                    shuffled.approve(fp(*a));
                }
            }
            for a in &approvals {
                shuffled.approve(fp(*a));
            }
            let mut once = e.clone();
            if let Some(max) = approvals.iter().max() {
                once.approve(fp(*max));
            }
            proptest::prop_assert_eq!(&in_order, &once);
            proptest::prop_assert_eq!(&shuffled, &once);
        }
    }

    #[test]
    fn a_fingerprint_names_the_sequence_numbers_held() {
        let mut a = Router::new(0, 2);
        let mut b = Router::new(1, 2);
        let lsa = |origin, seq| {
            Arc::new(Lsa {
                origin,
                seq,
                links: vec![Adjacency {
                    neighbour: 1 - origin,
                    link: 0,
                    weight: 1,
                }],
            })
        };
        for r in [&mut a, &mut b] {
            r.install(lsa(0, 1));
            r.install(lsa(1, 2));
        }
        assert_eq!(Fingerprint::of(&a), Fingerprint::of(&b));
        b.install(lsa(0, 2));
        let (fa, fb) = (Fingerprint::of(&a), Fingerprint::of(&b));
        assert_ne!(fa.hash, fb.hash);
        assert!(fa.seq_sum < fb.seq_sum);
    }
}
