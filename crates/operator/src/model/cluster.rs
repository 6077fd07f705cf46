//! The cluster as `GET /api/v1/cluster` sends it: its members, which
//! member masters each datapath, and the etcd endpoints with their
//! health, built from what the cluster member reports
//! ([`baton_cluster::status::ClusterStatus`]). Datapath ids are written
//! as everywhere else in the API (`00:00:00:00:00:00:00:01`), so that a
//! mastership is matched with its switch by equality.

use baton_cluster::status::{ClusterStatus, Endpoint, Mastership, Member};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The cluster as this instance sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Cluster {
    /// This instance's name (`--node`).
    #[schema(example = "baton-a")]
    pub node: String,
    /// Whether this instance holds a live etcd lease now.
    pub connected: bool,
    /// The members with a live lease, by name.
    pub members: Vec<ClusterMember>,
    /// One entry per datapath any member is connected to, by datapath id.
    pub masters: Vec<DatapathMaster>,
    /// The etcd endpoints this instance was given, each with its health.
    pub etcd: Vec<EtcdEndpoint>,
    /// Mastership changes on this instance since it started (became
    /// master or stopped being master of a datapath).
    pub role_changes: u64,
    /// The shared views: this instance's facts written to etcd, the
    /// other members' held.
    pub facts: SharedFacts,
    /// The bandwidth ledger the members share, when `bandwidth` runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<SharedLedger>,
}

/// The bandwidth ledger the members share, as one instance sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SharedLedger {
    /// Reservations this instance granted (etcd transactions that ran).
    pub granted: u64,
    /// Requests it refused: a link of the path was full.
    pub refused: u64,
    /// Its transactions that lost a race with another's and were decided
    /// again.
    pub conflicts: u64,
    /// Reservations it released.
    pub released: u64,
    /// Requests it could not decide (etcd out of reach, no lease).
    pub failed: u64,
    /// Reservations in the ledger now, every instance's.
    pub reservations: u64,
}

/// The facts of the shared views (topology, hosts) as one instance sees
/// them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SharedFacts {
    /// This instance's fact keys put in etcd since it started.
    pub written: u64,
    /// ... and deleted.
    pub deleted: u64,
    /// The other members' facts it holds now.
    pub peers: u64,
}

impl Cluster {
    /// The API's form of `s`.
    pub fn new(s: &ClusterStatus) -> Cluster {
        Cluster {
            node: s.node.clone(),
            connected: s.connected,
            members: s.members.iter().map(ClusterMember::from).collect(),
            masters: s.masters.iter().map(DatapathMaster::from).collect(),
            etcd: s.etcd.iter().map(EtcdEndpoint::from).collect(),
            role_changes: s.role_changes,
            facts: SharedFacts {
                written: s.facts.written,
                deleted: s.facts.deleted,
                peers: s.facts.peers,
            },
            ledger: s.ledger.as_ref().map(|l| SharedLedger {
                granted: l.granted,
                refused: l.refused,
                conflicts: l.conflicts,
                released: l.released,
                failed: l.failed,
                reservations: l.held,
            }),
        }
    }
}

/// One member of the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClusterMember {
    /// Its name.
    #[schema(example = "baton-a")]
    pub node: String,
    /// Where its switches connect (OpenFlow).
    #[schema(example = "10.0.0.1:6653")]
    pub openflow: String,
    /// Where its API listens, if it serves one.
    #[schema(example = "10.0.0.1:8080")]
    pub api: Option<String>,
    /// How many datapaths it masters.
    pub masters: usize,
}

impl From<&Member> for ClusterMember {
    fn from(m: &Member) -> ClusterMember {
        ClusterMember {
            node: m.node.clone(),
            openflow: m.openflow.clone(),
            api: m.api.clone(),
            masters: m.masters,
        }
    }
}

/// Who masters one datapath.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DatapathMaster {
    /// Datapath id.
    #[schema(example = "00:00:00:00:00:00:00:01")]
    pub dpid: String,
    /// The master's name, if any member masters it now.
    #[schema(example = "baton-a")]
    pub master: Option<String>,
    /// The generation id the master sent in its ROLE_REQUEST.
    pub generation: Option<u64>,
    /// The members connected to the datapath.
    pub connected: Vec<String>,
}

impl From<&Mastership> for DatapathMaster {
    fn from(m: &Mastership) -> DatapathMaster {
        DatapathMaster {
            dpid: dpid(&m.dpid),
            master: m.master.clone(),
            generation: m.generation,
            connected: m.connected.clone(),
        }
    }
}

/// One etcd endpoint and whether it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EtcdEndpoint {
    /// Its URL.
    #[schema(example = "http://10.0.0.9:2379")]
    pub url: String,
    /// Whether its last status request succeeded.
    pub healthy: bool,
    /// How long its last status request took, in milliseconds.
    pub latency_ms: Option<f64>,
    /// Its error, when it did not answer.
    pub error: Option<String>,
}

impl From<&Endpoint> for EtcdEndpoint {
    fn from(e: &Endpoint) -> EtcdEndpoint {
        EtcdEndpoint {
            url: e.url.clone(),
            healthy: e.healthy,
            latency_ms: e.latency_ms,
            error: e.error.clone(),
        }
    }
}

/// A datapath id as the rest of the API writes it: the cluster's 16 hex
/// digits (`0000000000000001`) become `00:00:00:00:00:00:00:01`; any
/// other form is kept as it came.
fn dpid(s: &str) -> String {
    if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return s.to_string();
    }
    let lower = s.to_ascii_lowercase();
    let pairs: Vec<&str> = (0..8).map(|i| &lower[2 * i..2 * i + 2]).collect();
    pairs.join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datapath_ids_are_written_as_the_api_writes_them() {
        assert_eq!(dpid("000000000000002A"), "00:00:00:00:00:00:00:2a");
        assert_eq!(dpid("0000000000000010"), "00:00:00:00:00:00:00:10");
        assert_eq!(dpid("00:00:00:00:00:00:00:01"), "00:00:00:00:00:00:00:01");
        assert_eq!(dpid("42"), "42");
    }

    #[test]
    fn the_status_is_carried_field_for_field() {
        let s = ClusterStatus {
            node: "a".into(),
            connected: true,
            members: vec![Member {
                node: "a".into(),
                openflow: "10.0.0.1:6653".into(),
                api: None,
                masters: 1,
            }],
            masters: vec![Mastership {
                dpid: "0000000000000001".into(),
                master: Some("a".into()),
                generation: Some(3),
                connected: vec!["a".into()],
            }],
            etcd: vec![Endpoint {
                url: "http://e:2379".into(),
                healthy: false,
                latency_ms: None,
                error: Some("refused".into()),
            }],
            role_changes: 2,
            facts: Default::default(),
            ledger: None,
        };
        let c = Cluster::new(&s);
        assert_eq!(c.node, "a");
        assert!(c.connected);
        assert_eq!(c.members[0].openflow, "10.0.0.1:6653");
        assert_eq!(c.masters[0].dpid, "00:00:00:00:00:00:00:01");
        assert_eq!(c.masters[0].generation, Some(3));
        assert_eq!(c.etcd[0].error.as_deref(), Some("refused"));
        assert_eq!(c.role_changes, 2);
    }
}
