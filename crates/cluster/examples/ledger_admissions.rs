//! What one admission to the shared bandwidth ledger costs, and what two
//! members admitting at once do to each other (BENCHMARKS.md, "Shared
//! reservations").
//!
//! `cargo run --release -p baton-cluster --example ledger_admissions --
//! [MEMBERS] [ADMISSIONS]` starts an etcd of MEMBERS (default 1) on
//! loopback ([`LocalEtcd`]) and times ADMISSIONS (default 400) flow
//! requests of three links each:
//! - one member alone, each from its own up-to-date copy;
//! - two members at once on the same three links (every admission
//!   conflicts with the other's unless it comes first);
//! - two members at once on disjoint paths.
//!
//! Each admission reads the ledger fresh first (what a member's watch
//! gives it for free), so the figures are one etcd read plus the
//! transaction, and the reads again after each lost race.

use baton_apps::bandwidth::{Origin, Request, ReserveError};
use baton_apps::views::{Link, PortRef};
use baton_cluster::PREFIX;
use baton_cluster::etcd::{Etcd, LeaseId};
use baton_cluster::ledger::{Clock, LedgerStats, Mirror, RESERVATIONS, admit, release};
use baton_cluster::local_etcd::LocalEtcd;
use baton_openflow::{DatapathId, MacAddr, PortNo};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn link(a: u64, b: u64) -> Link {
    let port = |s: u64, p: u64| PortRef::new(DatapathId(s), PortNo(p as u32));
    Link {
        src: port(a, 10 + b),
        dst: port(b, 10 + a),
    }
}

/// `n` flow requests of member `m` along `path`, each read fresh and
/// admitted, then released; the admissions' durations.
fn run(
    etcd: &Etcd,
    lease: LeaseId,
    m: u16,
    path: &[Link],
    n: usize,
    stats: &LedgerStats,
) -> Vec<Duration> {
    let caps: BTreeMap<Link, u64> = path.iter().map(|l| (l.canonical(), u64::MAX / 4)).collect();
    let mut took = Vec::with_capacity(n);
    for i in 0..n {
        let req = Request {
            src: MacAddr([2, 0, m as u8, 0, (i >> 8) as u8, i as u8]),
            dst: MacAddr([2, 0, 0, 0, 0, 1]),
            kbps: 1,
            hops: path.iter().map(|l| l.src).collect(),
            links: path.to_vec(),
            src_at: path[0].src,
            origin: Origin::Flow,
            now: Instant::now(),
        };
        let t0 = Instant::now();
        let (revision, kvs) = etcd.get_prefix(&format!("{PREFIX}{RESERVATIONS}")).unwrap();
        let clock = Clock::at(Instant::now());
        let mirror = Mirror::read(revision, &kvs, &clock);
        match admit(etcd, ("m", lease), mirror, &req, &caps, &clock, stats) {
            Ok(r) => {
                took.push(t0.elapsed());
                release(etcd, r.id, (r.src, r.dst)).unwrap();
            }
            Err(ReserveError::Contended) => {
                stats.failed.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("{e}"),
        }
    }
    took
}

fn summary(what: &str, mut took: Vec<Duration>, wall: Duration, stats: &LedgerStats) {
    took.sort();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    println!(
        "{what}: {} admitted in {wall:.2?} ({:.0}/s), p50 {:.2?}, p99 {:.2?}; {} conflicts, {} gave up",
        took.len(),
        took.len() as f64 / wall.as_secs_f64(),
        at(0.5),
        at(0.99),
        stats.conflicts.load(Ordering::Relaxed),
        stats.failed.load(Ordering::Relaxed),
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let members: usize = args.next().map_or(1, |a| a.parse().expect("MEMBERS"));
    let n: usize = args.next().map_or(400, |a| a.parse().expect("ADMISSIONS"));
    let local = LocalEtcd::start(members).expect("etcd");
    let etcd = Etcd::new(&local.endpoints(), Duration::from_secs(5));
    let lease = etcd.grant(Duration::from_secs(60)).unwrap();
    let shared = [link(1, 2), link(2, 3), link(3, 4)];
    let apart = [link(5, 6), link(6, 7), link(7, 8)];
    println!("etcd of {members} on loopback, {n} admissions of 3 links each per member");

    let stats = LedgerStats::default();
    let t0 = Instant::now();
    let took = run(&etcd, lease, 1, &shared, n, &stats);
    summary("one member", took, t0.elapsed(), &stats);

    for (what, second) in [
        ("two members, one path", &shared),
        ("two members, disjoint paths", &apart),
    ] {
        let stats = LedgerStats::default();
        let t0 = Instant::now();
        let took = std::thread::scope(|s| {
            let a = s.spawn(|| run(&etcd, lease, 1, &shared, n, &stats));
            let b = s.spawn(|| run(&etcd, lease, 2, second, n, &stats));
            let mut took = a.join().unwrap();
            took.extend(b.join().unwrap());
            took
        });
        summary(what, took, t0.elapsed(), &stats);
    }
}
