//! OpenFlow 1.3 semantics of the switch, driven through its protocol
//! machine in process: the multi-table pipeline and action set, the
//! table-miss flow, groups, meters, multipart, roles and errors
//! (1.3.5 §5, §6.4, §7).

mod common;

use baton_openflow::Version;
use baton_openflow::types::{BufferId, Cookie, MacAddr, PortNo};
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::messages::ErrorType;
use baton_openflow::v13::meter::{MeterBand, meter_flags};
use baton_openflow::v13::multipart::{
    FlowStatsRequest, MultipartReplyBody, MultipartRequest, MultipartRequestBody,
};
use baton_openflow::v13::oxm::{Match13, OFPVID_PRESENT, Oxm};
use baton_openflow::v13::{
    Action, Bucket, ControllerRole, FlowMod, FlowModCommand, FlowModHead, GroupMod,
    GroupModCommand, GroupType, Instruction, Message, MeterMod, MeterModCommand, PacketOut, Role,
};
use baton_switch::switch::Config;
use baton_switch::testutil::{tcp_frame, udp_frame};
use common::of13::*;
use common::*;
use std::time::Duration;

fn multipart(h: &mut Harness, body: MultipartRequestBody) -> Vec<MultipartReplyBody> {
    h.send13(Message::MultipartRequest(MultipartRequest::new(body)))
        .into_iter()
        .map(|m| match m {
            Message::MultipartReply(r) => r.body,
            other => panic!("{other:?}"),
        })
        .collect()
}

fn all_flows() -> FlowStatsRequest {
    FlowStatsRequest {
        table_id: 0xff,
        out_port: PortNo::ANY,
        out_group: group_id::ANY,
        cookie: Cookie(0),
        cookie_mask: Cookie(0),
        match_: Match13::all(),
    }
}

#[test]
fn no_implicit_packet_in_without_a_table_miss_flow() {
    let mut h = Harness::new(Version::V13, 2);
    h.inject(1, &udp_frame(H1, H2, 53));
    assert!(h.async13().is_empty());
    // The table-miss flow sends to the controller with reason NO_MATCH.
    let miss = apply(vec![Action::Output {
        port: PortNo::CONTROLLER,
        max_len: 0xffff,
    }]);
    assert!(h.send13(add(0, 0, vec![], vec![miss])).is_empty());
    h.inject(1, &udp_frame(H1, H2, 53));
    match &h.async13()[..] {
        [Message::PacketIn(p)] => {
            assert_eq!(p.reason, baton_openflow::v13::PacketInReason::NoMatch);
            assert_eq!(p.buffer_id, BufferId::NONE);
            assert_eq!(p.match_.in_port(), Some(PortNo(1)));
            assert_eq!(p.cookie, Cookie(0));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn goto_metadata_and_the_action_set() {
    let mut h = Harness::new(Version::V13, 3);
    // Table 0: tag with metadata 7, write "output 2" to the set, go on.
    h.send13(add(
        0,
        10,
        vec![Oxm::InPort(PortNo(1))],
        vec![
            Instruction::WriteMetadata {
                metadata: 7,
                mask: 0xff,
            },
            Instruction::WriteActions(vec![
                out(2),
                Action::SetField(Oxm::EthDst {
                    value: MacAddr(H3),
                    mask: None,
                }),
            ]),
            Instruction::GotoTable(1),
        ],
    ));
    // Table 1: metadata 7 replaces the output with port 3.
    h.send13(add(
        1,
        10,
        vec![Oxm::Metadata {
            value: 7,
            mask: None,
        }],
        vec![Instruction::WriteActions(vec![out(3)])],
    ));
    h.inject(1, &udp_frame(H1, H2, 53));
    let got = h.out(3);
    assert_eq!(got.len(), 1);
    assert_eq!(&got[..1][0][..6], &H3);
    assert!(h.out(2).is_empty());
    // Clear-actions in table 1 drops what table 0 wrote.
    h.send13(add(
        1,
        20,
        vec![Oxm::Metadata {
            value: 7,
            mask: None,
        }],
        vec![Instruction::ClearActions],
    ));
    assert!(h.forward(1, &udp_frame(H1, H2, 53)).is_empty());
    // Apply-actions act at once, before the set.
    h.send13(add(
        1,
        30,
        vec![Oxm::Metadata {
            value: 7,
            mask: None,
        }],
        vec![apply(vec![out(1)])],
    ));
    assert_eq!(h.forward(2, &udp_frame(H1, H2, 53)), Vec::<u32>::new());
    h.send13(add(
        0,
        10,
        vec![Oxm::InPort(PortNo(2))],
        vec![
            Instruction::WriteMetadata {
                metadata: 7,
                mask: 0xff,
            },
            Instruction::WriteActions(vec![out(3)]),
            Instruction::GotoTable(1),
        ],
    ));
    assert_eq!(h.forward(2, &udp_frame(H1, H2, 53)), [1, 3]);
    // Goto backwards is refused.
    assert_eq!(
        errors(&h.send13(add(1, 1, vec![], vec![Instruction::GotoTable(0)]))),
        [(ErrorType::BadInstruction, 2)]
    );
}

#[test]
fn set_field_changes_what_the_next_table_sees() {
    let mut h = Harness::new(Version::V13, 3);
    h.send13(add(
        0,
        1,
        vec![],
        vec![
            apply(vec![
                Action::PushVlan(0x8100),
                Action::SetField(Oxm::VlanVid {
                    value: OFPVID_PRESENT | 5,
                    mask: None,
                }),
            ]),
            Instruction::GotoTable(2),
        ],
    ));
    h.send13(add(
        2,
        1,
        vec![Oxm::VlanVid {
            value: OFPVID_PRESENT | 5,
            mask: None,
        }],
        vec![apply(vec![out(3)])],
    ));
    h.inject(1, &udp_frame(H1, H2, 53));
    let got = h.out(3);
    let k = baton_openflow::packet::FlowKey::extract(PortNo(3), &got[0]);
    assert_eq!(k.vlan.map(|v| v.vid), Some(5));
}

#[test]
fn match_errors_name_the_problem() {
    let mut h = Harness::new(Version::V13, 2);
    assert_eq!(
        errors(&h.send13(add(0, 1, vec![Oxm::TcpDst(80)], vec![]))),
        [(ErrorType::BadMatch, 9)]
    );
    assert_eq!(
        errors(&h.send13(add(
            0,
            1,
            vec![
                Oxm::EthType(0x86dd),
                // A field of a class the switch does not know (NXM_1).
                Oxm::Other {
                    class: 1,
                    field: 3,
                    has_mask: false,
                    body: vec![0; 4],
                }
            ],
            vec![]
        ))),
        [(ErrorType::BadMatch, 6)]
    );
    // Set-field without its prerequisite in the match.
    let set = apply(vec![Action::SetField(Oxm::TcpDst(1))]);
    assert_eq!(
        errors(&h.send13(add(0, 1, vec![], vec![set]))),
        [(ErrorType::BadAction, 10)]
    );
    // Unknown group and unknown meter.
    assert_eq!(
        errors(&h.send13(add(0, 1, vec![], vec![apply(vec![Action::Group(9)])]))),
        [(ErrorType::BadAction, 9)]
    );
    assert_eq!(
        errors(&h.send13(add(0, 1, vec![], vec![Instruction::Meter(9)]))),
        [(ErrorType::MeterModFailed, 3)]
    );
    // A table that does not exist.
    assert_eq!(
        errors(&h.send13(add(254, 1, vec![], vec![]))),
        [(ErrorType::FlowModFailed, 2)]
    );
    // A PBB push with another ethertype than the I-TAG's.
    assert_eq!(
        errors(&h.send13(add(
            0,
            1,
            vec![],
            vec![apply(vec![Action::PushPbb(0x8100)])]
        ))),
        [(ErrorType::BadAction, 5)]
    );
}

#[test]
fn a_full_table_answers_table_full() {
    let mut config = Config::new(1, Version::V13);
    config.max_flows = 1;
    let mut h = Harness::with_config(config, 2);
    assert!(h.send13(add(0, 1, vec![], vec![])).is_empty());
    assert_eq!(
        errors(&h.send13(add(0, 2, vec![], vec![]))),
        [(ErrorType::FlowModFailed, 1)]
    );
}

fn group(command: GroupModCommand, t: GroupType, id: u32, buckets: Vec<Bucket>) -> Message {
    Message::GroupMod(GroupMod {
        command,
        group_type: t,
        group_id: id,
        buckets,
    })
}

fn bucket(weight: u16, watch: PortNo, port: u32) -> Bucket {
    Bucket {
        weight,
        watch_port: watch,
        watch_group: group_id::ANY,
        actions: vec![out(port)],
    }
}

#[test]
fn groups_all_indirect_select_and_fast_failover() {
    let mut h = Harness::new(Version::V13, 4);
    let any = PortNo::ANY;
    let to = |g: u32| vec![apply(vec![Action::Group(g)])];
    assert!(
        h.send13(group(
            GroupModCommand::Add,
            GroupType::All,
            1,
            vec![bucket(0, any, 2), bucket(0, any, 3)]
        ))
        .is_empty()
    );
    h.send13(add(0, 1, vec![Oxm::InPort(PortNo(1))], to(1)));
    assert_eq!(h.forward(1, &udp_frame(H1, H2, 1)), [2, 3]);
    // Modify it into an indirect group to port 4.
    h.send13(group(
        GroupModCommand::Modify,
        GroupType::Indirect,
        1,
        vec![bucket(0, any, 4)],
    ));
    assert_eq!(h.forward(1, &udp_frame(H1, H2, 1)), [4]);
    // Select: a flow always takes the same bucket, flows spread.
    h.send13(group(
        GroupModCommand::Add,
        GroupType::Select,
        2,
        vec![bucket(1, any, 3), bucket(1, any, 4)],
    ));
    h.send13(add(0, 1, vec![Oxm::InPort(PortNo(2))], to(2)));
    let mut seen = std::collections::BTreeSet::new();
    for sport in 0..32 {
        let f = tcp_frame(H1, H2, 1000 + sport, 80);
        let a = h.forward(2, &f);
        assert_eq!(a.len(), 1);
        assert_eq!(h.forward(2, &f), a);
        seen.insert(a[0]);
    }
    assert_eq!(seen.len(), 2);
    // Fast failover follows port liveness.
    h.send13(group(
        GroupModCommand::Add,
        GroupType::FastFailover,
        3,
        vec![bucket(0, PortNo(2), 2), bucket(0, PortNo(4), 4)],
    ));
    h.send13(add(0, 1, vec![Oxm::InPort(PortNo(3))], to(3)));
    assert_eq!(h.forward(3, &udp_frame(H1, H2, 1)), [2]);
    h.net.set_link(h.sw, PortNo(2), false);
    assert!(matches!(&h.async13()[..], [Message::PortStatus(_)]));
    assert_eq!(h.forward(3, &udp_frame(H1, H2, 1)), [4]);
    // Stats and description.
    let stats = multipart(
        &mut h,
        MultipartRequestBody::Group {
            group_id: group_id::ALL,
        },
    );
    let MultipartReplyBody::Group(g) = &stats[0] else {
        panic!()
    };
    assert_eq!(g.len(), 3);
    assert_eq!((g[0].ref_count, g[0].packet_count), (1, 2));
    let desc = multipart(&mut h, MultipartRequestBody::GroupDesc);
    let MultipartReplyBody::GroupDesc(d) = &desc[0] else {
        panic!()
    };
    assert_eq!(d[1].group_type, GroupType::Select);
    // Errors: add twice, modify unknown; deleting removes the flows.
    assert_eq!(
        errors(&h.send13(group(GroupModCommand::Add, GroupType::All, 1, vec![]))),
        [(ErrorType::GroupModFailed, 0)]
    );
    assert_eq!(
        errors(&h.send13(group(GroupModCommand::Modify, GroupType::All, 77, vec![]))),
        [(ErrorType::GroupModFailed, 8)]
    );
    h.send13(group(
        GroupModCommand::Delete,
        GroupType::All,
        group_id::ALL,
        vec![],
    ));
    let MultipartReplyBody::Flow(f) =
        &multipart(&mut h, MultipartRequestBody::Flow(all_flows()))[0]
    else {
        panic!()
    };
    assert!(f.is_empty());
}

#[test]
fn a_meter_drop_band_limits_the_rate() {
    let mut h = Harness::new(Version::V13, 2);
    let mm = MeterMod {
        command: MeterModCommand::Add,
        flags: meter_flags::PKTPS | meter_flags::BURST | meter_flags::STATS,
        meter_id: 1,
        bands: vec![MeterBand::Drop {
            rate: 10,
            burst_size: 5,
        }],
    };
    assert!(h.send13(Message::MeterMod(mm)).is_empty());
    h.send13(add(
        0,
        1,
        vec![],
        vec![Instruction::Meter(1), apply(vec![out(2)])],
    ));
    for _ in 0..8 {
        h.inject(1, &udp_frame(H1, H2, 1));
    }
    assert_eq!(h.out(2).len(), 5);
    h.tick(Duration::from_millis(500));
    for _ in 0..8 {
        h.inject(1, &udp_frame(H1, H2, 1));
    }
    assert_eq!(h.out(2).len(), 5);
    let stats = multipart(&mut h, MultipartRequestBody::Meter { meter_id: 1 });
    let MultipartReplyBody::Meter(m) = &stats[0] else {
        panic!()
    };
    assert_eq!((m[0].flow_count, m[0].packet_in_count), (1, 16));
    assert_eq!(m[0].band_stats[0].packet_band_count, 6);
    let bad = MeterMod {
        command: MeterModCommand::Add,
        flags: meter_flags::KBPS,
        meter_id: 2,
        bands: vec![MeterBand::DscpRemark {
            rate: 1,
            burst_size: 0,
            prec_level: 1,
        }],
    };
    assert_eq!(
        errors(&h.send13(Message::MeterMod(bad))),
        [(ErrorType::MeterModFailed, 8)]
    );
}

#[test]
fn multipart_flow_table_port_desc() {
    let mut h = Harness::new(Version::V13, 2);
    h.send13(add(
        0,
        5,
        vec![Oxm::InPort(PortNo(1))],
        vec![apply(vec![out(2)])],
    ));
    h.send13(add(3, 6, vec![], vec![]));
    h.inject(1, &udp_frame(H1, H2, 1));
    let MultipartReplyBody::Flow(f) =
        &multipart(&mut h, MultipartRequestBody::Flow(all_flows()))[0]
    else {
        panic!()
    };
    let got: Vec<_> = f
        .iter()
        .map(|f| (f.table_id, f.priority, f.packet_count))
        .collect();
    assert_eq!(got, [(0, 5, 1), (3, 6, 0)]);
    assert_eq!(f[0].instructions, [apply(vec![out(2)])]);
    // Cookie filter.
    let mut r = all_flows();
    r.cookie = Cookie(6);
    r.cookie_mask = Cookie(u64::MAX);
    let MultipartReplyBody::Aggregate(a) =
        &multipart(&mut h, MultipartRequestBody::Aggregate(r))[0]
    else {
        panic!()
    };
    assert_eq!(a.flow_count, 1);
    let MultipartReplyBody::Table(t) = &multipart(&mut h, MultipartRequestBody::Table)[0] else {
        panic!()
    };
    assert_eq!(t.len(), 254);
    assert_eq!(
        (t[0].active_count, t[0].lookup_count, t[0].matched_count),
        (1, 1, 1)
    );
    let MultipartReplyBody::PortDesc(p) = &multipart(&mut h, MultipartRequestBody::PortDesc)[0]
    else {
        panic!()
    };
    let names: Vec<_> = p.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["p1", "p2"]);
    let MultipartReplyBody::PortStats(s) = &multipart(
        &mut h,
        MultipartRequestBody::PortStats { port_no: PortNo(2) },
    )[0] else {
        panic!()
    };
    assert_eq!((s.len(), s[0].counters.tx_packets), (1, 1));
    // Deleting with a cookie mask leaves the others.
    let mut del = FlowMod::from_parts(
        FlowModHead {
            command: FlowModCommand::Delete,
            table_id: 0xff,
            cookie: Cookie(5),
            cookie_mask: u64::MAX,
            ..FlowModHead::default()
        },
        Match13::all(),
        vec![],
    );
    h.send13(Message::FlowMod(del.clone()));
    let MultipartReplyBody::Flow(f) =
        &multipart(&mut h, MultipartRequestBody::Flow(all_flows()))[0]
    else {
        panic!()
    };
    assert_eq!(f.len(), 1);
    del.cookie_mask = 0;
    h.send13(Message::FlowMod(del));
    let MultipartReplyBody::Flow(f) =
        &multipart(&mut h, MultipartRequestBody::Flow(all_flows()))[0]
    else {
        panic!()
    };
    assert!(f.is_empty());
}

#[test]
fn roles_slaves_are_read_only_and_stale_masters_refused() {
    let mut h = Harness::new(Version::V13, 2);
    let role = |r, g| {
        Message::RoleRequest(Role {
            role: r,
            generation_id: g,
        })
    };
    match &h.send13(role(ControllerRole::Slave, 10))[..] {
        [Message::RoleReply(r)] => {
            assert_eq!((r.role, r.generation_id), (ControllerRole::Slave, 10))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        errors(&h.send13(add(0, 1, vec![], vec![]))),
        [(ErrorType::BadRequest, 10)]
    );
    assert_eq!(
        errors(&h.send13(role(ControllerRole::Master, 9))),
        [(ErrorType::RoleRequestFailed, 0)]
    );
    match &h.send13(role(ControllerRole::Master, 11))[..] {
        [Message::RoleReply(r)] => assert_eq!(r.role, ControllerRole::Master),
        other => panic!("{other:?}"),
    }
    assert!(h.send13(add(0, 1, vec![], vec![])).is_empty());
    // A second controller taking over demotes the first.
    let other = h.net.connect(h.sw);
    h.net.recv(other);
    let mut b = Vec::new();
    baton_openflow::hello::Hello::baton().encode(
        Version::V13,
        baton_openflow::types::Xid(1),
        &mut b,
    );
    role(ControllerRole::Master, 12).encode(baton_openflow::types::Xid(2), &mut b);
    h.net.send(other, &b);
    h.net.recv(other);
    assert_eq!(
        errors(&h.send13(add(0, 2, vec![], vec![]))),
        [(ErrorType::BadRequest, 10)]
    );
    match &h.send13(role(ControllerRole::NoChange, 0))[..] {
        [Message::RoleReply(r)] => assert_eq!(r.role, ControllerRole::Slave),
        other => panic!("{other:?}"),
    }
}

#[test]
fn packet_out_to_table_runs_the_pipeline() {
    let mut h = Harness::new(Version::V13, 3);
    h.send13(add(
        0,
        1,
        vec![Oxm::InPort(PortNo(1))],
        vec![apply(vec![out(3)])],
    ));
    let po = PacketOut {
        buffer_id: BufferId::NONE,
        in_port: PortNo(1),
        actions: vec![Action::Output {
            port: PortNo::TABLE,
            max_len: 0,
        }],
        data: udp_frame(H1, H2, 1),
    };
    assert!(h.send13(Message::PacketOut(po.clone())).is_empty());
    assert_eq!(h.out(3).len(), 1);
    let mut bad = po;
    bad.in_port = PortNo(77);
    assert_eq!(
        errors(&h.send13(Message::PacketOut(bad))),
        [(ErrorType::BadRequest, 11)]
    );
}
