//! The cost of one reservation and one release as `bandwidth` makes them
//! (`Reservations::with` / `without` inside a transaction), with N
//! reservations already held: the view is rebuilt per request, so what a
//! new version costs decides how the application scales with the number
//! of host pairs. Prints nanoseconds per request for each N.
//!
//! `cargo run --release -p baton-apps --example reservation_cost`

use baton_apps::bandwidth::{Origin, Request, Reservations};
use baton_apps::views::{Link, PortRef};
use baton_openflow::{DatapathId, MacAddr, PortNo};
use baton_runtime::env::Environment;
use std::time::Instant;

fn port(s: u64, p: u32) -> PortRef {
    PortRef::new(DatapathId(s), PortNo(p))
}

fn request(i: u64) -> Request {
    let b = i.to_be_bytes();
    let links: Vec<Link> = (0..4)
        .map(|k| Link {
            src: port(k + 1, 1),
            dst: port(k + 2, 2),
        })
        .collect();
    Request {
        src: MacAddr([2, b[3], b[4], b[5], b[6], b[7]]),
        dst: MacAddr([4, 0, 0, 0, 0, 1]),
        kbps: 1,
        hops: links.iter().map(|l| l.src).collect(),
        links,
        src_at: port(1 + i % 16, 3),
        origin: Origin::Flow,
        now: Instant::now(),
    }
}

fn main() {
    for held in [0u64, 100, 1_000, 10_000, 100_000] {
        let env = Environment::default();
        let mut ledger = Reservations::default();
        for i in 0..held {
            ledger = ledger.with(request(i), |_| u64::MAX).unwrap().next;
        }
        env.atomically(1, |tx| {
            tx.write(ledger.clone());
            Ok::<_, ()>(())
        })
        .unwrap();
        let rounds = 2_000u64;
        let t = Instant::now();
        for i in 0..rounds {
            let id = env
                .atomically(8, |tx| {
                    let l = tx.read::<Reservations>().unwrap_or_default();
                    let g = l.with(request(held + i), |_| u64::MAX).map_err(|_| ())?;
                    tx.write(g.next);
                    Ok::<_, ()>(g.reservation.id)
                })
                .unwrap()
                .value;
            env.atomically(8, |tx| {
                let l = tx.read::<Reservations>().unwrap_or_default();
                let (next, _) = l.without(id).ok_or(())?;
                tx.write(next);
                Ok::<_, ()>(())
            })
            .unwrap();
        }
        let ns = t.elapsed().as_nanos() as u64 / rounds;
        println!("{held:>7} held: {ns:>9} ns per reservation + release");
    }
}
