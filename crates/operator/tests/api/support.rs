//! A controller with its API on loopback port 0, software switches
//! (`baton-switch`) connected to it over TCP with in-process ports,
//! cables between those ports, and an HTTP client. Everything stops when
//! dropped; waits have generous deadlines and assert nothing about time.

use baton_cluster::status::ClusterSource;
use baton_openflow::{PortNo, Version};
use baton_operator::{ApiOptions, ApiServer, Token};
use baton_runtime::dag::Dag;
use baton_runtime::{AnyApp, Config, Runtime};
use baton_switch::io::shared::{PortsHandle, shared_ports};
use baton_switch::io::{Options, Runner, Running, Target};
use baton_switch::testutil::udp_frame;
use baton_switch::{PortSpec, Switch};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a test waits for something before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Polls `cond` until it holds; panics after [`PATIENCE`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running controller and its API.
pub struct Controller {
    pub api: Option<ApiServer>,
    pub runtime: Option<Runtime>,
    pub token: Option<String>,
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Some(api) = self.api.take() {
            api.stop();
        }
        if let Some(r) = self.runtime.take() {
            r.stop();
        }
    }
}

impl Controller {
    /// Runs `apps` (name and settings) with the API on loopback, with
    /// `token` if given.
    pub fn start(apps: &[(&str, Value)], token: Option<&str>) -> Controller {
        let apps = apps
            .iter()
            .map(|(n, settings)| {
                let app = baton_apps::by_name(n).unwrap();
                app.configure(settings).unwrap();
                app
            })
            .collect();
        Controller::with_apps(apps, token)
    }

    /// Runs `apps`, made by the test, with the API on loopback.
    pub fn with_apps(apps: Vec<AnyApp>, token: Option<&str>) -> Controller {
        Controller::with_dags(apps, Vec::new(), token)
    }

    /// [`Controller::with_apps`] with application DAGs.
    pub fn with_dags(apps: Vec<AnyApp>, dags: Vec<Dag>, token: Option<&str>) -> Controller {
        Controller::launch(apps, dags, token, None)
    }

    /// Runs `apps` as a member of the cluster `cluster` reports.
    pub fn clustered(apps: &[&str], cluster: Arc<dyn ClusterSource>) -> Controller {
        let apps = apps
            .iter()
            .map(|n| baton_apps::by_name(n).unwrap())
            .collect();
        Controller::launch(apps, Vec::new(), None, Some(cluster))
    }

    fn launch(
        apps: Vec<AnyApp>,
        dags: Vec<Dag>,
        token: Option<&str>,
        cluster: Option<Arc<dyn ClusterSource>>,
    ) -> Controller {
        let config = Config {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            workers: 2,
            ..Config::default()
        };
        let runtime = Runtime::start_with_dags(config, apps, dags).unwrap();
        let api = ApiServer::start(
            runtime.control(),
            ApiOptions {
                addr: "127.0.0.1:0".parse().unwrap(),
                token: token.map(|t| Token::new(t).unwrap()),
                cluster,
            },
        )
        .unwrap();
        Controller {
            api: Some(api),
            runtime: Some(runtime),
            token: token.map(str::to_string),
        }
    }

    /// Where switches connect.
    pub fn openflow(&self) -> SocketAddr {
        self.runtime.as_ref().unwrap().local_addrs()[0]
    }

    /// `ADDR:PORT` of the API.
    pub fn api(&self) -> SocketAddr {
        self.api.as_ref().unwrap().local_addr()
    }

    /// `method path` with `body`, with `token` (or the controller's own
    /// when `None` is not asked for): the status and the JSON answer
    /// (`Null` for an empty one, a string for text).
    pub fn call_as(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("http://{}{path}", self.api());
        let mut req = ureq::request(method, &url);
        if let Some(t) = token {
            req = req.set("Authorization", &format!("Bearer {t}"));
        }
        let resp = match body {
            Some(b) => req.set("Content-Type", "application/json").send_string(b),
            None => req.call(),
        };
        let resp = match resp {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {url}: {e}"),
        };
        let status = resp.status();
        let text = resp.into_string().unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    /// [`Controller::call_as`] with the controller's token.
    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let token = self.token.clone();
        self.call_as(token.as_deref(), method, path, body)
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, None)
    }

    /// The flows the API reads from switch `dpid` (asserting a 200).
    pub fn flows(&self, dpid: &str) -> Vec<Value> {
        let (code, flows) = self.get(&format!("/api/v1/switches/{dpid}/flows"));
        assert_eq!(code, 200, "{flows}");
        flows["flows"].as_array().cloned().expect("a flows array")
    }
}

/// A software switch on its own thread with in-process ports `1..=n`.
pub struct SoftSwitch {
    pub ports: PortsHandle,
    _running: Running,
}

impl SoftSwitch {
    /// Switch `dpid` speaking `version`, connected to `controller`.
    pub fn connect(controller: SocketAddr, dpid: u64, version: Version, n: u32) -> SoftSwitch {
        let now = Instant::now();
        let mut sw = Switch::new(baton_switch::Config::new(dpid, version), now);
        for p in 1..=n {
            sw.add_port(
                PortSpec::named(format!("s{dpid}-eth{p}"), (dpid as u32) << 8 | p),
                now,
            );
        }
        let (backend, ports) = shared_ports();
        let opts = Options {
            targets: vec![Target::Active(controller)],
            ..Options::default()
        };
        let running = Running::spawn(Runner::new(sw, backend, opts).unwrap());
        SoftSwitch {
            ports,
            _running: running,
        }
    }
}

/// Cables between switch ports: a thread carries every frame that leaves
/// one end into the other, until dropped.
pub struct Cables {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Cables {
    pub fn lay(ends: Vec<((PortsHandle, u32), (PortsHandle, u32))>) -> Cables {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Acquire) {
                for ((a, pa), (b, pb)) in &ends {
                    for f in a.take_output(PortNo(*pa)) {
                        b.inject(PortNo(*pb), &f);
                    }
                    for f in b.take_output(PortNo(*pb)) {
                        a.inject(PortNo(*pa), &f);
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Cables {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Cables {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Hosts `a` (on s1 port 1) and `b` (on s2 port 1) of two 1.0 software
/// switches joined by a cable on their ports 2, once the controller knows
/// the link both ways and both hosts (each host speaks until it is learnt:
/// its port must settle first). Keep what it returns alive.
pub fn two_hosts(c: &Controller, a: [u8; 6], b: [u8; 6]) -> (SoftSwitch, SoftSwitch, Cables) {
    let s1 = SoftSwitch::connect(c.openflow(), 1, Version::V10, 2);
    let s2 = SoftSwitch::connect(c.openflow(), 2, Version::V10, 2);
    let cable = Cables::lay(vec![((s1.ports.clone(), 2), (s2.ports.clone(), 2))]);
    wait_for("the link, both ways", || {
        c.get("/api/v1/topology").1["links"]
            .as_array()
            .is_some_and(|l| l.len() == 2)
    });
    wait_for("both hosts", || {
        s1.ports.inject(PortNo(1), &udp_frame(a, b, 9));
        s2.ports.inject(PortNo(1), &udp_frame(b, a, 9));
        c.get("/api/v1/hosts").1["hosts"]
            .as_array()
            .is_some_and(|h| h.len() == 2)
    });
    (s1, s2, cable)
}

/// The error message of an answer.
pub fn error(v: &Value) -> &str {
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message in {v}"))
}
