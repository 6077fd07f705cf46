//! The command-line client's library against a running controller: every
//! `show` as a table and as JSON, `app stop|start|set`, and its errors.

use crate::support::{Controller, SoftSwitch, wait_for};
use baton_openflow::Version;
use baton_operator::client::{self, AppAction, Client, ClientError, Output, Show};
use serde_json::{Value, json};

#[test]
fn show_and_app_as_tables_and_json() {
    let c = Controller::start(
        &[
            ("topology", json!({})),
            ("devices", json!({})),
            ("learning-switch", json!({})),
        ],
        Some("tok"),
    );
    let _s = SoftSwitch::connect(c.openflow(), 0x2a, Version::V13, 2);
    // A 1.3 switch is listed once its FEATURES_REPLY is in, its ports
    // when its port description follows: wait for both.
    wait_for("the switch and its ports", || {
        c.get("/api/v1/switches")
            .1
            .as_array()
            .is_some_and(|s| s.len() == 1 && s[0]["ports"].as_array().is_some_and(|p| p.len() == 2))
    });
    let api = c.api().to_string();
    let reader = Client::new(&api, None);
    let show = |what: Show| client::show(&reader, &what, Output::Table).unwrap();

    let t = show(Show::Switches);
    assert!(t.starts_with("DPID "), "{t}");
    assert!(t.contains("00:00:00:00:00:00:00:2a  1.3"), "{t}");
    assert!(t.contains("2/2"), "ports live/total: {t}");
    let t = show(Show::Flows("42".into()));
    assert!(
        t.starts_with("00:00:00:00:00:00:00:2a (OpenFlow 1.3): "),
        "{t}"
    );
    assert!(t.contains("output:controller"), "the table-miss flow: {t}");
    assert!(show(Show::Links).starts_with("FROM"));
    assert!(show(Show::Hosts).starts_with("MAC"));
    let t = show(Show::Apps);
    assert!(
        t.lines()
            .any(|l| l.starts_with("learning-switch") && l.contains("running")),
        "{t}"
    );
    let t = show(Show::Scheduler);
    assert!(
        t.starts_with("scheduler fair, adaptive batching, BDU 1000 us"),
        "{t}"
    );
    assert!(t.contains("WORKER"), "{t}");

    for what in [
        Show::Switches,
        Show::Links,
        Show::Hosts,
        Show::Flows("42".into()),
        Show::Apps,
        Show::Scheduler,
    ] {
        let j = client::show(&reader, &what, Output::Json).unwrap();
        let v: Value = serde_json::from_str(&j).unwrap_or_else(|e| panic!("{what:?}: {e}"));
        assert!(v.is_object() || v.is_array(), "{what:?}");
    }

    // Changes need the token.
    let stop = AppAction::Stop { keep_flows: true };
    let e = client::app(&reader, "learning-switch", &stop, Output::Table).unwrap_err();
    assert!(matches!(e, ClientError::Api { status: 401, .. }), "{e}");
    assert!(e.to_string().contains("--token"), "{e}");
    let writer = Client::new(&format!("http://{api}/"), Some("tok".into()));
    let t = client::app(&writer, "learning-switch", &stop, Output::Table).unwrap();
    assert!(
        t.contains("stopped") && t.contains("flows deleted: 0"),
        "{t}"
    );
    let t = client::app(&writer, "learning-switch", &AppAction::Start, Output::Table).unwrap();
    assert!(t.contains("running"), "{t}");
    let set = AppAction::Set(vec!["probe_interval_ms=1500".into()]);
    let j = client::app(&writer, "topology", &set, Output::Json).unwrap();
    let v: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["settings"]["probe_interval_ms"], 1500);
    let e = client::app(
        &writer,
        "topology",
        &AppAction::Set(vec!["probe_interval_ms".into()]),
        Output::Table,
    )
    .unwrap_err();
    assert!(matches!(e, ClientError::Usage(_)), "{e}");
    let e = client::app(&writer, "nope", &AppAction::Start, Output::Table).unwrap_err();
    assert!(
        e.to_string()
            .contains("no application is called \"nope\" (HTTP 404)"),
        "{e}"
    );
    let e = client::show(&reader, &Show::Flows("7".into()), Output::Table).unwrap_err();
    assert!(
        e.to_string()
            .contains("no switch 00:00:00:00:00:00:00:07 is connected"),
        "{e}"
    );
}
