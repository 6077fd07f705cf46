//! Flow statistics out: a flow of either version in the API's
//! vocabulary (OXM field names, action strings).

use super::Flow;
use super::parse::port_text;
use baton_openflow::v10::ofmatch::{
    OFP_VLAN_NONE, OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP,
    OFPFW_IN_PORT, OFPFW_NW_PROTO, OFPFW_NW_TOS, OFPFW_TP_DST, OFPFW_TP_SRC,
};
use baton_openflow::v13::oxm::{OFPVID_NONE, OFPVID_PRESENT, OXM_BASIC_FIELDS, OxmField};
use baton_openflow::v13::{Instruction, Oxm};
use baton_openflow::{Cookie, MacAddr, PortNo, v10, v13};
use baton_runtime::control::FlowEntry;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

impl Flow {
    /// `f` as the API shows it; `owner` names who installed a flow from
    /// its cookie.
    pub fn new(f: &FlowEntry, owner: impl Fn(Cookie) -> Option<String>) -> Flow {
        match f {
            FlowEntry::V10(f) => Flow {
                table_id: f.table_id,
                priority: f.priority,
                cookie: f.cookie.to_string(),
                installed_by: owner(f.cookie),
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                duration_secs: secs(f.duration_sec, f.duration_nsec),
                packets: f.packet_count,
                bytes: f.byte_count,
                match_: match10(&f.match_),
                actions: f.actions.iter().map(action10).collect(),
            },
            FlowEntry::V13(f) => Flow {
                table_id: f.table_id,
                priority: f.priority,
                cookie: f.cookie.to_string(),
                installed_by: owner(f.cookie),
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                duration_secs: secs(f.duration_sec, f.duration_nsec),
                packets: f.packet_count,
                bytes: f.byte_count,
                match_: f.match_.fields.iter().map(oxm).collect(),
                actions: f.instructions.iter().flat_map(instruction).collect(),
            },
        }
    }
}

fn secs(s: u32, ns: u32) -> f64 {
    f64::from(s) + f64::from(ns) / 1e9
}

/// A port as a post writes it: its number, or its reserved name.
fn port(p: PortNo) -> Value {
    match port_text(p) {
        Some(name) => json!(name),
        None => json!(p.0),
    }
}

fn port_str(p: PortNo) -> String {
    port_text(p).map_or_else(|| p.0.to_string(), str::to_string)
}

/// `addr/len` when `mask` is a prefix, `addr/mask` otherwise.
fn ipv4(addr: Ipv4Addr, mask: Option<Ipv4Addr>) -> Value {
    match mask.map(u32::from) {
        None | Some(u32::MAX) => json!(addr.to_string()),
        Some(m) if m.leading_ones() + m.trailing_zeros() == 32 => {
            json!(format!("{addr}/{}", m.leading_ones()))
        }
        Some(m) => json!(format!("{addr}/{}", Ipv4Addr::from(m))),
    }
}

/// A 1.0 match: the fields its wildcards leave, by their OXM names
/// (`nw_proto` is `arp_op` for ARP; `tp_src` is `tcp_src`, `udp_src` or
/// `icmpv4_type` by protocol), as Open vSwitch reads them.
fn match10(m: &v10::Match10) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let w = m.wildcards;
    let on = |bit: u32| w & bit == 0;
    let mut put = |k: &str, v: Value| {
        out.insert(k.to_string(), v);
    };
    if on(OFPFW_IN_PORT) {
        put("in_port", port(m.in_port));
    }
    if on(OFPFW_DL_SRC) {
        put("eth_src", json!(m.dl_src.to_string()));
    }
    if on(OFPFW_DL_DST) {
        put("eth_dst", json!(m.dl_dst.to_string()));
    }
    if on(OFPFW_DL_VLAN) {
        match m.dl_vlan {
            OFP_VLAN_NONE => put("vlan_vid", json!("none")),
            v => put("vlan_vid", json!(v & 0x0fff)),
        }
        if on(OFPFW_DL_VLAN_PCP) {
            put("vlan_pcp", json!(m.dl_vlan_pcp));
        }
    }
    if !on(OFPFW_DL_TYPE) {
        return out;
    }
    put("eth_type", json!(format!("0x{:04x}", m.dl_type)));
    let (src, dst) = (m.nw_src_mask(), m.nw_dst_mask());
    match m.dl_type {
        0x0806 => {
            if on(OFPFW_NW_PROTO) {
                put("arp_op", json!(m.nw_proto));
            }
            if src != Ipv4Addr::UNSPECIFIED {
                put("arp_spa", ipv4(m.nw_src, Some(src)));
            }
            if dst != Ipv4Addr::UNSPECIFIED {
                put("arp_tpa", ipv4(m.nw_dst, Some(dst)));
            }
        }
        0x0800 => {
            if src != Ipv4Addr::UNSPECIFIED {
                put("ipv4_src", ipv4(m.nw_src, Some(src)));
            }
            if dst != Ipv4Addr::UNSPECIFIED {
                put("ipv4_dst", ipv4(m.nw_dst, Some(dst)));
            }
            if on(OFPFW_NW_TOS) {
                put("ip_dscp", json!(m.nw_tos >> 2));
            }
            if !on(OFPFW_NW_PROTO) {
                return out;
            }
            put("ip_proto", json!(m.nw_proto));
            let (s, d) = match m.nw_proto {
                6 => ("tcp_src", "tcp_dst"),
                17 => ("udp_src", "udp_dst"),
                1 => ("icmpv4_type", "icmpv4_code"),
                _ => return out,
            };
            if on(OFPFW_TP_SRC) {
                put(s, json!(m.tp_src));
            }
            if on(OFPFW_TP_DST) {
                put(d, json!(m.tp_dst));
            }
        }
        _ => {}
    }
    out
}

/// An OXM field's name: the spec's without `OFPXMT_OFB_`, lower case.
fn oxm_name(f: OxmField) -> String {
    OXM_BASIC_FIELDS.get(usize::from(u8::from(f))).map_or_else(
        || format!("field_{}", u8::from(f)),
        |i| {
            i.name
                .trim_start_matches("OFPXMT_OFB_")
                .to_ascii_lowercase()
        },
    )
}

/// A value with an optional mask of the same kind, `value/mask`.
fn masked<T: std::fmt::Display>(v: T, m: Option<T>) -> Value {
    match m {
        None => json!(v.to_string()),
        Some(m) => json!(format!("{v}/{m}")),
    }
}

fn hex_masked(v: u64, m: Option<u64>) -> Value {
    match m {
        None => json!(format!("0x{v:x}")),
        Some(m) => json!(format!("0x{v:x}/0x{m:x}")),
    }
}

/// One OXM TLV as `(name, value)`.
fn oxm(o: &Oxm) -> (String, Value) {
    let field = match o {
        Oxm::Other {
            class, field, body, ..
        } => {
            let hex: String = body.iter().map(|b| format!("{b:02x}")).collect();
            return (
                format!("oxm_{class:04x}_{field}"),
                json!(format!("0x{hex}")),
            );
        }
        basic => basic.field().map_or(OxmField::Unknown(0xff), |f| f),
    };
    let v: Value = match *o {
        Oxm::InPort(p) | Oxm::InPhyPort(p) => port(p),
        Oxm::Metadata { value, mask } | Oxm::TunnelId { value, mask } => hex_masked(value, mask),
        Oxm::EthDst { value, mask }
        | Oxm::EthSrc { value, mask }
        | Oxm::ArpSha { value, mask }
        | Oxm::ArpTha { value, mask } => masked::<MacAddr>(value, mask),
        Oxm::EthType(t) => json!(format!("0x{t:04x}")),
        Oxm::VlanVid { value, mask } => match (value, mask) {
            (OFPVID_NONE, None) => json!("none"),
            (v, None) => json!(v & 0x0fff),
            (v, Some(m)) if v == OFPVID_PRESENT && m == OFPVID_PRESENT => json!("present"),
            (v, Some(m)) => json!(format!("0x{v:x}/0x{m:x}")),
        },
        Oxm::Ipv4Src { value, mask }
        | Oxm::Ipv4Dst { value, mask }
        | Oxm::ArpSpa { value, mask }
        | Oxm::ArpTpa { value, mask } => ipv4(value, mask),
        Oxm::Ipv6Src { value, mask } | Oxm::Ipv6Dst { value, mask } => {
            masked::<Ipv6Addr>(value, mask)
        }
        Oxm::Ipv6NdTarget(a) => json!(a.to_string()),
        Oxm::Ipv6NdSll(m) | Oxm::Ipv6NdTll(m) => json!(m.to_string()),
        Oxm::Ipv6Flabel { value, mask } | Oxm::PbbIsid { value, mask } => match mask {
            None => json!(value),
            Some(m) => json!(format!("0x{value:x}/0x{m:x}")),
        },
        Oxm::Ipv6Exthdr { value, mask } => hex_masked(value.into(), mask.map(u64::from)),
        Oxm::VlanPcp(v)
        | Oxm::IpDscp(v)
        | Oxm::IpEcn(v)
        | Oxm::IpProto(v)
        | Oxm::Icmpv4Type(v)
        | Oxm::Icmpv4Code(v)
        | Oxm::Icmpv6Type(v)
        | Oxm::Icmpv6Code(v)
        | Oxm::MplsTc(v)
        | Oxm::MplsBos(v) => json!(v),
        Oxm::TcpSrc(v)
        | Oxm::TcpDst(v)
        | Oxm::UdpSrc(v)
        | Oxm::UdpDst(v)
        | Oxm::SctpSrc(v)
        | Oxm::SctpDst(v)
        | Oxm::ArpOp(v) => json!(v),
        Oxm::MplsLabel(v) => json!(v),
        Oxm::Other { .. } => Value::Null,
    };
    (oxm_name(field), v)
}

fn output(port: PortNo, max_len: u16) -> String {
    if port == PortNo::CONTROLLER && max_len != 0xffff {
        format!("output:controller:{max_len}")
    } else {
        format!("output:{}", port_str(port))
    }
}

/// A 1.0 action, as a post names it where it can.
fn action10(a: &v10::Action) -> String {
    use v10::Action as A;
    match a {
        A::Output { port, max_len } => output(*port, *max_len),
        A::SetVlanVid(v) => format!("set_vlan_vid:{v}"),
        A::SetVlanPcp(v) => format!("set_vlan_pcp:{v}"),
        A::StripVlan => "strip_vlan".to_string(),
        A::SetDlSrc(m) => format!("set_eth_src:{m}"),
        A::SetDlDst(m) => format!("set_eth_dst:{m}"),
        A::SetNwSrc(a) => format!("set_ipv4_src:{a}"),
        A::SetNwDst(a) => format!("set_ipv4_dst:{a}"),
        A::SetNwTos(t) => format!("set_ip_dscp:{}", t >> 2),
        A::SetTpSrc(p) => format!("set_tp_src:{p}"),
        A::SetTpDst(p) => format!("set_tp_dst:{p}"),
        A::Enqueue { port, queue_id } => format!("enqueue:{}:{queue_id}", port_str(*port)),
        A::Vendor { vendor, .. } => format!("vendor:0x{vendor:x}"),
    }
}

/// A 1.3 action, as a post names it where it can (a set-field is
/// `set_` and the field's name).
fn action13(a: &v13::Action) -> String {
    use v13::Action as A;
    match a {
        A::Output { port, max_len } => output(*port, *max_len),
        A::SetField(o) => {
            let (name, v) = oxm(o);
            let v = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            format!("set_{name}:{v}")
        }
        A::PopVlan => "pop_vlan".to_string(),
        A::PushVlan(t) => format!("push_vlan:0x{t:04x}"),
        A::SetQueue(q) => format!("set_queue:{q}"),
        A::Group(g) => format!("group:{g}"),
        A::DecNwTtl => "dec_ttl".to_string(),
        A::SetNwTtl(t) => format!("set_nw_ttl:{t}"),
        A::CopyTtlOut => "copy_ttl_out".to_string(),
        A::CopyTtlIn => "copy_ttl_in".to_string(),
        A::SetMplsTtl(t) => format!("set_mpls_ttl:{t}"),
        A::DecMplsTtl => "dec_mpls_ttl".to_string(),
        A::PushMpls(t) => format!("push_mpls:0x{t:04x}"),
        A::PopMpls(t) => format!("pop_mpls:0x{t:04x}"),
        A::PushPbb(t) => format!("push_pbb:0x{t:04x}"),
        A::PopPbb => "pop_pbb".to_string(),
        A::Experimenter { experimenter, .. } => format!("experimenter:0x{experimenter:x}"),
    }
}

/// A 1.3 instruction: apply-actions as its actions, the others named.
fn instruction(i: &Instruction) -> Vec<String> {
    match i {
        Instruction::ApplyActions(a) => a.iter().map(action13).collect(),
        Instruction::WriteActions(a) => {
            let a: Vec<String> = a.iter().map(action13).collect();
            vec![format!("write_actions({})", a.join(","))]
        }
        Instruction::ClearActions => vec!["clear_actions".to_string()],
        Instruction::GotoTable(t) => vec![format!("goto_table:{t}")],
        Instruction::Meter(m) => vec![format!("meter:{m}")],
        Instruction::WriteMetadata { metadata, mask } => {
            vec![format!("write_metadata:0x{metadata:x}/0x{mask:x}")]
        }
        Instruction::Experimenter { experimenter, .. } => {
            vec![format!("experimenter:0x{experimenter:x}")]
        }
    }
}
