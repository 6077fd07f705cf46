//! The command-line client behind `baton show` and `baton app`: calls
//! the REST API (plain HTTP, `--api ADDR:PORT`, with `--token` for
//! changes) and prints its answers as tables for people or, with
//! `--json`, as the API's own JSON for scripts.
//!
//! The answers are read into the API's own types ([`crate::model`],
//! [`crate::flow`]), so the client cannot drift from the server it ships
//! with.

use crate::flow::Flows;
use crate::model::{
    App, AppStopped, Cluster, Dag, Hosts, ReservationList, ReservationOrigin, Scheduler, Switch,
    Topology,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::{self, Write};
use std::time::Duration;

/// How long a call may take (a flow table read waits for the switch up
/// to 3 s).
const TIMEOUT: Duration = Duration::from_secs(10);

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The API could not be reached.
    Unreachable {
        /// Where it was called.
        url: String,
        /// Why.
        why: String,
    },
    /// The API answered with an error.
    Api {
        /// The HTTP status.
        status: u16,
        /// Its message.
        message: String,
    },
    /// The answer was not what this client understands.
    BadAnswer(String),
    /// What was asked cannot be sent.
    Usage(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Unreachable { url, why } => write!(
                f,
                "cannot reach the API at {url}: {why} (is baton running, and is --api its address?)"
            ),
            ClientError::Api {
                status: 401,
                message,
            } => {
                write!(f, "{message} (give it with --token)")
            }
            ClientError::Api { status, message } => write!(f, "{message} (HTTP {status})"),
            ClientError::BadAnswer(why) => write!(f, "unexpected answer from the API: {why}"),
            ClientError::Usage(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ClientError {}

/// A connection to one controller's API.
pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    /// The API at `api`, `ADDR:PORT` or an `http://` URL.
    pub fn new(api: &str, token: Option<String>) -> Client {
        let base = if api.starts_with("http://") || api.starts_with("https://") {
            api.trim_end_matches('/').to_string()
        } else {
            format!("http://{api}")
        };
        Client {
            base,
            token,
            agent: ureq::AgentBuilder::new().timeout(TIMEOUT).build(),
        }
    }

    /// `method path` with an optional JSON body: the JSON answer (`Null`
    /// for none).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base);
        let mut req = self.agent.request(method, &url);
        if let Some(t) = &self.token {
            req = req.set("Authorization", &format!("Bearer {t}"));
        }
        let answer = match body {
            Some(b) => req.send_json(b),
            None => req.call(),
        };
        let resp = match answer {
            Ok(r) => r,
            Err(ureq::Error::Status(status, r)) => {
                let message = r
                    .into_json::<Value>()
                    .ok()
                    .and_then(|v| v["error"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "no message".to_string());
                return Err(ClientError::Api { status, message });
            }
            Err(ureq::Error::Transport(t)) => {
                let why = match std::error::Error::source(&t) {
                    Some(cause) => cause.to_string(),
                    None => t.message().unwrap_or("no connection").to_string(),
                };
                return Err(ClientError::Unreachable {
                    url: self.base.clone(),
                    why,
                });
            }
        };
        let text = resp
            .into_string()
            .map_err(|e| ClientError::BadAnswer(e.to_string()))?;
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).map_err(|e| ClientError::BadAnswer(e.to_string()))
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<(T, Value), ClientError> {
        let v = self.call("GET", path, None)?;
        let t =
            serde_json::from_value(v.clone()).map_err(|e| ClientError::BadAnswer(e.to_string()))?;
        Ok((t, v))
    }
}

/// What `baton show` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Show {
    /// Connected switches.
    Switches,
    /// Discovered links.
    Links,
    /// Known hosts.
    Hosts,
    /// One switch's flows, by datapath id.
    Flows(String),
    /// The applications.
    Apps,
    /// The application DAGs.
    Dags,
    /// Bandwidth reservations and the links' reserved share.
    Reservations,
    /// The scheduler.
    Scheduler,
    /// The cluster's members, etcd endpoints and who masters each
    /// datapath (an error on a standalone instance).
    Cluster,
}

/// What `baton app` does to an application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppAction {
    /// Stop it, deleting its flows unless `keep_flows`.
    Stop {
        /// Leave its flows on the switches.
        keep_flows: bool,
    },
    /// Start it again.
    Start,
    /// Change settings, `key=value` (values read as JSON where they
    /// parse, as strings otherwise).
    Set(Vec<String>),
}

/// How an answer is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Aligned tables.
    Table,
    /// The API's JSON, pretty-printed.
    Json,
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()) + "\n"
}

/// Fetches what `what` names and prints it.
pub fn show(c: &Client, what: &Show, out: Output) -> Result<String, ClientError> {
    Ok(match what {
        Show::Switches => {
            let (s, v): (Vec<Switch>, _) = c.get("/api/v1/switches")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            switches(&s)
        }
        Show::Links => {
            let (t, v): (Topology, _) = c.get("/api/v1/topology")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            let rows = t
                .links
                .iter()
                .map(|l| {
                    vec![
                        l.src.dpid.clone(),
                        l.src.port.to_string(),
                        l.dst.dpid.clone(),
                        l.dst.port.to_string(),
                    ]
                })
                .collect();
            table(&["FROM", "PORT", "TO", "PORT"], rows)
        }
        Show::Hosts => {
            let (h, v): (Hosts, _) = c.get("/api/v1/hosts")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            let rows = h
                .hosts
                .iter()
                .map(|h| {
                    vec![
                        h.mac.clone(),
                        h.vlan.map_or("-".into(), |v| v.to_string()),
                        list(&h.ipv4),
                        h.attachment.dpid.clone(),
                        h.attachment.port.to_string(),
                        age(h.last_seen_secs_ago),
                    ]
                })
                .collect();
            table(&["MAC", "VLAN", "IPV4", "SWITCH", "PORT", "SEEN"], rows)
        }
        Show::Flows(dpid) => {
            let (f, v): (Flows, _) = c.get(&format!("/api/v1/switches/{dpid}/flows"))?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            flows(&f)
        }
        Show::Apps => {
            let (a, v): (Vec<App>, _) = c.get("/api/v1/apps")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            apps(&a)
        }
        Show::Dags => {
            let (d, v): (Vec<Dag>, _) = c.get("/api/v1/dags")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            let rows = d
                .iter()
                .map(|d| {
                    let stages: Vec<String> = d.stages.iter().map(|s| s.join("+")).collect();
                    vec![
                        d.name.clone(),
                        stages.join(" > "),
                        d.trigger.clone(),
                        list(&d.reads),
                        list(&d.writes),
                        d.commits.to_string(),
                        d.conflicts.to_string(),
                        d.reruns.to_string(),
                        d.late_commits.to_string(),
                        d.aborts.to_string(),
                    ]
                })
                .collect();
            table(
                &[
                    "DAG",
                    "APPS",
                    "TRIGGER",
                    "READS",
                    "WRITES",
                    "COMMITS",
                    "CONFLICTS",
                    "RERUNS",
                    "LATE",
                    "ABORTS",
                ],
                rows,
            )
        }
        Show::Reservations => {
            let (r, v): (ReservationList, _) = c.get("/api/v1/reservations")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            reservations(&r)
        }
        Show::Scheduler => {
            let (s, v): (Scheduler, _) = c.get("/api/v1/scheduler")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            scheduler(&s)
        }
        Show::Cluster => {
            let (cl, v): (Cluster, _) = c.get("/api/v1/cluster")?;
            if out == Output::Json {
                return Ok(pretty(&v));
            }
            cluster(&cl)
        }
    })
}

/// Does `action` to application `name` and prints what it became.
pub fn app(c: &Client, name: &str, action: &AppAction, out: Output) -> Result<String, ClientError> {
    let (answer, app, stopped) = match action {
        AppAction::Stop { keep_flows } => {
            let v = c.call(
                "POST",
                &format!("/api/v1/apps/{name}/stop?keep_flows={keep_flows}"),
                None,
            )?;
            let s: AppStopped = serde_json::from_value(v.clone())
                .map_err(|e| ClientError::BadAnswer(e.to_string()))?;
            (v, s.app.clone(), Some(s))
        }
        AppAction::Start => {
            let v = c.call("POST", &format!("/api/v1/apps/{name}/start"), None)?;
            let a = serde_json::from_value(v.clone())
                .map_err(|e| ClientError::BadAnswer(e.to_string()))?;
            (v, a, None)
        }
        AppAction::Set(pairs) => {
            let mut changes = serde_json::Map::new();
            for p in pairs {
                let (k, v) = p.split_once('=').ok_or_else(|| {
                    ClientError::Usage(format!("bad setting {p:?}: expected KEY=VALUE"))
                })?;
                let v = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
                changes.insert(k.to_string(), v);
            }
            let v = c.call(
                "PATCH",
                &format!("/api/v1/apps/{name}"),
                Some(&Value::Object(changes)),
            )?;
            let a = serde_json::from_value(v.clone())
                .map_err(|e| ClientError::BadAnswer(e.to_string()))?;
            (v, a, None)
        }
    };
    if out == Output::Json {
        return Ok(pretty(&answer));
    }
    let mut s = apps(std::slice::from_ref(&app));
    if let Some(stopped) = stopped {
        s.push_str(&flows_of_stopped(&stopped));
    }
    Ok(s)
}

/// What a stop did to the application's flows: how many were deleted, and
/// the switches that did not confirm, with why.
fn flows_of_stopped(s: &AppStopped) -> String {
    let mut out = format!("flows deleted: {}\n", s.flows_deleted);
    if !s.unconfirmed.is_empty() {
        let _ = writeln!(
            out,
            "{} switches did not confirm ({} did):",
            s.unconfirmed.len(),
            s.switches_confirmed
        );
        let rows = s
            .unconfirmed
            .iter()
            .map(|u| vec![u.dpid.clone(), u.detail.clone()])
            .collect();
        out.push_str(&table(&["DPID", "WHY"], rows));
    }
    out
}

/// Columns padded to their widest cell, two spaces apart.
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                l.push_str(cell);
            } else {
                let _ = write!(l, "{cell:<w$}  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for r in &rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join(",")
    }
}

/// `42s`, `3m07s`, `2h05m`.
fn age(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

fn rate(r: Option<f64>) -> String {
    r.map_or("-".to_string(), |r| format!("{r:.0}"))
}

fn switches(s: &[Switch]) -> String {
    // A cluster member says its role for each switch; a standalone
    // controller's table is as it always was.
    let clustered = s.iter().any(|s| s.role != "standalone");
    let rows = s
        .iter()
        .map(|s| {
            let live = s.ports.iter().filter(|p| p.live).count();
            let mut row = vec![
                s.dpid.clone(),
                s.version.clone(),
                s.peer.clone().unwrap_or_else(|| "-".into()),
                format!("{live}/{}", s.ports.len()),
                rate(s.rx_per_sec),
                rate(s.tx_per_sec),
                s.rx_msgs.to_string(),
                s.tx_msgs.to_string(),
                s.weight.to_string(),
                age(s.connected_secs),
            ];
            if clustered {
                row.push(s.role.clone());
            }
            row
        })
        .collect();
    let mut header = vec![
        "DPID", "OF", "PEER", "PORTS", "RX/S", "TX/S", "RX", "TX", "WEIGHT", "UP",
    ];
    if clustered {
        header.push("ROLE");
    }
    table(&header, rows)
}

fn flows(f: &Flows) -> String {
    let rows = f
        .flows
        .iter()
        .map(|f| {
            let m: Vec<String> = f
                .match_
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}={s}"),
                    v => format!("{k}={v}"),
                })
                .collect();
            vec![
                f.table_id.to_string(),
                f.priority.to_string(),
                f.cookie.clone(),
                f.installed_by.clone().unwrap_or_else(|| "-".into()),
                f.packets.to_string(),
                f.bytes.to_string(),
                if m.is_empty() {
                    "*".into()
                } else {
                    m.join(",")
                },
                if f.actions.is_empty() {
                    "drop".into()
                } else {
                    f.actions.join(",")
                },
            ]
        })
        .collect();
    format!(
        "{} (OpenFlow {}): {} flows\n{}",
        f.dpid,
        f.version,
        f.flows.len(),
        table(
            &[
                "TABLE", "PRIO", "COOKIE", "BY", "PACKETS", "BYTES", "MATCH", "ACTIONS"
            ],
            rows
        )
    )
}

fn apps(a: &[App]) -> String {
    let rows = a
        .iter()
        .map(|a| {
            let state = match &a.error {
                Some(e) => format!("{} ({e})", state_name(a)),
                None => state_name(a).to_string(),
            };
            let counters: Vec<String> =
                a.counters.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![a.name.clone(), state, a.panics.to_string(), list(&counters)]
        })
        .collect();
    table(&["NAME", "STATE", "PANICS", "COUNTERS"], rows)
}

fn state_name(a: &App) -> &'static str {
    match a.state {
        crate::model::AppState::Running => "running",
        crate::model::AppState::Stopped => "stopped",
        crate::model::AppState::Failed => "failed",
    }
}

/// The reservations, then each link with its reserved share.
fn reservations(r: &ReservationList) -> String {
    let rows = r
        .reservations
        .iter()
        .map(|r| {
            let (origin, expires) = match r.origin {
                ReservationOrigin::Flow => ("flow", "-".to_string()),
                ReservationOrigin::Operator => {
                    ("operator", r.expires_in_secs.map_or("-".into(), age))
                }
            };
            vec![
                r.id.to_string(),
                r.src.clone(),
                r.dst.clone(),
                r.kbps.to_string(),
                origin.to_string(),
                expires,
                age(r.age_secs),
                r.path.join(" > "),
            ]
        })
        .collect();
    let reservations = table(
        &[
            "ID", "SRC", "DST", "KBIT/S", "ORIGIN", "EXPIRES", "AGE", "PATH",
        ],
        rows,
    );
    let rows = r
        .links
        .iter()
        .map(|l| {
            vec![
                l.link.src.dpid.clone(),
                l.link.src.port.to_string(),
                l.link.dst.dpid.clone(),
                l.link.dst.port.to_string(),
                share(l.reserved_kbps, l.capacity_kbps),
            ]
        })
        .collect();
    let links = table(&["LINK", "PORT", "TO", "PORT", "RESERVED"], rows);
    format!("{reservations}\n{links}")
}

/// `2000/2500 kbit/s (80%)`.
fn share(reserved: u64, capacity: u64) -> String {
    if capacity == 0 {
        return format!("{reserved}/0 kbit/s");
    }
    let percent = reserved as f64 * 100.0 / capacity as f64;
    format!("{reserved}/{capacity} kbit/s ({percent:.0}%)")
}

fn scheduler(s: &Scheduler) -> String {
    let mut out = format!(
        "scheduler {}, {} batching, BDU {} us\n",
        s.scheduler, s.batching, s.bdu_us
    );
    match &s.fairness {
        Some(f) => {
            let _ = writeln!(
                out,
                "fairness (Jain, weighted, last {:.1} s): {:.3} over {} switches, {:.0} messages/s",
                f.interval_secs, f.jain, f.switches, f.messages_per_sec
            );
        }
        None => out.push_str("fairness: no switch sent anything in the last interval\n"),
    }
    let rows = s
        .workers
        .iter()
        .map(|w| {
            vec![
                w.worker.to_string(),
                w.batches.to_string(),
                w.messages.to_string(),
                format!("{:.1}", w.mean_batch),
                w.max_batch.to_string(),
                format!("{:.1}", w.mean_batch_delay_us),
                w.ibt.to_string(),
            ]
        })
        .collect();
    out + &table(
        &[
            "WORKER", "BATCHES", "MESSAGES", "MEAN", "MAX", "DELAY_US", "IBT",
        ],
        rows,
    )
}

/// This instance, then the members, the etcd endpoints and each
/// datapath's master.
fn cluster(c: &Cluster) -> String {
    let mut out = format!(
        "node {}, {}, {} role change{}\n",
        c.node,
        if c.connected {
            "holds an etcd lease"
        } else {
            "holds no etcd lease"
        },
        c.role_changes,
        if c.role_changes == 1 { "" } else { "s" }
    );
    out.push_str(&format!(
        "shared views: {} facts written to etcd, {} deleted; {} of the other members' held\n",
        c.facts.written, c.facts.deleted, c.facts.peers
    ));
    if let Some(l) = &c.ledger {
        out.push_str(&format!(
            "shared bandwidth ledger: {} reservations; this instance granted {}, refused {}, released {}, {} conflicts, {} undecided\n",
            l.reservations, l.granted, l.refused, l.released, l.conflicts, l.failed
        ));
    }
    let rows = c
        .members
        .iter()
        .map(|m| {
            vec![
                m.node.clone(),
                m.openflow.clone(),
                m.api.clone().unwrap_or_else(|| "-".into()),
                m.masters.to_string(),
            ]
        })
        .collect();
    out.push_str(&table(&["MEMBER", "OPENFLOW", "API", "MASTERS"], rows));
    out.push('\n');
    let rows = c
        .etcd
        .iter()
        .map(|e| {
            vec![
                e.url.clone(),
                if e.healthy { "up" } else { "down" }.to_string(),
                e.latency_ms.map_or("-".into(), |ms| format!("{ms:.1} ms")),
                e.error.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    out.push_str(&table(&["ETCD", "HEALTH", "LATENCY", "ERROR"], rows));
    out.push('\n');
    let rows = c
        .masters
        .iter()
        .map(|m| {
            vec![
                m.dpid.clone(),
                m.master.clone().unwrap_or_else(|| "-".into()),
                m.generation.map_or("-".into(), |g| g.to_string()),
                list(&m.connected),
            ]
        })
        .collect();
    out + &table(&["DPID", "MASTER", "GENERATION", "CONNECTED"], rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StopFailure;

    #[test]
    fn tables_align_and_ages_read_well() {
        let t = table(
            &["A", "LONGER"],
            vec![
                vec!["wide cell".into(), "x".into()],
                vec!["b".into(), "".into()],
            ],
        );
        assert_eq!(t, "A          LONGER\nwide cell  x\nb\n");
        assert_eq!(
            (age(5.2), age(187.0), age(7500.0)),
            ("5s".into(), "3m07s".into(), "2h05m".into())
        );
    }

    #[test]
    fn reservations_and_the_links_reserved_share() {
        assert_eq!(share(2000, 2500), "2000/2500 kbit/s (80%)");
        assert_eq!(share(0, 1_000_000), "0/1000000 kbit/s (0%)");
        assert_eq!(share(5, 0), "5/0 kbit/s");
        let list: ReservationList = serde_json::from_value(serde_json::json!({
            "reservations": [{
                "id": 3, "src": "02:00:00:00:00:0a", "dst": "02:00:00:00:00:0b", "kbps": 2000,
                "path": ["00:00:00:00:00:00:00:01/2", "00:00:00:00:00:00:00:02/1"],
                "links": [], "origin": "operator", "expires_in_secs": 187.5, "age_secs": 2.0
            }, {
                "id": 4, "src": "02:00:00:00:00:0b", "dst": "02:00:00:00:00:0a", "kbps": 100,
                "path": ["00:00:00:00:00:00:00:02/1"], "links": [], "origin": "flow",
                "expires_in_secs": null, "age_secs": 75.0
            }],
            "links": [{
                "link": {"src": {"dpid": "00:00:00:00:00:00:00:01", "port": 2},
                         "dst": {"dpid": "00:00:00:00:00:00:00:02", "port": 2}},
                "capacity_kbps": 2500, "reserved_kbps": 2000
            }]
        }))
        .unwrap();
        assert_eq!(
            reservations(&list),
            "ID  SRC                DST                KBIT/S  ORIGIN    EXPIRES  AGE    PATH\n\
             3   02:00:00:00:00:0a  02:00:00:00:00:0b  2000    operator  3m07s    2s     \
             00:00:00:00:00:00:00:01/2 > 00:00:00:00:00:00:00:02/1\n\
             4   02:00:00:00:00:0b  02:00:00:00:00:0a  100     flow      -        1m15s  \
             00:00:00:00:00:00:00:02/1\n\
             \n\
             LINK                     PORT  TO                       PORT  RESERVED\n\
             00:00:00:00:00:00:00:01  2     00:00:00:00:00:00:00:02  2     2000/2500 kbit/s (80%)\n"
        );
    }

    #[test]
    fn a_stop_lists_the_switches_that_did_not_confirm() {
        let app: App = serde_json::from_value(serde_json::json!({
            "name": "learning-switch", "state": "stopped", "error": null, "panics": 0,
            "cookie_tag": 1, "reads": [], "writes": [], "counters": {}, "settings": {}
        }))
        .unwrap();
        let unconfirmed = |dpid: &str, reason, detail: &str| crate::model::UnconfirmedSwitch {
            dpid: dpid.into(),
            reason,
            detail: detail.into(),
        };
        let mut s = AppStopped {
            app,
            flows_deleted: 9,
            switches_confirmed: 7,
            unconfirmed: Vec::new(),
        };
        assert_eq!(flows_of_stopped(&s), "flows deleted: 9\n");
        s.unconfirmed = vec![
            unconfirmed(
                "00:00:00:00:00:00:00:01",
                StopFailure::TimedOut,
                "the switch did not reply in time",
            ),
            unconfirmed(
                "00:00:00:00:00:00:00:0a",
                StopFailure::Gone,
                "the switch is not connected",
            ),
        ];
        assert_eq!(
            flows_of_stopped(&s),
            "flows deleted: 9\n\
             2 switches did not confirm (7 did):\n\
             DPID                     WHY\n\
             00:00:00:00:00:00:00:01  the switch did not reply in time\n\
             00:00:00:00:00:00:00:0a  the switch is not connected\n"
        );
    }
}
