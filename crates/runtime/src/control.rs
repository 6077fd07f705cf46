//! [`Control`]: the running controller as its operator sees and steers it
//! (the operator interface builds on this; the runtime itself knows
//! nothing of HTTP): the switches with their ports and counters, each
//! switch's flow table read with statistics requests, flows the operator
//! adds (with its own cookie tag) and deletes, each confirmed with a
//! barrier, the applications and their life cycle, the scheduler and its
//! batching, the views.
//!
//! Every method may be called from any thread; those that talk to a
//! switch block until it answers (a few milliseconds, at most
//! [`SWITCH_TIMEOUT`]), so an asynchronous caller runs them on a blocking
//! thread. Those that talk to many switches (stopping an application)
//! ask them all at once and wait for all their replies, on one channel
//! ([`crate::requests`]), until one deadline: one switch that does not
//! answer costs the call one timeout, not one per switch.

use crate::config::{Batching, SchedulerKind};
use crate::controller::Controller;
use crate::dag::DagStatus;
use crate::env::{Snapshot, ViewAccess};
use crate::mastership::{Fence, Mastership};
use crate::network::{Fabric, Network};
use crate::pipeline::AppStatus;
use crate::requests::{Replies, RequestError};
use crate::stats::{Statistics, WorkerSnapshot};
use crate::switch::{SwitchId, SwitchInfo};
use crate::sync::lock;
use crate::table::TaskState;
use baton_openflow::neutral::{self, FlowSpec, MatchSpec, Message, PortDesc};
use baton_openflow::v13::multipart::{MultipartReplyBody, MultipartRequest, MultipartRequestBody};
use baton_openflow::{BufferId, Cookie, DatapathId, PortNo, Version, Xid, v10, v13};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The batching-delay upper bounds the controller accepts, microseconds:
/// 10 µs to 1 s.
pub const BDU_RANGE_US: std::ops::RangeInclusive<u64> = 10..=1_000_000;

/// How long a switch may take to answer the operator.
pub const SWITCH_TIMEOUT: Duration = Duration::from_secs(3);

/// The largest weight a switch may be given.
pub const MAX_WEIGHT: u32 = 1000;

/// A switch as the operator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchStatus {
    /// Id, datapath id, version, peer.
    pub info: SwitchInfo,
    /// Its ports, as last described.
    pub ports: Vec<PortDesc>,
    /// How long it has been connected.
    pub connected_for: Duration,
    /// Messages received from it.
    pub rx_msgs: u64,
    /// Messages sent to it.
    pub tx_msgs: u64,
    /// Bytes sent to it.
    pub tx_bytes: u64,
    /// Its service chances per round.
    pub weight: u32,
    /// Whether this instance serves it (in a cluster: is its master).
    pub mastership: Mastership,
    /// The generation id of the last role this instance gave it and the
    /// switch accepted ([`Control::set_mastership`]); `None` if it never
    /// accepted one, or refused the last slave role asked.
    pub role_generation: Option<u64>,
    /// Whether this instance is its master but past its fence (the
    /// cluster's lease is not known alive: [`Control::fence_mastership`]),
    /// so that nothing that changes the switch leaves for it.
    pub fenced: bool,
}

/// One flow of a switch's tables, as it reported it.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowEntry {
    /// An OpenFlow 1.0 flow.
    V10(v10::stats::FlowStats),
    /// An OpenFlow 1.3 flow.
    V13(v13::multipart::FlowStats),
}

impl FlowEntry {
    /// Its cookie.
    pub fn cookie(&self) -> Cookie {
        match self {
            FlowEntry::V10(f) => f.cookie,
            FlowEntry::V13(f) => f.cookie,
        }
    }
}

/// The scheduler, for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerStatus {
    /// The design in use.
    pub kind: SchedulerKind,
    /// The batching in use.
    pub batching: Batching,
    /// The batching-delay upper bound.
    pub bdu: Duration,
    /// Each worker's batches and IBT.
    pub workers: Vec<WorkerSnapshot>,
}

/// Which flows [`Control::delete_flows`] deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowSelection {
    /// Every flow the match covers: the flow's fields include the match's
    /// (OFPFC_DELETE, 1.0.0 §5.3.3, 1.3.5 §6.4).
    Covered,
    /// Only the flow with exactly this match and priority
    /// (OFPFC_DELETE_STRICT).
    Exactly {
        /// The flow's priority.
        priority: u16,
    },
}

/// What stopping an application did to its flows
/// ([`Control::stop_app`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StopReport {
    /// Flows deleted: on 1.0, the strict deletes sent; a 1.3 switch
    /// deletes by cookie and does not say how many, so each counts as one.
    pub flows_deleted: usize,
    /// The switches that confirmed the deletion, by datapath id.
    pub confirmed: Vec<DatapathId>,
    /// The switches that did not, and why, by datapath id.
    pub unconfirmed: Vec<Unconfirmed>,
}

/// A switch that did not confirm the deletion of a stopped
/// application's flows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconfirmed {
    /// The switch.
    pub dpid: DatapathId,
    /// Why: it did not answer in time ([`RequestError::TimedOut`]), it
    /// disconnected ([`RequestError::Gone`]), or it refused a request with
    /// an error ([`RequestError::Refused`]).
    pub why: RequestError,
}

/// How many unconfirmed switches the log line of a stop names (the rest
/// are counted): enough to see whether a few switches or a kind of
/// switch is at fault, short enough to stay one line with 10,000.
const LOGGED_SWITCHES: usize = 8;

/// The first [`LOGGED_SWITCHES`] unconfirmed switches with their reasons,
/// and how many more.
struct FirstFew<'a>(&'a [Unconfirmed]);

impl fmt::Display for FirstFew<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, u) in self.0.iter().take(LOGGED_SWITCHES).enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{} ({})", u.dpid, u.why.label())?;
        }
        match self.0.len().saturating_sub(LOGGED_SWITCHES) {
            0 => Ok(()),
            more => write!(f, " and {more} more"),
        }
    }
}

/// What a reply expected while flows are changed answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The flow statistics request (1.0 stop: which flows to delete).
    Flows,
    /// The flow-mods (answered only by an error).
    FlowMods,
    /// The barrier after them: its reply confirms them.
    Barrier,
}

/// Why the operator's request could not be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlError {
    /// No switch with this datapath id is connected.
    UnknownSwitch(DatapathId),
    /// No application has this name.
    UnknownApp(String),
    /// The application is already in the state asked for.
    AlreadyThere(String),
    /// A value out of range, and what is allowed.
    Invalid(String),
    /// The switch did not do it.
    Switch(RequestError),
    /// In a cluster, another instance is the switch's master: only it
    /// changes the switch ([`Mastership`]).
    NotMaster(DatapathId),
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::UnknownSwitch(d) => write!(f, "no switch {d} is connected"),
            ControlError::UnknownApp(n) => write!(f, "no application is called {n:?}"),
            ControlError::AlreadyThere(what) => f.write_str(what),
            ControlError::Invalid(what) => f.write_str(what),
            ControlError::Switch(e) => write!(f, "{e}"),
            ControlError::NotMaster(d) => write!(
                f,
                "this instance is not the master of switch {d}: in a cluster, only its master changes it"
            ),
        }
    }
}

impl std::error::Error for ControlError {}

impl From<RequestError> for ControlError {
    fn from(e: RequestError) -> ControlError {
        ControlError::Switch(e)
    }
}

/// The operator's handle on a running controller. Cheap to clone.
#[derive(Clone)]
pub struct Control {
    ctl: Arc<Controller>,
    /// The operator's own network handle (its flows carry the cookie tag
    /// of the name "operator").
    net: Network,
}

impl Control {
    pub(crate) fn new(ctl: Arc<Controller>) -> Control {
        let tag = crate::app::cookie_tag("operator");
        let net = ctl.net.for_app("operator", tag, ViewAccess::none());
        Control { ctl, net }
    }

    /// The operator's network handle (sends, flows, requests).
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// A handle for a part of the controller outside its applications
    /// that publishes views of its own (the cluster layer's peers' facts),
    /// called `name`, allowed to write the views `access` declares.
    pub fn publisher(&self, name: &str, access: ViewAccess) -> Network {
        self.ctl
            .net
            .for_app(name, crate::app::cookie_tag(name), access)
    }

    /// Every view now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.net.snapshot()
    }

    /// Statistics of every worker and connected switch.
    pub fn stats(&self) -> Statistics {
        Statistics::take(
            self.ctl.table.snapshots(),
            &self.ctl.workers,
            &self.ctl.stats,
            &self.ctl.table.sent_elsewhere,
        )
    }

    /// Every connected switch, by datapath id.
    pub fn switches(&self) -> Vec<SwitchStatus> {
        let now = self.ctl.clock.now_ms();
        let mut v: Vec<SwitchStatus> = self
            .ctl
            .table
            .used()
            .filter(|(_, s)| s.up.load(Ordering::Acquire) && s.state() != TaskState::Free)
            .filter_map(|(i, s)| {
                let info = SwitchInfo {
                    id: s.id(i),
                    dpid: DatapathId(s.dpid.load(Ordering::Acquire)),
                    version: Version::from_wire(s.version.load(Ordering::Acquire))?,
                    peer: *lock(&s.peer),
                };
                let c = &s.counters;
                Some(SwitchStatus {
                    info,
                    ports: lock(&s.ports).to_vec(),
                    connected_for: Duration::from_millis(
                        now.saturating_sub(s.accepted_ms.load(Ordering::Acquire)),
                    ),
                    rx_msgs: c.rx_msgs.load(Ordering::Relaxed),
                    tx_msgs: c.tx_msgs.load(Ordering::Relaxed),
                    tx_bytes: c.tx_bytes.load(Ordering::Relaxed),
                    weight: s.weight(),
                    mastership: s.mastership(),
                    role_generation: match s.role_generation.load(Ordering::Acquire) {
                        u64::MAX => None,
                        g => Some(g),
                    },
                    fenced: s.mastership() == Mastership::Master && !self.ctl.table.may_change(s),
                })
            })
            .collect();
        v.sort_by_key(|s| s.info.dpid);
        v
    }

    /// One switch.
    pub fn switch(&self, dpid: DatapathId) -> Result<SwitchStatus, ControlError> {
        self.switches()
            .into_iter()
            .find(|s| s.info.dpid == dpid)
            .ok_or(ControlError::UnknownSwitch(dpid))
    }

    fn id_of(&self, dpid: DatapathId) -> Result<(SwitchId, Version), ControlError> {
        let s = self.switch(dpid)?;
        Ok((s.info.id, s.info.version))
    }

    /// [`Control::id_of`] a switch this instance may change: not one a
    /// cluster's other instance masters.
    fn changeable(&self, dpid: DatapathId) -> Result<(SwitchId, Version), ControlError> {
        let s = self.switch(dpid)?;
        if !s.mastership.serves() || s.fenced {
            return Err(ControlError::NotMaster(dpid));
        }
        Ok((s.info.id, s.info.version))
    }

    /// Gives a switch `weight` service chances per round (1 to
    /// [`MAX_WEIGHT`]).
    pub fn set_weight(&self, dpid: DatapathId, weight: u32) -> Result<(), ControlError> {
        if !(1..=MAX_WEIGHT).contains(&weight) {
            return Err(ControlError::Invalid(format!(
                "weight {weight} is out of range: 1 to {MAX_WEIGHT}"
            )));
        }
        let (id, _) = self.id_of(dpid)?;
        if self.net.set_weight(id, weight) {
            Ok(())
        } else {
            Err(ControlError::UnknownSwitch(dpid))
        }
    }

    /// A switch's flows, read from it with a flow statistics request
    /// (every table).
    pub fn flows(&self, dpid: DatapathId) -> Result<Vec<FlowEntry>, ControlError> {
        let (id, version) = self.id_of(dpid)?;
        flow_stats(&self.net, id, version)
    }

    /// Installs `flow` on switch `dpid` with the operator's cookie tag in
    /// the top 16 bits of its cookie (the flow's own cookie keeps the low
    /// 48), and waits for the switch to confirm it: a barrier follows the
    /// flow-mod, and an OFPT_ERROR the switch answers the flow-mod with
    /// (a bad port, a full table) is returned as
    /// [`ControlError::Switch`].
    pub fn add_flow(&self, dpid: DatapathId, flow: &FlowSpec<'_>) -> Result<(), ControlError> {
        let (id, version) = self.changeable(dpid)?;
        let flow = FlowSpec {
            cookie: self.net.tag_cookie(flow.cookie),
            ..*flow
        };
        self.confirmed(id, version, |out, xid| {
            neutral::encode_flow_add(out, version, xid, &flow)
        })
    }

    /// Deletes the flows of switch `dpid` that `match_` selects, whoever
    /// installed them, in every table; only those that output to
    /// `out_port` unless it is [`PortNo::ANY`]. Confirmed with a barrier
    /// as [`Control::add_flow`] is.
    pub fn delete_flows(
        &self,
        dpid: DatapathId,
        match_: &MatchSpec,
        which: FlowSelection,
        out_port: PortNo,
    ) -> Result<(), ControlError> {
        let (id, version) = self.changeable(dpid)?;
        let (strict, priority) = match which {
            FlowSelection::Covered => (false, 0),
            FlowSelection::Exactly { priority } => (true, priority),
        };
        self.confirmed(id, version, |out, xid| match version {
            Version::V10 => {
                let head = v10::FlowModHead {
                    match_: match_.to_match10(),
                    cookie: Cookie(0),
                    command: if strict {
                        v10::FlowModCommand::DeleteStrict
                    } else {
                        v10::FlowModCommand::Delete
                    },
                    idle_timeout: 0,
                    hard_timeout: 0,
                    priority,
                    buffer_id: BufferId::NONE,
                    out_port,
                    flags: 0,
                };
                v10::encode_flow_mod(out, xid, &head, &[]);
            }
            Version::V13 => {
                let head = v13::FlowModHead {
                    table_id: v13::messages::table_id::ALL,
                    command: if strict {
                        v13::FlowModCommand::DeleteStrict
                    } else {
                        v13::FlowModCommand::Delete
                    },
                    priority,
                    out_port,
                    ..v13::FlowModHead::default()
                };
                let at = v13::flow_mod::start_flow_mod(out, xid, &head);
                match_.emit_oxm_match(out);
                baton_openflow::header::finish_message(out, at);
            }
        })
    }

    /// Sends the flow-mod `write` encodes with the xid it is given, then a
    /// barrier, and waits for the barrier's reply. A switch answers in
    /// order (1.0.0 §5.3.7, 1.3.5 §6.2), so an error for the flow-mod has
    /// come by then.
    fn confirmed(
        &self,
        id: SwitchId,
        version: Version,
        write: impl FnOnce(&mut Vec<u8>, Xid),
    ) -> Result<(), ControlError> {
        let deadline = Instant::now() + SWITCH_TIMEOUT;
        let (flow_mod, barrier) = (self.next_xid(), self.next_xid());
        let mut out = Vec::with_capacity(128);
        write(&mut out, flow_mod);
        encode_barrier(&mut out, version, barrier);
        let mut replies = Replies::new();
        let expected = [(flow_mod, Step::FlowMods), (barrier, Step::Barrier)];
        // Not sent: it has failed as gone, which the wait reports.
        self.send_expecting(&mut replies, id, &out, &expected, 0);
        // No flow statistics were asked for.
        let outcome = self.confirm_all(&mut replies, 1, deadline, |_, _, _| Some(Ok(())));
        match outcome.into_iter().next() {
            Some(Err(e)) => Err(ControlError::Switch(e)),
            _ => Ok(()),
        }
    }

    /// Makes this instance the master or a slave of switch `dpid` (a
    /// cluster's decision; `baton-cluster` calls this), with a
    /// ROLE_REQUEST carrying `generation` (1.3.5 §6.3.7: a switch refuses
    /// a request whose generation id is older than one it has seen, so a
    /// stale master cannot take a switch back). OpenFlow 1.0 has no roles:
    /// only this instance's own behaviour changes.
    ///
    /// - Master: the request goes first, and only once the switch accepts
    ///   it do the applications serve the switch (`switch_up`, the 1.3
    ///   table-miss flow installed again). A refusal is
    ///   [`ControlError::Switch`] and leaves the switch unserved; past the
    ///   fence ([`Control::fence_mastership`]) nothing is asked, and the
    ///   answer is [`ControlError::Invalid`].
    /// - Slave: the applications stop serving the switch at once (nothing
    ///   that changes it leaves from here on), then the request goes. A
    ///   refusal (a stale generation) is [`ControlError::Switch`] and
    ///   leaves the role unconfirmed (`role_generation` `None`), so that
    ///   the caller asks again with a current generation.
    pub fn set_mastership(
        &self,
        dpid: DatapathId,
        role: Mastership,
        generation: u64,
    ) -> Result<(), ControlError> {
        let (id, version) = self.id_of(dpid)?;
        let slot = self
            .ctl
            .table
            .get(id)
            .ok_or(ControlError::UnknownSwitch(dpid))?;
        let wire = match role {
            Mastership::Standalone => {
                return Err(ControlError::Invalid(
                    "a switch is standalone only when the controller is".into(),
                ));
            }
            Mastership::Master => v13::ControllerRole::Master,
            Mastership::Slave => v13::ControllerRole::Slave,
        };
        if role == Mastership::Slave {
            slot.mastership.store(role.to_u8(), Ordering::Release);
            self.ctl.pipeline.touch();
            self.ctl.wake(id.index());
        }
        if role == Mastership::Master && !self.ctl.table.fence.holds() {
            return Err(ControlError::Invalid(
                "this instance's lease is not known alive: it may not become a master".into(),
            ));
        }
        if version == Version::V13 {
            let request = Message::V13(v13::Message::RoleRequest(v13::Role {
                role: wire,
                generation_id: generation,
            }));
            if let Err(e) = self.net.request(id, &request).wait(SWITCH_TIMEOUT) {
                // Refused (a generation the switch holds stale) or not
                // answered: the switch has not taken the role, and an
                // OpenFlow 1.3 switch keeps a session it never gave one
                // EQUAL, accepting its changes. This instance is its slave
                // already; the role is unconfirmed until a request with a
                // current generation is accepted (the caller asks again).
                if role == Mastership::Slave {
                    slot.role_generation.store(u64::MAX, Ordering::Release);
                }
                return Err(ControlError::Switch(e));
            }
        }
        slot.role_generation.store(generation, Ordering::Release);
        if role == Mastership::Master {
            slot.mastership.store(role.to_u8(), Ordering::Release);
            self.ctl.pipeline.touch();
            self.ctl.wake(id.index());
            if version == Version::V13 && self.ctl.config.table_miss_13 {
                let mut out = Vec::with_capacity(96);
                neutral::encode_table_miss(&mut out, self.next_xid());
                self.net
                    .send(id, &out)
                    .map_err(|_| ControlError::UnknownSwitch(dpid))?;
            }
        }
        // The applications hear of the change at the switch's next batch
        // (`Pipeline::reconcile`), before its messages: now, woken above.
        Ok(())
    }

    /// Until when this instance may act as master of the switches it
    /// masters: a cluster member gives its lease's deadline after each
    /// renewal ([`Fence::Until`]), [`Fence::Closed`] while no lease is
    /// known alive, [`Fence::Open`] while it holds on with etcd lost for
    /// every member (and a controller not in a cluster is never fenced).
    /// Checked at the point of sending: past it, a master's switches get
    /// nothing that changes them (it stays their master until the cluster
    /// says otherwise; the applications keep their state), and it may not
    /// become the master of another.
    pub fn fence_mastership(&self, fence: Fence) {
        self.ctl.table.fence.set(fence);
    }

    /// Each application's standing, in pipeline order.
    pub fn apps(&self) -> Vec<AppStatus> {
        self.ctl.pipeline.status()
    }

    /// The application of type `A` in the pipeline, running or not, to
    /// call its own interface (the operator's reservations go to
    /// `bandwidth` this way); `None` if there is none.
    pub fn app_of<A: crate::App>(&self) -> Option<std::sync::Arc<A>> {
        self.ctl.pipeline.typed::<A>()
    }

    /// Each application DAG's standing ([`crate::dag`]).
    pub fn dags(&self) -> Vec<DagStatus> {
        self.ctl.dags.dags().iter().map(|d| d.status()).collect()
    }

    fn app(&self, name: &str) -> Result<usize, ControlError> {
        self.ctl
            .pipeline
            .find(name)
            .ok_or_else(|| ControlError::UnknownApp(name.to_string()))
    }

    /// Stops an application while switches stay connected: it gets no
    /// more events; each switch hands its state back at its next service;
    /// and, unless `keep_flows`, the flows it installed (found by its
    /// cookie tag) are deleted from every switch this instance serves (in
    /// a cluster, those it masters) at once, each switch confirming with a
    /// barrier, all within one [`SWITCH_TIMEOUT`]
    /// however many switches there are. The report says how many flows
    /// were deleted and which switches did not confirm, and why.
    pub fn stop_app(&self, name: &str, keep_flows: bool) -> Result<StopReport, ControlError> {
        let i = self.app(name)?;
        if !self.ctl.pipeline.stop(i) {
            return Err(ControlError::AlreadyThere(format!(
                "application {name:?} is not running"
            )));
        }
        self.ctl.wake_all();
        if keep_flows {
            return Ok(StopReport::default());
        }
        let net = self.ctl.pipeline.net(i);
        let Some((cookie, mask)) = net.own_cookie() else {
            return Ok(StopReport::default());
        };
        // In a cluster, the switches this instance masters: the others'
        // flows are their masters' to change.
        let switches: Vec<SwitchInfo> = self
            .switches()
            .into_iter()
            .filter(|s| s.mastership.serves() && !s.fenced)
            .map(|s| s.info)
            .collect();
        let report = self.delete_everywhere(&switches, cookie, mask);
        tracing::info!(
            app = name,
            flows = report.flows_deleted,
            switches = switches.len(),
            confirmed = report.confirmed.len(),
            "flows of the stopped application deleted"
        );
        if !report.unconfirmed.is_empty() {
            let mut counts = lock(&self.ctl.stop_unconfirmed);
            for u in &report.unconfirmed {
                *counts.entry((name.to_string(), u.why.label())).or_default() += 1;
            }
            drop(counts);
            tracing::warn!(
                app = name,
                unconfirmed = report.unconfirmed.len(),
                switches = switches.len(),
                first = %FirstFew(&report.unconfirmed),
                "switches did not confirm the deletion of the stopped application's flows"
            );
        }
        Ok(report)
    }

    /// Deletes the flows whose cookie matches `cookie` in `mask` from
    /// every switch of `switches` at once, and waits for them all until
    /// one deadline: a 1.3 switch is sent a cookie-masked delete and a
    /// barrier; a 1.0 switch, which cannot delete by cookie, a flow
    /// statistics request, and once its flows come, a strict delete of
    /// each that matches and a barrier. A switch confirms with the
    /// barrier's reply (it answers in order, 1.0.0 §5.3.7, 1.3.5 §6.2, so
    /// an error for a delete has come by then).
    fn delete_everywhere(&self, switches: &[SwitchInfo], cookie: Cookie, mask: u64) -> StopReport {
        let deadline = Instant::now() + SWITCH_TIMEOUT;
        let mut replies = Replies::new();
        let mut flows_deleted = 0;
        let mut out = Vec::new();
        for (i, s) in switches.iter().enumerate() {
            out.clear();
            match s.version {
                Version::V13 => {
                    let (delete, barrier) = (self.next_xid(), self.next_xid());
                    neutral::encode_flow_delete_by_cookie(&mut out, delete, cookie, mask);
                    encode_barrier(&mut out, Version::V13, barrier);
                    let expected = [(delete, Step::FlowMods), (barrier, Step::Barrier)];
                    if self.send_expecting(&mut replies, s.id, &out, &expected, i) {
                        flows_deleted += 1;
                    }
                }
                Version::V10 => {
                    let xid = self.next_xid();
                    flow_stats_request(Version::V10).encode(xid, &mut out);
                    self.send_expecting(&mut replies, s.id, &out, &[(xid, Step::Flows)], i);
                }
            }
        }
        let outcomes = self.confirm_all(
            &mut replies,
            switches.len(),
            deadline,
            |i, parts, replies| {
                let s = &switches[i];
                let (deletes, barrier) = (self.next_xid(), self.next_xid());
                out.clear();
                let n =
                    encode_strict_deletes10(&mut out, deletes, &flow_entries(parts), cookie, mask);
                if n == 0 {
                    return Some(Ok(()));
                }
                encode_barrier(&mut out, Version::V10, barrier);
                let expected = [(deletes, Step::FlowMods), (barrier, Step::Barrier)];
                if self.send_expecting(replies, s.id, &out, &expected, i) {
                    flows_deleted += n;
                }
                None
            },
        );
        let mut report = StopReport {
            flows_deleted,
            ..StopReport::default()
        };
        for (s, outcome) in switches.iter().zip(outcomes) {
            match outcome {
                Ok(()) => report.confirmed.push(s.dpid),
                Err(why) => report.unconfirmed.push(Unconfirmed { dpid: s.dpid, why }),
            }
        }
        report
    }

    /// Waits until `deadline` for each of switches `0..n` to confirm what
    /// it was sent (the replies expected in `replies`, tagged with the
    /// switch's index): a barrier's reply confirms it; an error, or its
    /// disconnection, settles it unconfirmed; a flow statistics reply is
    /// handed to `on_flows`, which sends more and returns `None`, or
    /// settles the switch. Those still waiting at the deadline timed out.
    fn confirm_all(
        &self,
        replies: &mut Replies<(usize, Step)>,
        n: usize,
        deadline: Instant,
        mut on_flows: impl FnMut(
            usize,
            Vec<Message>,
            &mut Replies<(usize, Step)>,
        ) -> Option<Result<(), RequestError>>,
    ) -> Vec<Result<(), RequestError>> {
        let mut settled: Vec<Option<Result<(), RequestError>>> = vec![None; n];
        let mut unsettled = n;
        while unsettled > 0 {
            let Some(((i, step), outcome)) = replies.next_until(deadline) else {
                break;
            };
            if settled[i].is_some() {
                continue;
            }
            let done = match (step, outcome) {
                (_, Err(e)) => Some(Err(e)),
                (Step::Barrier, Ok(_)) => Some(Ok(())),
                // A flow-mod is answered only by an error.
                (Step::FlowMods, Ok(_)) => None,
                (Step::Flows, Ok(parts)) => on_flows(i, parts, replies),
            };
            if done.is_some() {
                settled[i] = done;
                unsettled -= 1;
            }
        }
        // Late replies go where unrequested messages go.
        replies.abandon(&self.ctl.fabric.requests);
        settled
            .into_iter()
            .map(|s| s.unwrap_or(Err(RequestError::TimedOut)))
            .collect()
    }

    /// An xid for a request of the operator's.
    fn next_xid(&self) -> Xid {
        self.ctl.fabric.next_xid()
    }

    /// Sends `out` to switch `id`, expecting answers to the xids of
    /// `expected` in `replies` (tagged with `i` and their step); if it
    /// cannot be sent, they fail at once as gone. Whether it was sent.
    fn send_expecting(
        &self,
        replies: &mut Replies<(usize, Step)>,
        id: SwitchId,
        out: &[u8],
        expected: &[(Xid, Step)],
        i: usize,
    ) -> bool {
        let requests = &self.ctl.fabric.requests;
        for &(xid, step) in expected {
            replies.expect(requests, id, xid, (i, step));
        }
        let sent = self.net.send(id, out).is_ok();
        if !sent {
            for &(xid, _) in expected {
                requests.fail(id, xid, RequestError::Gone);
            }
        }
        sent
    }

    /// How many switches have not confirmed the deletion of a stopped
    /// application's flows since the controller started: (application,
    /// reason as [`RequestError::label`] names it, count), sorted.
    pub fn stop_unconfirmed(&self) -> Vec<(String, &'static str, u64)> {
        lock(&self.ctl.stop_unconfirmed)
            .iter()
            .map(|((app, why), n)| (app.clone(), *why, *n))
            .collect()
    }

    /// Starts a stopped (or failed) application again: its `start`, then
    /// `switch_up` on each connected switch at its next service.
    pub fn start_app(&self, name: &str) -> Result<(), ControlError> {
        let i = self.app(name)?;
        if !self.ctl.pipeline.start_again(i) {
            return Err(ControlError::AlreadyThere(format!(
                "application {name:?} is already running"
            )));
        }
        self.ctl.wake_all();
        Ok(())
    }

    /// Changes some of an application's settings ([`crate::AnyApp::configure`]):
    /// all or, with an error naming the key, none.
    pub fn configure_app(
        &self,
        name: &str,
        changes: &serde_json::Value,
    ) -> Result<(), ControlError> {
        let i = self.app(name)?;
        self.ctl
            .pipeline
            .configure(i, changes)
            .map_err(ControlError::Invalid)
    }

    /// The scheduler and each worker's batching.
    pub fn scheduler(&self) -> SchedulerStatus {
        SchedulerStatus {
            kind: self.ctl.config.scheduler,
            batching: self.ctl.config.batching(),
            bdu: self.ctl.bdu(),
            workers: self.stats().workers,
        }
    }

    /// Changes the batching-delay upper bound (Maestro §3.3): within
    /// [`BDU_RANGE_US`].
    pub fn set_bdu(&self, bdu: Duration) -> Result<(), ControlError> {
        if !u64::try_from(bdu.as_micros()).is_ok_and(|us| BDU_RANGE_US.contains(&us)) {
            return Err(ControlError::Invalid(format!(
                "BDU {bdu:?} is out of range: 10 µs to 1 s"
            )));
        }
        self.ctl
            .bdu_ns
            .store(bdu.as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// A request for every flow of a switch of `version`, in every table.
fn flow_stats_request(version: Version) -> Message {
    match version {
        Version::V10 => Message::V10(v10::Message::StatsRequest(v10::StatsRequest {
            flags: 0,
            body: v10::StatsRequestBody::Flow(v10::stats::FlowStatsRequest {
                match_: v10::Match10::ALL,
                table_id: 0xff,
                out_port: PortNo::ANY,
            }),
        })),
        Version::V13 => Message::V13(v13::Message::MultipartRequest(MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::Flow(v13::multipart::FlowStatsRequest {
                table_id: v13::messages::table_id::ALL,
                out_port: PortNo::ANY,
                out_group: v13::group::group_id::ANY,
                cookie: Cookie(0),
                cookie_mask: Cookie(0),
                match_: v13::Match13::default(),
            }),
        })),
    }
}

/// The flows in the parts of a flow statistics reply.
fn flow_entries(parts: Vec<Message>) -> Vec<FlowEntry> {
    let mut flows = Vec::new();
    for p in parts {
        match p {
            Message::V10(v10::Message::StatsReply(r)) => {
                if let v10::StatsReplyBody::Flow(f) = r.body {
                    flows.extend(f.into_iter().map(FlowEntry::V10));
                }
            }
            Message::V13(v13::Message::MultipartReply(r)) => {
                if let MultipartReplyBody::Flow(f) = r.body {
                    flows.extend(f.into_iter().map(FlowEntry::V13));
                }
            }
            _ => {}
        }
    }
    flows
}

/// Every flow of switch `id`.
fn flow_stats(
    net: &Network,
    id: SwitchId,
    version: Version,
) -> Result<Vec<FlowEntry>, ControlError> {
    let parts = net
        .request(id, &flow_stats_request(version))
        .wait(SWITCH_TIMEOUT)?;
    Ok(flow_entries(parts))
}

/// Appends a BARRIER_REQUEST of `version`.
fn encode_barrier(out: &mut Vec<u8>, version: Version, xid: Xid) {
    match version {
        Version::V10 => Message::V10(v10::Message::BarrierRequest),
        Version::V13 => Message::V13(v13::Message::BarrierRequest),
    }
    .encode(xid, out);
}

/// Appends, all with `xid` (so that an error for any of them is heard), a
/// strict delete of each 1.0 flow of `flows` whose cookie matches `cookie` in `mask` (1.0
/// cannot delete by cookie); returns how many.
fn encode_strict_deletes10(
    out: &mut Vec<u8>,
    xid: Xid,
    flows: &[FlowEntry],
    cookie: Cookie,
    mask: u64,
) -> usize {
    let mut n = 0;
    for f in flows {
        let FlowEntry::V10(f) = f else { continue };
        if f.cookie.0 & mask != cookie.0 {
            continue;
        }
        let head = v10::FlowModHead {
            match_: f.match_,
            cookie: f.cookie,
            command: v10::FlowModCommand::DeleteStrict,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: f.priority,
            buffer_id: BufferId::NONE,
            out_port: PortNo::ANY,
            flags: 0,
        };
        v10::encode_flow_mod(out, xid, &head, &[]);
        n += 1;
    }
    n
}
