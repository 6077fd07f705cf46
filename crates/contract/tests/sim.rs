//! The simulator's own correctness (issue 26, "Shown"): every router's
//! routes are shortest paths over its database after every event, and
//! over the real network once it converged (checked against petgraph's
//! Dijkstra); traffic is conserved per link and class and per flow;
//! identical seeds give identical runs; and a failure does what the
//! thesis says an uncoordinated IGP does.

use baton_contract::igp::Router;
use baton_contract::sim::{Failure, Mode, Outcome, Params, Setup, Sim, simulate};
use baton_contract::topo::{Link, Micros, Topology};
use baton_contract::traffic::End;
use petgraph::algo::dijkstra;
use petgraph::graph::{NodeIndex, UnGraph};
use proptest::prelude::*;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// The cost of router `r`'s cheapest path to each router, by its own
/// database (links both ends advertise), from petgraph.
fn costs_by_database(r: &Router, n: usize) -> Vec<Option<u64>> {
    let mut g = UnGraph::<(), u64>::new_undirected();
    let nodes: Vec<NodeIndex> = (0..n).map(|_| g.add_node(())).collect();
    for a in 0..n {
        let Some(lsa) = r.lsa(a) else { continue };
        for adj in &lsa.links {
            let back = r.lsa(adj.neighbour).is_some_and(|l| {
                l.links
                    .iter()
                    .any(|b| b.neighbour == a && b.link == adj.link)
            });
            if back && a < adj.neighbour {
                g.add_edge(nodes[a], nodes[adj.neighbour], u64::from(adj.weight));
            }
        }
    }
    let d = dijkstra(&g, nodes[r.id], None, |e| *e.weight());
    (0..n).map(|m| d.get(&nodes[m]).copied()).collect()
}

/// The cost of the cheapest path from `src` over the links and routers
/// that are up, from petgraph.
fn costs_by_network(sim: &Sim<'_>, topo: &Topology, src: usize) -> Vec<Option<u64>> {
    let n = topo.nodes.len();
    let mut g = UnGraph::<(), u64>::new_undirected();
    let nodes: Vec<NodeIndex> = (0..n).map(|_| g.add_node(())).collect();
    for (id, l) in topo.links.iter().enumerate() {
        if sim.links_up()[id] && sim.nodes_up()[l.a] && sim.nodes_up()[l.b] {
            g.add_edge(nodes[l.a], nodes[l.b], u64::from(sim.weights()[id]));
        }
    }
    let d = dijkstra(&g, nodes[src], None, |e| *e.weight());
    (0..n).map(|m| d.get(&nodes[m]).copied()).collect()
}

/// Router `r`'s route costs, and that each route's next hop is one step
/// of a cheapest path by `costs` (`costs` from the router).
fn check_routes(r: &Router, costs: &[Option<u64>], what: &str) {
    for (dst, want) in costs.iter().enumerate() {
        if dst == r.id {
            continue;
        }
        let got = r.route(dst).map(|x| x.cost);
        assert_eq!(got, *want, "{what}: router {} to {dst}", r.id);
    }
}

fn small_params(seed: u64) -> Params {
    Params {
        hold_down_us: 200_000,
        failure_at_us: 500_000,
        after_us: 3_000_000,
        flows_per_pair: 0.2,
        load: 0.1,
        malicious: 2,
        seed,
        ..Params::default()
    }
}

fn random_case(n: usize, extra: usize, seed: u64) -> (Topology, Vec<u32>, Failure) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let topo = Topology::random(n, extra, 1e6, &mut rng);
    let weights = (0..topo.links.len())
        .map(|_| rng.random_range(1..=10))
        .collect();
    let failure = if rng.random_bool(0.5) {
        Failure::Link(rng.random_range(0..topo.links.len()))
    } else {
        Failure::Node(rng.random_range(0..n))
    };
    (topo, weights, failure)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// After every event, each live router whose database has not changed
    /// since its last SPF routes along cheapest paths of that database;
    /// at the end, every live router routes along the network's.
    #[test]
    fn routes_are_shortest_paths_after_every_event(n in 4usize..14, extra in 0usize..12, seed in any::<u64>(), contract in any::<bool>()) {
        let (topo, weights, failure) = random_case(n, extra, seed);
        let mode = if contract { Mode::Contract } else { Mode::NoCoordination };
        let params = small_params(seed);
        let setup = Setup::new(&topo, &params, weights);
        let mut checked = 0;
        let mut last: Option<Vec<Router>> = None;
        let sim = Sim::new(&topo, &params, &setup, mode);
        sim.run(failure, |s| {
            for r in s.routers() {
                if s.nodes_up()[r.id] && !s.spf_pending(r.id) {
                    check_routes(r, &costs_by_database(r, n), "by its database");
                    checked += 1;
                }
            }
            if s.now() == params.failure_at_us + params.after_us {
                for r in s.routers().iter().filter(|r| s.nodes_up()[r.id]) {
                    check_routes(r, &costs_by_network(s, &topo, r.id), "converged");
                }
                last = Some(s.routers().to_vec());
            }
        });
        prop_assert!(checked > 0);
        prop_assert!(last.is_some(), "the run reached its end");
    }

    /// What enters each link and class leaves it or is dropped there; what
    /// each flow sends is delivered, lost, or filtered.
    #[test]
    fn traffic_is_conserved(n in 4usize..14, extra in 0usize..12, seed in any::<u64>(), contract in any::<bool>()) {
        let (topo, weights, failure) = random_case(n, extra, seed);
        let mode = if contract { Mode::Contract } else { Mode::NoCoordination };
        let params = small_params(seed);
        let setup = Setup::new(&topo, &params, weights);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
        Sim::new(&topo, &params, &setup, mode).run(failure, |s| {
            for l in &s.plane().links {
                for c in l {
                    assert!(close(c.arrived, c.dropped + c.departed), "{c:?}");
                }
            }
            for m in s.measured() {
                let out = m.delivered + m.congested + m.unrouted + m.filtered;
                assert!(close(m.sent, out), "{m:?}");
            }
        });
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Under CONTRACT, after every event, each router's entries are an
    /// approved state followed by unapproved changes: an unapproved
    /// entry comes from a later state than the last approval the router
    /// received, an approved one from that state or an earlier one; and a
    /// network whose controller's router fails keeps converging on its
    /// own, approving nothing more.
    #[test]
    fn a_router_is_an_approved_state_then_unapproved_changes(n in 4usize..14, extra in 0usize..12, seed in any::<u64>()) {
        let (topo, weights, failure) = random_case(n, extra, seed);
        let params = small_params(seed);
        let setup = Setup::new(&topo, &params, weights);
        let mut converged = false;
        Sim::new(&topo, &params, &setup, Mode::Contract).run(failure, |s| {
            for r in 0..n {
                let upto = s.approved_upto(r);
                for e in &s.entries(r).0 {
                    if e.approved {
                        assert!(e.fp.seq_sum <= upto, "router {r}: {e:?} approved past {upto}");
                    } else {
                        assert!(e.fp.seq_sum > upto, "router {r}: {e:?} unapproved at {upto}");
                    }
                }
            }
            if s.now() == params.failure_at_us + params.after_us {
                for r in s.routers().iter().filter(|r| s.nodes_up()[r.id]) {
                    check_routes(r, &costs_by_network(s, &topo, r.id), "converged");
                }
                converged = true;
            }
        });
        prop_assert!(converged);
    }
}

#[test]
fn without_its_controller_the_network_adapts_on_its_own() {
    let topo = Topology::built_in("ta2", 1e6).unwrap();
    let params = Params {
        after_us: 4_000_000,
        ..Params::default()
    };
    let setup = Setup::new(&topo, &params, vec![1; topo.links.len()]);
    let sim = Sim::new(&topo, &params, &setup, Mode::Contract);
    let c = sim.controller_at();
    let mut unapproved = 0;
    let out = sim.run(Failure::Node(c), |s| {
        if s.now() == params.failure_at_us + params.after_us {
            for r in s.routers().iter().filter(|r| s.nodes_up()[r.id]) {
                check_routes(r, &costs_by_network(s, &topo, r.id), "converged");
                unapproved += s.entries(r.id).0.iter().filter(|e| !e.approved).count();
            }
        }
    });
    assert_eq!(out.approvals, 0);
    assert!(unapproved > 0, "the routes changed and stay unapproved");
    // With the controller there, the same failure elsewhere is approved.
    let other = (0..topo.nodes.len()).find(|&n| n != c).unwrap();
    let out = simulate(&topo, &params, &setup, Mode::Contract, Failure::Node(other));
    assert!(
        out.approvals >= 1 && out.approval_requests > 0 && out.filter_configs > 0,
        "{out:?}"
    );
}

#[test]
fn identical_seeds_give_identical_runs() {
    let topo = Topology::built_in("uninett2010", 1e6).unwrap();
    let params = Params {
        after_us: 4_000_000,
        ..Params::default()
    };
    let weights = vec![1; topo.links.len()];
    let setup = Setup::new(&topo, &params, weights.clone());
    // The controller's time is measured, not simulated.
    let run = |setup: &Setup, mode| Outcome {
        controller_us: [0; 2],
        ..simulate(&topo, &params, setup, mode, Failure::Link(3))
    };
    for mode in [Mode::NoCoordination, Mode::Contract] {
        let a = run(&setup, mode);
        assert_eq!(a, run(&Setup::new(&topo, &params, weights.clone()), mode));
        assert!(a.lsas > 0 && a.spf_runs > 0);
    }
    let other = Params {
        seed: 2,
        ..params.clone()
    };
    assert_ne!(setup, Setup::new(&topo, &other, weights));
}

/// A ring of four routers, 1 ms links, unit weights but 0-3 at 10: the
/// traffic from 0 to 2 goes 0-1-2.
fn ring() -> Topology {
    let link = |a, b| Link {
        a,
        b,
        capacity_bps: 1e6,
        delay_us: 1_000,
    };
    Topology {
        name: "ring".into(),
        nodes: (0..4).map(|i| format!("r{i}")).collect(),
        links: vec![link(0, 1), link(1, 2), link(2, 3), link(3, 0)],
    }
}

#[test]
fn a_failed_link_loses_traffic_until_the_igp_moves_off_it_and_lets_attacks_past_their_filters() {
    let topo = ring();
    let params = Params {
        flows_per_pair: 0.0,
        malicious: 1,
        malicious_rate: 0.1,
        filter_hop: 1,
        ..Params::default()
    };
    let weights = vec![1, 1, 1, 10];
    let mut setup = Setup::new(&topo, &params, weights.clone());
    // A best-effort flow and an attack from 0 to 2, the attack blocked on
    // 0-1 (its first hop).
    setup.flows.clear();
    setup.filters.clear();
    let flow = |malicious| baton_contract::traffic::Flow {
        src: 0,
        dst: 2,
        rate_bps: 100_000.0,
        malicious,
    };
    setup.flows = vec![flow(false), flow(true)];
    setup.filters.insert((topo.links[0].dir_from(0, 0), 1));
    let mut ends = Vec::new();
    let out = Sim::new(&topo, &params, &setup, Mode::NoCoordination).run(Failure::Link(1), |s| {
        let e = (s.now(), s.paths()[0].end, s.paths()[1].end);
        if ends
            .last()
            .is_none_or(|l: &(Micros, End, End)| (l.1, l.2) != (e.1, e.2))
        {
            ends.push(e);
        }
    });
    // Before: delivered and filtered. At the failure, 0-1-2 breaks at 1;
    // router 1 hears first and sends back to 0 (a loop) until 0's SPF
    // moves everything onto 0-3-2, past the attack's filter.
    let at = params.failure_at_us;
    assert_eq!(
        ends.first().map(|e| (e.1, e.2)),
        Some((End::Delivered, End::Filtered))
    );
    let last = ends.last().unwrap();
    assert_eq!(
        (last.1, last.2),
        (End::Delivered, End::Delivered),
        "{ends:?}"
    );
    assert!(last.0 >= at + params.hold_down_us, "{ends:?}");
    assert_eq!(out.malicious_leaked, 1);
    assert_eq!(out.loss_num, 1);
    assert_eq!(out.lost_to_routing, 1);
    assert!(out.lsas > 0);
}

#[test]
fn a_link_toggled_back_up_carries_the_routes_again() {
    let topo = ring();
    let params = Params {
        flows_per_pair: 0.5,
        toggles: 4,
        toggle_every_us: 300_000,
        hold_down_us: 100_000,
        after_us: 3_000_000,
        ..Params::default()
    };
    let setup = Setup::new(&topo, &params, vec![1; 4]);
    for mode in [Mode::NoCoordination, Mode::Contract] {
        let mut downs = Vec::new();
        let out = Sim::new(&topo, &params, &setup, mode).run(Failure::Link(0), |s| {
            if downs.last() != Some(&!s.links_up()[0]) {
                downs.push(!s.links_up()[0]);
            }
            if s.now() == params.failure_at_us + params.after_us {
                assert!(s.links_up()[0]);
                for r in s.routers() {
                    check_routes(r, &costs_by_network(s, &topo, r.id), "after the toggles");
                    assert!(r.id == 1 || r.route(1).is_some());
                }
            }
        });
        // Down, up, down, up: four changes (the first event is the failure).
        assert_eq!(downs, [true, false, true, false]);
        let once = simulate(
            &topo,
            &Params {
                toggles: 1,
                ..params.clone()
            },
            &setup,
            mode,
            Failure::Link(0),
        );
        assert!(
            out.lsas > once.lsas,
            "{} LSAs against {}",
            out.lsas,
            once.lsas
        );
        if mode == Mode::Contract {
            assert!(
                out.approvals >= 1 && out.approved_after_us.is_some(),
                "{out:?}"
            );
        }
    }
}
