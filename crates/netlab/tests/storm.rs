//! A loop of standalone bridges without spanning tree: the broadcast storm
//! it makes is observed, and the lab still tears down cleanly.
//!
//! Alone in its own test binary: the storm keeps one core busy while it
//! lasts (~2 s), which would disturb the timing of tests running beside
//! it. The measured outage of a cut link is in `forwarding.rs`; this test
//! shows that a check for "no storm, no duplicates" can fail, i.e. that the
//! lab observes a loop when there is one. Run as root.

use baton_netlab::{Cmd, FailMode, Lab, SwitchOptions, Topology};
use std::time::{Duration, Instant};

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn a_ring_without_spanning_tree_storms_and_the_lab_still_tears_down() {
    let lab = Lab::new().unwrap();
    let ring = Topology::ring(4);
    // Standalone bridges (OVS's NORMAL learning switch), no STP.
    lab.build(&ring, &SwitchOptions::new().fail_mode(FailMode::Standalone))
        .unwrap();

    // With the ring open (s4-s1 cut) it is a chain: a clean ping, and h3
    // hears only the few frames meant for everyone.
    lab.set_link_down("s4", "s1").unwrap();
    let before = lab.counters("h3", 0).unwrap();
    let r = lab.ping("h1", "10.0.0.3", 3, 5 * SECOND).unwrap();
    assert!(r.is_clean(), "{r}\n{}", r.output);
    std::thread::sleep(SECOND);
    let quiet = lab.counters("h3", 0).unwrap().rx_packets - before.rx_packets;
    assert!(quiet < 20, "{quiet} frames reached h3 without a loop");

    // Close the loop and make h1 broadcast an ARP request again.
    lab.set_link_up("s4", "s1").unwrap();
    lab.exec(Cmd::new("ip").args(["neigh", "flush", "all"]).host("h1"))
        .unwrap();
    let before = lab.counters("h3", 0).unwrap();
    let r = lab.ping("h1", "10.0.0.3", 3, 3 * SECOND).unwrap();
    std::thread::sleep(SECOND);
    let stormed = lab.counters("h3", 0).unwrap().rx_packets - before.rx_packets;
    eprintln!(
        "in the loop: ping {r}; h3 received {stormed} frames in ~1.6 s (without the loop: {quiet})"
    );
    assert!(
        stormed > 1000,
        "a broadcast circling the ring reaches h3 thousands of times: {stormed}"
    );

    // Tearing down in the middle of the storm is bounded and complete.
    let t = Instant::now();
    let took = lab.close().unwrap();
    eprintln!("closed during the storm in {:.2} s", took.as_secs_f64());
    assert!(t.elapsed() < 30 * SECOND);
}
