//! What the operator sees of a cluster ([`ClusterStatus`]): its members
//! and their health, which member masters which datapath, and the etcd
//! endpoints with their health. `GET /api/v1/cluster` and `baton show
//! cluster` print it.

use serde::{Deserialize, Serialize};

/// The cluster as one instance sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterStatus {
    /// This instance's name (`--node`).
    pub node: String,
    /// Whether this instance holds a live etcd lease now and its last
    /// request to etcd succeeded.
    pub connected: bool,
    /// The members with a live lease, by name.
    pub members: Vec<Member>,
    /// One entry per datapath any member is connected to, by datapath id.
    pub masters: Vec<Mastership>,
    /// The etcd endpoints this instance was given, each with its health.
    pub etcd: Vec<Endpoint>,
    /// Mastership changes on this instance since it started (became master
    /// or stopped being master of a datapath).
    pub role_changes: u64,
    /// The shared views: this instance's facts written, the others' held.
    #[serde(default)]
    pub facts: Facts,
    /// The shared bandwidth ledger, when `bandwidth` runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<Ledger>,
}

/// The shared bandwidth ledger, as one instance sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    /// Reservations this instance granted.
    pub granted: u64,
    /// Requests it refused: a link of the path was full.
    pub refused: u64,
    /// Its transactions that lost a race and were decided again.
    pub conflicts: u64,
    /// Reservations it released.
    pub released: u64,
    /// Requests it could not decide (etcd out of reach, no lease).
    pub failed: u64,
    /// Reservations in the ledger now, every instance's.
    pub held: u64,
}

/// The shared views, as one instance sees them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// This instance's fact keys put in etcd since it started.
    pub written: u64,
    /// ... and deleted.
    pub deleted: u64,
    /// The other members' facts it holds now.
    pub peers: u64,
}

/// One member of the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub node: String,
    /// Where its switches connect (OpenFlow).
    pub openflow: String,
    /// Where its API listens, if it serves one.
    pub api: Option<String>,
    /// How many datapaths it masters.
    pub masters: usize,
}

/// Who masters one datapath.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mastership {
    /// The datapath id, as 16 hex digits.
    pub dpid: String,
    /// The master's name, if any member masters it now.
    pub master: Option<String>,
    /// The generation id the master sent in its ROLE_REQUEST.
    pub generation: Option<u64>,
    /// The members connected to the datapath.
    pub connected: Vec<String>,
}

/// One etcd endpoint and whether it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    pub url: String,
    pub healthy: bool,
    /// How long its last status request took, in milliseconds.
    pub latency_ms: Option<f64>,
    /// Its error, when it did not answer.
    pub error: Option<String>,
}

/// Where the operator interface reads the cluster from (the running
/// cluster member, or a fixed status in tests).
pub trait ClusterSource: Send + Sync {
    /// The cluster as this instance sees it now. Answers from memory: it
    /// never waits for etcd.
    fn status(&self) -> ClusterStatus;
}
