//! How long routing takes to compute its routes on large topologies.
//!
//! `cargo run --release -p baton-apps --example route_times [unlinked] [N...]`
//!
//! For each N (default 100, 1000, 10000): a connected topology of N
//! switches (a ring plus one random chord per switch, so about 4 links a
//! switch, seeded), or with `unlinked` N switches of 4 ports and no link
//! between them (`baton bench`'s emulated switches), then the time to compute the routes (adjacency and
//! spanning tree: what `routing` does when the topology changes), the
//! shortest paths towards one destination, and towards every destination
//! (all pairs). Prints a Markdown table.

use baton_apps::routes::Routes;
use baton_apps::views::{Link, PortRef, Served, SwitchNode, Topology};
use baton_openflow::neutral::PortDesc;
use baton_openflow::{DatapathId, MacAddr, PortNo};
use baton_runtime::SwitchId;
use baton_runtime::env::Versioned;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

fn topology(n: u64, linked: bool) -> Topology {
    let mut next_port: BTreeMap<u64, u32> = BTreeMap::new();
    let mut cables = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for s in (1..=n).filter(|_| linked) {
        cables.push((s, s % n + 1));
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let other = x % n + 1;
        if other != s {
            cables.push((s, other));
        }
    }
    let mut t = Topology::default();
    let mut ports: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    if !linked {
        ports = (1..=n).map(|s| (s, vec![1, 2, 3, 4])).collect();
    }
    for &(a, b) in &cables {
        let mut port = |s: u64| {
            let p = next_port.entry(s).or_insert(0);
            *p += 1;
            ports.entry(s).or_default().push(*p);
            PortRef::new(DatapathId(s), PortNo(*p))
        };
        let (pa, pb) = (port(a), port(b));
        let l = Link { src: pa, dst: pb };
        t.add_link(l);
        t.add_link(l.reversed());
    }
    for s in 1..=n {
        let ports = ports
            .get(&s)
            .into_iter()
            .flatten()
            .map(|&p| {
                (
                    PortNo(p),
                    PortDesc {
                        no: PortNo(p),
                        name: format!("s{s}-eth{p}"),
                        hw_addr: MacAddr([2, 0, (s >> 16) as u8, (s >> 8) as u8, s as u8, p as u8]),
                        admin_down: false,
                        link_down: false,
                        blocked: false,
                        speed_kbps: None,
                    },
                )
            })
            .collect();
        t.switches.insert(
            DatapathId(s),
            Arc::new(SwitchNode {
                served: Served::Here(SwitchId::new(s as u32, 0)),
                dpid: DatapathId(s),
                ports,
            }),
        );
    }
    t
}

fn main() {
    let linked = std::env::args().nth(1).as_deref() != Some("unlinked");
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1000, 10_000]
    } else {
        sizes
    };
    println!(
        "| switches | links | routes (adjacency + tree) | paths to one destination | all pairs |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes {
        let t = topology(n, linked);
        let links = t.bidirectional_links().count();
        let v = Versioned::new(1, t);
        let start = Instant::now();
        let routes = Routes::compute(v.clone());
        let compute = start.elapsed();
        let start = Instant::now();
        let hops = routes.next_hops(DatapathId(n / 2));
        let one = start.elapsed();
        assert_eq!(hops.len() as u64, if linked { n - 1 } else { 0 });
        // All pairs on a fresh copy, so the one above is not reused.
        let routes = Routes::compute(v);
        let start = Instant::now();
        for d in 1..=n {
            routes.next_hops(DatapathId(d));
        }
        let all = start.elapsed();
        println!(
            "| {n} | {links} | {:.2} ms | {:.3} ms | {:.1} ms |",
            compute.as_secs_f64() * 1e3,
            one.as_secs_f64() * 1e3,
            all.as_secs_f64() * 1e3
        );
    }
}
