//! `baton bench --topology`: an emulated network (`baton-netemu`: software
//! switches joined by links, hosts on their edge ports, events on a
//! schedule) against a controller, and what the controller's REST API
//! says about it beside what the emulator measured (issue 55, part 2).
//!
//! The emulator times what crosses the wire (handshakes, path set-ups,
//! reroutes, losses); only the controller knows when it has learnt the
//! network, so with `--api` a thread asks it (`GET /api/v1/topology`
//! and `/api/v1/hosts`, the answers `baton show` prints) every
//! [`POLL`] and notes when its links and hosts first equal the
//! emulated network's. The two clocks start together, a few
//! microseconds apart, before the first switch connects.

use crate::Error;
use crate::report::render::write_json;
use crate::spec::OfVersion;
use crate::stats::{cpu_seconds, resident_bytes};
use baton_netemu::{Config, Graph, HostId, Pairs, Report, Schedule, Summary};
use baton_openflow::{DatapathId, MacAddr};
use baton_operator::client::Client;
use baton_operator::model;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the API is asked while something is still to be learnt.
pub const POLL: Duration = Duration::from_millis(10);

/// How often it is asked once every link and host is known (to see that
/// they stay known).
const POLL_KNOWN: Duration = Duration::from_secs(1);

/// The API's answers are waited for at most this share of the time: on a
/// 10,000-switch network an answer lists 40,000 links, and asking back to
/// back took a third of the controller's core away from what is measured.
const POLL_DUTY: u32 = 4;

/// The pause before the next question, after one that took `took`.
fn next_poll(took: Duration, everything_known: bool) -> Duration {
    let period = if everything_known { POLL_KNOWN } else { POLL };
    period.max(took * POLL_DUTY).saturating_sub(took)
}

/// The options of an emulated network.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TopologyArgs {
    /// Emulate a network instead of cbench's unlinked switches:
    /// fat-tree:K, torus:RxC, linear:N, ring:N, or a FILE (an edge list,
    /// or one of the contract crate's JSON topologies).
    #[arg(long, value_name = "SPEC|FILE")]
    pub topology: Option<String>,
    /// Link and switch events, timed from the start of traffic:
    /// `at 10s cut s3-s7; at 12s restore s3-s7; at 20s kill s5`.
    #[arg(long, value_name = "SCHEDULE")]
    pub events: Option<String>,
    /// The delay of every link between switches, milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub link_delay: f64,
    /// Which hosts talk: a number of random pairs on different switches,
    /// `half-way` (host i to host i + n/2: every pair crosses pods on a
    /// fat tree) or `none` (only the controller's probes).
    #[arg(long, value_name = "N|half-way|none", default_value = "64")]
    pub pairs: String,
    /// Microseconds between the starts of consecutive pairs (0: all at
    /// once); with many pairs, new pairs keep coming, for a rate of path
    /// set-ups.
    #[arg(long, value_name = "US", default_value_t = 0.0)]
    pub start_interval: f64,
    /// Milliseconds between a set-up pair's packets (the resolution of the
    /// reroute times).
    #[arg(long, value_name = "MS", default_value_t = 1.0)]
    pub send_interval: f64,
    /// Seconds a pair sends once set up, after which it ends, and a host
    /// whose pairs all ended leaves (answers nothing more): host churn.
    /// Without it, pairs send until the run ends.
    #[arg(long, value_name = "S")]
    pub pair_lifetime: Option<f64>,
    /// Record the switches each packet crosses (for checking paths; costs
    /// a map update per hop).
    #[arg(long)]
    pub trace_paths: bool,
    /// The controller's REST API (`baton run --api`), to time discovery
    /// and check its links and hosts against the emulated network.
    #[arg(long, value_name = "ADDR:PORT")]
    pub api: Option<String>,
}

impl TopologyArgs {
    /// The pairs `--pairs` names.
    fn pairs(&self) -> Result<Pairs, Error> {
        match self.pairs.as_str() {
            "none" => Ok(Pairs::None),
            "half-way" => Ok(Pairs::HalfWay),
            n => n
                .parse()
                .map(|count| Pairs::Random { count, seed: 1 })
                .map_err(|_| {
                    Error::new(format!(
                        "--pairs `{n}`: a number of pairs, half-way or none"
                    ))
                }),
        }
    }
}

/// What a run takes from `baton bench`'s other options.
#[derive(Debug, Clone)]
pub struct Common {
    /// The controller's address.
    pub controller: std::net::SocketAddr,
    /// The switches' OpenFlow version.
    pub of: OfVersion,
    /// Seconds between the last handshake and the start of traffic.
    pub warmup: f64,
    /// Seconds of traffic.
    pub duration: f64,
    /// The controller's pid, for its CPU time and memory.
    pub controller_pid: Option<u32>,
    /// Where to write the results as JSON.
    pub json: Option<std::path::PathBuf>,
    /// Print only the results.
    pub quiet: bool,
}

/// The emulator's configuration that `t` and `args` mean.
pub fn config(t: &TopologyArgs, args: &Common) -> Result<Config, Error> {
    let spec = t
        .topology
        .as_deref()
        .ok_or_else(|| Error::new("--topology is required"))?;
    let graph = baton_netemu::load(spec, baton_netemu::FileHosts::OnePerSwitch)
        .map_err(|e| Error::new(e.to_string()))?;
    let mut cfg = Config::new(args.controller, graph);
    cfg.version = args.of.into();
    cfg.link_delay = seconds("--link-delay", t.link_delay / 1e3)?;
    cfg.traffic.pairs = t.pairs()?;
    cfg.traffic.send_interval = seconds("--send-interval", t.send_interval / 1e3)?;
    cfg.traffic.start_interval = seconds("--start-interval", t.start_interval / 1e6)?;
    cfg.traffic.pair_lifetime = t
        .pair_lifetime
        .map(|s| seconds("--pair-lifetime", s))
        .transpose()?;
    if let Some(ev) = &t.events {
        cfg.events = Schedule::parse(ev).map_err(|e| Error::new(e.to_string()))?;
    }
    cfg.warmup = seconds("--warmup", args.warmup)?;
    cfg.duration = seconds("--duration", args.duration)?;
    cfg.trace_paths = t.trace_paths;
    Ok(cfg)
}

fn seconds(flag: &str, s: f64) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| Error::new(format!("{flag}: a duration of zero or more, not {s}")))
}

/// What the controller's API said while the network ran.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ApiView {
    /// Directed links between switches the emulated network has.
    pub links_expected: usize,
    /// When the first answer listing exactly those links arrived, from
    /// the start (at most a pause and a call after the controller knew:
    /// the pause is [`POLL`], or three times the last call where answers
    /// are long).
    pub links_known: Option<Duration>,
    /// The emulated links missing from the API's last answer.
    pub links_missing: usize,
    /// Links in the API's last answer the network does not have.
    pub links_extra: usize,
    /// Hosts that sent (both ends of every pair).
    pub hosts_expected: usize,
    /// When the first answer listing every one of them where it is
    /// attached arrived, from the start.
    pub hosts_known: Option<Duration>,
    /// Of them, those the API's last answer lacks or puts elsewhere.
    pub hosts_missing: usize,
    /// Answers the API gave (and calls that failed).
    pub polls: usize,
    /// Failed calls.
    pub errors: usize,
    /// The last error, if any.
    pub last_error: Option<String>,
}

/// The directed links `g` has, as the API writes their ends.
fn expected_links(g: &Graph) -> BTreeSet<((String, u32), (String, u32))> {
    let end = |e: &baton_netemu::End| {
        (
            DatapathId(g.switches()[e.switch.0 as usize].dpid).to_string(),
            u32::from(e.port),
        )
    };
    g.links()
        .iter()
        .flat_map(|l| [(end(&l.a), end(&l.b)), (end(&l.b), end(&l.a))])
        .collect()
}

/// Each talking host's address and attachment, as the API writes them.
fn expected_hosts(g: &Graph, pairs: &[(HostId, HostId)]) -> BTreeSet<(String, String, u32)> {
    pairs
        .iter()
        .flat_map(|&(s, d)| [s, d])
        .map(|h| {
            let at = g.hosts()[h.0 as usize];
            (
                MacAddr(Graph::host_mac(h)).to_string(),
                DatapathId(g.switches()[at.switch.0 as usize].dpid).to_string(),
                u32::from(at.port),
            )
        })
        .collect()
}

/// Asks the API at `api` every [`POLL`] until `stop`, comparing its
/// answers with `g` and the hosts of `pairs`; times are from `zero`.
fn watch(
    api: &str,
    g: &Graph,
    pairs: &[(HostId, HostId)],
    zero: Instant,
    stop: &AtomicBool,
) -> ApiView {
    let client = Client::new(api, None);
    let links = expected_links(g);
    let hosts = expected_hosts(g, pairs);
    let mut v = ApiView {
        links_expected: links.len(),
        links_missing: links.len(),
        hosts_expected: hosts.len(),
        hosts_missing: hosts.len(),
        ..ApiView::default()
    };
    while !stop.load(Ordering::Relaxed) {
        let asked = Instant::now();
        v.polls += 1;
        let answer = client
            .call("GET", "/api/v1/topology", None)
            .and_then(|t| Ok((t, client.call("GET", "/api/v1/hosts", None)?)));
        match answer {
            Ok((t, h)) => {
                // The answers tell what the controller knew when it
                // wrote them, after `asked`: their arrival bounds it.
                let answered = Instant::now() - zero;
                let (t, h): (model::Topology, model::Hosts) =
                    match (serde_json::from_value(t), serde_json::from_value(h)) {
                        (Ok(t), Ok(h)) => (t, h),
                        (Err(e), _) | (_, Err(e)) => {
                            v.errors += 1;
                            v.last_error = Some(format!("unexpected answer: {e}"));
                            std::thread::sleep(POLL);
                            continue;
                        }
                    };
                let seen: BTreeSet<_> = t
                    .links
                    .iter()
                    .map(|l| {
                        (
                            (l.src.dpid.clone(), l.src.port),
                            (l.dst.dpid.clone(), l.dst.port),
                        )
                    })
                    .collect();
                v.links_missing = links.difference(&seen).count();
                v.links_extra = seen.difference(&links).count();
                if v.links_missing == 0 && v.links_extra == 0 && v.links_known.is_none() {
                    v.links_known = Some(answered);
                }
                let at: BTreeSet<_> = h
                    .hosts
                    .iter()
                    .map(|h| (h.mac.clone(), h.attachment.dpid.clone(), h.attachment.port))
                    .collect();
                v.hosts_missing = hosts.difference(&at).count();
                if v.hosts_missing == 0 && v.hosts_known.is_none() && !hosts.is_empty() {
                    v.hosts_known = Some(answered);
                }
            }
            Err(e) => {
                v.errors += 1;
                v.last_error = Some(e.to_string());
            }
        }
        let known = v.links_known.is_some() && (hosts.is_empty() || v.hosts_known.is_some());
        let pause = next_poll(asked.elapsed(), known);
        // Asleep in steps, so that the end of the run is not held up.
        let wake = Instant::now() + pause;
        while !stop.load(Ordering::Relaxed) && Instant::now() < wake {
            std::thread::sleep(POLL.min(wake.saturating_duration_since(Instant::now())));
        }
    }
    v
}

/// The controller's CPU seconds and resident bytes, if its pid was given.
fn controller_use(pid: Option<u32>) -> (Option<f64>, Option<u64>) {
    match pid {
        Some(p) => (cpu_seconds(p), resident_bytes(p)),
        None => (None, None),
    }
}

/// One run's results as written by `--json`.
#[derive(Debug, serde::Serialize)]
struct Written<'a> {
    topology: &'a str,
    switches: usize,
    links: usize,
    hosts: usize,
    report: serde_json::Value,
    api: Option<&'a ApiView>,
    controller_cpu_seconds: Option<f64>,
    controller_resident_bytes: Option<u64>,
}

/// Runs `baton bench --topology`.
pub fn main(t: &TopologyArgs, args: &Common) -> Result<(), Error> {
    let cfg = config(t, args)?;
    let graph = cfg.topology.clone();
    let pairs = cfg
        .traffic
        .pairs
        .resolve(&graph)
        .map_err(|e| Error::new(e.to_string()))?;
    let spec = t.topology.clone().unwrap_or_default();
    if !args.quiet {
        println!(
            "{spec}: {} switches, {} links, {} host ports, {} pairs, {}",
            graph.switches().len(),
            graph.links().len(),
            graph.hosts().len(),
            pairs.len(),
            cfg.version
        );
    }
    let (cpu0, _) = controller_use(args.controller_pid);
    let stop = Arc::new(AtomicBool::new(false));
    let zero = Instant::now();
    let watcher = t.api.clone().map(|api| {
        let (stop, graph, pairs) = (stop.clone(), graph.clone(), pairs.clone());
        std::thread::spawn(move || watch(&api, &graph, &pairs, zero, &stop))
    });
    let report = baton_netemu::run(cfg);
    stop.store(true, Ordering::Relaxed);
    let api = watcher.map(|w| w.join().unwrap_or_default());
    let report = report.map_err(|e| Error::new(e.to_string()))?;
    let (cpu1, rss) = controller_use(args.controller_pid);
    let cpu = cpu0.zip(cpu1).map(|(a, b)| b - a);
    print!("{report}");
    if let Some(v) = &api {
        println!("{}", api_line(v, &report));
    }
    if let Some(c) = cpu {
        println!(
            "controller: {c:.2} s of CPU, {} MiB resident at the end",
            rss.map_or("-".into(), |b| format!(
                "{:.1}",
                b as f64 / (1 << 20) as f64
            ))
        );
    }
    if let Some(path) = &args.json {
        let written = Written {
            topology: &spec,
            switches: graph.switches().len(),
            links: graph.links().len(),
            hosts: graph.hosts().len(),
            report: report_json(&report),
            api: api.as_ref(),
            controller_cpu_seconds: cpu,
            controller_resident_bytes: rss,
        };
        write_json(path, &written)?;
    }
    Ok(())
}

/// The API's figures in a line, discovery timed from the last handshake.
fn api_line(v: &ApiView, r: &Report) -> String {
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let links = match (v.links_known, r.all_ready) {
        (Some(k), Some(up)) => format!(
            "all {} directed links {} after the last switch was up ({} from the start)",
            v.links_expected,
            ms(k.saturating_sub(up)),
            ms(k)
        ),
        _ => format!(
            "links: {} of {} missing, {} extra at the end",
            v.links_missing, v.links_expected, v.links_extra
        ),
    };
    let hosts = match (v.hosts_known, r.traffic_started) {
        (Some(k), Some(t)) => format!(
            "all {} hosts {} after traffic started",
            v.hosts_expected,
            ms(k.saturating_sub(t))
        ),
        _ => format!(
            "hosts: {} of {} missing at the end",
            v.hosts_missing, v.hosts_expected
        ),
    };
    let errors = match &v.last_error {
        Some(e) => format!("; {} failed calls, the last: {e}", v.errors),
        None => String::new(),
    };
    format!(
        "controller's API ({} polls): {links}; {hosts}{errors}",
        v.polls
    )
}

/// The report's figures as JSON (microseconds for times).
fn report_json(r: &Report) -> serde_json::Value {
    let summary = |h| {
        let s = Summary::of(h);
        serde_json::json!({"count": s.count, "p50_us": s.p50, "p99_us": s.p99, "max_us": s.max})
    };
    let us = |d: Option<Duration>| d.map(|d| d.as_micros() as u64);
    serde_json::json!({
        "switches": r.switches,
        "switches_ready": r.switches_ready,
        "all_ready_us": us(r.all_ready),
        "traffic_started_us": us(r.traffic_started),
        "pairs": r.pairs,
        "pairs_set_up": r.pairs_set_up,
        "setup": summary(&r.setup_us),
        "setups_per_second": r.setups_per_second,
        "latency": summary(&r.latency_us),
        "packets_sent": r.packets_sent,
        "packets_received": r.packets_received,
        "packets_lost": r.packets_lost,
        "pairs_ended": r.pairs_ended,
        "hosts_left": r.hosts_left,
        "connections_lost": r.connections_lost,
        "emulator_resident_bytes": r.resident_bytes,
        "events": r.events.iter().map(|e| serde_json::json!({
            "event": e.text,
            "applied_us": us(e.applied),
            "reroute": summary(&e.reroute_us),
            "unrecovered": e.unrecovered,
            "unreachable": e.unreachable,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_is_asked_often_while_learning_and_never_most_of_the_time() {
        let ms = Duration::from_millis;
        assert_eq!(next_poll(ms(1), false), ms(9));
        // A long answer (a large network): three times as long idle.
        assert_eq!(next_poll(ms(100), false), ms(300));
        assert_eq!(next_poll(ms(1), true), ms(999));
        assert_eq!(next_poll(ms(400), true), ms(1200));
    }
}
