//! Bandwidth reservations three ways, the designs McNettle Fig. 20
//! compares (McNettle §4.4): a transaction across views
//! ([`Environment::atomically`] over one view of every link), one global
//! lock over the links, and an atomic per link updated by compare-and-swap
//! (which must undo the links it already reserved when a later one is
//! full: the compensation the transaction spares the application).
//!
//! Each operation reserves a random 3-link path of 64 links and releases
//! it (two updates). Prints operations per second and CPU per operation
//! for each design with the given number of threads:
//!
//!     cargo run --release -p baton-runtime --example reservations -- THREADS [SECONDS]

use baton_runtime::env::{Committed, Environment, TxError, View};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "common/cpu.rs"]
mod cpu;
use cpu::cpu_time;

const LINKS: usize = 64;
const PATH: usize = 3;
/// Room for every thread's reservation on one link at once: the point is
/// the cost of the update, not refusals.
const CAPACITY: u64 = 1 << 40;

/// Every link's reserved bandwidth, as one view.
#[derive(Clone)]
struct Reserved(Vec<u64>);
impl View for Reserved {
    const NAME: &'static str = "reserved";
}

/// One way of reserving and releasing a path.
trait Design: Send + Sync {
    /// Reserves `rate` on every link of `path`, or on none; true if done.
    fn reserve(&self, path: &[usize; PATH], rate: u64) -> bool;
    fn release(&self, path: &[usize; PATH], rate: u64);
}

/// The environment, and the attempts that did not commit (reruns).
struct Transactional(Environment, AtomicU64);

impl Design for Transactional {
    fn reserve(&self, path: &[usize; PATH], rate: u64) -> bool {
        let done = self.0.atomically(u32::MAX, |tx| {
            let mut links = Reserved::clone(&tx.read::<Reserved>().expect("published"));
            if path.iter().any(|&l| links.0[l] + rate > CAPACITY) {
                return Ok(false);
            }
            for &l in path {
                links.0[l] += rate;
            }
            tx.write(links);
            Ok::<_, ()>(true)
        });
        self.count(&done);
        done.is_ok_and(|d| d.value)
    }

    fn release(&self, path: &[usize; PATH], rate: u64) {
        let done = self.0.atomically(u32::MAX, |tx| {
            let mut links = Reserved::clone(&tx.read::<Reserved>().expect("published"));
            for &l in path {
                links.0[l] -= rate;
            }
            tx.write(links);
            Ok::<_, ()>(())
        });
        self.count(&done);
    }
}

impl Transactional {
    fn count<R, E>(&self, done: &Result<Committed<R>, TxError<E>>) {
        if let Ok(d) = done {
            self.1
                .fetch_add(u64::from(d.attempts - 1), Ordering::Relaxed);
        }
    }
}

struct GlobalLock(Mutex<Vec<u64>>);

impl Design for GlobalLock {
    fn reserve(&self, path: &[usize; PATH], rate: u64) -> bool {
        let mut links = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if path.iter().any(|&l| links[l] + rate > CAPACITY) {
            return false;
        }
        for &l in path {
            links[l] += rate;
        }
        true
    }

    fn release(&self, path: &[usize; PATH], rate: u64) {
        let mut links = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for &l in path {
            links[l] -= rate;
        }
    }
}

struct PerLinkCas(Vec<AtomicU64>);

impl Design for PerLinkCas {
    fn reserve(&self, path: &[usize; PATH], rate: u64) -> bool {
        for (k, &l) in path.iter().enumerate() {
            let ok = self.0[l]
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                    (r + rate <= CAPACITY).then_some(r + rate)
                })
                .is_ok();
            if !ok {
                // Compensation: undo the links already reserved.
                for &done in &path[..k] {
                    self.0[done].fetch_sub(rate, Ordering::AcqRel);
                }
                return false;
            }
        }
        true
    }

    fn release(&self, path: &[usize; PATH], rate: u64) {
        for &l in path {
            self.0[l].fetch_sub(rate, Ordering::AcqRel);
        }
    }
}

/// Runs `threads` threads doing reserve-and-release for `secs`; returns
/// operations per second and CPU per operation.
fn run(design: Arc<dyn Design>, threads: usize, secs: f64) -> (f64, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (design, stop) = (design.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (t as u64 + 1);
                let mut ops = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let first = (x % LINKS as u64) as usize;
                    let path = [first, (first + 7) % LINKS, (first + 19) % LINKS];
                    let rate = 1 + (x >> 32) % 1000;
                    if design.reserve(&path, rate) {
                        design.release(&path, rate);
                    }
                    ops += 1;
                }
                ops
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let ops: u64 = handles.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_time().saturating_sub(cpu0);
    (ops as f64 / wall, cpu / ops.max(1) as u32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3.0);
    let env = Environment::default();
    env.atomically(1, |tx| {
        tx.write(Reserved(vec![0; LINKS]));
        Ok::<_, ()>(())
    })
    .expect("the first version");
    let transactional = Arc::new(Transactional(env, AtomicU64::new(0)));
    let designs: [(&str, Arc<dyn Design>); 3] = [
        ("transaction", transactional.clone()),
        (
            "global lock",
            Arc::new(GlobalLock(Mutex::new(vec![0; LINKS]))),
        ),
        (
            "per-link CAS",
            Arc::new(PerLinkCas((0..LINKS).map(|_| AtomicU64::new(0)).collect())),
        ),
    ];
    println!("{threads} thread(s), {secs} s each, {LINKS} links, {PATH}-link paths");
    for (name, design) in designs {
        let (rate, cpu) = run(design, threads, secs);
        println!(
            "{name:>13}: {rate:>12.0} reserve+release/s, {:>7.0} ns CPU each",
            cpu.as_nanos()
        );
    }
    println!(
        "transaction reruns: {}",
        transactional.1.load(Ordering::Relaxed)
    );
}
