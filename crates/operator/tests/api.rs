//! The REST API against a running controller (no switches yet: the
//! endpoints that need them are tested with software switches).

use baton_operator::{ApiOptions, ApiServer};
use baton_runtime::{Config, Runtime};
use serde_json::Value;

struct Running {
    api: ApiServer,
    runtime: Option<Runtime>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(r) = self.runtime.take() {
            r.stop();
        }
    }
}

fn start(apps: &[&str]) -> Running {
    let config = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        ..Config::default()
    };
    let apps = apps
        .iter()
        .map(|n| baton_apps::by_name(n).unwrap())
        .collect();
    let runtime = Runtime::start(config, apps).unwrap();
    let api = ApiServer::start(
        runtime.control(),
        ApiOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
        },
    )
    .unwrap();
    Running {
        api,
        runtime: Some(runtime),
    }
}

/// GET `path`: the status and the JSON body.
fn get(r: &Running, path: &str) -> (u16, Value) {
    let url = format!("http://{}{path}", r.api.local_addr());
    match ureq::get(&url).call() {
        Ok(resp) => (resp.status(), resp.into_json().unwrap()),
        Err(ureq::Error::Status(code, resp)) => (code, resp.into_json().unwrap()),
        Err(e) => panic!("GET {url}: {e}"),
    }
}

#[test]
fn health_apps_and_empty_views() {
    let r = start(&["topology", "devices", "routing"]);
    let (code, health) = get(&r, "/api/v1/health");
    assert_eq!(code, 200);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["switches"], 0);

    let (code, apps) = get(&r, "/api/v1/apps");
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
    assert_eq!(apps[1]["reads"], serde_json::json!(["topology"]));

    let (code, topo) = get(&r, "/api/v1/topology");
    assert_eq!(code, 200);
    assert_eq!(topo["links"], serde_json::json!([]));
    let (code, hosts) = get(&r, "/api/v1/hosts");
    assert_eq!(code, 200);
    assert_eq!(hosts["hosts"], serde_json::json!([]));
}

#[test]
fn unknown_and_malformed_datapath_ids_say_what_is_wrong() {
    let r = start(&["learning-switch"]);
    let (code, body) = get(&r, "/api/v1/switches/s1");
    assert_eq!(code, 400);
    assert!(
        body["error"].as_str().unwrap().contains("bad datapath id"),
        "{body}"
    );
    for id in ["00:00:00:00:00:00:00:07", "7", "0x7"] {
        let (code, body) = get(&r, &format!("/api/v1/switches/{id}"));
        assert_eq!(code, 404, "{id}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("00:00:00:00:00:00:00:07"),
            "{body}"
        );
    }
    let (code, body) = get(&r, "/api/v1/nothing");
    assert_eq!(code, 404);
    assert!(body["error"].as_str().unwrap().contains("openapi.json"));
}

#[test]
fn the_openapi_document_lists_every_route() {
    let r = start(&["learning-switch"]);
    let (code, doc) = get(&r, "/api/v1/openapi.json");
    assert_eq!(code, 200);
    let served: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    let generated = baton_operator::openapi();
    let built: Vec<&String> = generated.paths.paths.keys().collect();
    assert_eq!(served, built);
    for path in [
        "/api/v1/switches",
        "/api/v1/switches/{dpid}",
        "/api/v1/topology",
        "/api/v1/hosts",
        "/api/v1/apps",
        "/api/v1/health",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} missing");
    }
}
