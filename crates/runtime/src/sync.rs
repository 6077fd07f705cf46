//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, ignoring poisoning: a panicking application thread must
/// not take other switches down with it, and every structure behind the
/// runtime's locks stays consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
