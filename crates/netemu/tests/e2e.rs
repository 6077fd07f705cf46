//! The emulator against baton's controller, started in this process with
//! its default applications (topology, devices, routing) on loopback:
//! every pair's packets arrive, over paths that an independent
//! shortest-path computation (petgraph, over netlab's own list of the
//! links) agrees are shortest; after a cut, they arrive again over the
//! shortest path that is left. No timing is asserted.

use baton_netemu::{Config, Graph, HostId, Pairs, Report, Schedule, SwitchId, run};
use baton_netlab::topo::Topology;
use baton_openflow::Version;
use baton_runtime::{Config as RuntimeConfig, Runtime};
use petgraph::algo::dijkstra;
use petgraph::graph::{NodeIndex, UnGraph};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// baton as `baton run` starts it: the default applications.
fn controller() -> Runtime {
    let apps = baton_apps::DEFAULT_APPS
        .iter()
        .map(|name| baton_apps::by_name(name).unwrap())
        .collect();
    let cfg = RuntimeConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        ..RuntimeConfig::default()
    };
    Runtime::start(cfg, apps).expect("the controller starts")
}

/// The switch graph as netlab lists its links, by datapath id, with the
/// links in `without` left out (datapath id pairs, either order).
fn reference(t: &Topology, without: &[(u64, u64)]) -> (UnGraph<u64, ()>, HashMap<u64, NodeIndex>) {
    let mut g = UnGraph::new_undirected();
    let mut at = HashMap::new();
    for s in &t.switches {
        at.insert(s.dpid.0, g.add_node(s.dpid.0));
    }
    for l in t.switch_links() {
        let (a, b) = (l.a.0.0, l.b.0.0);
        if !without.contains(&(a, b)) && !without.contains(&(b, a)) {
            g.add_edge(at[&a], at[&b], ());
        }
    }
    (g, at)
}

/// Whether `path` (datapath ids) is a shortest path in `g` from its first
/// switch to its last.
fn is_shortest(g: &UnGraph<u64, ()>, at: &HashMap<u64, NodeIndex>, path: &[u64]) -> bool {
    let (first, last) = (path[0], path[path.len() - 1]);
    let dist = dijkstra(g, at[&first], Some(at[&last]), |_| 1usize);
    let walk = path
        .windows(2)
        .all(|w| g.find_edge(at[&w[0]], at[&w[1]]).is_some());
    walk && dist.get(&at[&last]) == Some(&(path.len() - 1))
}

fn emulate(spec: &str, version: Version, pairs: Pairs, events: &str) -> (Graph, Report) {
    emulate_with(spec, version, pairs, events, |_| {})
}

/// [`emulate`], with `tweak` applied to the emulator's configuration.
fn emulate_with(
    spec: &str,
    version: Version,
    pairs: Pairs,
    events: &str,
    tweak: impl FnOnce(&mut Config),
) -> (Graph, Report) {
    let rt = controller();
    let graph = Graph::named(spec).unwrap();
    let mut cfg = Config::new(rt.local_addrs()[0], graph.clone());
    cfg.version = version;
    cfg.traffic.pairs = pairs;
    cfg.traffic.send_interval = Duration::from_millis(2);
    // Twice what baton's discovery needs (ports settle for 500 ms), so a
    // slow machine still starts traffic with the topology known.
    cfg.warmup = Duration::from_secs(2);
    cfg.duration = Duration::from_millis(2500);
    cfg.drain = Duration::from_millis(300);
    cfg.events = Schedule::parse(events).unwrap();
    cfg.trace_paths = true;
    cfg.connect.timeout = Duration::from_secs(60);
    tweak(&mut cfg);
    let report = run(cfg).expect("the emulation runs");
    rt.stop();
    (graph, report)
}

fn dpids(g: &Graph, path: &[SwitchId]) -> Vec<u64> {
    path.iter()
        .map(|s| g.switches()[s.0 as usize].dpid)
        .collect()
}

fn fat_tree_paths_are_shortest(version: Version) {
    let (g, r) = emulate("fat-tree:4", version, Pairs::HalfWay, "");
    assert_eq!(r.switches_ready, 20, "{r}");
    assert_eq!(r.connections_lost, 0, "{r}");
    assert_eq!((r.pairs, r.pairs_set_up), (16, 16), "{r}");
    let (reference, at) = reference(&Topology::fat_tree(4), &[]);
    for p in &r.pair_reports {
        assert!(p.received > 0, "{p:?}");
        assert_eq!(p.received, p.sent, "every packet arrived: {p:?}");
        assert!(!p.paths.is_empty(), "{p:?}");
        let (src, dst) = (g.hosts()[p.src.0 as usize], g.hosts()[p.dst.0 as usize]);
        for (path, _) in &p.paths {
            assert_eq!(path.first(), Some(&src.switch), "{p:?}");
            assert_eq!(path.last(), Some(&dst.switch), "{p:?}");
            let ids = dpids(&g, path);
            assert!(
                is_shortest(&reference, &at, &ids),
                "not shortest: {ids:?} in {p:?}"
            );
            // Half way round the host list is another pod: edge,
            // aggregation, core, aggregation, edge.
            assert_eq!(path.len(), 5, "{p:?}");
        }
    }
    assert_eq!(r.packets_lost, 0, "{r}");
}

#[test]
fn fat_tree_paths_are_shortest_in_1_0() {
    fat_tree_paths_are_shortest(Version::V10);
}

#[test]
fn fat_tree_paths_are_shortest_in_1_3() {
    fat_tree_paths_are_shortest(Version::V13);
}

#[test]
fn a_cut_on_a_ring_is_routed_around() {
    // ring:4: s1-s2-s3-s4-s1, a host on port 1 of each. h1 (on s1) talks
    // to h2 (on s2) over their link until it is cut.
    let pairs = Pairs::Explicit(vec![(HostId(0), HostId(1))]);
    let (g, r) = emulate("ring:4", Version::V13, pairs, "at 1s cut s1-s2");
    assert_eq!((r.pairs, r.pairs_set_up), (1, 1), "{r}");
    let e = &r.events[0];
    assert!(e.applied.is_some(), "{r}");
    assert_eq!((e.unrecovered, e.unreachable), (0, 0), "{r}");
    let p = &r.pair_reports[0];
    assert!(
        p.received > 0 && p.received + r.packets_lost == p.sent,
        "{p:?}"
    );
    let paths: BTreeSet<Vec<u64>> = p.paths.iter().map(|(path, _)| dpids(&g, path)).collect();
    let t = Topology::ring(4);
    let (before, at) = reference(&t, &[]);
    let (after, _) = reference(&t, &[(1, 2)]);
    assert!(paths.contains(&vec![1, 2]), "{paths:?}");
    assert!(paths.contains(&vec![1, 4, 3, 2]), "rerouted: {paths:?}");
    for path in &paths {
        assert!(
            is_shortest(&before, &at, path) || is_shortest(&after, &at, path),
            "{path:?} is no shortest path before or after the cut"
        );
    }
    assert!(e.reroute_us.len() <= 1, "one pair, one reroute at most");
}

/// Churn: pairs that end after their lifetime, and hosts that leave once
/// their pairs have ended. Both pairs set up, send, end, and lose nothing
/// on the way; their four hosts leave.
#[test]
fn pairs_end_after_their_lifetime_and_their_hosts_leave() {
    let pairs = Pairs::Explicit(vec![(HostId(0), HostId(2)), (HostId(1), HostId(3))]);
    let (_, r) = emulate_with("ring:4", Version::V13, pairs, "", |cfg| {
        cfg.traffic.pair_lifetime = Some(Duration::from_millis(500));
    });
    assert_eq!((r.pairs, r.pairs_set_up), (2, 2), "{r}");
    assert_eq!((r.pairs_ended, r.hosts_left), (2, 4), "{r}");
    assert_eq!(r.packets_lost, 0, "{r}");
    for p in &r.pair_reports {
        assert!(p.received > 0 && p.received == p.sent, "{p:?}");
    }
}
