//! `copy_ttl_out` and `copy_ttl_in` (1.3.5 §7.2.5) on MPLS frames
//! assembled here byte by byte: between the outermost label stack entry
//! and the next one, or the IPv4 / IPv6 header under the last entry
//! (known by its first nibble, as Open vSwitch guesses), keeping the IPv4
//! header checksum right; their place in the action set (1.3.5 §5.10:
//! copy inwards first, copy outwards after the pushes); and their
//! prerequisite (an MPLS packet, as for `dec_mpls_ttl`).

mod common;

use baton_openflow::Version;
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::v13::{Action, Instruction};
use baton_switch::rewrite;
use common::of13::*;
use common::*;
use proptest::prelude::*;

const MPLS: u16 = 0x8847;

/// What the label stack carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Payload {
    /// IPv4 with this TTL.
    Ipv4(u8),
    /// IPv6 with this hop limit.
    Ipv6(u8),
    /// Bytes whose first nibble is neither 4 nor 6.
    Other(u8),
}

fn csum(h: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The payload's bytes: an IP header (with its checksum) and a little
/// UDP, or 28 other bytes.
fn payload(p: Payload) -> Vec<u8> {
    let udp = [0x03, 0xe8, 0, 53, 0, 12, 0, 0, 0xab, 0xab, 0xab, 0xab];
    match p {
        Payload::Ipv4(ttl) => {
            let mut h = vec![0x45, 0, 0, 32, 0, 1, 0, 0, ttl, 17, 0, 0];
            h.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
            let c = !csum(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            h.extend_from_slice(&udp);
            h
        }
        Payload::Ipv6(hl) => {
            let mut h = vec![0x60, 0, 0, 0, 0, 12, 17, hl];
            h.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            h.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            h.extend_from_slice(&udp);
            h
        }
        Payload::Other(nibble) => {
            let mut b = vec![0x11; 28];
            b[0] = (nibble << 4) | 1;
            b
        }
    }
}

/// A label stack entry (RFC 3032 §2.1).
fn lse(label: u32, tc: u8, bos: bool, ttl: u8) -> [u8; 4] {
    ((label << 12) | (u32::from(tc) << 9) | (u32::from(bos) << 8) | u32::from(ttl)).to_be_bytes()
}

/// An MPLS frame from H1 to H2, with an 802.1Q tag when `vlan` says so,
/// the entries `stack` (label, TC, TTL; outermost first) and `p`.
fn mpls_frame(vlan: Option<u16>, stack: &[(u32, u8, u8)], p: Payload) -> Vec<u8> {
    let mut f = H2.to_vec();
    f.extend_from_slice(&H1);
    if let Some(vid) = vlan {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&vid.to_be_bytes());
    }
    f.extend_from_slice(&MPLS.to_be_bytes());
    for (i, &(label, tc, ttl)) in stack.iter().enumerate() {
        f.extend_from_slice(&lse(label, tc, i + 1 == stack.len(), ttl));
    }
    f.extend_from_slice(&payload(p));
    f
}

/// True when the payload under a stack of `depth` entries is not IPv4,
/// or its header checksum verifies.
fn ipv4_checksum_ok(f: &[u8], vlan: bool, depth: usize) -> bool {
    let at = 14 + if vlan { 4 } else { 0 } + 4 * depth;
    f[at] >> 4 != 4 || csum(&f[at..at + 20]) == 0xffff
}

fn payload_kind() -> impl Strategy<Value = Payload> {
    prop_oneof![
        any::<u8>().prop_map(Payload::Ipv4),
        any::<u8>().prop_map(Payload::Ipv6),
        prop_oneof![0..4u8, Just(5u8), 7..16u8].prop_map(Payload::Other),
    ]
}

fn stack() -> impl Strategy<Value = Vec<(u32, u8, u8)>> {
    proptest::collection::vec((0..1u32 << 20, 0..8u8, any::<u8>()), 1..4)
}

fn with_ttl(p: Payload, ttl: u8) -> Payload {
    match p {
        Payload::Ipv4(_) => Payload::Ipv4(ttl),
        Payload::Ipv6(_) => Payload::Ipv6(ttl),
        other => other,
    }
}

fn ip_ttl(p: Payload) -> Option<u8> {
    match p {
        Payload::Ipv4(t) | Payload::Ipv6(t) => Some(t),
        Payload::Other(_) => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// copy_ttl_out writes the outer entry's TTL byte from the next entry
    /// or the IP header, and nothing else.
    #[test]
    fn copy_ttl_out_moves_exactly_the_ttl(
        vlan in proptest::option::of(0..4096u16),
        stack in stack(),
        p in payload_kind(),
    ) {
        let mut f = mpls_frame(vlan, &stack, p);
        rewrite::copy_ttl_out(&mut f);
        let mut want = stack.clone();
        if let Some(next) = stack.get(1) {
            want[0].2 = next.2;
        } else if let Some(t) = ip_ttl(p) {
            want[0].2 = t;
        }
        prop_assert_eq!(&f, &mpls_frame(vlan, &want, p));
        prop_assert!(ipv4_checksum_ok(&f, vlan.is_some(), stack.len()));
    }

    /// copy_ttl_in writes the next entry's TTL byte, or the IPv4 TTL (and
    /// its header checksum) or IPv6 hop limit, from the outer entry, and
    /// nothing else.
    #[test]
    fn copy_ttl_in_moves_exactly_the_ttl_and_keeps_the_checksum(
        vlan in proptest::option::of(0..4096u16),
        stack in stack(),
        p in payload_kind(),
    ) {
        let mut f = mpls_frame(vlan, &stack, p);
        rewrite::copy_ttl_in(&mut f);
        let mut want = stack.clone();
        let mut want_p = p;
        if want.len() > 1 {
            want[1].2 = stack[0].2;
        } else {
            want_p = with_ttl(p, stack[0].2);
        }
        prop_assert_eq!(&f, &mpls_frame(vlan, &want, want_p));
        prop_assert!(ipv4_checksum_ok(&f, vlan.is_some(), stack.len()));
    }
}

#[test]
fn frames_without_mpls_or_a_whole_inner_header_are_left_alone() {
    let udp = baton_switch::testutil::udp_frame(H1, H2, 53);
    for f in [
        udp,
        // An IPv4 header cut short under the last entry.
        mpls_frame(None, &[(5, 0, 9)], Payload::Ipv4(40))[..18 + 12].to_vec(),
        // A second entry cut short.
        mpls_frame(None, &[(5, 0, 9), (6, 0, 3)], Payload::Other(0))[..18 + 2].to_vec(),
    ] {
        let mut g = f.clone();
        rewrite::copy_ttl_in(&mut g);
        rewrite::copy_ttl_out(&mut g);
        assert_eq!(g, f);
    }
}

#[test]
fn apply_lists_copy_ttls_between_mpls_and_ip() {
    let mut h = Harness::new(Version::V13, 3);
    // In: the MPLS TTL goes into the IPv4 header, then the pop.
    ok(
        &mut h,
        add(
            0,
            1,
            vec![Oxm::EthType(MPLS)],
            vec![apply(vec![
                Action::CopyTtlIn,
                Action::PopMpls(0x0800),
                out(2),
            ])],
        ),
    );
    // Out: a pushed entry with TTL 3 gets the IP TTL.
    ok(
        &mut h,
        add(
            0,
            1,
            vec![Oxm::EthType(0x0800)],
            vec![apply(vec![
                Action::PushMpls(MPLS),
                Action::SetMplsTtl(3),
                Action::CopyTtlOut,
                out(3),
            ])],
        ),
    );
    h.inject(1, &mpls_frame(None, &[(5, 0, 9)], Payload::Ipv4(40)));
    let mut want = H2.to_vec();
    want.extend_from_slice(&H1);
    want.extend_from_slice(&[0x08, 0x00]);
    want.extend_from_slice(&payload(Payload::Ipv4(9)));
    assert_eq!(h.out(2), [want]);
    let mut ip = H2.to_vec();
    ip.extend_from_slice(&H1);
    ip.extend_from_slice(&[0x08, 0x00]);
    ip.extend_from_slice(&payload(Payload::Ipv4(40)));
    h.inject(1, &ip);
    assert_eq!(
        h.out(3),
        [mpls_frame(None, &[(0, 0, 40)], Payload::Ipv4(40))]
    );
}

/// 1.3.5 §5.10: copy TTL inwards runs first, copy TTL outwards after the
/// pushes and before the decrements, whatever order (and table) they
/// were written in.
#[test]
fn the_action_set_copies_ttls_in_the_specs_order() {
    let mut h = switch_with_flow(
        vec![Oxm::EthType(MPLS)],
        vec![
            Instruction::WriteActions(vec![Action::DecMplsTtl, Action::CopyTtlOut]),
            Instruction::GotoTable(1),
        ],
    );
    ok(
        &mut h,
        add(
            1,
            1,
            vec![Oxm::EthType(MPLS)],
            vec![Instruction::WriteActions(vec![
                out(2),
                Action::PushMpls(MPLS),
                Action::CopyTtlIn,
            ])],
        ),
    );
    h.inject(1, &mpls_frame(None, &[(5, 2, 7)], Payload::Ipv4(40)));
    // Copy in: the IP TTL becomes 7. Push: a copy of the entry (TTL 7).
    // Copy out: the outer entry takes the inner one's 7. Decrement: 6.
    // (Copying out before the push would have given 40, then 39; copying
    // in after it would have left the IP TTL at 40.)
    assert_eq!(
        h.out(2),
        [mpls_frame(None, &[(5, 2, 6), (5, 2, 7)], Payload::Ipv4(7))]
    );
}
