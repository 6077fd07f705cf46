use super::*;
use proptest::prelude::*;

const UP: u32 = libc::IFF_UP as u32;
const RUNNING: u32 = libc::IFF_RUNNING as u32;
/// `IFF_BROADCAST | IFF_MULTICAST`, as a veth has.
const OTHER: u32 = 0x1002;
/// `struct nlmsghdr` and `struct rtattr`, written here by hand as the
/// kernel lays them out.
const NLMSG_HDRLEN: usize = 16;
const RTA_HDRLEN: usize = 4;

/// `NLMSG_ALIGN` and `RTA_ALIGN`: up to a multiple of 4.
fn align4(n: usize) -> usize {
    n.next_multiple_of(4)
}

/// An attribute: length, type, value, padded to 4 bytes.
fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
    let mut a = Vec::new();
    a.extend_from_slice(&((RTA_HDRLEN + value.len()) as u16).to_ne_bytes());
    a.extend_from_slice(&kind.to_ne_bytes());
    a.extend_from_slice(value);
    a.resize(align4(a.len()), 0);
    a
}

/// A netlink message of type `kind` whose payload is an `ifinfomsg` for
/// interface `index` with `flags`, then `attrs`.
fn link_msg(kind: u16, index: u32, flags: u32, attrs: &[Vec<u8>]) -> Vec<u8> {
    let mut payload = vec![0u8, 0]; // AF_UNSPEC, pad
    payload.extend_from_slice(&1u16.to_ne_bytes()); // ARPHRD_ETHER
    payload.extend_from_slice(&index.to_ne_bytes());
    payload.extend_from_slice(&flags.to_ne_bytes());
    payload.extend_from_slice(&0u32.to_ne_bytes()); // change mask
    for a in attrs {
        payload.extend_from_slice(a);
    }
    message(kind, &payload)
}

fn message(kind: u16, payload: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&((NLMSG_HDRLEN + payload.len()) as u32).to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&0u16.to_ne_bytes()); // flags
    m.extend_from_slice(&0u32.to_ne_bytes()); // sequence
    m.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    m.extend_from_slice(payload);
    m.resize(align4(m.len()), 0);
    m
}

fn all(datagram: &[u8]) -> (Vec<LinkMsg>, Result<(), Malformed>) {
    let mut got = Vec::new();
    let r = parse(datagram, |m| got.push(m));
    (got, r)
}

#[test]
fn a_link_up_and_running_is_up() {
    let m = link_msg(
        libc::RTM_NEWLINK,
        7,
        UP | RUNNING | OTHER,
        &[
            attr(IFLA_IFNAME, b"s1-eth2\0"),
            attr(IFLA_OPERSTATE, &[IF_OPER_UP]),
        ],
    );
    let (got, r) = all(&m);
    assert_eq!(r, Ok(()));
    assert_eq!(
        got,
        [LinkMsg {
            index: 7,
            flags: UP | RUNNING | OTHER,
            name: Some("s1-eth2".into()),
            operstate: Some(IF_OPER_UP),
            deleted: false,
        }]
    );
    assert!(got[0].is_up());
}

#[test]
fn up_without_running_or_running_without_up_is_down() {
    for flags in [UP | OTHER, RUNNING | OTHER, OTHER] {
        let (got, r) = all(&link_msg(libc::RTM_NEWLINK, 3, flags, &[]));
        assert_eq!(r, Ok(()));
        assert!(!got[0].is_up(), "{flags:#x}");
        assert_eq!((got[0].name.as_deref(), got[0].operstate), (None, None));
    }
}

#[test]
fn a_deleted_link_is_down_whatever_its_flags() {
    let (got, r) = all(&link_msg(libc::RTM_DELLINK, 9, UP | RUNNING, &[]));
    assert_eq!(r, Ok(()));
    assert!(got[0].deleted && !got[0].is_up());
}

/// A message the kernel (6.18) sent when a veth's peer was set down: 1492
/// bytes, most of them attributes the parser skips (statistics, link
/// info, AF_SPEC), captured from an `RTMGRP_LINK` socket.
#[test]
fn a_real_message_from_the_kernel() {
    let (got, r) = all(include_bytes!("veth_peer_down.bin"));
    assert_eq!(r, Ok(()));
    assert_eq!(
        got,
        [LinkMsg {
            index: 3,
            flags: UP | OTHER,
            name: Some("va".into()),
            operstate: Some(3), // IF_OPER_LOWERLAYERDOWN
            deleted: false,
        }]
    );
    assert!(!got[0].is_up());
}

#[test]
fn several_messages_in_one_datagram_in_order_others_skipped() {
    let mut d = link_msg(libc::RTM_NEWLINK, 1, UP | RUNNING, &[]);
    d.extend(message(libc::RTM_NEWADDR, &[0; 8]));
    d.extend(message(3, &[0; 4])); // NLMSG_DONE
    d.extend(link_msg(libc::RTM_NEWLINK, 2, UP, &[]));
    let (got, r) = all(&d);
    assert_eq!(r, Ok(()));
    assert_eq!(
        got.iter().map(|m| (m.index, m.is_up())).collect::<Vec<_>>(),
        [(1, true), (2, false)]
    );
}

#[test]
fn attributes_nested_flag_and_unknown_ones_are_handled() {
    let nested = 0x8000;
    let m = link_msg(
        libc::RTM_NEWLINK,
        4,
        UP | RUNNING,
        &[
            attr(18 | nested, &[1, 2, 3, 4, 5, 6, 7]), // IFLA_LINKINFO
            attr(IFLA_IFNAME | 0x4000, b"h1\0"),
            attr(999, &[]),
            attr(IFLA_OPERSTATE, &[]),
        ],
    );
    let (got, r) = all(&m);
    assert_eq!(r, Ok(()));
    assert_eq!(got[0].name.as_deref(), Some("h1"));
    assert_eq!(got[0].operstate, None, "an empty state attribute");
}

#[test]
fn a_bad_attribute_ends_the_attributes_not_the_message() {
    let mut tail = attr(IFLA_IFNAME, b"lost\0");
    tail[0..2].copy_from_slice(&200u16.to_ne_bytes()); // past the end
    let m = link_msg(
        libc::RTM_NEWLINK,
        5,
        UP | RUNNING,
        &[attr(IFLA_OPERSTATE, &[IF_OPER_UP]), tail],
    );
    let (got, r) = all(&m);
    assert_eq!(r, Ok(()));
    assert_eq!((got[0].index, got[0].is_up()), (5, true));
    assert_eq!(
        (got[0].operstate, got[0].name.as_deref()),
        (Some(IF_OPER_UP), None)
    );
    // A length under the header's is as bad.
    let mut short = attr(IFLA_IFNAME, b"x\0");
    short[0..2].copy_from_slice(&2u16.to_ne_bytes());
    let (got, r) = all(&link_msg(libc::RTM_NEWLINK, 6, UP, &[short]));
    assert_eq!((r, got[0].name.clone()), (Ok(()), None));
}

#[test]
fn broken_headers_are_malformed_after_what_parsed() {
    let good = link_msg(libc::RTM_NEWLINK, 1, UP | RUNNING, &[]);
    // Cut short inside the second message's header, then inside its body.
    for cut in [4, 20] {
        let mut d = good.clone();
        d.extend_from_slice(&good[..cut]);
        let (got, r) = all(&d);
        assert_eq!((got.len(), r), (1, Err(Malformed)), "cut at {cut}");
    }
    // A length below the header's.
    let mut d = good.clone();
    d[0..4].copy_from_slice(&8u32.to_ne_bytes());
    assert_eq!(all(&d), (vec![], Err(Malformed)));
    // A link message too short for its ifinfomsg.
    assert_eq!(
        all(&message(libc::RTM_NEWLINK, &[0; 8])),
        (vec![], Err(Malformed))
    );
    // The kernel saying it lost messages.
    assert_eq!(all(&message(NLMSG_OVERRUN, &[])), (vec![], Err(Malformed)));
    assert_eq!(all(&[]), (vec![], Ok(())));
}

proptest! {
    /// Any bytes: no panic, and what is reported came from a link
    /// message's header.
    #[test]
    fn any_bytes_parse_without_panic(d in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&d, |m| assert!(m.name.as_ref().is_none_or(|n| n.len() < 256)));
    }

    /// Messages with random attributes after a valid header always give
    /// the header's index and flags.
    #[test]
    fn the_header_decides_whatever_follows(
        index in any::<u32>(),
        flags in any::<u32>(),
        junk in proptest::collection::vec(any::<u8>(), 0..128),
    ) {
        let mut m = link_msg(libc::RTM_NEWLINK, index, flags, &[]);
        m.extend_from_slice(&junk);
        let len = m.len() as u32;
        m[0..4].copy_from_slice(&len.to_ne_bytes());
        let (got, r) = all(&m);
        prop_assert_eq!(r, Ok(()));
        prop_assert_eq!((got[0].index, got[0].flags), (index, flags));
    }
}

/// One attribute the crate's whole-message parser cannot decode (here an
/// `IFLA_MTU` one byte long) fails `LinkMessage::parse`, and would lose
/// the link change; read attribute by attribute, the message still says
/// the link is up.
#[test]
fn an_attribute_the_crate_cannot_decode_loses_nothing() {
    use netlink_packet_core::Parseable;
    use netlink_packet_route::link::LinkMessage;
    let m = link_msg(
        libc::RTM_NEWLINK,
        8,
        UP | RUNNING,
        &[attr(libc::IFLA_MTU, &[1]), attr(IFLA_IFNAME, b"s1-eth1\0")],
    );
    assert!(LinkMessage::parse(&m[NLMSG_HDRLEN..]).is_err());
    let (got, r) = all(&m);
    assert_eq!(r, Ok(()));
    assert_eq!((got[0].index, got[0].is_up()), (8, true));
    assert_eq!(got[0].name.as_deref(), Some("s1-eth1"));
}
