//! `bandwidth`: bandwidth on demand (McNettle §4.4). Each host pair's
//! path gets its rate reserved on every link it crosses before its flows
//! go in; a request that would oversubscribe a link is refused.
//!
//! - The [`Reservations`] view holds what is reserved on each link and
//!   for whom; a link carries what its slower end's port says it runs at
//!   (1.3 `curr_speed`, 1.0's rate bits), or what the configuration says
//!   for it (`capacity`), or `default_capacity_kbps` when neither says.
//! - A packet-in from a host at its own port towards a known host is a
//!   flow request: in one transaction ([`Network::atomically`], McNettle
//!   Fig. 6's `atomically (reservePath ...)`) the path is read from the
//!   routes and `flow_kbps` reserved on each of its links. On success the
//!   path's flows go in (their cookie names the reservation); on refusal
//!   the packet is dropped with a short drop flow for the pair, and the
//!   refusal counted. The application code holds no lock and undoes
//!   nothing: an attempt that loses a race leaves no trace and runs again
//!   on the new versions (the routes too, so no reservation lands on a
//!   path of a topology that is gone).
//! - A reservation is released when one of its flows is removed (idle
//!   timeout, deletion: the FLOW_REMOVED carries its number), when a link
//!   or switch of its path goes, when either host moves or goes, and, for
//!   the operator's, when its time is up; the rest of its flows are then
//!   deleted, so no traffic runs on a path without its reservation.
//! - Operators reserve explicitly through [`BandwidthApp::reserve`] (the
//!   API's `POST /api/v1/reservations`).
//!
//! - In a cluster the ledger is shared by every member ([`shared`]): each
//!   member admits against it and installs the flows of every
//!   reservation on the switches it masters.
//!
//! It forwards only unicast packets between known hosts; the rest
//! (broadcasts, unknown destinations, ARP) it leaves to `routing`, which
//! must come after it in the pipeline and provides the routes.

mod ledger;
pub mod shared;

pub use ledger::{
    Granted, Origin, Oversubscribed, Request, Reservation, ReservationId, Reservations,
};
pub use shared::{LedgerRequest, SharedLedger};

use crate::paths::{Switches, between};
use crate::priority;
use crate::routes::Routes;
use crate::settings::{AppSettings, Settings};
use crate::views::{Hosts, Link, PortRef, Topology};
use baton_openflow::neutral::{self, ActionSpec, FLOW_SEND_FLOW_REM, FlowSpec, Message, PacketOut};
use baton_openflow::{Cookie, MacAddr, v10, v13};
use baton_runtime::env::{Change, Snapshot, TxError, ViewAccess, ViewId};
use baton_runtime::{App, Configurable, Network, PacketInBatch, SettingsError, SwitchCtx, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The capacity the configuration gives one link, whatever its ports say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCapacity {
    /// One end, `DPID/PORT` (`1/2` or `00:00:00:00:00:00:00:01/2`).
    pub a: String,
    /// The other end.
    pub b: String,
    /// What the link carries, kbit/s.
    pub kbps: u64,
}

/// The settings of bandwidth on demand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BandwidthConfig {
    /// The rate reserved for each host pair's flow, kbit/s.
    pub flow_kbps: u64,
    /// What a link carries when neither port says, kbit/s.
    pub default_capacity_kbps: u64,
    /// Idle timeout of a flow request's flows, seconds (its reservation
    /// ends with them).
    pub idle_timeout: u16,
    /// How long a refused pair's packets are dropped by the switch before
    /// it asks again, seconds.
    pub refusal_timeout: u16,
    /// Priority of the flows (default: the base of
    /// [`priority::FORWARDING`], as `routing`'s).
    pub priority: u16,
    /// Capacities of particular links, overriding their ports' speed.
    pub capacity: Vec<LinkCapacity>,
}

impl Default for BandwidthConfig {
    fn default() -> Self {
        BandwidthConfig {
            flow_kbps: 1_000,
            default_capacity_kbps: 1_000_000,
            idle_timeout: 60,
            refusal_timeout: 5,
            priority: priority::FORWARDING.base(),
            capacity: Vec::new(),
        }
    }
}

impl BandwidthConfig {
    /// The configured capacities, by link ([`Link::canonical`]).
    fn overrides(&self) -> Result<BTreeMap<Link, u64>, SettingsError> {
        self.capacity
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let end = |s: &str, key: &str| {
                    s.parse::<PortRef>()
                        .map_err(|e| SettingsError::invalid(format!("capacity[{i}].{key}"), e))
                };
                let link = Link {
                    src: end(&c.a, "a")?,
                    dst: end(&c.b, "b")?,
                };
                Ok((link.canonical(), c.kbps))
            })
            .collect()
    }
}

impl AppSettings for BandwidthConfig {
    fn check(&self) -> Result<(), SettingsError> {
        if self.flow_kbps == 0 {
            return Err(SettingsError::invalid("flow_kbps", "at least 1"));
        }
        if self.refusal_timeout == 0 {
            return Err(SettingsError::invalid(
                "refusal_timeout",
                "at least 1 (0 would make the drop flow permanent)",
            ));
        }
        self.overrides().map(|_| ())
    }
}

/// What each link carries, for one topology and one set of settings.
struct Capacities<'a> {
    topo: &'a Topology,
    overrides: BTreeMap<Link, u64>,
    default_kbps: u64,
}

impl<'a> Capacities<'a> {
    fn new(cfg: &BandwidthConfig, topo: &'a Topology) -> Capacities<'a> {
        Capacities {
            topo,
            // Checked when the settings were set.
            overrides: cfg.overrides().unwrap_or_default(),
            default_kbps: cfg.default_capacity_kbps,
        }
    }

    /// The link's configured capacity, or its slower port's speed, or the
    /// default.
    fn of(&self, link: Link) -> u64 {
        if let Some(&kbps) = self.overrides.get(&link.canonical()) {
            return kbps;
        }
        let speed = |p: PortRef| {
            let port = self.topo.switches.get(&p.dpid)?.ports.get(&p.port)?;
            port.speed_kbps.filter(|&s| s > 0).map(u64::from)
        };
        match (speed(link.src), speed(link.dst)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(s), None) | (None, Some(s)) => s,
            (None, None) => self.default_kbps,
        }
    }
}

/// One link's capacity and what is reserved on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkLoad {
    /// The link, named once ([`Link::canonical`]).
    pub link: Link,
    /// What it carries, kbit/s.
    pub capacity_kbps: u64,
    /// What is reserved on it, kbit/s.
    pub reserved_kbps: u64,
}

/// Why the operator's reservation or release was not done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReserveError {
    /// `bandwidth` is not running (not started yet, or stopped).
    NotRunning,
    /// The host is not known (`devices` has not seen it).
    UnknownHost(MacAddr),
    /// No route yet (`routing` has not computed one) or the hosts are not
    /// connected.
    NoPath {
        /// The source host.
        src: MacAddr,
        /// The destination host.
        dst: MacAddr,
    },
    /// A link of the path cannot take the rate.
    Oversubscribed(Oversubscribed),
    /// The views kept changing under the transaction.
    Contended,
    /// No reservation has this number.
    NotFound(ReservationId),
    /// A rate of 0, or no time.
    Invalid(&'static str),
    /// In a cluster: the shared ledger could not be asked (etcd out of
    /// reach), or did not answer in time.
    Unavailable(String),
}

impl fmt::Display for ReserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReserveError::NotRunning => write!(f, "the bandwidth application is not running"),
            ReserveError::UnknownHost(m) => write!(f, "host {m} is not known"),
            ReserveError::NoPath { src, dst } => write!(f, "no path from {src} to {dst}"),
            ReserveError::Oversubscribed(o) => o.fmt(f),
            ReserveError::Contended => write!(
                f,
                "the reservations kept changing under the request; try again"
            ),
            ReserveError::NotFound(id) => write!(f, "no reservation {id}"),
            ReserveError::Invalid(why) => f.write_str(why),
            ReserveError::Unavailable(why) => {
                write!(f, "the cluster's shared ledger is unavailable: {why}")
            }
        }
    }
}

impl std::error::Error for ReserveError {}

crate::counters::named_counters! {
    /// What bandwidth on demand has done.
    pub struct BandwidthCounters, live Counters {
        /// Reservations made (flow requests and the operator's).
        reserved,
        /// Flow requests refused: a link of the path was full.
        refused,
        /// Reservations released.
        released,
        /// Packets sent on without flows (they came over a link).
        relayed,
        /// Transactions that gave up because the views kept changing.
        contended,
        /// Transaction attempts run again after a conflict.
        reruns,
        /// In a cluster: packets dropped while their pair's request was
        /// with the shared ledger (held longer than [`shared::HOLD_FOR`],
        /// or more than [`shared::HOLD_PER_PAIR`] of one pair).
        waiting,
    }
}

/// How many times a transaction runs before it gives up.
const ATTEMPTS: u32 = 8;

/// How long the operator's request waits for a cluster's shared ledger.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// The bits of a cookie that are the application's own (the runtime
/// tags the top 16).
const ID_BITS: u64 = (1 << 48) - 1;

/// The bandwidth-on-demand application.
pub struct BandwidthApp {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings<BandwidthConfig>,
    net: OnceLock<Network>,
    counters: Counters,
    /// The cluster's ledger, in a cluster.
    shared: OnceLock<Arc<dyn SharedLedger>>,
    /// In a cluster: what this member follows of the shared ledger.
    following: Mutex<shared::Following>,
}

impl BandwidthApp {
    /// Bandwidth on demand with these settings (checked).
    pub fn new(cfg: BandwidthConfig) -> Result<BandwidthApp, SettingsError> {
        cfg.check()?;
        Ok(BandwidthApp {
            inner: Arc::new(Inner {
                settings: Settings::new(cfg),
                net: OnceLock::new(),
                counters: Counters::default(),
                shared: OnceLock::new(),
                following: Mutex::default(),
            }),
        })
    }

    /// Makes this application a member of a cluster whose members share
    /// `ledger` ([`shared`]); before it starts serving switches, once.
    /// False if it already shares one.
    pub fn share(&self, ledger: Arc<dyn SharedLedger>) -> bool {
        self.inner.shared.set(ledger).is_ok()
    }

    /// What it has done so far.
    pub fn counters(&self) -> BandwidthCounters {
        self.inner.counters.snapshot()
    }

    /// The reservations now.
    pub fn reservations(&self) -> Arc<Reservations> {
        self.inner.ledger()
    }

    /// Every link of the topology with its capacity and what is reserved
    /// on it.
    pub fn links(&self) -> Vec<LinkLoad> {
        let Some(net) = self.inner.net.get() else {
            return Vec::new();
        };
        let snapshot = net.snapshot();
        let Some(topo) = snapshot.get::<Topology>() else {
            return Vec::new();
        };
        let ledger = snapshot
            .get::<Reservations>()
            .map(|r| r.arc().clone())
            .unwrap_or_default();
        let cfg = self.inner.settings.get();
        let caps = Capacities::new(&cfg, &topo);
        topo.bidirectional_links()
            .map(|l| l.canonical())
            .collect::<BTreeSet<Link>>()
            .into_iter()
            .map(|link| LinkLoad {
                link,
                capacity_kbps: caps.of(link),
                reserved_kbps: ledger.reserved_on(link),
            })
            .collect()
    }

    /// The operator's reservation: `kbps` from host `src` to host `dst`
    /// for `duration`, on the shortest path, all or nothing; its flows go
    /// in at once (with `duration` as their hard timeout where it fits
    /// OpenFlow's 16 bits). It replaces the pair's reservation, if any.
    pub fn reserve(
        &self,
        src: MacAddr,
        dst: MacAddr,
        kbps: u64,
        duration: Duration,
    ) -> Result<Arc<Reservation>, ReserveError> {
        if kbps == 0 {
            return Err(ReserveError::Invalid("the rate must be at least 1 kbit/s"));
        }
        if duration < Duration::from_secs(1) {
            return Err(ReserveError::Invalid("the duration must be at least 1 s"));
        }
        let inner = &self.inner;
        let net = inner.net.get().ok_or(ReserveError::NotRunning)?;
        if !net.is_running() {
            return Err(ReserveError::NotRunning);
        }
        let hosts = net.view::<Hosts>();
        let at = |m: MacAddr| {
            hosts
                .as_ref()
                .and_then(|h| h.get(&m))
                .map(|h| h.at)
                .ok_or(ReserveError::UnknownHost(m))
        };
        let (src_at, dst_at) = (at(src)?, at(dst)?);
        let expires = net
            .now()
            .checked_add(duration)
            .ok_or(ReserveError::Invalid("the duration is too long"))?;
        let origin = Origin::Operator { expires };
        if let Some(ledger) = inner.shared() {
            // Every member puts its flows in when the view shows it.
            let r =
                inner.reserve_shared(&**ledger, net, (src, dst), (src_at, dst_at), kbps, origin)?;
            tracing::info!(id = %r.id, %src, %dst, kbps, "reserved by the operator");
            return Ok(r);
        }
        let (granted, routes) = inner
            .reserve(net, (src, dst), (src_at, dst_at), kbps, origin)
            .map_err(|e| match e {
                TxError::Aborted(e) => e,
                _ => ReserveError::Contended,
            })?;
        let hard = u16::try_from(duration.as_secs()).unwrap_or(0);
        let mut out = Switches::new(net, routes.topology(), None);
        inner.put_in(&mut out, &granted, None, (0, hard));
        let r = granted.reservation;
        tracing::info!(id = %r.id, %src, %dst, kbps, "reserved by the operator");
        Ok(r)
    }

    /// Ends reservation `id` and deletes its flows.
    pub fn release(&self, id: ReservationId) -> Result<Arc<Reservation>, ReserveError> {
        let net = self.inner.net.get().ok_or(ReserveError::NotRunning)?;
        if let Some(ledger) = self.inner.shared() {
            let r = self
                .inner
                .ledger()
                .get(id)
                .cloned()
                .ok_or(ReserveError::NotFound(id))?;
            let (answer, rx) = std::sync::mpsc::sync_channel(1);
            ledger.submit(LedgerRequest::Release {
                id,
                src: r.src,
                dst: r.dst,
                answer: Some(answer),
            });
            return match rx.recv_timeout(ANSWER_WITHIN) {
                Ok(Ok(true)) => Ok(r),
                Ok(Ok(false)) => Err(ReserveError::NotFound(id)),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(ReserveError::Unavailable("no answer in time".into())),
            };
        }
        self.inner
            .release(net, |r| r.id == id, "released by the operator")
            .pop()
            .ok_or(ReserveError::NotFound(id))
    }
}

impl Inner {
    fn ledger(&self) -> Arc<Reservations> {
        self.net
            .get()
            .and_then(|n| n.view::<Reservations>())
            .map(|v| v.arc().clone())
            .unwrap_or_default()
    }

    /// Reserves `kbps` on the shortest path between the pair's ports, in
    /// one transaction with the routes it read; the reservation and those
    /// routes.
    fn reserve(
        &self,
        net: &Network,
        (src, dst): (MacAddr, MacAddr),
        (src_at, dst_at): (PortRef, PortRef),
        kbps: u64,
        origin: Origin,
    ) -> Result<(Granted, Arc<Routes>), TxError<ReserveError>> {
        let cfg = self.settings.get();
        let now = net.now();
        let outcome = net.atomically(ATTEMPTS, |tx| {
            let routes = tx
                .read::<Routes>()
                .ok_or(ReserveError::NoPath { src, dst })?;
            let request = plan(&routes, (src, dst), (src_at, dst_at), kbps, origin, now)?;
            let ledger = tx.read::<Reservations>().unwrap_or_default();
            let caps = Capacities::new(&cfg, routes.topology());
            let mut granted = ledger
                .with(request, |l| caps.of(l))
                .map_err(ReserveError::Oversubscribed)?;
            tx.write(std::mem::take(&mut granted.next));
            Ok((granted, routes))
        });
        match &outcome {
            Ok(c) => {
                self.counters.reserved.fetch_add(1, Ordering::Relaxed);
                let reruns = u64::from(c.attempts - 1);
                self.counters.reruns.fetch_add(reruns, Ordering::Relaxed);
            }
            Err(TxError::Contended { attempts }) => {
                self.counters.contended.fetch_add(1, Ordering::Relaxed);
                let reruns = u64::from(attempts - 1);
                self.counters.reruns.fetch_add(reruns, Ordering::Relaxed);
            }
            Err(_) => {}
        }
        outcome.map(|c| c.value)
    }

    /// In a cluster: reserves `kbps` on the shortest path between the
    /// pair's ports through the shared ledger, refused at once if the
    /// local view already says a link is full; waits for the answer.
    fn reserve_shared(
        &self,
        ledger: &dyn SharedLedger,
        net: &Network,
        pair: (MacAddr, MacAddr),
        ports: (PortRef, PortRef),
        kbps: u64,
        origin: Origin,
    ) -> Result<Arc<Reservation>, ReserveError> {
        let snapshot = net.snapshot();
        let outcome = self
            .plan_shared(&snapshot, pair, ports, kbps, origin, net.now())
            .and_then(|(request, capacities)| {
                let (answer, rx) = std::sync::mpsc::sync_channel(1);
                ledger.submit(LedgerRequest::Reserve {
                    request,
                    capacities,
                    answer: Some(answer),
                });
                rx.recv_timeout(ANSWER_WITHIN)
                    .unwrap_or_else(|_| Err(ReserveError::Unavailable("no answer in time".into())))
            });
        let counter = match &outcome {
            Ok(_) => &self.counters.reserved,
            Err(ReserveError::Oversubscribed(_)) => &self.counters.refused,
            Err(ReserveError::Contended | ReserveError::Unavailable(_)) => &self.counters.contended,
            Err(_) => return outcome,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        outcome
    }

    /// In a cluster: the request for `kbps` between the pair's ports on
    /// the path the routes give now, with its links' capacities; refused
    /// if the local view of the shared ledger already says a link is
    /// full (the shared ledger checks again).
    fn plan_shared(
        &self,
        snapshot: &Snapshot,
        (src, dst): (MacAddr, MacAddr),
        ports: (PortRef, PortRef),
        kbps: u64,
        origin: Origin,
        now: std::time::Instant,
    ) -> Result<(Request, BTreeMap<Link, u64>), ReserveError> {
        let routes = snapshot
            .get::<Routes>()
            .ok_or(ReserveError::NoPath { src, dst })?;
        let request = plan(&routes, (src, dst), ports, kbps, origin, now)?;
        let cfg = self.settings.get();
        let caps = Capacities::new(&cfg, routes.topology());
        let capacities: BTreeMap<Link, u64> = request
            .links
            .iter()
            .map(|l| (l.canonical(), caps.of(*l)))
            .collect();
        let ledger = snapshot
            .get::<Reservations>()
            .map(|v| v.arc().clone())
            .unwrap_or_default();
        ledger
            .with(request.clone(), |l| caps.of(l))
            .map_err(ReserveError::Oversubscribed)?;
        Ok((request, capacities))
    }

    /// Puts a new reservation in place: the one it replaced taken out
    /// first, then its meter (1.3: its rate at the source's switch), then
    /// its flows, with `timeouts` (idle, hard); the first carries the
    /// packet that asked, if any.
    fn put_in(
        &self,
        out: &mut Switches<'_, '_, '_>,
        granted: &Granted,
        asked: Option<&baton_runtime::PacketIn<'_>>,
        timeouts: (u16, u16),
    ) {
        let r = &granted.reservation;
        if let Some(old) = &granted.replaced {
            take_out(out, old);
        }
        let kbps = u32::try_from(r.kbps).unwrap_or(u32::MAX);
        out.write(r.src_at.dpid, |buf, version, xid| {
            neutral::encode_meter(buf, version, xid, r.meter, Some(kbps))
        });
        self.install(out, r, asked, timeouts);
    }

    /// Installs reservation `r`'s flows along its path, with `timeouts`
    /// (idle, hard), the first through its meter; the first carries the
    /// packet that asked, if any.
    fn install(
        &self,
        out: &mut Switches<'_, '_, '_>,
        r: &Reservation,
        asked: Option<&baton_runtime::PacketIn<'_>>,
        (idle_timeout, hard_timeout): (u16, u16),
    ) {
        let flow = self.flow(r, (idle_timeout, hard_timeout));
        out.install(&r.hops, asked, |i| FlowSpec {
            meter: (i == 0).then_some(r.meter),
            ..flow
        });
    }

    /// The flow of reservation `r` with `timeouts` (idle, hard), before
    /// its output and meter.
    fn flow(&self, r: &Reservation, (idle_timeout, hard_timeout): (u16, u16)) -> FlowSpec<'static> {
        FlowSpec {
            match_: between(r.src, r.dst),
            priority: self.settings.get().priority,
            idle_timeout,
            hard_timeout,
            cookie: Cookie(r.id.0 & ID_BITS),
            buffer_id: None,
            flags: FLOW_SEND_FLOW_REM,
            actions: &[],
            meter: None,
        }
    }

    /// Releases the reservations `doomed` picks, in one transaction, and
    /// deletes their flows; the released ones.
    fn release(
        &self,
        net: &Network,
        doomed: impl Fn(&Reservation) -> bool,
        why: &str,
    ) -> Vec<Arc<Reservation>> {
        if let Some(ledger) = self.shared() {
            // Every member takes the flows out when the view shows it.
            let gone = self.ledger().find(&doomed);
            for r in &gone {
                tracing::debug!(id = %r.id, src = %r.src, dst = %r.dst, why, "releasing a reservation");
                self.release_shared(&**ledger, r);
            }
            return gone;
        }
        let outcome = net.atomically(ATTEMPTS, |tx| {
            let ledger = tx.read::<Reservations>().unwrap_or_default();
            let gone = ledger.find(&doomed);
            if !gone.is_empty() {
                let next = gone.iter().fold(Reservations::clone(&ledger), |next, r| {
                    next.without(r.id).map_or(next, |(n, _)| n)
                });
                tx.write(next);
            }
            Ok::<_, std::convert::Infallible>(gone)
        });
        let gone = match outcome {
            Ok(c) => c.value,
            Err(e) => {
                tracing::error!(error = %e, "cannot release reservations");
                return Vec::new();
            }
        };
        let topo = net.view::<Topology>().map(|t| t.arc().clone());
        let topo = topo.unwrap_or_default();
        let mut out = Switches::new(net, &topo, None);
        for r in &gone {
            tracing::debug!(id = %r.id, src = %r.src, dst = %r.dst, why, "reservation released");
            take_out(&mut out, r);
        }
        let n = gone.len() as u64;
        self.counters.released.fetch_add(n, Ordering::Relaxed);
        gone
    }

    /// Releases the reservations whose path lost a link or a switch, or
    /// whose hosts moved or went.
    fn follow_network(&self, net: &Network, snapshot: &Snapshot) {
        let Some(topo) = snapshot.get::<Topology>() else {
            return;
        };
        let hosts = snapshot.get::<Hosts>();
        let links: BTreeSet<Link> = topo.bidirectional_links().map(|l| l.canonical()).collect();
        let at = |m: &MacAddr| hosts.as_ref().and_then(|h| h.at(m));
        let clustered = self.shared().is_some();
        self.release(
            net,
            |r| {
                if clustered && !shared::starts_here(&topo, r) {
                    return false;
                }
                r.links.iter().any(|l| !links.contains(l))
                    || r.hops.iter().any(|h| !topo.switches.contains_key(&h.dpid))
                    || at(&r.src) != Some(r.src_at)
                    || at(&r.dst) != r.dst_at()
            },
            "its path or its hosts changed",
        );
    }

    /// Installs the flows of the pair's reservation again if it has one
    /// along a path that is still there between the same ports (its flows
    /// were deleted, or the operator's were not in yet); true if it did.
    fn reinstall(
        &self,
        net: &Network,
        sw: &mut SwitchCtx<'_>,
        pi: &baton_runtime::PacketIn<'_>,
        (src, dst): (MacAddr, MacAddr),
        (src_at, dst_at): (PortRef, PortRef),
    ) -> bool {
        let snapshot = net.snapshot();
        let (Some(ledger), Some(routes)) =
            (snapshot.get::<Reservations>(), snapshot.get::<Routes>())
        else {
            return false;
        };
        let Some(r) = ledger.of_pair(src, dst) else {
            return false;
        };
        let topo = routes.topology();
        let intact = r.links.iter().all(|l| topo.link_from(l.src) == Some(l.dst));
        if r.src_at != src_at || r.dst_at() != Some(dst_at) || !intact {
            return false;
        }
        let timeouts = self.timeouts(r, net.now());
        let mut out = Switches::new(net, routes.topology(), Some(sw));
        self.install(&mut out, r, Some(pi), timeouts);
        true
    }

    /// A flow request: a packet-in from host `src` at its own port for
    /// known host `dst`. Reserves and installs, or refuses.
    fn request(
        &self,
        sw: &mut SwitchCtx<'_>,
        pi: &baton_runtime::PacketIn<'_>,
        (src, dst): (MacAddr, MacAddr),
        (src_at, dst_at): (PortRef, PortRef),
    ) {
        let net = sw.net().clone();
        let cfg = self.settings.get();
        let timeouts = (cfg.idle_timeout, 0);
        if self.reinstall(&net, sw, pi, (src, dst), (src_at, dst_at)) {
            return;
        }
        let outcome = match self.shared() {
            Some(ledger) => {
                let snapshot = net.snapshot();
                let kbps = cfg.flow_kbps;
                match self.plan_shared(
                    &snapshot,
                    (src, dst),
                    (src_at, dst_at),
                    kbps,
                    Origin::Flow,
                    net.now(),
                ) {
                    Ok((request, capacities)) => {
                        return self.ask(&**ledger, pi, sw.dpid(), request, capacities);
                    }
                    Err(e) => Err(TxError::Aborted(e)),
                }
            }
            None => self.reserve(
                &net,
                (src, dst),
                (src_at, dst_at),
                cfg.flow_kbps,
                Origin::Flow,
            ),
        };
        match outcome {
            Ok((granted, routes)) => {
                let mut out = Switches::new(&net, routes.topology(), Some(sw));
                self.put_in(&mut out, &granted, Some(pi), timeouts);
            }
            Err(TxError::Aborted(ReserveError::Oversubscribed(o))) => {
                tracing::debug!(%src, %dst, refusal = %o, "flow request refused");
                self.counters.refused.fetch_add(1, Ordering::Relaxed);
                sw.add_flow(&FlowSpec {
                    match_: between(src, dst),
                    priority: cfg.priority,
                    idle_timeout: 0,
                    hard_timeout: cfg.refusal_timeout,
                    cookie: Cookie(0),
                    buffer_id: pi.buffer_id(),
                    flags: 0,
                    actions: &[],
                    meter: None,
                });
            }
            Err(e) => {
                tracing::debug!(%src, %dst, error = %e, "flow request not served");
                sw.drop_packet(pi);
            }
        }
    }
}

/// The request for `kbps` from host `src` at `src_at` to host `dst` at
/// `dst_at` on the shortest path `routes` give.
fn plan(
    routes: &Routes,
    (src, dst): (MacAddr, MacAddr),
    (src_at, dst_at): (PortRef, PortRef),
    kbps: u64,
    origin: Origin,
    now: std::time::Instant,
) -> Result<Request, ReserveError> {
    let path = routes
        .path(src_at.dpid, dst_at.dpid)
        .ok_or(ReserveError::NoPath { src, dst })?;
    let links = routes.path_links(&path);
    let mut hops = path;
    hops.push(dst_at);
    Ok(Request {
        src,
        dst,
        kbps,
        hops,
        links,
        src_at,
        origin,
        now,
    })
}

/// Takes reservation `r` out of the switches: its meter (and with it, on
/// 1.3, the flow that uses it) and its flows on every switch of its path.
fn take_out(out: &mut Switches<'_, '_, '_>, r: &Reservation) {
    out.write(r.src_at.dpid, |buf, version, xid| {
        neutral::encode_meter(buf, version, xid, r.meter, None)
    });
    for hop in &r.hops {
        out.delete_flows(hop.dpid, &between(r.src, r.dst));
    }
}

/// The cookie of a FLOW_REMOVED.
fn removed_cookie(msg: &Message) -> Option<Cookie> {
    match msg {
        Message::V10(v10::Message::FlowRemoved(f)) => Some(f.cookie),
        Message::V13(v13::Message::FlowRemoved(f)) => Some(f.cookie),
        _ => None,
    }
}

impl App for BandwidthApp {
    type Switch = ();

    fn name(&self) -> &str {
        "bandwidth"
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters().named()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        Some(&self.inner.settings)
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<Topology>()
            .reads::<Hosts>()
            .reads::<Routes>()
            .reads::<Reservations>()
            .writes::<Reservations>()
    }

    fn start(&self, net: &Network) {
        let _ = self.inner.net.set(net.clone());
        let inner = self.inner.clone();
        net.every("bandwidth: expiry", Duration::from_secs(1), move |net| {
            let now = net.now();
            let topo = net.view::<Topology>().map(|t| t.arc().clone());
            let topo = topo.unwrap_or_default();
            let clustered = inner.shared().is_some();
            inner.release(
                net,
                |r| {
                    matches!(r.origin, Origin::Operator { expires } if expires <= now)
                        && (!clustered || shared::starts_here(&topo, r))
                },
                "its time is up",
            );
            inner.forget_held(now);
        });
    }

    fn switch_up(&self, sw: &mut SwitchCtx<'_>) {
        if self.inner.shared().is_some() {
            // Mastership of this switch came here.
            self.inner.place_on(sw);
        }
    }

    fn view_changed(&self, net: &Network, snapshot: &Snapshot, changes: &[Change]) {
        let relevant = [ViewId::of::<Topology>(), ViewId::of::<Hosts>()];
        if changes.iter().any(|c| relevant.contains(&c.view)) {
            self.inner.follow_network(net, snapshot);
        }
        // Standalone, this application writes the ledger itself and puts
        // each reservation's flows in as it makes it.
        let ledger = ViewId::of::<Reservations>();
        if self.inner.shared().is_some() && changes.iter().any(|c| c.view == ledger) {
            self.inner.follow_ledger(net, snapshot);
        }
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        let inner = &self.inner;
        let Some(net) = inner.net.get() else {
            return;
        };
        let snapshot = net.snapshot();
        let Some(routes) = snapshot.get::<Routes>() else {
            return;
        };
        // With what `devices` learnt in this very batch; `routing` reads
        // the same hosts for the packets left to it.
        let hosts = snapshot.get::<Hosts>();
        batch.for_each(|sw, _, pi| {
            let (Some(src), Some(dst)) = (pi.eth_src(), pi.eth_dst()) else {
                return;
            };
            if dst.is_multicast() {
                return;
            }
            let Some(to) = hosts.as_ref().and_then(|h| h.at(&dst)) else {
                return; // routing floods it
            };
            let came_in = PortRef::new(sw.dpid(), pi.in_port());
            let from = hosts.as_ref().and_then(|h| h.at(&src));
            if from == Some(came_in) {
                pi.stop();
                inner.request(sw, pi, (src, dst), (came_in, to));
            } else if routes.topology().is_link_port(came_in) {
                // In flight when its path's flows went: sent on, no flows
                // (only the source's switch asks for a path). In a
                // cluster, a switch this member took over meanwhile gets
                // the flows of the pair's reservation through it.
                pi.stop();
                if inner.shared().is_some() {
                    inner.place_through(net, sw, (src, dst));
                }
                let out = match routes.path(sw.dpid(), to.dpid) {
                    Some(path) => path.first().map_or(to.port, |h| h.port),
                    None => return sw.drop_packet(pi),
                };
                sw.packet_out(&PacketOut {
                    payload: pi.payload(),
                    in_port: pi.in_port(),
                    actions: &[ActionSpec::output(out)],
                });
                inner.counters.relayed.fetch_add(1, Ordering::Relaxed);
            }
        });
    }

    fn message(&self, sw: &mut SwitchCtx<'_>, _: &mut (), msg: &Message) -> Verdict {
        let Some(cookie) = removed_cookie(msg) else {
            return Verdict::Continue;
        };
        let Some((own, mask)) = sw.net().own_cookie() else {
            return Verdict::Continue;
        };
        if cookie.0 & mask != own.0 {
            return Verdict::Continue;
        }
        let id = ReservationId(cookie.0 & !mask);
        if id.0 != 0 {
            let net = sw.net().clone();
            self.inner
                .release(&net, |r| r.id == id, "one of its flows was removed");
        }
        Verdict::Stop
    }
}
