//! Set-field on the neighbour discovery fields (1.3.5 §7.2.3.7 table 12:
//! `ipv6_nd_target`, `ipv6_nd_sll`, `ipv6_nd_tll`) on ICMPv6 messages
//! assembled here byte by byte, whose checksum the tests compute
//! themselves (RFC 4443 §2.3: over the pseudo-header and the whole
//! message); their prerequisites (ICMPv6 type 135 or 136 for the target,
//! 135 for the source link-layer address, 136 for the target one) checked
//! against the flow's match (`OFPBAC_MATCH_INCONSISTENT`).

mod common;

use baton_openflow::Version;
use baton_openflow::types::MacAddr;
use baton_openflow::v13::messages::ErrorType;
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::v13::{Action, Instruction};
use baton_switch::action::SetField;
use baton_switch::rewrite;
use common::of13::*;
use common::*;
use proptest::prelude::*;
use std::net::Ipv6Addr;

const NS: u8 = 135;
const NA: u8 = 136;
const SRC: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const DST: [u8; 16] = [0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1];
/// Where the ICMPv6 message starts in an untagged frame.
const L4: usize = 14 + 40;

/// The Internet checksum's one's complement sum of `data`.
fn sum(data: &[u8], mut acc: u32) -> u32 {
    for c in data.chunks(2) {
        acc += u32::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]));
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The one's complement sum of the pseudo-header and the ICMPv6 message
/// `msg`: 0xffff when its checksum is right.
fn icmpv6_sum(msg: &[u8]) -> u16 {
    let mut acc = sum(&SRC, 0);
    acc = sum(&DST, acc);
    acc = sum(&(msg.len() as u32).to_be_bytes(), acc);
    acc = sum(&[0, 0, 0, 58], acc);
    fold(sum(msg, acc))
}

/// An ND option of type `t` with body `body` (padded to 8-byte units).
fn opt(t: u8, body: &[u8]) -> Vec<u8> {
    let len = (body.len() + 2).div_ceil(8);
    let mut o = vec![t, len as u8];
    o.extend_from_slice(body);
    o.resize(len * 8, 0);
    o
}

/// An Ethernet frame with an IPv6 neighbour solicitation or
/// advertisement (`icmp_type`) for `target` with options `opts`, and
/// `pad` zero bytes of Ethernet padding after it.
fn nd_frame(icmp_type: u8, target: [u8; 16], opts: &[Vec<u8>], pad: usize) -> Vec<u8> {
    let mut msg = vec![icmp_type, 0, 0, 0];
    msg.extend_from_slice(&[if icmp_type == NA { 0x60 } else { 0 }, 0, 0, 0]);
    msg.extend_from_slice(&target);
    for o in opts {
        msg.extend_from_slice(o);
    }
    let c = !icmpv6_sum(&msg);
    msg[2..4].copy_from_slice(&c.to_be_bytes());
    let mut f = H2.to_vec();
    f.extend_from_slice(&H1);
    f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
    f.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    f.extend_from_slice(&[58, 255]);
    f.extend_from_slice(&SRC);
    f.extend_from_slice(&DST);
    f.extend_from_slice(&msg);
    f.resize(f.len() + pad, 0);
    f
}

/// The ICMPv6 checksum of `f` (made by [`nd_frame`]) verifies.
fn checksum_ok(f: &[u8]) -> bool {
    let len = usize::from(u16::from_be_bytes([f[18], f[19]]));
    icmpv6_sum(&f[L4..L4 + len]) == 0xffff
}

/// Options other than the link-layer ones: a nonce (RFC 3971) and an MTU.
fn other_opt() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        any::<[u8; 6]>().prop_map(|n| opt(14, &n)),
        any::<[u8; 6]>().prop_map(|m| opt(5, &m)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Setting the target writes exactly the 16 target bytes and keeps
    /// the checksum right.
    #[test]
    fn set_nd_target_writes_the_target_and_fixes_the_checksum(
        icmp_type in prop_oneof![Just(NS), Just(NA)],
        old in any::<[u8; 16]>(),
        new in any::<[u8; 16]>(),
        mac in any::<[u8; 6]>(),
        before in proptest::collection::vec(other_opt(), 0..3),
        pad in 0..8usize,
    ) {
        let ll = opt(if icmp_type == NS { 1 } else { 2 }, &mac);
        let opts: Vec<Vec<u8>> = before.iter().cloned().chain([ll]).collect();
        let mut f = nd_frame(icmp_type, old, &opts, pad);
        prop_assert!(checksum_ok(&f));
        rewrite::set_field(&mut f, &SetField::Ipv6NdTarget(Ipv6Addr::from(new)));
        prop_assert_eq!(&f[L4 + 8..L4 + 24], &new[..]);
        prop_assert!(checksum_ok(&f));
        prop_assert_eq!(f, nd_frame(icmp_type, new, &opts, pad));
    }

    /// Setting the link-layer address writes exactly the 6 bytes of the
    /// option the message type has (source for a solicitation, target for
    /// an advertisement), after any other options, and keeps the checksum
    /// right; a message without that option is left unchanged.
    #[test]
    fn set_nd_ll_writes_the_option_and_fixes_the_checksum(
        icmp_type in prop_oneof![Just(NS), Just(NA)],
        target in any::<[u8; 16]>(),
        old in any::<[u8; 6]>(),
        new in any::<[u8; 6]>(),
        before in proptest::collection::vec(other_opt(), 0..3),
        with_option in any::<bool>(),
        sll in any::<bool>(),
        pad in 0..8usize,
    ) {
        let own = if icmp_type == NS { 1 } else { 2 };
        let opts_with = |m: &[u8; 6]| -> Vec<Vec<u8>> {
            let mut v = before.clone();
            if with_option {
                v.push(opt(own, m));
            }
            v
        };
        let mut f = nd_frame(icmp_type, target, &opts_with(&old), pad);
        let set = if sll {
            SetField::Ipv6NdSll(MacAddr(new))
        } else {
            SetField::Ipv6NdTll(MacAddr(new))
        };
        let orig = f.clone();
        rewrite::set_field(&mut f, &set);
        prop_assert!(checksum_ok(&f));
        // Only the option of the message's own type is written.
        let applies = with_option && sll == (icmp_type == NS);
        if applies {
            prop_assert_eq!(f, nd_frame(icmp_type, target, &opts_with(&new), pad));
        } else {
            prop_assert_eq!(f, orig);
        }
    }
}

#[test]
fn other_icmpv6_messages_and_malformed_options_are_left_alone() {
    // An echo request has no target.
    let mut f = nd_frame(128, [7; 16], &[], 0);
    let orig = f.clone();
    rewrite::set_field(&mut f, &SetField::Ipv6NdTarget(Ipv6Addr::LOCALHOST));
    assert_eq!(f, orig);
    // An option of length 0 ends the walk before the link-layer option.
    let mut bad = opt(14, &[0; 6]);
    bad[1] = 0;
    let mut f = nd_frame(NS, [7; 16], &[bad, opt(1, &[1; 6])], 0);
    let orig = f.clone();
    rewrite::set_field(&mut f, &SetField::Ipv6NdSll(MacAddr([9; 6])));
    assert_eq!(f, orig);
    // A truncated message.
    let mut f = nd_frame(NS, [7; 16], &[], 0);
    f.truncate(L4 + 20);
    let orig = f.clone();
    rewrite::set_field(&mut f, &SetField::Ipv6NdTarget(Ipv6Addr::LOCALHOST));
    assert_eq!(f, orig);
}

fn nd_match(icmp_type: Option<u8>) -> Vec<Oxm> {
    let mut v = vec![Oxm::EthType(0x86dd), Oxm::IpProto(58)];
    v.extend(icmp_type.map(Oxm::Icmpv6Type));
    v
}

#[test]
fn the_switch_rewrites_a_solicitation_and_rekeys_it() {
    let mut h = Harness::new(Version::V13, 3);
    let target = Ipv6Addr::from([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]);
    ok(
        &mut h,
        add(
            0,
            1,
            nd_match(Some(NS)),
            vec![
                apply(vec![
                    Action::SetField(Oxm::Ipv6NdTarget(target)),
                    Action::SetField(Oxm::Ipv6NdSll(MacAddr(H3))),
                ]),
                Instruction::GotoTable(1),
            ],
        ),
    );
    let mut m = nd_match(Some(NS));
    m.push(Oxm::Ipv6NdTarget(target));
    m.push(Oxm::Ipv6NdSll(MacAddr(H3)));
    ok(&mut h, add(1, 2, m, vec![apply(vec![out(2)])]));
    ok(&mut h, add(1, 1, vec![], vec![apply(vec![out(3)])]));
    let nonce = opt(14, &[1, 2, 3, 4, 5, 6]);
    h.inject(1, &nd_frame(NS, [7; 16], &[nonce.clone(), opt(1, &H1)], 0));
    let got = h.out(2);
    assert_eq!(
        got,
        [nd_frame(NS, target.octets(), &[nonce, opt(1, &H3)], 0)]
    );
    assert!(checksum_ok(&got[0]));
    assert!(h.out(3).is_empty());
}

#[test]
fn the_action_set_rewrites_an_advertisement() {
    let mut h = switch_with_flow(
        nd_match(Some(NA)),
        vec![Instruction::WriteActions(vec![
            Action::SetField(Oxm::Ipv6NdTll(MacAddr(H3))),
            out(2),
        ])],
    );
    h.inject(1, &nd_frame(NA, [7; 16], &[opt(2, &H1)], 4));
    assert_eq!(h.out(2), [nd_frame(NA, [7; 16], &[opt(2, &H3)], 4)]);
}

#[test]
fn nd_set_fields_without_their_prerequisites_are_refused() {
    let mut h = Harness::new(Version::V13, 2);
    let inconsistent = (ErrorType::BadAction, 10);
    let target = || Action::SetField(Oxm::Ipv6NdTarget(Ipv6Addr::LOCALHOST));
    let sll = || Action::SetField(Oxm::Ipv6NdSll(MacAddr(H3)));
    let tll = || Action::SetField(Oxm::Ipv6NdTll(MacAddr(H3)));
    let cases: Vec<(Vec<Oxm>, Action, bool)> = vec![
        (vec![], target(), false),
        (vec![Oxm::EthType(0x86dd)], target(), false),
        (nd_match(None), target(), false),
        (nd_match(Some(128)), target(), false),
        (nd_match(Some(NS)), target(), true),
        (nd_match(Some(NA)), target(), true),
        (nd_match(None), sll(), false),
        (nd_match(Some(NA)), sll(), false),
        (nd_match(Some(NS)), sll(), true),
        (nd_match(None), tll(), false),
        (nd_match(Some(NS)), tll(), false),
        (nd_match(Some(NA)), tll(), true),
    ];
    for (i, (fields, action, accepted)) in cases.into_iter().enumerate() {
        for instruction in [Instruction::ApplyActions, Instruction::WriteActions] {
            let got = errors(&h.send13(add(
                0,
                100 + i as u16,
                fields.clone(),
                vec![instruction(vec![action.clone()])],
            )));
            let want: Vec<_> = (!accepted).then_some(inconsistent).into_iter().collect();
            assert_eq!(got, want, "{fields:?} {action:?}");
        }
    }
}
