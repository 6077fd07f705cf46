//! `GET /api/v1/path` over two 1.0 switches joined by a cable, with a
//! host on each, as topology, devices and routing learn them.

use crate::support::{Cables, Controller, SoftSwitch, error, wait_for};
use baton_openflow::{PortNo, Version};
use baton_switch::testutil::udp_frame;
use serde_json::json;

const A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
const B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];

#[test]
fn the_path_between_two_hosts_switch_by_switch() {
    let c = Controller::start(
        &[
            (
                "topology",
                json!({"probe_interval_ms": 300, "settle_time_ms": 100}),
            ),
            ("devices", json!({})),
            ("routing", json!({})),
        ],
        None,
    );
    let s1 = SoftSwitch::connect(c.openflow(), 1, Version::V10, 2);
    let s2 = SoftSwitch::connect(c.openflow(), 2, Version::V10, 2);
    let _cable = Cables::lay(vec![((s1.ports.clone(), 2), (s2.ports.clone(), 2))]);
    wait_for("the link, both ways", || {
        c.get("/api/v1/topology").1["links"]
            .as_array()
            .is_some_and(|l| l.len() == 2)
    });
    wait_for("both hosts", || {
        // Each host speaks until it is learnt (its port must settle first).
        s1.ports.inject(PortNo(1), &udp_frame(A, B, 9));
        s2.ports.inject(PortNo(1), &udp_frame(B, A, 9));
        c.get("/api/v1/hosts").1["hosts"]
            .as_array()
            .is_some_and(|h| h.len() == 2)
    });
    let (code, path) = c.get("/api/v1/path?src=02:00:00:00:00:0a&dst=02:00:00:00:00:0b");
    assert_eq!(code, 200, "{path}");
    assert_eq!(
        path["hops"],
        json!([
            {"dpid": "00:00:00:00:00:00:00:01", "in_port": 1, "out_port": 2},
            {"dpid": "00:00:00:00:00:00:00:02", "in_port": 2, "out_port": 1},
        ])
    );
    assert!(path["topology_version"].as_u64() > Some(0));
    let (_, back) = c.get("/api/v1/path?dst=02:00:00:00:00:0a&src=02:00:00:00:00:0b");
    assert_eq!(back["hops"][0]["dpid"], "00:00:00:00:00:00:00:02");
    let (code, own) = c.get("/api/v1/path?src=02:00:00:00:00:0a&dst=02:00:00:00:00:0a");
    assert_eq!((code, own["hops"].as_array().map(Vec::len)), (200, Some(1)));

    for (query, code, says) in [
        (
            "src=02:00:00:00:00:0a&dst=02:00:00:00:00:0c",
            404,
            "host 02:00:00:00:00:0c is not known",
        ),
        (
            "src=02:00:00:00:00&dst=02:00:00:00:00:0b",
            400,
            "src: bad Ethernet address",
        ),
        ("src=02:00:00:00:00:0a", 400, "dst"),
    ] {
        let (got, answer) = c.get(&format!("/api/v1/path?{query}"));
        assert_eq!(got, code, "{query}: {answer}");
        assert!(error(&answer).contains(says), "{query}: {answer}");
    }
}

#[test]
fn no_path_without_the_network_applications() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (code, answer) = c.get("/api/v1/path?src=02:00:00:00:00:0a&dst=02:00:00:00:00:0b");
    assert_eq!(code, 404);
    assert!(error(&answer).contains("devices application"), "{answer}");
}
