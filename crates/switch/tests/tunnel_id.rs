//! `tunnel_id` (1.3.5 §7.2.3.7, `OFPXMT_OFB_TUNNEL_ID`): a pipeline
//! field, 0 for a packet arriving on one of this switch's ports (none is
//! a tunnel), matched with a mask, set by set-field for the tables after
//! (and the controller's packet-ins) without changing the frame.

mod common;

use baton_openflow::Version;
use baton_openflow::v13::messages::ErrorType;
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::v13::{Action, Instruction, Message};
use common::of13::*;
use common::*;
use proptest::prelude::*;

fn set_tunnel(id: u64) -> Action {
    Action::SetField(Oxm::TunnelId {
        value: id,
        mask: None,
    })
}

fn tunnel(value: u64, mask: Option<u64>) -> Oxm {
    Oxm::TunnelId { value, mask }
}

/// A UDP frame from H1 to H2.
fn frame() -> Vec<u8> {
    baton_switch::testutil::udp_frame(H1, H2, 53)
}

/// Table 0 sets the tunnel id and goes to table 1.
fn set_then_goto(h: &mut Harness, id: u64) {
    ok(
        h,
        add(
            0,
            1,
            vec![],
            vec![apply(vec![set_tunnel(id)]), Instruction::GotoTable(1)],
        ),
    );
}

#[test]
fn tunnel_id_set_in_table_0_is_matched_in_table_1() {
    let mut h = Harness::new(Version::V13, 4);
    set_then_goto(&mut h, 0x1234_5678_9abc_def0);
    ok(
        &mut h,
        add(
            1,
            3,
            vec![tunnel(0x1234_5678_9abc_def0, None)],
            vec![apply(vec![out(2)])],
        ),
    );
    ok(
        &mut h,
        add(1, 2, vec![tunnel(0, None)], vec![apply(vec![out(3)])]),
    );
    ok(&mut h, add(1, 1, vec![], vec![apply(vec![out(4)])]));
    let f = frame();
    // The frame is not changed by the set-field.
    h.inject(1, &f);
    assert_eq!(h.out(2), std::slice::from_ref(&f));
    assert!(h.out(3).is_empty() && h.out(4).is_empty());
}

#[test]
fn a_packet_arrives_with_tunnel_id_0() {
    let mut h = Harness::new(Version::V13, 3);
    ok(
        &mut h,
        add(0, 2, vec![tunnel(0, None)], vec![apply(vec![out(2)])]),
    );
    ok(&mut h, add(0, 1, vec![], vec![apply(vec![out(3)])]));
    assert_eq!(h.forward(1, &frame()), [2]);
    // A masked match on the high bits too.
    let mut h = Harness::new(Version::V13, 3);
    ok(
        &mut h,
        add(
            0,
            2,
            vec![tunnel(1 << 63, Some(1 << 63))],
            vec![apply(vec![out(2)])],
        ),
    );
    ok(&mut h, add(0, 1, vec![], vec![apply(vec![out(3)])]));
    assert_eq!(h.forward(1, &frame()), [3]);
}

#[test]
fn the_action_set_sets_tunnel_id_and_packet_ins_report_it() {
    let mut h = switch_with_flow(
        vec![],
        vec![
            apply(vec![set_tunnel(7), out(0xffff_fffd)]),
            Instruction::WriteActions(vec![set_tunnel(8), out(2)]),
        ],
    );
    let f = frame();
    h.inject(1, &f);
    assert_eq!(h.out(2), std::slice::from_ref(&f));
    let msgs = h.async13();
    match &msgs[..] {
        [Message::PacketIn(p)] => {
            assert!(p.match_.fields.contains(&tunnel(7, None)), "{:?}", p.match_);
            assert_eq!(p.data, f);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tunnel_id_values_and_set_fields_are_checked() {
    let mut h = Harness::new(Version::V13, 2);
    let bad_wildcards = (ErrorType::BadMatch, 5);
    let bad_set_argument = (ErrorType::BadAction, 15);
    // A value with bits outside its mask.
    let got = errors(&h.send13(add(0, 1, vec![tunnel(3, Some(1))], vec![])));
    assert_eq!(got, [bad_wildcards]);
    // A set-field carries no mask.
    let got = errors(&h.send13(add(
        0,
        1,
        vec![],
        vec![apply(vec![Action::SetField(tunnel(1, Some(1)))])],
    )));
    assert_eq!(got, [bad_set_argument]);
    // No prerequisites.
    ok(
        &mut h,
        add(
            0,
            1,
            vec![tunnel(1, Some(1))],
            vec![apply(vec![set_tunnel(5)])],
        ),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A masked tunnel_id match in table 1 takes exactly the packets whose
    /// tunnel id (set in table 0) agrees with it under the mask.
    #[test]
    fn masked_tunnel_id_matches_select_what_a_masked_comparison_says(
        id in any::<u64>(),
        value in any::<u64>(),
        mask in prop_oneof![any::<u64>(), Just(u64::MAX), Just(0u64)],
        near in any::<bool>(),
        exact in any::<bool>(),
    ) {
        // Half the time the flow's value agrees with the packet's.
        let value = if near { id } else { value };
        let mask = if exact { u64::MAX } else { mask };
        let value = value & mask;
        let mut h = Harness::new(Version::V13, 3);
        set_then_goto(&mut h, id);
        let m = if exact { None } else { Some(mask) };
        ok(&mut h, add(1, 2, vec![tunnel(value, m)], vec![apply(vec![out(2)])]));
        ok(&mut h, add(1, 1, vec![], vec![apply(vec![out(3)])]));
        let want = if id & mask == value { 2 } else { 3 };
        prop_assert_eq!(h.forward(1, &frame()), [want]);
    }
}

#[test]
fn table_features_list_tunnel_id_the_nd_set_fields_and_the_ttl_copies() {
    use baton_openflow::v13::action::ActionType;
    use baton_openflow::v13::oxm::{OxmField, OxmHeader};
    use baton_openflow::v13::table_features::{ActionId, TableFeatureProp};
    let mut h = Harness::new(Version::V13, 1);
    let tables = table_features(&mut h);
    assert!(!tables.is_empty());
    let has = |ids: &[baton_openflow::v13::table_features::OxmId], f: OxmField, masked: bool| {
        ids.iter().any(|i| i.header == OxmHeader::basic(f, masked))
    };
    let nd = [
        OxmField::Ipv6NdTarget,
        OxmField::Ipv6NdSll,
        OxmField::Ipv6NdTll,
    ];
    for t in &tables {
        let mut seen = 0;
        for p in &t.properties {
            match p {
                TableFeatureProp::Match(ids) => {
                    assert!(has(ids, OxmField::TunnelId, true), "{p:?}");
                    for f in nd {
                        assert!(has(ids, f, false), "{f:?} in {p:?}");
                    }
                    seen += 1;
                }
                TableFeatureProp::ApplySetfield(ids) => {
                    for f in nd.into_iter().chain([OxmField::TunnelId]) {
                        assert!(has(ids, f, false), "{f:?} in {p:?}");
                    }
                    seen += 1;
                }
                TableFeatureProp::ApplyActions(ids) => {
                    for a in [ActionType::CopyTtlOut, ActionType::CopyTtlIn] {
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
