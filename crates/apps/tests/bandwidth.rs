//! Bandwidth on demand (McNettle §4.4) on a network of software switches
//! in one process (`baton-testbed`): flow requests reserved along their
//! path until a link is full, the next refused with a drop flow, the
//! reservations released when flows expire, links go and hosts move; the
//! operator's reservations with their time limit; both OpenFlow versions;
//! and as a member of a cluster, against a shared ledger in the same
//! process that decides as etcd's does.

use baton_apps::bandwidth::{
    BandwidthApp, BandwidthConfig, LedgerRequest, LinkCapacity, Origin, Reservation, ReservationId,
    Reservations, ReserveError, SharedLedger,
};
use baton_apps::devices::{DevicesApp, DevicesConfig};
use baton_apps::routing::{RoutingApp, RoutingConfig};
use baton_apps::topology::{TopologyApp, TopologyConfig};
use baton_apps::views::{Link, PortRef};
use baton_openflow::{DatapathId, MacAddr, PortNo, Version};
use baton_runtime::env::Publish;
use baton_runtime::{AnyApp, Network};
use baton_testbed::{Port, Sw, Testbed, arp_request, udp};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BOTH: [Version; 2] = [Version::V10, Version::V13];

fn mac(h: usize) -> MacAddr {
    MacAddr([0x02, 0, 0, 0, 0, h as u8 + 1])
}

fn ip(h: usize) -> [u8; 4] {
    [10, 0, 0, h as u8 + 1]
}

fn port(s: u64, p: u32) -> PortRef {
    PortRef::new(DatapathId(s), PortNo(p))
}

/// s1 - s2 - s3, hosts 0 and 1 on s1 (ports 1, 4), host 2 on s2, host 3
/// on s3; the s1-s2 link carries `s1_s2_kbps`, each flow asks 1000.
struct Net {
    tb: Testbed,
    bandwidth: Arc<BandwidthApp>,
    hosts: [Port; 4],
}

const S1_S2: (Port, Port) = ((Sw(0), 2), (Sw(1), 2));
const S2_S3: (Port, Port) = ((Sw(1), 3), (Sw(2), 2));

impl Net {
    fn new(version: Version, s1_s2_kbps: u64) -> Net {
        Net::with_ledger(version, s1_s2_kbps, None)
    }

    /// The network, `bandwidth` a member of a cluster sharing `ledger`.
    fn with_ledger(version: Version, s1_s2_kbps: u64, ledger: Option<Arc<Shared>>) -> Net {
        let cfg = BandwidthConfig {
            flow_kbps: 1000,
            idle_timeout: 10,
            capacity: vec![LinkCapacity {
                a: "1/2".into(),
                b: "00:00:00:00:00:00:00:02/2".into(),
                kbps: s1_s2_kbps,
            }],
            ..BandwidthConfig::default()
        };
        let bandwidth = Arc::new(BandwidthApp::new(cfg).unwrap());
        if let Some(ledger) = &ledger {
            assert!(bandwidth.share(ledger.clone()));
        }
        let mut tb = Testbed::new(vec![
            AnyApp::new(TopologyApp::new(TopologyConfig::default()).unwrap()),
            AnyApp::new(DevicesApp::new(DevicesConfig::default())),
            AnyApp::from(bandwidth.clone()),
            AnyApp::new(RoutingApp::new(RoutingConfig::default())),
        ]);
        if let Some(ledger) = &ledger {
            *ledger.net.lock().unwrap() = Some(tb.harness().network());
        }
        for s in 1..=3 {
            tb.switch(s, version, 4);
        }
        tb.cable(S1_S2.0, S1_S2.1);
        tb.cable(S2_S3.0, S2_S3.1);
        tb.advance(Duration::from_millis(600));
        let hosts = [(Sw(0), 1), (Sw(0), 4), (Sw(1), 1), (Sw(2), 1)];
        for (h, &at) in hosts.iter().enumerate() {
            tb.send(at, &arp_request(mac(h), ip(h), [10, 0, 0, 99]));
        }
        Net {
            tb,
            bandwidth,
            hosts,
        }
    }

    /// Host `from` sends host `to` a UDP frame; how many copies arrived.
    fn send(&mut self, from: usize, to: usize, tag: u8) -> usize {
        let frame = udp(mac(from), ip(from), mac(to), ip(to), tag);
        self.tb.clear_received();
        self.tb.send(self.hosts[from], &frame);
        let got = self.tb.received(self.hosts[to]);
        got.into_iter().filter(|f| *f == frame).count()
    }

    /// The ports a switch's flows forward to (not the controller).
    fn forwarding(&self, sw: Sw) -> Vec<u32> {
        let mut ports = self.tb.flow_outputs(sw);
        ports.retain(|&p| p < 0xffff_ff00 && !(0xff00..=0xffff).contains(&p));
        ports
    }

    fn s1_s2(&self) -> Link {
        Link {
            src: port(1, 2),
            dst: port(2, 2),
        }
    }
}

#[test]
fn flow_requests_fill_a_link_then_the_next_is_refused_and_dropped() {
    for version in BOTH {
        let mut n = Net::new(version, 2500);
        // Two pairs across s1-s2: 2000 of 2500 kbit/s.
        assert_eq!(n.send(0, 3, 1), 1, "{version}");
        assert_eq!(n.send(1, 2, 2), 1, "{version}");
        let ledger = n.bandwidth.reservations();
        assert_eq!(ledger.len(), 2, "{version}");
        assert_eq!(ledger.reserved_on(n.s1_s2()), 2000, "{version}");
        let r = ledger.of_pair(mac(0), mac(3)).unwrap();
        assert_eq!(r.hops, vec![port(1, 2), port(2, 3), port(3, 1)]);
        assert_eq!(r.links.len(), 2);
        assert_eq!(r.origin, Origin::Flow);
        // The next pair would make 3000: refused, its packet dropped, and
        // the switch drops the pair's next packets itself for a while.
        assert_eq!(n.send(3, 1, 3), 0, "{version}");
        assert_eq!(n.bandwidth.counters().refused, 1, "{version}");
        assert_eq!(n.send(3, 1, 4), 0, "{version}");
        assert_eq!(n.bandwidth.counters().refused, 1, "the drop flow held");
        // A pair on s2-s3 alone still fits (that link runs at 10 Gbit/s).
        assert_eq!(n.send(3, 2, 5), 1, "{version}");
        // Traffic on reserved pairs flows on their flows.
        assert_eq!(n.send(0, 3, 6), 1, "{version}");
        assert_eq!(n.bandwidth.counters().reserved, 3, "{version}");
        let loads = n.bandwidth.links();
        let s1_s2 = loads.iter().find(|l| l.link == n.s1_s2().canonical());
        let s1_s2 = s1_s2.unwrap();
        assert_eq!((s1_s2.capacity_kbps, s1_s2.reserved_kbps), (2500, 2000));
        assert!(n.bandwidth.reservations().is_consistent());
    }
}

#[test]
fn reservations_end_with_their_flows_their_links_and_their_hosts() {
    for version in BOTH {
        let mut n = Net::new(version, 2500);
        assert_eq!(n.send(0, 3, 1), 1);
        assert_eq!(n.send(1, 2, 2), 1);
        assert_eq!(n.send(2, 3, 3), 1);
        assert_eq!(n.bandwidth.reservations().len(), 3);
        // The s2-s3 cable goes: the reservation across it is released.
        n.tb.set_cable(S2_S3.0, S2_S3.1, false);
        n.tb.advance(Duration::from_millis(600));
        let ledger = n.bandwidth.reservations();
        assert!(ledger.of_pair(mac(0), mac(3)).is_none(), "{version}");
        assert!(ledger.of_pair(mac(2), mac(3)).is_none(), "{version}");
        assert_eq!(ledger.len(), 1, "{version}");
        assert_eq!(ledger.reserved_on(n.s1_s2()), 1000, "{version}");
        // Idle flows expire: the switches report them, and the rest goes.
        n.tb.advance(Duration::from_secs(12));
        let ledger = n.bandwidth.reservations();
        assert!(ledger.is_empty(), "{version}: {ledger:?}");
        assert_eq!(ledger.reserved_on(n.s1_s2()), 0);
        assert_eq!(n.bandwidth.counters().released, 3, "{version}");
        // The link is free again for new pairs.
        assert_eq!(n.send(3, 1, 4), 0, "s2-s3 is still down");
        n.tb.set_cable(S2_S3.0, S2_S3.1, true);
        n.tb.advance(Duration::from_millis(600));
        assert_eq!(n.send(1, 3, 5), 1, "{version}");
        assert_eq!(n.send(0, 2, 6), 1, "{version}");
        assert_eq!(n.bandwidth.reservations().reserved_on(n.s1_s2()), 2000);
        // A host that moves ends the reservations it is in.
        n.tb.set_link(n.hosts[0], false);
        n.hosts[0] = (Sw(1), 4);
        n.tb.send(n.hosts[0], &arp_request(mac(0), ip(0), [10, 0, 0, 99]));
        let ledger = n.bandwidth.reservations();
        assert!(ledger.of_pair(mac(0), mac(2)).is_none(), "{version}");
        assert_eq!(ledger.reserved_on(n.s1_s2()), 1000, "{version}");
        assert!(ledger.is_consistent());
    }
}

#[test]
fn the_operator_reserves_until_a_link_is_full_and_for_a_time() {
    for version in BOTH {
        let mut n = Net::new(version, 2500);
        let bw = n.bandwidth.clone();
        let hour = Duration::from_secs(3600);
        let r = bw.reserve(mac(0), mac(2), 2000, hour).unwrap();
        n.tb.pump();
        assert_eq!(r.hops, vec![port(1, 2), port(2, 1)]);
        assert!(matches!(r.origin, Origin::Operator { .. }));
        // Its flows are in: the pair's traffic goes without a request.
        assert_eq!(n.send(0, 2, 1), 1, "{version}");
        assert_eq!(bw.counters().reserved, 1, "{version}");
        // 2000 + 1000 > 2500: refused, the link named.
        match bw.reserve(mac(1), mac(3), 1000, hour) {
            Err(ReserveError::Oversubscribed(o)) => {
                assert_eq!(o.link, n.s1_s2().canonical());
                assert_eq!((o.capacity_kbps, o.reserved_kbps), (2500, 2000));
            }
            other => panic!("{version}: {other:?}"),
        }
        assert_eq!(
            bw.reserve(mac(9), mac(2), 1, hour),
            Err(ReserveError::UnknownHost(mac(9)))
        );
        // Released by number: its flows go, the bandwidth is back.
        bw.release(r.id).unwrap();
        assert_eq!(bw.release(r.id), Err(ReserveError::NotFound(r.id)));
        assert!(bw.reservations().is_empty());
        let short = bw
            .reserve(mac(1), mac(3), 2500, Duration::from_secs(3))
            .unwrap();
        assert_eq!(bw.reservations().reserved_on(n.s1_s2()), 2500);
        n.tb.advance(Duration::from_secs(5));
        assert!(bw.reservations().get(short.id).is_none(), "{version}");
        assert!(bw.reservations().is_empty(), "{version}");
    }
}

#[test]
fn on_1_3_a_meter_at_the_source_switch_holds_the_pair_to_its_rate() {
    for version in BOTH {
        let mut n = Net::new(version, 2500);
        let bw = n.bandwidth.clone();
        let r = bw
            .reserve(mac(0), mac(3), 100, Duration::from_secs(60))
            .unwrap();
        n.tb.pump();
        let metered = n.tb.software_switch(Sw(0)).meter_flow_count(r.meter);
        assert_eq!(metered, u32::from(version == Version::V13), "{version}");
        // A burst far above 100 kbit/s, all at one instant: a 1.3 meter
        // lets one second's worth through (12 500 bytes) and drops the
        // rest; a 1.0 switch has no meters.
        let frame = udp(mac(0), ip(0), mac(3), ip(3), 0);
        let sent = 1000;
        n.tb.clear_received();
        for _ in 0..sent {
            n.tb.send(n.hosts[0], &frame);
        }
        let got = n.tb.received(n.hosts[3]);
        assert!(got.iter().all(|f| *f == frame));
        let got = got.len();
        if version == Version::V13 {
            assert!(got > 0 && got * frame.len() <= 12_500, "{got} of {sent}");
        } else {
            assert_eq!(got, sent);
        }
        // Released: the meter goes with it.
        bw.release(r.id).unwrap();
        n.tb.pump();
        assert_eq!(n.tb.software_switch(Sw(0)).meter_flow_count(r.meter), 0);
    }
}

/// A cluster's shared ledger in one process: it decides as the etcd one
/// does (the pair's reservation replaced, each link's room checked by
/// [`Reservations::with`], numbers from 1000 as revisions would be) and
/// publishes the ledger as the [`Reservations`] view. It decides each
/// request as it comes when `auto`, else when [`Shared::decide`] says, as
/// a slow etcd would.
#[derive(Default)]
struct Shared {
    net: Mutex<Option<Network>>,
    ledger: Mutex<Reservations>,
    waiting: Mutex<Vec<LedgerRequest>>,
    auto: AtomicBool,
    asked: AtomicU64,
    next: AtomicU64,
}

impl Shared {
    fn new(auto: bool) -> Arc<Shared> {
        let s = Shared::default();
        s.auto.store(auto, Ordering::Relaxed);
        s.next.store(1000, Ordering::Relaxed);
        Arc::new(s)
    }

    fn publish(&self, ledger: &Reservations) {
        let net = self.net.lock().unwrap().clone().unwrap();
        net.publish(Publish::new().view(ledger.clone())).unwrap();
    }

    /// Decides the requests waiting.
    fn decide(&self) {
        let waiting = std::mem::take(&mut *self.waiting.lock().unwrap());
        for r in waiting {
            self.run(r);
        }
    }

    /// Grants `r` as another member would.
    fn grant(&self, r: Reservation) -> Arc<Reservation> {
        let mut ledger = self.ledger.lock().unwrap();
        let id = ReservationId(self.next.fetch_add(1, Ordering::Relaxed));
        let r = Arc::new(Reservation { id, ..r });
        *ledger = ledger.inserted(r.clone());
        self.publish(&ledger);
        r
    }

    fn run(&self, request: LedgerRequest) {
        match request {
            LedgerRequest::Reserve {
                request,
                capacities,
                answer,
            } => {
                let ledger = self.ledger.lock().unwrap().clone();
                let granted = ledger.with(request, |l| capacities[&l.canonical()]);
                let outcome = match granted {
                    Ok(g) => Ok(self.grant(Reservation::clone(&g.reservation))),
                    Err(o) => Err(ReserveError::Oversubscribed(o)),
                };
                if let Some(a) = answer {
                    a.send(outcome).unwrap();
                }
            }
            LedgerRequest::Release {
                id,
                src,
                dst,
                answer,
            } => {
                let mut ledger = self.ledger.lock().unwrap();
                let done = ledger.of_pair(src, dst).map(|r| r.id) == Some(id);
                if done {
                    *ledger = ledger.without(id).unwrap().0;
                    self.publish(&ledger);
                }
                if let Some(a) = answer {
                    a.send(Ok(done)).unwrap();
                }
            }
        }
    }
}

impl SharedLedger for Shared {
    fn submit(&self, request: LedgerRequest) {
        self.asked.fetch_add(1, Ordering::Relaxed);
        if self.auto.load(Ordering::Relaxed) {
            self.run(request);
        } else {
            self.waiting.lock().unwrap().push(request);
        }
    }
}

#[test]
fn in_a_cluster_a_flow_request_waits_for_the_shared_ledger_with_its_packet() {
    for version in BOTH {
        let shared = Shared::new(false);
        let mut n = Net::with_ledger(version, 2500, Some(shared.clone()));
        // Asked, not decided yet: the packets are held, and nothing is
        // asked twice.
        assert_eq!(n.send(0, 3, 1), 0, "{version}");
        assert_eq!(n.send(0, 3, 2), 0, "{version}");
        assert_eq!(shared.asked.load(Ordering::Relaxed), 1);
        assert_eq!(n.bandwidth.counters().waiting, 0);
        // Granted: the flows go in along the path and the held packets
        // follow them, in order.
        n.tb.clear_received();
        shared.decide();
        // The view reaches the applications (the runtime's view thread).
        n.tb.advance(Duration::from_millis(1));
        let got = n.tb.received(n.hosts[3]);
        let sent = |tag| udp(mac(0), ip(0), mac(3), ip(3), tag);
        assert_eq!(got, vec![sent(1), sent(2)], "{version}");
        let ledger = n.bandwidth.reservations();
        let r = ledger.of_pair(mac(0), mac(3)).unwrap();
        assert!(r.id.0 >= 1000, "numbered by the shared ledger");
        assert_eq!(n.bandwidth.counters().reserved, 1);
        // The pair's traffic flows on its flows, asking nothing more.
        assert_eq!(n.send(0, 3, 3), 1, "{version}");
        assert_eq!(shared.asked.load(Ordering::Relaxed), 1);
        // A packet never answered is forgotten after a while.
        assert_eq!(n.send(1, 2, 4), 0, "{version}");
        n.tb.advance(Duration::from_secs(3));
        assert_eq!(n.bandwidth.counters().waiting, 1, "{version}");
        shared.waiting.lock().unwrap().clear();
        // The local view refuses at once what cannot fit: 1000 on s1-s2
        // by the ledger, 1000 more held by pair 1 -> 2 once granted.
        shared.auto.store(true, Ordering::Relaxed);
        assert_eq!(n.send(1, 2, 5), 1, "{version}");
        let asked = shared.asked.load(Ordering::Relaxed);
        assert_eq!(n.send(3, 1, 6), 0, "{version}");
        assert_eq!(n.bandwidth.counters().refused, 1, "{version}");
        assert_eq!(
            shared.asked.load(Ordering::Relaxed),
            asked,
            "refused locally"
        );
        // Idle flows expire: the switch reports them, the release goes to
        // the shared ledger, and its view takes the rest of the flows out.
        n.tb.advance(Duration::from_secs(12));
        assert!(n.bandwidth.reservations().is_empty(), "{version}");
        assert!(shared.ledger.lock().unwrap().is_empty());
        for sw in 0..3 {
            assert_eq!(n.forwarding(Sw(sw)), [0u32; 0], "{version}: s{}", sw + 1);
        }
    }
}

#[test]
fn in_a_cluster_every_member_follows_the_reservations_another_granted() {
    for version in BOTH {
        let shared = Shared::new(true);
        let mut n = Net::with_ledger(version, 2500, Some(shared.clone()));
        // Another member grants 0 -> 3 across s1, s2, s3: this one puts
        // its flows on the switches it masters (here, all three).
        let now = n.tb.harness().now();
        let r = shared.grant(Reservation {
            id: ReservationId(0),
            src: mac(0),
            dst: mac(3),
            kbps: 1000,
            hops: vec![port(1, 2), port(2, 3), port(3, 1)],
            links: vec![
                n.s1_s2().canonical(),
                Link {
                    src: port(2, 3),
                    dst: port(3, 2),
                }
                .canonical(),
            ],
            src_at: port(1, 1),
            origin: Origin::Flow,
            since: now,
            meter: 1,
        });
        n.tb.advance(Duration::from_millis(1));
        assert_eq!(n.forwarding(Sw(0)), [2], "{version}");
        assert_eq!(n.forwarding(Sw(1)), [3], "{version}");
        assert_eq!(n.forwarding(Sw(2)), [1], "{version}");
        assert_eq!(n.send(0, 3, 1), 1, "{version}");
        assert_eq!(shared.asked.load(Ordering::Relaxed), 0);
        // The operator's reservation through this member goes to the
        // shared ledger and waits for its answer; refusals say why.
        let bw = n.bandwidth.clone();
        let hour = Duration::from_secs(3600);
        let op = bw.reserve(mac(1), mac(2), 1500, hour).unwrap();
        n.tb.advance(Duration::from_millis(1));
        assert_eq!(bw.reservations().reserved_on(n.s1_s2()), 2500);
        assert!(matches!(
            bw.reserve(mac(1), mac(3), 1, hour),
            Err(ReserveError::Oversubscribed(_))
        ));
        // Released elsewhere: its flows go from this member's switches.
        shared.run(LedgerRequest::Release {
            id: r.id,
            src: r.src,
            dst: r.dst,
            answer: None,
        });
        n.tb.advance(Duration::from_millis(1));
        assert!(bw.reservations().get(r.id).is_none());
        assert_eq!(n.forwarding(Sw(1)), [1], "{version}: only 1 -> 2's");
        assert_eq!(n.forwarding(Sw(2)), [0u32; 0], "{version}");
        // The pair's next packet asks this member, which asks the ledger.
        assert_eq!(n.send(0, 3, 2), 1, "{version}");
        assert_eq!(shared.asked.load(Ordering::Relaxed), 2);
        // Released through this member, by number.
        assert_eq!(bw.release(op.id).unwrap().id, op.id);
        assert_eq!(bw.release(op.id), Err(ReserveError::NotFound(op.id)));
        n.tb.advance(Duration::from_millis(1));
        assert_eq!(
            bw.reservations().reserved_on(n.s1_s2()),
            1000,
            "0 -> 3 asked again"
        );
        assert!(bw.reservations().is_consistent());
    }
}
