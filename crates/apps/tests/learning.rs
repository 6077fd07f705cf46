//! The learning switches and the hub in the test harness (no sockets):
//! what each switch is told to do with each packet, in both OpenFlow
//! versions.

use baton_apps::{GlobalLearningSwitch, Hub, LearningConfig, LearningSwitch};
use baton_openflow::neutral::Message;
use baton_openflow::{BufferId, MacAddr, PortNo, Version, v10, v13};
use baton_runtime::testing::{Harness, PacketInSpec};
use baton_runtime::{AnyApp, SwitchId};
use std::sync::Arc;

const BOTH: [Version; 2] = [Version::V10, Version::V13];

fn mac(n: u8) -> [u8; 6] {
    [0, 0, 0, 0, 0, n]
}

/// An Ethernet/IPv4/TCP frame from `src` to `dst`.
fn tcp_frame(src: [u8; 6], dst: [u8; 6]) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(src, dst)
        .ipv4([10, 0, 0, src[5]], [10, 0, 0, dst[5]], 64)
        .tcp(1234, 80, 1, 1024);
    let mut v = Vec::new();
    b.write(&mut v, &[]).unwrap();
    v
}

/// What the controller told the switch to do, in version-neutral terms.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Told {
    /// A PACKET_OUT of `buffer` (or of a carried frame, for
    /// `BufferId::NONE`) out of `ports` (no ports: dropped).
    PacketOut {
        buffer: BufferId,
        ports: Vec<PortNo>,
    },
    /// A FLOW_MOD adding an exact flow for frames to `eth_dst` arriving on
    /// `in_port`, out of `ports` (none: a drop flow), applied to `buffer`.
    Flow {
        in_port: PortNo,
        eth_dst: MacAddr,
        ports: Vec<PortNo>,
        buffer: BufferId,
        hard_timeout: u16,
    },
}

fn told(msgs: Vec<Message>) -> Vec<Told> {
    msgs.into_iter()
        .map(|m| match m {
            Message::V10(v10::Message::PacketOut(p)) => Told::PacketOut {
                buffer: p.buffer_id,
                ports: outputs10(&p.actions),
            },
            Message::V13(v13::Message::PacketOut(p)) => Told::PacketOut {
                buffer: p.buffer_id,
                ports: outputs13(&p.actions),
            },
            Message::V10(v10::Message::FlowMod(f)) => Told::Flow {
                in_port: f.match_.in_port,
                eth_dst: f.match_.dl_dst,
                ports: outputs10(&f.actions),
                buffer: f.buffer_id,
                hard_timeout: f.hard_timeout,
            },
            Message::V13(v13::Message::FlowMod(f)) => {
                let in_port = f.match_.fields.iter().find_map(|o| match o {
                    v13::Oxm::InPort(p) => Some(*p),
                    _ => None,
                });
                let eth_dst = f.match_.fields.iter().find_map(|o| match o {
                    v13::Oxm::EthDst { value, mask: None } => Some(*value),
                    _ => None,
                });
                let ports = f
                    .instructions
                    .iter()
                    .flat_map(|i| match i {
                        v13::Instruction::ApplyActions(a) => outputs13(a),
                        _ => Vec::new(),
                    })
                    .collect();
                Told::Flow {
                    in_port: in_port.expect("an exact match has IN_PORT"),
                    eth_dst: eth_dst.expect("an exact match has ETH_DST"),
                    ports,
                    buffer: f.buffer_id,
                    hard_timeout: f.hard_timeout,
                }
            }
            other => panic!("unexpected message {other:?}"),
        })
        .collect()
}

fn outputs10(actions: &[v10::Action]) -> Vec<PortNo> {
    actions
        .iter()
        .filter_map(|a| match a {
            v10::Action::Output { port, .. } => Some(*port),
            _ => None,
        })
        .collect()
}

fn outputs13(actions: &[v13::Action]) -> Vec<PortNo> {
    actions
        .iter()
        .filter_map(|a| match a {
            v13::Action::Output { port, .. } => Some(*port),
            _ => None,
        })
        .collect()
}

fn flood(buffer: BufferId) -> Told {
    Told::PacketOut {
        buffer,
        ports: vec![PortNo::FLOOD],
    }
}

fn flow(in_port: u32, dst: u8, port: Option<u32>, buffer: BufferId, hard_timeout: u16) -> Told {
    Told::Flow {
        in_port: PortNo(in_port),
        eth_dst: MacAddr(mac(dst)),
        ports: port.map(PortNo).into_iter().collect(),
        buffer,
        hard_timeout,
    }
}

fn learning() -> AnyApp {
    AnyApp::new(LearningSwitch::new(LearningConfig::default()))
}

fn global() -> AnyApp {
    AnyApp::new(GlobalLearningSwitch::new(LearningConfig::default()))
}

#[test]
fn floods_the_unknown_then_installs_flows_to_learnt_hosts() {
    for make in [learning, global] {
        for version in BOTH {
            let mut h = Harness::new(vec![make()]);
            let sw = h.connect(5, version);
            // h1 (port 1) -> h2: unknown, flooded.
            let b1 = h.packet_in(sw, 1, &tcp_frame(mac(1), mac(2)));
            assert_eq!(told(h.sent(sw)), vec![flood(b1)], "{version}");
            // h2 (port 2) -> h1: h1 was learnt on port 1: a flow, using the
            // buffer.
            let b2 = h.packet_in(sw, 2, &tcp_frame(mac(2), mac(1)));
            assert_eq!(
                told(h.sent(sw)),
                vec![flow(2, 1, Some(1), b2, 0)],
                "{version}"
            );
            // Unbuffered h1 -> h2: a flow to port 2, and the packet itself
            // goes along with a PACKET_OUT.
            h.packet_in_unbuffered(sw, 1, &tcp_frame(mac(1), mac(2)));
            assert_eq!(
                told(h.sent(sw)),
                vec![
                    flow(1, 2, Some(2), BufferId::NONE, 0),
                    Told::PacketOut {
                        buffer: BufferId::NONE,
                        ports: vec![PortNo(2)]
                    }
                ],
                "{version}"
            );
        }
    }
}

/// Regression: a packet whose destination was learnt on its own input
/// port got no answer, so the switch held its buffer until it timed out
/// and every later packet of the flow came back as another PACKET_IN.
#[test]
fn a_destination_behind_the_input_port_gets_a_short_drop_flow_with_the_buffer() {
    for make in [learning, global] {
        for version in BOTH {
            let mut h = Harness::new(vec![make()]);
            let sw = h.connect(5, version);
            h.packet_in(sw, 1, &tcp_frame(mac(1), mac(9)));
            h.packet_in(sw, 1, &tcp_frame(mac(2), mac(9)));
            h.sent(sw);
            // h2 and h1 are both behind port 1 (a hub, say).
            let b = h.packet_in(sw, 1, &tcp_frame(mac(2), mac(1)));
            let drop_timeout = LearningConfig::default().drop_timeout;
            assert_eq!(
                told(h.sent(sw)),
                vec![flow(1, 1, None, b, drop_timeout)],
                "{version}"
            );
        }
    }
}

/// Settings changed while the application runs apply to the next packet;
/// a bad change names the key and changes nothing.
#[test]
fn settings_change_while_it_runs() {
    for make in [learning, global] {
        let app = make();
        let mut h = Harness::new(vec![app.clone()]);
        let sw = h.connect(5, Version::V13);
        assert_eq!(app.settings()["drop_timeout"], 5);
        app.configure(&serde_json::json!({"drop_timeout": 2, "idle_timeout": 30}))
            .unwrap();
        let e = app
            .configure(&serde_json::json!({"drop_timeout": 0}))
            .unwrap_err();
        assert_eq!(e.key(), Some("drop_timeout"), "{e}");
        let e = app
            .configure(&serde_json::json!({"priority": "high"}))
            .unwrap_err();
        assert_eq!(e.key(), Some("priority"), "{e}");
        assert_eq!(app.settings()["drop_timeout"], 2);
        assert_eq!(app.settings()["idle_timeout"], 30);
        h.packet_in(sw, 1, &tcp_frame(mac(1), mac(9)));
        h.sent(sw);
        let b = h.packet_in(sw, 1, &tcp_frame(mac(2), mac(1)));
        assert_eq!(told(h.sent(sw)), vec![flow(1, 1, None, b, 2)]);
    }
}

#[test]
fn every_packet_in_gets_exactly_one_answer() {
    for make in [learning, global] {
        for version in BOTH {
            let mut h = Harness::new(vec![make()]);
            let sw = h.connect(5, version);
            // Eight hosts on four ports, talking in a fixed pseudo-random
            // order, buffered and not.
            let mut x: u32 = 7;
            for i in 0..400 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let (src, dst) = ((x % 8) as u8 + 1, ((x >> 8) % 8) as u8 + 1);
                let frame = tcp_frame(mac(src), mac(dst));
                let port = u32::from(src % 4) + 1;
                let buffered = i % 3 != 0;
                h.batch_of(&[(
                    sw,
                    PacketInSpec {
                        in_port: port,
                        buffered,
                        frame: &frame,
                    },
                )]);
                let answers = told(h.sent(sw));
                // One FLOW_MOD or PACKET_OUT; an unbuffered packet sent
                // along a new (non-drop) flow adds its PACKET_OUT.
                let forwarded_unbuffered = matches!(
                    answers.first(),
                    Some(Told::Flow { ports, .. }) if !ports.is_empty() && !buffered
                );
                let want = if forwarded_unbuffered { 2 } else { 1 };
                assert_eq!(answers.len(), want, "{version} #{i}: {answers:?}");
            }
        }
    }
}

#[test]
fn broadcasts_are_flooded_and_multicast_sources_are_not_learnt() {
    for version in BOTH {
        let mut h = Harness::new(vec![learning()]);
        let sw = h.connect(1, version);
        let bcast = [0xff; 6];
        let b = h.packet_in(sw, 1, &tcp_frame(mac(1), bcast));
        assert_eq!(told(h.sent(sw)), vec![flood(b)]);
        // A frame from a multicast address does not teach where it lives.
        let group = [0x01, 0, 0x5e, 0, 0, 1];
        h.packet_in(sw, 3, &tcp_frame(group, mac(1)));
        h.sent(sw);
        let b = h.packet_in(sw, 1, &tcp_frame(mac(1), group));
        assert_eq!(told(h.sent(sw)), vec![flood(b)]);
    }
}

#[test]
fn a_batch_across_switches_answers_each_switch_in_order() {
    let mut h = Harness::new(vec![learning()]);
    let a = h.connect(1, Version::V10);
    let b = h.connect(2, Version::V13);
    let f = |s, d| tcp_frame(mac(s), mac(d));
    let (fa1, fb1, fa2, fb2) = (f(1, 2), f(3, 4), f(2, 1), f(4, 3));
    let spec = |in_port, frame| PacketInSpec {
        in_port,
        buffered: true,
        frame,
    };
    let ids = h.batch_of(&[
        (a, spec(1, &fa1)),
        (b, spec(1, &fb1)),
        (a, spec(2, &fa2)),
        (b, spec(2, &fb2)),
    ]);
    assert_eq!(
        told(h.sent(a)),
        vec![flood(ids[0]), flow(2, 1, Some(1), ids[2], 0)]
    );
    assert_eq!(
        told(h.sent(b)),
        vec![flood(ids[1]), flow(2, 3, Some(1), ids[3], 0)]
    );
}

fn first_flood_port(h: &mut Harness, sw: SwitchId) -> Option<PortNo> {
    match told(h.sent(sw)).first() {
        Some(Told::PacketOut { ports, .. }) => ports.first().copied(),
        _ => None,
    }
}

#[test]
fn local_tables_are_per_switch_and_the_global_table_is_shared() {
    // A host learnt at switch A is unknown to switch B's local table...
    let mut h = Harness::new(vec![learning()]);
    let a = h.connect(1, Version::V10);
    let b = h.connect(2, Version::V10);
    h.packet_in(a, 1, &tcp_frame(mac(1), mac(9)));
    assert_eq!(first_flood_port(&mut h, a), Some(PortNo::FLOOD));
    h.packet_in(b, 4, &tcp_frame(mac(7), mac(1)));
    assert_eq!(first_flood_port(&mut h, b), Some(PortNo::FLOOD));

    // ...while the global table knows it everywhere (and, lacking
    // topology, still floods from a switch where the host is not attached).
    let table = Arc::new(GlobalLearningSwitch::new(LearningConfig::default()));
    let mut h = Harness::new(vec![AnyApp::from(table.clone())]);
    let a = h.connect(1, Version::V10);
    let b = h.connect(2, Version::V10);
    h.packet_in(a, 1, &tcp_frame(mac(1), mac(9)));
    h.sent(a);
    h.packet_in(b, 4, &tcp_frame(mac(7), mac(1)));
    assert_eq!(first_flood_port(&mut h, b), Some(PortNo::FLOOD));
    assert_eq!(
        table.locate(&MacAddr(mac(1))),
        Some((baton_openflow::DatapathId(1), PortNo(1)))
    );
    assert_eq!(table.len(), 2);
    // A switch's hosts are forgotten when it leaves.
    h.disconnect(a);
    assert_eq!(table.locate(&MacAddr(mac(1))), None);
    assert_eq!(table.len(), 1);
}

/// `max_hosts_total` bounds what all switches' tables hold together: they
/// stop growing at it and relearn instead, a switch still forwards to the
/// hosts it learnt since, and a switch that leaves gives its share back.
#[test]
fn the_tables_of_all_switches_together_stay_within_max_hosts_total() {
    // 1,000 hosts: 2,000 slots. Each table starts with 64 and doubles to
    // 512 (1,536 for three), and none can double again within the bound.
    let app = Arc::new(LearningSwitch::new(LearningConfig {
        max_hosts_total: 1_000,
        ..LearningConfig::default()
    }));
    let mut h = Harness::new(vec![AnyApp::from(app.clone())]);
    let switches: Vec<SwitchId> = (1..=3).map(|d| h.connect(d, Version::V10)).collect();
    assert_eq!(app.host_slots(), 3 * 64);
    let host = |n: u16| {
        let [hi, lo] = n.to_be_bytes();
        [2, 0, 0, 0, hi, lo]
    };
    for n in 0..3_000u16 {
        for &sw in &switches {
            h.packet_in(sw, 1, &tcp_frame(host(n), mac(255)));
            h.sent(sw);
        }
        assert!(app.host_slots() <= 2_000, "{} slots", app.host_slots());
    }
    assert_eq!(app.host_slots(), 3 * 512);
    // The last host each switch learnt is known: a flow to it, no flood.
    for &sw in &switches {
        let b = h.packet_in(sw, 2, &tcp_frame(mac(7), host(2_999)));
        let to_last = Told::Flow {
            in_port: PortNo(2),
            eth_dst: MacAddr(host(2_999)),
            ports: vec![PortNo(1)],
            buffer: b,
            hard_timeout: 0,
        };
        assert_eq!(told(h.sent(sw)), vec![to_last]);
    }
    h.disconnect(switches[0]);
    assert_eq!(app.host_slots(), 2 * 512);
}

#[test]
fn the_hub_floods_everything() {
    for version in BOTH {
        let mut h = Harness::new(vec![AnyApp::new(Hub)]);
        let sw = h.connect(1, version);
        let b = h.packet_in(sw, 2, &tcp_frame(mac(1), mac(2)));
        h.packet_in_unbuffered(sw, 3, &tcp_frame(mac(2), mac(1)));
        assert_eq!(
            told(h.sent(sw)),
            vec![flood(b), flood(BufferId::NONE)],
            "{version}"
        );
    }
}

/// A loop's signature: copies of one host's broadcast coming back to a
/// switch on two ports in turn, a millisecond apart. The learning switch
/// finds the loop once, answers every copy, and floods at most the loop
/// guard's bucket plus its refill, dropping the rest; another switch with
/// no loop floods as before (issue 22, §1).
#[test]
fn a_loop_is_found_once_and_its_floods_are_paced_on_that_switch_alone() {
    let cfg = LearningConfig::default();
    storm_on_one_switch(|| Arc::new(LearningSwitch::new(cfg)));
    storm_on_one_switch(|| Arc::new(GlobalLearningSwitch::new(cfg)));
}

fn storm_on_one_switch<A: baton_runtime::App>(make: impl Fn() -> Arc<A>) {
    use baton_apps::loop_guard::{FLOODS_PER_SECOND, MOVES_FOR_LOOP};
    use std::time::Duration;
    for version in BOTH {
        let app = make();
        let mut h = Harness::new(vec![AnyApp::from(app.clone())]);
        let looped = h.connect(5, version);
        let calm = h.connect(6, version);
        let storm = 400;
        let (mut floods, mut drops) = (0, 0);
        for i in 0..storm {
            let port = 2 + i % 2;
            let b = h.packet_in(looped, port, &tcp_frame(mac(1), [0xff; 6]));
            for t in told(h.sent(looped)) {
                match t {
                    Told::PacketOut { buffer, ports } if buffer == b => {
                        if ports == [PortNo::FLOOD] {
                            floods += 1;
                        } else {
                            assert!(ports.is_empty(), "{version}: {ports:?}");
                            drops += 1;
                        }
                    }
                    other => panic!("{version}: {other:?}"),
                }
            }
            h.advance(Duration::from_millis(1));
        }
        assert_eq!(floods + drops, storm, "{version}: every copy answered");
        // Floods until the loop is found, the bucket, and its refill over
        // the storm's 0.4 s.
        let most = MOVES_FOR_LOOP + 1 + FLOODS_PER_SECOND + FLOODS_PER_SECOND * 2 / 5 + 1;
        assert!(floods <= most, "{version}: {floods} floods");
        assert!(drops >= storm - most, "{version}: {drops} drops");
        let counters = app.counters();
        assert!(
            counters.contains(&("loops_found", 1)),
            "{version}: {counters:?}"
        );
        assert!(
            counters.contains(&("floods_paced", u64::from(drops))),
            "{version}"
        );
        // The other switch floods every unknown destination.
        for i in 0..200u8 {
            let b = h.packet_in(calm, 1, &tcp_frame(mac(1), mac(100 + i % 50)));
            assert_eq!(told(h.sent(calm)), vec![flood(b)], "{version}: {i}");
        }
    }
}

/// The fields a FLOW_MOD matches, by 1.3 OXM name or 1.0 field name
/// (those not wildcarded), sorted.
fn matched(msgs: &[Message]) -> Vec<&'static str> {
    use v10::ofmatch::*;
    let mut names = Vec::new();
    for m in msgs {
        match m {
            Message::V10(v10::Message::FlowMod(f)) => {
                let w = f.match_.wildcards;
                for (bit, name) in [
                    (OFPFW_IN_PORT, "in_port"),
                    (OFPFW_DL_SRC, "eth_src"),
                    (OFPFW_DL_DST, "eth_dst"),
                    (OFPFW_DL_VLAN, "vlan"),
                    (OFPFW_DL_VLAN_PCP, "vlan_pcp"),
                    (OFPFW_DL_TYPE, "eth_type"),
                    (OFPFW_NW_TOS, "ip_dscp"),
                    (OFPFW_NW_PROTO, "ip_proto"),
                    (OFPFW_TP_SRC, "tp_src"),
                    (OFPFW_TP_DST, "tp_dst"),
                ] {
                    if w & bit == 0 {
                        names.push(name);
                    }
                }
                if f.match_.nw_src_prefix_len() > 0 {
                    names.push("ipv4_src");
                }
            }
            Message::V13(v13::Message::FlowMod(f)) => {
                for o in &f.match_.fields {
                    names.push(match o {
                        v13::Oxm::InPort(_) => "in_port",
                        v13::Oxm::EthSrc { .. } => "eth_src",
                        v13::Oxm::EthDst { .. } => "eth_dst",
                        v13::Oxm::VlanVid { .. } => "vlan",
                        v13::Oxm::VlanPcp(_) => "vlan_pcp",
                        v13::Oxm::EthType(_) => "eth_type",
                        v13::Oxm::IpDscp(_) => "ip_dscp",
                        v13::Oxm::IpProto(_) => "ip_proto",
                        v13::Oxm::TcpSrc(_) => "tp_src",
                        v13::Oxm::TcpDst(_) => "tp_dst",
                        v13::Oxm::Ipv4Src { .. } => "ipv4_src",
                        _ => "other",
                    });
                }
            }
            _ => {}
        }
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// The VLAN a FLOW_MOD matches: `Some(None)` untagged, `Some(Some(vid))`
/// tagged with `vid`.
fn vlan_matched(msgs: &[Message]) -> Option<Option<u16>> {
    msgs.iter().find_map(|m| match m {
        Message::V10(v10::Message::FlowMod(f)) => {
            Some((f.match_.dl_vlan != 0xffff).then_some(f.match_.dl_vlan))
        }
        Message::V13(v13::Message::FlowMod(f)) => f.match_.fields.iter().find_map(|o| match o {
            v13::Oxm::VlanVid { value, mask: None } => {
                Some((*value != 0).then_some(value & 0x0fff))
            }
            _ => None,
        }),
        _ => None,
    })
}

/// By default the flows match what an L2 device tells apart: the input
/// port, both addresses and the VLAN (untagged, or the tag's id); with
/// `match = "exact"`, every field of the packet, its TCP ports among them.
#[test]
fn the_flows_match_l2_fields_by_default_and_every_field_when_asked() {
    let l2 = ["eth_dst", "eth_src", "in_port", "vlan"];
    for make in [learning, global] {
        for version in BOTH {
            let app = make();
            assert_eq!(app.settings()["match"], "l2");
            let mut h = Harness::new(vec![app.clone()]);
            let sw = h.connect(5, version);
            h.packet_in(sw, 2, &tcp_frame(mac(2), mac(9)));
            h.sent(sw);
            h.packet_in(sw, 1, &tcp_frame(mac(1), mac(2)));
            let sent = h.sent(sw);
            assert_eq!(matched(&sent), l2, "{version}");
            assert_eq!(vlan_matched(&sent), Some(None), "{version}: untagged");

            // A tagged frame: the flow matches its VLAN id.
            let mut tagged = tcp_frame(mac(1), mac(2));
            tagged.splice(12..12, [0x81, 0x00, 0x20, 0x2a]); // PCP 1, VID 42
            h.packet_in(sw, 1, &tagged);
            let sent = h.sent(sw);
            assert_eq!(matched(&sent), l2, "{version}");
            assert_eq!(vlan_matched(&sent), Some(Some(42)), "{version}: tagged");

            app.configure(&serde_json::json!({"match": "exact"}))
                .unwrap();
            h.packet_in(sw, 1, &tcp_frame(mac(1), mac(2)));
            let exact = matched(&h.sent(sw));
            for field in l2
                .iter()
                .chain(&["eth_type", "ip_proto", "tp_src", "tp_dst"])
            {
                assert!(exact.contains(field), "{version}: {field} in {exact:?}");
            }
            let e = app
                .configure(&serde_json::json!({"match": "l3"}))
                .unwrap_err();
            assert_eq!(e.key(), Some("match"), "{e}");
        }
    }
}
