//! `netlab measure`: how long building topologies takes on this machine,
//! and whether they work: the figures of BENCHMARKS.md's "The test
//! laboratory's own costs".
//!
//! For each topology, `runs` times:
//! - **controller**: a lab with `ovs-testcontroller` listening (one per
//!   16 switches, the most one serves), the topology built in secure mode
//!   against them (the switches in groups of 16, then the hosts and
//!   links): the time to make the lab,
//!   start OVS, build, until every bridge is connected; then, for a
//!   loop-free topology, pings between every pair of hosts; the CPU time
//!   `ovs-vswitchd` takes over 3 idle seconds and its memory; the time to
//!   close the lab.
//! - **rstp** (topologies with loops, where a learning switch would
//!   storm): the same topology in standalone mode with RSTP, the time until
//!   the first host reaches the last, and until pings from the first host
//!   to every other and back (all pairs when there are at most 16 hosts)
//!   all succeed.

use baton_netlab::{Cmd, FailMode, Lab, SpanningTree, SwitchOptions, Topology};
use std::time::{Duration, Instant};

/// How long a figure may take before the run is declared failed.
const LIMIT: Duration = Duration::from_secs(120);

/// The figures of one run of one topology.
#[derive(Default, Clone)]
struct Run {
    new: f64,
    ovs: f64,
    build: f64,
    connect: f64,
    pings: Option<(usize, usize, f64)>,
    cpu_pct: f64,
    rss_mib: f64,
    close: f64,
    /// First path, all sampled pairs clean, pairs, clean pairs, the last
    /// sample's time (ms).
    rstp: Option<(f64, f64, usize, usize, f64)>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn timed<T>(f: impl FnOnce() -> baton_netlab::Result<T>) -> Result<(T, f64), String> {
    let t = Instant::now();
    let v = f().map_err(|e| e.to_string())?;
    Ok((v, ms(t.elapsed())))
}

/// The ordered pairs to ping: all of them for up to 16 hosts, else from
/// the first host to every other and back.
fn pairs(topo: &Topology) -> Vec<(String, String)> {
    let names: Vec<&String> = topo.hosts.iter().map(|h| &h.name).collect();
    let mut out = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for (j, b) in names.iter().enumerate() {
            if i != j && (names.len() <= 16 || i == 0 || j == 0) {
                out.push((a.to_string(), b.to_string()));
            }
        }
    }
    out
}

/// User plus system CPU time of `pid`, in seconds, and its resident
/// memory in MiB.
fn cpu_and_rss(pid: u32) -> (f64, f64) {
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
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss_kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    (ticks / hz, rss_kib / 1024.0)
}

fn has_loop(topo: &Topology) -> bool {
    // A connected graph with at least as many links as nodes has a cycle.
    topo.links.len() >= topo.switches.len() + topo.hosts.len()
}

/// How many switches one `ovs-testcontroller` serves (`MAX_SWITCHES` in
/// its source: past it, it stops accepting and spins on the listening
/// socket).
const PER_CONTROLLER: usize = 16;

fn controller_run(topo: &Topology, run: &mut Run) -> Result<(), String> {
    let (lab, t) = timed(Lab::new)?;
    run.new = t;
    run.ovs = timed(|| lab.ovs())?.1;
    // One ovs-testcontroller per 16 switches, on ports 6653, 6654, ...
    let groups: Vec<(u16, Topology)> = topo
        .switches
        .chunks(PER_CONTROLLER)
        .zip(6653u16..)
        .map(|(chunk, port)| {
            let mut t = Topology::new();
            t.switches = chunk.to_vec();
            (port, t)
        })
        .collect();
    let mut controllers = Vec::new();
    for (port, _) in &groups {
        let cmd = Cmd::new("ovs-testcontroller").arg(format!("ptcp:{port}"));
        controllers.push(lab.spawn(cmd).map_err(|e| e.to_string())?);
        lab.wait_listening(*port, LIMIT)
            .map_err(|e| e.to_string())?;
    }
    let mut rest = topo.clone();
    rest.switches.clear();
    run.build = timed(|| {
        for (port, switches) in &groups {
            let opts = SwitchOptions::new().controller(format!("tcp:127.0.0.1:{port}"));
            lab.build(switches, &opts)?;
        }
        lab.build(&rest, &SwitchOptions::new())
    })?
    .1;
    let start = Instant::now();
    for (port, switches) in &groups {
        lab.wait_connections(*port, switches.switches.len(), LIMIT)
            .map_err(|e| e.to_string())?;
    }
    run.connect = ms(start.elapsed());
    if !has_loop(topo) {
        let (first, last) = (&topo.hosts[0], &topo.hosts[topo.hosts.len() - 1]);
        lab.wait_reachable(&first.name, last.ip, LIMIT)
            .map_err(|e| e.to_string())?;
        let (m, t) = timed(|| lab.ping_pairs(&pairs(topo), 1, Duration::from_secs(10)))?;
        run.pings = Some((m.pairs.len(), m.pairs.len() - m.failures().len(), t));
    }
    let pid = lab
        .daemon_pid("ovs-vswitchd")
        .ok_or("ovs-vswitchd not found")?;
    let (cpu0, _) = cpu_and_rss(pid);
    std::thread::sleep(Duration::from_secs(3));
    let (cpu1, rss) = cpu_and_rss(pid);
    run.cpu_pct = (cpu1 - cpu0) / 3.0 * 100.0;
    run.rss_mib = rss;
    drop(controllers);
    run.close = timed(|| lab.close())?.1;
    Ok(())
}

fn rstp_run(topo: &Topology, run: &mut Run) -> Result<(), String> {
    let lab = Lab::new().map_err(|e| e.to_string())?;
    let opts = SwitchOptions::new()
        .fail_mode(FailMode::Standalone)
        .spanning_tree(SpanningTree::Rstp);
    lab.build(topo, &opts).map_err(|e| e.to_string())?;
    let (first, last) = (&topo.hosts[0], &topo.hosts[topo.hosts.len() - 1]);
    let start = Instant::now();
    let converge = lab
        .wait_reachable(&first.name, last.ip, LIMIT)
        .map_err(|e| e.to_string())?;
    // Other paths may still be converging: ping the sample until it is
    // clean (or the limit passes), and report the last sample.
    loop {
        let (m, t) = timed(|| lab.ping_pairs(&pairs(topo), 1, Duration::from_secs(10)))?;
        let ok = m.pairs.len() - m.failures().len();
        run.rstp = Some((ms(converge), ms(start.elapsed()), m.pairs.len(), ok, t));
        if m.all_clean() || start.elapsed() > LIMIT {
            break;
        }
    }
    lab.close().map_err(|e| e.to_string())?;
    Ok(())
}

/// The median of `f` over the runs.
fn median(runs: &[Run], f: impl Fn(&Run) -> Option<f64>) -> Option<f64> {
    let mut v: Vec<f64> = runs.iter().filter_map(f).collect();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
}

/// `netlab measure [--runs N] [TOPOLOGY...]`.
pub fn main(args: &[String]) -> Result<(), String> {
    let mut runs = 3;
    let mut specs = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--runs" {
            runs = it
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or("--runs needs a number")?;
        } else {
            specs.push(a.clone());
        }
    }
    if specs.is_empty() {
        specs = vec!["linear:3".into(), "ring:4".into(), "fat-tree:4".into()];
    }
    println!(
        "| topology | switches / hosts / links | new lab | OVS start | build | all connected | \
         pings (ok/pairs, time) | ovs-vswitchd idle CPU | RSS | close | RSTP: first path / all pairs | RSTP pings (ok/pairs, time) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for spec in specs {
        let topo = Topology::named(&spec).map_err(|e| e.to_string())?;
        let mut done = Vec::new();
        for i in 0..runs {
            let mut run = Run::default();
            let result = controller_run(&topo, &mut run).and_then(|()| {
                if has_loop(&topo) {
                    rstp_run(&topo, &mut run)
                } else {
                    Ok(())
                }
            });
            if let Err(e) = result {
                eprintln!("{spec} run {i}: {e}");
                continue;
            }
            done.push(run);
        }
        if done.is_empty() {
            println!("| {spec} | failed: see the errors above |");
            continue;
        }
        let pings = |p: Option<(usize, usize, f64)>| match p {
            Some((n, ok, t)) => format!("{ok}/{n}, {:.2} s", t / 1e3),
            None => "- (loops)".into(),
        };
        let last = &done[done.len() / 2];
        println!(
            "| {spec} | {} / {} / {} | {} ms | {} ms | {} ms | {} ms | {} | {} % | {} MiB | {} ms | {} | {} |",
            topo.switches.len(),
            topo.hosts.len(),
            topo.links.len(),
            cell(median(&done, |r| Some(r.new)), 0),
            cell(median(&done, |r| Some(r.ovs)), 0),
            cell(median(&done, |r| Some(r.build)), 0),
            cell(median(&done, |r| Some(r.connect)), 0),
            pings(last.pings),
            cell(median(&done, |r| Some(r.cpu_pct)), 1),
            cell(median(&done, |r| Some(r.rss_mib)), 0),
            cell(median(&done, |r| Some(r.close)), 0),
            match (
                median(&done, |r| r.rstp.map(|x| x.0)),
                median(&done, |r| r.rstp.map(|x| x.1))
            ) {
                (Some(a), Some(b)) => format!("{:.1} s / {:.1} s", a / 1e3, b / 1e3),
                _ => "-".into(),
            },
            last.rstp.map_or("-".into(), |(_, _, n, ok, t)| format!(
                "{ok}/{n}, {:.2} s",
                t / 1e3
            )),
        );
    }
    Ok(())
}
