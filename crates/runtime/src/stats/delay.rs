//! [`DelayHistogram`]: how long messages wait in the controller, from the
//! read that brought them in to the write of the batch that answered them
//! (the batching delay the BDU bounds, Maestro §3.3, plus the queueing
//! before it), as Prometheus-style cumulative buckets.
//!
//! A worker notes one observation per switch per batch, weighted by the
//! messages it read in that batch, in a plain [`DelayTally`], and adds the
//! tally to the shared [`DelayHistogram`] once per batch: a few atomic adds
//! per batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bucket upper bounds, in microseconds (then +Inf).
pub const DELAY_BUCKETS_US: [u64; 14] = [
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 1_000_000,
];

const BUCKETS: usize = DELAY_BUCKETS_US.len() + 1;

/// Observations being gathered over one batch.
#[derive(Debug, Default)]
pub(crate) struct DelayTally {
    buckets: [u64; BUCKETS],
    touched: u32,
    sum_us: u64,
    count: u64,
}

impl DelayTally {
    /// `messages` waited `delay` each.
    pub fn observe(&mut self, delay: Duration, messages: u64) {
        if messages == 0 {
            return;
        }
        let us = delay.as_micros().min(u128::from(u64::MAX)) as u64;
        let i = DELAY_BUCKETS_US
            .iter()
            .position(|&b| us <= b)
            .unwrap_or(DELAY_BUCKETS_US.len());
        self.buckets[i] += messages;
        self.touched |= 1 << i;
        self.sum_us += us * messages;
        self.count += messages;
    }

    /// Adds the tally to `into` and starts again from zero.
    pub fn drain_into(&mut self, into: &DelayHistogram) {
        if self.count == 0 {
            return;
        }
        let mut bits = std::mem::take(&mut self.touched);
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            into.buckets[i].fetch_add(std::mem::take(&mut self.buckets[i]), Ordering::Relaxed);
        }
        into.sum_us
            .fetch_add(std::mem::take(&mut self.sum_us), Ordering::Relaxed);
        into.count
            .fetch_add(std::mem::take(&mut self.count), Ordering::Relaxed);
    }
}

/// Counts per bucket (the last is +Inf), the sum and the count.
#[derive(Debug, Default)]
pub(crate) struct DelayHistogram {
    buckets: [AtomicU64; BUCKETS],
    sum_us: AtomicU64,
    count: AtomicU64,
}

impl DelayHistogram {
    /// Adds this histogram's figures into `into`.
    pub fn add_to(&self, into: &mut DelaySnapshot) {
        for (i, b) in self.buckets.iter().enumerate() {
            into.buckets[i] += b.load(Ordering::Relaxed);
        }
        into.sum_us += self.sum_us.load(Ordering::Relaxed);
        into.count += self.count.load(Ordering::Relaxed);
    }
}

/// A copy of the delay histogram: messages per bucket (not cumulative;
/// bounds in [`DELAY_BUCKETS_US`], the last bucket above them all).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelaySnapshot {
    /// Messages whose delay fell in each bucket.
    pub buckets: [u64; BUCKETS],
    /// Sum of their delays, microseconds.
    pub sum_us: u64,
    /// Messages observed.
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_their_bucket_weighted_by_messages() {
        let h = DelayHistogram::default();
        let mut t = DelayTally::default();
        t.observe(Duration::from_micros(10), 3);
        t.observe(Duration::from_micros(11), 1);
        t.drain_into(&h);
        t.observe(Duration::from_secs(5), 2);
        t.observe(Duration::from_millis(1), 0);
        t.drain_into(&h);
        let mut s = DelaySnapshot::default();
        h.add_to(&mut s);
        assert_eq!(s.buckets[0], 3, "10 us is within the first bound");
        assert_eq!(s.buckets[1], 1);
        assert_eq!(s.buckets[DELAY_BUCKETS_US.len()], 2, "+Inf");
        assert_eq!(s.count, 6);
        assert_eq!(s.sum_us, 30 + 11 + 10_000_000);
    }
}
