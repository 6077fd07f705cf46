//! Paths against hand-checked graphs, and on random graphs: the flood over
//! the spanning tree reaches every edge port once and only once, and paths
//! are shortest and use only links of their topology.

use super::*;
use crate::views::{Served, SwitchNode};
use baton_openflow::neutral::PortDesc;
use baton_runtime::SwitchId;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn d(n: u64) -> DatapathId {
    DatapathId(n)
}

fn pr(dpid: u64, port: u32) -> PortRef {
    PortRef::new(DatapathId(dpid), PortNo(port))
}

/// A cable between (switch, port) and (switch, port).
type Cable = ((u64, u32), (u64, u32));

/// A topology of `switches` switches (dpid 1..=n) with `ports` ports each,
/// all live, and `links` (both directions) between (switch, port) pairs.
fn topology(switches: u64, ports: u32, links: &[Cable]) -> Versioned<Topology> {
    let mut t = Topology::default();
    for n in 1..=switches {
        let ports = (1..=ports)
            .map(|p| {
                (
                    PortNo(p),
                    PortDesc {
                        no: PortNo(p),
                        name: format!("s{n}-eth{p}"),
                        hw_addr: baton_openflow::MacAddr([2, 0, 0, 0, n as u8, p as u8]),
                        admin_down: false,
                        link_down: false,
                        blocked: false,
                        speed_kbps: None,
                    },
                )
            })
            .collect();
        t.switches.insert(
            d(n),
            Arc::new(SwitchNode {
                served: Served::Here(SwitchId::new(n as u32, 0)),
                dpid: d(n),
                ports,
            }),
        );
    }
    for &((a, ap), (b, bp)) in links {
        let l = Link {
            src: pr(a, ap),
            dst: pr(b, bp),
        };
        t.add_link(l);
        t.add_link(l.reversed());
    }
    versioned(t)
}

fn versioned(t: Topology) -> Versioned<Topology> {
    Versioned::new(1, t)
}

#[test]
fn a_chain_has_one_path_each_way() {
    // 1:2 - 2:1, 2:2 - 3:1; every switch has ports 1..=3.
    let r = Routes::compute(topology(3, 3, &[((1, 2), (2, 1)), ((2, 2), (3, 1))]));
    assert_eq!(r.path(d(1), d(3)), Some(vec![pr(1, 2), pr(2, 2)]));
    assert_eq!(r.path(d(3), d(1)), Some(vec![pr(3, 1), pr(2, 1)]));
    assert_eq!(r.path(d(2), d(2)), Some(vec![]));
    assert_eq!(r.path(d(1), d(9)), None);
    assert_eq!(
        r.path_links(&[pr(1, 2), pr(2, 2)]),
        vec![
            Link {
                src: pr(1, 2),
                dst: pr(2, 1)
            },
            Link {
                src: pr(2, 2),
                dst: pr(3, 1)
            }
        ]
    );
    // Edge ports: everything but the link ports.
    assert_eq!(
        flood_ports(&r, d(2), PortNo(3)),
        Some(vec![PortNo(1), PortNo(2)])
    );
    assert_eq!(
        flood_ports(&r, d(1), PortNo(1)),
        Some(vec![PortNo(2), PortNo(3)])
    );
}

#[test]
fn a_ring_floods_over_a_tree_and_drops_what_comes_round_the_loop() {
    // 1-2-3-4-1 through ports 1 (towards the lower number... as cabled).
    let r = Routes::compute(topology(
        4,
        3,
        &[
            ((1, 1), (2, 2)),
            ((2, 1), (3, 2)),
            ((3, 1), (4, 2)),
            ((4, 1), (1, 2)),
        ],
    ));
    // Two ways round from 1 to 3, both two hops; the same one each time.
    let path = r.path(d(1), d(3)).unwrap();
    assert!(
        path == [pr(1, 1), pr(2, 1)] || path == [pr(1, 2), pr(4, 2)],
        "{path:?}"
    );
    assert_eq!(
        Routes::compute(r.topology().clone())
            .path(d(1), d(3))
            .unwrap(),
        path
    );
    // The tree from switch 1 leaves out one ring link: 3:1 - 4:2.
    let off_tree = [pr(3, 1), pr(4, 2)];
    for p in off_tree {
        assert!(!r.is_tree_port(p));
        assert!(r.flood_ports(p.dpid, p.port).is_none(), "{p}");
    }
    assert_eq!(flood_ports(&r, d(3), PortNo(3)), Some(vec![PortNo(2)]));
}

#[test]
fn a_later_topology_with_the_same_links_floods_by_its_own_edge_ports() {
    let r = Routes::compute(topology(2, 3, &[((1, 1), (2, 1))]));
    let all = Some(vec![PortNo(1), PortNo(3)]);
    assert_eq!(flood_ports(&r, d(1), PortNo(2)), all);
    // Port 3 of switch 1 goes down: the same switches and links, so the
    // same paths, but no longer an edge port to flood by.
    let mut t = r.topology().arc().as_ref().clone();
    let mut s1 = t.switches[&d(1)].as_ref().clone();
    s1.ports.get_mut(&PortNo(3)).unwrap().link_down = true;
    t.switches.insert(d(1), Arc::new(s1));
    let later = r.follow(Versioned::new(r.topology().version() + 1, t));
    assert!(later.same_paths(&r));
    assert_eq!(flood_ports(&later, d(1), PortNo(2)), Some(vec![PortNo(1)]));
    assert_eq!(edge_floods(&later, d(1))[&d(1)], vec![PortNo(2)]);
    // The earlier version's answer is its own.
    assert_eq!(flood_ports(&r, d(1), PortNo(2)), all);
    assert_eq!(edge_floods(&r, d(1))[&d(1)], vec![PortNo(2), PortNo(3)]);
}

/// The edge ports of each switch a flood in one step from `dpid` reaches.
fn edge_floods(r: &Routes, dpid: DatapathId) -> BTreeMap<DatapathId, Vec<PortNo>> {
    let part = r.edge_flood(dpid).expect("served here");
    part.iter()
        .map(|s| {
            let ports = s.outputs.iter().map(|a| match a {
                ActionSpec::Output { port, .. } => *port,
                other => panic!("not an output: {other:?}"),
            });
            (s.dpid, ports.collect())
        })
        .collect()
}

#[test]
fn a_part_with_another_members_switch_is_flooded_over_the_tree() {
    let chain = [((1, 2), (2, 1))];
    let mut t = Topology::clone(&topology(3, 3, &chain));
    let mut s2 = t.switches[&d(2)].as_ref().clone();
    s2.served = Served::Peer("b".into());
    t.switches.insert(d(2), Arc::new(s2));
    let r = Routes::compute(versioned(t));
    assert!(r.edge_flood(d(1)).is_none(), "s2 is another member's");
    // Switch 3, alone in its part, is all here.
    assert_eq!(edge_floods(&r, d(3)).keys().collect::<Vec<_>>(), [&d(3)]);
}

#[test]
fn links_known_in_one_direction_carry_no_traffic() {
    let mut t = topology(2, 2, &[]).arc().as_ref().clone();
    t.add_link(Link {
        src: pr(1, 1),
        dst: pr(2, 1),
    });
    let r = Routes::compute(versioned(t));
    assert_eq!(r.path(d(1), d(2)), None);
    // And their ports are not edge ports either.
    assert_eq!(flood_ports(&r, d(1), PortNo(2)), Some(vec![]));
}

/// The ports a packet arriving at `dpid` on `in_port` is flooded by.
fn flood_ports(r: &Routes, dpid: DatapathId, in_port: PortNo) -> Option<Vec<PortNo>> {
    r.flood_ports(dpid, in_port)
}

/// A random graph: `n` switches with `ports` ports each, and links drawn
/// from a list of switch pairs; each port is used at most once.
fn random_topology(n: u64, pairs: &[(u64, u64)]) -> Versioned<Topology> {
    topology(n, 6, &random_cables(n, pairs))
}

/// The cables of [`random_topology`].
fn random_cables(n: u64, pairs: &[(u64, u64)]) -> Vec<Cable> {
    let ports = 6;
    let mut next_port: BTreeMap<u64, u32> = (1..=n).map(|s| (s, 1)).collect();
    let mut links = Vec::new();
    for &(a, b) in pairs {
        let (a, b) = (a % n + 1, b % n + 1);
        if a == b || next_port[&a] > ports - 1 || next_port[&b] > ports - 1 {
            continue;
        }
        let (pa, pb) = (next_port[&a], next_port[&b]);
        *next_port.get_mut(&a).unwrap() += 1;
        *next_port.get_mut(&b).unwrap() += 1;
        links.push(((a, pa), (b, pb)));
    }
    links
}

/// Floods a packet arriving on edge port `from`, following
/// `flood_ports` switch by switch over the links; returns how many copies
/// each edge port received.
fn flood(r: &Routes, from: PortRef) -> BTreeMap<PortRef, usize> {
    let t = r.topology();
    let mut got = BTreeMap::new();
    let mut work = vec![from];
    let mut steps = 0;
    while let Some(arrived) = work.pop() {
        steps += 1;
        assert!(steps < 10_000, "the flood does not end");
        let Some(ports) = flood_ports(r, arrived.dpid, arrived.port) else {
            continue;
        };
        for p in ports {
            let out = PortRef::new(arrived.dpid, p);
            match t.link_from(out) {
                Some(far) => work.push(far),
                None => *got.entry(out).or_insert(0) += 1,
            }
        }
    }
    got
}

/// The switches reachable from `from` over links both ways.
fn component(t: &Topology, from: DatapathId) -> BTreeSet<DatapathId> {
    let mut seen: BTreeSet<DatapathId> = [from].into();
    let mut work = vec![from];
    while let Some(u) = work.pop() {
        for l in t.bidirectional_links() {
            for (a, b) in [(l.src.dpid, l.dst.dpid), (l.dst.dpid, l.src.dpid)] {
                if a == u && seen.insert(b) {
                    work.push(b);
                }
            }
        }
    }
    seen
}

proptest! {
    #[test]
    fn a_flood_reaches_every_edge_port_once_and_only_once(
        n in 2u64..12,
        pairs in proptest::collection::vec((0u64..12, 0u64..12), 0..30),
        start in 0u64..12,
    ) {
        let r = Routes::compute(random_topology(n, &pairs));
        let t = r.topology();
        let s = d(start % n + 1);
        let Some(&from_port) = t.edge_ports(s).first() else {
            return Ok(());
        };
        let from = PortRef::new(s, from_port);
        let got = flood(&r, from);
        let reach = component(t, s);
        for sw in &reach {
            for p in t.edge_ports(*sw) {
                let port = PortRef::new(*sw, p);
                let want = usize::from(port != from);
                prop_assert_eq!(got.get(&port).copied().unwrap_or(0), want, "{}", port);
            }
        }
        // Nothing leaves the connected part the packet arrived in.
        prop_assert!(got.keys().all(|p| reach.contains(&p.dpid)));
        // In one step: the same edge ports, each switch of the part once.
        let at_once = edge_floods(&r, s);
        let want: BTreeMap<DatapathId, Vec<PortNo>> = reach
            .iter()
            .map(|&sw| (sw, t.edge_ports(sw)))
            .filter(|(_, ports)| !ports.is_empty())
            .collect();
        prop_assert_eq!(at_once, want);
    }

    #[test]
    fn paths_are_shortest_and_use_only_links_of_their_topology(
        n in 2u64..12,
        pairs in proptest::collection::vec((0u64..12, 0u64..12), 0..30),
    ) {
        let r = Routes::compute(random_topology(n, &pairs));
        let t = r.topology();
        for b in 1..=n {
            // Next hops span the destination's connected part only.
            let hops = r.next_hops(d(b));
            prop_assert_eq!(hops.len(), component(t, d(b)).len() - 1);
        }
        for a in 1..=n {
            for b in 1..=n {
                let path = r.path(d(a), d(b));
                let reachable = component(t, d(a)).contains(&d(b));
                prop_assert_eq!(path.is_some(), reachable);
                prop_assert_eq!(r.next_hops(d(b)).get(&d(a)).is_some(), reachable && a != b);
                let Some(path) = path else { continue };
                let links = r.path_links(&path);
                prop_assert_eq!(links.len(), path.len());
                for l in &links {
                    prop_assert!(t.bidirectional_links().any(|x| x == l.canonical()));
                }
                // It ends at b, and no shorter path exists (BFS distance).
                let end = links.last().map_or(d(a), |l| l.dst.dpid);
                prop_assert_eq!(end, d(b));
                prop_assert_eq!(path.len(), distance(t, d(a), d(b)));
            }
        }
    }
}

proptest! {
    /// The searches a cut keeps are those a new search would find: the
    /// next hops of routes that followed a topology with links taken
    /// away are, towards every switch, those of routes computed afresh.
    #[test]
    fn searches_kept_across_a_cut_are_the_fresh_ones(
        n in 2u64..12,
        pairs in proptest::collection::vec((0u64..12, 0u64..12), 0..30),
        cut in proptest::collection::vec(any::<bool>(), 30),
    ) {
        let cables = random_cables(n, &pairs);
        let before = Routes::compute(topology(n, 6, &cables));
        before.prepare((1..=n).map(d));
        let kept: Vec<Cable> = cables
            .iter()
            .zip(cut.iter().chain(std::iter::repeat(&false)))
            .filter(|&(_, &gone)| !gone)
            .map(|(c, _)| *c)
            .collect();
        let after = before.follow(topology(n, 6, &kept));
        let fresh = Routes::compute(topology(n, 6, &kept));
        for b in 1..=n {
            let (mine, theirs) = (after.next_hops(d(b)), fresh.next_hops(d(b)));
            for a in 1..=n {
                prop_assert_eq!(mine.get(&d(a)), theirs.get(&d(a)), "from {} towards {}", a, b);
            }
        }
    }
}

/// A cut on a ring keeps the searches whose tree did not use the link.
#[test]
fn a_cut_keeps_the_searches_that_did_not_use_the_link() {
    // 1-2-3-4-1, port 1 clockwise, port 2 anticlockwise.
    let ring: Vec<Cable> = vec![
        ((1, 1), (2, 2)),
        ((2, 1), (3, 2)),
        ((3, 1), (4, 2)),
        ((4, 1), (1, 2)),
    ];
    let before = Routes::compute(topology(4, 3, &ring));
    before.prepare((1..=4).map(d));
    // Cut 3-4: towards 1, switch 3 goes by 2 and 4 by 1 (ties broken in
    // port order), so 3-4 is off that tree; towards 3 and 4 it is on it.
    let after = before.follow(topology(
        4,
        3,
        &ring[..2]
            .iter()
            .chain(&ring[3..])
            .copied()
            .collect::<Vec<_>>(),
    ));
    assert!(Arc::ptr_eq(&before.next_hops(d(1)), &after.next_hops(d(1))));
    assert!(!Arc::ptr_eq(
        &before.next_hops(d(3)),
        &after.next_hops(d(3))
    ));
    assert!(!Arc::ptr_eq(
        &before.next_hops(d(4)),
        &after.next_hops(d(4))
    ));
}

fn distance(t: &Topology, a: DatapathId, b: DatapathId) -> usize {
    let mut dist: BTreeMap<DatapathId, usize> = [(a, 0)].into();
    let mut queue = VecDeque::from([a]);
    while let Some(u) = queue.pop_front() {
        for l in t.bidirectional_links() {
            for (x, y) in [(l.src.dpid, l.dst.dpid), (l.dst.dpid, l.src.dpid)] {
                if x == u && !dist.contains_key(&y) {
                    dist.insert(y, dist[&u] + 1);
                    queue.push_back(y);
                }
            }
        }
    }
    dist[&b]
}

#[test]
fn routes_of_a_topology_that_kept_its_switches_and_links_share_their_paths() {
    let chain = [((1, 2), (2, 1))];
    let r = Routes::compute(topology(3, 3, &chain));
    let hops = r.next_hops(d(2));
    // Hosts seen on a port: another topology, the same paths.
    let mut t = Topology::clone(r.topology());
    t.host_ports.insert(pr(3, 1));
    let same = r.follow(Versioned::new(2, t));
    assert!(same.same_paths(&r));
    assert!(Arc::ptr_eq(&same.next_hops(d(2)), &hops), "searches kept");
    assert_eq!(same.topology().version(), 2);
    // A link came: paths computed anew.
    let linked = same.follow(topology(3, 3, &[((1, 2), (2, 1)), ((2, 2), (3, 1))]));
    assert!(!linked.same_paths(&same));
    assert_eq!(linked.path(d(1), d(3)), Some(vec![pr(1, 2), pr(2, 2)]));
    // A switch went: anew too.
    let fewer = r.follow(topology(2, 3, &chain));
    assert!(!fewer.same_paths(&r));
}

#[test]
fn next_hops_keep_port_numbers_too_wide_for_two_bytes() {
    let mut t = Topology::clone(&topology(2, 1, &[]));
    let mut s1 = t.switches[&d(1)].as_ref().clone();
    let mut wide = s1.ports[&PortNo(1)].clone();
    wide.no = PortNo(70_001);
    s1.ports.insert(wide.no, wide);
    t.switches.insert(d(1), Arc::new(s1));
    let l = Link {
        src: pr(1, 70_001),
        dst: pr(2, 1),
    };
    t.add_link(l);
    t.add_link(l.reversed());
    let r = Routes::compute(versioned(t));
    assert_eq!(r.path(d(1), d(2)), Some(vec![pr(1, 70_001)]));
    assert_eq!(r.path(d(2), d(1)), Some(vec![pr(2, 1)]));
    assert_eq!(r.next_hops(d(2)).len(), 1);
}
