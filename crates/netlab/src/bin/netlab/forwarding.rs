//! `netlab measure forwarding`: `baton switch` against Open vSwitch's
//! userspace datapath (`datapath_type=netdev`) forwarding between two
//! hosts, the figures of BENCHMARKS.md's "Forwarding in namespaces"
//! (Mirage §IV-B, fig. 3: the same two data ports, the same traffic
//! generator, both switches in the same run).
//!
//! One lab: hosts `h1` and `h2` on veths whose other ends, `s1-eth1` and
//! `s1-eth2`, are taken in turn by `baton switch` (OpenFlow 1.3,
//! AF_PACKET rings) and by an OVS bridge (`ovs-vsctl add-port`, then
//! `del-port`): the very same interfaces for both. The switch runs on
//! CPU 1 (`taskset`; every `ovs-vswitchd` thread with `taskset -a`), the
//! generator and `ping` on CPU 0. Each turn installs `in_port=1 ->
//! output:2` and back with `ovs-ofctl -O OpenFlow13`, then measures:
//! - **latency**: `ping` h1 -> h2, 200 requests 5 ms apart (after one to
//!   resolve ARP): the median and 99th percentile round trip;
//! - **throughput**: `netlab blast` (`blast.rs`) sends 64-byte, then
//!   1500-byte frames from h1 for `--secs` seconds; the rate is what
//!   arrived at h2 (its interface counters) over that time. Beside it,
//!   the switch's CPU time (user and system, `/proc/PID/stat`) per frame
//!   forwarded: what a frame costs the switch whatever else runs on its
//!   core, the figure that holds on a machine shared with other work; and
//!   for baton switch the frames the kernel dropped at its RX ring (its
//!   port 1 `rx_dropped`).
//!
//! Rounds alternate which switch goes first. Then, for each N of
//! `--flows`, each switch gets N flows that match none of the traffic,
//! in four shapes at higher priorities (IPv4 destination /32, /24, UDP
//! destination port, in_port + Ethernet destination), added with one
//! `ovs-ofctl add-flows`: its wall time (`ovs-ofctl` parsing and sending
//! included, the same client for both) and the switch's CPU time per
//! flow-mod (the rate a switch accepts flow-mods at, less the client);
//! its resident memory before and after (memory per flow); and the
//! 64-byte forwarding rate and CPU per frame with them installed (the
//! lookup cost against the number of flows, caches included).
//!
//! Why one file of about 700 lines: it is one measurement procedure, read
//! top to bottom (set-up, rounds for each switch, flow-count rows, the
//! table), and each step uses the lab set up by the one before.

use baton_netlab::{Cmd, Lab, OfVersion, Proc, SwitchOptions, Topology};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The CPU the switch runs on; the generator and ping run on the other.
const SWITCH_CPU: &str = "1";
const GENERATOR_CPU: &str = "0";
/// Where `baton switch` listens for `ovs-ofctl`, on the lab's loopback.
const BATON_TARGET: &str = "tcp:127.0.0.1:6634";
const OVS_BRIDGE: &str = "br0";
/// Pings per latency figure, and their interval.
const PINGS: u32 = 200;
const PING_INTERVAL: &str = "0.005";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Which {
    Baton,
    Ovs,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Baton => "baton switch",
            Which::Ovs => "OVS netdev",
        }
    }
}

struct Options {
    runs: usize,
    flow_runs: usize,
    secs: f64,
    flows: Vec<usize>,
    baton: PathBuf,
}

/// A switch attached to s1's ends.
struct Attached {
    which: Which,
    proc: Option<Proc>,
    target: String,
    pid: u32,
}

struct Bench {
    lab: Lab,
    opts: Options,
    netlab: PathBuf,
    ovs_pid: u32,
}

fn e(x: impl ToString) -> String {
    x.to_string()
}

/// Resident memory of `pid` in KiB.
fn rss_kib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(f64::NAN)
}

/// User plus system CPU time of process `pid` (all its threads), in
/// seconds.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15, the 12th and 13th after `)`.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    // SAFETY: sysconf takes an integer and touches no memory of ours.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz
}

/// The flow-table lines for `n` flows that match none of the generator's
/// frames (UDP 10.0.0.1 -> 10.0.0.2 port 9, to 02:00:00:00:00:ff), in the
/// benchmark's four shapes, then the two that forward.
fn flow_file(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let (hi, lo) = ((i >> 8) & 0xff, i & 0xff);
        let _ = match i % 4 {
            0 => writeln!(
                s,
                "priority=400,ip,nw_dst=10.{}.{hi}.{lo},actions=output:2",
                128 + (i >> 16)
            ),
            1 => writeln!(
                s,
                "priority=300,ip,nw_dst=11.{}.{}.0/24,actions=output:2",
                (i >> 10) & 0xff,
                (i >> 2) & 0xff
            ),
            2 => writeln!(
                s,
                "priority=200,udp,tp_dst={},actions=output:2",
                1000 + i / 4
            ),
            _ => writeln!(
                s,
                "priority=100,in_port=1,dl_dst=02:01:00:{:02x}:{hi:02x}:{lo:02x},actions=output:2",
                i >> 16
            ),
        };
    }
    s.push_str("priority=10,in_port=1,actions=output:2\npriority=10,in_port=2,actions=output:1\n");
    s
}

fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

impl Bench {
    fn new(opts: Options) -> Result<Bench, String> {
        let lab = Lab::new().map_err(e)?;
        lab.build(&Topology::single(2), &SwitchOptions::new().veth_only())
            .map_err(e)?;
        lab.ovs().map_err(e)?;
        lab.vsctl([
            "add-br",
            OVS_BRIDGE,
            "--",
            "set",
            "bridge",
            OVS_BRIDGE,
            "datapath_type=netdev",
            "fail_mode=secure",
            "protocols=OpenFlow10,OpenFlow13",
            "other-config:datapath-id=00000000000000b2",
            "other-config:disable-in-band=true",
        ])
        .map_err(e)?;
        let ovs_pid = lab
            .daemon_pid("ovs-vswitchd")
            .ok_or("ovs-vswitchd is not running")?;
        // Every thread of ovs-vswitchd (threads made later inherit it).
        run_here(&[
            "taskset",
            "-a",
            "-p",
            "-c",
            SWITCH_CPU,
            &ovs_pid.to_string(),
        ])?;
        // The switch ends like the hosts' (`tx off`): no offloaded
        // checksums or segments for either switch to meet.
        for i in ["s1-eth1", "s1-eth2"] {
            lab.exec(Cmd::new("ethtool").args(["-K", i, "tx", "off"]))
                .map_err(e)?;
        }
        let netlab = std::env::current_exe().map_err(e)?;
        Ok(Bench {
            lab,
            opts,
            netlab,
            ovs_pid,
        })
    }

    fn attach(&self, which: Which) -> Result<Attached, String> {
        match which {
            Which::Baton => {
                let cmd = Cmd::new("taskset")
                    .args(["-c", SWITCH_CPU])
                    .arg(self.opts.baton.display().to_string())
                    .args(["switch", "--dpid", "0xb1", "--of", "13"])
                    .args(["--listen", "ptcp:6634:127.0.0.1"])
                    .args(["--port", "s1-eth1", "s1-eth2"])
                    .env("RUST_LOG", "warn");
                let p = self.lab.spawn(cmd).map_err(e)?;
                self.lab
                    .wait_listening(6634, Duration::from_secs(10))
                    .map_err(|err| format!("{err}\n{}", p.stderr()))?;
                let pid = p.pid().ok_or("baton switch exited")?;
                Ok(Attached {
                    which,
                    proc: Some(p),
                    target: BATON_TARGET.into(),
                    pid,
                })
            }
            Which::Ovs => {
                let mut args: Vec<String> = Vec::new();
                for port in [1, 2] {
                    let name = format!("s1-eth{port}");
                    args.extend(
                        [
                            "--",
                            "add-port",
                            OVS_BRIDGE,
                            &name,
                            "--",
                            "set",
                            "interface",
                            &name,
                            &format!("ofport_request={port}"),
                        ]
                        .map(String::from),
                    );
                }
                self.lab.vsctl(args).map_err(e)?;
                Ok(Attached {
                    which,
                    proc: None,
                    target: OVS_BRIDGE.into(),
                    pid: self.ovs_pid,
                })
            }
        }
    }

    fn detach(&self, a: Attached) -> Result<(), String> {
        match a.which {
            Which::Baton => {
                if let Some(mut p) = a.proc {
                    p.signal(libc::SIGTERM);
                    let _ = p.wait_timeout(Duration::from_secs(10));
                }
                Ok(())
            }
            Which::Ovs => {
                self.ofctl(&a, &["del-flows"])?;
                self.lab
                    .vsctl([
                        "--", "del-port", OVS_BRIDGE, "s1-eth1", "--", "del-port", OVS_BRIDGE,
                        "s1-eth2",
                    ])
                    .map_err(e)
                    .map(drop)
            }
        }
    }

    fn ofctl(&self, a: &Attached, args: &[&str]) -> Result<String, String> {
        let mut all = vec![args[0], a.target.as_str()];
        all.extend(&args[1..]);
        self.lab.ofctl(OfVersion::V13, all).map_err(e)
    }

    /// Installs `n` non-matching flows and the two forwarding ones;
    /// returns how long `ovs-ofctl add-flows` took.
    fn install(&self, a: &Attached, n: usize) -> Result<Duration, String> {
        let path = self.lab.dir().join(format!("flows-{n}.txt"));
        if !path.exists() {
            std::fs::write(&path, flow_file(n)).map_err(e)?;
        }
        let cmd = Cmd::new("ovs-ofctl")
            .args(["--timeout=120", "-O", "OpenFlow13", "add-flows"])
            .arg(a.target.clone())
            .arg(path.display().to_string())
            .timeout(Duration::from_secs(150));
        let t = Instant::now();
        self.lab.exec(cmd).map_err(e)?;
        let took = t.elapsed();
        let dump = self.ofctl(a, &["dump-aggregate"])?;
        if !dump.contains(&format!("flow_count={}", n + 2)) {
            return Err(format!(
                "{}: {n} + 2 flows expected:\n{dump}",
                a.which.name()
            ));
        }
        Ok(took)
    }

    /// Round trips of PINGS pings h1 -> h2 (ms), after one that resolves
    /// ARP.
    fn latency(&self) -> Result<Vec<f64>, String> {
        self.lab
            .wait_reachable("h1", "10.0.0.2", Duration::from_secs(10))
            .map_err(e)?;
        let cmd = Cmd::new("taskset")
            .args(["-c", GENERATOR_CPU, "ping", "-n", "-c"])
            .arg(PINGS.to_string())
            .args(["-i", PING_INTERVAL, "-W", "1", "10.0.0.2"])
            .host("h1");
        let out = self.lab.exec(cmd).map_err(e)?;
        let rtts: Vec<f64> = baton_netlab::ping::parse_replies(&out.stdout)
            .iter()
            .map(|r| r.rtt.as_secs_f64() * 1e3)
            .collect();
        if rtts.len() < PINGS as usize * 9 / 10 {
            return Err(format!("too few replies:\n{}", out.stdout));
        }
        Ok(rtts)
    }

    /// What h1 sending `size`-byte frames as fast as it can gives.
    fn throughput(&self, a: &Attached, size: usize) -> Result<Rate, String> {
        let before = self.lab.counters("h2", 0).map_err(e)?.rx_packets;
        let drops_before = self.ring_drops(a)?;
        let cpu_before = cpu_secs(a.pid);
        let cmd = Cmd::new("taskset")
            .args(["-c", GENERATOR_CPU])
            .arg(self.netlab.display().to_string())
            .args(["blast", "h1-eth0", &size.to_string()])
            .arg(self.opts.secs.to_string())
            .host("h1")
            .timeout(Duration::from_secs_f64(self.opts.secs + 20.0));
        let out = self.lab.exec(cmd).map_err(e)?;
        // Let the switch drain its rings.
        std::thread::sleep(Duration::from_millis(100));
        let after = self.lab.counters("h2", 0).map_err(e)?.rx_packets;
        let cpu = cpu_secs(a.pid) - cpu_before;
        let words: Vec<&str> = out.stdout.split_whitespace().collect();
        let sent: f64 = words
            .get(1)
            .and_then(|w| w.parse().ok())
            .unwrap_or(f64::NAN);
        let secs: f64 = words
            .get(4)
            .and_then(|w| w.parse().ok())
            .unwrap_or(self.opts.secs);
        let got = (after - before) as f64;
        let ring_drops = match a.which {
            Which::Baton => {
                // baton switch reads the kernel's count once a second.
                std::thread::sleep(Duration::from_millis(1100));
                self.ring_drops(a)?.zip(drops_before).map(|(x, y)| x - y)
            }
            Which::Ovs => None,
        };
        Ok(Rate {
            received: got / secs,
            offered: sent / secs,
            cpu_ns: cpu * 1e9 / got,
            ring_drops: ring_drops.map(|d| d as f64 / secs),
        })
    }

    /// Port 1's `rx_dropped` as `ovs-ofctl dump-ports` shows it, for baton
    /// switch: frames the kernel dropped because its RX ring was full.
    fn ring_drops(&self, a: &Attached) -> Result<Option<u64>, String> {
        if a.which != Which::Baton {
            return Ok(None);
        }
        let text = self.ofctl(a, &["dump-ports", "1"])?;
        Ok(text
            .split([' ', ','])
            .find_map(|w| w.strip_prefix("drop="))
            .and_then(|n| n.parse().ok()))
    }
}

fn run_here(argv: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|err| format!("{}: {err}", argv[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{argv:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// One throughput figure.
struct Rate {
    /// Frames per second that reached h2.
    received: f64,
    /// Frames per second h1 sent.
    offered: f64,
    /// The switch's CPU time (user and system, all threads) per frame
    /// that reached h2, in ns: its cost per frame whatever else ran on its
    /// core. Softirq work done in its system calls (the veth's delivery to
    /// h2) is charged to it, for both switches alike.
    cpu_ns: f64,
    /// Frames per second the kernel dropped because the switch's RX ring
    /// was full (baton switch only).
    ring_drops: Option<f64>,
}

#[derive(Default)]
struct Series {
    received: Vec<f64>,
    offered: Vec<f64>,
    cpu_ns: Vec<f64>,
}

impl Series {
    fn push(&mut self, r: &Rate) {
        self.received.push(r.received);
        self.offered.push(r.offered);
        self.cpu_ns.push(r.cpu_ns);
    }
}

#[derive(Default)]
struct Figures {
    lat_median: Vec<f64>,
    lat_p99: Vec<f64>,
    small: Series,
    large: Series,
}

#[derive(Default, Clone)]
struct FlowFigures {
    install_s: Vec<f64>,
    install_cpu_us: Vec<f64>,
    kib_per_flow: Vec<f64>,
    rate: Vec<f64>,
    cpu_ns: Vec<f64>,
}

/// `netlab measure forwarding [--runs N] [--flow-runs N] [--secs S]
/// [--flows N,N,...] [--baton PATH]`.
pub fn main(args: &[String]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(e)?;
    let mut opts = Options {
        runs: 5,
        flow_runs: 3,
        secs: 2.0,
        flows: vec![10, 100, 1_000, 10_000, 100_000],
        baton: exe.with_file_name("baton"),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--runs" => opts.runs = val()?.parse().map_err(e)?,
            "--flow-runs" => opts.flow_runs = val()?.parse().map_err(e)?,
            "--secs" => opts.secs = val()?.parse().map_err(e)?,
            "--flows" => {
                opts.flows = val()?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse().map_err(e))
                    .collect::<Result<_, _>>()?
            }
            "--baton" => opts.baton = PathBuf::from(val()?),
            other => return Err(format!("unexpected `{other}`")),
        }
    }
    if !opts.baton.exists() {
        return Err(format!(
            "no baton binary at {} (cargo build --release -p baton, or --baton PATH)",
            opts.baton.display()
        ));
    }
    let bench = Bench::new(opts)?;
    let both = |round: usize| {
        if round % 2 == 0 {
            [Which::Baton, Which::Ovs]
        } else {
            [Which::Ovs, Which::Baton]
        }
    };

    let mut figs: [Figures; 2] = Default::default();
    for round in 0..bench.opts.runs {
        for which in both(round) {
            let a = bench.attach(which)?;
            let result = (|| -> Result<(), String> {
                bench.install(&a, 0)?;
                let f = &mut figs[which as usize];
                let rtts = bench.latency()?;
                f.lat_median.push(median(&rtts));
                f.lat_p99.push(percentile(&rtts, 0.99));
                let small = bench.throughput(&a, 64)?;
                f.small.push(&small);
                let large = bench.throughput(&a, 1500)?;
                f.large.push(&large);
                eprintln!(
                    "round {round} {}: ping {:.3} ms, 64 B {:.0} f/s (of {:.0}, {:.0} ns CPU each, ring drops {:?}/s), 1500 B {:.0} f/s (of {:.0}, {:.0} ns, ring drops {:?}/s)",
                    which.name(),
                    median(&rtts),
                    small.received,
                    small.offered,
                    small.cpu_ns,
                    small.ring_drops.map(|d| d as u64),
                    large.received,
                    large.offered,
                    large.cpu_ns,
                    large.ring_drops.map(|d| d as u64),
                );
                Ok(())
            })();
            bench.detach(a)?;
            result?;
        }
    }

    let mut flow_figs: Vec<[FlowFigures; 2]> = vec![Default::default(); bench.opts.flows.len()];
    for (k, &n) in bench.opts.flows.iter().enumerate() {
        for round in 0..bench.opts.flow_runs {
            for which in both(round) {
                let a = bench.attach(which)?;
                let result = (|| -> Result<(), String> {
                    std::thread::sleep(Duration::from_millis(200));
                    let before = rss_kib(a.pid);
                    let cpu_before = cpu_secs(a.pid);
                    let took = bench.install(&a, n)?;
                    let cpu = cpu_secs(a.pid) - cpu_before;
                    std::thread::sleep(Duration::from_millis(500));
                    let after = rss_kib(a.pid);
                    bench.latency()?;
                    let r = bench.throughput(&a, 64)?;
                    let f = &mut flow_figs[k][which as usize];
                    f.install_s.push(took.as_secs_f64());
                    f.install_cpu_us.push(cpu * 1e6 / (n as f64 + 2.0));
                    f.kib_per_flow.push((after - before) / n as f64);
                    f.rate.push(r.received);
                    f.cpu_ns.push(r.cpu_ns);
                    eprintln!(
                        "{n} flows, round {round}, {}: installed in {:.3} s ({:.1} µs CPU each), {:.0} B/flow, 64 B {:.0} f/s, {:.0} ns CPU each",
                        which.name(),
                        took.as_secs_f64(),
                        cpu * 1e6 / (n as f64 + 2.0),
                        (after - before) * 1024.0 / n as f64,
                        r.received,
                        r.cpu_ns
                    );
                    Ok(())
                })();
                bench.detach(a)?;
                result?;
            }
        }
    }

    print_report(&bench.opts, &figs, &flow_figs);
    bench.lab.close().map(drop).map_err(e)
}

fn print_report(opts: &Options, figs: &[Figures; 2], flow_figs: &[[FlowFigures; 2]]) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "Medians of {} interleaved rounds, {} s per throughput figure, {PINGS} pings {PING_INTERVAL} s apart; load average at the end: {}",
        opts.runs,
        opts.secs,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!();
    println!(
        "| switch | ping RTT median | ping RTT p99 | 64-byte frames: forwarded/s (offered) | switch CPU per 64-byte frame | 1500-byte frames: forwarded/s (offered) | switch CPU per 1500-byte frame |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for which in [Which::Baton, Which::Ovs] {
        let f = &figs[which as usize];
        let small = median(&f.small.received);
        let large = median(&f.large.received);
        println!(
            "| {} | {:.3} ms | {:.3} ms | {:.0} k ({:.0} Mb/s; {:.0} k) | {:.0} ns | {:.0} k ({:.2} Gb/s; {:.0} k) | {:.0} ns |",
            which.name(),
            median(&f.lat_median),
            median(&f.lat_p99),
            small / 1e3,
            small * 64.0 * 8.0 / 1e6,
            median(&f.small.offered) / 1e3,
            median(&f.small.cpu_ns),
            large / 1e3,
            large * 1500.0 * 8.0 / 1e9,
            median(&f.large.offered) / 1e3,
            median(&f.large.cpu_ns),
        );
    }
    // Each round measured both switches within seconds of each other:
    // their ratio shifts less with the machine's load than either rate.
    let ratios = |b: &[f64], o: &[f64]| {
        let r: Vec<f64> = b.iter().zip(o).map(|(b, o)| b / o).collect();
        let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{:.2} ({lo:.2}-{hi:.2})", median(&r))
    };
    let (b, o) = (&figs[Which::Baton as usize], &figs[Which::Ovs as usize]);
    println!();
    println!(
        "baton ÷ OVS within each round, median (range): 64-byte frames forwarded {}, 1500-byte {}; CPU per 64-byte frame {}, per 1500-byte {}",
        ratios(&b.small.received, &o.small.received),
        ratios(&b.large.received, &o.large.received),
        ratios(&b.small.cpu_ns, &o.small.cpu_ns),
        ratios(&b.large.cpu_ns, &o.large.cpu_ns),
    );
    if flow_figs.is_empty() {
        return;
    }
    println!();
    println!(
        "Medians of {} interleaved rounds per row; N flows that match none of the traffic, plus the two that forward. \
         add-flows: the wall time of `ovs-ofctl add-flows` (client included) and the switch's CPU time per flow-mod (from 10,000 flows up). \
         Memory: resident memory growth per flow, the largest of the rounds, shown from 10,000 flows up.",
        opts.flow_runs
    );
    println!();
    println!(
        "| flows | baton: 64-byte frames/s (CPU per frame) | OVS: 64-byte frames/s (CPU per frame) | baton: add-flows (switch CPU per flow-mod) | OVS: add-flows (switch CPU per flow-mod) | baton: memory per flow | OVS: memory per flow |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (n, f) in opts.flows.iter().zip(flow_figs) {
        let rate = |f: &FlowFigures| {
            format!(
                "{:.0} k ({:.0} ns)",
                median(&f.rate) / 1e3,
                median(&f.cpu_ns)
            )
        };
        let install = |f: &FlowFigures| {
            // CPU time comes in clock ticks (10 ms): too coarse below
            // 10,000 flow-mods.
            let cpu = if *n < 10_000 {
                "-".to_string()
            } else {
                format!("{:.1} µs", median(&f.install_cpu_us))
            };
            format!("{:.2} s ({cpu})", median(&f.install_s))
        };
        let mem = |f: &FlowFigures| {
            if *n < 10_000 {
                return "-".to_string();
            }
            // The largest growth: the first round, before the process
            // holds freed memory to reuse.
            let m = f.kib_per_flow.iter().copied().fold(f64::NAN, f64::max);
            format!("{:.0} B", m * 1024.0)
        };
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} |",
            rate(&f[0]),
            rate(&f[1]),
            install(&f[0]),
            install(&f[1]),
            mem(&f[0]),
            mem(&f[1])
        );
    }
}
