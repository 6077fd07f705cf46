//! The application API through the test harness (no sockets): events in
//! order, port events in both versions, per-switch state, timers and
//! keepalive in simulated time, and hostile input.

use baton_openflow::neutral::{ActionSpec, Message, PacketOut, PortDesc};
use baton_openflow::types::PortReason;
use baton_openflow::{PortNo, Version, Xid, v10, v13};
use baton_runtime::env::{Change, Publish, Snapshot, TxError, View, ViewAccess, ViewId};
use baton_runtime::session::CloseReason;
use baton_runtime::testing::{Harness, port};
use baton_runtime::{AnyApp, App, Network, PacketInBatch, SwitchCtx, SwitchInfo, Verdict};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Records what it hears, in order, and floods packet-ins.
#[derive(Default)]
struct Recorder {
    log: Mutex<Vec<String>>,
}

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
    fn note(&self, s: String) {
        self.log.lock().unwrap().push(s);
    }
}

impl App for Recorder {
    /// Packet-ins seen from this switch.
    type Switch = u32;

    fn name(&self) -> &str {
        "recorder"
    }

    fn switch_up(&self, sw: &mut SwitchCtx<'_>) -> u32 {
        self.note(format!("up {} {}", sw.dpid().0, sw.version()));
        0
    }

    fn switch_down(&self, sw: &SwitchInfo, seen: u32) {
        self.note(format!("down {} after {seen}", sw.dpid.0));
    }

    fn port_up(&self, sw: &mut SwitchCtx<'_>, _: &mut u32, port: &PortDesc) {
        self.note(format!("port up {} {}", sw.dpid().0, port.no.0));
    }

    fn port_down(&self, sw: &mut SwitchCtx<'_>, _: &mut u32, port: &PortDesc) {
        self.note(format!("port down {} {}", sw.dpid().0, port.no.0));
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, u32>) {
        batch.for_each(|sw, seen, pi| {
            *seen += 1;
            self.note(format!("packet-in {} port {}", sw.dpid().0, pi.in_port().0));
            sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &[ActionSpec::output(PortNo::FLOOD)],
            });
        });
    }

    fn message(&self, sw: &mut SwitchCtx<'_>, _: &mut u32, msg: &Message) -> Verdict {
        let what = match msg {
            Message::V10(v10::Message::BarrierReply) | Message::V13(v13::Message::BarrierReply) => {
                "barrier reply".to_string()
            }
            other => format!("{other:?}"),
        };
        self.note(format!("message {} {what}", sw.dpid().0));
        Verdict::Stop
    }
}

#[test]
fn ports_come_up_with_the_switch_and_follow_port_status_in_both_versions() {
    for version in [Version::V10, Version::V13] {
        let rec = Arc::new(Recorder::default());
        let mut h = Harness::new(vec![AnyApp::from(rec.clone())]);
        let down = PortDesc {
            link_down: true,
            ..port(2)
        };
        let sw = h.connect_with_ports(7, version, &[port(1), down.clone(), port(3)]);
        assert_eq!(
            rec.take(),
            vec![
                format!("up 7 {version}"),
                "port up 7 1".to_string(),
                "port up 7 3".to_string()
            ],
            "{version}"
        );
        h.port_status(sw, PortReason::Modify, &port(2));
        h.port_status(
            sw,
            PortReason::Modify,
            &PortDesc {
                admin_down: true,
                ..port(1)
            },
        );
        h.port_status(sw, PortReason::Delete, &port(3));
        h.port_status(sw, PortReason::Add, &port(4));
        assert_eq!(
            rec.take(),
            [
                "port up 7 2",
                "port down 7 1",
                "port down 7 3",
                "port up 7 4"
            ],
            "{version}"
        );
        assert!(
            h.sent(sw).is_empty(),
            "{version}: nothing to say to the switch"
        );
    }
}

#[test]
fn events_reach_applications_in_arrival_order_with_their_state() {
    let rec = Arc::new(Recorder::default());
    let mut h = Harness::new(vec![AnyApp::from(rec.clone())]);
    let sw = h.connect(1, Version::V10);
    rec.take();
    h.packet_in(sw, 1, &[0xff; 60]);
    let mut barrier = Vec::new();
    v10::Message::BarrierReply.encode(Xid(9), &mut barrier);
    let mut pi = Vec::new();
    baton_runtime::testing::encode_packet_in(
        &mut pi,
        Version::V10,
        baton_openflow::BufferId::NONE,
        PortNo(2),
        &[0xff; 60],
    );
    // A packet-in, a barrier reply and another packet-in in one read.
    let mut bytes = pi.clone();
    bytes.extend_from_slice(&barrier);
    bytes.extend_from_slice(&pi);
    h.receive_bytes(sw, &bytes);
    h.disconnect(sw);
    assert_eq!(
        rec.take(),
        [
            "packet-in 1 port 1",
            "packet-in 1 port 2",
            "message 1 barrier reply",
            "packet-in 1 port 2",
            "down 1 after 3"
        ]
    );
}

#[test]
fn packet_ins_in_the_read_that_finishes_the_handshake_follow_the_switch_up() {
    let rec = Arc::new(Recorder::default());
    let mut h = Harness::new(vec![AnyApp::from(rec.clone())]);
    let sw = h.accept();
    h.receive_bytes(sw, &baton_runtime::testing::hello(Version::V10));
    // FEATURES_REPLY and two packet-ins in one read: the packet-ins are
    // framed before the session has seen the switch come up, so they are
    // read in the sessions' pass, after it.
    let mut bytes = Vec::new();
    baton_runtime::testing::features_reply(Version::V10, baton_openflow::DatapathId(5))
        .encode(Xid(0), &mut bytes);
    for port in [3, 4] {
        baton_runtime::testing::encode_packet_in(
            &mut bytes,
            Version::V10,
            baton_openflow::BufferId::NONE,
            PortNo(port),
            &[0xff; 60],
        );
    }
    h.receive_bytes(sw, &bytes);
    // Then one in a read of its own, read as it is framed.
    h.packet_in(sw, 6, &[0xff; 60]);
    assert_eq!(
        rec.take(),
        [
            "up 5 OpenFlow 1.0",
            "packet-in 5 port 3",
            "packet-in 5 port 4",
            "packet-in 5 port 6"
        ]
    );
}

/// Sends an ECHO_REQUEST to every switch from a timer.
struct Pinger;

impl App for Pinger {
    type Switch = ();
    fn name(&self) -> &str {
        "pinger"
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn start(&self, net: &baton_runtime::Network) {
        net.every("ping", Duration::from_secs(1), |net| {
            for s in net.switches() {
                let mut out = Vec::new();
                baton_openflow::neutral::encode_echo_request(&mut out, s.version, Xid(42), b"hi");
                net.send(s.id, &out).unwrap();
            }
        });
    }
}

#[test]
fn timers_and_keepalive_run_in_simulated_time() {
    let mut h = Harness::new(vec![AnyApp::new(Pinger)]);
    let sw = h.connect(1, Version::V13);
    h.advance(Duration::from_millis(2500));
    let echoes = h
        .sent(sw)
        .into_iter()
        .filter(|m| matches!(m, Message::V13(v13::Message::EchoRequest(p)) if p == b"hi"))
        .count();
    assert_eq!(echoes, 2, "the timer fired at 1 s and 2 s");
    // The session sends its own ECHO_REQUEST after 5 s of silence and
    // gives up after 15 s.
    h.advance(Duration::from_secs(3));
    assert!(
        h.sent(sw)
            .iter()
            .any(|m| matches!(m, Message::V13(v13::Message::EchoRequest(p)) if p == b"baton"))
    );
    assert!(h.is_connected(sw));
    h.advance(Duration::from_secs(10));
    assert!(!h.is_connected(sw));
    assert!(matches!(
        h.close_reason(sw),
        Some(CloseReason::Silent { .. })
    ));
}

#[test]
fn hostile_input_gets_errors_or_a_close_and_never_harms_other_switches() {
    let rec = Arc::new(Recorder::default());
    let mut h = Harness::new(vec![AnyApp::from(rec.clone())]);
    let bad = h.connect(1, Version::V10);
    let good = h.connect(2, Version::V13);
    rec.take();
    // Unknown type: BAD_REQUEST / BAD_TYPE.
    h.receive_bytes(bad, &[1, 99, 0, 8, 0, 0, 0, 5]);
    match &h.sent(bad)[..] {
        [Message::V10(v10::Message::Error(e))] => assert_eq!((e.error_type, e.code), (1, 1)),
        other => panic!("{other:?}"),
    }
    // Half a message waits for the rest.
    h.receive_bytes(bad, &[1, 2, 0, 12]);
    assert!(h.sent(bad).is_empty() && h.is_connected(bad));
    h.receive_bytes(bad, &[0, 0, 0, 1, b'a', b'b', b'c', b'd']);
    assert_eq!(
        h.sent(bad),
        [Message::V10(v10::Message::EchoReply(b"abcd".to_vec()))]
    );
    // A length below the header size cannot be framed: closed.
    h.receive_bytes(bad, &[1, 2, 0, 4]);
    assert!(!h.is_connected(bad));
    assert!(matches!(
        h.close_reason(bad),
        Some(CloseReason::Unframeable(_))
    ));
    // The other switch is served.
    h.packet_in(good, 3, &[0xff; 60]);
    assert_eq!(h.sent(good).len(), 1);
    assert_eq!(rec.take(), ["down 1 after 0", "packet-in 2 port 3"]);
}

/// Installs one flow per switch at switch-up and deletes its own flows on
/// request.
struct Installer;

impl App for Installer {
    type Switch = ();
    fn name(&self) -> &str {
        "installer"
    }
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) {
        let drop_all = baton_openflow::neutral::FlowSpec {
            cookie: baton_openflow::Cookie(0x1234),
            ..baton_openflow::neutral::FlowSpec::new(baton_openflow::neutral::MatchSpec::all(), &[])
        };
        sw.add_flow(&drop_all);
    }
    fn message(&self, sw: &mut SwitchCtx<'_>, _: &mut (), msg: &Message) -> Verdict {
        if matches!(msg, Message::V13(v13::Message::BarrierReply)) {
            assert!(sw.delete_own_flows());
        }
        Verdict::Continue
    }
}

#[test]
fn an_application_s_flows_carry_its_cookie_tag_and_can_be_deleted_by_it() {
    let app = AnyApp::new(Installer);
    let tag = u64::from(app.cookie_tag()) << 48;
    let mut h = Harness::new(vec![app]);
    let sw = h.connect(1, Version::V13);
    match &h.sent(sw)[..] {
        [Message::V13(v13::Message::FlowMod(f))] => assert_eq!(f.cookie.0, tag | 0x1234),
        other => panic!("{other:?}"),
    }
    h.receive(sw, v13::Message::BarrierReply);
    match &h.sent(sw)[..] {
        [Message::V13(v13::Message::FlowMod(f))] => {
            assert_eq!(f.command, v13::FlowModCommand::Delete);
            assert_eq!((f.cookie.0, f.cookie_mask), (tag, 0xffff << 48));
        }
        other => panic!("{other:?}"),
    }
}

/// Live ports per switch, the state one application shares.
#[derive(Debug, Default, Clone, PartialEq)]
struct LivePorts(Vec<(u64, u32)>);
impl View for LivePorts {
    const NAME: &'static str = "live-ports";
}

/// How many live ports there are, and from which version of `LivePorts`.
#[derive(Debug, PartialEq)]
struct PortCount {
    count: usize,
    from: u64,
}
impl View for PortCount {
    const NAME: &'static str = "port-count";
}

/// Publishes `LivePorts` as ports come and go.
#[derive(Default)]
struct PortWatcher(Mutex<LivePorts>);

impl App for PortWatcher {
    type Switch = ();
    fn name(&self) -> &str {
        "port-watcher"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().writes::<LivePorts>()
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn port_up(&self, sw: &mut SwitchCtx<'_>, _: &mut (), p: &PortDesc) {
        let mut live = self.0.lock().unwrap();
        live.0.push((sw.dpid().0, p.no.0));
        sw.net().publish(Publish::new().view(live.clone())).unwrap();
    }
    fn port_down(&self, sw: &mut SwitchCtx<'_>, _: &mut (), p: &PortDesc) {
        let mut live = self.0.lock().unwrap();
        live.0.retain(|&e| e != (sw.dpid().0, p.no.0));
        sw.net().publish(Publish::new().view(live.clone())).unwrap();
        // Writing a view it did not declare is refused.
        let refused = sw
            .net()
            .publish(Publish::new().view(PortCount { count: 0, from: 0 }));
        assert_eq!(refused.unwrap_err().view, ViewId::of::<PortCount>());
        // So is a transaction that writes it, and nothing is published.
        let refused = sw.net().atomically(1, |tx| {
            tx.write(PortCount { count: 0, from: 0 });
            Ok::<_, ()>(())
        });
        assert!(
            matches!(refused, Err(TxError::Undeclared(e)) if e.view == ViewId::of::<PortCount>())
        );
    }
}

/// Derives `PortCount` whenever `LivePorts` changes.
struct Counter;

impl App for Counter {
    type Switch = ();
    fn name(&self) -> &str {
        "counter"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<LivePorts>()
            .writes::<PortCount>()
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn view_changed(&self, net: &Network, snapshot: &Snapshot, changes: &[Change]) {
        assert!(changes.iter().all(|c| c.view == ViewId::of::<LivePorts>()));
        assert!(snapshot.version::<LivePorts>() > 0);
        // A transaction: the count is published only if the ports it
        // counted are still the current ones.
        let done = net
            .atomically(3, |tx| {
                let live = tx.read::<LivePorts>().unwrap();
                tx.write(PortCount {
                    count: live.0.len(),
                    from: tx.version::<LivePorts>(),
                });
                Ok::<_, ()>(())
            })
            .unwrap();
        assert_eq!(done.changes.len(), 1);
    }
}

#[test]
fn views_are_published_versioned_and_drive_their_readers() {
    let mut h = Harness::new(vec![
        AnyApp::new(PortWatcher::default()),
        AnyApp::new(Counter),
    ]);
    let sw = h.connect_with_ports(1, Version::V10, &[port(1), port(2)]);
    let s = h.snapshot();
    let live = s.get::<LivePorts>().unwrap();
    assert_eq!((live.version(), &live.0), (2, &vec![(1, 1), (1, 2)]));
    let count = s.get::<PortCount>().unwrap();
    assert_eq!(*count, PortCount { count: 2, from: 2 });
    h.port_status(sw, PortReason::Delete, &port(2));
    let s = h.snapshot();
    assert_eq!(s.get::<LivePorts>().unwrap().version(), 3);
    assert_eq!(
        *s.get::<PortCount>().unwrap(),
        PortCount { count: 1, from: 3 }
    );
}

/// How many hosts are known: what the first application leaves a packet
/// to the second on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Known(u32);
impl View for Known {
    const NAME: &'static str = "known";
}

/// Reads `Known` for each packet-in and lets it pass; between its read and
/// the next application's, another thread publishes a new version (as a
/// cluster's peers do).
#[derive(Default)]
struct Passer {
    others: std::sync::OnceLock<Network>,
    read: Mutex<Vec<u64>>,
}

impl App for Passer {
    type Switch = ();
    fn name(&self) -> &str {
        "passer"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Known>()
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|sw, _, _| {
            let known = sw.net().view::<Known>().unwrap();
            self.read.lock().unwrap().push(known.version());
        });
        let others = self.others.get().unwrap().clone();
        std::thread::spawn(move || others.publish(Publish::new().view(Known(2))).unwrap())
            .join()
            .unwrap();
    }
}

/// Acts on what `Passer` let pass, reading `Known` both ways.
#[derive(Default)]
struct Actor(Mutex<Vec<(u64, u64)>>);

impl App for Actor {
    type Switch = ();
    fn name(&self) -> &str {
        "actor"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Known>()
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|sw, _, _| {
            let net = sw.net();
            let read = (
                net.view::<Known>().unwrap().version(),
                net.snapshot().version::<Known>(),
            );
            self.0.lock().unwrap().push(read);
        });
    }
}

#[test]
fn applications_handling_one_batch_read_one_environment() {
    let passer = Arc::new(Passer::default());
    let actor = Arc::new(Actor::default());
    let mut h = Harness::new(vec![
        AnyApp::from(passer.clone()),
        AnyApp::from(actor.clone()),
    ]);
    let net = h.network();
    net.publish(Publish::new().view(Known(1))).unwrap();
    assert!(passer.others.set(net.clone()).is_ok());
    let sw = h.connect(1, Version::V13);
    h.packet_in(sw, 1, &[0xff; 60]);
    assert_eq!(*passer.read.lock().unwrap(), [1]);
    // The version the other thread published is not this batch's.
    assert_eq!(*actor.0.lock().unwrap(), [(1, 1)]);
    assert_eq!(net.view::<Known>().unwrap().version(), 2);
    // The next batch reads it.
    h.packet_in(sw, 1, &[0xff; 60]);
    assert_eq!(*passer.read.lock().unwrap(), [1, 2]);
    assert_eq!(actor.0.lock().unwrap()[1], (2, 2));
}

#[test]
fn requests_get_their_replies_and_applications_do_not() {
    use baton_openflow::v13::multipart::{
        MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody,
    };
    use baton_runtime::requests::RequestError;
    let rec = Arc::new(Recorder::default());
    let mut h = Harness::new(vec![AnyApp::from(rec.clone())]);
    let sw = h.connect(1, Version::V13);
    rec.take();
    let net = h.network();
    let ask = |net: &baton_runtime::Network| {
        net.request(
            sw,
            &Message::V13(v13::Message::MultipartRequest(MultipartRequest {
                flags: 0,
                body: MultipartRequestBody::Desc,
            })),
        )
    };
    let reply = ask(&net);
    let xid = {
        let mut raw = h.take_bytes(sw);
        assert_eq!(raw[1], 18, "a MULTIPART_REQUEST went out");
        let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
        raw.clear();
        xid
    };
    assert!(reply.try_take().is_none());
    // A two-part reply: gathered until the last part.
    let part = |more: bool| {
        v13::Message::MultipartReply(MultipartReply {
            flags: u16::from(more),
            body: MultipartReplyBody::PortDesc(Vec::new()),
        })
    };
    h.reply(sw, xid, part(true));
    assert!(reply.try_take().is_none());
    h.reply(sw, xid, part(false));
    assert_eq!(reply.try_take().unwrap().unwrap().len(), 2);
    // An error answers with the error.
    let reply = ask(&net);
    let raw = h.take_bytes(sw);
    let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
    h.reply(
        sw,
        xid,
        v13::Message::Error(v13::ErrorMsg::Standard {
            error_type: v13::ErrorType::BadRequest,
            code: 1,
            data: Vec::new(),
        }),
    );
    assert!(matches!(
        reply.try_take(),
        Some(Err(RequestError::Refused(_)))
    ));
    // The applications saw none of it; a disconnect fails what waits.
    let reply = ask(&net);
    h.disconnect(sw);
    assert_eq!(reply.try_take(), Some(Err(RequestError::Gone)));
    assert_eq!(rec.take(), ["down 1 after 0"]);
    // A 1.0 message to a 1.3 switch is refused at once.
    let sw2 = h.connect(2, Version::V13);
    let wrong = net.request(sw2, &Message::V10(v10::Message::BarrierRequest));
    assert_eq!(wrong.try_take(), Some(Err(RequestError::WrongVersion)));
}
