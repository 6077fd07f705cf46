//! `baton bench compare SCENARIO`: one scenario against a list of
//! controllers in one go, so every figure in the resulting table is a
//! side-by-side measurement taken on the same machine in the same minutes.
//!
//! Each controller is started fresh for each run, pinned with `taskset` to
//! the controller CPUs (default 1) while the emulator is pinned to the
//! bench CPUs (default 0). Runs are interleaved (A, B, C, A, B, C, ...) so
//! slow drifts of the machine hit every controller alike, and the table
//! reports medians and ratios to the first target: throughput on a shared
//! machine is noisy (10-35 % between runs), a ratio measured in one
//! interleaved session is not.
//!
//! Outputs under `--out`: `compare.md` (the table), `compare.json` (every
//! run's full report), controller logs, and per case the overlaid charts of
//! each target's median run.

pub mod scenarios;
pub mod targets;

use crate::Error;
use crate::emulator::{self, Config};
use crate::report::Report;
use crate::report::render::write_json;
use crate::spec::{Mode, OfVersion, Schedule};
use scenarios::{Case, Scenario};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;
use targets::{Programs, Target};

/// `baton bench compare`.
#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// The scenario: throughput-16, throughput-64, latency-1, latency-16,
    /// fairness-uniform, fairness-skewed, ibt-phases, few-switches,
    /// switch-scaling (--list describes them).
    #[arg(required_unless_present = "list")]
    pub scenario: Option<String>,
    /// Controllers to compare, the first being the reference for ratios:
    /// `baton[:SCHEDULER][:pin]`, `baton:all` (every scheduler),
    /// ovs-testcontroller, os-ken, responder, external:HOST:PORT.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "baton:fair,baton:static-partition,ovs-testcontroller,os-ken,responder"
    )]
    pub targets: Vec<String>,
    /// Runs per target (interleaved).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Output directory (default: target/bench/SCENARIO).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// CPUs for the controller (taskset -c list).
    #[arg(long, default_value = "1")]
    pub controller_cpus: String,
    /// CPUs for the emulator.
    #[arg(long, default_value = "0")]
    pub bench_cpus: String,
    /// Worker threads of baton and the responder (default: number of
    /// controller CPUs).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Extra arguments for every `baton run` (e.g. `--baton-args="--apps
    /// burn:2000,learning-switch --bdu 1ms"`); recorded in the results.
    #[arg(long, allow_hyphen_values = true, default_value = "")]
    pub baton_args: String,
    /// The baton binary (default: next to this executable).
    #[arg(long, value_name = "PATH")]
    pub baton: Option<PathBuf>,
    /// Where scripts/install-peers.sh put os-ken (default: target/peers).
    #[arg(long, value_name = "DIR")]
    pub peers: Option<PathBuf>,
    /// Override the counted seconds of every case (not phases).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Override the warm-up seconds.
    #[arg(long)]
    pub warmup: Option<f64>,
    /// Override the MACs per switch.
    #[arg(long)]
    pub macs: Option<usize>,
    /// OpenFlow version of the switches.
    #[arg(long, value_enum, default_value = "10")]
    pub of: OfVersion,
    /// Capacity (requests/s) for relative rates, instead of calibrating on
    /// the first target.
    #[arg(long)]
    pub capacity: Option<f64>,
    /// List the scenarios and exit.
    #[arg(long)]
    pub list: bool,
}

/// The figures compared, in table order: name, how to read it from a
/// report.
type Metric = (String, Box<dyn Fn(&Report) -> Option<f64>>);

fn metrics(case: &Case) -> Vec<Metric> {
    let mut m: Vec<Metric> = vec![
        (
            "responses/s".into(),
            Box::new(|r: &Report| Some(r.responses_per_sec)),
        ),
        (
            "requests/s".into(),
            Box::new(|r: &Report| Some(r.requests_per_sec)),
        ),
        ("jain".into(), Box::new(|r: &Report| Some(r.jain))),
        (
            "max abs deviation %".into(),
            Box::new(|r: &Report| {
                let lo = r.deviation_min?.abs();
                let hi = r.deviation_max?.abs();
                Some(lo.max(hi) * 100.0)
            }),
        ),
        (
            "latency p50 ms".into(),
            Box::new(|r: &Report| r.latency_ms.map(|l| l.p50)),
        ),
        (
            "latency p99 ms".into(),
            Box::new(|r: &Report| r.latency_ms.map(|l| l.p99)),
        ),
    ];
    if case.probe {
        m.push((
            "probe delay ms".into(),
            Box::new(|r: &Report| r.probe_delay_ms),
        ));
        m.push((
            "probe p99 ms".into(),
            Box::new(|r: &Report| r.probe_ms.map(|p| p.p99)),
        ));
    }
    m.push((
        "cpu s / 1k requests".into(),
        Box::new(|r: &Report| r.cpu.and_then(|c| c.per_1k_requests)),
    ));
    if let Some(phases) = &case.phases {
        for i in 0..phases.len() {
            m.push((
                format!("phase {} requests/s", i + 1),
                Box::new(move |r: &Report| r.phases.get(i).map(|p| p.requests_per_sec)),
            ));
            m.push((
                format!("phase {} jain", i + 1),
                Box::new(move |r: &Report| r.phases.get(i).map(|p| p.jain)),
            ));
            if case.probe {
                m.push((
                    format!("phase {} probe ms", i + 1),
                    Box::new(move |r: &Report| {
                        r.phases
                            .get(i)
                            .and_then(|p| p.probe_delay_ms.map(|d| d.mean))
                    }),
                ));
            }
        }
    }
    m
}

/// The median of `v` (mean of the middle two for an even count).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// One target's results in one case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TargetResult {
    /// Target label.
    pub target: String,
    /// Why it was not run.
    pub unsupported: Option<String>,
    /// Runs that failed, with why.
    pub errors: Vec<String>,
    /// Median of each metric over the successful runs.
    pub medians: BTreeMap<String, f64>,
    /// Median / the first target's median.
    pub ratios: BTreeMap<String, f64>,
    /// Every successful run's report.
    pub runs: Vec<Report>,
}

/// One case's results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// The capacity used for relative rates.
    pub capacity: Option<f64>,
    /// Per target, in `--targets` order.
    pub targets: Vec<TargetResult>,
}

/// The whole comparison, as written to `compare.json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    /// Scenario name.
    pub scenario: String,
    /// What it shows.
    pub about: String,
    /// Runs per target.
    pub runs: usize,
    /// Emulator CPUs.
    pub bench_cpus: String,
    /// Controller CPUs.
    pub controller_cpus: String,
    /// Worker threads given to baton and the responder.
    pub workers: usize,
    /// Extra arguments given to every `baton run`.
    pub baton_args: Vec<String>,
    /// Per case.
    pub cases: Vec<CaseResult>,
}

/// Runs `baton bench compare`.
pub fn main(args: &CompareArgs) -> Result<(), Error> {
    if args.list {
        for s in scenarios::all() {
            println!("{:<18} {}", s.name, s.about);
        }
        return Ok(());
    }
    let name = args.scenario.as_deref().unwrap_or_default();
    let mut scenario = scenarios::get(name)
        .ok_or_else(|| Error::new(format!("unknown scenario `{name}` (see --list)")))?;
    apply_overrides(&mut scenario, args);
    let targets = targets::parse_list(&args.targets)?;
    if targets.is_empty() {
        return Err(Error::new("no targets"));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/bench").join(scenario.name));
    std::fs::create_dir_all(&out)?;
    let controller_cpus = targets::parse_cpu_list(&args.controller_cpus)?.len();
    let bench_threads = targets::pin_current_thread(&args.bench_cpus)?;
    let programs = Programs {
        baton: args.baton.clone().unwrap_or_else(targets::default_baton),
        peers: args.peers.clone().unwrap_or_else(targets::default_peers),
        controller_cpus: args.controller_cpus.clone(),
        workers: args.workers.unwrap_or(controller_cpus).max(1),
        baton_args: args
            .baton_args
            .split_whitespace()
            .map(String::from)
            .collect(),
        log_dir: out.join("logs"),
    };
    let mut comparison = Comparison {
        scenario: scenario.name.into(),
        about: scenario.about.into(),
        runs: args.runs.max(1),
        bench_cpus: args.bench_cpus.clone(),
        controller_cpus: args.controller_cpus.clone(),
        workers: programs.workers,
        baton_args: programs.baton_args.clone(),
        cases: Vec::new(),
    };
    for case in &scenario.cases {
        let r = run_case(case, &targets, args, &programs, bench_threads)?;
        comparison.cases.push(r);
    }
    let md = markdown(&comparison);
    std::fs::write(out.join("compare.md"), &md)?;
    write_json(&out.join("compare.json"), &comparison)?;
    for c in &comparison.cases {
        let picks: Vec<(String, &Report)> = c
            .targets
            .iter()
            .filter_map(|t| median_run(&t.runs).map(|r| (t.target.clone(), r)))
            .collect();
        let refs: Vec<(&str, &Report)> = picks.iter().map(|(n, r)| (n.as_str(), *r)).collect();
        if let Err(e) = crate::plot::write_all(&out.join(&c.case.name), &refs) {
            eprintln!("baton bench: no charts: {e}");
            break;
        }
    }
    print!("{md}");
    println!("wrote {}", out.display());
    Ok(())
}

fn apply_overrides(s: &mut Scenario, args: &CompareArgs) {
    for c in &mut s.cases {
        if let Some(d) = args.duration {
            c.duration = d;
        }
        if let Some(w) = args.warmup {
            c.warmup = w;
        }
        if let Some(m) = args.macs {
            c.macs = m;
        }
        c.version = args.of.into();
    }
}

/// The run whose responses/s is the median of `runs`.
fn median_run(runs: &[Report]) -> Option<&Report> {
    let mut v: Vec<&Report> = runs.iter().collect();
    v.sort_by(|a, b| a.responses_per_sec.total_cmp(&b.responses_per_sec));
    v.get(v.len() / 2).copied()
}

/// The emulator configuration of `case` against `addr`.
pub fn case_config(
    case: &Case,
    addr: std::net::SocketAddr,
    pid: Option<u32>,
    threads: usize,
    capacity: Option<f64>,
) -> Result<Config, Error> {
    let schedule = Schedule::build(
        case.mode,
        case.switches,
        Duration::from_secs_f64(case.warmup.max(0.0)),
        Duration::from_secs_f64(case.duration.max(0.0)),
        case.rates.as_ref(),
        case.phases.as_deref(),
        capacity,
    )?;
    let mut c = Config::new(addr, case.switches, Duration::ZERO);
    c.mode = case.mode;
    c.macs = case.macs;
    c.version = case.version;
    c.schedule = schedule;
    c.probe = case.probe;
    c.threads = threads;
    c.controller_pid = pid;
    // ovs-testcontroller drops a connection whose handshake is not done in
    // 1 s: connect in groups of 4, 50 ms apart (cbench -I 4 -i 50 style).
    c.connect_group = 4;
    c.connect_delay = Duration::from_millis(50);
    Ok(c)
}

fn run_one(
    case: &Case,
    target: &Target,
    p: &Programs,
    threads: usize,
    capacity: Option<f64>,
    tag: &str,
) -> Result<Report, Error> {
    let mut running = targets::start(target, case.version, p, tag)?;
    let config = case_config(case, running.addr, running.pid, threads, capacity)?;
    let result = emulator::run(&config);
    let tail = running.log_tail();
    running.stop();
    let data = result.map_err(|e| Error::new(format!("{e} (controller log: {tail})")))?;
    Ok(Report::from_run(&data))
}

fn run_case(
    case: &Case,
    targets: &[Target],
    args: &CompareArgs,
    p: &Programs,
    threads: usize,
) -> Result<CaseResult, Error> {
    let runnable: Vec<&Target> = targets
        .iter()
        .filter(|t| t.unsupported(case.switches).is_none())
        .collect();
    let mut capacity = args.capacity;
    if capacity.is_none() && case.needs_capacity() {
        let reference = runnable
            .first()
            .ok_or_else(|| Error::new("no target can run this case"))?;
        let cal = Case {
            name: format!("{}-calibration", case.name),
            mode: Mode::Throughput,
            duration: 3.0,
            warmup: 1.0,
            rates: None,
            phases: None,
            probe: false,
            ..case.clone()
        };
        eprintln!(
            "[{}] calibrating capacity on {}",
            case.name,
            reference.label()
        );
        let r = run_one(
            &cal,
            reference,
            p,
            threads,
            None,
            &format!("{}-calibration", case.name),
        )?;
        eprintln!(
            "[{}] capacity {:.0} requests/s",
            case.name, r.requests_per_sec
        );
        capacity = Some(r.requests_per_sec.max(1.0));
    }
    let mut results: Vec<TargetResult> = targets
        .iter()
        .map(|t| TargetResult {
            target: t.label(),
            unsupported: t.unsupported(case.switches),
            errors: Vec::new(),
            medians: BTreeMap::new(),
            ratios: BTreeMap::new(),
            runs: Vec::new(),
        })
        .collect();
    let runs = args.runs.max(1);
    for run in 0..runs {
        for (t, res) in targets.iter().zip(results.iter_mut()) {
            if res.unsupported.is_some() {
                continue;
            }
            let tag = format!(
                "{}-{}-run{}",
                case.name,
                t.label().replace(':', "_"),
                run + 1
            );
            match run_one(case, t, p, threads, capacity, &tag) {
                Ok(r) => {
                    eprintln!(
                        "[{}] run {}/{} {:<24} {}",
                        case.name,
                        run + 1,
                        runs,
                        t.label(),
                        r.summary_line()
                    );
                    res.runs.push(r);
                }
                Err(e) => {
                    eprintln!(
                        "[{}] run {}/{} {:<24} failed: {e}",
                        case.name,
                        run + 1,
                        runs,
                        t.label()
                    );
                    res.errors.push(e.to_string());
                }
            }
        }
    }
    for (name, f) in metrics(case) {
        let mut first = None;
        for (i, res) in results.iter_mut().enumerate() {
            let vals: Vec<f64> = res.runs.iter().filter_map(&f).collect();
            let m = median(&vals);
            if i == 0 {
                first = m;
            }
            if let Some(m) = m {
                res.medians.insert(name.clone(), m);
                if let Some(f0) = first.filter(|f| *f != 0.0) {
                    res.ratios.insert(name.clone(), m / f0);
                }
            }
        }
    }
    Ok(CaseResult {
        case: case.clone(),
        capacity,
        targets: results,
    })
}

fn fmt_value(metric: &str, v: f64) -> String {
    if metric.ends_with("/s") {
        format!("{v:.0}")
    } else if metric.ends_with("jain") {
        format!("{v:.4}")
    } else if metric.starts_with("cpu") {
        format!("{v:.5}")
    } else if metric.contains('%') {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The comparison as markdown tables, one per case.
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# baton bench compare {}\n", c.scenario);
    let _ = writeln!(
        s,
        "{}. Emulator on CPUs {}, controllers on CPUs {} ({} worker threads for baton and the responder). Medians of {} interleaved runs; ratios to the first column.\n",
        c.about, c.bench_cpus, c.controller_cpus, c.workers, c.runs
    );
    if !c.baton_args.is_empty() {
        let _ = writeln!(s, "baton ran with `{}`.\n", c.baton_args.join(" "));
    }
    for case in &c.cases {
        let _ = writeln!(s, "## {}: {}\n", case.case.name, case.case.describe());
        if let Some(cap) = case.capacity {
            let _ = writeln!(
                s,
                "Capacity for relative rates: {cap:.0} requests/s (calibrated on the first target unless given).\n"
            );
        }
        let _ = write!(s, "| metric |");
        for t in &case.targets {
            let _ = write!(s, " {} |", t.target);
        }
        let _ = write!(s, "\n|---|");
        for _ in &case.targets {
            let _ = write!(s, "---:|");
        }
        s.push('\n');
        for (name, _) in metrics(&case.case) {
            let _ = write!(s, "| {name} |");
            for (i, t) in case.targets.iter().enumerate() {
                let cell = match (t.medians.get(&name), t.ratios.get(&name)) {
                    (Some(v), Some(r)) if i > 0 => format!("{} ({r:.2}x)", fmt_value(&name, *v)),
                    (Some(v), _) => fmt_value(&name, *v),
                    (None, _) if t.unsupported.is_some() => "n/a".into(),
                    (None, _) => "-".into(),
                };
                let _ = write!(s, " {cell} |");
            }
            s.push('\n');
        }
        let _ = write!(s, "| runs ok |");
        for t in &case.targets {
            let _ = write!(
                s,
                " {}/{} |",
                t.runs.len(),
                if t.unsupported.is_some() { 0 } else { c.runs }
            );
        }
        s.push('\n');
        for t in &case.targets {
            if let Some(u) = &t.unsupported {
                let _ = writeln!(s, "\n- {}: not run ({u})", t.target);
            }
            if let Some(e) = t.errors.first() {
                let _ = writeln!(
                    s,
                    "\n- {}: {} run(s) failed, first: {e}",
                    t.target,
                    t.errors.len()
                );
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests;
