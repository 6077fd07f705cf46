//! `GET /api/v1/dags` and `baton show dags` with a DAG that runs on a
//! timer in a live controller.

use crate::support::{Controller, wait_for};
use baton_operator::client::{self, Client, Output, Show};
use baton_runtime::dag::{Dag, Trigger};
use baton_runtime::testing::Tick;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn dags_are_listed_with_their_sets_and_runs() {
    let dag = Dag::new(
        "clock",
        vec![Arc::new(Tick)],
        &[],
        Trigger::Every(Duration::from_millis(50)),
    )
    .unwrap();
    let c = Controller::with_dags(Vec::new(), vec![dag], None);
    wait_for("two commits", || {
        c.get("/api/v1/dags").1[0]["commits"]
            .as_u64()
            .is_some_and(|n| n >= 2)
    });
    let (code, dags) = c.get("/api/v1/dags");
    assert_eq!(code, 200);
    let d = &dags[0];
    assert_eq!(d["name"], "clock");
    assert_eq!(d["stages"], json!([["tick"]]));
    assert_eq!(d["trigger"], "every 50ms");
    assert_eq!(
        (&d["reads"], &d["writes"]),
        (&json!(["ticks"]), &json!(["ticks"]))
    );
    assert_eq!(
        (d["aborts"].as_u64(), d["conflicts"].as_u64()),
        (Some(0), Some(0))
    );
    let api = c.api().to_string();
    let t = client::show(&Client::new(&api, None), &Show::Dags, Output::Table).unwrap();
    assert!(t.starts_with("DAG "), "{t}");
    assert!(t.contains("clock") && t.contains("every 50ms"), "{t}");
}
