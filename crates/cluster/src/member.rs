//! A running cluster member ([`Member`]): this instance's lease, its
//! sessions and claims in etcd, the watch that keeps its [`Observed`]
//! current, and the roles it gives the runtime
//! ([`Control::set_mastership`]).
//!
//! These threads, none on the controller's workers:
//! - `baton-cluster-lease` has the lease granted and keeps it alive
//!   ([`LeaseClock`]);
//! - `baton-cluster` registers the datapaths this instance has sessions
//!   with, and carries out [`Elector::plan`] every [`TICK`] or as soon as
//!   the watch (or the lease) brings news;
//! - `baton-cluster-watch` reads the cluster's keys and watches them from
//!   the next revision, reading again whenever the watch breaks;
//! - `baton-cluster-guard` demotes every datapath this instance masters
//!   the moment its lease can no longer be known alive
//!   ([`LeaseClock::healthy`]), however long an etcd request or a switch
//!   takes on the other threads;
//! - `baton-cluster-health` asks each etcd endpoint for its status once a
//!   second (the operator's health and latency figures);
//! - `baton-cluster-facts-out` and `baton-cluster-facts-in` share the
//!   network views ([`crate::share`]);
//! - with `bandwidth` in the pipeline, `baton-cluster-ledger` and
//!   `baton-cluster-ledger-in` keep the shared bandwidth ledger
//!   ([`crate::ledger`]), which the application is given before any
//!   switch is.
//!
//! etcd may be unreachable when the member starts or at any time after:
//! it keeps trying, logs the outage once, and rejoins when etcd answers.

use crate::elect::{Action, Dpid, Elector, Key, Observed, Role};
use crate::etcd::{Etcd, EtcdError, LeaseId, WatchEvent};
use crate::lease::LeaseClock;
use crate::ledger::{self, LedgerStats};
use crate::share::{self, ShareStats};
use crate::status::{self, ClusterSource, ClusterStatus};
use crate::{PREFIX, lock};
use baton_apps::bandwidth::BandwidthApp;
use baton_apps::views::Peers;
use baton_openflow::DatapathId;
use baton_runtime::control::Control;
use baton_runtime::env::{Publish, ViewAccess};
use baton_runtime::{Fence, Mastership};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a member looks at its plan when nothing wakes it sooner.
pub const TICK: Duration = Duration::from_millis(100);

/// How to join a cluster (`baton run --cluster URLS --node NAME`, or
/// `[cluster]` in the configuration file).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The etcd client URLs, such as `http://127.0.0.1:2379`.
    pub endpoints: Vec<String>,
    /// This instance's name, unique in the cluster.
    pub node: String,
    /// The lease's time to live: how long a dead instance's datapaths
    /// wait for a new master, at most (plus one [`TICK`] and a watch
    /// event's way). Whole seconds, at least 2.
    pub ttl: Duration,
}

impl Options {
    /// The default lease time to live.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(3);

    /// How long one etcd request may take: a sixth of the lease, so that
    /// a keepalive every sixth has time to be retried before the
    /// member's deadline (the lease clock's margin is two of them).
    pub fn request_timeout(&self) -> Duration {
        self.ttl / 6
    }
}

/// What a member writes about itself under `members/NAME`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Where switches connect to it.
    pub openflow: String,
    /// Where its API listens, if it serves one.
    pub api: Option<String>,
}

/// A member of the cluster, running; dropping it leaves the cluster (see
/// [`Member::leave`]).
pub struct Member {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

struct Shared {
    options: Options,
    record: Record,
    etcd: Etcd,
    control: Control,
    observed: Mutex<Observed>,
    /// Set when the watch brought news; the main loop waits on it.
    news: Mutex<bool>,
    wake: Condvar,
    running: AtomicBool,
    /// Until when this member may act as master (`None`: not at all).
    deadline: Mutex<Option<Instant>>,
    /// When the last keepalive that succeeded was sent, while the lease
    /// is known alive (`connected` in the status: see [`Shared::connected`]).
    renewed: Mutex<Option<Instant>>,
    /// etcd is lost for every member: the guard keeps what this one
    /// masters, and the plan waits.
    held: AtomicBool,
    /// The lease (the main loop's; read when leaving).
    lease: Mutex<Option<LeaseId>>,
    roles: Mutex<BTreeMap<Dpid, Role>>,
    role_changes: AtomicU64,
    /// Datapaths whose last role change failed (logged once).
    refused: Mutex<BTreeSet<Dpid>>,
    endpoints: Mutex<Vec<status::Endpoint>>,
    facts: Arc<ShareStats>,
    /// The shared bandwidth ledger's counters, when `bandwidth` runs.
    ledger: Option<Arc<LedgerStats>>,
}

impl Member {
    /// Joins the cluster `options` name as this runtime (`control`), whose
    /// switches connect at `record.openflow`. Returns at once; the member
    /// registers with etcd in the background, and keeps trying while
    /// etcd does not answer.
    pub fn join(options: Options, record: Record, control: Control) -> Member {
        let etcd = Etcd::new(&options.endpoints, options.request_timeout());
        let endpoints = options
            .endpoints
            .iter()
            .map(|url| status::Endpoint {
                url: url.clone(),
                healthy: false,
                latency_ms: None,
                error: Some("not asked yet".into()),
            })
            .collect();
        let bandwidth = control.app_of::<BandwidthApp>();
        // No lease yet: nothing this instance masters may be changed until
        // one is known alive (the lease thread opens the fence).
        control.fence_mastership(Fence::Closed);
        let shared = Arc::new(Shared {
            options,
            record,
            etcd,
            control,
            observed: Mutex::new(Observed::default()),
            news: Mutex::new(false),
            wake: Condvar::new(),
            running: AtomicBool::new(true),
            deadline: Mutex::new(None),
            renewed: Mutex::new(None),
            held: AtomicBool::new(false),
            lease: Mutex::new(None),
            roles: Mutex::new(BTreeMap::new()),
            role_changes: AtomicU64::new(0),
            refused: Mutex::new(BTreeSet::new()),
            endpoints: Mutex::new(endpoints),
            facts: Arc::new(ShareStats::default()),
            ledger: bandwidth.as_ref().map(|_| Arc::new(LedgerStats::default())),
        });
        // Before any switch is given to the applications: they know they
        // are in a cluster by this view's presence.
        let publisher = shared
            .control
            .publisher("cluster", ViewAccess::none().writes::<Peers>());
        if let Err(e) = publisher.publish(Publish::new().view(Peers::default())) {
            tracing::error!(error = %e, "cannot publish the peers' facts");
        }
        // Before any switch is given to the applications too: bandwidth
        // admits against the shared ledger from its first flow request.
        let mut ledger_threads = Vec::new();
        if let (Some(app), Some(stats)) = (bandwidth, shared.ledger.clone()) {
            let (ledger, started) =
                ledger::start(share_context(&shared), share_context(&shared), stats);
            if !app.share(Arc::new(ledger)) {
                tracing::error!(
                    "bandwidth already shares a ledger: its reservations stay as they are"
                );
            }
            ledger_threads = started;
        }
        let spawn = |name: &str, f: fn(&Shared)| {
            let s = shared.clone();
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || f(&s))
                .expect("spawn a cluster thread")
        };
        let threads = vec![
            spawn("baton-cluster", elect_loop),
            spawn("baton-cluster-lease", lease_loop),
            spawn("baton-cluster-watch", watch_loop),
            spawn("baton-cluster-guard", guard_loop),
            spawn("baton-cluster-health", health_loop),
        ];
        let spawn_sharing = |name: &str, f: fn(&share::Context)| {
            let c = share_context(&shared);
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || f(&c))
                .expect("spawn a cluster thread")
        };
        let mut threads = threads;
        threads.push(spawn_sharing("baton-cluster-facts-out", share::write_loop));
        threads.push(spawn_sharing("baton-cluster-facts-in", share::read_loop));
        threads.extend(ledger_threads);
        tracing::info!(
            node = %shared.options.node,
            etcd = %shared.options.endpoints.join(","),
            "joining the cluster"
        );
        Member { shared, threads }
    }

    /// What the operator interface reads.
    pub fn source(&self) -> Arc<dyn ClusterSource> {
        self.shared.clone()
    }

    /// The cluster as this member sees it now.
    pub fn status(&self) -> ClusterStatus {
        self.shared.status()
    }

    /// Leaves the cluster: stops serving as master (switches demoted
    /// first), hands its switches over (their claims released, its facts
    /// kept until the new masters have published theirs, at most
    /// [`LEAVE_HANDOVER`]), then revokes the lease, so the other members
    /// take over at once rather than after the lease's time to live.
    pub fn leave(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if !self.shared.running.swap(false, Ordering::AcqRel) {
            return;
        }
        self.shared.wake.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        *lock(&self.shared.deadline) = None;
        fence(&self.shared);
        demote_all(&self.shared);
        hand_over_on_leaving(&self.shared);
        if let Some(lease) = *lock(&self.shared.lease) {
            let _ = self.shared.etcd.revoke(lease);
        }
        tracing::info!(node = %self.shared.options.node, "left the cluster");
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.stop();
    }
}

impl ClusterSource for Shared {
    fn status(&self) -> ClusterStatus {
        let obs = lock(&self.observed).clone();
        let mut masters_of: BTreeMap<&str, usize> = BTreeMap::new();
        for c in obs.claims.values() {
            *masters_of.entry(c.node.as_str()).or_default() += 1;
        }
        let members = obs
            .members
            .iter()
            .map(|(node, record)| {
                let r: Option<Record> = serde_json::from_slice(record).ok();
                status::Member {
                    node: node.clone(),
                    openflow: r.as_ref().map_or_else(String::new, |r| r.openflow.clone()),
                    api: r.and_then(|r| r.api),
                    masters: masters_of.get(node.as_str()).copied().unwrap_or(0),
                }
            })
            .collect();
        let dpids: BTreeSet<Dpid> = obs
            .connected
            .keys()
            .chain(obs.claims.keys())
            .copied()
            .collect();
        let masters = dpids
            .into_iter()
            .map(|d| status::Mastership {
                dpid: format!("{d:016x}"),
                master: obs.claims.get(&d).map(|c| c.node.clone()),
                generation: obs.claims.get(&d).map(|c| c.created.max(0) as u64),
                connected: obs
                    .connected
                    .get(&d)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default(),
            })
            .collect();
        ClusterStatus {
            node: self.options.node.clone(),
            connected: self.connected(),
            members,
            masters,
            etcd: lock(&self.endpoints).clone(),
            role_changes: self.role_changes.load(Ordering::Relaxed),
            facts: status::Facts {
                written: self.facts.puts.load(Ordering::Relaxed),
                deleted: self.facts.deletes.load(Ordering::Relaxed),
                peers: self.facts.peer_facts.load(Ordering::Relaxed),
            },
            ledger: self.ledger.as_ref().map(|l| status::Ledger {
                granted: l.granted.load(Ordering::Relaxed),
                refused: l.refused.load(Ordering::Relaxed),
                conflicts: l.conflicts.load(Ordering::Relaxed),
                released: l.released.load(Ordering::Relaxed),
                failed: l.failed.load(Ordering::Relaxed),
                held: l.held.load(Ordering::Relaxed),
            }),
        }
    }
}

impl Shared {
    fn key(&self, k: &Key) -> String {
        format!("{PREFIX}{}", k.path())
    }

    /// Whether this member reaches etcd now: its lease is known alive and
    /// it renewed it within a third of its time to live (it tries every
    /// sixth). The others ask this when they lose etcd
    /// ([`etcd_lost_everywhere`]), by when a member that lost it too has
    /// missed two renewals.
    fn connected(&self) -> bool {
        lock(&self.renewed).is_some_and(|t| t.elapsed() < self.options.ttl / 3)
    }

    fn running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Waits up to `d`, or until the watch brings news or the member stops.
    fn nap(&self, d: Duration) {
        let mut news = lock(&self.news);
        if !*news && self.running() {
            news = self
                .wake
                .wait_timeout(news, d)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *news = false;
    }

    fn tell(&self) {
        *lock(&self.news) = true;
        self.wake.notify_all();
    }

    /// Gives the runtime `role` for `dpid`; true when it took it.
    fn become_(&self, dpid: Dpid, role: Role) -> bool {
        let (m, generation) = match role {
            Role::Master(g) => (Mastership::Master, g),
            Role::Slave(g) => (Mastership::Slave, g),
        };
        let was_master = matches!(lock(&self.roles).get(&dpid), Some(Role::Master(_)));
        match self.control.set_mastership(DatapathId(dpid), m, generation) {
            Ok(()) => {
                let is_master = m == Mastership::Master;
                if was_master != is_master {
                    self.role_changes.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(
                        dpid = %DatapathId(dpid),
                        generation,
                        "{}",
                        if is_master { "now master" } else { "no longer master" }
                    );
                }
                lock(&self.roles).insert(dpid, role);
                lock(&self.refused).remove(&dpid);
                true
            }
            Err(e) => {
                // Said once per datapath until it succeeds: the plan asks
                // again every round.
                if lock(&self.refused).insert(dpid) {
                    tracing::warn!(dpid = %DatapathId(dpid), role = m.name(), generation, error = %e, "role not taken; trying again every round");
                }
                false
            }
        }
    }
}

/// The most a leaving member waits for the others to publish the switches
/// it released before its facts go with its lease.
pub const LEAVE_HANDOVER: Duration = Duration::from_secs(2);

/// Leaving with the lease alive (make before break): the member's key
/// goes first, so that no other member prefers it for a switch, then its
/// claims, so that the others claim them at once; its facts (the links
/// and hosts of its switches) stay, under the lease, until another member
/// has published each switch it released (with the facts it took from
/// these), at most [`LEAVE_HANDOVER`], so that no member's view loses
/// them on the way.
fn hand_over_on_leaving(s: &Shared) {
    let Some(lease) = *lock(&s.lease) else {
        return;
    };
    let me = &s.options.node;
    let (released, others) = {
        let obs = lock(&s.observed);
        let released: Vec<(Dpid, i64)> = obs
            .claims
            .iter()
            .filter(|(_, c)| c.node == *me && c.lease == lease)
            .map(|(&d, c)| (d, c.created))
            .collect();
        (released, obs.members.keys().any(|n| n != me))
    };
    if released.is_empty() || !others {
        return;
    }
    let _ = s.etcd.delete(&s.key(&Key::Member(me.clone())));
    for &(d, created) in &released {
        let _ = s.etcd.delete_if_created(&s.key(&Key::Master(d)), created);
    }
    let t0 = Instant::now();
    while t0.elapsed() < LEAVE_HANDOVER {
        if let Ok(published) = share::switches_of_others(&s.etcd, me)
            && released.iter().all(|(d, _)| published.contains(d))
        {
            tracing::info!(node = %me, switches = released.len(), after = ?t0.elapsed(), "switches handed over");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    tracing::warn!(node = %me, switches = released.len(), "left before every switch it released had a new master's facts");
}

/// What the view-sharing threads need of the member.
fn share_context(s: &Arc<Shared>) -> share::Context {
    let (lease, running) = (s.clone(), s.clone());
    share::Context {
        etcd: s.etcd.clone(),
        node: s.options.node.clone(),
        control: s.control.clone(),
        lease: Box::new(move || *lock(&lease.lease)),
        running: Box::new(move || running.running()),
        stats: s.facts.clone(),
    }
}

/// Demotes every datapath the runtime has this member master, each on a
/// thread of its own so one slow switch delays no other.
fn demote_all(s: &Shared) {
    let masters: Vec<(Dpid, u64)> = s
        .control
        .switches()
        .iter()
        .filter(|sw| sw.mastership == Mastership::Master)
        .map(|sw| (sw.info.dpid.0, sw.role_generation.unwrap_or(0)))
        .collect();
    std::thread::scope(|scope| {
        for (d, g) in masters {
            scope.spawn(move || s.become_(d, Role::Slave(g)));
        }
    });
}

/// Tells the runtime until when it may act as master, checked at the point
/// of sending ([`baton_runtime::control::Control::fence_mastership`]):
/// the lease clock's deadline, closed without one, open while holding on
/// with etcd lost for every member. Computed and given under the
/// deadline's lock, so that the lease and guard threads, each calling it
/// after its own change, leave the latest state.
fn fence(s: &Shared) {
    let deadline = lock(&s.deadline);
    let f = if s.held.load(Ordering::Acquire) {
        Fence::Open
    } else {
        deadline.map_or(Fence::Closed, Fence::Until)
    };
    s.control.fence_mastership(f);
}

/// The lease, granted (with the member's record) and kept alive every
/// sixth of its time to live, on a thread of its own so that nothing the
/// plan waits for (a slow switch's ROLE_REPLY, say) delays a keepalive.
fn lease_loop(s: &Shared) {
    let o = &s.options;
    let mut clock = LeaseClock::new(o.ttl, o.request_timeout() * 2);
    let mut lease: Option<LeaseId> = None;
    let mut outage: Option<Instant> = None;
    let record = serde_json::to_vec(&s.record).expect("a record serialises");
    while s.running() {
        let sent = Instant::now();
        let granting = lease.is_none();
        let renewal = match lease {
            None => s.etcd.grant(o.ttl).and_then(|id| {
                s.etcd
                    .put(&s.key(&Key::Member(o.node.clone())), &record, Some(id))
                    .map(|_| lease = Some(id))
            }),
            Some(id) => s.etcd.keep_alive(id).map(|_| ()),
        };
        match renewal {
            Ok(()) => {
                if granting && !s.held.load(Ordering::Acquire) {
                    // Masters under a lease that is gone (a stall longer
                    // than the lease, a partition) hold nothing in etcd
                    // any more: let them go before the new lease opens the
                    // fence, whatever the guard has done by now. (Held
                    // through an outage of etcd everywhere, they stay, and
                    // the plan claims them again under the new lease.)
                    demote_all(s);
                }
                clock.renewed(sent);
                if let Some(since) = outage.take() {
                    tracing::warn!(
                        node = %o.node,
                        after = ?since.elapsed(),
                        "etcd answers again: back in the cluster"
                    );
                }
            }
            Err(e) => {
                if matches!(e, EtcdError::LeaseGone) {
                    tracing::warn!(node = %o.node, "the lease expired: joining again with a new one");
                    clock.lost();
                    lease = None;
                }
                if outage.is_none() {
                    outage = Some(sent);
                    tracing::error!(
                        node = %o.node,
                        error = %e,
                        "cannot reach etcd: mastership ends when the lease can have expired, \
                         and switches keep their flows"
                    );
                }
            }
        }
        *lock(&s.lease) = lease;
        *lock(&s.deadline) = clock.deadline();
        fence(s);
        let healthy = clock.healthy(Instant::now());
        *lock(&s.renewed) = if healthy { clock.renewed_at() } else { None };
        s.tell();
        // Every sixth of the lease; at once after a lost lease, soon
        // after a failure.
        let next = match (&outage, lease) {
            (_, None) => Duration::from_millis(100),
            (Some(_), _) => Duration::from_millis(100),
            (None, Some(_)) => o.ttl / 6,
        };
        let until = sent + next;
        while s.running() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The sessions registered, and the plan carried out.
fn elect_loop(s: &Shared) {
    let o = &s.options;
    let mut registered: BTreeSet<Dpid> = BTreeSet::new();
    let mut registered_under: Option<LeaseId> = None;
    let mut elector = Elector::new(&o.node);
    while s.running() {
        let lease = *lock(&s.lease);
        if lease != registered_under {
            registered.clear();
            registered_under = lease;
        }
        let healthy = lock(&s.deadline).is_some_and(|d| Instant::now() < d);

        // The sessions this instance has, and the role each has in the
        // runtime: the truth, whatever this loop last asked for (the guard
        // may have demoted them, a switch that reconnected starts anew as
        // a slave).
        let sessions = s.control.switches();
        let local: BTreeSet<Dpid> = sessions.iter().map(|sw| sw.info.dpid.0).collect();
        if let (Some(id), true) = (lease, healthy) {
            for &d in local.difference(&registered.clone()) {
                let key = s.key(&Key::Connected(d, o.node.clone()));
                if s.etcd.put(&key, b"", Some(id)).is_ok() {
                    registered.insert(d);
                }
            }
            for &d in registered.clone().difference(&local) {
                let key = s.key(&Key::Connected(d, o.node.clone()));
                if s.etcd.delete(&key).is_ok() {
                    registered.remove(&d);
                }
            }
        }

        // The plan, from the roles the runtime has.
        {
            let roles: BTreeMap<Dpid, Role> = sessions
                .iter()
                .filter_map(|sw| {
                    let g = sw.role_generation?;
                    let role = match sw.mastership {
                        Mastership::Master => Role::Master(g),
                        _ => Role::Slave(g),
                    };
                    Some((sw.info.dpid.0, role))
                })
                .collect();
            *lock(&s.roles) = roles.clone();
            elector.runtime_has(roles);
        }
        let observed = lock(&s.observed).clone();
        let plan = if !healthy || s.held.load(Ordering::Acquire) {
            // Without a lease known alive there is nothing to claim or
            // give up; letting switches go is the guard's (which keeps
            // them when etcd is lost everywhere).
            Vec::new()
        } else {
            elector.plan(&observed, &local, lease, healthy, Instant::now())
        };
        for action in plan {
            match action {
                Action::Become(d, role) => {
                    if s.become_(d, role) {
                        elector.applied(d, role);
                    }
                }
                Action::Claim(d) => {
                    let (Some(id), key) = (lease, s.key(&Key::Master(d))) else {
                        continue;
                    };
                    match s.etcd.create(&key, o.node.as_bytes(), Some(id)) {
                        Ok(Ok(rev)) => {
                            tracing::debug!(dpid = %DatapathId(d), generation = rev, "claimed");
                            lock(&s.observed).apply(
                                &Key::Master(d).path(),
                                Some((o.node.as_bytes(), rev, id)),
                                rev,
                            );
                            s.tell();
                        }
                        Ok(Err(kv)) => lock(&s.observed).apply(
                            &Key::Master(d).path(),
                            Some((&kv.value, kv.create_revision, kv.lease)),
                            kv.mod_revision,
                        ),
                        Err(e) => {
                            tracing::debug!(dpid = %DatapathId(d), error = %e, "claim not made")
                        }
                    }
                }
                Action::Release(d, created) => {
                    let _ = s.etcd.delete_if_created(&s.key(&Key::Master(d)), created);
                }
            }
        }
        s.nap(TICK);
    }
}

/// Keeps [`Shared::observed`] current: a full read, then a watch from the
/// next revision, again whenever the watch breaks.
fn watch_loop(s: &Shared) {
    let strip = |k: &str| k.strip_prefix(PREFIX).map(str::to_string);
    while s.running() {
        let (revision, kvs) = match s.etcd.get_prefix(PREFIX) {
            Ok(r) => r,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
        };
        let keys: Vec<(String, Vec<u8>, i64, i64, i64)> = kvs
            .into_iter()
            .filter_map(|kv| {
                Some((
                    strip(&kv.key)?,
                    kv.value,
                    kv.create_revision,
                    kv.mod_revision,
                    kv.lease,
                ))
            })
            .collect();
        lock(&s.observed).reset(revision, &keys);
        s.tell();
        let Ok(mut watch) = s.etcd.watch_prefix(PREFIX, revision + 1) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        while s.running() {
            match watch.next(Duration::from_millis(500)) {
                Ok(None) => {}
                Ok(Some(batch)) => {
                    tracing::debug!(
                        revision = batch.revision,
                        events = batch.events.len(),
                        "watched"
                    );
                    let mut obs = lock(&s.observed);
                    // The shared views' facts are under the same prefix;
                    // only the election's keys are news for the plan.
                    let mut news = false;
                    for event in &batch.events {
                        match event {
                            WatchEvent::Put(kv) => {
                                if let Some(k) = strip(&kv.key) {
                                    news |= Key::parse(&k).is_some();
                                    obs.apply(
                                        &k,
                                        Some((&kv.value, kv.create_revision, kv.lease)),
                                        kv.mod_revision,
                                    );
                                }
                            }
                            WatchEvent::Delete(kv) => {
                                if let Some(k) = strip(&kv.key) {
                                    news |= Key::parse(&k).is_some();
                                    obs.apply(&k, None, kv.mod_revision);
                                }
                            }
                        }
                    }
                    drop(obs);
                    if news {
                        s.tell();
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "the watch broke: reading again");
                    break;
                }
            }
        }
    }
}

/// Demotes everything at the lease clock's deadline.
///
/// Unless etcd is lost for the whole cluster ([`etcd_lost_everywhere`]):
/// then no other member can take a switch over either, and this one keeps
/// serving the switches it masters with its last state, until etcd
/// answers again or another member says it holds a lease.
fn guard_loop(s: &Shared) {
    let mut demoted = false;
    let mut asked: Option<Instant> = None;
    while s.running() {
        let expired = lock(&s.deadline).is_none_or(|d| Instant::now() >= d);
        let masters = lock(&s.roles)
            .values()
            .any(|r| matches!(r, Role::Master(_)));
        if expired && masters {
            // Asked again twice a second while holding on.
            let ask = asked.is_none_or(|t| t.elapsed() >= Duration::from_millis(500));
            if ask {
                asked = Some(Instant::now());
                let everywhere = etcd_lost_everywhere(s);
                let was = s.held.swap(everywhere, Ordering::AcqRel);
                if was != everywhere {
                    fence(s);
                }
                if everywhere && !was {
                    tracing::error!(
                        node = %s.options.node,
                        "etcd is unreachable from every member: keeping the switches this \
                         instance masters, with its last state, until etcd answers again"
                    );
                }
            }
            if !s.held.load(Ordering::Acquire) {
                if !demoted {
                    tracing::error!(
                        node = %s.options.node,
                        "the lease cannot be known alive: no longer master of any switch"
                    );
                }
                demote_all(s);
                demoted = true;
            }
        } else if !expired {
            demoted = false;
            asked = None;
            if s.held.swap(false, Ordering::AcqRel) {
                fence(s);
                tracing::warn!(node = %s.options.node, "etcd answers again: no longer holding on");
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether etcd is lost for the whole cluster: every other member this
/// one last knew of answers, on its API within 300 ms, that it holds no
/// live lease either. A member that does not answer (or serves no API),
/// or that holds a lease, may take switches over: then it is not lost
/// everywhere. A member that knew of no other is never sure.
fn etcd_lost_everywhere(s: &Shared) -> bool {
    let peers: Vec<Option<String>> = lock(&s.observed)
        .members
        .iter()
        .filter(|(n, _)| **n != s.options.node)
        .map(|(_, r)| serde_json::from_slice::<Record>(r).ok().and_then(|r| r.api))
        .collect();
    if peers.is_empty() {
        return false;
    }
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_millis(300))
        .build();
    // All at once, so the answer takes one timeout however many there are
    // (the lease clock's margin must cover it).
    std::thread::scope(|scope| {
        let asks: Vec<_> = peers
            .iter()
            .map(|api| {
                let agent = &agent;
                scope.spawn(move || {
                    api.as_ref().is_some_and(|api| {
                        agent
                            .get(&format!("http://{api}/api/v1/cluster"))
                            .call()
                            .ok()
                            .and_then(|r| r.into_json::<serde_json::Value>().ok())
                            .is_some_and(|v| v["connected"] == false)
                    })
                })
            })
            .collect();
        asks.into_iter().all(|a| a.join().unwrap_or(false))
    })
}

/// Each etcd endpoint's health and latency, once a second.
fn health_loop(s: &Shared) {
    while s.running() {
        let seen: Vec<status::Endpoint> = s
            .options
            .endpoints
            .iter()
            .map(|url| match s.etcd.status(url) {
                Ok(st) => status::Endpoint {
                    url: url.clone(),
                    healthy: true,
                    latency_ms: Some(st.took.as_secs_f64() * 1e3),
                    error: None,
                },
                Err(e) => status::Endpoint {
                    url: url.clone(),
                    healthy: false,
                    latency_ms: None,
                    error: Some(e.to_string()),
                },
            })
            .collect();
        *lock(&s.endpoints) = seen;
        let until = Instant::now() + Duration::from_secs(1);
        while s.running() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
