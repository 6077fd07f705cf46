//! PBB (IEEE 802.1ah) in the 1.3 datapath (1.3.5 §7.2.3.7 table 12,
//! §7.2.5, §5.10): the I-SID in the lookup key and as a masked match
//! with its `eth_type` prerequisite, `push_pbb`, `pop_pbb` and set-field
//! on the I-SID on frames assembled here byte by byte (not with the
//! switch's own code), the action set's order, re-keying between tables,
//! the errors of flow-mods whose PBB actions or fields lack their
//! prerequisites, and what stays refused once PBB works.

mod common;

use baton_openflow::Version;
use baton_openflow::types::PortNo;
use baton_openflow::v13::action::ActionType;
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::multipart::{MultipartReplyBody, MultipartRequest, MultipartRequestBody};
use baton_openflow::v13::oxm::{OFPVID_PRESENT, Oxm, OxmField, OxmHeader};
use baton_openflow::v13::table_features::{ActionId, TableFeatureProp};
use baton_openflow::v13::{
    Action, Bucket, GroupMod, GroupModCommand, GroupType, Instruction, Message,
};
use baton_switch::action::SetField;
use baton_switch::key::{packet_key, slot};
use baton_switch::rewrite;
use common::of13::*;
use common::*;
use proptest::prelude::*;

const PBB: u16 = 0x88e7;
const MPLS: u16 = 0x8847;
/// Backbone addresses, other than the customer's H1 and H2.
const B_DA: [u8; 6] = [2, 0xbb, 0, 0, 0, 2];
const B_SA: [u8; 6] = [2, 0xbb, 0, 0, 0, 1];

/// An I-TAG TCI: I-PCP (3 bits), I-DEI (1), UCA (1), reserved (3),
/// I-SID (24).
fn itag(pcp: u8, dei: u8, uca: u8, reserved: u8, isid: u32) -> [u8; 4] {
    ((u32::from(pcp) << 29)
        | (u32::from(dei) << 28)
        | (u32::from(uca) << 27)
        | (u32::from(reserved) << 24)
        | isid)
        .to_be_bytes()
}

/// A PBB frame: B-DA, B-SA, an 802.1ad B-TAG (vid, pcp) when `b_tag`
/// says so, ethertype 0x88e7, the I-TAG TCI `tci`, then the customer
/// frame (from its C-DA).
fn pbb(b_da: [u8; 6], b_sa: [u8; 6], b_tag: Option<(u16, u8)>, tci: [u8; 4], c: &[u8]) -> Vec<u8> {
    let mut f = b_da.to_vec();
    f.extend_from_slice(&b_sa);
    if let Some((vid, pcp)) = b_tag {
        f.extend_from_slice(&[0x88, 0xa8]);
        f.extend_from_slice(&((u16::from(pcp) << 13) | vid).to_be_bytes());
    }
    f.extend_from_slice(&PBB.to_be_bytes());
    f.extend_from_slice(&tci);
    f.extend_from_slice(c);
    f
}

/// A customer frame from H1 to H2, with an 802.1Q tag when `vlan` says
/// so: IPv4, IPv6 or ARP (kinds 0 to 2), or IPv4 under one MPLS label
/// stack entry (kind 3).
fn customer(kind: u8, vlan: Option<(u16, u8)>, ttl: u8, body: &[u8]) -> Vec<u8> {
    let l = match kind {
        0 => L3::Ipv4,
        1 => L3::Ipv6,
        _ => L3::Arp,
    };
    if kind == 3 {
        let (_, ip) = l3(L3::Ipv4, ttl, body);
        return eth(vlan, MPLS, &cat(&lse(0x12345, 5, 1, ttl), &ip));
    }
    let (et, payload) = l3(l, ttl, body);
    eth(vlan, et, &payload)
}

/// An IPv4/UDP customer frame from H1 to H2.
fn udp() -> Vec<u8> {
    customer(0, None, 64, &[0xab; 18])
}

fn isid(value: u32, mask: Option<u32>) -> Oxm {
    Oxm::PbbIsid { value, mask }
}

fn set_isid(v: u32) -> Action {
    Action::SetField(isid(v, None))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// push_pbb puts the frame's own addresses, 0x88e7 and an I-TAG (the
    /// outer VLAN tag's PCP as I-PCP, everything else 0) before the whole
    /// frame; the key sees an untagged PBB frame with I-SID 0 and nothing
    /// of the customer's; pop_pbb gives the original back, byte for byte.
    #[test]
    fn push_then_pop_restores_the_frame(
        kind in 0..4u8,
        vlan in vlan(),
        ttl in any::<u8>(),
        body in proptest::collection::vec(any::<u8>(), 0..48),
    ) {
        let original = customer(kind, vlan, ttl, &body);
        let mut f = original.clone();
        rewrite::push_pbb(&mut f, PBB);
        let pcp = vlan.map_or(0, |(_, p)| p);
        prop_assert_eq!(&f, &pbb(H2, H1, None, itag(pcp, 0, 0, 0, 0), &original));
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        prop_assert_eq!(k.get(slot::ETH_TYPE), u64::from(PBB));
        prop_assert_eq!(k.get(slot::VLAN), 0);
        prop_assert_eq!(k.get(slot::PBB_ISID), 0);
        prop_assert_eq!(k.w[3], 0);
        prop_assert_eq!(k.w[4], 0);
        prop_assert_eq!(k.get(slot::IP_PROTO), 0);
        prop_assert_eq!(k.w[slot::IPV6_SRC], 0);
        rewrite::pop_pbb(&mut f);
        prop_assert_eq!(f, original);
    }

    /// A push onto a PBB frame copies its I-SID (and the B-TAG's PCP as
    /// I-PCP); a pop takes the new encapsulation off, and a second pop
    /// the old one with its B-TAG, leaving the customer frame.
    #[test]
    fn push_onto_pbb_copies_the_isid_and_pop_removes_the_b_tag(
        kind in 0..4u8,
        vlan in vlan(),
        b_tag in vlan(),
        tci in (0..8u8, 0..2u8, 0..2u8, 0..8u8, 0..1u32 << 24),
    ) {
        let (pcp, dei, uca, reserved, id) = tci;
        let c = customer(kind, vlan, 9, &[1, 2, 3]);
        let original = pbb(B_DA, B_SA, b_tag, itag(pcp, dei, uca, reserved, id), &c);
        let mut f = original.clone();
        rewrite::push_pbb(&mut f, PBB);
        let b_pcp = b_tag.map_or(0, |(_, p)| p);
        prop_assert_eq!(&f, &pbb(B_DA, B_SA, None, itag(b_pcp, 0, 0, 0, id), &original));
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        prop_assert_eq!(k.get(slot::PBB_ISID), u64::from(id));
        rewrite::pop_pbb(&mut f);
        prop_assert_eq!(&f, &original);
        rewrite::pop_pbb(&mut f);
        prop_assert_eq!(f, c);
    }

    /// Set-field on the I-SID changes those 24 bits of the I-TAG and no
    /// other bit of the frame; the key follows. Frames that are not PBB
    /// are left alone by it and by pop_pbb.
    #[test]
    fn set_field_writes_exactly_the_isid_bits(
        kind in 0..4u8,
        vlan in vlan(),
        b_tag in vlan(),
        tci in (0..8u8, 0..2u8, 0..2u8, 0..8u8, 0..1u32 << 24),
        new in 0..1u32 << 24,
    ) {
        let (pcp, dei, uca, reserved, id) = tci;
        let c = customer(kind, vlan, 9, &[4; 7]);
        let mut f = pbb(B_DA, B_SA, b_tag, itag(pcp, dei, uca, reserved, id), &c);
        rewrite::set_field(&mut f, &SetField::PbbIsid(new));
        prop_assert_eq!(&f, &pbb(B_DA, B_SA, b_tag, itag(pcp, dei, uca, reserved, new), &c));
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        prop_assert_eq!(k.get(slot::PBB_ISID), u64::from(new));
        let mut g = c.clone();
        rewrite::set_field(&mut g, &SetField::PbbIsid(new));
        rewrite::pop_pbb(&mut g);
        prop_assert_eq!(g, c);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A masked pbb_isid match takes exactly the PBB frames whose I-SID
    /// agrees with it under the mask (with or without a B-TAG).
    #[test]
    fn isid_matches_select_what_a_masked_comparison_says(
        id in 0..1u32 << 24,
        value in 0..1u32 << 24,
        mask in prop_oneof![0..1u32 << 24, Just(0xff_ffff), Just(0)],
        near in any::<bool>(),
        exact in any::<bool>(),
        b_tag in vlan(),
    ) {
        // Half the time the flow's value agrees with the packet's.
        let value = if near { id } else { value };
        let mask = if exact { 0xff_ffff } else { mask };
        let value = value & mask;
        let mut h = Harness::new(Version::V13, 3);
        let m = if exact { None } else { Some(mask) };
        ok(&mut h, add(0, 2, vec![Oxm::EthType(PBB), isid(value, m)], vec![apply(vec![out(2)])]));
        ok(&mut h, add(0, 1, vec![], vec![apply(vec![out(3)])]));
        let want = if id & mask == value { 2 } else { 3 };
        let f = pbb(B_DA, B_SA, b_tag, itag(7, 1, 1, 0, id), &udp());
        prop_assert_eq!(h.forward(1, &f), [want]);
    }
}

/// Table 0 pushes PBB and sets the I-SID; table 1 matches that I-SID,
/// sends a copy out and pops; table 2 matches the UDP port of the
/// customer frame, which comes out as it went in.
#[test]
fn push_set_match_pop_across_tables_gives_the_original_frame() {
    let mut h = Harness::new(Version::V13, 3);
    ok(
        &mut h,
        add(
            0,
            1,
            vec![Oxm::InPort(PortNo(1))],
            vec![
                apply(vec![Action::PushPbb(PBB), set_isid(0x12_3456)]),
                Instruction::GotoTable(1),
            ],
        ),
    );
    ok(
        &mut h,
        add(
            1,
            1,
            vec![Oxm::EthType(PBB), isid(0x12_3456, None)],
            vec![
                apply(vec![out(3), Action::PopPbb]),
                Instruction::GotoTable(2),
            ],
        ),
    );
    ok(&mut h, udp_53_to(2, 2));
    for vlan in [None, Some((7, 5))] {
        let f = customer(0, vlan, 64, &[0xab; 18]);
        h.inject(1, &f);
        let pcp = vlan.map_or(0, |(_, p)| p);
        assert_eq!(
            h.out(3),
            [pbb(H2, H1, None, itag(pcp, 0, 0, 0, 0x12_3456), &f)]
        );
        // The customer's own VLAN tag, inside the I-TAG, comes back.
        assert_eq!(h.out(2), [f]);
    }
}

/// 1.3.5 §5.10: the action set pushes MPLS, then PBB, then VLAN, so the
/// MPLS entry ends up in the customer frame and the VLAN tag outside, as
/// a B-TAG, whatever order the actions were written in.
#[test]
fn the_action_set_pushes_mpls_then_pbb_then_vlan() {
    let mut h = switch_with_flow(
        vec![Oxm::EthType(0x0800)],
        vec![Instruction::WriteActions(vec![
            Action::PushVlan(0x88a8),
            Action::SetField(Oxm::VlanVid {
                value: OFPVID_PRESENT | 12,
                mask: None,
            }),
            Action::PushPbb(PBB),
            Action::PushMpls(MPLS),
            out(2),
        ])],
    );
    let (et, ip) = l3(L3::Ipv4, 40, &[0xab; 18]);
    h.inject(1, &eth(None, et, &ip));
    let inner = eth(None, MPLS, &cat(&lse(0, 0, 1, 40), &ip));
    assert_eq!(
        h.out(2),
        [pbb(H2, H1, Some((12, 0)), itag(0, 0, 0, 0, 0), &inner)]
    );
}

/// The action set pops the outer VLAN tag (the B-TAG) before PBB, so the
/// customer frame keeps its own tag; written the other way round.
#[test]
fn the_action_set_pops_the_b_tag_before_pbb() {
    let mut h = switch_with_flow(
        vec![Oxm::EthType(PBB)],
        vec![Instruction::WriteActions(vec![
            Action::PopPbb,
            Action::PopVlan,
            out(2),
        ])],
    );
    let c = customer(1, Some((33, 2)), 7, &[5; 9]);
    h.inject(1, &pbb(B_DA, B_SA, Some((4, 1)), itag(1, 0, 0, 0, 99), &c));
    assert_eq!(h.out(2), [c]);
}

#[test]
fn a_group_bucket_pushes_pbb() {
    let mut h = Harness::new(Version::V13, 2);
    via_indirect_group(
        &mut h,
        vec![Action::PushPbb(PBB), set_isid(0xff_ffff), out(2)],
    );
    let c = customer(2, None, 0, &[]);
    h.inject(1, &c);
    assert_eq!(
        h.out(2),
        [pbb(H2, H1, None, itag(0, 0, 0, 0, 0xff_ffff), &c)]
    );
}

#[test]
fn pbb_flow_mods_without_prerequisites_are_refused() {
    let mut h = Harness::new(Version::V13, 2);
    let ipv4 = || vec![Oxm::EthType(0x0800)];
    let pbb = || vec![Oxm::EthType(PBB)];
    let cases: Vec<Case> = vec![
        // Matches.
        (vec![isid(1, None)], vec![], Some(BAD_PREREQ)),
        (
            vec![Oxm::EthType(MPLS), isid(1, Some(1))],
            vec![],
            Some(BAD_PREREQ),
        ),
        (
            vec![Oxm::EthType(PBB), isid(3, Some(1))],
            vec![],
            Some(BAD_WILDCARDS),
        ),
        (
            vec![Oxm::EthType(PBB), isid(0x10_0000, Some(0xf0_0000))],
            vec![],
            None,
        ),
        // Push: the I-TAG's ethertype, nothing else needed.
        (vec![], vec![Action::PushPbb(0x8100)], Some(BAD_ARGUMENT)),
        (vec![], vec![Action::PushPbb(PBB)], None),
        // Actions that need a PBB packet.
        (vec![], vec![Action::PopPbb], Some(MATCH_INCONSISTENT)),
        (ipv4(), vec![Action::PopPbb], Some(MATCH_INCONSISTENT)),
        (ipv4(), vec![set_isid(1)], Some(MATCH_INCONSISTENT)),
        (pbb(), vec![Action::PopPbb], None),
        (pbb(), vec![set_isid(0xff_ffff)], None),
        // The wire holds 24 bits of I-SID, so a value beyond them cannot
        // arrive (the match13 and action unit tests check it); a mask on
        // a set-field can.
        (
            pbb(),
            vec![Action::SetField(isid(1, Some(1)))],
            Some(BAD_SET_ARGUMENT),
        ),
        // An earlier push makes the packet PBB, untagged, with none of
        // the customer's fields; a pop leaves a packet the match says
        // nothing of.
        (ipv4(), vec![Action::PushPbb(PBB), set_isid(5)], None),
        (
            vec![Oxm::EthType(MPLS)],
            vec![Action::PushPbb(PBB), Action::PopPbb, Action::PushMpls(MPLS)],
            None,
        ),
        (
            vec![Oxm::EthType(0x0800), Oxm::IpProto(17)],
            vec![Action::PushPbb(PBB), Action::SetField(Oxm::UdpDst(1))],
            Some(MATCH_INCONSISTENT),
        ),
        (
            vec![
                Oxm::VlanVid {
                    value: OFPVID_PRESENT | 5,
                    mask: None,
                },
                Oxm::EthType(0x0800),
            ],
            vec![Action::PushPbb(PBB), Action::SetField(Oxm::VlanPcp(1))],
            Some(MATCH_INCONSISTENT),
        ),
        (
            pbb(),
            vec![Action::PopPbb, set_isid(1)],
            Some(MATCH_INCONSISTENT),
        ),
        (
            vec![Oxm::EthType(PBB), isid(7, None)],
            vec![
                Action::PopPbb,
                Action::SetField(Oxm::Ipv4Src {
                    value: [10, 0, 0, 9].into(),
                    mask: None,
                }),
            ],
            Some(MATCH_INCONSISTENT),
        ),
        (
            pbb(),
            vec![Action::PopPbb, Action::PushPbb(PBB), set_isid(2)],
            None,
        ),
        // Metadata and the input port survive a pop.
        (
            vec![Oxm::InPort(PortNo(1)), Oxm::EthType(PBB)],
            vec![
                Action::PopPbb,
                Action::SetField(Oxm::EthDst {
                    value: baton_openflow::types::MacAddr(H3),
                    mask: None,
                }),
            ],
            None,
        ),
    ];
    check_cases(&mut h, cases);
}

/// With PBB in, every 1.3 action type runs; what is refused is
/// set-field on the fields the switch cannot or will not set.
#[test]
fn what_stays_refused_after_pbb() {
    let mut h = Harness::new(Version::V13, 2);
    let ipv6 = || vec![Oxm::EthType(0x86dd)];
    let set = |o: Oxm| vec![Action::SetField(o)];
    let exthdr = || Oxm::Ipv6Exthdr {
        value: 1,
        mask: None,
    };
    let cases: Vec<Case> = vec![
        (ipv6(), set(exthdr()), Some(BAD_SET_TYPE)),
        (ipv6(), set(Oxm::EthType(0x0800)), Some(BAD_SET_TYPE)),
        (ipv6(), set(Oxm::InPort(PortNo(2))), Some(BAD_SET_TYPE)),
        (
            vec![Oxm::InPort(PortNo(2)), Oxm::EthType(0x86dd)],
            set(Oxm::InPhyPort(PortNo(2))),
            Some(BAD_SET_TYPE),
        ),
        (
            ipv6(),
            set(Oxm::Metadata {
                value: 1,
                mask: None,
            }),
            Some(BAD_SET_TYPE),
        ),
        (ipv6(), set(Oxm::IpProto(6)), Some(MATCH_INCONSISTENT)),
        // The MPLS BoS bit is settable.
        (vec![Oxm::EthType(MPLS)], set(Oxm::MplsBos(0)), None),
    ];
    check_cases(&mut h, cases);
    // Outside a flow (a group bucket) ip_proto is an unknown set-field.
    let r = h.send13(Message::GroupMod(GroupMod {
        command: GroupModCommand::Add,
        group_type: GroupType::All,
        group_id: 1,
        buckets: vec![Bucket {
            weight: 0,
            watch_port: PortNo::ANY,
            watch_group: group_id::ANY,
            actions: set(Oxm::IpProto(6)),
        }],
    }));
    assert_eq!(errors(&r), [BAD_SET_TYPE]);
}

#[test]
fn table_and_group_features_list_pbb() {
    let mut h = Harness::new(Version::V13, 1);
    let tables = table_features(&mut h);
    assert!(!tables.is_empty());
    let has = |ids: &[baton_openflow::v13::table_features::OxmId], masked: bool| {
        let want = OxmHeader::basic(OxmField::PbbIsid, masked);
        ids.iter().any(|i| i.header == want)
    };
    let mut n_actions = 0;
    for t in &tables {
        let mut seen = 0;
        for p in &t.properties {
            match p {
                TableFeatureProp::Match(ids) => {
                    assert!(has(ids, true), "{p:?}");
                    seen += 1;
                }
                TableFeatureProp::ApplySetfield(ids) | TableFeatureProp::WriteSetfield(ids) => {
                    assert!(has(ids, false), "{p:?}");
                    seen += 1;
                }
                TableFeatureProp::ApplyActions(ids) | TableFeatureProp::WriteActions(ids) => {
                    for a in [ActionType::PushPbb, ActionType::PopPbb] {
                        assert!(ids.contains(&ActionId::Standard(a)), "{a:?}");
                    }
                    n_actions = ids.len();
                    seen += 1;
                }
                _ => {}
            }
        }
        assert_eq!(seen, 5);
    }
    let replies = h.send13(Message::MultipartRequest(MultipartRequest::new(
        MultipartRequestBody::GroupFeatures,
    )));
    let [Message::MultipartReply(r)] = &replies[..] else {
        panic!("{replies:?}")
    };
    let MultipartReplyBody::GroupFeatures(g) = &r.body else {
        panic!("{r:?}")
    };
    for bits in g.actions {
        // OFPAT_PUSH_PBB (26) and OFPAT_POP_PBB (27), and as many
        // actions as the tables list.
        assert_eq!(bits & (3 << 26), 3 << 26, "{bits:#x}");
        assert_eq!(bits.count_ones() as usize, n_actions, "{bits:#x}");
    }
}
