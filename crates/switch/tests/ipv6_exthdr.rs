//! `ipv6_exthdr` (1.3.5 §7.2.3.7, `OFPXMT_OFB_IPV6_EXTHDR`): flows match
//! the extension headers an IPv6 packet has, with a mask, on frames
//! built by etherparse (an independent writer of the headers).

mod common;

use baton_openflow::Version;
use baton_openflow::v13::oxm::{Oxm, ipv6_exthdr as eh};
use common::of13::*;
use common::*;
use etherparse::{
    IpFragOffset, IpHeaders, IpNumber, Ipv6Extensions, Ipv6FragmentHeader, Ipv6Header,
    Ipv6RawExtHeader, Ipv6RoutingExtensions, PacketBuilder,
};

fn raw() -> Ipv6RawExtHeader {
    Ipv6RawExtHeader::new_raw(IpNumber::UDP, &[1, 4, 0, 0, 0, 0]).unwrap()
}

/// A UDP datagram from H1 to H2 over IPv6 with extension headers `exts`.
fn frame(exts: Ipv6Extensions) -> Vec<u8> {
    let ip = Ipv6Header {
        hop_limit: 64,
        source: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        destination: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        ..Default::default()
    };
    let mut out = Vec::new();
    PacketBuilder::ethernet2(H1, H2)
        .ip(IpHeaders::Ipv6(ip, exts))
        .udp(5000, 53)
        .write(&mut out, &[0; 8])
        .unwrap();
    out
}

fn exthdr(value: u16, mask: Option<u16>) -> Vec<Oxm> {
    vec![Oxm::EthType(0x86dd), Oxm::Ipv6Exthdr { value, mask }]
}

#[test]
fn flows_match_the_extension_headers_a_packet_has() {
    let mut h = Harness::new(Version::V13, 5);
    // Any packet with a hop-by-hop header to port 2; exactly a routing
    // header with a destination options header after it to port 3; no
    // extension header to port 4; anything else misses (and is dropped).
    ok(
        &mut h,
        add(
            0,
            30,
            exthdr(eh::HOP, Some(eh::HOP)),
            vec![apply(vec![out(2)])],
        ),
    );
    ok(
        &mut h,
        add(
            0,
            20,
            exthdr(eh::ROUTER | eh::DEST, None),
            vec![apply(vec![out(3)])],
        ),
    );
    ok(
        &mut h,
        add(0, 10, exthdr(0, None), vec![apply(vec![out(4)])]),
    );

    let none = Ipv6Extensions::default();
    let hop = Ipv6Extensions {
        hop_by_hop_options: Some(raw()),
        ..Default::default()
    };
    let hop_frag = Ipv6Extensions {
        hop_by_hop_options: Some(raw()),
        fragment: Some(Ipv6FragmentHeader::new(
            IpNumber::UDP,
            IpFragOffset::ZERO,
            false,
            7,
        )),
        ..Default::default()
    };
    let routed = Ipv6Extensions {
        routing: Some(Ipv6RoutingExtensions {
            routing: raw(),
            final_destination_options: Some(raw()),
        }),
        ..Default::default()
    };
    let routed_only = Ipv6Extensions {
        routing: Some(Ipv6RoutingExtensions {
            routing: raw(),
            final_destination_options: None,
        }),
        ..Default::default()
    };
    for (name, exts, to) in [
        ("none", none, vec![4]),
        ("hop-by-hop", hop, vec![2]),
        ("hop-by-hop and fragment", hop_frag, vec![2]),
        ("routing then destination options", routed, vec![3]),
        ("routing alone", routed_only, vec![]),
    ] {
        assert_eq!(h.forward(1, &frame(exts)), to, "{name}");
    }
}

#[test]
fn ipv6_exthdr_is_listed_as_maskable_and_not_settable() {
    use baton_openflow::v13::oxm::{OxmField, OxmHeader};
    use baton_openflow::v13::table_features::{OxmId, TableFeatureProp as P};
    let mut h = Harness::new(Version::V13, 1);
    let field = |ids: &[OxmId], masked: bool| {
        let want = OxmHeader::basic(OxmField::Ipv6Exthdr, masked);
        ids.iter().any(|i| i.header == want)
    };
    let tables = table_features(&mut h);
    assert!(!tables.is_empty());
    for t in tables {
        let (mut matched, mut set) = (false, false);
        for p in &t.properties {
            match p {
                P::Match(ids) => matched |= field(ids, true),
                P::ApplySetfield(ids) | P::WriteSetfield(ids) => {
                    set |= field(ids, false) || field(ids, true)
                }
                _ => {}
            }
        }
        assert!(matched && !set, "table {}", t.table_id);
    }
}
