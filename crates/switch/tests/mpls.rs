//! MPLS in the 1.3 datapath (1.3.5 §7.2.3.7 table 12, §7.2.5, §5.10):
//! the label stack entry's fields in the lookup key, the push, pop, TTL
//! and set-field actions on frames assembled here byte by byte (not with
//! the switch's own code), the action set's order, re-keying between
//! tables, and the errors of flow-mods whose MPLS actions or fields lack
//! their prerequisites.

mod common;

use baton_openflow::Version;
use baton_openflow::switch_config::SwitchConfig;
use baton_openflow::types::PortNo;
use baton_openflow::v13::action::ActionType;
use baton_openflow::v13::messages::AsyncConfig;
use baton_openflow::v13::oxm::{OFPVID_PRESENT, Oxm, OxmField, OxmHeader};
use baton_openflow::v13::table_features::{ActionId, TableFeatureProp};
use baton_openflow::v13::{Action, Instruction, Message, PacketInReason};
use baton_switch::action::SetField;
use baton_switch::key::{Key, packet_key, slot};
use baton_switch::rewrite;
use common::of13::*;
use common::*;
use proptest::prelude::*;

const MPLS: u16 = 0x8847;
const MPLS_MC: u16 = 0x8848;

/// An IPv4/UDP packet under one label stack entry.
fn mpls_udp(vlan: Option<(u16, u8)>, label: u32, tc: u8, bos: u8, ttl: u8) -> Vec<u8> {
    let (_, ip) = l3(L3::Ipv4, 64, &[0xab; 18]);
    eth(vlan, MPLS, &cat(&lse(label, tc, bos, ttl), &ip))
}

fn l3_kind() -> impl Strategy<Value = L3> {
    prop_oneof![Just(L3::Ipv4), Just(L3::Ipv6), Just(L3::Arp)]
}

fn mpls_type() -> impl Strategy<Value = u16> {
    prop_oneof![Just(MPLS), Just(MPLS_MC)]
}

fn mpls_fields(k: &Key) -> (u64, u64, u64) {
    (
        k.get(slot::MPLS_LABEL),
        k.get(slot::MPLS_TC),
        k.get(slot::MPLS_BOS),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// push_mpls puts label 0, TC 0, BoS 1 and the IP TTL (64 without
    /// one) after the VLAN tag; pop_mpls with the old ethertype gives the
    /// original frame back, byte for byte.
    #[test]
    fn push_then_pop_restores_the_frame(
        kind in l3_kind(),
        vlan in vlan(),
        ttl in any::<u8>(),
        body in proptest::collection::vec(any::<u8>(), 0..48),
        t in mpls_type(),
    ) {
        let (et, payload) = l3(kind, ttl, &body);
        let original = eth(vlan, et, &payload);
        let mut f = original.clone();
        rewrite::push_mpls(&mut f, t);
        let want_ttl = if kind == L3::Arp || ttl == 0 { 64 } else { ttl };
        prop_assert_eq!(&f, &eth(vlan, t, &cat(&lse(0, 0, 1, want_ttl), &payload)));
        // The key sees the entry and nothing under it.
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        prop_assert_eq!(k.get(slot::ETH_TYPE), u64::from(t));
        prop_assert_eq!(mpls_fields(&k), (0, 0, 1));
        prop_assert_eq!(k.get(slot::IP_PROTO), 0);
        prop_assert_eq!(k.get(slot::TP_DST), 0);
        prop_assert_eq!(k.w[slot::IPV6_SRC], 0);
        rewrite::pop_mpls(&mut f, et);
        prop_assert_eq!(f, original);
    }

    /// A push onto an MPLS frame copies the outer entry's label, TC and
    /// TTL, with BoS 0; a pop takes it off again.
    #[test]
    fn push_onto_mpls_copies_the_outer_entry(
        vlan in vlan(),
        label in 0..1u32 << 20,
        tc in 0..8u8,
        bos in 0..2u8,
        ttl in any::<u8>(),
        outer in mpls_type(),
        t in mpls_type(),
    ) {
        let (_, ip) = l3(L3::Ipv4, 9, &[1, 2, 3]);
        let inner = cat(&lse(label, tc, bos, ttl), &ip);
        let original = eth(vlan, outer, &inner);
        let mut f = original.clone();
        rewrite::push_mpls(&mut f, t);
        prop_assert_eq!(&f, &eth(vlan, t, &cat(&lse(label, tc, 0, ttl), &inner)));
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        prop_assert_eq!(mpls_fields(&k), (u64::from(label), u64::from(tc), 0));
        rewrite::pop_mpls(&mut f, outer);
        prop_assert_eq!(f, original);
    }

    /// Set-field on the label, TC or BoS changes those bits of the outer
    /// entry and no other bit of the frame; the key follows.
    #[test]
    fn set_field_writes_exactly_the_fields_bits(
        vlan in vlan(),
        label in 0..1u32 << 20,
        tc in 0..8u8,
        bos in 0..2u8,
        ttl in any::<u8>(),
        which in 0..3u8,
        v in any::<u32>(),
    ) {
        let (_, ip) = l3(L3::Ipv6, 9, &[7; 5]);
        let inner = cat(&lse(9, 1, 1, 2), &ip);
        let mut f = eth(vlan, MPLS, &cat(&lse(label, tc, bos, ttl), &inner));
        let (s, want) = match which {
            0 => {
                let v = v & 0xf_ffff;
                (SetField::MplsLabel(v), lse(v, tc, bos, ttl))
            }
            1 => {
                let v = (v & 7) as u8;
                (SetField::MplsTc(v), lse(label, v, bos, ttl))
            }
            _ => {
                let v = (v & 1) as u8;
                (SetField::MplsBos(v), lse(label, tc, v, ttl))
            }
        };
        rewrite::set_field(&mut f, &s);
        prop_assert_eq!(&f, &eth(vlan, MPLS, &cat(&want, &inner)));
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        let w = u32::from_be_bytes(want);
        prop_assert_eq!(
            mpls_fields(&k),
            (u64::from(w >> 12), u64::from((w >> 9) & 7), u64::from((w >> 8) & 1))
        );
    }

    /// dec_mpls_ttl decrements the outer entry's TTL, and reports a TTL of
    /// 0 or 1 (leaving the frame as it was); set_mpls_ttl writes it.
    #[test]
    fn mpls_ttl_actions_touch_only_the_outer_ttl(
        vlan in vlan(),
        label in 0..1u32 << 20,
        ttl in any::<u8>(),
        new_ttl in any::<u8>(),
    ) {
        let (_, ip) = l3(L3::Ipv4, 33, &[]);
        let inner = cat(&lse(5, 0, 1, 200), &ip);
        let original = eth(vlan, MPLS, &cat(&lse(label, 3, 0, ttl), &inner));
        let mut f = original.clone();
        let ok = rewrite::dec_mpls_ttl(&mut f);
        if ttl > 1 {
            prop_assert!(ok);
            prop_assert_eq!(&f, &eth(vlan, MPLS, &cat(&lse(label, 3, 0, ttl - 1), &inner)));
        } else {
            prop_assert!(!ok);
            prop_assert_eq!(&f, &original);
        }
        rewrite::set_mpls_ttl(&mut f, new_ttl);
        prop_assert_eq!(&f, &eth(vlan, MPLS, &cat(&lse(label, 3, 0, new_ttl), &inner)));
    }

    /// The MPLS actions leave frames without MPLS alone.
    #[test]
    fn mpls_actions_ignore_frames_without_mpls(
        kind in l3_kind(),
        vlan in vlan(),
        ttl in any::<u8>(),
    ) {
        let (et, payload) = l3(kind, ttl, &[1, 2, 3, 4]);
        let original = eth(vlan, et, &payload);
        let mut f = original.clone();
        rewrite::pop_mpls(&mut f, 0x0800);
        prop_assert!(rewrite::dec_mpls_ttl(&mut f));
        rewrite::set_mpls_ttl(&mut f, 1);
        rewrite::set_field(&mut f, &SetField::MplsLabel(7));
        rewrite::set_field(&mut f, &SetField::MplsTc(7));
        rewrite::set_field(&mut f, &SetField::MplsBos(0));
        prop_assert_eq!(f, original);
    }
}

#[test]
fn the_key_has_the_outer_entry_and_no_network_fields() {
    for vlan in [None, Some((10, 3))] {
        let f = mpls_udp(vlan, 0xabcde, 5, 1, 17);
        let k = packet_key(Version::V13, PortNo(1), &f, 0);
        assert_eq!(k.get(slot::ETH_TYPE), u64::from(MPLS));
        assert_eq!(mpls_fields(&k), (0xabcde, 5, 1));
        assert_eq!(k.get(slot::IP_PROTO), 0);
        assert_eq!(k.get(slot::IP_DSCP), 0);
        assert_eq!(k.w[4], 0);
        // 1.0 has no MPLS fields.
        let k10 = packet_key(Version::V10, PortNo(1), &f, 0);
        assert_eq!(mpls_fields(&k10), (0, 0, 0));
    }
    // A truncated entry gives no MPLS fields.
    let f = eth(None, MPLS, &[0xff, 0xff]);
    let k = packet_key(Version::V13, PortNo(1), &f, 0);
    assert_eq!(mpls_fields(&k), (0, 0, 0));
}

#[test]
fn matches_on_label_tc_and_bos_select_packets() {
    let mut h = Harness::new(Version::V13, 5);
    let et = Oxm::EthType(MPLS);
    ok(
        &mut h,
        add(
            0,
            30,
            vec![et.clone(), Oxm::MplsLabel(100)],
            vec![apply(vec![out(2)])],
        ),
    );
    ok(
        &mut h,
        add(
            0,
            20,
            vec![et.clone(), Oxm::MplsTc(5)],
            vec![apply(vec![out(3)])],
        ),
    );
    ok(
        &mut h,
        add(0, 10, vec![et, Oxm::MplsBos(0)], vec![apply(vec![out(4)])]),
    );
    ok(&mut h, add(0, 0, vec![], vec![apply(vec![out(5)])]));
    assert_eq!(h.forward(1, &mpls_udp(None, 100, 5, 0, 64)), [2]);
    assert_eq!(h.forward(1, &mpls_udp(Some((7, 0)), 100, 0, 1, 64)), [2]);
    assert_eq!(h.forward(1, &mpls_udp(None, 101, 5, 0, 64)), [3]);
    assert_eq!(h.forward(1, &mpls_udp(None, 101, 4, 0, 64)), [4]);
    assert_eq!(h.forward(1, &mpls_udp(None, 101, 4, 1, 64)), [5]);
    // Multicast MPLS is another ethertype; an IPv4 packet whose address
    // bits would read as label 100 is not MPLS.
    let mut mc = mpls_udp(None, 100, 5, 0, 64);
    mc[12..14].copy_from_slice(&MPLS_MC.to_be_bytes());
    assert_eq!(h.forward(1, &mc), [5]);
    let (_, ip) = l3(L3::Ipv4, 64, &[]);
    assert_eq!(h.forward(1, &eth(None, 0x0800, &ip)), [5]);
}

/// Table 0 pushes a label and sets it; table 1 matches that label and
/// pops it back to IPv4; table 2 matches the UDP port under it.
#[test]
fn push_and_pop_rekey_the_packet_for_the_next_tables() {
    let mut h = Harness::new(Version::V13, 3);
    ok(
        &mut h,
        add(
            0,
            1,
            vec![Oxm::InPort(PortNo(1))],
            vec![
                apply(vec![
                    Action::PushMpls(MPLS),
                    Action::SetField(Oxm::MplsLabel(77)),
                    Action::SetField(Oxm::MplsTc(2)),
                ]),
                Instruction::GotoTable(1),
            ],
        ),
    );
    ok(
        &mut h,
        add(
            1,
            1,
            vec![
                Oxm::EthType(MPLS),
                Oxm::MplsLabel(77),
                Oxm::MplsTc(2),
                Oxm::MplsBos(1),
            ],
            vec![
                apply(vec![Action::PopMpls(0x0800)]),
                Instruction::GotoTable(2),
            ],
        ),
    );
    ok(&mut h, udp_53_to(2, 2));
    let (et, ip) = l3(L3::Ipv4, 64, &[0xab; 18]);
    let f = eth(None, et, &ip);
    h.inject(1, &f);
    assert_eq!(h.out(2), [f]);
}

/// 1.3.5 §5.10: the action set pops before it pushes, whatever order the
/// actions were written in.
#[test]
fn the_action_set_pops_before_it_pushes() {
    let mut h = switch_with_flow(
        vec![Oxm::EthType(MPLS)],
        vec![Instruction::WriteActions(vec![
            Action::PushMpls(MPLS),
            Action::PopMpls(0x0800),
            out(2),
        ])],
    );
    let (_, ip) = l3(L3::Ipv4, 40, &[0xab; 18]);
    h.inject(1, &eth(None, MPLS, &cat(&lse(9, 3, 1, 7), &ip)));
    // Popped to IPv4, then a fresh entry with the IP TTL.
    assert_eq!(h.out(2), [eth(None, MPLS, &cat(&lse(0, 0, 1, 40), &ip))]);
}

/// The set decrements the MPLS TTL before it sets it, and pushes MPLS
/// before VLAN (the VLAN tag ends up outside).
#[test]
fn the_action_set_orders_ttl_and_vlan_actions() {
    let mut h = switch_with_flow(
        vec![Oxm::EthType(0x0800)],
        vec![Instruction::WriteActions(vec![
            Action::PushVlan(0x8100),
            Action::SetField(Oxm::VlanVid {
                value: OFPVID_PRESENT | 12,
                mask: None,
            }),
            Action::PushMpls(MPLS),
            Action::SetMplsTtl(9),
            Action::DecMplsTtl,
            out(2),
        ])],
    );
    let (et, ip) = l3(L3::Ipv4, 40, &[0xab; 18]);
    h.inject(1, &eth(None, et, &ip));
    assert_eq!(
        h.out(2),
        [eth(Some((12, 0)), MPLS, &cat(&lse(0, 0, 1, 9), &ip))]
    );
}

#[test]
fn an_expired_mpls_ttl_drops_the_packet_and_may_tell_the_controller() {
    let mut h = switch_with_flow(
        vec![Oxm::EthType(MPLS)],
        vec![apply(vec![Action::DecMplsTtl, out(2)])],
    );
    h.inject(1, &mpls_udp(None, 5, 0, 1, 2));
    assert_eq!(h.out(2), [mpls_udp(None, 5, 0, 1, 1)]);
    h.inject(1, &mpls_udp(None, 5, 0, 1, 1));
    assert!(h.out(2).is_empty());
    assert!(h.async13().is_empty());
    // OFPC_INVALID_TTL_TO_CONTROLLER, and a controller that asks for
    // OFPR_INVALID_TTL packet-ins (not in the default asynchronous
    // configuration).
    ok(
        &mut h,
        Message::SetAsync(AsyncConfig {
            packet_in_mask: [0b111, 0],
            port_status_mask: [0b111, 0b111],
            flow_removed_mask: [0b1111, 0],
        }),
    );
    ok(
        &mut h,
        Message::SetConfig(SwitchConfig {
            flags: 1 << 2,
            miss_send_len: 128,
        }),
    );
    h.inject(1, &mpls_udp(None, 5, 0, 1, 0));
    assert!(h.out(2).is_empty());
    match &h.async13()[..] {
        [Message::PacketIn(p)] => {
            assert_eq!(p.reason, PacketInReason::InvalidTtl);
            assert_eq!(p.data, mpls_udp(None, 5, 0, 1, 0));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_group_bucket_pushes_mpls() {
    let mut h = Harness::new(Version::V13, 2);
    via_indirect_group(
        &mut h,
        vec![
            Action::PushMpls(MPLS_MC),
            Action::SetField(Oxm::MplsLabel(0xfffff)),
            out(2),
        ],
    );
    let (et, payload) = l3(L3::Arp, 0, &[]);
    h.inject(1, &eth(None, et, &payload));
    assert_eq!(
        h.out(2),
        [eth(None, MPLS_MC, &cat(&lse(0xfffff, 0, 1, 64), &payload))]
    );
}

#[test]
fn mpls_flow_mods_without_prerequisites_are_refused() {
    let mut h = Harness::new(Version::V13, 2);
    let ipv4 = || vec![Oxm::EthType(0x0800)];
    let mpls = || vec![Oxm::EthType(MPLS)];
    let cases: Vec<Case> = vec![
        // Matches.
        (vec![Oxm::MplsLabel(1)], vec![], Some(BAD_PREREQ)),
        (
            vec![Oxm::EthType(0x0800), Oxm::MplsTc(1)],
            vec![],
            Some(BAD_PREREQ),
        ),
        (vec![Oxm::MplsBos(1)], vec![], Some(BAD_PREREQ)),
        (
            vec![Oxm::EthType(MPLS), Oxm::MplsLabel(1 << 20)],
            vec![],
            Some(BAD_VALUE),
        ),
        (
            vec![Oxm::EthType(MPLS), Oxm::MplsTc(8)],
            vec![],
            Some(BAD_VALUE),
        ),
        (
            vec![Oxm::EthType(MPLS_MC), Oxm::MplsBos(2)],
            vec![],
            Some(BAD_VALUE),
        ),
        // Push: an MPLS ethertype, nothing else needed.
        (vec![], vec![Action::PushMpls(0x0800)], Some(BAD_ARGUMENT)),
        (vec![], vec![Action::PushMpls(MPLS_MC)], None),
        // Actions that need an MPLS packet.
        (
            ipv4(),
            vec![Action::PopMpls(0x0800)],
            Some(MATCH_INCONSISTENT),
        ),
        (
            vec![],
            vec![Action::SetMplsTtl(3)],
            Some(MATCH_INCONSISTENT),
        ),
        (ipv4(), vec![Action::DecMplsTtl], Some(MATCH_INCONSISTENT)),
        (
            vec![],
            vec![Action::SetField(Oxm::MplsLabel(1))],
            Some(MATCH_INCONSISTENT),
        ),
        (mpls(), vec![Action::PopMpls(0x0800)], None),
        (
            mpls(),
            vec![Action::SetMplsTtl(3), Action::DecMplsTtl],
            None,
        ),
        // An earlier push makes the packet MPLS; a pop makes it the
        // pop's ethertype.
        (
            ipv4(),
            vec![Action::PushMpls(MPLS), Action::DecMplsTtl],
            None,
        ),
        (
            ipv4(),
            vec![Action::PushMpls(MPLS), Action::SetField(Oxm::MplsTc(3))],
            None,
        ),
        (
            mpls(),
            vec![
                Action::PopMpls(0x0800),
                Action::SetField(Oxm::Ipv4Src {
                    value: [10, 0, 0, 9].into(),
                    mask: None,
                }),
            ],
            None,
        ),
        (
            vec![Oxm::EthType(0x0800), Oxm::IpProto(17)],
            vec![Action::PushMpls(MPLS), Action::SetField(Oxm::UdpDst(1))],
            Some(MATCH_INCONSISTENT),
        ),
        (
            mpls(),
            vec![Action::PopMpls(0x0806), Action::DecMplsTtl],
            Some(MATCH_INCONSISTENT),
        ),
        // Set-field values out of range.
        (
            mpls(),
            vec![Action::SetField(Oxm::MplsLabel(1 << 20))],
            Some(BAD_SET_ARGUMENT),
        ),
        (
            mpls(),
            vec![Action::SetField(Oxm::MplsTc(8))],
            Some(BAD_SET_ARGUMENT),
        ),
        (
            mpls(),
            vec![Action::SetField(Oxm::MplsBos(2))],
            Some(BAD_SET_ARGUMENT),
        ),
        // The TTL copies need an MPLS packet, as dec_mpls_ttl does.
        (ipv4(), vec![Action::CopyTtlIn], Some(MATCH_INCONSISTENT)),
        (ipv4(), vec![Action::CopyTtlOut], Some(MATCH_INCONSISTENT)),
        (mpls(), vec![Action::CopyTtlIn, Action::CopyTtlOut], None),
        (
            ipv4(),
            vec![Action::PushMpls(MPLS), Action::CopyTtlOut],
            None,
        ),
        (
            mpls(),
            vec![Action::PopMpls(0x0800), Action::CopyTtlIn],
            Some(MATCH_INCONSISTENT),
        ),
        // A PBB pop needs a PBB packet, which an MPLS one is not.
        (mpls(), vec![Action::PopPbb], Some(MATCH_INCONSISTENT)),
    ];
    check_cases(&mut h, cases);
}

#[test]
fn table_features_list_the_mpls_fields_and_actions() {
    let mut h = Harness::new(Version::V13, 1);
    let tables = table_features(&mut h);
    assert!(!tables.is_empty());
    let mpls_fields = [OxmField::MplsLabel, OxmField::MplsTc, OxmField::MplsBos];
    for t in &tables {
        let mut seen = 0;
        for p in &t.properties {
            match p {
                TableFeatureProp::Match(ids) | TableFeatureProp::ApplySetfield(ids) => {
                    for f in mpls_fields {
                        let h = OxmHeader::basic(f, false);
                        assert!(ids.iter().any(|i| i.header == h), "{f:?} in {p:?}");
                    }
                    seen += 1;
                }
                TableFeatureProp::ApplyActions(ids) => {
                    for a in [
                        ActionType::PushMpls,
                        ActionType::PopMpls,
                        ActionType::SetMplsTtl,
                        ActionType::DecMplsTtl,
                    ] {
                        assert!(ids.contains(&ActionId::Standard(a)), "{a:?}");
                    }
                    seen += 1;
                }
                _ => {}
            }
        }
        assert_eq!(seen, 3);
    }
}
