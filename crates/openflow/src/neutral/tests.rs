//! Each version-neutral encoder's output, decoded by the per-version decoders, is
//! the expected owned message.

use super::*;
use crate::error::{ErrorCode, ErrorKind};
use crate::hello::Hello;
use crate::packet::FlowKey;
use crate::packet::tests::{arp_frame, tcp_frame};
use crate::types::{BufferId, Cookie, MacAddr, PortNo, Xid};
use crate::v10::ofmatch::{
    Match10, OFPFW_ALL, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_IN_PORT, OFPFW_NW_PROTO, OFPFW_TP_DST,
};
use crate::v13::instruction::Instruction;
use crate::v13::oxm::Match13;
use crate::v13::oxm::Oxm;
use crate::version::Version;
use crate::{v10, v13};
use std::net::Ipv4Addr;

fn decode10(b: &[u8]) -> (Xid, v10::Message) {
    v10::decode(b).unwrap()
}

fn decode13(b: &[u8]) -> (Xid, v13::Message) {
    v13::decode(b).unwrap()
}

mod flow_fixed;
mod matching;
mod packet_in;
mod port;

const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 9]);

#[test]
fn any_message_decodes_in_its_own_version() {
    let mut b = Vec::new();
    encode_barrier_request(&mut b, Version::V10, Xid(4));
    assert_eq!(
        Message::decode(&b).unwrap(),
        (Xid(4), Message::V10(v10::Message::BarrierRequest))
    );
    b.clear();
    encode_barrier_request(&mut b, Version::V13, Xid(5));
    let (xid, m) = Message::decode(&b).unwrap();
    assert_eq!((xid, m.version()), (Xid(5), Version::V13));
    let mut again = Vec::new();
    m.encode(xid, &mut again);
    assert_eq!(again, b);
    b[0] = 3;
    assert_eq!(
        Message::decode(&b).unwrap_err().kind(),
        &ErrorKind::BadVersion(3)
    );
    assert!(Message::decode(&[]).is_err());
}

#[test]
fn flow_add_exact_v10() {
    let key = FlowKey::extract(PortNo(3), &tcp_frame());
    let actions = [ActionSpec::output(PortNo(4))];
    let mut flow = FlowSpec::new(MatchSpec::exact(&key), &actions);
    flow.idle_timeout = 5;
    flow.hard_timeout = 30;
    flow.cookie = Cookie(9);
    flow.buffer_id = Some(BufferId(0x42));
    flow.flags = FLOW_SEND_FLOW_REM;
    let mut out = vec![0xaa];
    encode_flow_add(&mut out, Version::V10, Xid(5), &flow);
    let (xid, m) = decode10(&out[1..]);
    assert_eq!(xid, Xid(5));
    assert_eq!(
        m,
        v10::Message::FlowMod(v10::FlowMod {
            match_: Match10::exact(&key),
            cookie: Cookie(9),
            command: v10::FlowModCommand::Add,
            idle_timeout: 5,
            hard_timeout: 30,
            priority: 0x8000,
            buffer_id: BufferId(0x42),
            out_port: PortNo::ANY,
            flags: 1,
            actions: vec![v10::Action::Output {
                port: PortNo(4),
                max_len: 0xffff
            }],
        })
    );
}

#[test]
fn flow_add_exact_v13() {
    let key = FlowKey::extract(PortNo(3), &arp_frame());
    let actions = [ActionSpec::output(PortNo::FLOOD)];
    let flow = FlowSpec {
        priority: 7,
        ..FlowSpec::new(MatchSpec::exact(&key), &actions)
    };
    let mut out = Vec::new();
    encode_flow_add(&mut out, Version::V13, Xid(6), &flow);
    let (xid, m) = decode13(&out);
    assert_eq!(xid, Xid(6));
    let head = v13::FlowModHead {
        priority: 7,
        ..v13::FlowModHead::default()
    };
    let want = v13::FlowMod::from_parts(
        head,
        Match13::exact(&key),
        vec![Instruction::ApplyActions(vec![v13::Action::Output {
            port: PortNo::FLOOD,
            max_len: 0xffff,
        }])],
    );
    assert_eq!(m, v13::Message::FlowMod(want));
    // A drop flow has no instruction.
    let mut out = Vec::new();
    encode_flow_add(
        &mut out,
        Version::V13,
        Xid(6),
        &FlowSpec::new(MatchSpec::all(), &[]),
    );
    let (_, m) = decode13(&out);
    let v13::Message::FlowMod(fm) = m else {
        panic!("{m:?}")
    };
    assert!(fm.instructions.is_empty());
    assert_eq!(fm.match_, Match13::all());
}

#[test]
fn metered_flows_and_meters_in_1_3_and_none_in_1_0() {
    let actions = [ActionSpec::output(PortNo(2))];
    let flow = FlowSpec {
        meter: Some(7),
        ..FlowSpec::new(MatchSpec::all(), &actions)
    };
    let mut out = Vec::new();
    encode_flow_add(&mut out, Version::V13, Xid(1), &flow);
    let (_, m) = decode13(&out);
    let v13::Message::FlowMod(fm) = m else {
        panic!("{m:?}")
    };
    assert_eq!(
        fm.instructions,
        vec![
            Instruction::Meter(7),
            Instruction::ApplyActions(vec![v13::Action::Output {
                port: PortNo(2),
                max_len: 0xffff,
            }])
        ]
    );
    // 1.0 has no meters: the same flow, unmetered.
    let (mut metered, mut plain) = (Vec::new(), Vec::new());
    encode_flow_add(&mut metered, Version::V10, Xid(1), &flow);
    let unmetered = FlowSpec {
        meter: None,
        ..flow
    };
    encode_flow_add(&mut plain, Version::V10, Xid(1), &unmetered);
    assert_eq!(metered, plain);
    // The meter: one drop band at the rate, in kbit/s; deleted by number.
    let mut out = Vec::new();
    encode_meter(&mut out, Version::V13, Xid(2), 7, Some(1500));
    let (_, m) = decode13(&out);
    let v13::Message::MeterMod(mm) = m else {
        panic!("{m:?}")
    };
    assert_eq!(mm.command, v13::MeterModCommand::Add);
    assert_eq!((mm.meter_id, mm.flags), (7, v13::meter::meter_flags::KBPS));
    assert_eq!(
        mm.bands,
        vec![v13::MeterBand::Drop {
            rate: 1500,
            burst_size: 0
        }]
    );
    let mut out = Vec::new();
    encode_meter(&mut out, Version::V13, Xid(3), 7, None);
    let (_, m) = decode13(&out);
    assert!(
        matches!(m, v13::Message::MeterMod(mm) if mm.command == v13::MeterModCommand::Delete && mm.meter_id == 7)
    );
    let mut out = Vec::new();
    encode_meter(&mut out, Version::V10, Xid(3), 7, Some(1));
    assert!(out.is_empty());
}

const ALL_ACTIONS: [ActionSpec; 14] = [
    ActionSpec::Output {
        port: PortNo::CONTROLLER,
        max_len: 128,
    },
    ActionSpec::SetEthSrc(MAC),
    ActionSpec::SetEthDst(MacAddr::BROADCAST),
    ActionSpec::SetVlanVid(0x1123),
    ActionSpec::SetVlanPcp(3),
    ActionSpec::StripVlan,
    ActionSpec::SetIpv4Src(Ipv4Addr::new(1, 2, 3, 4)),
    ActionSpec::SetIpv4Dst(Ipv4Addr::new(5, 6, 7, 8)),
    ActionSpec::SetIpDscp(46),
    ActionSpec::SetTcpSrc(1),
    ActionSpec::SetTcpDst(2),
    ActionSpec::SetUdpSrc(3),
    ActionSpec::SetUdpDst(4),
    ActionSpec::Enqueue {
        port: PortNo(2),
        queue_id: 7,
    },
];

#[test]
fn every_action_v10() {
    use v10::Action as A;
    let mut out = Vec::new();
    encode_packet_out(
        &mut out,
        Version::V10,
        Xid(1),
        &PacketOut {
            payload: Payload::Frame(b"frame"),
            in_port: PortNo::CONTROLLER,
            actions: &ALL_ACTIONS,
        },
    );
    let (_, m) = decode10(&out);
    let want = v10::PacketOut {
        buffer_id: BufferId::NONE,
        in_port: PortNo::CONTROLLER,
        actions: vec![
            A::Output {
                port: PortNo::CONTROLLER,
                max_len: 128,
            },
            A::SetDlSrc(MAC),
            A::SetDlDst(MacAddr::BROADCAST),
            A::SetVlanVid(0x123),
            A::SetVlanPcp(3),
            A::StripVlan,
            A::SetNwSrc(Ipv4Addr::new(1, 2, 3, 4)),
            A::SetNwDst(Ipv4Addr::new(5, 6, 7, 8)),
            A::SetNwTos(46 << 2),
            A::SetTpSrc(1),
            A::SetTpDst(2),
            A::SetTpSrc(3),
            A::SetTpDst(4),
            A::Enqueue {
                port: PortNo(2),
                queue_id: 7,
            },
        ],
        data: b"frame".to_vec(),
    };
    assert_eq!(m, v10::Message::PacketOut(want));
}

#[test]
fn every_action_v13_through_the_heap_fallback() {
    use v13::Action as A;
    let set = A::SetField;
    let want_actions = vec![
        A::Output {
            port: PortNo::CONTROLLER,
            max_len: 128,
        },
        set(Oxm::EthSrc {
            value: MAC,
            mask: None,
        }),
        set(Oxm::EthDst {
            value: MacAddr::BROADCAST,
            mask: None,
        }),
        set(Oxm::VlanVid {
            value: 0x1123,
            mask: None,
        }),
        set(Oxm::VlanPcp(3)),
        A::PopVlan,
        set(Oxm::Ipv4Src {
            value: Ipv4Addr::new(1, 2, 3, 4),
            mask: None,
        }),
        set(Oxm::Ipv4Dst {
            value: Ipv4Addr::new(5, 6, 7, 8),
            mask: None,
        }),
        set(Oxm::IpDscp(46)),
        set(Oxm::TcpSrc(1)),
        set(Oxm::TcpDst(2)),
        set(Oxm::UdpSrc(3)),
        set(Oxm::UdpDst(4)),
        A::SetQueue(7),
        A::Output {
            port: PortNo(2),
            max_len: 0,
        },
    ];
    // More actions than fit in a cache line of converted actions.
    assert!(want_actions.len() > 8);
    let mut out = Vec::new();
    encode_packet_out(
        &mut out,
        Version::V13,
        Xid(1),
        &PacketOut {
            payload: Payload::Buffered(BufferId(5)),
            in_port: PortNo(1),
            actions: &ALL_ACTIONS,
        },
    );
    let (_, m) = decode13(&out);
    let want = v13::PacketOut {
        buffer_id: BufferId(5),
        in_port: PortNo(1),
        actions: want_actions.clone(),
        data: vec![],
    };
    assert_eq!(m, v13::Message::PacketOut(want));
    // The same list split to fit the stack buffer gives the same actions.
    for chunk in ALL_ACTIONS.chunks(4) {
        let mut out = Vec::new();
        let po = PacketOut {
            payload: Payload::Frame(&[]),
            in_port: PortNo(1),
            actions: chunk,
        };
        encode_packet_out(&mut out, Version::V13, Xid(1), &po);
        let (_, m) = decode13(&out);
        let v13::Message::PacketOut(po) = m else {
            panic!("{m:?}")
        };
        let mut want = Vec::new();
        chunk.iter().for_each(|a| a.for_each_v13(|x| want.push(x)));
        assert_eq!(po.actions, want);
    }
}

#[test]
fn flow_delete_both_versions() {
    let mf = MatchFields {
        eth_dst: Some(MAC),
        ..MatchFields::ANY
    };
    let mut out = Vec::new();
    encode_flow_delete(
        &mut out,
        Version::V10,
        Xid(2),
        &MatchSpec::Fields(mf),
        PortNo(6),
    );
    let (_, m) = decode10(&out);
    let v10::Message::FlowMod(fm) = m else {
        panic!("{m:?}")
    };
    assert_eq!(fm.command, v10::FlowModCommand::Delete);
    assert_eq!(fm.out_port, PortNo(6));
    assert_eq!(
        fm.match_.wildcards,
        OFPFW_ALL & !crate::v10::ofmatch::OFPFW_DL_DST
    );
    assert!(fm.actions.is_empty());

    let mut out = Vec::new();
    encode_flow_delete(
        &mut out,
        Version::V13,
        Xid(2),
        &MatchSpec::Fields(mf),
        PortNo::ANY,
    );
    let (_, m) = decode13(&out);
    let v13::Message::FlowMod(fm) = m else {
        panic!("{m:?}")
    };
    assert_eq!(fm.command, v13::FlowModCommand::Delete);
    assert_eq!(fm.table_id, 0xff);
    assert_eq!(fm.out_port, PortNo::ANY);
    assert_eq!(
        fm.match_.fields,
        vec![Oxm::EthDst {
            value: MAC,
            mask: None
        }]
    );
    assert!(fm.instructions.is_empty());
}

#[test]
fn table_miss() {
    let mut out = Vec::new();
    encode_table_miss(&mut out, Xid(3));
    let (_, m) = decode13(&out);
    let head = v13::FlowModHead {
        priority: 0,
        ..v13::FlowModHead::default()
    };
    let want = v13::FlowMod::from_parts(
        head,
        Match13::all(),
        vec![Instruction::ApplyActions(vec![v13::Action::Output {
            port: PortNo::CONTROLLER,
            max_len: 0xffff,
        }])],
    );
    assert_eq!(m, v13::Message::FlowMod(want));
    // The bytes OVS expects: 8 header + 40 fixed + 8 empty match + 8
    // instruction header + 16 output action.
    assert_eq!(out.len(), 80);
}

#[test]
fn small_messages() {
    for v in [Version::V10, Version::V13] {
        let mut out = Vec::new();
        encode_echo_reply(&mut out, v, Xid(9), b"abc");
        let at = out.len();
        encode_barrier_request(&mut out, v, Xid(10));
        let at2 = out.len();
        encode_features_request(&mut out, v, Xid(11));
        let at3 = out.len();
        encode_set_config(&mut out, v, Xid(12), 128);
        let at4 = out.len();
        encode_hello(&mut out, v, Xid(13));
        assert_eq!(out[0], v.wire());
        match v {
            Version::V10 => {
                assert_eq!(
                    decode10(&out[..at]),
                    (Xid(9), v10::Message::EchoReply(b"abc".to_vec()))
                );
                assert_eq!(
                    decode10(&out[at..at2]),
                    (Xid(10), v10::Message::BarrierRequest)
                );
                assert_eq!(
                    decode10(&out[at2..at3]),
                    (Xid(11), v10::Message::FeaturesRequest)
                );
                assert_eq!(
                    decode10(&out[at3..at4]),
                    (
                        Xid(12),
                        v10::Message::SetConfig(v10::SwitchConfig {
                            flags: 0,
                            miss_send_len: 128
                        })
                    )
                );
                assert_eq!(
                    decode10(&out[at4..]),
                    (Xid(13), v10::Message::Hello(Hello::baton()))
                );
            }
            Version::V13 => {
                assert_eq!(
                    decode13(&out[..at]),
                    (Xid(9), v13::Message::EchoReply(b"abc".to_vec()))
                );
                assert_eq!(
                    decode13(&out[at..at2]),
                    (Xid(10), v13::Message::BarrierRequest)
                );
                assert_eq!(
                    decode13(&out[at2..at3]),
                    (Xid(11), v13::Message::FeaturesRequest)
                );
                assert_eq!(
                    decode13(&out[at3..at4]),
                    (
                        Xid(12),
                        v13::Message::SetConfig(v13::SwitchConfig {
                            flags: 0,
                            miss_send_len: 128
                        })
                    )
                );
                assert_eq!(
                    decode13(&out[at4..]),
                    (Xid(13), v13::Message::Hello(Hello::baton()))
                );
            }
        }
    }
}

#[test]
fn echo_request_and_error() {
    let mut out = Vec::new();
    encode_echo_request(&mut out, Version::V10, Xid(1), b"hi");
    assert_eq!(
        decode10(&out),
        (Xid(1), v10::Message::EchoRequest(b"hi".to_vec()))
    );
    let mut out = Vec::new();
    encode_echo_request(&mut out, Version::V13, Xid(1), b"hi");
    assert_eq!(
        decode13(&out),
        (Xid(1), v13::Message::EchoRequest(b"hi".to_vec()))
    );

    let mut out = Vec::new();
    encode_error(&mut out, Version::V10, Xid(4), ErrorCode::new(1, 6), b"bad");
    assert_eq!(
        decode10(&out),
        (
            Xid(4),
            v10::Message::Error(v10::ErrorMsg {
                error_type: 1,
                code: 6,
                data: b"bad".to_vec()
            })
        )
    );
    let mut out = Vec::new();
    encode_error(
        &mut out,
        Version::V13,
        Xid(4),
        ErrorCode::new(4, 10),
        b"bad",
    );
    assert_eq!(
        decode13(&out),
        (
            Xid(4),
            v13::Message::Error(v13::ErrorMsg::Standard {
                error_type: v13::ErrorType::from(4u16),
                code: 10,
                data: b"bad".to_vec()
            })
        )
    );
    // Oversized data is cut to fit the length field.
    let mut out = Vec::new();
    encode_error(
        &mut out,
        Version::V13,
        Xid(4),
        ErrorCode::new(1, 6),
        &[0; 70000],
    );
    assert_eq!(out.len(), 0xffff);
    assert!(v13::decode(&out).is_ok());
}

#[test]
fn flow_delete_by_cookie_v13() {
    let mut out = Vec::new();
    encode_flow_delete_by_cookie(&mut out, Xid(3), Cookie(0xabcd << 48), 0xffff << 48);
    match decode13(&out) {
        (Xid(3), v13::Message::FlowMod(f)) => {
            assert_eq!(f.command, v13::FlowModCommand::Delete);
            assert_eq!(
                (f.cookie, f.cookie_mask),
                (Cookie(0xabcd << 48), 0xffff << 48)
            );
            assert_eq!(f.table_id, v13::messages::table_id::ALL);
            assert!(f.match_.fields.is_empty() && f.instructions.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn flow_modify_v13_selects_by_match_and_cookie_in_table_0() {
    let to_mac = MatchSpec::Fields(MatchFields {
        eth_dst: Some(MAC),
        ..MatchFields::ANY
    });
    let mut out = Vec::new();
    let tag = (Cookie(0xabcd << 48), 0xffff << 48);
    encode_flow_modify13(
        &mut out,
        Xid(4),
        &to_mac,
        tag,
        &[ActionSpec::output(PortNo(3))],
    );
    let (Xid(4), v13::Message::FlowMod(f)) = decode13(&out) else {
        panic!("{out:?}")
    };
    assert_eq!(f.command, v13::FlowModCommand::Modify);
    assert_eq!((f.cookie, f.cookie_mask), tag);
    assert_eq!(f.table_id, 0);
    assert_eq!(
        f.match_.fields,
        vec![Oxm::EthDst {
            value: MAC,
            mask: None
        }]
    );
    assert_eq!(
        f.instructions,
        vec![Instruction::ApplyActions(vec![v13::Action::Output {
            port: PortNo(3),
            max_len: 0xffff,
        }])]
    );
}

#[test]
fn output_lists_inline_and_past_the_stack_buffer_in_both_versions() {
    let key = FlowKey::extract(PortNo(3), &arp_frame());
    for n in [1u32, 2, 4, 5, 9] {
        let actions: Vec<ActionSpec> = (1..=n).map(|p| ActionSpec::output(PortNo(p))).collect();
        let flow = FlowSpec::new(MatchSpec::exact(&key), &actions);
        let mut out = Vec::new();
        encode_flow_add(&mut out, Version::V13, Xid(6), &flow);
        let (_, m) = decode13(&out);
        let v13::Message::FlowMod(fm) = m else {
            panic!("{m:?}")
        };
        let want: Vec<v13::Action> = (1..=n)
            .map(|p| v13::Action::Output {
                port: PortNo(p),
                max_len: 0xffff,
            })
            .collect();
        assert_eq!(
            fm.instructions,
            vec![Instruction::ApplyActions(want)],
            "{n}"
        );
        let mut out = Vec::new();
        encode_flow_add(&mut out, Version::V10, Xid(6), &flow);
        let (_, m) = decode10(&out);
        let v10::Message::FlowMod(fm) = m else {
            panic!("{m:?}")
        };
        let want: Vec<v10::Action> = (1..=n)
            .map(|p| v10::Action::Output {
                port: PortNo(p),
                max_len: 0xffff,
            })
            .collect();
        assert_eq!(fm.actions, want, "{n}");
    }
}
