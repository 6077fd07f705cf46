//! What the REST API sends and receives, as JSON: the contract scripts and
//! the web UI rely on, kept apart from the runtime's and the
//! applications' own types so that those can change without breaking it.
//!
//! Datapath ids are strings `00:00:00:00:00:00:00:01`, Ethernet addresses
//! `00:00:00:00:00:01`, durations numbers in the unit their name ends
//! with (`_secs`, `_us`). Flows have a module of their own
//! ([`crate::flow`]); the scheduler's types are in `model/scheduler.rs`,
//! the bandwidth reservations' in `model/reservations.rs`, the cluster's
//! in `model/cluster.rs`.

mod cluster;
pub mod live;
mod reservations;
mod scheduler;

pub use cluster::{
    Cluster, ClusterMember, DatapathMaster, EtcdEndpoint, SharedFacts, SharedLedger,
};
pub use reservations::{LinkLoad, NewReservation, Reservation, ReservationList, ReservationOrigin};
pub use scheduler::{BDU_US, Fairness, Scheduler, SchedulerPatch, Worker, bdu_from_us};

use crate::sampler::Rates;
use baton_apps::views::{Host as HostView, Link as LinkView, PortRef};
use baton_openflow::neutral::PortDesc;
use baton_runtime::Mastership;
use baton_runtime::control::{StopReport, SwitchStatus};
use baton_runtime::dag::DagStatus;
use baton_runtime::pipeline::{AppStatus, Lifecycle};
use baton_runtime::requests::RequestError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;
use utoipa::ToSchema;

/// A connected switch.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Switch {
    /// Datapath id, `00:00:00:00:00:00:00:01`.
    #[schema(example = "00:00:00:00:00:00:00:01")]
    pub dpid: String,
    /// Negotiated OpenFlow version, `1.0` or `1.3`.
    #[schema(example = "1.3")]
    pub version: String,
    /// The switch's address, where known.
    #[schema(example = "127.0.0.1:40522")]
    pub peer: Option<String>,
    /// Seconds since its handshake.
    pub connected_secs: f64,
    /// Messages received from it.
    pub rx_msgs: u64,
    /// Messages sent to it.
    pub tx_msgs: u64,
    /// Bytes sent to it.
    pub tx_bytes: u64,
    /// Messages received from it per second over the last sampling
    /// interval (none until it has been connected for one).
    pub rx_per_sec: Option<f64>,
    /// Messages sent to it per second over the last sampling interval.
    pub tx_per_sec: Option<f64>,
    /// Its service chances per scheduling round (weighted max-min).
    pub weight: u32,
    /// Whether this instance serves it: `standalone` (not in a cluster),
    /// `master` or `slave` (in a cluster; a slave's applications do not
    /// serve the switch).
    #[schema(example = "standalone")]
    pub role: String,
    /// Whether the switch accepted the role: always standalone; in a
    /// cluster, false until it accepts one and after it refuses a slave
    /// role (an OpenFlow 1.3 switch treats such a session as EQUAL).
    pub role_confirmed: bool,
    /// In a cluster, whether this instance is its master but cannot know
    /// its lease alive (after a stall, or with etcd unreachable): it then
    /// sends the switch nothing that changes it until the lease is renewed
    /// or another instance takes the switch over. Always false otherwise.
    pub fenced: bool,
    /// Its ports.
    pub ports: Vec<Port>,
}

impl Switch {
    /// The API's form of `s`, with its rates over the last interval.
    pub fn new(s: &SwitchStatus, rates: Option<Rates>) -> Switch {
        Switch {
            dpid: s.info.dpid.to_string(),
            version: version_number(s.info.version).to_string(),
            peer: s.info.peer.map(|p| p.to_string()),
            connected_secs: s.connected_for.as_secs_f64(),
            rx_msgs: s.rx_msgs,
            tx_msgs: s.tx_msgs,
            tx_bytes: s.tx_bytes,
            rx_per_sec: rates.map(|r| r.rx_per_sec),
            tx_per_sec: rates.map(|r| r.tx_per_sec),
            weight: s.weight,
            role: s.mastership.name().to_string(),
            role_confirmed: s.mastership == Mastership::Standalone || s.role_generation.is_some(),
            fenced: s.fenced,
            ports: s.ports.iter().map(Port::from).collect(),
        }
    }
}

/// What `PATCH /api/v1/switches/{dpid}` may change.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchPatch {
    /// Service chances per round, 1 to 1000.
    pub weight: Option<u32>,
}

/// `1.0` or `1.3`.
pub fn version_number(v: baton_openflow::Version) -> &'static str {
    match v {
        baton_openflow::Version::V10 => "1.0",
        baton_openflow::Version::V13 => "1.3",
    }
}

/// A switch port.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Port {
    /// Port number.
    pub no: u32,
    /// Its name on the switch (the interface name on Open vSwitch).
    pub name: String,
    /// Its Ethernet address.
    pub mac: String,
    /// Up: neither link down, administratively down nor blocked.
    pub live: bool,
    /// Link down.
    pub link_down: bool,
    /// Administratively down.
    pub admin_down: bool,
    /// Blocked (by spanning tree, for one).
    pub blocked: bool,
    /// Current speed in kbit/s, where the switch says.
    pub speed_kbps: Option<u32>,
}

impl From<&PortDesc> for Port {
    fn from(p: &PortDesc) -> Port {
        Port {
            no: p.no.0,
            name: p.name.clone(),
            mac: p.hw_addr.to_string(),
            live: p.is_live(),
            link_down: p.link_down,
            admin_down: p.admin_down,
            blocked: p.blocked,
            speed_kbps: p.speed_kbps,
        }
    }
}

/// One end of a link, or where a host is attached.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
pub struct Endpoint {
    /// Datapath id.
    pub dpid: String,
    /// Port number.
    pub port: u32,
}

impl From<PortRef> for Endpoint {
    fn from(p: PortRef) -> Endpoint {
        Endpoint {
            dpid: p.dpid.to_string(),
            port: p.port.0,
        }
    }
}

/// A link discovered between two switch ports, in one direction (a probe
/// sent out of `src` arrived on `dst`); a working cable is two links.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
pub struct Link {
    /// Where the probe left.
    pub src: Endpoint,
    /// Where it arrived.
    pub dst: Endpoint,
}

impl From<LinkView> for Link {
    fn from(l: LinkView) -> Link {
        Link {
            src: l.src.into(),
            dst: l.dst.into(),
        }
    }
}

/// The topology as discovery knows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Topology {
    /// The version of the topology view (0: no topology application runs
    /// or it has published nothing yet).
    pub version: u64,
    /// The switches discovery knows, by datapath id.
    pub switches: Vec<String>,
    /// Every link, in both directions.
    pub links: Vec<Link>,
}

/// A host the network has seen.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Host {
    /// Its Ethernet address.
    #[schema(example = "00:00:00:00:00:01")]
    pub mac: String,
    /// The VLAN it was seen on, if tagged.
    pub vlan: Option<u16>,
    /// IPv4 addresses it used.
    pub ipv4: Vec<String>,
    /// IPv6 addresses it used.
    pub ipv6: Vec<String>,
    /// Where it is attached.
    pub attachment: Endpoint,
    /// Seconds since it was first seen.
    pub first_seen_secs_ago: f64,
    /// Seconds since it was last seen (as of the view's last refresh).
    pub last_seen_secs_ago: f64,
}

impl Host {
    /// The API's form of `h`, with ages counted from `now`.
    pub fn new(h: &HostView, now: Instant) -> Host {
        Host {
            mac: h.mac.to_string(),
            vlan: h.vlan,
            ipv4: h.ipv4.iter().map(|a| a.to_string()).collect(),
            ipv6: h.ipv6.iter().map(|a| a.to_string()).collect(),
            attachment: h.at.into(),
            first_seen_secs_ago: now.saturating_duration_since(h.first_seen).as_secs_f64(),
            last_seen_secs_ago: now.saturating_duration_since(h.last_seen).as_secs_f64(),
        }
    }
}

/// The hosts the network has seen.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Hosts {
    /// The version of the hosts view (0: no devices application runs or
    /// it has published nothing yet).
    pub version: u64,
    /// Every host, by Ethernet address.
    pub hosts: Vec<Host>,
}

/// The two hosts `GET /api/v1/path` joins.
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PathQuery {
    /// The source host's Ethernet address.
    pub src: String,
    /// The destination host's Ethernet address.
    pub dst: String,
}

/// One switch a path crosses: where the packets come in and leave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Hop {
    /// Datapath id.
    pub dpid: String,
    /// The port packets arrive on.
    pub in_port: u32,
    /// The port they leave by.
    pub out_port: u32,
}

/// The way between two hosts, switch by switch.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Path {
    /// The source host.
    pub src: String,
    /// The destination host.
    pub dst: String,
    /// The version of the topology the path was computed from.
    pub topology_version: u64,
    /// Each switch on the way, from the source's to the destination's.
    pub hops: Vec<Hop>,
}

/// Where an application stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppState {
    /// Getting events.
    Running,
    /// Stopped by the operator.
    Stopped,
    /// Stopped because it panicked (see `error`).
    Failed,
}

/// An application DAG (Maestro thesis §3.2.4): its applications by stage,
/// what starts it, the views it reads and writes, and its runs.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Dag {
    /// Its name.
    pub name: String,
    /// Its applications, stage by stage: those of one stage run together,
    /// after every earlier stage.
    pub stages: Vec<Vec<String>>,
    /// What starts it: `views: a, b` or `every 1s`.
    pub trigger: String,
    /// The views it reads (the union of its applications' inputs).
    pub reads: Vec<String>,
    /// The views it writes (the union of their outputs).
    pub writes: Vec<String>,
    /// Runs started, reruns included.
    pub runs: u64,
    /// Runs committed.
    pub commits: u64,
    /// Times it was queued behind a conflicting DAG.
    pub conflicts: u64,
    /// Runs repeated because a view it read changed outside any DAG.
    pub reruns: u64,
    /// Runs committed although views that trigger it had changed since it
    /// read them (its inputs changed faster than it ran; a newer run
    /// follows).
    pub late_commits: u64,
    /// Runs aborted by a failed application.
    pub aborts: u64,
    /// The last committed run's duration, microseconds (0 before one).
    pub last_run_us: u64,
}

impl From<&DagStatus> for Dag {
    fn from(d: &DagStatus) -> Dag {
        let names = |v: &[&'static str]| v.iter().map(|s| s.to_string()).collect();
        Dag {
            name: d.name.clone(),
            stages: d.stages.clone(),
            trigger: d.trigger.clone(),
            reads: names(&d.reads),
            writes: names(&d.writes),
            runs: d.runs,
            commits: d.commits,
            conflicts: d.conflicts,
            reruns: d.reruns,
            late_commits: d.late_commits,
            aborts: d.aborts,
            last_run_us: d.last_us,
        }
    }
}

/// An application of the pipeline.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct App {
    /// Its name.
    pub name: String,
    /// Where it stands.
    pub state: AppState,
    /// The panic that stopped it, when `failed`.
    pub error: Option<String>,
    /// How many times it panicked.
    pub panics: u64,
    /// The top 16 bits of the cookies of the flows it installs.
    pub cookie_tag: u16,
    /// The views it reads.
    pub reads: Vec<String>,
    /// The views it writes.
    pub writes: Vec<String>,
    /// What it has done, by name.
    pub counters: BTreeMap<String, u64>,
    /// Its settings.
    #[schema(value_type = Object)]
    pub settings: serde_json::Value,
}

impl From<&AppStatus> for App {
    fn from(a: &AppStatus) -> App {
        let (state, error) = match &a.lifecycle {
            Lifecycle::Running => (AppState::Running, None),
            Lifecycle::Stopped => (AppState::Stopped, None),
            Lifecycle::Failed(why) => (AppState::Failed, Some(why.clone())),
        };
        App {
            name: a.name.clone(),
            state,
            error,
            panics: a.panics,
            cookie_tag: a.cookie_tag,
            reads: a.reads.iter().map(|s| s.to_string()).collect(),
            writes: a.writes.iter().map(|s| s.to_string()).collect(),
            counters: a
                .counters
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            settings: a.settings.clone(),
        }
    }
}

/// How `POST /api/v1/apps/{name}/stop` stops it.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StopQuery {
    /// Leave the flows it installed on the switches (default: delete
    /// them, found by its cookie tag).
    #[serde(default)]
    pub keep_flows: bool,
}

/// An application just stopped.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AppStopped {
    /// The application now.
    pub app: App,
    /// Flows deleted (a 1.3 switch deletes by cookie and does not say how
    /// many: each counts as one).
    pub flows_deleted: usize,
    /// Switches that confirmed the deletion (a barrier's reply).
    #[serde(default)]
    pub switches_confirmed: usize,
    /// Switches that did not, and why, by datapath id: every switch was
    /// asked at once and waited for until one deadline (3 s).
    #[serde(default)]
    pub unconfirmed: Vec<UnconfirmedSwitch>,
}

impl AppStopped {
    /// The application `app` and what its stop did to its flows.
    pub fn new(app: App, report: &StopReport) -> AppStopped {
        AppStopped {
            app,
            flows_deleted: report.flows_deleted,
            switches_confirmed: report.confirmed.len(),
            unconfirmed: report
                .unconfirmed
                .iter()
                .map(|u| UnconfirmedSwitch {
                    dpid: u.dpid.to_string(),
                    reason: StopFailure::from(&u.why),
                    detail: u.why.to_string(),
                })
                .collect(),
        }
    }
}

/// A switch that did not confirm the deletion of a stopped application's
/// flows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UnconfirmedSwitch {
    /// Datapath id.
    #[schema(example = "00:00:00:00:00:00:00:01")]
    pub dpid: String,
    /// Why.
    pub reason: StopFailure,
    /// In words (a refusal's OpenFlow error).
    #[schema(example = "the switch did not reply in time")]
    pub detail: String,
}

/// Why a switch did not confirm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopFailure {
    /// No reply before the deadline.
    TimedOut,
    /// It disconnected.
    Gone,
    /// It answered with an OFPT_ERROR.
    Refused,
    /// Its connection changed version under the request (a new switch in
    /// its place).
    WrongVersion,
}

impl From<&RequestError> for StopFailure {
    fn from(e: &RequestError) -> StopFailure {
        match e {
            RequestError::TimedOut => StopFailure::TimedOut,
            RequestError::Gone => StopFailure::Gone,
            RequestError::Refused(_) => StopFailure::Refused,
            RequestError::WrongVersion => StopFailure::WrongVersion,
        }
    }
}

/// A flow just added.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FlowAdded {
    /// The switch.
    pub dpid: String,
    /// The cookie it carries: the operator's tag and the posted bits.
    #[schema(example = "0x9d2c000000000005")]
    pub cookie: String,
}

/// Whether the controller is up, and what it is.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// Always `ok` when it answers.
    pub status: String,
    /// baton's version.
    pub version: String,
    /// Seconds since the API started.
    pub uptime_secs: f64,
    /// Switches connected.
    pub switches: usize,
}

/// What went wrong.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What was wrong with the request, or why it could not be done.
    pub error: String,
}
