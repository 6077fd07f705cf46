//! Fuzz-style property tests: random and mutated controller messages
//! thrown at the protocol machine of each version never make the switch
//! panic, and everything it sends back is a well-formed message of its
//! version (errors included); frames keep flowing afterwards.

mod common;

use baton_openflow::Version;
use baton_openflow::types::{BufferId, Cookie, PortNo, Xid};
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::meter::MeterBand;
use baton_openflow::v13::multipart::{FlowStatsRequest, MultipartRequest, MultipartRequestBody};
use baton_openflow::v13::oxm::{Match13, Oxm};
use baton_openflow::{v10, v13};
use baton_switch::testutil::udp_frame;
use common::*;
use proptest::prelude::*;

fn corpus10() -> Vec<Vec<u8>> {
    use v10::Message as M;
    let out = |p| v10::Action::Output {
        port: PortNo(p),
        max_len: 128,
    };
    let fm = v10::FlowMod {
        match_: v10::Match10::ALL,
        cookie: Cookie(1),
        command: v10::FlowModCommand::Add,
        idle_timeout: 1,
        hard_timeout: 2,
        priority: 7,
        buffer_id: BufferId::NONE,
        out_port: PortNo::ANY,
        flags: 3,
        actions: vec![
            out(2),
            v10::Action::SetVlanVid(3),
            v10::Action::StripVlan,
            out(0xfffd),
        ],
    };
    let msgs = [
        M::FlowMod(fm.clone()),
        M::FlowMod(v10::FlowMod {
            command: v10::FlowModCommand::Delete,
            ..fm
        }),
        M::PacketOut(v10::PacketOut {
            buffer_id: BufferId::NONE,
            in_port: PortNo(1),
            actions: vec![out(0xfffb)],
            data: udp_frame(H1, H2, 1),
        }),
        M::StatsRequest(v10::StatsRequest {
            flags: 0,
            body: v10::StatsRequestBody::Port {
                port_no: PortNo::ANY,
            },
        }),
        M::SetConfig(baton_openflow::switch_config::SwitchConfig {
            flags: 0,
            miss_send_len: 0xffff,
        }),
        M::FeaturesRequest,
        M::EchoRequest(vec![1, 2, 3]),
        M::Vendor {
            vendor: 0x2320,
            data: vec![0, 0, 0, 1],
        },
    ];
    msgs.iter()
        .map(|m| {
            let mut b = Vec::new();
            m.encode(Xid(9), &mut b);
            b
        })
        .collect()
}

fn corpus13() -> Vec<Vec<u8>> {
    use v13::Message as M;
    let out = |p| v13::Action::Output {
        port: PortNo(p),
        max_len: 0xffff,
    };
    let fm = v13::FlowMod::from_parts(
        v13::FlowModHead {
            table_id: 1,
            idle_timeout: 3,
            flags: 1,
            ..Default::default()
        },
        Match13 {
            fields: vec![
                Oxm::InPort(PortNo(1)),
                Oxm::EthType(0x0800),
                Oxm::IpProto(6),
                Oxm::TcpDst(80),
            ],
        },
        vec![
            v13::Instruction::Meter(1),
            v13::Instruction::ApplyActions(vec![out(2), v13::Action::Group(1)]),
            v13::Instruction::WriteActions(vec![out(3)]),
            v13::Instruction::WriteMetadata {
                metadata: 1,
                mask: 1,
            },
            v13::Instruction::GotoTable(2),
        ],
    );
    let msgs = [
        M::FlowMod(fm),
        M::GroupMod(v13::GroupMod {
            command: v13::GroupModCommand::Add,
            group_type: v13::GroupType::Select,
            group_id: 1,
            buckets: vec![v13::Bucket {
                weight: 1,
                watch_port: PortNo::ANY,
                watch_group: group_id::ANY,
                actions: vec![out(2)],
            }],
        }),
        M::MeterMod(v13::MeterMod {
            command: v13::MeterModCommand::Add,
            flags: 2,
            meter_id: 1,
            bands: vec![MeterBand::Drop {
                rate: 5,
                burst_size: 1,
            }],
        }),
        M::PacketOut(v13::PacketOut {
            buffer_id: BufferId::NONE,
            in_port: PortNo(1),
            actions: vec![out(0xffff_fff9)],
            data: udp_frame(H1, H2, 1),
        }),
        M::MultipartRequest(MultipartRequest::new(MultipartRequestBody::Flow(
            FlowStatsRequest {
                table_id: 0xff,
                out_port: PortNo::ANY,
                out_group: group_id::ANY,
                cookie: Cookie(0),
                cookie_mask: Cookie(0),
                match_: Match13::all(),
            },
        ))),
        M::MultipartRequest(MultipartRequest::new(MultipartRequestBody::GroupDesc)),
        M::RoleRequest(v13::Role {
            role: v13::ControllerRole::Master,
            generation_id: 1,
        }),
        M::Experimenter {
            experimenter: 1,
            exp_type: 2,
            data: vec![3],
        },
    ];
    msgs.iter()
        .map(|m| {
            let mut b = Vec::new();
            m.encode(Xid(9), &mut b);
            b
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
}

fn mutate(mut b: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        match *m {
            Mutation::Set(i, v) if !b.is_empty() => {
                let n = b.len();
                // Keep the version byte most of the time so the body is
                // reached.
                if i % n != 0 || v % 4 == 0 {
                    b[i % n] = v;
                }
            }
            Mutation::Truncate(n) => b.truncate(n.max(8)),
            Mutation::Insert(i, v) => {
                let at = i % (b.len() + 1);
                b.insert(at, v);
            }
            _ => {}
        }
    }
    // Keep the header's length honest half of the time, so bodies are
    // parsed rather than the stream being cut.
    if b.len() >= 4 && b.len() <= 0xffff && muts.len() % 2 == 0 {
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
    }
    b
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Mutation::Set(i, v)),
        (0..200usize).prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Mutation::Insert(i, v)),
    ]
}

fn run(version: Version, inputs: Vec<Vec<u8>>) -> Result<(), TestCaseError> {
    let mut h = Harness::new(version, 3);
    for input in inputs {
        let replies = {
            h.net.send(h.ctl, &input);
            h.net.recv(h.ctl)
        };
        let mut rest = &replies[..];
        while !rest.is_empty() {
            let n = baton_openflow::frame(rest).ok().flatten();
            prop_assert!(n.is_some(), "switch sent a partial message");
            let n = n.unwrap_or(0);
            let ok = match version {
                Version::V10 => v10::decode(&rest[..n]).is_ok(),
                Version::V13 => v13::decode(&rest[..n]).is_ok(),
            };
            prop_assert!(ok, "switch sent an undecodable message {:02x?}", &rest[..n]);
            rest = &rest[n..];
        }
        h.inject(1, &udp_frame(H1, H2, 1));
        h.net.take_all_output(h.sw);
        if h.net.connection(h.ctl).is_none_or(|c| c.is_closed()) {
            break;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mutated_v10_messages_never_panic(
        picks in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(mutation(), 0..4)), 1..6),
    ) {
        let corpus = corpus10();
        let inputs = picks.into_iter().map(|(i, m)| mutate(i.get(&corpus).clone(), &m)).collect();
        run(Version::V10, inputs)?;
    }

    #[test]
    fn mutated_v13_messages_never_panic(
        picks in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(mutation(), 0..4)), 1..6),
    ) {
        let corpus = corpus13();
        let inputs = picks.into_iter().map(|(i, m)| mutate(i.get(&corpus).clone(), &m)).collect();
        run(Version::V13, inputs)?;
    }

    #[test]
    fn random_bytes_never_panic(
        version in prop_oneof![Just(Version::V10), Just(Version::V13)],
        ty in any::<u8>(),
        body in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut b = vec![version.wire(), ty % 32, 0, 0, 0, 0, 0, 7];
        b.extend(body);
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
        run(version, vec![b])?;
    }
}
