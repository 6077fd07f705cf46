//! What a run measured (issue 55, part 2): when the switches were up,
//! path setups (a pair's first data packet until it reached its
//! destination) as latencies and as a rate, packet latencies and losses,
//! and for each event the time until the pairs it cut off received
//! packets again (reroute time). Latencies are in microseconds, in
//! `hdrhistogram`s, three significant digits.

use crate::graph::{HostId, SwitchId};
use hdrhistogram::Histogram;
use std::fmt;
use std::time::Duration;

/// An empty histogram of microseconds from 1 µs to an hour.
pub fn histogram() -> Histogram<u64> {
    // Valid constant bounds: `new_with_bounds` fails only on bad bounds.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

/// Records `d` (at least 1 µs) in `h`, saturating at its top.
pub fn record(h: &mut Histogram<u64>, d: Duration) {
    let us = (d.as_micros() as u64).max(1);
    h.saturating_record(us);
}

/// A histogram's count and quantiles, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

impl Summary {
    /// The summary of `h` (all zero when it is empty).
    pub fn of(h: &Histogram<u64>) -> Summary {
        if h.is_empty() {
            return Summary::default();
        }
        Summary {
            count: h.len(),
            p50: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} samples, p50 {} us, p99 {} us, max {} us",
            self.count, self.p50, self.p99, self.max
        )
    }
}

/// One event's outcome.
#[derive(Debug, Clone)]
pub struct EventReport {
    /// The item as written.
    pub text: String,
    /// When it was applied, from the start of traffic (`None`: the run
    /// ended first).
    pub applied: Option<Duration>,
    /// For each pair that lost packets across the event and received
    /// again: from the event to the first packet that arrived after the
    /// loss, in microseconds. A pair whose path was repaired before it
    /// lost a packet is not counted (the resolution is the send
    /// interval).
    pub reroute_us: Histogram<u64>,
    /// Pairs cut off by the event that had not received again when the
    /// run ended, though both their hosts' switches were alive.
    pub unrecovered: usize,
    /// Pairs cut off by the event with a host on a killed switch.
    pub unreachable: usize,
}

/// One pair's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairReport {
    /// The sending host.
    pub src: HostId,
    /// The receiving host.
    pub dst: HostId,
    /// When it sent its first data packet, from the start of traffic.
    pub started: Option<Duration>,
    /// Data packets sent.
    pub sent: u64,
    /// Distinct data packets received.
    pub received: u64,
    /// From its first data packet to that packet's (or a retry's)
    /// arrival; `None` if nothing arrived.
    pub setup: Option<Duration>,
    /// With path tracing: each distinct sequence of switches its packets
    /// crossed, source switch first, and how many packets took it (at
    /// most [`crate::traffic::MAX_PATHS`] sequences are kept).
    pub paths: Vec<(Vec<SwitchId>, u64)>,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Switches emulated.
    pub switches: usize,
    /// Switches whose handshake finished.
    pub switches_ready: usize,
    /// From the start of the run until every switch had finished its
    /// handshake (HELLOs exchanged and the version agreed).
    pub all_ready: Option<Duration>,
    /// From the start of the run until traffic started.
    pub traffic_started: Option<Duration>,
    /// Pairs of hosts.
    pub pairs: usize,
    /// Pairs whose first packet arrived.
    pub pairs_set_up: usize,
    /// Path setup times, microseconds.
    pub setup_us: Histogram<u64>,
    /// Pairs set up per second: set-up pairs over the time from the first
    /// pair's first data packet to the last pair's first arrival.
    pub setups_per_second: Option<f64>,
    /// One-way latencies of data packets once set up, microseconds.
    pub latency_us: Histogram<u64>,
    /// Data packets sent.
    pub packets_sent: u64,
    /// Distinct data packets received.
    pub packets_received: u64,
    /// Data packets sent and never received.
    pub packets_lost: u64,
    /// Data packets received more than once, or after a later one.
    pub duplicates: u64,
    /// ARP requests hosts sent (first tries and retries).
    pub arp_requests: u64,
    /// Frames hosts received that were not for them (floods, probes).
    pub stray_frames: u64,
    /// Pairs that ended after their lifetime.
    pub pairs_ended: u64,
    /// Hosts that left the network once their pairs ended.
    pub hosts_left: u64,
    /// Frames that reached a host after it left (the controller's probes,
    /// floods, packets on flows towards it).
    pub to_departed: u64,
    /// Frames delivered to switch ports and hosts.
    pub frames_delivered: u64,
    /// Frames lost: sent out of an unused port or of one whose link is
    /// down, in flight on a link when it went down, or sent to a killed
    /// switch.
    pub frames_dropped: u64,
    /// The most a frame was delivered, or a host sent, after it was due
    /// (the emulator's own lateness: large values mean the emulator, not
    /// the controller, was the bottleneck).
    pub max_lateness: Duration,
    /// Connections the controller closed (or that failed).
    pub connections_lost: usize,
    /// Each event, in time order.
    pub events: Vec<EventReport>,
    /// Each pair, in order.
    pub pair_reports: Vec<PairReport>,
    /// The emulator process's resident memory at the end, when known.
    pub resident_bytes: Option<u64>,
}

impl Report {
    /// [`setup_p99_by_minute`] of its pairs.
    pub fn setup_p99_by_minute(&self) -> Vec<(usize, Duration)> {
        setup_p99_by_minute(&self.pair_reports)
    }
}

/// For each minute of traffic, by when the pairs started (the first
/// minute first): how many of them were set up, and their set-up's p99;
/// a long run (a soak) shows whether set-ups get slower.
pub fn setup_p99_by_minute(pairs: &[PairReport]) -> Vec<(usize, Duration)> {
    let mut minutes: Vec<Histogram<u64>> = Vec::new();
    for p in pairs {
        let (Some(started), Some(setup)) = (p.started, p.setup) else {
            continue;
        };
        let m = (started.as_secs() / 60) as usize;
        if minutes.len() <= m {
            minutes.resize_with(m + 1, histogram);
        }
        record(&mut minutes[m], setup);
    }
    minutes
        .iter()
        .map(|h| {
            (
                h.len() as usize,
                Duration::from_micros(h.value_at_quantile(0.99)),
            )
        })
        .collect()
}

/// `d` in milliseconds, or `-`.
fn ms(d: Option<Duration>) -> String {
    d.map_or_else(
        || "-".into(),
        |d| format!("{:.1} ms", d.as_secs_f64() * 1e3),
    )
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "switches: {} of {} ready, the last {} after the start",
            self.switches_ready,
            self.switches,
            ms(self.all_ready)
        )?;
        writeln!(
            f,
            "pairs: {} of {} set up; setup {}",
            self.pairs_set_up,
            self.pairs,
            Summary::of(&self.setup_us)
        )?;
        if let Some(r) = self.setups_per_second {
            writeln!(f, "path setups per second: {r:.0}")?;
        }
        let by_minute = self.setup_p99_by_minute();
        if by_minute.len() > 1 {
            let minutes: Vec<String> = by_minute
                .iter()
                .enumerate()
                .map(|(m, (n, p99))| format!("{}: {} ({n})", m + 1, ms(Some(*p99))))
                .collect();
            writeln!(
                f,
                "set-up p99 by minute the pairs started (pairs): {}",
                minutes.join(", ")
            )?;
        }
        writeln!(
            f,
            "packets: {} sent, {} received, {} lost, {} duplicates; latency {}",
            self.packets_sent,
            self.packets_received,
            self.packets_lost,
            self.duplicates,
            Summary::of(&self.latency_us)
        )?;
        if self.pairs_ended > 0 {
            writeln!(
                f,
                "churn: {} pairs ended, {} hosts left, {} frames reached a host after it left",
                self.pairs_ended, self.hosts_left, self.to_departed
            )?;
        }
        writeln!(
            f,
            "frames: {} delivered, {} dropped; emulator lateness at most {}",
            self.frames_delivered,
            self.frames_dropped,
            ms(Some(self.max_lateness))
        )?;
        for e in &self.events {
            writeln!(
                f,
                "event `{}` applied at {}: reroute {}; {} unrecovered, {} unreachable",
                e.text,
                ms(e.applied),
                Summary::of(&e.reroute_us),
                e.unrecovered,
                e.unreachable
            )?;
        }
        if let Some(b) = self.resident_bytes {
            writeln!(
                f,
                "emulator resident memory: {:.1} MiB",
                b as f64 / 1048576.0
            )?;
        }
        Ok(())
    }
}

/// The resident memory of this process, from `/proc/self/statm` (Linux).
pub fn resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions; it reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * if page > 0 { page as u64 } else { 4096 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_of_empty_and_full_histograms() {
        let mut h = histogram();
        assert_eq!(Summary::of(&h), Summary::default());
        for us in 1..=100 {
            record(&mut h, Duration::from_micros(us));
        }
        record(&mut h, Duration::ZERO);
        let s = Summary::of(&h);
        assert_eq!((s.count, s.p50, s.max), (101, 50, 100));
        assert!(s.p99 >= 99);
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }

    #[test]
    fn set_ups_are_grouped_by_the_minute_their_pairs_started() {
        let pair = |started_s: u64, setup_ms: Option<u64>| PairReport {
            src: HostId(0),
            dst: HostId(1),
            started: Some(Duration::from_secs(started_s)),
            sent: 1,
            received: 1,
            setup: setup_ms.map(Duration::from_millis),
            paths: Vec::new(),
        };
        let pairs = [
            pair(5, Some(10)),
            pair(59, Some(30)),
            pair(61, None),
            pair(150, Some(7)),
        ];
        let by_minute = setup_p99_by_minute(&pairs);
        let ms = |d: Duration| d.as_millis();
        let got: Vec<(usize, u128)> = by_minute.iter().map(|&(n, d)| (n, ms(d))).collect();
        // Minute 2's one pair was never set up.
        assert_eq!(got, [(2, 30), (0, 0), (1, 7)]);
    }
}
