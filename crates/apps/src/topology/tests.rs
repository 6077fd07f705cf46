//! Discovery in the test harness: switches' probes are carried between
//! ports by the test (a cable is "deliver what A sent out of port p as a
//! PACKET_IN on B's port q"), and forged, replayed, reflected, foreign and
//! flooding LLDP are dropped and counted.

use super::*;
use baton_openflow::neutral::Message;
use baton_openflow::types::PortReason;
use baton_openflow::{MacAddr, v10, v13};
use baton_runtime::AnyApp;
use baton_runtime::testing::{Harness, port};

const D1: DatapathId = DatapathId(1);
const D2: DatapathId = DatapathId(2);

fn pr(d: DatapathId, p: u32) -> PortRef {
    PortRef::new(d, PortNo(p))
}

/// The LLDP frames sent out of each port, from what the switch was sent.
fn probes_out(msgs: Vec<Message>) -> Vec<(PortNo, Vec<u8>)> {
    let mut out = Vec::new();
    for m in msgs {
        let (actions, data): (Vec<PortNo>, Vec<u8>) = match m {
            Message::V10(v10::Message::PacketOut(p)) => (
                p.actions
                    .iter()
                    .filter_map(|a| match a {
                        v10::Action::Output { port, .. } => Some(*port),
                        _ => None,
                    })
                    .collect(),
                p.data,
            ),
            Message::V13(v13::Message::PacketOut(p)) => (
                p.actions
                    .iter()
                    .filter_map(|a| match a {
                        v13::Action::Output { port, .. } => Some(*port),
                        _ => None,
                    })
                    .collect(),
                p.data,
            ),
            _ => continue,
        };
        if is_lldp(&data) {
            for p in actions {
                out.push((p, data.clone()));
            }
        }
    }
    out
}

struct Net {
    h: Harness,
    app: Arc<TopologyApp>,
    ids: BTreeMap<DatapathId, baton_runtime::SwitchId>,
    /// The cables: each end, by switch port.
    cables: BTreeMap<PortRef, PortRef>,
}

impl Net {
    fn new(cfg: TopologyConfig) -> Net {
        let app = Arc::new(TopologyApp::with_key(cfg, ProbeKey::from_bytes([7; 32])));
        Net {
            h: Harness::new(vec![AnyApp::from(app.clone())]),
            app,
            ids: BTreeMap::new(),
            cables: BTreeMap::new(),
        }
    }

    fn switch(&mut self, dpid: DatapathId, ports: u32, version: baton_openflow::Version) {
        let ports: Vec<_> = (1..=ports).map(port).collect();
        let id = self.h.connect_with_ports(dpid.0, version, &ports);
        self.ids.insert(dpid, id);
    }

    fn cable(&mut self, a: PortRef, b: PortRef) {
        self.cables.insert(a, b);
        self.cables.insert(b, a);
    }

    /// Delivers every probe the switches sent out of cabled ports to the
    /// far end; returns how many.
    fn carry(&mut self) -> usize {
        let mut n = 0;
        let ids: Vec<_> = self.ids.clone().into_iter().collect();
        for (dpid, id) in ids {
            for (p, frame) in probes_out(self.h.sent(id)) {
                if let Some(far) = self.cables.get(&PortRef::new(dpid, p)).copied() {
                    self.h
                        .packet_in_unbuffered(self.ids[&far.dpid], far.port.0, &frame);
                    n += 1;
                }
            }
        }
        n
    }

    /// Lets `d` pass in steps of 100 ms, carrying probes after each.
    fn run(&mut self, d: Duration) {
        let step = Duration::from_millis(100);
        let mut left = d;
        while !left.is_zero() {
            let s = step.min(left);
            self.h.advance(s);
            self.carry();
            left -= s;
        }
    }

    fn topology(&self) -> Topology {
        self.h
            .snapshot()
            .get::<Topology>()
            .map(|t| t.arc().as_ref().clone())
            .unwrap_or_default()
    }

    fn links(&self) -> Vec<Link> {
        self.topology().bidirectional_links().collect()
    }
}

fn two_switches(version: baton_openflow::Version) -> Net {
    let mut n = Net::new(TopologyConfig::default());
    n.switch(D1, 3, version);
    n.switch(D2, 2, version);
    n.cable(pr(D1, 2), pr(D2, 1));
    n
}

#[test]
fn a_cable_is_discovered_in_both_versions_and_ports_settle() {
    for version in [baton_openflow::Version::V10, baton_openflow::Version::V13] {
        let mut n = two_switches(version);
        // One probe each way, and one sent back by the switch that heard
        // first, before the other's arrived (a probe lost on the way would
        // otherwise cost a probe interval).
        assert_eq!(n.carry(), 3, "{version}: one probe each way, one back");
        assert_eq!(
            n.links(),
            vec![Link {
                src: pr(D1, 2),
                dst: pr(D2, 1)
            }],
            "{version}"
        );
        let t = n.topology();
        // The unplugged ports are still settling: neither edge nor link.
        assert!(t.is_settling(pr(D1, 1)) && t.edge_ports(D1).is_empty());
        n.h.advance(Duration::from_millis(600));
        let t = n.topology();
        assert_eq!(t.edge_ports(D1), vec![PortNo(1), PortNo(3)], "{version}");
        assert_eq!(t.edge_ports(D2), vec![PortNo(2)], "{version}");
        let c = n.app.counters();
        assert_eq!((c.links_learnt, c.probes_received), (2, 3));
    }
}

/// A probe lost one way (Open vSwitch drops what reaches a bridge before
/// its handshake is done) is not waited for a whole probe interval: the
/// link learnt the other way is probed back at once.
#[test]
fn a_link_known_one_way_is_probed_back_at_once() {
    for version in [baton_openflow::Version::V10, baton_openflow::Version::V13] {
        let mut n = two_switches(version);
        let (id1, id2) = (n.ids[&D1], n.ids[&D2]);
        // D2's first probes are lost.
        n.h.sent(id2);
        let from_d1 = probes_out(n.h.sent(id1));
        let (_, frame) = from_d1.iter().find(|(p, _)| *p == PortNo(2)).unwrap();
        n.h.packet_in_unbuffered(id2, 1, frame);
        assert!(n.links().is_empty(), "{version}: one way only");
        // D2 probes back out of the port the probe came in by, at once.
        let back = probes_out(n.h.sent(id2));
        assert_eq!(back.len(), 1, "{version}: {back:?}");
        assert_eq!(back[0].0, PortNo(1));
        n.h.packet_in_unbuffered(id1, 2, &back[0].1);
        assert_eq!(
            n.links().len(),
            1,
            "{version}: both ways, no interval waited"
        );
        // Known both ways: nothing more is sent.
        assert!(probes_out(n.h.sent(id1)).is_empty());
    }
}

/// The probe back can be lost as well: it is sent again at every timer
/// tick until the link is known both ways, and no more after.
#[test]
fn a_link_known_one_way_is_probed_back_at_every_tick_until_known_both_ways() {
    let mut n = two_switches(baton_openflow::Version::V13);
    let (id1, id2) = (n.ids[&D1], n.ids[&D2]);
    n.h.sent(id2);
    let from_d1 = probes_out(n.h.sent(id1));
    let (_, frame) = from_d1.iter().find(|(p, _)| *p == PortNo(2)).unwrap();
    n.h.packet_in_unbuffered(id2, 1, frame);
    // The probe back is lost, and so is the one of the next tick.
    assert_eq!(probes_out(n.h.sent(id2)).len(), 1);
    n.h.advance(TICK);
    let again = probes_out(n.h.sent(id2));
    assert!(again.iter().any(|(p, _)| *p == PortNo(1)), "{again:?}");
    n.h.advance(TICK);
    let again = probes_out(n.h.sent(id2));
    let (_, back) = again.iter().find(|(p, _)| *p == PortNo(1)).unwrap();
    n.h.packet_in_unbuffered(id1, 2, back);
    assert_eq!(n.links().len(), 1, "both ways");
    n.h.sent(id1);
    n.h.advance(TICK);
    assert!(
        probes_out(n.h.sent(id2))
            .iter()
            .all(|(p, _)| *p != PortNo(1)),
        "no probe back once known both ways"
    );
}

#[test]
fn a_port_that_goes_down_loses_its_link_at_once_and_finds_it_again() {
    let mut n = two_switches(baton_openflow::Version::V10);
    n.carry();
    let id1 = n.ids[&D1];
    n.h.port_status(
        id1,
        PortReason::Modify,
        &PortDesc {
            link_down: true,
            ..port(2)
        },
    );
    assert!(n.links().is_empty());
    assert_eq!(n.app.counters().links_removed, 2);
    n.h.port_status(id1, PortReason::Modify, &port(2));
    // The port that came back is probed at once, and the other end probes
    // back as soon as it hears: the link is known both ways at once.
    assert_eq!(n.carry(), 2);
    assert_eq!(n.links().len(), 1);
}

#[test]
fn a_switch_that_leaves_takes_its_links_and_quiet_links_age_out() {
    let mut n = two_switches(baton_openflow::Version::V13);
    n.carry();
    n.h.disconnect(n.ids[&D2]);
    assert!(n.links().is_empty());
    assert!(!n.topology().switches.contains_key(&D2));

    let mut n = two_switches(baton_openflow::Version::V10);
    n.carry();
    // Probes keep the link while they flow...
    n.run(Duration::from_secs(30));
    assert_eq!(n.links().len(), 1);
    // ...and it goes when they stop.
    n.cables.clear();
    n.run(Duration::from_secs(20));
    assert!(n.links().is_empty());
}

#[test]
fn a_switch_that_leaves_takes_its_own_ports_only() {
    const D3: DatapathId = DatapathId(3);
    let mut n = Net::new(TopologyConfig::default());
    for d in [D1, D2, D3] {
        n.switch(d, 4, baton_openflow::Version::V10);
    }
    n.cable(pr(D1, 1), pr(D2, 1));
    n.cable(pr(D2, 2), pr(D3, 1));
    n.run(Duration::from_secs(1));
    assert_eq!(n.links().len(), 2);
    // On every switch, a host on port 3 and port 4 just back up.
    let mut frame = vec![0xff; 6];
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 0x42, 0x08, 0x00]);
    frame.resize(60, 0);
    for d in [D1, D2, D3] {
        let id = n.ids[&d];
        n.h.packet_in(id, 3, &frame);
        let down = PortDesc {
            link_down: true,
            ..port(4)
        };
        n.h.port_status(id, PortReason::Modify, &down);
        n.h.port_status(id, PortReason::Modify, &port(4));
    }
    let ports = |no: u32, ds: &[DatapathId]| ds.iter().map(|&d| pr(d, no)).collect::<Vec<_>>();
    let t = n.topology();
    assert_eq!(
        t.host_ports.iter().copied().collect::<Vec<_>>(),
        ports(3, &[D1, D2, D3])
    );
    assert_eq!(
        t.settling.iter().copied().collect::<Vec<_>>(),
        ports(4, &[D1, D2, D3])
    );

    n.h.disconnect(n.ids[&D2]);
    let t = n.topology();
    assert_eq!(t.switches.keys().copied().collect::<Vec<_>>(), vec![D1, D3]);
    assert!(t.links().next().is_none(), "both links touched switch 2");
    assert_eq!(
        t.host_ports.iter().copied().collect::<Vec<_>>(),
        ports(3, &[D1, D3])
    );
    assert_eq!(
        t.settling.iter().copied().collect::<Vec<_>>(),
        ports(4, &[D1, D3])
    );
    let shared = lock(&n.app.inner.shared);
    let keys = |m: &BTreeMap<PortRef, Instant>| m.keys().copied().collect::<Vec<_>>();
    assert_eq!(keys(&shared.settling_since), ports(4, &[D1, D3]));
    let mut up: Vec<PortRef> = (1..=4).flat_map(|no| ports(no, &[D1, D3])).collect();
    up.sort();
    assert_eq!(keys(&shared.up_since), up);
    // The far ends of the links it took lost them.
    assert_eq!(keys(&shared.link_lost), vec![pr(D1, 1), pr(D3, 1)]);
}

#[test]
fn forged_replayed_reflected_and_foreign_lldp_teach_nothing() {
    let mut n = two_switches(baton_openflow::Version::V10);
    let id1 = n.ids[&D1];
    let id2 = n.ids[&D2];
    let sent = probes_out(n.h.sent(id1));
    let (_, real) = sent.iter().find(|(p, _)| *p == PortNo(2)).unwrap().clone();
    n.h.sent(id2);
    // Another controller's key.
    let other = ProbeKey::from_bytes([8; 32]).encode(
        &Probe {
            dpid: D1,
            port: PortNo(2),
            sent_ms: 0,
            nonce: 1,
        },
        MacAddr([2, 0, 0, 0, 0, 2]),
    );
    n.h.packet_in_unbuffered(id2, 1, &other);
    // Truncated, and reflected back into the port that sent it.
    n.h.packet_in_unbuffered(id2, 1, &real[..30]);
    n.h.packet_in_unbuffered(id1, 2, &real);
    // The real one, then the same again (a replay).
    n.h.packet_in_unbuffered(id2, 1, &real);
    n.h.packet_in_unbuffered(id2, 1, &real);
    // A stale one: three seconds old.
    n.h.advance(Duration::from_secs(3));
    let (_, late) = probes_out(n.h.sent(id1))
        .into_iter()
        .find(|(p, _)| *p == PortNo(2))
        .unwrap_or((PortNo(2), real.clone()));
    n.h.advance(Duration::from_secs(3));
    n.h.packet_in_unbuffered(id2, 1, &late);
    // Somebody else's LLDP.
    let mut foreign = Vec::new();
    foreign.extend_from_slice(&crate::lldp::LLDP_DST.0);
    foreign.extend_from_slice(&[2, 0, 0, 0, 0, 9, 0x88, 0xcc]);
    foreign.extend_from_slice(&[2, 7, 4, 2, 0, 0, 0, 0, 9, 4, 2, 5, b'1', 6, 2, 0, 120, 0, 0]);
    n.h.packet_in_unbuffered(id2, 1, &foreign);
    let c = n.app.counters();
    assert_eq!(c.bad_authenticator, 1, "{c:?}");
    assert_eq!(c.malformed, 1, "{c:?}");
    assert_eq!(c.reflected, 1, "{c:?}");
    assert_eq!(c.replayed, 2, "{c:?}");
    assert_eq!(c.foreign, 1, "{c:?}");
    // Only the one real probe taught anything: a link in one direction.
    assert_eq!(c.links_learnt, 1);
    assert!(n.links().is_empty(), "no link both ways");
}

#[test]
fn a_host_port_does_not_become_a_link_port() {
    let mut n = two_switches(baton_openflow::Version::V10);
    let id1 = n.ids[&D1];
    let id2 = n.ids[&D2];
    n.carry();
    n.h.advance(Duration::from_millis(600));
    // A host talks on switch 2's port 2...
    let mut frame = vec![0xff; 6];
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 0x42, 0x08, 0x00]);
    frame.resize(60, 0);
    n.h.packet_in(id2, 2, &frame);
    n.h.sent(id2);
    // ...then relays into it a fresh probe of switch 1's port 3 (which a
    // partner on that port captured).
    n.h.advance(Duration::from_secs(5));
    let (_, probe) = probes_out(n.h.sent(id1))
        .into_iter()
        .rfind(|(p, _)| *p == PortNo(3))
        .unwrap();
    n.h.packet_in_unbuffered(id2, 2, &probe);
    assert_eq!(n.app.counters().host_port, 1);
    assert!(!n.topology().is_link_port(pr(D2, 2)));
    // Once the port goes down and up, it may be a link port again.
    n.h.port_status(
        id2,
        PortReason::Modify,
        &PortDesc {
            link_down: true,
            ..port(2)
        },
    );
    n.h.port_status(id2, PortReason::Modify, &port(2));
    n.h.advance(Duration::from_secs(5));
    let (_, probe) = probes_out(n.h.sent(id1))
        .into_iter()
        .rfind(|(p, _)| *p == PortNo(3))
        .unwrap();
    n.h.packet_in_unbuffered(id2, 2, &probe);
    assert!(n.topology().is_link_port(pr(D2, 2)));
}

#[test]
fn an_lldp_flood_is_rate_limited_per_port() {
    let mut n = two_switches(baton_openflow::Version::V10);
    let id2 = n.ids[&D2];
    let junk = {
        let mut f = Vec::new();
        f.extend_from_slice(&crate::lldp::LLDP_DST.0);
        f.extend_from_slice(&[2, 0, 0, 0, 0, 9, 0x88, 0xcc, 0, 0]);
        f
    };
    let burst = TopologyConfig::default().lldp_burst as usize;
    for _ in 0..burst + 25 {
        n.h.packet_in_unbuffered(id2, 2, &junk);
    }
    let c = n.app.counters();
    assert_eq!(c.rate_limited, 25);
    assert_eq!(c.malformed as usize, burst);
    // The flood on one port does not keep another's probes out.
    assert_eq!(n.carry(), 3);
    assert_eq!(n.links().len(), 1);
}

/// One member of a cluster in the harness: its own probe key until the
/// cluster's arrives with [`Peers`].
fn member(
    dpid: DatapathId,
    ports: u32,
    own_key: u8,
) -> (Harness, baton_runtime::SwitchId, Arc<TopologyApp>) {
    let app = Arc::new(TopologyApp::with_key(
        TopologyConfig::default(),
        ProbeKey::from_bytes([own_key; 32]),
    ));
    let mut h = Harness::new(vec![AnyApp::from(app.clone())]);
    let ports: Vec<_> = (1..=ports).map(port).collect();
    let id = h.connect_with_ports(dpid.0, baton_openflow::Version::V13, &ports);
    (h, id, app)
}

/// What the cluster layer shares of a member's topology: the switches it
/// serves and the links arriving on them.
fn own_facts(h: &Harness) -> crate::views::PeerFacts {
    let t = h.snapshot().get::<Topology>().unwrap();
    let here = |d: &DatapathId| t.switches.get(d).is_some_and(|s| s.here().is_some());
    crate::views::PeerFacts {
        switches: t
            .switches
            .values()
            .filter(|s| here(&s.dpid))
            .map(|s| (s.dpid, s.ports.clone()))
            .collect(),
        links: t.links().filter(|l| here(&l.dst.dpid)).collect(),
        hosts: BTreeMap::new(),
        host_ports: t
            .host_ports
            .iter()
            .filter(|p| here(&p.dpid))
            .copied()
            .collect(),
    }
}

fn give_peers(h: &mut Harness, name: &str, facts: crate::views::PeerFacts) {
    let peers = Peers {
        probe_key: Some([9; 32]),
        members: [(Arc::from(name), Arc::new(facts))].into(),
    };
    h.network()
        .publish(Publish::new().view(peers))
        .expect("the harness's network writes any view");
    h.advance(Duration::from_millis(1));
}

/// Two members of a cluster, each master of one switch, a cable between
/// them: each discovers the link arriving on its own switch from the
/// other's probe (signed with the cluster's key), and with the other's
/// facts merged in both see the whole network, each switch served by its
/// own master.
#[test]
fn cluster_members_discover_the_links_between_their_switches_and_merge_them() {
    let (mut a, a1, _) = member(D1, 3, 1);
    let (mut b, b2, _) = member(D2, 2, 2);
    let (fa, fb) = (own_facts(&a), own_facts(&b));
    give_peers(&mut a, "b", fb);
    give_peers(&mut b, "a", fa);
    a.sent(a1);
    b.sent(b2);
    let mut learnt = false;
    for _ in 0..10 {
        a.advance(Duration::from_millis(100));
        b.advance(Duration::from_millis(100));
        for (p, frame) in probes_out(a.sent(a1)) {
            if p == PortNo(2) {
                b.packet_in_unbuffered(b2, 1, &frame);
            }
        }
        for (p, frame) in probes_out(b.sent(b2)) {
            if p == PortNo(1) {
                a.packet_in_unbuffered(a1, 2, &frame);
            }
        }
        let (fa, fb) = (own_facts(&a), own_facts(&b));
        learnt = !fa.links.is_empty() && !fb.links.is_empty();
        give_peers(&mut a, "b", fb);
        give_peers(&mut b, "a", fa);
        if learnt {
            break;
        }
    }
    assert!(learnt, "each member learns the link arriving on its switch");
    for (h, mine, theirs, peer) in [(&a, D1, D2, "b"), (&b, D2, D1, "a")] {
        let t = h.snapshot().get::<Topology>().unwrap();
        assert_eq!(
            t.bidirectional_links().collect::<Vec<_>>(),
            vec![Link {
                src: pr(D1, 2),
                dst: pr(D2, 1)
            }],
            "both directions, whoever discovered each"
        );
        assert!(t.switches[&mine].here().is_some());
        assert_eq!(t.switches[&theirs].served, Served::Peer(Arc::from(peer)));
        let ports = if theirs == D1 { 3 } else { 2 };
        assert_eq!(
            t.switches[&theirs].ports.len(),
            ports,
            "its ports, from its facts"
        );
    }
    // The other member's switch leaves: its links go from the merge too.
    give_peers(&mut a, "b", crate::views::PeerFacts::default());
    let t = a.snapshot().get::<Topology>().unwrap();
    assert!(!t.switches.contains_key(&D2));
    assert_eq!(t.bidirectional_links().count(), 0);
}

/// A host relaying one member's probes into another member's switch
/// fabricates no link: the port it sends from is a host port in the first
/// member's facts, which the second checks probes against.
#[test]
fn a_host_port_of_one_member_is_one_for_the_others() {
    let (mut a, a1, _) = member(D1, 2, 1);
    let (mut b, b2, b_app) = member(D2, 2, 2);
    let (fa, fb) = (own_facts(&a), own_facts(&b));
    give_peers(&mut a, "b", fb);
    give_peers(&mut b, "a", fa);
    // Past the settling and a cluster's first probe interval, host
    // traffic on D1/1 makes it a host port.
    a.advance(Duration::from_secs(6));
    b.advance(Duration::from_secs(6));
    let frame = baton_testbed::udp(
        MacAddr([2, 0, 0, 0, 0, 7]),
        [10, 0, 0, 7],
        MacAddr([2, 0, 0, 0, 0, 8]),
        [10, 0, 0, 8],
        1,
    );
    a.packet_in_unbuffered(a1, 1, &frame);
    let fa = own_facts(&a);
    assert_eq!(
        fa.host_ports.iter().copied().collect::<Vec<_>>(),
        vec![pr(D1, 1)]
    );
    give_peers(&mut b, "a", fa);
    // The host relays A's next probe out of D1/1 into B's D2/2.
    a.sent(a1);
    a.advance(Duration::from_secs(5));
    b.advance(Duration::from_secs(5));
    let relayed = probes_out(a.sent(a1))
        .into_iter()
        .find(|(p, _)| *p == PortNo(1))
        .expect("a probe out of D1/1")
        .1;
    b.packet_in_unbuffered(b2, 2, &relayed);
    let t = b.snapshot().get::<Topology>().unwrap();
    assert_eq!(t.links().count(), 0, "no link from a host port");
    assert!(t.host_ports.contains(&pr(D1, 1)));
    assert_eq!(b_app.counters().host_port, 1, "dropped as a host port's");
}
