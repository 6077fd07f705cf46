//! Sparse matches written by both versions: decoded by each version's
//! decoder, they are the fields asked for.

use super::*;
use crate::v10::ofmatch::{OFPFW_NW_DST_MASK, OFPFW_NW_SRC_MASK};

fn ip_fields() -> MatchFields {
    MatchFields {
        in_port: Some(PortNo(1)),
        eth_src: Some(MAC),
        eth_dst: None,
        vlan: Some(VlanMatch::Tagged {
            vid: 10,
            pcp: Some(2),
        }),
        net: NetMatch::Ipv4 {
            src: Some(Ipv4Prefix {
                addr: Ipv4Addr::new(10, 1, 2, 3),
                len: 8,
            }),
            dst: Some(Ipv4Prefix::host(Ipv4Addr::new(192, 168, 0, 1))),
            dscp: Some(10),
            l4: L4Match::Tcp {
                src: None,
                dst: Some(22),
            },
        },
    }
}

#[test]
fn match_fields_v10() {
    assert_eq!(MatchSpec::all().to_match10(), Match10::ALL);
    let m = ip_fields().to_match10();
    let expect_wild = crate::v10::ofmatch::OFPFW_DL_DST
        | crate::v10::ofmatch::OFPFW_TP_SRC
        | (24 << crate::v10::ofmatch::OFPFW_NW_SRC_SHIFT);
    assert_eq!(m.wildcards, expect_wild);
    assert_eq!(m.in_port, PortNo(1));
    assert_eq!((m.dl_vlan, m.dl_vlan_pcp), (10, 2));
    assert_eq!(m.dl_type, 0x0800);
    assert_eq!(m.nw_src, Ipv4Addr::new(10, 0, 0, 0));
    assert_eq!(m.nw_dst, Ipv4Addr::new(192, 168, 0, 1));
    assert_eq!((m.nw_tos, m.nw_proto, m.tp_dst), (40, 6, 22));
    assert_eq!(m.wildcards & OFPFW_NW_DST_MASK, 0);

    // ARP: opcode in nw_proto, spa/tpa in nw_src/nw_dst.
    let arp = MatchFields {
        net: NetMatch::Arp {
            op: Some(2),
            spa: None,
            tpa: Some(Ipv4Prefix::host(Ipv4Addr::new(10, 0, 0, 1))),
        },
        vlan: Some(VlanMatch::Untagged),
        ..MatchFields::ANY
    };
    let m = arp.to_match10();
    assert_eq!(m.dl_vlan, 0xffff);
    assert_eq!((m.dl_type, m.nw_proto), (0x0806, 2));
    assert_eq!(m.nw_dst_prefix_len(), 32);
    assert_eq!(m.nw_src_prefix_len(), 0);
    assert_eq!(m.wildcards & (OFPFW_DL_TYPE | OFPFW_NW_PROTO), 0);
    assert_ne!(m.wildcards & OFPFW_NW_SRC_MASK, 0);
    assert_ne!(
        m.wildcards & (OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_TP_DST),
        0
    );
}

#[test]
fn match_fields_v13() {
    let mut oxms = Vec::new();
    ip_fields().for_each_oxm(|o| oxms.push(o));
    assert_eq!(
        oxms,
        vec![
            Oxm::InPort(PortNo(1)),
            Oxm::EthSrc {
                value: MAC,
                mask: None
            },
            Oxm::EthType(0x0800),
            Oxm::VlanVid {
                value: 0x1000 | 10,
                mask: None
            },
            Oxm::VlanPcp(2),
            Oxm::IpDscp(10),
            Oxm::IpProto(6),
            Oxm::Ipv4Src {
                value: Ipv4Addr::new(10, 0, 0, 0),
                mask: Some(Ipv4Addr::new(255, 0, 0, 0))
            },
            Oxm::Ipv4Dst {
                value: Ipv4Addr::new(192, 168, 0, 1),
                mask: None
            },
            Oxm::TcpDst(22),
        ]
    );
    // Through a real FLOW_MOD and the 1.3 decoder.
    let mut out = Vec::new();
    let flow = FlowSpec::new(MatchSpec::Fields(ip_fields()), &[]);
    encode_flow_add(&mut out, Version::V13, Xid(1), &flow);
    let (_, m) = decode13(&out);
    let v13::Message::FlowMod(fm) = m else {
        panic!("{m:?}")
    };
    assert_eq!(fm.match_.fields, oxms);
    // A /0 prefix is no field at all; ICMP type/code.
    let mf = MatchFields {
        net: NetMatch::Ipv4 {
            src: Some(Ipv4Prefix {
                addr: Ipv4Addr::new(1, 1, 1, 1),
                len: 0,
            }),
            dst: None,
            dscp: None,
            l4: L4Match::Icmp {
                icmp_type: Some(8),
                code: None,
            },
        },
        ..MatchFields::ANY
    };
    let mut oxms = Vec::new();
    mf.for_each_oxm(|o| oxms.push(o));
    assert_eq!(
        oxms,
        vec![Oxm::EthType(0x0800), Oxm::IpProto(1), Oxm::Icmpv4Type(8)]
    );
    let m = mf.to_match10();
    assert_eq!((m.nw_proto, m.tp_src), (1, 8));
    assert_eq!(m.nw_src_prefix_len(), 0);
}

#[test]
fn ipv4_prefix() {
    let p = Ipv4Prefix {
        addr: Ipv4Addr::new(10, 1, 2, 3),
        len: 20,
    };
    assert_eq!(p.mask(), Ipv4Addr::new(255, 255, 240, 0));
    assert_eq!(p.network(), Ipv4Addr::new(10, 1, 0, 0));
    let all = Ipv4Prefix { len: 40, ..p };
    assert_eq!(all.mask(), Ipv4Addr::BROADCAST);
    assert_eq!(Ipv4Prefix { len: 0, ..p }.mask(), Ipv4Addr::UNSPECIFIED);
}

/// The L2 match of a frame has the port, the addresses and the VLAN the
/// frame's parse (etherparse's, through `FlowKey::extract`) has, and
/// nothing else, in both versions.
#[test]
fn the_l2_match_of_a_frame() {
    use crate::packet::FlowKey;
    use crate::v10::ofmatch::{OFPFW_ALL, OFPFW_DL_DST, OFPFW_DL_VLAN};
    use etherparse::{PacketBuilder, VlanId};
    let (a, b) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let mut plain = Vec::new();
    PacketBuilder::ethernet2(a, b)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(1, 2)
        .write(&mut plain, &[0; 4])
        .unwrap();
    let mut tagged = Vec::new();
    PacketBuilder::ethernet2(a, b)
        .single_vlan(VlanId::try_new(300).unwrap())
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(1, 2)
        .write(&mut tagged, &[0; 4])
        .unwrap();
    let mut s_tagged = tagged.clone();
    s_tagged[12..14].copy_from_slice(&0x88a8u16.to_be_bytes());
    for (frame, vid) in [(&plain, None), (&tagged, Some(300)), (&s_tagged, Some(300))] {
        let k = FlowKey::extract(PortNo(3), frame);
        let Some(MatchSpec::L2(l2)) = MatchSpec::l2_frame(PortNo(3), frame) else {
            panic!("an L2 match")
        };
        assert_eq!(
            (l2.in_port, l2.eth_src, l2.eth_dst, l2.vid),
            (k.in_port, k.eth_src, k.eth_dst, vid)
        );
        assert_eq!(k.vlan.map(|t| t.vid), vid);
        let m = MatchSpec::L2(l2).to_match10();
        assert_eq!(
            m.wildcards & OFPFW_ALL,
            OFPFW_ALL & !(OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_DL_DST | OFPFW_DL_VLAN)
        );
        let mut oxms = Vec::new();
        MatchSpec::L2(l2).for_each_oxm(|o| oxms.push(o));
        assert_eq!(oxms.len(), 4, "{oxms:?}");
    }
    assert_eq!(MatchSpec::l2_frame(PortNo(1), &plain[..11]), None);
}

proptest::proptest! {
    /// The L2 match is written in both versions exactly as its sparse
    /// form is, whatever the frame.
    #[test]
    fn the_l2_match_is_written_as_its_sparse_form(
        mut frame in proptest::collection::vec(proptest::num::u8::ANY, 0..24),
        tpid in proptest::sample::select(vec![0x8100u16, 0x88a8, 0x0800, 0x9100]),
        port in proptest::num::u32::ANY,
    ) {
        if frame.len() >= 14 {
            frame[12..14].copy_from_slice(&tpid.to_be_bytes());
        }
        let Some(l2) = MatchSpec::l2_frame(PortNo(port), &frame) else {
            proptest::prop_assert!(frame.len() < 12);
            return Ok(());
        };
        let MatchSpec::L2(fields) = l2 else { panic!("an L2 match") };
        let sparse = MatchSpec::Fields(fields.fields());
        proptest::prop_assert_eq!(l2.to_match10(), sparse.to_match10());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        l2.emit_oxm_match(&mut a);
        sparse.emit_oxm_match(&mut b);
        proptest::prop_assert_eq!(a, b);
    }
}
