//! The learning switch alone over fixed batches in the test harness, for
//! instruction counts that repeat from run to run (no sockets, no
//! timing): 16 switches, 2,000 batches of 64 buffered PACKET_INs from
//! 1,000 hosts to one known gateway, so every one is answered with a
//! FLOW_MOD.
//!
//! ```sh
//! cargo build --release -p baton-apps --example learning_batches
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/learning_batches
//! callgrind_annotate --inclusive=yes /tmp/cg.out | grep 'LearningSwitch as'
//! ```
//!
//! The inclusive count of `<LearningSwitch as App>::packet_in` divided by
//! the 128,000 PACKET_INs is the application's cost per request
//! (BENCHMARKS.md, "Loops and the learning switch's loop guard").

use baton_apps::{LearningConfig, LearningSwitch};
use baton_openflow::Version;
use baton_runtime::AnyApp;
use baton_runtime::testing::{Harness, PacketInSpec};

/// A UDP frame from host `src` to host `dst`.
fn frame(src: u32, dst: u32) -> Vec<u8> {
    let mac = |n: u32| [2, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8, 1];
    let b = etherparse::PacketBuilder::ethernet2(mac(src), mac(dst))
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(1, 2);
    let mut v = Vec::new();
    b.write(&mut v, &[0; 8]).expect("a frame fits a Vec");
    v
}

fn main() {
    let app = AnyApp::new(LearningSwitch::new(LearningConfig::default()));
    let mut h = Harness::new(vec![app]);
    let switches: Vec<_> = (0..16).map(|i| h.connect(i + 1, Version::V10)).collect();
    let hosts: Vec<Vec<u8>> = (1..=1000).map(|i| frame(i, 0)).collect();
    // The gateway (host 0) speaks first on port 1 of every switch.
    let gateway = frame(0, 1);
    for &sw in &switches {
        h.packet_in(sw, 1, &gateway);
        h.sent(sw);
    }
    let mut n = 0;
    for round in 0..2000 {
        let batch: Vec<_> = (0..64)
            .map(|i| {
                let host = (round * 64 + i) % hosts.len();
                let spec = PacketInSpec {
                    in_port: 2 + (host % 3) as u32,
                    buffered: true,
                    frame: &hosts[host],
                };
                (switches[i % switches.len()], spec)
            })
            .collect();
        h.batch_of(&batch);
        n += batch.len();
        for &sw in &switches {
            h.take_bytes(sw);
        }
    }
    println!("{n} PACKET_INs answered");
}
