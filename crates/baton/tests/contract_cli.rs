//! `baton contract simulate|sweep` on a small network of its own: the
//! table, the JSON it writes, and the errors it gives.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn baton(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .output()
        .expect("baton runs")
}

/// A temporary directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("baton-contract-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        Dir(d)
    }

    fn path(&self, file: &str) -> String {
        self.0.join(file).to_string_lossy().into_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A ring of six routers with two chords, in the committed topologies'
/// format.
fn network(dir: &Dir) -> String {
    let path = dir.path("ring.json");
    let links: Vec<String> = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 0),
        (0, 3),
        (1, 4),
    ]
    .iter()
    .map(|(a, b)| format!(r#"{{"a": {a}, "b": {b}, "km": 300}}"#))
    .collect();
    let text = format!(
        r#"{{"name": "ring6", "nodes": ["a", "b", "c", "d", "e", "f"], "links": [{}]}}"#,
        links.join(", ")
    );
    std::fs::write(&path, text).expect("write the topology");
    path
}

fn json(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(path)).expect("the JSON was written");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn simulate_prints_both_modes_and_writes_them_as_json() {
    let dir = Dir::new("simulate");
    let topo = network(&dir);
    let out_json = dir.path("run.json");
    let out = baton(&[
        "contract",
        "simulate",
        "--topology",
        &topo,
        "--scenario",
        "link-failure",
        "--failed",
        "6",
        "--load",
        "0.3",
        "--budget",
        "200",
        "--seed",
        "4",
        "--json",
        &out_json,
    ]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("link 6 (a - d) fails"), "{said}");
    assert!(
        said.contains("Loss-Num") && said.contains("No Coordination"),
        "{said}"
    );
    let v = json(&out_json);
    assert_eq!(v["topology"], "ring6");
    assert_eq!(v["params"]["seed"], 4);
    assert_eq!(v["params"]["load"], 0.3);
    assert_eq!(v["run"]["failure"]["Link"], 6);
    let (c, n) = (&v["run"]["contract"], &v["run"]["no_coordination"]);
    assert_eq!(c["flows"], n["flows"]);
    assert!(c["flows"].as_u64().expect("a count") > 0);
    assert_eq!(n["approvals"], 0);
    assert!(c["approval_requests"].as_u64().expect("a count") > 0);
}

#[test]
fn sweep_runs_every_failure_of_its_scenario_for_each_seed() {
    let dir = Dir::new("sweep");
    let topo = network(&dir);
    let out_json = dir.path("sweep.json");
    let out = baton(&[
        "contract",
        "sweep",
        "--topology",
        &topo,
        "--scenario",
        "node-failure",
        "--seeds",
        "2",
        "--sample",
        "4",
        "--load",
        "0.3",
        "--budget",
        "200",
        "--json",
        &out_json,
    ]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("node-failure: 4 failures per seed"), "{said}");
    assert!(
        said.contains("Loss-Num, CONTRACT minus No Coord."),
        "{said}"
    );
    let v = json(&out_json);
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 8);
    // The same four routers for both seeds.
    let failed = |seed: u64| -> Vec<&serde_json::Value> {
        runs.iter()
            .filter(|r| r["seed"] == seed)
            .map(|r| &r["failure"])
            .collect()
    };
    assert_eq!(failed(1), failed(2));
    assert_eq!(v["seeds"], serde_json::json!([1, 2]));
    let s = &v["summaries"][0];
    assert_eq!(s["scenario"], "node-failure");
    assert_eq!(s["contract"]["loss_num"]["samples"], 2);
}

#[test]
fn a_failure_or_scenario_that_does_not_exist_is_refused_with_a_reason() {
    let dir = Dir::new("errors");
    let topo = network(&dir);
    let out = baton(&["contract", "simulate", "--topology", &topo, "--failed", "8"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("ring6 has 8 links"), "{said}");
    let out = baton(&["contract", "sweep", "--scenario", "flood"]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no scenario \"flood\""), "{said}");
    let out = baton(&[
        "contract",
        "sweep",
        "--topology",
        &topo,
        "--scenario",
        "node-failure",
        "--toggles",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("only links toggle"), "{said}");
    let out = baton(&["contract", "simulate", "--topology", "atlantis"]);
    assert_eq!(out.status.code(), Some(1));
}
