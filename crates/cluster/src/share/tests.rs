use super::*;
use baton_apps::views::{HostTable, Link, Served, SwitchNode};
use baton_runtime::SwitchId;

fn pr(d: u64, p: u32) -> PortRef {
    PortRef::new(DatapathId(d), PortNo(p))
}

/// A port; port 3's link is down, and each has a speed, so that every
/// field travels.
fn port(no: u32) -> PortDesc {
    PortDesc {
        link_down: no == 3,
        speed_kbps: Some(10_000_000),
        ..baton_runtime::testing::port(no)
    }
}

fn host(mac: u8, at: PortRef) -> Host {
    Host {
        mac: MacAddr([2, 0, 0, 0, 0, mac]),
        vlan: Some(7),
        ipv4: [Ipv4Addr::new(10, 0, 0, mac)].into(),
        ipv6: [Ipv6Addr::LOCALHOST].into(),
        at,
        first_seen: Instant::now(),
        last_seen: Instant::now(),
        at_since_ms: 1_700_000_000_000 + u64::from(mac),
    }
}

/// Switch 1 served here, switch 2 by member "b"; a cable between them
/// (both directions), a host on each.
fn network() -> (Topology, Hosts) {
    let mut t = Topology::default();
    for (d, served) in [
        (1, Served::Here(SwitchId::new(0, 0))),
        (2, Served::Peer(Arc::from("b"))),
    ] {
        t.switches.insert(
            DatapathId(d),
            Arc::new(SwitchNode {
                served,
                dpid: DatapathId(d),
                ports: (1..=3).map(|n| (PortNo(n), port(n))).collect(),
            }),
        );
    }
    let l = Link {
        src: pr(2, 2),
        dst: pr(1, 2),
    };
    t.add_link(l);
    t.add_link(l.reversed());
    t.host_ports.insert(pr(1, 3));
    t.host_ports.insert(pr(2, 3));
    let h = HostTable::new();
    h.insert(host(1, pr(1, 1)));
    h.insert(host(2, pr(2, 1)));
    (t, h.view())
}

#[test]
fn a_member_owns_its_switches_the_links_arriving_on_them_and_their_hosts() {
    let (t, h) = network();
    let facts = own_facts("a", Some(&t), Some(&h));
    let keys: Vec<&str> = facts.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "facts/a/host/02:00:00:00:00:01",
            "facts/a/hostport/0000000000000001/3",
            "facts/a/link/0000000000000001/2",
            "facts/a/switch/0000000000000001",
        ]
    );
    assert!(own_facts("a", None, Some(&h)).is_empty());
}

#[test]
fn another_member_reads_the_facts_back_as_they_were() {
    let (t, h) = network();
    let mut b = PeerState::new("b");
    for (k, v) in own_facts("a", Some(&t), Some(&h)) {
        assert!(b.apply(&k, Some(&v)), "{k} is news");
    }
    let peers = b.peers();
    let a = &peers.members[&Arc::<str>::from("a")];
    assert_eq!(a.switches[&DatapathId(1)], t.switches[&DatapathId(1)].ports);
    assert_eq!(
        a.links.iter().copied().collect::<Vec<_>>(),
        vec![Link {
            src: pr(2, 2),
            dst: pr(1, 2)
        }]
    );
    assert_eq!(
        a.host_ports.iter().copied().collect::<Vec<_>>(),
        vec![pr(1, 3)]
    );
    let got = &a.hosts[&MacAddr([2, 0, 0, 0, 0, 1])];
    let want = h.get(&MacAddr([2, 0, 0, 0, 0, 1])).unwrap();
    assert_eq!(
        (&got.vlan, &got.ipv4, &got.ipv6, got.at, got.at_since_ms),
        (
            &want.vlan,
            &want.ipv4,
            &want.ipv6,
            want.at,
            want.at_since_ms
        )
    );
    // The same again is no news; a deletion is, and a member with no
    // facts left is gone.
    for (k, v) in own_facts("a", Some(&t), Some(&h)) {
        assert!(!b.apply(&k, Some(&v)));
    }
    for k in own_facts("a", Some(&t), Some(&h)).keys() {
        assert!(b.apply(k, None));
    }
    assert!(b.peers().members.is_empty() && b.is_empty());
}

#[test]
fn a_members_own_facts_and_foreign_or_malformed_keys_are_ignored() {
    let (t, h) = network();
    let mut a = PeerState::new("a");
    for (k, v) in own_facts("a", Some(&t), Some(&h)) {
        assert!(!a.apply(&k, Some(&v)), "its own: {k}");
    }
    assert!(!a.apply("members/b", Some(b"{}")));
    assert!(!a.apply("facts/b/switch/zz", Some(b"[]")));
    assert!(!a.apply("facts/b/link/0000000000000001/2", Some(b"not json")));
    assert!(!a.apply("facts/b/host/x", Some(br#"{"mac":"nope"}"#)));
    assert!(!a.apply("facts/b/gadget/1", Some(b"{}")));
    assert!(a.is_empty());
}

#[test]
fn the_probe_key_reads_back_and_a_bad_one_is_ignored() {
    let key: [u8; 32] = std::array::from_fn(|i| i as u8 * 7);
    assert_eq!(
        parse_probe_key(format_probe_key(&key).as_bytes()),
        Some(key)
    );
    let mut s = PeerState::new("a");
    assert!(!s.apply(PROBE_KEY, Some(b"short")));
    assert!(s.apply(PROBE_KEY, Some(format_probe_key(&key).as_bytes())));
    assert_eq!(s.peers().probe_key, Some(key));
    assert_eq!(parse_probe_key("é".repeat(32).as_bytes()), None);
}

#[test]
fn a_member_whose_facts_all_go_lingers_until_its_switches_are_published_elsewhere() {
    let (t, h) = network();
    let a = own_facts("a", Some(&t), Some(&h));
    let t0 = Instant::now();
    let read = |s: &mut PeerState| {
        for (k, v) in &a {
            s.apply(k, Some(v));
        }
        s.settle(t0);
    };
    let host1 = MacAddr([2, 0, 0, 0, 0, 1]);

    // A deletion by a member that still has facts is seen at once.
    let mut c = PeerState::new("c");
    read(&mut c);
    assert!(c.apply("facts/a/link/0000000000000001/2", None));
    c.settle(t0);
    assert!(c.peers().members[&Arc::<str>::from("a")].links.is_empty());

    // Every fact at once (a lease expired): the view keeps them...
    let mut c = PeerState::new("c");
    read(&mut c);
    for k in a.keys() {
        c.apply(k, None);
    }
    assert!(c.settle(t0));
    let peers = c.peers();
    let kept = &peers.members[&Arc::<str>::from("a")];
    assert!(kept.switches.contains_key(&DatapathId(1)) && kept.hosts.contains_key(&host1));
    assert_eq!(kept.links.len(), 1);
    // ... until the switch's new master publishes it (with what it took
    // over from them).
    for (k, v) in own_facts("b", Some(&t), Some(&h)) {
        c.apply(&k, Some(&v));
    }
    assert!(c.settle(t0));
    let peers = c.peers();
    assert!(!peers.members.contains_key(&Arc::<str>::from("a")));
    assert!(
        peers.members[&Arc::<str>::from("b")]
            .hosts
            .contains_key(&host1)
    );

    // Or this member does.
    let mut c = PeerState::new("c");
    read(&mut c);
    for k in a.keys() {
        c.apply(k, None);
    }
    c.settle(t0);
    for (k, v) in own_facts("c", Some(&t), Some(&h)) {
        assert!(!c.apply(&k, Some(&v)), "its own facts are not the view's");
    }
    assert!(c.settle(t0));
    assert!(c.peers().members.is_empty());

    // Or until LINGER has passed.
    let mut c = PeerState::new("c");
    read(&mut c);
    for k in a.keys() {
        c.apply(k, None);
    }
    c.settle(t0);
    assert!(!c.settle(t0 + LINGER / 2));
    assert!(c.settle(t0 + LINGER));
    assert!(c.peers().members.is_empty());

    // A full read again that misses them is the same as their deletion.
    let mut c = PeerState::new("c");
    read(&mut c);
    c.clear();
    c.settle(t0);
    assert!(c.peers().members.contains_key(&Arc::<str>::from("a")));
    // And a member that comes back has its facts as they were.
    read(&mut c);
    assert_eq!(c.len(), a.len());
}
