//! The token: off loopback the API refuses to start without one; with
//! one, every mutating call checks it (401 without, 403 wrong), reads
//! stay open.

use crate::support::{Controller, error};
use baton_operator::{ApiOptions, ApiServer};
use serde_json::json;

/// Every mutating route, with a body it accepts.
const MUTATING: [(&str, &str, Option<&str>); 10] = [
    ("PATCH", "/api/v1/switches/1", Some(r#"{"weight": 2}"#)),
    ("POST", "/api/v1/switches/1/flows", Some("{}")),
    (
        "DELETE",
        "/api/v1/switches/1/flows",
        Some(r#"{"match": {}}"#),
    ),
    ("POST", "/api/v1/apps/learning-switch/stop", None),
    ("POST", "/api/v1/apps/learning-switch/start", None),
    ("PATCH", "/api/v1/apps/learning-switch", Some("{}")),
    ("PATCH", "/api/v1/scheduler", Some("{}")),
    ("POST", "/api/v1/reservations", Some("{}")),
    ("DELETE", "/api/v1/reservations/1", None),
    ("PUT", "/api/v1/health", None),
];

#[test]
fn every_mutating_call_checks_the_token_when_one_is_configured() {
    let c = Controller::start(&[("learning-switch", json!({}))], Some("s3cret"));
    for (method, path, body) in MUTATING {
        let (code, answer) = c.call_as(None, method, path, body);
        assert_eq!(code, 401, "{method} {path} without a token");
        assert!(error(&answer).contains("Authorization: Bearer"), "{answer}");
        let (code, answer) = c.call_as(Some("guess"), method, path, body);
        assert_eq!(code, 403, "{method} {path} with a wrong token");
        assert!(error(&answer).contains("wrong token"), "{answer}");
        // With the token the call goes through (to a 404 for the absent
        // switch, a 405 for PUT, or success).
        let (code, _) = c.call_as(Some("s3cret"), method, path, body);
        assert!(![401, 403].contains(&code), "{method} {path}: {code}");
    }
    for path in [
        "/api/v1/switches",
        "/api/v1/apps",
        "/api/v1/scheduler",
        "/api/v1/reservations",
        "/metrics",
        "/api/v1/openapi.json",
    ] {
        assert_eq!(c.call_as(None, "GET", path, None).0, 200, "{path}");
    }
}

#[test]
fn without_a_token_mutating_calls_are_open_on_loopback() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (code, _) = c.call_as(None, "POST", "/api/v1/apps/learning-switch/stop", None);
    assert_eq!(code, 200);
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused_before_binding() {
    let c = Controller::start(&[], None);
    let control = c.runtime.as_ref().unwrap().control();
    let e = ApiServer::start(
        control,
        ApiOptions {
            addr: "0.0.0.0:0".parse().unwrap(),
            token: None,
            cluster: None,
        },
    )
    .err()
    .expect("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("not a loopback address"), "{e}");
}
