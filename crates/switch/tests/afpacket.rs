//! The AF_PACKET datapath on veth pairs, in a private network namespace
//! that dies with the test: frames sent by one "host" interface cross
//! the switch as its flows say and arrive at the other, and port link
//! state follows the peer.
//!
//! The test re-runs itself under `unshare --net` (root, as the other
//! interoperability tests), so it never touches the machine's network.

use baton_openflow::Version;
use baton_openflow::types::{BufferId, Cookie, PortNo, Xid};
use baton_openflow::v10;
use baton_switch::io::Backend;
use baton_switch::io::afpacket::AfPacket;
use baton_switch::testutil::udp_frame;
use baton_switch::{Config, Connection, Switch};
use std::process::Command;
use std::time::{Duration, Instant};

const INSIDE: &str = "BATON_SWITCH_NETNS_TEST";

fn sh(cmd: &str) {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{cmd} failed");
}

fn inside() {
    sh("ip link set lo up");
    for (h, s) in [("h1", "s1"), ("h2", "s2")] {
        sh(&format!("ip link add {h} type veth peer name {s}"));
        sh(&format!("ip link set {h} up"));
        // No IPv6 chatter (router solicitations) on the test links.
        let _ = Command::new("sysctl")
            .args(["-qw", &format!("net.ipv6.conf.{h}.disable_ipv6=1")])
            .status();
        let _ = Command::new("sysctl")
            .args(["-qw", &format!("net.ipv6.conf.{s}.disable_ipv6=1")])
            .status();
    }
    let mut ports = AfPacket::open(&["s1".into(), "s2".into()]).expect("switch ports");
    let mut hosts = AfPacket::open(&["h1".into(), "h2".into()]).expect("host ports");
    let now = Instant::now();
    let mut sw = Switch::new(Config::new(1, Version::V10), now);
    let specs = ports.port_specs().unwrap();
    assert_eq!(specs[0].name, "s1");
    for s in specs {
        sw.add_port(s, now);
    }
    // A controller installs in_port=1 -> output:2.
    let mut c = Connection::new(&mut sw, now);
    let mut b = Vec::new();
    v10::Message::Hello(Default::default()).encode(Xid(1), &mut b);
    let fm = v10::FlowMod {
        match_: v10::Match10 {
            wildcards: v10::ofmatch::OFPFW_ALL & !v10::ofmatch::OFPFW_IN_PORT,
            in_port: PortNo(1),
            ..v10::Match10::ALL
        },
        cookie: Cookie(0),
        command: v10::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 1,
        buffer_id: BufferId::NONE,
        out_port: PortNo::ANY,
        flags: 0,
        actions: vec![v10::Action::Output {
            port: PortNo(2),
            max_len: 0,
        }],
    };
    v10::Message::FlowMod(fm).encode(Xid(2), &mut b);
    c.handle_input(&mut sw, now, &b, ports.transmit());
    let frame = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 7);
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut sent = 0;
    while got.is_empty() && Instant::now() < deadline {
        if sent < 5 {
            hosts.send_frame(PortNo(1), &frame);
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
        ports.on_readable(0, Instant::now(), &mut sw);
        ports.flush();
        std::thread::sleep(Duration::from_millis(20));
        hosts.recv_frames(PortNo(2), |f| got.push(f.to_vec()));
    }
    assert!(!got.is_empty(), "no frame crossed the switch");
    assert_eq!(got[0], frame);
    let counters = sw.dp.ports.get(PortNo(2)).unwrap().counters;
    assert!(counters.tx_packets >= 1);
    // Frames the kernel drops because the switch fell behind (its RX ring
    // full) count as the port's rx_dropped: 6,000 frames with nobody
    // reading, more than the ring holds.
    ports.update_counters(&mut sw);
    ports.recv_frames(PortNo(1), |_| {});
    let dropped_before = sw.dp.ports.get(PortNo(1)).unwrap().counters.rx_dropped;
    let tx_dropped = hosts.tx_dropped();
    let n = 6000;
    for _ in 0..n {
        hosts.send_frame(PortNo(1), &frame);
    }
    let delivered = n - (hosts.tx_dropped() - tx_dropped);
    let mut seen = 0;
    ports.recv_frames(PortNo(1), |_| seen += 1);
    ports.update_counters(&mut sw);
    let dropped = sw.dp.ports.get(PortNo(1)).unwrap().counters.rx_dropped - dropped_before;
    assert!(
        dropped > 0,
        "{seen} of {delivered} frames read, none dropped"
    );
    assert_eq!(
        seen + dropped,
        delivered,
        "every frame delivered was either read or counted as dropped"
    );
    // Link state follows the peer.
    assert!(ports.links().iter().all(|(_, up)| *up));
    sh("ip link set h2 down");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(ports.links(), [(PortNo(1), true), (PortNo(2), false)]);
}

#[test]
fn frames_cross_the_switch_between_veth_pairs() {
    if std::env::var_os(INSIDE).is_some() {
        inside();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["--net", "--"])
        .arg(exe)
        .args([
            "--exact",
            "frames_cross_the_switch_between_veth_pairs",
            "--nocapture",
        ])
        .env(INSIDE, "1")
        .output()
        .expect("unshare runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "inside the namespace:\n{text}");
    assert!(text.contains("1 passed"), "{text}");
}
