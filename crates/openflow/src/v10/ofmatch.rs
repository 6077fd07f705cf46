//! `ofp_match`, OpenFlow 1.0's fixed 40-byte match with a wildcard bitmap
//! (1.0.0 §5.2.3).
//!
//! [`Match10`] keeps every field and every wildcard bit exactly as received
//! (including bits the spec does not define), so `emit(parse(b)) == b`
//! except for the padding bytes, which are written as zeros.

use crate::error::DecodeError;
use crate::packet::consts::ETH_TYPE_IPV4;
use crate::packet::{FlowKey, Network, PlainIpv4, PlainTransport, Transport};
use crate::types::{MacAddr, PortNo};
use crate::wire::{Put, Reader};
use std::net::Ipv4Addr;

/// Size of `ofp_match` (1.0.0 §5.2.3).
pub const MATCH_LEN: usize = 40;

/// `OFPFW_IN_PORT`: switch input port.
pub const OFPFW_IN_PORT: u32 = 1 << 0;
/// `OFPFW_DL_VLAN`: VLAN id.
pub const OFPFW_DL_VLAN: u32 = 1 << 1;
/// `OFPFW_DL_SRC`: Ethernet source address.
pub const OFPFW_DL_SRC: u32 = 1 << 2;
/// `OFPFW_DL_DST`: Ethernet destination address.
pub const OFPFW_DL_DST: u32 = 1 << 3;
/// `OFPFW_DL_TYPE`: Ethernet frame type.
pub const OFPFW_DL_TYPE: u32 = 1 << 4;
/// `OFPFW_NW_PROTO`: IP protocol (or ARP opcode).
pub const OFPFW_NW_PROTO: u32 = 1 << 5;
/// `OFPFW_TP_SRC`: TCP/UDP source port (or ICMP type).
pub const OFPFW_TP_SRC: u32 = 1 << 6;
/// `OFPFW_TP_DST`: TCP/UDP destination port (or ICMP code).
pub const OFPFW_TP_DST: u32 = 1 << 7;
/// `OFPFW_NW_SRC_SHIFT`: position of the 6-bit count of wildcarded
/// low-order bits of `nw_src`.
pub const OFPFW_NW_SRC_SHIFT: u32 = 8;
/// `OFPFW_NW_SRC_BITS`: width of that count.
pub const OFPFW_NW_SRC_BITS: u32 = 6;
/// `OFPFW_NW_SRC_MASK`: the count's bits within `wildcards`.
pub const OFPFW_NW_SRC_MASK: u32 = ((1 << OFPFW_NW_SRC_BITS) - 1) << OFPFW_NW_SRC_SHIFT;
/// `OFPFW_NW_SRC_ALL`: `nw_src` entirely wildcarded (any count >= 32 means
/// the same).
pub const OFPFW_NW_SRC_ALL: u32 = 32 << OFPFW_NW_SRC_SHIFT;
/// `OFPFW_NW_DST_SHIFT`: position of the 6-bit count of wildcarded
/// low-order bits of `nw_dst`.
pub const OFPFW_NW_DST_SHIFT: u32 = 14;
/// `OFPFW_NW_DST_BITS`: width of that count.
pub const OFPFW_NW_DST_BITS: u32 = 6;
/// `OFPFW_NW_DST_MASK`: the count's bits within `wildcards`.
pub const OFPFW_NW_DST_MASK: u32 = ((1 << OFPFW_NW_DST_BITS) - 1) << OFPFW_NW_DST_SHIFT;
/// `OFPFW_NW_DST_ALL`: `nw_dst` entirely wildcarded.
pub const OFPFW_NW_DST_ALL: u32 = 32 << OFPFW_NW_DST_SHIFT;
/// `OFPFW_DL_VLAN_PCP`: VLAN priority.
pub const OFPFW_DL_VLAN_PCP: u32 = 1 << 20;
/// `OFPFW_NW_TOS`: IP ToS (DSCP field, 6 bits).
pub const OFPFW_NW_TOS: u32 = 1 << 21;
/// `OFPFW_ALL`: every field wildcarded.
pub const OFPFW_ALL: u32 = (1 << 22) - 1;

/// `OFP_VLAN_NONE`: the `dl_vlan` value matching untagged frames.
pub const OFP_VLAN_NONE: u16 = 0xffff;

/// `ofp_match` (1.0.0 §5.2.3): the fields of a flow with a wildcard bitmap
/// saying which ones are ignored.
///
/// `in_port` is kept in 1.3's 32-bit numbering ([`PortNo::from_of10`]).
/// A field whose wildcard bit is set still round-trips its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Match10 {
    /// `wildcards`: `OFPFW_*` bits, kept whole (undefined bits included).
    pub wildcards: u32,
    /// `in_port`.
    pub in_port: PortNo,
    /// `dl_src`.
    pub dl_src: MacAddr,
    /// `dl_dst`.
    pub dl_dst: MacAddr,
    /// `dl_vlan` ([`OFP_VLAN_NONE`] for untagged).
    pub dl_vlan: u16,
    /// `dl_vlan_pcp`.
    pub dl_vlan_pcp: u8,
    /// `dl_type`.
    pub dl_type: u16,
    /// `nw_tos` (DSCP in the upper 6 bits).
    pub nw_tos: u8,
    /// `nw_proto` (or the low 8 bits of the ARP opcode).
    pub nw_proto: u8,
    /// `nw_src`.
    pub nw_src: Ipv4Addr,
    /// `nw_dst`.
    pub nw_dst: Ipv4Addr,
    /// `tp_src` (or ICMP type).
    pub tp_src: u16,
    /// `tp_dst` (or ICMP code).
    pub tp_dst: u16,
}

/// A port as OpenFlow 1.0 writes it: ports without a 16-bit number are
/// written as `OFPP_NONE` (0xffff) rather than truncated.
#[inline]
pub(crate) fn port_to_wire(p: PortNo) -> u16 {
    p.to_of10().unwrap_or(0xffff)
}

#[inline]
fn be16(b: &[u8; MATCH_LEN], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
fn be32(b: &[u8; MATCH_LEN], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
fn mac(b: &[u8; MATCH_LEN], at: usize) -> MacAddr {
    MacAddr([b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5]])
}

impl Match10 {
    /// The match-everything match: all `OFPFW_ALL` bits set, every field 0.
    pub const ALL: Match10 = Match10 {
        wildcards: OFPFW_ALL,
        in_port: PortNo(0),
        dl_src: MacAddr([0; 6]),
        dl_dst: MacAddr([0; 6]),
        dl_vlan: 0,
        dl_vlan_pcp: 0,
        dl_type: 0,
        nw_tos: 0,
        nw_proto: 0,
        nw_src: Ipv4Addr::UNSPECIFIED,
        nw_dst: Ipv4Addr::UNSPECIFIED,
        tp_src: 0,
        tp_dst: 0,
    };

    /// Reads an `ofp_match` (40 bytes).
    #[inline]
    pub fn parse(r: &mut Reader<'_>) -> Result<Match10, DecodeError> {
        let b = r.array::<MATCH_LEN>("ofp_match")?;
        Ok(Match10::from_bytes(&b))
    }

    /// Interprets exactly 40 bytes as an `ofp_match`. Every byte pattern is
    /// a valid match, so this cannot fail.
    #[inline]
    pub fn from_bytes(b: &[u8; MATCH_LEN]) -> Match10 {
        // Offsets from 1.0.0 §5.2.3 (pad1 at 21, pad2 at 26..28).
        Match10 {
            wildcards: be32(b, 0),
            in_port: PortNo::from_of10(be16(b, 4)),
            dl_src: mac(b, 6),
            dl_dst: mac(b, 12),
            dl_vlan: be16(b, 18),
            dl_vlan_pcp: b[20],
            dl_type: be16(b, 22),
            nw_tos: b[24],
            nw_proto: b[25],
            nw_src: Ipv4Addr::from(be32(b, 28)),
            nw_dst: Ipv4Addr::from(be32(b, 32)),
            tp_src: be16(b, 36),
            tp_dst: be16(b, 38),
        }
    }

    /// Writes the 40 wire bytes, padding as zeros. Every field sits at a
    /// constant offset, so this compiles to a handful of stores (on the
    /// FLOW_MOD hot path; issue 12's third session, in BENCHMARKS.md's
    /// git history).
    #[inline]
    pub fn write(&self, b: &mut [u8; MATCH_LEN]) {
        b[0..4].copy_from_slice(&self.wildcards.to_be_bytes());
        b[4..6].copy_from_slice(&port_to_wire(self.in_port).to_be_bytes());
        b[6..12].copy_from_slice(&self.dl_src.0);
        b[12..18].copy_from_slice(&self.dl_dst.0);
        b[18..20].copy_from_slice(&self.dl_vlan.to_be_bytes());
        b[20] = self.dl_vlan_pcp;
        b[21] = 0;
        b[22..24].copy_from_slice(&self.dl_type.to_be_bytes());
        b[24] = self.nw_tos;
        b[25] = self.nw_proto;
        b[26..28].fill(0);
        b[28..32].copy_from_slice(&self.nw_src.octets());
        b[32..36].copy_from_slice(&self.nw_dst.octets());
        b[36..38].copy_from_slice(&self.tp_src.to_be_bytes());
        b[38..40].copy_from_slice(&self.tp_dst.to_be_bytes());
    }

    /// Appends the 40-byte `ofp_match`, padding as zeros.
    #[inline]
    pub fn emit(&self, out: &mut impl Put) {
        let mut b = [0u8; MATCH_LEN];
        self.write(&mut b);
        out.put_slice(&b);
    }

    /// True when every bit of `flag` (an `OFPFW_*` single-bit constant) is
    /// set in `wildcards`.
    #[inline]
    pub const fn is_wildcarded(&self, flag: u32) -> bool {
        self.wildcards & flag == flag
    }

    /// The raw 6-bit count of wildcarded low-order bits of `nw_src`
    /// (0..=63; 32 or more means the whole address is ignored).
    #[inline]
    pub const fn nw_src_wildcard_bits(&self) -> u32 {
        (self.wildcards & OFPFW_NW_SRC_MASK) >> OFPFW_NW_SRC_SHIFT
    }

    /// The raw 6-bit count of wildcarded low-order bits of `nw_dst`.
    #[inline]
    pub const fn nw_dst_wildcard_bits(&self) -> u32 {
        (self.wildcards & OFPFW_NW_DST_MASK) >> OFPFW_NW_DST_SHIFT
    }

    /// Number of high-order bits of `nw_src` that are matched (0..=32).
    #[inline]
    pub const fn nw_src_prefix_len(&self) -> u8 {
        prefix_len(self.nw_src_wildcard_bits())
    }

    /// Number of high-order bits of `nw_dst` that are matched (0..=32).
    #[inline]
    pub const fn nw_dst_prefix_len(&self) -> u8 {
        prefix_len(self.nw_dst_wildcard_bits())
    }

    /// The netmask that `nw_src` is matched under.
    #[inline]
    pub fn nw_src_mask(&self) -> Ipv4Addr {
        netmask(self.nw_src_prefix_len())
    }

    /// The netmask that `nw_dst` is matched under.
    #[inline]
    pub fn nw_dst_mask(&self) -> Ipv4Addr {
        netmask(self.nw_dst_prefix_len())
    }

    /// Matches `nw_src` against `addr`/`prefix_len` (values above 32 are
    /// treated as 32), updating the wildcard count.
    #[inline]
    pub fn set_nw_src(&mut self, addr: Ipv4Addr, prefix_len: u8) {
        let bits = 32 - u32::from(prefix_len.min(32));
        self.nw_src = addr;
        self.wildcards = (self.wildcards & !OFPFW_NW_SRC_MASK) | (bits << OFPFW_NW_SRC_SHIFT);
    }

    /// Matches `nw_dst` against `addr`/`prefix_len` (values above 32 are
    /// treated as 32), updating the wildcard count.
    #[inline]
    pub fn set_nw_dst(&mut self, addr: Ipv4Addr, prefix_len: u8) {
        let bits = 32 - u32::from(prefix_len.min(32));
        self.nw_dst = addr;
        self.wildcards = (self.wildcards & !OFPFW_NW_DST_MASK) | (bits << OFPFW_NW_DST_SHIFT);
    }
}

#[inline]
const fn prefix_len(wild_bits: u32) -> u8 {
    let w = if wild_bits > 32 { 32 } else { wild_bits };
    (32 - w) as u8
}

#[inline]
fn netmask(prefix_len: u8) -> Ipv4Addr {
    let p = u32::from(prefix_len.min(32));
    Ipv4Addr::from(u32::MAX.checked_shl(32 - p).unwrap_or(0))
}

impl Match10 {
    /// The exact match of a frame's key (1.0.0 §5.2.3): the flow matches
    /// exactly the packets whose key is this one.
    ///
    /// Fields the frame lacks are wildcarded as the spec's matching rules
    /// require: `dl_vlan_pcp` when untagged (`dl_vlan` is then
    /// `OFP_VLAN_NONE`); `nw_*` and `tp_*` for frames that are neither IPv4
    /// nor ARP; `nw_tos` and `tp_*` for ARP, whose opcode's low 8 bits go in
    /// `nw_proto` and protocol addresses in `nw_src` / `nw_dst`; `tp_*` for
    /// IPv4 other than TCP, UDP and ICMP, whose type and code go in
    /// `tp_src` / `tp_dst`. IPv6 and SCTP, which 1.0 cannot match, are
    /// matched on `dl_type` / `nw_proto` only.
    #[inline]
    pub fn exact(key: &FlowKey) -> Match10 {
        let mut m = Match10 {
            wildcards: 0,
            in_port: key.in_port,
            dl_src: key.eth_src,
            dl_dst: key.eth_dst,
            dl_vlan: OFP_VLAN_NONE,
            dl_vlan_pcp: 0,
            dl_type: key.eth_type,
            ..Match10::ALL
        };
        match key.vlan {
            Some(tag) => {
                m.dl_vlan = tag.vid;
                m.dl_vlan_pcp = tag.pcp;
            }
            None => m.wildcards |= OFPFW_DL_VLAN_PCP,
        }
        const NO_TP: u32 = OFPFW_TP_SRC | OFPFW_TP_DST;
        const NO_NW: u32 = OFPFW_NW_TOS | OFPFW_NW_PROTO | OFPFW_NW_SRC_ALL | OFPFW_NW_DST_ALL;
        match &key.network {
            Network::Ipv4(ip) => {
                m.nw_tos = ip.dscp << 2;
                m.nw_proto = ip.proto;
                m.nw_src = ip.src;
                m.nw_dst = ip.dst;
                match ip.transport {
                    Transport::Tcp { src, dst } | Transport::Udp { src, dst } => {
                        m.tp_src = src;
                        m.tp_dst = dst;
                    }
                    Transport::Icmpv4 { icmp_type, code } => {
                        m.tp_src = icmp_type.into();
                        m.tp_dst = code.into();
                    }
                    Transport::Sctp { .. } | Transport::Icmpv6 { .. } | Transport::None => {
                        m.wildcards |= NO_TP;
                    }
                }
            }
            Network::Arp(arp) => {
                m.wildcards |= OFPFW_NW_TOS | NO_TP;
                match u8::try_from(arp.op) {
                    Ok(op) => m.nw_proto = op,
                    Err(_) => m.wildcards |= OFPFW_NW_PROTO,
                }
                m.nw_src = arp.spa;
                m.nw_dst = arp.tpa;
            }
            Network::Ipv6(_) | Network::Other => m.wildcards |= NO_NW | NO_TP,
        }
        m
    }

    /// The exact match of the `frame` that arrived on `in_port`: equal to
    /// `Match10::exact(&FlowKey::extract(in_port, frame))`, written
    /// straight from the frame's bytes when it is a [`PlainIpv4`] frame.
    #[inline]
    pub fn exact_frame(in_port: PortNo, frame: &[u8]) -> Match10 {
        let Some(f) = PlainIpv4::new(frame) else {
            return Match10::exact(&FlowKey::extract(in_port, frame));
        };
        let (wildcards, tp_src, tp_dst) = plain_wildcards_and_ports(&f);
        Match10 {
            wildcards,
            in_port,
            dl_src: MacAddr(f.eth_src()),
            dl_dst: MacAddr(f.eth_dst()),
            dl_vlan: OFP_VLAN_NONE,
            dl_vlan_pcp: 0,
            dl_type: ETH_TYPE_IPV4,
            nw_tos: f.tos() & 0xfc,
            nw_proto: f.proto(),
            nw_src: Ipv4Addr::from(f.ipv4_src()),
            nw_dst: Ipv4Addr::from(f.ipv4_dst()),
            tp_src,
            tp_dst,
        }
    }

    /// Writes the 40 bytes of [`Match10::exact_frame`]`(in_port, frame)`;
    /// for a [`PlainIpv4`] frame, straight from the frame's bytes, with no
    /// [`Match10`] in between (for the 1.0 FLOW_MOD written in one go,
    /// `neutral::flow`).
    #[inline(always)]
    pub(crate) fn write_exact_frame(b: &mut [u8; MATCH_LEN], in_port: PortNo, frame: &[u8]) {
        let Some(f) = PlainIpv4::new(frame) else {
            Match10::exact(&FlowKey::extract(in_port, frame)).write(b);
            return;
        };
        let (wildcards, tp_src, tp_dst) = plain_wildcards_and_ports(&f);
        // Offsets as in `write` (1.0.0 §5.2.3); untagged, so `dl_vlan` is
        // OFP_VLAN_NONE and `dl_vlan_pcp` 0.
        b[0..4].copy_from_slice(&wildcards.to_be_bytes());
        b[4..6].copy_from_slice(&port_to_wire(in_port).to_be_bytes());
        b[6..12].copy_from_slice(&f.eth_src());
        b[12..18].copy_from_slice(&f.eth_dst());
        b[18..20].copy_from_slice(&OFP_VLAN_NONE.to_be_bytes());
        b[20] = 0;
        b[21] = 0;
        b[22..24].copy_from_slice(&ETH_TYPE_IPV4.to_be_bytes());
        b[24] = f.tos() & 0xfc;
        b[25] = f.proto();
        b[26..28].fill(0);
        b[28..32].copy_from_slice(&f.ipv4_src());
        b[32..36].copy_from_slice(&f.ipv4_dst());
        b[36..38].copy_from_slice(&tp_src.to_be_bytes());
        b[38..40].copy_from_slice(&tp_dst.to_be_bytes());
    }
}

/// The wildcards and `tp_src` / `tp_dst` of a [`PlainIpv4`] frame's exact
/// match: only `dl_vlan_pcp` wildcarded (untagged) and the ports for TCP
/// and UDP; the transport fields too, as zeros, for the other protocols.
#[inline]
fn plain_wildcards_and_ports(f: &PlainIpv4<'_>) -> (u32, u16, u16) {
    match f.transport() {
        PlainTransport::Tcp | PlainTransport::Udp => (OFPFW_DL_VLAN_PCP, f.tp_src(), f.tp_dst()),
        PlainTransport::Unmatched => (OFPFW_DL_VLAN_PCP | OFPFW_TP_SRC | OFPFW_TP_DST, 0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_all_wildcards_and_round_trips() {
        let mut out = Vec::new();
        Match10::ALL.emit(&mut out);
        assert_eq!(out.len(), MATCH_LEN);
        assert_eq!(&out[..4], &[0x00, 0x3f, 0xff, 0xff]);
        assert!(out[4..].iter().all(|&b| b == 0));
        let m = Match10::parse(&mut Reader::new(&out)).unwrap();
        assert_eq!(m, Match10::ALL);
        assert_eq!(m.nw_src_prefix_len(), 0);
        assert_eq!(m.nw_dst_prefix_len(), 0);
        assert!(m.is_wildcarded(OFPFW_IN_PORT | OFPFW_NW_TOS));
    }

    #[test]
    fn wildcard_constants_match_the_spec() {
        assert_eq!(OFPFW_NW_SRC_MASK, 0x3f00);
        assert_eq!(OFPFW_NW_SRC_ALL, 0x2000);
        assert_eq!(OFPFW_NW_DST_MASK, 0x000f_c000);
        assert_eq!(OFPFW_NW_DST_ALL, 0x0008_0000);
        assert_eq!(OFPFW_DL_VLAN_PCP, 0x0010_0000);
        assert_eq!(OFPFW_ALL, 0x003f_ffff);
    }

    #[test]
    fn nw_prefixes() {
        let mut m = Match10::ALL;
        m.set_nw_src(Ipv4Addr::new(10, 0, 0, 0), 8);
        m.set_nw_dst(Ipv4Addr::new(192, 168, 1, 7), 32);
        assert_eq!(m.nw_src_wildcard_bits(), 24);
        assert_eq!(m.nw_src_prefix_len(), 8);
        assert_eq!(m.nw_src_mask(), Ipv4Addr::new(255, 0, 0, 0));
        assert_eq!(m.nw_dst_wildcard_bits(), 0);
        assert_eq!(m.nw_dst_mask(), Ipv4Addr::new(255, 255, 255, 255));
        // Other wildcard bits are untouched.
        assert!(m.is_wildcarded(OFPFW_TP_DST | OFPFW_IN_PORT));
        // Counts above 32 (up to 63) still mean "all".
        m.wildcards |= OFPFW_NW_SRC_MASK;
        assert_eq!(m.nw_src_wildcard_bits(), 63);
        assert_eq!(m.nw_src_prefix_len(), 0);
        assert_eq!(m.nw_src_mask(), Ipv4Addr::UNSPECIFIED);
    }

    #[test]
    fn fields_at_spec_offsets_and_padding_ignored() {
        let mut b = [0u8; MATCH_LEN];
        b[0..4].copy_from_slice(&0xffc0_0000u32.to_be_bytes()); // undefined bits
        b[4..6].copy_from_slice(&0xfffdu16.to_be_bytes());
        b[6..12].copy_from_slice(&[1, 2, 3, 4, 5, 6]);
        b[12..18].copy_from_slice(&[7, 8, 9, 10, 11, 12]);
        b[18..20].copy_from_slice(&0x0123u16.to_be_bytes());
        b[20] = 5;
        b[21] = 0xee; // pad1
        b[22..24].copy_from_slice(&0x0800u16.to_be_bytes());
        b[24] = 0xb8;
        b[25] = 6;
        b[26] = 0xee; // pad2
        b[27] = 0xee;
        b[28..32].copy_from_slice(&[10, 0, 0, 1]);
        b[32..36].copy_from_slice(&[10, 0, 0, 2]);
        b[36..38].copy_from_slice(&80u16.to_be_bytes());
        b[38..40].copy_from_slice(&443u16.to_be_bytes());
        let m = Match10::from_bytes(&b);
        assert_eq!(m.wildcards, 0xffc0_0000);
        assert_eq!(m.in_port, PortNo::CONTROLLER);
        assert_eq!(m.dl_src, MacAddr([1, 2, 3, 4, 5, 6]));
        assert_eq!(m.dl_dst, MacAddr([7, 8, 9, 10, 11, 12]));
        assert_eq!((m.dl_vlan, m.dl_vlan_pcp, m.dl_type), (0x0123, 5, 0x0800));
        assert_eq!((m.nw_tos, m.nw_proto), (0xb8, 6));
        assert_eq!(m.nw_src, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(m.nw_dst, Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!((m.tp_src, m.tp_dst), (80, 443));
        let mut out = Vec::new();
        m.emit(&mut out);
        b[21] = 0;
        b[26] = 0;
        b[27] = 0;
        assert_eq!(out, b);
    }

    #[test]
    fn short_input_is_an_error() {
        assert!(Match10::parse(&mut Reader::new(&[0u8; 39])).is_err());
    }

    use crate::packet::FlowKey;
    use crate::packet::consts::*;
    use crate::packet::tests::*;

    #[test]
    fn match10_tcp_is_fully_exact_but_pcp() {
        let m = Match10::exact(&FlowKey::extract(PortNo(3), &tcp_frame()));
        assert_eq!(m.wildcards, OFPFW_DL_VLAN_PCP);
        assert_eq!(m.in_port, PortNo(3));
        assert_eq!(m.dl_vlan, OFP_VLAN_NONE);
        assert_eq!(m.dl_type, ETH_TYPE_IPV4);
        assert_eq!((m.nw_proto, m.nw_tos), (6, 0));
        assert_eq!(m.nw_src, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(m.nw_dst, Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!((m.tp_src, m.tp_dst), (1234, 80));
        assert_eq!((m.nw_src_prefix_len(), m.nw_dst_prefix_len()), (32, 32));
    }

    #[test]
    fn match10_arp_puts_opcode_in_nw_proto() {
        let m = Match10::exact(&FlowKey::extract(PortNo(1), &arp_frame()));
        assert_eq!(
            m.wildcards,
            OFPFW_DL_VLAN_PCP | OFPFW_NW_TOS | OFPFW_TP_SRC | OFPFW_TP_DST
        );
        assert_eq!(m.dl_type, ETH_TYPE_ARP);
        assert_eq!(m.dl_dst, MacAddr::BROADCAST);
        assert_eq!(m.nw_proto, 1);
        assert_eq!(m.nw_src, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(m.nw_dst, Ipv4Addr::new(10, 0, 0, 2));
    }

    #[test]
    fn match10_icmp_type_code_in_tp() {
        let m = Match10::exact(&FlowKey::extract(PortNo(1), &icmp_frame()));
        assert_eq!(m.wildcards, OFPFW_DL_VLAN_PCP);
        assert_eq!((m.nw_proto, m.tp_src, m.tp_dst), (1, 8, 0));
    }

    #[test]
    fn match10_vlan_and_tos() {
        let mut f = vlan_udp_frame();
        f[19] = 10 << 2; // ToS: DSCP 10
        let m = Match10::exact(&FlowKey::extract(PortNo(1), &f));
        assert_eq!(m.wildcards, 0);
        assert_eq!((m.dl_vlan, m.dl_vlan_pcp), (42, 5));
        assert_eq!(m.nw_tos, 40);
        assert_eq!((m.tp_src, m.tp_dst), (1, 2));
    }

    #[test]
    fn match10_non_ip_wildcards_network_and_transport() {
        let m = Match10::exact(&FlowKey::extract(PortNo(1), &ipv6_tcp_frame()));
        let nw_tp = OFPFW_NW_TOS
            | OFPFW_NW_PROTO
            | OFPFW_NW_SRC_ALL
            | OFPFW_NW_DST_ALL
            | OFPFW_TP_SRC
            | OFPFW_TP_DST;
        assert_eq!(m.wildcards, OFPFW_DL_VLAN_PCP | nw_tp);
        assert_eq!(m.dl_type, ETH_TYPE_IPV6);
        assert_eq!((m.nw_src_prefix_len(), m.nw_dst_prefix_len()), (0, 0));
        assert_eq!(m.wildcards & !OFPFW_ALL, 0);
        // Truncated TCP header: ports wildcarded, addresses exact.
        let m = Match10::exact(&FlowKey::extract(PortNo(1), &tcp_frame()[..40]));
        assert_eq!(m.wildcards, OFPFW_DL_VLAN_PCP | OFPFW_TP_SRC | OFPFW_TP_DST);
    }
}
