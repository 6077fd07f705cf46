//! The exact OXM match of a frame's key (1.3.5 §7.2.3): every field the
//! frame has is matched exactly, every field it lacks is left out, and
//! every field follows its prerequisites (1.3.5 §7.2.3.6), so the flow
//! matches exactly the packets whose key is this one. And the L2 match
//! ([`put_l2_match`]), written the same way.

use super::field::{OFPVID_NONE, OFPVID_PRESENT, OFPXMC_OPENFLOW_BASIC, OxmField, OxmHeader};
use super::ofmatch::{MATCH_BUF, Match13, put_match_with};
use super::tlv::OxmIter;
use super::value::Oxm;
use crate::packet::consts::*;
use crate::packet::{FlowKey, Network, PlainIpv4, PlainTransport, Transport};
use crate::types::PortNo;
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
///
/// The TLVs are those [`emit_exact_match`] writes, read back from its
/// bytes: the wire form is the one description of the exact match.
pub fn for_each_exact_oxm(key: &FlowKey, mut f: impl FnMut(Oxm)) {
    let mut b = Fixed::<MATCH_BUF>::new();
    exact_tlvs(key, &mut b);
    // Our own TLVs, each of its field's length: none is refused.
    OxmIter::new(b.as_slice(), 0)
        .filter_map(Result::ok)
        .for_each(|t| f(t.to_oxm()));
}

/// Appends the exact `ofp_match` of a frame's `key` (1.3.5 §7.2.3; the
/// TLVs [`for_each_exact_oxm`] lists), padded to 8 bytes, without
/// allocating beyond `out`'s growth.
pub fn emit_exact_match(out: &mut Vec<u8>, key: &FlowKey) {
    let mut b = Fixed::<MATCH_BUF>::new();
    put_exact_match(&mut b, key);
    out.put_slice(b.as_slice());
}

/// Writes the exact `ofp_match` of `key` (see [`emit_exact_match`]) into
/// `b`, which should have room for [`MATCH_BUF`] bytes more: what does
/// not fit is dropped.
#[inline]
pub fn put_exact_match<const N: usize>(b: &mut Fixed<N>, key: &FlowKey) {
    put_match_with(b, |b| exact_tlvs(key, b));
}

/// Writes the exact `ofp_match` of the `frame` that arrived on `in_port`
/// into `b`: the bytes [`put_exact_match`] writes for
/// `FlowKey::extract(in_port, frame)`, written straight from the frame's
/// bytes when it is a [`PlainIpv4`] frame.
#[inline]
pub fn put_exact_match_frame<const N: usize>(b: &mut Fixed<N>, in_port: PortNo, frame: &[u8]) {
    use OxmField as F;
    let Some(f) = PlainIpv4::new(frame) else {
        return put_exact_match(b, &FlowKey::extract(in_port, frame));
    };
    put_match_with(b, |b| {
        eth_tlvs(b, in_port, f.eth_dst(), f.eth_src(), ETH_TYPE_IPV4);
        untagged_tlv(b);
        let tos = f.tos();
        ipv4_tlvs(b, tos >> 2, tos & 3, f.proto(), f.ipv4_src(), f.ipv4_dst());
        match f.transport() {
            PlainTransport::Tcp => ports(b, [F::TcpSrc, F::TcpDst], f.tp_src(), f.tp_dst()),
            PlainTransport::Udp => ports(b, [F::UdpSrc, F::UdpDst], f.tp_src(), f.tp_dst()),
            PlainTransport::Unmatched => {}
        }
    });
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

/// Writes the L2 `ofp_match` (`IN_PORT`, `ETH_DST`, `ETH_SRC`, and
/// `VLAN_VID`: `OFPVID_PRESENT | vid` when tagged, `OFPVID_NONE`
/// otherwise; `crate::neutral::MatchSpec::l2_frame`) into `b`, as one
/// fixed run of TLVs ([`l2_tlvs`]).
#[inline]
pub fn put_l2_match<const N: usize>(
    b: &mut Fixed<N>,
    in_port: PortNo,
    dst: [u8; 6],
    src: [u8; 6],
    vid: Option<u16>,
) {
    put_match_with(b, |b| b.put_array(l2_tlvs(in_port, dst, src, vid)));
}

/// Bytes of the L2 match's TLVs ([`l2_tlvs`]).
pub const L2_TLVS_LEN: usize = t(4) + t(6) + t(6) + t(2);

/// The TLVs of the L2 match (see [`put_l2_match`]), in their order, for
/// an `ofp_match` written at a constant offset of a fixed image.
#[inline(always)]
pub fn l2_tlvs(in_port: PortNo, dst: [u8; 6], src: [u8; 6], vid: Option<u16>) -> [u8; L2_TLVS_LEN] {
    use OxmField as F;
    let vlan = vid.map_or(OFPVID_NONE, |v| OFPVID_PRESENT | (v & 0x0fff));
    Run::<L2_TLVS_LEN>::new()
        .tlv(F::InPort, in_port.0.to_be_bytes())
        .tlv(F::EthDst, dst)
        .tlv(F::EthSrc, src)
        .tlv(F::VlanVid, vlan.to_be_bytes())
        .into_array()
}

/// A run of TLVs whose layout is fixed (`K` bytes in all), built on the
/// stack at constant offsets and appended to the match with one copy.
///
/// Writing TLV by TLV at a running position was two bounds checks and a
/// length update per TLV, 169 instructions for the 12 TLVs of a TCP
/// frame's match; within a run every offset is a constant and the
/// compiler folds the checks away, leaving one per run (BENCHMARKS.md,
/// "OpenFlow 1.3 against 1.0").
struct Run<const K: usize> {
    buf: [u8; K],
    at: usize,
}

impl<const K: usize> Run<K> {
    #[inline(always)]
    fn new() -> Self {
        Run { buf: [0; K], at: 0 }
    }

    /// Adds an unmasked basic TLV (1.3.5 §7.2.3.2): its header, then
    /// `value`, of the field's length.
    #[inline(always)]
    fn tlv<const N: usize>(mut self, field: OxmField, value: [u8; N]) -> Self {
        let header = OxmHeader {
            class: OFPXMC_OPENFLOW_BASIC,
            field: field.into(),
            has_mask: false,
            length: N as u8,
        };
        if let Some(d) = self.buf.get_mut(self.at..self.at + 4 + N) {
            d[..4].copy_from_slice(&header.to_u32().to_be_bytes());
            d[4..].copy_from_slice(&value);
        }
        self.at += 4 + N;
        self
    }

    /// Appends the run to `b`.
    #[inline(always)]
    fn put<const N: usize>(self, b: &mut Fixed<N>) {
        b.put_array(self.into_array());
    }

    /// The run's bytes.
    #[inline(always)]
    fn into_array(self) -> [u8; K] {
        debug_assert_eq!(self.at, K, "a run's TLVs fill it exactly");
        self.buf
    }
}

/// Bytes of a TLV with an `n`-byte value.
const fn t(n: usize) -> usize {
    4 + n
}

/// Writes the TLVs of the exact match of `key` (see
/// [`for_each_exact_oxm`]) into `b`, in runs of fixed layout.
#[inline]
fn exact_tlvs<const N: usize>(key: &FlowKey, b: &mut Fixed<N>) {
    use OxmField as F;
    eth_tlvs(b, key.in_port, key.eth_dst.0, key.eth_src.0, key.eth_type);
    match key.vlan {
        Some(tag) => Run::<{ t(2) + t(1) }>::new()
            .tlv(
                F::VlanVid,
                (OFPVID_PRESENT | (tag.vid & 0x0fff)).to_be_bytes(),
            )
            .tlv(F::VlanPcp, [tag.pcp])
            .put(b),
        None => untagged_tlv(b),
    }
    match &key.network {
        Network::Other => {}
        Network::Arp(arp) => Run::<{ t(2) + t(4) + t(4) + t(6) + t(6) }>::new()
            .tlv(F::ArpOp, arp.op.to_be_bytes())
            .tlv(F::ArpSpa, arp.spa.octets())
            .tlv(F::ArpTpa, arp.tpa.octets())
            .tlv(F::ArpSha, arp.sha.0)
            .tlv(F::ArpTha, arp.tha.0)
            .put(b),
        Network::Ipv4(ip) => {
            let (src, dst) = (ip.src.octets(), ip.dst.octets());
            ipv4_tlvs(b, ip.dscp, ip.ecn, ip.proto, src, dst);
            transport_tlvs(ip.transport, b);
        }
        Network::Ipv6(ip) => {
            Run::<{ t(1) + t(1) + t(1) + t(16) + t(16) + t(4) }>::new()
                .tlv(F::IpDscp, [ip.dscp])
                .tlv(F::IpEcn, [ip.ecn])
                .tlv(F::IpProto, [ip.next_header])
                .tlv(F::Ipv6Src, ip.src.octets())
                .tlv(F::Ipv6Dst, ip.dst.octets())
                .tlv(F::Ipv6Flabel, ip.flow_label.to_be_bytes())
                .put(b);
            transport_tlvs(ip.transport, b);
        }
    }
}

/// The Ethernet TLVs that start every exact match (see [`exact_tlvs`]).
#[inline(always)]
fn eth_tlvs<const N: usize>(
    b: &mut Fixed<N>,
    in_port: PortNo,
    dst: [u8; 6],
    src: [u8; 6],
    eth_type: u16,
) {
    use OxmField as F;
    Run::<{ t(4) + t(6) + t(6) + t(2) }>::new()
        .tlv(F::InPort, in_port.0.to_be_bytes())
        .tlv(F::EthDst, dst)
        .tlv(F::EthSrc, src)
        .tlv(F::EthType, eth_type.to_be_bytes())
        .put(b);
}

/// `VLAN_VID = OFPVID_NONE`: the frame has no VLAN tag.
#[inline(always)]
fn untagged_tlv<const N: usize>(b: &mut Fixed<N>) {
    Run::<{ t(2) }>::new()
        .tlv(OxmField::VlanVid, OFPVID_NONE.to_be_bytes())
        .put(b);
}

/// The IPv4 TLVs (see [`exact_tlvs`]).
#[inline(always)]
fn ipv4_tlvs<const N: usize>(
    b: &mut Fixed<N>,
    dscp: u8,
    ecn: u8,
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
) {
    use OxmField as F;
    Run::<{ t(1) + t(1) + t(1) + t(4) + t(4) }>::new()
        .tlv(F::IpDscp, [dscp])
        .tlv(F::IpEcn, [ecn])
        .tlv(F::IpProto, [proto])
        .tlv(F::Ipv4Src, src)
        .tlv(F::Ipv4Dst, dst)
        .put(b);
}

/// A pair of 2-byte transport ports.
#[inline(always)]
fn ports<const N: usize>(b: &mut Fixed<N>, fs: [OxmField; 2], src: u16, dst: u16) {
    Run::<{ t(2) + t(2) }>::new()
        .tlv(fs[0], src.to_be_bytes())
        .tlv(fs[1], dst.to_be_bytes())
        .put(b);
}

/// The transport's TLVs (see [`exact_tlvs`]).
#[inline]
fn transport_tlvs<const N: usize>(tp: Transport, b: &mut Fixed<N>) {
    use OxmField as F;
    /// A pair of 1-byte ICMP fields.
    fn icmp<const N: usize>(b: &mut Fixed<N>, fs: [OxmField; 2], ty: u8, code: u8) {
        Run::<{ t(1) + t(1) }>::new()
            .tlv(fs[0], [ty])
            .tlv(fs[1], [code])
            .put(b);
    }
    match tp {
        Transport::None => {}
        Transport::Tcp { src, dst } => ports(b, [F::TcpSrc, F::TcpDst], src, dst),
        Transport::Udp { src, dst } => ports(b, [F::UdpSrc, F::UdpDst], src, dst),
        Transport::Sctp { src, dst } => ports(b, [F::SctpSrc, F::SctpDst], src, dst),
        Transport::Icmpv4 { icmp_type, code } => {
            icmp(b, [F::Icmpv4Type, F::Icmpv4Code], icmp_type, code)
        }
        Transport::Icmpv6 {
            icmp_type,
            code,
            nd,
        } => {
            icmp(b, [F::Icmpv6Type, F::Icmpv6Code], icmp_type, code);
            if let Some(nd) = nd {
                Run::<{ t(16) }>::new()
                    .tlv(F::Ipv6NdTarget, nd.target.octets())
                    .put(b);
                let ll = match (icmp_type, nd.sll, nd.tll) {
                    (ICMPV6_ND_SOLICIT, Some(sll), _) => Some((F::Ipv6NdSll, sll)),
                    (ICMPV6_ND_ADVERT, _, Some(tll)) => Some((F::Ipv6NdTll, tll)),
                    _ => None,
                };
                if let Some((f, mac)) = ll {
                    Run::<{ t(6) }>::new().tlv(f, mac.0).put(b);
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
    fn the_largest_exact_match_fills_match_buf() {
        let mut k = FlowKey::extract(PortNo(2), &ipv6_ns_frame());
        k.vlan = Some(crate::packet::VlanTag { vid: 42, pcp: 5 });
        let mut out = Vec::new();
        emit_exact_match(&mut out, &k);
        assert_eq!(out.len(), MATCH_BUF, "nothing dropped, no padding");
        let oxms = OxmIter::new(&out[4..], 4).map(Result::unwrap).count();
        assert_eq!(oxms, 16, "every TLV of a tagged neighbour solicitation");
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
