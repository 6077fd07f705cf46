//! OpenFlow 1.3 OXM matches (1.3.5 §7.2.3) compiled into [`FlowMatch`],
//! with the checks the spec puts on the switch: values with bits outside
//! their mask (`OFPBMC_BAD_WILDCARDS`), values out of range
//! (`OFPBMC_BAD_VALUE`), fields without their prerequisites
//! (`OFPBMC_BAD_PREREQ`, §7.2.3.6) and fields this switch cannot match
//! (`OFPBMC_BAD_FIELD`: the non-basic classes). `ipv6_exthdr` (9 flag
//! bits, maskable) needs `eth_type` 0x86dd; the codec's parser computes
//! it ([`baton_openflow::packet::exthdr_flags`]). `tunnel_id` is a
//! pipeline field, maskable, without prerequisites, 0 for every packet
//! until a set-field changes it (the switch has no tunnel ports).
//! Duplicate fields are rejected by the codec, and so are masks on the
//! fields that 1.3.5 table 12 says cannot be masked (the MPLS fields
//! among them: `Oxm::MplsLabel` and its kin carry no mask).
//! The MPLS fields (label, TC, BoS of the outermost label stack entry)
//! need an MPLS `eth_type`, 0x8847 or 0x8848. `pbb_isid` (24 bits,
//! maskable) needs `eth_type` 0x88e7; `pbb_uca` is a 1.4 field the codec
//! does not have.

use crate::error::OfError;
use crate::key::{ETH_TYPE_PBB, FlowMatch, ISID_MASK, Slot, ip4, ip6, is_mpls, slot};
use baton_openflow::MacAddr;
use baton_openflow::packet::consts::*;
use baton_openflow::v13::oxm::{Match13, OFPVID_PRESENT, Oxm, OxmField};

/// The defined bits of `ipv6_exthdr` (`OFPIEH_NONEXT` to `OFPIEH_UNSEQ`).
const EXTHDR_BITS: u16 = 0x1ff;

/// Compiles `m`, checking values and prerequisites.
pub fn compile(m: &Match13) -> Result<FlowMatch, OfError> {
    let mut f = FlowMatch::ALL;
    for o in &m.fields {
        add(&mut f, o)?;
    }
    for o in &m.fields {
        let field = o.field().ok_or(OfError::BadField)?;
        if !prereq_ok(field, &f) {
            return Err(OfError::BadPrereq);
        }
    }
    Ok(f)
}

fn masked(f: &mut FlowMatch, s: Slot, value: u64, mask: Option<u64>) -> Result<(), OfError> {
    let mask = mask.unwrap_or(u64::MAX) & s.ones();
    if value & !mask & s.ones() != 0 || value & !s.ones() != 0 {
        return Err(OfError::BadWildcards);
    }
    f.set(s, value, mask);
    Ok(())
}

/// A maskable field whose values stop at `max` (all ones in its low
/// bits): a larger value is `OFPBMC_BAD_VALUE`, mask bits above are
/// ignored.
fn bounded(
    f: &mut FlowMatch,
    s: Slot,
    value: u64,
    mask: Option<u64>,
    max: u64,
) -> Result<(), OfError> {
    if value > max {
        return Err(OfError::BadValue);
    }
    masked(f, s, value, mask.map(|m| m & max))
}

fn exact(f: &mut FlowMatch, s: Slot, value: u64, max: u64) -> Result<(), OfError> {
    if value > max {
        return Err(OfError::BadValue);
    }
    f.exact(s, value);
    Ok(())
}

fn masked128(
    f: &mut FlowMatch,
    word: usize,
    value: u128,
    mask: Option<u128>,
) -> Result<(), OfError> {
    let mask = mask.unwrap_or(u128::MAX);
    if value & !mask != 0 {
        return Err(OfError::BadWildcards);
    }
    f.set128(word, value, mask);
    Ok(())
}

fn add(f: &mut FlowMatch, o: &Oxm) -> Result<(), OfError> {
    match *o {
        Oxm::InPort(p) => exact(f, slot::IN_PORT, u64::from(p.0), u64::from(u32::MAX)),
        Oxm::InPhyPort(p) => {
            // Every port is physical here: IN_PHY_PORT equals IN_PORT.
            match f.exact_value(slot::IN_PORT) {
                Some(v) if v != u64::from(p.0) => Err(OfError::BadValue),
                _ => exact(f, slot::IN_PORT, u64::from(p.0), u64::from(u32::MAX)),
            }
        }
        Oxm::Metadata { value, mask } => masked(f, slot::METADATA, value, mask),
        Oxm::EthDst { value, mask } => {
            masked(f, slot::ETH_DST, value.to_u64(), mask.map(MacAddr::to_u64))
        }
        Oxm::EthSrc { value, mask } => {
            masked(f, slot::ETH_SRC, value.to_u64(), mask.map(MacAddr::to_u64))
        }
        Oxm::EthType(t) => exact(f, slot::ETH_TYPE, t.into(), 0xffff),
        Oxm::VlanVid { value, mask } => {
            if value > 0x1fff {
                return Err(OfError::BadValue);
            }
            masked(
                f,
                slot::VLAN,
                value.into(),
                Some(u64::from(mask.unwrap_or(0x1fff) & 0x1fff)),
            )
        }
        Oxm::VlanPcp(p) => exact(f, slot::VLAN_PCP, p.into(), 7),
        Oxm::IpDscp(d) => exact(f, slot::IP_DSCP, d.into(), 63),
        Oxm::IpEcn(e) => exact(f, slot::IP_ECN, e.into(), 3),
        Oxm::IpProto(p) => exact(f, slot::IP_PROTO, p.into(), 0xff),
        Oxm::Ipv4Src { value, mask } | Oxm::ArpSpa { value, mask } => {
            masked(f, slot::NW_SRC, ip4(value), mask.map(ip4))
        }
        Oxm::Ipv4Dst { value, mask } | Oxm::ArpTpa { value, mask } => {
            masked(f, slot::NW_DST, ip4(value), mask.map(ip4))
        }
        Oxm::TcpSrc(p) | Oxm::UdpSrc(p) | Oxm::SctpSrc(p) => {
            exact(f, slot::TP_SRC, p.into(), 0xffff)
        }
        Oxm::TcpDst(p) | Oxm::UdpDst(p) | Oxm::SctpDst(p) => {
            exact(f, slot::TP_DST, p.into(), 0xffff)
        }
        Oxm::Icmpv4Type(t) | Oxm::Icmpv6Type(t) => exact(f, slot::TP_SRC, t.into(), 0xff),
        Oxm::Icmpv4Code(c) | Oxm::Icmpv6Code(c) => exact(f, slot::TP_DST, c.into(), 0xff),
        Oxm::ArpOp(op) => exact(f, slot::ARP_OP, op.into(), 0xffff),
        Oxm::ArpSha { value, mask } => {
            masked(f, slot::ARP_SHA, value.to_u64(), mask.map(MacAddr::to_u64))
        }
        Oxm::ArpTha { value, mask } => {
            masked(f, slot::ARP_THA, value.to_u64(), mask.map(MacAddr::to_u64))
        }
        Oxm::Ipv6Src { value, mask } => masked128(f, slot::IPV6_SRC, ip6(value), mask.map(ip6)),
        Oxm::Ipv6Dst { value, mask } => masked128(f, slot::IPV6_DST, ip6(value), mask.map(ip6)),
        Oxm::Ipv6Flabel { value, mask } => bounded(
            f,
            slot::IPV6_FLABEL,
            value.into(),
            mask.map(u64::from),
            0xf_ffff,
        ),
        Oxm::Ipv6NdTarget(t) => masked128(f, slot::ND_TARGET, ip6(t), None),
        Oxm::Ipv6NdSll(m) | Oxm::Ipv6NdTll(m) => masked(f, slot::ND_LL, m.to_u64(), None),
        Oxm::MplsLabel(l) => exact(f, slot::MPLS_LABEL, l.into(), 0xf_ffff),
        Oxm::MplsTc(t) => exact(f, slot::MPLS_TC, t.into(), 7),
        Oxm::MplsBos(b) => exact(f, slot::MPLS_BOS, b.into(), 1),
        Oxm::TunnelId { value, mask } => masked(f, slot::TUNNEL_ID, value, mask),
        Oxm::PbbIsid { value, mask } => bounded(
            f,
            slot::PBB_ISID,
            value.into(),
            mask.map(u64::from),
            ISID_MASK.into(),
        ),
        Oxm::Ipv6Exthdr { value, mask } => bounded(
            f,
            slot::IPV6_EXTHDR,
            value.into(),
            mask.map(u64::from),
            EXTHDR_BITS.into(),
        ),
        Oxm::Other { .. } => Err(OfError::BadField),
    }
}

/// True when `m` fixes the prerequisites of `field` (1.3.5 §7.2.3.6,
/// table 12): the ethertype for network fields, the IP protocol for
/// transport fields, the ICMPv6 type for neighbour discovery fields, a
/// present VLAN tag for `VLAN_PCP`, an MPLS ethertype for the MPLS
/// fields, the PBB ethertype for `PBB_ISID`.
pub fn prereq_ok(field: OxmField, m: &FlowMatch) -> bool {
    use OxmField as F;
    let et = m.exact_value(slot::ETH_TYPE).map(|v| v as u16);
    let ipv4 = et == Some(ETH_TYPE_IPV4);
    let ipv6 = et == Some(ETH_TYPE_IPV6);
    let proto = m.exact_value(slot::IP_PROTO).map(|v| v as u8);
    let ip_with = |p: u8| (ipv4 || ipv6) && proto == Some(p);
    let icmpv6 = ipv6 && proto == Some(IP_PROTO_ICMPV6);
    let icmpv6_type = m.exact_value(slot::TP_SRC).map(|v| v as u8);
    match field {
        F::InPhyPort => m.exact_value(slot::IN_PORT).is_some(),
        F::VlanPcp => vlan_present(m),
        F::IpDscp | F::IpEcn | F::IpProto => ipv4 || ipv6,
        F::Ipv4Src | F::Ipv4Dst => ipv4,
        F::TcpSrc | F::TcpDst => ip_with(IP_PROTO_TCP),
        F::UdpSrc | F::UdpDst => ip_with(IP_PROTO_UDP),
        F::SctpSrc | F::SctpDst => ip_with(IP_PROTO_SCTP),
        F::Icmpv4Type | F::Icmpv4Code => ipv4 && proto == Some(IP_PROTO_ICMP),
        F::ArpOp | F::ArpSpa | F::ArpTpa | F::ArpSha | F::ArpTha => et == Some(ETH_TYPE_ARP),
        F::Ipv6Src | F::Ipv6Dst | F::Ipv6Flabel | F::Ipv6Exthdr => ipv6,
        F::Icmpv6Type | F::Icmpv6Code => icmpv6,
        F::Ipv6NdTarget => {
            icmpv6 && matches!(icmpv6_type, Some(ICMPV6_ND_SOLICIT | ICMPV6_ND_ADVERT))
        }
        F::Ipv6NdSll => icmpv6 && icmpv6_type == Some(ICMPV6_ND_SOLICIT),
        F::Ipv6NdTll => icmpv6 && icmpv6_type == Some(ICMPV6_ND_ADVERT),
        F::MplsLabel | F::MplsTc | F::MplsBos => mpls_present(m),
        F::PbbIsid => pbb_present(m),
        _ => true,
    }
}

/// True when `m` only matches MPLS frames (its `eth_type` is 0x8847 or
/// 0x8848).
pub fn mpls_present(m: &FlowMatch) -> bool {
    m.exact_value(slot::ETH_TYPE)
        .is_some_and(|t| is_mpls(t as u16))
}

/// True when `m` only matches PBB frames (its `eth_type` is 0x88e7).
pub fn pbb_present(m: &FlowMatch) -> bool {
    m.exact_value(slot::ETH_TYPE) == Some(u64::from(ETH_TYPE_PBB))
}

/// True when `m` only matches frames with a VLAN tag.
pub fn vlan_present(m: &FlowMatch) -> bool {
    let p = u64::from(OFPVID_PRESENT);
    m.mask.get(slot::VLAN) & p != 0 && m.key.get(slot::VLAN) & p != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use baton_openflow::Version;
    use baton_openflow::packet::FlowKey;
    use baton_openflow::types::PortNo;
    use std::net::Ipv4Addr;

    fn m(fields: Vec<Oxm>) -> Match13 {
        Match13 { fields }
    }

    #[test]
    fn prerequisites_are_checked() {
        assert_eq!(compile(&m(vec![Oxm::TcpDst(80)])), Err(OfError::BadPrereq));
        assert_eq!(
            compile(&m(vec![Oxm::EthType(0x0800), Oxm::TcpDst(80)])),
            Err(OfError::BadPrereq)
        );
        assert!(
            compile(&m(vec![
                Oxm::EthType(0x0800),
                Oxm::IpProto(6),
                Oxm::TcpDst(80)
            ]))
            .is_ok()
        );
        // Order does not matter.
        assert!(
            compile(&m(vec![
                Oxm::TcpDst(80),
                Oxm::IpProto(6),
                Oxm::EthType(0x86dd)
            ]))
            .is_ok()
        );
        assert_eq!(compile(&m(vec![Oxm::VlanPcp(3)])), Err(OfError::BadPrereq));
        assert!(
            compile(&m(vec![
                Oxm::VlanVid {
                    value: 0x1000 | 10,
                    mask: None
                },
                Oxm::VlanPcp(3)
            ]))
            .is_ok()
        );
    }

    #[test]
    fn values_and_masks_are_checked() {
        let bad = Oxm::Ipv4Src {
            value: Ipv4Addr::new(10, 0, 0, 1),
            mask: Some(Ipv4Addr::new(255, 0, 0, 0)),
        };
        assert_eq!(
            compile(&m(vec![Oxm::EthType(0x0800), bad])),
            Err(OfError::BadWildcards)
        );
        assert_eq!(compile(&m(vec![Oxm::IpDscp(64)])), Err(OfError::BadValue));
    }

    #[test]
    fn ipv6_exthdr_needs_ipv6_and_its_nine_bits() {
        let eh = |value, mask| Oxm::Ipv6Exthdr { value, mask };
        assert_eq!(compile(&m(vec![eh(1, None)])), Err(OfError::BadPrereq));
        let v6 = |o| m(vec![Oxm::EthType(0x86dd), o]);
        assert_eq!(compile(&v6(eh(0x200, None))), Err(OfError::BadValue));
        assert_eq!(compile(&v6(eh(3, Some(1)))), Err(OfError::BadWildcards));
        // Hop-by-hop present, whatever else.
        let f = compile(&v6(eh(0x40, Some(0x40)))).unwrap();
        let mut k = Key::default();
        k.set(slot::ETH_TYPE, 0x86dd);
        k.set(slot::IPV6_EXTHDR, 0x40 | 0x10);
        assert!(f.matches(&k));
        k.set(slot::IPV6_EXTHDR, 0x10);
        assert!(!f.matches(&k));
    }

    #[test]
    fn pbb_isid_needs_the_pbb_ethertype_and_24_bits() {
        let isid = |value, mask| Oxm::PbbIsid { value, mask };
        assert_eq!(compile(&m(vec![isid(5, None)])), Err(OfError::BadPrereq));
        assert_eq!(
            compile(&m(vec![Oxm::EthType(0x8847), isid(5, None)])),
            Err(OfError::BadPrereq)
        );
        let pbb = Oxm::EthType(ETH_TYPE_PBB);
        assert_eq!(
            compile(&m(vec![pbb.clone(), isid(1 << 24, None)])),
            Err(OfError::BadValue)
        );
        assert_eq!(
            compile(&m(vec![pbb.clone(), isid(0x13, Some(0x10))])),
            Err(OfError::BadWildcards)
        );
        let f = compile(&m(vec![isid(0xff_ffff, None), pbb.clone()])).unwrap();
        assert_eq!(f.exact_value(slot::PBB_ISID), Some(0xff_ffff));
        assert!(pbb_present(&f));
        let f = compile(&m(vec![pbb, isid(0x12_0000, Some(0xff_0000))])).unwrap();
        assert_eq!(f.mask.get(slot::PBB_ISID), 0xff_0000);
        assert_eq!(f.key.get(slot::PBB_ISID), 0x12_0000);
    }

    #[test]
    fn mpls_fields_need_an_mpls_ethertype_and_values_in_range() {
        for o in [Oxm::MplsLabel(5), Oxm::MplsTc(1), Oxm::MplsBos(1)] {
            assert_eq!(compile(&m(vec![o.clone()])), Err(OfError::BadPrereq));
            assert_eq!(
                compile(&m(vec![Oxm::EthType(0x0800), o.clone()])),
                Err(OfError::BadPrereq)
            );
            for et in [0x8847, 0x8848] {
                assert!(compile(&m(vec![o.clone(), Oxm::EthType(et)])).is_ok());
            }
        }
        let mpls = Oxm::EthType(0x8847);
        for bad in [Oxm::MplsLabel(0x10_0000), Oxm::MplsTc(8), Oxm::MplsBos(2)] {
            assert_eq!(compile(&m(vec![mpls.clone(), bad])), Err(OfError::BadValue));
        }
        let f = compile(&m(vec![
            mpls,
            Oxm::MplsLabel(0xf_ffff),
            Oxm::MplsTc(7),
            Oxm::MplsBos(1),
        ]))
        .unwrap();
        assert_eq!(f.exact_value(slot::MPLS_LABEL), Some(0xf_ffff));
        assert_eq!(f.exact_value(slot::MPLS_TC), Some(7));
        assert_eq!(f.exact_value(slot::MPLS_BOS), Some(1));
        assert!(mpls_present(&f));
    }

    #[test]
    fn the_exact_match_of_a_frame_matches_it() {
        let frame = crate::testutil::udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 53);
        let fk = FlowKey::extract(PortNo(2), &frame);
        let fm = compile(&baton_openflow::v13::Match13::exact(&fk)).unwrap();
        assert!(fm.matches(&Key::of_packet(Version::V13, &fk, 0)));
        let fk2 = FlowKey::extract(PortNo(1), &frame);
        assert!(!fm.matches(&Key::of_packet(Version::V13, &fk2, 0)));
    }
}
