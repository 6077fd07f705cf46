//! What learning a new host costs the default pipeline (`topology`,
//! `devices`, `routing`) with many hosts already known, in the test
//! harness, for instruction counts that repeat from run to run (no
//! sockets, no timing): one switch of 4 ports, a gateway on port 1, then
//! KNOWN hosts on port 2, then 100,000 new ones on port 3, each asking
//! for the gateway's address (an ARP request, which `routing` answers by
//! proxy), in batches of 64 PACKET_INs. The harness runs the view
//! changes and routing's DAG after each batch, so their share of a new
//! host is counted too.
//!
//! ```sh
//! cargo build --release -p baton-apps --example host_learning
//! valgrind --tool=callgrind --toggle-collect='host_learning::learn_new*' \
//!     --callgrind-out-file=/tmp/cg.out target/release/examples/host_learning 1000000
//! callgrind_annotate /tmp/cg.out | head -20
//! ```
//!
//! The collected total over the 100,000 new hosts is the cost per new
//! host (`scripts/bench/host-learning.sh` runs it for 1,000, 100,000 and
//! 1,000,000 known hosts; BENCHMARKS.md, "The network services' cost per
//! request").

use baton_apps::devices::{DevicesApp, DevicesConfig};
use baton_apps::routing::{RoutingApp, RoutingConfig};
use baton_apps::topology::{TopologyApp, TopologyConfig};
use baton_apps::views::Hosts;
use baton_openflow::Version;
use baton_openflow::packet::ArpRepr;
use baton_runtime::testing::{Harness, PacketInSpec, port};
use baton_runtime::{AnyApp, SwitchId};
use std::net::Ipv4Addr;
use std::time::Duration;

/// New hosts measured.
const NEW: u32 = 100_000;
/// PACKET_INs per batch.
const BATCH: u32 = 64;

/// Host `n`'s ARP request for the gateway's address (10.0.0.1).
fn arp(n: u32) -> Vec<u8> {
    let b = n.to_be_bytes();
    let mac = baton_openflow::MacAddr([2, 1, b[0], b[1], b[2], b[3]]);
    let ip = Ipv4Addr::from(0x0b00_0000 | n);
    let mut frame = Vec::new();
    ArpRepr::request(mac, ip, Ipv4Addr::new(10, 0, 0, 1)).emit_frame(&mut frame);
    frame
}

/// The ARP requests of hosts `from..to`, `BATCH` to a batch.
fn frames(from: u32, to: u32) -> Vec<Vec<Vec<u8>>> {
    let all: Vec<u32> = (from..to).collect();
    all.chunks(BATCH as usize)
        .map(|c| c.iter().map(|&n| arp(n)).collect())
        .collect()
}

/// Each of `batches` arrives on `in_port` as one batch of PACKET_INs.
fn speak(h: &mut Harness, sw: SwitchId, in_port: u32, batches: &[Vec<Vec<u8>>]) {
    for frames in batches {
        let batch: Vec<_> = frames
            .iter()
            .map(|frame| {
                let spec = PacketInSpec {
                    in_port,
                    buffered: true,
                    frame,
                };
                (sw, spec)
            })
            .collect();
        h.batch_of(&batch);
        h.take_bytes(sw);
    }
}

/// The measured part: `NEW` hosts never seen before (their frames made
/// beforehand).
#[inline(never)]
fn learn_new_hosts(h: &mut Harness, sw: SwitchId, batches: &[Vec<Vec<u8>>]) {
    speak(h, sw, 3, batches);
}

fn main() {
    let known: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let devices = DevicesApp::new(DevicesConfig {
        max_hosts: 1 << 22,
        ..DevicesConfig::default()
    });
    let apps = vec![
        AnyApp::new(TopologyApp::new(TopologyConfig::default()).expect("randomness")),
        AnyApp::new(devices),
        AnyApp::new(RoutingApp::new(RoutingConfig::default())),
    ];
    let mut h = Harness::new(apps);
    let sw = h.connect_with_ports(1, Version::V10, &(1..=4).map(port).collect::<Vec<_>>());
    // Past the ports' settling: they are edge ports.
    h.advance(Duration::from_millis(600));
    // The gateway (host 0 answers to 10.0.0.1 as far as routing knows:
    // its ARP request names it as the sender).
    let mut gateway = Vec::new();
    let gw = baton_openflow::MacAddr([2, 0, 0, 0, 0, 1]);
    ArpRepr::request(gw, Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2))
        .emit_frame(&mut gateway);
    h.packet_in(sw, 1, &gateway);
    speak(&mut h, sw, 2, &frames(1, known + 1));
    let new = frames(known + 1, known + 1 + NEW);
    learn_new_hosts(&mut h, sw, &new);
    let hosts = h.snapshot().get::<Hosts>().map_or(0, |h| h.len());
    println!("{known} hosts known, then {NEW} new: {hosts} hosts");
}
