//! Network state as versioned views, held in one environment (the first
//! half of Maestro's programming model, Maestro thesis §3.2.1-3.2.3).
//!
//! A **view** ([`View`]) is a typed, immutable value describing one part of
//! the network state (the topology, the hosts, the routes); each time an
//! application publishes a new one, its version goes up by one. The
//! **environment** ([`Environment`]) holds the current version of every
//! view as one [`Snapshot`]:
//! - readers take the current snapshot without a lock or a copy (an atomic
//!   pointer load, `arc-swap`) and keep a consistent picture of *every*
//!   view for as long as they hold it;
//! - a writer publishes one or several views at once ([`Publish`]): the
//!   new snapshot replaces the old atomically, so no reader sees topology
//!   version N beside routes computed from N-1 when both were published
//!   together;
//! - each publication is recorded as [`Change`]s (view X moved from version
//!   N to N+1), which the runtime hands to the applications that declared
//!   they read X ([`crate::App::views`], [`crate::App::view_changed`]), off
//!   the packet-in path.
//!
//! A **transaction** ([`transaction`], McNettle §4.4) reads several views
//! on one snapshot, writes several, and commits them as one [`Publish`]
//! only if the versions it read are still current, else runs again: the
//! version numbers are the conflict check. A DAG of applications can run
//! the same way on a private [`Snapshot`] (cloning one copies pointers, not
//! views).

pub(crate) mod pinned;
pub mod transaction;

use crate::sync::lock;
use arc_swap::ArcSwap;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;
pub use transaction::{Committed, Transaction, TxError};

/// A kind of network state that applications share through the
/// environment.
pub trait View: Any + Send + Sync {
    /// A short name, for logs and the operator interface ("topology").
    const NAME: &'static str;
}

/// Which view: its type, and its name for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViewId {
    type_id: TypeId,
    name: &'static str,
}

impl ViewId {
    /// The id of view `T`.
    pub fn of<T: View>() -> ViewId {
        ViewId {
            type_id: TypeId::of::<T>(),
            name: T::NAME,
        }
    }

    /// The view's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Display for ViewId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// One version of a view: immutable and shared, so holding it costs a
/// reference count.
pub struct Versioned<T> {
    version: u64,
    value: Arc<T>,
}

impl<T> Versioned<T> {
    /// `value` as version `version` (the environment numbers what is
    /// published through it; this is for values built elsewhere, such as
    /// in tests).
    pub fn new(version: u64, value: T) -> Versioned<T> {
        Versioned {
            version,
            value: Arc::new(value),
        }
    }

    /// An already shared `value` as version `version` (a view read in a
    /// DAG's run, with the version [`crate::dag::Local::version`] gives).
    pub fn shared(version: u64, value: Arc<T>) -> Versioned<T> {
        Versioned { version, value }
    }

    /// The version (1 for the first publication).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The shared value.
    pub fn arc(&self) -> &Arc<T> {
        &self.value
    }
}

impl<T> Clone for Versioned<T> {
    fn clone(&self) -> Self {
        Versioned {
            version: self.version,
            value: self.value.clone(),
        }
    }
}

impl<T> Deref for Versioned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: fmt::Debug> fmt::Debug for Versioned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Versioned")
            .field("version", &self.version)
            .field("value", &self.value)
            .finish()
    }
}

#[derive(Clone)]
struct Entry {
    id: ViewId,
    version: u64,
    value: Arc<dyn Any + Send + Sync>,
}

/// Every view at one instant.
#[derive(Clone, Default)]
pub struct Snapshot {
    views: HashMap<TypeId, Entry>,
}

impl Snapshot {
    /// The current version of view `T`, if it was ever published.
    pub fn get<T: View>(&self) -> Option<Versioned<T>> {
        let e = self.views.get(&TypeId::of::<T>())?;
        let value = e.value.clone().downcast::<T>().ok()?;
        Some(Versioned {
            version: e.version,
            value,
        })
    }

    /// The version of view `T` (0 if never published).
    pub fn version<T: View>(&self) -> u64 {
        self.version_of(ViewId::of::<T>())
    }

    /// The version of a view by id (0 if never published).
    pub fn version_of(&self, id: ViewId) -> u64 {
        self.views.get(&id.type_id).map_or(0, |e| e.version)
    }

    /// Every published view's name and version, by name.
    pub fn versions(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<_> = self
            .views
            .values()
            .map(|e| (e.id.name, e.version))
            .collect();
        v.sort();
        v
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.versions()).finish()
    }
}

/// A view moved from one version to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// Which view.
    pub view: ViewId,
    /// Its version before (0: it did not exist).
    pub from: u64,
    /// Its version now.
    pub to: u64,
}

/// New versions of one or several views, published together.
#[derive(Default)]
pub struct Publish {
    entries: Vec<(ViewId, Arc<dyn Any + Send + Sync>)>,
}

impl Publish {
    /// Nothing yet.
    pub fn new() -> Publish {
        Publish::default()
    }

    /// Adds the versions `other` holds, replacing those of the same views.
    pub(crate) fn merge(&mut self, other: Publish) {
        for (id, value) in other.entries {
            match self.entries.iter_mut().find(|(e, _)| *e == id) {
                Some(entry) => entry.1 = value,
                None => self.entries.push((id, value)),
            }
        }
    }

    /// Adds a new version of view `T`.
    pub fn view<T: View>(mut self, value: T) -> Publish {
        self.entries.push((ViewId::of::<T>(), Arc::new(value)));
        self
    }

    /// The views it holds.
    pub fn ids(&self) -> impl Iterator<Item = ViewId> + '_ {
        self.entries.iter().map(|(id, _)| *id)
    }

    /// Sets the new version of view `T`, replacing one already added.
    pub(crate) fn set<T: View>(&mut self, value: T) {
        let id = ViewId::of::<T>();
        let value: Arc<dyn Any + Send + Sync> = Arc::new(value);
        match self.entries.iter_mut().find(|(e, _)| *e == id) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((id, value)),
        }
    }

    /// The new version of view `id`, if it holds one.
    pub(crate) fn get(&self, id: ViewId) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.entries.iter().find(|(e, _)| *e == id).map(|(_, v)| v)
    }
}

/// The current snapshot, and the changes not yet handed to readers.
pub struct Environment {
    current: ArcSwap<Snapshot>,
    /// Serialises writers; readers never take it.
    writer: Mutex<()>,
    pending: Mutex<Vec<Change>>,
    changed: Condvar,
    /// Threads waiting in [`Environment::take_changes`] (changed under
    /// `pending`'s lock), so that a publication with nobody waiting makes
    /// no system call to wake nobody.
    waiting: AtomicUsize,
}

impl Default for Environment {
    fn default() -> Self {
        Environment {
            current: ArcSwap::from_pointee(Snapshot::default()),
            writer: Mutex::new(()),
            pending: Mutex::new(Vec::new()),
            changed: Condvar::new(),
            waiting: AtomicUsize::new(0),
        }
    }
}

impl Environment {
    /// Every view now, without a lock.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// The current version of view `T`.
    pub fn read<T: View>(&self) -> Option<Versioned<T>> {
        self.current.load().get::<T>()
    }

    /// Replaces the views in `p` atomically; returns their changes, which
    /// are also queued for readers.
    pub(crate) fn publish(&self, p: Publish) -> Vec<Change> {
        let writer = lock(&self.writer);
        self.publish_locked(&writer, p)
    }

    /// [`Environment::publish`] for a caller holding the writer lock.
    fn publish_locked(&self, _writer: &MutexGuard<'_, ()>, p: Publish) -> Vec<Change> {
        let mut next = Snapshot::clone(&self.current.load());
        let mut changes = Vec::with_capacity(p.entries.len());
        for (id, value) in p.entries {
            let from = next.version_of(id);
            let to = from + 1;
            next.views.insert(
                id.type_id,
                Entry {
                    id,
                    version: to,
                    value,
                },
            );
            changes.push(Change { view: id, from, to });
        }
        let next = Arc::new(next);
        pinned::published(self, &changes, &next);
        self.current.store(next);
        let mut pending = lock(&self.pending);
        pending.extend(changes.iter().copied());
        if self.waiting.load(Ordering::Relaxed) > 0 {
            self.changed.notify_all();
        }
        drop(pending);
        changes
    }

    /// Takes the changes not yet handed to readers, waiting up to `wait`
    /// for some.
    pub(crate) fn take_changes(&self, wait: Duration) -> Vec<Change> {
        let mut pending = lock(&self.pending);
        if pending.is_empty() && !wait.is_zero() {
            // Counted under the lock, which the wait releases: a publisher
            // that takes the lock after this sees the count.
            self.waiting.fetch_add(1, Ordering::Relaxed);
            pending = self
                .changed
                .wait_timeout(pending, wait)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
            self.waiting.fetch_sub(1, Ordering::Relaxed);
        }
        std::mem::take(&mut *pending)
    }

    /// Wakes a thread waiting in [`Environment::take_changes`].
    pub(crate) fn wake(&self) {
        self.changed.notify_all();
    }
}

/// The views an application reads and writes ([`crate::App::views`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewAccess {
    reads: Vec<ViewId>,
    writes: Vec<ViewId>,
}

impl ViewAccess {
    /// Neither reads nor writes any view.
    pub fn none() -> ViewAccess {
        ViewAccess::default()
    }

    /// Also reads view `T`: [`crate::App::view_changed`] hears of its new
    /// versions.
    pub fn reads<T: View>(mut self) -> ViewAccess {
        self.reads.push(ViewId::of::<T>());
        self
    }

    /// Also writes view `T`.
    pub fn writes<T: View>(mut self) -> ViewAccess {
        self.writes.push(ViewId::of::<T>());
        self
    }

    /// Whether it reads `id`.
    pub fn does_read(&self, id: ViewId) -> bool {
        self.reads.contains(&id)
    }

    /// Whether it writes `id`.
    pub fn does_write(&self, id: ViewId) -> bool {
        self.writes.contains(&id)
    }

    /// The views read.
    pub fn read_views(&self) -> &[ViewId] {
        &self.reads
    }

    /// The views written.
    pub fn written_views(&self) -> &[ViewId] {
        &self.writes
    }
}

/// An application published a view it did not declare it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndeclaredWrite {
    /// The application.
    pub app: String,
    /// The view.
    pub view: ViewId,
}

impl fmt::Display for UndeclaredWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "application {} published view {} without declaring it writes it",
            self.app, self.view
        )
    }
}

impl std::error::Error for UndeclaredWrite {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Topo(u32);
    impl View for Topo {
        const NAME: &'static str = "topo";
    }

    #[derive(Debug, PartialEq)]
    struct Paths {
        from_topo: u64,
    }
    impl View for Paths {
        const NAME: &'static str = "paths";
    }

    #[test]
    fn versions_count_up_and_readers_keep_their_snapshot() {
        let env = Environment::default();
        assert!(env.read::<Topo>().is_none());
        let before = env.snapshot();
        let c = env.publish(Publish::new().view(Topo(1)));
        assert_eq!(
            c,
            vec![Change {
                view: ViewId::of::<Topo>(),
                from: 0,
                to: 1
            }]
        );
        env.publish(Publish::new().view(Topo(2)));
        let t = env.read::<Topo>().unwrap();
        assert_eq!((t.version(), t.0), (2, 2));
        // The old snapshot still says what it said.
        assert!(before.get::<Topo>().is_none());
        assert_eq!(before.version::<Topo>(), 0);
        assert_eq!(env.take_changes(Duration::ZERO).len(), 2);
        assert!(env.take_changes(Duration::ZERO).is_empty());
    }

    #[test]
    fn views_published_together_are_seen_together() {
        let env = Arc::new(Environment::default());
        let writer = {
            let env = env.clone();
            std::thread::spawn(move || {
                for n in 1..=2000u32 {
                    env.publish(Publish::new().view(Topo(n)).view(Paths {
                        from_topo: u64::from(n),
                    }));
                }
            })
        };
        // Every snapshot a reader takes pairs paths with the topology
        // they were computed from.
        let mut seen = 0;
        while seen < 2000 {
            let s = env.snapshot();
            if let (Some(t), Some(p)) = (s.get::<Topo>(), s.get::<Paths>()) {
                assert_eq!(u64::from(t.0), p.from_topo);
                assert_eq!(t.version(), p.version());
                seen = t.0;
            }
        }
        writer.join().unwrap();
        assert_eq!(
            env.snapshot().versions(),
            vec![("paths", 2000), ("topo", 2000)]
        );
    }

    #[test]
    fn access_declarations() {
        let a = ViewAccess::none().reads::<Topo>().writes::<Paths>();
        assert!(a.does_read(ViewId::of::<Topo>()) && !a.does_read(ViewId::of::<Paths>()));
        assert!(a.does_write(ViewId::of::<Paths>()) && !a.does_write(ViewId::of::<Topo>()));
    }
}
