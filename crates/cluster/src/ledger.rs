//! The bandwidth ledger the members share (`bandwidth`'s
//! [`SharedLedger`]): McNettle Fig. 6's `atomically (reservePath ...)`
//! with etcd as the transaction manager.
//!
//! Keys, under the cluster's prefix:
//! - `reservations/pair/SRC/DST`: a host pair's reservation (one per
//!   pair, as standalone), put under the lease of the member that granted
//!   it. Its number is the key's `mod_revision`: unique in the cluster,
//!   growing, and the low bits of its flows' cookie on every member.
//! - `reservations/link/A/B` (the link named once) and
//!   `reservations/switch/DPID` (the source host's switch, whose meters
//!   the reservations share): no value, only versions. Every admission
//!   puts the keys of the links of its path and of its source switch.
//!
//! An admission reads the ledger (this member's copy, kept by a watch),
//! checks each link's room as standalone ([`Reservations::with`]), and
//! writes in one etcd transaction that runs only if none of those keys,
//! nor the pair's, changed since the copy it read: two members filling
//! the same link from the same state cannot both succeed, and the loser
//! reads again and decides again (at most [`ATTEMPTS`] times). Admissions
//! on disjoint paths do not conflict. A release deletes the pair's key if
//! it is still that reservation, and touches no link key: it only gives
//! bandwidth back, so an admission that read the ledger before it is
//! still safe. A member's reservations vanish with its lease: every
//! member then takes their flows out, and the traffic asks again at the
//! member now mastering its source's switch.

use crate::PREFIX;
use crate::etcd::{Etcd, KeyValue, LeaseId, ModifiedAt, Revision, TxnOp, WatchEvent};
use crate::lock;
use crate::share::{Context, Seen, follow, parse_mac};
use baton_apps::bandwidth::{
    LedgerRequest, Origin, Request, Reservation, ReservationId, Reservations, ReserveError,
    SharedLedger,
};
use baton_apps::views::{Link, PortRef};
use baton_openflow::{DatapathId, MacAddr};
use baton_runtime::env::{Publish, ViewAccess};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where the reservations live, under the cluster's prefix.
pub const RESERVATIONS: &str = "reservations/";

/// How many times an admission reads and decides again after losing a
/// race before it gives up.
pub const ATTEMPTS: u32 = 8;

/// How many requests wait for the ledger's thread before more are
/// refused.
const QUEUE: usize = 1024;

/// How long a change waits to show in this member's copy of the ledger
/// before it is answered anyway.
const SHOWN_WITHIN: Duration = Duration::from_secs(1);

/// What the ledger counts, for the operator.
#[derive(Debug, Default)]
pub struct LedgerStats {
    /// Reservations this member granted.
    pub granted: AtomicU64,
    /// Requests refused: a link of the path was full.
    pub refused: AtomicU64,
    /// Transactions that lost a race and were decided again.
    pub conflicts: AtomicU64,
    /// Reservations this member released.
    pub released: AtomicU64,
    /// Requests that could not be decided (etcd out of reach, no lease,
    /// too many conflicts, the queue full).
    pub failed: AtomicU64,
    /// Reservations in the ledger now, every member's.
    pub held: AtomicU64,
}

/// A reservation as etcd holds it (its number is the key's revision).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stored {
    src: String,
    dst: String,
    kbps: u64,
    hops: Vec<String>,
    links: Vec<(String, String)>,
    src_at: String,
    meter: u32,
    since_ms: u64,
    /// The operator's: when it ends (wall clock); none for a flow's.
    expires_ms: Option<u64>,
    /// The member that granted it.
    node: String,
}

/// This machine's wall clock and the runtime's, read together, to carry
/// times between members.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    now: Instant,
    wall_ms: u64,
}

impl Clock {
    /// The clocks as they read now (`now` is the runtime's).
    pub fn at(now: Instant) -> Clock {
        let wall_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Clock { now, wall_ms }
    }

    fn wall(&self, t: Instant) -> u64 {
        let ahead = t.saturating_duration_since(self.now).as_millis() as u64;
        let behind = self.now.saturating_duration_since(t).as_millis() as u64;
        (self.wall_ms + ahead).saturating_sub(behind)
    }

    fn instant(&self, ms: u64) -> Instant {
        if ms >= self.wall_ms {
            self.now + Duration::from_millis(ms - self.wall_ms)
        } else {
            let back = Duration::from_millis(self.wall_ms - ms);
            self.now.checked_sub(back).unwrap_or(self.now)
        }
    }
}

fn pair_key(src: MacAddr, dst: MacAddr) -> String {
    format!("{PREFIX}{RESERVATIONS}pair/{src}/{dst}")
}

fn link_key(link: Link) -> String {
    let l = link.canonical();
    format!(
        "{PREFIX}{RESERVATIONS}link/{:016x}/{}/{:016x}/{}",
        l.src.dpid.0, l.src.port.0, l.dst.dpid.0, l.dst.port.0
    )
}

fn switch_key(dpid: DatapathId) -> String {
    format!("{PREFIX}{RESERVATIONS}switch/{:016x}", dpid.0)
}

fn store(r: &Reservation, node: &str, clock: &Clock) -> Vec<u8> {
    let stored = Stored {
        src: r.src.to_string(),
        dst: r.dst.to_string(),
        kbps: r.kbps,
        hops: r.hops.iter().map(PortRef::to_string).collect(),
        links: r
            .links
            .iter()
            .map(|l| (l.src.to_string(), l.dst.to_string()))
            .collect(),
        src_at: r.src_at.to_string(),
        meter: r.meter,
        since_ms: clock.wall(r.since),
        expires_ms: match r.origin {
            Origin::Flow => None,
            Origin::Operator { expires } => Some(clock.wall(expires)),
        },
        node: node.to_string(),
    };
    serde_json::to_vec(&stored).expect("a reservation serialises")
}

/// The reservation a pair key's value and revision describe; `None` if it
/// is not one.
fn load(value: &[u8], revision: Revision, clock: &Clock) -> Option<Reservation> {
    let s: Stored = serde_json::from_slice(value).ok()?;
    let port = |p: &String| p.parse::<PortRef>().ok();
    Some(Reservation {
        id: ReservationId(u64::try_from(revision).ok()?),
        src: parse_mac(&s.src)?,
        dst: parse_mac(&s.dst)?,
        kbps: s.kbps,
        hops: s.hops.iter().map(port).collect::<Option<_>>()?,
        links: s
            .links
            .iter()
            .map(|(a, b)| {
                Some(Link {
                    src: port(a)?,
                    dst: port(b)?,
                })
            })
            .collect::<Option<_>>()?,
        src_at: port(&s.src_at)?,
        origin: match s.expires_ms {
            None => Origin::Flow,
            Some(ms) => Origin::Operator {
                expires: clock.instant(ms),
            },
        },
        since: clock.instant(s.since_ms),
        meter: s.meter,
    })
}

/// A member's copy of the shared ledger at one revision: the reservations
/// and the versions of the keys admissions compare.
#[derive(Debug, Clone, Default)]
pub struct Mirror {
    ledger: Reservations,
    /// Every key under [`RESERVATIONS`] to its `mod_revision`.
    versions: BTreeMap<String, Revision>,
    /// The revision the copy is at.
    revision: Revision,
}

impl Mirror {
    /// The copy a read of every key under [`RESERVATIONS`] at `revision`
    /// gives.
    pub fn read(revision: Revision, kvs: &[KeyValue], clock: &Clock) -> Mirror {
        let mut m = Mirror::default();
        for kv in kvs {
            m.put(kv, clock);
        }
        m.revision = revision;
        m
    }

    /// The reservations.
    pub fn ledger(&self) -> &Reservations {
        &self.ledger
    }

    fn version(&self, key: &str) -> Revision {
        self.versions.get(key).copied().unwrap_or(0)
    }

    /// Applies one watch event; whether the reservations changed.
    fn apply(&mut self, event: &WatchEvent, clock: &Clock) -> bool {
        match event {
            WatchEvent::Put(kv) => self.put(kv, clock),
            WatchEvent::Delete(kv) => {
                let Some(old) = self.versions.remove(&kv.key) else {
                    return false;
                };
                let id = ReservationId(u64::try_from(old).unwrap_or(0));
                match self.ledger.without(id) {
                    Some((next, _)) => {
                        self.ledger = next;
                        true
                    }
                    None => false,
                }
            }
        }
    }

    fn put(&mut self, kv: &KeyValue, clock: &Clock) -> bool {
        self.versions.insert(kv.key.clone(), kv.mod_revision);
        let pair = format!("{PREFIX}{RESERVATIONS}pair/");
        if !kv.key.starts_with(&pair) {
            return false;
        }
        match load(&kv.value, kv.mod_revision, clock) {
            Some(r) => {
                self.ledger = self.ledger.inserted(Arc::new(r));
                true
            }
            None => {
                tracing::warn!(key = %kv.key, "a reservation in etcd not understood: ignored");
                false
            }
        }
    }
}

/// Admits `request` against etcd, starting from `mirror`: the reservation
/// granted, numbered by its revision, or why not. `fresh` reads the
/// ledger again after a lost race.
pub fn admit(
    etcd: &Etcd,
    (node, lease): (&str, LeaseId),
    mirror: Mirror,
    request: &Request,
    capacities: &BTreeMap<Link, u64>,
    clock: &Clock,
    stats: &LedgerStats,
) -> Result<Reservation, ReserveError> {
    let unavailable = |e: crate::etcd::EtcdError| ReserveError::Unavailable(e.to_string());
    let mut mirror = mirror;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            stats.conflicts.fetch_add(1, Ordering::Relaxed);
            let (revision, kvs) = etcd
                .get_prefix(&format!("{PREFIX}{RESERVATIONS}"))
                .map_err(unavailable)?;
            mirror = Mirror::read(revision, &kvs, clock);
        }
        let capacity = |l: Link| capacities.get(&l.canonical()).copied().unwrap_or(0);
        let granted = mirror
            .ledger
            .with(request.clone(), capacity)
            .map_err(ReserveError::Oversubscribed)?;
        let r = &granted.reservation;
        let mut guards: Vec<String> = r.links.iter().map(|&l| link_key(l)).collect();
        guards.push(switch_key(r.src_at.dpid));
        let pair = pair_key(r.src, r.dst);
        let when: Vec<ModifiedAt<'_>> = guards
            .iter()
            .chain(std::iter::once(&pair))
            .map(|key| ModifiedAt {
                key,
                revision: mirror.version(key),
            })
            .collect();
        let value = store(r, node, clock);
        let mut then: Vec<TxnOp<'_>> = guards
            .iter()
            .map(|key| TxnOp::Put {
                key,
                value: b"",
                lease: None,
            })
            .collect();
        then.push(TxnOp::Put {
            key: &pair,
            value: &value,
            lease: Some(lease),
        });
        let (done, revision) = etcd.txn(&when, &then).map_err(unavailable)?;
        if done {
            let id = ReservationId(u64::try_from(revision).unwrap_or(0));
            return Ok(Reservation {
                id,
                ..Reservation::clone(r)
            });
        }
    }
    Err(ReserveError::Contended)
}

/// Ends reservation `id` of the pair if it is still the pair's; whether
/// it was.
pub fn release(
    etcd: &Etcd,
    id: ReservationId,
    (src, dst): (MacAddr, MacAddr),
) -> Result<(bool, Revision), ReserveError> {
    let key = pair_key(src, dst);
    let revision = Revision::try_from(id.0).unwrap_or(Revision::MAX);
    etcd.txn(
        &[ModifiedAt {
            key: &key,
            revision,
        }],
        &[TxnOp::Delete(&key)],
    )
    .map_err(|e| ReserveError::Unavailable(e.to_string()))
}

/// This member's replica of the ledger, and a signal when it moves.
#[derive(Default)]
struct Replica {
    mirror: Mutex<Mirror>,
    moved: Condvar,
}

impl Replica {
    fn now(&self) -> Mirror {
        lock(&self.mirror).clone()
    }

    /// Waits until the copy is at `revision` or later ([`SHOWN_WITHIN`]
    /// at most).
    fn wait_for(&self, revision: Revision) {
        let guard = lock(&self.mirror);
        let _ = self
            .moved
            .wait_timeout_while(guard, SHOWN_WITHIN, |m| m.revision < revision);
    }
}

/// The shared ledger as `bandwidth` sees it: requests go to the
/// `baton-cluster-ledger` thread.
pub struct EtcdLedger {
    queue: SyncSender<LedgerRequest>,
    stats: Arc<LedgerStats>,
}

impl SharedLedger for EtcdLedger {
    fn submit(&self, request: LedgerRequest) {
        let request = match self.queue.try_send(request) {
            Ok(()) => return,
            Err(TrySendError::Full(r) | TrySendError::Disconnected(r)) => r,
        };
        self.stats.failed.fetch_add(1, Ordering::Relaxed);
        let why = || ReserveError::Unavailable("too many requests waiting".into());
        match request {
            LedgerRequest::Reserve { answer, .. } => {
                answer.map(|a| a.try_send(Err(why())));
            }
            LedgerRequest::Release { answer, .. } => {
                answer.map(|a| a.try_send(Err(why())));
            }
        }
    }
}

/// Starts the shared ledger: `baton-cluster-ledger` decides the requests,
/// `baton-cluster-ledger-in` keeps this member's copy and publishes it as
/// the [`Reservations`] view. The ledger to give `bandwidth`, and the
/// threads.
pub fn start(
    decide: Context,
    follow: Context,
    stats: Arc<LedgerStats>,
) -> (EtcdLedger, Vec<std::thread::JoinHandle<()>>) {
    let (queue, requests) = std::sync::mpsc::sync_channel(QUEUE);
    let copy = Arc::new(Replica::default());
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(f)
            .expect("spawn a cluster thread")
    };
    let (c, s) = (copy.clone(), stats.clone());
    let decider = spawn(
        "baton-cluster-ledger",
        Box::new(move || decide_loop(&decide, &c, &s, &requests)),
    );
    let (c, s) = (copy, stats.clone());
    let follower = spawn(
        "baton-cluster-ledger-in",
        Box::new(move || follow_loop(&follow, &c, &s)),
    );
    (EtcdLedger { queue, stats }, vec![decider, follower])
}

/// Decides the requests in turn.
fn decide_loop(
    c: &Context,
    copy: &Replica,
    stats: &LedgerStats,
    requests: &Receiver<LedgerRequest>,
) {
    while (c.running)() {
        let Ok(request) = requests.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let clock = Clock::at(c.control.network().now());
        match request {
            LedgerRequest::Reserve {
                request,
                capacities,
                answer,
            } => {
                let outcome = match (c.lease)() {
                    None => Err(ReserveError::Unavailable(
                        "this member holds no lease".into(),
                    )),
                    Some(lease) => admit(
                        &c.etcd,
                        (&c.node, lease),
                        copy.now(),
                        &request,
                        &capacities,
                        &clock,
                        stats,
                    ),
                };
                let counter = match &outcome {
                    Ok(r) => {
                        copy.wait_for(Revision::try_from(r.id.0).unwrap_or(0));
                        &stats.granted
                    }
                    Err(ReserveError::Oversubscribed(_)) => &stats.refused,
                    Err(e) => {
                        tracing::warn!(src = %request.src, dst = %request.dst, error = %e, "reservation not decided");
                        &stats.failed
                    }
                };
                counter.fetch_add(1, Ordering::Relaxed);
                if let Some(answer) = answer {
                    let _ = answer.try_send(outcome.map(Arc::new));
                }
            }
            LedgerRequest::Release {
                id,
                src,
                dst,
                answer,
            } => {
                let outcome = release(&c.etcd, id, (src, dst));
                match &outcome {
                    Ok((true, revision)) => {
                        stats.released.fetch_add(1, Ordering::Relaxed);
                        copy.wait_for(*revision);
                    }
                    Ok((false, _)) => {}
                    Err(e) => {
                        stats.failed.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(%id, error = %e, "reservation not released");
                    }
                }
                if let Some(answer) = answer {
                    let _ = answer.try_send(outcome.map(|(done, _)| done));
                }
            }
        }
    }
}

/// Reads the ledger, watches it from that revision on, and publishes it
/// as the [`Reservations`] view whenever a batch changed it; reads it
/// again when the watch breaks.
fn follow_loop(c: &Context, copy: &Replica, stats: &LedgerStats) {
    let net = c.control.publisher(
        "cluster-ledger",
        ViewAccess::none().writes::<Reservations>(),
    );
    let publish = |m: &Mirror| {
        stats.held.store(m.ledger.len() as u64, Ordering::Relaxed);
        if let Err(e) = net.publish(Publish::new().view(m.ledger.clone())) {
            tracing::error!(error = %e, "cannot publish the shared reservations");
        }
    };
    let prefix = format!("{PREFIX}{RESERVATIONS}");
    follow(c, &prefix, |seen| {
        let clock = Clock::at(c.control.network().now());
        let mut m = lock(&copy.mirror);
        match seen {
            Seen::All(revision, kvs) => {
                *m = Mirror::read(revision, kvs, &clock);
                publish(&m);
            }
            Seen::Batch(batch) => {
                let mut changed = false;
                for event in &batch.events {
                    changed |= m.apply(event, &clock);
                }
                m.revision = m.revision.max(batch.revision);
                if changed {
                    publish(&m);
                }
            }
            Seen::Idle => {}
        }
        drop(m);
        copy.moved.notify_all();
    });
}
