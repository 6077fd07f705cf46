use super::*;
use baton_openflow::neutral::{self, Ipv4Prefix, L4Match, MatchFields, NetMatch, VlanMatch};
use baton_openflow::{MacAddr, Version, Xid, v10, v13};
use baton_runtime::control::FlowEntry;
use serde_json::json;

/// Deserializes as the API does: errors name the field.
fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| format!("{}: {}", e.path(), e.inner()))
}

fn check(v: serde_json::Value) -> Result<ValidFlow, String> {
    from_json::<NewFlow>(v)?.check()
}

#[test]
fn prerequisites_are_implied_and_a_conflict_names_both_fields() {
    let f = check(json!({
        "match": {"in_port": 1, "eth_dst": "00:00:00:00:00:02", "tcp_dst": 80, "ipv4_src": "10.0.0.0/8"},
        "priority": 100,
        "actions": ["output:2"],
    }))
    .unwrap();
    let s = f.spec();
    assert_eq!(s.priority, 100);
    assert_eq!(
        s.match_,
        MatchSpec::Fields(MatchFields {
            in_port: Some(PortNo(1)),
            eth_dst: Some(MacAddr([0, 0, 0, 0, 0, 2])),
            net: NetMatch::Ipv4 {
                src: Some(Ipv4Prefix {
                    addr: "10.0.0.0".parse().unwrap(),
                    len: 8
                }),
                dst: None,
                dscp: None,
                l4: L4Match::Tcp {
                    src: None,
                    dst: Some(80)
                },
            },
            ..MatchFields::ANY
        })
    );
    assert_eq!(s.actions, [ActionSpec::output(PortNo(2))]);

    let e = check(json!({"match": {"tcp_dst": 80, "ip_proto": 17}})).unwrap_err();
    assert!(
        e.contains("match.tcp_dst") && e.contains("match.ip_proto"),
        "{e}"
    );
    let e = check(json!({"match": {"tcp_dst": 80, "udp_src": 53}})).unwrap_err();
    assert!(
        e.contains("match.udp_src") && e.contains("match.tcp_dst"),
        "{e}"
    );
    let e = check(json!({"match": {"arp_op": 1, "eth_type": "0x0800"}})).unwrap_err();
    assert!(e.contains("match.arp_op needs eth_type 0x0806"), "{e}");
    let e = check(json!({"match": {"vlan_pcp": 3}})).unwrap_err();
    assert!(e.contains("match.vlan_pcp needs match.vlan_vid"), "{e}");
}

#[test]
fn bad_values_name_their_field() {
    for (body, field) in [
        (json!({"match": {"vlan_vid": 5000}}), "match.vlan_vid"),
        (json!({"match": {"eth_src": "00:11"}}), "match.eth_src"),
        (
            json!({"match": {"ipv4_dst": "10.0.0.0/33"}}),
            "match.ipv4_dst",
        ),
        (json!({"match": {"in_port": "uplink"}}), "match.in_port"),
        (json!({"match": {"ip_dscp": 64}}), "match.ip_dscp"),
        (json!({"match": {"ipv6_src": "::1"}}), "match"),
        (json!({"match": {"tcp_dst": -1}}), "match.tcp_dst"),
        (json!({"match": {"tcp_dst": "http"}}), "match.tcp_dst"),
        (json!({"priority": 70000}), "priority"),
        (json!({"priority": "high"}), "priority"),
        (json!({"cookie": 1u64 << 50}), "cookie"),
        (json!({"actions": ["output:2", "jump:3"]}), "actions[1]"),
        (json!({"actions": ["output"]}), "actions[0]"),
        (json!({"actions": ["set_vlan_vid:4096"]}), "actions[0]"),
        (json!({"actions": ["strip_vlan:1"]}), "actions[0]"),
        (json!({"action": ["output:1"]}), "action"),
    ] {
        let e = check(body.clone()).unwrap_err();
        assert!(e.contains(field), "{body}: {e:?} does not name {field}");
    }
}

#[test]
fn actions_in_every_form() {
    let f = check(json!({"actions": [
        "output:flood", "output:controller:128", "output:LOCAL", "set_eth_src:00:00:00:00:00:09",
        "set_vlan_vid:7", "set_vlan_pcp:3", "strip_vlan", "pop_vlan", "set_ipv4_dst:10.0.0.9",
        "set_ip_dscp:46", "set_tcp_src:1", "set_udp_dst:2", "enqueue:3:1"
    ]}))
    .unwrap();
    assert_eq!(
        f.spec().actions,
        [
            ActionSpec::output(PortNo::FLOOD),
            ActionSpec::Output {
                port: PortNo::CONTROLLER,
                max_len: 128
            },
            ActionSpec::output(PortNo::LOCAL),
            ActionSpec::SetEthSrc(MacAddr([0, 0, 0, 0, 0, 9])),
            ActionSpec::SetVlanVid(7),
            ActionSpec::SetVlanPcp(3),
            ActionSpec::StripVlan,
            ActionSpec::StripVlan,
            ActionSpec::SetIpv4Dst("10.0.0.9".parse().unwrap()),
            ActionSpec::SetIpDscp(46),
            ActionSpec::SetTcpSrc(1),
            ActionSpec::SetUdpDst(2),
            ActionSpec::Enqueue {
                port: PortNo(3),
                queue_id: 1
            },
        ]
    );
}

#[test]
fn deletions_are_covered_or_strict() {
    let d: FlowDeletion = from_json(json!({"match": {}})).unwrap();
    let d = d.check().unwrap();
    assert_eq!(
        (d.match_, d.which, d.out_port),
        (MatchSpec::all(), FlowSelection::Covered, PortNo::ANY)
    );
    let d: FlowDeletion =
        from_json(json!({"match": {"eth_dst": "00:00:00:00:00:01"}, "priority": 5, "out_port": 2}))
            .unwrap();
    let d = d.check().unwrap();
    assert_eq!(
        (d.which, d.out_port),
        (FlowSelection::Exactly { priority: 5 }, PortNo(2))
    );
    let e = from_json::<FlowDeletion>(json!({"priority": 5})).unwrap_err();
    assert!(e.contains("match"), "{e}");
}

/// What a switch would report for `flow` after installing it: the
/// flow-mod encoded for `version`, decoded, as flow statistics.
fn as_reported(flow: &ValidFlow, version: Version) -> FlowEntry {
    let mut out = Vec::new();
    neutral::encode_flow_add(&mut out, version, Xid(1), &flow.spec());
    match version {
        Version::V10 => {
            let v10::Message::FlowMod(m) = v10::decode(&out).unwrap().1 else {
                panic!("a flow-mod")
            };
            FlowEntry::V10(v10::stats::FlowStats {
                table_id: 0,
                match_: m.match_,
                duration_sec: 1,
                duration_nsec: 500_000_000,
                priority: m.priority,
                idle_timeout: m.idle_timeout,
                hard_timeout: m.hard_timeout,
                cookie: m.cookie,
                packet_count: 3,
                byte_count: 300,
                actions: m.actions,
            })
        }
        Version::V13 => {
            let v13::Message::FlowMod(m) = v13::decode(&out).unwrap().1 else {
                panic!("a flow-mod")
            };
            FlowEntry::V13(v13::multipart::FlowStats {
                table_id: 0,
                duration_sec: 1,
                duration_nsec: 500_000_000,
                priority: m.priority,
                idle_timeout: m.idle_timeout,
                hard_timeout: m.hard_timeout,
                flags: m.flags,
                cookie: m.cookie,
                packet_count: 3,
                byte_count: 300,
                match_: m.match_,
                instructions: m.instructions,
            })
        }
    }
}

#[test]
fn a_flow_read_back_can_be_posted_again_in_both_versions() {
    let posted = [
        json!({"match": {"in_port": 1, "eth_src": "00:00:00:00:00:01", "vlan_vid": 10, "vlan_pcp": 2,
                         "udp_dst": 53, "ipv4_dst": "10.1.0.0/16", "ip_dscp": 8},
               "priority": 300, "idle_timeout": 10, "cookie": 42,
               "actions": ["set_eth_dst:00:00:00:00:00:09", "set_vlan_vid:20", "output:3"]}),
        json!({"match": {"arp_op": 1, "arp_tpa": "10.0.0.1", "vlan_vid": "none"},
               "actions": ["output:controller"]}),
        json!({"match": {"icmpv4_type": 8, "icmpv4_code": 0}, "actions": []}),
        json!({"match": {"eth_type": 34525}, "actions": ["output:in_port"]}),
        json!({"match": {"ip_proto": 89}, "actions": ["output:normal"]}),
    ];
    for body in posted {
        let flow = check(body.clone()).unwrap();
        for version in [Version::V10, Version::V13] {
            let shown = Flow::new(&as_reported(&flow, version), |_| None);
            assert_eq!((shown.priority, shown.packets), (flow.spec().priority, 3));
            assert_eq!(shown.duration_secs, 1.5);
            let again = json!({
                "match": shown.match_,
                "priority": shown.priority,
                "idle_timeout": shown.idle_timeout,
                "cookie": u64::from_str_radix(shown.cookie.trim_start_matches("0x"), 16).unwrap(),
                "actions": shown.actions,
            });
            let reposted = check(again.clone())
                .unwrap_or_else(|e| panic!("{version}: {again} cannot be posted: {e}"));
            assert_eq!(
                reposted.spec(),
                flow.spec(),
                "{version}: {body} came back as {again}"
            );
        }
    }
}

#[test]
fn fields_a_post_cannot_make_are_still_shown() {
    let entry = FlowEntry::V13(v13::multipart::FlowStats {
        table_id: 1,
        duration_sec: 0,
        duration_nsec: 0,
        priority: 1,
        idle_timeout: 0,
        hard_timeout: 0,
        flags: 0,
        cookie: Cookie(0xabcd << 48),
        packet_count: 0,
        byte_count: 0,
        match_: v13::Match13 {
            fields: vec![
                v13::Oxm::EthType(0x86dd),
                v13::Oxm::Ipv6Src {
                    value: "fe80::1".parse().unwrap(),
                    mask: None,
                },
                v13::Oxm::Metadata {
                    value: 5,
                    mask: Some(0xff),
                },
            ],
        },
        instructions: vec![
            v13::Instruction::Meter(3),
            v13::Instruction::ApplyActions(vec![v13::Action::Group(7)]),
            v13::Instruction::GotoTable(2),
        ],
    });
    let shown = Flow::new(&entry, |c| {
        (c.0 >> 48 == 0xabcd).then(|| "routing".to_string())
    });
    assert_eq!(shown.installed_by.as_deref(), Some("routing"));
    assert_eq!(shown.match_["ipv6_src"], "fe80::1");
    assert_eq!(shown.match_["metadata"], "0x5/0xff");
    assert_eq!(shown.match_["eth_type"], "0x86dd");
    assert_eq!(shown.actions, ["meter:3", "group:7", "goto_table:2"]);
    // Vlan "none" and untagged agree across versions.
    assert!(matches!(
        check(json!({"match": {"vlan_vid": "none"}}))
            .unwrap()
            .spec()
            .match_,
        MatchSpec::Fields(MatchFields {
            vlan: Some(VlanMatch::Untagged),
            ..
        })
    ));
}

#[test]
fn ethernet_addresses() {
    assert_eq!(
        parse_mac("00:1b:21:3a:4f:5e"),
        Ok(MacAddr([0, 0x1b, 0x21, 0x3a, 0x4f, 0x5e]))
    );
    assert_eq!(parse_mac("00-1B-21-3A-4F-5E").unwrap().0[1], 0x1b);
    assert!(parse_mac("00:1b:21:3a:4f").is_err());
    assert!(parse_mac("00:1b:21:3a:4f:zz").is_err());
}
