//! Bandwidth on demand in a cluster: one ledger for every member.
//!
//! Standalone, `bandwidth` admits a path in a transaction of the
//! controller's own environment. In a cluster that would let each member
//! fill the same link from its own ledger, so the ledger is shared
//! ([`SharedLedger`], which `baton-cluster` implements on etcd with one
//! transaction per reservation that compares the versions of every link of
//! the path: McNettle Fig. 6's `atomically (reservePath ...)` across
//! machines). The shared ledger publishes every member's reservations as
//! the [`Reservations`] view, and each member follows that view:
//!
//! - a reservation that appears gets its meter and flows on the switches
//!   this member masters (the others' members do their own), and the
//!   packet that asked for it, held here meanwhile, is sent on;
//! - a reservation that goes has its flows and meter taken out of this
//!   member's switches.
//!
//! A flow request never waits on etcd: the packet-in is answered from the
//! local view at once (a refusal when a link of the path is full), and
//! otherwise the packet is held ([`HOLD_FOR`] at most, [`HOLD_PER_PAIR`]
//! per pair) while the shared ledger decides. Releases (a flow removed, a path broken, an
//! operator's reservation whose time is up) go to the shared ledger too;
//! a path broken or an expiry is acted on by the member that masters the
//! source host's switch, so that members whose views differ for a moment
//! do not release what the others still see intact.

use super::{Inner, Origin, Request, Reservation, ReservationId, Reservations, ReserveError};
use super::{Switches, take_out};
use crate::sync::lock;
use crate::views::{Link, Topology};
use baton_openflow::neutral::{self, ActionSpec, FlowSpec, PacketOut, Payload};
use baton_openflow::{BufferId, DatapathId, MacAddr, PortNo};
use baton_runtime::Network;
use baton_runtime::env::Snapshot;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

/// How long a packet that asked for a reservation is held for it.
pub const HOLD_FOR: Duration = Duration::from_secs(2);

/// How many packets of one pair are held while its request is decided
/// (more are dropped).
pub const HOLD_PER_PAIR: usize = 8;

/// How many pairs may wait at once (the requests of more are refused).
pub const HOLD_PAIRS: usize = 4096;

/// `OFPM_ALL`: every meter of a switch (1.3.5 §7.3.4.4).
const ALL_METERS: u32 = 0xffff_ffff;

/// Where the outcome of a request to the shared ledger goes, when the
/// asker waits for it (the operator's requests do; flow requests do not).
pub type Answer<T> = SyncSender<Result<T, ReserveError>>;

/// What a member asks of the shared ledger.
#[derive(Debug)]
pub enum LedgerRequest {
    /// Reserve `request` (replacing the pair's reservation, if any) if
    /// every link of its path has room, by `capacities` (kbit/s per
    /// link, [`Link::canonical`]).
    Reserve {
        /// What is asked.
        request: Request,
        /// What each link of the path carries.
        capacities: BTreeMap<Link, u64>,
        /// Where the reservation granted (numbered by the shared ledger)
        /// or the refusal goes, if anyone waits.
        answer: Option<Answer<Arc<Reservation>>>,
    },
    /// End reservation `id` of pair `src` -> `dst`, if it is still the
    /// pair's; the answer says whether it was.
    Release {
        /// The reservation.
        id: ReservationId,
        /// Its sending host.
        src: MacAddr,
        /// Its receiving host.
        dst: MacAddr,
        /// Where to say whether it was ended, if anyone waits.
        answer: Option<Answer<bool>>,
    },
}

/// The ledger the members of a cluster share. It publishes every
/// member's reservations as the [`Reservations`] view.
pub trait SharedLedger: Send + Sync {
    /// Takes `request` and returns at once; the outcome shows in the
    /// [`Reservations`] view, and on the request's answer if it has one.
    fn submit(&self, request: LedgerRequest);
}

/// The packets of a pair that asked for a reservation, held until the
/// reservation is in place.
struct Held {
    /// When the pair asked.
    since: Instant,
    packets: Vec<HeldPacket>,
}

/// A packet held: where it came in, and itself.
struct HeldPacket {
    dpid: DatapathId,
    in_port: PortNo,
    packet: Packet,
}

enum Packet {
    Buffered(BufferId),
    Frame(Vec<u8>),
}

/// What a member of a cluster keeps of the shared ledger.
#[derive(Default)]
pub(super) struct Following {
    /// The reservations whose flows this member has put on its switches
    /// (or would have: the view's reservations it has seen).
    placed: BTreeMap<ReservationId, Arc<Reservation>>,
    /// The packets waiting for their pair's reservation.
    held: HashMap<(MacAddr, MacAddr), Held>,
}

impl Inner {
    /// The shared ledger, in a cluster.
    pub(super) fn shared(&self) -> Option<&Arc<dyn SharedLedger>> {
        self.shared.get()
    }

    /// A flow request in a cluster whose path has room by the local view:
    /// the packet is held and the request sent to the shared ledger, unless
    /// the pair has asked already ([`HOLD_PER_PAIR`] packets held then).
    pub(super) fn ask(
        &self,
        ledger: &dyn SharedLedger,
        pi: &baton_runtime::PacketIn<'_>,
        dpid: DatapathId,
        request: Request,
        capacities: BTreeMap<Link, u64>,
    ) {
        let pair = (request.src, request.dst);
        let held = HeldPacket {
            dpid,
            in_port: pi.in_port(),
            packet: match pi.payload() {
                Payload::Buffered(id) => Packet::Buffered(id),
                Payload::Frame(f) => Packet::Frame(f.to_vec()),
            },
        };
        {
            let mut following = lock(&self.following);
            if let Some(asked) = following.held.get_mut(&pair) {
                // Asked already; the shared ledger answers for all.
                if asked.packets.len() < HOLD_PER_PAIR {
                    asked.packets.push(held);
                } else {
                    self.counters.waiting.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
            if following.held.len() >= HOLD_PAIRS {
                self.counters.waiting.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let asked = Held {
                since: request.now,
                packets: vec![held],
            };
            following.held.insert(pair, asked);
        }
        ledger.submit(LedgerRequest::Reserve {
            request,
            capacities,
            answer: None,
        });
    }

    /// Asks the shared ledger to end `r`; nothing waits.
    pub(super) fn release_shared(&self, ledger: &dyn SharedLedger, r: &Reservation) {
        ledger.submit(LedgerRequest::Release {
            id: r.id,
            src: r.src,
            dst: r.dst,
            answer: None,
        });
    }

    /// Follows the shared ledger's view: takes out the flows of the
    /// reservations gone, puts in those of the new ones on this member's
    /// switches, and sends on the packets held for them.
    pub(super) fn follow_ledger(&self, net: &Network, snapshot: &Snapshot) {
        let ledger = snapshot
            .get::<Reservations>()
            .map(|v| v.arc().clone())
            .unwrap_or_default();
        let topo = snapshot
            .get::<Topology>()
            .map(|t| t.arc().clone())
            .unwrap_or_default();
        let mut following = lock(&self.following);
        let gone: Vec<Arc<Reservation>> = following
            .placed
            .values()
            .filter(|r| ledger.get(r.id).is_none())
            .cloned()
            .collect();
        let new: Vec<Arc<Reservation>> = ledger
            .iter()
            .filter(|r| !following.placed.contains_key(&r.id))
            .cloned()
            .collect();
        if gone.is_empty() && new.is_empty() {
            return;
        }
        let mut out = Switches::new(net, &topo, None);
        for r in &gone {
            following.placed.remove(&r.id);
            // A replaced reservation's flows match the pair, as its
            // successor's: only take them out if the pair has none now.
            if ledger.of_pair(r.src, r.dst).is_none() {
                take_out(&mut out, r);
            } else {
                out.write(r.src_at.dpid, |buf, version, xid| {
                    neutral::encode_meter(buf, version, xid, r.meter, None)
                });
            }
            self.counters.released.fetch_add(1, Ordering::Relaxed);
        }
        let now = net.now();
        for r in &new {
            following.placed.insert(r.id, r.clone());
            let kbps = u32::try_from(r.kbps).unwrap_or(u32::MAX);
            out.write(r.src_at.dpid, |buf, version, xid| {
                neutral::encode_meter(buf, version, xid, r.meter, Some(kbps))
            });
            self.install(&mut out, r, None, self.timeouts(r, now));
            let Some(held) = following.held.remove(&(r.src, r.dst)) else {
                continue;
            };
            self.counters.reserved.fetch_add(1, Ordering::Relaxed);
            let Some(first) = r.hops.first() else {
                continue;
            };
            let output = [ActionSpec::output(first.port)];
            for held in held.packets.iter().filter(|h| h.dpid == first.dpid) {
                let payload = match &held.packet {
                    Packet::Buffered(id) => Payload::Buffered(*id),
                    Packet::Frame(f) => Payload::Frame(f),
                };
                out.write(held.dpid, |buf, version, xid| {
                    neutral::encode_packet_out(
                        buf,
                        version,
                        xid,
                        &PacketOut {
                            payload,
                            in_port: held.in_port,
                            actions: &output,
                        },
                    )
                });
            }
        }
    }

    /// Puts in the flows of the pair's reservation on this member's
    /// switches if it passes through switch `sw` (whose flows for it are
    /// missing: a packet of the pair came to the controller).
    pub(super) fn place_through(
        &self,
        net: &Network,
        sw: &mut baton_runtime::SwitchCtx<'_>,
        (src, dst): (MacAddr, MacAddr),
    ) {
        let snapshot = net.snapshot();
        let (Some(ledger), Some(topo)) =
            (snapshot.get::<Reservations>(), snapshot.get::<Topology>())
        else {
            return;
        };
        let Some(r) = ledger.of_pair(src, dst) else {
            return;
        };
        if r.hops.iter().any(|h| h.dpid == sw.dpid()) {
            let mut out = Switches::new(net, &topo, Some(sw));
            self.install(&mut out, r, None, self.timeouts(r, net.now()));
        }
    }

    /// A switch this member masters now (at first, or taken over from a
    /// member that left): what another member put there is cleared (on
    /// 1.3, this application's flows by cookie and every meter: only
    /// `bandwidth` uses meters), and the meters and flows of the
    /// reservations through it are put in.
    pub(super) fn place_on(&self, sw: &mut baton_runtime::SwitchCtx<'_>) {
        sw.delete_own_flows();
        let (version, xid) = (sw.version(), sw.xid());
        neutral::encode_meter(sw.out(), version, xid, ALL_METERS, None);
        let now = sw.net().now();
        let dpid = sw.dpid();
        for r in self.ledger().iter() {
            if r.src_at.dpid == dpid {
                let kbps = u32::try_from(r.kbps).unwrap_or(u32::MAX);
                let (version, xid) = (sw.version(), sw.xid());
                neutral::encode_meter(sw.out(), version, xid, r.meter, Some(kbps));
            }
            for (i, hop) in r.hops.iter().enumerate().filter(|(_, h)| h.dpid == dpid) {
                let output = [ActionSpec::output(hop.port)];
                let flow = self.flow(r, self.timeouts(r, now));
                sw.add_flow(&FlowSpec {
                    actions: &output,
                    meter: (i == 0).then_some(r.meter),
                    ..flow
                });
            }
        }
    }

    /// Forgets the packets held longer than [`HOLD_FOR`] (the shared
    /// ledger refused their request, or could not be reached).
    pub(super) fn forget_held(&self, now: Instant) {
        let mut dropped = 0;
        lock(&self.following).held.retain(|_, h| {
            let keep = now.saturating_duration_since(h.since) < HOLD_FOR;
            if !keep {
                dropped += h.packets.len() as u64;
            }
            keep
        });
        self.counters.waiting.fetch_add(dropped, Ordering::Relaxed);
    }

    /// The (idle, hard) timeouts of `r`'s flows put in at `now`.
    pub(super) fn timeouts(&self, r: &Reservation, now: Instant) -> (u16, u16) {
        match r.origin {
            Origin::Flow => (self.settings.get().idle_timeout, 0),
            Origin::Operator { expires } => {
                let left = expires.saturating_duration_since(now).as_secs();
                (0, u16::try_from(left.max(1)).unwrap_or(0))
            }
        }
    }
}

/// Whether the member masters the switch reservation `r` starts at.
pub(super) fn starts_here(topo: &Topology, r: &Reservation) -> bool {
    topo.switches
        .get(&r.src_at.dpid)
        .is_some_and(|s| s.here().is_some())
}
