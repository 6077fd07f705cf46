//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, ignoring poisoning: a panic in one handler must not stop
/// every other switch's, and the state behind these locks stays
/// consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
