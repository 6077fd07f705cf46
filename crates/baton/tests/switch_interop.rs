//! `baton switch` against tools no one here wrote, on real interfaces:
//! each test builds a laboratory (`baton-netlab`: private namespaces,
//! gone when the test ends) with one veth-only switch `s1` and two hosts,
//! runs the `baton` binary on `s1-eth1` and `s1-eth2` (AF_PACKET), and
//! lets the hosts' `ping` say whether frames cross it.
//!
//! - Open vSwitch's `ovs-testcontroller` (OpenFlow 1.0, a learning
//!   switch) drives it: the hosts ping cleanly, through the flows the
//!   controller installed.
//! - `ovs-ofctl` (`-O OpenFlow10` and `-O OpenFlow13`) connects to its
//!   passive listener: `show` names the ports after their interfaces;
//!   `add-flow`, `dump-flows` (counters that move with the pings),
//!   `mod-flows` and `del-flows` do what they say, and the pings follow.
//!
//! Run as root (the laboratory needs it); the laboratory installs Open
//! vSwitch's tools when they are missing.

use baton_netlab::{Cmd, Lab, OfVersion, Proc, SwitchOptions, Topology};
use std::time::Duration;

const SECOND: Duration = Duration::from_secs(1);

/// Where the switch listens for `ovs-ofctl`, on the lab's own loopback.
const LISTEN: &str = "ptcp:6634:127.0.0.1";
const TARGET: &str = "tcp:127.0.0.1:6634";

/// A lab with `s1` as two veth ends (`s1-eth1` to `h1` at 10.0.0.1,
/// `s1-eth2` to `h2` at 10.0.0.2) and nothing joining them yet.
fn lab() -> Lab {
    let lab = Lab::new().expect("a laboratory (run as root)");
    lab.build(&Topology::single(2), &SwitchOptions::new().veth_only())
        .expect("hosts and veth ends");
    lab
}

/// `baton switch` on s1's two ends, speaking `of` ("10" or "13"), with
/// `targets` (`--controller ...`, `--listen ...`).
fn baton_switch(lab: &Lab, of: &str, targets: &[&str]) -> Proc {
    let cmd = Cmd::new(env!("CARGO_BIN_EXE_baton"))
        .args(["switch", "--dpid", "0xb1", "--of", of])
        .args(targets.iter().copied())
        .args(["--port", "s1-eth1", "s1-eth2"])
        .env("RUST_LOG", "info");
    let p = lab.spawn(cmd).expect("baton switch starts");
    p.wait_for_output("baton switch running", 10 * SECOND)
        .expect("baton switch opens its ports");
    p
}

/// `n_packets=` of the dump line that contains `flow`.
fn packets(dump: &[String], flow: &str) -> u64 {
    let line = dump
        .iter()
        .find(|l| l.contains(flow))
        .unwrap_or_else(|| panic!("no flow with `{flow}` in {dump:#?}"));
    let n = line
        .split([' ', ','])
        .find_map(|f| f.strip_prefix("n_packets="))
        .unwrap_or_else(|| panic!("no n_packets in `{line}`"));
    n.parse().unwrap()
}

/// Pings `count` times from h1 to h2 and asserts that every request was
/// answered once.
fn pings_clean(lab: &Lab, count: u32) {
    let r = lab.ping("h1", "10.0.0.2", count, 10 * SECOND).unwrap();
    assert!(r.is_clean(), "h1 -> h2: {r}\n{}", r.output);
}

/// Pings once from h1 to h2 and asserts that nothing came back.
fn pings_fail(lab: &Lab, why: &str) {
    let r = lab.ping("h1", "10.0.0.2", 1, 5 * SECOND).unwrap();
    assert_eq!(r.received, 0, "{why}, yet h1 reached h2:\n{}", r.output);
}

#[test]
fn ovs_testcontroller_drives_baton_switch_and_the_hosts_ping() {
    let lab = lab();
    let ctl = lab
        .spawn(Cmd::new("ovs-testcontroller").args([
            "-O",
            "OpenFlow10",
            "-vconsole:info",
            "-vvconn:console:dbg",
            "ptcp:6653",
        ]))
        .expect("ovs-testcontroller starts");
    lab.wait_listening(6653, 10 * SECOND).unwrap();
    let sw = baton_switch(
        &lab,
        "10",
        &["--controller", "tcp:127.0.0.1:6653", "--listen", LISTEN],
    );
    // The controller's word that the handshake is done, in its log.
    ctl.wait_for_output("received: OFPT_FEATURES_REPLY", 10 * SECOND)
        .unwrap();
    sw.wait_for_output("controller handshake done", 10 * SECOND)
        .unwrap();

    // The first request may be lost while the controller learns where
    // the hosts are; none after it, and none twice.
    for (from, to) in [("h1", "10.0.0.2"), ("h2", "10.0.0.1")] {
        let r = lab.ping(from, to, 5, 10 * SECOND).unwrap();
        let answered: Vec<u32> = lab_replies(&r.output);
        assert_eq!(r.duplicates, 0, "{from} -> {to}: {r}\n{}", r.output);
        for seq in 2..=5 {
            assert!(
                answered.contains(&seq),
                "{from} -> {to}: request {seq} unanswered\n{}",
                r.output
            );
        }
    }

    // The pings went through flows the controller installed (a learning
    // switch matches on the exact frame and outputs to the learnt port),
    // not only through its PACKET_OUTs.
    let dump = lab.ofctl(OfVersion::V10, ["dump-flows", TARGET]).unwrap();
    let used: Vec<&str> = dump
        .lines()
        .filter(|l| l.contains("icmp") && !l.contains("n_packets=0,"))
        .collect();
    assert!(
        used.iter().any(|l| l.contains("actions=output:2"))
            && used.iter().any(|l| l.contains("actions=output:1")),
        "no ICMP flow in each direction with packets:\n{dump}"
    );
}

/// The `icmp_seq` of each reply in `ping`'s output.
fn lab_replies(output: &str) -> Vec<u32> {
    baton_netlab::ping::parse_replies(output)
        .into_iter()
        .map(|r| r.seq)
        .collect()
}

/// `ovs-ofctl -O VERSION` against the switch's listener: the ports by
/// name, then flows added, dumped, modified and deleted, with the pings
/// following each step.
fn ovs_ofctl_drives(version: OfVersion, of: &str) {
    let lab = lab();
    let _sw = baton_switch(&lab, of, &["--listen", LISTEN]);
    let ofctl = |args: &[&str]| -> String {
        let mut all = vec![args[0], TARGET];
        all.extend(&args[1..]);
        lab.ofctl(version, all).unwrap()
    };
    let dump = || -> Vec<String> {
        ofctl(&["dump-flows"])
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("cookie="))
            .map(String::from)
            .collect()
    };

    let show = ofctl(&["show"]);
    for want in [
        "dpid:00000000000000b1",
        " 1(s1-eth1): addr:",
        " 2(s1-eth2): addr:",
    ] {
        assert!(show.contains(want), "`{want}` not in:\n{show}");
    }
    assert!(dump().is_empty(), "a new switch has no flows");
    pings_fail(&lab, "no flows");

    ofctl(&["add-flow", "in_port=1,actions=output:2"]);
    ofctl(&["add-flow", "in_port=2,actions=output:1"]);
    pings_clean(&lab, 3);
    let first = dump();
    assert_eq!(first.len(), 2, "{first:#?}");
    // ARP both ways and three echo requests and replies at least.
    let (to_h2, to_h1) = (packets(&first, "in_port=1"), packets(&first, "in_port=2"));
    assert!(to_h2 >= 4 && to_h1 >= 4, "{first:#?}");
    pings_clean(&lab, 2);
    let second = dump();
    assert!(
        packets(&second, "in_port=1") >= to_h2 + 2 && packets(&second, "in_port=2") >= to_h1 + 2,
        "the counters follow the pings:\n{first:#?}\n{second:#?}"
    );

    // Modify keeps the counters and changes the actions.
    ofctl(&["mod-flows", "in_port=1,actions=drop"]);
    pings_fail(&lab, "h1's frames are dropped");
    let modified = dump();
    assert!(
        modified
            .iter()
            .any(|l| l.contains("in_port=1") && l.contains("actions=drop")),
        "{modified:#?}"
    );
    assert!(packets(&modified, "in_port=1") > packets(&second, "in_port=1"));
    ofctl(&["mod-flows", "in_port=1,actions=output:2"]);
    pings_clean(&lab, 2);

    // Delete one direction, then everything.
    ofctl(&["del-flows", "in_port=1"]);
    let one = dump();
    assert!(one.len() == 1 && one[0].contains("in_port=2"), "{one:#?}");
    pings_fail(&lab, "h1 -> h2 has no flow");
    ofctl(&["del-flows"]);
    assert!(dump().is_empty(), "del-flows removes every flow");
    pings_fail(&lab, "no flows are left");
}

#[test]
fn ovs_ofctl_openflow10_drives_baton_switch_and_the_pings_follow() {
    ovs_ofctl_drives(OfVersion::V10, "10");
}

#[test]
fn ovs_ofctl_openflow13_drives_baton_switch_and_the_pings_follow() {
    ovs_ofctl_drives(OfVersion::V13, "13");
}
