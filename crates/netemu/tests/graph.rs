//! Graphs from every source: netlab's generators (checked against
//! netlab's own view of the links and hosts), an edge list, and one of
//! the contract crate's topology files.

use baton_netemu::{FileHosts, Graph, input, load};
use baton_netlab::topo::Topology;
use std::collections::BTreeSet;

type Ends = BTreeSet<((u64, u16), (u64, u16))>;

/// The links as unordered pairs of (datapath id, port), each once.
fn link_set(g: &Graph) -> Ends {
    let ends: Vec<_> = g
        .links()
        .iter()
        .map(|l| {
            let a = (g.switches()[l.a.switch.0 as usize].dpid, l.a.port);
            let b = (g.switches()[l.b.switch.0 as usize].dpid, l.b.port);
            (a.min(b), a.max(b))
        })
        .collect();
    let set: Ends = ends.iter().copied().collect();
    assert_eq!(set.len(), ends.len(), "a link is listed twice");
    set
}

fn counts(g: &Graph) -> (usize, usize, usize) {
    (g.switches().len(), g.links().len(), g.hosts().len())
}

#[test]
fn generators_match_netlab() {
    for (spec, want) in [
        ("fat-tree:4", (20, 32, 16)),
        ("linear:4", (4, 3, 4)),
        ("ring:5", (5, 5, 5)),
        ("torus:3x4", (12, 24, 12)),
        ("single:3", (1, 0, 3)),
    ] {
        let g = Graph::named(spec).unwrap();
        assert_eq!(counts(&g), want, "{spec}");
        let t = Topology::named(spec).unwrap();
        let theirs: Ends = t
            .switch_links()
            .iter()
            .map(|l| ((l.a.0.0, l.a.1), (l.b.0.0, l.b.1)))
            .collect();
        assert_eq!(link_set(&g), theirs, "{spec}: links");
        let hosts: BTreeSet<(u64, u16)> = g
            .hosts()
            .iter()
            .map(|e| (g.switches()[e.switch.0 as usize].dpid, e.port))
            .collect();
        let theirs: BTreeSet<(u64, u16)> = t
            .host_attachments()
            .iter()
            .map(|a| (a.dpid.0, a.port))
            .collect();
        assert_eq!(hosts, theirs, "{spec}: host ports");
    }
}

#[test]
fn fat_tree_k4_hosts_sit_on_edge_switches_only() {
    let g = Graph::named("fat-tree:4").unwrap();
    for h in g.hosts() {
        let name = g.name(h.switch);
        assert!(name.starts_with('e'), "host on {name}");
        assert!((1..=2).contains(&h.port));
    }
    // Every switch has k = 4 ports in use.
    for (i, s) in g.switches().iter().enumerate() {
        let used = g
            .links()
            .iter()
            .flat_map(|l| [l.a, l.b])
            .chain(g.hosts().iter().copied())
            .filter(|e| e.switch.0 as usize == i)
            .count();
        assert_eq!(used, 4, "{}", s.name);
    }
}

#[test]
fn ten_thousand_switches() {
    let g = Graph::named("torus:100x100").unwrap();
    assert_eq!(counts(&g), (10_000, 20_000, 10_000));
}

#[test]
fn edge_list_file() {
    let dir = std::env::temp_dir().join(format!("netemu-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("square.txt");
    std::fs::write(
        &path,
        "# a square with a diagonal\nn1 n2\nn2 n3\nn3 n4\nn4 n1\nn1:9 n3 1ms\n",
    )
    .unwrap();
    let g = load(path.to_str().unwrap(), FileHosts::OnePerSwitch).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(counts(&g), (4, 5, 4));
    // n1: ports 1 (n2), 2 (n4), 9 (diagonal); its host after the highest.
    let n1 = g.switch_named("n1").unwrap();
    let host = g.hosts().iter().find(|e| e.switch == n1).unwrap();
    assert_eq!(host.port, 10);
    assert_eq!(g.max_port(n1), 10);
}

#[test]
fn contract_topology_file() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../contract/topologies/brain.json"
    );
    let g = load(path, FileHosts::OnePerSwitch).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let nodes = json["nodes"].as_array().unwrap().len();
    let links = json["links"].as_array().unwrap().len();
    assert_eq!((nodes, links), (161, 166), "the committed file");
    assert_eq!(counts(&g), (nodes, links, nodes));
    assert_eq!(g.switches()[0].label.as_deref(), json["nodes"][0].as_str());
    link_set(&g);
    // Every JSON link is a graph link between the same nodes.
    for (l, j) in g.links().iter().zip(json["links"].as_array().unwrap()) {
        assert_eq!(u64::from(l.a.switch.0), j["a"].as_u64().unwrap());
        assert_eq!(u64::from(l.b.switch.0), j["b"].as_u64().unwrap());
    }
    let bare = input::contract_json(&text, FileHosts::None).unwrap();
    assert!(bare.hosts().is_empty());
}
