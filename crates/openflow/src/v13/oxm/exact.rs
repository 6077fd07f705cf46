//! The exact OXM match of a frame's key (1.3.5 §7.2.3): every field the
//! frame has is matched exactly, every field it lacks is left out, and
//! every field follows its prerequisites (1.3.5 §7.2.3.6), so the flow
//! matches exactly the packets whose key is this one.

use super::field::{OFPVID_NONE, OFPVID_PRESENT, OFPXMC_OPENFLOW_BASIC, OxmField, OxmHeader};
use super::ofmatch::{MATCH_BUF, Match13, emit_match_with};
use super::value::Oxm;
use crate::packet::consts::*;
use crate::packet::{FlowKey, Network, Transport};
use crate::wire::{Fixed, Put};

/// Calls `f` with each OXM TLV of the exact match of a frame's `key`, in an
/// order where every field follows its prerequisites (1.3.5 §7.2.3.6),
/// without allocating.
///
/// `IN_PORT`, `ETH_DST`, `ETH_SRC`, `ETH_TYPE` and `VLAN_VID` (with
/// `OFPVID_PRESENT`, or `OFPVID_NONE` when untagged) always; `VLAN_PCP`
/// when tagged; then by protocol: `ARP_OP/SPA/TPA/SHA/THA`;
/// `IP_DSCP/ECN/PROTO`, `IPV4_SRC/DST` or `IPV6_SRC/DST/FLABEL`, and the
/// `TCP_*`, `UDP_*`, `SCTP_*`, `ICMPV4_*` or `ICMPV6_*` pair of the
/// transport; `IPV6_ND_TARGET` and `IPV6_ND_SLL` (solicitations) /
/// `IPV6_ND_TLL` (advertisements) for neighbour discovery. Fields the
/// frame lacks are left out.
pub fn for_each_exact_oxm(key: &FlowKey, f: impl FnMut(Oxm)) {
    exact_tlvs(key, &mut Values(f));
}

/// Appends the exact `ofp_match` of a frame's `key` (1.3.5 §7.2.3; the
/// TLVs [`for_each_exact_oxm`] lists), padded to 8 bytes, without
/// allocating beyond `out`'s growth. Each TLV is written straight from the
/// key, without building an [`Oxm`].
pub fn emit_exact_match(out: &mut Vec<u8>, key: &FlowKey) {
    emit_match_with(out, |b| exact_tlvs(key, &mut Wire(b)));
}

impl Match13 {
    /// The exact match of a frame's `key` as an owned [`Match13`]
    /// (allocates; for tests and the owned message forms).
    pub fn exact(key: &FlowKey) -> Match13 {
        let mut fields = Vec::with_capacity(16);
        for_each_exact_oxm(key, |o| fields.push(o));
        Match13 { fields }
    }
}

/// Where the TLVs of an exact match go: each is an unmasked basic field
/// and its value in wire order. [`Values`] turns them into [`Oxm`]s,
/// [`Wire`] writes them into the match. The one list of TLVs
/// ([`exact_tlvs`]) serves both, and writing through [`Wire`] builds no
/// `Oxm` and dispatches on no variant: `Oxm::emit` was a third of a 1.3
/// flow request's instructions (BENCHMARKS.md).
trait TlvSink {
    fn tlv<const N: usize>(&mut self, field: OxmField, value: [u8; N]);
}

/// The TLVs as [`Oxm`] values, for `f`.
struct Values<F>(F);

impl<F: FnMut(Oxm)> TlvSink for Values<F> {
    fn tlv<const N: usize>(&mut self, field: OxmField, value: [u8; N]) {
        // Each call in exact_tlvs passes a value of the field's length, so
        // from_basic always has one (the round-trip tests check the wire
        // form against the table).
        if let Some(o) = Oxm::from_basic(field, false, &value) {
            (self.0)(o);
        }
    }
}

/// The TLVs written into a match being built.
struct Wire<'a>(&'a mut Fixed<MATCH_BUF>);

impl TlvSink for Wire<'_> {
    #[inline(always)]
    fn tlv<const N: usize>(&mut self, field: OxmField, value: [u8; N]) {
        let header = OxmHeader {
            class: OFPXMC_OPENFLOW_BASIC,
            field: field.into(),
            has_mask: false,
            length: N as u8,
        };
        self.0.put_u32(header.to_u32());
        self.0.put_slice(&value);
    }
}

/// The exact match's TLVs, in the order [`for_each_exact_oxm`] gives.
#[inline]
fn exact_tlvs(key: &FlowKey, s: &mut impl TlvSink) {
    use OxmField as F;
    s.tlv(F::InPort, key.in_port.0.to_be_bytes());
    s.tlv(F::EthDst, key.eth_dst.0);
    s.tlv(F::EthSrc, key.eth_src.0);
    s.tlv(F::EthType, key.eth_type.to_be_bytes());
    match key.vlan {
        Some(tag) => {
            s.tlv(
                F::VlanVid,
                (OFPVID_PRESENT | (tag.vid & 0x0fff)).to_be_bytes(),
            );
            s.tlv(F::VlanPcp, [tag.pcp]);
        }
        None => s.tlv(F::VlanVid, OFPVID_NONE.to_be_bytes()),
    }
    match &key.network {
        Network::Other => {}
        Network::Arp(arp) => {
            s.tlv(F::ArpOp, arp.op.to_be_bytes());
            s.tlv(F::ArpSpa, arp.spa.octets());
            s.tlv(F::ArpTpa, arp.tpa.octets());
            s.tlv(F::ArpSha, arp.sha.0);
            s.tlv(F::ArpTha, arp.tha.0);
        }
        Network::Ipv4(ip) => {
            s.tlv(F::IpDscp, [ip.dscp]);
            s.tlv(F::IpEcn, [ip.ecn]);
            s.tlv(F::IpProto, [ip.proto]);
            s.tlv(F::Ipv4Src, ip.src.octets());
            s.tlv(F::Ipv4Dst, ip.dst.octets());
            transport_tlvs(ip.transport, s);
        }
        Network::Ipv6(ip) => {
            s.tlv(F::IpDscp, [ip.dscp]);
            s.tlv(F::IpEcn, [ip.ecn]);
            s.tlv(F::IpProto, [ip.next_header]);
            s.tlv(F::Ipv6Src, ip.src.octets());
            s.tlv(F::Ipv6Dst, ip.dst.octets());
            s.tlv(F::Ipv6Flabel, ip.flow_label.to_be_bytes());
            transport_tlvs(ip.transport, s);
        }
    }
}

/// The transport-layer TLVs of an IP key.
#[inline]
fn transport_tlvs(t: Transport, s: &mut impl TlvSink) {
    use OxmField as F;
    match t {
        Transport::None => {}
        Transport::Tcp { src, dst } => {
            s.tlv(F::TcpSrc, src.to_be_bytes());
            s.tlv(F::TcpDst, dst.to_be_bytes());
        }
        Transport::Udp { src, dst } => {
            s.tlv(F::UdpSrc, src.to_be_bytes());
            s.tlv(F::UdpDst, dst.to_be_bytes());
        }
        Transport::Sctp { src, dst } => {
            s.tlv(F::SctpSrc, src.to_be_bytes());
            s.tlv(F::SctpDst, dst.to_be_bytes());
        }
        Transport::Icmpv4 { icmp_type, code } => {
            s.tlv(F::Icmpv4Type, [icmp_type]);
            s.tlv(F::Icmpv4Code, [code]);
        }
        Transport::Icmpv6 {
            icmp_type,
            code,
            nd,
        } => {
            s.tlv(F::Icmpv6Type, [icmp_type]);
            s.tlv(F::Icmpv6Code, [code]);
            if let Some(nd) = nd {
                s.tlv(F::Ipv6NdTarget, nd.target.octets());
                match (icmp_type, nd.sll, nd.tll) {
                    (ICMPV6_ND_SOLICIT, Some(sll), _) => s.tlv(F::Ipv6NdSll, sll.0),
                    (ICMPV6_ND_ADVERT, _, Some(tll)) => s.tlv(F::Ipv6NdTll, tll.0),
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::*;
    use crate::types::{MacAddr, PortNo};
    use std::net::Ipv4Addr;

    fn oxm_round_trip(k: &FlowKey) -> Vec<Oxm> {
        let mut out = vec![0xee];
        emit_exact_match(&mut out, k);
        assert_eq!((out.len() - 1) % 8, 0, "match is padded to 8");
        let mut r = crate::wire::Reader::new(&out[1..]);
        let m = Match13::parse(&mut r).unwrap();
        assert!(r.is_empty());
        assert_eq!(m, Match13::exact(k));
        m.fields
    }

    fn eth(k: &FlowKey) -> Vec<Oxm> {
        vec![
            Oxm::InPort(k.in_port),
            Oxm::EthDst {
                value: k.eth_dst,
                mask: None,
            },
            Oxm::EthSrc {
                value: k.eth_src,
                mask: None,
            },
            Oxm::EthType(k.eth_type),
        ]
    }

    #[test]
    fn oxm_tcp() {
        let k = FlowKey::extract(PortNo(7), &tcp_frame());
        let mut want = eth(&k);
        want.extend([
            Oxm::VlanVid {
                value: OFPVID_NONE,
                mask: None,
            },
            Oxm::IpDscp(0),
            Oxm::IpEcn(0),
            Oxm::IpProto(6),
            Oxm::Ipv4Src {
                value: Ipv4Addr::new(10, 0, 0, 1),
                mask: None,
            },
            Oxm::Ipv4Dst {
                value: Ipv4Addr::new(10, 0, 0, 2),
                mask: None,
            },
            Oxm::TcpSrc(1234),
            Oxm::TcpDst(80),
        ]);
        assert_eq!(oxm_round_trip(&k), want);
    }

    #[test]
    fn oxm_vlan_udp() {
        let k = FlowKey::extract(PortNo(7), &vlan_udp_frame());
        let got = oxm_round_trip(&k);
        assert_eq!(
            got[4..6],
            [
                Oxm::VlanVid {
                    value: OFPVID_PRESENT | 42,
                    mask: None
                },
                Oxm::VlanPcp(5)
            ]
        );
        assert_eq!(got[got.len() - 2..], [Oxm::UdpSrc(1), Oxm::UdpDst(2)]);
    }

    #[test]
    fn oxm_arp() {
        let k = FlowKey::extract(PortNo(1), &arp_frame());
        let got = oxm_round_trip(&k);
        assert_eq!(got.len(), 10);
        assert_eq!(got[5], Oxm::ArpOp(1));
        assert_eq!(
            got[6],
            Oxm::ArpSpa {
                value: Ipv4Addr::new(10, 0, 0, 1),
                mask: None
            }
        );
    }

    #[test]
    fn oxm_icmp_and_ipv6() {
        let k = FlowKey::extract(PortNo(1), &icmp_frame());
        let got = oxm_round_trip(&k);
        assert_eq!(
            got[got.len() - 2..],
            [Oxm::Icmpv4Type(8), Oxm::Icmpv4Code(0)]
        );
        let k = FlowKey::extract(PortNo(1), &ipv6_tcp_frame());
        let got = oxm_round_trip(&k);
        assert_eq!(got.len(), 13);
        assert_eq!(got[7], Oxm::IpProto(6));
        assert!(matches!(
            got[10],
            Oxm::Ipv6Flabel {
                value: 0,
                mask: None
            }
        ));
        let k = FlowKey::extract(PortNo(1), &ipv6_ns_frame());
        let got = oxm_round_trip(&k);
        let n = got.len();
        assert!(matches!(got[n - 2], Oxm::Ipv6NdTarget(_)));
        assert_eq!(got[n - 1], Oxm::Ipv6NdSll(MacAddr([0x02, 0, 0, 0, 0, 1])));
        assert_eq!(
            got[n - 4..n - 2],
            [Oxm::Icmpv6Type(135), Oxm::Icmpv6Code(0)]
        );
    }

    #[test]
    fn oxm_short_frame_has_ethernet_only() {
        let k = FlowKey::extract(PortNo(1), &tcp_frame()[..20]);
        let got = oxm_round_trip(&k);
        assert_eq!(got.len(), 5);
    }

    /// Checks 1.3.5 §7.2.3.6: each field's prerequisites appear before it,
    /// and no field appears twice.
    pub(crate) fn check_prereqs(oxms: &[Oxm]) {
        let mut eth_type = None;
        let mut ip_proto = None;
        let mut vlan_present = false;
        let mut icmpv6_type = None;
        let mut seen = Vec::new();
        for o in oxms {
            let field = o.field().expect("basic field");
            assert!(!seen.contains(&field), "{field:?} twice in {oxms:?}");
            seen.push(field);
            let ip = matches!(eth_type, Some(ETH_TYPE_IPV4 | ETH_TYPE_IPV6));
            let ok = match o {
                Oxm::EthType(t) => {
                    eth_type = Some(*t);
                    true
                }
                Oxm::VlanVid { value, .. } => {
                    vlan_present = value & OFPVID_PRESENT != 0;
                    true
                }
                Oxm::VlanPcp(_) => vlan_present,
                Oxm::IpProto(p) => {
                    ip_proto = Some(*p);
                    ip
                }
                Oxm::IpDscp(_) | Oxm::IpEcn(_) => ip,
                Oxm::Ipv4Src { .. } | Oxm::Ipv4Dst { .. } => eth_type == Some(ETH_TYPE_IPV4),
                Oxm::Ipv6Src { .. } | Oxm::Ipv6Dst { .. } | Oxm::Ipv6Flabel { .. } => {
                    eth_type == Some(ETH_TYPE_IPV6)
                }
                Oxm::ArpOp(_)
                | Oxm::ArpSpa { .. }
                | Oxm::ArpTpa { .. }
                | Oxm::ArpSha { .. }
                | Oxm::ArpTha { .. } => eth_type == Some(ETH_TYPE_ARP),
                Oxm::TcpSrc(_) | Oxm::TcpDst(_) => ip && ip_proto == Some(IP_PROTO_TCP),
                Oxm::UdpSrc(_) | Oxm::UdpDst(_) => ip && ip_proto == Some(IP_PROTO_UDP),
                Oxm::SctpSrc(_) | Oxm::SctpDst(_) => ip && ip_proto == Some(IP_PROTO_SCTP),
                Oxm::Icmpv4Type(_) | Oxm::Icmpv4Code(_) => {
                    eth_type == Some(ETH_TYPE_IPV4) && ip_proto == Some(IP_PROTO_ICMP)
                }
                Oxm::Icmpv6Type(t) => {
                    icmpv6_type = Some(*t);
                    eth_type == Some(ETH_TYPE_IPV6) && ip_proto == Some(IP_PROTO_ICMPV6)
                }
                Oxm::Icmpv6Code(_) => {
                    eth_type == Some(ETH_TYPE_IPV6) && ip_proto == Some(IP_PROTO_ICMPV6)
                }
                Oxm::Ipv6NdTarget(_) => {
                    matches!(icmpv6_type, Some(ICMPV6_ND_SOLICIT | ICMPV6_ND_ADVERT))
                }
                Oxm::Ipv6NdSll(_) => icmpv6_type == Some(ICMPV6_ND_SOLICIT),
                Oxm::Ipv6NdTll(_) => icmpv6_type == Some(ICMPV6_ND_ADVERT),
                _ => true,
            };
            assert!(ok, "prerequisite missing for {o:?} in {oxms:?}");
        }
    }

    #[test]
    fn oxm_prerequisites_hold_for_every_frame_and_prefix() {
        let frames = [
            tcp_frame(),
            arp_frame(),
            udp_frame(),
            icmp_frame(),
            vlan_udp_frame(),
            ipv6_tcp_frame(),
            ipv6_ns_frame(),
        ];
        let mut x = 0x9e37_79b9u32;
        for f in &frames {
            for n in 0..=f.len() {
                let k = FlowKey::extract(PortNo(1), &f[..n]);
                check_prereqs(&Match13::exact(&k).fields);
                assert_eq!(
                    crate::v10::Match10::exact(&k).wildcards & !crate::v10::ofmatch::OFPFW_ALL,
                    0
                );
                // And with a few bytes flipped past the Ethernet header.
                let mut g = f[..n].to_vec();
                for _ in 0..8 {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    if g.len() > 14 {
                        let at = 14 + (x as usize % (g.len() - 14));
                        g[at] ^= (x >> 24) as u8;
                    }
                    let k = FlowKey::extract(PortNo(1), &g);
                    check_prereqs(&Match13::exact(&k).fields);
                }
            }
        }
    }
}
