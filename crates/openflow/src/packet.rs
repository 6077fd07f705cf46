//! Extracting the exact match of a frame: the per-flow-request step.
//!
//! [`FlowKey::extract`] reads the header fields of an Ethernet frame that
//! OpenFlow can match (Ethernet, one 802.1Q / 802.1ad tag, 802.2 LLC/SNAP,
//! ARP, IPv4, IPv6 with its extension headers, TCP, UDP, SCTP, ICMPv4,
//! ICMPv6 and neighbour discovery) into a [`FlowKey`]: a `Copy`,
//! heap-free, version-independent record. It never panics and never
//! allocates; a truncated or garbage frame yields the fields that could be
//! read. Parsing uses `etherparse`'s in-place header slices.
//!
//! The key is what a switch computes for the frame (1.0.0 §3.4 and
//! Figure 3 "packet parsing"; 1.3.5 §7.2.3.7), following Open vSwitch
//! where the specs leave room:
//! - only the outermost VLAN tag (TPID 0x8100 or 0x88a8) is parsed, and
//!   `eth_type` is the type after it (OVS's default `vlan-limit=1`);
//! - 802.3 frames without SNAP get `eth_type` 0x05ff (1.0.0 §5.2.3
//!   `OFP_DL_TYPE_NOT_ETH_TYPE`); with an Ethernet SNAP header, its type;
//! - ARP fields are read only for Ethernet/IPv4 ARP (htype 1, ptype 0x0800,
//!   hlen 6, plen 4);
//! - the IPv4 protocol is the header's (an AH header is not skipped); the
//!   IPv6 next header is the one after the extension headers;
//! - for IP fragments (first or later), transport ports and ICMP type/code
//!   are 0, as OVS's default "normal" fragment handling treats them (1.0.0
//!   `OFPC_FRAG_NORMAL`);
//! - a frame that the switch truncated (PACKET_IN `miss_send_len`) is
//!   parsed as far as its bytes go: length fields that claim more than is
//!   present are trusted only as far as the data reaches.
//!
//! The key knows nothing of either version's match: the version modules
//! turn it into their exact match ([`crate::v10::Match10::exact`],
//! [`crate::v13::oxm::emit_exact_match`]). For the common frame whose
//! fields lie at fixed offsets ([`PlainIpv4`]) they write the match from
//! the frame without a key ([`crate::v10::Match10::exact_frame`],
//! [`crate::v13::oxm::put_exact_match_frame`]).
//!
//! The other direction, writing frames, is [`ArpRepr`]'s for ARP: the one
//! ARP emitter, used by routing's proxy ARP and the testbed's hosts.
//!
//! Cost: etherparse is not a bottleneck here. `benches/hot_path.rs`
//! measures about 19 ns to extract the key of cbench's 60-byte TCP frame
//! or of an ARP request (2-core x86 VM), against about 50 ns (1.0) and
//! 110 ns (1.3) for the whole packet-in -> flow-mod request.

mod arp;
mod plain;

pub use arp::ArpRepr;
pub use plain::{PlainIpv4, PlainTransport};

use crate::types::{MacAddr, PortNo};
use etherparse::{
    ArpPacketSlice, Ethernet2HeaderSlice, Icmpv4Slice, Icmpv6Slice, Ipv4HeaderSlice, LaxIpv6Slice,
    SingleVlanHeaderSlice, UdpSlice,
};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Ethertypes and IP protocol numbers the extractor knows.
pub mod consts {
    /// IPv4.
    pub const ETH_TYPE_IPV4: u16 = 0x0800;
    /// ARP.
    pub const ETH_TYPE_ARP: u16 = 0x0806;
    /// 802.1Q customer VLAN tag.
    pub const ETH_TYPE_VLAN: u16 = 0x8100;
    /// 802.1ad service VLAN tag.
    pub const ETH_TYPE_VLAN_8021AD: u16 = 0x88a8;
    /// IPv6.
    pub const ETH_TYPE_IPV6: u16 = 0x86dd;
    /// The `dl_type` of an 802.3 frame without SNAP header (1.0.0 §5.2.3
    /// `OFP_DL_TYPE_NOT_ETH_TYPE`).
    pub const ETH_TYPE_NOT_ETH: u16 = 0x05ff;
    /// Smallest ethertype; smaller values are 802.3 lengths.
    pub const ETH_TYPE_MIN: u16 = 0x0600;
    /// ICMP.
    pub const IP_PROTO_ICMP: u8 = 1;
    /// TCP.
    pub const IP_PROTO_TCP: u8 = 6;
    /// UDP.
    pub const IP_PROTO_UDP: u8 = 17;
    /// ICMPv6.
    pub const IP_PROTO_ICMPV6: u8 = 58;
    /// SCTP.
    pub const IP_PROTO_SCTP: u8 = 132;
    /// IPv6 hop-by-hop options (RFC 8200 §4.3).
    pub const IP_PROTO_HOPOPT: u8 = 0;
    /// IPv6 routing header (RFC 8200 §4.4).
    pub const IP_PROTO_ROUTING: u8 = 43;
    /// IPv6 fragment header (RFC 8200 §4.5).
    pub const IP_PROTO_FRAGMENT: u8 = 44;
    /// Encapsulating security payload (RFC 4303).
    pub const IP_PROTO_ESP: u8 = 50;
    /// Authentication header (RFC 4302).
    pub const IP_PROTO_AH: u8 = 51;
    /// IPv6 "no next header" (RFC 8200 §4.7).
    pub const IP_PROTO_NONXT: u8 = 59;
    /// IPv6 destination options (RFC 8200 §4.6).
    pub const IP_PROTO_DSTOPTS: u8 = 60;
    /// ICMPv6 neighbour solicitation.
    pub const ICMPV6_ND_SOLICIT: u8 = 135;
    /// ICMPv6 neighbour advertisement.
    pub const ICMPV6_ND_ADVERT: u8 = 136;
    /// ARP request (RFC 826 `ares_op$REQUEST`).
    pub const ARP_OP_REQUEST: u16 = 1;
    /// ARP reply (RFC 826 `ares_op$REPLY`).
    pub const ARP_OP_REPLY: u16 = 2;
    /// An Ethernet II header: two addresses and the ethertype.
    pub const ETH_HEADER_LEN: usize = 14;
    /// Ethernet's minimum frame without its FCS; shorter frames are
    /// padded.
    pub const ETH_MIN_FRAME_LEN: usize = 60;
}

use consts::*;

/// The header fields of a frame that OpenFlow can match, for both
/// versions (1.0.0 §5.2.3 `ofp_match`, 1.3.5 §7.2.3.7 OXM fields).
///
/// Fields a frame does not have are absent (`None` / [`Network::Other`] /
/// [`Transport::None`]); a frame shorter than an Ethernet header has zero
/// addresses and `eth_type` 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// The switch port the frame arrived on.
    pub in_port: PortNo,
    /// Ethernet source.
    pub eth_src: MacAddr,
    /// Ethernet destination.
    pub eth_dst: MacAddr,
    /// The outermost VLAN tag, if any.
    pub vlan: Option<VlanTag>,
    /// The ethertype after the VLAN tag (and after an LLC/SNAP header).
    pub eth_type: u16,
    /// The network layer.
    pub network: Network,
}

/// An 802.1Q tag's matchable fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanTag {
    /// VLAN id, 12 bits.
    pub vid: u16,
    /// Priority code point, 3 bits.
    pub pcp: u8,
}

/// The network layer of a [`FlowKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    /// Not ARP/IPv4/IPv6, or a header that could not be read.
    Other,
    /// Ethernet/IPv4 ARP.
    Arp(ArpKey),
    /// IPv4.
    Ipv4(Ipv4Key),
    /// IPv6.
    Ipv6(Ipv6Key),
}

/// ARP fields (1.3.5 OXM_OF_ARP_*; 1.0 puts `op` in `nw_proto` and the
/// protocol addresses in `nw_src` / `nw_dst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpKey {
    /// Opcode.
    pub op: u16,
    /// Sender protocol address.
    pub spa: Ipv4Addr,
    /// Target protocol address.
    pub tpa: Ipv4Addr,
    /// Sender hardware address.
    pub sha: MacAddr,
    /// Target hardware address.
    pub tha: MacAddr,
}

/// IPv4 fields (TTL is not matchable and not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Key {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// DSCP, the upper 6 bits of the ToS byte.
    pub dscp: u8,
    /// ECN, the lower 2 bits of the ToS byte.
    pub ecn: u8,
    /// Protocol.
    pub proto: u8,
    /// The transport layer.
    pub transport: Transport,
}

/// IPv6 fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Key {
    /// Source address.
    pub src: Ipv6Addr,
    /// Destination address.
    pub dst: Ipv6Addr,
    /// Flow label, 20 bits.
    pub flow_label: u32,
    /// DSCP, the upper 6 bits of the traffic class.
    pub dscp: u8,
    /// ECN, the lower 2 bits of the traffic class.
    pub ecn: u8,
    /// The next header after the extension headers.
    pub next_header: u8,
    /// Which extension headers the packet has, and whether they repeat
    /// or are out of order: 1.3's `IPV6_EXTHDR` pseudo-field
    /// ([`ipv6_exthdr`](crate::v13::oxm::ipv6_exthdr) bits, 1.3.5
    /// §7.2.3.7), as [`exthdr_flags`] computes it.
    pub exthdr: u16,
    /// The transport layer.
    pub transport: Transport,
}

/// The transport layer of an IP [`FlowKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Another protocol, or a header too short to read.
    None,
    /// TCP ports.
    Tcp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// UDP ports.
    Udp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// SCTP ports.
    Sctp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// ICMPv4 type and code.
    Icmpv4 {
        /// Type.
        icmp_type: u8,
        /// Code.
        code: u8,
    },
    /// ICMPv6 type and code, with the neighbour discovery fields of a
    /// neighbour solicitation or advertisement.
    Icmpv6 {
        /// Type.
        icmp_type: u8,
        /// Code.
        code: u8,
        /// Neighbour discovery fields (types 135 and 136 only).
        nd: Option<NdKey>,
    },
}

/// IPv6 neighbour discovery fields (RFC 4861; 1.3.5 OXM_OF_IPV6_ND_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NdKey {
    /// Target address.
    pub target: Ipv6Addr,
    /// Source link-layer address option (solicitations).
    pub sll: Option<MacAddr>,
    /// Target link-layer address option (advertisements).
    pub tll: Option<MacAddr>,
}

impl FlowKey {
    /// A key with only `in_port` set: what [`FlowKey::extract`] gives for a
    /// frame shorter than an Ethernet header.
    pub const fn empty(in_port: PortNo) -> FlowKey {
        FlowKey {
            in_port,
            eth_src: MacAddr([0; 6]),
            eth_dst: MacAddr([0; 6]),
            vlan: None,
            eth_type: 0,
            network: Network::Other,
        }
    }

    /// Reads the matchable fields of the Ethernet `frame` that arrived on
    /// `in_port`. Never panics, never allocates; reads what it can.
    pub fn extract(in_port: PortNo, frame: &[u8]) -> FlowKey {
        let mut key = FlowKey::empty(in_port);
        let Ok(eth) = Ethernet2HeaderSlice::from_slice(frame) else {
            return key;
        };
        key.eth_dst = MacAddr(eth.destination());
        key.eth_src = MacAddr(eth.source());
        let mut eth_type = eth.ether_type().0;
        let mut rest = frame.get(eth.slice().len()..).unwrap_or_default();

        if eth_type == ETH_TYPE_VLAN || eth_type == ETH_TYPE_VLAN_8021AD {
            if let Ok(tag) = SingleVlanHeaderSlice::from_slice(rest) {
                key.vlan = Some(VlanTag {
                    vid: tag.vlan_identifier().value(),
                    pcp: tag.priority_code_point().value(),
                });
                eth_type = tag.ether_type().0;
                rest = rest.get(tag.slice().len()..).unwrap_or_default();
            }
        }

        if eth_type < ETH_TYPE_MIN {
            (eth_type, rest) = llc_snap(rest);
        }
        key.eth_type = eth_type;

        key.network = match eth_type {
            ETH_TYPE_ARP => arp(rest),
            ETH_TYPE_IPV4 => ipv4(rest),
            ETH_TYPE_IPV6 => ipv6(rest),
            _ => Network::Other,
        };
        key
    }

    /// The IP protocol / next header, for IPv4 and IPv6 keys.
    pub fn ip_proto(&self) -> Option<u8> {
        match &self.network {
            Network::Ipv4(ip) => Some(ip.proto),
            Network::Ipv6(ip) => Some(ip.next_header),
            Network::Arp(_) | Network::Other => None,
        }
    }

    /// The transport layer, for IP keys.
    pub fn transport(&self) -> Transport {
        match &self.network {
            Network::Ipv4(ip) => ip.transport,
            Network::Ipv6(ip) => ip.transport,
            Network::Arp(_) | Network::Other => Transport::None,
        }
    }
}

/// The ethertype of an 802.3 frame: its SNAP type when it has an
/// Ethernet SNAP header (`aa aa 03 00 00 00`), else
/// [`ETH_TYPE_NOT_ETH`]; and the bytes after it.
fn llc_snap(payload: &[u8]) -> (u16, &[u8]) {
    const SNAP: [u8; 6] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00];
    match payload.get(..8) {
        Some(h) if h[..6] == SNAP => {
            let t = u16::from_be_bytes([h[6], h[7]]);
            if t >= ETH_TYPE_MIN {
                (t, payload.get(8..).unwrap_or_default())
            } else {
                (ETH_TYPE_NOT_ETH, &[])
            }
        }
        _ => (ETH_TYPE_NOT_ETH, &[]),
    }
}

fn mac(b: &[u8]) -> MacAddr {
    let mut m = [0u8; 6];
    if let Some(src) = b.get(..6) {
        m.copy_from_slice(src);
    }
    MacAddr(m)
}

fn ip4(b: &[u8]) -> Ipv4Addr {
    match b.get(..4) {
        Some(&[a, b, c, d]) => Ipv4Addr::new(a, b, c, d),
        _ => Ipv4Addr::UNSPECIFIED,
    }
}

#[inline(never)]
fn arp(payload: &[u8]) -> Network {
    let Ok(a) = ArpPacketSlice::from_slice(payload) else {
        return Network::Other;
    };
    if a.hw_addr_type().0 != 1
        || a.proto_addr_type().0 != ETH_TYPE_IPV4
        || a.hw_addr_size() != 6
        || a.proto_addr_size() != 4
    {
        return Network::Other;
    }
    Network::Arp(ArpKey {
        op: a.operation().0,
        spa: ip4(a.sender_protocol_addr()),
        tpa: ip4(a.target_protocol_addr()),
        sha: mac(a.sender_hw_addr()),
        tha: mac(a.target_hw_addr()),
    })
}

fn ipv4(payload: &[u8]) -> Network {
    let Ok(h) = Ipv4HeaderSlice::from_slice(payload) else {
        return Network::Other;
    };
    let hlen = h.slice().len();
    // The payload ends at total_len, or where the (possibly truncated)
    // bytes end.
    let end = usize::from(h.total_len()).clamp(hlen, payload.len());
    let body = payload.get(hlen..end).unwrap_or_default();
    let proto = h.protocol().0;
    let transport = transport(proto, body, h.is_fragmenting_payload(), false);
    Network::Ipv4(Ipv4Key {
        src: h.source_addr(),
        dst: h.destination_addr(),
        dscp: h.dcp().value(),
        ecn: h.ecn().value(),
        proto,
        transport,
    })
}

#[inline(never)]
fn ipv6(payload: &[u8]) -> Network {
    let Ok((ip, _ext_err)) = LaxIpv6Slice::from_slice(payload) else {
        return Network::Other;
    };
    let h = ip.header();
    let p = ip.payload();
    let next_header = p.ip_number.0;
    Network::Ipv6(Ipv6Key {
        src: h.source_addr(),
        dst: h.destination_addr(),
        flow_label: h.flow_label().value(),
        dscp: h.dscp().value(),
        ecn: h.ecn().value(),
        next_header,
        exthdr: exthdr_flags(ip.extensions(), next_header),
        transport: transport(next_header, p.payload, p.fragmented, true),
    })
}

/// The `IPV6_EXTHDR` pseudo-field (1.3.5 §7.2.3.7) of a packet whose
/// extension headers the parser walked through are `exts`, in order, and
/// whose next header after them is `last`.
///
/// A flag per header kind present (hop-by-hop, destination options,
/// routing, fragment, authentication; ESP and "no next header" where the
/// chain ends in them, as nothing after ESP can be read); `UNREP` when a
/// header occurs more often than RFC 8200 §4.1 allows (once each, the
/// destination options twice: once before the routing header and once
/// before the upper layer); `UNSEQ` when they are out of the order it
/// recommends: hop-by-hop, destination options, routing, fragment,
/// authentication, ESP, destination options. A hop-by-hop header
/// anywhere but first ends the walk (the parser stops there, as RFC
/// 8200 §4.3 says a node may), so it shows as `last` and is out of
/// order.
pub fn exthdr_flags(exts: &etherparse::Ipv6ExtensionsSlice<'_>, last: u8) -> u16 {
    use crate::v13::oxm::ipv6_exthdr as eh;
    // RFC 8200 §4.1's places, in order.
    const HOP: u8 = 0;
    const DEST_FIRST: u8 = 1;
    const ROUTER: u8 = 2;
    const FRAG: u8 = 3;
    const AUTH: u8 = 4;
    const ESP: u8 = 5;
    const DEST_LAST: u8 = 6;
    let mut flags = 0u16;
    let mut seen = 0u8; // a bit per place
    let mut at: Option<u8> = None; // the furthest place so far
    // `last` may be an extension header too: one the parser stopped at
    // (a misplaced hop-by-hop header, or one cut short).
    for header in walked_headers(exts).chain(std::iter::once(last)) {
        let (flag, place) = match header {
            IP_PROTO_HOPOPT => (eh::HOP, HOP),
            // The first destination options header belongs before the
            // routing header, a later one before the upper layer.
            IP_PROTO_DSTOPTS if seen & (1 << DEST_FIRST) == 0 && at.is_none_or(|a| a < ROUTER) => {
                (eh::DEST, DEST_FIRST)
            }
            IP_PROTO_DSTOPTS => (eh::DEST, DEST_LAST),
            IP_PROTO_ROUTING => (eh::ROUTER, ROUTER),
            IP_PROTO_FRAGMENT => (eh::FRAG, FRAG),
            IP_PROTO_AH => (eh::AUTH, AUTH),
            IP_PROTO_ESP => (eh::ESP, ESP),
            IP_PROTO_NONXT => {
                flags |= eh::NONEXT;
                continue;
            }
            _ => continue,
        };
        if seen & (1 << place) != 0 {
            flags |= eh::UNREP;
        }
        if at.is_some_and(|a| place < a || place == HOP) {
            flags |= eh::UNSEQ;
        }
        flags |= flag;
        seen |= 1 << place;
        at = Some(at.map_or(place, |a| a.max(place)));
    }
    flags
}

/// The IP protocol numbers of the extension headers in `exts`, in order.
///
/// Walked here over the bytes etherparse checked rather than with its
/// `Ipv6ExtensionSliceIter`: that iterator (etherparse 0.21) assumes the
/// chain ended at a header it does not know, and when a lax parse stopped
/// at an error instead (a hop-by-hop header not first, a header cut short)
/// it reads past the end of the slice (`get_unchecked` on an empty slice,
/// undefined behaviour; seen as an abort in a debug build). The lengths
/// are the RFCs': 8-octet units after the first 8 for hop-by-hop,
/// routing and destination options (RFC 8200 §4.3-4.6), 8 bytes for a
/// fragment header (§4.5), 4-octet units plus 2 for an authentication
/// header (RFC 4302 §2.2).
fn walked_headers<'a>(exts: &etherparse::Ipv6ExtensionsSlice<'a>) -> impl Iterator<Item = u8> + 'a {
    let mut rest = exts.slice();
    let mut next = exts.first_header().map(|n| n.0);
    std::iter::from_fn(move || {
        let header = next?;
        let len = match (header, rest.get(1)) {
            (IP_PROTO_FRAGMENT, Some(_)) => 8,
            (IP_PROTO_AH, Some(&n)) => (usize::from(n) + 2) * 4,
            (IP_PROTO_HOPOPT | IP_PROTO_ROUTING | IP_PROTO_DSTOPTS, Some(&n)) => {
                (usize::from(n) + 1) * 8
            }
            _ => return None,
        };
        next = rest.first().copied().filter(|_| rest.len() > len);
        rest = rest.get(len..).unwrap_or_default();
        Some(header)
    })
}

fn ports(body: &[u8], min_len: usize) -> Option<(u16, u16)> {
    if body.len() < min_len {
        return None;
    }
    match body.get(..4) {
        Some(&[a, b, c, d]) => Some((u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]))),
        _ => None,
    }
}

/// The transport fields of an IP payload. Fragments get zero ports /
/// type / code (see the module docs).
fn transport(proto: u8, body: &[u8], fragment: bool, v6: bool) -> Transport {
    match (proto, v6) {
        (IP_PROTO_TCP, _) => {
            if fragment {
                return Transport::Tcp { src: 0, dst: 0 };
            }
            // A 20-byte header with a sane data offset; options cut off by
            // PACKET_IN truncation do not matter for the ports.
            match (ports(body, 20), body.get(12)) {
                (Some((src, dst)), Some(&off)) if off >> 4 >= 5 => Transport::Tcp { src, dst },
                _ => Transport::None,
            }
        }
        (IP_PROTO_UDP, _) => {
            if fragment {
                return Transport::Udp { src: 0, dst: 0 };
            }
            match UdpSlice::from_slice_lax(body) {
                Ok(u) => Transport::Udp {
                    src: u.source_port(),
                    dst: u.destination_port(),
                },
                Err(_) => Transport::None,
            }
        }
        (IP_PROTO_SCTP, _) => {
            if fragment {
                return Transport::Sctp { src: 0, dst: 0 };
            }
            // The SCTP common header is 12 bytes.
            match ports(body, 12) {
                Some((src, dst)) => Transport::Sctp { src, dst },
                None => Transport::None,
            }
        }
        (IP_PROTO_ICMP, false) => {
            if fragment {
                return Transport::Icmpv4 {
                    icmp_type: 0,
                    code: 0,
                };
            }
            match Icmpv4Slice::from_slice(body) {
                Ok(i) => Transport::Icmpv4 {
                    icmp_type: i.type_u8(),
                    code: i.code_u8(),
                },
                Err(_) => Transport::None,
            }
        }
        (IP_PROTO_ICMPV6, true) => {
            if fragment {
                return Transport::Icmpv6 {
                    icmp_type: 0,
                    code: 0,
                    nd: None,
                };
            }
            match Icmpv6Slice::from_slice(body) {
                Ok(i) => Transport::Icmpv6 {
                    icmp_type: i.type_u8(),
                    code: i.code_u8(),
                    nd: neighbour_discovery(i.type_u8(), i.code_u8(), i.slice()),
                },
                Err(_) => Transport::None,
            }
        }
        _ => Transport::None,
    }
}

/// The ND fields of an ICMPv6 neighbour solicitation or advertisement
/// (RFC 4861 §4.3, §4.4): the target after 4 reserved bytes, then options
/// of `len * 8` bytes. As in OVS, a malformed option list or a repeated
/// link-layer option makes the whole ND part unreadable.
fn neighbour_discovery(icmp_type: u8, code: u8, msg: &[u8]) -> Option<NdKey> {
    if code != 0 || (icmp_type != ICMPV6_ND_SOLICIT && icmp_type != ICMPV6_ND_ADVERT) {
        return None;
    }
    let target: [u8; 16] = msg.get(8..24)?.try_into().ok()?;
    let mut nd = NdKey {
        target: Ipv6Addr::from(target),
        sll: None,
        tll: None,
    };
    let mut opts = msg.get(24..).unwrap_or_default();
    while !opts.is_empty() {
        let (&opt_type, &len8) = (opts.first()?, opts.get(1)?);
        let len = usize::from(len8) * 8;
        if len == 0 || len > opts.len() {
            return None;
        }
        let body = opts.get(2..len)?;
        // Only the option matching the message type is kept; a second copy
        // of it is an error.
        let slot = match (opt_type, len, icmp_type) {
            (1, 8, ICMPV6_ND_SOLICIT) => Some(&mut nd.sll),
            (2, 8, ICMPV6_ND_ADVERT) => Some(&mut nd.tll),
            _ => None,
        };
        if slot.is_some_and(|s| s.replace(mac(body)).is_some()) {
            return None;
        }
        opts = opts.get(len..).unwrap_or_default();
    }
    Some(nd)
}

#[cfg(test)]
pub(crate) mod tests;
