//! The sweep over a small random network: every failure under both
//! modes for each seed, and summaries that are the runs' own means.

use baton_contract::sim::{Failure, Params};
use baton_contract::sweep::{Scenario, sweep};
use baton_contract::topo::Topology;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn a_sweep_runs_every_failure_under_both_modes_and_summarises_the_seeds_means() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let topo = Topology::random(8, 4, 1e6, &mut rng);
    let params = Params {
        flows_per_pair: 0.3,
        load: 0.2,
        after_us: 3_000_000,
        budget_us: 200_000,
        initial_evaluations: 200,
        ..Params::default()
    };
    let seeds = [1, 2, 3];
    let calls = AtomicUsize::new(0);
    let s = sweep(
        &topo,
        &params,
        &Scenario::ALL,
        &seeds,
        None,
        &|done, total| {
            calls.fetch_add(1, Ordering::Relaxed);
            assert!(done <= total);
        },
    );
    let failures = topo.links.len() + topo.nodes.len();
    assert_eq!(s.runs.len(), seeds.len() * failures);
    assert_eq!(calls.load(Ordering::Relaxed), 2 * s.runs.len());
    for seed in seeds {
        let links: Vec<_> = s
            .runs
            .iter()
            .filter(|r| r.seed == seed && matches!(r.failure, Failure::Link(_)))
            .collect();
        assert_eq!(links.len(), topo.links.len());
        for r in &links {
            // Both modes start from the same traffic.
            assert_eq!(r.contract.flows, r.no_coordination.flows);
            assert_eq!(r.no_coordination.approvals, 0);
        }
    }
    let link = &s.summaries[0];
    assert_eq!(link.scenario, Scenario::LinkFailure);
    assert_eq!(link.failures, topo.links.len());
    let mean = |seed: u64| {
        let of: Vec<f64> = s
            .runs
            .iter()
            .filter(|r| r.seed == seed && matches!(r.failure, Failure::Link(_)))
            .map(|r| r.contract.loss_num as f64)
            .collect();
        of.iter().sum::<f64>() / of.len() as f64
    };
    let over_seeds = seeds.iter().map(|&s| mean(s)).sum::<f64>() / 3.0;
    assert!((link.contract.loss_num.mean - over_seeds).abs() < 1e-9);
    assert_eq!(link.contract.loss_num.samples, 3);
    let diff = link.contract.loss_num.mean - link.no_coordination.loss_num.mean;
    assert!((link.loss_num_difference.mean - diff).abs() < 1e-9);
    assert_eq!(s.summaries[1].failures, topo.nodes.len());
}
