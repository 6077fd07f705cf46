//! The network services (topology, devices, routing) running a network of
//! software switches in one process (`baton-testbed`): discovery on a chain
//! and a ring, hosts at their true attachment points, broadcasts to every
//! edge port at once with no storm and no duplicate, shortest paths, reroute
//! after a cut, rediscovery after repair, proxy ARP, in both OpenFlow
//! versions.

use baton_apps::devices::{DevicesApp, DevicesConfig};
use baton_apps::routes::Routes;
use baton_apps::routing::{RoutingApp, RoutingConfig};
use baton_apps::topology::{TopologyApp, TopologyConfig};
use baton_apps::views::{Hosts, Link, PROBE_MAC, PortRef, Topology};
use baton_openflow::{DatapathId, MacAddr, PortNo, Version};
use baton_runtime::AnyApp;
use baton_testbed::{Port, Sw, Testbed, arp_reply, arp_request, udp};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

const BOTH: [Version; 2] = [Version::V10, Version::V13];

struct Net {
    tb: Testbed,
    topology: Arc<TopologyApp>,
    routing: Arc<RoutingApp>,
    devices: Arc<DevicesApp>,
    /// Host number -> its port.
    hosts: Vec<Port>,
}

fn mac(h: usize) -> MacAddr {
    MacAddr([0x02, 0, 0, 0, 0, h as u8 + 1])
}

fn ip(h: usize) -> [u8; 4] {
    [10, 0, 0, h as u8 + 1]
}

impl Net {
    /// Switches with `ports` ports each, the cables between them, and one
    /// host on each listed port.
    fn build(
        version: Version,
        switches: usize,
        ports: u32,
        cables: &[(Port, Port)],
        hosts: &[Port],
    ) -> Net {
        let topology = Arc::new(TopologyApp::new(TopologyConfig::default()).unwrap());
        let devices = Arc::new(DevicesApp::new(DevicesConfig::default()));
        let routing = Arc::new(RoutingApp::new(RoutingConfig::default()));
        let mut tb = Testbed::new(vec![
            AnyApp::from(topology.clone()),
            AnyApp::from(devices.clone()),
            AnyApp::from(routing.clone()),
        ]);
        for s in 0..switches {
            tb.switch(s as u64 + 1, version, ports);
        }
        for &(a, b) in cables {
            tb.cable(a, b);
        }
        // Discovery: probes at once, ports settled after half a second.
        tb.advance(Duration::from_millis(600));
        Net {
            tb,
            topology,
            routing,
            devices,
            hosts: hosts.to_vec(),
        }
    }

    fn topo(&mut self) -> Arc<Topology> {
        self.tb
            .harness()
            .snapshot()
            .get::<Topology>()
            .unwrap()
            .arc()
            .clone()
    }

    fn links(&mut self) -> BTreeSet<(Port, Port)> {
        let t = self.topo();
        t.bidirectional_links()
            .map(|l| (port_of(l.src), port_of(l.dst)))
            .collect()
    }

    /// Host `from` talks to host `to`: an ARP exchange, then a UDP frame;
    /// returns how many copies of the UDP frame `to` received.
    fn talk(&mut self, from: usize, to: usize, tag: u8) -> usize {
        let (a, b) = (self.hosts[from], self.hosts[to]);
        self.tb.clear_received();
        self.tb.send(a, &arp_request(mac(from), ip(from), ip(to)));
        let got_request = self.tb.received(b).len();
        // The reply, whether the request came or was answered by proxy.
        self.tb
            .send(b, &arp_reply(mac(to), ip(to), mac(from), ip(from)));
        let replies = self.tb.received(a).len();
        assert!(
            got_request <= 1 && replies >= 1,
            "{from}->{to}: request {got_request}, replies {replies}"
        );
        let frame = udp(mac(from), ip(from), mac(to), ip(to), tag);
        self.tb.send(a, &frame);
        self.tb
            .received(b)
            .into_iter()
            .filter(|f| f == &frame)
            .count()
    }
}

fn port_of(p: PortRef) -> Port {
    (Sw(p.dpid.0 as usize - 1), p.port.0)
}

fn canonical(cables: &[(Port, Port)]) -> BTreeSet<(Port, Port)> {
    cables
        .iter()
        .map(|&(a, b)| if a <= b { (a, b) } else { (b, a) })
        .collect()
}

/// s1 - s2 - s3, a host on port 1 of each.
fn chain(version: Version) -> (Net, Vec<(Port, Port)>) {
    let cables = vec![((Sw(0), 2), (Sw(1), 2)), ((Sw(1), 3), (Sw(2), 2))];
    let hosts = [(Sw(0), 1), (Sw(1), 1), (Sw(2), 1)];
    (Net::build(version, 3, 3, &cables, &hosts), cables)
}

/// s1 - s2 - s3 - s4 - s1, a host on port 1 of each.
fn ring(version: Version) -> (Net, Vec<(Port, Port)>) {
    let cables = vec![
        ((Sw(0), 2), (Sw(1), 3)),
        ((Sw(1), 2), (Sw(2), 3)),
        ((Sw(2), 2), (Sw(3), 3)),
        ((Sw(3), 2), (Sw(0), 3)),
    ];
    let hosts = [(Sw(0), 1), (Sw(1), 1), (Sw(2), 1), (Sw(3), 1)];
    (Net::build(version, 4, 3, &cables, &hosts), cables)
}

#[test]
fn a_chain_is_discovered_and_every_pair_talks() {
    for version in BOTH {
        let (mut n, cables) = chain(version);
        assert_eq!(n.links(), canonical(&cables), "{version}");
        for a in 0..3 {
            for b in 0..3 {
                if a != b {
                    assert_eq!(n.talk(a, b, (a * 3 + b) as u8), 1, "{version}: {a} -> {b}");
                }
            }
        }
        // Every host is where it is.
        let hosts = n.tb.harness().snapshot().get::<Hosts>().unwrap();
        for (h, &(sw, port)) in n.hosts.iter().enumerate() {
            let at = hosts.get(&mac(h)).expect("host known").at;
            assert_eq!(at, PortRef::new(DatapathId(sw.0 as u64 + 1), PortNo(port)));
        }
        assert_eq!(n.devices.counters().moved, 0);
    }
}

#[test]
fn an_arp_request_for_a_known_host_is_answered_by_proxy() {
    for version in BOTH {
        let (mut n, _) = chain(version);
        // Both hosts talk once, so devices knows them.
        assert_eq!(n.talk(0, 2, 1), 1, "{version}");
        let before = n.routing.counters().proxy_arp;
        n.tb.clear_received();
        let (a, c) = (n.hosts[0], n.hosts[2]);
        n.tb.send(a, &arp_request(mac(0), ip(0), ip(2)));
        assert!(
            n.tb.received(c).is_empty(),
            "{version}: the request went on"
        );
        let replies = n.tb.received(a);
        assert_eq!(replies.len(), 1, "{version}");
        assert_eq!(n.routing.counters().proxy_arp, before + 1, "{version}");
        // Read by etherparse, not by baton's codec.
        let p = etherparse::SlicedPacket::from_ethernet(&replies[0]).unwrap();
        let Some(etherparse::LinkSlice::Ethernet2(eth)) = p.link else {
            panic!("{version}: not Ethernet II: {:?}", p.link);
        };
        assert_eq!((eth.destination(), eth.source()), (mac(0).0, mac(2).0));
        let Some(etherparse::NetSlice::Arp(arp)) = p.net else {
            panic!("{version}: not ARP: {:?}", p.net);
        };
        assert_eq!(arp.operation(), etherparse::ArpOperation::REPLY);
        assert_eq!(arp.sender_hw_addr(), &mac(2).0);
        assert_eq!(arp.sender_protocol_addr(), &ip(2));
        assert_eq!(arp.target_hw_addr(), &mac(0).0);
        assert_eq!(arp.target_protocol_addr(), &ip(0));
    }
}

#[test]
fn a_ring_floods_without_a_storm_and_every_pair_talks_once() {
    for version in BOTH {
        let (mut n, cables) = ring(version);
        assert_eq!(n.links(), canonical(&cables), "{version}");
        // A broadcast reaches every other host exactly once, sent to
        // every edge port at once: only its first switch asked.
        n.tb.clear_received();
        let floods = n.routing.counters().floods;
        n.tb.send(n.hosts[0], &arp_request(mac(0), ip(0), [10, 0, 0, 99]));
        for h in 1..4 {
            assert_eq!(n.tb.received(n.hosts[h]).len(), 1, "{version}: host {h}");
        }
        assert_eq!(n.tb.network().looped, 0, "{version}: no storm");
        assert_eq!(
            n.routing.counters().floods - floods,
            1,
            "{version}: one packet-in for the whole flood"
        );
        for a in 0..4 {
            for b in 0..4 {
                if a != b {
                    assert_eq!(n.talk(a, b, (a * 4 + b) as u8), 1, "{version}: {a} -> {b}");
                }
            }
        }
        assert!(n.routing.counters().paths > 0);
    }
}

#[test]
fn a_cut_reroutes_and_a_repair_is_rediscovered() {
    for version in BOTH {
        let (mut n, cables) = ring(version);
        // Host 0 (s1) to host 1 (s2) goes over the s1-s2 cable.
        assert_eq!(n.talk(0, 1, 1), 1);
        let direct = cables[0];
        n.tb.set_cable(direct.0, direct.1, false);
        assert!(!n.links().contains(&direct), "{version}: link gone at once");
        let counters = n.routing.counters();
        match version {
            // 1.3: the flows across the cut now point the long way, and
            // the rest of it has flows for them.
            Version::V13 => assert!(
                counters.flows_moved > 0 && counters.flows_deleted == 0,
                "{version}: flows across the cut moved: {counters:?}"
            ),
            // 1.0: deleted, so the next packet asks for a new path.
            _ => assert!(
                counters.flows_deleted > 0 && counters.flows_moved == 0,
                "{version}: flows across the cut deleted: {counters:?}"
            ),
        }
        // The next packet goes the long way round: on 1.3 with no
        // packet-in at all.
        let frame = udp(mac(0), ip(0), mac(1), ip(1), 2);
        n.tb.clear_received();
        n.tb.send(n.hosts[0], &frame);
        assert_eq!(n.tb.received(n.hosts[1]), vec![frame.clone()], "{version}");
        assert!(
            n.tb.flow_outputs(Sw(0)).contains(&3),
            "{version}: the long way"
        );
        let paths = n.routing.counters().paths - counters.paths;
        assert_eq!(
            paths > 0,
            version == Version::V10,
            "{version}: {paths} paths installed after the cut"
        );
        // Repaired: rediscovered within a probe interval, used again: the
        // flows of the long way are deleted, the next packet takes the
        // short one.
        n.tb.set_cable(direct.0, direct.1, true);
        n.tb.advance(Duration::from_secs(6));
        assert!(n.links().contains(&direct), "{version}: rediscovered");
        assert_eq!(n.talk(0, 1, 3), 1);
        let routes = n.tb.harness().snapshot().get::<Routes>().unwrap();
        assert_eq!(routes.path(DatapathId(1), DatapathId(2)).unwrap().len(), 1);
        let outputs = n.tb.flow_outputs(Sw(0));
        assert!(
            outputs.contains(&2) && !outputs.contains(&3),
            "{version}: s1 sends towards host 1 on the repaired cable: {outputs:?}"
        );
    }
}

#[test]
fn flows_are_installed_last_hop_first_and_carry_the_packet() {
    let (mut n, _) = chain(Version::V13);
    assert_eq!(n.talk(0, 2, 1), 1);
    // The flows are in place: the next packet needs no controller.
    let paths = n.routing.counters().paths;
    let frame = udp(mac(0), ip(0), mac(2), ip(2), 9);
    n.tb.send(n.hosts[0], &frame);
    assert_eq!(n.tb.received(n.hosts[2]), vec![frame]);
    assert_eq!(n.routing.counters().paths, paths);
    assert!(n.routing.installed_flows() >= 3);
}

/// A host that only sends along paths other hosts already have flows for
/// still reaches the controller once, and is learnt (flows are per pair
/// of source and destination, not per destination).
#[test]
fn a_host_that_sends_along_installed_flows_is_learnt() {
    for version in BOTH {
        let (mut n, _) = chain(version);
        // Hosts 0 and 2 talk across s2, which gets flows towards both.
        assert_eq!(n.talk(0, 2, 1), 1);
        assert_eq!(n.talk(2, 0, 2), 1);
        let hosts = n.tb.harness().snapshot().get::<Hosts>().unwrap();
        assert!(
            hosts.get(&mac(1)).is_none(),
            "{version}: host 1 said nothing yet"
        );
        // Host 1, on s2, sends to host 0 without asking (its ARP cache
        // learnt host 0 from the flooded request).
        n.tb.clear_received();
        let frame = udp(mac(1), ip(1), mac(0), ip(0), 3);
        n.tb.send(n.hosts[1], &frame);
        assert_eq!(n.tb.received(n.hosts[0]), vec![frame], "{version}");
        let hosts = n.tb.harness().snapshot().get::<Hosts>().unwrap();
        assert_eq!(
            hosts.get(&mac(1)).map(|h| h.at),
            Some(PortRef::new(DatapathId(2), PortNo(1))),
            "{version}: host 1 learnt where it is"
        );
    }
}

#[test]
fn a_host_that_moves_is_found_at_its_new_port() {
    let (mut n, _) = chain(Version::V10);
    assert_eq!(n.talk(0, 2, 1), 1);
    // Host 2 moves from s3 port 1 to s2 port 1 (host 1 has left it).
    n.hosts[2] = (Sw(1), 1);
    n.tb.send(n.hosts[2], &arp_request(mac(2), ip(2), ip(0)));
    let hosts = n.tb.harness().snapshot().get::<Hosts>().unwrap();
    assert_eq!(
        hosts.get(&mac(2)).unwrap().at,
        PortRef::new(DatapathId(2), PortNo(1))
    );
    assert_eq!(n.devices.counters().moved, 1);
    // Traffic follows it.
    let frame = udp(mac(0), ip(0), mac(2), ip(2), 5);
    n.tb.clear_received();
    n.tb.send(n.hosts[0], &frame);
    assert_eq!(n.tb.received((Sw(1), 1)), vec![frame]);
}

#[test]
fn a_host_relaying_probes_fabricates_no_link() {
    let (mut n, cables) = chain(Version::V10);
    // Hosts talk, so their ports are host ports.
    assert_eq!(n.talk(0, 2, 1), 1);
    // Host 0 captures the probes sent to it and host 2 replays them, as
    // a pair of colluding hosts would to fake a link s1:1 - s3:1.
    n.tb.clear_received();
    n.tb.advance(Duration::from_secs(5));
    let probes: Vec<Vec<u8>> =
        n.tb.received(n.hosts[0])
            .into_iter()
            .filter(|f| f[12..14] == [0x88, 0xcc])
            .collect();
    assert!(!probes.is_empty(), "s1 probes its host port too");
    for p in &probes {
        n.tb.send(n.hosts[2], p);
    }
    assert_eq!(n.links(), canonical(&cables), "no fabricated link");
    assert!(n.topology.counters().host_port >= 1);
    assert_eq!(n.talk(0, 2, 2), 1);
    let t = n.topo();
    let fake = Link {
        src: PortRef::new(DatapathId(1), PortNo(1)),
        dst: PortRef::new(DatapathId(3), PortNo(1)),
    };
    assert!(t.links().all(|l| l != fake));
}

#[test]
fn routes_never_cross_a_link_their_topology_lacks_while_links_flap() {
    for version in BOTH {
        let (mut n, cables) = ring(version);
        let mut up = vec![true; cables.len()];
        let mut x: u32 = 0x2545_f491;
        let mut rand = move |m: u32| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % m
        };
        for a in 0..4 {
            n.tb.send(n.hosts[a], &arp_request(mac(a), ip(a), [10, 0, 0, 99]));
        }
        for step in 0..80 {
            if rand(3) == 0 {
                let c = rand(cables.len() as u32) as usize;
                up[c] = !up[c];
                n.tb.set_cable(cables[c].0, cables[c].1, up[c]);
                n.tb.advance(Duration::from_millis(600));
            }
            let (a, b) = (rand(4) as usize, rand(4) as usize);
            if a == b {
                continue;
            }
            let frame = udp(mac(a), ip(a), mac(b), ip(b), step as u8);
            n.tb.clear_received();
            n.tb.send(n.hosts[a], &frame);
            let got =
                n.tb.received(n.hosts[b])
                    .into_iter()
                    .filter(|f| *f == frame)
                    .count();
            // On a ring, two hosts are cut off only with two cables down on
            // both sides of them; they get the frame once if connected.
            let connected = reachable(&up, a, b);
            assert_eq!(
                got,
                usize::from(connected),
                "{version} step {step}: {a} -> {b}, cables {up:?}"
            );
            assert_eq!(n.tb.network().looped, 0, "{version} step {step}");
            // No flow of any switch sends towards a link that is not in the
            // topology the routes were computed from.
            let routes = n.tb.harness().snapshot().get::<Routes>().unwrap();
            let topo = routes.topology().clone();
            for s in 0..4 {
                let dpid = DatapathId(s as u64 + 1);
                for p in n.tb.flow_outputs(Sw(s)) {
                    let port = PortRef::new(dpid, PortNo(p));
                    if p == 1 || p > 0xff00 {
                        continue; // the host port, the controller
                    }
                    assert!(
                        topo.link_from(port).is_some(),
                        "{version} step {step}: a flow on s{} outputs to {port}, not a link of topology v{}",
                        s + 1,
                        topo.version()
                    );
                }
            }
        }
    }
}

/// Whether hosts `a` and `b` of the ring are connected with these cables
/// up (cable i joins switch i and i + 1).
fn reachable(up: &[bool], a: usize, b: usize) -> bool {
    let n = up.len();
    let clockwise = (0..n).all(|k| {
        let s = (a + k) % n;
        s == b || (s + n - a) % n >= (b + n - a) % n || up[s]
    });
    let anticlockwise = (0..n).all(|k| {
        let s = (a + n - k) % n;
        s == b || (a + n - s) % n >= (a + n - b) % n || up[(s + n - 1) % n]
    });
    clockwise || anticlockwise
}

/// The network services with hosts silent for 30 s aged (walked every
/// second), at most `max_hosts` of them; no switch yet.
fn aging_in_30s(max_hosts: usize) -> (Testbed, Arc<DevicesApp>) {
    let devices = Arc::new(DevicesApp::new(DevicesConfig {
        host_timeout: Duration::from_secs(30),
        refresh: Duration::from_secs(1),
        max_hosts,
        ..DevicesConfig::default()
    }));
    let tb = Testbed::new(vec![
        AnyApp::new(TopologyApp::new(TopologyConfig::default()).unwrap()),
        AnyApp::from(devices.clone()),
        AnyApp::new(RoutingApp::new(RoutingConfig::default())),
    ]);
    (tb, devices)
}

#[test]
fn silent_hosts_age_out_and_links_teach_no_hosts() {
    let (mut tb, devices) = aging_in_30s(DevicesConfig::default().max_hosts);
    tb.switch(1, Version::V10, 2);
    tb.switch(2, Version::V10, 2);
    tb.cable((Sw(0), 2), (Sw(1), 2));
    tb.advance(Duration::from_millis(600));
    tb.send((Sw(0), 1), &arp_request(mac(0), ip(0), ip(1)));
    tb.send((Sw(1), 1), &arp_request(mac(1), ip(1), ip(0)));
    let hosts = tb.harness().snapshot().get::<Hosts>().unwrap();
    assert_eq!(
        hosts.len(),
        2,
        "the floods that crossed the link taught nothing"
    );
    let h0 = hosts.get(&mac(0)).unwrap();
    assert_eq!(h0.at, PortRef::new(DatapathId(1), PortNo(1)));
    assert_eq!(h0.ipv4.iter().next().map(|a| a.octets()), Some(ip(0)));
    // Host 1 keeps talking, host 0 falls silent.
    for _ in 0..4 {
        tb.advance(Duration::from_secs(10));
        tb.send((Sw(1), 1), &arp_request(mac(1), ip(1), ip(0)));
    }
    let hosts = tb.harness().snapshot().get::<Hosts>().unwrap();
    assert!(hosts.get(&mac(0)).is_none());
    assert_eq!(devices.counters().aged, 1);
    // Host 1's sightings changed nothing else about it: each reached the
    // view at the next sweep (every `refresh`), all but the last.
    let h1 = hosts.get(&mac(1)).unwrap();
    assert!(
        h1.last_seen >= h1.first_seen + Duration::from_secs(30),
        "{h1:?}"
    );
}

/// A silent host is asked whether it is still there before it is
/// forgotten: an ARP probe from the controller's own address, sent to the
/// host alone out of its port. One that answers stays (its answer goes
/// nowhere else); one that does not goes a walk later.
#[test]
fn a_silent_host_is_asked_first_and_stays_if_it_answers() {
    let (mut tb, devices) = aging_in_30s(DevicesConfig::default().max_hosts);
    tb.switch(1, Version::V13, 3);
    tb.switch(2, Version::V13, 2);
    tb.cable((Sw(0), 2), (Sw(1), 2));
    tb.advance(Duration::from_millis(600));
    let (answers, mute, other) = ((Sw(0), 1), (Sw(0), 3), (Sw(1), 1));
    tb.send(answers, &arp_request(mac(0), ip(0), ip(2)));
    tb.send(mute, &arp_request(mac(1), ip(1), ip(2)));
    let listed = |tb: &mut Testbed| -> Vec<MacAddr> {
        let hosts = tb.harness().snapshot().get::<Hosts>().unwrap();
        hosts.list().iter().map(|h| h.mac).collect()
    };
    assert_eq!(listed(&mut tb), vec![mac(0), mac(1)]);
    tb.clear_received();
    // What hosts are sent but discovery's probes.
    let arp = |tb: &mut Testbed, port| -> Vec<Vec<u8>> {
        let mut frames = tb.received(port);
        frames.retain(|f| f[12..14] == [0x08, 0x06]);
        frames
    };
    // Both fall silent; the first probe comes once they have been so for
    // the timeout.
    let mut probes = Vec::new();
    for _ in 0..400 {
        tb.advance(Duration::from_millis(100));
        probes = arp(&mut tb, answers);
        if !probes.is_empty() {
            break;
        }
    }
    let probe = arp_request(PROBE_MAC, [0; 4], ip(0));
    let mut to_host_0 = probe.clone();
    to_host_0[..6].copy_from_slice(&mac(0).0);
    assert_eq!(probes, vec![to_host_0], "one ARP probe, to host 0 alone");
    let mut to_host_1 = arp_request(PROBE_MAC, [0; 4], ip(1));
    to_host_1[..6].copy_from_slice(&mac(1).0);
    assert_eq!(arp(&mut tb, mute), vec![to_host_1]);
    assert!(arp(&mut tb, other).is_empty(), "no other host is asked");
    assert_eq!(
        listed(&mut tb),
        vec![mac(0), mac(1)],
        "asked, not forgotten"
    );
    tb.send(answers, &arp_reply(mac(0), ip(0), PROBE_MAC, [0; 4]));
    assert!(
        arp(&mut tb, mute).is_empty() && arp(&mut tb, other).is_empty(),
        "the answer is not flooded"
    );
    tb.advance(Duration::from_secs(5));
    assert_eq!(listed(&mut tb), vec![mac(0)], "the mute host went");
    let counters = devices.counters();
    assert_eq!((counters.probed, counters.aged), (2, 1));
    // Silent again for the timeout: asked again.
    tb.advance(Duration::from_secs(30));
    assert_eq!(arp(&mut tb, answers).len(), 1);
}

/// `max_hosts` bounds the hosts tracked: past it a new host is not
/// learnt (and still reaches whom it talks to, flooded), one it already
/// knows is still followed, and one that ages out makes room.
#[test]
fn no_more_than_max_hosts_are_tracked_and_one_that_ages_out_makes_room() {
    let (mut tb, devices) = aging_in_30s(2);
    tb.switch(1, Version::V10, 4);
    tb.advance(Duration::from_millis(600));
    let listed = |tb: &mut Testbed| -> Vec<MacAddr> {
        let hosts = tb.harness().snapshot().get::<Hosts>().unwrap();
        hosts.list().iter().map(|h| h.mac).collect()
    };
    tb.send((Sw(0), 1), &arp_request(mac(0), ip(0), ip(2)));
    tb.send((Sw(0), 2), &arp_request(mac(1), ip(1), ip(2)));
    tb.clear_received();
    // The third is not learnt, and its packets still arrive.
    let frame = udp(mac(2), ip(2), mac(0), ip(0), 1);
    tb.send((Sw(0), 3), &frame);
    assert_eq!(tb.received((Sw(0), 1)), vec![frame], "host 2 -> host 0");
    assert_eq!(listed(&mut tb), vec![mac(0), mac(1)]);
    assert_eq!(devices.counters().refused, 1);
    // A known host that moves is still followed.
    tb.send((Sw(0), 4), &arp_request(mac(1), ip(1), ip(0)));
    let hosts = tb.harness().snapshot().get::<Hosts>().unwrap();
    assert_eq!(hosts.get(&mac(1)).map(|h| h.at.port), Some(PortNo(4)));
    // Host 0 falls silent and ages out; then the third is learnt.
    for _ in 0..4 {
        tb.advance(Duration::from_secs(10));
        tb.send((Sw(0), 4), &arp_request(mac(1), ip(1), ip(0)));
    }
    assert_eq!(listed(&mut tb), vec![mac(1)]);
    tb.send((Sw(0), 3), &arp_request(mac(2), ip(2), ip(0)));
    assert_eq!(listed(&mut tb), vec![mac(1), mac(2)]);
}

/// Both hosts of a chain talk, ten packets a second each way, for
/// `ticks` tenths of a second; returns the first tick after which host 0
/// is listed, and asserts that every packet from host 0 arrives, and every
/// packet to it from `to_0_from` on.
fn talk_across(n: &mut Net, version: Version, ticks: u8, to_0_from: u8) -> Option<u8> {
    let mut listed = None;
    for tick in 0..ticks {
        for (from, to) in [(0, 2), (2, 0)] {
            let frame = udp(mac(from), ip(from), mac(to), ip(to), 100 + tick);
            n.tb.clear_received();
            n.tb.send(n.hosts[from], &frame);
            let got =
                n.tb.received(n.hosts[to])
                    .into_iter()
                    .filter(|f| *f == frame)
                    .count();
            if from == 0 || tick >= to_0_from {
                assert_eq!(got, 1, "{version} tick {tick}: {from} -> {to}");
            }
        }
        let hosts = n.tb.harness().snapshot().get::<Hosts>().unwrap();
        if listed.is_none() && hosts.get(&mac(0)).is_some() {
            listed = Some(tick);
        }
        n.tb.advance(Duration::from_millis(100));
    }
    listed
}

/// Host 0 is listed at its port and a path from host 2's switch leads to
/// it.
fn assert_host_0_reachable(n: &mut Net, version: Version) {
    let snapshot = n.tb.harness().snapshot();
    let hosts = snapshot.get::<Hosts>().unwrap();
    assert_eq!(
        hosts.get(&mac(0)).map(|h| h.at),
        Some(PortRef::new(DatapathId(1), PortNo(1))),
        "{version}"
    );
    let routes = snapshot.get::<Routes>().unwrap();
    assert_eq!(
        routes.path(DatapathId(3), DatapathId(1)).map(|p| p.len()),
        Some(2),
        "{version}: the path from host 2's switch to host 0's"
    );
}

/// A switch that reconnects within the grace (its flows kept, as Open
/// vSwitch keeps them in fail-secure mode) while its host talks: the host
/// stays listed throughout and nothing is lost (issue 22, §2).
#[test]
fn a_host_stays_listed_while_its_switch_reconnects_under_traffic() {
    for version in BOTH {
        let (mut n, _) = chain(version);
        assert_eq!(n.talk(0, 2, 1), 1);
        assert_eq!(n.talk(2, 0, 2), 1);
        n.tb.reconnect(Sw(0), Duration::from_millis(1500));
        assert_eq!(talk_across(&mut n, version, 30, 0), Some(0), "{version}");
        assert_host_0_reachable(&mut n, version);
        assert_eq!(n.devices.counters().dropped, 0, "{version}");
    }
}

/// A switch away for longer than the grace: its host is forgotten, and the
/// flows to and from it are deleted, on the switches that are there at
/// once and on the switch itself when it comes back; once it is back and
/// its port has settled, the host's next packets teach where it is, so it
/// is listed again within a second of traffic (issue 22, §2).
#[test]
fn a_host_comes_back_after_its_switch_was_away_longer_than_the_grace() {
    for version in BOTH {
        let (mut n, _) = chain(version);
        assert_eq!(n.talk(0, 2, 1), 1);
        assert_eq!(n.talk(2, 0, 2), 1);
        n.tb.reconnect(Sw(0), Duration::from_secs(12));
        let hosts = n.tb.harness().snapshot().get::<Hosts>().unwrap();
        assert!(hosts.get(&mac(0)).is_none(), "{version}: forgotten");
        assert_eq!(n.devices.counters().dropped, 1, "{version}");
        // Packets to host 0 are flooded, and reach it once its port has
        // settled (half a second).
        let listed = talk_across(&mut n, version, 30, 10)
            .unwrap_or_else(|| panic!("{version}: host 0 never came back"));
        assert!(
            listed <= 10,
            "{version}: host 0 came back only after {listed} packets each way"
        );
        assert_host_0_reachable(&mut n, version);
    }
}

/// A host's port that flaps (down for two seconds, then up) does not make
/// the host vanish, and traffic goes on once the port is back (issue 22,
/// §2).
#[test]
fn a_host_stays_listed_while_its_port_flaps() {
    for version in BOTH {
        let (mut n, _) = chain(version);
        assert_eq!(n.talk(0, 2, 1), 1);
        assert_eq!(n.talk(2, 0, 2), 1);
        n.tb.set_link(n.hosts[0], false);
        n.tb.advance(Duration::from_secs(2));
        n.tb.set_link(n.hosts[0], true);
        assert_eq!(talk_across(&mut n, version, 10, 0), Some(0), "{version}");
        assert_host_0_reachable(&mut n, version);
        assert_eq!(n.devices.counters().dropped, 0, "{version}");
    }
}
