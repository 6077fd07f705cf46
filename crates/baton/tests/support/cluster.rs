//! Several baton instances as one controller in one laboratory, for the
//! cluster's end-to-end tests (`cluster_on_ovs`, `cluster_views_on_ovs`):
//! a three-member etcd on the lab's loopback, instances joined to it
//! (optionally through proxies that a test kills to cut one off), bridges
//! connected to every instance, and what the instances and Open vSwitch
//! say about who masters each bridge.

use super::{SECOND, tail};
use baton_netlab::{Cmd, Lab, OfVersion, Proc, SwitchOptions, Topology};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// etcd members' (client, peer) ports, inside the laboratory.
pub const ETCD: [(u16, u16); 3] = [(2379, 2380), (12379, 12380), (22379, 22380)];

/// Proxies in front of the etcd members for the instance that will be cut
/// off: one per member.
pub const PROXY: [u16; 3] = [32379, 32479, 32579];

pub fn openflow_port(i: usize) -> u16 {
    6653 + i as u16
}

pub fn api_port(i: usize) -> u16 {
    8080 + i as u16
}

pub fn node(i: usize) -> String {
    format!("baton-{i}")
}

/// A TCP forwarder (the laboratory has python3): killing it cuts the
/// connections it carries and refuses new ones, as a partition would.
const FORWARDER: &str = r#"
import socket, sys, threading
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(64)
while True:
    c, _ = l.accept()
    try:
        u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    except OSError:
        c.close()
        continue
    for a, b in ((c, u), (u, c)):
        threading.Thread(target=pipe, args=(a, b), daemon=True).start()
"#;

/// Masters settled: who, and after how long as the instances report it
/// and as Open vSwitch's database does.
pub struct Settled {
    pub masters: BTreeMap<String, usize>,
    pub controllers: Duration,
    pub ovs: Duration,
}

pub struct Cluster {
    pub lab: Lab,
    pub topo: Topology,
    pub etcd: Vec<Option<Proc>>,
    pub batons: Vec<Option<Proc>>,
    pub proxies: Vec<Proc>,
    pub members: usize,
    /// The instances' applications (`--apps`).
    pub apps: String,
}

impl Cluster {
    pub fn etcd_cmd(lab: &Lab, i: usize, members: usize, state: &str) -> Cmd {
        let initial: Vec<String> = (0..members)
            .map(|m| format!("e{m}=http://127.0.0.1:{}", ETCD[m].1))
            .collect();
        let (client, peer) = ETCD[i];
        Cmd::new("etcd").args([
            "--name".to_string(),
            format!("e{i}"),
            "--data-dir".into(),
            lab.dir().join(format!("etcd{i}")).display().to_string(),
            "--listen-client-urls".into(),
            format!("http://127.0.0.1:{client}"),
            "--advertise-client-urls".into(),
            format!("http://127.0.0.1:{client}"),
            "--listen-peer-urls".into(),
            format!("http://127.0.0.1:{peer}"),
            "--initial-advertise-peer-urls".into(),
            format!("http://127.0.0.1:{peer}"),
            "--initial-cluster".into(),
            initial.join(","),
            "--initial-cluster-state".into(),
            state.into(),
            "--initial-cluster-token".into(),
            "baton-test".into(),
            "--heartbeat-interval".into(),
            "100".into(),
            "--election-timeout".into(),
            "1000".into(),
            "--log-level".into(),
            "warn".into(),
        ])
    }

    /// etcd's client URLs, directly or through the proxies (for the
    /// instance to be cut off).
    pub fn endpoints(&self, via_proxy: bool) -> String {
        (0..self.members)
            .map(|m| {
                let port = if via_proxy { PROXY[m] } else { ETCD[m].0 };
                format!("http://127.0.0.1:{port}")
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn start_baton(&mut self, i: usize, via_proxy: bool) {
        let cmd = Cmd::new(env!("CARGO_BIN_EXE_baton"))
            .args([
                "run".to_string(),
                "--listen".into(),
                format!("127.0.0.1:{}", openflow_port(i)),
                "--api".into(),
                format!("127.0.0.1:{}", api_port(i)),
                "--apps".into(),
                self.apps.clone(),
                "--cluster".into(),
                self.endpoints(via_proxy),
                "--node".into(),
                node(i),
                "--cluster-ttl-ms".into(),
                self.ttl().as_millis().to_string(),
            ])
            .env(
                "RUST_LOG",
                std::env::var("BATON_LOG").unwrap_or_else(|_| "info".into()),
            );
        self.batons[i] = Some(self.lab.spawn(cmd).unwrap());
        self.lab
            .wait_listening(openflow_port(i), 10 * SECOND)
            .unwrap();
    }

    pub fn start_proxies(&mut self) {
        self.proxies = (0..self.members)
            .map(|m| {
                let p = self
                    .lab
                    .spawn(Cmd::new("python3").args([
                        "-c".to_string(),
                        FORWARDER.to_string(),
                        PROXY[m].to_string(),
                        ETCD[m].0.to_string(),
                    ]))
                    .unwrap();
                self.lab.wait_listening(PROXY[m], 10 * SECOND).unwrap();
                p
            })
            .collect();
    }

    /// A laboratory with `members` etcd members, `instances` baton
    /// instances (the last through proxies if `proxied`) and `topo` built
    /// with bridges of `version` connected to every instance in `connect`;
    /// returns once every bridge is connected to each of them.
    pub fn start(
        apps: &str,
        topo: Topology,
        version: OfVersion,
        members: usize,
        instances: usize,
        proxied: bool,
        connect: &[usize],
    ) -> Cluster {
        let lab = Lab::new().unwrap();
        let etcd = (0..members)
            .map(|i| {
                Some(
                    lab.spawn(Cluster::etcd_cmd(&lab, i, members, "new"))
                        .unwrap(),
                )
            })
            .collect();
        for (client, _) in &ETCD[..members] {
            lab.wait_listening(*client, 20 * SECOND).unwrap();
        }
        let mut c = Cluster {
            lab,
            topo,
            etcd,
            batons: (0..instances).map(|_| None).collect(),
            proxies: Vec::new(),
            members,
            apps: apps.to_string(),
        };
        if proxied {
            c.start_proxies();
        }
        for i in 0..instances {
            c.start_baton(i, proxied && i == instances - 1);
        }
        let mut opts = SwitchOptions::new().protocols(&[version]);
        for &i in connect {
            opts = opts.controller(format!("tcp:127.0.0.1:{}", openflow_port(i)));
        }
        c.lab.build(&c.topo, &opts).unwrap();
        let bridges = c.topo.switches.len();
        for &i in connect {
            c.lab
                .wait_connections(openflow_port(i), bridges, 30 * SECOND)
                .unwrap();
        }
        c
    }

    pub fn api(&self, i: usize, path: &str) -> Result<Value, String> {
        let cmd = Cmd::new("curl").args([
            "-sS".to_string(),
            "--max-time".into(),
            "2".into(),
            format!("http://127.0.0.1:{}{path}", api_port(i)),
        ]);
        let out = self.lab.exec(cmd).map_err(|e| e.to_string())?;
        serde_json::from_str(&out.stdout).map_err(|e| format!("{path}: {e}: {}", out.stdout))
    }

    /// What `baton show WHAT` prints against instance `i`.
    pub fn show(&self, i: usize, what: &str) -> String {
        let cmd = Cmd::new(env!("CARGO_BIN_EXE_baton")).args([
            "show".to_string(),
            what.to_string(),
            "--api".into(),
            format!("127.0.0.1:{}", api_port(i)),
        ]);
        self.lab.exec(cmd).unwrap().stdout
    }

    /// POSTs `body` (JSON) to instance `i`'s API: the status and the
    /// answer.
    pub fn post(&self, i: usize, path: &str, body: &str) -> (u16, Value) {
        self.call(i, "POST", path, Some(body))
    }

    /// Calls instance `i`'s API with `method` and `body` (JSON): the
    /// status and the answer.
    pub fn call(&self, i: usize, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let mut args = vec![
            "-sS".to_string(),
            "--max-time".into(),
            "8".into(),
            "-X".into(),
            method.into(),
            "-w".into(),
            "\n%{http_code}".into(),
        ];
        if let Some(body) = body {
            args.extend(["-H".into(), "content-type: application/json".into()]);
            args.extend(["-d".into(), body.to_string()]);
        }
        args.push(format!("http://127.0.0.1:{}{path}", api_port(i)));
        let out = self.lab.exec(Cmd::new("curl").args(args)).unwrap().stdout;
        let (json, code) = out.trim_end().rsplit_once('\n').unwrap_or(("", &out));
        (
            code.trim().parse().unwrap_or(0),
            serde_json::from_str(json).unwrap_or(Value::Null),
        )
    }

    /// Each bridge's controllers' roles, by bridge name, from Open
    /// vSwitch: (instance index, role), as `ovs-vsctl list controller`
    /// reports them.
    pub fn ovs_roles(&self) -> BTreeMap<String, Vec<(usize, String)>> {
        let bridges = self.vsctl_list("bridge", "name,controller");
        let controllers = self.vsctl_list("controller", "_uuid,target,role");
        let by_uuid: BTreeMap<&str, (usize, String)> = controllers
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                let port: u16 = f.get(1)?.rsplit(':').next()?.parse().ok()?;
                Some((f[0], (usize::from(port - 6653), f.get(2)?.to_string())))
            })
            .collect();
        bridges
            .lines()
            .filter_map(|l| {
                let (name, uuids) = l.split_once(',')?;
                let roles = uuids
                    .split_whitespace()
                    .filter_map(|u| by_uuid.get(u).cloned())
                    .collect();
                Some((name.to_string(), roles))
            })
            .collect()
    }

    /// `ovs-vsctl list TABLE`'s `columns`, one CSV line per row.
    fn vsctl_list(&self, table: &str, columns: &str) -> String {
        self.lab
            .vsctl([
                "-f",
                "csv",
                "--no-headings",
                "--data=bare",
                &format!("--columns={columns}"),
                "list",
                table,
            ])
            .unwrap()
    }

    /// Each bridge's master instance per Open vSwitch; panics if a bridge
    /// reports two.
    pub fn ovs_masters(&self) -> BTreeMap<String, Option<usize>> {
        self.ovs_roles()
            .into_iter()
            .map(|(bridge, roles)| {
                let masters: Vec<usize> = roles
                    .iter()
                    .filter(|(_, r)| r == "master")
                    .map(|(i, _)| *i)
                    .collect();
                assert!(masters.len() <= 1, "{bridge} reports masters {masters:?}");
                (bridge, masters.first().copied())
            })
            .collect()
    }

    /// Each bridge's masters as the instances in `alive` report them
    /// (`GET /api/v1/switches`, role `master`: the switch accepted the
    /// instance's ROLE_REQUEST).
    pub fn controller_masters(&self, alive: &[usize]) -> BTreeMap<String, Vec<usize>> {
        let names = self.bridge_names();
        let mut masters: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for &i in alive {
            let Ok(switches) = self.api(i, "/api/v1/switches") else {
                continue;
            };
            for s in switches.as_array().into_iter().flatten() {
                if s["role"] == "master" {
                    let dpid = super::dpid(s["dpid"].as_str().unwrap_or("0"));
                    if let Some(b) = names.get(&dpid) {
                        masters.entry(b.clone()).or_default().push(i);
                    }
                }
            }
        }
        masters
    }

    pub fn bridge_names(&self) -> BTreeMap<u64, String> {
        self.topo
            .switches
            .iter()
            .map(|s| (s.dpid.0, s.name.clone()))
            .collect()
    }

    /// Waits until every bridge has one master among `alive`, as the
    /// instances report it, which the cluster (as instance `ask` sees it)
    /// names; then until Open vSwitch reports the same (it refreshes the
    /// `role` column of its database on a timer, seconds later). Returns
    /// the masters and how long each took.
    pub fn wait_masters(&self, ask: usize, alive: &[usize], timeout: Duration) -> Settled {
        let t0 = Instant::now();
        let names = self.bridge_names();
        let masters = loop {
            let seen = self.controller_masters(alive);
            let cluster = self.api(ask, "/api/v1/cluster").ok();
            let named: BTreeMap<String, String> = cluster
                .iter()
                .flat_map(|c| c["masters"].as_array().cloned().unwrap_or_default())
                .filter_map(|m| {
                    let dpid = super::dpid(m["dpid"].as_str()?);
                    Some((names.get(&dpid)?.clone(), m["master"].as_str()?.to_string()))
                })
                .collect();
            let done = names.values().all(|b| {
                seen.get(b)
                    .is_some_and(|m| m.len() == 1 && named.get(b) == Some(&node(m[0])))
            });
            if done {
                break seen
                    .into_iter()
                    .map(|(b, m)| (b, m[0]))
                    .collect::<BTreeMap<String, usize>>();
            }
            assert!(
                t0.elapsed() < timeout,
                "masters not settled after {timeout:?}: the instances say {seen:?}, the cluster {named:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let controllers = t0.elapsed();
        // Masters may still move meanwhile (a member that joined gets its
        // share once settled): Open vSwitch must agree with the instances
        // as they are then.
        let mut masters = masters;
        loop {
            let ovs = self.ovs_masters();
            if masters.iter().all(|(b, m)| ovs.get(b) == Some(&Some(*m))) {
                break;
            }
            assert!(
                t0.elapsed() < timeout,
                "Open vSwitch says {ovs:?}, the instances {masters:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
            let now = self.controller_masters(alive);
            if names
                .values()
                .all(|b| now.get(b).is_some_and(|m| m.len() == 1))
            {
                masters = now.into_iter().map(|(b, m)| (b, m[0])).collect();
            }
        }
        Settled {
            masters,
            controllers,
            ovs: t0.elapsed(),
        }
    }

    /// Waits until instance `who` (back among `alive`) masters at least
    /// one bridge again; the masters then, and how long it took.
    pub fn wait_share(&self, who: usize, alive: &[usize]) -> (BTreeMap<String, usize>, Duration) {
        let t0 = Instant::now();
        loop {
            let m = self.wait_masters(who, alive, 20 * SECOND).masters;
            if m.values().any(|i| *i == who) {
                return (m, t0.elapsed());
            }
            assert!(
                t0.elapsed() < 20 * SECOND,
                "{} took no bridge back: {m:?}",
                node(who)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The lease's time to live: `baton run`'s default, or
    /// `BATON_CLUSTER_TTL_MS` (the failover benchmark's knob).
    pub fn ttl(&self) -> Duration {
        std::env::var("BATON_CLUSTER_TTL_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(3 * SECOND, Duration::from_millis)
    }

    pub fn logs(&self) -> String {
        self.batons
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let b = b.as_ref()?;
                Some(format!(
                    "--- {}:\n{}{}",
                    node(i),
                    tail(&b.stdout()),
                    tail(&b.stderr())
                ))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every pair pings; the first round may lose a first packet while
    /// the learning switches learn, a second must be clean.
    pub fn assert_all_pairs_ping(&self) {
        let all = self.lab.ping_all(3, 10 * SECOND).unwrap();
        if !all.all_clean() {
            let again = self.lab.ping_all(3, 10 * SECOND).unwrap();
            assert!(
                again.all_clean(),
                "{again}\n(first round: {all})\n{}",
                self.logs()
            );
            assert_eq!(again.duplicates(), 0, "{again}");
        }
        assert_eq!(all.duplicates(), 0, "{all}");
    }

    /// Waits until Open vSwitch lists every session of every bridge as
    /// master or slave, never EQUAL ("other"; it refreshes its role column
    /// on a timer); panics with `after` after 20 s. How long it took.
    pub fn wait_no_equal(&self, after: &str) -> Duration {
        let t0 = Instant::now();
        loop {
            let equal: Vec<(String, usize)> = self
                .ovs_roles()
                .into_iter()
                .flat_map(|(b, roles)| {
                    roles
                        .into_iter()
                        .filter(|(_, r)| r != "master" && r != "slave")
                        .map(move |(i, _)| (b.clone(), i))
                })
                .collect();
            if equal.is_empty() {
                return t0.elapsed();
            }
            assert!(
                t0.elapsed() < 20 * SECOND,
                "after {after}: sessions left EQUAL: {equal:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// What Open vSwitch refused from a session that was not its
    /// bridge's master (it logs every error it sends, `ofconn_send_error`,
    /// at most 10 a second; `OFPBRC_IS_SECONDARY` from 2.16 on): its log
    /// lines, those for instance `i`'s sessions only if given.
    pub fn refused_as_slave(&self, i: Option<usize>) -> Vec<String> {
        let log = std::fs::read_to_string(self.lab.dir().join("log/ovs-vswitchd.log"))
            .unwrap_or_default();
        let target = i.map(|i| format!("127.0.0.1:{}:", openflow_port(i)));
        log.lines()
            .filter(|l| l.contains("OFPBRC_IS_SLAVE") || l.contains("OFPBRC_IS_SECONDARY"))
            .filter(|l| target.as_ref().is_none_or(|t| l.contains(t.as_str())))
            .map(str::to_string)
            .collect()
    }

    /// Samples Open vSwitch's roles while `f` runs: panics (in
    /// `ovs_masters`) if a bridge ever reports two masters.
    pub fn sampling<R>(&self, f: impl FnOnce() -> R) -> (R, usize) {
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Acquire) {
                    self.ovs_masters();
                    n += 1;
                    std::thread::sleep(Duration::from_millis(50));
                }
                n
            });
            let r = f();
            stop.store(true, std::sync::atomic::Ordering::Release);
            (r, sampler.join().unwrap())
        })
    }
}

pub fn count_by_master(masters: &BTreeMap<String, usize>) -> BTreeMap<usize, usize> {
    let mut c = BTreeMap::new();
    for m in masters.values() {
        *c.entry(*m).or_default() += 1;
    }
    c
}
