//! What load to offer: the traffic [`Mode`], the `--rates` and `--phases`
//! specifications, and the [`Schedule`] they turn into (per-switch request
//! rates for each segment of a run).
//!
//! This module owns the text syntax of those flags and nothing else; it does
//! no I/O and keeps no clock, so every rule here is unit-tested.
//!
//! ## `--rates SPEC`
//! - `uniform:AGG`: an aggregate of `AGG` requests/s spread evenly.
//! - `pareto:SHAPE:AGG`: per-switch rates shaped like a Pareto distribution
//!   of shape `SHAPE` (e.g. 1.1, heavily skewed), scaled to an aggregate of
//!   `AGG` requests/s. The rates are the distribution's quantiles at
//!   `(i + 0.5) / n`, assigned to switches by a shuffle with a fixed seed,
//!   so a spec always gives the same rates (Maestro §4.2, scenario two).
//! - `list:R1,R2,...`: explicit per-switch rates; a shorter list repeats.
//!
//! `AGG` may be a number (`200000`, `2e5`, `200k`, `1.5M`) or a multiple of
//! the controller's capacity (`2c`), which needs `--capacity` (or, in
//! `compare`, a calibration run).
//!
//! ## `--phases SPEC`
//! A comma-separated schedule of aggregate rates, each `RATExSECONDS`, e.g.
//! `4cx10,0.8cx10,0.5cx10,0.8cx10,4cx10` (Maestro §4.3: 4x capacity, then
//! 80 %, 50 %, 80 % and 4x again, ten seconds each). The shape of the
//! per-switch rates comes from `--rates` (uniform when absent); each phase
//! scales it to its aggregate.
//!
//! ## `--intervals SECONDS`
//! Splits every counted segment (the one measured period, or each phase)
//! into consecutive pieces of at most `SECONDS`, each reported as a phase
//! of its own with its segment's rates: `--duration 600 --intervals 60`
//! reads minute by minute; `--phases 1000x60 --intervals 10` gives six
//! phases. The last piece of a segment is shorter when `SECONDS` does not
//! divide it ([`Schedule::split_counted`]).

use baton_openflow::Version;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How each emulated switch decides when to send a PACKET_IN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Keep the send buffer full (cbench `-t`).
    Throughput,
    /// One request in flight per switch (cbench's default).
    Latency,
    /// Send at a set rate per switch (`--rates`, `--phases`).
    Rate,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Throughput => "throughput",
            Mode::Latency => "latency",
            Mode::Rate => "rate",
        })
    }
}

/// A request rate: absolute, or a multiple of the controller's capacity.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Rate {
    /// Requests per second.
    Abs(f64),
    /// This many times the controller's capacity (`2c`).
    Capacity(f64),
}

impl Rate {
    /// The rate in requests/s, given the capacity for relative rates.
    pub fn resolve(self, capacity: Option<f64>) -> Result<f64, SpecError> {
        match self {
            Rate::Abs(r) => Ok(r),
            Rate::Capacity(k) => capacity.map(|c| k * c).ok_or_else(|| {
                SpecError("a rate relative to capacity (`c`) needs --capacity".into())
            }),
        }
    }

    /// True for a multiple of capacity.
    pub fn is_relative(self) -> bool {
        matches!(self, Rate::Capacity(_))
    }
}

impl FromStr for Rate {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Rate, SpecError> {
        let s = s.trim();
        if let Some(k) = s.strip_suffix('c') {
            return parse_number(k).map(Rate::Capacity);
        }
        parse_number(s).map(Rate::Abs)
    }
}

/// Parses `200000`, `2e5`, `200k`, `1.5M`; negative and non-finite values
/// are errors.
fn parse_number(s: &str) -> Result<f64, SpecError> {
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1e3),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 1e6),
        _ => (s, 1.0),
    };
    let v: f64 = digits
        .parse()
        .map_err(|_| SpecError(format!("`{s}` is not a number")))?;
    let v = v * mult;
    if !v.is_finite() || v < 0.0 {
        return Err(SpecError(format!("`{s}` must be a finite number >= 0")));
    }
    Ok(v)
}

/// A malformed `--rates` / `--phases` specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

/// The `--rates` specification.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum RateSpec {
    /// `uniform:AGG`.
    Uniform(Rate),
    /// `pareto:SHAPE:AGG`.
    Pareto {
        /// Pareto shape (alpha); smaller is more skewed.
        shape: f64,
        /// Aggregate rate.
        aggregate: Rate,
    },
    /// `list:R1,R2,...`: per-switch rates, repeated when shorter.
    List(Vec<f64>),
}

impl FromStr for RateSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<RateSpec, SpecError> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            SpecError(format!(
                "`{s}`: expected uniform:AGG, pareto:SHAPE:AGG or list:R1,R2,..."
            ))
        })?;
        match kind {
            "uniform" => Ok(RateSpec::Uniform(rest.parse()?)),
            "pareto" => {
                let (shape, agg) = rest
                    .split_once(':')
                    .ok_or_else(|| SpecError(format!("`{s}`: expected pareto:SHAPE:AGG")))?;
                let shape = parse_number(shape)?;
                if shape <= 0.0 {
                    return Err(SpecError("the Pareto shape must be > 0".into()));
                }
                Ok(RateSpec::Pareto {
                    shape,
                    aggregate: agg.parse()?,
                })
            }
            "list" => {
                let rates = rest
                    .split(',')
                    .map(parse_number)
                    .collect::<Result<Vec<_>, _>>()?;
                if rates.is_empty() {
                    return Err(SpecError("list: needs at least one rate".into()));
                }
                Ok(RateSpec::List(rates))
            }
            other => Err(SpecError(format!(
                "unknown rate distribution `{other}` (uniform, pareto, list)"
            ))),
        }
    }
}

impl RateSpec {
    /// The aggregate rate the spec names (`None` for `list`).
    pub fn aggregate(&self) -> Option<Rate> {
        match self {
            RateSpec::Uniform(a) | RateSpec::Pareto { aggregate: a, .. } => Some(*a),
            RateSpec::List(_) => None,
        }
    }

    /// Per-switch rates for `n` switches, in requests/s.
    pub fn rates(&self, n: usize, capacity: Option<f64>) -> Result<Vec<f64>, SpecError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        Ok(match self {
            RateSpec::Uniform(agg) => vec![agg.resolve(capacity)? / n as f64; n],
            RateSpec::Pareto { shape, aggregate } => {
                let w = pareto_weights(*shape, n);
                let agg = aggregate.resolve(capacity)?;
                w.into_iter().map(|x| x * agg).collect()
            }
            RateSpec::List(l) => (0..n).map(|i| l[i % l.len()]).collect(),
        })
    }

    /// The per-switch shares of the aggregate (summing to 1).
    pub fn weights(&self, n: usize) -> Vec<f64> {
        match self {
            RateSpec::Uniform(_) => vec![1.0 / n.max(1) as f64; n],
            RateSpec::Pareto { shape, .. } => pareto_weights(*shape, n),
            RateSpec::List(l) => {
                let raw: Vec<f64> = (0..n).map(|i| l[i % l.len()]).collect();
                normalise(raw)
            }
        }
    }
}

fn normalise(v: Vec<f64>) -> Vec<f64> {
    let sum: f64 = v.iter().sum();
    if sum <= 0.0 {
        let n = v.len().max(1) as f64;
        return vec![1.0 / n; v.len()];
    }
    v.into_iter().map(|x| x / sum).collect()
}

/// The seed of the shuffle that assigns Pareto rates to switches.
pub const PARETO_SEED: u64 = 0x5eed_ba70_0000_0001;

/// Shares of `n` switches under a Pareto(shape) distribution: the quantiles
/// at `(i + 0.5) / n` (`x = (1 - q)^(-1/shape)`), shuffled with
/// [`PARETO_SEED`] and normalised to sum to 1.
pub fn pareto_weights(shape: f64, n: usize) -> Vec<f64> {
    let mut w: Vec<f64> = (0..n)
        .map(|i| {
            let q = (i as f64 + 0.5) / n as f64;
            (1.0 - q).powf(-1.0 / shape)
        })
        .collect();
    let mut rng = SplitMix64(PARETO_SEED);
    for i in (1..w.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        w.swap(i, j);
    }
    normalise(w)
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded PRNG, enough for
/// shuffles and jitter; not for anything that needs unpredictability.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One phase of `--phases`: an aggregate rate for a while.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PhaseSpec {
    /// The aggregate rate.
    pub aggregate: Rate,
    /// How long.
    pub duration: Duration,
}

/// Parses `--phases`: `RATExSECONDS[,RATExSECONDS...]`.
pub fn parse_phases(s: &str) -> Result<Vec<PhaseSpec>, SpecError> {
    s.split(',')
        .map(|p| {
            let p = p.trim();
            let (rate, secs) = p
                .rsplit_once('x')
                .ok_or_else(|| SpecError(format!("phase `{p}`: expected RATExSECONDS")))?;
            let secs = parse_number(secs)?;
            if secs <= 0.0 {
                return Err(SpecError(format!("phase `{p}`: duration must be > 0")));
            }
            let duration = Duration::try_from_secs_f64(secs)
                .map_err(|_| SpecError(format!("phase `{p}`: duration is too long")))?;
            Ok(PhaseSpec {
                aggregate: rate.parse()?,
                duration,
            })
        })
        .collect()
}

/// A stretch of a run with fixed per-switch rates. Segment 0 is always the
/// warm-up (not counted); the others are the phases (or the single
/// measured period).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Segment {
    /// Start, in microseconds after traffic started.
    pub start_us: u64,
    /// End (exclusive), in microseconds after traffic started.
    pub end_us: u64,
    /// Offered aggregate rate (requests/s) in rate mode.
    pub aggregate: Option<f64>,
    /// Offered rate of each switch (requests/s) in rate mode; empty
    /// otherwise.
    #[serde(skip)]
    pub rates: Vec<f64>,
}

impl Segment {
    /// Length in seconds.
    pub fn seconds(&self) -> f64 {
        (self.end_us - self.start_us) as f64 / 1e6
    }
}

/// The most counted segments (phases) a schedule may have after
/// [`Schedule::split_counted`]: each costs the emulator a latency
/// histogram per thread, so `--intervals 1` on an hour's run is refused
/// rather than allowed to take gigabytes.
pub const MAX_PHASES: usize = 1000;

/// The segments of a run: warm-up first, then the counted phases.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Schedule {
    /// Segment 0 is the warm-up.
    pub segments: Vec<Segment>,
}

impl Schedule {
    /// Builds the schedule for `switches` switches. In rate mode the rates
    /// come from `rates` (default: uniform) and `phases` (default: one
    /// phase of `duration` at `rates`' aggregate); the warm-up runs at the
    /// first phase's rates.
    pub fn build(
        mode: Mode,
        switches: usize,
        warmup: Duration,
        duration: Duration,
        rates: Option<&RateSpec>,
        phases: Option<&[PhaseSpec]>,
        capacity: Option<f64>,
    ) -> Result<Schedule, SpecError> {
        let warm_us = warmup.as_micros() as u64;
        let mut segments = Vec::new();
        match (mode, phases) {
            (Mode::Rate, Some(phases)) if !phases.is_empty() => {
                let spec = rates.cloned().unwrap_or(RateSpec::Uniform(Rate::Abs(0.0)));
                let w = spec.weights(switches);
                let mut t = warm_us;
                for (i, p) in phases.iter().enumerate() {
                    let agg = p.aggregate.resolve(capacity)?;
                    let r: Vec<f64> = w.iter().map(|x| x * agg).collect();
                    if i == 0 {
                        segments.push(Segment {
                            start_us: 0,
                            end_us: warm_us,
                            aggregate: Some(agg),
                            rates: r.clone(),
                        });
                    }
                    let end = t + p.duration.as_micros() as u64;
                    segments.push(Segment {
                        start_us: t,
                        end_us: end,
                        aggregate: Some(agg),
                        rates: r,
                    });
                    t = end;
                }
            }
            (Mode::Rate, _) => {
                let spec =
                    rates.ok_or_else(|| SpecError("rate mode needs --rates or --phases".into()))?;
                let r = spec.rates(switches, capacity)?;
                let agg: f64 = r.iter().sum();
                segments.push(Segment {
                    start_us: 0,
                    end_us: warm_us,
                    aggregate: Some(agg),
                    rates: r.clone(),
                });
                segments.push(Segment {
                    start_us: warm_us,
                    end_us: warm_us + duration.as_micros() as u64,
                    aggregate: Some(agg),
                    rates: r,
                });
            }
            _ => {
                segments.push(Segment {
                    start_us: 0,
                    end_us: warm_us,
                    aggregate: None,
                    rates: Vec::new(),
                });
                segments.push(Segment {
                    start_us: warm_us,
                    end_us: warm_us + duration.as_micros() as u64,
                    aggregate: None,
                    rates: Vec::new(),
                });
            }
        }
        Ok(Schedule { segments })
    }

    /// When the last segment ends (microseconds after traffic started).
    pub fn end_us(&self) -> u64 {
        self.segments.last().map_or(0, |s| s.end_us)
    }

    /// When counting starts (the end of the warm-up).
    pub fn counted_start_us(&self) -> u64 {
        self.segments.first().map_or(0, |s| s.end_us)
    }

    /// The segment at time `t_us`; `None` after the end.
    ///
    /// Segments are contiguous and in time order (as [`Schedule::build`]
    /// and [`Schedule::split_counted`] make them), so this is a binary
    /// search: a long run split into many intervals costs the emulator
    /// no more per message than a short one.
    pub fn segment_at(&self, t_us: u64) -> Option<usize> {
        let i = self.segments.partition_point(|s| s.end_us <= t_us);
        self.segments
            .get(i)
            .filter(|s| t_us >= s.start_us && t_us < s.end_us)
            .map(|_| i)
    }

    /// Splits every counted segment (all but the warm-up, segment 0) into
    /// consecutive segments of at most `every`, each keeping its
    /// segment's offered aggregate and per-switch rates, so that each
    /// interval is reported as a phase of its own (`--intervals`). The
    /// last piece of a segment is shorter when `every` does not divide it;
    /// boundaries and the total length are unchanged.
    ///
    /// An `every` under a microsecond is an error, and so is a split into
    /// more than [`MAX_PHASES`] counted segments (each costs the emulator
    /// a latency histogram per thread).
    pub fn split_counted(&mut self, every: Duration) -> Result<(), SpecError> {
        let step = u64::try_from(every.as_micros()).unwrap_or(u64::MAX);
        if step == 0 {
            return Err(SpecError(
                "an interval must be at least a microsecond long".into(),
            ));
        }
        let pieces: u64 = self
            .segments
            .iter()
            .skip(1)
            .map(|s| (s.end_us - s.start_us).div_ceil(step).max(1))
            .sum();
        if pieces > MAX_PHASES as u64 {
            return Err(SpecError(format!(
                "intervals of {} s would make {pieces} phases; at most {MAX_PHASES} (use longer intervals)",
                every.as_secs_f64()
            )));
        }
        let mut out = Vec::with_capacity(pieces as usize + 1);
        let mut segments = std::mem::take(&mut self.segments).into_iter();
        out.extend(segments.next());
        for seg in segments {
            if seg.end_us <= seg.start_us {
                out.push(seg);
                continue;
            }
            let mut t = seg.start_us;
            while t < seg.end_us {
                let end = seg.end_us.min(t.saturating_add(step));
                out.push(Segment {
                    start_us: t,
                    end_us: end,
                    aggregate: seg.aggregate,
                    rates: seg.rates.clone(),
                });
                t = end;
            }
        }
        self.segments = out;
        Ok(())
    }

    /// The number of counted segments (phases).
    pub fn phases(&self) -> usize {
        self.segments.len().saturating_sub(1)
    }
}

/// The OpenFlow version the emulated switches speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OfVersion {
    /// OpenFlow 1.0 (cbench).
    #[value(name = "10")]
    V10,
    /// OpenFlow 1.3.
    #[value(name = "13")]
    V13,
}

impl From<OfVersion> for Version {
    fn from(v: OfVersion) -> Version {
        match v {
            OfVersion::V10 => Version::V10,
            OfVersion::V13 => Version::V13,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_rates() {
        assert_eq!("200k".parse::<Rate>().unwrap(), Rate::Abs(200_000.0));
        assert_eq!("1.5M".parse::<Rate>().unwrap(), Rate::Abs(1_500_000.0));
        assert_eq!("2e5".parse::<Rate>().unwrap(), Rate::Abs(200_000.0));
        assert_eq!("0.8c".parse::<Rate>().unwrap(), Rate::Capacity(0.8));
        assert!("-1".parse::<Rate>().is_err());
        assert!("abc".parse::<Rate>().is_err());
        assert_eq!(Rate::Capacity(2.0).resolve(Some(10.0)), Ok(20.0));
        assert!(Rate::Capacity(2.0).resolve(None).is_err());
    }

    #[test]
    fn rate_specs() {
        let u: RateSpec = "uniform:100000".parse().unwrap();
        assert_eq!(u.rates(4, None).unwrap(), vec![25_000.0; 4]);
        let l: RateSpec = "list:1,2,3".parse().unwrap();
        assert_eq!(l.rates(5, None).unwrap(), vec![1.0, 2.0, 3.0, 1.0, 2.0]);
        let w = l.weights(3);
        assert!((w[2] - 0.5).abs() < 1e-12);
        assert!("pareto:0:10".parse::<RateSpec>().is_err());
        assert!("zipf:1:10".parse::<RateSpec>().is_err());
        assert!("uniform".parse::<RateSpec>().is_err());
    }

    #[test]
    fn pareto_is_skewed_deterministic_and_sums_to_aggregate() {
        let p: RateSpec = "pareto:1.1:200000".parse().unwrap();
        let a = p.rates(79, None).unwrap();
        let b = p.rates(79, None).unwrap();
        assert_eq!(a, b);
        let sum: f64 = a.iter().sum();
        assert!((sum - 200_000.0).abs() < 1e-6);
        let max = a.iter().cloned().fold(0.0, f64::max);
        let min = a.iter().cloned().fold(f64::INFINITY, f64::min);
        // Quantiles 0.5/79 and 78.5/79 of Pareto(1.1): ratio ~ 100.
        assert!(max / min > 50.0, "{max} / {min}");
        // The heaviest switch is not simply switch 0 (shuffled).
        assert!(a[0] < max);
    }

    #[test]
    fn phases_parse_and_schedule() {
        let p = parse_phases("4cx10,0.8cx10,50000x2.5").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[2].aggregate, Rate::Abs(50_000.0));
        assert_eq!(p[2].duration, Duration::from_millis(2500));
        assert!(parse_phases("4c").is_err());
        assert!(parse_phases("10x0").is_err());
        assert!(parse_phases("10x1e30").is_err());
        let rates: RateSpec = "list:1,3".parse().unwrap();
        let s = Schedule::build(
            Mode::Rate,
            2,
            Duration::from_secs(1),
            Duration::ZERO,
            Some(&rates),
            Some(&p),
            Some(1000.0),
        )
        .unwrap();
        assert_eq!(s.segments.len(), 4);
        assert_eq!(s.segments[0].rates, vec![1000.0, 3000.0]);
        assert_eq!(s.segments[2].rates, vec![200.0, 600.0]);
        assert_eq!(s.segments[3].start_us, 21_000_000);
        assert_eq!(s.end_us(), 23_500_000);
        assert_eq!(s.segment_at(0), Some(0));
        assert_eq!(s.segment_at(10_999_999), Some(1));
        assert_eq!(s.segment_at(11_000_000), Some(2));
        assert_eq!(s.segment_at(23_500_000), None);
        assert_eq!(s.phases(), 3);
        // Relative rates need a capacity.
        assert!(
            Schedule::build(
                Mode::Rate,
                2,
                Duration::ZERO,
                Duration::ZERO,
                None,
                Some(&p),
                None
            )
            .is_err()
        );
    }

    #[test]
    fn throughput_schedule_has_warmup_and_one_phase() {
        let s = Schedule::build(
            Mode::Throughput,
            3,
            Duration::from_secs(2),
            Duration::from_secs(5),
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(s.segments.len(), 2);
        assert_eq!(s.counted_start_us(), 2_000_000);
        assert_eq!(s.end_us(), 7_000_000);
        assert!(s.segments[1].rates.is_empty());
    }

    /// The counted segments of `s` tile `[counted_start, end)` with no gap
    /// or overlap.
    fn assert_contiguous(s: &Schedule) {
        for w in s.segments.windows(2) {
            assert_eq!(w[0].end_us, w[1].start_us, "{:?}", s.segments);
        }
        for seg in &s.segments[1..] {
            assert!(seg.start_us < seg.end_us, "{seg:?}");
        }
    }

    #[test]
    fn intervals_split_a_single_period() {
        let mut s = Schedule::build(
            Mode::Latency,
            4,
            Duration::from_secs(2),
            Duration::from_secs(600),
            None,
            None,
            None,
        )
        .unwrap();
        let before = (s.counted_start_us(), s.end_us(), s.segments[0].clone());
        s.split_counted(Duration::from_secs(60)).unwrap();
        assert_eq!(s.phases(), 10);
        assert_eq!(s.segments[0], before.2, "the warm-up is left alone");
        assert_eq!((s.counted_start_us(), s.end_us()), (before.0, before.1));
        assert_contiguous(&s);
        for seg in &s.segments[1..] {
            assert_eq!(seg.end_us - seg.start_us, 60_000_000);
            assert_eq!(seg.aggregate, None);
            assert!(seg.rates.is_empty());
        }
        assert_eq!(s.segment_at(2_000_000), Some(1));
        assert_eq!(s.segment_at(61_999_999), Some(1));
        assert_eq!(s.segment_at(62_000_000), Some(2));
        assert_eq!(s.segment_at(601_999_999), Some(10));
        assert_eq!(s.segment_at(602_000_000), None);
    }

    #[test]
    fn intervals_split_each_phase_keeping_its_rates() {
        let p = parse_phases("1000x60,2000x25").unwrap();
        let rates: RateSpec = "list:1,3".parse().unwrap();
        let mut s = Schedule::build(
            Mode::Rate,
            2,
            Duration::from_secs(1),
            Duration::ZERO,
            Some(&rates),
            Some(&p),
            None,
        )
        .unwrap();
        let end = s.end_us();
        s.split_counted(Duration::from_secs(10)).unwrap();
        // 60 s -> six of 10 s; 25 s -> 10, 10 and a shorter 5.
        assert_eq!(s.phases(), 9);
        assert_eq!(s.end_us(), end);
        assert_contiguous(&s);
        let total: f64 = s.segments[1..].iter().map(Segment::seconds).sum();
        assert!((total - 85.0).abs() < 1e-9);
        for seg in &s.segments[1..7] {
            assert_eq!(seg.seconds(), 10.0);
            assert_eq!(seg.aggregate, Some(1000.0));
            assert_eq!(seg.rates, vec![250.0, 750.0]);
        }
        for seg in &s.segments[7..] {
            assert_eq!(seg.aggregate, Some(2000.0));
            assert_eq!(seg.rates, vec![500.0, 1500.0]);
        }
        assert_eq!(s.segments[8].seconds(), 10.0);
        assert_eq!(s.segments[9].seconds(), 5.0);
        assert_eq!(s.segments[9].end_us, end);
    }

    #[test]
    fn intervals_longer_than_a_segment_change_nothing() {
        let build = || {
            Schedule::build(
                Mode::Throughput,
                1,
                Duration::ZERO,
                Duration::from_millis(2500),
                None,
                None,
                None,
            )
            .unwrap()
        };
        let mut s = build();
        s.split_counted(Duration::from_secs(3600)).unwrap();
        assert_eq!(s, build());
        // A warm-up of zero stays an empty segment 0.
        assert_eq!(s.segment_at(0), Some(1));
    }

    #[test]
    fn bad_intervals_are_errors() {
        let mut s = Schedule::build(
            Mode::Latency,
            1,
            Duration::ZERO,
            Duration::from_secs(3600),
            None,
            None,
            None,
        )
        .unwrap();
        let before = s.clone();
        assert!(s.split_counted(Duration::ZERO).is_err());
        assert!(s.split_counted(Duration::from_nanos(999)).is_err());
        // 3600 one-second phases is over MAX_PHASES.
        assert!(s.split_counted(Duration::from_secs(1)).is_err());
        assert_eq!(s, before, "a refused split leaves the schedule alone");
        assert!(s.split_counted(Duration::from_secs(4)).is_ok());
        assert_eq!(s.phases(), 900);
    }
}
