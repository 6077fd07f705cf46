//! Stopping an application deletes its flows from every switch at once
//! (issue 22 §3): switches of both versions that answer, beside others
//! that never reply, refuse, or disconnect. What each switch was sent and
//! what the stop reports are asserted; how long it takes is a benchmark's
//! business (BENCHMARKS.md), not a test's.

mod support;

use baton_openflow::neutral::{FlowSpec, MatchSpec, Message};
use baton_openflow::{Cookie, DatapathId, PortNo, Version, Xid, v10, v13};
use baton_runtime::control::{StopReport, Unconfirmed};
use baton_runtime::requests::RequestError;
use baton_runtime::{AnyApp, App, SwitchCtx};
use std::time::Duration;
use support::{Msg, TestSwitch, flow_stats10};

/// Installs one flow, cookie 7, at switch-up.
struct OneFlow;

impl App for OneFlow {
    type Switch = ();
    fn name(&self) -> &str {
        "one-flow"
    }
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) {
        sw.add_flow(&FlowSpec {
            cookie: Cookie(7),
            priority: 3,
            ..FlowSpec::new(MatchSpec::all(), &[])
        });
    }
}

/// How a switch behaves once the stop begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Answers every request.
    Answers,
    /// 1.0 only: its flows include none of the application's.
    HasNone,
    /// Never replies (as `baton bench`'s and cbench's switches).
    Silent,
    /// Answers its first request with an OFPT_ERROR.
    Refuses,
    /// Disconnects on its first request.
    Leaves,
}

/// The next message with its xid; echoes are answered, the 1.3 port
/// description request skipped.
fn next(sw: &mut TestSwitch) -> (Xid, Msg) {
    loop {
        let raw = sw.recv_raw().expect("a message from the controller");
        if raw[1] == 2 {
            sw.answer_echo(&raw);
            continue;
        }
        let xid = Xid(u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]));
        match sw.decode(&raw) {
            Msg::V13(v13::Message::MultipartRequest(r))
                if r.body == v13::multipart::MultipartRequestBody::PortDesc =>
            {
                continue;
            }
            m => return (xid, m),
        }
    }
}

/// An OFPT_ERROR of the switch's version.
fn error(version: Version) -> Msg {
    match version {
        Version::V10 => Msg::V10(v10::Message::Error(v10::messages::ErrorMsg {
            error_type: 3,
            code: 5,
            data: Vec::new(),
        })),
        Version::V13 => Msg::V13(v13::Message::Error(v13::ErrorMsg::Standard {
            error_type: v13::ErrorType::FlowModFailed,
            code: 6,
            data: Vec::new(),
        })),
    }
}

fn reply(sw: &mut TestSwitch, xid: Xid, m: Msg) {
    match m {
        Msg::V10(m) => sw.reply(xid, m),
        Msg::V13(m) => sw.reply(xid, m),
    }
}

/// Asserts that `m` is the 1.3 delete of every flow with the application's
/// cookie tag.
fn assert_delete_by_cookie(m: &Msg, tag: u64) {
    match m {
        Msg::V13(v13::Message::FlowMod(f)) => {
            assert_eq!(f.command, v13::FlowModCommand::Delete);
            assert_eq!((f.cookie.0, f.cookie_mask), (tag, 0xffff << 48));
            assert_eq!(f.table_id, v13::messages::table_id::ALL);
        }
        other => panic!("expected a delete by cookie, got {other:?}"),
    }
}

fn is_barrier(m: &Msg) -> bool {
    matches!(
        m,
        Msg::V10(v10::Message::BarrierRequest) | Msg::V13(v13::Message::BarrierRequest)
    )
}

fn is_flow_stats_request(m: &Msg) -> bool {
    matches!(m, Msg::V10(v10::Message::StatsRequest(r))
        if matches!(r.body, v10::StatsRequestBody::Flow(_)))
}

/// Asserts that `m` is what a switch of `version` is sent first: a delete
/// by cookie (1.3) or a flow statistics request (1.0).
fn assert_first(version: Version, m: &Msg, tag: u64) {
    match version {
        Version::V10 => assert!(is_flow_stats_request(m), "{m:?}"),
        Version::V13 => assert_delete_by_cookie(m, tag),
    }
}

/// Plays a switch's part of the stop, asserting what it is sent.
fn play(sw: &mut TestSwitch, role: Role, tag: u64) {
    let (xid, first) = next(sw);
    assert_first(sw.version, &first, tag);
    match (sw.version, role) {
        // A 1.3 switch gets its barrier after the delete.
        (Version::V13, Role::Silent) => assert!(is_barrier(&next(sw).1)),
        (Version::V10, Role::Silent) => {}
        (_, Role::Leaves) => sw.stream.shutdown(std::net::Shutdown::Both).unwrap(),
        (_, Role::Refuses) => {
            let m = error(sw.version);
            reply(sw, xid, m);
        }
        (Version::V13, _) => {
            let (barrier, m) = next(sw);
            assert!(is_barrier(&m), "{m:?}");
            sw.reply(barrier, v13::Message::BarrierReply);
        }
        (Version::V10, _) => {
            let mut flows = vec![flow_stats10(5, 9)];
            if role == Role::Answers {
                flows.push(flow_stats10(tag | 7, 3));
            }
            sw.reply(
                xid,
                v10::Message::StatsReply(v10::StatsReply {
                    flags: 0,
                    body: v10::StatsReplyBody::Flow(flows),
                }),
            );
            if role == Role::HasNone {
                return;
            }
            // Only the application's flow, strictly.
            match next(sw).1 {
                Msg::V10(v10::Message::FlowMod(f)) => {
                    assert_eq!(f.command, v10::FlowModCommand::DeleteStrict);
                    assert_eq!((f.cookie.0, f.priority), (tag | 7, 3));
                    assert_eq!(f.out_port, PortNo::ANY);
                }
                other => panic!("expected a strict delete, got {other:?}"),
            }
            let (barrier, m) = next(sw);
            assert!(is_barrier(&m), "{m:?}");
            sw.reply(barrier, v10::Message::BarrierReply);
        }
    }
}

/// What the stop should report of a switch in `role`: confirmed (`None`)
/// or why not.
fn expected(role: Role) -> Option<&'static str> {
    match role {
        Role::Answers | Role::HasNone => None,
        Role::Silent => Some("timed_out"),
        Role::Refuses => Some("refused"),
        Role::Leaves => Some("gone"),
    }
}

#[test]
fn stopping_an_application_asks_every_switch_at_once_and_reports_those_that_did_not_confirm() {
    let rt = support::start_quiet(2, vec![AnyApp::new(OneFlow)]);
    let control = rt.control();
    let tag = u64::from(control.apps()[0].cookie_tag) << 48;
    let addr = rt.local_addrs()[0];
    // Many that never reply beside a few of each other kind, in both
    // versions; the datapath id says the version (0x10.., 0x13..).
    let mut roles = vec![Role::Answers, Role::Answers, Role::Refuses, Role::Leaves];
    roles.extend([Role::Silent; 12]);
    let mut switches = Vec::new();
    for (version, base) in [(Version::V10, 0x1000), (Version::V13, 0x1300)] {
        let extra = (version == Version::V10).then_some(Role::HasNone);
        for (k, &role) in roles.iter().chain(&extra).enumerate() {
            let mut sw = TestSwitch::connect(addr, version, base + k as u64);
            // The application's flow, installed at switch-up.
            loop {
                match next(&mut sw).1 {
                    Msg::V10(v10::Message::FlowMod(f)) if f.cookie.0 == tag | 7 => break,
                    Msg::V13(v13::Message::FlowMod(f)) if f.cookie.0 == tag | 7 => break,
                    _ => continue,
                }
            }
            switches.push((sw, role));
        }
    }
    let stopper = {
        let control = control.clone();
        std::thread::spawn(move || control.stop_app("one-flow", false))
    };
    for (sw, role) in switches.iter_mut().filter(|(_, r)| *r != Role::Silent) {
        play(sw, *role, tag);
    }
    let report: StopReport = stopper.join().unwrap().expect("stopped");
    // The silent ones were asked too, and sent nothing more.
    for (sw, _) in switches.iter_mut().filter(|(_, r)| *r == Role::Silent) {
        play(sw, Role::Silent, tag);
        assert!(sw.silent_for(Duration::from_millis(50)), "{:#x}", sw.dpid);
    }
    // The 1.0 switch without the application's flows was sent no delete.
    for (sw, _) in switches.iter_mut().filter(|(_, r)| *r == Role::HasNone) {
        assert!(sw.silent_for(Duration::from_millis(50)));
    }
    let confirmed: Vec<DatapathId> = switches
        .iter()
        .filter(|(_, r)| expected(*r).is_none())
        .map(|(sw, _)| DatapathId(sw.dpid))
        .collect();
    assert_eq!(report.confirmed, confirmed);
    let unconfirmed: Vec<(DatapathId, &str)> = switches
        .iter()
        .filter_map(|(sw, r)| Some((DatapathId(sw.dpid), expected(*r)?)))
        .collect();
    let reported: Vec<(DatapathId, &str)> = report
        .unconfirmed
        .iter()
        .map(|u: &Unconfirmed| (u.dpid, u.why.label()))
        .collect();
    assert_eq!(reported, unconfirmed);
    // A refusal carries the switch's error.
    assert!(report.unconfirmed.iter().all(|u| match &u.why {
        RequestError::Refused(e) => matches!(
            **e,
            Message::V10(v10::Message::Error(_)) | Message::V13(v13::Message::Error(_))
        ),
        other => matches!(other, RequestError::TimedOut | RequestError::Gone),
    }));
    // 1.0: the two answering switches' flow each; 1.3: one delete by
    // cookie sent to each of the 16 switches, counted as one.
    assert_eq!(report.flows_deleted, 2 + 16);
    let app = || "one-flow".to_string();
    assert_eq!(
        control.stop_unconfirmed(),
        vec![
            (app(), "gone", 2),
            (app(), "refused", 2),
            (app(), "timed_out", 24)
        ]
    );
    rt.stop();
}
