//! What the end-to-end tests on real switches share (`network_services`,
//! `bandwidth_on_ovs`): baton and the network it runs in one laboratory
//! ([`Network`]), its REST API, waiting, and every-pair pings.
//!
//! Each test file is its own crate and uses only part of this.
#![allow(dead_code)]

pub mod cluster;
pub mod views;

use baton_netlab::{Cmd, Lab, OfVersion, Proc, SwitchOptions, Topology};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

pub const SECOND: Duration = Duration::from_secs(1);

/// A port of a switch: (datapath id, port number).
pub type PortAt = (u64, u16);

/// What the switches are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Switches {
    /// Open vSwitch bridges.
    Ovs,
    /// `baton switch` processes on the bridges' veths.
    Baton,
}

/// baton and the network it runs, in one laboratory.
pub struct Network {
    pub lab: Lab,
    pub topo: Topology,
    pub baton: Proc,
    /// The `baton switch` processes, if the switches are ours.
    _switches: Vec<Proc>,
}

impl Network {
    /// Starts baton with `apps` (`--apps`; none: the default, which is
    /// the network services) in a new lab, then builds `topo` with
    /// switches that speak only `version`, and waits until every switch is
    /// connected.
    pub fn start(
        topo: Topology,
        version: OfVersion,
        kind: Switches,
        apps: Option<&str>,
    ) -> Network {
        let lab = Lab::new().unwrap();
        let mut cmd = Cmd::new(env!("CARGO_BIN_EXE_baton")).args([
            "run",
            "--listen",
            "127.0.0.1:6653",
            "--api",
            "127.0.0.1:8080",
        ]);
        if let Some(apps) = apps {
            cmd = cmd.args(["--apps", apps]);
        }
        let baton = lab.spawn(cmd.env("RUST_LOG", "info")).unwrap();
        lab.wait_listening(6653, 10 * SECOND).unwrap();
        let switches = match kind {
            Switches::Ovs => {
                let opts = SwitchOptions::new()
                    .controller("tcp:127.0.0.1:6653")
                    .protocols(&[version]);
                lab.build(&topo, &opts).unwrap();
                Vec::new()
            }
            Switches::Baton => {
                lab.build(&topo, &SwitchOptions::new().veth_only()).unwrap();
                topo.switches
                    .iter()
                    .map(|s| baton_switch(&lab, &topo, &s.name, s.dpid.0, version))
                    .collect()
            }
        };
        let n = topo.switches.len();
        lab.wait_controller_connections(n, 20 * SECOND).unwrap();
        let net = Network {
            lab,
            topo,
            baton,
            _switches: switches,
        };
        net.wait_for(20 * SECOND, "every switch's handshake", |net| {
            net.api("/api/v1/switches").as_array().map(Vec::len) == Some(n)
        });
        net
    }

    /// GET `path` from baton's API (inside the lab, where its loopback
    /// is), as JSON.
    pub fn api(&self, path: &str) -> Value {
        self.try_api(path).unwrap_or_else(|e| panic!("{e}"))
    }

    /// GET `path`, or why not (an error status, no answer).
    pub fn try_api(&self, path: &str) -> Result<Value, String> {
        let out = self
            .lab
            .exec(Cmd::new("python3").args([
                "-c",
                "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())",
                &format!("http://127.0.0.1:8080{path}"),
            ]))
            .map_err(|e| e.to_string())?;
        serde_json::from_str(&out.stdout).map_err(|e| format!("{path}: {e}: {}", out.stdout))
    }

    /// `method` `path` with `body` as JSON, if any: the status and the
    /// answer (`null` when there is none, as a 204's), whatever the
    /// status.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let url = format!("http://127.0.0.1:8080{path}");
        let out = self
            .lab
            .exec(Cmd::new("python3").args(["-c", CALL, method, &url, &body]))
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let (status, answer) = out.stdout.split_once('\n').unwrap_or((&out.stdout, ""));
        let status = status
            .parse()
            .unwrap_or_else(|_| panic!("{method} {path}: no status in {:?}", out.stdout));
        let answer = match answer.trim() {
            "" => Value::Null,
            text => serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}")),
        };
        (status, answer)
    }

    /// Waits until `done`, failing after `timeout` with what baton logged.
    pub fn wait_for(
        &self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&Network) -> bool,
    ) -> Duration {
        let start = Instant::now();
        while !done(self) {
            if start.elapsed() > timeout {
                panic!(
                    "no {what} after {:.1} s; baton's log:\n{}",
                    timeout.as_secs_f64(),
                    tail(&self.baton.stderr())
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        start.elapsed()
    }

    /// The cables discovery knows: each link seen in both directions, as
    /// (lower end, higher end). A link known one way only is left out.
    pub fn discovered(&self) -> BTreeSet<(PortAt, PortAt)> {
        let topo = self.api("/api/v1/topology");
        let directed: BTreeSet<(PortAt, PortAt)> = topo["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (port_at(&l["src"]), port_at(&l["dst"])))
            .collect();
        directed
            .iter()
            .filter(|(a, b)| directed.contains(&(*b, *a)))
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect()
    }

    /// The cables the lab built between switches.
    pub fn built(&self) -> BTreeSet<(PortAt, PortAt)> {
        self.topo
            .switch_links()
            .iter()
            .map(|l| ((l.a.0.0, l.a.1), (l.b.0.0, l.b.1)))
            .collect()
    }

    /// Waits until discovery knows exactly `want`, and says how long it
    /// took.
    pub fn wait_links(&self, want: &BTreeSet<(PortAt, PortAt)>, timeout: Duration) -> Duration {
        self.wait_for(timeout, "topology equal to the one built", |net| {
            net.discovered() == *want
        })
    }

    /// Where baton says each host is: MAC -> attachment point.
    pub fn hosts(&self) -> BTreeMap<String, PortAt> {
        self.api("/api/v1/hosts")["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["mac"].as_str().unwrap().to_string(),
                    port_at(&h["attachment"]),
                )
            })
            .collect()
    }

    /// Where each host really is.
    pub fn attachments(&self) -> BTreeMap<String, PortAt> {
        self.topo
            .host_attachments()
            .iter()
            .map(|a| (a.mac.to_string(), (a.dpid.0, a.port)))
            .collect()
    }

    /// An application's counter.
    pub fn counter(&self, app: &str, name: &str) -> u64 {
        let apps = self.api("/api/v1/apps");
        apps.as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == app)
            .and_then(|a| a["counters"][name].as_u64())
            .unwrap_or_else(|| panic!("no counter {app}/{name} in {apps}"))
    }

    /// Every host pair pings, each reply once.
    pub fn assert_all_pairs_ping(&self) {
        // The first packets make the paths (ARP, then flows); wait until
        // one pair gets through before counting losses.
        let hosts = self.topo.hosts.clone();
        let (first, last) = (&hosts[0], &hosts[hosts.len() - 1]);
        let took = self
            .lab
            .wait_reachable(&first.name, last.ip, 10 * SECOND)
            .unwrap();
        eprintln!("{} reached {} after {:?}", first.name, last.name, took);
        let all = self.lab.ping_all(3, 10 * SECOND).unwrap();
        if !all.all_clean() {
            // A pair's very first request may be lost while its ARP and
            // flows are made; a second round must be clean.
            let again = self.lab.ping_all(3, 10 * SECOND).unwrap();
            assert!(
                again.all_clean(),
                "{again}\n(first round: {all})\n{}",
                tail(&self.baton.stderr())
            );
        }
        assert_eq!(all.duplicates(), 0, "{all}");
    }
}

/// Starts `baton switch` for switch `name` of `topo` on its veth ends,
/// ports numbered as the topology numbers them
/// ([`Lab::software_switch_ports`]).
pub fn baton_switch(lab: &Lab, topo: &Topology, name: &str, dpid: u64, version: OfVersion) -> Proc {
    let of = match version {
        OfVersion::V10 => "10",
        _ => "13",
    };
    let mut cmd = Cmd::new(env!("CARGO_BIN_EXE_baton")).args([
        "switch",
        "--dpid",
        &dpid.to_string(),
        "--of",
        of,
        "--controller",
        "tcp:127.0.0.1:6653",
    ]);
    for ifname in lab.software_switch_ports(topo, name).unwrap() {
        cmd = cmd.args(["--port".to_string(), ifname]);
    }
    lab.spawn(cmd).unwrap()
}

/// A port as the API writes it: `{"dpid": "00:..:01", "port": 2}`.
pub fn port_at(v: &Value) -> PortAt {
    (
        dpid(v["dpid"].as_str().unwrap()),
        v["port"].as_u64().unwrap() as u16,
    )
}

/// A datapath id as the API writes it: `00:00:00:00:00:00:00:0d`.
pub fn dpid(s: &str) -> u64 {
    u64::from_str_radix(&s.replace(':', ""), 16).unwrap_or_else(|_| panic!("bad dpid {s:?}"))
}

/// The end of a log.
pub fn tail(s: &str) -> &str {
    let start = s.len().saturating_sub(6000);
    let start = (start..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[start..]
}

/// Discovery, host tracking and every-pair delivery on `topo`, with
/// `apps` (none: `baton run`'s default).
pub fn discovers_and_delivers(
    topo: Topology,
    version: OfVersion,
    kind: Switches,
    apps: Option<&str>,
) -> Network {
    let name = format!("{} {kind:?} switches, {version}", topo.switches.len());
    let net = Network::start(topo, version, kind, apps);
    let built = net.built();
    let took = net.wait_links(&built, 20 * SECOND);
    eprintln!("{name}: {} links discovered in {took:?}", built.len());
    net.assert_all_pairs_ping();
    assert_eq!(net.hosts(), net.attachments(), "{name}: hosts");
    // Nothing more was learnt from the traffic: no host port became a
    // link port, no link went.
    assert_eq!(net.discovered(), built, "{name}: links after traffic");
    net
}

/// Calls the API (method, URL, JSON body or ""), then prints the status
/// on one line and the answer after it, an error status's too.
const CALL: &str = r#"
import sys, urllib.request, urllib.error
method, url, body = sys.argv[1:4]
req = urllib.request.Request(url, method=method, data=body.encode() or None,
                             headers={"content-type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        status, answer = r.status, r.read()
except urllib.error.HTTPError as e:
    status, answer = e.code, e.read()
sys.stdout.write(f"{status}\n{answer.decode()}")
"#;
