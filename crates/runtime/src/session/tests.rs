//! The session with byte slices and a made-up clock: both versions'
//! handshakes, a version mismatch, keepalive and timeouts, malformed and
//! out-of-phase messages.

use super::*;
use crate::testing;
use baton_openflow::hello::Hello;
use baton_openflow::neutral::PacketInReason;
use baton_openflow::types::PortReason;
use baton_openflow::v13::multipart::{MultipartReply, MultipartReplyBody, MultipartRequestBody};
use baton_openflow::{BufferId, MacAddr, PortNo, frame};

const CONFIG: SessionConfig = SessionConfig {
    echo_interval: Duration::from_secs(5),
    echo_timeout: Duration::from_secs(15),
    miss_send_len: 128,
    table_miss_13: true,
};

/// Every message in `out`, decoded, and `out` emptied.
fn drain(out: &mut Vec<u8>) -> Vec<(Xid, Message)> {
    let mut msgs = Vec::new();
    let mut rest = &out[..];
    while let Ok(Some(len)) = frame(rest) {
        msgs.push(Message::decode(&rest[..len]).expect("the session writes valid messages"));
        rest = &rest[len..];
    }
    assert!(rest.is_empty(), "a partial message was written");
    out.clear();
    msgs
}

fn hello(version: Version, bitmap: bool) -> Vec<u8> {
    if bitmap {
        return testing::hello(version);
    }
    let mut out = Vec::new();
    Hello::default().encode(version, Xid(1), &mut out);
    out
}

fn features_reply(version: Version, xid: Xid, dpid: u64) -> Vec<u8> {
    let mut out = Vec::new();
    testing::features_reply(version, DatapathId(dpid)).encode(xid, &mut out);
    out
}

fn packet_in(version: Version, in_port: u32, frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    testing::encode_packet_in(&mut out, version, BufferId(7), PortNo(in_port), frame);
    out
}

/// A session through its handshake in `version`; returns it, the time,
/// and what it wrote.
fn up(version: Version, bitmap: bool) -> (Session, Instant, Vec<(Xid, Message)>) {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    let mut written = drain(&mut out);
    assert!(matches!(
        s.handle(&hello(version, bitmap), t0, &mut out),
        Event::Nothing
    ));
    assert_eq!(s.phase(), Phase::AwaitFeatures);
    let req = drain(&mut out);
    let (xid, req_msg) = &req[0];
    assert_eq!(req_msg.version(), version);
    assert!(matches!(
        req_msg,
        Message::V10(v10::Message::FeaturesRequest) | Message::V13(v13::Message::FeaturesRequest)
    ));
    written.extend(req.iter().cloned());
    let reply = features_reply(version, *xid, 0xab);
    let ev = s.handle(&reply, t0, &mut out);
    assert!(matches!(ev, Event::SwitchUp), "{ev:?}");
    written.extend(drain(&mut out));
    (s, t0, written)
}

#[test]
fn hello_offers_both_versions() {
    let mut out = Vec::new();
    let _ = Session::new(CONFIG, Instant::now(), &mut out);
    assert_eq!(out, [4, 0, 0, 16, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0x12]);
}

#[test]
fn handshake_v10_as_cbench_does_it() {
    let (s, _, written) = up(Version::V10, false);
    assert_eq!(s.phase(), Phase::Up);
    assert_eq!(s.version(), Version::V10);
    assert_eq!(s.dpid(), DatapathId(0xab));
    let f = s.features().unwrap();
    assert_eq!((f.n_buffers, f.n_tables), (256, 1));
    // HELLO, FEATURES_REQUEST, SET_CONFIG with miss_send_len.
    assert_eq!(written.len(), 3);
    match &written[2].1 {
        Message::V10(v10::Message::SetConfig(c)) => assert_eq!(c.miss_send_len, 128),
        other => panic!("expected SET_CONFIG, got {other:?}"),
    }
}

#[test]
fn handshake_v13_installs_the_table_miss_flow() {
    let (s, _, written) = up(Version::V13, true);
    assert_eq!(s.version(), Version::V13);
    assert_eq!(s.features().unwrap().n_tables, 254);
    // HELLO, FEATURES_REQUEST, SET_CONFIG, the table-miss flow, and the
    // port description request.
    assert_eq!(written.len(), 5);
    assert!(matches!(
        written[2].1,
        Message::V13(v13::Message::SetConfig(_))
    ));
    assert!(matches!(
        &written[4].1,
        Message::V13(v13::Message::MultipartRequest(r)) if r.body == MultipartRequestBody::PortDesc
    ));
    match &written[3].1 {
        Message::V13(v13::Message::FlowMod(fm)) => {
            assert_eq!(fm.priority, 0);
            assert!(fm.match_.fields.is_empty());
        }
        other => panic!("expected the table-miss FLOW_MOD, got {other:?}"),
    }
    // Without it when configured so.
    let t0 = Instant::now();
    let mut out = Vec::new();
    let cfg = SessionConfig {
        table_miss_13: false,
        ..CONFIG
    };
    let mut s = Session::new(cfg, t0, &mut out);
    s.handle(&hello(Version::V13, true), t0, &mut out);
    let xid = drain(&mut out).last().unwrap().0;
    s.handle(&features_reply(Version::V13, xid, 1), t0, &mut out);
    assert_eq!(
        drain(&mut out).len(),
        2,
        "SET_CONFIG and the port description request"
    );
}

#[test]
fn an_incompatible_version_gets_hello_failed_and_a_close() {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    out.clear();
    // An OpenFlow 1.2-only HELLO (version 3, no bitmap).
    let ev = s.handle(&[3, 0, 0, 8, 0, 0, 0, 9], t0, &mut out);
    assert!(matches!(
        ev,
        Event::Close(CloseReason::Incompatible { peer_version: 3 })
    ));
    match &drain(&mut out)[..] {
        [(xid, Message::V10(v10::Message::Error(e)))] => {
            assert_eq!(*xid, Xid(9));
            assert_eq!(
                (e.error_type, e.code),
                (0, 0),
                "HELLO_FAILED / INCOMPATIBLE"
            );
        }
        other => panic!("expected one ERROR, got {other:?}"),
    }
    assert_eq!(s.phase(), Phase::Closed);
    // Nothing more is handled.
    assert!(matches!(
        s.handle(&hello(Version::V10, false), t0, &mut out),
        Event::Nothing
    ));
    assert!(out.is_empty());
}

#[test]
fn a_peer_that_does_not_start_with_hello_is_closed() {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    let ev = s.handle(&[1, 5, 0, 8, 0, 0, 0, 1], t0, &mut out);
    assert!(matches!(
        ev,
        Event::Close(CloseReason::NotHello { msg_type: 5 })
    ));
}

#[test]
fn echo_requests_are_answered_in_every_phase_after_hello() {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    s.handle(&hello(Version::V10, false), t0, &mut out);
    out.clear();
    let mut req = Vec::new();
    v10::encode_echo_request(&mut req, Xid(77), b"ping");
    assert!(matches!(s.handle(&req, t0, &mut out), Event::Nothing));
    assert_eq!(
        drain(&mut out),
        vec![(
            Xid(77),
            Message::V10(v10::Message::EchoReply(b"ping".to_vec()))
        )]
    );
    let (mut s, t0, _) = up(Version::V13, true);
    let mut req = Vec::new();
    v13::encode_echo_request(&mut req, Xid(78), b"");
    s.handle(&req, t0, &mut out);
    assert_eq!(
        drain(&mut out),
        vec![(Xid(78), Message::V13(v13::Message::EchoReply(Vec::new())))]
    );
}

#[test]
fn keepalive_sends_one_echo_then_closes_a_silent_switch() {
    let (mut s, t0, _) = up(Version::V10, false);
    let mut out = Vec::new();
    assert_eq!(s.next_timeout(), t0 + CONFIG.echo_interval);
    // Quiet, not yet for the interval: nothing.
    assert_eq!(s.poll_timeout(t0 + Duration::from_secs(4), &mut out), None);
    assert!(out.is_empty());
    // Quiet for the interval: one ECHO_REQUEST, and only one.
    let t1 = t0 + CONFIG.echo_interval;
    assert_eq!(s.poll_timeout(t1, &mut out), None);
    assert_eq!(s.poll_timeout(t1 + Duration::from_secs(1), &mut out), None);
    match &drain(&mut out)[..] {
        [(_, Message::V10(v10::Message::EchoRequest(p)))] => assert_eq!(p, b"baton"),
        other => panic!("expected one ECHO_REQUEST, got {other:?}"),
    }
    assert_eq!(s.next_timeout(), t0 + CONFIG.echo_timeout);
    // Silent for the timeout: close.
    let end = t0 + CONFIG.echo_timeout;
    assert_eq!(
        s.poll_timeout(end, &mut out),
        Some(CloseReason::Silent {
            for_: CONFIG.echo_timeout
        })
    );
    assert_eq!(s.phase(), Phase::Closed);
}

#[test]
fn any_message_keeps_a_switch_alive() {
    let (mut s, t0, _) = up(Version::V10, false);
    let mut out = Vec::new();
    let t1 = t0 + CONFIG.echo_interval;
    s.poll_timeout(t1, &mut out);
    assert_eq!(drain(&mut out).len(), 1);
    // The echo reply (or anything else) arrives: the clock restarts.
    let mut reply = Vec::new();
    v10::encode_echo_reply(&mut reply, Xid(1), b"baton");
    s.handle(&reply, t1, &mut out);
    assert_eq!(s.next_timeout(), t1 + CONFIG.echo_interval);
    assert_eq!(s.poll_timeout(t0 + CONFIG.echo_timeout, &mut out), None);
}

#[test]
fn a_handshake_that_never_finishes_times_out() {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    s.handle(&hello(Version::V10, false), t0, &mut out);
    out.clear();
    assert_eq!(s.next_timeout(), t0 + CONFIG.echo_timeout);
    // No ECHO_REQUEST before the handshake finishes...
    assert_eq!(s.poll_timeout(t0 + CONFIG.echo_interval, &mut out), None);
    assert!(out.is_empty());
    // ...and a close at the timeout.
    assert!(matches!(
        s.poll_timeout(t0 + CONFIG.echo_timeout, &mut out),
        Some(CloseReason::Silent { .. })
    ));
}

#[test]
fn packet_ins_are_read_once_into_fields() {
    for version in [Version::V10, Version::V13] {
        let (mut s, t0, _) = up(version, version == Version::V13);
        let mut out = Vec::new();
        let frame = [0xaa; 60];
        let msg = packet_in(version, 3, &frame);
        match s.handle(&msg, t0, &mut out) {
            Event::PacketIn(pi) => {
                assert_eq!(pi.version(), version);
                assert_eq!(pi.in_port(), PortNo(3));
                assert_eq!(pi.buffer_id(), Some(BufferId(7)));
                assert_eq!(pi.reason(), PacketInReason::NoMatch);
                assert_eq!(pi.data(), &frame[..]);
            }
            other => panic!("{version}: expected a PACKET_IN, got {other:?}"),
        }
        assert!(out.is_empty(), "nothing is sent back for a good PACKET_IN");
    }
}

#[test]
fn other_messages_after_the_handshake_are_delivered_decoded() {
    let (mut s, t0, _) = up(Version::V10, false);
    let mut out = Vec::new();
    let mut bytes = Vec::new();
    v10::Message::BarrierReply.encode(Xid(5), &mut bytes);
    match s.handle(&bytes, t0, &mut out) {
        Event::Message {
            msg: Message::V10(v10::Message::BarrierReply),
            xid: Xid(5),
        } => {}
        other => panic!("expected BARRIER_REPLY, got {other:?}"),
    }
}

/// The ERROR in `out`: (type, code, data).
fn error_in(out: &mut Vec<u8>) -> (u16, u16, Vec<u8>) {
    match drain(out).pop() {
        Some((_, Message::V10(v10::Message::Error(e)))) => (e.error_type, e.code, e.data),
        other => panic!("expected an ERROR, got {other:?}"),
    }
}

#[test]
fn malformed_messages_get_the_error_the_spec_names() {
    let (mut s, t0, _) = up(Version::V10, false);
    let mut out = Vec::new();
    // Unknown type: BAD_REQUEST / BAD_TYPE, with the message as data.
    let unknown = [1, 99, 0, 8, 0, 0, 0, 5];
    assert!(matches!(s.handle(&unknown, t0, &mut out), Event::Nothing));
    assert_eq!(error_in(&mut out), (1, 1, unknown.to_vec()));
    // A truncated PACKET_IN: BAD_REQUEST / BAD_LEN.
    let short = [1, 10, 0, 12, 0, 0, 0, 6, 0, 0, 0, 1];
    s.handle(&short, t0, &mut out);
    let (error_type, code, _) = error_in(&mut out);
    assert_eq!((error_type, code), (1, 6));
    // The wrong version on an established connection: BAD_VERSION.
    s.handle(&[4, 2, 0, 8, 0, 0, 0, 9], t0, &mut out);
    let (error_type, code, _) = error_in(&mut out);
    assert_eq!((error_type, code), (1, 0));
    // A long bad message is quoted up to 64 bytes.
    let mut long = vec![1, 99, 1, 0, 0, 0, 0, 5];
    long.resize(256, 0);
    s.handle(&long, t0, &mut out);
    assert_eq!(error_in(&mut out).2.len(), 64);
    // Still up.
    assert_eq!(s.phase(), Phase::Up);
}

#[test]
fn out_of_phase_messages_are_ignored_until_the_handshake_finishes() {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    s.handle(&hello(Version::V10, false), t0, &mut out);
    out.clear();
    // A PACKET_IN and a BARRIER_REPLY before FEATURES_REPLY.
    let pi = packet_in(Version::V10, 1, &[0; 60]);
    assert!(matches!(s.handle(&pi, t0, &mut out), Event::Nothing));
    let mut barrier = Vec::new();
    v10::Message::BarrierReply.encode(Xid(3), &mut barrier);
    assert!(matches!(s.handle(&barrier, t0, &mut out), Event::Nothing));
    assert!(out.is_empty());
    assert_eq!(s.phase(), Phase::AwaitFeatures);
    // A malformed FEATURES_REPLY ends the connection.
    let mut bad = features_reply(Version::V10, Xid(1), 1);
    bad.truncate(20);
    bad[2..4].copy_from_slice(&20u16.to_be_bytes());
    assert!(matches!(
        s.handle(&bad, t0, &mut out),
        Event::Close(CloseReason::BadFeatures(_))
    ));
}

fn phy_port(no: u16, link_down: bool) -> v10::PhyPort {
    v10::PhyPort {
        port_no: PortNo(u32::from(no)),
        hw_addr: MacAddr([2, 0, 0, 0, 0, no as u8]),
        name: format!("s1-eth{no}"),
        config: 0,
        state: if link_down {
            v10::port::state::LINK_DOWN
        } else {
            0
        },
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
    }
}

fn port13(no: u32, link_down: bool) -> v13::Port {
    v13::Port {
        port_no: PortNo(no),
        hw_addr: MacAddr([2, 0, 0, 0, 0, no as u8]),
        name: format!("s1-eth{no}"),
        config: 0,
        state: if link_down {
            v13::port::port_state::LINK_DOWN
        } else {
            0
        },
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
        curr_speed: 1_000_000,
        max_speed: 0,
    }
}

/// Handles `msg` and returns the port numbers it brought up and down.
fn port_changes(s: &mut Session, msg: &[u8]) -> (Vec<u32>, Vec<u32>) {
    let mut out = Vec::new();
    let mut up = Vec::new();
    let mut down = Vec::new();
    match s.handle(msg, Instant::now(), &mut out) {
        Event::Ports(changes) => {
            for c in changes {
                match c {
                    PortChange::Up(p) => up.push(p.no.0),
                    PortChange::Down(p) => down.push(p.no.0),
                }
            }
        }
        Event::Nothing => {}
        other => panic!("expected port changes, got {other:?}"),
    }
    assert!(out.is_empty(), "port news need no reply");
    (up, down)
}

#[test]
fn ports_v10_come_with_features_and_follow_port_status() {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut s = Session::new(CONFIG, t0, &mut out);
    s.handle(&hello(Version::V10, false), t0, &mut out);
    let xid = drain(&mut out)[1].0;
    let mut reply = Vec::new();
    v10::Message::FeaturesReply(v10::SwitchFeatures {
        datapath_id: DatapathId(1),
        n_buffers: 0,
        n_tables: 1,
        capabilities: 0,
        actions: 0,
        ports: vec![phy_port(1, false), phy_port(2, true)],
    })
    .encode(xid, &mut reply);
    assert!(matches!(s.handle(&reply, t0, &mut out), Event::SwitchUp));
    let names: Vec<_> = s.ports().map(|p| (p.no.0, p.is_live())).collect();
    assert_eq!(names, vec![(1, true), (2, false)]);
    let status = |reason, p: v10::PhyPort| {
        let mut b = Vec::new();
        v10::Message::PortStatus(v10::PortStatus { reason, desc: p }).encode(Xid(0), &mut b);
        b
    };
    // Port 2's link comes up, port 1's goes down, port 3 is added, a
    // change that keeps port 3 live says nothing, port 3 is removed.
    let m = status(PortReason::Modify, phy_port(2, false));
    assert_eq!(port_changes(&mut s, &m), (vec![2], vec![]));
    let m = status(PortReason::Modify, phy_port(1, true));
    assert_eq!(port_changes(&mut s, &m), (vec![], vec![1]));
    let m = status(PortReason::Add, phy_port(3, false));
    assert_eq!(port_changes(&mut s, &m), (vec![3], vec![]));
    let mut renamed = phy_port(3, false);
    renamed.name = "other".into();
    let m = status(PortReason::Modify, renamed);
    assert_eq!(port_changes(&mut s, &m), (vec![], vec![]));
    assert_eq!(s.port(PortNo(3)).unwrap().name, "other");
    let m = status(PortReason::Delete, phy_port(3, false));
    assert_eq!(port_changes(&mut s, &m), (vec![], vec![3]));
    assert!(s.port(PortNo(3)).is_none());
}

#[test]
fn ports_v13_come_from_the_port_description_in_parts() {
    let (mut s, _, written) = up(Version::V13, true);
    let req_xid = written[4].0;
    assert_eq!(s.ports().count(), 0, "1.3 FEATURES_REPLY lists no ports");
    let reply = |xid: Xid, more: bool, ports: Vec<v13::Port>| {
        let mut b = Vec::new();
        v13::Message::MultipartReply(MultipartReply {
            flags: u16::from(more),
            body: MultipartReplyBody::PortDesc(ports),
        })
        .encode(xid, &mut b);
        b
    };
    let m = reply(req_xid, true, vec![port13(1, false)]);
    assert_eq!(port_changes(&mut s, &m), (vec![1], vec![]));
    let m = reply(req_xid, false, vec![port13(2, true), port13(3, false)]);
    assert_eq!(port_changes(&mut s, &m), (vec![3], vec![]));
    assert_eq!(s.ports().count(), 3);
    assert_eq!(s.port(PortNo(1)).unwrap().speed_kbps, Some(1_000_000));
    // A port description nobody asked for is an application's business.
    let m = reply(Xid(999), false, vec![port13(4, false)]);
    let mut out = Vec::new();
    let ev = s.handle(&m, Instant::now(), &mut out);
    assert!(matches!(ev, Event::Message { .. }), "{ev:?}");
    assert!(s.port(PortNo(4)).is_none());
}
