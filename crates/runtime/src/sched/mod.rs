//! Workload distribution across worker threads: the four designs of
//! Maestro (seed 000 §3.2) and baton's default. [`crate::Config::scheduler`]
//! picks one; all of them drive the same engine (`engine.rs`), so they differ
//! only in which switch a worker serves next.

pub mod partition;
pub(crate) mod queues;
pub(crate) mod round_robin;
pub(crate) mod shared_queue;
