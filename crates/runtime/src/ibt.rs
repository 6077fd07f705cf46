//! Adaptive input batching: the Input Batching Threshold (IBT) algorithm of
//! Maestro (§3.3, Fig. 4; Maestro thesis §4.2.3).
//!
//! A worker gathers up to IBT requests, possibly from several switches,
//! before running the applications over them as one batch. After each
//! *full* batch it scores the batch by throughput (requests per second),
//! keeps a smoothed score per batch size, and moves IBT by a fixed step in
//! the direction that raised the score, reversing when the score stops
//! improving. A batch that took longer than the batching-delay upper bound
//! (BDU) forces the trend to "decreasing", which bounds the time a request
//! waits inside a batch. When no socket has pending bytes the batch is
//! released at once, whatever its size, and IBT steps down.
//!
//! The struct takes durations from its caller and never reads a clock, so
//! its tests run on synthetic time.

use std::time::Duration;

/// IBT never goes below this (Fig. 4: "always lower bound by 10").
pub const IBT_MIN: u32 = 10;
/// Each adjustment moves IBT by this many requests (Fig. 4).
pub const IBT_STEP: u32 = 10;
/// Weight of the newest score in the smoothed score (§3.3: w = 0.2).
pub const SMOOTHING_WEIGHT: f64 = 0.2;
/// A ceiling that keeps the per-size score table small (8 KiB of f64):
/// Maestro's measured optimum was about 1,200 with a 3 ms BDU on 4 cores,
/// and a batch of 10,240 flow requests is ~1 MiB of input, far past the
/// point where memory effects lower throughput (§4.3).
pub const IBT_MAX: u32 = 10_240;

/// The direction IBT is currently moving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    /// IBT grows by [`IBT_STEP`] after each full batch.
    Increasing,
    /// IBT shrinks by [`IBT_STEP`] after each full batch.
    Decreasing,
}

impl Trend {
    fn reversed(self) -> Trend {
        match self {
            Trend::Increasing => Trend::Decreasing,
            Trend::Decreasing => Trend::Increasing,
        }
    }
}

/// One worker's IBT state (each worker adapts independently, §3.3).
#[derive(Debug, Clone)]
pub struct Ibt {
    ibt: u32,
    trend: Trend,
    bdu: Duration,
    /// Smoothed score per batch size, indexed by `size / IBT_STEP`; NaN
    /// means "not used yet".
    scores: Vec<f64>,
    /// Smoothed score of the last full batch (S'); 0 before the first.
    last_score: f64,
}

impl Ibt {
    /// Fig. 4's initial state: trend increasing, IBT 10, with the given
    /// batching-delay upper bound.
    pub fn new(bdu: Duration) -> Ibt {
        Ibt {
            ibt: IBT_MIN,
            trend: Trend::Increasing,
            bdu,
            scores: vec![f64::NAN; (IBT_MAX / IBT_STEP) as usize + 1],
            last_score: 0.0,
        }
    }

    /// The current threshold: release a batch once it holds this many
    /// requests.
    pub fn threshold(&self) -> u32 {
        self.ibt
    }

    /// The current trend.
    pub fn trend(&self) -> Trend {
        self.trend
    }

    /// The batching-delay upper bound.
    pub fn bdu(&self) -> Duration {
        self.bdu
    }

    /// Changes the BDU (it is configurable at run time, §3.3).
    pub fn set_bdu(&mut self, bdu: Duration) {
        self.bdu = bdu;
    }

    /// Records a full IBT-sized batch of `n` requests that took `t` to
    /// process, and adapts IBT (Fig. 4, "after finishing one full IBT-sized
    /// batch").
    pub fn full_batch(&mut self, n: u32, t: Duration) {
        // A zero duration (coarse clocks) would make the score infinite;
        // one nanosecond keeps the comparison meaningful.
        let secs = t.as_secs_f64().max(1e-9);
        let score = f64::from(n) / secs;
        let slot = (self.ibt / IBT_STEP) as usize;
        let smoothed = match self.scores.get(slot).copied() {
            Some(prev) if !prev.is_nan() => {
                (1.0 - SMOOTHING_WEIGHT) * prev + SMOOTHING_WEIGHT * score
            }
            _ => score,
        };
        if let Some(s) = self.scores.get_mut(slot) {
            *s = smoothed;
        }
        if smoothed <= self.last_score {
            self.trend = self.trend.reversed();
        }
        if t > self.bdu {
            self.trend = Trend::Decreasing;
        }
        self.step();
        self.last_score = smoothed;
    }

    /// No socket has pending bytes: the caller releases the current batch
    /// at once, and IBT steps down (Fig. 4, last block).
    pub fn idle(&mut self) {
        self.trend = Trend::Decreasing;
        self.step();
    }

    fn step(&mut self) {
        self.ibt = match self.trend {
            Trend::Increasing => (self.ibt + IBT_STEP).min(IBT_MAX),
            Trend::Decreasing => self.ibt.saturating_sub(IBT_STEP).max(IBT_MIN),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A synthetic workload whose per-request cost falls with batch size
    /// until `best`, then rises: the score peaks at `best`.
    fn batch_time(n: u32, best: u32) -> Duration {
        let per_req_ns = 1000.0 + (f64::from(n) - f64::from(best)).abs() * 2.0;
        Duration::from_nanos((per_req_ns * f64::from(n)) as u64)
    }

    #[test]
    fn starts_at_lower_bound_increasing() {
        let ibt = Ibt::new(MS);
        assert_eq!(ibt.threshold(), 10);
        assert_eq!(ibt.trend(), Trend::Increasing);
    }

    #[test]
    fn climbs_while_score_improves_and_settles_near_the_peak() {
        let mut ibt = Ibt::new(Duration::from_secs(1));
        for _ in 0..2000 {
            let n = ibt.threshold();
            ibt.full_batch(n, batch_time(n, 300));
        }
        let t = ibt.threshold();
        assert!((250..=350).contains(&t), "IBT settled at {t}");
    }

    #[test]
    fn bdu_bounds_the_batch_time() {
        // The score peaks at 3000 requests, but a batch that large takes far
        // longer than the 1 ms BDU; the largest batch that fits is `fits`.
        let fits = (IBT_MIN..IBT_MAX)
            .step_by(IBT_STEP as usize)
            .take_while(|&n| batch_time(n, 3000) <= MS)
            .last()
            .unwrap();
        let mut ibt = Ibt::new(MS);
        let mut max_seen = 0;
        for _ in 0..3000 {
            let n = ibt.threshold();
            ibt.full_batch(n, batch_time(n, 3000));
            max_seen = max_seen.max(ibt.threshold());
        }
        let t = ibt.threshold();
        assert!(
            max_seen <= fits + 2 * IBT_STEP,
            "IBT reached {max_seen}, bound {fits}"
        );
        assert!(
            t + 5 * IBT_STEP >= fits,
            "IBT {t} fell far below the bound {fits}"
        );
    }

    #[test]
    fn trend_reverses_when_score_drops() {
        let mut ibt = Ibt::new(Duration::from_secs(1));
        ibt.full_batch(10, Duration::from_micros(10)); // 1M/s
        assert_eq!(ibt.trend(), Trend::Increasing);
        assert_eq!(ibt.threshold(), 20);
        ibt.full_batch(20, Duration::from_micros(40)); // 0.5M/s: worse
        assert_eq!(ibt.trend(), Trend::Decreasing);
        assert_eq!(ibt.threshold(), 10);
        // Smoothed score at 10 is now 0.8*1M + 0.2*2M = 1.2M > 0.5M: keep
        // decreasing, floored at 10.
        ibt.full_batch(10, Duration::from_micros(5));
        assert_eq!(ibt.trend(), Trend::Decreasing);
        assert_eq!(ibt.threshold(), 10);
    }

    #[test]
    fn idle_releases_and_steps_down() {
        let mut ibt = Ibt::new(Duration::from_secs(1));
        for i in 1..=5 {
            ibt.full_batch(ibt.threshold(), Duration::from_micros(10 - i));
        }
        assert_eq!(ibt.threshold(), 60);
        ibt.idle();
        assert_eq!(ibt.threshold(), 50);
        assert_eq!(ibt.trend(), Trend::Decreasing);
        for _ in 0..10 {
            ibt.idle();
        }
        assert_eq!(ibt.threshold(), IBT_MIN);
    }

    #[test]
    fn never_exceeds_the_ceiling() {
        let mut ibt = Ibt::new(Duration::from_secs(10));
        for i in 0..5000u64 {
            // Ever-improving scores.
            ibt.full_batch(ibt.threshold(), Duration::from_nanos(1_000_000 / (i + 1)));
        }
        assert_eq!(ibt.threshold(), IBT_MAX);
    }
}
