//! OpenFlow 1.0 semantics of the switch, driven through its protocol
//! machine in process (1.0.0 §4.6, §5.3-§5.5).

mod common;

use baton_openflow::Version;
use baton_openflow::switch_config::SwitchConfig;
use baton_openflow::types::{BufferId, Cookie, MacAddr, PortNo, PortReason};
use baton_openflow::v10::flow_mod::{OFPFF_CHECK_OVERLAP, OFPFF_SEND_FLOW_REM};
use baton_openflow::v10::messages::error_type;
use baton_openflow::v10::ofmatch::*;
use baton_openflow::v10::stats::{
    FlowStatsRequest, StatsReplyBody, StatsRequest, StatsRequestBody,
};
use baton_openflow::v10::{Action, FlowMod, FlowModCommand, Match10, Message, PacketOut};
use baton_switch::switch::Config;
use baton_switch::testutil::{arp_request, tcp_frame, udp_frame};
use common::*;
use std::time::Duration;

fn out(port: u32) -> Action {
    Action::Output {
        port: PortNo(port),
        max_len: 0,
    }
}

fn flow(command: FlowModCommand, m: Match10, priority: u16, actions: Vec<Action>) -> FlowMod {
    FlowMod {
        match_: m,
        cookie: Cookie(priority.into()),
        command,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: BufferId::NONE,
        out_port: PortNo::ANY,
        flags: 0,
        actions,
    }
}

fn in_port(p: u16) -> Match10 {
    Match10 {
        wildcards: OFPFW_ALL & !OFPFW_IN_PORT,
        in_port: PortNo(p.into()),
        ..Match10::ALL
    }
}

fn dl_dst(mac: [u8; 6]) -> Match10 {
    Match10 {
        wildcards: OFPFW_ALL & !OFPFW_DL_DST,
        dl_dst: MacAddr(mac),
        ..Match10::ALL
    }
}

fn errors(replies: &[Message]) -> Vec<(u16, u16)> {
    replies
        .iter()
        .filter_map(|m| match m {
            Message::Error(e) => Some((e.error_type, e.code)),
            _ => None,
        })
        .collect()
}

fn flow_stats(h: &mut Harness) -> Vec<baton_openflow::v10::stats::FlowStats> {
    let req = StatsRequest {
        flags: 0,
        body: StatsRequestBody::Flow(FlowStatsRequest {
            match_: Match10::ALL,
            table_id: 0xff,
            out_port: PortNo::ANY,
        }),
    };
    let mut all = Vec::new();
    for m in h.send10(Message::StatsRequest(req)) {
        match m {
            Message::StatsReply(r) => match r.body {
                StatsReplyBody::Flow(v) => all.extend(v),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }
    all
}

#[test]
fn features_list_ports_by_name_and_echo_barrier_config_answer() {
    let mut h = Harness::new(Version::V10, 3);
    match &h.send10(Message::FeaturesRequest)[..] {
        [Message::FeaturesReply(f)] => {
            assert_eq!(f.datapath_id.0, 1);
            assert_eq!(f.n_tables, 1);
            assert_eq!(f.actions, 0xfff);
            let names: Vec<_> = f
                .ports
                .iter()
                .map(|p| (p.port_no.0, p.name.as_str()))
                .collect();
            assert_eq!(names, [(1, "p1"), (2, "p2"), (3, "p3")]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        h.send10(Message::EchoRequest(b"hi".to_vec())),
        [Message::EchoReply(b"hi".to_vec())]
    );
    assert_eq!(h.send10(Message::BarrierRequest), [Message::BarrierReply]);
    let cfg = SwitchConfig {
        flags: 0,
        miss_send_len: 64,
    };
    assert!(h.send10(Message::SetConfig(cfg)).is_empty());
    assert_eq!(
        h.send10(Message::GetConfigRequest),
        [Message::GetConfigReply(cfg)]
    );
}

#[test]
fn a_miss_goes_to_the_controller_buffered_and_packet_out_sends_it() {
    let mut h = Harness::new(Version::V10, 3);
    let f = udp_frame(H1, H2, 53);
    h.inject(1, &f);
    let pin = match &h.async10()[..] {
        [Message::PacketIn(p)] => p.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(pin.in_port, PortNo(1));
    assert_ne!(pin.buffer_id, BufferId::NONE);
    assert_eq!(pin.total_len as usize, f.len());
    // miss_send_len defaults to 128 bytes; the frame is shorter.
    assert_eq!(pin.data, f);
    // PACKET_OUT by buffer id.
    let po = PacketOut {
        buffer_id: pin.buffer_id,
        in_port: PortNo(1),
        actions: vec![out(3)],
        data: vec![],
    };
    assert!(h.send10(Message::PacketOut(po.clone())).is_empty());
    assert_eq!(h.out(3), std::slice::from_ref(&f));
    // The buffer is used up now.
    assert_eq!(
        errors(&h.send10(Message::PacketOut(po))),
        [(error_type::BAD_REQUEST, 7)]
    );
    // PACKET_OUT with data, flooding.
    let po = PacketOut {
        buffer_id: BufferId::NONE,
        in_port: PortNo(2),
        actions: vec![Action::Output {
            port: PortNo::FLOOD,
            max_len: 0,
        }],
        data: f.clone(),
    };
    assert!(h.send10(Message::PacketOut(po)).is_empty());
    assert_eq!(h.out(1).len(), 1);
    assert_eq!(h.out(3).len(), 1);
    assert!(h.out(2).is_empty());
}

#[test]
fn when_the_buffer_pool_is_full_the_frame_goes_whole() {
    let mut config = Config::new(1, Version::V10);
    config.n_buffers = 2;
    let mut h = Harness::with_config(config, 2);
    let big = baton_switch::testutil::udp_frame_sized(H1, H2, [10, 0, 0, 1], [10, 0, 0, 2], 9, 400);
    for _ in 0..3 {
        h.inject(1, &big);
    }
    let pins: Vec<_> = h
        .async10()
        .into_iter()
        .map(|m| match m {
            Message::PacketIn(p) => (p.buffer_id != BufferId::NONE, p.data.len()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(pins, [(true, 128), (true, 128), (false, big.len())]);
}

#[test]
fn priorities_wildcards_and_counters() {
    let mut h = Harness::new(Version::V10, 3);
    // Low priority: everything to port 3; high: traffic for H2 to port 2.
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        Match10::ALL,
        1,
        vec![out(3)],
    )));
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        dl_dst(H2),
        100,
        vec![out(2)],
    )));
    assert_eq!(h.forward(1, &udp_frame(H1, H2, 53)), [2]);
    assert_eq!(h.forward(1, &udp_frame(H1, H3, 53)), [3]);
    assert_eq!(h.forward(1, &tcp_frame(H1, H2, 1, 80)), [2]);
    // An IP prefix match.
    let mut m = Match10 {
        wildcards: OFPFW_ALL & !OFPFW_DL_TYPE,
        dl_type: 0x0800,
        ..Match10::ALL
    };
    m.set_nw_dst(std::net::Ipv4Addr::new(10, 0, 0, 0), 24);
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        m,
        200,
        vec![out(1)],
    )));
    assert_eq!(h.forward(2, &udp_frame(H1, H2, 53)), [1]);
    assert_eq!(h.forward(2, &arp_request(H1)), [3]);
    let mut stats = flow_stats(&mut h);
    stats.sort_by_key(|s| s.priority);
    let counts: Vec<_> = stats.iter().map(|s| (s.priority, s.packet_count)).collect();
    assert_eq!(counts, [(1, 2), (100, 2), (200, 1)]);
    assert_eq!(stats[2].byte_count, 60);
    // The stored match is the normalised one.
    assert_eq!(stats[2].match_.nw_dst_prefix_len(), 24);
}

#[test]
fn modify_and_delete_strict_and_loose_with_out_port() {
    let mut h = Harness::new(Version::V10, 3);
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        in_port(1),
        10,
        vec![out(2)],
    )));
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        in_port(1),
        20,
        vec![out(3)],
    )));
    assert_eq!(h.forward(1, &udp_frame(H1, H2, 1)), [3]);
    // Strict modify touches only priority 20.
    h.send10(Message::FlowMod(flow(
        FlowModCommand::ModifyStrict,
        in_port(1),
        20,
        vec![out(2)],
    )));
    assert_eq!(h.forward(1, &udp_frame(H1, H2, 1)), [2]);
    // Loose delete by out_port 2 removes both.
    let mut del = flow(FlowModCommand::Delete, Match10::ALL, 0, vec![]);
    del.out_port = PortNo(3);
    h.send10(Message::FlowMod(del.clone()));
    assert_eq!(flow_stats(&mut h).len(), 2);
    del.out_port = PortNo(2);
    h.send10(Message::FlowMod(del));
    assert!(flow_stats(&mut h).is_empty());
    // 1.0: MODIFY of nothing adds.
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Modify,
        in_port(2),
        5,
        vec![out(1)],
    )));
    assert_eq!(h.forward(2, &udp_frame(H1, H2, 1)), [1]);
}

#[test]
fn check_overlap_and_table_full_answer_their_errors() {
    let mut config = Config::new(1, Version::V10);
    config.max_flows = 2;
    let mut h = Harness::with_config(config, 2);
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        in_port(1),
        5,
        vec![out(2)],
    )));
    let mut f = flow(FlowModCommand::Add, dl_dst(H2), 5, vec![out(2)]);
    f.flags = OFPFF_CHECK_OVERLAP;
    assert_eq!(
        errors(&h.send10(Message::FlowMod(f))),
        [(error_type::FLOW_MOD_FAILED, 1)]
    );
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        in_port(2),
        5,
        vec![out(1)],
    )));
    assert_eq!(
        errors(&h.send10(Message::FlowMod(flow(
            FlowModCommand::Add,
            dl_dst(H1),
            5,
            vec![]
        )))),
        [(error_type::FLOW_MOD_FAILED, 0)]
    );
    // Bad actions: an unknown port and a vendor nobody registered.
    assert_eq!(
        errors(&h.send10(Message::FlowMod(flow(
            FlowModCommand::Add,
            in_port(1),
            5,
            vec![out(9)]
        )))),
        [(error_type::BAD_ACTION, 4)]
    );
    let vendor = Action::Vendor {
        vendor: 0x2320,
        data: vec![0; 8],
    };
    assert_eq!(
        errors(&h.send10(Message::FlowMod(flow(
            FlowModCommand::Add,
            in_port(1),
            5,
            vec![vendor]
        )))),
        [(error_type::BAD_ACTION, 2)]
    );
    // A bad command.
    let bad = flow(FlowModCommand::Unknown(9), in_port(1), 5, vec![]);
    assert_eq!(
        errors(&h.send10(Message::FlowMod(bad))),
        [(error_type::FLOW_MOD_FAILED, 4)]
    );
}

#[test]
fn timeouts_expire_with_the_injected_clock_and_report_flow_removed() {
    let mut h = Harness::new(Version::V10, 2);
    let mut f = flow(FlowModCommand::Add, in_port(1), 5, vec![out(2)]);
    f.idle_timeout = 10;
    f.flags = OFPFF_SEND_FLOW_REM;
    h.send10(Message::FlowMod(f));
    let mut g = flow(FlowModCommand::Add, in_port(2), 5, vec![out(1)]);
    g.hard_timeout = 30;
    g.flags = OFPFF_SEND_FLOW_REM;
    h.send10(Message::FlowMod(g));
    h.tick(Duration::from_secs(8));
    assert_eq!(h.forward(1, &udp_frame(H1, H2, 1)), [2]);
    h.tick(Duration::from_secs(9));
    assert!(
        h.async10()
            .iter()
            .all(|m| matches!(m, Message::EchoRequest(_)))
    );
    h.tick(Duration::from_secs(2));
    let removed: Vec<_> = h
        .async10()
        .into_iter()
        .filter_map(|m| match m {
            Message::FlowRemoved(r) => {
                Some((r.match_.in_port, r.reason, r.packet_count, r.duration_sec))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        removed,
        [(
            PortNo(1),
            baton_openflow::v10::FlowRemovedReason::IdleTimeout,
            1,
            19
        )]
    );
    h.tick(Duration::from_secs(11));
    let removed: Vec<_> = h
        .async10()
        .into_iter()
        .filter_map(|m| match m {
            Message::FlowRemoved(r) => Some(r.reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        removed,
        [baton_openflow::v10::FlowRemovedReason::HardTimeout]
    );
}

#[test]
fn rewrite_actions_and_port_mod_status() {
    let mut h = Harness::new(Version::V10, 2);
    let acts = vec![
        Action::SetDlDst(MacAddr(H3)),
        Action::SetVlanVid(42),
        Action::SetNwDst(std::net::Ipv4Addr::new(10, 9, 9, 9)),
        Action::SetTpDst(8053),
        out(2),
    ];
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        in_port(1),
        5,
        acts,
    )));
    h.inject(1, &udp_frame(H1, H2, 53));
    let got = h.out(2);
    let k = baton_openflow::packet::FlowKey::extract(PortNo(2), &got[0]);
    assert_eq!(k.eth_dst, MacAddr(H3));
    assert_eq!(k.vlan.map(|v| v.vid), Some(42));
    assert!(matches!(
        k.transport(),
        baton_openflow::packet::Transport::Udp { dst: 8053, .. }
    ));
    // PORT_MOD: bring port 2 down; the controller hears of it, frames stop.
    let hw = h.switch().dp.ports.get(PortNo(2)).unwrap().spec.hw_addr;
    let pm = baton_openflow::v10::PortMod {
        port_no: PortNo(2),
        hw_addr: hw,
        config: 1,
        mask: 1,
        advertise: 0,
    };
    match &h.send10(Message::PortMod(pm))[..] {
        [Message::PortStatus(s)] => {
            assert_eq!(s.reason, PortReason::Modify);
            assert_eq!(s.desc.config & 1, 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(h.forward(1, &udp_frame(H1, H2, 53)).is_empty());
    let mut bad = pm;
    bad.hw_addr = MacAddr([9; 6]);
    assert_eq!(
        errors(&h.send10(Message::PortMod(bad))),
        [(error_type::PORT_MOD_FAILED, 1)]
    );
}

#[test]
fn aggregate_table_port_and_desc_statistics() {
    let mut h = Harness::new(Version::V10, 2);
    h.send10(Message::FlowMod(flow(
        FlowModCommand::Add,
        in_port(1),
        5,
        vec![out(2)],
    )));
    h.forward(1, &udp_frame(H1, H2, 1));
    h.forward(1, &udp_frame(H1, H2, 1));
    let ask = |body| Message::StatsRequest(StatsRequest { flags: 0, body });
    let agg = StatsRequestBody::Aggregate(FlowStatsRequest {
        match_: Match10::ALL,
        table_id: 0xff,
        out_port: PortNo::ANY,
    });
    match &h.send10(ask(agg))[..] {
        [Message::StatsReply(r)] => match &r.body {
            StatsReplyBody::Aggregate(a) => assert_eq!((a.flow_count, a.packet_count), (1, 2)),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    match &h.send10(ask(StatsRequestBody::Table))[..] {
        [Message::StatsReply(r)] => match &r.body {
            StatsReplyBody::Table(t) => {
                assert_eq!(
                    (t[0].active_count, t[0].lookup_count, t[0].matched_count),
                    (1, 2, 2)
                )
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    match &h.send10(ask(StatsRequestBody::Port {
        port_no: PortNo::ANY,
    }))[..]
    {
        [Message::StatsReply(r)] => match &r.body {
            StatsReplyBody::Port(p) => {
                assert_eq!(p.len(), 2);
                assert_eq!((p[0].counters.rx_packets, p[1].counters.tx_packets), (2, 2));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    match &h.send10(ask(StatsRequestBody::Desc))[..] {
        [Message::StatsReply(r)] => assert!(matches!(r.body, StatsReplyBody::Desc(_))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn many_flows_are_reported_in_several_replies() {
    let mut h = Harness::new(Version::V10, 2);
    for i in 0..1000u16 {
        let mut m = Match10::ALL;
        m.wildcards &= !OFPFW_TP_DST & !OFPFW_DL_TYPE & !OFPFW_NW_PROTO;
        m.dl_type = 0x0800;
        m.nw_proto = 17;
        m.tp_dst = i;
        assert!(
            h.send10(Message::FlowMod(flow(
                FlowModCommand::Add,
                m,
                5,
                vec![out(2)]
            )))
            .is_empty()
        );
    }
    let req = StatsRequest {
        flags: 0,
        body: StatsRequestBody::Flow(FlowStatsRequest {
            match_: Match10::ALL,
            table_id: 0xff,
            out_port: PortNo::ANY,
        }),
    };
    let replies = h.send10(Message::StatsRequest(req));
    assert!(replies.len() > 1);
    let mut n = 0;
    for (i, m) in replies.iter().enumerate() {
        let Message::StatsReply(r) = m else { panic!() };
        assert_eq!(r.more(), i + 1 < replies.len());
        if let StatsReplyBody::Flow(v) = &r.body {
            n += v.len();
        }
    }
    assert_eq!(n, 1000);
}

#[test]
fn a_silent_controller_is_detected_by_echo() {
    let mut h = Harness::new(Version::V10, 1);
    h.net.advance(Duration::from_secs(5));
    assert!(matches!(&h.async10()[..], [Message::EchoRequest(_)]));
    // An answer keeps it alive...
    h.send10(Message::EchoReply(vec![]));
    h.net.advance(Duration::from_secs(5));
    assert!(matches!(&h.async10()[..], [Message::EchoRequest(_)]));
    // ...silence closes it.
    h.net.advance(Duration::from_secs(5));
    assert!(h.net.connection(h.ctl).unwrap().is_closed());
}

#[test]
fn a_controller_without_the_switch_version_is_refused() {
    let now = std::time::Instant::now();
    let sw = baton_switch::switch::Switch::new(Config::new(1, Version::V10), now);
    let mut net = baton_switch::inproc::Network::new(now);
    let id = net.add_switch(sw);
    let c = net.connect(id);
    net.recv(c);
    let mut hello = Vec::new();
    let only13 = baton_openflow::hello::Hello {
        elements: vec![baton_openflow::hello::HelloElement::VersionBitmap(vec![
            1 << 4,
        ])],
    };
    only13.encode(Version::V13, baton_openflow::types::Xid(1), &mut hello);
    net.send(c, &hello);
    let out = messages(&net.recv(c));
    let (_, m) = baton_openflow::v10::decode(&out[0]).unwrap();
    assert!(
        matches!(m, Message::Error(e) if e.error_type == error_type::HELLO_FAILED && e.code == 0)
    );
    assert!(net.connection(c).unwrap().is_closed());
}
