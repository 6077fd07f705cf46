//! The operator's handle on a running controller, over real loopback TCP:
//! switches with their ports and counters, weights, flow tables read from
//! the switches, applications stopped and started while switches stay
//! connected (their flows removed by cookie), flows the operator adds
//! and deletes (confirmed with a barrier, refusals heard), and an
//! application that panics while the rest carries on.

mod support;

use baton_openflow::neutral::{ActionSpec, FlowSpec, MatchSpec, PacketOut, PortDesc};
use baton_openflow::v13::multipart::{MultipartReply, MultipartReplyBody};
use baton_openflow::{BufferId, Cookie, DatapathId, PortNo, Version, Xid, v10, v13};
use baton_runtime::control::{ControlError, FlowSelection};
use baton_runtime::pipeline::Lifecycle;
use baton_runtime::requests::RequestError;
use baton_runtime::testing::port;
use baton_runtime::{AnyApp, App, Config, PacketInBatch, Runtime, SwitchCtx};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::{Msg, TestSwitch, flow_stats10, mac, tcp_frame, wait_for};

fn start(apps: Vec<AnyApp>) -> Runtime {
    support::start_quiet(2, apps)
}

/// Installs one flow at switch-up, floods packet-ins, and panics on a
/// packet-in from port 66.
#[derive(Default)]
struct Flow {
    ups: AtomicUsize,
    downs: AtomicUsize,
}

impl App for Flow {
    type Switch = ();
    fn name(&self) -> &str {
        "flow"
    }
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) {
        self.ups.fetch_add(1, Ordering::SeqCst);
        sw.add_flow(&FlowSpec {
            cookie: Cookie(7),
            ..FlowSpec::new(MatchSpec::all(), &[])
        });
    }
    fn switch_down(&self, _: &baton_runtime::SwitchInfo, _: ()) {
        self.downs.fetch_add(1, Ordering::SeqCst);
    }
    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|sw, _, pi| {
            assert_ne!(pi.in_port(), PortNo(66), "port 66 is cursed");
            sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &[ActionSpec::output(PortNo::FLOOD)],
            });
        });
    }
}

/// The xid and decoded form of the next message that is not a flow-mod
/// or the 1.3 port description request the session sends itself.
fn next_request(sw: &mut TestSwitch) -> (Xid, Msg) {
    loop {
        let raw = sw.recv_raw().expect("a request");
        let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
        let msg = sw.decode(&raw);
        match &msg {
            Msg::V10(v10::Message::FlowMod(_)) | Msg::V13(v13::Message::FlowMod(_)) => continue,
            Msg::V13(v13::Message::MultipartRequest(r))
                if r.body == v13::multipart::MultipartRequestBody::PortDesc =>
            {
                continue;
            }
            _ => return (xid, msg),
        }
    }
}

#[test]
fn switches_are_listed_with_their_ports_and_weights_can_change() {
    let rt = start(vec![AnyApp::new(Flow::default())]);
    let control = rt.control();
    let addr = rt.local_addrs()[0];
    let down = PortDesc {
        link_down: true,
        ..port(2)
    };
    let _s10 = TestSwitch::connect_with_ports(addr, Version::V10, 0x10, vec![port(1), down]);
    let mut s13 = TestSwitch::connect_with_ports(addr, Version::V13, 0x13, vec![port(5)]);
    // 1.3 ports come with the port description, answered in `recv`.
    s13.stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let _ = s13.recv_raw();
    let _ = s13.recv();
    wait_for("both switches and their ports", || {
        let s = control.switches();
        s.len() == 2 && s[1].ports.len() == 1 && s[0].ports.len() == 2
    });
    let s = control.switches();
    assert_eq!(
        (s[0].info.dpid, s[0].info.version),
        (DatapathId(0x10), Version::V10)
    );
    assert!(s[0].ports[0].is_live() && !s[0].ports[1].is_live());
    assert_eq!(s[1].ports[0].name, "eth5");
    assert!(s[0].info.peer.is_some() && s[0].rx_msgs >= 2 && s[0].tx_msgs >= 3);
    assert_eq!(s[0].weight, 1);
    control.set_weight(DatapathId(0x10), 5).unwrap();
    assert_eq!(control.switch(DatapathId(0x10)).unwrap().weight, 5);
    assert!(matches!(
        control.set_weight(DatapathId(0x10), 0),
        Err(ControlError::Invalid(_))
    ));
    assert_eq!(
        control.set_weight(DatapathId(0x99), 2),
        Err(ControlError::UnknownSwitch(DatapathId(0x99)))
    );
    rt.stop();
}

#[test]
fn each_message_sent_is_counted_once_per_switch_and_by_type() {
    // Small reads keep the switch busy, so its replies stay staged over
    // several batches before they are written: each must be counted once.
    let cfg = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        min_read: Some(256),
        max_read: 256,
        echo_interval: Duration::from_secs(60),
        echo_timeout: Duration::from_secs(120),
        ..Config::default()
    };
    let rt = Runtime::start(cfg, vec![AnyApp::new(Flow::default())]).expect("runtime starts");
    let control = rt.control();
    let mut sw = TestSwitch::connect(rt.local_addrs()[0], Version::V10, 0x21);
    // The flow installed at switch-up has been written once it arrives.
    loop {
        match sw.recv() {
            Some(Msg::V10(v10::Message::FlowMod(_))) => break,
            Some(_) => continue,
            None => panic!("no flow at switch-up"),
        }
    }
    let sent = |kind: &str| {
        control
            .stats()
            .messages
            .iter()
            .find(|m| m.kind == kind)
            .map_or(0, |m| m.sent)
    };
    let tx = || control.switches().first().map_or(0, |s| s.tx_msgs);
    wait_for("the flow-mod counted", || sent("flow_mod") == 1);
    let before = tx();
    // All in one write, so the controller finds them waiting and serves
    // them 256 bytes at a time.
    const N: u64 = 300;
    let mut burst = Vec::new();
    for i in 0..N {
        let frame = tcp_frame(mac(1), mac(2));
        sw.encode_packet_in(&mut burst, BufferId(i as u32 + 1), 1, &frame);
    }
    sw.send(&burst);
    let mut outs = 0;
    while outs < N {
        match sw.recv() {
            Some(Msg::V10(v10::Message::PacketOut(_))) => outs += 1,
            Some(_) => continue,
            None => panic!("{outs} packet-outs of {N}"),
        }
    }
    wait_for("every packet-out counted", || sent("packet_out") == N);
    assert_eq!(tx(), before + N, "per-switch count");
    assert!(sw.silent_for(Duration::from_millis(100)));
    assert_eq!(
        (sent("packet_out"), sent("flow_mod"), tx()),
        (N, 1, before + N),
        "no message counted twice"
    );
    rt.stop();
}

#[test]
fn flows_are_read_from_the_switch_in_both_versions() {
    let rt = start(vec![AnyApp::new(Flow::default())]);
    let control = rt.control();
    let addr = rt.local_addrs()[0];
    for (version, dpid) in [(Version::V10, 1), (Version::V13, 2)] {
        let mut sw = TestSwitch::connect(addr, version, dpid);
        wait_for("the switch", || control.switch(DatapathId(dpid)).is_ok());
        let asker = {
            let control = control.clone();
            std::thread::spawn(move || control.flows(DatapathId(dpid)))
        };
        let (xid, req) = next_request(&mut sw);
        match (version, req) {
            (Version::V10, Msg::V10(v10::Message::StatsRequest(_))) => {
                let stats = v10::stats::FlowStats {
                    table_id: 0,
                    match_: v10::Match10::ALL,
                    duration_sec: 3,
                    duration_nsec: 0,
                    priority: 9,
                    idle_timeout: 0,
                    hard_timeout: 0,
                    cookie: Cookie(1),
                    packet_count: 12,
                    byte_count: 1200,
                    actions: Vec::new(),
                };
                sw.reply(
                    xid,
                    v10::Message::StatsReply(v10::StatsReply {
                        flags: 0,
                        body: v10::StatsReplyBody::Flow(vec![stats]),
                    }),
                );
            }
            (Version::V13, Msg::V13(v13::Message::MultipartRequest(_))) => {
                let stats = v13::multipart::FlowStats {
                    table_id: 0,
                    duration_sec: 3,
                    duration_nsec: 0,
                    priority: 9,
                    idle_timeout: 0,
                    hard_timeout: 0,
                    flags: 0,
                    cookie: Cookie(1),
                    packet_count: 12,
                    byte_count: 1200,
                    match_: v13::Match13::default(),
                    instructions: Vec::new(),
                };
                // In two parts.
                for (more, n) in [(true, 1), (false, 2)] {
                    sw.reply(
                        xid,
                        v13::Message::MultipartReply(MultipartReply {
                            flags: u16::from(more),
                            body: MultipartReplyBody::Flow(vec![stats.clone(); n]),
                        }),
                    );
                }
            }
            other => panic!("{version}: expected a flow statistics request, got {other:?}"),
        }
        let flows = asker.join().unwrap().unwrap();
        let want = if version == Version::V10 { 1 } else { 3 };
        assert_eq!(flows.len(), want, "{version}");
        assert!(flows.iter().all(|f| f.cookie() == Cookie(1)));
    }
    rt.stop();
}

#[test]
fn an_application_stopped_and_started_again_while_switches_stay_connected() {
    let app = Arc::new(Flow::default());
    let rt = start(vec![AnyApp::from(app.clone())]);
    let control = rt.control();
    let tag = u64::from(control.apps()[0].cookie_tag) << 48;
    let addr = rt.local_addrs()[0];
    let mut s13 = TestSwitch::connect(addr, Version::V13, 13);
    let mut s10 = TestSwitch::connect(addr, Version::V10, 10);
    // Each got the application's flow at switch-up.
    for sw in [&mut s13, &mut s10] {
        match sw.recv() {
            Some(Msg::V13(v13::Message::FlowMod(f))) if f.priority == 0 => {
                // The 1.3 table-miss flow comes first.
                assert!(
                    matches!(sw.recv(), Some(Msg::V13(v13::Message::FlowMod(f))) if f.cookie.0 == tag | 7)
                );
            }
            Some(Msg::V10(v10::Message::FlowMod(f))) => assert_eq!(f.cookie.0, tag | 7),
            other => panic!("{other:?}"),
        }
    }
    let stopper = {
        let control = control.clone();
        std::thread::spawn(move || control.stop_app("flow", false))
    };
    // Both are asked at once.
    // 1.0: the flows are read, and the application's deleted strictly,
    // then a barrier.
    let (xid, _) = next_request(&mut s10);
    let flow = |cookie: u64| flow_stats10(cookie, 3);
    s10.reply(
        xid,
        v10::Message::StatsReply(v10::StatsReply {
            flags: 0,
            body: v10::StatsReplyBody::Flow(vec![flow(tag | 7), flow(5)]),
        }),
    );
    match s10.recv() {
        Some(Msg::V10(v10::Message::FlowMod(f))) => {
            assert_eq!(f.command, v10::FlowModCommand::DeleteStrict);
            assert_eq!((f.cookie.0, f.priority), (tag | 7, 3));
        }
        other => panic!("{other:?}"),
    }
    answer_barrier(&mut s10);
    // 1.3: one delete by cookie, then a barrier.
    match s13.recv() {
        Some(Msg::V13(v13::Message::FlowMod(f))) => {
            assert_eq!(f.command, v13::FlowModCommand::Delete);
            assert_eq!((f.cookie.0, f.cookie_mask), (tag, 0xffff << 48));
        }
        other => panic!("{other:?}"),
    }
    answer_barrier(&mut s13);
    let report = stopper.join().unwrap().unwrap();
    assert_eq!(report.flows_deleted, 2);
    assert_eq!(report.confirmed, [DatapathId(10), DatapathId(13)]);
    assert_eq!(report.unconfirmed, []);
    wait_for("both switches to hand the state back", || {
        app.downs.load(Ordering::SeqCst) == 2
    });
    assert_eq!(control.apps()[0].lifecycle, Lifecycle::Stopped);
    // A packet-in gets no answer now, and the switches stay connected.
    s10.packet_in(1, &tcp_frame(mac(1), mac(2)), true);
    assert!(s10.silent_for(Duration::from_millis(300)));
    assert_eq!(control.switches().len(), 2);
    assert!(control.stop_app("flow", false).is_err());
    // Started again: switch-up on each connected switch, answers again.
    control.start_app("flow").unwrap();
    wait_for("switch-up again", || app.ups.load(Ordering::SeqCst) == 4);
    let b = s10.packet_in(1, &tcp_frame(mac(1), mac(2)), true);
    let got = loop {
        match s10.recv() {
            Some(Msg::V10(v10::Message::PacketOut(p))) => break p.buffer_id,
            Some(_) => continue,
            None => panic!("no reply after restart"),
        }
    };
    assert_eq!(got, b);
    rt.stop();
}

#[test]
fn a_panicking_application_is_stopped_and_the_rest_carry_on() {
    /// Counts packet-ins after the one that panics.
    #[derive(Default)]
    struct Counter(AtomicUsize);
    impl App for Counter {
        type Switch = ();
        fn name(&self) -> &str {
            "counter"
        }
        fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
        fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
            batch.for_each(|_, _, _| {
                self.0.fetch_add(1, Ordering::SeqCst);
            });
        }
    }
    let counter = Arc::new(Counter::default());
    let rt = start(vec![
        AnyApp::new(Flow::default()),
        AnyApp::from(counter.clone()),
    ]);
    let control = rt.control();
    let addr = rt.local_addrs()[0];
    let mut a = TestSwitch::connect(addr, Version::V10, 1);
    let mut b = TestSwitch::connect(addr, Version::V10, 2);
    let _ = (a.recv(), b.recv());
    a.packet_in(66, &tcp_frame(mac(1), mac(2)), true);
    wait_for(
        "the panic to be reported",
        || matches!(&control.apps()[0].lifecycle, Lifecycle::Failed(m) if m.contains("cursed")),
    );
    assert_eq!(control.apps()[0].panics, 1);
    // Both switches are still there, and the other application still
    // gets their packet-ins.
    b.packet_in(1, &tcp_frame(mac(3), mac(4)), true);
    a.packet_in(2, &tcp_frame(mac(5), mac(6)), true);
    wait_for("the other application to see both", || {
        counter.0.load(Ordering::SeqCst) >= 2
    });
    assert_eq!(control.switches().len(), 2);
    assert_eq!(control.apps()[1].lifecycle, Lifecycle::Running);
    rt.stop();
}

/// The next flow-mod or barrier request the controller sends, with its
/// xid; the 1.3 table-miss flow and port description requests are skipped.
fn next_op(sw: &mut TestSwitch) -> (Xid, Msg) {
    loop {
        let raw = sw.recv_raw().expect("a flow-mod or barrier");
        let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
        match sw.decode(&raw) {
            Msg::V13(v13::Message::FlowMod(f)) if f.priority == 0 && f.cookie.0 == 0 => continue,
            Msg::V13(v13::Message::MultipartRequest(_)) => continue,
            m => return (xid, m),
        }
    }
}

/// The command, priority and cookie of a flow-mod of either version.
fn flow_mod(m: &Msg) -> (&'static str, u16, u64) {
    match m {
        Msg::V10(v10::Message::FlowMod(f)) => {
            let c = match f.command {
                v10::FlowModCommand::Add => "add",
                v10::FlowModCommand::DeleteStrict => "delete_strict",
                v10::FlowModCommand::Delete => "delete",
                _ => "other",
            };
            (c, f.priority, f.cookie.0)
        }
        Msg::V13(v13::Message::FlowMod(f)) => {
            let c = match f.command {
                v13::FlowModCommand::Add => "add",
                v13::FlowModCommand::DeleteStrict => "delete_strict",
                v13::FlowModCommand::Delete => "delete",
                _ => "other",
            };
            (c, f.priority, f.cookie.0)
        }
        other => panic!("expected a flow-mod, got {other:?}"),
    }
}

/// Answers the barrier that must come next.
fn answer_barrier(sw: &mut TestSwitch) {
    let (xid, m) = next_op(sw);
    match m {
        Msg::V10(v10::Message::BarrierRequest) => sw.reply(xid, v10::Message::BarrierReply),
        Msg::V13(v13::Message::BarrierRequest) => sw.reply(xid, v13::Message::BarrierReply),
        other => panic!("expected a barrier, got {other:?}"),
    }
}

#[test]
fn the_operator_adds_and_deletes_flows_and_hears_the_switch_refuse() {
    let rt = start(Vec::new());
    let control = rt.control();
    let addr = rt.local_addrs()[0];
    let actions = [ActionSpec::output(PortNo(2))];
    for (version, dpid) in [(Version::V10, 0x21), (Version::V13, 0x22)] {
        let mut sw = TestSwitch::connect(addr, version, dpid);
        wait_for("the switch", || control.switch(DatapathId(dpid)).is_ok());
        let add = || {
            let control = control.clone();
            std::thread::spawn(move || {
                let flow = FlowSpec {
                    priority: 77,
                    cookie: Cookie(5),
                    ..FlowSpec::new(MatchSpec::all(), &actions)
                };
                control.add_flow(DatapathId(dpid), &flow)
            })
        };
        // Accepted: the flow-mod carries the operator's tag and the
        // caller's low bits, and a barrier confirms it.
        let adder = add();
        let (_, m) = next_op(&mut sw);
        let (command, priority, cookie) = flow_mod(&m);
        assert_eq!((command, priority), ("add", 77), "{version}");
        assert_eq!(cookie & 0xffff_ffff_ffff, 5);
        assert_ne!(cookie >> 48, 0, "the operator's tag");
        answer_barrier(&mut sw);
        assert_eq!(adder.join().unwrap(), Ok(()), "{version}");
        // Refused: the error names the flow-mod's xid.
        let adder = add();
        let (xid, _) = next_op(&mut sw);
        match version {
            Version::V10 => sw.reply(
                xid,
                v10::Message::Error(v10::messages::ErrorMsg {
                    error_type: 2,
                    code: 4,
                    data: Vec::new(),
                }),
            ),
            Version::V13 => sw.reply(
                xid,
                v13::Message::Error(v13::ErrorMsg::Standard {
                    error_type: v13::ErrorType::BadAction,
                    code: 4,
                    data: Vec::new(),
                }),
            ),
        }
        answer_barrier(&mut sw);
        assert!(
            matches!(
                adder.join().unwrap(),
                Err(ControlError::Switch(RequestError::Refused(_)))
            ),
            "{version}"
        );
        // One flow deleted strictly.
        let deleter = {
            let control = control.clone();
            std::thread::spawn(move || {
                control.delete_flows(
                    DatapathId(dpid),
                    &MatchSpec::all(),
                    FlowSelection::Exactly { priority: 77 },
                    PortNo::ANY,
                )
            })
        };
        let (_, m) = next_op(&mut sw);
        let (command, priority, _) = flow_mod(&m);
        assert_eq!((command, priority), ("delete_strict", 77), "{version}");
        answer_barrier(&mut sw);
        assert_eq!(deleter.join().unwrap(), Ok(()), "{version}");
    }
    let flow = FlowSpec::new(MatchSpec::all(), &actions);
    assert_eq!(
        control.add_flow(DatapathId(0x99), &flow),
        Err(ControlError::UnknownSwitch(DatapathId(0x99)))
    );
    rt.stop();
}
