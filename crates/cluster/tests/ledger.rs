//! The shared bandwidth ledger against a real etcd on loopback
//! ([`LocalEtcd`]): two members admitting from the same stale copy cannot
//! both fill a link, admissions on disjoint paths do not conflict, a
//! release names the reservation it ends, a member's reservations go with
//! its lease, and members admitting and releasing at once never put more
//! on a link than it carries.

use baton_apps::bandwidth::{Origin, Request, ReservationId, ReserveError};
use baton_apps::views::{Link, PortRef};
use baton_cluster::PREFIX;
use baton_cluster::etcd::{Etcd, LeaseId};
use baton_cluster::ledger::{Clock, LedgerStats, Mirror, RESERVATIONS, admit, release};
use baton_cluster::local_etcd::LocalEtcd;
use baton_openflow::{DatapathId, MacAddr, PortNo};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn port(s: u64, p: u32) -> PortRef {
    PortRef::new(DatapathId(s), PortNo(p))
}

/// The link between switches `a` and `b` (port 10 + the other's number).
fn link(a: u64, b: u64) -> Link {
    Link {
        src: port(a, 10 + b as u32),
        dst: port(b, 10 + a as u32),
    }
}

fn mac(n: u16) -> MacAddr {
    MacAddr([2, 0, 0, 0, (n >> 8) as u8, n as u8])
}

/// A flow request of `kbps` from host `src` on switch `from` along
/// `links`, every link carrying `capacity`.
fn ask(src: u16, dst: u16, from: u64, kbps: u64, links: &[Link]) -> Request {
    Request {
        src: mac(src),
        dst: mac(dst),
        kbps,
        hops: links.iter().map(|l| l.src).collect(),
        links: links.to_vec(),
        src_at: port(from, 1),
        origin: Origin::Flow,
        now: Instant::now(),
    }
}

fn capacities(links: &[Link], kbps: u64) -> BTreeMap<Link, u64> {
    links.iter().map(|l| (l.canonical(), kbps)).collect()
}

/// The ledger as etcd holds it now.
fn read(etcd: &Etcd) -> Mirror {
    let (revision, kvs) = etcd.get_prefix(&format!("{PREFIX}{RESERVATIONS}")).unwrap();
    Mirror::read(revision, &kvs, &Clock::at(Instant::now()))
}

struct Members {
    _etcd: LocalEtcd,
    etcd: Etcd,
    a: LeaseId,
    b: LeaseId,
}

fn members() -> Members {
    let local = LocalEtcd::start(1).unwrap_or_else(|e| panic!("starting etcd: {e}"));
    let etcd = Etcd::new(&local.endpoints(), Duration::from_secs(5));
    let a = etcd.grant(Duration::from_secs(30)).unwrap();
    let b = etcd.grant(Duration::from_secs(30)).unwrap();
    Members {
        _etcd: local,
        etcd,
        a,
        b,
    }
}

#[test]
fn two_members_from_one_stale_copy_cannot_both_fill_a_link() {
    let m = members();
    let clock = Clock::at(Instant::now());
    let stats = LedgerStats::default();
    let path = [link(1, 2), link(2, 3)];
    let caps = capacities(&path, 10);
    let stale = read(&m.etcd);
    // a takes 6 of 10 on both links.
    let first = admit(
        &m.etcd,
        ("a", m.a),
        stale.clone(),
        &ask(1, 2, 1, 6, &path),
        &caps,
        &clock,
        &stats,
    )
    .unwrap();
    // b decides from the copy it read before: its transaction loses, it
    // reads again, and 6 more does not fit on link 2-3.
    let second = admit(
        &m.etcd,
        ("b", m.b),
        stale.clone(),
        &ask(3, 4, 2, 6, &path[1..]),
        &capacities(&path[1..], 10),
        &clock,
        &stats,
    );
    let Err(ReserveError::Oversubscribed(o)) = second else {
        panic!("{second:?}");
    };
    assert_eq!(
        (o.link, o.reserved_kbps, o.kbps),
        (link(2, 3).canonical(), 6, 6)
    );
    assert_eq!(stats.conflicts.load(Ordering::Relaxed), 1);
    // A path sharing nothing with a's (another link, another source
    // switch) is granted from the same stale copy without a conflict.
    let apart = [link(3, 4)];
    let third = admit(
        &m.etcd,
        ("b", m.b),
        stale,
        &ask(5, 6, 3, 6, &apart),
        &capacities(&apart, 10),
        &clock,
        &stats,
    )
    .unwrap();
    assert_eq!(stats.conflicts.load(Ordering::Relaxed), 1);
    // Every member reads both back, numbered by their revisions.
    let now = read(&m.etcd);
    let ledger = now.ledger();
    assert_eq!(ledger.len(), 2);
    assert!(third.id > first.id);
    let r = ledger.get(first.id).unwrap();
    assert_eq!((r.src, r.dst, r.kbps), (mac(1), mac(2), 6));
    assert_eq!(r.hops, first.hops);
    assert_eq!(r.links, first.links);
    assert_eq!((r.src_at, r.meter), (first.src_at, first.meter));
    assert_eq!(ledger.reserved_on(link(2, 3)), 6);
    assert_eq!(ledger.reserved_on(link(3, 4)), 6);
    assert!(ledger.is_consistent());
}

#[test]
fn a_release_ends_only_the_reservation_it_names_and_a_lease_takes_its_own() {
    let m = members();
    let now = Instant::now();
    let clock = Clock::at(now);
    let stats = LedgerStats::default();
    let path = [link(1, 2)];
    let caps = capacities(&path, 100);
    let grant = |member, request: &Request| {
        admit(
            &m.etcd,
            member,
            read(&m.etcd),
            request,
            &caps,
            &clock,
            &stats,
        )
        .unwrap()
    };
    let operator = Request {
        origin: Origin::Operator {
            expires: now + Duration::from_secs(60),
        },
        ..ask(1, 2, 1, 10, &path)
    };
    let old = grant(("a", m.a), &operator);
    // The pair asks again: the new reservation replaces the old.
    let new = grant(("a", m.a), &operator);
    let ledger = read(&m.etcd);
    assert_eq!(ledger.ledger().len(), 1);
    assert_eq!(ledger.ledger().reserved_on(link(1, 2)), 10);
    let r = ledger.ledger().of_pair(mac(1), mac(2)).unwrap();
    assert_eq!(r.id, new.id);
    // The operator's end time crosses etcd as wall-clock time.
    let Origin::Operator { expires } = r.origin else {
        panic!("{:?}", r.origin);
    };
    let left = expires.saturating_duration_since(now);
    assert!(
        left > Duration::from_secs(58) && left <= Duration::from_secs(61),
        "{left:?}"
    );
    // A flow of the old one removed late ends nothing.
    let (done, _) = release(&m.etcd, old.id, (mac(1), mac(2))).unwrap();
    assert!(!done);
    assert_eq!(read(&m.etcd).ledger().len(), 1);
    let (done, _) = release(&m.etcd, new.id, (mac(1), mac(2))).unwrap();
    assert!(done);
    assert!(read(&m.etcd).ledger().is_empty());
    let (done, _) = release(&m.etcd, ReservationId(new.id.0), (mac(1), mac(2))).unwrap();
    assert!(!done, "released twice");
    // b's reservations go with b's lease; a's stay.
    grant(("a", m.a), &ask(1, 2, 1, 10, &path));
    grant(("b", m.b), &ask(3, 4, 2, 10, &path));
    assert_eq!(read(&m.etcd).ledger().len(), 2);
    m.etcd.revoke(m.b).unwrap();
    let left = read(&m.etcd);
    assert_eq!(left.ledger().len(), 1);
    assert!(left.ledger().of_pair(mac(1), mac(2)).is_some());
    assert_eq!(left.ledger().reserved_on(link(1, 2)), 10);
}

/// Four members admitting and releasing on a ring of four links at once,
/// each from its own fresh read: no link ever holds more than it carries,
/// and every reservation a member was granted is in the ledger until it
/// releases it.
#[test]
fn members_admitting_at_once_never_oversubscribe() {
    const CAPACITY: u64 = 10;
    let m = members();
    let ring = [link(1, 2), link(2, 3), link(3, 4), link(4, 1)];
    let caps = capacities(&ring, CAPACITY);
    let stats = LedgerStats::default();
    let held: Vec<Vec<(ReservationId, MacAddr, MacAddr)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4u16)
            .map(|t| {
                let (etcd, caps, stats) = (&m.etcd, &caps, &stats);
                let lease = if t % 2 == 0 { m.a } else { m.b };
                scope.spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..24u16 {
                        if i % 4 == 3 && !held.is_empty() {
                            let (id, src, dst) = held.remove(0);
                            let (done, _) = release(etcd, id, (src, dst)).unwrap();
                            assert!(done, "{id} was granted and not released");
                            continue;
                        }
                        let from = usize::from((t + i) % 4);
                        let len = 1 + usize::from(i % 3);
                        let path: Vec<Link> = (0..len).map(|k| ring[(from + k) % 4]).collect();
                        let kbps = u64::from(1 + (t * 7 + i) % 5);
                        let req = ask(t * 100 + i, 999, from as u64 + 1, kbps, &path);
                        let clock = Clock::at(Instant::now());
                        match admit(etcd, ("m", lease), read(etcd), &req, caps, &clock, stats) {
                            Ok(r) => held.push((r.id, r.src, r.dst)),
                            Err(ReserveError::Oversubscribed(o)) => {
                                assert!(o.reserved_kbps + o.kbps > CAPACITY, "{o}")
                            }
                            Err(e) => panic!("{e}"),
                        }
                        let now = read(etcd);
                        for (l, kbps) in now.ledger().loaded_links() {
                            assert!(kbps <= CAPACITY, "{l}: {kbps}");
                        }
                    }
                    held
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let ledger = read(&m.etcd);
    let held: Vec<_> = held.into_iter().flatten().collect();
    assert_eq!(
        ledger.ledger().len(),
        held.len(),
        "a reservation leaked or was lost"
    );
    for (id, _, _) in &held {
        assert!(ledger.ledger().get(*id).is_some());
    }
    assert!(ledger.ledger().is_consistent());
    for (l, kbps) in ledger.ledger().loaded_links() {
        assert!(kbps <= CAPACITY, "{l}: {kbps}");
    }
}
