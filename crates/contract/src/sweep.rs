//! The thesis's experiment grid (Maestro thesis §5.4.3-5.4.4): every
//! single-link or single-node failure of a topology, run under CONTRACT
//! and under No Coordination from the same start, for several traffic
//! seeds, in parallel on every core (rayon); and what they measured,
//! summarised per scenario with 95% intervals over the seeds.
//!
//! A seed draws the traffic and the noise of the controller's matrix
//! ([`Setup::optimised`]); the failures of one seed share that traffic,
//! so the intervals are over the seeds' means (the seeds are the
//! independent samples), and the comparison of the two modes is paired:
//! each seed's CONTRACT mean minus its No Coordination mean.

use crate::sim::{Failure, Mode, Outcome, Params, Setup, simulate};
use crate::topo::Topology;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which failures a sweep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// Every link, one at a time.
    LinkFailure,
    /// Every router (with its links), one at a time.
    NodeFailure,
}

impl Scenario {
    /// Both.
    pub const ALL: [Scenario; 2] = [Scenario::LinkFailure, Scenario::NodeFailure];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::LinkFailure => "link-failure",
            Scenario::NodeFailure => "node-failure",
        }
    }

    /// The scenario called `name`.
    pub fn parse(name: &str) -> Result<Scenario, String> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("no scenario {name:?}: link-failure or node-failure"))
    }

    /// Its failures on `topo`.
    pub fn failures(self, topo: &Topology) -> Vec<Failure> {
        match self {
            Scenario::LinkFailure => (0..topo.links.len()).map(Failure::Link).collect(),
            Scenario::NodeFailure => (0..topo.nodes.len()).map(Failure::Node).collect(),
        }
    }

    /// Its failure number `index` on `topo`.
    pub fn failure(self, topo: &Topology, index: usize) -> Result<Failure, String> {
        let (count, what) = match self {
            Scenario::LinkFailure => (topo.links.len(), "links"),
            Scenario::NodeFailure => (topo.nodes.len(), "routers"),
        };
        if index >= count {
            return Err(format!("{} has {count} {what}", topo.name));
        }
        Ok(match self {
            Scenario::LinkFailure => Failure::Link(index),
            Scenario::NodeFailure => Failure::Node(index),
        })
    }
}

/// One failure under both modes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// The traffic's seed.
    pub seed: u64,
    /// What failed.
    pub failure: Failure,
    /// Under CONTRACT.
    pub contract: Outcome,
    /// Under the IGP alone.
    pub no_coordination: Outcome,
}

/// Both modes on `failure` from `setup`, side by side (in parallel).
pub fn compare(topo: &Topology, params: &Params, setup: &Setup, failure: Failure) -> Pair {
    let (contract, no_coordination) = rayon::join(
        || simulate(topo, params, setup, Mode::Contract, failure),
        || simulate(topo, params, setup, Mode::NoCoordination, failure),
    );
    Pair {
        seed: params.seed,
        failure,
        contract,
        no_coordination,
    }
}

/// A mean over samples, with its 95% interval (Student's t); no interval
/// from one sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// The interval's ends (`None` from one sample).
    pub interval: Option<(f64, f64)>,
    /// How many samples.
    pub samples: usize,
}

impl Estimate {
    /// The mean of `xs` and its 95% interval.
    pub fn of(xs: &[f64]) -> Estimate {
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n.max(1) as f64;
        let interval = (n >= 2).then(|| {
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t95(n - 1) * (var / n as f64).sqrt();
            (mean - half, mean + half)
        });
        Estimate {
            mean,
            interval,
            samples: n,
        }
    }

    /// Half the interval's width (0 from one sample).
    pub fn half_width(&self) -> f64 {
        self.interval.map_or(0.0, |(lo, hi)| (hi - lo) / 2.0)
    }
}

/// The two-sided 95% quantile of Student's t with `df` degrees of
/// freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.960)
}

/// One mode's figures over a scenario's failures, each the mean per
/// failure, estimated over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Best-effort flows counted per run.
    pub flows: Estimate,
    /// Loss-Num.
    pub loss_num: Estimate,
    /// The smallest and largest Loss-Num of any run.
    pub loss_num_range: (usize, usize),
    /// ... to congestion.
    pub lost_to_congestion: Estimate,
    /// ... for want of a route.
    pub lost_to_routing: Estimate,
    /// SLA-V per threshold factor.
    pub sla_violations: Vec<(f64, Estimate)>,
    /// Malicious flows that leaked.
    pub malicious_leaked: Estimate,
    /// LSAs delivered.
    pub lsas: Estimate,
    /// Approval requests, approval messages, filter configurations and
    /// weight pushes: CONTRACT's control messages.
    pub contract_messages: Estimate,
    /// States approved.
    pub approvals: Estimate,
    /// How long after the failure the last state was approved, ms (over
    /// the runs that approved one).
    pub approved_after_ms: Estimate,
    /// Controller time per run, ms (both DAGs; measured).
    pub controller_ms: Estimate,
}

/// A scenario's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The scenario.
    pub scenario: Scenario,
    /// Failures per seed.
    pub failures: usize,
    /// Under CONTRACT.
    pub contract: Side,
    /// Under the IGP alone.
    pub no_coordination: Side,
    /// CONTRACT's Loss-Num minus No Coordination's, paired by seed.
    pub loss_num_difference: Estimate,
}

/// A whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The topology's name.
    pub topology: String,
    /// Its routers and links.
    pub size: (usize, usize),
    /// The settings (the seed is each run's).
    pub params: Params,
    /// The seeds.
    pub seeds: Vec<u64>,
    /// Per scenario.
    pub summaries: Vec<Summary>,
    /// Every run.
    pub runs: Vec<Pair>,
}

/// Every failure of `scenarios` on `topo` (or `sample` of each, drawn
/// once from the first seed, as the thesis does on its larger networks)
/// under both modes, for each of `seeds`, in parallel; `progress` hears
/// how many runs of how many are done after each.
pub fn sweep(
    topo: &Topology,
    params: &Params,
    scenarios: &[Scenario],
    seeds: &[u64],
    sample: Option<usize>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Sweep {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seeds.first().copied().unwrap_or(0));
    let failures: Vec<(Scenario, Vec<Failure>)> = scenarios
        .iter()
        .map(|&sc| {
            let all = sc.failures(topo);
            let Some(k) = sample.filter(|&k| k < all.len()) else {
                return (sc, all);
            };
            let mut some = rand::seq::index::sample(&mut rng, all.len(), k).into_vec();
            some.sort_unstable();
            (sc, some.into_iter().map(|i| all[i]).collect())
        })
        .collect();
    let setups: Vec<(Params, Setup)> = seeds
        .par_iter()
        .map(|&seed| {
            let p = Params {
                seed,
                ..params.clone()
            };
            let setup = Setup::optimised(topo, &p);
            (p, setup)
        })
        .collect();
    let jobs: Vec<(usize, Scenario, Failure, Mode)> = (0..seeds.len())
        .flat_map(|s| {
            failures.iter().flat_map(move |(sc, fs)| {
                fs.iter().flat_map(move |&f| {
                    [Mode::Contract, Mode::NoCoordination].map(move |m| (s, *sc, f, m))
                })
            })
        })
        .collect();
    let done = AtomicUsize::new(0);
    let outcomes: Vec<Outcome> = jobs
        .par_iter()
        .map(|&(s, _, f, m)| {
            let (p, setup) = &setups[s];
            let o = simulate(topo, p, setup, m, f);
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            o
        })
        .collect();
    let mut runs = Vec::with_capacity(jobs.len() / 2);
    let mut scenario_of = Vec::with_capacity(jobs.len() / 2);
    for (pair, outcomes) in jobs.chunks(2).zip(outcomes.chunks(2)) {
        let (s, sc, failure, _) = pair[0];
        runs.push(Pair {
            seed: seeds[s],
            failure,
            contract: outcomes[0].clone(),
            no_coordination: outcomes[1].clone(),
        });
        scenario_of.push(sc);
    }
    let summaries = scenarios
        .iter()
        .map(|&sc| {
            let of: Vec<&Pair> = runs
                .iter()
                .zip(&scenario_of)
                .filter(|(_, s)| **s == sc)
                .map(|(r, _)| r)
                .collect();
            summarise(sc, seeds, &of, &params.sla_factors)
        })
        .collect();
    Sweep {
        topology: topo.name.clone(),
        size: (topo.nodes.len(), topo.links.len()),
        params: params.clone(),
        seeds: seeds.to_vec(),
        summaries,
        runs,
    }
}

/// One scenario's runs summarised: each figure's mean over the failures
/// of a seed, estimated over the seeds.
fn summarise(scenario: Scenario, seeds: &[u64], runs: &[&Pair], sla: &[f64]) -> Summary {
    // A seed's mean over its runs that have the figure.
    let per_seed = |seed: u64, f: &dyn Fn(&Pair) -> Option<f64>| -> Option<f64> {
        let of: Vec<f64> = runs
            .iter()
            .filter(|r| r.seed == seed)
            .filter_map(|r| f(r))
            .collect();
        (!of.is_empty()).then(|| of.iter().sum::<f64>() / of.len() as f64)
    };
    let estimate_some = |f: &dyn Fn(&Pair) -> Option<f64>| {
        Estimate::of(
            &seeds
                .iter()
                .filter_map(|&s| per_seed(s, f))
                .collect::<Vec<_>>(),
        )
    };
    let estimate = |f: &dyn Fn(&Pair) -> f64| estimate_some(&|r| Some(f(r)));
    let side = |o: &dyn Fn(&Pair) -> &Outcome| Side {
        flows: estimate(&|r| o(r).flows as f64),
        loss_num: estimate(&|r| o(r).loss_num as f64),
        loss_num_range: (
            runs.iter().map(|r| o(r).loss_num).min().unwrap_or(0),
            runs.iter().map(|r| o(r).loss_num).max().unwrap_or(0),
        ),
        lost_to_congestion: estimate(&|r| o(r).lost_to_congestion as f64),
        lost_to_routing: estimate(&|r| o(r).lost_to_routing as f64),
        sla_violations: sla
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, estimate(&|r| o(r).sla_violations[i].1)))
            .collect(),
        malicious_leaked: estimate(&|r| o(r).malicious_leaked as f64),
        lsas: estimate(&|r| o(r).lsas as f64),
        contract_messages: estimate(&|r| {
            let o = o(r);
            (o.approval_requests + o.approval_messages + o.filter_configs + o.weight_pushes) as f64
        }),
        approvals: estimate(&|r| o(r).approvals as f64),
        approved_after_ms: estimate_some(&|r| o(r).approved_after_us.map(|t| t as f64 / 1e3)),
        controller_ms: estimate(&|r| o(r).controller_us.iter().sum::<u64>() as f64 / 1e3),
    };
    Summary {
        scenario,
        failures: runs.len() / seeds.len().max(1),
        contract: side(&|r| &r.contract),
        no_coordination: side(&|r| &r.no_coordination),
        loss_num_difference: estimate(&|r| {
            r.contract.loss_num as f64 - r.no_coordination.loss_num as f64
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_from_several_samples_covers_their_mean_and_none_from_one() {
        let e = Estimate::of(&[1.0, 2.0, 3.0]);
        assert_eq!(e.mean, 2.0);
        let (lo, hi) = e.interval.expect("three samples");
        // t(2) = 4.303, sd 1, n 3.
        assert!((hi - 2.0 - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert!((2.0 - lo - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(Estimate::of(&[5.0]).interval, None);
        assert_eq!(Estimate::of(&[5.0]).half_width(), 0.0);
    }

    #[test]
    fn scenarios_are_named_as_on_the_command_line() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::parse(s.name()), Ok(s));
        }
        assert!(Scenario::parse("flood").is_err());
    }
}
