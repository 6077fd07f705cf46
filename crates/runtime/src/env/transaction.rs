//! Transactions across views (McNettle §4.4, Fig. 6: `atomically
//! (reservePath ...)`): read several views, compute, write several, and
//! commit all or nothing.
//!
//! A [`Transaction`] runs on one snapshot of the environment: each view it
//! reads is recorded with the version it saw, and what it writes goes to a
//! private [`Publish`]. The commit, under the environment's writer lock,
//! publishes the writes only if every view read is still at the version
//! read; otherwise the attempt is thrown away whole and the closure runs
//! again on a fresh snapshot, up to a bound. So the application's code
//! holds no lock, and never undoes half of an update: a failed attempt
//! leaves nothing behind. Views are the unit of conflict (as in Maestro
//! thesis §3.2.5): two transactions conflict when one writes a view the
//! other read.

use super::{Change, Environment, Publish, Snapshot, View, ViewId};
use crate::sync::lock;
use std::fmt;
use std::sync::Arc;

/// One attempt of a transaction: the snapshot it reads, what it read, and
/// what it will write.
pub struct Transaction {
    snapshot: Arc<Snapshot>,
    reads: Vec<(ViewId, u64)>,
    writes: Publish,
}

impl Transaction {
    fn new(snapshot: Arc<Snapshot>) -> Transaction {
        Transaction {
            snapshot,
            reads: Vec::new(),
            writes: Publish::new(),
        }
    }

    /// View `T` as this transaction sees it: what it wrote itself, or the
    /// version in its snapshot (recorded: the commit checks it is still
    /// current).
    pub fn read<T: View>(&mut self) -> Option<Arc<T>> {
        let id = ViewId::of::<T>();
        if let Some(written) = self.writes.get(id) {
            return written.clone().downcast::<T>().ok();
        }
        if !self.reads.iter().any(|&(r, _)| r == id) {
            self.reads.push((id, self.snapshot.version_of(id)));
        }
        self.snapshot.get::<T>().map(|v| v.arc().clone())
    }

    /// The version of view `T` in this transaction's snapshot (0 if it
    /// was never published): the one a read of it sees, and the commit
    /// checks.
    pub fn version<T: View>(&self) -> u64 {
        self.snapshot.version::<T>()
    }

    /// Writes a new version of view `T`, published if the transaction
    /// commits (a second write of the same view replaces the first).
    pub fn write<T: View>(&mut self, value: T) {
        self.writes.set(value);
    }

    /// The views this attempt writes.
    pub fn written(&self) -> impl Iterator<Item = ViewId> + '_ {
        self.writes.ids()
    }
}

/// Why a transaction did not commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxError<E> {
    /// The closure gave up with this error; nothing was published.
    Aborted(E),
    /// Every attempt found a view it read changed by another commit.
    Contended {
        /// Attempts made.
        attempts: u32,
    },
    /// It wrote a view its application did not declare it writes
    /// ([`crate::App::views`]); nothing was published.
    Undeclared(super::UndeclaredWrite),
}

impl<E: fmt::Display> fmt::Display for TxError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxError::Aborted(e) => write!(f, "transaction aborted: {e}"),
            TxError::Contended { attempts } => write!(
                f,
                "transaction gave up after {attempts} attempts: the views it read kept changing"
            ),
            TxError::Undeclared(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for TxError<E> {}

/// What a committed transaction returned, and the changes it published.
#[derive(Debug)]
pub struct Committed<R> {
    /// The closure's result.
    pub value: R,
    /// The views it published (none for a read-only transaction).
    pub changes: Vec<Change>,
    /// Attempts it took (1 without contention).
    pub attempts: u32,
}

impl Environment {
    /// Runs `f` as a transaction, up to `attempts` times (at least once):
    /// commits its writes if no view it read has changed meanwhile, else
    /// runs it again on a fresh snapshot. Applications go through
    /// [`crate::Network::atomically`], which also checks that they write
    /// only the views they declared.
    pub fn atomically<R, E>(
        &self,
        attempts: u32,
        f: impl FnMut(&mut Transaction) -> Result<R, E>,
    ) -> Result<Committed<R>, TxError<E>> {
        self.atomically_checked(attempts, |_| Ok(()), f)
    }

    /// [`Environment::atomically`], where `check` may refuse the writes
    /// before they are published.
    pub(crate) fn atomically_checked<R, E>(
        &self,
        attempts: u32,
        mut check: impl FnMut(&Transaction) -> Result<(), super::UndeclaredWrite>,
        mut f: impl FnMut(&mut Transaction) -> Result<R, E>,
    ) -> Result<Committed<R>, TxError<E>> {
        let attempts = attempts.max(1);
        for attempt in 1..=attempts {
            let mut tx = Transaction::new(self.snapshot());
            let value = f(&mut tx).map_err(TxError::Aborted)?;
            check(&tx).map_err(TxError::Undeclared)?;
            if let Ok(changes) = self.commit_if_current(&tx.reads, tx.writes) {
                return Ok(Committed {
                    value,
                    changes,
                    attempts: attempt,
                });
            }
        }
        Err(TxError::Contended { attempts })
    }

    /// Publishes `writes` if every view of `reads` is still at the version
    /// given; otherwise publishes nothing and gives the writes back.
    pub(crate) fn commit_if_current(
        &self,
        reads: &[(ViewId, u64)],
        writes: Publish,
    ) -> Result<Vec<Change>, Publish> {
        let writer = lock(&self.writer);
        let current = self.current.load();
        if reads
            .iter()
            .all(|&(id, version)| current.version_of(id) == version)
        {
            Ok(self.publish_locked(&writer, writes))
        } else {
            Err(writes)
        }
    }
}

#[cfg(test)]
mod tests;
