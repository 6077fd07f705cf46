//! Unit tests of [`FlowKey::extract`] on frames built by etherparse's
//! `PacketBuilder`.

use super::*;
use etherparse::{
    ArpHardwareId, ArpOperation, ArpPacket, EtherType, Icmpv4Type, Icmpv6Type, PacketBuilder,
    VlanId,
};

const SRC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const DST: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const IP6_A: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const IP6_B: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

pub(crate) fn tcp_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(1234, 80, 1, 1000);
    let mut out = Vec::new();
    b.write(&mut out, &[0u8; 6]).unwrap();
    out
}

pub(crate) fn arp_frame() -> Vec<u8> {
    let arp = ArpPacket::new(
        ArpHardwareId::ETHERNET,
        EtherType::IPV4,
        ArpOperation::REQUEST,
        &SRC,
        &[10, 0, 0, 1],
        &[0; 6],
        &[10, 0, 0, 2],
    )
    .unwrap();
    let b = PacketBuilder::ethernet2(SRC, [0xff; 6]).arp(arp);
    let mut out = Vec::new();
    b.write(&mut out).unwrap();
    out
}

pub(crate) fn udp_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(5353, 53);
    let mut out = Vec::new();
    b.write(&mut out, b"query").unwrap();
    out
}

pub(crate) fn icmp_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .icmpv4(Icmpv4Type::EchoRequest(etherparse::IcmpEchoHeader {
            id: 1,
            seq: 2,
        }));
    let mut out = Vec::new();
    b.write(&mut out, b"ping").unwrap();
    out
}

pub(crate) fn vlan_udp_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .single_vlan(VlanId::try_new(42).unwrap())
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(1, 2);
    let mut out = Vec::new();
    b.write(&mut out, &[]).unwrap();
    // PCP 5 in the TCI's top three bits.
    out[14] |= 5 << 5;
    out
}

pub(crate) fn ipv6_tcp_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .ipv6(IP6_A, IP6_B, 64)
        .tcp(443, 50000, 7, 100);
    let mut out = Vec::new();
    b.write(&mut out, &[]).unwrap();
    out
}

pub(crate) fn ipv6_ns_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .ipv6(IP6_A, IP6_B, 255)
        .icmpv6(Icmpv6Type::NeighborSolicitation);
    let mut payload = IP6_B.to_vec();
    payload.extend_from_slice(&[1, 1]);
    payload.extend_from_slice(&SRC);
    let mut out = Vec::new();
    b.write(&mut out, &payload).unwrap();
    out
}

fn ipv4_of(k: &FlowKey) -> Ipv4Key {
    match k.network {
        Network::Ipv4(ip) => ip,
        other => panic!("not IPv4: {other:?}"),
    }
}

#[test]
fn ipv4_tcp() {
    let f = tcp_frame();
    let k = FlowKey::extract(PortNo(3), &f);
    assert_eq!(k.in_port, PortNo(3));
    assert_eq!(k.eth_src, MacAddr(SRC));
    assert_eq!(k.eth_dst, MacAddr(DST));
    assert_eq!(k.vlan, None);
    assert_eq!(k.eth_type, ETH_TYPE_IPV4);
    let ip = ipv4_of(&k);
    assert_eq!(ip.src, Ipv4Addr::new(10, 0, 0, 1));
    assert_eq!(ip.dst, Ipv4Addr::new(10, 0, 0, 2));
    assert_eq!(ip.proto, IP_PROTO_TCP);
    assert_eq!((ip.dscp, ip.ecn), (0, 0));
    assert_eq!(ip.transport, Transport::Tcp { src: 1234, dst: 80 });
    assert_eq!(k.ip_proto(), Some(6));
}

#[test]
fn ipv4_tos_splits_into_dscp_and_ecn() {
    let mut f = tcp_frame();
    f[15] = (46 << 2) | 1;
    let ip = ipv4_of(&FlowKey::extract(PortNo(1), &f));
    assert_eq!((ip.dscp, ip.ecn), (46, 1));
}

#[test]
fn arp_request() {
    let k = FlowKey::extract(PortNo(1), &arp_frame());
    assert_eq!(k.eth_type, ETH_TYPE_ARP);
    assert_eq!(
        k.network,
        Network::Arp(ArpKey {
            op: 1,
            spa: Ipv4Addr::new(10, 0, 0, 1),
            tpa: Ipv4Addr::new(10, 0, 0, 2),
            sha: MacAddr(SRC),
            tha: MacAddr([0; 6]),
        })
    );
}

#[test]
fn non_ethernet_arp_has_no_fields() {
    let mut f = arp_frame();
    f[15] = 6; // htype 6 (IEEE 802)
    let k = FlowKey::extract(PortNo(1), &f);
    assert_eq!(k.eth_type, ETH_TYPE_ARP);
    assert_eq!(k.network, Network::Other);
}

#[test]
fn udp_and_icmp() {
    let k = FlowKey::extract(PortNo(1), &udp_frame());
    assert_eq!(ipv4_of(&k).transport, Transport::Udp { src: 5353, dst: 53 });
    let k = FlowKey::extract(PortNo(1), &icmp_frame());
    assert_eq!(
        ipv4_of(&k).transport,
        Transport::Icmpv4 {
            icmp_type: 8,
            code: 0
        }
    );
}

#[test]
fn sctp_ports() {
    let mut f = udp_frame();
    f[23] = IP_PROTO_SCTP;
    // 8 UDP header bytes + 5 payload bytes >= the 12-byte SCTP header.
    let ip = ipv4_of(&FlowKey::extract(PortNo(1), &f));
    assert_eq!(ip.proto, IP_PROTO_SCTP);
    assert_eq!(ip.transport, Transport::Sctp { src: 5353, dst: 53 });
}

#[test]
fn vlan_tag() {
    let k = FlowKey::extract(PortNo(9), &vlan_udp_frame());
    assert_eq!(k.vlan, Some(VlanTag { vid: 42, pcp: 5 }));
    assert_eq!(k.eth_type, ETH_TYPE_IPV4);
    assert_eq!(ipv4_of(&k).transport, Transport::Udp { src: 1, dst: 2 });
}

#[test]
fn only_the_outer_tag_is_parsed() {
    // A second tag: eth_type is its TPID, nothing below is read.
    let f = vlan_udp_frame();
    let mut qinq = f[..16].to_vec();
    qinq.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
    qinq.extend_from_slice(&f[16..]);
    let k = FlowKey::extract(PortNo(9), &qinq);
    assert_eq!(k.vlan, Some(VlanTag { vid: 42, pcp: 5 }));
    assert_eq!(k.eth_type, ETH_TYPE_VLAN);
    assert_eq!(k.network, Network::Other);
}

#[test]
fn ipv6_tcp() {
    let mut f = ipv6_tcp_frame();
    // Traffic class 0xb9 (DSCP 46, ECN 1), flow label 0x12345.
    f[14] = 0x6b;
    f[15] = 0x91;
    f[16] = 0x23;
    f[17] = 0x45;
    let k = FlowKey::extract(PortNo(2), &f);
    assert_eq!(k.eth_type, ETH_TYPE_IPV6);
    let Network::Ipv6(ip) = k.network else {
        panic!("{k:?}")
    };
    assert_eq!(ip.src, Ipv6Addr::from(IP6_A));
    assert_eq!(ip.dst, Ipv6Addr::from(IP6_B));
    assert_eq!((ip.dscp, ip.ecn, ip.flow_label), (46, 1, 0x12345));
    assert_eq!(ip.next_header, IP_PROTO_TCP);
    assert_eq!(
        ip.transport,
        Transport::Tcp {
            src: 443,
            dst: 50000
        }
    );
}

#[test]
fn ipv6_neighbour_solicitation() {
    let k = FlowKey::extract(PortNo(2), &ipv6_ns_frame());
    let Network::Ipv6(ip) = k.network else {
        panic!("{k:?}")
    };
    assert_eq!(ip.next_header, IP_PROTO_ICMPV6);
    assert_eq!(
        ip.transport,
        Transport::Icmpv6 {
            icmp_type: 135,
            code: 0,
            nd: Some(NdKey {
                target: Ipv6Addr::from(IP6_B),
                sll: Some(MacAddr(SRC)),
                tll: None,
            }),
        }
    );
}

#[test]
fn malformed_nd_option_drops_nd_fields() {
    let mut f = ipv6_ns_frame();
    let n = f.len();
    f[n - 7] = 0; // option length 0
    let k = FlowKey::extract(PortNo(2), &f);
    assert!(matches!(
        k.transport(),
        Transport::Icmpv6 {
            icmp_type: 135,
            nd: None,
            ..
        }
    ));
}

#[test]
fn fragments_have_zero_ports() {
    let mut f = udp_frame();
    f[20] |= 0x20; // more fragments
    let ip = ipv4_of(&FlowKey::extract(PortNo(1), &f));
    assert_eq!(ip.transport, Transport::Udp { src: 0, dst: 0 });
}

#[test]
fn llc_frames() {
    // 802.3 length field, LLC without SNAP.
    let mut f = vec![0u8; 60];
    f[..6].copy_from_slice(&DST);
    f[6..12].copy_from_slice(&SRC);
    f[12..14].copy_from_slice(&46u16.to_be_bytes());
    f[14..17].copy_from_slice(&[0x42, 0x42, 0x03]);
    let k = FlowKey::extract(PortNo(1), &f);
    assert_eq!(k.eth_type, ETH_TYPE_NOT_ETH);
    assert_eq!(k.network, Network::Other);
    // With an Ethernet SNAP header carrying ARP.
    let arp = arp_frame();
    let mut f = arp[..12].to_vec();
    f.extend_from_slice(&36u16.to_be_bytes());
    f.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x06]);
    f.extend_from_slice(&arp[14..]);
    let k = FlowKey::extract(PortNo(1), &f);
    assert_eq!(k.eth_type, ETH_TYPE_ARP);
    assert!(matches!(k.network, Network::Arp(a) if a.op == 1));
}

#[test]
fn truncated_frames_yield_what_was_read() {
    let f = tcp_frame();
    assert_eq!(FlowKey::extract(PortNo(1), &[]), FlowKey::empty(PortNo(1)));
    assert_eq!(
        FlowKey::extract(PortNo(1), &f[..13]),
        FlowKey::empty(PortNo(1))
    );
    let k = FlowKey::extract(PortNo(1), &f[..14]);
    assert_eq!((k.eth_src, k.eth_type), (MacAddr(SRC), ETH_TYPE_IPV4));
    assert_eq!(k.network, Network::Other);
    // IPv4 header complete, TCP header cut: addresses but no ports.
    let ip = ipv4_of(&FlowKey::extract(PortNo(1), &f[..14 + 20 + 10]));
    assert_eq!(ip.src, Ipv4Addr::new(10, 0, 0, 1));
    assert_eq!(ip.transport, Transport::None);
    // Total length claims more than present (PACKET_IN truncation): ports.
    let ip = ipv4_of(&FlowKey::extract(PortNo(1), &f[..14 + 20 + 20]));
    assert_eq!(ip.transport, Transport::Tcp { src: 1234, dst: 80 });
    // Every prefix of every test frame parses without panicking.
    for f in [
        tcp_frame(),
        arp_frame(),
        udp_frame(),
        icmp_frame(),
        vlan_udp_frame(),
        ipv6_tcp_frame(),
        ipv6_ns_frame(),
    ] {
        for n in 0..=f.len() {
            let _ = FlowKey::extract(PortNo(1), &f[..n]);
        }
    }
}

#[test]
fn garbage_does_not_panic() {
    // A cheap deterministic byte soup; the proptest below covers more.
    let mut x = 0x1234_5678u32;
    let mut buf = [0u8; 128];
    for _ in 0..2000 {
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        // Steer some toward interesting ethertypes.
        let t: [u8; 2] = match x % 5 {
            0 => [0x08, 0x00],
            1 => [0x86, 0xdd],
            2 => [0x08, 0x06],
            3 => [0x81, 0x00],
            _ => [buf[12], buf[13]],
        };
        buf[12..14].copy_from_slice(&t);
        let n = (x as usize >> 8) % buf.len();
        let _ = FlowKey::extract(PortNo(1), &buf[..n]);
    }
}

proptest::proptest! {
    #[test]
    fn any_bytes_extract_without_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
        let _ = FlowKey::extract(PortNo(1), &bytes);
    }
}

/// An IPv6 frame whose extension headers are `chain` (IP protocol
/// numbers, in order, each header built by hand to its RFC layout) and
/// whose next header after them is `last`, with 20 bytes of payload.
fn ipv6_with_extensions(chain: &[u8], last: u8) -> Vec<u8> {
    let mut exts = Vec::new();
    for (i, &h) in chain.iter().enumerate() {
        let next = chain.get(i + 1).copied().unwrap_or(last);
        match h {
            // Fragment (RFC 8200 §4.5): next, reserved, offset 0 and M
            // clear (not fragmenting), identification.
            IP_PROTO_FRAGMENT => exts.extend_from_slice(&[next, 0, 0, 0, 0, 0, 0, 7]),
            // AH (RFC 4302 §2.2): next, payload length 1 (3 words, 12
            // bytes), reserved, SPI, sequence number.
            IP_PROTO_AH => exts.extend_from_slice(&[next, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
            // Hop-by-hop, destination options, routing: next, length 0
            // (8 bytes), six bytes of PadN / routing fields.
            _ => exts.extend_from_slice(&[next, 0, 1, 4, 0, 0, 0, 0]),
        }
    }
    let ip = etherparse::Ipv6Header {
        payload_length: (exts.len() + 20) as u16,
        next_header: etherparse::IpNumber(chain.first().copied().unwrap_or(last)),
        hop_limit: 64,
        source: IP6_A,
        destination: IP6_B,
        ..Default::default()
    };
    let mut out = Vec::new();
    etherparse::Ethernet2Header {
        source: SRC,
        destination: DST,
        ether_type: EtherType::IPV6,
    }
    .write(&mut out)
    .unwrap();
    ip.write(&mut out).unwrap();
    out.extend_from_slice(&exts);
    out.extend_from_slice(&[0; 20]);
    out
}

/// `IPV6_EXTHDR` (1.3.5 §7.2.3.7) against RFC 8200 §4.1's order: a flag
/// per header present, `UNREP` for a repeat, `UNSEQ` out of order.
#[test]
fn ipv6_extension_header_flags() {
    use crate::v13::oxm::ipv6_exthdr::*;
    const H: u8 = IP_PROTO_HOPOPT;
    const D: u8 = IP_PROTO_DSTOPTS;
    const R: u8 = IP_PROTO_ROUTING;
    const F: u8 = IP_PROTO_FRAGMENT;
    const A: u8 = IP_PROTO_AH;
    const T: u8 = IP_PROTO_TCP;
    let cases: &[(&[u8], u8, u16)] = &[
        (&[], T, 0),
        (&[H], T, HOP),
        (&[H, D, R, F, A], T, HOP | DEST | ROUTER | FRAG | AUTH),
        // Destination options before the routing header and again
        // before the upper layer: allowed.
        (&[D, R, D], T, DEST | ROUTER),
        (&[D, D], T, DEST),
        (&[D, D, D], T, DEST | UNREP),
        (&[R, R], T, ROUTER | UNREP),
        (&[F, R], T, FRAG | ROUTER | UNSEQ),
        (&[A, F], T, AUTH | FRAG | UNSEQ),
        // A hop-by-hop header not first: out of order, and the walk
        // stops there.
        (&[R, H, F], T, ROUTER | HOP | UNSEQ),
        (&[H, H], T, HOP | UNREP | UNSEQ),
        // The chain ends in ESP (nothing after it is readable) or in
        // "no next header".
        (&[A], IP_PROTO_ESP, AUTH | ESP),
        (&[H], IP_PROTO_NONXT, HOP | NONEXT),
        (&[], IP_PROTO_NONXT, NONEXT),
    ];
    for &(chain, last, want) in cases {
        let f = ipv6_with_extensions(chain, last);
        let Network::Ipv6(ip) = FlowKey::extract(PortNo(1), &f).network else {
            panic!("{chain:?}: not IPv6")
        };
        assert_eq!(ip.exthdr, want, "{chain:?} then {last}: {:#x}", ip.exthdr);
        if last == T && !chain.iter().skip(1).any(|&h| h == H) {
            assert_eq!(ip.next_header, T, "{chain:?}: walked to the upper layer");
        }
    }
    // A routing header cut short is present but unreadable.
    let mut f = ipv6_with_extensions(&[R], T);
    f.truncate(14 + 40 + 4);
    let Network::Ipv6(ip) = FlowKey::extract(PortNo(1), &f).network else {
        panic!("not IPv6")
    };
    assert_eq!(ip.exthdr, ROUTER);
}

proptest::proptest! {
    /// Any chain of extension headers, cut anywhere: no panic (nor the
    /// out-of-bounds read etherparse's own iterator makes on such chains),
    /// and, uncut, every kind of header walked through has its flag.
    #[test]
    fn any_extension_chain_extracts(
        chain in proptest::collection::vec(proptest::sample::select(vec![
            IP_PROTO_HOPOPT, IP_PROTO_DSTOPTS, IP_PROTO_ROUTING, IP_PROTO_FRAGMENT, IP_PROTO_AH,
        ]), 0..7),
        last in proptest::sample::select(vec![IP_PROTO_TCP, IP_PROTO_ESP, IP_PROTO_NONXT, IP_PROTO_HOPOPT]),
        cut in 0usize..200,
    ) {
        use crate::v13::oxm::ipv6_exthdr as eh;
        let f = ipv6_with_extensions(&chain, last);
        let _ = FlowKey::extract(PortNo(1), &f[..f.len().saturating_sub(cut)]);
        let Network::Ipv6(ip) = FlowKey::extract(PortNo(1), &f).network else {
            panic!("not IPv6")
        };
        // The walk stops at a hop-by-hop header that is not first.
        let walked = chain.iter().enumerate().take_while(|&(i, &h)| i == 0 || h != IP_PROTO_HOPOPT);
        for (_, h) in walked {
            let flag = match *h {
                IP_PROTO_HOPOPT => eh::HOP,
                IP_PROTO_DSTOPTS => eh::DEST,
                IP_PROTO_ROUTING => eh::ROUTER,
                IP_PROTO_FRAGMENT => eh::FRAG,
                _ => eh::AUTH,
            };
            proptest::prop_assert!(ip.exthdr & flag != 0, "{:?} {}: {:#x}", chain, last, ip.exthdr);
        }
    }
}
