//! A cluster member's runtime (`Config::clustered`), over real loopback
//! TCP: a switch is served only once `Control::set_mastership` makes this
//! instance its master, after the switch accepted the ROLE_REQUEST; a
//! slave sends its switch nothing that changes it, and its applications
//! have no state for it.

mod support;

use baton_openflow::neutral::{ActionSpec, FlowSpec, MatchSpec, PacketOut};
use baton_openflow::v13::{ControllerRole, ErrorMsg, ErrorType, Role};
use baton_openflow::{Cookie, DatapathId, PortNo, Version, Xid, v10, v13};
use baton_runtime::control::{Control, ControlError};
use baton_runtime::{
    AnyApp, App, Config, Fence, Mastership, PacketInBatch, Runtime, SendError, SwitchCtx,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Msg, TestSwitch, mac, tcp_frame, wait_for};

/// Installs a flow at switch-up and floods every packet-in.
#[derive(Default)]
struct Flood {
    ups: AtomicUsize,
    downs: AtomicUsize,
}

impl App for Flood {
    type Switch = ();
    fn name(&self) -> &str {
        "flood"
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
        batch.for_each(|sw, _, pi| flood(sw, pi));
    }
}

fn flood(sw: &mut SwitchCtx<'_>, pi: &baton_runtime::PacketIn<'_>) {
    sw.packet_out(&PacketOut {
        payload: pi.payload(),
        in_port: pi.in_port(),
        actions: &[ActionSpec::output(PortNo::FLOOD)],
    });
}

/// A fault hook: floods every packet-in, but once armed, the worker that
/// hands it the next one freezes, as in a paused process, between
/// deciding its packet-out and sending it, until the test thaws it.
#[derive(Default)]
struct Freezes {
    armed: Mutex<Option<(Sender<()>, Receiver<()>)>>,
}

impl App for Freezes {
    type Switch = ();
    fn name(&self) -> &str {
        "freezes"
    }
    fn switch_up(&self, _: &mut SwitchCtx<'_>) {}
    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|sw, _, pi| {
            flood(sw, pi);
            if let Some((frozen, thaw)) = self.armed.lock().unwrap().take() {
                frozen.send(()).unwrap();
                thaw.recv().unwrap();
            }
        });
    }
}

fn start(app: impl Into<AnyApp>) -> Runtime {
    let cfg = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        clustered: true,
        echo_interval: Duration::from_secs(60),
        echo_timeout: Duration::from_secs(120),
        ..Config::default()
    };
    Runtime::start(cfg, vec![app.into()]).expect("runtime starts")
}

/// A clustered runtime serving `app`, and one switch of `version`
/// connected to it (undecided: a slave).
fn with_switch(
    app: impl Into<AnyApp>,
    version: Version,
    dpid: u64,
) -> (Runtime, Control, TestSwitch) {
    let rt = start(app);
    let control = rt.control();
    let sw = TestSwitch::connect(rt.local_addrs()[0], version, dpid);
    wait_for("the switch", || control.switches().len() == 1);
    (rt, control, sw)
}

/// Every message the switch receives in `d`, echoes and port
/// descriptions answered.
fn messages_for(sw: &mut TestSwitch, d: Duration) -> Vec<(Xid, Msg)> {
    let until = std::time::Instant::now() + d;
    let mut v = Vec::new();
    while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
        if let Some(raw) = sw.recv_raw_within(left) {
            if raw[1] == 2 {
                sw.answer_echo(&raw);
                continue;
            }
            let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
            let msg = sw.decode(&raw);
            if let Msg::V13(v13::Message::MultipartRequest(_)) = &msg {
                // The port description: answered by `recv`'s logic.
                continue;
            }
            v.push((xid, msg));
        }
    }
    v
}

fn changes_state(m: &Msg) -> bool {
    matches!(
        m,
        Msg::V10(v10::Message::FlowMod(_) | v10::Message::PacketOut(_))
            | Msg::V13(v13::Message::FlowMod(_) | v13::Message::PacketOut(_))
    )
}

/// Calls `set_mastership` on another thread (it waits for the switch),
/// answers the ROLE_REQUEST with `answer`, and returns the request and
/// the call's result.
fn set_role(
    control: &Control,
    sw: &mut TestSwitch,
    role: Mastership,
    generation: u64,
    answer: impl FnOnce(Role) -> v13::Message,
) -> (Role, Result<(), ControlError>) {
    let c = control.clone();
    let dpid = DatapathId(sw.dpid);
    let call = std::thread::spawn(move || c.set_mastership(dpid, role, generation));
    let (xid, request) = loop {
        let raw = sw.recv_raw().expect("a ROLE_REQUEST");
        if raw[1] == 24 {
            let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
            let Msg::V13(v13::Message::RoleRequest(r)) = sw.decode(&raw) else {
                unreachable!()
            };
            break (xid, r);
        }
    };
    sw.reply(xid, answer(request));
    (request, call.join().unwrap())
}

#[test]
fn a_switch_is_served_only_while_this_instance_is_its_master() {
    let app = Arc::new(Flood::default());
    let (rt, control, mut sw) = with_switch(app.clone(), Version::V13, 0x31);
    assert_eq!(control.switches()[0].mastership, Mastership::Slave);

    // Undecided: nothing that changes the switch, not even the session's
    // table-miss flow, and no application hears of it.
    let frame = tcp_frame(mac(1), mac(2));
    sw.packet_in(1, &frame, false);
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(!heard.iter().any(|(_, m)| changes_state(m)), "{heard:?}");
    assert_eq!(app.ups.load(Ordering::SeqCst), 0);
    assert!(control.network().switches().is_empty());
    let id = control.switches()[0].info.id;
    let flow = FlowSpec::new(MatchSpec::all(), &[]);
    assert_eq!(
        control.network().add_flow(id, &flow),
        Err(SendError::NotMaster)
    );

    // Master: the request carries the generation; then the table-miss
    // flow, and the application serves the switch from its next batch.
    let (req, done) = set_role(
        &control,
        &mut sw,
        Mastership::Master,
        7,
        v13::Message::RoleReply,
    );
    assert_eq!((req.role, req.generation_id), (ControllerRole::Master, 7));
    done.unwrap();
    let s = control.switch(DatapathId(0x31)).unwrap();
    assert_eq!(
        (s.mastership, s.role_generation),
        (Mastership::Master, Some(7))
    );
    sw.packet_in(1, &frame, false);
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    let flow_mods = heard
        .iter()
        .filter(|(_, m)| matches!(m, Msg::V13(v13::Message::FlowMod(_))))
        .count();
    assert_eq!(flow_mods, 2, "table-miss and the application's: {heard:?}");
    assert!(
        heard
            .iter()
            .any(|(_, m)| matches!(m, Msg::V13(v13::Message::PacketOut(_))))
    );
    assert_eq!(app.ups.load(Ordering::SeqCst), 1);
    assert_eq!(control.network().switches().len(), 1);

    // Slave again: the applications let go of it at its next batch, and
    // its packet-ins go unanswered. A stale refusal is an error, and the
    // role unconfirmed (the switch would keep the session EQUAL), so the
    // caller asks again with a current generation.
    let (req, done) = set_role(&control, &mut sw, Mastership::Slave, 9, |_| {
        v13::Message::Error(ErrorMsg::Standard {
            error_type: ErrorType::RoleRequestFailed,
            code: 0, // OFPRRFC_STALE
            data: Vec::new(),
        })
    });
    assert_eq!((req.role, req.generation_id), (ControllerRole::Slave, 9));
    assert!(matches!(done, Err(ControlError::Switch(_))), "{done:?}");
    let s = control.switch(DatapathId(0x31)).unwrap();
    assert_eq!((s.mastership, s.role_generation), (Mastership::Slave, None));
    sw.packet_in(1, &frame, false);
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(!heard.iter().any(|(_, m)| changes_state(m)), "{heard:?}");
    assert_eq!(app.downs.load(Ordering::SeqCst), 1);
    let (req, done) = set_role(
        &control,
        &mut sw,
        Mastership::Slave,
        31,
        v13::Message::RoleReply,
    );
    assert_eq!((req.role, req.generation_id), (ControllerRole::Slave, 31));
    done.unwrap();
    let s = control.switch(DatapathId(0x31)).unwrap();
    assert_eq!(
        (s.mastership, s.role_generation),
        (Mastership::Slave, Some(31))
    );

    // A refused master request leaves it a slave.
    let (_, done) = set_role(&control, &mut sw, Mastership::Master, 3, |_| {
        v13::Message::Error(ErrorMsg::Standard {
            error_type: ErrorType::RoleRequestFailed,
            code: 0,
            data: Vec::new(),
        })
    });
    assert!(matches!(done, Err(ControlError::Switch(_))), "{done:?}");
    assert_eq!(
        control.switch(DatapathId(0x31)).unwrap().mastership,
        Mastership::Slave
    );

    // Neither the operator's flows nor a stopped application's deletions
    // reach a switch another instance masters.
    assert_eq!(
        control.add_flow(DatapathId(0x31), &flow),
        Err(ControlError::NotMaster(DatapathId(0x31)))
    );
    let report = control.stop_app("flood", false).unwrap();
    assert!(
        report.confirmed.is_empty() && report.unconfirmed.is_empty(),
        "{report:?}"
    );
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(!heard.iter().any(|(_, m)| changes_state(m)), "{heard:?}");
    rt.stop();
}

#[test]
fn an_openflow_1_0_switch_has_no_roles_and_is_served_once_master() {
    let app = Arc::new(Flood::default());
    let (rt, control, mut sw) = with_switch(app.clone(), Version::V10, 0x10);
    control
        .set_mastership(DatapathId(0x10), Mastership::Master, 4)
        .unwrap();
    sw.packet_in(1, &tcp_frame(mac(1), mac(2)), false);
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    // No ROLE_REQUEST (1.0 has none); the application's flow and its
    // packet-out.
    assert!(heard.iter().all(|(_, m)| changes_state(m)), "{heard:?}");
    assert_eq!(heard.len(), 2, "{heard:?}");
    assert_eq!(app.ups.load(Ordering::SeqCst), 1);
    rt.stop();
}

#[test]
fn a_master_past_its_lease_sends_nothing_that_changes_its_switch() {
    let app = Arc::new(Freezes::default());
    let (rt, control, mut sw) = with_switch(app.clone(), Version::V13, 0x41);
    control.fence_mastership(Fence::Until(Instant::now() + Duration::from_secs(60)));
    let (_, done) = set_role(
        &control,
        &mut sw,
        Mastership::Master,
        5,
        v13::Message::RoleReply,
    );
    done.unwrap();
    let frame = tcp_frame(mac(1), mac(2));
    let is_packet_out = |m: &Msg| matches!(m, Msg::V13(v13::Message::PacketOut(_)));
    sw.packet_in(1, &frame, false);
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(heard.iter().any(|(_, m)| is_packet_out(m)), "{heard:?}");

    // The worker freezes with its packet-out decided, and the lease's
    // deadline passes while it is frozen (real time, a real stall of the
    // thread): thawed, it sends the switch nothing that changes it.
    let (frozen_tx, frozen) = channel();
    let (thaw, thaw_rx) = channel();
    *app.armed.lock().unwrap() = Some((frozen_tx, thaw_rx));
    let deadline = Instant::now() + Duration::from_millis(200);
    control.fence_mastership(Fence::Until(deadline));
    sw.packet_in(1, &frame, false);
    frozen
        .recv_timeout(Duration::from_secs(10))
        .expect("the worker froze");
    while Instant::now() <= deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    thaw.send(()).unwrap();
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(!heard.iter().any(|(_, m)| changes_state(m)), "{heard:?}");
    let s = control.switch(DatapathId(0x41)).unwrap();
    assert_eq!((s.mastership, s.fenced), (Mastership::Master, true));

    // Still fenced: later packet-ins go unanswered, the operator's flows
    // are refused, and no role is asked as master.
    sw.packet_in(1, &frame, false);
    let flow = FlowSpec::new(MatchSpec::all(), &[]);
    assert_eq!(
        control.add_flow(DatapathId(0x41), &flow),
        Err(ControlError::NotMaster(DatapathId(0x41)))
    );
    assert!(matches!(
        control.set_mastership(DatapathId(0x41), Mastership::Master, 6),
        Err(ControlError::Invalid(_))
    ));
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(
        !heard
            .iter()
            .any(|(_, m)| changes_state(m) || matches!(m, Msg::V13(v13::Message::RoleRequest(_)))),
        "{heard:?}"
    );

    // The lease renewed: it acts again.
    control.fence_mastership(Fence::Until(Instant::now() + Duration::from_secs(60)));
    assert!(!control.switch(DatapathId(0x41)).unwrap().fenced);
    sw.packet_in(1, &frame, false);
    let heard = messages_for(&mut sw, Duration::from_millis(300));
    assert!(heard.iter().any(|(_, m)| is_packet_out(m)), "{heard:?}");
    rt.stop();
}
