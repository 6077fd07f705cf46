//! [`FailureLog`]: how many lines the log gives connections that fail
//! before their handshake (refused, silent, not OpenFlow, TLS refused).
//! The first few of each window are logged one by one, as they say why
//! and (in their span) who; the rest are only counted, by reason, and
//! said in one summary line when the window ends. Anyone who can open a
//! TCP connection to the controller can make such failures, so without a
//! limit they could flood the log. The metrics count every one regardless
//! (`baton_connections_closed_total`).
//!
//! The type never reads a clock: the caller passes `now`, so its tests run
//! on synthetic time.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

/// Failures logged one by one per window. A switch that cannot connect
/// (a certificate refused, the wrong port) retries with backoff, 1 s
/// doubling to 8 s in Open vSwitch and `baton switch`, so one or two such
/// switches show every failure in full; 500 garbage connections, the
/// flood seen in issue 22, make five lines and a summary.
pub const LOGGED_PER_WINDOW: u32 = 5;

/// How long a window lasts, and so how often at most a summary is
/// logged: short enough that an operator watching the log sees a flood
/// within seconds, long enough that a flood costs at most
/// [`LOGGED_PER_WINDOW`] + 1 lines per 10 s (about 2,000 an hour).
pub const WINDOW: Duration = Duration::from_secs(10);

/// Whether to log a failure's own line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// Log it, as without a limit.
    Write,
    /// Only count it, for the window's summary.
    Count,
}

/// The failures a window did not log one by one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppressed {
    /// How many, by reason (the metrics' label).
    pub by_reason: BTreeMap<&'static str, u64>,
}

impl Suppressed {
    /// How many in all.
    pub fn total(&self) -> u64 {
        self.by_reason.values().sum()
    }
}

impl fmt::Display for Suppressed {
    /// `not_hello=300, silent=195`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, (reason, n)) in self.by_reason.iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{reason}={n}")?;
        }
        Ok(())
    }
}

/// The limiter: one per controller.
#[derive(Debug, Default)]
pub struct FailureLog {
    /// When the current window began (its first failure); none between
    /// windows.
    started: Option<Instant>,
    /// Failures logged one by one in it.
    logged: u32,
    /// Failures only counted in it, by reason.
    suppressed: BTreeMap<&'static str, u64>,
}

impl FailureLog {
    /// A failure for `reason` at `now`: log its line, or count it. Call
    /// [`FailureLog::flush`] first, so that a window that has ended is
    /// summed up before another begins.
    pub fn note(&mut self, now: Instant, reason: &'static str) -> Line {
        if self.started.is_none() {
            self.started = Some(now);
            self.logged = 0;
        }
        if self.logged < LOGGED_PER_WINDOW {
            self.logged += 1;
            Line::Write
        } else {
            *self.suppressed.entry(reason).or_default() += 1;
            Line::Count
        }
    }

    /// Ends the window if it is over at `now`, with the failures it only
    /// counted, if any: at most one summary per window. Call it with each
    /// failure and every [`WINDOW`] or so, so that the last window of a
    /// flood is summed up too.
    pub fn flush(&mut self, now: Instant) -> Option<Suppressed> {
        let started = self.started?;
        if now.saturating_duration_since(started) < WINDOW {
            return None;
        }
        self.started = None;
        self.logged = 0;
        let by_reason = std::mem::take(&mut self.suppressed);
        (!by_reason.is_empty()).then_some(Suppressed { by_reason })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Notes `n` failures for `reason` at `now`; returns how many were
    /// to be logged.
    fn fail(log: &mut FailureLog, now: Instant, reason: &'static str, n: u32) -> u32 {
        (0..n)
            .filter(|_| {
                assert_eq!(log.flush(now), None, "no window ends within one instant");
                log.note(now, reason) == Line::Write
            })
            .count() as u32
    }

    #[test]
    fn a_few_failures_are_all_logged_and_need_no_summary() {
        let t0 = Instant::now();
        let mut log = FailureLog::default();
        assert_eq!(fail(&mut log, t0, "silent", 3), 3);
        assert_eq!(log.flush(t0 + WINDOW), None);
        // The next window starts afresh.
        assert_eq!(fail(&mut log, t0 + WINDOW * 2, "tls", 2), 2);
    }

    #[test]
    fn a_flood_logs_the_first_few_then_one_summary_by_reason() {
        let t0 = Instant::now();
        let mut log = FailureLog::default();
        let ms = Duration::from_millis(1);
        let mut written = 0;
        // 500 garbage connections, one per millisecond: 0.5 s, one window.
        for i in 0..500u32 {
            let now = t0 + ms * i;
            assert_eq!(log.flush(now), None, "at {i} ms the window is not over");
            let reason = if i % 2 == 0 {
                "not_hello"
            } else {
                "peer_closed"
            };
            if log.note(now, reason) == Line::Write {
                written += 1;
            }
        }
        assert_eq!(written, LOGGED_PER_WINDOW);
        let s = log
            .flush(t0 + WINDOW)
            .expect("a summary once the window ends");
        assert_eq!(s.total(), u64::from(500 - LOGGED_PER_WINDOW));
        // The first five were 0..5: three not_hello, two peer_closed.
        assert_eq!(s.by_reason["not_hello"], 250 - 3);
        assert_eq!(s.by_reason["peer_closed"], 250 - 2);
        assert_eq!(s.to_string(), "not_hello=247, peer_closed=248");
        // Said once.
        assert_eq!(log.flush(t0 + WINDOW), None);
        assert_eq!(log.flush(t0 + WINDOW * 5), None);
    }

    #[test]
    fn a_steady_flood_gets_at_most_one_summary_per_window() {
        let t0 = Instant::now();
        let mut log = FailureLog::default();
        let (mut lines, mut summaries) = (0, 0);
        // 100 failures a second for a minute.
        let step = Duration::from_millis(10);
        for i in 0..6000u32 {
            let now = t0 + step * i;
            if log.flush(now).is_some() {
                summaries += 1;
            }
            if log.note(now, "silent") == Line::Write {
                lines += 1;
            }
        }
        let windows = 6; // 60 s of 10 s windows.
        assert_eq!(summaries, windows - 1, "the last window is still open");
        assert_eq!(lines, LOGGED_PER_WINDOW * windows);
        let last = log.flush(t0 + Duration::from_secs(70)).unwrap();
        assert_eq!(last.total(), 1000 - u64::from(LOGGED_PER_WINDOW));
    }

    #[test]
    fn a_window_starts_at_its_first_failure() {
        let t0 = Instant::now();
        let mut log = FailureLog::default();
        // Quiet for an hour: nothing to flush, no window open.
        assert_eq!(log.flush(t0 + Duration::from_secs(3600)), None);
        let t1 = t0 + Duration::from_secs(3600);
        fail(&mut log, t1, "tls", LOGGED_PER_WINDOW + 1);
        // Not over a moment before the window's end, over at it.
        assert_eq!(log.flush(t1 + WINDOW - Duration::from_millis(1)), None);
        let s = log.flush(t1 + WINDOW).unwrap();
        assert_eq!(s.by_reason.get("tls"), Some(&1));
    }
}
