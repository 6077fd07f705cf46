//! [`MatchSpec`]: a version-independent match, either the exact match of a
//! [`FlowKey`] or a sparse [`MatchFields`], written as a 1.0 `ofp_match`
//! (1.0.0 §5.2.3) or a 1.3 OXM match (1.3.5 §7.2.3).
//!
//! [`MatchFields`] is shaped so that every match it can express means the
//! same thing in both versions: fields with prerequisites (1.3.5 §7.2.3.6)
//! live inside the variant that supplies them ([`NetMatch::Ipv4`] carries
//! `ETH_TYPE=0x0800`, [`L4Match::Tcp`] carries `IP_PROTO=6`, ...), so no
//! field can be given without its prerequisite, and none that 1.0 cannot
//! match (IPv6, SCTP, masked Ethernet addresses) is offered. Exact IPv6 /
//! SCTP / ND matches are available through [`MatchSpec::Exact`].

use crate::packet::FlowKey;
use crate::packet::consts::{
    ETH_TYPE_ARP, ETH_TYPE_IPV4, ETH_TYPE_VLAN, ETH_TYPE_VLAN_8021AD, IP_PROTO_ICMP, IP_PROTO_TCP,
    IP_PROTO_UDP,
};
use crate::types::{MacAddr, PortNo};
use crate::v10::ofmatch::{
    MATCH_LEN, Match10, OFP_VLAN_NONE, OFPFW_ALL, OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE,
    OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP, OFPFW_IN_PORT, OFPFW_NW_PROTO, OFPFW_NW_TOS, OFPFW_TP_DST,
    OFPFW_TP_SRC, port_to_wire,
};
use crate::v13::oxm::{
    MATCH_BUF, OFPVID_NONE, OFPVID_PRESENT, Oxm, for_each_exact_oxm, put_exact_match,
    put_exact_match_frame, put_l2_match, put_match_with,
};
use crate::wire::{Fixed, Put};
use std::net::Ipv4Addr;

/// What a flow matches, for either version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchSpec<'a> {
    /// Exactly the packets whose [`FlowKey`] is this one
    /// ([`Match10::exact`], [`for_each_exact_oxm`]).
    Exact(FlowKey),
    /// Exactly the packets whose [`FlowKey`] is that of this frame, which
    /// arrived on `in_port`: the same match as [`MatchSpec::Exact`] of
    /// `FlowKey::extract(in_port, frame)`, written from the frame's bytes
    /// without building the key when the frame is a plain one
    /// ([`crate::packet::PlainIpv4`]); the exact-match learning switch's.
    ExactFrame {
        /// The port the frame arrived on.
        in_port: PortNo,
        /// The frame (as a PACKET_IN carries it, perhaps truncated).
        frame: &'a [u8],
    },
    /// The packets with these fields; absent fields are wildcards.
    Fields(MatchFields),
    /// What an L2 device tells apart: the input port, both Ethernet
    /// addresses and the VLAN ([`MatchSpec::l2_frame`]). The same match as
    /// [`MatchSpec::Fields`] of [`L2Match::fields`], written without going
    /// through the sparse form.
    L2(L2Match),
}

/// The L2 match of a frame (see [`MatchSpec::l2_frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct L2Match {
    /// The port the frame arrived on.
    pub in_port: PortNo,
    /// Its Ethernet source.
    pub eth_src: MacAddr,
    /// Its Ethernet destination.
    pub eth_dst: MacAddr,
    /// Its outermost VLAN tag's id, `None` when untagged.
    pub vid: Option<u16>,
}

impl L2Match {
    /// The same match in the sparse form.
    pub fn fields(&self) -> MatchFields {
        MatchFields {
            in_port: Some(self.in_port),
            eth_src: Some(self.eth_src),
            eth_dst: Some(self.eth_dst),
            vlan: Some(match self.vid {
                Some(vid) => VlanMatch::Tagged { vid, pcp: None },
                None => VlanMatch::Untagged,
            }),
            net: NetMatch::Any,
        }
    }
}

impl<'a> MatchSpec<'a> {
    /// The exact match of `key`.
    pub fn exact(key: &FlowKey) -> MatchSpec<'a> {
        MatchSpec::Exact(*key)
    }

    /// The exact match of the `frame` that arrived on `in_port` (see
    /// [`MatchSpec::ExactFrame`]).
    pub fn exact_frame(in_port: PortNo, frame: &'a [u8]) -> MatchSpec<'a> {
        MatchSpec::ExactFrame { in_port, frame }
    }

    /// The L2 match of the `frame` that arrived on `in_port`: the port,
    /// both Ethernet addresses, and the VLAN, its id when the frame is
    /// tagged (outermost tag, TPID 0x8100 or 0x88a8, as
    /// [`FlowKey::extract`] reads it) and untagged otherwise, so a flow
    /// learnt from untagged frames never carries tagged ones. What an L2
    /// learning switch matches (Ryu's `simple_switch_13`, ONOS's reactive
    /// forwarding and Floodlight's forwarding match the same addresses):
    /// one flow per pair of hosts and input port, against one per
    /// microflow for the exact match. `None` for a frame too short to
    /// have both addresses.
    #[inline]
    pub fn l2_frame(in_port: PortNo, frame: &[u8]) -> Option<MatchSpec<'a>> {
        let dst: [u8; 6] = frame.get(0..6)?.try_into().ok()?;
        let src: [u8; 6] = frame.get(6..12)?.try_into().ok()?;
        let vid = match frame.get(12..16) {
            Some(&[t0, t1, v0, v1])
                if matches!(
                    u16::from_be_bytes([t0, t1]),
                    ETH_TYPE_VLAN | ETH_TYPE_VLAN_8021AD
                ) =>
            {
                Some(u16::from_be_bytes([v0, v1]) & 0x0fff)
            }
            _ => None,
        };
        Some(MatchSpec::L2(L2Match {
            in_port,
            eth_src: MacAddr(src),
            eth_dst: MacAddr(dst),
            vid,
        }))
    }

    /// The match-everything match.
    pub const fn all() -> MatchSpec<'a> {
        MatchSpec::Fields(MatchFields::ANY)
    }

    /// The OpenFlow 1.0 `ofp_match` (1.0.0 §5.2.3).
    #[inline]
    pub fn to_match10(&self) -> Match10 {
        match self {
            MatchSpec::Exact(k) => Match10::exact(k),
            MatchSpec::ExactFrame { in_port, frame } => Match10::exact_frame(*in_port, frame),
            MatchSpec::Fields(f) => f.to_match10(),
            MatchSpec::L2(l2) => Match10 {
                wildcards: OFPFW_ALL
                    & !(OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_DL_DST | OFPFW_DL_VLAN),
                in_port: l2.in_port,
                dl_src: l2.eth_src,
                dl_dst: l2.eth_dst,
                dl_vlan: l2.vid.unwrap_or(OFP_VLAN_NONE),
                ..Match10::ALL
            },
        }
    }

    /// Writes the 40 bytes of [`MatchSpec::to_match10`] into `b`, the exact
    /// match of a plain frame straight from its bytes
    /// ([`Match10::write_exact_frame`]).
    #[inline(always)]
    pub(crate) fn write_match10(&self, b: &mut [u8; MATCH_LEN]) {
        match self {
            MatchSpec::ExactFrame { in_port, frame } => {
                Match10::write_exact_frame(b, *in_port, frame)
            }
            MatchSpec::L2(l2) => {
                // `to_match10`'s L2 match, in place (1.0.0 §5.2.3 offsets).
                let wildcards =
                    OFPFW_ALL & !(OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_DL_DST | OFPFW_DL_VLAN);
                b[0..4].copy_from_slice(&wildcards.to_be_bytes());
                b[4..6].copy_from_slice(&port_to_wire(l2.in_port).to_be_bytes());
                b[6..12].copy_from_slice(&l2.eth_src.0);
                b[12..18].copy_from_slice(&l2.eth_dst.0);
                b[18..20].copy_from_slice(&l2.vid.unwrap_or(OFP_VLAN_NONE).to_be_bytes());
                b[20..].fill(0);
            }
            MatchSpec::Exact(_) | MatchSpec::Fields(_) => self.to_match10().write(b),
        }
    }

    /// Calls `f` with each OXM TLV of the OpenFlow 1.3 match, prerequisites
    /// first (1.3.5 §7.2.3.6).
    pub fn for_each_oxm(&self, f: impl FnMut(Oxm)) {
        match self {
            MatchSpec::Exact(k) => for_each_exact_oxm(k, f),
            MatchSpec::ExactFrame { in_port, frame } => {
                for_each_exact_oxm(&FlowKey::extract(*in_port, frame), f)
            }
            MatchSpec::Fields(m) => m.for_each_oxm(f),
            MatchSpec::L2(l2) => l2.fields().for_each_oxm(f),
        }
    }

    /// Appends the OpenFlow 1.3 `ofp_match` (1.3.5 §7.2.3.1), padded to 8
    /// bytes.
    pub fn emit_oxm_match(&self, out: &mut Vec<u8>) {
        let mut b = Fixed::<MATCH_BUF>::new();
        self.put_oxm_match(&mut b);
        out.put_slice(b.as_slice());
    }

    /// Writes the match as a 1.3 OXM `ofp_match` into `b`, after what it
    /// holds (as [`MatchSpec::emit_oxm_match`] appends it), for a message
    /// built whole on the stack.
    #[inline]
    pub fn put_oxm_match<const N: usize>(&self, b: &mut Fixed<N>) {
        match self {
            MatchSpec::Exact(k) => put_exact_match(b, k),
            MatchSpec::ExactFrame { in_port, frame } => put_exact_match_frame(b, *in_port, frame),
            MatchSpec::Fields(m) => put_match_with(b, |b| m.for_each_oxm(|o| o.emit(b))),
            MatchSpec::L2(l2) => {
                put_l2_match(b, l2.in_port, l2.eth_dst.0, l2.eth_src.0, l2.vid);
            }
        }
    }
}

/// An IPv4 address prefix: `addr` matched on its `len` high-order bits
/// (32: the whole address; 0: any address; more than 32 counts as 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Prefix {
    /// The address; bits beyond `len` are ignored (written as zeros).
    pub addr: Ipv4Addr,
    /// Prefix length.
    pub len: u8,
}

impl Ipv4Prefix {
    /// One address (a /32).
    pub const fn host(addr: Ipv4Addr) -> Ipv4Prefix {
        Ipv4Prefix { addr, len: 32 }
    }

    /// The netmask of the prefix.
    pub fn mask(&self) -> Ipv4Addr {
        let len = u32::from(self.len.min(32));
        Ipv4Addr::from(u32::MAX.checked_shl(32 - len).unwrap_or(0))
    }

    /// `addr` with the bits beyond the prefix cleared.
    pub fn network(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & u32::from(self.mask()))
    }

    /// The 1.3 value and optional mask, or `None` for a /0.
    fn oxm_parts(&self) -> Option<(Ipv4Addr, Option<Ipv4Addr>)> {
        match self.len {
            0 => None,
            32.. => Some((self.addr, None)),
            _ => Some((self.network(), Some(self.mask()))),
        }
    }
}

/// The VLAN part of a [`MatchFields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VlanMatch {
    /// Frames without a VLAN tag (1.0 `dl_vlan = OFP_VLAN_NONE`, 1.3
    /// `VLAN_VID = OFPVID_NONE`).
    Untagged,
    /// Frames tagged with `vid`, and priority `pcp` if given.
    Tagged {
        /// VLAN id (12 bits).
        vid: u16,
        /// Priority code point (3 bits), or any.
        pcp: Option<u8>,
    },
}

/// The network part of a [`MatchFields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetMatch {
    /// Any ethertype.
    Any,
    /// This ethertype, no network fields.
    EthType(u16),
    /// ARP (ethertype 0x0806) with these fields. 1.0 matches the opcode's
    /// low 8 bits (in `nw_proto`).
    Arp {
        /// Opcode.
        op: Option<u16>,
        /// Sender protocol address.
        spa: Option<Ipv4Prefix>,
        /// Target protocol address.
        tpa: Option<Ipv4Prefix>,
    },
    /// IPv4 (ethertype 0x0800) with these fields.
    Ipv4 {
        /// Source prefix.
        src: Option<Ipv4Prefix>,
        /// Destination prefix.
        dst: Option<Ipv4Prefix>,
        /// DSCP (6 bits).
        dscp: Option<u8>,
        /// The protocol and its fields.
        l4: L4Match,
    },
}

/// The transport part of a [`NetMatch::Ipv4`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L4Match {
    /// Any protocol.
    Any,
    /// This protocol, no transport fields.
    Proto(u8),
    /// TCP with these ports.
    Tcp {
        /// Source port.
        src: Option<u16>,
        /// Destination port.
        dst: Option<u16>,
    },
    /// UDP with these ports.
    Udp {
        /// Source port.
        src: Option<u16>,
        /// Destination port.
        dst: Option<u16>,
    },
    /// ICMP with this type and code (1.0 `tp_src` / `tp_dst`).
    Icmp {
        /// Type.
        icmp_type: Option<u8>,
        /// Code.
        code: Option<u8>,
    },
}

/// A sparse match that both versions express identically; `None` fields
/// are wildcards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatchFields {
    /// Input port.
    pub in_port: Option<PortNo>,
    /// Ethernet source.
    pub eth_src: Option<MacAddr>,
    /// Ethernet destination.
    pub eth_dst: Option<MacAddr>,
    /// VLAN tag.
    pub vlan: Option<VlanMatch>,
    /// Ethertype and the fields that need it.
    pub net: NetMatch,
}

impl Default for MatchFields {
    fn default() -> Self {
        MatchFields::ANY
    }
}

impl MatchFields {
    /// Everything wildcarded.
    pub const ANY: MatchFields = MatchFields {
        in_port: None,
        eth_src: None,
        eth_dst: None,
        vlan: None,
        net: NetMatch::Any,
    };

    /// The OpenFlow 1.0 `ofp_match` (1.0.0 §5.2.3).
    pub fn to_match10(&self) -> Match10 {
        let mut m = Match10::ALL;
        if let Some(p) = self.in_port {
            m.in_port = p;
            m.wildcards &= !OFPFW_IN_PORT;
        }
        if let Some(a) = self.eth_src {
            m.dl_src = a;
            m.wildcards &= !OFPFW_DL_SRC;
        }
        if let Some(a) = self.eth_dst {
            m.dl_dst = a;
            m.wildcards &= !OFPFW_DL_DST;
        }
        match self.vlan {
            None => {}
            Some(VlanMatch::Untagged) => {
                m.dl_vlan = OFP_VLAN_NONE;
                m.wildcards &= !OFPFW_DL_VLAN;
            }
            Some(VlanMatch::Tagged { vid, pcp }) => {
                m.dl_vlan = vid & 0x0fff;
                m.wildcards &= !OFPFW_DL_VLAN;
                if let Some(pcp) = pcp {
                    m.dl_vlan_pcp = pcp;
                    m.wildcards &= !OFPFW_DL_VLAN_PCP;
                }
            }
        }
        let dl_type = |m: &mut Match10, t: u16| {
            m.dl_type = t;
            m.wildcards &= !OFPFW_DL_TYPE;
        };
        let nw_proto = |m: &mut Match10, p: u8| {
            m.nw_proto = p;
            m.wildcards &= !OFPFW_NW_PROTO;
        };
        let tp = |m: &mut Match10, src: Option<u16>, dst: Option<u16>| {
            if let Some(v) = src {
                m.tp_src = v;
                m.wildcards &= !OFPFW_TP_SRC;
            }
            if let Some(v) = dst {
                m.tp_dst = v;
                m.wildcards &= !OFPFW_TP_DST;
            }
        };
        match self.net {
            NetMatch::Any => {}
            NetMatch::EthType(t) => dl_type(&mut m, t),
            NetMatch::Arp { op, spa, tpa } => {
                dl_type(&mut m, ETH_TYPE_ARP);
                if let Some(op) = op {
                    nw_proto(&mut m, op as u8);
                }
                set_nw(&mut m, spa, tpa);
            }
            NetMatch::Ipv4 { src, dst, dscp, l4 } => {
                dl_type(&mut m, ETH_TYPE_IPV4);
                set_nw(&mut m, src, dst);
                if let Some(d) = dscp {
                    m.nw_tos = d << 2;
                    m.wildcards &= !OFPFW_NW_TOS;
                }
                match l4 {
                    L4Match::Any => {}
                    L4Match::Proto(p) => nw_proto(&mut m, p),
                    L4Match::Tcp { src, dst } => {
                        nw_proto(&mut m, IP_PROTO_TCP);
                        tp(&mut m, src, dst);
                    }
                    L4Match::Udp { src, dst } => {
                        nw_proto(&mut m, IP_PROTO_UDP);
                        tp(&mut m, src, dst);
                    }
                    L4Match::Icmp { icmp_type, code } => {
                        nw_proto(&mut m, IP_PROTO_ICMP);
                        tp(&mut m, icmp_type.map(u16::from), code.map(u16::from));
                    }
                }
            }
        }
        m
    }

    /// Calls `f` with each OXM TLV of the OpenFlow 1.3 match, in an order
    /// where every field follows its prerequisites (1.3.5 §7.2.3.6).
    pub fn for_each_oxm(&self, mut f: impl FnMut(Oxm)) {
        if let Some(p) = self.in_port {
            f(Oxm::InPort(p));
        }
        if let Some(value) = self.eth_dst {
            f(Oxm::EthDst { value, mask: None });
        }
        if let Some(value) = self.eth_src {
            f(Oxm::EthSrc { value, mask: None });
        }
        match self.net {
            NetMatch::Any => {}
            NetMatch::EthType(t) => f(Oxm::EthType(t)),
            NetMatch::Arp { .. } => f(Oxm::EthType(ETH_TYPE_ARP)),
            NetMatch::Ipv4 { .. } => f(Oxm::EthType(ETH_TYPE_IPV4)),
        }
        match self.vlan {
            None => {}
            Some(VlanMatch::Untagged) => f(Oxm::VlanVid {
                value: OFPVID_NONE,
                mask: None,
            }),
            Some(VlanMatch::Tagged { vid, pcp }) => {
                f(Oxm::VlanVid {
                    value: OFPVID_PRESENT | (vid & 0x0fff),
                    mask: None,
                });
                if let Some(pcp) = pcp {
                    f(Oxm::VlanPcp(pcp));
                }
            }
        }
        match self.net {
            NetMatch::Any | NetMatch::EthType(_) => {}
            NetMatch::Arp { op, spa, tpa } => {
                if let Some(op) = op {
                    f(Oxm::ArpOp(op));
                }
                if let Some((value, mask)) = spa.and_then(|p| p.oxm_parts()) {
                    f(Oxm::ArpSpa { value, mask });
                }
                if let Some((value, mask)) = tpa.and_then(|p| p.oxm_parts()) {
                    f(Oxm::ArpTpa { value, mask });
                }
            }
            NetMatch::Ipv4 { src, dst, dscp, l4 } => {
                if let Some(d) = dscp {
                    f(Oxm::IpDscp(d));
                }
                match l4 {
                    L4Match::Any => {}
                    L4Match::Proto(p) => f(Oxm::IpProto(p)),
                    L4Match::Tcp { .. } => f(Oxm::IpProto(IP_PROTO_TCP)),
                    L4Match::Udp { .. } => f(Oxm::IpProto(IP_PROTO_UDP)),
                    L4Match::Icmp { .. } => f(Oxm::IpProto(IP_PROTO_ICMP)),
                }
                if let Some((value, mask)) = src.and_then(|p| p.oxm_parts()) {
                    f(Oxm::Ipv4Src { value, mask });
                }
                if let Some((value, mask)) = dst.and_then(|p| p.oxm_parts()) {
                    f(Oxm::Ipv4Dst { value, mask });
                }
                match l4 {
                    L4Match::Any | L4Match::Proto(_) => {}
                    L4Match::Tcp { src, dst } => {
                        if let Some(v) = src {
                            f(Oxm::TcpSrc(v));
                        }
                        if let Some(v) = dst {
                            f(Oxm::TcpDst(v));
                        }
                    }
                    L4Match::Udp { src, dst } => {
                        if let Some(v) = src {
                            f(Oxm::UdpSrc(v));
                        }
                        if let Some(v) = dst {
                            f(Oxm::UdpDst(v));
                        }
                    }
                    L4Match::Icmp { icmp_type, code } => {
                        if let Some(v) = icmp_type {
                            f(Oxm::Icmpv4Type(v));
                        }
                        if let Some(v) = code {
                            f(Oxm::Icmpv4Code(v));
                        }
                    }
                }
            }
        }
    }
}

/// Sets `nw_src` / `nw_dst` of a 1.0 match from optional prefixes.
fn set_nw(m: &mut Match10, src: Option<Ipv4Prefix>, dst: Option<Ipv4Prefix>) {
    if let Some(p) = src {
        m.set_nw_src(p.network(), p.len.min(32));
    }
    if let Some(p) = dst {
        m.set_nw_dst(p.network(), p.len.min(32));
    }
}
