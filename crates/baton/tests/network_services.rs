//! The network services on real switches: `baton run --apps
//! topology,devices,routing` against Open vSwitch bridges (userspace
//! datapath) and hosts in network namespaces, for OpenFlow 1.0 and 1.3, on
//! a chain of three switches, a ring of four (a loop) and a k=4 fat tree
//! (20 switches, 16 hosts); and the chain and the ring again with `baton
//! switch` (our own software switch, on the same veths) in place of Open
//! vSwitch. What the controller says (its REST API) is checked against what
//! the laboratory built, and the traffic with `ping`.
//!
//! Each test builds its own laboratory (`baton-netlab`): a private
//! namespace with its own loopback, so `127.0.0.1:6653` and `:8080` are the
//! lab's; nothing outlives the test. Run as root (the lab installs Open
//! vSwitch and friends on first use). Times are printed, not asserted
//! (BENCHMARKS.md has the figures).

mod support;

use baton_netlab::{Cmd, OfVersion, Topology};
use std::time::{Duration, Instant, SystemTime};
use support::{Network, SECOND, Switches, discovers_and_delivers, tail};

/// The network services, named.
const SERVICES: Option<&str> = Some("topology,devices,routing");

#[test]
fn a_chain_of_three_openflow_10() {
    discovers_and_delivers(Topology::linear(3), OfVersion::V10, Switches::Ovs, SERVICES);
}

#[test]
fn a_chain_of_three_openflow_13() {
    discovers_and_delivers(Topology::linear(3), OfVersion::V13, Switches::Ovs, SERVICES);
}

#[test]
fn a_fat_tree_k4_openflow_10() {
    discovers_and_delivers(
        Topology::fat_tree(4),
        OfVersion::V10,
        Switches::Ovs,
        SERVICES,
    );
}

#[test]
fn a_fat_tree_k4_openflow_13() {
    discovers_and_delivers(
        Topology::fat_tree(4),
        OfVersion::V13,
        Switches::Ovs,
        SERVICES,
    );
}

/// A ring, run by `baton run`'s default applications: no storm and no
/// duplicate while every pair pings; a cut link is routed around within a
/// bound the test prints, and once restored it is rediscovered and
/// carries traffic again.
fn a_ring_survives_a_cut(version: OfVersion, kind: Switches) {
    let net = discovers_and_delivers(Topology::ring(4), version, kind, None);
    // No storm: with the network idle, a host hears only a few frames
    // (probes sent to host ports are not forwarded, floods are done).
    let before = net.lab.counters("h3", 0).unwrap();
    std::thread::sleep(SECOND);
    let idle = net.lab.counters("h3", 0).unwrap().rx_packets - before.rx_packets;
    assert!(idle < 20, "{idle} frames reached an idle host in 1 s");

    // h1 (on s1) pings h2 (on s2), over the s1-s2 link, the shortest path.
    let h2 = net.topo.hosts[1].ip;
    let s1_s2 = net
        .built()
        .into_iter()
        .find(|&((a, _), (b, _))| (a, b) == (1, 2));
    let ((_, s1_port), _) = s1_s2.expect("the ring has a link s1-s2");
    let link_tx = |net: &Network| net.lab.counters("s1", s1_port).unwrap().tx_packets;
    let stream = net
        .lab
        .ping_stream("h1", h2, Duration::from_millis(20))
        .unwrap();
    stream
        .wait_reply_after(SystemTime::now(), 5 * SECOND)
        .unwrap();
    let on_link = link_tx(&net);
    std::thread::sleep(Duration::from_millis(300));
    assert!(link_tx(&net) > on_link + 5, "h1 -> h2 uses s1-s2");

    // Cut s1-s2: the long way round (s1-s4-s3-s2) takes over.
    let cut = SystemTime::now();
    net.lab.set_link_down("s1", "s2").unwrap();
    let resumed = stream.wait_reply_after(cut, 10 * SECOND).unwrap();
    let outage = resumed
        .at
        .unwrap()
        .checked_sub(resumed.rtt)
        .unwrap()
        .duration_since(cut)
        .unwrap_or_default();
    eprintln!("{version}: pings resumed {outage:?} after the cut (target: under 1 s)");
    let mut without = net.built();
    without.retain(|&((a, _), (b, _))| (a, b) != (1, 2));
    net.wait_links(&without, 5 * SECOND);
    // Moved onto the long way on 1.3 (OFPFC_MODIFY), deleted on 1.0.
    let (moved, deleted) = (
        net.counter("routing", "flows_moved"),
        net.counter("routing", "flows_deleted"),
    );
    match version {
        OfVersion::V13 => assert!(
            moved > 0 && deleted == 0,
            "moved {moved}, deleted {deleted}"
        ),
        _ => assert!(
            deleted > 0 && moved == 0,
            "moved {moved}, deleted {deleted}"
        ),
    }

    // Restore it: rediscovered, and the short path is used again.
    net.lab.set_link_up("s1", "s2").unwrap();
    let took = net.wait_links(&net.built(), 10 * SECOND);
    eprintln!("{version}: the restored link rediscovered in {took:?}");
    let start = Instant::now();
    loop {
        let before = link_tx(&net);
        std::thread::sleep(Duration::from_millis(300));
        if link_tx(&net) > before + 5 {
            break;
        }
        if start.elapsed() > 10 * SECOND {
            panic!(
                "no traffic back on the restored link after 10 s; s1's flows:\n{:#?}\nhosts: {:?}\nbaton's log:\n{}",
                net.lab.dump_flows("s1", version),
                net.hosts(),
                tail(&net.baton.stderr())
            );
        }
    }
    let report = stream.stop().unwrap();
    assert_eq!(report.duplicates, 0, "{report}");
    net.assert_all_pairs_ping();
}

#[test]
fn a_ring_of_four_openflow_10() {
    a_ring_survives_a_cut(OfVersion::V10, Switches::Ovs);
}

#[test]
fn a_ring_of_four_openflow_13() {
    a_ring_survives_a_cut(OfVersion::V13, Switches::Ovs);
}

#[test]
fn a_chain_of_three_baton_switches_openflow_10() {
    discovers_and_delivers(
        Topology::linear(3),
        OfVersion::V10,
        Switches::Baton,
        SERVICES,
    );
}

#[test]
fn a_chain_of_three_baton_switches_openflow_13() {
    discovers_and_delivers(
        Topology::linear(3),
        OfVersion::V13,
        Switches::Baton,
        SERVICES,
    );
}

#[test]
fn a_ring_of_four_baton_switches_openflow_10() {
    a_ring_survives_a_cut(OfVersion::V10, Switches::Baton);
}

#[test]
fn a_ring_of_four_baton_switches_openflow_13() {
    a_ring_survives_a_cut(OfVersion::V13, Switches::Baton);
}

/// Captures one LLDP frame arriving on a host's interface, as hex.
const CAPTURE_LLDP: &str = r#"
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88CC))
s.bind((sys.argv[1], 0))
s.settimeout(10)
while True:
    frame = s.recv(2048)
    if frame[12:14] == b"\x88\xcc":
        print(frame.hex())
        break
"#;

/// Sends the frame given in hex out of a host's interface.
const SEND_FRAME: &str = r#"
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(bytes.fromhex(sys.argv[2]))
"#;

/// The quick start on Mininet's torus (issue 22): `baton run` with no
/// `--apps`, a 3 x 3 torus of Open vSwitch bridges (every row and column a
/// loop, four links per switch), every pair pings.
#[test]
fn the_default_runs_a_torus_3x3_openflow_13() {
    discovers_and_delivers(Topology::torus(3, 3), OfVersion::V13, Switches::Ovs, None);
}

/// The learning switch alone on a ring (issue 22, §1): a host's broadcast
/// circulates, baton says once per switch that there is a loop and what
/// to run instead, paces the floods, and stays up with every switch
/// connected.
#[test]
fn the_learning_switch_on_a_ring_finds_the_loop_and_keeps_every_switch() {
    let net = Network::start(
        Topology::ring(4),
        OfVersion::V10,
        Switches::Ovs,
        Some("learning-switch"),
    );
    // One ARP request, broadcast round the ring.
    let h3 = net.topo.hosts[2].ip;
    let start = Instant::now();
    let ping = net
        .lab
        .spawn(
            Cmd::new("ping")
                .args(["-c", "1", "-W", "1", &h3.to_string()])
                .host("h1"),
        )
        .unwrap();
    net.baton
        .wait_for_output("loop suspected", 10 * SECOND)
        .unwrap_or_else(|e| panic!("{e}\n{}", tail(&net.baton.stderr())));
    eprintln!("loop found {:?} after one ARP request", start.elapsed());
    drop(ping);
    // Let the storm run against the pacing for a while.
    std::thread::sleep(5 * SECOND);
    let _ = net.lab.ping("h1", h3, 3, 5 * SECOND);
    let log = net.baton.stderr();
    assert!(net.baton.is_running(), "baton exited:\n{}", tail(&log));
    assert_eq!(
        net.api("/api/v1/switches").as_array().map(Vec::len),
        Some(4),
        "{}",
        tail(&log)
    );
    assert!(
        !log.contains("switch disconnected"),
        "a switch was disconnected:\n{}",
        tail(&log)
    );
    assert!(
        log.contains("--apps topology,devices,routing"),
        "{}",
        tail(&log)
    );
    let found = net.counter("learning-switch", "loops_found");
    assert!((1..=4).contains(&found), "loops found: {found}");
    assert!(net.counter("learning-switch", "floods_paced") > 0);
    eprintln!(
        "loop warnings: {}, floods paced: {}",
        log.matches("loop suspected").count(),
        net.counter("learning-switch", "floods_paced")
    );
}

/// A switch that reconnects while its host talks (issue 22, §2): the host
/// stays listed throughout, and the path query answers again once the
/// switch is back.
#[test]
fn a_host_stays_listed_while_its_switch_reconnects_openflow_13() {
    let net = discovers_and_delivers(Topology::linear(3), OfVersion::V13, Switches::Ovs, None);
    let (h1, h3) = (&net.topo.hosts[0], &net.topo.hosts[2]);
    let path = format!("/api/v1/path?src={}&dst={}", h3.mac, h1.mac);
    let stream = net
        .lab
        .ping_stream("h1", h3.ip, Duration::from_millis(100))
        .unwrap();
    stream
        .wait_reply_after(SystemTime::now(), 5 * SECOND)
        .unwrap();
    net.lab
        .vsctl(["--", "clear", "bridge", "s1", "controller"])
        .unwrap();
    let away = Instant::now();
    let mut back = false;
    while away.elapsed() < 6 * SECOND {
        if !back && away.elapsed() > Duration::from_millis(1500) {
            net.lab
                .vsctl(["set-controller", "s1", "tcp:127.0.0.1:6653"])
                .unwrap();
            back = true;
        }
        let hosts = net.hosts();
        assert!(
            hosts.contains_key(&h1.mac.to_string()),
            "h1 vanished {:?} after s1 lost its controller: {hosts:?}\n{}",
            away.elapsed(),
            tail(&net.baton.stderr())
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    net.lab.wait_controller_connections(3, 10 * SECOND).unwrap();
    let took = net.wait_for(5 * SECOND, "path from h3 to h1", |net| {
        net.try_api(&path)
            .is_ok_and(|p| p["hops"].as_array().is_some_and(|h| h.len() == 3))
    });
    eprintln!("the path answered {took:?} after s1 was back");
    let report = stream.stop().unwrap();
    eprintln!("pings while s1 reconnected: {report}");
    net.lab.wait_reachable("h1", h3.ip, 10 * SECOND).unwrap();
}

/// A host whose traffic all goes over routing's flows reaches the
/// controller no more once they are installed. Silent for `host_timeout`
/// (set to its floor, the 10 s refresh), it is asked whether it is still
/// there (an ARP probe); Linux answers, and it stays listed while it
/// talks, where before it aged out and its flows were deleted.
#[test]
fn a_host_talking_over_flows_is_asked_and_stays_listed_openflow_13() {
    let net = discovers_and_delivers(Topology::linear(2), OfVersion::V13, Switches::Ovs, None);
    let (h1, h2) = (&net.topo.hosts[0], &net.topo.hosts[1]);
    let (code, answer) = net.call(
        "PATCH",
        "/api/v1/apps/devices",
        Some(&serde_json::json!({"host_timeout_ms": 10_000})),
    );
    assert_eq!(code, 200, "{answer}");
    let stream = net
        .lab
        .ping_stream("h1", h2.ip, Duration::from_millis(200))
        .unwrap();
    stream
        .wait_reply_after(SystemTime::now(), 5 * SECOND)
        .unwrap();
    // Probed within two refreshes of the last sighting, forgotten a
    // refresh later if mute: 35 s covers both.
    let start = Instant::now();
    while start.elapsed() < 35 * SECOND {
        let hosts = net.hosts();
        for h in [h1, h2] {
            assert!(
                hosts.contains_key(&h.mac.to_string()),
                "{} forgotten {:?} into its pings: {hosts:?}\n{}",
                h.name,
                start.elapsed(),
                tail(&net.baton.stderr())
            );
        }
        std::thread::sleep(SECOND);
    }
    let (probed, aged) = (
        net.counter("devices", "probed"),
        net.counter("devices", "aged"),
    );
    eprintln!("devices: {probed} probes sent, {aged} hosts aged");
    assert!(probed >= 2, "both hosts asked: {probed}");
    assert_eq!(aged, 0);
    let report = stream.stop().unwrap();
    eprintln!("pings while the hosts were asked: {report}");
    assert!(report.received > 0, "{report}");
}

/// Hosts that send LLDP: a real probe (caught on a host port) replayed
/// from another host at once and later, and copies with a wrong
/// authenticator and cut short. No link appears, the topology
/// application's counters say why each was dropped, and every pair still
/// pings.
#[test]
fn forged_lldp_from_hosts_is_dropped_and_counted() {
    let net = discovers_and_delivers(Topology::ring(4), OfVersion::V13, Switches::Ovs, SERVICES);
    let built = net.built();

    // A probe: baton sends one out of h1's port when it comes up.
    let capture = net
        .lab
        .spawn(
            Cmd::new("python3")
                .args(["-c", CAPTURE_LLDP, "h1-eth0"])
                .host("h1"),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    net.lab.set_link_down("h1", "s1").unwrap();
    net.lab.set_link_up("h1", "s1").unwrap();
    let mut capture = capture;
    let out = capture.wait_timeout(15 * SECOND).unwrap();
    let probe = out.stdout.trim().to_string();
    assert!(probe.len() > 60, "no probe caught: {}", out.describe());
    let send = |host: &str, hex: &str| {
        net.lab
            .exec(
                Cmd::new("python3")
                    .args(["-c", SEND_FRAME, &format!("{host}-eth0"), hex])
                    .host(host),
            )
            .unwrap();
    };
    let counters = |net: &Network| {
        [
            "host_port",
            "replayed",
            "bad_authenticator",
            "malformed",
            "links_learnt",
        ]
        .map(|c| net.counter("topology", c))
    };
    let [host_port, replayed, bad_auth, malformed, learnt] = counters(&net);

    // Replayed at once from h2's port: a host port, never a link port.
    send("h2", &probe);
    // Replayed after its age limit (2 s) from h3's port.
    std::thread::sleep(Duration::from_millis(2500));
    send("h3", &probe);
    // A wrong authenticator: the last byte before the end TLV flipped.
    let mut forged = hex_bytes(&probe);
    let end = lldp_end(&forged);
    forged[end - 1] ^= 0xff;
    send("h2", &hex(&forged));
    // Cut short in the middle of a TLV.
    send("h4", &hex(&forged[..end - 8]));

    net.wait_for(5 * SECOND, "every forged frame counted", |net| {
        let [hp, rp, ba, ma, _] = counters(net);
        hp > host_port && rp > replayed && ba > bad_auth && ma > malformed
    });
    let [.., learnt_after] = counters(&net);
    assert_eq!(learnt_after, learnt, "no link learnt from forged frames");
    assert_eq!(net.discovered(), built);
    eprintln!(
        "counters after the forgeries: {}",
        net.api("/api/v1/apps")[0]["counters"]
    );
    net.assert_all_pairs_ping();
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Where the LLDP end TLV (type 0, length 0) starts in `frame`.
fn lldp_end(frame: &[u8]) -> usize {
    let mut at = 14;
    while at + 2 <= frame.len() {
        let head = u16::from_be_bytes([frame[at], frame[at + 1]]);
        if head == 0 {
            return at;
        }
        at += 2 + usize::from(head & 0x1ff);
    }
    panic!("no end TLV in {}", hex(frame));
}
