//! Tests of the parent module.

use super::*;
use baton_openflow::frame;

fn one(out: &[u8]) -> &[u8] {
    let n = frame(out).unwrap().unwrap();
    assert_eq!(n, out.len(), "exactly one message");
    out
}

#[test]
fn hello_10_has_no_bitmap_and_13_names_only_13() {
    let mut out = Vec::new();
    SwitchProto::new(0, Version::V10).encode_hello(&mut out);
    assert_eq!(out, [1, 0, 0, 8, 0, 0, 0, 1]);
    out.clear();
    SwitchProto::new(0, Version::V13).encode_hello(&mut out);
    let (_, m) = v13::decode(one(&out)).unwrap();
    let v13::Message::Hello(h) = m else { panic!() };
    assert_eq!(h.bitmap(), Some(&[1u32 << 4][..]));
}

#[test]
fn features_and_control_messages_v10() {
    let mut sw = SwitchProto::new(6, Version::V10);
    let mut req = Vec::new();
    v10::Message::FeaturesRequest.encode(Xid(9), &mut req);
    let mut out = Vec::new();
    assert_eq!(sw.handle(&req, &mut out), Incoming::Up);
    assert!(sw.is_up());
    let (xid, m) = v10::decode(one(&out)).unwrap();
    assert_eq!(xid, Xid(9));
    let v10::Message::FeaturesReply(f) = m else {
        panic!()
    };
    assert_eq!(f.datapath_id, DatapathId(7));
    assert_eq!(f.ports.len(), PORTS as usize);

    for (req, want) in [
        (
            v10::Message::EchoRequest(b"hi".to_vec()),
            v10::Message::EchoReply(b"hi".to_vec()),
        ),
        (v10::Message::BarrierRequest, v10::Message::BarrierReply),
        (
            v10::Message::GetConfigRequest,
            v10::Message::GetConfigReply(v10::SwitchConfig {
                flags: 0,
                miss_send_len: 128,
            }),
        ),
    ] {
        let mut b = Vec::new();
        req.encode(Xid(3), &mut b);
        out.clear();
        assert_eq!(sw.handle(&b, &mut out), Incoming::Handled);
        assert_eq!(v10::decode(one(&out)).unwrap(), (Xid(3), want));
    }
    // A 1.3 message on a 1.0 connection is fatal.
    let mut b = Vec::new();
    v13::Message::BarrierRequest.encode(Xid(1), &mut b);
    assert!(matches!(sw.handle(&b, &mut out), Incoming::Fatal(_)));
}

fn flow_mod_head10(buffer_id: u32) -> v10::FlowModHead {
    v10::FlowModHead {
        match_: v10::Match10::ALL,
        cookie: baton_openflow::Cookie(0),
        command: v10::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 1,
        buffer_id: BufferId(buffer_id),
        out_port: PortNo::ANY,
        flags: 0,
    }
}

#[test]
fn responses_are_classified_v10() {
    let mut sw = SwitchProto::new(0, Version::V10);
    let head = flow_mod_head10(77);
    let mut b = Vec::new();
    v10::encode_flow_mod(&mut b, Xid(1), &head, &[]);
    let mut out = Vec::new();
    assert_eq!(
        sw.handle(&b, &mut out),
        Incoming::Response {
            kind: ResponseKind::FlowMod,
            buffer_id: Some(BufferId(77)),
            malformed: false
        }
    );
    b.clear();
    let del = v10::FlowModHead {
        command: v10::FlowModCommand::Delete,
        ..head
    };
    v10::encode_flow_mod(&mut b, Xid(1), &del, &[]);
    assert_eq!(sw.handle(&b, &mut out), Incoming::Uncounted);
    b.clear();
    v10::encode_packet_out(&mut b, Xid(2), BufferId::NONE, PortNo(1), &[], &[0; 60]);
    assert_eq!(
        sw.handle(&b, &mut out),
        Incoming::Response {
            kind: ResponseKind::PacketOut,
            buffer_id: None,
            malformed: false
        }
    );
    let mut lldp = [0u8; 60];
    lldp[12] = 0x88;
    lldp[13] = 0xcc;
    b.clear();
    v10::encode_packet_out(&mut b, Xid(2), BufferId::NONE, PortNo(1), &[], &lldp);
    assert_eq!(sw.handle(&b, &mut out), Incoming::Uncounted);
    assert!(out.is_empty());
}

#[test]
fn v13_handshake_answers_port_desc_and_counts_flow_mods() {
    use v13::multipart::{MultipartReplyBody, MultipartRequest, MultipartRequestBody};
    let mut sw = SwitchProto::new(1, Version::V13);
    let mut b = Vec::new();
    v13::Message::MultipartRequest(MultipartRequest {
        flags: 0,
        body: MultipartRequestBody::PortDesc,
    })
    .encode(Xid(4), &mut b);
    let mut out = Vec::new();
    assert_eq!(sw.handle(&b, &mut out), Incoming::Handled);
    let (_, m) = v13::decode(one(&out)).unwrap();
    let v13::Message::MultipartReply(r) = m else {
        panic!()
    };
    let MultipartReplyBody::PortDesc(ports) = r.body else {
        panic!()
    };
    assert_eq!(ports.len(), PORTS as usize);

    let head = v13::FlowModHead {
        cookie: baton_openflow::Cookie(0),
        cookie_mask: 0,
        table_id: 0,
        command: v13::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 0,
        buffer_id: BufferId(5),
        out_port: PortNo::ANY,
        out_group: 0xffff_ffff,
        flags: 0,
    };
    b.clear();
    v13::encode_flow_mod_apply(&mut b, Xid(1), &head, &[], &[]);
    assert_eq!(
        sw.handle(&b, &mut out),
        Incoming::Response {
            kind: ResponseKind::FlowMod,
            buffer_id: Some(BufferId(5)),
            malformed: false
        }
    );
    // A peer's HELLO without 1.3 is incompatible.
    b.clear();
    Hello::default().encode(Version::V10, Xid(1), &mut b);
    assert!(matches!(sw.handle(&b, &mut out), Incoming::Fatal(_)));
}

#[test]
fn packet_in_round_trips_both_versions() {
    let frame = crate::frames::DataFrame::new(0);
    for v in [Version::V10, Version::V13] {
        let mut sw = SwitchProto::new(0, v);
        let mut out = Vec::new();
        sw.encode_packet_in(&mut out, BufferId(42), PortNo(3), frame.bytes());
        match v {
            Version::V10 => {
                let p = v10::PacketInView::new_checked(one(&out)).unwrap();
                assert_eq!(p.buffer_id(), BufferId(42));
                assert_eq!(p.in_port(), PortNo(3));
                assert_eq!(p.data(), frame.bytes());
            }
            Version::V13 => {
                let p = v13::PacketInView::new_checked(one(&out)).unwrap();
                assert_eq!(p.buffer_id(), BufferId(42));
                assert_eq!(p.in_port(), Some(PortNo(3)));
                assert_eq!(p.data(), frame.bytes());
            }
        }
    }
}

#[test]
fn data_packet_ins_are_the_codecs_bytes_patched() {
    for v in [Version::V10, Version::V13] {
        for index in [0, 5, 300] {
            let mut patched = SwitchProto::new(index, v);
            let mut encoded = SwitchProto::new(index, v);
            let mut frame = crate::frames::DataFrame::new(index);
            for (id, host) in [(0, 0), (1, 1), (77, 2), (0xfffe_fff0, 3), (9, 0x0a0b0b)] {
                let mut a = Vec::new();
                patched.encode_data_packet_in(&mut a, BufferId(id), host);
                frame.set_host(host);
                let mut b = Vec::new();
                encoded.encode_packet_in(
                    &mut b,
                    BufferId(id),
                    crate::frames::host_port(host),
                    frame.bytes(),
                );
                assert_eq!(a, b, "{v} switch {index} id {id} host {host}");
                assert_eq!(a.len(), patched.data_packet_in_len());
            }
        }
    }
}

#[test]
fn a_truncated_flow_mod_counts_as_a_malformed_response() {
    let mut sw = SwitchProto::new(0, Version::V10);
    let mut b = Vec::new();
    v10::encode_flow_mod(&mut b, Xid(1), &flow_mod_head10(7), &[]);
    b.truncate(40);
    b[2..4].copy_from_slice(&40u16.to_be_bytes());
    assert_eq!(
        sw.handle(&b, &mut Vec::new()),
        Incoming::Response {
            kind: ResponseKind::FlowMod,
            buffer_id: None,
            malformed: true
        }
    );
}
