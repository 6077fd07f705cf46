//! `/api/v1/reservations` and `baton show reservations`: bad requests and
//! absent hosts or applications answered with a 4xx that says why, and,
//! over two 1.0 switches joined by a 2500 kbit/s cable with a host on
//! each, a reservation made, refused when it would oversubscribe the
//! cable, replaced and released.

use crate::support::{Controller, error, two_hosts, wait_for};
use baton_operator::client::{self, Client, Output, Show};
use serde_json::{Value, json};

const A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
const B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];
const AB: &str = r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 2000, "duration_secs": 600}"#;

/// The network applications with bandwidth on demand before routing.
fn controller(bandwidth: Value) -> Controller {
    Controller::start(
        &[
            (
                "topology",
                json!({"probe_interval_ms": 300, "settle_time_ms": 100}),
            ),
            ("devices", json!({})),
            ("bandwidth", bandwidth),
            ("routing", json!({})),
        ],
        None,
    )
}

#[test]
fn bad_requests_unknown_hosts_and_reservations_say_what_is_wrong() {
    let c = controller(json!({}));
    let (code, list) = c.get("/api/v1/reservations");
    assert_eq!(
        (code, list),
        (200, json!({"reservations": [], "links": []}))
    );
    let (code, answer) = c.call("POST", "/api/v1/reservations", Some(AB));
    assert_eq!(code, 404, "{answer}");
    assert!(
        error(&answer).contains("host 02:00:00:00:00:0a is not known"),
        "{answer}"
    );
    for (body, code, says) in [
        (
            r#"{"src": "02:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 1, "duration_secs": 1}"#,
            400,
            "src: bad Ethernet address",
        ),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "duration_secs": 1}"#,
            400,
            "missing field `kbps`",
        ),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": -5, "duration_secs": 1}"#,
            400,
            "kbps: invalid value",
        ),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 1, "duration_secs": 1, "for": "me"}"#,
            400,
            "unknown field `for`",
        ),
        (r#"{"src": "02:00:00:00:00:0a""#, 400, "bad JSON"),
        ("", 400, "JSON body is required"),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 0, "duration_secs": 1}"#,
            422,
            "kbps: at least 1",
        ),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 1, "duration_secs": 0}"#,
            422,
            "duration_secs: 0 is out of range",
        ),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 1, "duration_secs": 18446744073709551615}"#,
            422,
            "duration_secs: 18446744073709551615 is out of range",
        ),
        (
            r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0a", "kbps": 1, "duration_secs": 1}"#,
            422,
            "the same host",
        ),
    ] {
        let (got, answer) = c.call("POST", "/api/v1/reservations", Some(body));
        assert_eq!(got, code, "{body}: {answer}");
        assert!(error(&answer).contains(says), "{body}: {answer}");
    }
    for (method, path, code, says) in [
        ("GET", "/api/v1/reservations/7", 404, "no reservation 7"),
        ("DELETE", "/api/v1/reservations/7", 404, "no reservation 7"),
        (
            "GET",
            "/api/v1/reservations/seven",
            400,
            "bad reservation number",
        ),
        (
            "DELETE",
            "/api/v1/reservations/-1",
            400,
            "bad reservation number",
        ),
    ] {
        let (got, answer) = c.call(method, path, None);
        assert_eq!(got, code, "{method} {path}: {answer}");
        assert!(error(&answer).contains(says), "{method} {path}: {answer}");
    }
    // Stopped, it cannot keep a reservation (no expiry, no flow
    // removals): refused before the hosts are looked at.
    let (code, _) = c.call("POST", "/api/v1/apps/bandwidth/stop", None);
    assert_eq!(code, 200);
    let (code, answer) = c.call("POST", "/api/v1/reservations", Some(AB));
    assert_eq!(code, 409, "{answer}");
    assert!(error(&answer).contains("stopped"), "{answer}");
}

#[test]
fn without_the_bandwidth_application_the_list_is_empty_and_the_rest_404() {
    let c = Controller::start(&[("learning-switch", json!({}))], None);
    let (code, list) = c.get("/api/v1/reservations");
    assert_eq!(
        (code, list),
        (200, json!({"reservations": [], "links": []}))
    );
    for (method, path, body) in [
        ("POST", "/api/v1/reservations", Some(AB)),
        ("GET", "/api/v1/reservations/1", None),
        ("DELETE", "/api/v1/reservations/1", None),
    ] {
        let (code, answer) = c.call(method, path, body);
        assert_eq!(code, 404, "{method} {path}: {answer}");
        assert!(
            error(&answer).contains("no bandwidth application"),
            "{method} {path}: {answer}"
        );
    }
}

/// The link between the switches, as the API names it.
fn cable() -> Value {
    json!({"src": {"dpid": "00:00:00:00:00:00:00:01", "port": 2},
           "dst": {"dpid": "00:00:00:00:00:00:00:02", "port": 2}})
}

/// The cable's load in the list.
fn load(c: &Controller) -> Value {
    let (code, list) = c.get("/api/v1/reservations");
    assert_eq!(code, 200, "{list}");
    let links = list["links"].as_array().unwrap();
    assert_eq!(links.len(), 1, "{list}");
    assert_eq!(links[0]["link"], cable());
    links[0].clone()
}

/// The flows on switch `dpid` for the pair A -> B.
fn pair_flows(c: &Controller, dpid: &str) -> Vec<Value> {
    c.flows(dpid)
        .into_iter()
        .filter(|f| {
            f["match"]["eth_src"] == "02:00:00:00:00:0a"
                && f["match"]["eth_dst"] == "02:00:00:00:00:0b"
        })
        .collect()
}

#[test]
fn reserved_refused_when_full_listed_replaced_and_released() {
    // Flow requests ask for more than the cable carries, so the hosts'
    // own packets are refused and the only reservations are the test's.
    let c = controller(json!({
        "flow_kbps": 2501,
        "capacity": [{"a": "1/2", "b": "2/2", "kbps": 2500}],
    }));
    let _network = two_hosts(&c, A, B);
    assert_eq!(
        load(&c),
        json!({"link": cable(), "capacity_kbps": 2500, "reserved_kbps": 0})
    );

    // Routing publishes its routes a moment after the topology: until
    // then there is no path.
    let mut made = Value::Null;
    wait_for("a reservation on a route", || {
        let (code, answer) = c.call("POST", "/api/v1/reservations", Some(AB));
        if code == 409 && error(&answer).contains("no path") {
            return false;
        }
        assert_eq!(code, 201, "{answer}");
        made = answer;
        true
    });
    let id = made["id"].as_u64().expect("a number");
    assert_eq!(
        (&made["src"], &made["dst"], &made["kbps"], &made["origin"]),
        (
            &json!("02:00:00:00:00:0a"),
            &json!("02:00:00:00:00:0b"),
            &json!(2000),
            &json!("operator")
        )
    );
    assert_eq!(
        made["path"],
        json!(["00:00:00:00:00:00:00:01/2", "00:00:00:00:00:00:00:02/1"])
    );
    assert_eq!(made["links"], json!([cable()]));
    let expires = made["expires_in_secs"].as_f64().expect("an expiry");
    assert!(expires <= 600.0, "{made}");
    assert!(made["age_secs"].is_f64(), "{made}");
    // Its flows went in along the path.
    for (dpid, out) in [("1", "output:2"), ("2", "output:1")] {
        wait_for("the reservation's flow", || {
            pair_flows(&c, dpid)
                .iter()
                .any(|f| f["actions"] == json!([out]))
        });
    }

    // The other way crosses the same cable: 2000 + 1000 > 2500.
    let ba = r#"{"src": "02:00:00:00:00:0b", "dst": "02:00:00:00:00:0a", "kbps": 1000, "duration_secs": 60}"#;
    let (code, answer) = c.call("POST", "/api/v1/reservations", Some(ba));
    assert_eq!(code, 409, "{answer}");
    assert_eq!(
        error(&answer),
        "link 00:00:00:00:00:00:00:01/2 -> 00:00:00:00:00:00:00:02/2 would be oversubscribed: \
         2000 kbit/s reserved of 2500 kbit/s, 1000 kbit/s asked"
    );

    // Listed, one by one and with the cable's share.
    let (code, list) = c.get("/api/v1/reservations");
    assert_eq!(code, 200);
    let listed = list["reservations"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{list}");
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["path"], made["path"]);
    assert_eq!(load(&c)["reserved_kbps"], 2000);
    let (code, one) = c.get(&format!("/api/v1/reservations/{id}"));
    assert_eq!(code, 200, "{one}");
    assert_eq!(
        (&one["id"], &one["kbps"], &one["links"]),
        (&made["id"], &made["kbps"], &made["links"])
    );
    let api = c.api().to_string();
    let shown = client::show(&Client::new(&api, None), &Show::Reservations, Output::Table).unwrap();
    assert!(shown.starts_with("ID "), "{shown}");
    assert!(shown.contains("operator"), "{shown}");
    assert!(shown.contains("2000/2500 kbit/s (80%)"), "{shown}");

    // A new one for the pair replaces the old, whose bandwidth it may
    // reuse: the whole cable.
    let whole = r#"{"src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 2500, "duration_secs": 60}"#;
    let (code, replaced) = c.call("POST", "/api/v1/reservations", Some(whole));
    assert_eq!(code, 201, "{replaced}");
    let new = replaced["id"].as_u64().unwrap();
    assert_ne!(new, id);
    assert_eq!(c.get(&format!("/api/v1/reservations/{id}")).0, 404);
    assert_eq!(load(&c)["reserved_kbps"], 2500);

    // Released: the cable is free, the number gone.
    let (code, answer) = c.call("DELETE", &format!("/api/v1/reservations/{new}"), None);
    assert_eq!((code, answer), (204, Value::Null));
    let (_, list) = c.get("/api/v1/reservations");
    assert_eq!(list["reservations"], json!([]));
    assert_eq!(load(&c)["reserved_kbps"], 0);
    for dpid in ["1", "2"] {
        wait_for("its flows deleted", || pair_flows(&c, dpid).is_empty());
    }
    let (code, answer) = c.call("DELETE", &format!("/api/v1/reservations/{new}"), None);
    assert_eq!(code, 404, "{answer}");
    assert!(
        error(&answer).contains(&format!("no reservation {new}")),
        "{answer}"
    );
}

#[test]
fn the_openapi_document_describes_them_and_every_refusal() {
    let doc = serde_json::to_value(baton_operator::openapi()).unwrap();
    let post = &doc["paths"]["/api/v1/reservations"]["post"];
    for code in ["201", "400", "404", "409", "422", "503"] {
        assert!(post["responses"][code].is_object(), "POST {code}: {post:#}");
    }
    let delete = &doc["paths"]["/api/v1/reservations/{id}"]["delete"];
    for code in ["204", "400", "404"] {
        assert!(delete["responses"][code].is_object(), "DELETE {code}");
    }
    let schemas = &doc["components"]["schemas"];
    for s in [
        "ReservationList",
        "Reservation",
        "ReservationOrigin",
        "LinkLoad",
        "NewReservation",
    ] {
        assert!(schemas[s].is_object(), "{s} missing");
    }
    assert_eq!(
        schemas["ReservationOrigin"]["enum"],
        json!(["flow", "operator"])
    );
    let required = schemas["NewReservation"]["required"].as_array().unwrap();
    assert_eq!(required.len(), 4, "{required:?}");
}
