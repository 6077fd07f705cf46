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
    let url = format!("http://{}/metrics", c.api());
    // The switch is counted when it connects, in the topology view once
    // the topology application has published its next version: wait for
    // both.
    wait_for("the switch in the metrics", || {
        let text = ureq::get(&url)
            .call()
            .ok()
            .and_then(|r| r.into_string().ok())
            .unwrap_or_default();
        ["baton_switches_connected 1", "baton_topology_switches 1"]
            .iter()
            .all(|want| text.lines().any(|l| l == *want))
    });
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
        "baton_connections_accepted_total 1",
        "# TYPE baton_connections_closed_total counter",
        "# TYPE baton_app_stop_unconfirmed_total counter",
        "# TYPE baton_message_delay_seconds histogram",
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
        "baton_switch_rx_messages_per_second{dpid=\"00:00:00:00:00:00:00:0a\"} ",
        "baton_messages_received_total{type=\"features_reply\"} ",
        "baton_messages_sent_total{type=\"features_request\"} ",
        "baton_message_delay_seconds_bucket{le=\"0.001\"} ",
        "baton_message_delay_seconds_bucket{le=\"+Inf\"} ",
        "baton_message_delay_seconds_count ",
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
        assert!(
            text.contains(&format!("# TYPE {} ", family(name, &text))),
            "{l}"
        );
        let value = l.rsplit(' ').next().unwrap();
        assert!(
            value.parse::<f64>().is_ok() || value == "NaN" || value.ends_with("Inf"),
            "{l}"
        );
    }
}

/// The family a sample's name belongs to: a histogram's samples add
/// `_bucket`, `_sum` and `_count` to its name.
fn family<'a>(name: &'a str, text: &str) -> &'a str {
    ["_bucket", "_sum", "_count"]
        .iter()
        .filter_map(|s| name.strip_suffix(s))
        .find(|f| text.contains(&format!("# TYPE {f} histogram")))
        .unwrap_or(name)
}

/// Every `expr` in a Grafana dashboard.
fn exprs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("expr", serde_json::Value::String(e)) => out.push(e.clone()),
                    _ => exprs(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| exprs(v, out)),
        _ => {}
    }
}

#[test]
fn the_grafana_dashboard_queries_only_metrics_that_exist() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/grafana-dashboard.json"
    );
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(dashboard["title"].is_string() && dashboard["panels"].is_array());
    let mut queries = Vec::new();
    exprs(&dashboard, &mut queries);
    assert!(queries.len() >= 10, "{queries:?}");
    // With no switch connected: every family is declared all the same.
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (_, text) = c.get("/metrics");
    let text = text.as_str().unwrap();
    let mut used = 0;
    for q in &queries {
        let mut rest = q.as_str();
        while let Some(at) = rest.find("baton_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            assert!(
                text.contains(&format!("# TYPE {} ", family(&name, text))),
                "{q:?} queries {name}, which /metrics lacks"
            );
            used += 1;
            rest = &rest[at + name.len()..];
        }
    }
    assert!(used >= queries.len(), "every query names a baton metric");
}
