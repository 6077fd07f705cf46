//! The figures of a run, computed from the raw [`RunData`]: totals and
//! per-switch rates over the counted period, per phase and per second,
//! fairness, latency and probe delay, the controller's CPU cost and
//! resident memory; and their three renderings: a [`Report`] serialised as
//! JSON, a table for the terminal, and the one-line summary that a run
//! prints last.
//!
//! "Counted" means the segments after the warm-up. *Responses* are
//! FLOW_MODs and PACKET_OUTs as cbench counts them; *requests* are
//! PACKET_INs answered (see [`crate::emulator::conn`] for how responses are
//! matched to them). Fairness is computed over requests answered per
//! second.

pub mod render;

use crate::emulator::RunData;
use crate::emulator::conn::{Counts, SwitchData};
use crate::spec::Mode;
use crate::stats::{Fairness, Percentiles, histogram_cdf, new_histogram};

/// One switch's figures over the counted period.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SwitchReport {
    /// Switch number.
    pub index: usize,
    /// Datapath id.
    pub dpid: u64,
    /// Offered rate (rate mode).
    pub offered_per_sec: Option<f64>,
    /// Totals.
    pub counts: Counts,
    /// Requests answered.
    pub requests: u64,
    /// Responses per second.
    pub responses_per_sec: f64,
    /// Requests answered per second.
    pub requests_per_sec: f64,
    /// Max-min fair share (requests/s).
    pub fair_share: f64,
    /// `(requests_per_sec - fair_share) / fair_share`.
    pub deviation: Option<f64>,
    /// Whether responses named buffer ids.
    pub ids_echoed: bool,
    /// Malformed responses.
    pub malformed: u64,
    /// OFPT_ERRORs.
    pub peer_errors: u64,
    /// Latency-mode time-outs.
    pub timeouts: u64,
    /// Why the connection ended early.
    pub failure: Option<String>,
}

/// The figures of one phase (counted segment).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PhaseReport {
    /// Phase number (1-based).
    pub phase: usize,
    /// Start, in seconds after the warm-up.
    pub start_s: f64,
    /// Length in seconds.
    pub seconds: f64,
    /// Offered aggregate rate (rate mode).
    pub offered_per_sec: Option<f64>,
    /// PACKET_INs sent per second.
    pub sent_per_sec: f64,
    /// Requests the schedule called for but the send buffer could not take.
    pub skipped: u64,
    /// Responses per second.
    pub responses_per_sec: f64,
    /// Requests answered per second.
    pub requests_per_sec: f64,
    /// Jain's index over achieved / fair share.
    pub jain: f64,
    /// Smallest deviation from the fair share.
    pub deviation_min: Option<f64>,
    /// Median deviation.
    pub deviation_median: Option<f64>,
    /// Largest deviation.
    pub deviation_max: Option<f64>,
    /// Latency of the non-probe switches.
    pub latency_ms: Option<Percentiles>,
    /// Probe delay.
    pub probe_delay_ms: Option<Percentiles>,
    /// Controller CPU seconds in this phase.
    pub cpu_seconds: Option<f64>,
    /// The controller's resident memory (MiB) at the end of this phase
    /// (with `--controller-pid`): with `--intervals`, how it grows over a
    /// soak.
    pub controller_rss_mib: Option<f64>,
}

/// One second of the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SecondReport {
    /// Seconds after the warm-up ended (negative during it).
    pub t: f64,
    /// Whether this second is in the counted period.
    pub counted: bool,
    /// Offered aggregate rate (rate mode).
    pub offered_per_sec: Option<f64>,
    /// PACKET_INs sent.
    pub sent_per_sec: f64,
    /// Responses.
    pub responses_per_sec: f64,
    /// Requests answered.
    pub requests_per_sec: f64,
    /// Mean probe delay in this second.
    pub probe_delay_ms: Option<f64>,
    /// Controller CPU seconds in this second.
    pub cpu_seconds: Option<f64>,
    /// The controller's resident memory (MiB) at the end of this second.
    pub controller_rss_mib: Option<f64>,
}

/// The controller's CPU cost over the counted period.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CpuReport {
    /// CPU seconds (user + system).
    pub seconds: f64,
    /// CPU seconds per wall-clock second (1.0 = one core busy).
    pub utilisation: f64,
    /// CPU seconds per 1000 responses.
    pub per_1k_responses: Option<f64>,
    /// CPU seconds per 1000 requests answered.
    pub per_1k_requests: Option<f64>,
}

/// The controller's resident memory over the counted period (with
/// `--controller-pid`), in MiB (2^20 bytes): what it held when counting
/// started, when the run ended, and the most it held at a sample (every
/// second and every phase boundary) in between.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RssReport {
    /// Resident memory when counting started (the end of the warm-up).
    pub start_mib: f64,
    /// Resident memory at the end of the run.
    pub end_mib: f64,
    /// The largest resident memory sampled while counting.
    pub peak_mib: f64,
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// How the run was set up.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSetup {
    /// Controller address.
    pub controller: String,
    /// Mode.
    pub mode: Mode,
    /// Switches (without the probe).
    pub switches: usize,
    /// MACs per switch.
    pub macs: usize,
    /// OpenFlow version ("1.0" or "1.3").
    pub of: String,
    /// Counted seconds.
    pub duration_s: f64,
    /// Warm-up seconds.
    pub warmup_s: f64,
    /// Emulator threads.
    pub threads: usize,
    /// Whether a probe switch ran.
    pub probe: bool,
    /// Seconds from start to traffic (connect + learn).
    pub setup_s: f64,
}

/// Everything a run measured, as written to `--json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Responses per second over the counted period (all switches but the
    /// probe).
    pub responses_per_sec: f64,
    /// Requests answered per second over the counted period.
    pub requests_per_sec: f64,
    /// PACKET_INs sent per second.
    pub sent_per_sec: f64,
    /// Jain's index over the switches' achieved / fair share.
    pub jain: f64,
    /// Mean probe delay (with `--probe`).
    pub probe_delay_ms: Option<f64>,
    /// Per-switch figures.
    pub switches: Vec<SwitchReport>,
    /// Latency percentiles of the non-probe switches.
    pub latency_ms: Option<Percentiles>,
    /// Latency CDF `(ms, fraction)`.
    pub latency_cdf: Vec<(f64, f64)>,
    /// Probe delay percentiles.
    pub probe_ms: Option<Percentiles>,
    /// Probe samples `(seconds after the warm-up, delay ms)`.
    pub probe_samples: Vec<(f64, f64)>,
    /// Smallest, median and largest deviation from the fair share.
    pub deviation_min: Option<f64>,
    /// Median deviation.
    pub deviation_median: Option<f64>,
    /// Largest deviation.
    pub deviation_max: Option<f64>,
    /// CDF of the deviations `(deviation, fraction)`.
    pub deviation_cdf: Vec<(f64, f64)>,
    /// Per phase.
    pub phases: Vec<PhaseReport>,
    /// Per second, warm-up included.
    pub per_second: Vec<SecondReport>,
    /// Controller CPU cost (with `--controller-pid`).
    pub cpu: Option<CpuReport>,
    /// Controller resident memory (with `--controller-pid`).
    pub controller_rss: Option<RssReport>,
    /// How long the emulator and the controller (with `--controller-pid`)
    /// ran and waited for a CPU while traffic ran (warm-up included).
    pub cpu_use: crate::cpus::CpuUse,
    /// The set-up.
    pub config: RunSetup,
    /// Things the reader should know (failed switches, fallbacks).
    pub warnings: Vec<String>,
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

impl Report {
    /// Computes the figures of `run`.
    pub fn from_run(run: &RunData) -> Report {
        let cfg = &run.config;
        let sched = &cfg.schedule;
        let counted: Vec<usize> = (1..sched.segments.len()).collect();
        let counted_s: f64 = counted.iter().map(|&s| sched.segments[s].seconds()).sum();
        let c0 = sched.counted_start_us();
        let main: Vec<&SwitchData> = run.switches.iter().filter(|s| !s.probe).collect();
        let sum = |sw: &SwitchData, segs: &[usize]| {
            let mut c = Counts::default();
            segs.iter().for_each(|&s| c.add(&sw.per_segment[s]));
            c
        };
        let rate_mode = cfg.mode == Mode::Rate;
        let offered = |i: usize, segs: &[usize]| -> Option<f64> {
            if !rate_mode {
                return None;
            }
            let secs: f64 = segs.iter().map(|&s| sched.segments[s].seconds()).sum();
            let reqs: f64 = segs
                .iter()
                .map(|&s| {
                    sched.segments[s].rates.get(i).copied().unwrap_or(0.0)
                        * sched.segments[s].seconds()
                })
                .sum();
            Some(if secs > 0.0 { reqs / secs } else { 0.0 })
        };
        let fairness_of = |segs: &[usize], secs: f64| {
            let achieved: Vec<f64> = main
                .iter()
                .map(|sw| rate(sw.answered(&sum(sw, segs)), secs))
                .collect();
            let demands: Option<Vec<f64>> = rate_mode.then(|| {
                main.iter()
                    .map(|sw| offered(sw.index, segs).unwrap_or(0.0))
                    .collect()
            });
            (
                achieved.clone(),
                Fairness::compute(&achieved, demands.as_deref()),
            )
        };
        let (_, fair) = fairness_of(&counted, counted_s);
        let mut total = Counts::default();
        let mut requests = 0;
        let switches: Vec<SwitchReport> = main
            .iter()
            .enumerate()
            .map(|(k, sw)| {
                let c = sum(sw, &counted);
                total.add(&c);
                let answered = sw.answered(&c);
                requests += answered;
                SwitchReport {
                    index: sw.index,
                    dpid: sw.index as u64 + 1,
                    offered_per_sec: offered(sw.index, &counted),
                    counts: c,
                    requests: answered,
                    responses_per_sec: rate(c.responses, counted_s),
                    requests_per_sec: rate(answered, counted_s),
                    fair_share: fair.fair_shares[k],
                    deviation: fair.deviations[k],
                    ids_echoed: sw.ids_echoed,
                    malformed: sw.malformed,
                    peer_errors: sw.peer_errors,
                    timeouts: sw.timeouts,
                    failure: sw.failure.clone(),
                }
            })
            .collect();
        // Latency and probe over the counted period.
        let mut lat = new_histogram();
        for &s in &counted {
            let _ = lat.add(&run.latency[s]);
        }
        let probe_in = |from: u64, to: u64| -> Vec<f64> {
            run.probe
                .iter()
                .filter(|(t, _)| *t >= from && *t < to)
                .map(|(_, d)| *d as f64 / 1000.0)
                .collect()
        };
        let probe_all = probe_in(c0, sched.end_us());
        let probe_ms = if cfg.probe {
            Percentiles::from_samples(&probe_all)
        } else {
            None
        };
        let cpu_between = |from: u64, to: u64| run.cpu.as_ref().and_then(|c| c.between(from, to));
        let rss_at = |t: u64| run.cpu.as_ref().and_then(|c| c.rss_at(t)).map(mib);
        let phases = counted
            .iter()
            .map(|&s| {
                let seg = &sched.segments[s];
                let secs = seg.seconds();
                let (_, f) = fairness_of(&[s], secs);
                let mut c = Counts::default();
                let mut answered = 0;
                for sw in &main {
                    c.add(&sw.per_segment[s]);
                    answered += sw.answered(&sw.per_segment[s]);
                }
                PhaseReport {
                    phase: s,
                    start_s: (seg.start_us.saturating_sub(c0)) as f64 / 1e6,
                    seconds: secs,
                    offered_per_sec: seg.aggregate,
                    sent_per_sec: rate(c.sent, secs),
                    skipped: c.skipped,
                    responses_per_sec: rate(c.responses, secs),
                    requests_per_sec: rate(answered, secs),
                    jain: f.jain,
                    deviation_min: f.deviation_min,
                    deviation_median: f.deviation_median,
                    deviation_max: f.deviation_max,
                    latency_ms: Percentiles::from_histogram(&run.latency[s]),
                    probe_delay_ms: if cfg.probe {
                        Percentiles::from_samples(&probe_in(seg.start_us, seg.end_us))
                    } else {
                        None
                    },
                    cpu_seconds: cpu_between(seg.start_us, seg.end_us),
                    controller_rss_mib: rss_at(seg.end_us),
                }
            })
            .collect();
        let per_second = per_second(run, &main, c0);
        let cpu = cpu_between(c0, sched.end_us()).map(|secs| CpuReport {
            seconds: secs,
            utilisation: if counted_s > 0.0 {
                secs / counted_s
            } else {
                0.0
            },
            per_1k_responses: (total.responses > 0)
                .then(|| secs / (total.responses as f64 / 1000.0)),
            per_1k_requests: (requests > 0).then(|| secs / (requests as f64 / 1000.0)),
        });
        let end = sched.end_us();
        let controller_rss = match (rss_at(c0), rss_at(end)) {
            (Some(start_mib), Some(end_mib)) => Some(RssReport {
                start_mib,
                end_mib,
                peak_mib: run
                    .cpu
                    .as_ref()
                    .and_then(|c| c.rss_peak(c0, end))
                    .map_or(start_mib.max(end_mib), mib),
            }),
            _ => None,
        };
        Report {
            responses_per_sec: rate(total.responses, counted_s),
            requests_per_sec: rate(requests, counted_s),
            sent_per_sec: rate(total.sent, counted_s),
            jain: fair.jain,
            probe_delay_ms: probe_ms.map(|p| p.mean),
            latency_ms: Percentiles::from_histogram(&lat),
            latency_cdf: histogram_cdf(&lat),
            probe_ms,
            probe_samples: run
                .probe
                .iter()
                .map(|(t, d)| ((*t as f64 - c0 as f64) / 1e6, *d as f64 / 1000.0))
                .collect(),
            deviation_min: fair.deviation_min,
            deviation_median: fair.deviation_median,
            deviation_max: fair.deviation_max,
            deviation_cdf: fair.cdf(),
            switches,
            phases,
            per_second,
            cpu,
            controller_rss,
            cpu_use: run.cpu_use,
            config: RunSetup {
                controller: cfg.controller.to_string(),
                mode: cfg.mode,
                switches: cfg.switches,
                macs: cfg.macs,
                of: match cfg.version {
                    baton_openflow::Version::V10 => "1.0".into(),
                    baton_openflow::Version::V13 => "1.3".into(),
                },
                duration_s: counted_s,
                warmup_s: c0 as f64 / 1e6,
                threads: cfg.threads,
                probe: cfg.probe,
                setup_s: run.setup.as_secs_f64(),
            },
            warnings: warnings(run, &main),
        }
    }
}

fn per_second(run: &RunData, main: &[&SwitchData], c0: u64) -> Vec<SecondReport> {
    let sched = &run.config.schedule;
    let end = sched.end_us();
    let bins = end.div_ceil(1_000_000) as usize;
    (0..bins)
        .map(|k| {
            let from = k as u64 * 1_000_000;
            let to = (from + 1_000_000).min(end);
            let secs = (to - from) as f64 / 1e6;
            let mut c = Counts::default();
            let mut answered = 0;
            for sw in main {
                if let Some(b) = sw.per_second.get(k) {
                    c.add(b);
                    answered += sw.answered(b);
                }
            }
            let probe: Vec<f64> = run
                .probe
                .iter()
                .filter(|(t, _)| *t >= from && *t < to)
                .map(|(_, d)| *d as f64 / 1000.0)
                .collect();
            SecondReport {
                t: (from as f64 - c0 as f64) / 1e6,
                counted: from >= c0,
                offered_per_sec: sched
                    .segment_at(from)
                    .and_then(|s| sched.segments[s].aggregate),
                sent_per_sec: rate(c.sent, secs),
                responses_per_sec: rate(c.responses, secs),
                requests_per_sec: rate(answered, secs),
                probe_delay_ms: (!probe.is_empty())
                    .then(|| probe.iter().sum::<f64>() / probe.len() as f64),
                cpu_seconds: run.cpu.as_ref().and_then(|c| c.between(from, to)),
                controller_rss_mib: run.cpu.as_ref().and_then(|c| c.rss_at(to)).map(mib),
            }
        })
        .collect()
}

fn warnings(run: &RunData, main: &[&SwitchData]) -> Vec<String> {
    let mut w = Vec::new();
    for sw in &run.switches {
        if let Some(f) = &sw.failure {
            w.push(format!("switch dpid {} disconnected: {f}", sw.index + 1));
        }
        if let Some(e) = &sw.first_error {
            w.push(format!(
                "switch dpid {}: {} OFPT_ERROR(s), first: {e}",
                sw.index + 1,
                sw.peer_errors
            ));
        }
    }
    let no_ids = main
        .iter()
        .filter(|s| !s.ids_echoed && s.per_segment.iter().any(|c| c.responses > 0))
        .count();
    if no_ids > 0 {
        w.push(format!(
            "{no_ids} switch(es) got responses without their buffer ids: requests answered = min(responses, requests) there, and no latency in throughput/rate mode"
        ));
    }
    let malformed: u64 = main.iter().map(|s| s.malformed).sum();
    if malformed > 0 {
        w.push(format!(
            "{malformed} responses did not decode (counted by type)"
        ));
    }
    let skipped: u64 = main
        .iter()
        .flat_map(|s| s.per_segment.iter().skip(1))
        .map(|c| c.skipped)
        .sum();
    if skipped > 0 {
        w.push(format!(
            "{skipped} scheduled requests were not sent: send buffers were full (the controller did not read fast enough, or the emulator fell behind)"
        ));
    }
    let timeouts: u64 = main.iter().map(|s| s.timeouts).sum();
    if timeouts > 0 {
        w.push(format!(
            "{timeouts} requests unanswered after 1 s (latency mode moved on)"
        ));
    }
    let idle = main
        .iter()
        .filter(|s| s.per_segment.iter().skip(1).all(|c| c.responses == 0))
        .count();
    if idle > 0 {
        w.push(format!(
            "{idle} switch(es) got no response in the counted period"
        ));
    }
    w
}
