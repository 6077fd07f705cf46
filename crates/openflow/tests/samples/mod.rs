//! A corpus of sample messages with known, non-trivial field values: at
//! least one of every message type of OpenFlow 1.0.0 and 1.3.5, every 1.0
//! action, every 1.3 instruction, action, OXM field (masked and not),
//! meter band and multipart kind somewhere.
//!
//! Used through `mod samples;` by `tests/ofp_print.rs` (agreement with
//! Open vSwitch's independent decoder) and `tests/seeds.rs` (round-trip
//! guard and fuzz corpus seeds). Names are unique, stable and say what the
//! sample holds; the ofp_print test looks samples up by name, so renaming
//! one means updating its check there.
//! (Long by design: the corpus itself, one sample per message kind.)
#![allow(dead_code)]

use baton_openflow::hello::{Hello, HelloElement};
use baton_openflow::port_counters::PortCounters;
use baton_openflow::v10::{self, stats as st10};
use baton_openflow::v13::multipart::{
    self as mp, BucketCounter, ExperimenterMultipart, MultipartReply, MultipartReplyBody,
    MultipartRequest, MultipartRequestBody,
};
use baton_openflow::v13::oxm::OxmHeader;
use baton_openflow::v13::table_features::{
    ActionId, InstructionId, OxmId, TableFeatureProp, TableFeatures,
};
use baton_openflow::v13::{
    self, Action as A13, Bucket, Instruction, Match13, MeterBand, Oxm, OxmField,
    action::ActionType, instruction::InstructionType,
};
use baton_openflow::{BufferId, Cookie, DatapathId, MacAddr, PortNo};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Nicira's vendor / experimenter id.
pub const NX_VENDOR_ID: u32 = 0x0000_2320;

/// The transaction id every sample is encoded with: distinct per sample
/// index so that a mix-up between samples shows in the output.
pub fn xid_of(index: usize) -> baton_openflow::Xid {
    baton_openflow::Xid(0x100 + index as u32)
}

/// Encodes a 1.0 sample.
pub fn encode10(m: &v10::Message, xid: baton_openflow::Xid) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(xid, &mut out);
    out
}

/// Encodes a 1.3 sample.
pub fn encode13(m: &v13::Message, xid: baton_openflow::Xid) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(xid, &mut out);
    out
}

// ------------------------------------------------------------- frames

fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A 60-byte Ethernet / IPv4 / TCP SYN frame: 00:00:00:00:00:01 ->
/// 00:00:00:00:00:02, 10.0.0.1:12345 -> 10.0.0.2:80, ttl 64, 6 bytes of
/// payload.
pub fn tcp_frame() -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![
        0x45, 0x00, 0x00, 46, 0x00, 0x01, 0x00, 0x00, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    let c = ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[
        0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0x00, 0, 0, 0, 0,
    ]);
    f.extend_from_slice(b"batons");
    f
}

/// A 42-byte ARP request: who has 10.0.0.2? tell 10.0.0.1
/// (00:00:00:00:00:01), broadcast.
pub fn arp_frame() -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0x08, 0x06]);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    f
}

fn mac(last: u8) -> MacAddr {
    MacAddr([0x52, 0x54, 0x00, 0x12, 0x34, last])
}

// ------------------------------------------------------------- OpenFlow 1.0

fn phy_port(no: u16, name: &str) -> v10::PhyPort {
    use v10::port::{config, features, state};
    v10::PhyPort {
        port_no: PortNo::from_of10(no),
        hw_addr: mac(no as u8),
        name: name.to_string(),
        config: config::NO_FLOOD,
        state: state::STP_FORWARD,
        curr: features::F_1GB_FD | features::COPPER,
        advertised: features::F_1GB_FD | features::F_100MB_FD | features::AUTONEG,
        supported: features::F_1GB_FD
            | features::F_100MB_FD
            | features::F_10MB_FD
            | features::AUTONEG,
        peer: 0,
    }
}

/// in_port 1, dl_src 52:54:00:12:34:01, IPv4, TCP, nw_src 10.0.0.0/8,
/// tp_dst 80; everything else wildcarded.
pub fn match10_tcp() -> v10::Match10 {
    use v10::ofmatch::*;
    let mut m = Match10 {
        wildcards: OFPFW_ALL
            & !(OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_DL_TYPE | OFPFW_NW_PROTO | OFPFW_TP_DST),
        in_port: PortNo(1),
        dl_src: mac(1),
        dl_type: 0x0800,
        nw_proto: 6,
        tp_dst: 80,
        ..Match10::ALL
    };
    m.set_nw_src(Ipv4Addr::new(10, 0, 0, 0), 8);
    m
}

/// Exact on everything a 1.0 match has: VLAN 10 pcp 5, UDP from
/// 192.168.1.1 to 192.168.2.0/24 port 53, tos 0x20.
pub fn match10_udp_vlan() -> v10::Match10 {
    let mut m = v10::Match10 {
        wildcards: 0,
        in_port: PortNo(2),
        dl_src: mac(2),
        dl_dst: mac(3),
        dl_vlan: 10,
        dl_vlan_pcp: 5,
        dl_type: 0x0800,
        nw_tos: 0x20,
        nw_proto: 17,
        nw_src: Ipv4Addr::new(192, 168, 1, 1),
        nw_dst: Ipv4Addr::new(192, 168, 2, 0),
        tp_src: 5353,
        tp_dst: 53,
    };
    m.set_nw_src(Ipv4Addr::new(192, 168, 1, 1), 32);
    m.set_nw_dst(Ipv4Addr::new(192, 168, 2, 0), 24);
    m
}

fn flow_mod10(
    command: v10::FlowModCommand,
    match_: v10::Match10,
    actions: Vec<v10::Action>,
) -> v10::FlowMod {
    v10::FlowMod {
        match_,
        cookie: Cookie(0x0123_4567_89ab_cdef),
        command,
        idle_timeout: 60,
        hard_timeout: 300,
        priority: 0x7000,
        buffer_id: BufferId::NONE,
        out_port: PortNo::ANY,
        flags: v10::flow_mod::OFPFF_SEND_FLOW_REM | v10::flow_mod::OFPFF_CHECK_OVERLAP,
        actions,
    }
}

fn flow_stats10() -> st10::FlowStats {
    st10::FlowStats {
        table_id: 0,
        match_: match10_tcp(),
        duration_sec: 1234,
        duration_nsec: 567_000_000,
        priority: 0x7000,
        idle_timeout: 60,
        hard_timeout: 300,
        cookie: Cookie(0xc0ffee),
        packet_count: 4242,
        byte_count: 987_654,
        actions: vec![
            v10::Action::SetDlDst(mac(9)),
            v10::Action::Output {
                port: PortNo(3),
                max_len: 0,
            },
        ],
    }
}

/// Every OpenFlow 1.0 message type, most with several variants.
pub fn samples_v10() -> Vec<(&'static str, v10::Message)> {
    use st10::{StatsReply, StatsReplyBody as Rep, StatsRequest, StatsRequestBody as Req};
    use v10::Action as A;
    use v10::Message as M;
    let flow_req = st10::FlowStatsRequest {
        match_: match10_tcp(),
        table_id: 0xff,
        out_port: PortNo::ANY,
    };
    vec![
        ("v10_hello", M::Hello(Hello::default())),
        (
            "v10_hello_bitmap",
            M::Hello(Hello {
                elements: vec![HelloElement::VersionBitmap(vec![0x12])],
            }),
        ),
        (
            "v10_error_bad_request",
            // OFPET_BAD_REQUEST / OFPBRC_BAD_LEN, quoting the offending
            // message (an ECHO_REQUEST with 4 bytes of payload).
            M::Error(v10::ErrorMsg {
                error_type: v10::messages::error_type::BAD_REQUEST,
                code: 6,
                data: vec![0x01, 0x02, 0x00, 0x0c, 0, 0, 0, 0x2a, 1, 2, 3, 4],
            }),
        ),
        (
            "v10_error_flow_mod_failed",
            // OFPET_FLOW_MOD_FAILED / OFPFMFC_ALL_TABLES_FULL, quoting
            // a FEATURES_REQUEST.
            M::Error(v10::ErrorMsg {
                error_type: v10::messages::error_type::FLOW_MOD_FAILED,
                code: 0,
                data: vec![0x01, 0x05, 0x00, 0x08, 0, 0, 0, 7],
            }),
        ),
        ("v10_echo_request", M::EchoRequest(b"ping 1234".to_vec())),
        ("v10_echo_reply", M::EchoReply(b"pong 5678".to_vec())),
        ("v10_echo_request_empty", M::EchoRequest(Vec::new())),
        (
            // NXT_ROLE_REQUEST (subtype 10), role 2: NX_ROLE_SLAVE, which
            // OVS prints as "secondary".
            "v10_vendor_nx_role_request",
            M::Vendor {
                vendor: NX_VENDOR_ID,
                data: vec![0, 0, 0, 10, 0, 0, 0, 2],
            },
        ),
        ("v10_features_request", M::FeaturesRequest),
        (
            "v10_features_reply",
            M::FeaturesReply(v10::SwitchFeatures {
                datapath_id: DatapathId(0xabcd),
                n_buffers: 256,
                n_tables: 2,
                capabilities: {
                    use v10::messages::capabilities::*;
                    FLOW_STATS | TABLE_STATS | PORT_STATS | QUEUE_STATS | ARP_MATCH_IP
                },
                actions: 0x0fff,
                ports: vec![
                    phy_port(1, "s1-eth1"),
                    phy_port(2, "s1-eth2"),
                    v10::PhyPort {
                        config: v10::port::config::PORT_DOWN,
                        state: v10::port::state::LINK_DOWN,
                        ..phy_port(0xfffe, "s1") // OFPP_LOCAL
                    },
                ],
            }),
        ),
        ("v10_get_config_request", M::GetConfigRequest),
        (
            "v10_get_config_reply",
            M::GetConfigReply(v10::SwitchConfig {
                flags: v10::messages::config_flags::FRAG_NORMAL,
                miss_send_len: 128,
            }),
        ),
        (
            "v10_set_config",
            M::SetConfig(v10::SwitchConfig {
                flags: v10::messages::config_flags::FRAG_DROP,
                miss_send_len: 0xffff,
            }),
        ),
        (
            "v10_packet_in_buffered_tcp",
            M::PacketIn(v10::PacketIn {
                buffer_id: BufferId(0x1234),
                total_len: 60,
                in_port: PortNo(3),
                reason: v10::PacketInReason::Action,
                data: tcp_frame(),
            }),
        ),
        (
            "v10_packet_in_unbuffered_arp",
            M::PacketIn(v10::PacketIn {
                buffer_id: BufferId::NONE,
                total_len: 42,
                in_port: PortNo(1),
                reason: v10::PacketInReason::NoMatch,
                data: arp_frame(),
            }),
        ),
        (
            "v10_flow_removed",
            M::FlowRemoved(v10::FlowRemoved {
                match_: match10_udp_vlan(),
                cookie: Cookie(0xfeed_beef),
                priority: 1000,
                reason: v10::FlowRemovedReason::Delete,
                duration_sec: 77,
                duration_nsec: 500_000_000,
                idle_timeout: 30,
                packet_count: 12,
                byte_count: 3456,
            }),
        ),
        (
            "v10_port_status_modify",
            M::PortStatus(v10::PortStatus {
                reason: v10::PortReason::Modify,
                desc: phy_port(7, "s1-eth7"),
            }),
        ),
        (
            "v10_packet_out_unbuffered",
            M::PacketOut(v10::PacketOut {
                buffer_id: BufferId::NONE,
                in_port: PortNo(1),
                actions: vec![A::Output {
                    port: PortNo::FLOOD,
                    max_len: 0,
                }],
                data: arp_frame(),
            }),
        ),
        (
            "v10_packet_out_buffered",
            M::PacketOut(v10::PacketOut {
                buffer_id: BufferId(0x77),
                in_port: PortNo::CONTROLLER,
                actions: vec![
                    A::SetDlDst(mac(2)),
                    A::Output {
                        port: PortNo(2),
                        max_len: 0,
                    },
                ],
                data: Vec::new(),
            }),
        ),
        (
            // Every action 1.0 defines but STRIP_VLAN and VENDOR, which are
            // in the next sample.
            "v10_flow_mod_add_rewrite_actions",
            M::FlowMod(flow_mod10(
                v10::FlowModCommand::Add,
                match10_tcp(),
                vec![
                    A::SetVlanVid(10),
                    A::SetVlanPcp(5),
                    A::SetDlSrc(mac(0xa1)),
                    A::SetDlDst(mac(0xa2)),
                    A::SetNwSrc(Ipv4Addr::new(10, 1, 1, 1)),
                    A::SetNwDst(Ipv4Addr::new(10, 2, 2, 2)),
                    A::SetNwTos(0x28),
                    A::SetTpSrc(1111),
                    A::SetTpDst(2222),
                    A::Enqueue {
                        port: PortNo(4),
                        queue_id: 7,
                    },
                    A::Output {
                        port: PortNo(3),
                        max_len: 0,
                    },
                ],
            )),
        ),
        (
            "v10_flow_mod_modify_strip_vlan_vendor",
            M::FlowMod(v10::FlowMod {
                command: v10::FlowModCommand::ModifyStrict,
                priority: 1000,
                buffer_id: BufferId(0x42),
                flags: 0,
                ..flow_mod10(
                    v10::FlowModCommand::ModifyStrict,
                    match10_udp_vlan(),
                    vec![
                        A::StripVlan,
                        // NXAST_RESUBMIT (subtype 1) to port 5.
                        A::Vendor {
                            vendor: NX_VENDOR_ID,
                            data: vec![0, 1, 0, 5, 0, 0, 0, 0],
                        },
                        A::Output {
                            port: PortNo::CONTROLLER,
                            max_len: 128,
                        },
                    ],
                )
            }),
        ),
        (
            "v10_flow_mod_delete",
            M::FlowMod(v10::FlowMod {
                out_port: PortNo(3),
                flags: 0,
                idle_timeout: 0,
                hard_timeout: 0,
                ..flow_mod10(v10::FlowModCommand::Delete, v10::Match10::ALL, vec![])
            }),
        ),
        (
            "v10_port_mod",
            M::PortMod(v10::PortMod {
                port_no: PortNo(2),
                hw_addr: mac(2),
                config: v10::port::config::PORT_DOWN | v10::port::config::NO_FLOOD,
                mask: v10::port::config::PORT_DOWN
                    | v10::port::config::NO_FLOOD
                    | v10::port::config::NO_PACKET_IN,
                advertise: v10::port::features::F_100MB_FD,
            }),
        ),
        (
            "v10_stats_request_desc",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Desc,
            }),
        ),
        (
            "v10_stats_reply_desc",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Desc(Box::new(st10::DescStats {
                    mfr_desc: "Baton Networks".into(),
                    hw_desc: "Reference switch".into(),
                    sw_desc: "baton 0.1".into(),
                    serial_num: "SN-0042".into(),
                    dp_desc: "rack 3 top".into(),
                })),
            }),
        ),
        (
            "v10_stats_request_flow",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Flow(flow_req),
            }),
        ),
        (
            "v10_stats_reply_flow",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Flow(vec![
                    flow_stats10(),
                    st10::FlowStats {
                        table_id: 1,
                        match_: match10_udp_vlan(),
                        priority: 5,
                        actions: vec![],
                        ..flow_stats10()
                    },
                ]),
            }),
        ),
        (
            "v10_stats_request_aggregate",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Aggregate(st10::FlowStatsRequest {
                    match_: v10::Match10::ALL,
                    table_id: 0,
                    out_port: PortNo(2),
                }),
            }),
        ),
        (
            "v10_stats_reply_aggregate",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Aggregate(st10::AggregateStats {
                    packet_count: 1001,
                    byte_count: 64064,
                    flow_count: 17,
                }),
            }),
        ),
        (
            "v10_stats_request_table",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Table,
            }),
        ),
        (
            "v10_stats_reply_table",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Table(vec![st10::TableStats {
                    table_id: 0,
                    name: "classifier".into(),
                    wildcards: v10::ofmatch::OFPFW_ALL,
                    max_entries: 1_000_000,
                    active_count: 12,
                    lookup_count: 5000,
                    matched_count: 4000,
                }]),
            }),
        ),
        (
            "v10_stats_request_port",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Port { port_no: PortNo(1) },
            }),
        ),
        (
            "v10_stats_reply_port",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Port(vec![st10::PortStats {
                    port_no: PortNo(1),
                    counters: PortCounters::from([100, 200, 6400, 12800, 1, 2, 3, 4, 5, 6, 7, 8]),
                }]),
            }),
        ),
        (
            "v10_stats_request_queue",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Queue {
                    port_no: PortNo::ALL,
                    queue_id: st10::OFPQ_ALL,
                },
            }),
        ),
        (
            "v10_stats_reply_queue",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Queue(vec![st10::QueueStats {
                    port_no: PortNo(3),
                    queue_id: 1,
                    tx_bytes: 9999,
                    tx_packets: 99,
                    tx_errors: 9,
                }]),
            }),
        ),
        (
            // NXST_FLOW request (vendor stats subtype 0, 4 pad bytes, then
            // nx_flow_stats_request: out_port 2, match_len 0, table 1).
            "v10_stats_request_vendor_nx_flow",
            M::StatsRequest(StatsRequest {
                flags: 0,
                body: Req::Vendor {
                    vendor: NX_VENDOR_ID,
                    data: vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0],
                },
            }),
        ),
        (
            // NXST_AGGREGATE reply (subtype 1): packet 7, byte 700, flows 3.
            "v10_stats_reply_vendor_nx_aggregate",
            M::StatsReply(StatsReply {
                flags: 0,
                body: Rep::Vendor {
                    vendor: NX_VENDOR_ID,
                    data: {
                        let mut d = vec![0, 0, 0, 1, 0, 0, 0, 0];
                        d.extend_from_slice(&7u64.to_be_bytes());
                        d.extend_from_slice(&700u64.to_be_bytes());
                        d.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 0]);
                        d
                    },
                },
            }),
        ),
        ("v10_barrier_request", M::BarrierRequest),
        ("v10_barrier_reply", M::BarrierReply),
        (
            "v10_queue_get_config_request",
            M::QueueGetConfigRequest { port: PortNo(3) },
        ),
        (
            "v10_queue_get_config_reply",
            M::QueueGetConfigReply {
                port: PortNo(3),
                queues: vec![
                    v10::PacketQueue {
                        queue_id: 1,
                        properties: vec![v10::QueueProp::MinRate(500)],
                    },
                    v10::PacketQueue {
                        queue_id: 2,
                        properties: vec![],
                    },
                ],
            },
        ),
    ]
}

// ------------------------------------------------------------- OpenFlow 1.3

fn ip6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn port13(no: u32, name: &str) -> v13::Port {
    use v13::port::{port_features as f, port_state};
    v13::Port {
        port_no: PortNo(no),
        hw_addr: mac(no as u8),
        name: name.to_string(),
        config: 0,
        state: port_state::LIVE,
        curr: f::F_10GB_FD | f::COPPER,
        advertised: f::F_10GB_FD | f::F_1GB_FD | f::AUTONEG,
        supported: f::F_10GB_FD | f::F_1GB_FD | f::F_100MB_FD | f::AUTONEG,
        peer: 0,
        curr_speed: 10_000_000,
        max_speed: 10_000_000,
    }
}

fn out13(port: u32) -> A13 {
    A13::Output {
        port: PortNo(port),
        max_len: 0,
    }
}

/// IPv4 / TCP on VLAN, with nearly every OXM field such a packet has,
/// several masked: in_port, metadata/mask, eth_dst/mask,
/// eth_src, eth_type, vlan_vid/mask, vlan_pcp, ip_dscp, ip_ecn,
/// ip_proto, ipv4_src/mask, ipv4_dst, tcp_src, tcp_dst.
pub fn match13_tcp() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::InPort(PortNo(1)),
            Oxm::Metadata {
                value: 0x1200_0000_0000_00ab,
                mask: Some(0xff00_0000_0000_00ff),
            },
            Oxm::EthDst {
                value: MacAddr([0x01, 0x00, 0x5e, 0, 0, 0]),
                mask: Some(MacAddr([0xff, 0xff, 0xff, 0, 0, 0])),
            },
            Oxm::EthSrc {
                value: mac(1),
                mask: None,
            },
            Oxm::EthType(0x0800),
            Oxm::VlanVid {
                value: 0x1000 | 10,
                mask: Some(0x1fff),
            },
            Oxm::VlanPcp(5),
            Oxm::IpDscp(46),
            Oxm::IpEcn(2),
            Oxm::IpProto(6),
            Oxm::Ipv4Src {
                value: Ipv4Addr::new(10, 0, 0, 0),
                mask: Some(Ipv4Addr::new(255, 0, 0, 0)),
            },
            Oxm::Ipv4Dst {
                value: Ipv4Addr::new(10, 0, 0, 2),
                mask: None,
            },
            Oxm::TcpSrc(12345),
            Oxm::TcpDst(80),
        ],
    }
}

/// IPv6 / UDP: eth_type, ipv6_src/mask, ipv6_dst, ipv6_flabel/mask,
/// ip_proto, udp_src, udp_dst, tunnel_id/mask.
pub fn match13_ipv6_udp() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::TunnelId {
                value: 0x1234_5678,
                mask: Some(0xffff_ffff),
            },
            Oxm::EthType(0x86dd),
            Oxm::Ipv6Src {
                value: ip6("2001:db8::"),
                mask: Some(ip6("ffff:ffff::")),
            },
            Oxm::Ipv6Dst {
                value: ip6("2001:db8::1"),
                mask: None,
            },
            Oxm::Ipv6Flabel {
                value: 0x12345,
                mask: Some(0xfffff),
            },
            Oxm::IpProto(17),
            Oxm::UdpSrc(5353),
            Oxm::UdpDst(53),
        ],
    }
}

/// ICMPv6 neighbour solicitation: icmpv6_type, icmpv6_code,
/// ipv6_nd_target, ipv6_nd_sll.
pub fn match13_nd_sll() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthType(0x86dd),
            Oxm::IpProto(58),
            Oxm::Icmpv6Type(135),
            Oxm::Icmpv6Code(0),
            Oxm::Ipv6NdTarget(ip6("fe80::1")),
            Oxm::Ipv6NdSll(mac(0x55)),
        ],
    }
}

/// ICMPv6 neighbour advertisement to a solicited-node address
/// (ipv6_dst/mask) with ipv6_nd_tll.
pub fn match13_nd_tll() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthType(0x86dd),
            Oxm::Ipv6Dst {
                value: ip6("ff02::1:ff00:0"),
                mask: Some(ip6("ffff:ffff:ffff:ffff:ffff:ffff:ff00:0")),
            },
            Oxm::IpProto(58),
            Oxm::Icmpv6Type(136),
            Oxm::Ipv6NdTll(mac(0x66)),
        ],
    }
}

/// ARP: arp_op, arp_spa/mask, arp_tpa/mask, arp_sha/mask, arp_tha/mask.
pub fn match13_arp() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthType(0x0806),
            Oxm::ArpOp(1),
            Oxm::ArpSpa {
                value: Ipv4Addr::new(10, 0, 0, 0),
                mask: Some(Ipv4Addr::new(255, 255, 255, 0)),
            },
            Oxm::ArpTpa {
                value: Ipv4Addr::new(10, 0, 0, 0),
                mask: Some(Ipv4Addr::new(255, 255, 255, 252)),
            },
            Oxm::ArpSha {
                value: MacAddr([0x52, 0x54, 0, 0, 0, 0]),
                mask: Some(MacAddr([0xff, 0xff, 0xff, 0, 0, 0])),
            },
            Oxm::ArpTha {
                value: MacAddr([0, 0, 0, 0, 0, 0]),
                mask: Some(MacAddr([0xff, 0xff, 0xff, 0, 0, 0])),
            },
        ],
    }
}

/// MPLS: mpls_label, mpls_tc, mpls_bos.
pub fn match13_mpls() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthType(0x8847),
            Oxm::MplsLabel(0x12345),
            Oxm::MplsTc(3),
            Oxm::MplsBos(1),
        ],
    }
}

/// SCTP to 192.168.0.0/16 (ipv4_dst/mask): sctp_src, sctp_dst.
pub fn match13_sctp() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthType(0x0800),
            Oxm::Ipv4Dst {
                value: Ipv4Addr::new(192, 168, 0, 0),
                mask: Some(Ipv4Addr::new(255, 255, 0, 0)),
            },
            Oxm::IpProto(132),
            Oxm::SctpSrc(3868),
            Oxm::SctpDst(2905),
        ],
    }
}

/// ICMPv4 echo request from a 52:54:00 MAC (eth_src/mask):
/// icmpv4_type, icmpv4_code.
pub fn match13_icmp() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthSrc {
                value: MacAddr([0x52, 0x54, 0, 0, 0, 0]),
                mask: Some(MacAddr([0xff, 0xff, 0xff, 0, 0, 0])),
            },
            Oxm::EthType(0x0800),
            Oxm::IpProto(1),
            Oxm::Icmpv4Type(8),
            Oxm::Icmpv4Code(0),
        ],
    }
}

/// PBB: pbb_isid/mask.
pub fn match13_pbb() -> Match13 {
    Match13 {
        fields: vec![
            Oxm::EthType(0x88e7),
            Oxm::PbbIsid {
                value: 0x00ab_cd00,
                mask: Some(0x00ff_ff00),
            },
        ],
    }
}

fn flow_mod13(match_: Match13, table_id: u8, instructions: Vec<Instruction>) -> v13::Message {
    v13::Message::FlowMod(v13::FlowMod::from_parts(
        v13::FlowModHead {
            cookie: Cookie(0x0123_4567_89ab_cdef),
            cookie_mask: 0,
            table_id,
            command: v13::FlowModCommand::Add,
            idle_timeout: 60,
            hard_timeout: 300,
            priority: 0x7000,
            buffer_id: BufferId::NONE,
            out_port: PortNo::ANY,
            out_group: v13::group::group_id::ANY,
            flags: v13::flow_mod::flow_mod_flags::SEND_FLOW_REM
                | v13::flow_mod::flow_mod_flags::NO_BYT_COUNTS,
        },
        match_,
        instructions,
    ))
}

fn apply(actions: Vec<A13>) -> Vec<Instruction> {
    vec![Instruction::ApplyActions(actions)]
}

fn flow_stats13() -> mp::FlowStats {
    mp::FlowStats {
        table_id: 0,
        duration_sec: 1234,
        duration_nsec: 567_000_000,
        priority: 0x7000,
        idle_timeout: 60,
        hard_timeout: 300,
        flags: v13::flow_mod::flow_mod_flags::SEND_FLOW_REM,
        cookie: Cookie(0xc0ffee),
        packet_count: 4242,
        byte_count: 987_654,
        match_: Match13 {
            fields: vec![Oxm::InPort(PortNo(1)), Oxm::EthType(0x0806)],
        },
        instructions: vec![
            Instruction::ApplyActions(vec![out13(2)]),
            Instruction::GotoTable(3),
        ],
    }
}

fn bucket(weight: u16, watch_port: PortNo, watch_group: u32, actions: Vec<A13>) -> Bucket {
    Bucket {
        weight,
        watch_port,
        watch_group,
        actions,
    }
}

fn basic_ids(fields: &[(OxmField, bool)]) -> Vec<OxmId> {
    fields
        .iter()
        .map(|&(f, m)| OxmId::new(OxmHeader::basic(f, m)))
        .collect()
}

fn table_features(table_id: u8) -> TableFeatures {
    use InstructionType as I;
    let instructions = vec![
        InstructionId::Standard(I::GotoTable),
        InstructionId::Standard(I::WriteMetadata),
        InstructionId::Standard(I::WriteActions),
        InstructionId::Standard(I::ApplyActions),
        InstructionId::Standard(I::ClearActions),
        InstructionId::Standard(I::Meter),
    ];
    let actions = vec![
        ActionId::Standard(ActionType::Output),
        ActionId::Standard(ActionType::Group),
        ActionId::Standard(ActionType::SetQueue),
        ActionId::Standard(ActionType::PushVlan),
        ActionId::Standard(ActionType::PopVlan),
        ActionId::Standard(ActionType::SetField),
    ];
    let fields = [
        (OxmField::InPort, false),
        (OxmField::Metadata, true),
        (OxmField::EthDst, true),
        (OxmField::EthSrc, true),
        (OxmField::EthType, false),
        (OxmField::Ipv4Src, true),
        (OxmField::TcpDst, false),
    ];
    // OFPTFPT_WILDCARDS lists fields without the mask bit (OVS rejects a
    // masked header there with OFPBMC_BAD_MASK).
    let wildcards: Vec<_> = fields.iter().map(|&(f, _)| (f, false)).collect();
    let setfields = [
        (OxmField::EthDst, false),
        (OxmField::EthSrc, false),
        (OxmField::VlanVid, false),
    ];
    TableFeatures {
        table_id,
        name: format!("table{table_id}"),
        metadata_match: u64::MAX,
        metadata_write: 0xffff_0000_0000_0000,
        config: 0,
        max_entries: 1_000_000,
        properties: vec![
            TableFeatureProp::Instructions(instructions.clone()),
            TableFeatureProp::InstructionsMiss(instructions),
            TableFeatureProp::NextTables(vec![table_id + 1, table_id + 2]),
            TableFeatureProp::NextTablesMiss(vec![table_id + 1]),
            TableFeatureProp::WriteActions(actions.clone()),
            TableFeatureProp::WriteActionsMiss(actions.clone()),
            TableFeatureProp::ApplyActions(actions.clone()),
            TableFeatureProp::ApplyActionsMiss(actions),
            TableFeatureProp::Match(basic_ids(&fields)),
            TableFeatureProp::Wildcards(basic_ids(&wildcards)),
            TableFeatureProp::WriteSetfield(basic_ids(&setfields)),
            TableFeatureProp::WriteSetfieldMiss(basic_ids(&setfields)),
            TableFeatureProp::ApplySetfield(basic_ids(&setfields)),
            TableFeatureProp::ApplySetfieldMiss(basic_ids(&setfields)),
        ],
    }
}

fn mp_req(body: MultipartRequestBody) -> v13::Message {
    v13::Message::MultipartRequest(MultipartRequest { flags: 0, body })
}

fn mp_rep(body: MultipartReplyBody) -> v13::Message {
    v13::Message::MultipartReply(MultipartReply { flags: 0, body })
}

/// Every OpenFlow 1.3 message type and multipart kind, most with several
/// variants.
pub fn samples_v13() -> Vec<(&'static str, v13::Message)> {
    let mut v = samples_v13_basic();
    v.extend(samples_v13_flows());
    v.extend(samples_v13_multipart());
    v
}

fn samples_v13_basic() -> Vec<(&'static str, v13::Message)> {
    use v13::Message as M;
    vec![
        (
            "v13_hello_bitmap",
            M::Hello(Hello {
                elements: vec![HelloElement::VersionBitmap(vec![0x12])],
            }),
        ),
        ("v13_hello_empty", M::Hello(Hello::default())),
        (
            // OFPET_BAD_MATCH / OFPBMC_BAD_PREREQ, quoting a 1.3
            // FEATURES_REQUEST.
            "v13_error_bad_match",
            M::Error(v13::ErrorMsg::Standard {
                error_type: v13::ErrorType::BadMatch,
                code: 9,
                data: vec![0x04, 0x05, 0x00, 0x08, 0, 0, 0, 9],
            }),
        ),
        (
            // OFPET_METER_MOD_FAILED / OFPMMFC_UNKNOWN_METER.
            "v13_error_meter_mod_failed",
            M::Error(v13::ErrorMsg::Standard {
                error_type: v13::ErrorType::MeterModFailed,
                code: 3,
                data: vec![0x04, 0x02, 0x00, 0x08, 0, 0, 0, 3],
            }),
        ),
        (
            // OFPET_EXPERIMENTER, ONF (0x4f4e4600) type 2300:
            // OFPBFC_UNKNOWN (bundle failed, OVS's ONF1.3 mapping).
            "v13_error_experimenter_onf",
            M::Error(v13::ErrorMsg::Experimenter {
                exp_type: 2300,
                experimenter: 0x4f4e_4600,
                data: vec![0x04, 0x02, 0x00, 0x08, 0, 0, 0, 4],
            }),
        ),
        ("v13_echo_request", M::EchoRequest(b"ping 1234".to_vec())),
        ("v13_echo_reply", M::EchoReply(b"pong 5678".to_vec())),
        (
            // NXT_ROLE_REQUEST (10) as a 1.3 experimenter message, role 1:
            // NX_ROLE_MASTER, which OVS prints as "primary".
            "v13_experimenter_nx_role_request",
            M::Experimenter {
                experimenter: NX_VENDOR_ID,
                exp_type: 10,
                data: vec![0, 0, 0, 1],
            },
        ),
        ("v13_features_request", M::FeaturesRequest),
        (
            "v13_features_reply",
            M::FeaturesReply(v13::SwitchFeatures {
                datapath_id: DatapathId(0x0000_0000_0000_abcd),
                n_buffers: 256,
                n_tables: 254,
                auxiliary_id: 0,
                capabilities: {
                    use v13::messages::capabilities::*;
                    FLOW_STATS | TABLE_STATS | PORT_STATS | GROUP_STATS | QUEUE_STATS
                },
            }),
        ),
        ("v13_get_config_request", M::GetConfigRequest),
        (
            "v13_get_config_reply",
            M::GetConfigReply(v13::SwitchConfig {
                flags: v13::messages::config_flags::FRAG_NORMAL,
                miss_send_len: 128,
            }),
        ),
        (
            "v13_set_config",
            M::SetConfig(v13::SwitchConfig {
                flags: v13::messages::config_flags::FRAG_REASM,
                miss_send_len: 0xffe5,
            }),
        ),
        (
            "v13_port_status_add",
            M::PortStatus(v13::PortStatus {
                reason: v13::PortReason::Add,
                desc: port13(5, "s1-eth5"),
            }),
        ),
        (
            "v13_port_mod",
            M::PortMod(v13::PortMod {
                port_no: PortNo(2),
                hw_addr: mac(2),
                config: v13::port::port_config::PORT_DOWN,
                mask: v13::port::port_config::PORT_DOWN | v13::port::port_config::NO_PACKET_IN,
                advertise: v13::port::port_features::F_10GB_FD,
            }),
        ),
        (
            "v13_table_mod",
            M::TableMod(v13::TableMod {
                table_id: 3,
                config: 0,
            }),
        ),
        ("v13_barrier_request", M::BarrierRequest),
        ("v13_barrier_reply", M::BarrierReply),
        (
            "v13_queue_get_config_request",
            M::QueueGetConfigRequest { port: PortNo(3) },
        ),
        (
            "v13_queue_get_config_reply",
            M::QueueGetConfigReply(v13::QueueConfig {
                port: PortNo(3),
                queues: vec![
                    v13::PacketQueue {
                        queue_id: 1,
                        port: PortNo(3),
                        properties: vec![
                            v13::QueueProp::MinRate(200),
                            v13::QueueProp::MaxRate(800),
                        ],
                    },
                    v13::PacketQueue {
                        queue_id: 2,
                        port: PortNo(3),
                        properties: vec![],
                    },
                ],
            }),
        ),
        (
            "v13_role_request_master",
            M::RoleRequest(v13::Role {
                role: v13::ControllerRole::Master,
                generation_id: 0x1122_3344_5566_7788,
            }),
        ),
        (
            "v13_role_reply_slave",
            M::RoleReply(v13::Role {
                role: v13::ControllerRole::Slave,
                generation_id: 42,
            }),
        ),
        ("v13_get_async_request", M::GetAsyncRequest),
        (
            "v13_get_async_reply",
            M::GetAsyncReply(v13::AsyncConfig {
                packet_in_mask: [0b011, 0b001],
                port_status_mask: [0b111, 0b111],
                flow_removed_mask: [0b1111, 0b0000],
            }),
        ),
        (
            "v13_set_async",
            M::SetAsync(v13::AsyncConfig {
                packet_in_mask: [0b101, 0b000],
                port_status_mask: [0b001, 0b010],
                flow_removed_mask: [0b0010, 0b0100],
            }),
        ),
    ]
}

fn samples_v13_flows() -> Vec<(&'static str, v13::Message)> {
    use v13::Message as M;
    let tcp = tcp_frame();
    vec![
        (
            "v13_packet_in_buffered_tcp",
            M::PacketIn(v13::PacketIn {
                buffer_id: BufferId(0x1234),
                total_len: 60,
                reason: v13::PacketInReason::Action,
                table_id: 2,
                cookie: Cookie(0xabcdef),
                match_: Match13 {
                    fields: vec![
                        Oxm::InPort(PortNo(3)),
                        Oxm::Metadata {
                            value: 0x55,
                            mask: None,
                        },
                        Oxm::TunnelId {
                            value: 0x99,
                            mask: None,
                        },
                    ],
                },
                data: tcp,
            }),
        ),
        (
            "v13_packet_in_unbuffered_arp",
            M::PacketIn(v13::PacketIn {
                buffer_id: BufferId::NONE,
                total_len: 42,
                reason: v13::PacketInReason::NoMatch,
                table_id: 0,
                cookie: Cookie(u64::MAX),
                match_: Match13 {
                    fields: vec![Oxm::InPort(PortNo(1))],
                },
                data: arp_frame(),
            }),
        ),
        (
            "v13_flow_removed",
            M::FlowRemoved(v13::FlowRemoved {
                cookie: Cookie(0xfeed_beef),
                priority: 1000,
                reason: v13::FlowRemovedReason::HardTimeout,
                table_id: 4,
                duration_sec: 77,
                duration_nsec: 500_000_000,
                idle_timeout: 30,
                hard_timeout: 90,
                packet_count: 12,
                byte_count: 3456,
                match_: match13_ipv6_udp(),
            }),
        ),
        (
            "v13_packet_out_unbuffered",
            M::PacketOut(v13::PacketOut {
                buffer_id: BufferId::NONE,
                in_port: PortNo::CONTROLLER,
                actions: vec![A13::SetQueue(2), out13(PortNo::FLOOD.0)],
                data: arp_frame(),
            }),
        ),
        (
            "v13_packet_out_buffered_group",
            M::PacketOut(v13::PacketOut {
                buffer_id: BufferId(0x77),
                in_port: PortNo(1),
                actions: vec![A13::Group(5)],
                data: Vec::new(),
            }),
        ),
        (
            // Every instruction but experimenter, in spec order.
            "v13_flow_mod_tcp_all_instructions",
            flow_mod13(
                match13_tcp(),
                1,
                vec![
                    Instruction::Meter(7),
                    Instruction::ApplyActions(vec![
                        A13::SetField(Oxm::EthDst {
                            value: mac(0xa2),
                            mask: None,
                        }),
                        A13::SetField(Oxm::Ipv4Dst {
                            value: Ipv4Addr::new(10, 9, 9, 9),
                            mask: None,
                        }),
                        A13::SetField(Oxm::TcpDst(8080)),
                        A13::SetNwTtl(32),
                        A13::DecNwTtl,
                        A13::SetQueue(3),
                        out13(3),
                    ]),
                    Instruction::ClearActions,
                    Instruction::WriteActions(vec![A13::Group(9), out13(4)]),
                    Instruction::WriteMetadata {
                        metadata: 0x10,
                        mask: 0xff,
                    },
                    Instruction::GotoTable(5),
                ],
            ),
        ),
        (
            "v13_flow_mod_ipv6_udp",
            flow_mod13(
                match13_ipv6_udp(),
                0,
                apply(vec![
                    A13::SetField(Oxm::Ipv6Src {
                        value: ip6("2001:db8::99"),
                        mask: None,
                    }),
                    A13::SetField(Oxm::UdpSrc(5454)),
                    A13::Output {
                        port: PortNo::CONTROLLER,
                        max_len: 200,
                    },
                ]),
            ),
        ),
        (
            "v13_flow_mod_nd_sll",
            flow_mod13(match13_nd_sll(), 0, apply(vec![out13(PortNo::NORMAL.0)])),
        ),
        (
            "v13_flow_mod_nd_tll",
            flow_mod13(match13_nd_tll(), 0, apply(vec![out13(PortNo::ALL.0)])),
        ),
        (
            "v13_flow_mod_arp",
            flow_mod13(
                match13_arp(),
                0,
                apply(vec![
                    A13::PushVlan(0x8100),
                    A13::SetField(Oxm::VlanVid {
                        value: 0x1000 | 42,
                        mask: None,
                    }),
                    A13::SetField(Oxm::VlanPcp(3)),
                    out13(2),
                ]),
            ),
        ),
        (
            "v13_flow_mod_mpls_actions",
            flow_mod13(
                match13_mpls(),
                0,
                apply(vec![
                    A13::SetMplsTtl(10),
                    A13::DecMplsTtl,
                    A13::SetField(Oxm::MplsLabel(0x54321)),
                    A13::SetField(Oxm::MplsTc(1)),
                    A13::PushMpls(0x8847),
                    A13::PopMpls(0x8847),
                    A13::PopMpls(0x0800),
                    out13(2),
                ]),
            ),
        ),
        (
            "v13_flow_mod_sctp",
            flow_mod13(
                match13_sctp(),
                0,
                apply(vec![A13::SetField(Oxm::SctpDst(2906)), out13(2)]),
            ),
        ),
        (
            "v13_flow_mod_icmp_pop_vlan",
            flow_mod13(
                Match13 {
                    fields: vec![
                        Oxm::VlanVid {
                            value: 0x1000 | 7,
                            mask: None,
                        },
                        Oxm::EthType(0x0800),
                        Oxm::IpProto(1),
                        Oxm::Icmpv4Type(8),
                        Oxm::Icmpv4Code(0),
                    ],
                },
                0,
                apply(vec![A13::PopVlan, out13(2)]),
            ),
        ),
        (
            "v13_flow_mod_icmp",
            flow_mod13(
                match13_icmp(),
                0,
                apply(vec![A13::SetField(Oxm::IpDscp(10)), out13(6)]),
            ),
        ),
        (
            // NXAST_RESUBMIT_TABLE (subtype 14): in_port IN_PORT (0xfff8),
            // table 3, 3 pad bytes.
            "v13_flow_mod_nx_experimenter_action",
            flow_mod13(
                Match13 {
                    fields: vec![Oxm::InPort(PortNo(4))],
                },
                0,
                apply(vec![A13::Experimenter {
                    experimenter: NX_VENDOR_ID,
                    data: vec![0, 14, 0xff, 0xf8, 3, 0, 0, 0],
                }]),
            ),
        ),
        (
            "v13_flow_mod_delete_strict_out_group",
            M::FlowMod(v13::FlowMod::from_parts(
                v13::FlowModHead {
                    cookie: Cookie(0x1000),
                    cookie_mask: 0xf000,
                    table_id: 2,
                    command: v13::FlowModCommand::DeleteStrict,
                    idle_timeout: 0,
                    hard_timeout: 0,
                    priority: 100,
                    buffer_id: BufferId::NONE,
                    out_port: PortNo(7),
                    out_group: 3,
                    flags: 0,
                },
                Match13 {
                    fields: vec![Oxm::InPort(PortNo(2))],
                },
                vec![],
            )),
        ),
        (
            "v13_flow_mod_modify_buffered",
            M::FlowMod(v13::FlowMod::from_parts(
                v13::FlowModHead {
                    command: v13::FlowModCommand::Modify,
                    priority: 5,
                    buffer_id: BufferId(0x200),
                    ..v13::FlowModHead::default()
                },
                Match13::all(),
                apply(vec![out13(1)]),
            )),
        ),
        (
            "v13_group_mod_select",
            M::GroupMod(v13::GroupMod {
                command: v13::GroupModCommand::Add,
                group_type: v13::GroupType::Select,
                group_id: 5,
                buckets: vec![
                    bucket(
                        3,
                        PortNo::ANY,
                        v13::group::group_id::ANY,
                        vec![
                            A13::SetField(Oxm::EthDst {
                                value: mac(0x10),
                                mask: None,
                            }),
                            out13(1),
                        ],
                    ),
                    bucket(7, PortNo::ANY, v13::group::group_id::ANY, vec![out13(2)]),
                ],
            }),
        ),
        (
            "v13_group_mod_fast_failover",
            M::GroupMod(v13::GroupMod {
                command: v13::GroupModCommand::Modify,
                group_type: v13::GroupType::FastFailover,
                group_id: 6,
                buckets: vec![
                    bucket(0, PortNo(1), v13::group::group_id::ANY, vec![out13(1)]),
                    bucket(0, PortNo(2), 1, vec![out13(2)]),
                ],
            }),
        ),
        (
            "v13_group_mod_all_chained",
            M::GroupMod(v13::GroupMod {
                command: v13::GroupModCommand::Add,
                group_type: v13::GroupType::All,
                group_id: 1,
                buckets: vec![
                    bucket(
                        0,
                        PortNo::ANY,
                        v13::group::group_id::ANY,
                        vec![A13::Group(2)],
                    ),
                    bucket(0, PortNo::ANY, v13::group::group_id::ANY, vec![out13(4)]),
                ],
            }),
        ),
        (
            "v13_group_mod_indirect",
            M::GroupMod(v13::GroupMod {
                command: v13::GroupModCommand::Add,
                group_type: v13::GroupType::Indirect,
                group_id: 2,
                buckets: vec![bucket(
                    0,
                    PortNo::ANY,
                    v13::group::group_id::ANY,
                    vec![A13::DecNwTtl, out13(3)],
                )],
            }),
        ),
        (
            "v13_group_mod_delete",
            M::GroupMod(v13::GroupMod {
                command: v13::GroupModCommand::Delete,
                group_type: v13::GroupType::All,
                group_id: v13::group::group_id::ALL,
                buckets: vec![],
            }),
        ),
        (
            "v13_meter_mod_add_drop_dscp",
            M::MeterMod(v13::MeterMod {
                command: v13::MeterModCommand::Add,
                flags: v13::meter::meter_flags::KBPS
                    | v13::meter::meter_flags::BURST
                    | v13::meter::meter_flags::STATS,
                meter_id: 7,
                bands: vec![
                    MeterBand::Drop {
                        rate: 10_000,
                        burst_size: 1000,
                    },
                    MeterBand::DscpRemark {
                        rate: 5000,
                        burst_size: 500,
                        prec_level: 1,
                    },
                ],
            }),
        ),
        (
            "v13_meter_mod_delete",
            M::MeterMod(v13::MeterMod {
                command: v13::MeterModCommand::Delete,
                flags: 0,
                meter_id: 7,
                bands: vec![],
            }),
        ),
    ]
}

fn samples_v13_multipart() -> Vec<(&'static str, v13::Message)> {
    use MultipartReplyBody as Rep;
    use MultipartRequestBody as Req;
    let flow_req = mp::FlowStatsRequest {
        table_id: 0xff,
        out_port: PortNo::ANY,
        out_group: v13::group::group_id::ANY,
        cookie: Cookie(0x10),
        cookie_mask: Cookie(0xff),
        match_: Match13 {
            fields: vec![Oxm::InPort(PortNo(1)), Oxm::EthType(0x0800)],
        },
    };
    let drop_band = MeterBand::Drop {
        rate: 10_000,
        burst_size: 1000,
    };
    vec![
        ("v13_multipart_request_desc", mp_req(Req::Desc)),
        (
            "v13_multipart_reply_desc",
            mp_rep(Rep::Desc(mp::Desc {
                mfr_desc: "Baton Networks".into(),
                hw_desc: "Reference switch".into(),
                sw_desc: "baton 0.1".into(),
                serial_num: "SN-0042".into(),
                dp_desc: "rack 3 top".into(),
            })),
        ),
        (
            "v13_multipart_request_flow",
            mp_req(Req::Flow(flow_req.clone())),
        ),
        (
            "v13_multipart_reply_flow",
            mp_rep(Rep::Flow(vec![
                flow_stats13(),
                mp::FlowStats {
                    table_id: 3,
                    priority: 0,
                    match_: Match13::all(),
                    instructions: vec![],
                    ..flow_stats13()
                },
            ])),
        ),
        (
            "v13_multipart_request_aggregate",
            mp_req(Req::Aggregate(mp::FlowStatsRequest {
                table_id: 0,
                out_port: PortNo(2),
                ..flow_req
            })),
        ),
        (
            "v13_multipart_reply_aggregate",
            mp_rep(Rep::Aggregate(mp::AggregateStats {
                packet_count: 1001,
                byte_count: 64064,
                flow_count: 17,
            })),
        ),
        ("v13_multipart_request_table", mp_req(Req::Table)),
        (
            "v13_multipart_reply_table",
            mp_rep(Rep::Table(vec![
                mp::TableStats {
                    table_id: 0,
                    active_count: 12,
                    lookup_count: 5000,
                    matched_count: 4000,
                },
                mp::TableStats {
                    table_id: 1,
                    active_count: 3,
                    lookup_count: 1000,
                    matched_count: 10,
                },
            ])),
        ),
        (
            "v13_multipart_request_port_stats",
            mp_req(Req::PortStats {
                port_no: PortNo::ANY,
            }),
        ),
        (
            "v13_multipart_reply_port_stats",
            mp_rep(Rep::PortStats(vec![mp::PortStats {
                port_no: PortNo(1),
                counters: PortCounters::from([100, 200, 6400, 12800, 1, 2, 3, 4, 5, 6, 7, 8]),
                duration_sec: 3600,
                duration_nsec: 250_000_000,
            }])),
        ),
        ("v13_multipart_request_port_desc", mp_req(Req::PortDesc)),
        (
            "v13_multipart_reply_port_desc",
            mp_rep(Rep::PortDesc(vec![
                port13(1, "s1-eth1"),
                v13::Port {
                    config: v13::port::port_config::PORT_DOWN,
                    state: v13::port::port_state::LINK_DOWN,
                    ..port13(PortNo::LOCAL.0, "s1")
                },
            ])),
        ),
        (
            "v13_multipart_request_queue",
            mp_req(Req::Queue {
                port_no: PortNo(3),
                queue_id: 1,
            }),
        ),
        (
            "v13_multipart_reply_queue",
            mp_rep(Rep::Queue(vec![mp::QueueStats {
                port_no: PortNo(3),
                queue_id: 1,
                tx_bytes: 9999,
                tx_packets: 99,
                tx_errors: 9,
                duration_sec: 60,
                duration_nsec: 0,
            }])),
        ),
        (
            "v13_multipart_request_group",
            mp_req(Req::Group {
                group_id: v13::group::group_id::ALL,
            }),
        ),
        (
            "v13_multipart_reply_group",
            mp_rep(Rep::Group(vec![mp::GroupStats {
                group_id: 5,
                ref_count: 2,
                packet_count: 300,
                byte_count: 45000,
                duration_sec: 100,
                duration_nsec: 5,
                bucket_stats: vec![
                    BucketCounter {
                        packet_count: 100,
                        byte_count: 15000,
                    },
                    BucketCounter {
                        packet_count: 200,
                        byte_count: 30000,
                    },
                ],
            }])),
        ),
        ("v13_multipart_request_group_desc", mp_req(Req::GroupDesc)),
        (
            "v13_multipart_reply_group_desc",
            mp_rep(Rep::GroupDesc(vec![
                mp::GroupDesc {
                    group_type: v13::GroupType::Select,
                    group_id: 5,
                    buckets: vec![
                        bucket(3, PortNo::ANY, v13::group::group_id::ANY, vec![out13(1)]),
                        bucket(7, PortNo::ANY, v13::group::group_id::ANY, vec![out13(2)]),
                    ],
                },
                mp::GroupDesc {
                    group_type: v13::GroupType::Indirect,
                    group_id: 2,
                    buckets: vec![bucket(
                        0,
                        PortNo::ANY,
                        v13::group::group_id::ANY,
                        vec![out13(3)],
                    )],
                },
            ])),
        ),
        (
            "v13_multipart_request_group_features",
            mp_req(Req::GroupFeatures),
        ),
        (
            "v13_multipart_reply_group_features",
            mp_rep(Rep::GroupFeatures(mp::GroupFeatures {
                // all, select, indirect, ff.
                types: 0b1111,
                // OFPGFC_SELECT_WEIGHT | SELECT_LIVENESS | CHAINING.
                capabilities: 0b0111,
                max_groups: [1024, 512, 256, 128],
                // output, group.
                actions: [(1 << 0) | (1 << 22), 1 << 0, 1 << 0, (1 << 0) | (1 << 21)],
            })),
        ),
        (
            "v13_multipart_request_meter",
            mp_req(Req::Meter { meter_id: 7 }),
        ),
        (
            "v13_multipart_reply_meter",
            mp_rep(Rep::Meter(vec![mp::MeterStats {
                meter_id: 7,
                flow_count: 3,
                packet_in_count: 500,
                byte_in_count: 64000,
                duration_sec: 20,
                duration_nsec: 1000,
                band_stats: vec![
                    mp::MeterBandStats {
                        packet_band_count: 12,
                        byte_band_count: 1536,
                    },
                    mp::MeterBandStats {
                        packet_band_count: 4,
                        byte_band_count: 512,
                    },
                ],
            }])),
        ),
        (
            "v13_multipart_request_meter_config",
            mp_req(Req::MeterConfig {
                meter_id: v13::meter::meter_id::ALL,
            }),
        ),
        (
            "v13_multipart_reply_meter_config",
            mp_rep(Rep::MeterConfig(vec![
                mp::MeterConfig {
                    flags: v13::meter::meter_flags::KBPS | v13::meter::meter_flags::BURST,
                    meter_id: 7,
                    bands: vec![drop_band.clone()],
                },
                mp::MeterConfig {
                    flags: v13::meter::meter_flags::PKTPS,
                    meter_id: 8,
                    bands: vec![MeterBand::DscpRemark {
                        rate: 100,
                        burst_size: 0,
                        prec_level: 2,
                    }],
                },
            ])),
        ),
        (
            "v13_multipart_request_meter_features",
            mp_req(Req::MeterFeatures),
        ),
        (
            "v13_multipart_reply_meter_features",
            mp_rep(Rep::MeterFeatures(mp::MeterFeatures {
                max_meter: 4096,
                // drop, dscp_remark.
                band_types: 0b110,
                capabilities: 0b1111,
                max_bands: 4,
                max_color: 2,
            })),
        ),
        (
            "v13_multipart_request_table_features_query",
            mp_req(Req::TableFeatures(vec![])),
        ),
        (
            "v13_multipart_request_table_features_set",
            mp_req(Req::TableFeatures(vec![table_features(0)])),
        ),
        (
            "v13_multipart_reply_table_features",
            mp_rep(Rep::TableFeatures(vec![
                table_features(0),
                table_features(1),
            ])),
        ),
        (
            // NXST_IPFIX_BRIDGE request (subtype 3): no body. (OVS knows
            // NXST_FLOW and NXST_AGGREGATE only in 1.0; in 1.3 it answers
            // them with OFPBRC_BAD_SUBTYPE.)
            "v13_multipart_request_experimenter_nx_ipfix",
            mp_req(Req::Experimenter(ExperimenterMultipart {
                experimenter: NX_VENDOR_ID,
                exp_type: 3,
                data: vec![],
            })),
        ),
        (
            // NXST_IPFIX_BRIDGE reply: nx_ipfix_stats_reply, ten 64-bit
            // counters (total flows 1 ... tx errors 10), then
            // collector_set_id 5 and 4 pad bytes.
            "v13_multipart_reply_experimenter_nx_ipfix",
            mp_rep(Rep::Experimenter(ExperimenterMultipart {
                experimenter: NX_VENDOR_ID,
                exp_type: 3,
                data: {
                    let mut d: Vec<u8> = (1..=10u64).flat_map(u64::to_be_bytes).collect();
                    d.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 0]);
                    d
                },
            })),
        ),
    ]
}

/// Samples that carry something Open vSwitch 3.1 does not support, kept
/// so that the codec's round trip and the fuzz seeds still cover it. Each
/// comes with the decode error `ovs-ofctl ofp-print` reports for it (the
/// ofp_print test checks exactly that, so a change in OVS shows). Not part
/// of [`samples_v13`]; everything else in these features is covered there.
pub fn samples_v13_outside_ovs() -> Vec<(&'static str, &'static str, v13::Message)> {
    use v13::Message as M;
    let in_port = |p| Match13 {
        fields: vec![Oxm::InPort(PortNo(p))],
    };
    vec![
        (
            // OVS implements no experimenter instruction.
            "v13_flow_mod_experimenter_instruction",
            "OFPBIC_BAD_EXPERIMENTER",
            flow_mod13(
                in_port(1),
                0,
                vec![
                    Instruction::ApplyActions(vec![out13(2)]),
                    Instruction::Experimenter {
                        experimenter: 0x00ab_cdef,
                        data: vec![1, 2, 3, 4, 5, 6, 7, 8],
                    },
                ],
            ),
        ),
        (
            // "unknown OpenFlow13 action for vendor 0 and type 11"
            "v13_flow_mod_copy_ttl_out",
            "OFPBAC_BAD_TYPE",
            flow_mod13(match13_mpls(), 0, apply(vec![A13::CopyTtlOut, out13(2)])),
        ),
        (
            // "unknown OpenFlow13 action for vendor 0 and type 12"
            "v13_flow_mod_copy_ttl_in",
            "OFPBAC_BAD_TYPE",
            flow_mod13(match13_mpls(), 0, apply(vec![A13::CopyTtlIn, out13(2)])),
        ),
        (
            // "unknown OpenFlow13 action for vendor 0 and type 26"
            "v13_flow_mod_push_pbb",
            "OFPBAC_BAD_TYPE",
            flow_mod13(in_port(1), 0, apply(vec![A13::PushPbb(0x88e7), out13(2)])),
        ),
        (
            // "unknown OpenFlow13 action for vendor 0 and type 27"
            "v13_flow_mod_pop_pbb",
            "OFPBAC_BAD_TYPE",
            flow_mod13(in_port(1), 0, apply(vec![A13::PopPbb, out13(2)])),
        ),
        (
            // OVS has no OXM_OF_IN_PHY_PORT.
            "v13_flow_mod_in_phy_port",
            "OFPBMC_BAD_FIELD",
            flow_mod13(
                Match13 {
                    fields: vec![Oxm::InPort(PortNo(1)), Oxm::InPhyPort(PortNo(1))],
                },
                0,
                apply(vec![out13(2)]),
            ),
        ),
        (
            // OVS has no OXM_OF_PBB_ISID.
            "v13_flow_mod_pbb_isid",
            "OFPBMC_BAD_FIELD",
            flow_mod13(match13_pbb(), 0, apply(vec![out13(2)])),
        ),
        (
            // OVS has no OXM_OF_IPV6_EXTHDR.
            "v13_flow_mod_ipv6_exthdr",
            "OFPBMC_BAD_FIELD",
            flow_mod13(
                Match13 {
                    fields: vec![
                        Oxm::EthType(0x86dd),
                        Oxm::Ipv6Exthdr {
                            value: v13::oxm::ipv6_exthdr::NONEXT,
                            mask: Some(v13::oxm::ipv6_exthdr::NONEXT | v13::oxm::ipv6_exthdr::FRAG),
                        },
                    ],
                },
                0,
                apply(vec![out13(2)]),
            ),
        ),
        (
            // OVS implements only the drop and dscp_remark bands.
            "v13_meter_mod_experimenter_band",
            "OFPMMFC_BAD_BAND",
            M::MeterMod(v13::MeterMod {
                command: v13::MeterModCommand::Modify,
                flags: v13::meter::meter_flags::PKTPS,
                meter_id: 9,
                bands: vec![MeterBand::Experimenter {
                    rate: 100,
                    burst_size: 10,
                    experimenter: 0x00ab_cdef,
                    data: vec![],
                }],
            }),
        ),
    ]
}

// ------------------------------------------------------------- spec vectors

/// Bytes from a hex string, whitespace ignored.
pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    assert!(s.len() % 2 == 0, "odd hex string {s}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// Hex vectors laid out by hand, field by field, from the struct layouts
/// of the 1.0.0 spec (§5) and the 1.3.5 spec (§7), independently of the
/// codec's encoders. `tests/ofp_print.rs` holds what each must decode to.
pub fn spec_vectors() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "spec_v10_packet_in",
            hex(concat!(
                "01 0a 0020 00001001",            // ofp_header: PACKET_IN, 32 bytes
                "00000200",                       // buffer_id 0x200
                "003c",                           // total_len 60
                "0007",                           // in_port 7
                "00 00",                          // reason NO_MATCH, pad
                "0180c200000e 525400000007 88cc", // 14 bytes: an LLDP header
            )),
        ),
        (
            "spec_v10_flow_mod",
            hex(concat!(
                "01 0e 0060 00001002", // ofp_header: FLOW_MOD, 96 bytes
                // ofp_match: wildcards all but IN_PORT, DL_TYPE and the top
                // 24 bits of NW_DST (8 << OFPFW_NW_DST_SHIFT).
                "00323fee",
                "0003",                      // in_port 3
                "000000000000 000000000000", // dl_src, dl_dst
                "0000 00 00",                // dl_vlan, dl_vlan_pcp, pad
                "0800",                      // dl_type IPv4
                "00 00 0000",                // nw_tos, nw_proto, pad
                "00000000 c0a80100",         // nw_src, nw_dst 192.168.1.0
                "0000 0000",                 // tp_src, tp_dst
                "00000000000000ff",          // cookie
                "0000 000a 0000 0064",       // ADD, idle 10, hard 0, priority 100
                "ffffffff ffff 0001",        // buffer NONE, out_port NONE, SEND_FLOW_REM
                "0001 0008 0064 0000",       // SET_VLAN_VID 100
                "0000 0008 0002 0000",       // OUTPUT port 2
                "0000 0008 fffd 0080",       // OUTPUT CONTROLLER, max_len 128
            )),
        ),
        (
            "spec_v10_features_reply",
            hex(concat!(
                "01 06 0050 00001003",                 // ofp_header: FEATURES_REPLY, 80
                "00000000deadbeef",                    // datapath_id
                "00000100 01 000000",                  // n_buffers 256, n_tables 1, pad
                "00000087",                            // FLOW|TABLE|PORT stats, ARP_MATCH_IP
                "00000fff",                            // every action
                "0001 020000000001",                   // ofp_phy_port: port 1, hw_addr
                "65746831000000000000000000000000",    // name "eth1"
                "00000000 00000000",                   // config, state
                "000000a0 00000000 00000000 00000000", // curr 1GB_FD|COPPER, ...
            )),
        ),
        (
            "spec_v10_flow_stats_request",
            hex(concat!(
                "01 10 0038 00001004", // ofp_header: STATS_REQUEST, 56
                "0001 0000",           // OFPST_FLOW, flags
                "003fffef",            // wildcards: all but DL_TYPE
                "0000 000000000000 000000000000 0000 00 00 0806 00 00 0000",
                "00000000 00000000 0000 0000",
                "ff 00 ffff", // table_id all, pad, out_port NONE
            )),
        ),
        (
            "spec_v10_queue_get_config_reply",
            hex(concat!(
                "01 15 0028 00001005", // ofp_header: QUEUE_GET_CONFIG_REPLY, 40
                "0002 000000000000",   // port 2, pad
                "00000001 0018 0000",  // ofp_packet_queue: id 1, len 24, pad
                "0001 0010 00000000",  // OFPQT_MIN_RATE, len 16, pad
                "012c 000000000000",   // rate 300 (30.0%), pad
            )),
        ),
        (
            "spec_v13_hello",
            hex(concat!(
                "04 00 0010 00001006", // ofp_header: HELLO, 16
                "0001 0008 00000012",  // VERSIONBITMAP: 1.0 and 1.3
            )),
        ),
        (
            "spec_v13_packet_in",
            hex(concat!(
                "04 0a 0038 00001007",                  // ofp_header: PACKET_IN, 56
                "00000100 0040",                        // buffer_id 0x100, total_len 64
                "01 03",                                // reason ACTION, table 3
                "0000000000001234",                     // cookie
                "0001 000c 80000004 00000005 00000000", // ofp_match: IN_PORT 5, pad
                "0000",                                 // pad
                "ffffffffffff 525400000005 0806",       // 14 bytes of frame
            )),
        ),
        (
            "spec_v13_flow_mod",
            hex(concat!(
                "04 0e 0068 00001008",                  // ofp_header: FLOW_MOD, 104
                "000000000000000a 0000000000000000",    // cookie 10, cookie_mask
                "00 00 0000 0e10 0200",                 // table 0, ADD, idle 0, hard 3600, prio 512
                "ffffffff ffffffff ffffffff",           // buffer, out_port, out_group: none/any
                "0001 0000",                            // SEND_FLOW_REM, pad
                "0001 001e",                            // ofp_match: OXM, 30 bytes
                "80000004 00000002",                    // IN_PORT 2
                "80000a02 0800",                        // ETH_TYPE IPv4
                "80001908 0a000000 ffffff00",           // IPV4_DST 10.0.0.0/24
                "0000",                                 // pad
                "0004 0018 00000000",                   // APPLY_ACTIONS, 24
                "0000 0010 00000001 0000 000000000000", // OUTPUT port 1
            )),
        ),
        (
            "spec_v13_port_desc_reply",
            hex(concat!(
                "04 13 0050 00001009",                 // ofp_header: MULTIPART_REPLY, 80
                "000d 0000 00000000",                  // OFPMP_PORT_DESC, flags, pad
                "00000003 00000000",                   // ofp_port: port 3, pad
                "020000000003 0000",                   // hw_addr, pad
                "76657468330000000000000000000000",    // name "veth3"
                "00000000 00000004",                   // config, state LIVE
                "00000840 00000000 00000000 00000000", // curr 10GB_FD|COPPER
                "00989680 00000000",                   // curr_speed 10 Gb/s, max_speed
            )),
        ),
        (
            "spec_v13_role_request",
            hex(concat!(
                "04 18 0018 0000100a", // ofp_header: ROLE_REQUEST, 24
                "00000003 00000000",   // role SLAVE, pad
                "0000000000000007",    // generation_id
            )),
        ),
        (
            "spec_v13_group_mod",
            hex(concat!(
                "04 0f 0050 0000100b",                  // ofp_header: GROUP_MOD, 80
                "0000 01 00 00000010",                  // ADD, SELECT, pad, group 16
                "0020 0005 ffffffff ffffffff 00000000", // bucket: len 32, weight 5
                "0000 0010 00000002 0000 000000000000", // OUTPUT port 2
                "0020 000a ffffffff ffffffff 00000000", // bucket: len 32, weight 10
                "0000 0010 00000003 0000 000000000000", // OUTPUT port 3
            )),
        ),
        (
            "spec_v13_meter_mod",
            hex(concat!(
                "04 1d 0020 0000100c",                  // ofp_header: METER_MOD, 32
                "0000 0005 00000001",                   // ADD, KBPS|BURST, meter 1
                "0001 0010 000003e8 00000064 00000000", // DROP rate 1000 burst 100
            )),
        ),
        (
            "spec_v13_flow_stats_request",
            hex(concat!(
                "04 12 0040 0000100d",                  // ofp_header: MULTIPART_REQUEST, 64
                "0001 0000 00000000",                   // OFPMP_FLOW, flags, pad
                "01 000000 ffffffff ffffffff 00000000", // table 1, out_port/group any
                "0000000000000000 0000000000000000",    // cookie, cookie_mask
                "0001 000a 80000a02 86dd 000000000000", // match ETH_TYPE IPv6, pad
            )),
        ),
        (
            "spec_v13_packet_out",
            hex(concat!(
                "04 0d 0036 0000100e",                  // ofp_header: PACKET_OUT, 54
                "ffffffff fffffffd",                    // buffer NONE, in_port CONTROLLER
                "0010 000000000000",                    // actions_len 16, pad
                "0000 0010 00000001 ffff 000000000000", // OUTPUT 1, max_len NO_BUFFER
                "ffffffffffff 525400000001 0806",       // 14 bytes of frame
            )),
        ),
    ]
}
