//! Runtime statistics that the benchmark and operators read: per-switch
//! messages and bytes, per-worker batch sizes and batching delay, IBT over
//! time, messages by type in and out, how long messages wait (a
//! histogram), connections and why they ended.
//!
//! Workers update atomics once per batch; [`Statistics`] copies them out.
//! `messages` counts by type; `delay` is the waiting-time histogram.

mod delay;
mod messages;

pub use delay::{DELAY_BUCKETS_US, DelaySnapshot};
pub(crate) use delay::{DelayHistogram, DelayTally};
pub use messages::MessageCount;
pub(crate) use messages::{Tally, TypeCounters};

use crate::switch::SwitchId;
use crate::sync::lock;
use baton_openflow::DatapathId;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many IBT samples (one per 100 ms per worker) are kept: ten minutes.
const TRACE_LEN: usize = 6000;

/// One worker's counters.
#[derive(Debug, Default)]
pub struct WorkerStats {
    /// Batches processed.
    pub batches: AtomicU64,
    /// Messages processed.
    pub messages: AtomicU64,
    /// Total time from a batch's first read to the end of its flush.
    pub batch_ns: AtomicU64,
    /// Largest batch seen.
    pub max_batch: AtomicU64,
    /// Current IBT.
    pub ibt: AtomicU64,
    /// Messages this worker read and wrote, by type.
    pub(crate) types: TypeCounters,
    /// How long the messages it served waited.
    pub(crate) delay: DelayHistogram,
    trace: Mutex<VecDeque<(u64, u32)>>,
}

impl WorkerStats {
    pub(crate) fn trace(&self, now_ms: u64, ibt: u32) {
        let mut t = lock(&self.trace);
        if t.len() == TRACE_LEN {
            t.pop_front();
        }
        t.push_back((now_ms, ibt));
    }

    fn snapshot(&self) -> WorkerSnapshot {
        let batches = self.batches.load(Ordering::Relaxed);
        let messages = self.messages.load(Ordering::Relaxed);
        let ns = self.batch_ns.load(Ordering::Relaxed);
        WorkerSnapshot {
            batches,
            messages,
            mean_batch: if batches == 0 {
                0.0
            } else {
                messages as f64 / batches as f64
            },
            mean_batch_delay_us: if batches == 0 {
                0.0
            } else {
                ns as f64 / batches as f64 / 1000.0
            },
            max_batch: self.max_batch.load(Ordering::Relaxed),
            ibt: self.ibt.load(Ordering::Relaxed) as u32,
            ibt_trace: lock(&self.trace).iter().copied().collect(),
        }
    }
}

/// A copy of one worker's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerSnapshot {
    /// Batches processed.
    pub batches: u64,
    /// Messages processed.
    pub messages: u64,
    /// Messages per batch.
    pub mean_batch: f64,
    /// Mean time from a batch's first read to its flush (the batching
    /// delay that the BDU bounds), in microseconds.
    pub mean_batch_delay_us: f64,
    /// Largest batch.
    pub max_batch: u64,
    /// Current IBT.
    pub ibt: u32,
    /// (milliseconds since start, IBT), sampled every 100 ms.
    pub ibt_trace: Vec<(u64, u32)>,
}

/// A copy of one switch's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSnapshot {
    /// Connection id.
    pub id: SwitchId,
    /// Datapath id (0 before the handshake).
    pub dpid: DatapathId,
    /// Messages received.
    pub rx_msgs: u64,
    /// Bytes written.
    pub tx_bytes: u64,
    /// `write` calls.
    pub tx_writes: u64,
    /// Service chances per round.
    pub weight: u32,
}

/// What the controller as a whole counts, beside its workers.
#[derive(Debug, Default)]
pub(crate) struct ControllerStats {
    /// Connections accepted.
    pub accepted: AtomicU64,
    /// Connections closed, by `Closed::label` (`closed.rs`).
    pub closed: Mutex<BTreeMap<&'static str, u64>>,
}

impl ControllerStats {
    /// One more connection closed for `reason`.
    pub fn closed(&self, reason: &'static str) {
        *lock(&self.closed).entry(reason).or_default() += 1;
    }
}

/// Everything at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Per worker (for the shared-queue scheduler, the reader thread is
    /// not included).
    pub workers: Vec<WorkerSnapshot>,
    /// Per connected switch.
    pub switches: Vec<SwitchSnapshot>,
    /// Messages received and sent since start, by kind.
    pub messages: Vec<MessageCount>,
    /// How long messages waited, from their read to the write of their
    /// batch's replies.
    pub delay: DelaySnapshot,
    /// Connections accepted since start.
    pub accepted: u64,
    /// Connections closed since start, by reason (`peer_closed`,
    /// `silent`, ...).
    pub closed: Vec<(&'static str, u64)>,
}

impl Statistics {
    /// Gathers the figures: `switches` from the switch table, messages
    /// by type from the workers and from `sent_elsewhere` (what was sent
    /// outside their batches).
    pub(crate) fn take(
        switches: Vec<SwitchSnapshot>,
        workers: &[std::sync::Arc<WorkerStats>],
        controller: &ControllerStats,
        sent_elsewhere: &TypeCounters,
    ) -> Statistics {
        let mut messages = BTreeMap::new();
        let mut delay = DelaySnapshot::default();
        for w in workers {
            w.types.add_to(&mut messages);
            w.delay.add_to(&mut delay);
        }
        sent_elsewhere.add_to(&mut messages);
        Statistics {
            workers: workers.iter().map(|w| w.snapshot()).collect(),
            switches,
            messages: messages.into_values().collect(),
            delay,
            accepted: controller.accepted.load(Ordering::Relaxed),
            closed: lock(&controller.closed)
                .iter()
                .map(|(k, v)| (*k, *v))
                .collect(),
        }
    }
}
