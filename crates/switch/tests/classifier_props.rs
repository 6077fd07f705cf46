//! Property tests: the classifier (with and without its exact-match
//! cache, across insertions and removals) agrees with a naive linear scan
//! on random flow tables and packets, for both versions; and compiled 1.3
//! matches agree with a direct reading of their OXM fields.

use baton_openflow::Version;
use baton_openflow::packet::{ArpKey, FlowKey, Ipv4Key, Ipv6Key, Network, Transport, VlanTag};
use baton_openflow::types::{MacAddr, PortNo};
use baton_openflow::v10::Match10;
use baton_openflow::v10::ofmatch::*;
use baton_openflow::v13::oxm::{Match13, OFPVID_PRESENT, Oxm};
use baton_switch::action::Program;
use baton_switch::classifier::{Classifier, Rule};
use baton_switch::key::{FlowMatch, Key};
use baton_switch::table::{FlowTable, NewFlow, WireActions, WireMatch};
use baton_switch::{match10, match13};
use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Instant;

const MACS: [[u8; 6]; 3] = [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], [0xff; 6]];

fn ip(i: u8) -> Ipv4Addr {
    [
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 1, 2),
        Ipv4Addr::new(192, 168, 0, 1),
    ][usize::from(i % 3)]
}

fn ip6(i: u8) -> Ipv6Addr {
    [
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
        "fe80::1".parse().unwrap(),
    ][usize::from(i % 3)]
}

fn transport() -> impl Strategy<Value = Transport> {
    prop_oneof![
        (0..3u16, 0..3u16).prop_map(|(s, d)| Transport::Tcp {
            src: 80 + s,
            dst: 80 + d
        }),
        (0..3u16, 0..3u16).prop_map(|(s, d)| Transport::Udp {
            src: 53 + s,
            dst: 53 + d
        }),
        (0..2u8, 0..2u8).prop_map(|(t, c)| Transport::Icmpv4 {
            icmp_type: t * 8,
            code: c
        }),
        Just(Transport::None),
    ]
}

/// Random packets from small domains, so that flows hit them.
fn packet() -> impl Strategy<Value = (FlowKey, u64)> {
    let l2 = (
        1..4u32,
        0..3usize,
        0..3usize,
        prop::option::of((0..3u16, 0..2u8)),
    );
    let net = prop_oneof![
        (0..3u8, 0..3u8, 0..2u8, transport()).prop_map(|(s, d, dscp, t)| {
            let proto = match t {
                Transport::Tcp { .. } => 6,
                Transport::Udp { .. } => 17,
                Transport::Icmpv4 { .. } => 1,
                _ => 47,
            };
            (
                0x0800u16,
                Network::Ipv4(Ipv4Key {
                    src: ip(s),
                    dst: ip(d),
                    dscp: dscp * 10,
                    ecn: 0,
                    proto,
                    transport: t,
                }),
            )
        }),
        (1..3u16, 0..3u8, 0..3u8).prop_map(|(op, s, d)| (
            0x0806u16,
            Network::Arp(ArpKey {
                op,
                spa: ip(s),
                tpa: ip(d),
                sha: MacAddr(MACS[0]),
                tha: MacAddr(MACS[usize::from(s % 2)]),
            })
        )),
        (0..3u8, 0..3u8, 0..2u16, 0..4u16).prop_map(|(s, d, p, eh)| (
            0x86ddu16,
            Network::Ipv6(Ipv6Key {
                src: ip6(s),
                dst: ip6(d),
                flow_label: 0,
                dscp: 0,
                ecn: 0,
                next_header: 6,
                // None, hop-by-hop, fragment, or both.
                exthdr: [0, 0x40, 0x10, 0x50][usize::from(eh)],
                transport: Transport::Tcp {
                    src: 80 + p,
                    dst: 80
                },
            })
        )),
        Just((0x88ccu16, Network::Other)),
    ];
    (l2, net, 0..3u64).prop_map(|((port, s, d, vlan), (eth_type, network), md)| {
        (
            FlowKey {
                in_port: PortNo(port),
                eth_src: MacAddr(MACS[s]),
                eth_dst: MacAddr(MACS[d]),
                vlan: vlan.map(|(vid, pcp)| VlanTag { vid, pcp }),
                eth_type,
                network,
            },
            md,
        )
    })
}

fn match10() -> impl Strategy<Value = FlowMatch> {
    (
        any::<u32>(),
        1..4u32,
        0..3usize,
        0..3usize,
        prop_oneof![Just(0x0800u16), Just(0x0806), Just(0x86dd)],
        prop_oneof![Just(6u8), Just(17), Just(1), Just(2)],
        (
            0..3u8,
            0..3u8,
            prop_oneof![Just(0u8), Just(8), Just(24), Just(32)],
        ),
        (0..3u16, 0..3u16, prop_oneof![Just(0xffffu16), 0..3u16]),
    )
        .prop_map(
            |(w, port, s, d, dl_type, proto, (src, dst, plen), (tps, tpd, vlan))| {
                let mut m = Match10 {
                    wildcards: w & (OFPFW_ALL & !(OFPFW_NW_SRC_MASK | OFPFW_NW_DST_MASK)),
                    in_port: PortNo(port),
                    dl_src: MacAddr(MACS[s]),
                    dl_dst: MacAddr(MACS[d]),
                    dl_vlan: vlan,
                    dl_vlan_pcp: 1,
                    dl_type,
                    nw_tos: 40,
                    nw_proto: proto,
                    tp_src: 80 + tps,
                    tp_dst: 53 + tpd,
                    ..Match10::ALL
                };
                m.set_nw_src(ip(src), if w & (1 << 30) != 0 { plen } else { 0 });
                m.set_nw_dst(ip(dst), if w & (1 << 31) != 0 { 32 } else { 0 });
                match10::compile(&match10::normalize(&m))
            },
        )
}

/// OXM lists that respect prerequisites.
fn oxms() -> impl Strategy<Value = Vec<Oxm>> {
    let l2 = (
        prop::option::of(1..4u32),
        prop::option::of(0..3usize),
        prop::option::of((0..3u64, any::<bool>())),
        prop::option::of(prop_oneof![
            Just(0u16),
            (0..3u16).prop_map(|v| OFPVID_PRESENT | v)
        ]),
    );
    let l3 = prop_oneof![
        Just(vec![]),
        (
            prop::option::of((0..3u8, prop_oneof![Just(8u8), Just(24), Just(32)])),
            prop::option::of(prop_oneof![Just(6u8), Just(17)]),
            prop::option::of(0..3u16)
        )
            .prop_map(|(src, proto, port)| {
                let mut v = vec![Oxm::EthType(0x0800)];
                if let Some((s, len)) = src {
                    let mask = Ipv4Addr::from(u32::MAX << (32 - u32::from(len)));
                    let value = Ipv4Addr::from(u32::from(ip(s)) & u32::from(mask));
                    v.push(Oxm::Ipv4Src {
                        value,
                        mask: Some(mask),
                    });
                }
                if let Some(p) = proto {
                    v.push(Oxm::IpProto(p));
                    if let Some(port) = port {
                        v.push(if p == 6 {
                            Oxm::TcpSrc(80 + port)
                        } else {
                            Oxm::UdpDst(53 + port)
                        });
                    }
                }
                v
            }),
        (0..3u8, prop::option::of(1..3u16)).prop_map(|(s, op)| {
            let mut v = vec![
                Oxm::EthType(0x0806),
                Oxm::ArpSpa {
                    value: ip(s),
                    mask: None,
                },
            ];
            v.extend(op.map(Oxm::ArpOp));
            v
        }),
        (0..3u8, proptest::option::of((0..0x60u16, any::<bool>()))).prop_map(|(s, eh)| {
            let mask: Ipv6Addr = "ffff:ffff::".parse().unwrap();
            let value = Ipv6Addr::from(u128::from(ip6(s)) & u128::from(mask));
            let mut v = vec![
                Oxm::EthType(0x86dd),
                Oxm::Ipv6Src {
                    value,
                    mask: Some(mask),
                },
            ];
            // Exactly, or only the hop-by-hop and fragment bits.
            v.extend(eh.map(|(value, masked)| Oxm::Ipv6Exthdr {
                value: if masked {
                    value & 0x50
                } else {
                    value & 0x50 | value & 1
                },
                mask: masked.then_some(0x50),
            }));
            v
        }),
    ];
    (l2, l3).prop_map(|((port, dst, md, vlan), l3)| {
        let mut v = Vec::new();
        v.extend(port.map(|p| Oxm::InPort(PortNo(p))));
        v.extend(dst.map(|d| Oxm::EthDst {
            value: MacAddr(MACS[d]),
            mask: None,
        }));
        v.extend(md.map(|(m, masked)| Oxm::Metadata {
            value: if masked { m & 1 } else { m },
            mask: masked.then_some(1),
        }));
        v.extend(vlan.map(|value| Oxm::VlanVid { value, mask: None }));
        v.extend(l3);
        v
    })
}

/// A direct reading of what an OXM list accepts (1.3.5 §7.2.3.7), for the
/// fields [`oxms`] generates.
fn oxm_accepts(fields: &[Oxm], k: &FlowKey, metadata: u64) -> bool {
    let v4 = |a: Ipv4Addr| u32::from(a);
    fields.iter().all(|o| match *o {
        Oxm::InPort(p) => k.in_port == p,
        Oxm::EthDst { value, .. } => k.eth_dst == value,
        Oxm::Metadata { value, mask } => metadata & mask.unwrap_or(u64::MAX) == value,
        Oxm::VlanVid { value, .. } => match k.vlan {
            None => value == 0,
            Some(t) => value == OFPVID_PRESENT | t.vid,
        },
        Oxm::EthType(t) => k.eth_type == t,
        Oxm::Ipv4Src { value, mask } => match k.network {
            Network::Ipv4(ip) => v4(ip.src) & v4(mask.unwrap()) == v4(value),
            _ => false,
        },
        Oxm::IpProto(p) => k.ip_proto() == Some(p),
        Oxm::TcpSrc(p) => matches!(k.transport(), Transport::Tcp { src, .. } if src == p),
        Oxm::UdpDst(p) => matches!(k.transport(), Transport::Udp { dst, .. } if dst == p),
        Oxm::ArpSpa { value, .. } => matches!(k.network, Network::Arp(a) if a.spa == value),
        Oxm::ArpOp(op) => matches!(k.network, Network::Arp(a) if a.op == op),
        Oxm::Ipv6Src { value, mask } => match k.network {
            Network::Ipv6(ip) => {
                u128::from(ip.src) & u128::from(mask.unwrap()) == u128::from(value)
            }
            _ => false,
        },
        Oxm::Ipv6Exthdr { value, mask } => match k.network {
            Network::Ipv6(ip) => ip.exthdr & mask.unwrap_or(u16::MAX) == value,
            _ => false,
        },
        ref other => panic!("generator made {other:?}"),
    })
}

fn naive(rules: &[(FlowMatch, Rule)], k: &Key) -> Option<Rule> {
    rules
        .iter()
        .filter(|(m, _)| m.matches(k))
        .map(|(_, r)| *r)
        .fold(None, |best: Option<Rule>, r| match best {
            Some(b) if !r.beats(&b) => Some(b),
            _ => Some(r),
        })
}

fn check(
    version: Version,
    matches: Vec<(FlowMatch, u16)>,
    removals: Vec<usize>,
    packets: Vec<(FlowKey, u64)>,
) -> Result<(), TestCaseError> {
    let mut c = Classifier::default();
    let mut rules = Vec::new();
    for (i, (m, priority)) in matches.into_iter().enumerate() {
        let r = Rule {
            priority,
            seq: i as u64,
            id: i as u32,
        };
        c.insert(&m, r);
        rules.push((m, r));
    }
    for i in removals {
        if !rules.is_empty() {
            let (m, r) = rules.remove(i % rules.len());
            prop_assert!(c.remove(&m, r));
        }
    }
    prop_assert_eq!(c.len(), rules.len());
    for (fk, md) in &packets {
        let md = if version == Version::V13 { *md } else { 0 };
        let k = Key::of_packet(version, fk, md);
        prop_assert_eq!(c.lookup(&k), naive(&rules, &k), "packet {:?}", fk);
    }
    Ok(())
}

fn flow(m: FlowMatch, priority: u16) -> NewFlow {
    NewFlow {
        priority,
        match_: m,
        wire_match: WireMatch::V13(Match13::all()),
        cookie: baton_openflow::types::Cookie(0),
        idle_timeout: 0,
        hard_timeout: 0,
        flags: 0,
        program: Program::default(),
        wire_actions: WireActions::V13(vec![]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn classifier_agrees_with_a_linear_scan_v10(
        matches in prop::collection::vec((match10(), 0..4u16), 0..40),
        removals in prop::collection::vec(any::<usize>(), 0..10),
        packets in prop::collection::vec(packet(), 1..30),
    ) {
        check(Version::V10, matches, removals, packets)?;
    }

    #[test]
    fn classifier_agrees_with_a_linear_scan_v13(
        lists in prop::collection::vec((oxms(), 0..4u16), 0..40),
        removals in prop::collection::vec(any::<usize>(), 0..10),
        packets in prop::collection::vec(packet(), 1..30),
    ) {
        let matches = lists
            .into_iter()
            .map(|(l, p)| (match13::compile(&Match13 { fields: l }).expect("valid by construction"), p))
            .collect();
        check(Version::V13, matches, removals, packets)?;
    }

    #[test]
    fn compiled_oxm_matches_mean_what_their_fields_say(
        list in oxms(),
        packets in prop::collection::vec(packet(), 1..30),
    ) {
        let m = match13::compile(&Match13 { fields: list.clone() }).unwrap();
        for (fk, md) in &packets {
            prop_assert_eq!(
                m.matches(&Key::of_packet(Version::V13, fk, *md)),
                oxm_accepts(&list, fk, *md),
                "{:?} on {:?}", list, fk
            );
        }
    }

    /// The table's exact-match cache never returns a stale answer while
    /// flows come and go between lookups.
    #[test]
    fn cached_lookups_follow_flow_changes(
        ops in prop::collection::vec(
            prop_oneof![
                (match10(), 0..4u16).prop_map(|(m, p)| (Some((m, p)), None, None)),
                any::<usize>().prop_map(|i| (None, Some(i), None)),
                packet().prop_map(|p| (None, None, Some(p))),
            ],
            1..80,
        ),
    ) {
        let now = Instant::now();
        let mut t = FlowTable::new(1000);
        let mut live: Vec<(u32, FlowMatch, u16)> = Vec::new();
        let mut reference = Classifier::default();
        let mut seq = 0u64;
        let mut seqs = std::collections::HashMap::new();
        for op in ops {
            match op {
                (Some((m, p)), _, _) => {
                    t.add(now, flow(m, p), false, false).unwrap();
                    // Replacement keeps one flow per (match, priority).
                    if let Some(i) = live.iter().position(|(_, lm, lp)| *lm == m && *lp == p) {
                        let (id, lm, lp) = live.remove(i);
                        reference.remove(&lm, Rule { priority: lp, seq: seqs[&id], id });
                    }
                    let id = t.iter().find(|(_, e)| e.flow.match_ == m && e.flow.priority == p).unwrap().0;
                    seqs.insert(id, seq);
                    reference.insert(&m, Rule { priority: p, seq, id });
                    seq += 1;
                    live.push((id, m, p));
                }
                (_, Some(i), _) if !live.is_empty() => {
                    let (id, m, p) = live.remove(i % live.len());
                    t.remove(id);
                    reference.remove(&m, Rule { priority: p, seq: seqs[&id], id });
                }
                (_, _, Some((fk, _))) => {
                    let k = Key::of_packet(Version::V10, &fk, 0);
                    let want = reference.lookup(&k).map(|r| r.id);
                    prop_assert_eq!(t.lookup(&k), want);
                    prop_assert_eq!(t.lookup(&k), want);
                }
                _ => {}
            }
        }
    }
}
