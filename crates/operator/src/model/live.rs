//! What the live feed (`GET /api/v1/events`) sends: one [`Live`] snapshot
//! of the controller a second, and at once when the topology, the hosts,
//! the connected switches or an application's state change. The web UI
//! draws everything from it; a script may read it too.
//!
//! The switches' rates and the fairness index are the API's own (its
//! sampler's, as `GET /api/v1/switches` and `/scheduler` give them); the
//! workers' figures over an interval are counted by each feed between its
//! one-second samples.

use super::{App, Cluster, Dag, Hosts, LinkLoad, Scheduler, Topology};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The controller as the live feed sends it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Live {
    /// Milliseconds since the API started, when this was taken.
    pub at_ms: u64,
    /// The number of the feed's one-second sample its workers' figures
    /// come from (1: the feed's first, taken when it opened, whose rates
    /// are all zero). An event sent because something changed repeats
    /// the last sample's number and figures.
    pub sample: u64,
    /// Seconds the workers' figures cover (the time between the feed's
    /// last two samples; 0 for the first).
    pub interval_secs: f64,
    /// Every connected switch with its message rates over the API's last
    /// sampling interval (as `GET /api/v1/switches` has them), by
    /// datapath id.
    pub switches: Vec<LiveSwitch>,
    /// Messages per second received from all switches.
    pub rx_per_sec: f64,
    /// Messages per second sent to all switches.
    pub tx_per_sec: f64,
    /// The scheduler, as `GET /api/v1/scheduler` returns it: its design,
    /// batching and BDU, each worker's figures since the start, and
    /// Jain's fairness over the last sampling interval.
    pub scheduler: Scheduler,
    /// Each worker over the feed's last interval: what the UI charts.
    pub workers: Vec<LiveWorker>,
    /// The topology, as `GET /api/v1/topology` returns it.
    pub topology: Topology,
    /// The hosts, as `GET /api/v1/hosts` returns them.
    pub hosts: Hosts,
    /// The applications, as `GET /api/v1/apps` returns them.
    pub apps: Vec<App>,
    /// The application DAGs, as `GET /api/v1/dags` returns them.
    pub dags: Vec<Dag>,
    /// Bandwidth on demand: how many reservations there are and each
    /// link's load, as `GET /api/v1/reservations` has them (none without
    /// the `bandwidth` application).
    pub reservations: Option<LiveReservations>,
    /// The cluster, as `GET /api/v1/cluster` returns it (none on a
    /// standalone instance): the UI colours each switch by its master.
    pub cluster: Option<Cluster>,
}

/// Bandwidth on demand in the live feed: `GET /api/v1/reservations`'s
/// links, and how many reservations there are rather than each.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LiveReservations {
    /// How many reservations there are.
    pub reservations: usize,
    /// Every link with its capacity and what is reserved on it.
    pub links: Vec<LinkLoad>,
}

/// A connected switch in the live feed: `GET /api/v1/switches`'s figures
/// without the port list.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LiveSwitch {
    /// Datapath id, `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// Negotiated OpenFlow version, `1.0` or `1.3`.
    pub version: String,
    /// The switch's address, where known.
    pub peer: Option<String>,
    /// Seconds since its handshake.
    pub connected_secs: f64,
    /// Messages received from it.
    pub rx_msgs: u64,
    /// Messages sent to it.
    pub tx_msgs: u64,
    /// Messages received from it per second over the last sampling
    /// interval (none until it has been connected for one).
    pub rx_per_sec: Option<f64>,
    /// Messages sent to it per second over the last sampling interval.
    pub tx_per_sec: Option<f64>,
    /// Its service chances per scheduling round.
    pub weight: u32,
    /// Its ports.
    pub ports: usize,
    /// Its ports that are up.
    pub live_ports: usize,
}

/// One of the scheduler's workers over the feed's last interval.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LiveWorker {
    /// Its current input batching threshold (Maestro §3.3): the most
    /// messages it gathers before running the applications over them.
    pub ibt: u32,
    /// Messages it processed per second over the interval.
    pub msg_per_sec: f64,
    /// Its mean batch over the interval, in messages (0: no batch).
    pub batch: f64,
}
