//! One picture of the environment for each event the pipeline hands its
//! applications in turn (a packet-in batch, a switch's message).
//!
//! An application that lets a packet pass acts on what it read, and the
//! one after it acts on what *it* reads: `bandwidth` leaves a packet for
//! an unknown host to `routing`, which floods it. Had a thread between
//! them published the host (a cluster's peers arrive that way), `routing`
//! would install a plain path for the pair, and the pair would never ask
//! `bandwidth` for its reservation while the path lasted. So during such
//! an event, every read through a [`crate::Network`] on the handling
//! thread sees the environment as the event's first read found it (as
//! Maestro gives each application's execution its input views, thesis
//! §3.2.2), plus what the event's own applications publish (the views
//! published on this thread, at their new versions; not the others').
//! Transactions are not pinned: they read the current versions, as their
//! commit checks.
//!
//! A thread-local rather than a snapshot handed down with the batch, so
//! that applications read through the same `Network` calls in and out of
//! an event, and an application that reads no view costs nothing.

use super::{Change, Environment, Snapshot, Versioned, View};
use std::cell::RefCell;
use std::sync::Arc;

/// The event being handled on this thread: its environment (by address)
/// and, once read, the picture its applications read.
struct Pin {
    env: *const Environment,
    snapshot: Option<Arc<Snapshot>>,
}

thread_local! {
    static PIN: RefCell<Option<Pin>> = const { RefCell::new(None) };
}

/// Runs `f` as one event on `env`: every read of `env` on this thread
/// through [`snapshot`] and [`read`] sees one picture, changed only by
/// what this thread publishes ([`published`]). A nested call's picture is
/// its own; the outer one's is back once it returns.
pub(crate) fn during<R>(env: &Environment, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Pin>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            PIN.with(|p| *p.borrow_mut() = outer);
        }
    }
    let outer = PIN.with(|p| {
        p.borrow_mut().replace(Pin {
            env,
            snapshot: None,
        })
    });
    let _restore = Restore(outer);
    f()
}

/// `f` on this event's picture of `env`, or on `env` now outside one.
fn with_picture<R>(env: &Environment, f: impl FnOnce(&Arc<Snapshot>) -> R) -> R {
    PIN.with(|p| match p.borrow_mut().as_mut() {
        Some(pin) if std::ptr::eq(pin.env, env) => {
            f(pin.snapshot.get_or_insert_with(|| env.snapshot()))
        }
        _ => f(&env.current.load()),
    })
}

/// Every view of `env` as this event reads it.
pub(crate) fn snapshot(env: &Environment) -> Arc<Snapshot> {
    with_picture(env, Arc::clone)
}

/// View `T` of `env` as this event reads it.
pub(crate) fn read<T: View>(env: &Environment) -> Option<Versioned<T>> {
    with_picture(env, |s| s.get::<T>())
}

/// This thread published `changes` to `env`, making `now`: the event's
/// picture takes the new versions of those views (and only those).
pub(super) fn published(env: &Environment, changes: &[Change], now: &Snapshot) {
    PIN.with(|p| {
        if let Some(pin) = p.borrow_mut().as_mut()
            && std::ptr::eq(pin.env, env)
            && let Some(seen) = pin.snapshot.as_mut()
        {
            let seen = Arc::make_mut(seen);
            for c in changes {
                if let Some(entry) = now.views.get(&c.view.type_id) {
                    seen.views.insert(c.view.type_id, entry.clone());
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Publish;

    #[derive(Debug, PartialEq)]
    struct Hosts(u32);
    impl View for Hosts {
        const NAME: &'static str = "hosts";
    }

    fn hosts(env: &Environment) -> Option<u32> {
        read::<Hosts>(env).map(|h| h.0)
    }

    #[derive(Debug, PartialEq)]
    struct Topo(u32);
    impl View for Topo {
        const NAME: &'static str = "topo";
    }

    fn topo(env: &Environment) -> Option<u32> {
        read::<Topo>(env).map(|t| t.0)
    }

    #[test]
    fn an_event_reads_one_picture_and_its_own_writes() {
        let env = Environment::default();
        env.publish(Publish::new().view(Hosts(1)).view(Topo(1)));
        during(&env, || {
            assert_eq!(hosts(&env), Some(1));
            // Another thread publishes both views between two
            // applications' reads.
            std::thread::scope(|s| {
                s.spawn(|| env.publish(Publish::new().view(Hosts(2)).view(Topo(2))));
            });
            assert_eq!((hosts(&env), topo(&env)), (Some(1), Some(1)));
            assert_eq!(snapshot(&env).version::<Hosts>(), 1);
            // This event's own publication is read at its version; the
            // other thread's topology still is not.
            env.publish(Publish::new().view(Hosts(3)));
            assert_eq!((hosts(&env), topo(&env)), (Some(3), Some(1)));
            assert_eq!(snapshot(&env).version::<Hosts>(), 3);
        });
        // Outside an event, reads see the environment now.
        assert_eq!((hosts(&env), topo(&env)), (Some(3), Some(2)));
    }

    #[test]
    fn a_publication_before_the_first_read_is_read() {
        let env = Environment::default();
        during(&env, || {
            env.publish(Publish::new().view(Hosts(1)));
            assert_eq!(hosts(&env), Some(1));
        });
    }

    #[test]
    fn another_environment_and_an_outer_event_are_left_alone() {
        let (a, b) = (Environment::default(), Environment::default());
        a.publish(Publish::new().view(Hosts(1)));
        b.publish(Publish::new().view(Hosts(10)));
        during(&a, || {
            assert_eq!(hosts(&a), Some(1));
            b.publish(Publish::new().view(Hosts(11)));
            assert_eq!(hosts(&b), Some(11), "b is not this event's");
            during(&b, || assert_eq!(hosts(&b), Some(11)));
            std::thread::scope(|s| {
                s.spawn(|| a.publish(Publish::new().view(Hosts(2))));
            });
            assert_eq!(hosts(&a), Some(1), "the outer event's picture is back");
        });
    }
}
