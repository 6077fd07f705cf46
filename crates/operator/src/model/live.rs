//! What the live feed (`GET /api/v1/events`) sends: one [`Live`] snapshot
//! of the controller a second, and at once when the topology, the hosts,
//! the connected switches or an application's state change. The web UI
//! draws everything from it; a script may read it too.
//!
//! Rates are counted by the feed itself between its one-second samples
//! (each client its own), so a figure means the same thing whoever asks.

use super::{App, Hosts, Topology};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The controller as the live feed sends it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Live {
    /// Milliseconds since the API started, when this was taken.
    pub at_ms: u64,
    /// The number of the one-second sample the rates come from (1: a
    /// feed's first, taken when it opened, whose rates are all zero). An
    /// event sent because something changed repeats the last sample's
    /// number and rates.
    pub sample: u64,
    /// Seconds the rates cover (the time between the last two samples; 0
    /// for the first).
    pub interval_secs: f64,
    /// Every connected switch with its message rates, by datapath id.
    pub switches: Vec<LiveSwitch>,
    /// The scheduler's workers.
    pub workers: Vec<LiveWorker>,
    /// Messages per second received from all switches.
    pub rx_rate: f64,
    /// Messages per second sent to all switches.
    pub tx_rate: f64,
    /// Jain's fairness index over the switches' received-message rates,
    /// each divided by the switch's weight, over the last interval: 1
    /// when every switch got service in proportion to its weight, 1/n
    /// when one of n got all of it. `null` with no switch or no traffic.
    pub fairness: Option<f64>,
    /// The topology, as `GET /api/v1/topology` returns it.
    pub topology: Topology,
    /// The hosts, as `GET /api/v1/hosts` returns them.
    pub hosts: Hosts,
    /// The applications, as `GET /api/v1/apps` returns them.
    pub apps: Vec<App>,
}

/// A connected switch in the live feed.
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
    /// Messages per second received from it over the last interval.
    pub rx_rate: f64,
    /// Messages per second sent to it over the last interval.
    pub tx_rate: f64,
    /// Its service chances per scheduling round.
    pub weight: u32,
    /// Its ports.
    pub ports: usize,
    /// Its ports that are up.
    pub live_ports: usize,
}

/// One of the scheduler's workers in the live feed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LiveWorker {
    /// Its current input batching threshold (Maestro §3.3): the most
    /// messages it gathers before running the applications over them.
    pub ibt: u32,
    /// Messages it processed per second over the last interval.
    pub msg_rate: f64,
    /// Its mean batch over the last interval, in messages (0: no batch).
    pub batch: f64,
    /// Its mean batching delay since it started, in microseconds.
    pub batch_delay_us: f64,
    /// Messages it processed since it started.
    pub messages: u64,
    /// Batches it processed since it started.
    pub batches: u64,
}
