//! The lookup key: every matchable field of a packet packed into
//! [`KEY_WORDS`] 64-bit words, and [`FlowMatch`], a flow's match as a
//! value and a mask over the same words.
//!
//! Both versions compile their matches into this one form, so the
//! classifier, the exact-match cache and the flow-mod relations (strict
//! equality, "more specific than", overlap) are written once. The layout
//! lets fields that can never be present in the same packet share bits
//! (IPv4 and ARP protocol addresses; the IPv6 flow label and extension
//! header flags and IPv4 addresses; IPv6 addresses and ARP hardware addresses; TCP, UDP, SCTP
//! ports and ICMP type/code; the MPLS label stack entry and the IPv4 and
//! ARP addresses; the PBB I-SID and the transport ports and ARP opcode):
//! every match that names such a field also matches its
//! prerequisite (`eth_type`, `ip_proto`), which tells the sharers apart.
//! 1.0 matches are normalised so that they obey the same rule (1.0.0
//! §5.2.3, as Open vSwitch does).
//!
//! | word | bits 63..48 | 47..32 | 31..16 | 15..0 |
//! |---|---|---|---|---|
//! | 0 | `in_port` (32) | | `eth_type` | `vlan` |
//! | 1 | `eth_dst` (48) | | | `vlan_pcp` (8), `ip_proto` (8) |
//! | 2 | `eth_src` (48) | | | `ip_dscp` (8), `ip_ecn` (8) |
//! | 3 | `nw_src` / `arp_spa` / `ipv6_flabel` (32); `mpls_label` (20, bits 51..32) | | `nw_dst` / `arp_tpa` (32); `ipv6_exthdr` (16); `mpls_tc` (8, bits 23..16), `mpls_bos` (8, bits 7..0) | |
//! | 4 | `tp_src` / ICMP type; `pbb_isid` (24, bits 55..32) | `tp_dst` / ICMP code | `arp_op` | |
//! | 5 | `metadata` (64) | | | |
//! | 6, 7 | `ipv6_src` (128); `arp_sha` in word 6's top 48 | | | |
//! | 8, 9 | `ipv6_dst` (128); `arp_tha` in word 8's top 48 | | | |
//! | 10, 11 | `ipv6_nd_target` (128) | | | |
//! | 12 | `ipv6_nd_sll` / `ipv6_nd_tll` (48) | | | |
//! | 13 | `tunnel_id` (64) | | | |
//!
//! The `vlan` slot holds 1.0's `dl_vlan` (a VLAN id, or `0xffff` for an
//! untagged frame) in a 1.0 switch and 1.3's `VLAN_VID`
//! (`OFPVID_PRESENT | vid`, or 0) in a 1.3 switch; 1.0 puts the low byte
//! of an ARP opcode in `ip_proto`, as its `nw_proto` does.
//!
//! An MPLS frame (`eth_type` 0x8847 or 0x8848, after at most one VLAN
//! tag, as the codec's parser reads the ethertype) has its outermost
//! label stack entry's label, traffic class and bottom-of-stack bit in
//! word 3 (1.3 only), and nothing of the payload under the stack: as in
//! Open vSwitch, an MPLS packet has no network or transport fields, so
//! word 3 is free of IPv4 and ARP addresses, and every match on an MPLS
//! field fixes an MPLS `eth_type` (1.3.5 §7.2.3.6).
//!
//! A PBB frame (IEEE 802.1ah: `eth_type` 0x88e7 after at most one VLAN
//! tag, the B-TAG, as the parser reads it) has the I-SID of its I-TAG in
//! word 4 (1.3 only). The parser reads nothing under the I-TAG (the
//! customer frame), so such a frame has no transport ports or ARP opcode
//! to share the word with, and every `pbb_isid` match fixes `eth_type`
//! 0x88e7. The I-TAG's UCA bit is not in the key: `OFPXMT_OFB_PBB_UCA`
//! exists only from 1.4 on.
//!
//! `tunnel_id` (1.3 only) is, like `metadata`, a pipeline field: not read
//! from the frame but carried beside it, and changed only by a set-field
//! action. This switch has no tunnel ports (1.3.5 §4.4's logical ports
//! that would set it on arrival), so every packet enters the pipeline
//! with `tunnel_id` 0; it has a word of its own because it can be
//! present together with any other field.

use baton_openflow::Version;
use baton_openflow::packet::{FlowKey, Network, Transport};
use baton_openflow::types::PortNo;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Number of 64-bit words in a [`Key`].
pub const KEY_WORDS: usize = 14;

/// A packet's fields, or a mask over them, packed as the module docs lay
/// out.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Key {
    /// The words.
    pub w: [u64; KEY_WORDS],
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key[")?;
        for (i, w) in self.w.iter().enumerate() {
            if *w != 0 {
                write!(f, " {i}:{w:016x}")?;
            }
        }
        f.write_str(" ]")
    }
}

/// One field's place in the key: a word and a bit range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Word index.
    pub word: usize,
    /// Bit offset of the field's least significant bit.
    pub shift: u32,
    /// Width in bits (at most 64).
    pub bits: u32,
}

impl Slot {
    const fn new(word: usize, shift: u32, bits: u32) -> Slot {
        Slot { word, shift, bits }
    }

    /// The field's bits, right-aligned, all ones.
    pub const fn ones(self) -> u64 {
        if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }
}

/// Where each field lives (see the module docs).
pub mod slot {
    use super::Slot;
    /// Input port.
    pub const IN_PORT: Slot = Slot::new(0, 32, 32);
    /// Ethertype.
    pub const ETH_TYPE: Slot = Slot::new(0, 16, 16);
    /// VLAN: 1.0 `dl_vlan` or 1.3 `VLAN_VID`.
    pub const VLAN: Slot = Slot::new(0, 0, 16);
    /// Ethernet destination.
    pub const ETH_DST: Slot = Slot::new(1, 16, 48);
    /// VLAN priority.
    pub const VLAN_PCP: Slot = Slot::new(1, 8, 8);
    /// IP protocol (1.0: or the ARP opcode's low byte).
    pub const IP_PROTO: Slot = Slot::new(1, 0, 8);
    /// Ethernet source.
    pub const ETH_SRC: Slot = Slot::new(2, 16, 48);
    /// IP DSCP (6 bits).
    pub const IP_DSCP: Slot = Slot::new(2, 8, 8);
    /// IP ECN (2 bits).
    pub const IP_ECN: Slot = Slot::new(2, 0, 8);
    /// IPv4 source or ARP sender protocol address.
    pub const NW_SRC: Slot = Slot::new(3, 32, 32);
    /// IPv6 flow label (IPv6 frames only).
    pub const IPV6_FLABEL: Slot = Slot::new(3, 32, 32);
    /// IPv4 destination or ARP target protocol address.
    pub const NW_DST: Slot = Slot::new(3, 0, 32);
    /// The IPv6 extension header pseudo-field (9 bits of
    /// `ofp_ipv6exthdr_flags`; IPv6 frames only).
    pub const IPV6_EXTHDR: Slot = Slot::new(3, 0, 16);
    /// MPLS label of the outermost label stack entry (MPLS frames only).
    pub const MPLS_LABEL: Slot = Slot::new(3, 32, 20);
    /// MPLS traffic class (3 bits; MPLS frames only).
    pub const MPLS_TC: Slot = Slot::new(3, 16, 8);
    /// MPLS bottom-of-stack bit (MPLS frames only).
    pub const MPLS_BOS: Slot = Slot::new(3, 0, 8);
    /// PBB I-SID (24 bits; PBB frames only, whose word 4 is otherwise
    /// empty).
    pub const PBB_ISID: Slot = Slot::new(4, 32, 24);
    /// Transport source port, or ICMP type.
    pub const TP_SRC: Slot = Slot::new(4, 48, 16);
    /// Transport destination port, or ICMP code.
    pub const TP_DST: Slot = Slot::new(4, 32, 16);
    /// ARP opcode (1.3).
    pub const ARP_OP: Slot = Slot::new(4, 16, 16);
    /// Pipeline metadata (1.3).
    pub const METADATA: Slot = Slot::new(5, 0, 64);
    /// Pipeline tunnel id (1.3; 0 on arrival, as the switch has no
    /// tunnel ports).
    pub const TUNNEL_ID: Slot = Slot::new(13, 0, 64);
    /// ARP sender hardware address (1.3).
    pub const ARP_SHA: Slot = Slot::new(6, 16, 48);
    /// ARP target hardware address (1.3).
    pub const ARP_THA: Slot = Slot::new(8, 16, 48);
    /// Neighbour discovery link-layer address option.
    pub const ND_LL: Slot = Slot::new(12, 16, 48);
    /// First word of the IPv6 source.
    pub const IPV6_SRC: usize = 6;
    /// First word of the IPv6 destination.
    pub const IPV6_DST: usize = 8;
    /// First word of the ND target.
    pub const ND_TARGET: usize = 10;
}

impl Key {
    /// Reads a field.
    #[inline]
    pub fn get(&self, s: Slot) -> u64 {
        (self.w[s.word] >> s.shift) & s.ones()
    }

    /// Writes a field (bits beyond its width are dropped).
    #[inline]
    pub fn set(&mut self, s: Slot, v: u64) {
        let m = s.ones() << s.shift;
        self.w[s.word] = (self.w[s.word] & !m) | ((v << s.shift) & m);
    }

    /// Writes a 128-bit field starting at `word`.
    #[inline]
    pub fn set128(&mut self, word: usize, v: u128) {
        self.w[word] = (v >> 64) as u64;
        self.w[word + 1] = v as u64;
    }

    /// Reads a 128-bit field starting at `word`.
    #[inline]
    pub fn get128(&self, word: usize) -> u128 {
        (u128::from(self.w[word]) << 64) | u128::from(self.w[word + 1])
    }

    /// `self & mask`, word by word.
    #[inline]
    pub fn and(&self, mask: &Key) -> Key {
        let mut k = *self;
        for (a, m) in k.w.iter_mut().zip(mask.w.iter()) {
            *a &= m;
        }
        k
    }

    /// The key of a packet as a switch of `version` sees it, with pipeline
    /// `metadata` (0 in 1.0), without the MPLS fields, which `fk` lacks
    /// ([`Key::of_frame`] adds them), and with `tunnel_id` 0, as every
    /// packet has when it arrives on one of this switch's ports (none is
    /// a tunnel); the pipeline sets the value a set-field gave it.
    pub fn of_packet(version: Version, fk: &FlowKey, metadata: u64) -> Key {
        let mut k = Key::default();
        k.set(slot::IN_PORT, u64::from(fk.in_port.0));
        k.set(slot::ETH_TYPE, u64::from(fk.eth_type));
        k.set(slot::ETH_DST, fk.eth_dst.to_u64());
        k.set(slot::ETH_SRC, fk.eth_src.to_u64());
        k.set(slot::METADATA, metadata);
        match (version, fk.vlan) {
            (Version::V10, None) => k.set(slot::VLAN, 0xffff),
            (Version::V13, None) => {}
            (Version::V10, Some(t)) => {
                k.set(slot::VLAN, u64::from(t.vid & 0x0fff));
                k.set(slot::VLAN_PCP, u64::from(t.pcp));
            }
            (Version::V13, Some(t)) => {
                k.set(slot::VLAN, u64::from(0x1000 | (t.vid & 0x0fff)));
                k.set(slot::VLAN_PCP, u64::from(t.pcp));
            }
        }
        match &fk.network {
            Network::Other => {}
            Network::Arp(a) => {
                k.set(slot::NW_SRC, ip4(a.spa));
                k.set(slot::NW_DST, ip4(a.tpa));
                match version {
                    // 1.0.0 §5.2.3: nw_proto holds the opcode's low byte.
                    Version::V10 => {
                        if a.op <= 0xff {
                            k.set(slot::IP_PROTO, u64::from(a.op));
                        }
                    }
                    Version::V13 => {
                        k.set(slot::ARP_OP, u64::from(a.op));
                        k.set(slot::ARP_SHA, a.sha.to_u64());
                        k.set(slot::ARP_THA, a.tha.to_u64());
                    }
                }
            }
            Network::Ipv4(ip) => {
                k.set(slot::NW_SRC, ip4(ip.src));
                k.set(slot::NW_DST, ip4(ip.dst));
                k.set(slot::IP_PROTO, u64::from(ip.proto));
                k.set(slot::IP_DSCP, u64::from(ip.dscp));
                if version == Version::V13 {
                    k.set(slot::IP_ECN, u64::from(ip.ecn));
                }
                transport(&mut k, version, ip.transport);
            }
            Network::Ipv6(ip) => {
                // 1.0 cannot match IPv6 beyond its ethertype.
                if version == Version::V13 {
                    k.set(slot::IP_PROTO, u64::from(ip.next_header));
                    k.set(slot::IP_DSCP, u64::from(ip.dscp));
                    k.set(slot::IP_ECN, u64::from(ip.ecn));
                    k.set(slot::IPV6_FLABEL, u64::from(ip.flow_label));
                    k.set(slot::IPV6_EXTHDR, u64::from(ip.exthdr));
                    k.set128(slot::IPV6_SRC, u128::from(ip.src));
                    k.set128(slot::IPV6_DST, u128::from(ip.dst));
                    transport(&mut k, version, ip.transport);
                }
            }
        }
        k
    }
}

fn transport(k: &mut Key, version: Version, t: Transport) {
    let (src, dst) = match (version, t) {
        (_, Transport::Tcp { src, dst } | Transport::Udp { src, dst }) => (src, dst),
        (Version::V13, Transport::Sctp { src, dst }) => (src, dst),
        (_, Transport::Icmpv4 { icmp_type, code }) => (icmp_type.into(), code.into()),
        (
            Version::V13,
            Transport::Icmpv6 {
                icmp_type,
                code,
                nd,
            },
        ) => {
            if let Some(nd) = nd {
                k.set128(slot::ND_TARGET, u128::from(nd.target));
                if let Some(ll) = nd.sll.or(nd.tll) {
                    k.set(slot::ND_LL, ll.to_u64());
                }
            }
            (icmp_type.into(), code.into())
        }
        _ => return,
    };
    k.set(slot::TP_SRC, u64::from(src));
    k.set(slot::TP_DST, u64::from(dst));
}

/// An IPv4 address as an integer.
#[inline]
pub fn ip4(a: Ipv4Addr) -> u64 {
    u64::from(u32::from(a))
}

/// An IPv6 address as an integer.
#[inline]
pub fn ip6(a: Ipv6Addr) -> u128 {
    u128::from(a)
}

/// A flow's match: the packets whose key, masked by `mask`, equals `key`.
/// `key & mask == key` always holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlowMatch {
    /// The values, zero outside the mask.
    pub key: Key,
    /// Which bits are matched.
    pub mask: Key,
}

impl FlowMatch {
    /// The match-everything match.
    pub const ALL: FlowMatch = FlowMatch {
        key: Key { w: [0; KEY_WORDS] },
        mask: Key { w: [0; KEY_WORDS] },
    };

    /// Matches field `s` against `value` under `mask` (both right-aligned).
    pub fn set(&mut self, s: Slot, value: u64, mask: u64) {
        let m = mask & s.ones();
        let old_m = self.mask.get(s);
        self.mask.set(s, old_m | m);
        let old_v = self.key.get(s);
        self.key.set(s, (old_v & !m) | (value & m));
    }

    /// Matches field `s` exactly.
    pub fn exact(&mut self, s: Slot, value: u64) {
        self.set(s, value, u64::MAX);
    }

    /// Matches a 128-bit field starting at `word` under `mask`.
    pub fn set128(&mut self, word: usize, value: u128, mask: u128) {
        self.mask.set128(word, self.mask.get128(word) | mask);
        let v = (self.key.get128(word) & !mask) | (value & mask);
        self.key.set128(word, v);
    }

    /// The exact value of field `s`, if the match fixes all its bits.
    pub fn exact_value(&self, s: Slot) -> Option<u64> {
        (self.mask.get(s) == s.ones()).then(|| self.key.get(s))
    }

    /// True when a packet with key `k` matches.
    #[inline]
    pub fn matches(&self, k: &Key) -> bool {
        self.key
            .w
            .iter()
            .zip(self.mask.w.iter())
            .zip(k.w.iter())
            .all(|((v, m), p)| p & m == *v)
    }

    /// True when every packet this match accepts is accepted by `other`
    /// (`self` is at least as specific): the non-strict flow-mod relation
    /// (1.0.0 §4.6, 1.3.5 §6.4).
    pub fn is_within(&self, other: &FlowMatch) -> bool {
        (0..KEY_WORDS).all(|i| {
            other.mask.w[i] & !self.mask.w[i] == 0
                && self.key.w[i] & other.mask.w[i] == other.key.w[i]
        })
    }

    /// True when some packet matches both (CHECK_OVERLAP, 1.0.0 §4.6,
    /// 1.3.5 §6.4).
    pub fn overlaps(&self, other: &FlowMatch) -> bool {
        (0..KEY_WORDS)
            .all(|i| (self.key.w[i] ^ other.key.w[i]) & self.mask.w[i] & other.mask.w[i] == 0)
    }

    /// True when the match fixes nothing.
    pub fn is_all(&self) -> bool {
        self.mask.w.iter().all(|&w| w == 0)
    }
}

impl Key {
    /// The key of `frame`, whose parsed fields are `fk`: [`Key::of_packet`]
    /// plus, in 1.3, the outermost MPLS label stack entry or the PBB
    /// I-SID, which the codec's parser does not read.
    #[inline]
    pub fn of_frame(version: Version, fk: &FlowKey, frame: &[u8], metadata: u64) -> Key {
        let mut k = Key::of_packet(version, fk, metadata);
        if version == Version::V13 && is_mpls(fk.eth_type) {
            if let Some(lse) = mpls_lse(fk, frame) {
                k.set(slot::MPLS_LABEL, u64::from(lse >> 12));
                k.set(slot::MPLS_TC, u64::from((lse >> 9) & 7));
                k.set(slot::MPLS_BOS, u64::from((lse >> 8) & 1));
            }
        } else if version == Version::V13 && fk.eth_type == ETH_TYPE_PBB {
            if let Some(tci) = pbb_itag(fk, frame) {
                k.set(slot::PBB_ISID, u64::from(tci & ISID_MASK));
            }
        }
        k
    }
}

/// The ethertype of an IEEE 802.1ah I-TAG (the PBB service tag).
pub const ETH_TYPE_PBB: u16 = 0x88e7;

/// The I-SID's bits in an I-TAG's 32-bit TCI (I-PCP 3 bits, I-DEI 1,
/// UCA 1, reserved 3, I-SID 24).
pub const ISID_MASK: u32 = 0xff_ffff;

/// True for the MPLS ethertypes (unicast 0x8847, multicast 0x8848).
#[inline]
pub fn is_mpls(eth_type: u16) -> bool {
    eth_type == 0x8847 || eth_type == 0x8848
}

/// The outermost MPLS label stack entry of `frame` (label 20 bits, TC 3,
/// BoS 1, TTL 8, RFC 3032 §2.1), when `fk` (its parse) says it is MPLS
/// and the entry is there: right after the ethertype, which the parser
/// read after the Ethernet header and at most one VLAN tag.
#[inline]
pub fn mpls_lse(fk: &FlowKey, frame: &[u8]) -> Option<u32> {
    if !is_mpls(fk.eth_type) {
        return None;
    }
    word_after_type(fk, frame)
}

/// The 32-bit TCI of the I-TAG of `frame` (IEEE 802.1ah: I-PCP, I-DEI,
/// UCA, reserved, I-SID), when `fk` (its parse) says it is PBB and the
/// TCI is there: right after the ethertype 0x88e7, which the parser read
/// after the Ethernet header and at most one VLAN tag (the B-TAG).
#[inline]
pub fn pbb_itag(fk: &FlowKey, frame: &[u8]) -> Option<u32> {
    if fk.eth_type != ETH_TYPE_PBB {
        return None;
    }
    word_after_type(fk, frame)
}

/// The 4 bytes after the ethertype the parser read (after the Ethernet
/// header and at most one VLAN tag), when they are there.
#[inline]
fn word_after_type(fk: &FlowKey, frame: &[u8]) -> Option<u32> {
    let at = if fk.vlan.is_some() { 18 } else { 14 };
    // The ethertype just before the word must be the one parsed (not an
    // LLC/SNAP header's, whose payload would be elsewhere).
    match frame.get(at - 2..at + 4)? {
        &[t0, t1, a, b, c, d] if u16::from_be_bytes([t0, t1]) == fk.eth_type => {
            Some(u32::from_be_bytes([a, b, c, d]))
        }
        _ => None,
    }
}

/// The key of a packet arriving on `in_port` with bytes `frame`.
pub fn packet_key(version: Version, in_port: PortNo, frame: &[u8], metadata: u64) -> Key {
    Key::of_frame(version, &FlowKey::extract(in_port, frame), frame, metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_in_their_slots() {
        let mut k = Key::default();
        k.set(slot::IN_PORT, 0xfffffffd);
        k.set(slot::ETH_TYPE, 0x0800);
        k.set(slot::VLAN, 0x1005);
        k.set(slot::ETH_DST, 0x0102_0304_0506);
        k.set(slot::IP_PROTO, 6);
        assert_eq!(k.get(slot::IN_PORT), 0xfffffffd);
        assert_eq!(k.get(slot::ETH_TYPE), 0x0800);
        assert_eq!(k.get(slot::VLAN), 0x1005);
        assert_eq!(k.get(slot::ETH_DST), 0x0102_0304_0506);
        assert_eq!(k.get(slot::IP_PROTO), 6);
        // tunnel_id has a word of its own.
        let before = k;
        k.set(slot::TUNNEL_ID, u64::MAX);
        assert_eq!(k.get(slot::TUNNEL_ID), u64::MAX);
        k.set(slot::TUNNEL_ID, 0);
        assert_eq!(k, before);
        assert_eq!(slot::TUNNEL_ID.word, KEY_WORDS - 1);
    }

    #[test]
    fn the_mpls_entry_is_read_after_at_most_one_vlan_tag() {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0, 5];
        f.extend_from_slice(&[0x88, 0x48]);
        // Label 0x12345, TC 6, BoS 1, TTL 9.
        f.extend_from_slice(&((0x12345u32 << 12) | (6 << 9) | (1 << 8) | 9).to_be_bytes());
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        assert_eq!(k.get(slot::ETH_TYPE), 0x8848);
        assert_eq!(k.get(slot::MPLS_LABEL), 0x12345);
        assert_eq!(k.get(slot::MPLS_TC), 6);
        assert_eq!(k.get(slot::MPLS_BOS), 1);
        // The MPLS fields share word 3 with the IPv4 and ARP addresses
        // (told apart by eth_type) and with nothing else.
        let mut all = Key::default();
        for s in [slot::MPLS_LABEL, slot::MPLS_TC, slot::MPLS_BOS] {
            assert_eq!(s.word, 3);
            assert_eq!(all.get(s), 0, "{s:?} overlaps another MPLS field");
            all.set(s, u64::MAX);
        }
        let fk = FlowKey::extract(PortNo(1), &f[..19]);
        assert_eq!(mpls_lse(&fk, &f[..19]), None);
    }

    #[test]
    fn the_isid_is_read_after_at_most_one_b_tag() {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xa8, 0, 5];
        // I-PCP 7, I-DEI 1, UCA 1, I-SID 0xabcdef.
        f.extend_from_slice(&[0x88, 0xe7, 0xf8, 0xab, 0xcd, 0xef]);
        f.extend_from_slice(&[2, 0, 0, 0, 0, 4, 2, 0, 0, 0, 0, 3, 0x08, 0x00]);
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        assert_eq!(k.get(slot::ETH_TYPE), u64::from(ETH_TYPE_PBB));
        assert_eq!(k.get(slot::PBB_ISID), 0xab_cdef);
        // Word 4 holds nothing else for a PBB frame.
        assert_eq!(k.w[4], 0xab_cdef << 32);
        assert_eq!(packet_key(Version::V10, PortNo(1), &f, 0).w[4], 0);
        let fk = FlowKey::extract(PortNo(1), &f[..21]);
        assert_eq!(pbb_itag(&fk, &f[..21]), None);
        assert_eq!(mpls_lse(&fk, &f), None);
    }

    #[test]
    fn relations() {
        let mut wide = FlowMatch::ALL;
        wide.exact(slot::ETH_TYPE, 0x0800);
        let mut narrow = wide;
        narrow.set(slot::NW_SRC, 0x0a00_0000, 0xff00_0000);
        assert!(narrow.is_within(&wide));
        assert!(!wide.is_within(&narrow));
        assert!(wide.overlaps(&narrow));
        let mut arp = FlowMatch::ALL;
        arp.exact(slot::ETH_TYPE, 0x0806);
        assert!(!arp.overlaps(&wide));
        assert!(wide.is_within(&FlowMatch::ALL));
        let mut k = Key::default();
        k.set(slot::ETH_TYPE, 0x0800);
        k.set(slot::NW_SRC, 0x0a01_0203);
        assert!(narrow.matches(&k));
        k.set(slot::NW_SRC, 0x0b01_0203);
        assert!(!narrow.matches(&k));
        assert!(wide.matches(&k));
    }
}
