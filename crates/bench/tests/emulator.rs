//! The emulator against controllers in the same process: the responder
//! (both OpenFlow versions), a controller that answers each request twice
//! like os-ken, one that never echoes buffer ids, and ones that fail.
//!
//! Runs are short and every assertion is about counting logic, never about
//! speed, so these pass on a loaded two-core machine. Everything binds
//! port 0.

use baton_bench::emulator::{self, Config};
use baton_bench::report::Report;
use baton_bench::responder::{Responder, ResponderMode};
use baton_bench::spec::{Mode, Rate, RateSpec, Schedule, parse_phases};
use baton_openflow::header::{Header, MsgType10, MsgType13};
use baton_openflow::hello::{self, Hello};
use baton_openflow::{BufferId, Cookie, PortNo, Version, Xid, frame, v10, v13};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

fn localhost0() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn config(addr: SocketAddr, switches: usize, mode: Mode, version: Version) -> Config {
    let mut c = Config::new(addr, switches, Duration::from_millis(400));
    c.mode = mode;
    c.version = version;
    c.threads = 2;
    c.macs = 10;
    let rates = RateSpec::Uniform(Rate::Abs(1000.0));
    c.schedule = Schedule::build(
        mode,
        switches,
        Duration::from_millis(100),
        Duration::from_millis(400),
        Some(&rates),
        None,
        None,
    )
    .unwrap();
    c
}

fn check_accounting(data: &emulator::RunData, report: &Report) {
    let mut total = 0;
    for (sw, rep) in data
        .switches
        .iter()
        .filter(|s| !s.probe)
        .zip(&report.switches)
    {
        // Per-second bins and per-segment counts see the same events.
        let by_sec: u64 = sw.per_second.iter().map(|c| c.responses).sum();
        let by_seg: u64 = sw.per_segment.iter().map(|c| c.responses).sum();
        assert_eq!(by_sec, by_seg, "switch {}", sw.index);
        assert_eq!(
            rep.counts.responses,
            rep.counts.flow_mods + rep.counts.packet_outs
        );
        total += rep.counts.responses;
    }
    let secs = report.config.duration_s;
    assert!((report.responses_per_sec - total as f64 / secs).abs() < 1e-6);
}

#[test]
fn throughput_against_the_responder_both_versions() {
    let modes = [
        ResponderMode::Template,
        ResponderMode::Learning,
        ResponderMode::LearningL2,
        ResponderMode::LearningExact,
    ];
    let cases = [Version::V10, Version::V13].map(|v| modes.map(|m| (v, m)));
    for (version, mode) in cases.into_iter().flatten() {
        // A receive buffer set as `baton bench responder` sets it by
        // default (here below stock Debian's cap); the other tests leave
        // it to autotuning.
        let r = Responder::start(localhost0(), 2, mode, Some(200 * 1024)).unwrap();
        // A counted window of 1.5 s: in a debug build, two such tests at
        // once on two cores can leave one switch unanswered for 0.4 s (see
        // the closing note of issue 23: not understood yet).
        let mut cfg = config(r.local_addr(), 3, Mode::Throughput, version);
        cfg.schedule = Schedule::build(
            Mode::Throughput,
            3,
            Duration::from_millis(100),
            Duration::from_millis(1500),
            Some(&RateSpec::Uniform(Rate::Abs(1000.0))),
            None,
            None,
        )
        .unwrap();
        let data = emulator::run(&cfg).unwrap();
        let report = Report::from_run(&data);
        assert_eq!(data.switches.len(), 3);
        for (i, s) in report.switches.iter().enumerate() {
            assert_eq!(s.dpid, i as u64 + 1);
            assert!(
                s.counts.sent > 0,
                "{version:?} {mode:?} switch {i} sent nothing"
            );
            // Answered at all: over the whole run, warm-up included (a
            // switch's first answers may come after the counted window
            // opened only on a loaded machine, which is about speed).
            let answered: u64 = data.switches[i]
                .per_second
                .iter()
                .map(|c| c.responses)
                .sum();
            assert!(answered > 0, "{version:?} {mode:?} switch {i} got nothing");
            // The responder answers each request with one FLOW_MOD naming
            // its buffer id, whatever its mode.
            assert_eq!(s.counts.packet_outs, 0);
            assert_eq!(s.requests, s.counts.responses);
            assert!(s.ids_echoed);
            assert!(s.failure.is_none());
        }
        assert!(report.latency_ms.is_some());
        assert!(report.jain > 0.0 && report.jain <= 1.0 + 1e-12);
        check_accounting(&data, &report);
        // The JSON has the fields outside checks rely on.
        let json = serde_json::to_value(&report).unwrap();
        for key in ["responses_per_sec", "jain", "switches", "probe_delay_ms"] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert!(report.summary_line().starts_with("summary: "));
        r.stop();
    }
}

#[test]
fn latency_mode_keeps_one_request_in_flight() {
    let r = Responder::start(localhost0(), 1, ResponderMode::Template, None).unwrap();
    let data = emulator::run(&config(r.local_addr(), 2, Mode::Latency, Version::V10)).unwrap();
    let report = Report::from_run(&data);
    for s in &report.switches {
        assert!(s.counts.sent > 0);
        // At most one request is outstanding at any time, so within the
        // counted period sent and answered differ by at most one.
        assert!(s.counts.sent.abs_diff(s.requests) <= 1, "{s:?}");
    }
    let lat = report.latency_ms.unwrap();
    assert!(lat.count > 0 && lat.p50 > 0.0);
    r.stop();
}

#[test]
fn phases_switch_rates_and_the_probe_reports_delay() {
    let r = Responder::start(localhost0(), 1, ResponderMode::Template, None).unwrap();
    let mut c = config(r.local_addr(), 2, Mode::Rate, Version::V10);
    c.probe = true;
    let phases = parse_phases("2000x0.5,200x0.5").unwrap();
    c.schedule = Schedule::build(
        Mode::Rate,
        2,
        Duration::from_millis(100),
        Duration::ZERO,
        None,
        Some(&phases),
        None,
    )
    .unwrap();
    let data = emulator::run(&c).unwrap();
    let report = Report::from_run(&data);
    assert_eq!(report.phases.len(), 2);
    assert_eq!(report.phases[0].offered_per_sec, Some(2000.0));
    assert_eq!(report.phases[1].offered_per_sec, Some(200.0));
    let sent: Vec<f64> = report.phases.iter().map(|p| p.sent_per_sec).collect();
    // 1000 vs 100 requests are due; the generator catches up on missed
    // time, so even a stalled thread keeps the order of magnitude.
    assert!(sent[0] > 2.0 * sent[1], "{sent:?}");
    assert!(sent[1] > 0.0);
    // Uniform weights: each switch is offered half.
    assert_eq!(
        report.switches[0].offered_per_sec,
        report.switches[1].offered_per_sec
    );
    // The probe is reported apart, not among the switches.
    assert_eq!(report.switches.len(), 2);
    assert!(data.switches.last().unwrap().probe);
    assert!(report.probe_delay_ms.is_some());
    assert!(!report.probe_samples.is_empty());
    r.stop();
}

/// A minimal blocking controller, one thread per switch. `double` answers
/// each PACKET_IN with a FLOW_MOD without buffer id and a PACKET_OUT naming
/// it (os-ken's simple_switch); `echo_ids: false` names no buffer id at
/// all. In 1.3 it only installs a table-miss FLOW_MOD, which must not
/// count, and answers no PACKET_IN.
fn toy_controller(double: bool, echo_ids: bool) -> SocketAddr {
    let l = TcpListener::bind(localhost0()).unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { return };
            std::thread::spawn(move || serve(s, double, echo_ids));
        }
    });
    addr
}

fn serve(mut s: TcpStream, double: bool, echo_ids: bool) {
    let mut out = Vec::new();
    Hello::baton().encode(Version::V13, Xid(1), &mut out);
    let _ = s.write_all(&out);
    let mut buf = vec![0u8; 1 << 16];
    let (mut start, mut end) = (0, 0);
    let mut version = None;
    loop {
        if end == buf.len() {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        match s.read(&mut buf[end..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => end += n,
        }
        out.clear();
        while let Ok(Some(len)) = frame(&buf[start..end]) {
            let msg = &buf[start..start + len];
            start += len;
            let h = Header::parse(msg).unwrap();
            if h.msg_type == 0 {
                let body = Hello::decode_body(&msg[8..], 8).unwrap_or_default();
                let v = hello::negotiate(&[Version::V10, Version::V13], h.version, &body).unwrap();
                version = Some(v);
                match v {
                    Version::V10 => v10::Message::FeaturesRequest.encode(Xid(2), &mut out),
                    Version::V13 => v13::Message::FeaturesRequest.encode(Xid(2), &mut out),
                }
                continue;
            }
            match version {
                Some(Version::V10) if h.msg_type == u8::from(MsgType10::PacketIn) => {
                    let p = v10::PacketInView::new_checked(msg).unwrap();
                    let id = if echo_ids {
                        p.buffer_id()
                    } else {
                        BufferId::NONE
                    };
                    let head = v10::FlowModHead {
                        match_: v10::Match10::ALL,
                        cookie: Cookie(0),
                        command: v10::FlowModCommand::Add,
                        idle_timeout: 0,
                        hard_timeout: 0,
                        priority: 1,
                        buffer_id: if double { BufferId::NONE } else { id },
                        out_port: PortNo::ANY,
                        flags: 0,
                    };
                    v10::encode_flow_mod(&mut out, p.xid(), &head, &[]);
                    if double {
                        v10::encode_packet_out(&mut out, p.xid(), id, p.in_port(), &[], &[]);
                    }
                }
                Some(Version::V13) if h.msg_type == u8::from(MsgType13::FeaturesReply) => {
                    let head = v13::FlowModHead {
                        cookie: Cookie(0),
                        cookie_mask: 0,
                        table_id: 0,
                        command: v13::FlowModCommand::Add,
                        idle_timeout: 0,
                        hard_timeout: 0,
                        priority: 0,
                        buffer_id: BufferId::NONE,
                        out_port: PortNo::ANY,
                        out_group: 0xffff_ffff,
                        flags: 0,
                    };
                    let to_controller = [v13::Action::Output {
                        port: PortNo::CONTROLLER,
                        max_len: 0xffff,
                    }];
                    v13::encode_flow_mod_apply(&mut out, Xid(3), &head, &[], &to_controller);
                }
                _ => {}
            }
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

#[test]
fn double_answers_count_twice_as_responses_once_as_requests() {
    let addr = toy_controller(true, true);
    let data = emulator::run(&config(addr, 2, Mode::Throughput, Version::V10)).unwrap();
    let report = Report::from_run(&data);
    for s in &report.switches {
        assert!(s.counts.packet_outs > 0);
        // Only the PACKET_OUT names the request; each answers one.
        assert_eq!(s.requests, s.counts.packet_outs);
        assert!(s.counts.flow_mods > 0);
        assert!(s.ids_echoed);
    }
    assert!(report.responses_per_sec > report.requests_per_sec);
}

#[test]
fn without_buffer_ids_requests_fall_back_to_min_of_responses_and_sent() {
    let addr = toy_controller(false, false);
    let data = emulator::run(&config(addr, 1, Mode::Throughput, Version::V10)).unwrap();
    let report = Report::from_run(&data);
    let s = &report.switches[0];
    assert!(!s.ids_echoed);
    assert!(s.counts.responses > 0);
    assert_eq!(s.requests, s.counts.responses.min(s.counts.sent));
    assert!(report.latency_ms.is_none());
    assert!(report.warnings.iter().any(|w| w.contains("buffer ids")));
}

#[test]
fn v13_table_miss_flow_mod_is_not_a_response() {
    // In 1.3 the toy controller answers no PACKET_IN: its only FLOW_MOD is
    // the table-miss, sent before the first PACKET_IN.
    let addr = toy_controller(false, true);
    let mut c = config(addr, 1, Mode::Throughput, Version::V13);
    c.learn_timeout = Duration::from_millis(100);
    let data = emulator::run(&c).unwrap();
    let sw = &data.switches[0];
    assert!(sw.per_segment.iter().all(|c| c.responses == 0));
    assert!(sw.per_segment[1].sent > 0);
}

#[test]
fn a_refused_connection_is_an_error() {
    let port = TcpListener::bind(localhost0())
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut c = config(addr, 2, Mode::Throughput, Version::V10);
    c.connect_timeout = Duration::from_secs(2);
    let e = emulator::run(&c).err().expect("no controller there");
    assert!(e.to_string().contains("handshake"), "{e}");
}

#[test]
fn a_controller_that_hangs_up_is_an_error() {
    let l = TcpListener::bind(localhost0()).unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            drop(s);
        }
    });
    let mut c = config(addr, 1, Mode::Throughput, Version::V10);
    c.connect_timeout = Duration::from_secs(2);
    assert!(emulator::run(&c).is_err());
}
