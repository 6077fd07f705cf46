//! [`Reservations`]: the bandwidth reserved on every link, and for whom,
//! as one view of the environment (McNettle §4.4's "global shared map of
//! the available bandwidth on each network link").
//!
//! The view is immutable like every view: [`Reservations::with`] and
//! [`Reservations::without`] return the next version, which the
//! `bandwidth` application writes in a transaction
//! ([`baton_runtime::Network::atomically`]) that also read the routes the
//! path came from. So a reservation either lands on every link of its
//! path or on none, and one computed from a topology that changed
//! meanwhile is computed again: McNettle Fig. 6's
//! `atomically (reservePath ...)`, with no lock and nothing to undo.
//!
//! A host pair has at most one reservation: its flows match the pair, so
//! one reservation is what the switches can tell apart. A new one for a
//! pair replaces the old, whose bandwidth is given back in the same
//! version.
//!
//! A new version is made at every flow request, so the maps are
//! persistent ones (`imbl`, B-trees that share what did not change): a
//! version costs O(log n) whatever the number of reservations, where
//! copying `std` maps cost O(n) (`examples/reservation_cost.rs`,
//! BENCHMARKS.md "Bandwidth on demand").

use crate::views::{Link, PortRef};
use baton_openflow::{DatapathId, MacAddr};
use baton_runtime::env::View;
use imbl::{OrdMap, OrdSet};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// A reservation's number, unique in a run; the low bits of its flows'
/// cookie, so a FLOW_REMOVED names the reservation it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReservationId(pub u64);

impl fmt::Display for ReservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Who asked for a reservation, and so when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A flow request (a packet-in): it ends when its flows do.
    Flow,
    /// The operator (`POST /api/v1/reservations`): it ends at `expires`,
    /// or when released.
    Operator {
        /// When it ends.
        expires: Instant,
    },
}

/// Bandwidth held for one host pair along one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// Its number.
    pub id: ReservationId,
    /// The sending host.
    pub src: MacAddr,
    /// The receiving host.
    pub dst: MacAddr,
    /// The rate held on every link of the path, kbit/s.
    pub kbps: u64,
    /// The ports the path leaves each switch by, the source's switch
    /// first; the last is the destination host's port.
    pub hops: Vec<PortRef>,
    /// The links the path crosses, each named once ([`Link::canonical`]).
    pub links: Vec<Link>,
    /// Where the source host was attached when it was made.
    pub src_at: PortRef,
    /// Who asked.
    pub origin: Origin,
    /// When it was made.
    pub since: Instant,
    /// The number of the 1.3 meter that holds the pair to its rate at the
    /// source's switch: one no other reservation from that switch uses,
    /// given in turn.
    pub meter: u32,
}

impl Reservation {
    /// The destination host's port.
    pub fn dst_at(&self) -> Option<PortRef> {
        self.hops.last().copied()
    }
}

/// What a new reservation asks for ([`Reservations::with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The sending host.
    pub src: MacAddr,
    /// The receiving host.
    pub dst: MacAddr,
    /// The rate, kbit/s.
    pub kbps: u64,
    /// The path's ports, as [`Reservation::hops`].
    pub hops: Vec<PortRef>,
    /// The links it crosses, in either direction.
    pub links: Vec<Link>,
    /// Where the source host is attached.
    pub src_at: PortRef,
    /// Who asks.
    pub origin: Origin,
    /// Now.
    pub now: Instant,
}

/// A reservation refused: granting it would put more on `link` than it
/// carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversubscribed {
    /// The first link of the path that cannot take it.
    pub link: Link,
    /// What the link carries, kbit/s.
    pub capacity_kbps: u64,
    /// What is reserved on it already (not counting the pair's own
    /// reservation, which a new one replaces), kbit/s.
    pub reserved_kbps: u64,
    /// What was asked, kbit/s.
    pub kbps: u64,
}

impl fmt::Display for Oversubscribed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "link {} would be oversubscribed: {} kbit/s reserved of {} kbit/s, {} kbit/s asked",
            self.link, self.reserved_kbps, self.capacity_kbps, self.kbps
        )
    }
}

/// A reservation granted ([`Reservations::with`]).
#[derive(Debug)]
pub struct Granted {
    /// The next version of the view.
    pub next: Reservations,
    /// The new reservation.
    pub reservation: Arc<Reservation>,
    /// The pair's reservation it replaced, whose flows and meter are to go.
    pub replaced: Option<Arc<Reservation>>,
}

/// Every reservation, and the bandwidth reserved on each link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reservations {
    by_id: OrdMap<ReservationId, Arc<Reservation>>,
    by_pair: OrdMap<(MacAddr, MacAddr), ReservationId>,
    /// kbit/s reserved per link ([`Link::canonical`]); links with none are
    /// absent.
    reserved: OrdMap<Link, u64>,
    /// The meters in use on each source switch.
    meters: OrdMap<DatapathId, OrdSet<u32>>,
    /// The meter each source switch gives next.
    next_meter: OrdMap<DatapathId, u32>,
    /// The last number given.
    last_id: u64,
}

/// The highest meter number given: Open vSwitch's userspace datapath has
/// 262 144 meters, the software switch 65 536 by default.
const MAX_METER: u32 = 65_535;

impl View for Reservations {
    const NAME: &'static str = "reservations";
}

impl Reservations {
    /// Reservation `id`.
    pub fn get(&self, id: ReservationId) -> Option<&Arc<Reservation>> {
        self.by_id.get(&id)
    }

    /// The reservation of the pair `src` -> `dst`.
    pub fn of_pair(&self, src: MacAddr, dst: MacAddr) -> Option<&Arc<Reservation>> {
        self.by_pair
            .get(&(src, dst))
            .and_then(|id| self.by_id.get(id))
    }

    /// Every reservation, by number.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Reservation>> {
        self.by_id.values()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// kbit/s reserved on `link` (either direction).
    pub fn reserved_on(&self, link: Link) -> u64 {
        self.reserved.get(&link.canonical()).copied().unwrap_or(0)
    }

    /// The links with bandwidth reserved, and how much.
    pub fn loaded_links(&self) -> impl Iterator<Item = (Link, u64)> + '_ {
        self.reserved.iter().map(|(&l, &kbps)| (l, kbps))
    }

    /// The next version, with `req` reserved on every link of its path
    /// (replacing the pair's reservation, if it has one), the new
    /// reservation and the one it replaced; or the first link that
    /// `capacity_kbps` says cannot take it.
    pub fn with(
        &self,
        req: Request,
        capacity_kbps: impl Fn(Link) -> u64,
    ) -> Result<Granted, Oversubscribed> {
        let (mut next, replaced) = match self.by_pair.get(&(req.src, req.dst)) {
            Some(&old) => match self.without(old) {
                Some((next, r)) => (next, Some(r)),
                None => (self.clone(), None),
            },
            None => (self.clone(), None),
        };
        let mut links: Vec<Link> = req.links.iter().map(Link::canonical).collect();
        links.sort();
        links.dedup();
        for &link in &links {
            let reserved = next.reserved_on(link);
            let capacity = capacity_kbps(link);
            if reserved.saturating_add(req.kbps) > capacity {
                return Err(Oversubscribed {
                    link,
                    capacity_kbps: capacity,
                    reserved_kbps: reserved,
                    kbps: req.kbps,
                });
            }
        }
        next.last_id = self.last_id + 1;
        let id = ReservationId(next.last_id);
        let meter = next.free_meter(req.src_at.dpid);
        for &link in &links {
            *next.reserved.entry(link).or_default() += req.kbps;
        }
        let r = Arc::new(Reservation {
            id,
            src: req.src,
            dst: req.dst,
            kbps: req.kbps,
            hops: req.hops,
            links,
            src_at: req.src_at,
            origin: req.origin,
            since: req.now,
            meter,
        });
        next.by_pair.insert((r.src, r.dst), id);
        next.by_id.insert(id, r.clone());
        let dpid = r.src_at.dpid;
        next.meters.entry(dpid).or_default().insert(meter);
        next.next_meter.insert(dpid, meter % MAX_METER + 1);
        Ok(Granted {
            next,
            reservation: r,
            replaced,
        })
    }

    /// The next version with reservation `r` as it was granted elsewhere
    /// (a cluster's shared ledger: its number and meter already given),
    /// replacing the pair's, and no capacity checked: the ledger that
    /// granted it did.
    pub fn inserted(&self, r: Arc<Reservation>) -> Reservations {
        let mut next = match self.by_pair.get(&(r.src, r.dst)) {
            Some(&old) => self.without(old).map_or_else(|| self.clone(), |(n, _)| n),
            None => self.clone(),
        };
        for &link in &r.links {
            *next.reserved.entry(link.canonical()).or_default() += r.kbps;
        }
        let dpid = r.src_at.dpid;
        next.meters.entry(dpid).or_default().insert(r.meter);
        next.next_meter.insert(dpid, r.meter % MAX_METER + 1);
        next.last_id = next.last_id.max(r.id.0);
        next.by_pair.insert((r.src, r.dst), r.id);
        next.by_id.insert(r.id, r);
        next
    }

    /// A meter number no reservation from switch `dpid` uses: the one
    /// after the last given, wrapping at [`MAX_METER`] past those in use
    /// (when every one is, the next is shared, and its rate is the later
    /// reservation's).
    fn free_meter(&self, dpid: DatapathId) -> u32 {
        let first = self.next_meter.get(&dpid).copied().unwrap_or(1);
        let Some(used) = self.meters.get(&dpid) else {
            return first;
        };
        let mut m = first;
        for _ in 0..MAX_METER {
            if !used.contains(&m) {
                return m;
            }
            m = m % MAX_METER + 1;
        }
        first
    }

    /// The next version without reservation `id`, its bandwidth given
    /// back, and the reservation; `None` if there is no such reservation.
    pub fn without(&self, id: ReservationId) -> Option<(Reservations, Arc<Reservation>)> {
        let r = self.by_id.get(&id)?.clone();
        let mut next = self.clone();
        next.by_id.remove(&id);
        next.by_pair.remove(&(r.src, r.dst));
        for link in &r.links {
            if let Some(kbps) = next.reserved.get_mut(link) {
                *kbps -= r.kbps;
                if *kbps == 0 {
                    next.reserved.remove(link);
                }
            }
        }
        if let Some(used) = next.meters.get_mut(&r.src_at.dpid) {
            used.remove(&r.meter);
        }
        Some((next, r))
    }

    /// The reservations `doomed` picks.
    pub fn find(&self, mut doomed: impl FnMut(&Reservation) -> bool) -> Vec<Arc<Reservation>> {
        self.by_id.values().filter(|r| doomed(r)).cloned().collect()
    }

    /// Whether the per-link totals are the sums of the reservations on
    /// each link, and the pair index matches (for tests).
    pub fn is_consistent(&self) -> bool {
        let mut sums: OrdMap<Link, u64> = OrdMap::new();
        let mut meters: OrdMap<DatapathId, OrdSet<u32>> = OrdMap::new();
        for r in self.by_id.values() {
            for &l in &r.links {
                *sums.entry(l).or_default() += r.kbps;
            }
            meters.entry(r.src_at.dpid).or_default().insert(r.meter);
        }
        let sums: OrdMap<Link, u64> = sums.into_iter().filter(|&(_, v)| v > 0).collect();
        let in_use: OrdMap<DatapathId, OrdSet<u32>> = self
            .meters
            .iter()
            .filter(|(_, used)| !used.is_empty())
            .map(|(d, used)| (*d, used.clone()))
            .collect();
        sums == self.reserved
            && meters == in_use
            && self
                .by_pair
                .iter()
                .all(|(&(s, d), id)| self.by_id.get(id).is_some_and(|r| (r.src, r.dst) == (s, d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::{DatapathId, PortNo};

    fn port(s: u64, p: u32) -> PortRef {
        PortRef::new(DatapathId(s), PortNo(p))
    }

    fn link(a: u64, b: u64) -> Link {
        Link {
            src: port(a, 10 + b as u32),
            dst: port(b, 10 + a as u32),
        }
    }

    fn mac(n: u8) -> MacAddr {
        MacAddr([2, 0, 0, 0, 0, n])
    }

    fn request(src: u8, dst: u8, kbps: u64, links: &[Link]) -> Request {
        Request {
            src: mac(src),
            dst: mac(dst),
            kbps,
            hops: links.iter().map(|l| l.src).collect(),
            links: links.to_vec(),
            src_at: port(1, 1),
            origin: Origin::Flow,
            now: Instant::now(),
        }
    }

    #[test]
    fn fills_a_link_then_names_it_when_full() {
        let cap = |_| 100;
        let path = [link(1, 2), link(2, 3)];
        let r0 = Reservations::default();
        let g = r0.with(request(1, 2, 60, &path), cap).unwrap();
        let (r1, a) = (g.next, g.reservation);
        let r2 = r1.with(request(3, 4, 40, &path[1..]), cap).unwrap().next;
        assert_eq!(r2.reserved_on(link(2, 3)), 100);
        assert_eq!(r2.reserved_on(link(2, 3).reversed()), 100);
        let e = r2.with(request(5, 6, 1, &path), cap).unwrap_err();
        // Link 1-2 has room; 2-3 is the one that is full.
        assert_eq!(e.link, link(2, 3).canonical());
        assert_eq!((e.capacity_kbps, e.reserved_kbps, e.kbps), (100, 100, 1));
        assert!(e.to_string().contains("oversubscribed"), "{e}");
        // Releasing gives the bandwidth back; the old versions are intact.
        let (r3, gone) = r2.without(a.id).unwrap();
        assert_eq!(gone.id, a.id);
        assert_eq!(r3.reserved_on(link(1, 2)), 0);
        assert_eq!(r3.reserved_on(link(2, 3)), 40);
        assert_eq!(r2.reserved_on(link(1, 2)), 60);
        assert!(r3.without(a.id).is_none());
        assert!(r1.is_consistent() && r2.is_consistent() && r3.is_consistent());
    }

    #[test]
    fn a_pair_has_one_reservation_and_a_new_one_replaces_it() {
        let cap = |_| 100;
        let path = [link(1, 2)];
        let g = Reservations::default()
            .with(request(1, 2, 80, &path), cap)
            .unwrap();
        let (r1, a) = (g.next, g.reservation);
        assert!(g.replaced.is_none());
        // 80 + 80 > 100, but the new one replaces the pair's old one.
        let g = r1.with(request(1, 2, 80, &path), cap).unwrap();
        let (r2, b) = (g.next, g.reservation);
        assert_eq!(g.replaced.unwrap().id, a.id);
        assert_ne!(a.id, b.id);
        // Meters are given in turn: the new one does not take the meter
        // the old one leaves, which the switch is still to delete.
        assert_eq!((a.meter, b.meter), (1, 2));
        assert_eq!(r2.len(), 1);
        assert_eq!(r2.reserved_on(link(1, 2)), 80);
        assert_eq!(r2.of_pair(mac(1), mac(2)).unwrap().id, b.id);
        assert!(r2.get(a.id).is_none());
        // Another pair from the same switch gets another meter.
        let c = r2.with(request(3, 4, 10, &path), cap).unwrap().reservation;
        assert_eq!(c.meter, 3);
        // The other direction is another pair.
        let e = r2.with(request(2, 1, 80, &path), cap).unwrap_err();
        assert_eq!(e.reserved_kbps, 80);
        assert!(r2.is_consistent());
    }

    /// Many threads reserving and releasing through real transactions on
    /// one environment: no version ever published puts more on a link
    /// than it carries, every version is consistent, and once each thread
    /// has released what it got nothing is left reserved.
    mod concurrent {
        use super::*;
        use baton_runtime::env::{Environment, TxError};
        use proptest::prelude::*;
        use std::sync::atomic::{AtomicBool, Ordering};

        const CAPACITY: u64 = 10;
        const THREADS: usize = 4;

        /// Paths over a ring of four switches (links 1-2, 2-3, 3-4, 4-1).
        fn path(op: u8) -> Vec<Link> {
            let ring = [link(1, 2), link(2, 3), link(3, 4), link(4, 1)];
            let (from, len) = (usize::from(op % 4), 1 + usize::from(op / 4 % 3));
            (0..len).map(|i| ring[(from + i) % 4]).collect()
        }

        fn run(ops: Vec<Vec<(u8, u8)>>) {
            let env = Environment::default();
            let done = AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    // Every version anyone can see respects the capacity.
                    while !done.load(Ordering::Relaxed) {
                        if let Some(v) = env.read::<Reservations>() {
                            assert!(v.is_consistent(), "{:?}", *v.arc());
                            for (l, kbps) in v.loaded_links() {
                                assert!(kbps <= CAPACITY, "{l}: {kbps}");
                            }
                        }
                    }
                });
                let workers: Vec<_> = ops
                    .iter()
                    .enumerate()
                    .map(|(t, ops)| {
                        let env = &env;
                        scope.spawn(move || {
                            let mut held: Vec<ReservationId> = Vec::new();
                            for (i, &(op, kbps)) in ops.iter().enumerate() {
                                if op % 3 == 0 && !held.is_empty() {
                                    let id = held.swap_remove(usize::from(op) % held.len());
                                    let out = env.atomically(100, |tx| {
                                        let l = tx.read::<Reservations>().unwrap_or_default();
                                        let (next, _) = l.without(id).ok_or(())?;
                                        tx.write(next);
                                        Ok::<_, ()>(())
                                    });
                                    assert!(out.is_ok(), "{id} held but not there: {out:?}");
                                    continue;
                                }
                                let mut req = request(0, 0, u64::from(kbps % 6 + 1), &path(op));
                                // A pair of its own: no reservation replaces another.
                                req.src = MacAddr([4, 0, 0, t as u8, i as u8, (i >> 8) as u8]);
                                let out = env.atomically(100, |tx| {
                                    let l = tx.read::<Reservations>().unwrap_or_default();
                                    let g = l.with(req.clone(), |_| CAPACITY)?;
                                    tx.write(g.next);
                                    Ok::<_, Oversubscribed>(g.reservation.id)
                                });
                                match out {
                                    Ok(c) => held.push(c.value),
                                    Err(TxError::Aborted(o)) => {
                                        assert!(o.reserved_kbps + o.kbps > CAPACITY)
                                    }
                                    Err(e) => panic!("{e}"),
                                }
                            }
                            held
                        })
                    })
                    .collect();
                let held: Vec<Vec<ReservationId>> = workers
                    .into_iter()
                    .map(|w| w.join())
                    .collect::<Result<_, _>>()
                    .unwrap_or_else(|_| {
                        done.store(true, Ordering::Relaxed);
                        panic!("a worker failed");
                    });
                done.store(true, Ordering::Relaxed);
                let held: Vec<ReservationId> = held.into_iter().flatten().collect();
                let ledger = env
                    .read::<Reservations>()
                    .map(|v| v.arc().clone())
                    .unwrap_or_default();
                assert_eq!(ledger.len(), held.len(), "a reservation leaked or was lost");
                for id in held {
                    assert!(ledger.get(id).is_some());
                    env.atomically(1, |tx| {
                        let l = tx.read::<Reservations>().unwrap_or_default();
                        tx.write(l.without(id).unwrap().0);
                        Ok::<_, ()>(())
                    })
                    .unwrap();
                }
                let ledger = env.read::<Reservations>().unwrap();
                assert!(ledger.is_empty() && ledger.loaded_links().next().is_none());
            });
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
            #[test]
            fn no_interleaving_oversubscribes_or_leaks(
                ops in proptest::collection::vec(
                    proptest::collection::vec((any::<u8>(), any::<u8>()), 50..200),
                    THREADS,
                )
            ) {
                run(ops);
            }
        }
    }
}
