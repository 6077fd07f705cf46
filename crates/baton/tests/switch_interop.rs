//! `baton switch` against tools no one here wrote, on real interfaces:
//! each test builds a laboratory (`baton-netlab`: private namespaces,
//! gone when the test ends) with one veth-only switch `s1` and two hosts
//! (or a second switch `s2` between s1 and h2), runs the `baton` binary
//! on `s1-eth1` and `s1-eth2` (AF_PACKET), and lets the hosts' `ping` say
//! whether frames cross it.
//!
//! - Open vSwitch's `ovs-testcontroller` (OpenFlow 1.0, a learning
//!   switch) drives it: the hosts ping cleanly, through the flows the
//!   controller installed.
//! - `ovs-ofctl` (`-O OpenFlow10` and `-O OpenFlow13`) connects to its
//!   passive listener: `show` names the ports after their interfaces;
//!   `add-flow`, `dump-flows` (counters that move with the pings),
//!   `mod-flows` and `del-flows` do what they say, and the pings follow.
//! - MPLS against Open vSwitch: h1 - `baton switch` s1 - OVS bridge s2
//!   (userspace datapath) - h2, both driven by `ovs-ofctl -O OpenFlow13`.
//!   Each switch pushes a label on its host's IPv4 and pops the other's;
//!   ARP crosses both untouched (plain output flows, no static entries).
//!   The pings are answered, and the push and pop flows of both switches
//!   count every echo.
//! - PBB between two `baton switch`es, not against Open vSwitch: OVS 3.1
//!   has no PBB (`ovs-ofctl` refuses `push_pbb` as an unknown action, and
//!   knows neither `pop_pbb` nor `pbb_isid`; the test checks the refusal).
//!   For the same reason the PBB flows are sent with baton's own codec;
//!   `ovs-ofctl` adds the ARP flows and reads the counters
//!   (`dump-aggregate`, since `dump-flows` cannot print PBB actions).
//!
//! Run as root (the laboratory needs it); the laboratory installs Open
//! vSwitch's tools when they are missing.

use baton_netlab::{Cmd, HostSpec, Lab, OfVersion, Proc, SwitchOptions, Topology};
use baton_openflow::echo::encode_barrier;
use baton_openflow::header::Direction;
use baton_openflow::hello::Hello;
use baton_openflow::v13::{Action, FlowModHead, Oxm, encode_flow_mod_apply};
use baton_openflow::{PortNo, Version, Xid};
use std::time::{Duration, Instant};

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
    baton_switch_on(lab, "s1", "0xb1", of, targets)
}

/// `baton switch` as `name` (datapath id `dpid`) on `<name>-eth1` and
/// `<name>-eth2`, speaking `of`, with `targets`.
fn baton_switch_on(lab: &Lab, name: &str, dpid: &str, of: &str, targets: &[&str]) -> Proc {
    let cmd = Cmd::new(env!("CARGO_BIN_EXE_baton"))
        .args(["switch", "--dpid", dpid, "--of", of])
        .args(targets.iter().copied())
        .arg("--port")
        .args([format!("{name}-eth1"), format!("{name}-eth2")])
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

/// MPLS labels, one per direction: h1 -> h2 crosses the s1-s2 link with
/// `TO_H2`, h2 -> h1 with `TO_H1`.
const TO_H2: u32 = 17;
const TO_H1: u32 = 18;

/// A lab with two switches in a line: h1 (10.0.0.1) on `s1-eth1`, `s1`
/// veth-only (for `baton switch`) with `s1-eth2` linked to `s2-eth2`
/// (s2's port 2), `s2` as `s2_opts` say, and h2 (10.0.0.2) on `s2-eth1`.
fn two_switch_lab(s2_opts: &SwitchOptions) -> Lab {
    let lab = Lab::new().expect("a laboratory (run as root)");
    lab.add_switch("s1", 0xb1, &SwitchOptions::new().veth_only())
        .expect("s1's veth ends");
    lab.add_switch("s2", 0xb2, s2_opts).expect("switch s2");
    let mut t = Topology::new();
    t.host(HostSpec::numbered(1))
        .host(HostSpec::numbered(2))
        .link("h1", 0, "s1", 1)
        .link("s1", 2, "s2", 2)
        .link("h2", 0, "s2", 1);
    lab.build(&t, &SwitchOptions::new())
        .expect("hosts and links");
    lab
}

/// MPLS across two implementations: `baton switch` (s1) pushes a label
/// on h1's IPv4 and pops h2's, Open vSwitch (s2) pops s1's label and
/// pushes one on h2's IPv4; ARP crosses both untouched by plain output
/// flows. The pings are answered only if both switches understood each
/// other's MPLS, and the counters of the push and pop flows on both show
/// that the echoes went through them.
#[test]
fn mpls_between_baton_switch_and_open_vswitch_carries_the_pings() {
    // s2: an Open vSwitch bridge (userspace datapath, OpenFlow 1.3 only,
    // secure, no controller).
    let lab = two_switch_lab(&SwitchOptions::new().protocols(&[OfVersion::V13]));
    let _sw = baton_switch(&lab, "13", &["--listen", LISTEN]);
    let add = |switch: &str, flow: String| {
        lab.ofctl(OfVersion::V13, ["add-flow", switch, flow.as_str()])
            .unwrap();
    };
    // s1 (baton switch): port 1 is h1, port 2 is s2.
    add(TARGET, "in_port=1,arp,actions=output:2".into());
    add(TARGET, "in_port=2,arp,actions=output:1".into());
    add(
        TARGET,
        format!("in_port=1,ip,actions=push_mpls:0x8847,set_field:{TO_H2}->mpls_label,output:2"),
    );
    add(
        TARGET,
        format!("in_port=2,mpls,mpls_label={TO_H1},actions=pop_mpls:0x0800,output:1"),
    );
    // s2 (Open vSwitch): port 1 is h2, port 2 is s1.
    add("s2", "in_port=2,arp,actions=output:1".into());
    add("s2", "in_port=1,arp,actions=output:2".into());
    add(
        "s2",
        format!("in_port=2,mpls,mpls_label={TO_H2},actions=pop_mpls:0x0800,output:1"),
    );
    add(
        "s2",
        format!("in_port=1,ip,actions=push_mpls:0x8847,set_field:{TO_H1}->mpls_label,output:2"),
    );

    let count = 5;
    let r = lab.ping("h1", "10.0.0.2", count, 10 * SECOND).unwrap();
    println!("h1 -> h2 over MPLS: {r}");
    assert!(r.is_clean(), "h1 -> h2: {r}\n{}", r.output);

    // No flow forwards plain IPv4 between the switches: every echo
    // request crossed as MPLS with TO_H2, every reply with TO_H1. Open
    // vSwitch adds its datapath's counts to its flows' in the background
    // (its revalidators, every ~0.5 s): wait for them.
    let n = u64::from(count);
    let (s1, s2) = (flows_counted(&lab, TARGET, n), flows_counted(&lab, "s2", n));
    println!(
        "s1 (baton switch):\n{}\ns2 (Open vSwitch):\n{}",
        s1.join("\n"),
        s2.join("\n")
    );
}

/// `switch`'s flows once its `push_mpls` and `pop_mpls` flows have each
/// counted `n` packets; fails after 5 s.
fn flows_counted(lab: &Lab, switch: &str, n: u64) -> Vec<String> {
    let start = Instant::now();
    loop {
        let dump = lab.dump_flows(switch, OfVersion::V13).unwrap();
        if ["push_mpls", "pop_mpls"]
            .iter()
            .all(|flow| packets(&dump, flow) >= n)
        {
            return dump;
        }
        assert!(
            start.elapsed() < 5 * SECOND,
            "{switch}'s MPLS flows did not count {n} packets each:\n{dump:#?}"
        );
        std::thread::sleep(SECOND / 10);
    }
}

/// PBB I-SIDs, one per direction, as the MPLS labels above.
const ISID_TO_H2: u32 = 0x12_3456;
const ISID_TO_H1: u32 = 0x65_4321;

/// Where the second `baton switch` (s2) listens.
const LISTEN_S2: &str = "ptcp:6635:127.0.0.1";
const TARGET_S2: &str = "tcp:127.0.0.1:6635";

/// Sends `flows` (match, actions applied) as OpenFlow 1.3 FLOW_MODs to
/// the switch listening on the lab's 127.0.0.1:`port`, after a HELLO and
/// before a BARRIER_REQUEST, and asserts that the switch answered the
/// barrier and sent no ERROR. `ovs-ofctl` cannot write `push_pbb`,
/// `pop_pbb` or `pbb_isid` (it knows none of them), so these messages
/// come from baton's own codec, through bash's `/dev/tcp`.
fn add_flows13(lab: &Lab, port: u16, flows: &[(Vec<Oxm>, Vec<Action>)]) {
    let mut out = Vec::new();
    Hello::baton().encode(Version::V13, Xid(1), &mut out);
    for (i, (fields, actions)) in (2..).zip(flows) {
        encode_flow_mod_apply(&mut out, Xid(i), &FlowModHead::default(), fields, actions);
    }
    encode_barrier(&mut out, Version::V13, Direction::Request, Xid(99));
    // The switch keeps the connection open: read what it sent in 1 s.
    let script =
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}; cat >&3; timeout 1 cat <&3 | od -An -v -tx1");
    let got = lab
        .exec(Cmd::new("bash").args(["-c", script.as_str()]).stdin(out))
        .unwrap()
        .stdout;
    let bytes: Vec<u8> = got
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect();
    // Message types (1.3.5 §7.1): 1 ERROR, 21 BARRIER_REPLY.
    let mut types = Vec::new();
    let mut at = 0;
    while at + 8 <= bytes.len() {
        types.push(bytes[at + 1]);
        at += usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]])).max(8);
    }
    assert!(
        types.contains(&21) && !types.contains(&1),
        "port {port}: the switch sent messages of types {types:?}:\n{got}"
    );
}

/// Output on `port`, the whole frame.
fn output(port: u32) -> Action {
    Action::Output {
        port: PortNo(port),
        max_len: 0xffff,
    }
}

/// PBB between two `baton switch`es (Open vSwitch has no PBB: its
/// `ovs-ofctl` refuses `push_pbb`, checked here): s1 pushes a PBB header
/// with one I-SID on h1's IPv4 and pops s2's, s2 the reverse; ARP crosses
/// untouched. The flows go in with baton's own codec; the pings, and the
/// aggregate counters `ovs-ofctl` reads of the PBB flows on each side,
/// say the frames crossed as PBB both ways.
#[test]
fn pbb_between_two_baton_switches_carries_the_pings() {
    let lab = two_switch_lab(&SwitchOptions::new().veth_only());
    // Open vSwitch cannot take part: push_pbb is not an action it knows.
    lab.ovs().unwrap();
    lab.vsctl([
        "add-br",
        "pbb",
        "--",
        "set",
        "bridge",
        "pbb",
        "datapath_type=netdev",
    ])
    .unwrap();
    let refused = lab
        .ofctl(
            OfVersion::V13,
            ["add-flow", "pbb", "ip,actions=push_pbb:0x88e7,output:1"],
        )
        .unwrap_err();
    assert!(
        refused.message().contains("push_pbb"),
        "Open vSwitch took push_pbb? {refused}"
    );
    let _s1 = baton_switch(&lab, "13", &["--listen", LISTEN]);
    let _s2 = baton_switch_on(&lab, "s2", "0xb2", "13", &["--listen", LISTEN_S2]);
    for (target, port, push, pop) in [
        (TARGET, 6634, ISID_TO_H2, ISID_TO_H1),
        (TARGET_S2, 6635, ISID_TO_H1, ISID_TO_H2),
    ] {
        // On both, port 1 is the host and port 2 the other switch.
        for flow in [
            "in_port=1,arp,actions=output:2",
            "in_port=2,arp,actions=output:1",
        ] {
            lab.ofctl(OfVersion::V13, ["add-flow", target, flow])
                .unwrap();
        }
        add_flows13(
            &lab,
            port,
            &[
                (
                    vec![Oxm::InPort(PortNo(1)), Oxm::EthType(0x0800)],
                    vec![
                        Action::PushPbb(0x88e7),
                        Action::SetField(Oxm::PbbIsid {
                            value: push,
                            mask: None,
                        }),
                        output(2),
                    ],
                ),
                (
                    vec![
                        Oxm::InPort(PortNo(2)),
                        Oxm::EthType(0x88e7),
                        Oxm::PbbIsid {
                            value: pop,
                            mask: None,
                        },
                    ],
                    vec![Action::PopPbb, output(1)],
                ),
            ],
        );
    }

    let count = 5;
    let r = lab.ping("h1", "10.0.0.2", count, 10 * SECOND).unwrap();
    println!("h1 -> h2 over PBB: {r}");
    assert!(r.is_clean(), "h1 -> h2: {r}\n{}", r.output);

    // `dump-flows` cannot print the PBB actions; `dump-aggregate` of the
    // flows that match on 0x88e7 counts the PBB frames each switch
    // received, those on IPv4 the frames it wrapped.
    for target in [TARGET, TARGET_S2] {
        for flow in ["in_port=1,ip", "in_port=2,dl_type=0x88e7"] {
            let agg = lab
                .ofctl(OfVersion::V13, ["dump-aggregate", target, flow])
                .unwrap();
            println!("{target} {flow}: {}", agg.trim());
            let n: u64 = agg
                .split([' ', ','])
                .find_map(|f| f.strip_prefix("packet_count="))
                .unwrap_or_else(|| panic!("no packet_count in `{agg}`"))
                .trim()
                .parse()
                .unwrap();
            assert!(n >= u64::from(count), "{target} {flow}: {agg}");
        }
    }
}
