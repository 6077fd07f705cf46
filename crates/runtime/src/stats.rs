//! Runtime statistics that the benchmark and operators read: per-switch
//! messages and bytes, per-worker batch sizes and batching
//! delay, and IBT over time.
//!
//! Workers update atomics once per batch; [`Statistics`] copies them out.

use crate::switch::SwitchId;
use crate::sync::lock;
use crate::table::{SwitchTable, TaskState};
use baton_openflow::DatapathId;
use std::collections::VecDeque;
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

/// Everything at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Per worker (for the shared-queue scheduler, the reader thread is
    /// not included).
    pub workers: Vec<WorkerSnapshot>,
    /// Per connected switch.
    pub switches: Vec<SwitchSnapshot>,
}

impl Statistics {
    pub(crate) fn take(table: &SwitchTable, workers: &[std::sync::Arc<WorkerStats>]) -> Statistics {
        let switches = table
            .used()
            .filter_map(|(i, s)| {
                if s.state() == TaskState::Free {
                    return None;
                }
                let c = &s.counters;
                Some(SwitchSnapshot {
                    id: s.id(i),
                    dpid: DatapathId(s.dpid.load(Ordering::Relaxed)),
                    rx_msgs: c.rx_msgs.load(Ordering::Relaxed),
                    tx_bytes: c.tx_bytes.load(Ordering::Relaxed),
                    tx_writes: c.tx_writes.load(Ordering::Relaxed),
                    weight: s.weight(),
                })
            })
            .collect();
        Statistics {
            workers: workers.iter().map(|w| w.snapshot()).collect(),
            switches,
        }
    }
}
