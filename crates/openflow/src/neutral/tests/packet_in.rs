//! PACKET_IN of either version, read once into fields.

use super::*;

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
fn packet_in_addresses_payload_and_detached_fields() {
    let frame = tcp_frame();
    let m = packet_in10(&frame);
    let p = PacketIn::parse(&m).unwrap();
    assert_eq!(p.eth_dst(), Some(MacAddr(frame[0..6].try_into().unwrap())));
    assert_eq!(p.eth_src(), Some(MacAddr(frame[6..12].try_into().unwrap())));
    assert_eq!(p.payload(), Payload::Buffered(BufferId(0x42)));
    // The fields survive without the message, and the frame comes back.
    let fields = p.with_frame(&[]);
    assert_eq!((fields.data(), fields.eth_dst()), (&[][..], None));
    assert_eq!(fields.with_frame(&frame), p);
    let m = packet_in13(&frame);
    let p = PacketIn::parse(&m).unwrap();
    assert_eq!(p.payload(), Payload::Frame(&frame));
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
