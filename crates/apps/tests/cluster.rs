//! Host tracking as one member of a cluster, in the harness: the other
//! members' hosts ([`Peers`]) merge into the [`Hosts`], a host seen later
//! at another member's switch has moved there (this member forgets its
//! own, older sighting), and a switch whose mastership moves to another
//! member takes its hosts along.

use baton_apps::devices::{DevicesApp, DevicesConfig};
use baton_apps::views::{Host, Hosts, PeerFacts, Peers, PortRef, Served, SwitchNode, Topology};
use baton_openflow::{DatapathId, MacAddr, PortNo, Version};
use baton_runtime::env::Publish;
use baton_runtime::testing::{Harness, port};
use baton_runtime::{AnyApp, SwitchId};
use baton_testbed::udp;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

const D1: DatapathId = DatapathId(1);
const D2: DatapathId = DatapathId(2);
const H: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const G: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);

/// A topology of two switches with two live ports each: D1 served by
/// `d1`, D2 by member "b".
fn topology(d1: Served) -> Topology {
    let node = |dpid, served| {
        Arc::new(SwitchNode {
            served,
            dpid,
            ports: [(PortNo(1), port(1)), (PortNo(2), port(2))].into(),
        })
    };
    let mut t = Topology::default();
    t.switches.insert(D1, node(D1, d1));
    t.switches
        .insert(D2, node(D2, Served::Peer(Arc::from("b"))));
    t
}

fn host(mac: MacAddr, at: PortRef, at_since_ms: u64) -> Arc<Host> {
    Arc::new(Host {
        mac,
        vlan: None,
        ipv4: BTreeSet::new(),
        ipv6: BTreeSet::new(),
        at,
        first_seen: Instant::now(),
        last_seen: Instant::now(),
        at_since_ms,
    })
}

/// Member "b" knows these hosts.
fn peers(hosts: &[Arc<Host>]) -> Peers {
    let facts = PeerFacts {
        switches: BTreeMap::new(),
        links: BTreeSet::new(),
        hosts: hosts.iter().map(|h| (h.mac, h.clone())).collect(),
        host_ports: BTreeSet::new(),
    };
    Peers {
        probe_key: None,
        members: [(Arc::from("b"), Arc::new(facts))].into(),
    }
}

fn publish(h: &mut Harness, p: Publish) {
    h.network().publish(p).unwrap();
    h.advance(Duration::from_millis(1));
}

fn where_is(h: &Harness, mac: MacAddr) -> Option<PortRef> {
    h.snapshot().get::<Hosts>()?.get(&mac).map(|h| h.at)
}

fn start() -> (Harness, SwitchId) {
    let devices = Arc::new(DevicesApp::new(DevicesConfig::default()));
    let mut h = Harness::new(vec![AnyApp::from(devices)]);
    let id = h.connect_with_ports(D1.0, Version::V13, &[port(1), port(2)]);
    publish(
        &mut h,
        Publish::new()
            .view(topology(Served::Here(id)))
            .view(peers(&[])),
    );
    (h, id)
}

#[test]
fn a_peers_hosts_are_merged_and_a_later_sighting_wins() {
    let (mut h, id) = start();
    let d1p1 = PortRef::new(D1, PortNo(1));
    let d2p1 = PortRef::new(D2, PortNo(1));
    h.packet_in_unbuffered(id, 1, &udp(H, [10, 0, 0, 1], G, [10, 0, 0, 2], 1));
    assert_eq!(
        where_is(&h, H),
        Some(d1p1),
        "learnt on this member's switch"
    );
    // The peer knows G, and saw H long ago at its own switch: G is merged
    // in, H stays where this member saw it last.
    publish(
        &mut h,
        Publish::new().view(peers(&[
            host(G, PortRef::new(D2, PortNo(2)), 1),
            host(H, d2p1, 1),
        ])),
    );
    assert_eq!(where_is(&h, G), Some(PortRef::new(D2, PortNo(2))));
    assert_eq!(where_is(&h, H), Some(d1p1), "its own, later sighting wins");
    // Now the peer sees H after this member did: H moved there.
    publish(
        &mut h,
        Publish::new().view(peers(&[host(H, d2p1, u64::MAX)])),
    );
    assert_eq!(where_is(&h, H), Some(d2p1), "moved to the peer's switch");
    // ... and this member forgot its own sighting: when the peer forgets
    // H, nobody has it.
    publish(&mut h, Publish::new().view(peers(&[])));
    assert_eq!(where_is(&h, H), None);
    assert_eq!(where_is(&h, G), None, "the peer's hosts go with its facts");
}

#[test]
fn a_switch_handed_to_a_peer_keeps_its_hosts_until_the_peer_has_them() {
    let d1p2 = PortRef::new(D1, PortNo(2));
    let (mut h, id) = start();
    h.packet_in_unbuffered(id, 2, &udp(H, [10, 0, 0, 1], G, [10, 0, 0, 2], 1));
    assert_eq!(where_is(&h, H), Some(d1p2));
    publish(
        &mut h,
        Publish::new().view(topology(Served::Peer(Arc::from("b")))),
    );
    assert_eq!(
        where_is(&h, H),
        Some(d1p2),
        "never gone on the way: kept until the new master has it"
    );
    publish(&mut h, Publish::new().view(peers(&[host(H, d1p2, 1)])));
    let hosts = h.snapshot().get::<Hosts>().unwrap();
    assert_eq!(hosts.at(&H), Some(d1p2), "the new master's now");

    // A switch handed over whose hosts no member takes: they go after
    // HANDOVER_MAX.
    let (mut h, id) = start();
    h.packet_in_unbuffered(id, 2, &udp(H, [10, 0, 0, 1], G, [10, 0, 0, 2], 1));
    publish(
        &mut h,
        Publish::new().view(topology(Served::Peer(Arc::from("b")))),
    );
    h.advance(baton_apps::topology::HANDOVER_MAX + Duration::from_secs(1));
    assert_eq!(where_is(&h, H), None, "no member took it");
}

#[test]
fn a_switch_this_member_takes_over_brings_the_peers_hosts_as_its_own() {
    let d1p2 = PortRef::new(D1, PortNo(2));
    let (mut h, id) = start();
    publish(
        &mut h,
        Publish::new()
            .view(topology(Served::Peer(Arc::from("b"))))
            .view(peers(&[host(H, d1p2, 1)])),
    );
    assert_eq!(where_is(&h, H), Some(d1p2));
    // Switch 1 is this member's now, and the peer's facts go (it left):
    // the host stays, as this member's.
    publish(
        &mut h,
        Publish::new()
            .view(topology(Served::Here(id)))
            .view(peers(&[])),
    );
    assert_eq!(where_is(&h, H), Some(d1p2), "taken over, never gone");
}
