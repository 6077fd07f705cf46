//! The web UI's files and the live feed against a running controller (no
//! switches: the browser test in `crates/baton/tests/ui.rs` draws a real
//! Open vSwitch network): what `/` and `/ui/...` serve, what a feed's
//! first event holds, and that stopping the server ends open feeds
//! instead of waiting for them.

use baton_cluster::status::{ClusterSource, ClusterStatus, Mastership, Member};
use baton_operator::{ApiOptions, ApiServer};
use baton_runtime::{Config, Runtime};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn start(apps: &[&str]) -> (ApiServer, Runtime) {
    let config = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 2,
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
            ..ApiOptions::default()
        },
    )
    .unwrap();
    (api, runtime)
}

/// GET `path`: status, content type, CSP and body.
fn get(api: &ApiServer, path: &str) -> (u16, String, Option<String>, String) {
    let url = format!("http://{}{path}", api.local_addr());
    let resp = match ureq::get(&url).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("GET {url}: {e}"),
    };
    (
        resp.status(),
        resp.header("content-type").unwrap_or("").to_string(),
        resp.header("content-security-policy").map(str::to_string),
        resp.into_string().unwrap(),
    )
}

/// Opens the live feed with a plain socket; returns the reader past the
/// response's headers, which it checks.
fn open_feed(api: &ApiServer) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(api.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /api/v1/events HTTP/1.1\r\nHost: baton\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/event-stream"), "{head}");
    r
}

/// The next `snapshot` event's JSON (chunked framing lines are skipped:
/// they never start with `data:`).
fn next_snapshot(r: &mut BufReader<TcpStream>) -> Value {
    let mut event = None;
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "the feed ended");
        let line = line.trim_end();
        if line == "event: snapshot" {
            event = Some(());
        } else if let (Some(()), Some(data)) = (event, line.strip_prefix("data: ")) {
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[test]
fn the_page_and_its_files_are_served_from_the_binary() {
    let (api, runtime) = start(&["topology", "devices"]);
    let (code, mime, csp, body) = get(&api, "/");
    assert_eq!(code, 200);
    assert!(mime.starts_with("text/html"), "{mime}");
    assert!(body.contains("<script type=\"module\" src=\"/ui/app.js\">"));
    let csp = csp.expect("the page has a Content-Security-Policy");
    assert!(csp.contains("default-src 'self'"), "{csp}");

    for (path, want) in [
        ("/ui/app.js", "text/javascript"),
        ("/ui/vendor/cytoscape.esm.min.mjs", "text/javascript"),
        ("/ui/vendor/uPlot.min.css", "text/css"),
    ] {
        let (code, mime, _, body) = get(&api, path);
        assert_eq!(code, 200, "{path}");
        assert!(mime.starts_with(want), "{path}: {mime}");
        assert!(!body.is_empty(), "{path}");
    }
    let (code, _, _, body) = get(&api, "/ui/../Cargo.toml");
    assert_eq!(code, 404, "{body}");
    let (code, mime, _, body) = get(&api, "/ui/nothing.js");
    assert_eq!(code, 404);
    assert!(mime.starts_with("application/json"), "{mime}");
    assert!(body.contains("the UI is at /"), "{body}");
    api.stop();
    runtime.stop();
}

#[test]
fn the_feed_sends_a_snapshot_at_once_and_then_every_second() {
    let (api, runtime) = start(&["topology", "devices", "routing"]);
    let mut feed = open_feed(&api);
    let t = Instant::now();
    let first = next_snapshot(&mut feed);
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(first["sample"], 1);
    assert_eq!(first["switches"], serde_json::json!([]));
    assert_eq!(first["workers"].as_array().unwrap().len(), 2);
    assert_eq!(first["scheduler"]["fairness"], Value::Null);
    assert_eq!(first["scheduler"]["scheduler"], "fair");
    assert_eq!(first["topology"]["links"], serde_json::json!([]));
    assert_eq!(first["hosts"]["hosts"], serde_json::json!([]));
    // Standalone: no cluster, and the page draws as it always has.
    assert_eq!(first["cluster"], Value::Null);
    let names: Vec<&str> = first["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["topology", "devices", "routing"]);
    // Routing brings its DAG: the routes, then the flows that follow them.
    assert_eq!(first["dags"][0]["name"], "routing");
    assert_eq!(
        first["dags"][0]["stages"],
        serde_json::json!([["routes"], ["route-flow"]])
    );
    assert_eq!(
        first["reservations"],
        Value::Null,
        "no bandwidth application"
    );

    let second = next_snapshot(&mut feed);
    let gap = t.elapsed();
    assert!(
        gap > Duration::from_millis(800) && gap < Duration::from_millis(2000),
        "{gap:?}"
    );
    assert_eq!(second["sample"], 2);
    let interval = second["interval_secs"].as_f64().unwrap();
    assert!((0.9..1.6).contains(&interval), "{interval}");

    // An application stopped: the feed says so before its next sample.
    runtime.control().stop_app("routing", true).unwrap();
    let t = Instant::now();
    let third = next_snapshot(&mut feed);
    assert_eq!(third["apps"][2]["state"], "stopped");
    assert!(
        t.elapsed() < Duration::from_millis(600),
        "{:?}",
        t.elapsed()
    );
    api.stop();
    runtime.stop();
}

#[test]
fn the_feed_carries_the_links_reservations_with_the_bandwidth_application() {
    let (api, runtime) = start(&["topology", "devices", "bandwidth", "routing"]);
    let mut feed = open_feed(&api);
    let first = next_snapshot(&mut feed);
    assert_eq!(
        first["reservations"],
        serde_json::json!({"reservations": 0, "links": []})
    );
    api.stop();
    runtime.stop();
}

/// A cluster member that always reports the same status.
struct Fixed(ClusterStatus);

impl ClusterSource for Fixed {
    fn status(&self) -> ClusterStatus {
        self.0.clone()
    }
}

#[test]
fn a_clustered_feed_carries_each_datapaths_master() {
    let config = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        ..Config::default()
    };
    let runtime = Runtime::start(config, Vec::new()).unwrap();
    let status = ClusterStatus {
        node: "a".into(),
        connected: true,
        members: vec![Member {
            node: "a".into(),
            openflow: "127.0.0.1:6653".into(),
            api: None,
            masters: 1,
        }],
        masters: vec![Mastership {
            dpid: "0000000000000001".into(),
            master: Some("a".into()),
            generation: Some(1),
            connected: vec!["a".into()],
        }],
        etcd: Vec::new(),
        role_changes: 1,
        facts: Default::default(),
        ledger: None,
    };
    let api = ApiServer::start(
        runtime.control(),
        ApiOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            cluster: Some(Arc::new(Fixed(status))),
            ..ApiOptions::default()
        },
    )
    .unwrap();
    let mut feed = open_feed(&api);
    let first = next_snapshot(&mut feed);
    assert_eq!(first["cluster"]["node"], "a");
    assert_eq!(
        first["cluster"]["masters"],
        serde_json::json!([{"dpid": "00:00:00:00:00:00:00:01", "master": "a",
                            "generation": 1, "connected": ["a"]}])
    );
    api.stop();
    runtime.stop();
}

#[test]
fn stopping_the_server_ends_open_feeds() {
    let (api, runtime) = start(&["learning-switch"]);
    let mut feeds: Vec<_> = (0..3).map(|_| open_feed(&api)).collect();
    for f in &mut feeds {
        next_snapshot(f);
    }
    let t = Instant::now();
    let (done, stopped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        api.stop();
        let _ = done.send(());
    });
    stopped
        .recv_timeout(Duration::from_secs(5))
        .expect("the server stops within 5 s with feeds open");
    let took = t.elapsed();
    assert!(took < Duration::from_secs(2), "stop took {took:?}");
    for mut f in feeds {
        let mut rest = Vec::new();
        // The chunked body ends (or the connection closes): no hang.
        let _ = f.read_to_end(&mut rest);
    }
    runtime.stop();
}

#[test]
fn the_feed_is_in_the_openapi_document() {
    let doc = baton_operator::openapi();
    let op = doc.paths.paths["/api/v1/events"].get.as_ref().unwrap();
    let json = serde_json::to_value(op).unwrap();
    assert!(
        json["responses"]["200"]["content"]["text/event-stream"].is_object(),
        "{json:#}"
    );
    let schemas = serde_json::to_value(doc.components.as_ref().unwrap()).unwrap();
    for s in ["Live", "LiveSwitch", "LiveWorker", "LiveReservations"] {
        assert!(schemas["schemas"][s].is_object(), "{s} missing");
    }
}

/// The graph's switches coloured by master when the snapshot has a
/// cluster, and as always without one: `graph.js`'s `elementsOf` run by
/// Node.js (skipped where there is no `node`; the browser test in
/// `crates/baton/tests/ui.rs` draws the page itself).
#[test]
fn the_graph_colours_switches_by_their_master_only_in_a_cluster() {
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/ui/graph.js");
    let script = format!(
        r#"import {{ elementsOf, MEMBER_COLOURS, NO_MASTER }} from "file://{graph}";
const live = {{ switches: [{{dpid: "s1"}}, {{dpid: "s2"}}, {{dpid: "s3"}}],
  topology: {{ switches: [], links: [] }}, hosts: {{ hosts: [] }}, cluster: null }};
const show = () => [...elementsOf(live).values()].map((e) => [e.classes, e.data.colour || null]);
const standalone = show();
live.cluster = {{ node: "b", members: [{{node: "b"}}, {{node: "a"}}],
  masters: [{{dpid: "s1", master: "a"}}, {{dpid: "s2", master: "b"}}, {{dpid: "s3", master: null}}] }};
console.log(JSON.stringify({{ standalone, clustered: show(), colours: MEMBER_COLOURS, grey: NO_MASTER }}));
"#
    );
    let out = match std::process::Command::new("node")
        .args(["--input-type=module", "-e", &script])
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: no node ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["colours"];
    assert_eq!(
        v["standalone"],
        serde_json::json!([["switch", null], ["switch", null], ["switch", null]])
    );
    // One colour per member, in the order of their names.
    assert_eq!(
        v["clustered"],
        serde_json::json!([
            ["switch mastered", c[0]],
            ["switch mastered", c[1]],
            ["switch masterless", null]
        ])
    );
    assert_ne!(c[0], c[1]);
    assert_ne!(v["grey"], c[0]);
}
