//! OpenFlow 1.0 codec properties: every message round-trips both ways, the
//! views agree with the owned decoder, truncated or garbled input gives an
//! error and never a panic, and hand-written vectors laid out from the
//! 1.0.0 spec decode to the expected values.
//! (Long by design: one generator and one spec vector per 1.0 message.)

use baton_openflow::header::Direction;
use baton_openflow::hello::{Hello, HelloElement};
use baton_openflow::port_counters::PortCounters;
use baton_openflow::v10::flow_mod::OFPFF_SEND_FLOW_REM;
use baton_openflow::v10::messages::OFPQT_MIN_RATE;
use baton_openflow::v10::stats::{
    AggregateStats, DescStats, FlowStats, FlowStatsRequest, PortStats, QueueStats, TableStats,
};
use baton_openflow::v10::{
    self, Action, EchoView, ErrorMsg, FlowMod, FlowModCommand, FlowModView, FlowRemoved,
    FlowRemovedReason, Match10, Message, PacketIn, PacketInReason, PacketInView, PacketOut,
    PacketOutView, PacketQueue, PhyPort, PortMod, PortReason, PortStatus, QueueProp, StatsReply,
    StatsReplyBody, StatsRequest, StatsRequestBody, SwitchConfig, SwitchFeatures,
};
use baton_openflow::{BufferId, Cookie, DatapathId, ErrorKind, MacAddr, PortNo, Xid};
use proptest::collection::vec;
use proptest::prelude::*;
use std::net::Ipv4Addr;

// ---------------------------------------------------------------- strategies

fn port() -> impl Strategy<Value = PortNo> {
    prop_oneof![
        any::<u16>().prop_map(PortNo::from_of10),
        (0xff00u16..=0xffff).prop_map(PortNo::from_of10),
    ]
}

fn mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

fn ip() -> impl Strategy<Value = Ipv4Addr> {
    any::<u32>().prop_map(Ipv4Addr::from)
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..=max)
}

/// Strings without NUL that fit a field of `n` bytes with its terminator.
fn fixed_str(n: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex("[^\\x00]*")
        .unwrap()
        .prop_map(move |s| {
            let mut end = s.len().min(n - 1);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s[..end].to_string()
        })
}

fn match10() -> impl Strategy<Value = Match10> {
    (
        any::<u32>(),
        port(),
        mac(),
        mac(),
        any::<u16>(),
        any::<u8>(),
        any::<u16>(),
        any::<u8>(),
        any::<u8>(),
        ip(),
        ip(),
        any::<(u16, u16)>(),
    )
        .prop_map(
            |(
                wildcards,
                in_port,
                dl_src,
                dl_dst,
                dl_vlan,
                dl_vlan_pcp,
                dl_type,
                nw_tos,
                nw_proto,
                nw_src,
                nw_dst,
                (tp_src, tp_dst),
            )| Match10 {
                wildcards,
                in_port,
                dl_src,
                dl_dst,
                dl_vlan,
                dl_vlan_pcp,
                dl_type,
                nw_tos,
                nw_proto,
                nw_src,
                nw_dst,
                tp_src,
                tp_dst,
            },
        )
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (port(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        any::<u16>().prop_map(Action::SetVlanVid),
        any::<u8>().prop_map(Action::SetVlanPcp),
        Just(Action::StripVlan),
        mac().prop_map(Action::SetDlSrc),
        mac().prop_map(Action::SetDlDst),
        ip().prop_map(Action::SetNwSrc),
        ip().prop_map(Action::SetNwDst),
        any::<u8>().prop_map(Action::SetNwTos),
        any::<u16>().prop_map(Action::SetTpSrc),
        any::<u16>().prop_map(Action::SetTpDst),
        (port(), any::<u32>()).prop_map(|(port, queue_id)| Action::Enqueue { port, queue_id }),
        (any::<u32>(), 0usize..3)
            .prop_flat_map(|(vendor, n)| (Just(vendor), vec(any::<u8>(), n * 8)))
            .prop_map(|(vendor, data)| Action::Vendor { vendor, data }),
    ]
}

fn actions() -> impl Strategy<Value = Vec<Action>> {
    vec(action(), 0..5)
}

fn phy_port() -> impl Strategy<Value = PhyPort> {
    (port(), mac(), fixed_str(16), any::<[u32; 6]>()).prop_map(
        |(port_no, hw_addr, name, [config, state, curr, advertised, supported, peer])| PhyPort {
            port_no,
            hw_addr,
            name,
            config,
            state,
            curr,
            advertised,
            supported,
            peer,
        },
    )
}

fn hello() -> impl Strategy<Value = Hello> {
    let elem = prop_oneof![
        vec(any::<u32>(), 0..3).prop_map(HelloElement::VersionBitmap),
        (2u16.., bytes(12)).prop_map(|(elem_type, data)| HelloElement::Unknown { elem_type, data }),
    ];
    vec(elem, 0..3).prop_map(|elements| Hello { elements })
}

fn flow_mod() -> impl Strategy<Value = FlowMod> {
    (
        match10(),
        any::<u64>(),
        any::<u16>(),
        any::<(u16, u16, u16)>(),
        any::<u32>(),
        port(),
        any::<u16>(),
        actions(),
    )
        .prop_map(
            |(
                match_,
                cookie,
                command,
                (idle_timeout, hard_timeout, priority),
                buffer_id,
                out_port,
                flags,
                actions,
            )| FlowMod {
                match_,
                cookie: Cookie(cookie),
                command: FlowModCommand::from(command),
                idle_timeout,
                hard_timeout,
                priority,
                buffer_id: BufferId(buffer_id),
                out_port,
                flags,
                actions,
            },
        )
}

fn packet_in() -> impl Strategy<Value = PacketIn> {
    (any::<u32>(), any::<u16>(), port(), any::<u8>(), bytes(80)).prop_map(
        |(buffer_id, total_len, in_port, reason, data)| PacketIn {
            buffer_id: BufferId(buffer_id),
            total_len,
            in_port,
            reason: PacketInReason::from(reason),
            data,
        },
    )
}

fn packet_out() -> impl Strategy<Value = PacketOut> {
    (any::<u32>(), port(), actions(), bytes(80)).prop_map(|(buffer_id, in_port, actions, data)| {
        PacketOut {
            buffer_id: BufferId(buffer_id),
            in_port,
            actions,
            data,
        }
    })
}

fn flow_stats_request() -> impl Strategy<Value = FlowStatsRequest> {
    (match10(), any::<u8>(), port()).prop_map(|(match_, table_id, out_port)| FlowStatsRequest {
        match_,
        table_id,
        out_port,
    })
}

fn stats_request() -> impl Strategy<Value = StatsRequest> {
    let body = prop_oneof![
        Just(StatsRequestBody::Desc),
        flow_stats_request().prop_map(StatsRequestBody::Flow),
        flow_stats_request().prop_map(StatsRequestBody::Aggregate),
        Just(StatsRequestBody::Table),
        port().prop_map(|port_no| StatsRequestBody::Port { port_no }),
        (port(), any::<u32>())
            .prop_map(|(port_no, queue_id)| StatsRequestBody::Queue { port_no, queue_id }),
        (any::<u32>(), bytes(20))
            .prop_map(|(vendor, data)| StatsRequestBody::Vendor { vendor, data }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| StatsRequest { flags, body })
}

fn flow_stats() -> impl Strategy<Value = FlowStats> {
    (
        any::<u8>(),
        match10(),
        any::<(u32, u32)>(),
        any::<(u16, u16, u16)>(),
        any::<(u64, u64, u64)>(),
        actions(),
    )
        .prop_map(
            |(
                table_id,
                match_,
                (duration_sec, duration_nsec),
                (priority, idle_timeout, hard_timeout),
                (cookie, packet_count, byte_count),
                actions,
            )| FlowStats {
                table_id,
                match_,
                duration_sec,
                duration_nsec,
                priority,
                idle_timeout,
                hard_timeout,
                cookie: Cookie(cookie),
                packet_count,
                byte_count,
                actions,
            },
        )
}

fn stats_reply() -> impl Strategy<Value = StatsReply> {
    let desc = (
        fixed_str(256),
        fixed_str(256),
        fixed_str(256),
        fixed_str(32),
        fixed_str(256),
    )
        .prop_map(
            |(mfr_desc, hw_desc, sw_desc, serial_num, dp_desc)| DescStats {
                mfr_desc,
                hw_desc,
                sw_desc,
                serial_num,
                dp_desc,
            },
        );
    let table = (
        any::<u8>(),
        fixed_str(32),
        any::<(u32, u32, u32)>(),
        any::<(u64, u64)>(),
    )
        .prop_map(
            |(
                table_id,
                name,
                (wildcards, max_entries, active_count),
                (lookup_count, matched_count),
            )| {
                TableStats {
                    table_id,
                    name,
                    wildcards,
                    max_entries,
                    active_count,
                    lookup_count,
                    matched_count,
                }
            },
        );
    let port_stats = (port(), any::<[u64; 12]>()).prop_map(|(port_no, c)| PortStats {
        port_no,
        counters: PortCounters::from(c),
    });
    let queue = (port(), any::<u32>(), any::<(u64, u64, u64)>()).prop_map(
        |(port_no, queue_id, (tx_bytes, tx_packets, tx_errors))| QueueStats {
            port_no,
            queue_id,
            tx_bytes,
            tx_packets,
            tx_errors,
        },
    );
    let body = prop_oneof![
        desc.prop_map(|d| StatsReplyBody::Desc(Box::new(d))),
        vec(flow_stats(), 0..3).prop_map(StatsReplyBody::Flow),
        any::<(u64, u64, u32)>().prop_map(|(packet_count, byte_count, flow_count)| {
            StatsReplyBody::Aggregate(AggregateStats {
                packet_count,
                byte_count,
                flow_count,
            })
        }),
        vec(table, 0..3).prop_map(StatsReplyBody::Table),
        vec(port_stats, 0..3).prop_map(StatsReplyBody::Port),
        vec(queue, 0..3).prop_map(StatsReplyBody::Queue),
        (any::<u32>(), bytes(20))
            .prop_map(|(vendor, data)| StatsReplyBody::Vendor { vendor, data }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| StatsReply { flags, body })
}

fn packet_queue() -> impl Strategy<Value = PacketQueue> {
    let prop = prop_oneof![
        any::<u16>().prop_map(QueueProp::MinRate),
        (
            any::<u16>().prop_filter("not min-rate", |&p| p != OFPQT_MIN_RATE),
            bytes(16)
        )
            .prop_map(|(property, data)| QueueProp::Unknown { property, data }),
    ];
    (any::<u32>(), vec(prop, 0..3)).prop_map(|(queue_id, properties)| PacketQueue {
        queue_id,
        properties,
    })
}

fn message() -> impl Strategy<Value = Message> {
    let config = any::<(u16, u16)>().prop_map(|(flags, miss_send_len)| SwitchConfig {
        flags,
        miss_send_len,
    });
    prop_oneof![
        hello().prop_map(Message::Hello).boxed(),
        (any::<u16>(), any::<u16>(), bytes(70))
            .prop_map(|(error_type, code, data)| Message::Error(ErrorMsg {
                error_type,
                code,
                data
            }))
            .boxed(),
        bytes(64).prop_map(Message::EchoRequest).boxed(),
        bytes(64).prop_map(Message::EchoReply).boxed(),
        (any::<u32>(), bytes(32))
            .prop_map(|(vendor, data)| Message::Vendor { vendor, data })
            .boxed(),
        Just(Message::FeaturesRequest).boxed(),
        (
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<(u32, u32)>(),
            vec(phy_port(), 0..4)
        )
            .prop_map(
                |(dpid, n_buffers, n_tables, (capabilities, actions), ports)| {
                    Message::FeaturesReply(SwitchFeatures {
                        datapath_id: DatapathId(dpid),
                        n_buffers,
                        n_tables,
                        capabilities,
                        actions,
                        ports,
                    })
                }
            )
            .boxed(),
        Just(Message::GetConfigRequest).boxed(),
        config.clone().prop_map(Message::GetConfigReply).boxed(),
        config.prop_map(Message::SetConfig).boxed(),
        packet_in().prop_map(Message::PacketIn).boxed(),
        (
            match10(),
            any::<u64>(),
            any::<u16>(),
            any::<u8>(),
            any::<(u32, u32, u16)>(),
            any::<(u64, u64)>()
        )
            .prop_map(
                |(
                    match_,
                    cookie,
                    priority,
                    reason,
                    (duration_sec, duration_nsec, idle_timeout),
                    (packet_count, byte_count),
                )| {
                    Message::FlowRemoved(FlowRemoved {
                        match_,
                        cookie: Cookie(cookie),
                        priority,
                        reason: FlowRemovedReason::from(reason),
                        duration_sec,
                        duration_nsec,
                        idle_timeout,
                        packet_count,
                        byte_count,
                    })
                }
            )
            .boxed(),
        (any::<u8>(), phy_port())
            .prop_map(|(reason, desc)| Message::PortStatus(PortStatus {
                reason: PortReason::from(reason),
                desc
            }))
            .boxed(),
        packet_out().prop_map(Message::PacketOut).boxed(),
        flow_mod().prop_map(Message::FlowMod).boxed(),
        (port(), mac(), any::<(u32, u32, u32)>())
            .prop_map(|(port_no, hw_addr, (config, mask, advertise))| {
                Message::PortMod(PortMod {
                    port_no,
                    hw_addr,
                    config,
                    mask,
                    advertise,
                })
            })
            .boxed(),
        stats_request().prop_map(Message::StatsRequest).boxed(),
        stats_reply().prop_map(Message::StatsReply).boxed(),
        Just(Message::BarrierRequest).boxed(),
        Just(Message::BarrierReply).boxed(),
        port()
            .prop_map(|port| Message::QueueGetConfigRequest { port })
            .boxed(),
        (port(), vec(packet_queue(), 0..3))
            .prop_map(|(port, queues)| Message::QueueGetConfigReply { port, queues })
            .boxed(),
    ]
}

fn encode(m: &Message, xid: Xid) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(xid, &mut out);
    out
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decode_inverts_encode(m in message(), xid in any::<u32>()) {
        let b = encode(&m, Xid(xid));
        prop_assert_eq!(usize::from(u16::from_be_bytes([b[2], b[3]])), b.len());
        prop_assert_eq!(b[0], 1);
        prop_assert_eq!(b[1], u8::from(m.msg_type()));
        let (x, back) = v10::decode(&b).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(x, Xid(xid));
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(m.encoded_len(), b.len());
        prop_assert_eq!(encode(&back, x), b);
    }

    #[test]
    fn encoding_appends_after_existing_bytes(m in message()) {
        let mut out = vec![0xaa; 3];
        m.encode(Xid(1), &mut out);
        prop_assert_eq!(&out[..3], &[0xaa; 3]);
        prop_assert_eq!(&out[3..], &encode(&m, Xid(1))[..]);
    }

    #[test]
    fn truncation_is_an_error_not_a_panic(m in message()) {
        let b = encode(&m, Xid(7));
        for k in 0..b.len() {
            // The header's length no longer matches: always an error.
            prop_assert!(v10::decode(&b[..k]).is_err());
            // The header is patched to agree: must not panic, and whatever
            // decodes must round-trip.
            if k >= 8 {
                let mut t = b[..k].to_vec();
                t[2..4].copy_from_slice(&(k as u16).to_be_bytes());
                check_stable(&t)?;
            }
        }
    }

    #[test]
    fn mutated_messages_never_panic_and_stay_stable(
        m in message(),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut b = encode(&m, Xid(3));
        if b.len() > 8 {
            for (i, v) in flips {
                let at = 8 + i.index(b.len() - 8);
                b[at] = v;
            }
        }
        check_stable(&b)?;
        // Whatever decodes also re-encodes to the same bytes, except for
        // padding and bytes after a NUL in fixed strings, which the
        // re-decode above already covers.
    }

    #[test]
    fn garbage_bodies_never_panic(ty in 0u8..=22, body in bytes(200)) {
        let mut b = vec![1, ty, 0, 0, 0, 0, 0, 9];
        b.extend_from_slice(&body);
        let len = b.len() as u16;
        b[2..4].copy_from_slice(&len.to_be_bytes());
        check_stable(&b)?;
        let _ = PacketInView::new_checked(&b).map(|v| (v.data().len(), v.reason()));
        if let Ok(v) = FlowModView::new_checked(&b) {
            let _ = v.head();
            for a in v.actions() { let _ = a; }
        }
        if let Ok(v) = PacketOutView::new_checked(&b) {
            for a in v.actions() { let _ = a; }
            let _ = v.data();
        }
    }

    #[test]
    fn packet_in_view_agrees(p in packet_in(), xid in any::<u32>()) {
        let b = encode(&Message::PacketIn(p.clone()), Xid(xid));
        let v = PacketInView::new_checked(&b).unwrap();
        prop_assert_eq!(v.xid(), Xid(xid));
        prop_assert_eq!(v.buffer_id(), p.buffer_id);
        prop_assert_eq!(v.total_len(), p.total_len);
        prop_assert_eq!(v.in_port(), p.in_port);
        prop_assert_eq!(v.reason(), p.reason);
        prop_assert_eq!(v.data(), &p.data[..]);
        prop_assert_eq!(PacketIn::parse(&v).unwrap(), p.clone());
        prop_assert_eq!(p.buffer_len(), b.len());
    }

    #[test]
    fn flow_mod_view_agrees(f in flow_mod(), xid in any::<u32>()) {
        let b = encode(&Message::FlowMod(f.clone()), Xid(xid));
        let v = FlowModView::new_checked(&b).unwrap();
        prop_assert_eq!(v.xid(), Xid(xid));
        prop_assert_eq!(v.match_(), f.match_);
        prop_assert_eq!(v.cookie(), f.cookie);
        prop_assert_eq!(v.command(), f.command);
        prop_assert_eq!(v.idle_timeout(), f.idle_timeout);
        prop_assert_eq!(v.hard_timeout(), f.hard_timeout);
        prop_assert_eq!(v.priority(), f.priority);
        prop_assert_eq!(v.buffer_id(), f.buffer_id);
        prop_assert_eq!(v.out_port(), f.out_port);
        prop_assert_eq!(v.flags(), f.flags);
        prop_assert_eq!(v.head(), f.head());
        prop_assert_eq!(v.actions().collect_vec().unwrap(), f.actions.clone());
        // The borrowed encoder writes the same bytes.
        let mut out = Vec::new();
        v10::encode_flow_mod(&mut out, Xid(xid), &f.head(), &f.actions);
        prop_assert_eq!(f.buffer_len(), b.len());
        prop_assert_eq!(out, b);
    }

    #[test]
    fn packet_out_view_agrees(p in packet_out(), xid in any::<u32>()) {
        let b = encode(&Message::PacketOut(p.clone()), Xid(xid));
        let v = PacketOutView::new_checked(&b).unwrap();
        prop_assert_eq!(v.xid(), Xid(xid));
        prop_assert_eq!(v.buffer_id(), p.buffer_id);
        prop_assert_eq!(v.in_port(), p.in_port);
        prop_assert_eq!(v.actions().collect_vec().unwrap(), p.actions.clone());
        prop_assert_eq!(v.data(), &p.data[..]);
        prop_assert_eq!(p.buffer_len(), b.len());
    }

    #[test]
    fn echo_view_agrees(payload in bytes(64), xid in any::<u32>(), reply in any::<bool>()) {
        let m = if reply {
            Message::EchoReply(payload.clone())
        } else {
            Message::EchoRequest(payload.clone())
        };
        let b = encode(&m, Xid(xid));
        let v = EchoView::new_checked(&b).unwrap();
        prop_assert_eq!(v.xid(), Xid(xid));
        prop_assert_eq!(v.payload(), &payload[..]);
        prop_assert_eq!(v.direction(), if reply { Direction::Reply } else { Direction::Request });
    }
}

/// Decoding `b` must not panic; if it succeeds, the value must survive
/// encode -> decode unchanged.
fn check_stable(b: &[u8]) -> Result<(), TestCaseError> {
    if let Ok((xid, m)) = v10::decode(b) {
        let again = encode(&m, xid);
        let (x2, m2) = v10::decode(&again)
            .map_err(|e| TestCaseError::fail(format!("re-decode of {m:?} failed: {e}")))?;
        prop_assert_eq!(x2, xid);
        prop_assert_eq!(m2, m);
    }
    Ok(())
}

// ------------------------------------------------------ hand-written vectors

#[test]
fn features_request_vector() {
    let b = [0x01, 0x05, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01];
    assert_eq!(v10::decode(&b).unwrap(), (Xid(1), Message::FeaturesRequest));
    assert_eq!(encode(&Message::FeaturesRequest, Xid(1)), b);
}

#[test]
fn hello_vector() {
    let b = [0x01, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x2a];
    assert_eq!(
        v10::decode(&b).unwrap(),
        (Xid(42), Message::Hello(Hello::default()))
    );
}

#[test]
fn packet_in_vector() {
    // ofp_packet_in: buffer_id 0x00000100, total_len 60, in_port 1,
    // reason OFPR_NO_MATCH, then 14 bytes of Ethernet header.
    let b = [
        0x01, 0x0a, 0x00, 0x20, 0x00, 0x00, 0x12, 0x34, // header, length 32
        0x00, 0x00, 0x01, 0x00, // buffer_id
        0x00, 0x3c, // total_len
        0x00, 0x01, // in_port
        0x00, 0x00, // reason, pad
        0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // dst
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // src
        0x08, 0x00, // ethertype
    ];
    let (xid, m) = v10::decode(&b).unwrap();
    assert_eq!(xid, Xid(0x1234));
    assert_eq!(
        m,
        Message::PacketIn(PacketIn {
            buffer_id: BufferId(0x100),
            total_len: 60,
            in_port: PortNo(1),
            reason: PacketInReason::NoMatch,
            data: b[18..].to_vec(),
        })
    );
    assert_eq!(encode(&m, xid), b);
    let v = PacketInView::new_checked(&b).unwrap();
    assert_eq!(v.data().len(), 14);
}

#[test]
fn flow_mod_vector() {
    // A FLOW_MOD ADD matching in_port 1 and nw_dst 10.0.0.0/8 (everything
    // else wildcarded), priority 0x8000, idle 60, SEND_FLOW_REM, no buffer,
    // one OUTPUT to port 2.
    let wildcards: u32 = 0x003f_ffff & !1 & !(0x3f << 14) | (24 << 14);
    let mut b = vec![0x01, 0x0e, 0x00, 0x50, 0x00, 0x00, 0x00, 0x05];
    b.extend_from_slice(&wildcards.to_be_bytes());
    b.extend_from_slice(&[0x00, 0x01]); // in_port
    b.extend_from_slice(&[0; 26]); // dl_src .. nw_src
    b.extend_from_slice(&[10, 0, 0, 0]); // nw_dst
    b.extend_from_slice(&[0; 4]); // tp_src, tp_dst
    b.extend_from_slice(&0xabcdu64.to_be_bytes()); // cookie
    b.extend_from_slice(&[0, 0, 0, 60, 0, 0, 0x80, 0]); // ADD, idle, hard, priority
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x01]); // buffer, out_port, flags
    b.extend_from_slice(&[0x00, 0x00, 0x00, 0x08, 0x00, 0x02, 0x00, 0x00]); // OUTPUT:2
    assert_eq!(b.len(), 80);
    let (_, m) = v10::decode(&b).unwrap();
    let Message::FlowMod(f) = &m else {
        panic!("not a flow mod: {m:?}")
    };
    assert_eq!(f.command, FlowModCommand::Add);
    assert_eq!(f.match_.in_port, PortNo(1));
    assert_eq!(f.match_.nw_dst_prefix_len(), 8);
    assert_eq!(f.match_.nw_dst, Ipv4Addr::new(10, 0, 0, 0));
    assert_eq!(f.match_.nw_src_prefix_len(), 0);
    assert_eq!(f.cookie, Cookie(0xabcd));
    assert_eq!(
        (f.idle_timeout, f.hard_timeout, f.priority),
        (60, 0, 0x8000)
    );
    assert_eq!(f.buffer_id, BufferId::NONE);
    assert_eq!(f.out_port, PortNo::ANY);
    assert_eq!(f.flags, OFPFF_SEND_FLOW_REM);
    assert_eq!(
        f.actions,
        [Action::Output {
            port: PortNo(2),
            max_len: 0
        }]
    );
    assert_eq!(encode(&m, Xid(5)), b);
}

#[test]
fn echo_and_stats_vectors() {
    let b = [0x01, 0x02, 0x00, 0x0b, 0, 0, 0, 3, b'a', b'b', b'c'];
    assert_eq!(
        v10::decode(&b).unwrap(),
        (Xid(3), Message::EchoRequest(b"abc".to_vec()))
    );
    // OFPST_DESC request.
    let b = [0x01, 0x10, 0x00, 0x0c, 0, 0, 0, 4, 0, 0, 0, 0];
    assert_eq!(
        v10::decode(&b).unwrap(),
        (
            Xid(4),
            Message::StatsRequest(StatsRequest {
                flags: 0,
                body: StatsRequestBody::Desc
            })
        )
    );
    // An unknown stats type.
    let b = [0x01, 0x10, 0x00, 0x0c, 0, 0, 0, 4, 0, 7, 0, 0];
    let e = v10::decode(&b).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnknownStatsType(7));
    assert_eq!(e.offset(), 8);
}

#[test]
fn features_reply_vector() {
    let mut b = vec![0x01, 0x06, 0x00, 0x50, 0, 0, 0, 9];
    b.extend_from_slice(&0x0000_0000_0000_00abu64.to_be_bytes());
    b.extend_from_slice(&[0, 0, 1, 0, 1, 0, 0, 0]); // n_buffers 256, n_tables 1
    b.extend_from_slice(&[0, 0, 0, 0xc7, 0, 0, 0x0f, 0xff]); // capabilities, actions
    b.extend_from_slice(&[0x00, 0x03, 2, 0, 0, 0, 0, 3]); // port 3, hw_addr
    b.extend_from_slice(b"eth3\0\0\0\0\0\0\0\0\0\0\0\0");
    b.extend_from_slice(&[0; 24]);
    let (_, m) = v10::decode(&b).unwrap();
    let Message::FeaturesReply(f) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(f.datapath_id, DatapathId(0xab));
    assert_eq!((f.n_buffers, f.n_tables), (256, 1));
    assert_eq!((f.capabilities, f.actions), (0xc7, 0xfff));
    assert_eq!(f.ports.len(), 1);
    assert_eq!(f.ports[0].port_no, PortNo(3));
    assert_eq!(f.ports[0].name, "eth3");
    assert_eq!(f.ports[0].hw_addr, MacAddr([2, 0, 0, 0, 0, 3]));
    assert_eq!(encode(&m, Xid(9)), b);
    // A port cut short.
    b.truncate(b.len() - 1);
    b[3] -= 1;
    assert!(matches!(
        v10::decode(&b).unwrap_err().kind(),
        ErrorKind::BadLength { .. }
    ));
}
