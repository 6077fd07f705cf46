//! Rewriting a frame in place: set-field, VLAN push and pop, MPLS push
//! and pop, PBB push and pop, TTLs and their copies between MPLS and IP.
//!
//! etherparse reads headers but has no in-place writers with incremental
//! checksum updates, so the writes are done here by hand: each field is
//! written at its offset and every checksum that covers it is fixed with
//! RFC 1624's incremental update (IPv4 header; TCP, UDP and ICMP, whose
//! pseudo-header covers the IP addresses); SCTP's CRC32c is recomputed.
//! etherparse finds where the IPv6 payload starts after extension headers.
//! The neighbour discovery target and link-layer address options are
//! written inside the ICMPv6 message, whose checksum covers them.
//! A field the frame does not have is left alone; nothing allocates except
//! a VLAN or MPLS push into a buffer without 4 bytes of spare capacity,
//! or a PBB push into one without 18.
//!
//! The MPLS actions work on the label stack entry right after the
//! Ethernet header and every VLAN tag (1.3.5 §7.2.5: a pushed entry goes
//! "after any existing VLAN tags"); a frame whose ethertype there is not
//! 0x8847 or 0x8848 has no MPLS fields to set, pop or decrement.
//!
//! The PBB actions (IEEE 802.1ah) likewise find the I-TAG after the
//! Ethernet header and every VLAN tag (the B-TAG): ethertype 0x88e7, the
//! 4-byte I-TAG TCI (I-PCP 3 bits, I-DEI 1, UCA 1, reserved 3, I-SID 24),
//! then the customer frame from its C-DA. The lookup key reads the I-SID
//! after at most one tag, as the codec's parser finds the ethertype.

use crate::action::SetField;
use crate::key::{ETH_TYPE_PBB, ISID_MASK};
use baton_openflow::packet::consts::*;
use etherparse::LaxIpv6Slice;

#[derive(Debug, Clone, Copy)]
struct Layout {
    tagged: bool,
    eth_type: u16,
    l3: usize,
    /// Start of the transport header, for unfragmented or first-fragment
    /// IP packets whose header is present.
    l4: Option<usize>,
    proto: u8,
}

fn be16(f: &[u8], at: usize) -> u16 {
    match f.get(at..at + 2) {
        Some(&[a, b]) => u16::from_be_bytes([a, b]),
        _ => 0,
    }
}

fn layout(f: &[u8]) -> Option<Layout> {
    if f.len() < 14 {
        return None;
    }
    let mut eth_type = be16(f, 12);
    let mut l3 = 14;
    let tagged = (eth_type == ETH_TYPE_VLAN || eth_type == ETH_TYPE_VLAN_8021AD) && f.len() >= 18;
    if tagged {
        eth_type = be16(f, 16);
        l3 = 18;
    }
    let mut lay = Layout {
        tagged,
        eth_type,
        l3,
        l4: None,
        proto: 0,
    };
    match eth_type {
        ETH_TYPE_IPV4 if f.len() >= l3 + 20 => {
            let ihl = usize::from(f[l3] & 0x0f) * 4;
            lay.proto = f[l3 + 9];
            let frag_offset = be16(f, l3 + 6) & 0x1fff;
            if ihl >= 20 && frag_offset == 0 && l3 + ihl <= f.len() {
                lay.l4 = Some(l3 + ihl);
            }
        }
        ETH_TYPE_IPV6 => {
            if let Ok((ip, _)) = LaxIpv6Slice::from_slice(&f[l3..]) {
                let p = ip.payload();
                lay.proto = p.ip_number.0;
                // A fragment's transport header may be elsewhere: leave
                // fragments' transport fields alone.
                if !p.fragmented {
                    // The payload is a sub-slice of `f`; its offset is the
                    // difference of the two start addresses.
                    let at = p.payload.as_ptr() as usize - f.as_ptr() as usize;
                    lay.l4 = Some(at);
                }
            }
        }
        _ => {}
    }
    Some(lay)
}

/// RFC 1624 eq. 3: the checksum `csum` after the bytes `old` (16-bit
/// aligned within the checksummed data) became `new`.
fn csum_fixup(csum: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut sum = u32::from(!csum);
    for (o, n) in old.chunks(2).zip(new.chunks(2)) {
        let o = u16::from_be_bytes([o[0], o.get(1).copied().unwrap_or(0)]);
        let n = u16::from_be_bytes([n[0], n.get(1).copied().unwrap_or(0)]);
        sum += u32::from(!o) + u32::from(n);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Fixes the 16-bit checksum stored at `at` for a change from `old` to
/// `new`. `udp` keeps a zero (absent) UDP checksum zero and never writes
/// zero.
fn fix(f: &mut [u8], at: usize, old: &[u8], new: &[u8], udp: bool) {
    let Some(c) = f.get(at..at + 2) else { return };
    let csum = u16::from_be_bytes([c[0], c[1]]);
    if udp && csum == 0 {
        return;
    }
    let mut v = csum_fixup(csum, old, new);
    if udp && v == 0 {
        v = 0xffff;
    }
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Where the transport checksum of `lay` is, and whether it is UDP's.
fn l4_csum(f: &[u8], lay: &Layout) -> Option<(usize, bool)> {
    let l4 = lay.l4?;
    let (off, need, udp) = match lay.proto {
        IP_PROTO_TCP => (16, 18, false),
        IP_PROTO_UDP => (6, 8, true),
        IP_PROTO_ICMP if lay.eth_type == ETH_TYPE_IPV4 => (2, 4, false),
        IP_PROTO_ICMPV6 if lay.eth_type == ETH_TYPE_IPV6 => (2, 4, false),
        _ => return None,
    };
    (f.len() >= l4 + need).then_some((l4 + off, udp))
}

/// Writes `new` at `at` (inside an IP header starting at `lay.l3`),
/// fixing the IPv4 header checksum and, for `pseudo` fields (addresses),
/// the transport checksum.
fn write_l3(f: &mut [u8], lay: &Layout, at: usize, new: &[u8], pseudo: bool) {
    let end = at + new.len();
    if end > f.len() {
        return;
    }
    let mut old = [0u8; 16];
    let old = &mut old[..new.len()];
    old.copy_from_slice(&f[at..end]);
    f[at..end].copy_from_slice(new);
    if lay.eth_type == ETH_TYPE_IPV4 {
        fix(f, lay.l3 + 10, old, new, false);
    }
    if pseudo {
        // ICMPv4's checksum has no pseudo-header.
        if let Some((c, udp)) = l4_csum(f, lay).filter(|_| lay.proto != IP_PROTO_ICMP) {
            fix(f, c, old, new, udp);
        }
        if lay.proto == IP_PROTO_SCTP {
            sctp_recompute(f, lay);
        }
    }
}

/// Rewrites a 16-bit-aligned pair of bytes at `at` (within the IP
/// header) with `byte` replaced by `val` under `mask`.
fn write_l3_bits(f: &mut [u8], lay: &Layout, at: usize, mask: u8, val: u8) {
    let base = at - ((at - lay.l3) % 2);
    if base + 2 > f.len() {
        return;
    }
    let mut w = [f[base], f[base + 1]];
    let i = at - base;
    w[i] = (w[i] & !mask) | (val & mask);
    write_l3(f, lay, base, &w, false);
}

/// Writes `new` (at most 16 bytes, 16-bit aligned within the transport
/// message) at `at` inside the transport message and fixes its checksum
/// (or SCTP's CRC).
fn write_l4(f: &mut [u8], lay: &Layout, at: usize, new: &[u8]) {
    let end = at + new.len();
    if end > f.len() || new.len() > 16 {
        return;
    }
    let mut old = [0u8; 16];
    let old = &mut old[..new.len()];
    old.copy_from_slice(&f[at..end]);
    f[at..end].copy_from_slice(new);
    if lay.proto == IP_PROTO_SCTP {
        sctp_recompute(f, lay);
    } else if let Some((c, udp)) = l4_csum(f, lay) {
        fix(f, c, old, new, udp);
    }
}

/// SCTP's CRC32c (RFC 4960 appendix B) cannot be updated incrementally;
/// it is recomputed over the packet. Bitwise, since SCTP is rare here and
/// a table would be the only reason for another dependency.
fn sctp_recompute(f: &mut [u8], lay: &Layout) {
    let Some(l4) = lay.l4 else { return };
    if f.len() < l4 + 12 {
        return;
    }
    f[l4 + 8..l4 + 12].fill(0);
    let mut crc = !0u32;
    for &b in &f[l4..] {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    f[l4 + 8..l4 + 12].copy_from_slice(&(!crc).to_le_bytes());
}

/// Applies a set-field action.
pub fn set_field(f: &mut Vec<u8>, s: &SetField) {
    let Some(mut lay) = layout(f) else { return };
    use SetField as S;
    match *s {
        S::MplsLabel(_) | S::MplsTc(_) | S::MplsBos(_) => set_mpls_field(f, s),
        S::PbbIsid(isid) => {
            if let Some(at) = itag_at(f) {
                let tci = (lse(f, at) & !ISID_MASK) | (isid & ISID_MASK);
                f[at..at + 4].copy_from_slice(&tci.to_be_bytes());
            }
        }
        S::EthDst(m) => f[0..6].copy_from_slice(&m.0),
        S::EthSrc(m) => f[6..12].copy_from_slice(&m.0),
        S::VlanVid { push: true, .. } | S::VlanPcp { push: true, .. } if !lay.tagged => {
            push_vlan(f, ETH_TYPE_VLAN);
            set_field(f, s);
        }
        S::VlanVid { .. } | S::VlanPcp { .. } if !lay.tagged => {}
        S::VlanVid { vid, .. } => {
            let tci = (be16(f, 14) & 0xf000) | (vid & 0x0fff);
            f[14..16].copy_from_slice(&tci.to_be_bytes());
        }
        S::VlanPcp { pcp, .. } => {
            let tci = (be16(f, 14) & 0x1fff) | (u16::from(pcp & 7) << 13);
            f[14..16].copy_from_slice(&tci.to_be_bytes());
        }
        S::IpDscp(d) | S::IpEcn(d) => {
            let dscp = matches!(s, S::IpDscp(_));
            let (mask, val) = if dscp { (0xfc, d << 2) } else { (0x03, d) };
            match lay.eth_type {
                ETH_TYPE_IPV4 if f.len() >= lay.l3 + 20 => {
                    write_l3_bits(f, &lay, lay.l3 + 1, mask, val)
                }
                ETH_TYPE_IPV6 if f.len() >= lay.l3 + 40 => {
                    // Traffic class: the low nibble of byte 0 and the high
                    // nibble of byte 1.
                    let tc = ((f[lay.l3] & 0x0f) << 4) | (f[lay.l3 + 1] >> 4);
                    let tc = (tc & !mask) | (val & mask);
                    f[lay.l3] = (f[lay.l3] & 0xf0) | (tc >> 4);
                    f[lay.l3 + 1] = (f[lay.l3 + 1] & 0x0f) | (tc << 4);
                }
                _ => {}
            }
        }
        S::Ipv4Src(a) | S::Ipv4Dst(a) if lay.eth_type == ETH_TYPE_IPV4 => {
            let at = lay.l3 + if matches!(s, S::Ipv4Src(_)) { 12 } else { 16 };
            if f.len() >= lay.l3 + 20 {
                write_l3(f, &lay, at, &a.octets(), true);
            }
        }
        S::Ipv6Src(a) | S::Ipv6Dst(a) if lay.eth_type == ETH_TYPE_IPV6 => {
            let at = lay.l3 + if matches!(s, S::Ipv6Src(_)) { 8 } else { 24 };
            write_l3(f, &lay, at, &a.octets(), true);
        }
        S::Ipv6Flabel(v) if lay.eth_type == ETH_TYPE_IPV6 && f.len() >= lay.l3 + 4 => {
            let l3 = lay.l3;
            f[l3 + 1] = (f[l3 + 1] & 0xf0) | ((v >> 16) as u8 & 0x0f);
            f[l3 + 2] = (v >> 8) as u8;
            f[l3 + 3] = v as u8;
        }
        S::TpSrc(p) | S::TpDst(p)
            if matches!(lay.proto, IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_SCTP) =>
        {
            if let Some(l4) = lay.l4 {
                let at = l4 + if matches!(s, S::TpSrc(_)) { 0 } else { 2 };
                write_l4(f, &lay, at, &p.to_be_bytes());
            }
        }
        S::IcmpType(v) | S::IcmpCode(v)
            if matches!(
                (lay.proto, lay.eth_type),
                (IP_PROTO_ICMP, ETH_TYPE_IPV4) | (IP_PROTO_ICMPV6, ETH_TYPE_IPV6)
            ) =>
        {
            if let Some(l4) = lay.l4.filter(|&l4| f.len() >= l4 + 4) {
                let mut w = [f[l4], f[l4 + 1]];
                w[usize::from(matches!(s, S::IcmpCode(_)))] = v;
                lay.proto = if lay.eth_type == ETH_TYPE_IPV4 {
                    IP_PROTO_ICMP
                } else {
                    IP_PROTO_ICMPV6
                };
                write_l4(f, &lay, l4, &w);
            }
        }
        S::Ipv6NdTarget(_) | S::Ipv6NdSll(_) | S::Ipv6NdTll(_)
            if lay.eth_type == ETH_TYPE_IPV6 && lay.proto == IP_PROTO_ICMPV6 =>
        {
            set_nd_field(f, &lay, s)
        }
        S::ArpOp(_) | S::ArpSha(_) | S::ArpSpa(_) | S::ArpTha(_) | S::ArpTpa(_)
            if lay.eth_type == ETH_TYPE_ARP && f.len() >= lay.l3 + 28 =>
        {
            let l3 = lay.l3;
            match *s {
                S::ArpOp(op) => f[l3 + 6..l3 + 8].copy_from_slice(&op.to_be_bytes()),
                S::ArpSha(m) => f[l3 + 8..l3 + 14].copy_from_slice(&m.0),
                S::ArpSpa(a) => f[l3 + 14..l3 + 18].copy_from_slice(&a.octets()),
                S::ArpTha(m) => f[l3 + 18..l3 + 24].copy_from_slice(&m.0),
                S::ArpTpa(a) => f[l3 + 24..l3 + 28].copy_from_slice(&a.octets()),
                _ => {}
            }
        }
        _ => {}
    }
}

/// Writes the target address or the link-layer address option of an
/// ICMPv6 neighbour solicitation or advertisement (RFC 4861 §4.3, §4.4),
/// read as the packet parser reads it: code 0, the target after 4
/// reserved bytes, then options of `len * 8` bytes; the source
/// link-layer option (type 1) of a solicitation, the target link-layer
/// option (type 2) of an advertisement, 8 bytes long. The first such
/// option is written, as Open vSwitch's `packet_set_nd` does; a message
/// without one, or with a malformed option list before it, is left
/// alone. The ICMPv6 checksum, which covers the whole message, is
/// updated incrementally.
fn set_nd_field(f: &mut [u8], lay: &Layout, s: &SetField) {
    let Some(l4) = lay.l4 else { return };
    // The ICMPv6 message ends where the IPv6 payload does (the frame may
    // be padded).
    let end = (lay.l3 + 40 + usize::from(be16(f, lay.l3 + 4))).min(f.len());
    if end < l4 + 24 {
        return;
    }
    let (icmp_type, code) = (f[l4], f[l4 + 1]);
    if code != 0 || (icmp_type != ICMPV6_ND_SOLICIT && icmp_type != ICMPV6_ND_ADVERT) {
        return;
    }
    let (opt_type, mac) = match *s {
        SetField::Ipv6NdTarget(a) => return write_l4(f, lay, l4 + 8, &a.octets()),
        SetField::Ipv6NdSll(m) if icmp_type == ICMPV6_ND_SOLICIT => (1, m),
        SetField::Ipv6NdTll(m) if icmp_type == ICMPV6_ND_ADVERT => (2, m),
        _ => return,
    };
    let mut at = l4 + 24;
    while at + 2 <= end {
        let len = usize::from(f[at + 1]) * 8;
        if len == 0 || at + len > end {
            return;
        }
        if f[at] == opt_type && len == 8 {
            return write_l4(f, lay, at + 2, &mac.0);
        }
        at += len;
    }
}

/// Pushes a VLAN tag with `tpid`, copying the id and priority of the tag
/// already there, if any (1.3.5 §7.2.5 `OFPAT_PUSH_VLAN`).
pub fn push_vlan(f: &mut Vec<u8>, tpid: u16) {
    if f.len() < 14 {
        return;
    }
    let outer = be16(f, 12);
    let tci = if outer == ETH_TYPE_VLAN || outer == ETH_TYPE_VLAN_8021AD {
        be16(f, 14)
    } else {
        0
    };
    let [t0, t1] = tpid.to_be_bytes();
    let [c0, c1] = tci.to_be_bytes();
    f.splice(12..12, [t0, t1, c0, c1]);
}

/// Pops the outer VLAN tag, if there is one.
pub fn pop_vlan(f: &mut Vec<u8>) {
    if layout(f).is_some_and(|l| l.tagged) {
        f.drain(12..16);
    }
}

/// Sets the IPv4 TTL or IPv6 hop limit.
pub fn set_ttl(f: &mut [u8], ttl: u8) {
    let Some(lay) = layout(f) else { return };
    match lay.eth_type {
        ETH_TYPE_IPV4 if f.len() >= lay.l3 + 20 => write_l3_bits(f, &lay, lay.l3 + 8, 0xff, ttl),
        ETH_TYPE_IPV6 if f.len() >= lay.l3 + 40 => f[lay.l3 + 7] = ttl,
        _ => {}
    }
}

/// Decrements the IPv4 TTL or IPv6 hop limit; false when it was 0 or 1
/// (the packet must be dropped, or sent to the controller with reason
/// `OFPR_INVALID_TTL`). Frames without IP pass.
pub fn dec_ttl(f: &mut [u8]) -> bool {
    let Some(lay) = layout(f) else { return true };
    let at = match lay.eth_type {
        ETH_TYPE_IPV4 if f.len() >= lay.l3 + 20 => lay.l3 + 8,
        ETH_TYPE_IPV6 if f.len() >= lay.l3 + 40 => lay.l3 + 7,
        _ => return true,
    };
    let ttl = f[at];
    if ttl <= 1 {
        return false;
    }
    if lay.eth_type == ETH_TYPE_IPV4 {
        write_l3_bits(f, &lay, at, 0xff, ttl - 1);
    } else {
        f[at] = ttl - 1;
    }
    true
}

/// Offset of the ethertype after the Ethernet header and every VLAN
/// tag (802.1Q or 802.1ad), if the frame has one there.
fn inner_type_at(f: &[u8]) -> Option<usize> {
    let mut at = 12;
    loop {
        let t = u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]);
        if t != ETH_TYPE_VLAN && t != ETH_TYPE_VLAN_8021AD {
            return Some(at);
        }
        at += 4;
    }
}

/// Offset of the outermost MPLS label stack entry, if the frame is MPLS
/// and has the whole entry.
fn mpls_at(f: &[u8]) -> Option<usize> {
    let at = inner_type_at(f)?;
    let t = be16(f, at);
    (crate::key::is_mpls(t) && f.len() >= at + 6).then_some(at + 2)
}

fn lse(f: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([f[at], f[at + 1], f[at + 2], f[at + 3]])
}

/// The TTL a pushed label stack entry gets on a frame without MPLS: the
/// IPv4 TTL or IPv6 hop limit when the frame is IP and it is not 0,
/// else 64 (Open vSwitch's `flow_push_mpls` does the same).
const DEFAULT_MPLS_TTL: u8 = 64;

/// Pushes an MPLS label stack entry with ethertype `ethertype` (0x8847
/// or 0x8848) after the Ethernet header and any VLAN tags (1.3.5 §7.2.5
/// `OFPAT_PUSH_MPLS`). On an MPLS frame the new entry copies the label,
/// TC and TTL of the old outermost one, with BoS 0; otherwise it is
/// label 0, TC 0 (not derived from the IP DSCP), BoS 1, and the IPv4 TTL
/// or IPv6 hop limit, or 64 when the frame is not IP or that is 0.
pub fn push_mpls(f: &mut Vec<u8>, ethertype: u16) {
    let Some(at) = inner_type_at(f) else { return };
    let inner = at + 2;
    let old = be16(f, at);
    let entry = if crate::key::is_mpls(old) {
        if f.len() < inner + 4 {
            return;
        }
        lse(f, inner) & !0x100
    } else {
        let ip_ttl = match old {
            ETH_TYPE_IPV4 if f.len() >= inner + 20 => f[inner + 8],
            ETH_TYPE_IPV6 if f.len() >= inner + 40 => f[inner + 7],
            _ => 0,
        };
        let ttl = if ip_ttl == 0 {
            DEFAULT_MPLS_TTL
        } else {
            ip_ttl
        };
        0x100 | u32::from(ttl)
    };
    f[at..inner].copy_from_slice(&ethertype.to_be_bytes());
    f.splice(inner..inner, entry.to_be_bytes());
}

/// Pops the outermost MPLS label stack entry and sets the ethertype to
/// `ethertype` (1.3.5 §7.2.5 `OFPAT_POP_MPLS`); a frame without MPLS is
/// left alone.
pub fn pop_mpls(f: &mut Vec<u8>, ethertype: u16) {
    let Some(at) = mpls_at(f) else { return };
    f[at - 2..at].copy_from_slice(&ethertype.to_be_bytes());
    f.drain(at..at + 4);
}

/// Writes the label, TC or BoS of the outermost MPLS entry.
fn set_mpls_field(f: &mut [u8], s: &SetField) {
    let Some(at) = mpls_at(f) else { return };
    let (mask, val) = match *s {
        SetField::MplsLabel(l) => (0xffff_f000, l << 12),
        SetField::MplsTc(t) => (0xe00, u32::from(t) << 9),
        SetField::MplsBos(b) => (0x100, u32::from(b) << 8),
        _ => return,
    };
    let v = (lse(f, at) & !mask) | (val & mask);
    f[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// Sets the TTL of the outermost MPLS entry (`OFPAT_SET_MPLS_TTL`).
pub fn set_mpls_ttl(f: &mut [u8], ttl: u8) {
    if let Some(at) = mpls_at(f) {
        f[at + 3] = ttl;
    }
}

/// Decrements the TTL of the outermost MPLS entry
/// (`OFPAT_DEC_MPLS_TTL`); false when it was 0 or 1, as [`dec_ttl`].
/// Frames without MPLS pass.
pub fn dec_mpls_ttl(f: &mut [u8]) -> bool {
    let Some(at) = mpls_at(f) else { return true };
    let ttl = f[at + 3];
    if ttl <= 1 {
        return false;
    }
    f[at + 3] = ttl - 1;
    true
}

/// Offset of the I-TAG TCI of a PBB frame (after the Ethernet header,
/// every VLAN tag and the ethertype 0x88e7), if the frame is PBB and has
/// the whole TCI.
fn itag_at(f: &[u8]) -> Option<usize> {
    let at = inner_type_at(f)?;
    (be16(f, at) == ETH_TYPE_PBB && f.len() >= at + 6).then_some(at + 2)
}

/// Length of the outer header [`push_pbb`] puts before the frame: B-DA,
/// B-SA, the ethertype and the I-TAG TCI.
const PBB_PUSH_LEN: usize = 18;

/// Pushes a PBB service tag (1.3.5 §7.2.5 `OFPAT_PUSH_PBB`, "push a new
/// PBB service tag (I-TAG)"), with the ethertype `ethertype` (0x88e7):
/// the whole frame, from its destination address on and with its VLAN
/// tags, becomes the customer frame (C-DA, C-SA, ...), and before it go
/// a new outer Ethernet header with the frame's addresses (B-DA, B-SA),
/// no B-TAG, the ethertype and an I-TAG TCI. 1.3.5 §5.12.1 ("default
/// values for fields on push") has a pushed header's fields copied from
/// the existing frame where it has them (its table: PBB I-SID from PBB
/// I-SID, I-PCP from VLAN PCP, C-DA and C-SA from the Ethernet
/// addresses) and set to zero where it does not. So the I-SID is that of
/// the I-TAG of a frame that is already PBB, else 0; the I-PCP is the
/// outer VLAN tag's PCP, else 0; I-DEI, UCA and the reserved bits are 0
/// (OpenFlow 1.3 sets none of them). A frame shorter than an Ethernet
/// header is left alone.
pub fn push_pbb(f: &mut Vec<u8>, ethertype: u16) {
    if f.len() < 14 {
        return;
    }
    let outer = be16(f, 12);
    let pcp = if (outer == ETH_TYPE_VLAN || outer == ETH_TYPE_VLAN_8021AD) && f.len() >= 16 {
        u32::from(f[14] >> 5)
    } else {
        0
    };
    let isid = itag_at(f).map_or(0, |at| lse(f, at) & ISID_MASK);
    let mut h = [0u8; PBB_PUSH_LEN];
    h[..12].copy_from_slice(&f[..12]);
    h[12..14].copy_from_slice(&ethertype.to_be_bytes());
    h[14..].copy_from_slice(&((pcp << 29) | isid).to_be_bytes());
    f.splice(0..0, h);
}

/// Pops a PBB service tag (1.3.5 §7.2.5 `OFPAT_POP_PBB`): removes the
/// outer Ethernet addresses, any B-TAG, the ethertype 0x88e7 and the
/// I-TAG TCI, leaving the customer frame. A frame that is not PBB, or
/// whose customer frame is shorter than an Ethernet header, is left
/// alone.
pub fn pop_pbb(f: &mut Vec<u8>) {
    let Some(at) = itag_at(f) else { return };
    let customer = at + 4;
    if f.len() >= customer + 14 {
        f.drain(..customer);
    }
}

/// Where the TTL of the header under the outermost label stack entry at
/// `at` is: the next entry's, when the outer one is not the bottom of the
/// stack; else that of the IPv4 or IPv6 header the stack carries, when
/// the payload's first nibble says it is one (as Open vSwitch guesses)
/// and the header is whole. The second value says whether the TTL is an
/// IPv4 one (under a header checksum).
fn inner_ttl_at(f: &[u8], at: usize) -> Option<(usize, bool)> {
    let below = at + 4;
    if lse(f, at) & 0x100 == 0 {
        return (f.len() >= below + 4).then_some((below + 3, false));
    }
    match f.get(below)? >> 4 {
        4 if f.len() >= below + 20 => Some((below + 8, true)),
        6 if f.len() >= below + 40 => Some((below + 7, false)),
        _ => None,
    }
}

/// Copies the TTL of the next-to-outermost header to the outermost
/// label stack entry (`OFPAT_COPY_TTL_OUT`, 1.3.5 §7.2.5): from the next
/// entry, or from the IPv4 TTL or IPv6 hop limit under the last entry. A
/// frame without MPLS, or whose inner header is not known, is left
/// alone.
pub fn copy_ttl_out(f: &mut [u8]) {
    let Some(at) = mpls_at(f) else { return };
    if let Some((inner, _)) = inner_ttl_at(f, at) {
        f[at + 3] = f[inner];
    }
}

/// Copies the TTL of the outermost label stack entry to the
/// next-to-outermost header (`OFPAT_COPY_TTL_IN`, 1.3.5 §7.2.5): to the
/// next entry, or to the IPv4 TTL (fixing the header checksum) or IPv6
/// hop limit under the last entry. A frame without MPLS, or whose inner
/// header is not known, is left alone.
pub fn copy_ttl_in(f: &mut [u8]) {
    let Some(at) = mpls_at(f) else { return };
    let Some((inner, ipv4)) = inner_ttl_at(f, at) else {
        return;
    };
    let ttl = f[at + 3];
    if ipv4 {
        // The TTL and protocol bytes form one 16-bit word of the header.
        let old = [f[inner], f[inner + 1]];
        f[inner] = ttl;
        fix(f, inner + 2, &old, &[ttl, old[1]], false);
    } else {
        f[inner] = ttl;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tcp_frame, udp_frame, with_vlan};
    use baton_openflow::types::MacAddr;
    use etherparse::{SlicedPacket, TransportSlice};
    use std::net::Ipv4Addr;

    /// Checks the IPv4 and transport checksums by recomputing them with
    /// etherparse.
    fn checksums_ok(f: &[u8]) -> bool {
        let p = SlicedPacket::from_ethernet(f).unwrap();
        let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
            return false;
        };
        let h = ip.header().to_header();
        if h.calc_header_checksum() != h.header_checksum {
            return false;
        }
        match &p.transport {
            Some(TransportSlice::Udp(u)) => {
                let want = u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap();
                want == u.checksum()
            }
            Some(TransportSlice::Tcp(t)) => {
                let want = t.to_header().calc_checksum_ipv4(&h, t.payload()).unwrap();
                want == t.checksum()
            }
            _ => false,
        }
    }

    #[test]
    fn address_and_port_writes_keep_checksums_valid() {
        for mut f in [
            udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 53),
            tcp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 1234, 80),
        ] {
            assert!(checksums_ok(&f));
            set_field(&mut f, &SetField::Ipv4Src(Ipv4Addr::new(192, 168, 7, 9)));
            set_field(&mut f, &SetField::Ipv4Dst(Ipv4Addr::new(172, 16, 0, 3)));
            set_field(&mut f, &SetField::TpDst(8080));
            set_field(&mut f, &SetField::TpSrc(4321));
            set_field(&mut f, &SetField::IpDscp(46));
            set_ttl(&mut f, 9);
            assert!(dec_ttl(&mut f));
            assert!(checksums_ok(&f), "{f:02x?}");
            let k = baton_openflow::packet::FlowKey::extract(baton_openflow::types::PortNo(1), &f);
            match k.network {
                baton_openflow::packet::Network::Ipv4(ip) => {
                    assert_eq!(ip.src, Ipv4Addr::new(192, 168, 7, 9));
                    assert_eq!(ip.dst, Ipv4Addr::new(172, 16, 0, 3));
                    assert_eq!(ip.dscp, 46);
                    assert_eq!(k.transport().ip_ports(), Some((4321, 8080)));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// An SCTP packet (common header, one 16-byte DATA chunk) from port
    /// 11111 to 22222 over IPv4 or IPv6, its checksum computed by the
    /// `crc` crate's CRC-32C (Castagnoli, RFC 4960 appendix B: stored
    /// least significant byte first).
    fn sctp_frame(v6: bool) -> Vec<u8> {
        let mut sctp = vec![0x2b, 0x67, 0x56, 0xce, 0, 0, 0, 9, 0, 0, 0, 0];
        sctp.extend_from_slice(&[0, 3, 0, 16, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        let crc = crc32c(&sctp);
        sctp[8..12].copy_from_slice(&crc.to_le_bytes());
        let (src, dst) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut f = Vec::new();
        let b = etherparse::PacketBuilder::ethernet2(src, dst);
        let proto = etherparse::IpNumber(132);
        if v6 {
            b.ipv6(
                [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                64,
            )
            .write(&mut f, proto, &sctp)
            .unwrap();
        } else {
            b.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
                .write(&mut f, proto, &sctp)
                .unwrap();
        }
        f
    }

    fn crc32c(b: &[u8]) -> u32 {
        crc::Crc::<u32>::new(&crc::CRC_32_ISCSI).checksum(b)
    }

    /// Whether the SCTP packet at the end of `f` (`len` bytes) carries the
    /// CRC-32C of itself with the checksum field zeroed.
    fn sctp_checksum_ok(f: &[u8], len: usize) -> bool {
        let mut sctp = f[f.len() - len..].to_vec();
        let stored = u32::from_le_bytes(sctp[8..12].try_into().unwrap());
        sctp[8..12].fill(0);
        crc32c(&sctp) == stored
    }

    #[test]
    fn sctp_port_writes_keep_the_crc32c_valid() {
        for v6 in [false, true] {
            let mut f = sctp_frame(v6);
            assert!(sctp_checksum_ok(&f, 28), "the frame as built");
            set_field(&mut f, &SetField::TpSrc(12345));
            assert!(
                sctp_checksum_ok(&f, 28),
                "after tp_src, IPv6 {v6}: {f:02x?}"
            );
            set_field(&mut f, &SetField::TpDst(80));
            assert!(sctp_checksum_ok(&f, 28), "after tp_dst, IPv6 {v6}");
            let sctp = &f[f.len() - 28..];
            assert_eq!(&sctp[..4], &[0x30, 0x39, 0, 80]);
        }
    }

    trait Ports {
        fn ip_ports(&self) -> Option<(u16, u16)>;
    }
    impl Ports for baton_openflow::packet::Transport {
        fn ip_ports(&self) -> Option<(u16, u16)> {
            match *self {
                Self::Tcp { src, dst } | Self::Udp { src, dst } => Some((src, dst)),
                _ => None,
            }
        }
    }

    #[test]
    fn vlan_push_set_pop() {
        let plain = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 53);
        let mut f = plain.clone();
        push_vlan(&mut f, 0x8100);
        set_field(
            &mut f,
            &SetField::VlanVid {
                vid: 42,
                push: false,
            },
        );
        set_field(
            &mut f,
            &SetField::VlanPcp {
                pcp: 5,
                push: false,
            },
        );
        assert_eq!(f, with_vlan(&plain, 42, 5));
        pop_vlan(&mut f);
        assert_eq!(f, plain);
        // 1.0 semantics: setting the id of an untagged frame adds a tag.
        set_field(&mut f, &SetField::VlanVid { vid: 7, push: true });
        assert_eq!(f, with_vlan(&plain, 7, 0));
        // 1.3 semantics: untagged frames are left alone.
        let mut g = plain.clone();
        set_field(
            &mut g,
            &SetField::VlanVid {
                vid: 7,
                push: false,
            },
        );
        assert_eq!(g, plain);
        set_field(&mut g, &SetField::EthSrc(MacAddr([9; 6])));
        assert_eq!(&g[6..12], &[9; 6]);
    }

    #[test]
    fn mpls_push_goes_after_every_vlan_tag() {
        let plain = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 53);
        // 802.1ad outer tag, 802.1Q inner tag.
        let mut qinq = with_vlan(&with_vlan(&plain, 7, 1), 9, 2);
        qinq[12..14].copy_from_slice(&[0x88, 0xa8]);
        let mut f = qinq.clone();
        push_mpls(&mut f, 0x8847);
        assert_eq!(&f[..20], &qinq[..20]);
        assert_eq!(&f[20..22], &[0x88, 0x47]);
        // Label 0, TC 0, BoS 1, the IP TTL (64).
        assert_eq!(&f[22..26], &[0, 0, 1, 64]);
        assert_eq!(&f[26..], &qinq[22..]);
        assert!(dec_mpls_ttl(&mut f));
        assert_eq!(f[25], 63);
        pop_mpls(&mut f, 0x0800);
        assert_eq!(f, qinq);
        // Short frames are left alone.
        let mut short = vec![0u8; 13];
        push_mpls(&mut short, 0x8847);
        pop_mpls(&mut short, 0x0800);
        assert_eq!(short, vec![0u8; 13]);
        let mut cut = plain[..14].to_vec();
        cut[12..14].copy_from_slice(&[0x88, 0x47]);
        cut.extend_from_slice(&[1, 2, 3]);
        let before = cut.clone();
        push_mpls(&mut cut, 0x8847);
        pop_mpls(&mut cut, 0x0800);
        assert!(dec_mpls_ttl(&mut cut));
        assert_eq!(cut, before);
    }

    #[test]
    fn ttl_expiry_is_reported() {
        let mut f = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 53);
        set_ttl(&mut f, 1);
        assert!(!dec_ttl(&mut f));
        let mut short = vec![0u8; 10];
        assert!(dec_ttl(&mut short));
        set_field(&mut short, &SetField::TpSrc(1));
    }
}
