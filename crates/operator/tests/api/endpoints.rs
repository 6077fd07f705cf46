//! Every endpoint of `/api/v1` with a 1.0 and a 1.3 switch connected.

use crate::support::{Controller, SoftSwitch, error, wait_for};
use baton_openflow::{PortNo, Version};
use baton_switch::testutil::udp_frame;
use serde_json::{Value, json};

#[test]
fn health_apps_and_empty_views() {
    let c = Controller::start(
        &[
            ("topology", json!({})),
            ("devices", json!({})),
            ("routing", json!({})),
        ],
        None,
    );
    let (code, health) = c.get("/api/v1/health");
    assert_eq!(code, 200);
    assert_eq!(
        (health["status"].as_str(), health["switches"].as_u64()),
        (Some("ok"), Some(0))
    );
    let (code, apps) = c.get("/api/v1/apps");
    assert_eq!(code, 200);
    let names: Vec<&str> = apps
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["topology", "devices", "routing"]);
    assert_eq!(apps[0]["state"], "running");
    assert_eq!(apps[0]["counters"]["probes_sent"], 0);
    assert_eq!(apps[0]["settings"]["probe_interval_ms"], 5000);
    assert_eq!(apps[1]["reads"], json!(["topology", "peers"]));
    let (code, topo) = c.get("/api/v1/topology");
    assert_eq!((code, &topo["links"]), (200, &json!([])));
    let (code, hosts) = c.get("/api/v1/hosts");
    assert_eq!((code, &hosts["hosts"]), (200, &json!([])));
}

#[test]
fn unknown_and_malformed_datapath_ids_say_what_is_wrong() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (code, body) = c.get("/api/v1/switches/s1");
    assert_eq!(code, 400);
    assert!(error(&body).contains("bad datapath id"), "{body}");
    for id in ["00:00:00:00:00:00:00:07", "7", "0x7"] {
        for (method, path, body) in [
            ("GET", format!("/api/v1/switches/{id}"), None),
            (
                "PATCH",
                format!("/api/v1/switches/{id}"),
                Some(r#"{"weight": 2}"#),
            ),
            ("GET", format!("/api/v1/switches/{id}/flows"), None),
            ("POST", format!("/api/v1/switches/{id}/flows"), Some("{}")),
            (
                "DELETE",
                format!("/api/v1/switches/{id}/flows"),
                Some(r#"{"match": {}}"#),
            ),
        ] {
            let (code, answer) = c.call(method, &path, body);
            assert_eq!(code, 404, "{method} {path}");
            assert!(
                error(&answer).contains("00:00:00:00:00:00:00:07"),
                "{answer}"
            );
        }
    }
    let (code, body) = c.get("/api/v1/nothing");
    assert_eq!(code, 404);
    assert!(error(&body).contains("openapi.json"));
}

#[test]
fn the_openapi_document_lists_every_route_with_its_own_operation_id() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (code, doc) = c.get("/api/v1/openapi.json");
    assert_eq!(code, 200);
    let served: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    let generated = baton_operator::openapi();
    let built: Vec<&String> = generated.paths.paths.keys().collect();
    assert_eq!(served, built);
    let mut ids = Vec::new();
    let mut listed = Vec::new();
    for (path, methods) in [
        ("/api/v1/switches", &["get"][..]),
        ("/api/v1/switches/{dpid}", &["get", "patch"]),
        ("/api/v1/switches/{dpid}/flows", &["get", "post", "delete"]),
        ("/api/v1/topology", &["get"]),
        ("/api/v1/hosts", &["get"]),
        ("/api/v1/path", &["get"]),
        ("/api/v1/apps", &["get"]),
        ("/api/v1/apps/{name}/stop", &["post"]),
        ("/api/v1/apps/{name}/start", &["post"]),
        ("/api/v1/apps/{name}", &["patch"]),
        ("/api/v1/dags", &["get"]),
        ("/api/v1/reservations", &["get", "post"]),
        ("/api/v1/reservations/{id}", &["get", "delete"]),
        ("/api/v1/scheduler", &["get", "patch"]),
        ("/api/v1/cluster", &["get"]),
        ("/api/v1/health", &["get"]),
        ("/metrics", &["get"]),
        ("/api/v1/events", &["get"]),
    ] {
        listed.push(path);
        for m in methods {
            let op = &doc["paths"][path][m];
            assert!(op.is_object(), "{m} {path} missing");
            ids.push(op["operationId"].as_str().unwrap().to_string());
            // Every mutating operation says it needs the token.
            if *m != "get" {
                assert_eq!(op["security"], json!([{"bearer": []}]), "{m} {path}");
            }
        }
    }
    // Every path the document has is one listed here.
    for path in &served {
        assert!(listed.contains(&path.as_str()), "{path} is not listed");
    }
    // Every schema an operation or a schema refers to is in the document.
    let mut refs = Vec::new();
    schema_refs(&doc, &mut refs);
    assert!(refs.len() > 20, "{refs:?}");
    for r in refs {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{r} is not a schema reference"));
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "{r} refers to no schema"
        );
    }
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "operation ids are not unique: {ids:?}");
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

/// Every `$ref` in an OpenAPI document.
fn schema_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => schema_refs(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| schema_refs(v, out)),
        _ => {}
    }
}

/// The flow on `dpid` with `priority`, if any.
fn flow_with(c: &Controller, dpid: &str, priority: u64) -> Option<Value> {
    c.flows(dpid)
        .into_iter()
        .find(|f| f["priority"] == priority)
}

#[test]
fn switches_flows_apps_and_the_scheduler_with_switches_connected() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let s10 = SoftSwitch::connect(c.openflow(), 1, Version::V10, 3);
    let s13 = SoftSwitch::connect(c.openflow(), 2, Version::V13, 3);
    wait_for("both switches with their ports", || {
        let (_, s) = c.get("/api/v1/switches");
        s.as_array().is_some_and(|s| {
            s.len() == 2 && s.iter().all(|s| s["ports"].as_array().unwrap().len() == 3)
        })
    });
    let (_, s) = c.get("/api/v1/switches");
    assert_eq!(s[0]["dpid"], "00:00:00:00:00:00:00:01");
    assert_eq!(
        (s[0]["version"].as_str(), s[1]["version"].as_str()),
        (Some("1.0"), Some("1.3"))
    );
    assert_eq!(s[1]["ports"][2]["name"], "s2-eth3");

    // Weights: in range, out of range, not a number, not a field.
    let (code, sw) = c.call("PATCH", "/api/v1/switches/1", Some(r#"{"weight": 5}"#));
    assert_eq!((code, sw["weight"].as_u64()), (200, Some(5)));
    assert_eq!(c.get("/api/v1/switches/0x1").1["weight"], 5);
    assert_eq!(c.get("/api/v1/switches/0x1").1["role"], "standalone");
    for (body, code, says) in [
        (r#"{"weight": 0}"#, 422, "out of range"),
        (r#"{"weight": 5000}"#, 422, "out of range"),
        (r#"{"weight": "heavy"}"#, 400, "weight"),
        (r#"{"weight": -1}"#, 400, "weight"),
        (r#"{"wieght": 2}"#, 400, "wieght"),
        (r#"{"weight": 2"#, 400, "bad JSON"),
        ("", 400, "JSON body is required"),
    ] {
        let (got, answer) = c.call("PATCH", "/api/v1/switches/1", Some(body));
        assert_eq!(got, code, "{body}: {answer}");
        assert!(error(&answer).contains(says), "{body}: {answer}");
    }

    // Flows, both versions: added, read back, refused, deleted.
    for dpid in ["00:00:00:00:00:00:00:01", "00:00:00:00:00:00:00:02"] {
        let flows = format!("/api/v1/switches/{dpid}/flows");
        let flow = r#"{"match": {"in_port": 1, "eth_dst": "00:00:00:00:00:0b", "tcp_dst": 80},
                       "priority": 4321, "cookie": 7, "actions": ["output:2"]}"#;
        let (code, added) = c.call("POST", &flows, Some(flow));
        assert_eq!(code, 201, "{dpid}: {added}");
        assert!(
            added["cookie"].as_str().unwrap().ends_with("0007"),
            "{added}"
        );
        let f = flow_with(&c, dpid, 4321).expect("the flow is on the switch");
        assert_eq!(f["installed_by"], "operator", "{f}");
        assert_eq!(f["cookie"], added["cookie"]);
        assert_eq!(f["actions"], json!(["output:2"]));
        assert_eq!(f["match"]["tcp_dst"], 80);
        assert_eq!(f["match"]["eth_dst"], "00:00:00:00:00:0b");
        assert_eq!(f["match"]["in_port"], 1);
        // The switch refuses a port it lacks.
        let (code, answer) = c.call(
            "POST",
            &flows,
            Some(r#"{"priority": 9, "actions": ["output:99"]}"#),
        );
        assert_eq!(code, 422, "{answer}");
        assert!(error(&answer).contains("OFPET_BAD_ACTION"), "{answer}");
        // Malformed flows name the field.
        for (body, says) in [
            (r#"{"match": {"tcp_dst": "http"}}"#, "match.tcp_dst"),
            (
                r#"{"match": {"tcp_dst": 80, "ip_proto": 17}}"#,
                "match.ip_proto",
            ),
            (r#"{"match": {"eth_dst": "00:0b"}}"#, "match.eth_dst"),
            (r#"{"match": {"nw_dst": "10.0.0.1"}}"#, "nw_dst"),
            (r#"{"actions": ["output:2", "teleport"]}"#, "actions[1]"),
            (r#"{"priority": 65536}"#, "priority"),
            (r#"{"match": "everything"}"#, "match"),
            (r#"[1, 2]"#, "invalid type"),
            (r#"{"actions": ["output:2"],}"#, "bad JSON"),
        ] {
            let (code, answer) = c.call("POST", &flows, Some(body));
            assert_eq!(code, 400, "{body}: {answer}");
            assert!(error(&answer).contains(says), "{body}: {answer}");
        }
        assert!(flow_with(&c, dpid, 9).is_none());
        // Deleting needs a body naming the match; a strict delete with
        // another priority leaves the flow; with its own, removes it.
        let (code, answer) = c.call("DELETE", &flows, None);
        assert_eq!(code, 400);
        assert!(error(&answer).contains("body is required"), "{answer}");
        let (code, answer) = c.call("DELETE", &flows, Some(r#"{"match": {"in_port": "up"}}"#));
        assert_eq!(code, 400);
        assert!(error(&answer).contains("match.in_port"), "{answer}");
        let m = r#"{"in_port": 1, "eth_dst": "00:00:00:00:00:0b", "tcp_dst": 80}"#;
        let (code, _) = c.call(
            "DELETE",
            &flows,
            Some(&format!(r#"{{"match": {m}, "priority": 1}}"#)),
        );
        assert_eq!(code, 204);
        assert!(flow_with(&c, dpid, 4321).is_some());
        let (code, _) = c.call(
            "DELETE",
            &flows,
            Some(&format!(r#"{{"match": {m}, "priority": 4321}}"#)),
        );
        assert_eq!(code, 204);
        assert!(flow_with(&c, dpid, 4321).is_none(), "{dpid}");
    }

    // Applications: stop (flows kept or not), start, settings.
    let (code, stopped) = c.call(
        "POST",
        "/api/v1/apps/learning-switch/stop?keep_flows=true",
        None,
    );
    assert_eq!(code, 200, "{stopped}");
    assert_eq!(
        (
            stopped["app"]["state"].as_str(),
            stopped["flows_deleted"].as_u64()
        ),
        (Some("stopped"), Some(0))
    );
    let (code, answer) = c.call("POST", "/api/v1/apps/learning-switch/stop", None);
    assert_eq!(code, 409);
    assert!(error(&answer).contains("not running"), "{answer}");
    let (code, started) = c.call("POST", "/api/v1/apps/learning-switch/start", None);
    assert_eq!((code, started["state"].as_str()), (200, Some("running")));
    let (code, answer) = c.call("POST", "/api/v1/apps/learning-switch/start", None);
    assert_eq!(code, 409);
    assert!(error(&answer).contains("already running"), "{answer}");
    let (code, answer) = c.call(
        "POST",
        "/api/v1/apps/learning-switch/stop?keep_flows=maybe",
        None,
    );
    assert_eq!(code, 400);
    assert!(error(&answer).contains("keep_flows"), "{answer}");
    let (code, stopped) = c.call("POST", "/api/v1/apps/learning-switch/stop", None);
    assert_eq!(code, 200);
    assert!(stopped["flows_deleted"].as_u64().unwrap() >= 1, "{stopped}");
    // Both switches confirmed with a barrier's reply.
    assert_eq!(stopped["switches_confirmed"], 2, "{stopped}");
    assert_eq!(stopped["unconfirmed"], json!([]), "{stopped}");
    assert_eq!(
        c.get("/api/v1/switches").1.as_array().unwrap().len(),
        2,
        "switches stay"
    );
    c.call("POST", "/api/v1/apps/learning-switch/start", None);
    let before = c.get("/api/v1/apps").1[0]["settings"]["max_hosts"]
        .as_u64()
        .unwrap();
    let (code, app) = c.call(
        "PATCH",
        "/api/v1/apps/learning-switch",
        Some(&format!(r#"{{"max_hosts": {}}}"#, before + 1)),
    );
    assert_eq!(
        (code, app["settings"]["max_hosts"].as_u64()),
        (200, Some(before + 1))
    );
    let (code, answer) = c.call(
        "PATCH",
        "/api/v1/apps/learning-switch",
        Some(r#"{"max_hots": 3}"#),
    );
    assert_eq!(code, 422);
    assert!(error(&answer).contains("max_hots"), "{answer}");
    let (code, answer) = c.call(
        "PATCH",
        "/api/v1/apps/learning-switch",
        Some(r#"{"max_hosts": 0}"#),
    );
    assert_eq!(code, 422);
    assert!(error(&answer).contains("max_hosts"), "{answer}");
    for (method, path, body) in [
        ("POST", "/api/v1/apps/nope/stop", None),
        ("POST", "/api/v1/apps/nope/start", None),
        ("PATCH", "/api/v1/apps/nope", Some("{}")),
    ] {
        let (code, answer) = c.call(method, path, body);
        assert_eq!(code, 404, "{method} {path}");
        assert!(error(&answer).contains("nope"), "{answer}");
    }

    // The scheduler: BDU changeable, the design not.
    let (code, sched) = c.get("/api/v1/scheduler");
    assert_eq!(
        (code, sched["scheduler"].as_str(), sched["bdu_us"].as_u64()),
        (200, Some("fair"), Some(1000))
    );
    assert_eq!(sched["workers"].as_array().unwrap().len(), 2);
    let (code, sched) = c.call(
        "PATCH",
        "/api/v1/scheduler",
        Some(r#"{"bdu_us": 500, "scheduler": "fair"}"#),
    );
    assert_eq!((code, sched["bdu_us"].as_u64()), (200, Some(500)));
    for (body, code, says) in [
        (
            r#"{"bdu_us": 5}"#,
            422,
            "bdu_us: 5 is out of range: 10 to 1000000 microseconds",
        ),
        (r#"{"bdu_us": -5}"#, 400, "bdu_us: invalid value"),
        (r#"{"bdu_us": 2.5}"#, 400, "bdu_us: invalid type"),
        (
            r#"{"scheduler": "round-robin"}"#,
            409,
            "when the controller starts",
        ),
        (r#"{"batching": "static"}"#, 409, "batching"),
        (r#"{"ibt": 3}"#, 400, "ibt"),
    ] {
        let (got, answer) = c.call("PATCH", "/api/v1/scheduler", Some(body));
        assert_eq!(got, code, "{body}: {answer}");
        assert!(error(&answer).contains(says), "{body}: {answer}");
    }

    // Traffic: rates per switch and fairness over a sampling interval.
    let frame = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 9);
    wait_for("rates and fairness", || {
        for sw in [&s10, &s13] {
            sw.ports.inject(PortNo(1), &frame);
        }
        let (_, s) = c.get("/api/v1/switches");
        let (_, sched) = c.get("/api/v1/scheduler");
        s[0]["rx_per_sec"].as_f64().is_some_and(|r| r > 0.0)
            && s[1]["rx_per_sec"].as_f64().is_some_and(|r| r > 0.0)
            && sched["fairness"]["switches"] == 2
    });
    let (_, sched) = c.get("/api/v1/scheduler");
    let j = sched["fairness"]["jain"].as_f64().unwrap();
    assert!(j > 0.0 && j <= 1.0, "{sched}");
    assert!(
        sched["workers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["batches"].as_u64() > Some(0))
    );
}
