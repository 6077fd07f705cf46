//! OpenFlow 1.0 matches (`ofp_match`, 1.0.0 §5.2.3) compiled into
//! [`FlowMatch`].
//!
//! A 1.0 match is first normalised as Open vSwitch does
//! (`ofputil_normalize_match`): fields whose prerequisites the match does
//! not fix are wildcarded (network fields need `dl_type` IPv4 or ARP,
//! transport fields need IPv4 with TCP, UDP or ICMP; ARP has no ToS or
//! transport fields), `dl_vlan_pcp` is ignored for untagged frames, and
//! the values of wildcarded fields are zeroed. The normalised match is
//! what flow statistics report.

use crate::key::{FlowMatch, ip4, slot};
use baton_openflow::packet::consts::{
    ETH_TYPE_ARP, ETH_TYPE_IPV4, IP_PROTO_ICMP, IP_PROTO_TCP, IP_PROTO_UDP,
};
use baton_openflow::types::{MacAddr, PortNo};
use baton_openflow::v10::Match10;
use baton_openflow::v10::ofmatch::*;
use std::net::Ipv4Addr;

/// The match with unusable fields wildcarded and wildcarded values zeroed.
pub fn normalize(m: &Match10) -> Match10 {
    let mut n = *m;
    n.wildcards &= OFPFW_ALL;
    if n.nw_src_wildcard_bits() > 32 {
        n.wildcards = (n.wildcards & !OFPFW_NW_SRC_MASK) | OFPFW_NW_SRC_ALL;
    }
    if n.nw_dst_wildcard_bits() > 32 {
        n.wildcards = (n.wildcards & !OFPFW_NW_DST_MASK) | OFPFW_NW_DST_ALL;
    }
    const NW: u32 = OFPFW_NW_TOS | OFPFW_NW_PROTO | OFPFW_NW_SRC_ALL | OFPFW_NW_DST_ALL;
    const TP: u32 = OFPFW_TP_SRC | OFPFW_TP_DST;
    let dl_type = (!n.is_wildcarded(OFPFW_DL_TYPE)).then_some(n.dl_type);
    match dl_type {
        Some(ETH_TYPE_IPV4) => {
            let proto = (!n.is_wildcarded(OFPFW_NW_PROTO)).then_some(n.nw_proto);
            if !matches!(proto, Some(IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_ICMP)) {
                n.wildcards |= TP;
            }
        }
        Some(ETH_TYPE_ARP) => n.wildcards |= OFPFW_NW_TOS | TP,
        _ => {
            n.wildcards = (n.wildcards & !(OFPFW_NW_SRC_MASK | OFPFW_NW_DST_MASK)) | NW | TP;
        }
    }
    if !n.is_wildcarded(OFPFW_DL_VLAN) && n.dl_vlan == OFP_VLAN_NONE {
        n.wildcards |= OFPFW_DL_VLAN_PCP;
    }
    // Zero what is wildcarded, so equal matches compare equal.
    let w = n.wildcards;
    let zero = |flag: u32| w & flag == flag;
    if zero(OFPFW_IN_PORT) {
        n.in_port = PortNo(0);
    }
    if zero(OFPFW_DL_VLAN) {
        n.dl_vlan = 0;
    }
    if zero(OFPFW_DL_VLAN_PCP) {
        n.dl_vlan_pcp = 0;
    }
    if zero(OFPFW_DL_SRC) {
        n.dl_src = MacAddr::default();
    }
    if zero(OFPFW_DL_DST) {
        n.dl_dst = MacAddr::default();
    }
    if zero(OFPFW_DL_TYPE) {
        n.dl_type = 0;
    }
    if zero(OFPFW_NW_TOS) {
        n.nw_tos = 0;
    }
    n.nw_tos &= 0xfc;
    if zero(OFPFW_NW_PROTO) {
        n.nw_proto = 0;
    }
    if zero(OFPFW_TP_SRC) {
        n.tp_src = 0;
    }
    if zero(OFPFW_TP_DST) {
        n.tp_dst = 0;
    }
    n.nw_src = Ipv4Addr::from(u32::from(n.nw_src) & u32::from(n.nw_src_mask()));
    n.nw_dst = Ipv4Addr::from(u32::from(n.nw_dst) & u32::from(n.nw_dst_mask()));
    n
}

/// The [`FlowMatch`] of a normalised match (see [`normalize`]).
pub fn compile(n: &Match10) -> FlowMatch {
    let mut f = FlowMatch::ALL;
    let on = |flag: u32| !n.is_wildcarded(flag);
    if on(OFPFW_IN_PORT) {
        f.exact(slot::IN_PORT, u64::from(n.in_port.0));
    }
    if on(OFPFW_DL_VLAN) {
        f.exact(slot::VLAN, u64::from(n.dl_vlan));
    }
    if on(OFPFW_DL_VLAN_PCP) {
        f.set(slot::VLAN_PCP, u64::from(n.dl_vlan_pcp), 0x07);
    }
    if on(OFPFW_DL_SRC) {
        f.exact(slot::ETH_SRC, n.dl_src.to_u64());
    }
    if on(OFPFW_DL_DST) {
        f.exact(slot::ETH_DST, n.dl_dst.to_u64());
    }
    if on(OFPFW_DL_TYPE) {
        f.exact(slot::ETH_TYPE, u64::from(n.dl_type));
    }
    if on(OFPFW_NW_TOS) {
        f.set(slot::IP_DSCP, u64::from(n.nw_tos >> 2), 0x3f);
    }
    if on(OFPFW_NW_PROTO) {
        f.exact(slot::IP_PROTO, u64::from(n.nw_proto));
    }
    if n.nw_src_prefix_len() > 0 {
        f.set(slot::NW_SRC, ip4(n.nw_src), ip4(n.nw_src_mask()));
    }
    if n.nw_dst_prefix_len() > 0 {
        f.set(slot::NW_DST, ip4(n.nw_dst), ip4(n.nw_dst_mask()));
    }
    if on(OFPFW_TP_SRC) {
        f.exact(slot::TP_SRC, u64::from(n.tp_src));
    }
    if on(OFPFW_TP_DST) {
        f.exact(slot::TP_DST, u64::from(n.tp_dst));
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use baton_openflow::Version;
    use baton_openflow::packet::FlowKey;

    #[test]
    fn transport_fields_need_their_prerequisites() {
        let mut m = Match10::ALL;
        m.wildcards &= !(OFPFW_TP_DST | OFPFW_NW_SRC_ALL);
        m.tp_dst = 80;
        m.set_nw_src(Ipv4Addr::new(10, 0, 0, 1), 32);
        let n = normalize(&m);
        assert!(n.is_wildcarded(OFPFW_TP_DST));
        assert_eq!(n.nw_src_prefix_len(), 0);
        assert_eq!(n, normalize(&Match10::ALL));
        assert!(compile(&n).is_all());
    }

    #[test]
    fn exact_match_of_a_key_matches_its_packet() {
        // An ARP request and a TCP segment, as the codec's exact match
        // describes them, must match their own keys.
        let tcp = FlowKey {
            in_port: PortNo(3),
            eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
            eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
            vlan: None,
            eth_type: ETH_TYPE_IPV4,
            network: baton_openflow::packet::Network::Ipv4(baton_openflow::packet::Ipv4Key {
                src: Ipv4Addr::new(10, 0, 0, 1),
                dst: Ipv4Addr::new(10, 0, 0, 2),
                dscp: 10,
                ecn: 1,
                proto: IP_PROTO_TCP,
                transport: baton_openflow::packet::Transport::Tcp { src: 1234, dst: 80 },
            }),
        };
        let m = compile(&normalize(&baton_openflow::v10::Match10::exact(&tcp)));
        assert!(m.matches(&Key::of_packet(Version::V10, &tcp, 0)));
        let mut other = tcp;
        other.in_port = PortNo(4);
        assert!(!m.matches(&Key::of_packet(Version::V10, &other, 0)));
    }
}
