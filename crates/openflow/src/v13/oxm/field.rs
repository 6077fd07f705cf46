//! The OXM TLV header and the table of the 40 `OFPXMT_OFB_*` basic fields
//! (1.3.5 §7.2.3.2, §7.2.3.7), with the class and value constants the
//! other parts use.

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
}
