//! `GET /api/v1/path` over two 1.0 switches joined by a cable, with a
//! host on each, as topology, devices and routing learn them.

use crate::support::{Controller, error, two_hosts};
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
    let _network = two_hosts(&c, A, B);
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
