//! Transactions on one environment, and under contention from many
//! threads.

use super::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Clone, PartialEq)]
struct Topo(u32);
impl View for Topo {
    const NAME: &'static str = "topo";
}

#[derive(Debug, Clone, PartialEq)]
struct Paths(u32);
impl View for Paths {
    const NAME: &'static str = "paths";
}

#[test]
fn a_commit_publishes_every_write_together() {
    let env = Environment::default();
    env.publish(Publish::new().view(Topo(1)));
    let done = env
        .atomically(3, |tx| {
            let t = tx.read::<Topo>().unwrap();
            tx.write(Topo(t.0 + 1));
            tx.write(Paths(t.0 + 1));
            // A transaction reads what it wrote.
            assert_eq!(*tx.read::<Topo>().unwrap(), Topo(2));
            Ok::<_, ()>(t.0)
        })
        .unwrap();
    assert_eq!((done.value, done.attempts), (1, 1));
    assert_eq!(done.changes.len(), 2);
    let s = env.snapshot();
    assert_eq!(s.versions(), vec![("paths", 1), ("topo", 2)]);
    assert_eq!(*s.get::<Paths>().unwrap(), Paths(2));
}

#[test]
fn a_view_changed_under_it_runs_it_again_on_the_new_version() {
    let env = Environment::default();
    env.publish(Publish::new().view(Topo(1)));
    let mut runs = 0;
    let done = env
        .atomically(3, |tx| {
            runs += 1;
            let t = tx.read::<Topo>().unwrap().0;
            if runs == 1 {
                // Another writer commits between this read and the commit.
                env.publish(Publish::new().view(Topo(10)));
            }
            tx.write(Paths(t));
            Ok::<_, ()>(t)
        })
        .unwrap();
    assert_eq!((done.value, done.attempts), (10, 2));
    // Paths were computed from the topology that is current.
    assert_eq!(*env.read::<Paths>().unwrap(), Paths(10));
    assert_eq!(env.read::<Paths>().unwrap().version(), 1);
}

#[test]
fn an_aborted_or_contended_transaction_leaves_nothing() {
    let env = Environment::default();
    env.publish(Publish::new().view(Topo(1)));
    let aborted = env.atomically(3, |tx| {
        tx.write(Paths(1));
        Err::<(), _>("no route")
    });
    assert_eq!(aborted.unwrap_err(), TxError::Aborted("no route"));
    let mut n = 1;
    let contended = env.atomically(3, |tx| {
        tx.read::<Topo>();
        tx.write(Paths(0));
        n += 1;
        env.publish(Publish::new().view(Topo(n)));
        Ok::<_, ()>(())
    });
    assert_eq!(contended.unwrap_err(), TxError::Contended { attempts: 3 });
    assert!(env.read::<Paths>().is_none(), "no attempt published");
    assert_eq!(env.read::<Topo>().unwrap().version(), 4);
}

#[test]
fn only_the_views_read_are_checked() {
    let env = Environment::default();
    env.publish(Publish::new().view(Topo(1)));
    // Writes without reading: a concurrent change of another view does
    // not stop it.
    let done = env
        .atomically(1, |tx| {
            env.publish(Publish::new().view(Topo(2)));
            tx.write(Paths(7));
            Ok::<_, ()>(())
        })
        .unwrap();
    assert_eq!(done.attempts, 1);
    // A read-only transaction publishes nothing.
    let read = env
        .atomically(1, |tx| Ok::<_, ()>(tx.read::<Paths>().unwrap().0))
        .unwrap();
    assert_eq!((read.value, read.changes.len()), (7, 0));
}

#[test]
fn a_refused_write_is_not_published() {
    let env = Environment::default();
    let refused = env.atomically_checked(
        3,
        |tx| match tx.written().next() {
            Some(view) => Err(super::super::UndeclaredWrite {
                app: "reader".into(),
                view,
            }),
            None => Ok(()),
        },
        |tx| {
            tx.write(Topo(1));
            Ok::<_, ()>(())
        },
    );
    assert!(matches!(refused, Err(TxError::Undeclared(_))));
    assert!(env.read::<Topo>().is_none());
}

/// Links with a capacity, the bandwidth reserved on each, and every
/// reservation held, by (thread, number): McNettle §4.4's state.
#[derive(Debug, Clone, Default)]
struct Ledger {
    reserved: Vec<u64>,
    held: HashMap<(usize, u64), (Vec<usize>, u64)>,
}
impl View for Ledger {
    const NAME: &'static str = "ledger";
}

const LINKS: usize = 8;
const CAPACITY: u64 = 100;

impl Ledger {
    /// No link oversubscribed, and each link's reservation is the sum of
    /// the reservations held on it (nothing leaked, nothing lost).
    fn check(&self) {
        let mut sums = vec![0; LINKS];
        for (links, rate) in self.held.values() {
            for &l in links {
                sums[l] += rate;
            }
        }
        assert_eq!(sums, self.reserved);
        assert!(self.reserved.iter().all(|&r| r <= CAPACITY), "{self:?}");
    }
}

/// A small deterministic generator per thread (xorshift).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn concurrent_reservations_never_oversubscribe_or_leak() {
    let env = Arc::new(Environment::default());
    env.publish(Publish::new().view(Ledger {
        reserved: vec![0; LINKS],
        held: HashMap::new(),
    }));
    let stop = Arc::new(AtomicBool::new(false));
    // Checks every snapshot it can take while the writers run.
    let checker = {
        let (env, stop) = (env.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut checked = 0u64;
            while !stop.load(Ordering::Acquire) {
                env.read::<Ledger>().unwrap().check();
                checked += 1;
            }
            checked
        })
    };
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let env = env.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t as u64 + 1));
                let mut mine: Vec<u64> = Vec::new();
                let (mut next, mut refused, mut retried) = (0, 0, 0);
                for _ in 0..1500 {
                    let release = !mine.is_empty() && rng.below(3) == 0;
                    let victim = if release {
                        Some(mine.swap_remove(rng.below(mine.len() as u64) as usize))
                    } else {
                        None
                    };
                    let first = rng.below(LINKS as u64) as usize;
                    let path: Vec<usize> = (0..1 + rng.below(3) as usize)
                        .map(|k| (first + k) % LINKS)
                        .collect();
                    let rate = 1 + rng.below(30);
                    let id = (t, next);
                    let result = env.atomically(10_000, |tx| {
                        let mut ledger = Ledger::clone(&tx.read::<Ledger>().unwrap());
                        if let Some(n) = victim {
                            let (links, rate) = ledger.held.remove(&(t, n)).unwrap();
                            for l in links {
                                ledger.reserved[l] -= rate;
                            }
                        } else if path.iter().any(|&l| ledger.reserved[l] + rate > CAPACITY) {
                            return Ok(false);
                        } else {
                            for &l in &path {
                                ledger.reserved[l] += rate;
                            }
                            ledger.held.insert(id, (path.clone(), rate));
                        }
                        tx.write(ledger);
                        Ok::<_, ()>(true)
                    });
                    let done = result.expect("a bounded retry commits");
                    retried += done.attempts - 1;
                    match (victim, done.value) {
                        (Some(_), _) => {}
                        (None, true) => {
                            mine.push(next);
                            next += 1;
                        }
                        (None, false) => refused += 1,
                    }
                }
                (t, mine, refused, retried)
            })
        })
        .collect();
    let mut total_refused = 0;
    let mut held = Vec::new();
    for w in writers {
        let (t, mine, refused, _retried) = w.join().unwrap();
        total_refused += refused;
        held.extend(mine.into_iter().map(|n| (t, n)));
    }
    stop.store(true, Ordering::Release);
    assert!(checker.join().unwrap() > 0);
    let ledger = env.read::<Ledger>().unwrap();
    ledger.check();
    // Exactly the reservations each thread thinks it holds are held.
    held.sort();
    let mut in_ledger: Vec<_> = ledger.held.keys().copied().collect();
    in_ledger.sort();
    assert_eq!(held, in_ledger);
    assert!(total_refused > 0, "the links never filled up");
}
