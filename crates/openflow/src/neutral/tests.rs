//! Each version-neutral encoder's output, decoded by the per-version decoders, is
//! the expected owned message.

use super::*;
use crate::packet::tests::{arp_frame, tcp_frame};
use crate::v10::ofmatch::{
    Match10, OFPFW_ALL, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_IN_PORT, OFPFW_NW_DST_MASK,
    OFPFW_NW_PROTO, OFPFW_NW_SRC_MASK, OFPFW_TP_DST,
};
use crate::v13::instruction::Instruction;
use crate::v13::oxm::Match13;

fn decode10(b: &[u8]) -> (Xid, v10::Message) {
    v10::decode(b).unwrap()
}

fn decode13(b: &[u8]) -> (Xid, v13::Message) {
    v13::decode(b).unwrap()
}

const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 9]);

fn packet_in10(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    v10::encode_packet_in(
        &mut out,
        Xid(11),
        BufferId(0x42),
        frame.len() as u16,
        PortNo(3),
        v10::PacketInReason::NoMatch,
        frame,
    );
    out
}

fn packet_in13(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    v13::encode_packet_in(
        &mut out,
        Xid(12),
        BufferId::NONE,
        1500,
        v13::PacketInReason::InvalidTtl,
        2,
        Cookie(77),
        &[Oxm::InPort(PortNo(3))],
        frame,
    );
    out
}

#[test]
fn packet_in_both_versions() {
    let frame = tcp_frame();
    let m = packet_in10(&frame);
    let p = PacketIn::parse(&m).unwrap();
    assert_eq!(p.version(), Version::V10);
    assert_eq!(p.xid(), Xid(11));
    assert_eq!(p.in_port(), PortNo(3));
    assert_eq!(p.buffer_id(), Some(BufferId(0x42)));
    assert_eq!(p.reason(), PacketInReason::NoMatch);
    assert_eq!(p.total_len() as usize, frame.len());
    assert_eq!(p.data(), &frame[..]);
    assert_eq!((p.table_id(), p.cookie()), (None, None));
    assert_eq!(p.key(), FlowKey::extract(PortNo(3), &frame));

    let m = packet_in13(&frame);
    let p = PacketIn::parse(&m).unwrap();
    assert_eq!(p.version(), Version::V13);
    assert_eq!(p.xid(), Xid(12));
    assert_eq!(p.in_port(), PortNo(3));
    assert_eq!(p.buffer_id(), None);
    assert_eq!(p.reason(), PacketInReason::InvalidTtl);
    assert_eq!(p.total_len(), 1500);
    assert_eq!(p.data(), &frame[..]);
    assert_eq!((p.table_id(), p.cookie()), (Some(2), Some(Cookie(77))));
    assert_eq!(p.key(), FlowKey::extract(PortNo(3), &frame));
}

#[test]
fn packet_in_errors() {
    assert!(matches!(
        PacketIn::parse(&[]).unwrap_err().kind(),
        ErrorKind::TooShort { .. }
    ));
    let mut m = packet_in10(&tcp_frame());
    m[0] = 2;
    assert_eq!(
        PacketIn::parse(&m).unwrap_err().kind(),
        &ErrorKind::BadVersion(2)
    );
    // A 1.0 message of another type.
    let mut b = Vec::new();
    encode_barrier_request(&mut b, Version::V10, Xid(1));
    assert!(PacketIn::parse(&b).is_err());
    // Every prefix of a valid message is an error, not a panic.
    for m in [packet_in10(&tcp_frame()), packet_in13(&tcp_frame())] {
        for n in 0..m.len() {
            assert!(PacketIn::parse(&m[..n]).is_err(), "prefix {n}");
        }
    }
}

#[test]
fn packet_in_reasons_map() {
    assert_eq!(
        PacketInReason::from(v10::PacketInReason::Action),
        PacketInReason::Action
    );
    assert_eq!(
        PacketInReason::from(v10::PacketInReason::Unknown(9)),
        PacketInReason::Other(9)
    );
    assert_eq!(
        PacketInReason::from(v13::PacketInReason::Unknown(7)),
        PacketInReason::Other(7)
    );
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
        None,
        PortNo::CONTROLLER,
        &ALL_ACTIONS,
        b"frame",
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
        Some(BufferId(5)),
        PortNo(1),
        &ALL_ACTIONS,
        &[],
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
        encode_packet_out(&mut out, Version::V13, Xid(1), None, PortNo(1), chunk, &[]);
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

fn ip_fields() -> MatchFields {
    MatchFields {
        in_port: Some(PortNo(1)),
        eth_src: Some(MAC),
        eth_dst: None,
        vlan: Some(VlanMatch::Tagged {
            vid: 10,
            pcp: Some(2),
        }),
        net: NetMatch::Ipv4 {
            src: Some(Ipv4Prefix {
                addr: Ipv4Addr::new(10, 1, 2, 3),
                len: 8,
            }),
            dst: Some(Ipv4Prefix::host(Ipv4Addr::new(192, 168, 0, 1))),
            dscp: Some(10),
            l4: L4Match::Tcp {
                src: None,
                dst: Some(22),
            },
        },
    }
}

#[test]
fn match_fields_v10() {
    assert_eq!(MatchSpec::all().to_match10(), Match10::ALL);
    let m = ip_fields().to_match10();
    let expect_wild = crate::v10::ofmatch::OFPFW_DL_DST
        | crate::v10::ofmatch::OFPFW_TP_SRC
        | (24 << crate::v10::ofmatch::OFPFW_NW_SRC_SHIFT);
    assert_eq!(m.wildcards, expect_wild);
    assert_eq!(m.in_port, PortNo(1));
    assert_eq!((m.dl_vlan, m.dl_vlan_pcp), (10, 2));
    assert_eq!(m.dl_type, 0x0800);
    assert_eq!(m.nw_src, Ipv4Addr::new(10, 0, 0, 0));
    assert_eq!(m.nw_dst, Ipv4Addr::new(192, 168, 0, 1));
    assert_eq!((m.nw_tos, m.nw_proto, m.tp_dst), (40, 6, 22));
    assert_eq!(m.wildcards & OFPFW_NW_DST_MASK, 0);

    // ARP: opcode in nw_proto, spa/tpa in nw_src/nw_dst.
    let arp = MatchFields {
        net: NetMatch::Arp {
            op: Some(2),
            spa: None,
            tpa: Some(Ipv4Prefix::host(Ipv4Addr::new(10, 0, 0, 1))),
        },
        vlan: Some(VlanMatch::Untagged),
        ..MatchFields::ANY
    };
    let m = arp.to_match10();
    assert_eq!(m.dl_vlan, 0xffff);
    assert_eq!((m.dl_type, m.nw_proto), (0x0806, 2));
    assert_eq!(m.nw_dst_prefix_len(), 32);
    assert_eq!(m.nw_src_prefix_len(), 0);
    assert_eq!(m.wildcards & (OFPFW_DL_TYPE | OFPFW_NW_PROTO), 0);
    assert_ne!(m.wildcards & OFPFW_NW_SRC_MASK, 0);
    assert_ne!(
        m.wildcards & (OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_TP_DST),
        0
    );
}

#[test]
fn match_fields_v13() {
    let mut oxms = Vec::new();
    ip_fields().for_each_oxm(|o| oxms.push(o));
    assert_eq!(
        oxms,
        vec![
            Oxm::InPort(PortNo(1)),
            Oxm::EthSrc {
                value: MAC,
                mask: None
            },
            Oxm::EthType(0x0800),
            Oxm::VlanVid {
                value: 0x1000 | 10,
                mask: None
            },
            Oxm::VlanPcp(2),
            Oxm::IpDscp(10),
            Oxm::IpProto(6),
            Oxm::Ipv4Src {
                value: Ipv4Addr::new(10, 0, 0, 0),
                mask: Some(Ipv4Addr::new(255, 0, 0, 0))
            },
            Oxm::Ipv4Dst {
                value: Ipv4Addr::new(192, 168, 0, 1),
                mask: None
            },
            Oxm::TcpDst(22),
        ]
    );
    // Through a real FLOW_MOD and the 1.3 decoder.
    let mut out = Vec::new();
    let flow = FlowSpec::new(MatchSpec::Fields(ip_fields()), &[]);
    encode_flow_add(&mut out, Version::V13, Xid(1), &flow);
    let (_, m) = decode13(&out);
    let v13::Message::FlowMod(fm) = m else {
        panic!("{m:?}")
    };
    assert_eq!(fm.match_.fields, oxms);
    // A /0 prefix is no field at all; ICMP type/code.
    let mf = MatchFields {
        net: NetMatch::Ipv4 {
            src: Some(Ipv4Prefix {
                addr: Ipv4Addr::new(1, 1, 1, 1),
                len: 0,
            }),
            dst: None,
            dscp: None,
            l4: L4Match::Icmp {
                icmp_type: Some(8),
                code: None,
            },
        },
        ..MatchFields::ANY
    };
    let mut oxms = Vec::new();
    mf.for_each_oxm(|o| oxms.push(o));
    assert_eq!(
        oxms,
        vec![Oxm::EthType(0x0800), Oxm::IpProto(1), Oxm::Icmpv4Type(8)]
    );
    let m = mf.to_match10();
    assert_eq!((m.nw_proto, m.tp_src), (1, 8));
    assert_eq!(m.nw_src_prefix_len(), 0);
}

#[test]
fn ipv4_prefix() {
    let p = Ipv4Prefix {
        addr: Ipv4Addr::new(10, 1, 2, 3),
        len: 20,
    };
    assert_eq!(p.mask(), Ipv4Addr::new(255, 255, 240, 0));
    assert_eq!(p.network(), Ipv4Addr::new(10, 1, 0, 0));
    let all = Ipv4Prefix { len: 40, ..p };
    assert_eq!(all.mask(), Ipv4Addr::BROADCAST);
    assert_eq!(Ipv4Prefix { len: 0, ..p }.mask(), Ipv4Addr::UNSPECIFIED);
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
