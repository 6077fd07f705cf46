//! `/metrics` with switches connected, and the Grafana dashboard in the
//! repository querying only metrics that exist.

use crate::support::{Controller, SoftSwitch, wait_for};
use baton_openflow::Version;
use serde_json::json;

#[test]
fn metrics_name_each_switch_worker_and_application() {
    let c = Controller::start(
        &[("topology", json!({})), ("learning-switch", json!({}))],
        None,
    );
    let _s = SoftSwitch::connect(c.openflow(), 0xa, Version::V13, 2);
    wait_for("the switch", || {
        c.get("/api/v1/switches")
            .1
            .as_array()
            .is_some_and(|s| s.len() == 1)
    });
    let url = format!("http://{}/metrics", c.api());
    let resp = ureq::get(&url).call().unwrap();
    assert!(resp.content_type().starts_with("text/plain"));
    let text = resp.into_string().unwrap();
    for line in [
        "baton_switches_connected 1",
        "# TYPE baton_switch_rx_messages_total counter",
        "baton_switch_weight{dpid=\"00:00:00:00:00:00:00:0a\"} 1",
        "baton_app_running{app=\"learning-switch\"} 1",
        "baton_app_panics_total{app=\"topology\"} 0",
        "# TYPE baton_fairness_jain gauge",
        "baton_topology_switches 1",
        "baton_hosts 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line:?} missing from\n{text}"
        );
    }
    for prefix in [
        "baton_switch_rx_messages_total{dpid=\"00:00:00:00:00:00:00:0a\"} ",
        "baton_switch_tx_bytes_total{dpid=\"00:00:00:00:00:00:00:0a\"} ",
        "baton_worker_batches_total{worker=\"1\"} ",
        "baton_worker_ibt{worker=\"0\"} ",
        "baton_app_events_total{app=\"topology\",event=\"probes_sent\"} ",
        "baton_info{version=\"",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(prefix)),
            "{prefix:?} missing from\n{text}"
        );
    }
    // Every sample line is `name{labels} value` with a declared family.
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split(['{', ' ']).next().unwrap();
        assert!(name.starts_with("baton_"), "{l}");
        assert!(text.contains(&format!("# TYPE {name} ")), "{l}");
        let value = l.rsplit(' ').next().unwrap();
        assert!(
            value.parse::<f64>().is_ok() || value == "NaN" || value.ends_with("Inf"),
            "{l}"
        );
    }
}
