//! [`Controller`]: what every thread of one runtime shares (the switch
//! table and the sockets, the pipeline, the configuration, the clock, the statistics),
//! and the bookkeeping when a switch comes up or goes, with its log lines
//! (those of connections that fail before their handshake rate-limited
//! by [`FailureLog`]).

use crate::app::AnyApp;
use crate::closed::Closed;
use crate::config::Config;
use crate::conn::Connection;
use crate::dag::DagSet;
use crate::env::Environment;
use crate::failure_log::{self, FailureLog, Line, Suppressed};
use crate::io::{Clock, Sockets, TransportError};
use crate::network::{Fabric, Network, Timers};
use crate::pipeline::Pipeline;
use crate::requests::Requests;
use crate::session::SessionConfig;
use crate::stats::{ControllerStats, WorkerStats};
use crate::switch::{SendError, SwitchId, SwitchInfo};
use crate::sync::lock;
use crate::table::{Kill, SwitchTable, Task, TaskState};
use baton_openflow::{DatapathId, Version, Xid};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The running controller, as its threads share it.
pub(crate) struct Controller {
    pub table: Arc<SwitchTable>,
    /// The switches' sockets, by the table's slot index.
    pub sockets: Arc<Sockets>,
    pub pipeline: Pipeline,
    pub config: Config,
    pub session: SessionConfig,
    pub net: Network,
    pub fabric: Arc<RuntimeFabric>,
    /// Which connection holds each datapath id.
    pub dpids: Mutex<HashMap<DatapathId, SwitchId>>,
    pub workers: Vec<Arc<WorkerStats>>,
    /// Connections accepted and closed.
    pub stats: ControllerStats,
    /// The log lines of connections that fail before their handshake.
    pub failure_log: Arc<Mutex<FailureLog>>,
    /// Switches that did not confirm the deletion of a stopped
    /// application's flows, by application and reason.
    pub stop_unconfirmed: Mutex<BTreeMap<(String, &'static str), u64>>,
    /// The BDU in nanoseconds; changeable while running.
    pub bdu_ns: AtomicU64,
    pub clock: Clock,
    /// How to hand the scheduler a switch to serve (set once the
    /// scheduler's threads exist).
    pub readiness: OnceLock<Arc<dyn Wake>>,
    /// The application DAGs, run on the view thread when their views
    /// change and by timer.
    pub dags: DagSet,
}

/// How the controller hands a switch to whichever scheduler runs, without
/// naming it: `sched::Readiness` (the enum of the concrete schedulers)
/// implements it.
///
/// A trait defined here, not the enum held here, because the schedulers
/// use [`Controller`] (and the engine, which uses it too): holding their
/// enum made `controller` -> `sched` -> `sched::queues` -> `controller` a
/// loop. The enum stays where it was, and every call that is frequent goes
/// to it directly (the timer thread's keepalive wake-ups, each scheduler's
/// own loop); the controller calls through this trait only in
/// [`Controller::wake_all`], once per switch when an application stops or
/// starts, where one dynamic call is lost in the work it triggers.
pub(crate) trait Wake: Send + Sync {
    /// Marks switch `idx` ready, so that the scheduler serves it soon.
    fn ready(&self, table: &SwitchTable, idx: usize);
}

/// The [`Network`] of a running controller.
pub(crate) struct RuntimeFabric {
    pub table: Arc<SwitchTable>,
    pub sockets: Arc<Sockets>,
    pub running: AtomicBool,
    pub timers: Timers,
    pub env: Environment,
    pub requests: Requests,
    xids: AtomicU32,
}

impl Fabric for RuntimeFabric {
    /// Writes `bytes` at once, or, on a worker handling a batch, when the
    /// batch is done ([`crate::outbox`]).
    fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        let slot = self.table.get(id).ok_or(SendError::Gone)?;
        if !self.table.may_change(slot) && crate::mastership::any_changes_state(bytes) {
            return Err(SendError::NotMaster);
        }
        if crate::outbox::stage(id, bytes) {
            return Ok(());
        }
        self.sockets.send(id, bytes)
    }

    fn switches(&self) -> Vec<SwitchInfo> {
        self.table.switches()
    }

    fn set_weight(&self, id: SwitchId, weight: u32) -> bool {
        match self.table.get(id) {
            Some(slot) => {
                slot.weight.store(weight.max(1), Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn timers(&self) -> &Timers {
        &self.timers
    }

    fn version(&self, id: SwitchId) -> Option<Version> {
        let slot = self.table.get(id)?;
        if !slot.up.load(Ordering::Acquire) {
            return None;
        }
        Version::from_wire(slot.version.load(Ordering::Acquire))
    }

    fn next_xid(&self) -> Xid {
        // The top bit apart from the sessions' own counters.
        Xid(self.xids.fetch_add(1, Ordering::Relaxed) | 1 << 31)
    }

    fn env(&self) -> &Environment {
        &self.env
    }

    fn requests(&self) -> &Requests {
        &self.requests
    }
}

impl Controller {
    pub fn new(
        table: Arc<SwitchTable>,
        sockets: Arc<Sockets>,
        apps: Vec<AnyApp>,
        config: Config,
    ) -> Controller {
        let fabric = Arc::new(RuntimeFabric {
            table: table.clone(),
            sockets: sockets.clone(),
            running: AtomicBool::new(true),
            timers: Timers::default(),
            env: Environment::default(),
            requests: Requests::default(),
            xids: AtomicU32::new(1),
        });
        let net = Network::new(fabric.clone());
        let workers = config.workers.max(1);
        // Sums up the last window of a flood of failed connections, which
        // no later failure will.
        let failure_log = Arc::new(Mutex::new(FailureLog::default()));
        let log = failure_log.clone();
        net.every("connection log", failure_log::WINDOW, move |net| {
            if let Some(s) = lock(&log).flush(net.now()) {
                log_suppressed(&s);
            }
        });
        Controller {
            table,
            sockets,
            pipeline: Pipeline::new(apps, &net),
            session: SessionConfig {
                echo_interval: config.echo_interval,
                echo_timeout: config.echo_timeout,
                miss_send_len: config.miss_send_len,
                table_miss_13: config.table_miss_13,
            },
            bdu_ns: AtomicU64::new(config.bdu.as_nanos() as u64),
            config,
            net,
            fabric,
            dpids: Mutex::new(HashMap::new()),
            workers: (0..workers)
                .map(|_| Arc::new(WorkerStats::default()))
                .collect(),
            stats: ControllerStats::default(),
            failure_log,
            stop_unconfirmed: Mutex::new(BTreeMap::new()),
            clock: Clock::new(),
            readiness: OnceLock::new(),
            dags: DagSet::default(),
        }
    }

    /// Marks switch `idx` ready, so that its next service (which
    /// reconciles its applications' states) comes now rather than with
    /// its next message.
    pub fn wake(&self, idx: usize) {
        if let Some(r) = self.readiness.get()
            && self.table.slots[idx].state() != TaskState::Free
        {
            r.ready(&self.table, idx);
        }
    }

    /// Has every connected switch served soon, input or not (after an
    /// application stopped or started, so each reconciles its states).
    pub fn wake_all(&self) {
        if let Some(r) = self.readiness.get() {
            for (i, slot) in self.table.used() {
                if slot.state() != TaskState::Free {
                    r.ready(&self.table, i);
                }
            }
        }
    }

    /// True until the runtime stops.
    pub fn is_running(&self) -> bool {
        self.fabric.is_running()
    }

    /// Switch `idx` finished its handshake: list it, apply its configured
    /// weight, and replace an older connection of the same datapath. Runs
    /// before applications hear of it.
    pub fn switch_up(&self, idx: usize, conn: &Connection) {
        let info = conn.info();
        conn.span.record("dpid", tracing::field::display(info.dpid));
        let _span = conn.span.enter();
        let slot = &self.table.slots[idx];
        slot.dpid.store(info.dpid.0, Ordering::Release);
        slot.version.store(info.version.wire(), Ordering::Release);
        if let Some(&(_, w)) = self.config.weights.iter().find(|(d, _)| *d == info.dpid) {
            slot.weight.store(w, Ordering::Relaxed);
        }
        slot.up.store(true, Ordering::Release);
        // A switch that reconnects replaces its old connection. The new one
        // is listed first, so the network never shows the datapath missing.
        let old = lock(&self.dpids).insert(info.dpid, info.id);
        if let Some(old) = old.filter(|&o| o != info.id) {
            if let Some(old_slot) = self.table.get(old) {
                // Right for a switch that reconnects; without TLS client
                // certificates anyone on the control network can do it.
                let old_peer = *lock(&old_slot.peer);
                tracing::warn!(
                    dpid = %info.dpid,
                    old = %old,
                    old_peer = %Peer(old_peer),
                    new = %info.id,
                    new_peer = %Peer(info.peer),
                    "datapath id claimed by a new connection; closing its previous one"
                );
                old_slot.kill(Kill::Replaced);
                self.sockets.shutdown(old.index());
            }
        }
        // The switch's span says which (id, peer, dpid).
        tracing::info!(version = %info.version, "switch connected");
    }

    /// Closes a task the caller owns (it moved the switch to `Running`):
    /// closes the socket, tells the applications, frees the slot,
    /// and logs one line: the one place a close's reason ([`Closed`]) is
    /// counted and logged.
    pub fn close(&self, idx: usize, task: Task, reason: &Closed) {
        let table = &self.table;
        let slot = &table.slots[idx];
        self.stats.closed(reason.label());
        let Task { mut conn } = task;
        let id = conn.id;
        let span = conn.span.clone();
        let _span = span.enter();
        // Off the network view before the applications hear of it, so an
        // application (or test) that sees `switch_down` never still finds
        // the switch listed.
        slot.up.store(false, Ordering::Release);
        self.sockets.close(idx);
        let was_up = conn.session.features().is_some();
        conn.session.close();
        let info = conn.info();
        self.fabric.requests.switch_gone(id);
        if was_up {
            let mut dpids = lock(&self.dpids);
            if dpids.get(&info.dpid) == Some(&id) {
                dpids.remove(&info.dpid);
            }
            drop(dpids);
            self.pipeline
                .switch_down(&info, std::mem::take(&mut conn.states));
            tracing::info!(%reason, "switch disconnected");
        } else {
            let now = Instant::now();
            let mut log = lock(&self.failure_log);
            let summary = log.flush(now);
            let line = log.note(now, reason.label());
            drop(log);
            if let Some(s) = summary {
                log_suppressed(&s);
            }
            match (line, reason) {
                (Line::Count, _) => {}
                // A certificate refused, or not TLS at all: the operator
                // may want to know.
                (
                    Line::Write,
                    Closed::Transport(
                        TransportError::Tls(_) | TransportError::TlsHandshakeUnfinished { .. },
                    ),
                ) => {
                    tracing::warn!(%reason, "TLS connection failed")
                }
                (Line::Write, _) => {
                    tracing::info!(%reason, "connection closed before the handshake finished");
                }
            }
        }
        drop(conn);
        debug_assert!(matches!(
            slot.state(),
            TaskState::Running | TaskState::Notified
        ));
        table.release(idx);
    }

    /// The current batching-delay upper bound.
    pub fn bdu(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.bdu_ns.load(Ordering::Relaxed))
    }
}

/// Logs the connection failures a window of the [`FailureLog`] only
/// counted: one line, outside any switch's span.
fn log_suppressed(s: &Suppressed) {
    tracing::warn!(
        parent: None,
        count = s.total(),
        by_reason = %s,
        window_s = failure_log::WINDOW.as_secs(),
        "connections that failed before their handshake were not logged one by one"
    );
}

/// A peer's address, or `-` for a connection without one.
struct Peer(Option<std::net::SocketAddr>);

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(a) => write!(f, "{a}"),
            None => f.write_str("-"),
        }
    }
}
