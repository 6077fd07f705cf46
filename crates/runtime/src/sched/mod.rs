//! Workload distribution across worker threads: the four designs of
//! Maestro §3.2 and baton's default. [`crate::Config::scheduler`] picks
//! one; all of them drive the same engine (`engine.rs`), so they differ
//! only in which switch a worker serves next.

pub mod partition;
pub(crate) mod queues;
pub(crate) mod round_robin;
pub(crate) mod shared_queue;
#[cfg(test)]
mod simulation;

use crate::controller::Wake;
use crate::table::SwitchTable;
use std::sync::Arc;

/// How a scheduler hears that a switch needs service without input on
/// its socket (its session's keepalive timer). The runtime calls it
/// directly; the controller, which the schedulers use, through [`Wake`].
pub(crate) enum Readiness {
    /// `fair`, `static-partition`, `dynamic-partition`.
    Queues(Arc<queues::RunQueues>),
    /// `shared-queue`.
    SharedQueue(Arc<shared_queue::Queue>),
    /// `round-robin`.
    RoundRobin(Arc<round_robin::Readiness>),
}

impl Readiness {
    /// Marks switch `idx` ready.
    pub fn ready(&self, table: &SwitchTable, idx: usize) {
        match self {
            Readiness::Queues(q) => q.ready(table, idx),
            Readiness::SharedQueue(q) => q.ready(idx),
            Readiness::RoundRobin(r) => r.ready(idx),
        }
    }

    /// Wakes every worker (the runtime is stopping).
    pub fn wake_all(&self) {
        if let Readiness::Queues(q) = self {
            q.wake_all();
        }
    }
}

impl Wake for Readiness {
    fn ready(&self, table: &SwitchTable, idx: usize) {
        Readiness::ready(self, table, idx);
    }
}
