//! `baton contract simulate|sweep`: CONTRACT (Maestro thesis ch. 5) in
//! the simulator of `baton-contract`, against No Coordination, from the
//! command line: the figures as a table, and as JSON and a chart on
//! request.

use baton_bench::plot::{Chart, Series, write_chart};
use baton_contract::optimize::Optimiser;
use baton_contract::sim::{Failure, Outcome, Params, Setup};
use baton_contract::sweep::{self, Estimate, Pair, Scenario, Side, Sweep};
use baton_contract::topo::Topology;
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `baton contract`.
#[derive(Args)]
pub struct ContractArgs {
    #[command(subcommand)]
    command: ContractCommand,
}

#[derive(Subcommand)]
enum ContractCommand {
    /// One failure, under CONTRACT and under No Coordination, from the
    /// same start: the metrics side by side.
    Simulate(SimulateArgs),
    /// Every failure of a scenario (or of both) under both modes, for
    /// one or more seeds: the means side by side, with 95% intervals over
    /// the seeds.
    Sweep(SweepArgs),
}

/// The network and its settings, shared by both subcommands.
#[derive(Args)]
struct Experiment {
    /// A committed topology (uninett2010, ta2, brain, north-america,
    /// south-america) or a FILE.json in the same format.
    #[arg(long, default_value = "ta2")]
    topology: String,
    /// The mean best-effort flow rate, as a fraction of a link's capacity.
    #[arg(long, default_value_t = 0.04)]
    load: f64,
    /// The Pareto shape of the flow rates (1.1: heavy-tailed; 10: close
    /// to uniform).
    #[arg(long, default_value_t = 10.0)]
    pareto_k: f64,
    /// The noise of the controller's traffic matrix (standard deviation
    /// as a fraction of the mean rate).
    #[arg(long, default_value_t = 0.05)]
    noise: f64,
    /// The controller's optimisation budget after a change, ms (0: no
    /// optimisation).
    #[arg(long, default_value_t = 2000)]
    budget: u64,
    /// The IGP's hold-down before SPF, ms.
    #[arg(long, default_value_t = 1000)]
    hold_down: u64,
    /// The link-weight search: simplex (the thesis's) or local-search.
    #[arg(long, default_value = "simplex", value_parser = parse_optimiser)]
    optimiser: Optimiser,
    /// How many times a failed link changes state, the failure included
    /// (1: it stays down; the thesis toggles it 10 times).
    #[arg(long, default_value_t = 1)]
    toggles: u32,
    /// The time between two changes of a toggling link, ms.
    #[arg(long, default_value_t = 100)]
    toggle_every: u64,
    /// Write every figure as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Draw SLA-V against the SLA threshold as FILE.svg and FILE.png.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

#[derive(Args)]
struct SimulateArgs {
    #[command(flatten)]
    experiment: Experiment,
    /// What fails.
    #[arg(long, default_value = "link-failure", value_parser = Scenario::parse)]
    scenario: Scenario,
    /// Which link or router fails, by number (default: one drawn from the
    /// seed).
    #[arg(long)]
    failed: Option<usize>,
    /// The traffic's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
struct SweepArgs {
    #[command(flatten)]
    experiment: Experiment,
    /// One scenario (default: both).
    #[arg(long, value_parser = Scenario::parse)]
    scenario: Option<Scenario>,
    /// The first traffic seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many seeds, from --seed on.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Only N failures of each scenario, drawn from the first seed (for
    /// the larger networks).
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
}

fn parse_optimiser(s: &str) -> Result<Optimiser, String> {
    match s {
        "simplex" => Ok(Optimiser::Simplex),
        "local-search" => Ok(Optimiser::LocalSearch),
        _ => Err(format!("no optimiser {s:?}: simplex or local-search")),
    }
}

/// Runs `baton contract`; the process's exit code.
pub fn main(args: ContractArgs) -> i32 {
    let r = match args.command {
        ContractCommand::Simulate(a) => simulate(a),
        ContractCommand::Sweep(a) => run_sweep(a),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("baton contract: {e}");
            1
        }
    }
}

impl Experiment {
    fn params(&self, seed: u64, scenarios: &[Scenario]) -> Result<Params, String> {
        if !(self.load > 0.0 && self.pareto_k > 1.0 && self.noise >= 0.0) {
            return Err("--load must be above 0, --pareto-k above 1, --noise at least 0".into());
        }
        if self.toggles == 0 || (self.toggles > 1 && scenarios.contains(&Scenario::NodeFailure)) {
            return Err(
                "--toggles must be at least 1, and only links toggle (--scenario link-failure)"
                    .into(),
            );
        }
        Ok(Params {
            load: self.load,
            pareto_k: self.pareto_k,
            noise: self.noise,
            budget_us: self.budget * 1000,
            hold_down_us: self.hold_down * 1000,
            optimiser: self.optimiser,
            toggles: self.toggles,
            toggle_every_us: self.toggle_every * 1000,
            seed,
            ..Params::default()
        })
    }

    fn topology(&self, params: &Params) -> Result<Topology, String> {
        if self.topology.ends_with(".json") {
            let text = std::fs::read_to_string(&self.topology)
                .map_err(|e| format!("{}: {e}", self.topology))?;
            Topology::from_json(&text, params.capacity_bps)
        } else {
            Topology::built_in(&self.topology, params.capacity_bps)
        }
    }
}

fn simulate(a: SimulateArgs) -> Result<(), String> {
    let params = a.experiment.params(a.seed, &[a.scenario])?;
    let topo = a.experiment.topology(&params)?;
    let count = a.scenario.failures(&topo).len();
    // The default failure: one drawn from the seed, the same every time.
    let index = a
        .failed
        .unwrap_or((a.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 33) as usize % count);
    let failure = a.scenario.failure(&topo, index)?;
    let t0 = Instant::now();
    let setup = Setup::optimised(&topo, &params);
    let pair = sweep::compare(&topo, &params, &setup, failure);
    println!(
        "{} ({} routers, {} links), seed {}: {} fails at {:.1} s; {:.1} s simulated after it; {:.1} s to run",
        topo.name,
        topo.nodes.len(),
        topo.links.len(),
        a.seed,
        describe(&topo, failure),
        params.failure_at_us as f64 / 1e6,
        params.after_us as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );
    print_pair(&pair);
    if let Some(path) = &a.experiment.json {
        let json = serde_json::json!({
            "topology": topo.name,
            "params": params,
            "run": pair,
        });
        write_json(path, &json)?;
    }
    if let Some(path) = &a.experiment.plot {
        let line = |name: &str, o: &Outcome| Series {
            name: name.into(),
            points: o.sla_violations.clone(),
        };
        plot(
            path,
            &format!("SLA-V after {} on {}", describe(&topo, failure), topo.name),
            vec![
                line("CONTRACT", &pair.contract),
                line("No Coordination", &pair.no_coordination),
            ],
        )?;
    }
    Ok(())
}

fn describe(topo: &Topology, f: Failure) -> String {
    match f {
        Failure::None => "nothing".into(),
        Failure::Link(l) => {
            let link = topo.links[l];
            format!("link {l} ({} - {})", topo.nodes[link.a], topo.nodes[link.b])
        }
        Failure::Node(n) => format!("router {n} ({})", topo.nodes[n]),
    }
}

fn print_pair(p: &Pair) {
    let (c, n) = (&p.contract, &p.no_coordination);
    println!("{:<34} {:>12} {:>16}", "", "CONTRACT", "No Coordination");
    let row = |name: &str, a: String, b: String| println!("{name:<34} {a:>12} {b:>16}");
    row(
        "best-effort flows",
        c.flows.to_string(),
        n.flows.to_string(),
    );
    row("Loss-Num", c.loss_num.to_string(), n.loss_num.to_string());
    row(
        "  lost to congestion",
        c.lost_to_congestion.to_string(),
        n.lost_to_congestion.to_string(),
    );
    row(
        "  lost for want of a route",
        c.lost_to_routing.to_string(),
        n.lost_to_routing.to_string(),
    );
    for ((k, a), (_, b)) in c.sla_violations.iter().zip(&n.sla_violations) {
        row(
            &format!("SLA-V, delay over {k}x"),
            format!("{a:.3}"),
            format!("{b:.3}"),
        );
    }
    row(
        "malicious flows leaked",
        c.malicious_leaked.to_string(),
        n.malicious_leaked.to_string(),
    );
    row("LSAs delivered", c.lsas.to_string(), n.lsas.to_string());
    row("SPF runs", c.spf_runs.to_string(), n.spf_runs.to_string());
    row(
        "approval requests / approvals",
        format!("{} / {}", c.approval_requests, c.approvals),
        "-".into(),
    );
    row(
        "approval messages / filter configs",
        format!("{} / {}", c.approval_messages, c.filter_configs),
        "-".into(),
    );
    row("weight pushes", c.weight_pushes.to_string(), "-".into());
    row(
        "last approval after the failure, ms",
        c.approved_after_us
            .map_or("-".into(), |t| format!("{:.0}", t as f64 / 1e3)),
        "-".into(),
    );
    row(
        "controller DAG runs (weights, approval)",
        format!("{} , {}", c.dag_runs[0], c.dag_runs[1]),
        "-".into(),
    );
    row(
        "controller time, ms (measured)",
        format!(
            "{:.1} , {:.1}",
            c.controller_us[0] as f64 / 1e3,
            c.controller_us[1] as f64 / 1e3
        ),
        "-".into(),
    );
}

fn run_sweep(a: SweepArgs) -> Result<(), String> {
    if a.seeds == 0 {
        return Err("--seeds must be at least 1".into());
    }
    let scenarios: Vec<Scenario> = a.scenario.map_or(Scenario::ALL.to_vec(), |s| vec![s]);
    let params = a.experiment.params(a.seed, &scenarios)?;
    let topo = a.experiment.topology(&params)?;
    let seeds: Vec<u64> = (a.seed..a.seed + a.seeds).collect();
    let t0 = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize| {
        if tty && (done % 20 == 0 || done == total) {
            eprint!("\r{done}/{total} runs, {:.0} s", t0.elapsed().as_secs_f64());
        }
    };
    let s = sweep::sweep(&topo, &params, &scenarios, &seeds, a.sample, &progress);
    if tty {
        eprintln!();
    }
    println!(
        "{} ({} routers, {} links), seeds {}..={}, {} runs in {:.0} s on {} threads",
        topo.name,
        topo.nodes.len(),
        topo.links.len(),
        seeds[0],
        seeds[seeds.len() - 1],
        2 * s.runs.len(),
        t0.elapsed().as_secs_f64(),
        rayon::current_num_threads()
    );
    for sum in &s.summaries {
        println!(
            "\n{}: {} failures per seed; means per failure, ± the 95% interval over {} seeds",
            sum.scenario.name(),
            sum.failures,
            seeds.len()
        );
        print_sides(&sum.contract, &sum.no_coordination);
        println!(
            "{:<34} {:>18}",
            "Loss-Num, CONTRACT minus No Coord.",
            show(&sum.loss_num_difference, 2)
        );
    }
    if let Some(path) = &a.experiment.json {
        write_json(path, &s)?;
    }
    if let Some(path) = &a.experiment.plot {
        plot(path, &format!("SLA-V on {}", topo.name), sweep_series(&s))?;
    }
    Ok(())
}

fn show(e: &Estimate, decimals: usize) -> String {
    match e.interval {
        _ if e.samples == 0 => "-".into(),
        Some(_) => format!("{:.*} ± {:.*}", decimals, e.mean, decimals, e.half_width()),
        None => format!("{:.*}", decimals, e.mean),
    }
}

fn print_sides(c: &Side, n: &Side) {
    println!("{:<34} {:>18} {:>18}", "", "CONTRACT", "No Coordination");
    let row = |name: &str, a: &Estimate, b: &Estimate, d: usize| {
        println!("{name:<34} {:>18} {:>18}", show(a, d), show(b, d))
    };
    row("best-effort flows", &c.flows, &n.flows, 1);
    row("Loss-Num", &c.loss_num, &n.loss_num, 2);
    let range = |s: &Side| format!("{} - {}", s.loss_num_range.0, s.loss_num_range.1);
    println!(
        "{:<34} {:>18} {:>18}",
        "  smallest - largest of a run",
        range(c),
        range(n)
    );
    row(
        "  lost to congestion",
        &c.lost_to_congestion,
        &n.lost_to_congestion,
        2,
    );
    row(
        "  lost for want of a route",
        &c.lost_to_routing,
        &n.lost_to_routing,
        2,
    );
    for ((k, a), (_, b)) in c.sla_violations.iter().zip(&n.sla_violations) {
        row(&format!("SLA-V, delay over {k}x"), a, b, 3);
    }
    row(
        "malicious flows leaked",
        &c.malicious_leaked,
        &n.malicious_leaked,
        2,
    );
    row("LSAs delivered", &c.lsas, &n.lsas, 0);
    row(
        "CONTRACT messages",
        &c.contract_messages,
        &n.contract_messages,
        0,
    );
    row("approvals", &c.approvals, &n.approvals, 2);
    row(
        "last approval after failure, ms",
        &c.approved_after_ms,
        &n.approved_after_ms,
        0,
    );
    row(
        "controller time, ms (measured)",
        &c.controller_ms,
        &n.controller_ms,
        1,
    );
}

fn sweep_series(s: &Sweep) -> Vec<Series> {
    let mut out = Vec::new();
    for sum in &s.summaries {
        for (mode, side) in [
            ("CONTRACT", &sum.contract),
            ("No Coordination", &sum.no_coordination),
        ] {
            out.push(Series {
                name: format!("{mode}, {}", sum.scenario.name()),
                points: side
                    .sla_violations
                    .iter()
                    .map(|(k, e)| (*k, e.mean))
                    .collect(),
            });
        }
    }
    out
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// SLA-V against the threshold, as `path` with .svg and .png.
fn plot(path: &Path, title: &str, series: Vec<Series>) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = path
        .file_stem()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?
        .to_string_lossy()
        .into_owned();
    let chart = Chart {
        file,
        title: title.into(),
        x_label: "SLA threshold, multiple of the smallest propagation delay".into(),
        y_label: "fraction of best-effort flows violating it".into(),
        log_x: false,
        series,
    };
    for p in write_chart(dir, &chart).map_err(|e| e.to_string())? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
