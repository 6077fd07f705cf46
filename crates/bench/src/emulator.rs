//! The switch emulator: N OpenFlow switches on `threads` threads, driven
//! through four stages by a coordinator (the calling thread).
//!
//! 1. **Connect**: switch `k` connects at `(k / connect_group) *
//!    connect_delay` (cbench's `-I`/`-i`, for controllers that drop slow
//!    handshakes) and completes the handshake ([`crate::switch`]).
//! 2. **Learn**: once every switch is up, each sends one ARP PACKET_IN from
//!    its gateway so a learning switch learns it; the coordinator waits
//!    for an answer from every switch (at most `learn_timeout`).
//! 3. **Run**: traffic starts at `t0`; the [`Schedule`] says which segment
//!    (warm-up, then the counted phases) each instant belongs to and, in
//!    rate mode, each switch's rate. Counts are kept per switch, per
//!    segment and per second; latencies per segment.
//! 4. **Stop**: after the last segment the threads hand back their
//!    switches and histograms ([`RunData`]).
//!
//! This module owns the coordination and the shape of the raw results;
//! [`conn`] owns one switch's connection, [`worker`] the epoll loop.

pub mod conn;
pub mod worker;

use crate::Error;
use crate::cpus::{CpuMeter, CpuUse};
use crate::spec::{Mode, Schedule};
use crate::stats::{cpu_seconds, new_histogram, resident_bytes};
use crate::switch::SwitchProto;
use baton_openflow::Version;
use conn::{Conn, SwitchData};
use hdrhistogram::Histogram;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the switches write in throughput mode, which sets how many requests
/// each keeps in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writes {
    /// As cbench: each loop asks the kernel which sockets are writable
    /// (`poll`, level-triggered) and writes to those once, at most 64 KiB;
    /// Nagle's algorithm stays on. Linux reports a TCP socket writable
    /// while at most 2/3 of its send buffer is queued, so that is what
    /// each switch keeps queued in the kernel.
    #[default]
    Cbench,
    /// Write until the kernel refuses (edge-triggered readiness), with
    /// `TCP_NODELAY`: the send buffer stays full, up to 1.5x cbench's
    /// requests in flight.
    Fill,
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The controller's address.
    pub controller: SocketAddr,
    /// How switches send.
    pub mode: Mode,
    /// Number of switches (the probe comes on top).
    pub switches: usize,
    /// Distinct source MACs per switch.
    pub macs: usize,
    /// OpenFlow version the switches speak.
    pub version: Version,
    /// Warm-up and counted phases, with rates in rate mode.
    pub schedule: Schedule,
    /// Add a 5 requests/s probe switch whose delay is reported apart.
    pub probe: bool,
    /// Emulator threads.
    pub threads: usize,
    /// How switches write in throughput mode.
    pub writes: Writes,
    /// Delay between connection groups.
    pub connect_delay: Duration,
    /// Switches per connection group.
    pub connect_group: usize,
    /// How long to wait for every handshake after the last connection
    /// attempt.
    pub connect_timeout: Duration,
    /// How long to wait for answers to the ARPs.
    pub learn_timeout: Duration,
    /// The controller's pid, for its CPU time and resident memory.
    pub controller_pid: Option<u32>,
    /// Draw a progress bar on the terminal.
    pub progress: bool,
}

impl Config {
    /// A throughput run of `switches` switches for `duration` (no warm-up),
    /// with defaults for the rest; adjust fields as needed.
    pub fn new(controller: SocketAddr, switches: usize, duration: Duration) -> Config {
        Config {
            controller,
            mode: Mode::Throughput,
            switches,
            macs: 1000,
            version: Version::V10,
            schedule: Schedule::build(
                Mode::Throughput,
                switches,
                Duration::ZERO,
                duration,
                None,
                None,
                None,
            )
            .unwrap_or(Schedule { segments: vec![] }),
            probe: false,
            threads: default_threads(),
            writes: Writes::default(),
            connect_delay: Duration::ZERO,
            connect_group: 1,
            connect_timeout: Duration::from_secs(10),
            learn_timeout: Duration::from_secs(1),
            controller_pid: None,
            progress: false,
        }
    }
}

pub use crate::cpus::default_threads;

/// Where the coordinator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Stage {
    /// Connecting and handshaking.
    Connect = 0,
    /// Sending the ARPs.
    Learn = 1,
    /// Traffic.
    Run = 2,
    /// Done.
    Stop = 3,
}

/// What the coordinator and the threads share.
pub struct Shared {
    epoch: Instant,
    stage: AtomicU8,
    t0_us: AtomicU64,
    up: AtomicUsize,
    learned: AtomicUsize,
    dead: AtomicUsize,
    failure: Mutex<Option<String>>,
    progress: Vec<(AtomicU64, AtomicU64)>,
    schedule: Schedule,
    mode: Mode,
    writes: Writes,
    probe: bool,
    controller: SocketAddr,
}

impl Shared {
    fn stage(&self) -> Stage {
        match self.stage.load(Ordering::Acquire) {
            0 => Stage::Connect,
            1 => Stage::Learn,
            2 => Stage::Run,
            _ => Stage::Stop,
        }
    }

    fn set_stage(&self, s: Stage) {
        self.stage.store(s as u8, Ordering::Release);
    }

    fn now(&self) -> conn::Now {
        let us = self.epoch.elapsed().as_micros() as u64;
        let t0 = self.t0_us.load(Ordering::Acquire);
        if t0 == u64::MAX || us < t0 {
            return conn::Now {
                us,
                since_t0: None,
                segment: None,
                second: None,
            };
        }
        let t = us - t0;
        let segment = self.schedule.segment_at(t);
        let seconds = seconds_bins(&self.schedule);
        conn::Now {
            us,
            since_t0: Some(t),
            segment,
            second: segment.map(|_| ((t / 1_000_000) as usize).min(seconds - 1)),
        }
    }

    fn record_failure(&self, index: usize, why: Option<&str>) {
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(format!(
                "switch dpid {}: {}",
                index + 1,
                why.unwrap_or("connection failed")
            ));
        }
    }

    fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

fn seconds_bins(s: &Schedule) -> usize {
    s.end_us().div_ceil(1_000_000) as usize + 1
}

/// The controller's CPU time and resident memory at instants of the run
/// (every second and every segment boundary), with `--controller-pid`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CpuSamples {
    /// `(µs since traffic started, CPU seconds used so far)`.
    pub samples: Vec<(u64, f64)>,
    /// `(µs since traffic started, resident bytes then)`.
    pub rss: Vec<(u64, u64)>,
}

impl CpuSamples {
    /// CPU seconds used between `from_us` and `to_us` (the nearest
    /// samples).
    pub fn between(&self, from_us: u64, to_us: u64) -> Option<f64> {
        let at = |t: u64| {
            self.samples
                .iter()
                .min_by_key(|(s, _)| s.abs_diff(t))
                .map(|(_, c)| *c)
        };
        Some(at(to_us)? - at(from_us)?)
    }

    /// The controller's resident bytes at `t_us` (the nearest sample).
    pub fn rss_at(&self, t_us: u64) -> Option<u64> {
        self.rss
            .iter()
            .min_by_key(|(s, _)| s.abs_diff(t_us))
            .map(|(_, b)| *b)
    }

    /// The largest resident size sampled in `[from_us, to_us]`.
    pub fn rss_peak(&self, from_us: u64, to_us: u64) -> Option<u64> {
        self.rss
            .iter()
            .filter(|(t, _)| (from_us..=to_us).contains(t))
            .map(|(_, b)| *b)
            .max()
    }
}

/// The raw results of a run.
pub struct RunData {
    /// The configuration it ran with.
    pub config: Config,
    /// Every switch, by index; the probe (if any) last.
    pub switches: Vec<SwitchData>,
    /// Latency (µs) of the non-probe switches, per segment.
    pub latency: Vec<Histogram<u64>>,
    /// Probe samples: (µs since traffic started, delay µs), in time order.
    pub probe: Vec<(u64, u64)>,
    /// The controller's CPU time and resident memory, with
    /// `controller_pid`.
    pub cpu: Option<CpuSamples>,
    /// How long the emulator (and the controller, with `controller_pid`)
    /// ran and waited for a CPU while traffic ran.
    pub cpu_use: CpuUse,
    /// Time from start to traffic (connect + learn).
    pub setup: Duration,
}

/// Runs the emulator against `config.controller`.
pub fn run(config: &Config) -> Result<RunData, Error> {
    let total = config.switches + usize::from(config.probe);
    if total == 0 {
        return Err(Error::new("nothing to emulate: --switches is 0"));
    }
    if config.schedule.segments.len() < 2 {
        return Err(Error::new("empty schedule"));
    }
    let threads = config.threads.clamp(1, total);
    let segments = config.schedule.segments.len();
    let seconds = seconds_bins(&config.schedule);
    // Throughput mode keeps as many requests in flight as the sockets
    // hold: on loopback, with autotuned buffers, over 100,000 per switch.
    // A response to a request older than the ring counts without a
    // latency, so the ring covers that (a million entries, 8 MiB, per
    // switch when there are few), within 64 MiB in all.
    let ring_len = match config.mode {
        Mode::Latency => 1024,
        _ => ((8 << 20) / total).clamp(1024, 1 << 20),
    };
    let group = config.connect_group.max(1);
    let delay_us = config.connect_delay.as_micros() as u64;
    let last_connect_us = ((total - 1) / group) as u64 * delay_us;
    // Contiguous chunks of switches per thread; the probe is the last one.
    let mut per_thread: Vec<Vec<Conn>> = (0..threads).map(|_| Vec::new()).collect();
    for k in 0..total {
        let t = k * threads / total;
        let list = &mut per_thread[t];
        let probe = k == config.switches;
        let mut conn = Conn::new(
            mio::Token(list.len()),
            k,
            probe,
            SwitchProto::new(k, config.version),
            config.macs,
            if probe { 1024 } else { ring_len },
            segments,
            seconds,
            (k / group) as u64 * delay_us,
        );
        if config.mode == Mode::Throughput && !probe {
            conn.sample_latency_every(conn::THROUGHPUT_LATENCY_SAMPLE);
        }
        list.push(conn);
    }
    let shared = Arc::new(Shared {
        epoch: Instant::now(),
        stage: AtomicU8::new(Stage::Connect as u8),
        t0_us: AtomicU64::new(u64::MAX),
        up: AtomicUsize::new(0),
        learned: AtomicUsize::new(0),
        dead: AtomicUsize::new(0),
        failure: Mutex::new(None),
        progress: (0..threads)
            .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
            .collect(),
        schedule: config.schedule.clone(),
        mode: config.mode,
        writes: config.writes,
        probe: config.probe,
        controller: config.controller,
    });
    let mut handles = Vec::with_capacity(threads);
    for (id, conns) in per_thread.into_iter().enumerate() {
        let sh = shared.clone();
        let h = std::thread::Builder::new()
            .name(format!("bench-emu-{id}"))
            .spawn(move || worker::run(sh, id, conns))
            .map_err(|e| Error::new(format!("cannot start an emulator thread: {e}")))?;
        handles.push(h);
    }
    let outcome = coordinate(config, &shared, total, last_connect_us);
    shared.set_stage(Stage::Stop);
    let mut results = Vec::with_capacity(threads);
    for h in handles {
        match h.join() {
            Ok(Ok(r)) => results.push(r),
            Ok(Err(e)) => return Err(Error::new(format!("emulator thread: {e}"))),
            Err(_) => return Err(Error::new("an emulator thread panicked")),
        }
    }
    let (setup, cpu, cpu_use) = outcome?;
    let mut switches = Vec::with_capacity(total);
    let mut latency: Vec<Histogram<u64>> = (0..segments).map(|_| new_histogram()).collect();
    let mut probe = Vec::new();
    for r in results {
        for (acc, h) in latency.iter_mut().zip(&r.hist) {
            // Same bounds on both sides: `add` cannot fail.
            let _ = acc.add(h);
        }
        probe.extend(r.probe);
        switches.extend(r.conns.into_iter().map(|c| c.data));
    }
    switches.sort_by_key(|s| s.index);
    probe.sort_unstable();
    Ok(RunData {
        config: config.clone(),
        switches,
        latency,
        probe,
        cpu,
        cpu_use,
        setup,
    })
}

type Outcome = Result<(Duration, Option<CpuSamples>, CpuUse), Error>;

fn coordinate(config: &Config, shared: &Shared, total: usize, last_connect_us: u64) -> Outcome {
    let tick = Duration::from_millis(2);
    // Connect.
    let deadline = Duration::from_micros(last_connect_us) + config.connect_timeout;
    loop {
        let up = shared.up.load(Ordering::Acquire);
        if up == total {
            break;
        }
        if let Some(f) = shared.failure() {
            return Err(Error::new(format!(
                "{up} of {total} switches completed the handshake; {f}"
            )));
        }
        if shared.epoch.elapsed() > deadline {
            return Err(Error::new(format!(
                "only {up} of {total} switches completed the handshake within {:?}",
                deadline
            )));
        }
        std::thread::sleep(tick);
    }
    // Learn.
    shared.set_stage(Stage::Learn);
    let learn_start = Instant::now();
    while shared.learned.load(Ordering::Acquire) < total
        && learn_start.elapsed() < config.learn_timeout
    {
        std::thread::sleep(tick);
    }
    // Run.
    let setup = shared.epoch.elapsed();
    let t0 = setup.as_micros() as u64;
    let pid = config.controller_pid;
    let mut cpu = pid.map(|_| CpuSamples::default());
    let sample = |cpu: &mut Option<CpuSamples>, t: u64| {
        if let (Some(c), Some(p)) = (cpu.as_mut(), pid) {
            if let Some(s) = cpu_seconds(p) {
                c.samples.push((t, s));
            }
            if let Some(b) = resident_bytes(p) {
                c.rss.push((t, b));
            }
        }
    };
    sample(&mut cpu, 0);
    let meter = CpuMeter::start(Some(std::process::id()), pid);
    shared.t0_us.store(t0, Ordering::Release);
    shared.set_stage(Stage::Run);
    // Sample at every second and every segment boundary.
    let end = config.schedule.end_us();
    let mut marks: Vec<u64> = (1..=end / 1_000_000).map(|s| s * 1_000_000).collect();
    marks.extend(config.schedule.segments.iter().map(|s| s.end_us));
    marks.push(end);
    marks.sort_unstable();
    marks.dedup();
    let bar = config.progress.then(|| progress_bar(end));
    let mut last = (0u64, 0u64);
    for m in marks {
        loop {
            let now = shared.epoch.elapsed().as_micros() as u64 - t0;
            if now >= m {
                break;
            }
            std::thread::sleep(Duration::from_micros((m - now).min(100_000)));
        }
        sample(&mut cpu, m);
        if let Some(bar) = &bar {
            let resp: u64 = shared
                .progress
                .iter()
                .map(|p| p.0.load(Ordering::Relaxed))
                .sum();
            let dt = (m - last.0).max(1) as f64 / 1e6;
            bar.set_position(m / 1000);
            bar.set_message(format!("{:.0} responses/s", (resp - last.1) as f64 / dt));
            last = (m, resp);
        }
    }
    let cpu_use = meter.read();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok((setup, cpu, cpu_use))
}

fn progress_bar(end_us: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(end_us / 1000);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} ms  {msg}",
    ) {
        bar.set_style(style);
    }
    bar
}
/// Resolves `ADDR:PORT` (a name such as `localhost:6653` is fine).
pub fn resolve(addr: &str) -> Result<SocketAddr, Error> {
    addr.to_socket_addrs()
        .map_err(|e| Error::new(format!("cannot resolve {addr}: {e}")))?
        .next()
        .ok_or_else(|| Error::new(format!("{addr} resolves to no address")))
}
