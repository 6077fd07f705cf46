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
//! When cbench is on `PATH` (or given with `--cbench`), every case it can
//! express (throughput or latency mode, N switches, M MACs, OpenFlow 1.0:
//! [`crate::cbench::Invocation::for_case`]) is also run with cbench against
//! each target, right after the emulator's run against the same target,
//! each with a freshly started controller; the table shows both tools'
//! figures and ratios side by side. A missing or failing cbench is noted
//! in the table, never an error of the comparison.
//!
//! Outputs under `--out`: `compare.md` (the table), `compare.json` (every
//! run's full report), controller and cbench logs, and per case the
//! overlaid charts of each target's median run.
//!
//! Why one file of about 880 lines: running a case (targets started,
//! emulator and cbench rounds interleaved) and rendering its table share
//! the result types declared here; the scenarios and the targets are
//! already apart. The Markdown rendering (from `CpuColumn` down) is the
//! next thing to move out, with the result types, into a `report` module.

pub mod scenarios;
pub mod targets;

use crate::Error;
use crate::cbench::{self, CbenchRun, Invocation};
use crate::cpus::CpuUse;
use crate::emulator::{self, Config, Writes};
use crate::report::Report;
use crate::report::render::write_json;
use crate::spec::{Mode, OfVersion, Schedule};
use scenarios::{Case, Scenario};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
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
    /// `baton[:SCHEDULER][:pin][:apps=APPS]` (APPS `default`, what `baton
    /// run` runs with no --apps, or names joined by +; the learning switch
    /// without it), `baton:all` (every scheduler), ovs-testcontroller,
    /// os-ken, responder, responder:learning (the responder with the
    /// learning switch's MAC table), responder:learning-l2 and
    /// responder:learning-exact (answering with its own FLOW_MOD, with the
    /// L2 or the exact match), minimal-learning (a learning switch in C,
    /// OpenFlow 1.0), external:HOST:PORT.
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
    /// burn:2000,learning-switch --bdu-us 1000"`); recorded in the results.
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
    /// How the emulator's switches write in throughput mode (see `baton
    /// bench --help`).
    #[arg(long, value_enum, default_value = "cbench")]
    pub writes: Writes,
    /// The cbench binary to run beside the emulator (default: `cbench` on
    /// PATH; `scripts/bench/build-cbench.sh` builds it).
    #[arg(long, value_name = "PATH")]
    pub cbench: Option<PathBuf>,
    /// Do not run cbench even if it is on PATH.
    #[arg(long, conflicts_with = "cbench")]
    pub no_cbench: bool,
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
    /// cbench's runs against this target, when cbench ran this case.
    pub cbench: Option<CbenchResult>,
    /// Each round's figures, in order (runs that failed included).
    pub rounds: Vec<Round>,
}

/// One target's figures in one round (one interleaved pass over the
/// targets): the emulator's run, then cbench's.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Round {
    /// The emulator's responses/s, when its run succeeded.
    pub bench: Option<f64>,
    /// cbench's figure, when it ran and succeeded.
    pub cbench: Option<f64>,
    /// How long the emulator and the controller ran and waited for a CPU
    /// during the emulator's run.
    pub bench_cpu: Option<CpuUse>,
    /// How long cbench and the controller ran and waited for a CPU during
    /// cbench's run.
    pub cbench_cpu: Option<CpuUse>,
}

/// cbench's figures for one target in one case.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CbenchResult {
    /// Runs that failed, with why.
    pub errors: Vec<String>,
    /// Median over runs of cbench's figure (the mean of its counted tests),
    /// responses/s.
    pub median: Option<f64>,
    /// `median` / the first target's.
    pub ratio: Option<f64>,
    /// The two tools' ratios to the first target compared round by round
    /// (`(bench / bench of the first target) / (cbench / cbench of the
    /// first target)` of the same round), median over the rounds where all
    /// four runs succeeded. Each tool's run against a target comes right
    /// after the other's, so a machine that slows down between rounds
    /// shifts both figures of a pair alike.
    pub paired_agreement: Option<f64>,
    /// Median over runs of Jain's index over switches.
    pub jain: Option<f64>,
    /// Every successful run.
    pub runs: Vec<CbenchRun>,
}

/// One case's results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// The capacity used for relative rates.
    pub capacity: Option<f64>,
    /// cbench's command line for this case (`PORT` for the port), or why
    /// cbench did not run it.
    pub cbench: Result<String, String>,
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
    /// How the emulator's switches wrote in throughput mode.
    pub writes: Writes,
    /// The cbench binary run beside the emulator, if any.
    pub cbench: Option<PathBuf>,
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
        writes: args.writes,
        cbench: if args.no_cbench {
            None
        } else {
            cbench::find(args.cbench.as_deref())
        },
        cases: Vec::new(),
    };
    let cbench = match (&comparison.cbench, args.no_cbench, &args.cbench) {
        (Some(p), _, _) => Ok(p.clone()),
        (None, true, _) => Err("not run (--no-cbench)".to_string()),
        (None, false, Some(p)) => Err(format!("not run: {} is not a file", p.display())),
        (None, false, None) => {
            Err("not run: no cbench on PATH (scripts/bench/build-cbench.sh builds it)".to_string())
        }
    };
    for case in &scenario.cases {
        let r = run_case(case, &targets, args, &programs, bench_threads, &cbench)?;
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
        c.writes = args.writes;
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
    c.writes = case.writes;
    c.schedule = schedule;
    c.probe = case.probe;
    c.threads = threads;
    c.controller_pid = pid;
    c.connect_group = CONNECT_GROUP;
    c.connect_delay = CONNECT_DELAY;
    Ok(c)
}

/// ovs-testcontroller drops a connection whose handshake is not done in
/// 1 s: switches connect in groups of 4, 50 ms apart (cbench's `-I 4 -i
/// 50`), with the emulator and with cbench.
const CONNECT_GROUP: usize = 4;
const CONNECT_DELAY: Duration = Duration::from_millis(50);

/// One cbench run of `case` against a freshly started `target`.
fn run_cbench(
    program: &std::path::Path,
    inv: &Invocation,
    case: &Case,
    target: &Target,
    p: &Programs,
    tag: &str,
) -> Result<CbenchRun, Error> {
    let mut running = targets::start(target, case.version, p, tag)?;
    let result = cbench::run(
        program,
        inv,
        running.addr,
        running.pid,
        &p.log_dir.join(tag),
    );
    let tail = running.log_tail();
    running.stop();
    result.map_err(|e| Error::new(format!("{e} (controller log: {tail})")))
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
    cbench: &Result<PathBuf, String>,
) -> Result<CaseResult, Error> {
    let inv = cbench.clone().and_then(|program| {
        Invocation::for_case(case, CONNECT_GROUP, CONNECT_DELAY)
            .map(|inv| (program, inv))
            .map_err(|why| format!("not run: {why}"))
    });
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
            cbench: inv.as_ref().ok().map(|_| CbenchResult::default()),
            rounds: Vec::new(),
        })
        .collect();
    let runs = args.runs.max(1);
    for run in 0..runs {
        for (t, res) in targets.iter().zip(results.iter_mut()) {
            if res.unsupported.is_some() {
                continue;
            }
            let mut round = Round::default();
            let tag = format!(
                "{}-{}-run{}",
                case.name,
                t.label().replace(':', "_"),
                run + 1
            );
            match run_one(case, t, p, threads, capacity, &tag) {
                Ok(r) => {
                    round.bench = Some(r.responses_per_sec);
                    round.bench_cpu = Some(r.cpu_use);
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
            let (Ok((program, inv)), Some(cb)) = (&inv, res.cbench.as_mut()) else {
                res.rounds.push(round);
                continue;
            };
            match run_cbench(program, inv, case, t, p, &format!("{tag}-cbench")) {
                Ok(r) => {
                    round.cbench = Some(r.avg);
                    round.cbench_cpu = r.cpu_use;
                    eprintln!(
                        "[{}] run {}/{} {:<24} cbench: {:.0} responses/s",
                        case.name,
                        run + 1,
                        runs,
                        t.label(),
                        r.avg
                    );
                    cb.runs.push(r);
                }
                Err(e) => {
                    eprintln!(
                        "[{}] run {}/{} {:<24} cbench failed: {e}",
                        case.name,
                        run + 1,
                        runs,
                        t.label()
                    );
                    cb.errors.push(e.to_string());
                }
            }
            res.rounds.push(round);
        }
    }
    cbench_medians(&mut results);
    paired_agreement(&mut results);
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
        cbench: inv.map(|(_, inv)| {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
            let args = inv.args(addr).join(" ").replace("-p 0 ", "-p PORT ");
            format!("cbench {args}")
        }),
        targets: results,
    })
}

/// cbench's medians over runs, and ratios to the first target's.
fn cbench_medians(results: &mut [TargetResult]) {
    let mut first = None;
    for (i, r) in results.iter_mut().enumerate() {
        let Some(cb) = r.cbench.as_mut() else {
            continue;
        };
        let avgs: Vec<f64> = cb.runs.iter().map(|r| r.avg).collect();
        cb.median = median(&avgs);
        let jains: Vec<f64> = cb.runs.iter().filter_map(|r| r.jain).collect();
        cb.jain = median(&jains);
        if i == 0 {
            first = cb.median;
        }
        cb.ratio = cb
            .median
            .zip(first.filter(|f| *f != 0.0))
            .map(|(m, f)| m / f);
    }
}

/// Each target's [`CbenchResult::paired_agreement`] with the first target.
fn paired_agreement(results: &mut [TargetResult]) {
    let Some((first, rest)) = results.split_first_mut() else {
        return;
    };
    for r in rest {
        let per_round: Vec<f64> = r
            .rounds
            .iter()
            .zip(&first.rounds)
            .filter_map(|(t, f)| {
                let (b, c, b0, c0) = (t.bench?, t.cbench?, f.bench?, f.cbench?);
                let v = (b / b0) / (c / c0);
                v.is_finite().then_some(v)
            })
            .collect();
        if let Some(cb) = r.cbench.as_mut() {
            cb.paired_agreement = median(&per_round);
        }
    }
}

/// Which of [`CpuUse`]'s pairs a row shows.
#[derive(Clone, Copy)]
enum CpuColumn {
    /// Waiting for a CPU.
    Wait,
    /// Running.
    Busy,
}

impl CpuColumn {
    /// `(generator, controller)` percentages of `u`.
    fn of(self, u: &CpuUse) -> (Option<f64>, Option<f64>) {
        match self {
            CpuColumn::Wait => (u.generator_wait_pct, u.controller_wait_pct),
            CpuColumn::Busy => (u.generator_busy_pct, u.controller_busy_pct),
        }
    }
}

/// Medians over `uses` of the generator's and the controller's `column`
/// percentages.
fn cpu_medians<'a>(
    uses: impl Iterator<Item = &'a CpuUse> + Clone,
    column: CpuColumn,
) -> (Option<f64>, Option<f64>) {
    let (generator, controller): (Vec<_>, Vec<_>) = uses.map(|u| column.of(u)).unzip();
    let m = |v: Vec<Option<f64>>| median(&v.into_iter().flatten().collect::<Vec<_>>());
    (m(generator), m(controller))
}

/// `generator / controller` percentages of `column`, medians over `uses`;
/// `-` without any.
fn fmt_cpu<'a>(uses: impl Iterator<Item = &'a CpuUse> + Clone, column: CpuColumn) -> String {
    if uses.clone().next().is_none() {
        return "-".into();
    }
    let (g, c) = cpu_medians(uses, column);
    let f = |x: Option<f64>| x.map_or("?".to_string(), |x| format!("{x:.1}"));
    format!("{} / {}", f(g), f(c))
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

/// cbench's rows of a case's table: its figure and ratio, its Jain index,
/// the emulator's figure over cbench's, and how the two tools' ratios to
/// the first target agree.
fn cbench_rows(s: &mut String, case: &CaseResult, runs: usize) {
    let row = |s: &mut String, name: &str, cell: &dyn Fn(usize, &TargetResult) -> String| {
        let _ = write!(s, "| {name} |");
        for (i, t) in case.targets.iter().enumerate() {
            let _ = write!(s, " {} |", cell(i, t));
        }
        s.push('\n');
    };
    fn cb(t: &TargetResult) -> Option<&CbenchResult> {
        t.cbench.as_ref().filter(|_| t.unsupported.is_none())
    }
    row(s, "cbench responses/s", &|i, t| match (
        cb(t).and_then(|c| c.median),
        cb(t).and_then(|c| c.ratio),
    ) {
        (Some(m), Some(r)) if i > 0 => format!("{m:.0} ({r:.2}x)"),
        (Some(m), _) => format!("{m:.0}"),
        _ => "-".into(),
    });
    row(s, "cbench jain", &|_, t| {
        cb(t)
            .and_then(|c| c.jain)
            .map_or("-".into(), |j| format!("{j:.4}"))
    });
    row(s, "bench / cbench responses/s", &|_, t| match (
        t.medians.get("responses/s"),
        cb(t).and_then(|c| c.median),
    ) {
        (Some(b), Some(c)) if c > 0.0 => format!("{:.2}", b / c),
        _ => "-".into(),
    });
    row(s, "bench ratio / cbench ratio", &|i, t| match (
        t.ratios.get("responses/s"),
        cb(t).and_then(|c| c.ratio),
    ) {
        (Some(b), Some(c)) if i > 0 && c > 0.0 => format!("{:.2}", b / c),
        _ => "-".into(),
    });
    row(
        s,
        "bench ratio / cbench ratio, paired by round",
        &|i, t| match cb(t).and_then(|c| c.paired_agreement) {
            Some(a) if i > 0 => format!("{a:.2}"),
            _ => "-".into(),
        },
    );
    row(s, "cbench cpu busy % (cbench / controller)", &|_, t| {
        fmt_cpu(
            t.rounds.iter().filter_map(|r| r.cbench_cpu.as_ref()),
            CpuColumn::Busy,
        )
    });
    row(s, "cbench cpu wait % (cbench / controller)", &|_, t| {
        fmt_cpu(
            t.rounds.iter().filter_map(|r| r.cbench_cpu.as_ref()),
            CpuColumn::Wait,
        )
    });
    row(s, "cbench runs ok", &|_, t| match cb(t) {
        Some(c) => format!("{}/{runs}", c.runs.len()),
        None => "0/0".into(),
    });
}

/// Below this share of cbench's rate against the do-nothing responder, the
/// emulator may be what limits the figures (issue 28 target 5).
const EMULATOR_ENOUGH: f64 = 0.95;

/// An emulator thread busy less than this share of the time had time to
/// spare: it was not what limited the run.
const EMULATOR_SPARE: f64 = 90.0;

/// The do-nothing responder's rate under the emulator below
/// [`EMULATOR_ENOUGH`] of cbench's: the share, and how busy the emulator
/// (per thread) and the responder were in its runs.
struct SlowerThanCbench {
    share: f64,
    emulator_busy_per_thread: Option<f64>,
    controller_busy: Option<f64>,
}

fn slower_than_cbench(t: &TargetResult) -> Option<SlowerThanCbench> {
    if t.target != "responder" {
        return None;
    }
    let bench = *t.medians.get("responses/s")?;
    let cbench = t.cbench.as_ref()?.median?;
    let share = bench / cbench;
    if cbench <= 0.0 || share >= EMULATOR_ENOUGH {
        return None;
    }
    let per_thread: Vec<f64> = t
        .runs
        .iter()
        .filter_map(|r| Some(r.cpu_use.generator_busy_pct? / r.config.threads.max(1) as f64))
        .collect();
    let (_, controller_busy) = cpu_medians(
        t.rounds.iter().filter_map(|r| r.bench_cpu.as_ref()),
        CpuColumn::Busy,
    );
    Some(SlowerThanCbench {
        share,
        emulator_busy_per_thread: median(&per_thread),
        controller_busy,
    })
}

impl fmt::Display for SlowerThanCbench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: Option<f64>| x.map_or("?".to_string(), |x| format!("{x:.0}%"));
        write!(
            f,
            "the emulator drove `responder` at {:.2}x cbench's rate (below {EMULATOR_ENOUGH}x); its threads were busy {} of the time, the responder {}: ",
            self.share,
            pct(self.emulator_busy_per_thread),
            pct(self.controller_busy)
        )?;
        let spare = |busy: Option<f64>| busy.is_some_and(|b| b < EMULATOR_SPARE);
        if !spare(self.emulator_busy_per_thread) {
            f.write_str(
                "at this rate the emulator may be the limit, and its ratios to the responder are capped",
            )
        } else if !spare(self.controller_busy) && self.controller_busy.is_some() {
            f.write_str(
                "the emulator had time to spare and was not the limit; the responder, busy all the time, ran slower under its load than under cbench's",
            )
        } else {
            f.write_str(
                "neither was busy all the time in the median run, so neither alone set the pace (the runs may have differed)",
            )
        }
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
    match c.writes {
        Writes::Cbench => {}
        Writes::Fill => {
            let _ = writeln!(s, "The emulator ran with `--writes fill`.\n");
        }
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
        if case
            .targets
            .iter()
            .any(|t| t.rounds.iter().any(|r| r.bench_cpu.is_some()))
        {
            for (name, column) in [("busy", CpuColumn::Busy), ("wait", CpuColumn::Wait)] {
                let _ = write!(s, "| cpu {name} % (emulator / controller) |");
                for t in &case.targets {
                    let uses = t.rounds.iter().filter_map(|r| r.bench_cpu.as_ref());
                    let _ = write!(s, " {} |", fmt_cpu(uses, column));
                }
                s.push('\n');
            }
        }
        if case.cbench.is_ok() {
            cbench_rows(&mut s, case, c.runs);
        }
        match &case.cbench {
            Ok(cmd) => {
                let _ = writeln!(
                    s,
                    "\ncbench ran as `{cmd}`, after the emulator against each target: its figure is the mean of its counted tests, the median of runs. `bench ratio / cbench ratio` compares each target's ratio to the first target as measured by the two tools (ratio of medians; `paired by round`: the median of the same comparison made within each round). `cpu busy %` and `cpu wait %`: medians over the runs of the share of the run's time the load generator's and the controller's threads ran (100 is one core), and were runnable but waited for a CPU (schedstat); a wait above a few percent means something else ran on their CPUs, and the one of the two busy all the time set the pace."
                );
            }
            Err(why) => {
                let _ = writeln!(s, "\n- cbench: {why}");
            }
        }
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
            if let Some(e) = t.cbench.as_ref().and_then(|cb| cb.errors.first()) {
                let n = t.cbench.as_ref().map_or(0, |cb| cb.errors.len());
                let _ = writeln!(s, "\n- {}: {n} cbench run(s) failed, first: {e}", t.target);
            }
            if let Some(slower) = slower_than_cbench(t) {
                let _ = writeln!(s, "\n- {slower}");
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests;
