//! The scheduler as `GET|PATCH /api/v1/scheduler` show and change it:
//! the design and batching in use (chosen at start), the BDU (changeable),
//! each worker's batching, and fairness over the last sampling interval;
//! and the BDU range that the API, the configuration file and `--bdu-us`
//! all accept ([`BDU_US`]; `config` re-exports it).

use crate::sampler;
use baton_runtime::Batching;
use baton_runtime::control::SchedulerStatus;
use baton_runtime::stats::WorkerSnapshot;
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;
use std::time::Duration;
use utoipa::ToSchema;

/// The batching-delay upper bounds `bdu_us` accepts, microseconds: the
/// runtime's own range, so that the file, `--bdu-us` and `PATCH
/// /api/v1/scheduler` refuse the same values, each with an error that
/// names the key.
pub const BDU_US: RangeInclusive<u64> = baton_runtime::control::BDU_RANGE_US;

/// `us` microseconds as a BDU, or why not ([`BDU_US`]).
pub fn bdu_from_us(us: u64) -> Result<Duration, String> {
    if BDU_US.contains(&us) {
        Ok(Duration::from_micros(us))
    } else {
        Err(format!(
            "{us} is out of range: {} to {} microseconds (10 µs to 1 s)",
            BDU_US.start(),
            BDU_US.end()
        ))
    }
}

/// The scheduler now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Scheduler {
    /// The workload distribution design (Maestro §3.2): `fair`,
    /// `shared-queue`, `static-partition`, `dynamic-partition` or
    /// `round-robin`.
    #[schema(example = "fair")]
    pub scheduler: String,
    /// `adaptive` (IBT, Maestro §3.3) or `static` (one read per batch).
    pub batching: String,
    /// The batching-delay upper bound, microseconds (`bdu_us` in the
    /// configuration file, `--bdu-us`; `/metrics` has it in seconds, as
    /// `baton_scheduler_bdu_seconds`, Prometheus's base unit).
    pub bdu_us: u64,
    /// Each worker's batching.
    pub workers: Vec<Worker>,
    /// How fairly switches were served over the last sampling interval
    /// (none before two samples, or when no switch sent anything).
    pub fairness: Option<Fairness>,
}

/// One worker's batching since the controller started.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Worker {
    /// Its index.
    pub worker: usize,
    /// Batches processed.
    pub batches: u64,
    /// Messages processed.
    pub messages: u64,
    /// Messages per batch.
    pub mean_batch: f64,
    /// The largest batch.
    pub max_batch: u64,
    /// Mean time from a batch's first read to its flush, microseconds.
    pub mean_batch_delay_us: f64,
    /// Its input batching threshold now.
    pub ibt: u32,
}

/// Jain's index of weighted per-switch service over the last interval.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Fairness {
    /// 1 when every switch that sent got its weight's share; 1/n when one
    /// got everything.
    pub jain: f64,
    /// The switches counted (those that sent in the interval).
    pub switches: usize,
    /// The interval, seconds.
    pub interval_secs: f64,
    /// Messages handled per second over the interval.
    pub messages_per_sec: f64,
}

/// What `PATCH /api/v1/scheduler` may change: the BDU. The design and
/// batching are chosen when the controller starts; naming the ones in use
/// is accepted, naming others is a conflict.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SchedulerPatch {
    /// The batching-delay upper bound, microseconds, an integer (10 to
    /// 1,000,000).
    pub bdu_us: Option<u64>,
    /// The design (must be the one in use).
    pub scheduler: Option<String>,
    /// The batching (must be the one in use).
    pub batching: Option<String>,
}

/// `adaptive` or `static`.
pub fn batching_name(b: Batching) -> &'static str {
    match b {
        Batching::Adaptive => "adaptive",
        Batching::Static => "static",
    }
}

impl Scheduler {
    /// The API's form of `s`, with fairness from the sampler.
    pub fn new(s: &SchedulerStatus, fairness: Option<sampler::Fairness>) -> Scheduler {
        Scheduler {
            scheduler: s.kind.name().to_string(),
            batching: batching_name(s.batching).to_string(),
            bdu_us: u64::try_from(s.bdu.as_micros()).unwrap_or(u64::MAX),
            workers: s.workers.iter().enumerate().map(Worker::new).collect(),
            fairness: fairness.map(|f| Fairness {
                jain: f.jain,
                switches: f.switches,
                interval_secs: f.interval_secs,
                messages_per_sec: f.messages_per_sec,
            }),
        }
    }
}

impl Worker {
    fn new((worker, w): (usize, &WorkerSnapshot)) -> Worker {
        Worker {
            worker,
            batches: w.batches,
            messages: w.messages,
            mean_batch: w.mean_batch,
            max_batch: w.max_batch,
            mean_batch_delay_us: w.mean_batch_delay_us,
            ibt: w.ibt,
        }
    }
}
