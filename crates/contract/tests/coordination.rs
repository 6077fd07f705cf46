//! CONTRACT's properties (thesis §5.3.3) over random networks and
//! failures: a network partitioned from its controller stays internally
//! consistent; with the controller stopped the routers adapt on their own
//! and catch up once it is back; an attack is never carried over a link
//! whose router holds its filter, and none leaks once the controller's
//! filters for the approved state are in place.

use baton_contract::sim::{Failure, Mode, Params, Setup, Sim};
use baton_contract::topo::{Link, Topology};
use baton_contract::traffic::End;
use proptest::prelude::*;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

fn params(seed: u64) -> Params {
    Params {
        hold_down_us: 200_000,
        failure_at_us: 500_000,
        after_us: 4_000_000,
        flows_per_pair: 0.2,
        load: 0.1,
        malicious: 2,
        budget_us: 0,
        seed,
        ..Params::default()
    }
}

/// The routers connected to `from` by live links and routers.
fn part_of(s: &Sim<'_>, topo: &Topology, from: usize) -> Vec<bool> {
    let mut seen = vec![false; topo.nodes.len()];
    let mut stack = vec![from];
    while let Some(n) = stack.pop() {
        if !s.nodes_up()[n] || std::mem::replace(&mut seen[n], true) {
            continue;
        }
        for (id, l) in topo.links.iter().enumerate() {
            if s.links_up()[id] && (l.a == n || l.b == n) {
                stack.push(l.other(n));
            }
        }
    }
    seen
}

/// A random link, or a random router but the controller's `c`.
fn failure(rng: &mut Xoshiro256PlusPlus, topo: &Topology, c: usize, link: bool) -> Failure {
    let n = topo.nodes.len();
    if link {
        Failure::Link(rng.random_range(0..topo.links.len()))
    } else {
        Failure::Node((c + 1 + rng.random_range(0..n - 1)) % n)
    }
}

/// Two random networks of `a` and `b` routers joined by one link (the
/// last).
fn two_parts(a: usize, b: usize, seed: u64) -> Topology {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let left = Topology::random(a, a / 2, 1e6, &mut rng);
    let right = Topology::random(b, b / 2, 1e6, &mut rng);
    let mut links = left.links.clone();
    links.extend(right.links.iter().map(|l| Link {
        a: l.a + a,
        b: l.b + a,
        ..*l
    }));
    links.push(Link {
        a: rng.random_range(0..a),
        b: a + rng.random_range(0..b),
        capacity_bps: 1e6,
        delay_us: 2_000,
    });
    Topology {
        name: "two parts".into(),
        nodes: (0..a + b).map(|i| format!("r{i}")).collect(),
        links,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The link between two parts fails: in each part every router ends
    /// with the same database and the same approvals (reliable flooding
    /// reaches all of a part or none of it); the part without the
    /// controller approves nothing, the controller's approves its new
    /// state.
    #[test]
    fn each_part_of_a_partitioned_network_stays_internally_consistent(a in 3usize..9, b in 3usize..9, seed in any::<u64>()) {
        let topo = two_parts(a, b, seed);
        let params = params(seed);
        let setup = Setup::new(&topo, &params, vec![1; topo.links.len()]);
        let sim = Sim::new(&topo, &params, &setup, Mode::Contract);
        let c = sim.controller_at();
        let start = sim.approved_upto(c);
        let end = params.failure_at_us + params.after_us;
        let mut checked = false;
        sim.run(Failure::Link(topo.links.len() - 1), |s| {
            if s.now() != end {
                return;
            }
            let with = part_of(s, &topo, c);
            for part in [true, false] {
                let members: Vec<usize> = (0..topo.nodes.len()).filter(|&r| with[r] == part).collect();
                let seqs: Vec<Vec<u64>> = members.iter().map(|&r| s.routers()[r].seqs().collect()).collect();
                assert!(seqs.windows(2).all(|w| w[0] == w[1]), "one database per part");
                let upto: Vec<u64> = members.iter().map(|&r| s.approved_upto(r)).collect();
                assert!(upto.windows(2).all(|w| w[0] == w[1]), "one approval per part: {upto:?}");
                if part {
                    assert!(upto[0] > start, "the controller's part approved its new state");
                    for &r in &members {
                        assert!(s.entries(r).0.iter().all(|e| e.approved), "router {r}");
                    }
                } else {
                    assert_eq!(upto[0], start, "the other part approved nothing");
                }
            }
            checked = true;
        });
        prop_assert!(checked);
    }

    /// The controller stops before a failure and comes back after the
    /// network converged: meanwhile the routers converge on their own and
    /// approve nothing; once it is back, every router it reaches is
    /// approved.
    #[test]
    fn without_the_controller_routers_adapt_alone_and_catch_up_when_it_returns(n in 4usize..12, extra in 0usize..10, seed in any::<u64>(), link in any::<bool>()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let topo = Topology::random(n, extra, 1e6, &mut rng);
        let back = 2_500_000;
        let params = Params {
            controller_outage_us: Some((300_000, back)),
            ..params(seed)
        };
        let setup = Setup::new(&topo, &params, vec![1; topo.links.len()]);
        let sim = Sim::new(&topo, &params, &setup, Mode::Contract);
        let c = sim.controller_at();
        let failure = failure(&mut rng, &topo, c, link);
        let start = sim.approved_upto(c);
        let end = params.failure_at_us + params.after_us;
        let (mut before_return, mut at_end) = (false, false);
        let out = sim.run(failure, |s| {
            if s.now() < back {
                for r in 0..n {
                    assert_eq!(s.approved_upto(r), start, "approved while the controller was away");
                }
                assert!(!s.controller_up() || s.now() < 300_000);
            }
            if s.now() == back && !before_return {
                // Converged on their own (hold-down 0.2 s, failure at 0.5 s).
                before_return = true;
                for r in 0..n {
                    assert!(!s.spf_pending(r) || !s.nodes_up()[r]);
                }
            }
            if s.now() == end {
                let reached = part_of(s, &topo, c);
                for r in (0..n).filter(|&r| reached[r]) {
                    assert!(s.entries(r).0.iter().all(|e| e.approved), "router {r} caught up");
                }
                at_end = true;
            }
        });
        prop_assert!(before_return && at_end);
        prop_assert!(out.approvals >= 1);
    }

    /// After every event no attack is carried over a link whose router
    /// holds its filter; once the controller's filters for an approved
    /// state are in and the network is quiet, every attack is blocked.
    #[test]
    fn attacks_never_cross_their_filters_and_none_leaks_after_the_approval(n in 4usize..14, extra in 0usize..12, seed in any::<u64>(), link in any::<bool>()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let topo = Topology::random(n, extra, 1e6, &mut rng);
        let params = params(seed);
        let setup = Setup::new(&topo, &params, vec![1; topo.links.len()]);
        let sim = Sim::new(&topo, &params, &setup, Mode::Contract);
        let c = sim.controller_at();
        let failure = failure(&mut rng, &topo, c, link);
        let end = params.failure_at_us + params.after_us;
        let mut at_end = false;
        sim.run(failure, |s| {
            let filters: Vec<_> = s.filters().collect();
            for (f, flow) in s.flows().iter().enumerate().filter(|(_, f)| f.malicious) {
                for (dir, _) in &s.paths()[f].hops {
                    assert!(!filters.contains(&(*dir, f)), "attack {f} crossed its filter on {dir:?}");
                }
                if s.now() == end {
                    let reached = part_of(s, &topo, c);
                    if reached[flow.src] && reached[flow.dst] {
                        let e = s.paths()[f].end;
                        assert!(e == End::Filtered, "attack {f} ends {e:?}");
                    }
                }
            }
            at_end |= s.now() == end;
        });
        prop_assert!(at_end);
    }
}
