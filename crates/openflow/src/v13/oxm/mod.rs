//! OXM, the OpenFlow Extensible Match (1.3.5 §7.2.3): TLV headers, the
//! table of the 40 `OFPXMT_OFB_*` basic fields, the typed [`Oxm`] value, the
//! owned [`Match13`] (`ofp_match`), the zero-allocation [`OxmIter`] and
//! [`MatchRef`] used by the views, and the low-level [`start_match`] /
//! [`finish_match`] helpers that write an `ofp_match` without building a
//! `Vec`.
//!
//! One table, [`OXM_BASIC_FIELDS`], gives each basic field's value length
//! and whether it may carry a mask; decoding checks every TLV against it
//! before reading a byte of the value. Prerequisites (§7.2.3.6) are the
//! switch's business and are not checked here.

mod exact;
mod value;

pub use exact::{emit_exact_match, for_each_exact_oxm};
pub use value::Oxm;

use crate::error::{DecodeError, ErrorKind};
use crate::types::PortNo;
use crate::wire::{Fixed, Put, Reader, pad8};
use value::OxmValue;

/// `OFPXMC_NXM_0`: Nicira's backward-compatible class (1.3.5 §7.2.3.2).
pub const OFPXMC_NXM_0: u16 = 0x0000;
/// `OFPXMC_NXM_1`: Nicira's backward-compatible class.
pub const OFPXMC_NXM_1: u16 = 0x0001;
/// `OFPXMC_OPENFLOW_BASIC`: the class of the fields in [`OxmField`].
pub const OFPXMC_OPENFLOW_BASIC: u16 = 0x8000;
/// `OFPXMC_EXPERIMENTER`: the TLV body starts with a 32-bit experimenter id.
pub const OFPXMC_EXPERIMENTER: u16 = 0xffff;
/// `OFPMT_OXM`, the only match type of 1.3 (1.3.5 §7.2.3.1).
pub const OFPMT_OXM: u16 = 1;
/// `OFPVID_PRESENT`: set in `VLAN_VID` values when a VLAN tag is present
/// (1.3.5 §7.2.3.8).
pub const OFPVID_PRESENT: u16 = 0x1000;
/// `OFPVID_NONE`: `VLAN_VID` value matching packets without a VLAN tag.
pub const OFPVID_NONE: u16 = 0x0000;

/// `enum ofp_ipv6exthdr_flags` bits of `IPV6_EXTHDR` (1.3.5 §7.2.3.7).
pub mod ipv6_exthdr {
    /// OFPIEH_NONEXT: "No next header" encountered.
    pub const NONEXT: u16 = 1 << 0;
    /// OFPIEH_ESP: Encrypted Sec Payload header present.
    pub const ESP: u16 = 1 << 1;
    /// OFPIEH_AUTH: Authentication header present.
    pub const AUTH: u16 = 1 << 2;
    /// OFPIEH_DEST: 1 or 2 dest headers present.
    pub const DEST: u16 = 1 << 3;
    /// OFPIEH_FRAG: Fragment header present.
    pub const FRAG: u16 = 1 << 4;
    /// OFPIEH_ROUTER: Router header present.
    pub const ROUTER: u16 = 1 << 5;
    /// OFPIEH_HOP: Hop-by-hop header present.
    pub const HOP: u16 = 1 << 6;
    /// OFPIEH_UNREP: Unexpected repeats encountered.
    pub const UNREP: u16 = 1 << 7;
    /// OFPIEH_UNSEQ: Unexpected sequencing encountered.
    pub const UNSEQ: u16 = 1 << 8;
}

/// Size of an OXM TLV header.
pub const OXM_HEADER_LEN: usize = 4;

/// An OXM TLV header (1.3.5 §7.2.3.2): `oxm_class` (16 bits), `oxm_field`
/// (7 bits), `oxm_hasmask` (1 bit), `oxm_length` (8 bits, the body's
/// length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OxmHeader {
    /// `oxm_class`.
    pub class: u16,
    /// `oxm_field` (0..=127).
    pub field: u8,
    /// `oxm_hasmask`.
    pub has_mask: bool,
    /// `oxm_length`: bytes of body (value, then mask) after the header.
    pub length: u8,
}

impl OxmHeader {
    /// Splits a 32-bit header.
    pub const fn from_u32(v: u32) -> OxmHeader {
        OxmHeader {
            class: (v >> 16) as u16,
            field: ((v >> 9) & 0x7f) as u8,
            has_mask: (v >> 8) & 1 == 1,
            length: v as u8,
        }
    }

    /// Joins into a 32-bit header (`field` is cut to 7 bits).
    pub const fn to_u32(self) -> u32 {
        (self.class as u32) << 16
            | ((self.field & 0x7f) as u32) << 9
            | (self.has_mask as u32) << 8
            | self.length as u32
    }

    /// The header of a basic field, with the length from
    /// [`OXM_BASIC_FIELDS`] (0 for an unknown field).
    pub fn basic(field: OxmField, has_mask: bool) -> OxmHeader {
        let len = field.info().map_or(0, |i| i.len);
        OxmHeader {
            class: OFPXMC_OPENFLOW_BASIC,
            field: field.into(),
            has_mask,
            length: if has_mask { len * 2 } else { len },
        }
    }
}

crate::wire_enum! {
    /// `enum oxm_ofb_match_fields`: the OpenFlow basic OXM fields
    /// (1.3.5 §7.2.3.7).
    pub enum OxmField: u8 {
        /// OFPXMT_OFB_IN_PORT.
        InPort = 0,
        /// OFPXMT_OFB_IN_PHY_PORT.
        InPhyPort = 1,
        /// OFPXMT_OFB_METADATA.
        Metadata = 2,
        /// OFPXMT_OFB_ETH_DST.
        EthDst = 3,
        /// OFPXMT_OFB_ETH_SRC.
        EthSrc = 4,
        /// OFPXMT_OFB_ETH_TYPE.
        EthType = 5,
        /// OFPXMT_OFB_VLAN_VID.
        VlanVid = 6,
        /// OFPXMT_OFB_VLAN_PCP.
        VlanPcp = 7,
        /// OFPXMT_OFB_IP_DSCP.
        IpDscp = 8,
        /// OFPXMT_OFB_IP_ECN.
        IpEcn = 9,
        /// OFPXMT_OFB_IP_PROTO.
        IpProto = 10,
        /// OFPXMT_OFB_IPV4_SRC.
        Ipv4Src = 11,
        /// OFPXMT_OFB_IPV4_DST.
        Ipv4Dst = 12,
        /// OFPXMT_OFB_TCP_SRC.
        TcpSrc = 13,
        /// OFPXMT_OFB_TCP_DST.
        TcpDst = 14,
        /// OFPXMT_OFB_UDP_SRC.
        UdpSrc = 15,
        /// OFPXMT_OFB_UDP_DST.
        UdpDst = 16,
        /// OFPXMT_OFB_SCTP_SRC.
        SctpSrc = 17,
        /// OFPXMT_OFB_SCTP_DST.
        SctpDst = 18,
        /// OFPXMT_OFB_ICMPV4_TYPE.
        Icmpv4Type = 19,
        /// OFPXMT_OFB_ICMPV4_CODE.
        Icmpv4Code = 20,
        /// OFPXMT_OFB_ARP_OP.
        ArpOp = 21,
        /// OFPXMT_OFB_ARP_SPA.
        ArpSpa = 22,
        /// OFPXMT_OFB_ARP_TPA.
        ArpTpa = 23,
        /// OFPXMT_OFB_ARP_SHA.
        ArpSha = 24,
        /// OFPXMT_OFB_ARP_THA.
        ArpTha = 25,
        /// OFPXMT_OFB_IPV6_SRC.
        Ipv6Src = 26,
        /// OFPXMT_OFB_IPV6_DST.
        Ipv6Dst = 27,
        /// OFPXMT_OFB_IPV6_FLABEL.
        Ipv6Flabel = 28,
        /// OFPXMT_OFB_ICMPV6_TYPE.
        Icmpv6Type = 29,
        /// OFPXMT_OFB_ICMPV6_CODE.
        Icmpv6Code = 30,
        /// OFPXMT_OFB_IPV6_ND_TARGET.
        Ipv6NdTarget = 31,
        /// OFPXMT_OFB_IPV6_ND_SLL.
        Ipv6NdSll = 32,
        /// OFPXMT_OFB_IPV6_ND_TLL.
        Ipv6NdTll = 33,
        /// OFPXMT_OFB_MPLS_LABEL.
        MplsLabel = 34,
        /// OFPXMT_OFB_MPLS_TC.
        MplsTc = 35,
        /// OFPXMT_OFB_MPLS_BOS.
        MplsBos = 36,
        /// OFPXMT_OFB_PBB_ISID.
        PbbIsid = 37,
        /// OFPXMT_OFB_TUNNEL_ID.
        TunnelId = 38,
        /// OFPXMT_OFB_IPV6_EXTHDR.
        Ipv6Exthdr = 39,
    }
}

/// The shape of one basic field: its value length and whether it may carry
/// a mask (1.3.5 §7.2.3.7, table 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OxmFieldInfo {
    /// The field.
    pub field: OxmField,
    /// The spec's name, e.g. `"OFPXMT_OFB_IN_PORT"`.
    pub name: &'static str,
    /// Length of the value in bytes (the mask, if any, has the same).
    pub len: u8,
    /// Whether the field may carry a mask.
    pub maskable: bool,
}

macro_rules! oxm_table {
    ($( $field:ident, $name:literal, $len:literal, $maskable:literal; )+) => {
        /// Every basic field, indexed by its `oxm_field` number: the one
        /// table that drives OXM decoding and length checks
        /// (1.3.5 §7.2.3.7).
        pub const OXM_BASIC_FIELDS: [OxmFieldInfo; 40] = [
            $( OxmFieldInfo {
                field: OxmField::$field,
                name: $name,
                len: $len,
                maskable: $maskable,
            }, )+
        ];
    };
}

oxm_table! {
    InPort, "OFPXMT_OFB_IN_PORT", 4, false;
    InPhyPort, "OFPXMT_OFB_IN_PHY_PORT", 4, false;
    Metadata, "OFPXMT_OFB_METADATA", 8, true;
    EthDst, "OFPXMT_OFB_ETH_DST", 6, true;
    EthSrc, "OFPXMT_OFB_ETH_SRC", 6, true;
    EthType, "OFPXMT_OFB_ETH_TYPE", 2, false;
    VlanVid, "OFPXMT_OFB_VLAN_VID", 2, true;
    VlanPcp, "OFPXMT_OFB_VLAN_PCP", 1, false;
    IpDscp, "OFPXMT_OFB_IP_DSCP", 1, false;
    IpEcn, "OFPXMT_OFB_IP_ECN", 1, false;
    IpProto, "OFPXMT_OFB_IP_PROTO", 1, false;
    Ipv4Src, "OFPXMT_OFB_IPV4_SRC", 4, true;
    Ipv4Dst, "OFPXMT_OFB_IPV4_DST", 4, true;
    TcpSrc, "OFPXMT_OFB_TCP_SRC", 2, false;
    TcpDst, "OFPXMT_OFB_TCP_DST", 2, false;
    UdpSrc, "OFPXMT_OFB_UDP_SRC", 2, false;
    UdpDst, "OFPXMT_OFB_UDP_DST", 2, false;
    SctpSrc, "OFPXMT_OFB_SCTP_SRC", 2, false;
    SctpDst, "OFPXMT_OFB_SCTP_DST", 2, false;
    Icmpv4Type, "OFPXMT_OFB_ICMPV4_TYPE", 1, false;
    Icmpv4Code, "OFPXMT_OFB_ICMPV4_CODE", 1, false;
    ArpOp, "OFPXMT_OFB_ARP_OP", 2, false;
    ArpSpa, "OFPXMT_OFB_ARP_SPA", 4, true;
    ArpTpa, "OFPXMT_OFB_ARP_TPA", 4, true;
    ArpSha, "OFPXMT_OFB_ARP_SHA", 6, true;
    ArpTha, "OFPXMT_OFB_ARP_THA", 6, true;
    Ipv6Src, "OFPXMT_OFB_IPV6_SRC", 16, true;
    Ipv6Dst, "OFPXMT_OFB_IPV6_DST", 16, true;
    Ipv6Flabel, "OFPXMT_OFB_IPV6_FLABEL", 4, true;
    Icmpv6Type, "OFPXMT_OFB_ICMPV6_TYPE", 1, false;
    Icmpv6Code, "OFPXMT_OFB_ICMPV6_CODE", 1, false;
    Ipv6NdTarget, "OFPXMT_OFB_IPV6_ND_TARGET", 16, false;
    Ipv6NdSll, "OFPXMT_OFB_IPV6_ND_SLL", 6, false;
    Ipv6NdTll, "OFPXMT_OFB_IPV6_ND_TLL", 6, false;
    MplsLabel, "OFPXMT_OFB_MPLS_LABEL", 4, false;
    MplsTc, "OFPXMT_OFB_MPLS_TC", 1, false;
    MplsBos, "OFPXMT_OFB_MPLS_BOS", 1, false;
    PbbIsid, "OFPXMT_OFB_PBB_ISID", 3, true;
    TunnelId, "OFPXMT_OFB_TUNNEL_ID", 8, true;
    Ipv6Exthdr, "OFPXMT_OFB_IPV6_EXTHDR", 2, true;
}

impl OxmField {
    /// This field's row of [`OXM_BASIC_FIELDS`]; `None` for an unknown
    /// field number.
    #[inline]
    pub fn info(self) -> Option<&'static OxmFieldInfo> {
        OXM_BASIC_FIELDS.get(u8::from(self) as usize)
    }
}

/// One OXM TLV borrowed from a received message, already checked against
/// [`OXM_BASIC_FIELDS`] (or, for other classes, against its own length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OxmRef<'a> {
    header: OxmHeader,
    body: &'a [u8],
}

impl<'a> OxmRef<'a> {
    /// The TLV header.
    #[inline]
    pub fn header(&self) -> OxmHeader {
        self.header
    }

    /// The basic field, if the class is `OFPXMC_OPENFLOW_BASIC`.
    #[inline]
    pub fn basic_field(&self) -> Option<OxmField> {
        (self.header.class == OFPXMC_OPENFLOW_BASIC).then(|| self.header.field.into())
    }

    /// The body (value, then mask if any).
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The typed value. Allocates only for non-basic classes
    /// ([`Oxm::Other`]).
    pub fn to_oxm(&self) -> Oxm {
        let h = self.header;
        let basic = match h.class {
            OFPXMC_OPENFLOW_BASIC => Oxm::from_basic(h.field.into(), h.has_mask, self.body),
            _ => None,
        };
        basic.unwrap_or_else(|| Oxm::Other {
            class: h.class,
            field: h.field,
            has_mask: h.has_mask,
            body: self.body.to_vec(),
        })
    }

    /// The port, if this is an unmasked `IN_PORT` TLV.
    #[inline]
    pub fn in_port(&self) -> Option<PortNo> {
        (self.basic_field() == Some(OxmField::InPort)).then(|| PortNo::read(self.body))
    }
}

/// Reads and checks one TLV (1.3.5 §7.2.3.2): basic fields must be in
/// [`OXM_BASIC_FIELDS`] with exactly its length (doubled with a mask, which
/// only maskable fields may have); experimenter TLVs must hold their id.
fn parse_tlv<'a>(r: &mut Reader<'a>) -> Result<OxmRef<'a>, DecodeError> {
    let at = r.offset();
    let header = OxmHeader::from_u32(r.u32("oxm header")?);
    let bad_len = || {
        DecodeError::new(
            ErrorKind::BadOxmLength {
                field: header.field,
                length: header.length,
            },
            at,
            "oxm_length",
        )
    };
    if header.length as usize > r.remaining() {
        return Err(bad_len());
    }
    let body = r.bytes(header.length as usize, "oxm body")?;
    match header.class {
        OFPXMC_OPENFLOW_BASIC => {
            let info = OxmField::from(header.field).info().ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadOxmField {
                        class: header.class,
                        field: header.field,
                    },
                    at,
                    "oxm_field",
                )
            })?;
            let want = if header.has_mask {
                if !info.maskable {
                    return Err(bad_len());
                }
                info.len * 2
            } else {
                info.len
            };
            if header.length != want {
                return Err(bad_len());
            }
        }
        OFPXMC_EXPERIMENTER if header.length < 4 => return Err(bad_len()),
        _ => {}
    }
    Ok(OxmRef { header, body })
}

/// A zero-allocation iterator over the TLVs of an OXM region (the bytes of
/// an `ofp_match` after its type and length, padding excluded).
///
/// Yields each TLV checked against [`OXM_BASIC_FIELDS`], and stops after
/// the first error: [`ErrorKind::BadOxmField`] for an unknown basic field,
/// [`ErrorKind::BadOxmLength`] for a length that does not fit the field or
/// the region, [`ErrorKind::DuplicateOxmField`] for a basic field seen
/// twice (1.3.5 §7.2.3.5), [`ErrorKind::TooShort`] for a cut header.
#[derive(Debug, Clone)]
pub struct OxmIter<'a> {
    r: Reader<'a>,
    seen: u64,
    failed: bool,
}

impl<'a> OxmIter<'a> {
    /// An iterator over `region`, which starts at byte `base` of the
    /// message.
    #[inline]
    pub fn new(region: &'a [u8], base: usize) -> OxmIter<'a> {
        OxmIter {
            r: Reader::with_base(region, base),
            seen: 0,
            failed: false,
        }
    }

    fn step(&mut self) -> Result<OxmRef<'a>, DecodeError> {
        let at = self.r.offset();
        let tlv = parse_tlv(&mut self.r)?;
        if tlv.header.class == OFPXMC_OPENFLOW_BASIC {
            // parse_tlv checked that the field is below 40.
            let bit = 1u64 << (tlv.header.field & 63);
            if self.seen & bit != 0 {
                return Err(DecodeError::new(
                    ErrorKind::DuplicateOxmField(tlv.header.field),
                    at,
                    "oxm_field",
                ));
            }
            self.seen |= bit;
        }
        Ok(tlv)
    }
}

impl<'a> Iterator for OxmIter<'a> {
    type Item = Result<OxmRef<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let item = self.step();
        self.failed = item.is_err();
        Some(item)
    }
}

/// A checked `ofp_match` borrowed from a received message (1.3.5 §7.2.3.1):
/// every TLV has been validated once, so iterating again cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchRef<'a> {
    oxms: &'a [u8],
    base: usize,
}

impl<'a> MatchRef<'a> {
    /// Reads an `ofp_match` (type, length, OXMs, padding to 8) and checks
    /// every TLV, without allocating. A type other than `OFPMT_OXM` is
    /// [`ErrorKind::BadMatchType`]; a length below 4 or beyond the input is
    /// [`ErrorKind::BadMatchLength`].
    pub fn parse(r: &mut Reader<'a>) -> Result<MatchRef<'a>, DecodeError> {
        let at = r.offset();
        let match_type = r.u16("ofp_match.type")?;
        if match_type != OFPMT_OXM {
            return Err(DecodeError::new(
                ErrorKind::BadMatchType(match_type),
                at,
                "ofp_match.type",
            ));
        }
        let length = r.u16("ofp_match.length")?;
        let body_len = (length as usize)
            .checked_sub(4)
            .filter(|&n| n <= r.remaining())
            .ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadMatchLength(length),
                    at + 2,
                    "ofp_match.length",
                )
            })?;
        let base = r.offset();
        let oxms = r.bytes(body_len, "ofp_match.oxm_fields")?;
        for tlv in OxmIter::new(oxms, base) {
            tlv?;
        }
        r.skip(pad8(length as usize), "ofp_match padding")?;
        Ok(MatchRef { oxms, base })
    }

    /// The match whose OXMs are `oxms`, at byte `base` of the message,
    /// without checking them: for views whose `new_checked` ran
    /// [`MatchRef::parse`] over the same bytes.
    #[inline]
    pub(crate) const fn new_unchecked(oxms: &'a [u8], base: usize) -> MatchRef<'a> {
        MatchRef { oxms, base }
    }

    /// The TLVs. Never yields an error once [`MatchRef::parse`] succeeded.
    #[inline]
    pub fn iter(&self) -> OxmIter<'a> {
        OxmIter::new(self.oxms, self.base)
    }

    /// The raw OXM bytes (without type, length and padding).
    #[inline]
    pub fn oxm_bytes(&self) -> &'a [u8] {
        self.oxms
    }

    /// The `IN_PORT` value, if the match has one. Switches write it first
    /// (Open vSwitch does), where it is read without a scan.
    #[inline]
    pub fn in_port(&self) -> Option<PortNo> {
        // OXM_OF_IN_PORT: class OPENFLOW_BASIC, field 0, no mask, 4 bytes.
        const IN_PORT: [u8; 4] = 0x8000_0004u32.to_be_bytes();
        match *self.oxms {
            [h0, h1, h2, h3, p0, p1, p2, p3, ..] if [h0, h1, h2, h3] == IN_PORT => {
                Some(PortNo(u32::from_be_bytes([p0, p1, p2, p3])))
            }
            _ => self.in_port_slow(),
        }
    }

    #[cold]
    fn in_port_slow(&self) -> Option<PortNo> {
        self.iter().find_map(|t| t.ok()?.in_port())
    }

    /// The owned form.
    pub fn to_owned(&self) -> Match13 {
        Match13 {
            fields: self
                .iter()
                .filter_map(Result::ok)
                .map(|t| t.to_oxm())
                .collect(),
        }
    }

    /// Bytes the match takes on the wire, padding included.
    #[inline]
    pub fn wire_len(&self) -> usize {
        let len = 4 + self.oxms.len();
        len + pad8(len)
    }
}

/// `ofp_match` with `OFPMT_OXM` (1.3.5 §7.2.3.1), owned: the TLVs in wire
/// order. An empty match matches every packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Match13 {
    /// The OXM TLVs, in wire order.
    pub fields: Vec<Oxm>,
}

impl Match13 {
    /// The empty match (all fields wildcarded).
    pub const fn all() -> Match13 {
        Match13 { fields: Vec::new() }
    }

    /// Reads an `ofp_match` and its padding; see [`MatchRef::parse`] for
    /// the errors.
    pub fn parse(r: &mut Reader<'_>) -> Result<Match13, DecodeError> {
        Ok(MatchRef::parse(r)?.to_owned())
    }

    /// Appends the match, padded to 8 bytes.
    pub fn emit(&self, out: &mut Vec<u8>) {
        emit_match(out, &self.fields);
    }

    /// Bytes the match takes on the wire, padding included.
    pub fn wire_len(&self) -> usize {
        let len = 4 + self.fields.iter().map(Oxm::wire_len).sum::<usize>();
        len + pad8(len)
    }

    /// The `IN_PORT` value, if the match has one.
    pub fn in_port(&self) -> Option<PortNo> {
        self.fields.iter().find_map(|o| match o {
            Oxm::InPort(p) => Some(*p),
            _ => None,
        })
    }
}

/// Starts an `ofp_match`: writes its type and a placeholder length, and
/// returns where it starts for [`finish_match`]. Emit the TLVs in between
/// with [`Oxm::emit`].
#[inline]
pub fn start_match(out: &mut Vec<u8>) -> usize {
    let at = out.len();
    out.put_u16(OFPMT_OXM);
    out.put_u16(0);
    at
}

/// Finishes the `ofp_match` started at `at`: fills in its length (type,
/// length and TLVs, without padding) and pads it to 8 bytes.
#[inline]
pub fn finish_match(out: &mut Vec<u8>, at: usize) {
    let len = out.len().saturating_sub(at);
    out.patch_u16(at + 2, len.min(u16::MAX as usize) as u16);
    out.put_zeros(pad8(len));
}

/// Room for a match built by [`emit_match_with`]: the largest exact match
/// of a frame is 147 bytes before padding (IPv6 neighbour discovery under
/// a VLAN), and the sparse matches of `neutral` are smaller.
pub const MATCH_BUF: usize = 256;

/// Appends an `ofp_match` whose TLVs `write_oxms` writes, built on the
/// stack and appended with one copy (see [`crate::wire::Fixed`]). For
/// matches of bounded size only: bytes past [`MATCH_BUF`] are dropped.
#[inline]
pub fn emit_match_with(out: &mut Vec<u8>, write_oxms: impl FnOnce(&mut Fixed<MATCH_BUF>)) {
    let mut b = Fixed::<MATCH_BUF>::new();
    b.put_u16(OFPMT_OXM);
    b.put_u16(0);
    write_oxms(&mut b);
    let len = b.as_slice().len();
    b.patch_u16(2, len as u16);
    b.put_zeros(pad8(len));
    out.put_slice(b.as_slice());
}

/// Appends a whole `ofp_match` holding `oxms`.
#[inline]
pub fn emit_match(out: &mut Vec<u8>, oxms: &[Oxm]) {
    let at = start_match(out);
    for o in oxms {
        o.emit(out);
    }
    finish_match(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_field_number() {
        for (i, info) in OXM_BASIC_FIELDS.iter().enumerate() {
            assert_eq!(u8::from(info.field) as usize, i, "{}", info.name);
            assert_eq!(info.field.info(), Some(info));
        }
        assert_eq!(OxmField::from(40).info(), None);
    }

    #[test]
    fn header_bits() {
        // OXM_OF_IN_PORT: class 0x8000, field 0, no mask, length 4.
        let h = OxmHeader::basic(OxmField::InPort, false);
        assert_eq!(h.to_u32(), 0x8000_0004);
        // OXM_OF_ETH_DST_W: field 3, mask, length 12.
        let h = OxmHeader::basic(OxmField::EthDst, true);
        assert_eq!(h.to_u32(), 0x8000_070c);
        assert_eq!(OxmHeader::from_u32(0x8000_070c), h);
    }

    #[test]
    fn in_port_match_bytes() {
        let mut out = Vec::new();
        emit_match(&mut out, &[Oxm::InPort(PortNo(1))]);
        assert_eq!(out, [0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0]);
        let m = Match13::parse(&mut Reader::new(&out)).unwrap();
        assert_eq!(m.fields, [Oxm::InPort(PortNo(1))]);
        assert_eq!(m.wire_len(), out.len());
        // The empty match is 4 bytes plus 4 of padding.
        let mut out = Vec::new();
        Match13::all().emit(&mut out);
        assert_eq!(out, [0, 1, 0, 4, 0, 0, 0, 0]);
    }

    fn err(bytes: &[u8]) -> ErrorKind {
        MatchRef::parse(&mut Reader::new(bytes))
            .unwrap_err()
            .kind()
            .clone()
    }

    #[test]
    fn bad_matches() {
        assert_eq!(err(&[0, 0, 0, 4, 0, 0, 0, 0]), ErrorKind::BadMatchType(0));
        assert_eq!(err(&[0, 1, 0, 3, 0, 0, 0, 0]), ErrorKind::BadMatchLength(3));
        assert_eq!(
            err(&[0, 1, 0, 20, 0, 0, 0, 0]),
            ErrorKind::BadMatchLength(20)
        );
        // IN_PORT with length 3.
        assert_eq!(
            err(&[0, 1, 0, 11, 0x80, 0, 0, 3, 0, 0, 1, 0]),
            ErrorKind::BadOxmLength {
                field: 0,
                length: 3
            }
        );
        // IN_PORT with a mask: not maskable.
        assert_eq!(
            err(&[0, 1, 0, 16, 0x80, 0, 1, 8, 0, 0, 0, 1, 0, 0, 0, 1]),
            ErrorKind::BadOxmLength {
                field: 0,
                length: 8
            }
        );
        // Field 40 does not exist.
        assert_eq!(
            err(&[0, 1, 0, 9, 0x80, 0, 80, 1, 0, 0, 0, 0]),
            ErrorKind::BadOxmField {
                class: 0x8000,
                field: 40
            }
        );
        // ETH_TYPE twice.
        assert_eq!(
            err(&[0, 1, 0, 16, 0x80, 0, 10, 2, 8, 0, 0x80, 0, 10, 2, 8, 0]),
            ErrorKind::DuplicateOxmField(5)
        );
        // A TLV running past the match.
        assert_eq!(
            err(&[0, 1, 0, 8, 0x80, 0, 10, 2, 8, 0, 0, 0]),
            ErrorKind::BadOxmLength {
                field: 5,
                length: 2
            }
        );
    }

    #[test]
    fn other_classes_round_trip() {
        let o = Oxm::Other {
            class: OFPXMC_EXPERIMENTER,
            field: 5,
            has_mask: false,
            body: vec![0, 0, 0x23, 0x20, 1, 2],
        };
        let mut out = Vec::new();
        emit_match(&mut out, &[o.clone(), o.clone()]);
        let m = Match13::parse(&mut Reader::new(&out)).unwrap();
        assert_eq!(m.fields, [o.clone(), o]);
        // An experimenter TLV too short for its id.
        assert_eq!(
            err(&[0, 1, 0, 10, 0xff, 0xff, 0, 2, 0, 0, 0, 0]),
            ErrorKind::BadOxmLength {
                field: 0,
                length: 2
            }
        );
    }

    #[test]
    fn pbb_isid_is_24_bits() {
        let o = Oxm::PbbIsid {
            value: 0xabcdef,
            mask: Some(0xff00ff),
        };
        let mut out = Vec::new();
        o.emit(&mut out);
        assert_eq!(out, [0x80, 0, 75, 6, 0xab, 0xcd, 0xef, 0xff, 0, 0xff]);
        assert_eq!(o.wire_len(), out.len());
        assert_eq!(Oxm::parse(&mut Reader::new(&out)).unwrap(), o);
    }
}
