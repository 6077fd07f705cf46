//! The statistics of a run: Jain's fairness index, max-min fair shares by
//! water-filling, each switch's deviation from its fair share and their
//! CDF (Maestro §4.1), percentiles, and the controller's CPU time from
//! `/proc/PID/stat` and resident memory from `/proc/PID/statm`.
//!
//! Everything here is a pure function of its inputs except [`cpu_seconds`]
//! and [`resident_bytes`], so the figures in a report can be checked by
//! hand (see the tests).

use hdrhistogram::Histogram;

/// Jain's fairness index `(sum x)^2 / (n * sum x^2)`: 1 when all `x` are
/// equal, `1/n` when one takes everything. An empty or all-zero input is
/// perfectly fair (1).
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

/// Max-min fair shares of `capacity` among switches demanding `demands`
/// (requests/s; `f64::INFINITY` for "as much as it can get"), by
/// water-filling: every switch gets the same share, except that a switch
/// demanding less than that share gets its demand and the rest is shared
/// among the others. When the demands add up to less than the capacity,
/// every switch's share is its demand.
pub fn max_min_shares(demands: &[f64], capacity: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by(|&a, &b| demands[a].total_cmp(&demands[b]));
    let mut shares = vec![0.0; demands.len()];
    let mut left = capacity.max(0.0);
    let mut n_left = demands.len();
    for &i in &order {
        let level = left / n_left as f64;
        let give = demands[i].max(0.0).min(level);
        shares[i] = give;
        left -= give;
        n_left -= 1;
    }
    shares
}

/// The relative deviation `(achieved - fair) / fair` of each switch; `None`
/// where the fair share is 0 (a switch that asked for nothing).
pub fn deviations(achieved: &[f64], fair: &[f64]) -> Vec<Option<f64>> {
    achieved
        .iter()
        .zip(fair)
        .map(|(&a, &f)| (f > 0.0).then(|| (a - f) / f))
        .collect()
}

/// The empirical CDF of `values`: sorted `(value, fraction <= value)`.
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.into_iter()
        .enumerate()
        .map(|(i, x)| (x, (i + 1) as f64 / n))
        .collect()
}

/// The nearest-rank `q`-quantile (0..=1) of sorted `values`: the smallest
/// value with at least a fraction `q` of the values at or below it.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.max(1) - 1).copied()
}

/// How fairly a capacity was shared (Maestro §4.1).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Fairness {
    /// Jain's index over `achieved / fair share` of the switches with a
    /// share (over the achieved rates when all shares are equal).
    pub jain: f64,
    /// Each switch's max-min fair share (requests/s).
    pub fair_shares: Vec<f64>,
    /// Each switch's deviation from its share (`None` without a share).
    pub deviations: Vec<Option<f64>>,
    /// The smallest, median and largest deviation.
    pub deviation_min: Option<f64>,
    /// Median deviation.
    pub deviation_median: Option<f64>,
    /// Largest deviation.
    pub deviation_max: Option<f64>,
}

impl Fairness {
    /// Fairness of `achieved` rates given `demands` (`None`: every switch
    /// wants all it can get, as in throughput and latency modes). The
    /// capacity is what was achieved in total.
    pub fn compute(achieved: &[f64], demands: Option<&[f64]>) -> Fairness {
        let capacity: f64 = achieved.iter().sum();
        let inf = vec![f64::INFINITY; achieved.len()];
        let fair_shares = max_min_shares(demands.unwrap_or(&inf), capacity);
        let deviations = deviations(achieved, &fair_shares);
        let ratios: Vec<f64> = deviations.iter().flatten().map(|d| 1.0 + d).collect();
        let mut sorted: Vec<f64> = deviations.iter().flatten().copied().collect();
        sorted.sort_by(f64::total_cmp);
        Fairness {
            jain: jain(&ratios),
            fair_shares,
            deviations,
            deviation_min: sorted.first().copied(),
            deviation_median: quantile(&sorted, 0.5),
            deviation_max: sorted.last().copied(),
        }
    }

    /// The CDF of the deviations.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let d: Vec<f64> = self.deviations.iter().flatten().copied().collect();
        cdf(&d)
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
}

impl Percentiles {
    /// From a histogram of microseconds; `None` when it is empty.
    pub fn from_histogram(h: &Histogram<u64>) -> Option<Percentiles> {
        if h.is_empty() {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(Percentiles {
            count: h.len(),
            mean: h.mean() / 1000.0,
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        })
    }

    /// From samples in milliseconds (nearest rank); `None` when empty.
    pub fn from_samples(samples_ms: &[f64]) -> Option<Percentiles> {
        let mut s = samples_ms.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |p| quantile(&s, p);
        Some(Percentiles {
            count: s.len() as u64,
            mean: s.iter().sum::<f64>() / s.len().max(1) as f64,
            p50: q(0.5)?,
            p90: q(0.9)?,
            p99: q(0.99)?,
            p999: q(0.999)?,
            max: *s.last()?,
        })
    }
}

/// A histogram of latencies in microseconds, from 1 µs to 100 s with 3
/// significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are valid constants; `new_with_bounds` only fails on bad
    // bounds.
    Histogram::new_with_bounds(1, 100_000_000, 3).expect("valid histogram bounds")
}

/// The CDF points of a latency histogram, `(ms, fraction)`, one per
/// distinct recorded bucket.
pub fn histogram_cdf(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let total = h.len() as f64;
    if total == 0.0 {
        return Vec::new();
    }
    let mut seen = 0u64;
    h.iter_recorded()
        .map(|v| {
            seen += v.count_at_value();
            (v.value_iterated_to() as f64 / 1000.0, seen as f64 / total)
        })
        .collect()
}

/// Reads `utime + stime` (in clock ticks) from the text of
/// `/proc/PID/stat`. The command name (field 2) may contain spaces and
/// parentheses, so fields are counted from the last `)`.
pub fn parse_proc_stat(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    // After ')': state(3) ppid(4) ... utime(14) stime(15).
    let utime: u64 = f.nth(11)?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some(utime + stime)
}

/// CPU seconds (user + system) process `pid` has used so far.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = parse_proc_stat(&text)?;
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    Some(ticks as f64 / hz)
}

/// Reads the resident set size, in pages, from the text of
/// `/proc/PID/statm` (its second field).
pub fn parse_proc_statm(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

/// The resident memory of process `pid` now, in bytes (`None` when it
/// cannot be read: not Linux, no such process, no permission).
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages = parse_proc_statm(&text)?;
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = if page > 0 { page as u64 } else { 4096 };
    pages.checked_mul(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn jain_by_hand() {
        assert!(close(jain(&[5.0, 5.0, 5.0, 5.0]), 1.0));
        // One of four gets everything: 1/n.
        assert!(close(jain(&[8.0, 0.0, 0.0, 0.0]), 0.25));
        // (1+2+3)^2 / (3 * (1+4+9)) = 36/42.
        assert!(close(jain(&[1.0, 2.0, 3.0]), 36.0 / 42.0));
        assert!(close(jain(&[]), 1.0));
    }

    #[test]
    fn max_min_water_filling_by_hand() {
        // Capacity 100 among demands 10, 20, 50, 80: 10 and 20 are under
        // the level; the remaining 70 is split 35/35.
        let s = max_min_shares(&[50.0, 10.0, 80.0, 20.0], 100.0);
        assert_eq!(s, vec![35.0, 10.0, 35.0, 20.0]);
        // Enough for everyone: shares are the demands.
        assert_eq!(max_min_shares(&[1.0, 2.0], 10.0), vec![1.0, 2.0]);
        // Infinite demands: equal split.
        assert_eq!(max_min_shares(&[f64::INFINITY; 4], 100.0), vec![25.0; 4]);
        // Two under the level, in a second round of filling.
        let s = max_min_shares(&[5.0, 30.0, 100.0], 60.0);
        assert_eq!(s, vec![5.0, 27.5, 27.5]);
    }

    #[test]
    fn deviations_and_cdf_by_hand() {
        let d = deviations(&[12.0, 8.0, 10.0, 3.0], &[10.0, 10.0, 10.0, 0.0]);
        assert_eq!(d, vec![Some(0.2), Some(-0.2), Some(0.0), None]);
        let c = cdf(&[0.2, -0.2, 0.0]);
        assert_eq!(c, vec![(-0.2, 1.0 / 3.0), (0.0, 2.0 / 3.0), (0.2, 1.0)]);
    }

    #[test]
    fn fairness_with_switches_under_their_share() {
        // Demands 10, 20, 50, 80; achieved 10, 20, 40, 30 (total 100).
        // Fair: 10, 20, 35, 35; deviations 0, 0, +1/7, -1/7.
        let f = Fairness::compute(&[10.0, 20.0, 40.0, 30.0], Some(&[10.0, 20.0, 50.0, 80.0]));
        assert_eq!(f.fair_shares, vec![10.0, 20.0, 35.0, 35.0]);
        let d: Vec<f64> = f.deviations.iter().map(|d| d.unwrap()).collect();
        assert!(close(d[2], 1.0 / 7.0) && close(d[3], -1.0 / 7.0));
        assert!(close(d[0], 0.0) && close(d[1], 0.0));
        // Jain over ratios 1, 1, 8/7, 6/7: 16 / (4 * (2 + 64/49 + 36/49)).
        let want = 16.0 / (4.0 * (2.0 + 100.0 / 49.0));
        assert!(close(f.jain, want), "{} vs {want}", f.jain);
        assert!(close(f.deviation_min.unwrap(), -1.0 / 7.0));
        assert!(close(f.deviation_max.unwrap(), 1.0 / 7.0));
        // Throughput mode (no demands): plain Jain over the achieved.
        let g = Fairness::compute(&[1.0, 2.0, 3.0], None);
        assert!(close(g.jain, 36.0 / 42.0));
        assert_eq!(g.fair_shares, vec![2.0; 3]);
    }

    #[test]
    fn percentiles_by_hand() {
        let s: Vec<f64> = (1..=10).map(|x| x as f64).collect();
        assert_eq!(quantile(&s, 0.5), Some(5.0));
        assert_eq!(quantile(&s, 0.9), Some(9.0));
        assert_eq!(quantile(&s, 0.95), Some(10.0));
        assert_eq!(quantile(&s, 0.0), Some(1.0));
        assert_eq!(quantile(&[], 0.5), None);
        let p = Percentiles::from_samples(&s).unwrap();
        assert!(close(p.mean, 5.5));
        assert_eq!((p.p50, p.p99, p.max), (5.0, 10.0, 10.0));

        let mut h = new_histogram();
        for us in [100u64, 200, 300, 400, 1000] {
            h.record(us).unwrap();
        }
        let p = Percentiles::from_histogram(&h).unwrap();
        assert_eq!(p.count, 5);
        assert!(close(p.mean, 0.4));
        assert!((p.p50 - 0.3).abs() < 0.001);
        assert!((p.max - 1.0).abs() < 0.002);
        let c = histogram_cdf(&h);
        assert_eq!(c.len(), 5);
        assert!(close(c[4].1, 1.0));
        assert!(Percentiles::from_histogram(&new_histogram()).is_none());
    }

    #[test]
    fn proc_stat_parsing() {
        let text =
            "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 100 0 0";
        assert_eq!(parse_proc_stat(text), Some(300));
        assert_eq!(parse_proc_stat("garbage"), None);
        assert!(cpu_seconds(std::process::id()).is_some());
    }

    #[test]
    fn proc_statm_parsing() {
        assert_eq!(parse_proc_statm("5000 1234 300 20 0 900 0\n"), Some(1234));
        assert_eq!(parse_proc_statm("5000"), None);
        assert_eq!(parse_proc_statm("a b c"), None);
        assert_eq!(resident_bytes(u32::MAX), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn resident_bytes_of_this_process() {
        let rss = resident_bytes(std::process::id());
        assert!(rss.is_some_and(|b| b > 0), "{rss:?}");
    }
}
