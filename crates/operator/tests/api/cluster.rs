//! A clustered instance's API with a fixed cluster status (two members,
//! three datapaths, two etcd endpoints): `GET /api/v1/cluster`, the
//! `baton_cluster_...` metrics and `baton show cluster`; and a standalone
//! instance's 404 for each.

use crate::support::{Controller, error};
use baton_cluster::status::{ClusterSource, ClusterStatus, Endpoint, Mastership, Member};
use baton_operator::client::{self, Client, ClientError, Output, Show};
use serde_json::{Value, json};
use std::sync::Arc;

/// A cluster member that always reports the same status.
struct Fixed(ClusterStatus);

impl ClusterSource for Fixed {
    fn status(&self) -> ClusterStatus {
        self.0.clone()
    }
}

/// baton-a masters datapath 1, baton-b datapath 2; datapath 0x0a has no
/// master. One etcd endpoint answers, the other does not.
fn status() -> ClusterStatus {
    ClusterStatus {
        node: "baton-a".into(),
        connected: true,
        members: vec![
            Member {
                node: "baton-a".into(),
                openflow: "10.0.0.1:6653".into(),
                api: Some("10.0.0.1:8080".into()),
                masters: 1,
            },
            Member {
                node: "baton-b".into(),
                openflow: "10.0.0.2:6653".into(),
                api: None,
                masters: 1,
            },
        ],
        masters: vec![
            Mastership {
                dpid: "0000000000000001".into(),
                master: Some("baton-a".into()),
                generation: Some(7),
                connected: vec!["baton-a".into(), "baton-b".into()],
            },
            Mastership {
                dpid: "0000000000000002".into(),
                master: Some("baton-b".into()),
                generation: Some(3),
                connected: vec!["baton-b".into()],
            },
            Mastership {
                dpid: "000000000000000a".into(),
                master: None,
                generation: None,
                connected: vec!["baton-a".into()],
            },
        ],
        etcd: vec![
            Endpoint {
                url: "http://10.0.0.9:2379".into(),
                healthy: true,
                latency_ms: Some(2.5),
                error: None,
            },
            Endpoint {
                url: "http://10.0.0.10:2379".into(),
                healthy: false,
                latency_ms: None,
                error: Some("connection refused".into()),
            },
        ],
        role_changes: 5,
        facts: Default::default(),
        ledger: None,
    }
}

fn clustered() -> Controller {
    Controller::clustered(&["learning-switch"], Arc::new(Fixed(status())))
}

#[test]
fn the_cluster_as_the_api_sends_it() {
    let c = clustered();
    let (code, v) = c.get("/api/v1/cluster");
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["node"], "baton-a");
    assert_eq!(v["connected"], true);
    assert_eq!(v["role_changes"], 5);
    assert_eq!(
        v["members"],
        json!([
            {"node": "baton-a", "openflow": "10.0.0.1:6653", "api": "10.0.0.1:8080", "masters": 1},
            {"node": "baton-b", "openflow": "10.0.0.2:6653", "api": null, "masters": 1},
        ])
    );
    // Datapath ids as the rest of the API writes them.
    assert_eq!(
        v["masters"],
        json!([
            {"dpid": "00:00:00:00:00:00:00:01", "master": "baton-a", "generation": 7,
             "connected": ["baton-a", "baton-b"]},
            {"dpid": "00:00:00:00:00:00:00:02", "master": "baton-b", "generation": 3,
             "connected": ["baton-b"]},
            {"dpid": "00:00:00:00:00:00:00:0a", "master": null, "generation": null,
             "connected": ["baton-a"]},
        ])
    );
    assert_eq!(v["etcd"][0]["healthy"], true);
    assert_eq!(v["etcd"][0]["latency_ms"], 2.5);
    assert_eq!(v["etcd"][1]["healthy"], false);
    assert_eq!(v["etcd"][1]["error"], "connection refused");
    assert_eq!(v["etcd"][1]["latency_ms"], Value::Null);
}

#[test]
fn a_standalone_instance_says_it_is_not_in_a_cluster() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (code, v) = c.get("/api/v1/cluster");
    assert_eq!(code, 404, "{v}");
    assert!(
        error(&v).contains("not in a cluster") && error(&v).contains("--cluster"),
        "{v}"
    );
    let (_, text) = c.get("/metrics");
    let text = text.as_str().unwrap();
    assert!(!text.contains("baton_cluster_"), "{text}");
    let e = client::show(
        &Client::new(&c.api().to_string(), None),
        &Show::Cluster,
        Output::Table,
    )
    .unwrap_err();
    assert!(matches!(e, ClientError::Api { status: 404, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "this instance is not in a cluster (start it with --cluster) (HTTP 404)"
    );
}

#[test]
fn the_cluster_metrics() {
    let c = clustered();
    let (code, text) = c.get("/metrics");
    assert_eq!(code, 200);
    let text = text.as_str().unwrap();
    for line in [
        "# TYPE baton_cluster_role_changes_total counter",
        "baton_cluster_role_changes_total 5",
        "# TYPE baton_cluster_members gauge",
        "baton_cluster_members 2",
        "# TYPE baton_cluster_masters gauge",
        "baton_cluster_masters{node=\"baton-a\"} 1",
        "baton_cluster_masters{node=\"baton-b\"} 1",
        "# TYPE baton_cluster_connected gauge",
        "baton_cluster_connected 1",
        "# TYPE baton_cluster_etcd_up gauge",
        "baton_cluster_etcd_up{endpoint=\"http://10.0.0.9:2379\"} 1",
        "baton_cluster_etcd_up{endpoint=\"http://10.0.0.10:2379\"} 0",
        "# TYPE baton_cluster_etcd_latency_seconds gauge",
        "baton_cluster_etcd_latency_seconds{endpoint=\"http://10.0.0.9:2379\"} 0.0025",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line:?} missing from\n{text}"
        );
    }
    // No latency for the endpoint that did not answer.
    assert!(
        !text.contains("baton_cluster_etcd_latency_seconds{endpoint=\"http://10.0.0.10:2379\"}")
    );
    // The rest of the metrics are still there, and every family is
    // declared once, with HELP and TYPE before its samples.
    assert!(text.lines().any(|l| l == "baton_switches_connected 0"));
    let mut declared = Vec::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let name = rest.split(' ').next().unwrap();
            assert!(!declared.contains(&name), "{name} declared twice");
            assert!(text.contains(&format!("# HELP {name} ")), "{name}");
            declared.push(name);
        } else if l.starts_with("baton_cluster_") {
            let name = l.split(['{', ' ']).next().unwrap();
            assert_eq!(declared.last(), Some(&name), "{l} outside its family");
            let value = l.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{l}");
        }
    }
}

#[test]
fn baton_show_cluster_prints_members_etcd_and_masters() {
    let c = clustered();
    let api = c.api().to_string();
    let reader = Client::new(&api, None);
    let t = client::show(&reader, &Show::Cluster, Output::Table).unwrap();
    assert_eq!(
        t,
        "node baton-a, holds an etcd lease, 5 role changes\n\
         shared views: 0 facts written to etcd, 0 deleted; 0 of the other members' held\n\
         MEMBER   OPENFLOW       API            MASTERS\n\
         baton-a  10.0.0.1:6653  10.0.0.1:8080  1\n\
         baton-b  10.0.0.2:6653  -              1\n\
         \n\
         ETCD                   HEALTH  LATENCY  ERROR\n\
         http://10.0.0.9:2379   up      2.5 ms   -\n\
         http://10.0.0.10:2379  down    -        connection refused\n\
         \n\
         DPID                     MASTER   GENERATION  CONNECTED\n\
         00:00:00:00:00:00:00:01  baton-a  7           baton-a,baton-b\n\
         00:00:00:00:00:00:00:02  baton-b  3           baton-b\n\
         00:00:00:00:00:00:00:0a  -        -           baton-a\n"
    );
    let j = client::show(&reader, &Show::Cluster, Output::Json).unwrap();
    let v: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v, c.get("/api/v1/cluster").1);
}

#[test]
fn the_openapi_document_describes_the_cluster() {
    let doc = serde_json::to_value(baton_operator::openapi()).unwrap();
    let get = &doc["paths"]["/api/v1/cluster"]["get"];
    assert_eq!(get["operationId"], "get_cluster");
    assert_eq!(
        get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Cluster"
    );
    assert_eq!(
        get["responses"]["404"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
    let schemas = &doc["components"]["schemas"];
    for (schema, fields) in [
        (
            "Cluster",
            &[
                "node",
                "connected",
                "members",
                "masters",
                "etcd",
                "role_changes",
                "facts",
                "ledger",
            ][..],
        ),
        ("SharedFacts", &["written", "deleted", "peers"]),
        (
            "SharedLedger",
            &[
                "granted",
                "refused",
                "conflicts",
                "released",
                "failed",
                "reservations",
            ],
        ),
        ("ClusterMember", &["node", "openflow", "api", "masters"]),
        (
            "DatapathMaster",
            &["dpid", "master", "generation", "connected"],
        ),
        ("EtcdEndpoint", &["url", "healthy", "latency_ms", "error"]),
    ] {
        for f in fields {
            assert!(
                schemas[schema]["properties"][f].is_object(),
                "{schema}.{f} missing: {}",
                schemas[schema]
            );
        }
    }
}
