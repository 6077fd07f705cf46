//! Proptest strategies for the OpenFlow 1.3 types (1.3.5 §7): every OXM
//! field with and without mask, every action, instruction, bucket, meter
//! band, port, and every non-multipart message.
//!
//! Shared by `roundtrip_v13.rs` and `roundtrip_v13_multipart.rs`
//! (`mod strategies_v13;`). Every value generated here survives an encode /
//! decode round trip unchanged, so the strategies respect the codec's
//! documented limits: no duplicate basic OXM field in a match, PBB I-SIDs
//! of 24 bits, non-basic OXM classes only in `Oxm::Other`, experimenter
//! data of a multiple of 8 bytes where the codec pads, port names of at
//! most 15 ASCII bytes without NUL, and messages well under 64 KiB.
#![allow(dead_code)]

use std::net::{Ipv4Addr, Ipv6Addr};

use baton_openflow::hello::{Hello, HelloElement};
use baton_openflow::types::{BufferId, Cookie, DatapathId, MacAddr, PortNo};
use baton_openflow::v13::Message;
use baton_openflow::v13::SwitchConfig;
use baton_openflow::v13::action::Action;
use baton_openflow::v13::group::{Bucket, GroupMod};
use baton_openflow::v13::instruction::Instruction;
use baton_openflow::v13::messages::{
    AsyncConfig, ErrorMsg, PortMod, PortStatus, Role, SwitchFeatures, TableMod,
};
use baton_openflow::v13::meter::{MeterBand, MeterMod};
use baton_openflow::v13::oxm::{Match13, OFPXMC_EXPERIMENTER, OFPXMC_OPENFLOW_BASIC, Oxm};
use baton_openflow::v13::port::Port;
use baton_openflow::v13::queue::{PacketQueue, QueueConfig, QueueProp};
use baton_openflow::v13::{FlowMod, FlowRemoved, PacketIn, PacketOut};
use proptest::collection::vec;
use proptest::prelude::*;

/// Short byte strings.
pub fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..=max)
}

/// Byte strings whose length is a multiple of 8.
pub fn bytes8(max_words: usize) -> impl Strategy<Value = Vec<u8>> {
    (0..=max_words).prop_flat_map(|n| vec(any::<u8>(), n * 8))
}

pub fn port_no() -> impl Strategy<Value = PortNo> {
    prop_oneof![
        any::<u32>().prop_map(PortNo),
        Just(PortNo::CONTROLLER),
        Just(PortNo::ANY),
        (1u32..64).prop_map(PortNo),
    ]
}

pub fn mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

pub fn ipv4() -> impl Strategy<Value = Ipv4Addr> {
    any::<[u8; 4]>().prop_map(Ipv4Addr::from)
}

pub fn ipv6() -> impl Strategy<Value = Ipv6Addr> {
    any::<[u8; 16]>().prop_map(Ipv6Addr::from)
}

pub fn buffer_id() -> impl Strategy<Value = BufferId> {
    prop_oneof![any::<u32>().prop_map(BufferId), Just(BufferId::NONE)]
}

macro_rules! masked {
    ($variant:ident, $s:expr) => {
        ($s, proptest::option::of($s)).prop_map(|(value, mask)| Oxm::$variant { value, mask })
    };
}

/// Every basic OXM field (maskable ones with and without mask), and
/// non-basic TLVs.
pub fn oxm() -> impl Strategy<Value = Oxm> {
    let a = prop_oneof![
        port_no().prop_map(Oxm::InPort),
        port_no().prop_map(Oxm::InPhyPort),
        masked!(Metadata, any::<u64>()),
        masked!(EthDst, mac()),
        masked!(EthSrc, mac()),
        any::<u16>().prop_map(Oxm::EthType),
        masked!(VlanVid, any::<u16>()),
        any::<u8>().prop_map(Oxm::VlanPcp),
        any::<u8>().prop_map(Oxm::IpDscp),
        any::<u8>().prop_map(Oxm::IpEcn),
        any::<u8>().prop_map(Oxm::IpProto),
        masked!(Ipv4Src, ipv4()),
        masked!(Ipv4Dst, ipv4()),
    ];
    let b = prop_oneof![
        any::<u16>().prop_map(Oxm::TcpSrc),
        any::<u16>().prop_map(Oxm::TcpDst),
        any::<u16>().prop_map(Oxm::UdpSrc),
        any::<u16>().prop_map(Oxm::UdpDst),
        any::<u16>().prop_map(Oxm::SctpSrc),
        any::<u16>().prop_map(Oxm::SctpDst),
        any::<u8>().prop_map(Oxm::Icmpv4Type),
        any::<u8>().prop_map(Oxm::Icmpv4Code),
        any::<u16>().prop_map(Oxm::ArpOp),
        masked!(ArpSpa, ipv4()),
        masked!(ArpTpa, ipv4()),
        masked!(ArpSha, mac()),
        masked!(ArpTha, mac()),
    ];
    let c = prop_oneof![
        masked!(Ipv6Src, ipv6()),
        masked!(Ipv6Dst, ipv6()),
        masked!(Ipv6Flabel, any::<u32>()),
        any::<u8>().prop_map(Oxm::Icmpv6Type),
        any::<u8>().prop_map(Oxm::Icmpv6Code),
        ipv6().prop_map(Oxm::Ipv6NdTarget),
        mac().prop_map(Oxm::Ipv6NdSll),
        mac().prop_map(Oxm::Ipv6NdTll),
        any::<u32>().prop_map(Oxm::MplsLabel),
        any::<u8>().prop_map(Oxm::MplsTc),
        any::<u8>().prop_map(Oxm::MplsBos),
        masked!(PbbIsid, 0u32..=0xff_ffff),
        masked!(TunnelId, any::<u64>()),
        masked!(Ipv6Exthdr, any::<u16>()),
    ];
    prop_oneof![13 => a, 13 => b, 14 => c, 2 => oxm_other()]
}

/// A TLV of a non-basic class (NXM or experimenter).
pub fn oxm_other() -> impl Strategy<Value = Oxm> {
    prop_oneof![
        (0u16..=0x7fff, 0u8..128, any::<bool>(), bytes(24)).prop_map(
            |(class, field, has_mask, body)| Oxm::Other {
                class,
                field,
                has_mask,
                body
            }
        ),
        (0u8..128, any::<bool>(), any::<u32>(), bytes(24)).prop_map(
            |(field, has_mask, exp, rest)| {
                let mut body = exp.to_be_bytes().to_vec();
                body.extend(rest);
                Oxm::Other {
                    class: OFPXMC_EXPERIMENTER,
                    field,
                    has_mask,
                    body,
                }
            }
        ),
    ]
}

/// A match with no basic field twice.
pub fn match13() -> impl Strategy<Value = Match13> {
    vec(oxm(), 0..8).prop_map(|v| {
        let mut fields: Vec<Oxm> = Vec::new();
        for o in v {
            let dup = o.field().is_some() && fields.iter().any(|f| f.field() == o.field());
            if !dup {
                fields.push(o);
            }
        }
        debug_assert!(
            fields
                .iter()
                .all(|f| f.header().class != OFPXMC_OPENFLOW_BASIC || f.field().is_some())
        );
        Match13 { fields }
    })
}

/// Every action type.
pub fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (port_no(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        Just(Action::CopyTtlOut),
        Just(Action::CopyTtlIn),
        any::<u8>().prop_map(Action::SetMplsTtl),
        Just(Action::DecMplsTtl),
        any::<u16>().prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        any::<u16>().prop_map(Action::PushMpls),
        any::<u16>().prop_map(Action::PopMpls),
        any::<u32>().prop_map(Action::SetQueue),
        any::<u32>().prop_map(Action::Group),
        any::<u8>().prop_map(Action::SetNwTtl),
        Just(Action::DecNwTtl),
        oxm().prop_map(Action::SetField),
        any::<u16>().prop_map(Action::PushPbb),
        Just(Action::PopPbb),
        (any::<u32>(), bytes8(3))
            .prop_map(|(experimenter, data)| Action::Experimenter { experimenter, data }),
    ]
}

pub fn actions() -> impl Strategy<Value = Vec<Action>> {
    vec(action(), 0..5)
}

/// Every instruction type.
pub fn instruction() -> impl Strategy<Value = Instruction> {
    prop_oneof![
        any::<u8>().prop_map(Instruction::GotoTable),
        (any::<u64>(), any::<u64>())
            .prop_map(|(metadata, mask)| Instruction::WriteMetadata { metadata, mask }),
        actions().prop_map(Instruction::WriteActions),
        actions().prop_map(Instruction::ApplyActions),
        Just(Instruction::ClearActions),
        any::<u32>().prop_map(Instruction::Meter),
        (any::<u32>(), bytes8(3))
            .prop_map(|(experimenter, data)| Instruction::Experimenter { experimenter, data }),
    ]
}

pub fn instructions() -> impl Strategy<Value = Vec<Instruction>> {
    vec(instruction(), 0..4)
}

pub fn bucket() -> impl Strategy<Value = Bucket> {
    (any::<u16>(), port_no(), any::<u32>(), actions()).prop_map(
        |(weight, watch_port, watch_group, actions)| Bucket {
            weight,
            watch_port,
            watch_group,
            actions,
        },
    )
}

/// Every meter band kind, unknown types included.
pub fn meter_band() -> impl Strategy<Value = MeterBand> {
    prop_oneof![
        (any::<u32>(), any::<u32>())
            .prop_map(|(rate, burst_size)| MeterBand::Drop { rate, burst_size }),
        (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(rate, burst_size, prec_level)| {
            MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level,
            }
        }),
        (any::<u32>(), any::<u32>(), any::<u32>(), bytes(12)).prop_map(
            |(rate, burst_size, experimenter, data)| MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter,
                data,
            }
        ),
        (3u16..0xffff, any::<u32>(), any::<u32>(), bytes(12)).prop_map(
            |(band_type, rate, burst_size, data)| MeterBand::Unknown {
                band_type,
                rate,
                burst_size,
                data,
            }
        ),
    ]
}

/// Port names that survive the 16-byte NUL-padded field.
pub fn port_name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_.-]{0,15}"
}

pub fn port() -> impl Strategy<Value = Port> {
    (
        port_no(),
        mac(),
        port_name(),
        any::<[u32; 4]>(),
        any::<[u32; 4]>(),
    )
        .prop_map(|(port_no, hw_addr, name, a, b)| Port {
            port_no,
            hw_addr,
            name,
            config: a[0],
            state: a[1],
            curr: a[2],
            advertised: a[3],
            supported: b[0],
            peer: b[1],
            curr_speed: b[2],
            max_speed: b[3],
        })
}

pub fn hello() -> impl Strategy<Value = Hello> {
    vec(
        prop_oneof![
            vec(any::<u32>(), 0..3).prop_map(HelloElement::VersionBitmap),
            (2u16..=0xffff, bytes(12))
                .prop_map(|(elem_type, data)| HelloElement::Unknown { elem_type, data }),
        ],
        0..3,
    )
    .prop_map(|elements| Hello { elements })
}

pub fn error_msg() -> impl Strategy<Value = ErrorMsg> {
    prop_oneof![
        (0u16..0xffff, any::<u16>(), bytes(64)).prop_map(|(t, code, data)| {
            ErrorMsg::Standard {
                error_type: t.into(),
                code,
                data,
            }
        }),
        (any::<u16>(), any::<u32>(), bytes(64)).prop_map(|(exp_type, experimenter, data)| {
            ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                data,
            }
        }),
    ]
}

pub fn packet_in() -> impl Strategy<Value = PacketIn> {
    (
        buffer_id(),
        any::<u16>(),
        any::<u8>(),
        any::<u8>(),
        any::<u64>(),
        match13(),
        bytes(128),
    )
        .prop_map(
            |(buffer_id, total_len, reason, table_id, cookie, match_, data)| PacketIn {
                buffer_id,
                total_len,
                reason: reason.into(),
                table_id,
                cookie: Cookie(cookie),
                match_,
                data,
            },
        )
}

pub fn flow_removed() -> impl Strategy<Value = FlowRemoved> {
    (
        (any::<u64>(), any::<u16>(), any::<u8>(), any::<u8>()),
        (any::<u32>(), any::<u32>(), any::<u16>(), any::<u16>()),
        (any::<u64>(), any::<u64>(), match13()),
    )
        .prop_map(
            |((c, priority, reason, table_id), (ds, dn, it, ht), (pc, bc, m))| FlowRemoved {
                cookie: Cookie(c),
                priority,
                reason: reason.into(),
                table_id,
                duration_sec: ds,
                duration_nsec: dn,
                idle_timeout: it,
                hard_timeout: ht,
                packet_count: pc,
                byte_count: bc,
                match_: m,
            },
        )
}

pub fn packet_out() -> impl Strategy<Value = PacketOut> {
    (buffer_id(), port_no(), actions(), bytes(128)).prop_map(
        |(buffer_id, in_port, actions, data)| PacketOut {
            buffer_id,
            in_port,
            actions,
            data,
        },
    )
}

pub fn flow_mod() -> impl Strategy<Value = FlowMod> {
    (
        (any::<u64>(), any::<u64>(), any::<u8>(), any::<u8>()),
        (any::<u16>(), any::<u16>(), any::<u16>(), buffer_id()),
        (port_no(), any::<u32>(), any::<u16>()),
        (match13(), instructions()),
    )
        .prop_map(
            |(
                (cookie, cookie_mask, table_id, command),
                (idle_timeout, hard_timeout, priority, buffer_id),
                (out_port, out_group, flags),
                (match_, instructions),
            )| FlowMod {
                cookie: Cookie(cookie),
                cookie_mask,
                table_id,
                command: command.into(),
                idle_timeout,
                hard_timeout,
                priority,
                buffer_id,
                out_port,
                out_group,
                flags,
                match_,
                instructions,
            },
        )
}

pub fn group_mod() -> impl Strategy<Value = GroupMod> {
    (any::<u16>(), any::<u8>(), any::<u32>(), vec(bucket(), 0..4)).prop_map(
        |(command, group_type, group_id, buckets)| GroupMod {
            command: command.into(),
            group_type: group_type.into(),
            group_id,
            buckets,
        },
    )
}

pub fn meter_mod() -> impl Strategy<Value = MeterMod> {
    (
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        vec(meter_band(), 0..4),
    )
        .prop_map(|(command, flags, meter_id, bands)| MeterMod {
            command: command.into(),
            flags,
            meter_id,
            bands,
        })
}

pub fn queue_prop() -> impl Strategy<Value = QueueProp> {
    prop_oneof![
        any::<u16>().prop_map(QueueProp::MinRate),
        any::<u16>().prop_map(QueueProp::MaxRate),
        (any::<u32>(), bytes(12))
            .prop_map(|(experimenter, data)| QueueProp::Experimenter { experimenter, data }),
        (3u16..0xffff, bytes(12))
            .prop_map(|(property, data)| QueueProp::Unknown { property, data }),
    ]
}

pub fn queue_config() -> impl Strategy<Value = QueueConfig> {
    (
        port_no(),
        vec(
            (any::<u32>(), port_no(), vec(queue_prop(), 0..4)).prop_map(
                |(queue_id, port, properties)| PacketQueue {
                    queue_id,
                    port,
                    properties,
                },
            ),
            0..4,
        ),
    )
        .prop_map(|(port, queues)| QueueConfig { port, queues })
}

pub fn switch_config() -> impl Strategy<Value = SwitchConfig> {
    (any::<u16>(), any::<u16>()).prop_map(|(flags, miss_send_len)| SwitchConfig {
        flags,
        miss_send_len,
    })
}

pub fn role() -> impl Strategy<Value = Role> {
    (any::<u32>(), any::<u64>()).prop_map(|(role, generation_id)| Role {
        role: role.into(),
        generation_id,
    })
}

pub fn async_config() -> impl Strategy<Value = AsyncConfig> {
    any::<[u32; 6]>().prop_map(|m| AsyncConfig {
        packet_in_mask: [m[0], m[1]],
        port_status_mask: [m[2], m[3]],
        flow_removed_mask: [m[4], m[5]],
    })
}

/// Every non-multipart message.
pub fn message() -> impl Strategy<Value = Message> {
    let simple = prop_oneof![
        hello().prop_map(Message::Hello),
        error_msg().prop_map(Message::Error),
        bytes(64).prop_map(Message::EchoRequest),
        bytes(64).prop_map(Message::EchoReply),
        (any::<u32>(), any::<u32>(), bytes(64)).prop_map(|(experimenter, exp_type, data)| {
            Message::Experimenter {
                experimenter,
                exp_type,
                data,
            }
        }),
        Just(Message::FeaturesRequest),
        (
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>(),
            any::<u32>()
        )
            .prop_map(|(d, n_buffers, n_tables, auxiliary_id, capabilities)| {
                Message::FeaturesReply(SwitchFeatures {
                    datapath_id: DatapathId(d),
                    n_buffers,
                    n_tables,
                    auxiliary_id,
                    capabilities,
                })
            }),
        Just(Message::GetConfigRequest),
        switch_config().prop_map(Message::GetConfigReply),
        switch_config().prop_map(Message::SetConfig),
        Just(Message::BarrierRequest),
        Just(Message::BarrierReply),
        port_no().prop_map(|port| Message::QueueGetConfigRequest { port }),
        Just(Message::GetAsyncRequest),
    ];
    let complex = prop_oneof![
        packet_in().prop_map(Message::PacketIn),
        flow_removed().prop_map(Message::FlowRemoved),
        (any::<u8>(), port()).prop_map(|(reason, desc)| Message::PortStatus(PortStatus {
            reason: reason.into(),
            desc,
        })),
        packet_out().prop_map(Message::PacketOut),
        flow_mod().prop_map(Message::FlowMod),
        group_mod().prop_map(Message::GroupMod),
        (port_no(), mac(), any::<[u32; 3]>()).prop_map(|(port_no, hw_addr, v)| {
            Message::PortMod(PortMod {
                port_no,
                hw_addr,
                config: v[0],
                mask: v[1],
                advertise: v[2],
            })
        }),
        (any::<u8>(), any::<u32>())
            .prop_map(|(table_id, config)| Message::TableMod(TableMod { table_id, config })),
        queue_config().prop_map(Message::QueueGetConfigReply),
        role().prop_map(Message::RoleRequest),
        role().prop_map(Message::RoleReply),
        async_config().prop_map(Message::GetAsyncReply),
        async_config().prop_map(Message::SetAsync),
        meter_mod().prop_map(Message::MeterMod),
    ];
    prop_oneof![simple, complex]
}
