//! The typed OXM value, [`Oxm`] (1.3.5 §7.2.3.7): one variant per basic
//! field, and the per-type readers and writers behind [`Oxm::emit`] and
//! decoding.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::field::{OFPXMC_OPENFLOW_BASIC, OXM_HEADER_LEN, OxmField, OxmHeader};
use crate::types::{MacAddr, PortNo};
use crate::wire::Put;

/// One OXM TLV with a typed value (1.3.5 §7.2.3.7).
///
/// Basic fields hold no heap data, so building and emitting them allocates
/// nothing; only [`Oxm::Other`] owns bytes. Values are kept whole as on the
/// wire (e.g. `VlanPcp` keeps all 8 bits, `VlanVid` includes
/// [`OFPVID_PRESENT`](super::OFPVID_PRESENT)); `PbbIsid` is 24 bits on the wire, so only values up
/// to `0xff_ffff` survive a round trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Oxm {
    /// OFPXMT_OFB_IN_PORT: switch input port.
    InPort(PortNo),
    /// OFPXMT_OFB_IN_PHY_PORT: switch physical input port.
    InPhyPort(PortNo),
    /// OFPXMT_OFB_METADATA: metadata passed between tables.
    Metadata {
        /// Value.
        value: u64,
        /// Mask; `None` for an exact match.
        mask: Option<u64>,
    },
    /// OFPXMT_OFB_ETH_DST: Ethernet destination address.
    EthDst {
        /// Value.
        value: MacAddr,
        /// Mask; `None` for an exact match.
        mask: Option<MacAddr>,
    },
    /// OFPXMT_OFB_ETH_SRC: Ethernet source address.
    EthSrc {
        /// Value.
        value: MacAddr,
        /// Mask; `None` for an exact match.
        mask: Option<MacAddr>,
    },
    /// OFPXMT_OFB_ETH_TYPE: Ethernet frame type.
    EthType(u16),
    /// OFPXMT_OFB_VLAN_VID: VLAN id, with [`OFPVID_PRESENT`](super::OFPVID_PRESENT) set for tagged
    /// frames ([`OFPVID_NONE`](super::OFPVID_NONE) matches untagged ones).
    VlanVid {
        /// Value.
        value: u16,
        /// Mask; `None` for an exact match.
        mask: Option<u16>,
    },
    /// OFPXMT_OFB_VLAN_PCP: VLAN priority.
    VlanPcp(u8),
    /// OFPXMT_OFB_IP_DSCP: IP DSCP (6 bits in ToS field).
    IpDscp(u8),
    /// OFPXMT_OFB_IP_ECN: IP ECN (2 bits in ToS field).
    IpEcn(u8),
    /// OFPXMT_OFB_IP_PROTO: IP protocol.
    IpProto(u8),
    /// OFPXMT_OFB_IPV4_SRC: IPv4 source address.
    Ipv4Src {
        /// Value.
        value: Ipv4Addr,
        /// Mask; `None` for an exact match.
        mask: Option<Ipv4Addr>,
    },
    /// OFPXMT_OFB_IPV4_DST: IPv4 destination address.
    Ipv4Dst {
        /// Value.
        value: Ipv4Addr,
        /// Mask; `None` for an exact match.
        mask: Option<Ipv4Addr>,
    },
    /// OFPXMT_OFB_TCP_SRC: TCP source port.
    TcpSrc(u16),
    /// OFPXMT_OFB_TCP_DST: TCP destination port.
    TcpDst(u16),
    /// OFPXMT_OFB_UDP_SRC: UDP source port.
    UdpSrc(u16),
    /// OFPXMT_OFB_UDP_DST: UDP destination port.
    UdpDst(u16),
    /// OFPXMT_OFB_SCTP_SRC: SCTP source port.
    SctpSrc(u16),
    /// OFPXMT_OFB_SCTP_DST: SCTP destination port.
    SctpDst(u16),
    /// OFPXMT_OFB_ICMPV4_TYPE: ICMP type.
    Icmpv4Type(u8),
    /// OFPXMT_OFB_ICMPV4_CODE: ICMP code.
    Icmpv4Code(u8),
    /// OFPXMT_OFB_ARP_OP: ARP opcode.
    ArpOp(u16),
    /// OFPXMT_OFB_ARP_SPA: ARP source IPv4 address.
    ArpSpa {
        /// Value.
        value: Ipv4Addr,
        /// Mask; `None` for an exact match.
        mask: Option<Ipv4Addr>,
    },
    /// OFPXMT_OFB_ARP_TPA: ARP target IPv4 address.
    ArpTpa {
        /// Value.
        value: Ipv4Addr,
        /// Mask; `None` for an exact match.
        mask: Option<Ipv4Addr>,
    },
    /// OFPXMT_OFB_ARP_SHA: ARP source hardware address.
    ArpSha {
        /// Value.
        value: MacAddr,
        /// Mask; `None` for an exact match.
        mask: Option<MacAddr>,
    },
    /// OFPXMT_OFB_ARP_THA: ARP target hardware address.
    ArpTha {
        /// Value.
        value: MacAddr,
        /// Mask; `None` for an exact match.
        mask: Option<MacAddr>,
    },
    /// OFPXMT_OFB_IPV6_SRC: IPv6 source address.
    Ipv6Src {
        /// Value.
        value: Ipv6Addr,
        /// Mask; `None` for an exact match.
        mask: Option<Ipv6Addr>,
    },
    /// OFPXMT_OFB_IPV6_DST: IPv6 destination address.
    Ipv6Dst {
        /// Value.
        value: Ipv6Addr,
        /// Mask; `None` for an exact match.
        mask: Option<Ipv6Addr>,
    },
    /// OFPXMT_OFB_IPV6_FLABEL: IPv6 flow label (20 bits in 32).
    Ipv6Flabel {
        /// Value.
        value: u32,
        /// Mask; `None` for an exact match.
        mask: Option<u32>,
    },
    /// OFPXMT_OFB_ICMPV6_TYPE: ICMPv6 type.
    Icmpv6Type(u8),
    /// OFPXMT_OFB_ICMPV6_CODE: ICMPv6 code.
    Icmpv6Code(u8),
    /// OFPXMT_OFB_IPV6_ND_TARGET: target address for neighbour discovery.
    Ipv6NdTarget(Ipv6Addr),
    /// OFPXMT_OFB_IPV6_ND_SLL: source link-layer address for ND.
    Ipv6NdSll(MacAddr),
    /// OFPXMT_OFB_IPV6_ND_TLL: target link-layer address for ND.
    Ipv6NdTll(MacAddr),
    /// OFPXMT_OFB_MPLS_LABEL: MPLS label (20 bits in 32).
    MplsLabel(u32),
    /// OFPXMT_OFB_MPLS_TC: MPLS TC.
    MplsTc(u8),
    /// OFPXMT_OFB_MPLS_BOS: MPLS BoS bit.
    MplsBos(u8),
    /// OFPXMT_OFB_PBB_ISID: PBB I-SID (24 bits on the wire).
    PbbIsid {
        /// Value (at most `0xff_ffff`).
        value: u32,
        /// Mask; `None` for an exact match.
        mask: Option<u32>,
    },
    /// OFPXMT_OFB_TUNNEL_ID: logical port metadata.
    TunnelId {
        /// Value.
        value: u64,
        /// Mask; `None` for an exact match.
        mask: Option<u64>,
    },
    /// OFPXMT_OFB_IPV6_EXTHDR: IPv6 extension header pseudo-field
    /// ([`ipv6_exthdr`](super::ipv6_exthdr) bits).
    Ipv6Exthdr {
        /// Value.
        value: u16,
        /// Mask; `None` for an exact match.
        mask: Option<u16>,
    },
    /// A TLV of a class other than `OFPXMC_OPENFLOW_BASIC` (NXM,
    /// experimenter), kept as received so it round-trips. For
    /// [`OFPXMC_EXPERIMENTER`](super::OFPXMC_EXPERIMENTER) the body starts with the experimenter id.
    /// `class` must not be [`OFPXMC_OPENFLOW_BASIC`] and the body must fit
    /// the 8-bit length (longer bodies are cut to 255 bytes).
    Other {
        /// `oxm_class`.
        class: u16,
        /// `oxm_field` (7 bits).
        field: u8,
        /// `oxm_hasmask`.
        has_mask: bool,
        /// The body after the header (value then mask, as the class
        /// defines).
        body: Vec<u8>,
    },
}

/// Fixed-size values an OXM carries.
pub(super) trait OxmValue: Copy {
    const LEN: usize;
    /// Reads from the first `LEN` bytes of `b` (zeros where `b` is short,
    /// which the callers' length checks rule out).
    fn read(b: &[u8]) -> Self;
    fn write(self, out: &mut impl Put);
}

#[inline]
fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(s) = b.get(..N) {
        a.copy_from_slice(s);
    }
    a
}

macro_rules! oxm_int {
    ($($t:ty),+) => {$(
        impl OxmValue for $t {
            const LEN: usize = std::mem::size_of::<$t>();
            #[inline]
            fn read(b: &[u8]) -> Self {
                <$t>::from_be_bytes(arr(b))
            }
            #[inline]
            fn write(self, out: &mut impl Put) {
                out.put_slice(&self.to_be_bytes());
            }
        }
    )+};
}
oxm_int!(u8, u16, u32, u64);

impl OxmValue for PortNo {
    const LEN: usize = 4;
    fn read(b: &[u8]) -> Self {
        PortNo(u32::read(b))
    }
    fn write(self, out: &mut impl Put) {
        out.put_u32(self.0);
    }
}

impl OxmValue for MacAddr {
    const LEN: usize = 6;
    fn read(b: &[u8]) -> Self {
        MacAddr(arr(b))
    }
    fn write(self, out: &mut impl Put) {
        out.put_slice(&self.0);
    }
}

impl OxmValue for Ipv4Addr {
    const LEN: usize = 4;
    fn read(b: &[u8]) -> Self {
        Ipv4Addr::from(arr::<4>(b))
    }
    fn write(self, out: &mut impl Put) {
        out.put_slice(&self.octets());
    }
}

impl OxmValue for Ipv6Addr {
    const LEN: usize = 16;
    fn read(b: &[u8]) -> Self {
        Ipv6Addr::from(arr::<16>(b))
    }
    fn write(self, out: &mut impl Put) {
        out.put_slice(&self.octets());
    }
}

/// The 24-bit PBB I-SID.
#[derive(Clone, Copy)]
struct U24(u32);

impl OxmValue for U24 {
    const LEN: usize = 3;
    fn read(b: &[u8]) -> Self {
        let [x, y, z] = arr::<3>(b);
        U24(u32::from_be_bytes([0, x, y, z]))
    }
    fn write(self, out: &mut impl Put) {
        out.put_slice(&self.0.to_be_bytes()[1..]);
    }
}

#[inline]
fn put_plain<T: OxmValue>(out: &mut impl Put, f: OxmField, v: T) {
    out.put_u32(
        OxmHeader {
            class: OFPXMC_OPENFLOW_BASIC,
            field: f.into(),
            has_mask: false,
            length: T::LEN as u8,
        }
        .to_u32(),
    );
    v.write(out);
}

#[inline]
fn put_masked<T: OxmValue>(out: &mut impl Put, f: OxmField, v: T, m: Option<T>) {
    out.put_u32(
        OxmHeader {
            class: OFPXMC_OPENFLOW_BASIC,
            field: f.into(),
            has_mask: m.is_some(),
            length: (T::LEN * (1 + m.is_some() as usize)) as u8,
        }
        .to_u32(),
    );
    v.write(out);
    if let Some(m) = m {
        m.write(out);
    }
}

#[inline]
fn val<T: OxmValue>(body: &[u8]) -> T {
    T::read(body)
}

#[inline]
fn mask<T: OxmValue>(body: &[u8], has_mask: bool) -> Option<T> {
    has_mask.then(|| T::read(body.get(T::LEN..).unwrap_or(&[])))
}

impl Oxm {
    /// The basic field this is; `None` for [`Oxm::Other`].
    pub fn field(&self) -> Option<OxmField> {
        use OxmField as F;
        Some(match self {
            Oxm::InPort(_) => F::InPort,
            Oxm::InPhyPort(_) => F::InPhyPort,
            Oxm::Metadata { .. } => F::Metadata,
            Oxm::EthDst { .. } => F::EthDst,
            Oxm::EthSrc { .. } => F::EthSrc,
            Oxm::EthType(_) => F::EthType,
            Oxm::VlanVid { .. } => F::VlanVid,
            Oxm::VlanPcp(_) => F::VlanPcp,
            Oxm::IpDscp(_) => F::IpDscp,
            Oxm::IpEcn(_) => F::IpEcn,
            Oxm::IpProto(_) => F::IpProto,
            Oxm::Ipv4Src { .. } => F::Ipv4Src,
            Oxm::Ipv4Dst { .. } => F::Ipv4Dst,
            Oxm::TcpSrc(_) => F::TcpSrc,
            Oxm::TcpDst(_) => F::TcpDst,
            Oxm::UdpSrc(_) => F::UdpSrc,
            Oxm::UdpDst(_) => F::UdpDst,
            Oxm::SctpSrc(_) => F::SctpSrc,
            Oxm::SctpDst(_) => F::SctpDst,
            Oxm::Icmpv4Type(_) => F::Icmpv4Type,
            Oxm::Icmpv4Code(_) => F::Icmpv4Code,
            Oxm::ArpOp(_) => F::ArpOp,
            Oxm::ArpSpa { .. } => F::ArpSpa,
            Oxm::ArpTpa { .. } => F::ArpTpa,
            Oxm::ArpSha { .. } => F::ArpSha,
            Oxm::ArpTha { .. } => F::ArpTha,
            Oxm::Ipv6Src { .. } => F::Ipv6Src,
            Oxm::Ipv6Dst { .. } => F::Ipv6Dst,
            Oxm::Ipv6Flabel { .. } => F::Ipv6Flabel,
            Oxm::Icmpv6Type(_) => F::Icmpv6Type,
            Oxm::Icmpv6Code(_) => F::Icmpv6Code,
            Oxm::Ipv6NdTarget(_) => F::Ipv6NdTarget,
            Oxm::Ipv6NdSll(_) => F::Ipv6NdSll,
            Oxm::Ipv6NdTll(_) => F::Ipv6NdTll,
            Oxm::MplsLabel(_) => F::MplsLabel,
            Oxm::MplsTc(_) => F::MplsTc,
            Oxm::MplsBos(_) => F::MplsBos,
            Oxm::PbbIsid { .. } => F::PbbIsid,
            Oxm::TunnelId { .. } => F::TunnelId,
            Oxm::Ipv6Exthdr { .. } => F::Ipv6Exthdr,
            Oxm::Other { .. } => return None,
        })
    }

    /// The TLV header this value is written with.
    pub fn header(&self) -> OxmHeader {
        match (self, self.field()) {
            (
                Oxm::Other {
                    class,
                    field,
                    has_mask,
                    body,
                },
                _,
            ) => OxmHeader {
                class: *class,
                field: *field & 0x7f,
                has_mask: *has_mask,
                length: body.len().min(255) as u8,
            },
            (_, Some(f)) => OxmHeader::basic(f, self.has_mask()),
            (_, None) => OxmHeader::from_u32(0),
        }
    }

    /// Whether a mask is present.
    pub fn has_mask(&self) -> bool {
        match self {
            Oxm::Metadata { mask, .. } | Oxm::TunnelId { mask, .. } => mask.is_some(),
            Oxm::EthDst { mask, .. }
            | Oxm::EthSrc { mask, .. }
            | Oxm::ArpSha { mask, .. }
            | Oxm::ArpTha { mask, .. } => mask.is_some(),
            Oxm::VlanVid { mask, .. } | Oxm::Ipv6Exthdr { mask, .. } => mask.is_some(),
            Oxm::Ipv4Src { mask, .. }
            | Oxm::Ipv4Dst { mask, .. }
            | Oxm::ArpSpa { mask, .. }
            | Oxm::ArpTpa { mask, .. } => mask.is_some(),
            Oxm::Ipv6Src { mask, .. } | Oxm::Ipv6Dst { mask, .. } => mask.is_some(),
            Oxm::Ipv6Flabel { mask, .. } | Oxm::PbbIsid { mask, .. } => mask.is_some(),
            Oxm::Other { has_mask, .. } => *has_mask,
            _ => false,
        }
    }

    /// Bytes this TLV takes on the wire (header included, no padding).
    pub fn wire_len(&self) -> usize {
        OXM_HEADER_LEN + self.header().length as usize
    }

    /// Appends the TLV (header, value, mask). Allocates nothing beyond
    /// growing `out`.
    pub fn emit(&self, out: &mut impl Put) {
        use OxmField as F;
        match *self {
            Oxm::InPort(v) => put_plain(out, F::InPort, v),
            Oxm::InPhyPort(v) => put_plain(out, F::InPhyPort, v),
            Oxm::Metadata { value, mask } => put_masked(out, F::Metadata, value, mask),
            Oxm::EthDst { value, mask } => put_masked(out, F::EthDst, value, mask),
            Oxm::EthSrc { value, mask } => put_masked(out, F::EthSrc, value, mask),
            Oxm::EthType(v) => put_plain(out, F::EthType, v),
            Oxm::VlanVid { value, mask } => put_masked(out, F::VlanVid, value, mask),
            Oxm::VlanPcp(v) => put_plain(out, F::VlanPcp, v),
            Oxm::IpDscp(v) => put_plain(out, F::IpDscp, v),
            Oxm::IpEcn(v) => put_plain(out, F::IpEcn, v),
            Oxm::IpProto(v) => put_plain(out, F::IpProto, v),
            Oxm::Ipv4Src { value, mask } => put_masked(out, F::Ipv4Src, value, mask),
            Oxm::Ipv4Dst { value, mask } => put_masked(out, F::Ipv4Dst, value, mask),
            Oxm::TcpSrc(v) => put_plain(out, F::TcpSrc, v),
            Oxm::TcpDst(v) => put_plain(out, F::TcpDst, v),
            Oxm::UdpSrc(v) => put_plain(out, F::UdpSrc, v),
            Oxm::UdpDst(v) => put_plain(out, F::UdpDst, v),
            Oxm::SctpSrc(v) => put_plain(out, F::SctpSrc, v),
            Oxm::SctpDst(v) => put_plain(out, F::SctpDst, v),
            Oxm::Icmpv4Type(v) => put_plain(out, F::Icmpv4Type, v),
            Oxm::Icmpv4Code(v) => put_plain(out, F::Icmpv4Code, v),
            Oxm::ArpOp(v) => put_plain(out, F::ArpOp, v),
            Oxm::ArpSpa { value, mask } => put_masked(out, F::ArpSpa, value, mask),
            Oxm::ArpTpa { value, mask } => put_masked(out, F::ArpTpa, value, mask),
            Oxm::ArpSha { value, mask } => put_masked(out, F::ArpSha, value, mask),
            Oxm::ArpTha { value, mask } => put_masked(out, F::ArpTha, value, mask),
            Oxm::Ipv6Src { value, mask } => put_masked(out, F::Ipv6Src, value, mask),
            Oxm::Ipv6Dst { value, mask } => put_masked(out, F::Ipv6Dst, value, mask),
            Oxm::Ipv6Flabel { value, mask } => put_masked(out, F::Ipv6Flabel, value, mask),
            Oxm::Icmpv6Type(v) => put_plain(out, F::Icmpv6Type, v),
            Oxm::Icmpv6Code(v) => put_plain(out, F::Icmpv6Code, v),
            Oxm::Ipv6NdTarget(v) => put_plain(out, F::Ipv6NdTarget, v),
            Oxm::Ipv6NdSll(v) => put_plain(out, F::Ipv6NdSll, v),
            Oxm::Ipv6NdTll(v) => put_plain(out, F::Ipv6NdTll, v),
            Oxm::MplsLabel(v) => put_plain(out, F::MplsLabel, v),
            Oxm::MplsTc(v) => put_plain(out, F::MplsTc, v),
            Oxm::MplsBos(v) => put_plain(out, F::MplsBos, v),
            Oxm::PbbIsid { value, mask } => put_masked(out, F::PbbIsid, U24(value), mask.map(U24)),
            Oxm::TunnelId { value, mask } => put_masked(out, F::TunnelId, value, mask),
            Oxm::Ipv6Exthdr { value, mask } => put_masked(out, F::Ipv6Exthdr, value, mask),
            Oxm::Other { .. } => {
                let h = self.header();
                out.put_u32(h.to_u32());
                if let Oxm::Other { body, .. } = self {
                    out.put_slice(body.get(..h.length as usize).unwrap_or(body));
                }
            }
        }
    }

    /// Builds the value of a basic field from a body whose length was
    /// checked against [`OXM_BASIC_FIELDS`].
    pub(super) fn from_basic(f: OxmField, m: bool, b: &[u8]) -> Option<Oxm> {
        use OxmField as F;
        Some(match f {
            F::InPort => Oxm::InPort(val(b)),
            F::InPhyPort => Oxm::InPhyPort(val(b)),
            F::Metadata => Oxm::Metadata {
                value: val(b),
                mask: mask(b, m),
            },
            F::EthDst => Oxm::EthDst {
                value: val(b),
                mask: mask(b, m),
            },
            F::EthSrc => Oxm::EthSrc {
                value: val(b),
                mask: mask(b, m),
            },
            F::EthType => Oxm::EthType(val(b)),
            F::VlanVid => Oxm::VlanVid {
                value: val(b),
                mask: mask(b, m),
            },
            F::VlanPcp => Oxm::VlanPcp(val(b)),
            F::IpDscp => Oxm::IpDscp(val(b)),
            F::IpEcn => Oxm::IpEcn(val(b)),
            F::IpProto => Oxm::IpProto(val(b)),
            F::Ipv4Src => Oxm::Ipv4Src {
                value: val(b),
                mask: mask(b, m),
            },
            F::Ipv4Dst => Oxm::Ipv4Dst {
                value: val(b),
                mask: mask(b, m),
            },
            F::TcpSrc => Oxm::TcpSrc(val(b)),
            F::TcpDst => Oxm::TcpDst(val(b)),
            F::UdpSrc => Oxm::UdpSrc(val(b)),
            F::UdpDst => Oxm::UdpDst(val(b)),
            F::SctpSrc => Oxm::SctpSrc(val(b)),
            F::SctpDst => Oxm::SctpDst(val(b)),
            F::Icmpv4Type => Oxm::Icmpv4Type(val(b)),
            F::Icmpv4Code => Oxm::Icmpv4Code(val(b)),
            F::ArpOp => Oxm::ArpOp(val(b)),
            F::ArpSpa => Oxm::ArpSpa {
                value: val(b),
                mask: mask(b, m),
            },
            F::ArpTpa => Oxm::ArpTpa {
                value: val(b),
                mask: mask(b, m),
            },
            F::ArpSha => Oxm::ArpSha {
                value: val(b),
                mask: mask(b, m),
            },
            F::ArpTha => Oxm::ArpTha {
                value: val(b),
                mask: mask(b, m),
            },
            F::Ipv6Src => Oxm::Ipv6Src {
                value: val(b),
                mask: mask(b, m),
            },
            F::Ipv6Dst => Oxm::Ipv6Dst {
                value: val(b),
                mask: mask(b, m),
            },
            F::Ipv6Flabel => Oxm::Ipv6Flabel {
                value: val(b),
                mask: mask(b, m),
            },
            F::Icmpv6Type => Oxm::Icmpv6Type(val(b)),
            F::Icmpv6Code => Oxm::Icmpv6Code(val(b)),
            F::Ipv6NdTarget => Oxm::Ipv6NdTarget(val(b)),
            F::Ipv6NdSll => Oxm::Ipv6NdSll(val(b)),
            F::Ipv6NdTll => Oxm::Ipv6NdTll(val(b)),
            F::MplsLabel => Oxm::MplsLabel(val(b)),
            F::MplsTc => Oxm::MplsTc(val(b)),
            F::MplsBos => Oxm::MplsBos(val(b)),
            F::PbbIsid => Oxm::PbbIsid {
                value: val::<U24>(b).0,
                mask: mask::<U24>(b, m).map(|x| x.0),
            },
            F::TunnelId => Oxm::TunnelId {
                value: val(b),
                mask: mask(b, m),
            },
            F::Ipv6Exthdr => Oxm::Ipv6Exthdr {
                value: val(b),
                mask: mask(b, m),
            },
            F::Unknown(_) => return None,
        })
    }
}
