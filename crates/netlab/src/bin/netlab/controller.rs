//! `netlab controller`: how a controller runs a network of Open vSwitch
//! bridges (or of `baton switch`es), measured from the outside, the same
//! way for any controller: the figures of BENCHMARKS.md's "The network
//! services on Open vSwitch".
//!
//! ```text
//! netlab controller --run 'CMD ARGS' [--topology linear:3] [--of 10|13]
//!                   [--samples N] [--links-api URL]
//!                   [--cut A-B [--cuts N] [--pairs first-last|half-way]
//!                    [--interval MS]] [--capture FILE]
//!                   [--baton-switch PATH [--start-gap MS]]
//! ```
//! The controller (`CMD ARGS`, split at spaces) runs inside a new lab and
//! must listen on the lab's `127.0.0.1:6653`; the topology is built
//! against it with bridges offering only the chosen version. With
//! `--baton-switch PATH` the switches are `PATH switch` processes on the
//! topology's veth ends instead (`--of` the version they speak, each
//! listening on `127.0.0.1:6700+i` for `ovs-ofctl`), started `--start-gap`
//! milliseconds apart (default 0), as switches booted at different times
//! are. Then:
//! - **discovery** (with `--links-api`, a URL inside the lab answering
//!   `{"links": [...]}`, as baton's `/api/v1/topology` does): the time from
//!   every switch connected until the controller reports every link in
//!   both directions;
//! - **first-packet latency**: the hosts are made to talk once (so a
//!   controller that tracks hosts knows them) and given static ARP entries;
//!   then, `samples` times, the flows towards the first and last hosts are
//!   deleted from every bridge (`ovs-ofctl del-flows dl_dst=...`) and one
//!   ping goes from the first host to the last: its round trip is two flow
//!   set-ups (there and back) plus the path, which the steady round trip
//!   (pings over installed flows) says;
//! - **reconvergence** (with `--cut A-B`): a ping every `--interval`
//!   milliseconds (default 10) for each pair (the first host to the last,
//!   or with `--pairs half-way` host `i` to host `i + n/2` modulo `n`,
//!   as `baton bench --topology --pairs half-way` runs them), the link A-B
//!   cut, and for each pair that lost a request the time from the cut
//!   until its replies came back for good ([`outage_after`], measured as
//!   `netemu` measures its reroute, so the two compare); with
//!   `--links-api`, the time until the controller reports the link gone
//!   (both directions), then, once it is, the link restored and the time
//!   until it is rediscovered; `cuts` times, each cut's time printed (as
//!   seconds since the epoch) to be found in the capture.
//!
//! With `--capture FILE`, `tcpdump` writes every OpenFlow segment on the
//! lab's loopback to FILE (pcap) for the whole run: what each switch said
//! when, to tell the switch's delay from the controller's.

use baton_netlab::{
    Cmd, HostSpec, Lab, OfVersion, PingReport, Proc, SwitchOptions, Topology, outage_after,
};
use std::time::{Duration, Instant, SystemTime};

const SECOND: Duration = Duration::from_secs(1);

struct Args {
    run: Vec<String>,
    topology: String,
    version: OfVersion,
    samples: usize,
    links_api: Option<String>,
    cut: Option<(String, String)>,
    cuts: usize,
    baton_switch: Option<String>,
    start_gap: Duration,
    half_way: bool,
    interval: Duration,
    capture: Option<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        run: Vec::new(),
        topology: "linear:3".into(),
        version: OfVersion::V13,
        samples: 50,
        links_api: None,
        cut: None,
        cuts: 5,
        baton_switch: None,
        start_gap: Duration::ZERO,
        half_way: false,
        interval: Duration::from_millis(10),
        capture: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--run" => a.run = value()?.split_whitespace().map(String::from).collect(),
            "--topology" => a.topology = value()?.clone(),
            "--of" => {
                a.version = match value()?.as_str() {
                    "10" => OfVersion::V10,
                    "13" => OfVersion::V13,
                    v => return Err(format!("--of {v}: 10 or 13")),
                }
            }
            "--samples" => a.samples = value()?.parse().map_err(|e| format!("--samples: {e}"))?,
            "--cuts" => a.cuts = value()?.parse().map_err(|e| format!("--cuts: {e}"))?,
            "--capture" => a.capture = Some(value()?.clone()),
            "--links-api" => a.links_api = Some(value()?.clone()),
            "--baton-switch" => a.baton_switch = Some(value()?.clone()),
            "--start-gap" => {
                let ms = value()?.parse().map_err(|e| format!("--start-gap: {e}"))?;
                a.start_gap = Duration::from_millis(ms);
            }
            "--pairs" => {
                a.half_way = match value()?.as_str() {
                    "first-last" => false,
                    "half-way" => true,
                    v => return Err(format!("--pairs {v}: first-last or half-way")),
                }
            }
            "--interval" => {
                let ms = value()?.parse().map_err(|e| format!("--interval: {e}"))?;
                a.interval = Duration::from_millis(ms);
            }
            "--cut" => {
                let v = value()?;
                let (x, y) = v.split_once('-').ok_or("--cut A-B, e.g. s1-s2")?;
                a.cut = Some((x.to_string(), y.to_string()));
            }
            other => return Err(format!("unexpected `{other}`")),
        }
    }
    if a.run.is_empty() {
        return Err("--run 'CMD ARGS' is required".into());
    }
    Ok(a)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Where the `i`th `baton switch` listens for `ovs-ofctl`.
const FIRST_OFCTL_PORT: usize = 6700;

/// Starts `PATH switch` for every switch of `topo` on its veth ends, `gap`
/// apart; returns the processes and the `ovs-ofctl` target of each.
fn baton_switches(
    lab: &Lab,
    topo: &Topology,
    path: &str,
    version: OfVersion,
    gap: Duration,
) -> Result<(Vec<Proc>, Vec<String>), String> {
    lab.build(topo, &SwitchOptions::new().veth_only())
        .map_err(err)?;
    let of = match version {
        OfVersion::V10 => "10",
        _ => "13",
    };
    let (mut procs, mut targets) = (Vec::new(), Vec::new());
    for (i, s) in topo.switches.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(gap);
        }
        let listen = format!("ptcp:{}:127.0.0.1", FIRST_OFCTL_PORT + i);
        let cmd = Cmd::new(path)
            .args(["switch", "--dpid", &s.dpid.0.to_string(), "--of", of])
            .args(["--controller", "tcp:127.0.0.1:6653", "--listen", &listen])
            .args(
                lab.software_switch_ports(topo, &s.name)
                    .map_err(err)?
                    .into_iter()
                    .flat_map(|p| ["--port".to_string(), p]),
            )
            .env("RUST_LOG", "warn");
        procs.push(lab.spawn(cmd).map_err(err)?);
        targets.push(format!("tcp:127.0.0.1:{}", FIRST_OFCTL_PORT + i));
    }
    Ok((procs, targets))
}

/// How many directed links the controller reports at `url`.
fn reported_links(lab: &Lab, url: &str) -> Result<usize, String> {
    let out = lab
        .output(Cmd::new("python3").args([
            "-c",
            "import json, sys, urllib.request; print(len(json.load(urllib.request.urlopen(sys.argv[1], timeout=5))['links']))",
            url,
        ]))
        .map_err(err)?;
    Ok(out.stdout.trim().parse().unwrap_or(0))
}

/// Waits until the controller reports `n` directed links; how long it took.
fn wait_links(lab: &Lab, url: &str, n: usize) -> Result<Duration, String> {
    let start = Instant::now();
    while reported_links(lab, url)? != n {
        if start.elapsed() > 30 * SECOND {
            return Err(format!("{n} links not reported within 30 s"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(start.elapsed())
}

/// When each request lost after `cut` was sent, in ms after it, the
/// requests' times read from the replies around them.
fn lost_after(replies: &[baton_netlab::Reply], cut: SystemTime) -> String {
    let at = |r: &baton_netlab::Reply| {
        let sent = r.at.and_then(|at| at.checked_sub(r.rtt))?;
        Some(match sent.duration_since(cut) {
            Ok(d) => ms(d),
            Err(e) => -ms(e.duration()),
        })
    };
    let mut out = Vec::new();
    for w in replies.windows(2) {
        if w[1].seq > w[0].seq + 1 && w[1].at.is_some_and(|t| t >= cut) {
            if let (Some(a), Some(b)) = (at(&w[0]), at(&w[1])) {
                out.push(format!(
                    "{a:.1}..{b:.1} (seq {}..{})",
                    w[0].seq + 1,
                    w[1].seq - 1
                ));
            }
        }
    }
    out.join(", ")
}

/// Mean, median and 99th percentile of `xs`, in ms.
fn summary(xs: &mut [f64]) -> String {
    if xs.is_empty() {
        return "no samples".into();
    }
    xs.sort_by(f64::total_cmp);
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let pct = |p: f64| xs[((xs.len() - 1) as f64 * p).round() as usize];
    format!(
        "mean {mean:.2} ms, median {:.2} ms, p99 {:.2} ms, max {:.2} ms (n={})",
        pct(0.5),
        pct(0.99),
        xs[xs.len() - 1],
        xs.len()
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn main(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    let topo = Topology::named(&a.topology).map_err(err)?;
    let lab = Lab::new().map_err(err)?;
    let _capture = match &a.capture {
        Some(file) => Some(
            lab.spawn(
                Cmd::new("tcpdump").args(["-i", "lo", "-U", "-w", file, "tcp", "port", "6653"]),
            )
            .map_err(err)?,
        ),
        None => None,
    };
    let ctl = lab
        .spawn(Cmd::new(&a.run[0]).args(a.run[1..].iter().cloned()))
        .map_err(err)?;
    lab.wait_listening(6653, 10 * SECOND).map_err(err)?;
    let (_switches, ofctl_targets) = match &a.baton_switch {
        None => {
            let opts = SwitchOptions::new()
                .controller("tcp:127.0.0.1:6653")
                .protocols(&[a.version]);
            lab.build(&topo, &opts).map_err(err)?;
            let targets = topo.switches.iter().map(|s| s.name.clone()).collect();
            (Vec::new(), targets)
        }
        Some(path) => baton_switches(&lab, &topo, path, a.version, a.start_gap)?,
    };
    lab.wait_controller_connections(topo.switches.len(), 30 * SECOND)
        .map_err(err)?;
    println!(
        "controller: {}\nswitches: {}\ntopology: {} ({} switches, {} hosts), {}",
        a.run.join(" "),
        match &a.baton_switch {
            None => "Open vSwitch (userspace datapath)".to_string(),
            Some(path) => format!(
                "{path} switch, started {} ms apart",
                a.start_gap.as_millis()
            ),
        },
        a.topology,
        topo.switches.len(),
        topo.hosts.len(),
        a.version
    );
    let links = topo.switch_links().len() * 2;
    if let Some(url) = &a.links_api {
        let took = wait_links(&lab, url, links)?;
        println!("discovery: {links} directed links in {:.1} ms", ms(took));
    }

    // Every host talks once, then ARP is static.
    let (first, last) = (&topo.hosts[0], &topo.hosts[topo.hosts.len() - 1]);
    lab.wait_reachable(&first.name, last.ip, 20 * SECOND)
        .map_err(err)?;
    let all = lab.ping_all(1, 10 * SECOND).map_err(err)?;
    println!("warm-up: {all}");
    for h in &topo.hosts {
        for o in topo.hosts.iter().filter(|o| o.name != h.name) {
            lab.exec(
                Cmd::new("ip")
                    .args(["neigh", "replace", &o.ip.to_string(), "lladdr"])
                    .arg(o.mac.to_string())
                    .args(["dev", &format!("{}-eth0", h.name), "nud", "permanent"])
                    .host(&h.name),
            )
            .map_err(err)?;
        }
    }

    // First packets.
    let mut firsts = Vec::new();
    for _ in 0..a.samples {
        for target in &ofctl_targets {
            for mac in [first.mac, last.mac] {
                lab.ofctl(a.version, ["del-flows", target, &format!("dl_dst={mac}")])
                    .map_err(err)?;
            }
        }
        let out = lab
            .output(
                Cmd::new("ping")
                    .args(["-n", "-c", "1", "-W", "2", &last.ip.to_string()])
                    .host(&first.name),
            )
            .map_err(err)?;
        match PingReport::parse(&out.stdout).rtts.first() {
            Some(rtt) => firsts.push(ms(*rtt)),
            None => eprintln!("a first ping got no reply:\n{}", out.stdout),
        }
    }
    let steady = lab
        .ping(&first.name, last.ip, 20, 20 * SECOND)
        .map_err(err)?;
    let mut steady_ms: Vec<f64> = steady.rtts.iter().map(|d| ms(*d)).collect();
    println!(
        "first packet {} -> {} (two flow set-ups and the path): {}",
        first.name,
        last.name,
        summary(&mut firsts)
    );
    println!("steady round trip: {}", summary(&mut steady_ms));

    if let Some((x, y)) = &a.cut {
        let cut_links = topo
            .links
            .iter()
            .filter(|l| (l.a.node == *x && l.b.node == *y) || (l.a.node == *y && l.b.node == *x))
            .count();
        let n = topo.hosts.len();
        let pairs: Vec<(&HostSpec, &HostSpec)> = if a.half_way {
            (0..n)
                .map(|i| (&topo.hosts[i], &topo.hosts[(i + n / 2) % n]))
                .collect()
        } else {
            vec![(first, last)]
        };
        let mut outages = Vec::new();
        let mut affected = Vec::new();
        let mut removed = Vec::new();
        let mut rediscovered = Vec::new();
        for _ in 0..a.cuts {
            let streams = pairs
                .iter()
                .map(|(from, to)| lab.ping_stream(&from.name, to.ip, a.interval))
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            let ready = SystemTime::now();
            for s in &streams {
                s.wait_reply_after(ready, 10 * SECOND).map_err(err)?;
            }
            let cut = SystemTime::now();
            lab.set_link_down(x, y).map_err(err)?;
            let since_epoch = cut
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            println!("cut {x}-{y} at {:.6}", since_epoch.as_secs_f64());
            if let Some(url) = &a.links_api {
                // Restored only once the controller knows it was cut.
                wait_links(&lab, url, links - 2 * cut_links)?;
                let since = SystemTime::now().duration_since(cut).unwrap_or_default();
                removed.push(ms(since));
            }
            for s in &streams {
                s.wait_reply_after(cut, 20 * SECOND).map_err(err)?;
            }
            // Long enough for a second loss (a path installed twice) to
            // show, and for the last lost request's successor to arrive.
            std::thread::sleep(SECOND / 2);
            let mut hit = 0;
            for (s, (from, to)) in streams.into_iter().zip(&pairs) {
                let replies = s.replies();
                if let Some(took) = outage_after(&replies, cut) {
                    outages.push(ms(took));
                    hit += 1;
                    let lost = lost_after(&replies, cut);
                    println!(
                        "  {} -> {}: back {:.1} ms after the cut; lost requests sent at {lost}",
                        from.name,
                        to.name,
                        ms(took)
                    );
                }
                let report = s.stop().map_err(err)?;
                if report.duplicates > 0 {
                    println!("duplicates during the cut: {report}");
                }
            }
            affected.push(hit);
            let restored = Instant::now();
            lab.set_link_up(x, y).map_err(err)?;
            if let Some(url) = &a.links_api {
                wait_links(&lab, url, links)?;
                rediscovered.push(ms(restored.elapsed()));
            } else {
                std::thread::sleep(2 * SECOND);
            }
        }
        println!(
            "pairs that lost traffic when {x}-{y} was cut: {affected:?} of {} ({} ms between requests)",
            pairs.len(),
            a.interval.as_millis()
        );
        println!(
            "reroute after cutting {x}-{y} (cut to traffic back, each affected pair): {}",
            summary(&mut outages)
        );
        if !removed.is_empty() {
            println!("cut link reported gone after: {}", summary(&mut removed));
        }
        if !rediscovered.is_empty() {
            println!(
                "restored link rediscovered after: {}",
                summary(&mut rediscovered)
            );
        }
    }
    drop(ctl);
    lab.close().map(drop).map_err(err)
}
