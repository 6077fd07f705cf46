//! Round trips of every non-multipart OpenFlow 1.3 message (1.3.5 §7) and
//! of the structures inside them (OXM, actions, instructions, buckets,
//! meter bands, ports): encode -> decode gives the value back, decode ->
//! encode gives the bytes back, the hot-path views agree with the owned
//! decode, cut or corrupted input is an error and never a panic, and
//! hand-written vectors laid out from the spec decode as expected.
//! (Long by design: one generator per 1.3 message and structure.)

mod strategies_v13;

use baton_openflow::error::ErrorKind;
use baton_openflow::header::Direction;
use baton_openflow::header::MsgType13;
use baton_openflow::types::{BufferId, Cookie, PortNo, Xid};
use baton_openflow::v13::action::{ActionIter, OFPCML_NO_BUFFER, emit_actions};
use baton_openflow::v13::group::{Bucket, parse_buckets};
use baton_openflow::v13::instruction::{Instruction, parse_instructions};
use baton_openflow::v13::meter::{MeterBand, parse_bands};
use baton_openflow::v13::oxm::{Match13, Oxm, OxmIter};
use baton_openflow::v13::port::Port;
use baton_openflow::v13::{
    self, Action, EchoView, FlowModHead, FlowModView, Message, PacketInReason, PacketInView,
    PacketOutView, encode_flow_mod_apply,
};
use baton_openflow::wire::Reader;
use proptest::prelude::*;
use strategies_v13::*;

fn encode(m: &Message, xid: u32) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(Xid(xid), &mut out);
    out
}

/// Sets the header's length field to the buffer's length.
fn fix_len(b: &mut [u8]) {
    if b.len() >= 4 {
        let l = (b.len() as u16).to_be_bytes();
        b[2] = l[0];
        b[3] = l[1];
    }
}

/// Whatever decodes must re-encode to something that decodes to the same
/// value (decode -> encode -> decode is the identity on values).
fn check_stable(bytes: &[u8]) {
    if let Ok((xid, m)) = v13::decode(bytes) {
        let again = encode(&m, xid.0);
        assert_eq!(
            again.len(),
            u16::from_be_bytes([again[2], again[3]]) as usize
        );
        assert_eq!(v13::decode(&again), Ok((xid, m)), "re-encoded {again:02x?}");
    }
}

/// The views agree with the owned decode of the same bytes.
fn check_views(bytes: &[u8], m: &Message) {
    match m {
        Message::PacketIn(p) => {
            let v = PacketInView::new_checked(bytes).unwrap();
            assert_eq!(&v13::PacketIn::parse(&v).unwrap(), p);
            assert_eq!(p.buffer_len(), bytes.len());
            assert_eq!(v.in_port(), p.match_.in_port());
            assert_eq!(v.data(), &p.data[..]);
            let oxms: Vec<Oxm> = v.match_fields().map(|o| o.unwrap().to_oxm()).collect();
            assert_eq!(oxms, p.match_.fields);
        }
        Message::FlowMod(f) => {
            let v = FlowModView::new_checked(bytes).unwrap();
            assert_eq!(&v13::FlowMod::parse(&v).unwrap(), f);
            assert_eq!(f.buffer_len(), bytes.len());
            assert_eq!(v.head(), f.head());
            assert_eq!(v.instructions().count(), f.instructions.len());
        }
        Message::PacketOut(p) => {
            let v = PacketOutView::new_checked(bytes).unwrap();
            assert_eq!(&v13::PacketOut::parse(&v).unwrap(), p);
            assert_eq!(p.buffer_len(), bytes.len());
            assert_eq!(v.in_port(), p.in_port);
            assert_eq!(v.data(), &p.data[..]);
        }
        Message::EchoRequest(d) | Message::EchoReply(d) => {
            let v = EchoView::new_checked(bytes).unwrap();
            assert_eq!(v.payload(), &d[..]);
            let want = if matches!(m, Message::EchoRequest(_)) {
                Direction::Request
            } else {
                Direction::Reply
            };
            assert_eq!(v.direction(), want);
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn messages_round_trip(m in message(), xid in any::<u32>()) {
        let bytes = encode(&m, xid);
        prop_assert_eq!(bytes.len(), u16::from_be_bytes([bytes[2], bytes[3]]) as usize);
        prop_assert_eq!(m.msg_type(), MsgType13::from(bytes[1]));
        let (x, back) = v13::decode(&bytes).unwrap();
        prop_assert_eq!(x, Xid(xid));
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(encode(&back, xid), bytes.clone());
        prop_assert_eq!(m.encoded_len(), bytes.len());
        check_views(&bytes, &m);
    }

    #[test]
    fn truncation_is_an_error_never_a_panic(m in message()) {
        let bytes = encode(&m, 7);
        for n in 0..bytes.len() {
            // Cut without fixing the length: always an error.
            prop_assert!(v13::decode(&bytes[..n]).is_err());
            // Cut with the length fixed: the body parsers see a short body.
            let mut cut = bytes[..n].to_vec();
            fix_len(&mut cut);
            check_stable(&cut);
            let _ = PacketInView::new_checked(&cut);
            let _ = FlowModView::new_checked(&cut);
            let _ = PacketOutView::new_checked(&cut);
            let _ = EchoView::new_checked(&cut);
        }
    }

    #[test]
    fn corrupted_bytes_never_panic(m in message(), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)) {
        let mut bytes = encode(&m, 7);
        for (at, v) in flips {
            // Keep the version and length so the body parsers are reached.
            let i = 8 + at % (bytes.len().saturating_sub(8).max(1));
            if let Some(b) = bytes.get_mut(i) {
                *b = v;
            }
        }
        check_stable(&bytes);
        if let Ok(v) = FlowModView::new_checked(&bytes) {
            for i in v.instructions() {
                let _ = i.and_then(|i| i.to_owned());
            }
        }
        if let Ok(v) = PacketOutView::new_checked(&bytes) {
            let _ = v.actions().count();
        }
    }

    #[test]
    fn random_bodies_never_panic(t in 0u8..32, body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut bytes = vec![4, t, 0, 0, 0, 0, 0, 1];
        bytes.extend(body);
        fix_len(&mut bytes);
        check_stable(&bytes);
    }

    #[test]
    fn oxm_round_trip(o in oxm()) {
        let mut out = Vec::new();
        o.emit(&mut out);
        prop_assert_eq!(out.len(), o.wire_len());
        let mut r = Reader::new(&out);
        prop_assert_eq!(Oxm::parse(&mut r).unwrap(), o.clone());
        prop_assert!(r.is_empty());
        let borrowed: Vec<_> = OxmIter::new(&out, 0).collect();
        prop_assert_eq!(borrowed.len(), 1);
        prop_assert_eq!(borrowed[0].as_ref().unwrap().to_oxm(), o);
    }

    #[test]
    fn match_round_trip(m in match13()) {
        let mut out = Vec::new();
        m.emit(&mut out);
        prop_assert_eq!(out.len(), m.wire_len());
        prop_assert_eq!(out.len() % 8, 0);
        let mut r = Reader::new(&out);
        prop_assert_eq!(Match13::parse(&mut r).unwrap(), m);
        prop_assert!(r.is_empty());
    }

    #[test]
    fn action_round_trip(a in action()) {
        let mut out = Vec::new();
        a.emit(&mut out);
        prop_assert_eq!(out.len(), a.wire_len());
        prop_assert_eq!(out.len() % 8, 0);
        let back: Vec<Action> = ActionIter::new(&out, 0).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back, vec![a]);
    }

    #[test]
    fn instruction_round_trip(i in instruction()) {
        let mut out = Vec::new();
        i.emit(&mut out);
        prop_assert_eq!(out.len(), i.wire_len());
        prop_assert_eq!(out.len() % 8, 0);
        prop_assert_eq!(parse_instructions(&out, 0).unwrap(), vec![i]);
    }

    #[test]
    fn bucket_round_trip(b in bucket()) {
        let mut out = Vec::new();
        b.emit(&mut out);
        prop_assert_eq!(out.len(), b.wire_len());
        prop_assert_eq!(parse_buckets(&out, 0).unwrap(), vec![b]);
    }

    #[test]
    fn meter_band_round_trip(b in meter_band()) {
        let mut out = Vec::new();
        b.emit(&mut out);
        prop_assert_eq!(out.len(), b.wire_len());
        prop_assert_eq!(parse_bands(&out, 0).unwrap(), vec![b]);
    }

    #[test]
    fn port_round_trip(p in port()) {
        let mut out = Vec::new();
        p.emit(&mut out);
        prop_assert_eq!(out.len(), 64);
        prop_assert_eq!(Port::parse(&mut Reader::new(&out)).unwrap(), p);
    }

    #[test]
    fn apply_encoder_matches_owned(head_prio in any::<u16>(), m in match13(), a in actions()) {
        let head = FlowModHead { priority: head_prio, ..FlowModHead::default() };
        let mut out = Vec::new();
        encode_flow_mod_apply(&mut out, Xid(1), &head, &m.fields, &a);
        let (_, back) = v13::decode(&out).unwrap();
        let instructions = if a.is_empty() { vec![] } else { vec![Instruction::ApplyActions(a)] };
        prop_assert_eq!(back, Message::FlowMod(v13::FlowMod::from_parts(head, m, instructions)));
    }
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn features_request_vector() {
    let b = hex("04 05 00 08 00 00 00 02");
    assert_eq!(v13::decode(&b), Ok((Xid(2), Message::FeaturesRequest)));
    assert_eq!(encode(&Message::FeaturesRequest, 2), b);
}

#[test]
fn features_reply_vector() {
    // ofp_switch_features: dpid, n_buffers 256, n_tables 254, aux 0,
    // capabilities FLOW|TABLE|PORT|GROUP|QUEUE stats = 0x4f.
    let b = hex("04 06 00 20 00 00 00 09  00 00 00 00 00 00 00 01
         00 00 01 00 fe 00 00 00  00 00 00 4f 00 00 00 00");
    let (_, m) = v13::decode(&b).unwrap();
    assert_eq!(
        m,
        Message::FeaturesReply(v13::SwitchFeatures {
            datapath_id: baton_openflow::DatapathId(1),
            n_buffers: 256,
            n_tables: 254,
            auxiliary_id: 0,
            capabilities: 0x4f,
        })
    );
    assert_eq!(encode(&m, 9), b);
}

/// A PACKET_IN as Open vSwitch sends it on a table miss: unbuffered, an
/// IN_PORT OXM, then a 14-byte Ethernet header.
fn packet_in_bytes() -> Vec<u8> {
    hex("04 0a 00 38 00 00 00 00
         ff ff ff ff 00 3c 00 00  00 00 00 00 00 00 00 00
         00 01 00 0c 80 00 00 04  00 00 00 01 00 00 00 00
         00 00
         ff ff ff ff ff ff 00 00  00 00 00 01 08 06")
}

#[test]
fn packet_in_vector() {
    let b = packet_in_bytes();
    let v = PacketInView::new_checked(&b).unwrap();
    assert_eq!(v.in_port(), Some(PortNo(1)));
    assert_eq!(v.buffer_id(), BufferId::NONE);
    assert_eq!(v.total_len(), 60);
    assert_eq!(v.reason(), PacketInReason::NoMatch);
    assert_eq!(v.data().len(), 14);
    assert_eq!(&v.data()[12..], &[8, 6]);
    let (_, m) = v13::decode(&b).unwrap();
    let Message::PacketIn(p) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(p.match_.fields, [Oxm::InPort(PortNo(1))]);
    assert_eq!(encode(&m, 0), b);
    let mut out = Vec::new();
    v13::encode_packet_in(
        &mut out,
        Xid(0),
        BufferId::NONE,
        60,
        PacketInReason::NoMatch,
        0,
        Cookie(0),
        &[Oxm::InPort(PortNo(1))],
        v.data(),
    );
    assert_eq!(out, b);
}

/// The table-miss flow entry OVS needs before it sends PACKET_INs:
/// priority 0, empty match, apply-actions output CONTROLLER unbuffered.
fn table_miss_bytes() -> Vec<u8> {
    hex("04 0e 00 50 00 00 00 03
         00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
         00 00 00 00 00 00 00 00  ff ff ff ff ff ff ff ff
         ff ff ff ff 00 00 00 00
         00 01 00 04 00 00 00 00
         00 04 00 18 00 00 00 00
         00 00 00 10 ff ff ff fd  ff ff 00 00 00 00 00 00")
}

#[test]
fn table_miss_flow_mod_vector() {
    let b = table_miss_bytes();
    let (xid, m) = v13::decode(&b).unwrap();
    assert_eq!(xid, Xid(3));
    let head = FlowModHead {
        priority: 0,
        ..FlowModHead::default()
    };
    let out_ctl = Action::Output {
        port: PortNo::CONTROLLER,
        max_len: OFPCML_NO_BUFFER,
    };
    assert_eq!(
        m,
        Message::FlowMod(v13::FlowMod::from_parts(
            head,
            Match13::all(),
            vec![Instruction::ApplyActions(vec![out_ctl.clone()])],
        ))
    );
    assert_eq!(encode(&m, 3), b);
    let mut out = Vec::new();
    encode_flow_mod_apply(&mut out, Xid(3), &head, &[], &[out_ctl]);
    assert_eq!(out, b);
    let v = FlowModView::new_checked(&b).unwrap();
    assert_eq!(v.priority(), 0);
    assert_eq!(v.match_fields().count(), 0);
}

#[test]
fn packet_out_vector() {
    // Unbuffered, in_port CONTROLLER, output to FLOOD, 2 bytes of frame.
    let b = hex("04 0d 00 2a 00 00 00 04
         ff ff ff ff ff ff ff fd  00 10 00 00 00 00 00 00
         00 00 00 10 ff ff ff fb  00 00 00 00 00 00 00 00
         ab cd");
    let v = PacketOutView::new_checked(&b).unwrap();
    assert_eq!(v.in_port(), PortNo::CONTROLLER);
    assert_eq!(v.data(), &[0xab, 0xcd]);
    let actions: Vec<_> = v.actions().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        actions,
        [Action::Output {
            port: PortNo::FLOOD,
            max_len: 0
        }]
    );
    let mut out = Vec::new();
    v13::encode_packet_out(
        &mut out,
        Xid(4),
        BufferId::NONE,
        PortNo::CONTROLLER,
        &actions,
        &[0xab, 0xcd],
    );
    assert_eq!(out, b);
    // actions_len past the end.
    let mut bad = b.clone();
    bad[17] = 0x30;
    assert_eq!(
        PacketOutView::new_checked(&bad).unwrap_err().kind(),
        &ErrorKind::BadLength { claimed: 0x30 }
    );
}

#[test]
fn echo_and_barrier_vectors() {
    let mut out = Vec::new();
    v13::encode_echo_request(&mut out, Xid(5), b"hi");
    assert_eq!(out, hex("04 02 00 0a 00 00 00 05 68 69"));
    let v = EchoView::new_checked(&out).unwrap();
    assert_eq!(v.direction(), Direction::Request);
    assert_eq!(v.xid(), Xid(5));
    out.clear();
    v13::encode_echo_reply(&mut out, Xid(5), b"hi");
    assert_eq!(
        v13::decode(&out),
        Ok((Xid(5), Message::EchoReply(b"hi".to_vec())))
    );
    out.clear();
    v13::encode_barrier_request(&mut out, Xid(6));
    assert_eq!(out, hex("04 14 00 08 00 00 00 06"));
    assert_eq!(v13::decode(&out), Ok((Xid(6), Message::BarrierRequest)));
    // A view of the wrong type.
    assert_eq!(
        PacketInView::new_checked(&out).unwrap_err().kind(),
        &ErrorKind::UnknownType(20)
    );
}

#[test]
fn error_experimenter_and_role_vectors() {
    let b = hex("04 01 00 12 00 00 00 01 ff ff 00 07 00 00 23 20 aa bb");
    assert_eq!(
        v13::decode(&b).unwrap().1,
        Message::Error(v13::ErrorMsg::Experimenter {
            exp_type: 7,
            experimenter: 0x2320,
            data: vec![0xaa, 0xbb],
        })
    );
    let b = hex("04 18 00 18 00 00 00 01 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 05");
    assert_eq!(
        v13::decode(&b).unwrap().1,
        Message::RoleRequest(v13::Role {
            role: v13::ControllerRole::Master,
            generation_id: 5,
        })
    );
}

fn flow_mod_with_match(oxms: &str) -> Vec<u8> {
    let oxms = hex(oxms);
    let mlen = 4 + oxms.len();
    let mut b = hex("04 0e 00 00 00 00 00 01
         00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
         00 00 00 00 00 00 80 00  ff ff ff ff ff ff ff ff
         ff ff ff ff 00 00 00 00");
    b.extend([0, 1, 0, mlen as u8]);
    b.extend(oxms);
    b.resize(b.len() + (8 - mlen % 8) % 8, 0);
    fix_len(&mut b);
    b
}

#[test]
fn bad_matches_give_match_errors() {
    let kind = |b: &[u8]| v13::decode(b).unwrap_err().kind().clone();
    // A good one first.
    let ok = flow_mod_with_match("80 00 0a 02 08 00");
    assert!(v13::decode(&ok).is_ok());
    assert_eq!(
        kind(&flow_mod_with_match("80 00 0a 02 08 00 80 00 0a 02 08 06")),
        ErrorKind::DuplicateOxmField(5)
    );
    assert_eq!(
        kind(&flow_mod_with_match("80 00 0a 03 08 00 00")),
        ErrorKind::BadOxmLength {
            field: 5,
            length: 3
        }
    );
    assert_eq!(
        kind(&flow_mod_with_match("80 00 50 01 00")),
        ErrorKind::BadOxmField {
            class: 0x8000,
            field: 40
        }
    );
    // Match type 0 (OFPMT_STANDARD, gone in 1.3).
    let mut b = ok.clone();
    b[49] = 0;
    assert_eq!(kind(&b), ErrorKind::BadMatchType(0));
    // Match length running past the message.
    let mut b = ok.clone();
    b[51] = 200;
    assert_eq!(kind(&b), ErrorKind::BadMatchLength(200));
    // The same errors map to OFPET_BAD_MATCH codes.
    let e = v13::decode(&flow_mod_with_match("80 00 0a 02 08 00 80 00 0a 02 08 06")).unwrap_err();
    assert_eq!(e.reply(baton_openflow::Version::V13).error_type, 4);
}

#[test]
fn bad_actions_and_instructions() {
    let kind = |b: &[u8]| v13::decode(b).unwrap_err().kind().clone();
    let mut b = table_miss_bytes();
    // Instruction type 9.
    b[57] = 9;
    assert_eq!(kind(&b), ErrorKind::BadInstructionType(9));
    let mut b = table_miss_bytes();
    // Instruction length 20: not a multiple of 8.
    b[59] = 20;
    assert_eq!(kind(&b), ErrorKind::BadInstructionLength(20));
    let mut b = table_miss_bytes();
    // Action type 99.
    b[65] = 99;
    assert_eq!(kind(&b), ErrorKind::BadActionType(99));
    let mut b = table_miss_bytes();
    // Output with length 8.
    b[67] = 8;
    assert!(matches!(kind(&b), ErrorKind::BadActionLength(8)));
}

#[test]
fn empty_structures() {
    // Group and meter mods with nothing after the fixed part; a bucket
    // list and a band list of one each.
    for m in [
        Message::GroupMod(v13::GroupMod {
            command: v13::GroupModCommand::Delete,
            group_type: v13::GroupType::All,
            group_id: 1,
            buckets: vec![Bucket {
                weight: 0,
                watch_port: PortNo::ANY,
                watch_group: u32::MAX,
                actions: vec![],
            }],
        }),
        Message::MeterMod(v13::MeterMod {
            command: v13::MeterModCommand::Add,
            flags: 0,
            meter_id: 1,
            bands: vec![MeterBand::Drop {
                rate: 1,
                burst_size: 0,
            }],
        }),
    ] {
        let b = encode(&m, 1);
        assert_eq!(v13::decode(&b).unwrap().1, m);
    }
    // emit_actions of nothing writes nothing.
    let mut out = Vec::new();
    emit_actions(&mut out, &[]);
    assert!(out.is_empty());
}
/// OpenFlow 1.3 messages encoded by an independent implementation,
/// `ovs-ofctl` 3.1.0 (`--no-names -O OpenFlow13`, talking to a fake
/// switch that recorded the bytes), each with the command that produced
/// it (`add-flow` unless named).
const OVS_OFCTL_VECTORS: &[(&str, &str)] = &[
    (
        "table=0,priority=0,actions=CONTROLLER:65535",
        "040e005000000002000000000000000000000000000000000000000000000000\
         ffffffffffffffffffffffff0000000000010004000000000004001800000000\
         00000010fffffffdffff000000000000",
    ),
    (
        "table=1,cookie=0x99,idle_timeout=5,hard_timeout=50,send_flow_rem,check_overlap,udp,ip_dscp=10,ip_ecn=1,ipv6_label=0x12345,udp_src=53,actions=meter:3,set_field:00:11:22:33:44:55->eth_dst,set_queue:4,output:3,write_actions(output:4),write_metadata:0x10/0xff,goto_table:5",
        "040e00c800000002000000000000009900000000000000000100000500328000\
         ffffffffffffffffffffffff000300000001002780000a020800800010010a80\
         001201018000380400012345800014011180001e020035000006000800000003\
         0004003000000000001900108000060600112233445500000015000800000004\
         0000001000000003000000000000000000030018000000000000001000000004\
         00000000000000000002001800000000000000000000001000000000000000ff\
         0001000805000000",
    ),
    (
        "arp,arp_op=1,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/8,arp_sha=00:00:00:00:00:01,arp_tha=00:00:00:00:00:00/ff:ff:ff:00:00:00,actions=output:CONTROLLER,clear_actions",
        "040e009000000002000000000000000000000000000000000000000000008000\
         ffffffffffffffffffffffff000000000001003e80000a02080680002a020001\
         80002c040a00000180002f080a000000ff000000800030060000000000018000\
         330c000000000000ffffff0000000000000400180000000000000010fffffffd\
         ffff0000000000000005000800000000",
    ),
    (
        "metadata=0x5/0xff,tun_id=0x77/0xff,dl_vlan=10,dl_vlan_pcp=3,eth_type=0x8847,mpls_label=100,mpls_tc=2,mpls_bos=1,actions=pop_mpls:0x0800,dec_ttl,mod_nw_ttl:7,output:1",
        "040e00b000000002000000000000000000000000000000000000000000008000\
         ffffffffffffffffffffffff000000000001004f80000a02884780000c02100a\
         80000e010380004601028000480101800044040000006480004d100000000000\
         00007700000000000000ff80000510000000000000000500000000000000ff00\
         0004003000000000001400080800000000180008000000000017000807000000\
         00000010000000010000000000000000",
    ),
    (
        "in_port=2,dl_src=00:00:00:00:00:01/01:00:00:00:00:00,icmp,icmp_type=8,icmp_code=0,actions=push_mpls:0x8847,set_mpls_ttl:9,dec_mpls_ttl,set_field:50->mpls_label,output:in_port",
        "040e00a800000002000000000000000000000000000000000000000000008000\
         ffffffffffffffffffffffff000000000001003180000004000000028000090c\
         00000000000001000000000080000a0208008000140101800026010880002801\
         000000000000000000040040000000000013000888470000000f000809000000\
         00100008000000000019001080004404000000320000000000000010fffffff8\
         0000000000000000",
    ),
    (
        "icmp6,icmp_type=135,nd_target=2001:db8::2,nd_sll=00:00:00:00:00:09,actions=group:1",
        "040e007800000002000000000000000000000000000000000000000000008000\
         ffffffffffffffffffffffff000000000001003280000a0286dd800014013a80\
         003a018780003e1020010db80000000000000000000000028000400600000000\
         000900000000000000040010000000000016000800000001",
    ),
    (
        "sctp,sctp_src=1,sctp_dst=2,vlan_tci=0x1000/0x1000,actions=set_field:10.0.0.9->ip_dst,set_field:8080->sctp_dst,output:ALL",
        "040e009000000002000000000000000000000000000000000000000000008000\
         ffffffffffffffffffffffff000000000001002380000a02080080000d041000\
         1000800014018480002202000180002402000200000000000004003800000000\
         00190010800018040a0000090000000000190010800024021f90000000000000\
         00000010fffffffc0000000000000000",
    ),
    (
        "dl_vlan=5,actions=pop_vlan,output:3",
        "040e006000000002000000000000000000000000000000000000000000008000\
         ffffffffffffffffffffffff000000000001000a80000c021005000000000000\
         0004002000000000001200080000000000000010000000030000000000000000",
    ),
    (
        "del-flows table=3,cookie=0x5/0xff,out_port=7,tcp",
        "040e004000000002000000000000000500000000000000ff0303000000008000\
         ffffffff00000007ffffffff000000000001000f80000a020800800014010600",
    ),
    (
        "--strict del-flows priority=5,in_port=1",
        "040e00400000000200000000000000000000000000000000ff04000000000005\
         ffffffffffffffffffffffff000000000001000c800000040000000100000000",
    ),
    (
        "mod-flows in_port=1,actions=output:9",
        "040e005800000002000000000000000000000000000000000001000000008000\
         ffffffffffffffffffffffff000000000001000c800000040000000100000000\
         000400180000000000000010000000090000000000000000",
    ),
    (
        "add-group group_id=1,type=select,bucket=weight:10,actions=output:1,bucket=weight:20,actions=set_field:00:00:00:00:00:02->eth_dst,output:2",
        "040f00600000000200000100000000010020000affffffffffffffff00000000\
         0000001000000001000000000000000000300014ffffffffffffffff00000000\
         0019001080000606000000000002000000000010000000020000000000000000",
    ),
    (
        "add-group group_id=2,type=fast_failover,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,watch_group:1,actions=output:2",
        "040f00500000000200000300000000020020000000000001ffffffff00000000\
         0000001000000001000000000000000000200000000000020000000100000000\
         00000010000000020000000000000000",
    ),
    (
        "add-group group_id=3,type=all,bucket=output:1,bucket=output:2",
        "040f005000000002000000000000000300200000ffffffffffffffff00000000\
         0000001000000001000000000000000000200000ffffffffffffffff00000000\
         00000010000000020000000000000000",
    ),
    ("del-groups group_id=3", "040f0010000000020002000000000003"),
    (
        "add-meter meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100",
        "041d0020000000020000000d0000000100010010000003e80000006400000000",
    ),
    (
        "add-meter meter=2,pktps,bands=type=dscp_remark,rate=100,prec_level=2",
        "041d002000000002000000020000000200020010000000640000000002000000",
    ),
    ("del-meter meter=2", "041d0010000000020002000000000002"),
    (
        "packet-out in_port=1 packet=<ARP request> actions=output:2",
        "040d005200000002ffffffff0000000100100000000000000000001000000002\
         0000000000000000ffffffffffff000000000001080600010800060400010000\
         00000001c0a80001000000000000c0a80002",
    ),
    (
        "packet-out in_port=CONTROLLER packet=<14 bytes> actions=FLOOD",
        "040d003600000002fffffffffffffffd001000000000000000000010fffffffb\
         0000000000000000ffffffffffff0000000000010806",
    ),
    (
        "table=1,cookie=0x99,idle_timeout=5,hard_timeout=50,send_flow_rem,check_overlap,udp6,ipv6_src=2001:db8::/32,ipv6_dst=2001:db8::1,ipv6_label=0x12345,ip_dscp=10,ip_ecn=1,udp_src=53,actions=meter:3,set_field:00:11:22:33:44:55->eth_dst,set_queue:4,output:3,write_actions(output:4),write_metadata:0x10/0xff,goto_table:5",
        "040e010000000002000000000000009900000000000000000100000500328000\
         ffffffffffffffffffffffff000300000001005f80000a0286dd800035202001\
         0db8000000000000000000000000ffffffff0000000000000000000000008000\
         361020010db8000000000000000000000001800010010a800012010180003804\
         00012345800014011180001e0200350000060008000000030004003000000000\
         0019001080000606001122334455000000150008000000040000001000000003\
         0000000000000000000300180000000000000010000000040000000000000000\
         0002001800000000000000000000001000000000000000ff0001000805000000",
    ),
];

#[test]
fn ovs_ofctl_vectors_decode_and_re_encode_identically() {
    for (what, h) in OVS_OFCTL_VECTORS {
        let b = hex(h);
        let (xid, m) = v13::decode(&b).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(encode(&m, xid.0), b, "{what}");
        check_views(&b, &m);
    }
    // The table-miss flow OVS writes is the one above, byte for byte.
    let mut miss = table_miss_bytes();
    miss[7] = 2;
    assert_eq!(hex(OVS_OFCTL_VECTORS[0].1), miss);
    // What the bytes mean agrees with the command that produced them.
    let (_, m) = v13::decode(&hex(OVS_OFCTL_VECTORS[20].1)).unwrap();
    let Message::FlowMod(f) = m else { panic!() };
    assert_eq!(
        (f.table_id, f.cookie, f.idle_timeout, f.hard_timeout),
        (1, Cookie(0x99), 5, 50)
    );
    assert_eq!(f.flags, 3);
    assert_eq!(
        f.match_.fields,
        [
            Oxm::EthType(0x86dd),
            Oxm::Ipv6Src {
                value: "2001:db8::".parse().unwrap(),
                mask: Some("ffff:ffff::".parse().unwrap()),
            },
            Oxm::Ipv6Dst {
                value: "2001:db8::1".parse().unwrap(),
                mask: None,
            },
            Oxm::IpDscp(10),
            Oxm::IpEcn(1),
            Oxm::Ipv6Flabel {
                value: 0x12345,
                mask: None,
            },
            Oxm::IpProto(17),
            Oxm::UdpSrc(53),
        ]
    );
    assert_eq!(
        f.instructions,
        [
            Instruction::Meter(3),
            Instruction::ApplyActions(vec![
                Action::SetField(Oxm::EthDst {
                    value: baton_openflow::MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]),
                    mask: None,
                }),
                Action::SetQueue(4),
                Action::Output {
                    port: PortNo(3),
                    max_len: 0,
                },
            ]),
            Instruction::WriteActions(vec![Action::Output {
                port: PortNo(4),
                max_len: 0,
            }]),
            Instruction::WriteMetadata {
                metadata: 0x10,
                mask: 0xff,
            },
            Instruction::GotoTable(5),
        ]
    );
    let (_, m) = v13::decode(&hex(OVS_OFCTL_VECTORS[12].1)).unwrap();
    let Message::GroupMod(g) = m else { panic!() };
    assert_eq!(g.group_type, v13::GroupType::FastFailover);
    assert_eq!(
        (g.buckets[1].watch_port, g.buckets[1].watch_group),
        (PortNo(2), 1)
    );
    let (_, m) = v13::decode(&hex(OVS_OFCTL_VECTORS[15].1)).unwrap();
    assert_eq!(
        m,
        Message::MeterMod(v13::MeterMod {
            command: v13::MeterModCommand::Add,
            flags: 0b1101,
            meter_id: 1,
            bands: vec![MeterBand::Drop {
                rate: 1000,
                burst_size: 100,
            }],
        })
    );
}
