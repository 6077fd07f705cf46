//! What the topology application costs when many switches come and go:
//! N switches (default 10,000) of 4 ports each connect to the test
//! harness, one after the other, and then disconnect, with discovery
//! running alone. Every switch up, port up and switch down publishes a
//! new [`Topology`] (about 5 versions a switch), so this measures what a
//! version costs as the topology grows. No sockets, no timers run: the
//! instruction counts repeat from run to run.
//!
//! ```sh
//! cargo run --release -p baton-apps --example topology_churn [N]
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/topology_churn 2000
//! ```
//!
//! Prints the time each phase took and checks what it left.

use baton_apps::lldp::ProbeKey;
use baton_apps::topology::{TopologyApp, TopologyConfig};
use baton_apps::views::Topology;
use baton_openflow::Version;
use baton_runtime::AnyApp;
use baton_runtime::testing::{Harness, port};
use std::sync::Arc;
use std::time::Instant;

const PORTS: u32 = 4;

fn topology(h: &Harness) -> Topology {
    h.snapshot()
        .get::<Topology>()
        .map(|t| t.arc().as_ref().clone())
        .unwrap_or_default()
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(10_000, |a| a.parse().expect("N: a number of switches"));
    let app = Arc::new(TopologyApp::with_key(
        TopologyConfig::default(),
        ProbeKey::from_bytes([7; 32]),
    ));
    let mut h = Harness::new(vec![AnyApp::from(app)]);
    let ports: Vec<_> = (1..=PORTS).map(port).collect();

    let start = Instant::now();
    let ids: Vec<_> = (1..=n)
        .map(|dpid| {
            let id = h.connect_with_ports(dpid, Version::V10, &ports);
            // The probes sent at port up: not needed, and not kept.
            h.take_bytes(id);
            id
        })
        .collect();
    let up = start.elapsed();
    let t = topology(&h);
    assert_eq!(t.switches.len() as u64, n);
    assert_eq!(t.settling.len() as u64, n * u64::from(PORTS));
    drop(t);

    let start = Instant::now();
    for id in ids {
        h.disconnect(id);
    }
    let down = start.elapsed();
    let t = topology(&h);
    assert!(t.switches.is_empty() && t.settling.is_empty());

    println!(
        "{n} switches x {PORTS} ports: up {:.3} s, down {:.3} s, total {:.3} s",
        up.as_secs_f64(),
        down.as_secs_f64(),
        (up + down).as_secs_f64()
    );
}
