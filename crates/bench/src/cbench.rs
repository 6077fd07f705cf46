//! Real cbench (the oflops tool, `scripts/bench/build-cbench.sh` builds
//! it) as a peer of the emulator in `baton bench compare`: the command
//! line that expresses a case, running it with a time limit, and reading
//! its output. A measurement tool only: nothing in the build or the tests
//! needs the binary, and a missing or failing cbench is reported as such.
//!
//! ## What cbench does (oflops `cbench/fakeswitch.c`, `cbench.c`)
//! One thread, one `poll(2)` per loop over every switch socket with
//! `POLLIN|POLLOUT` (level-triggered). On `POLLIN` a switch reads once
//! into a buffer that starts at 64 KiB (`BUFLEN`) and doubles whenever a
//! read fills it; on `POLLOUT`, in throughput mode (`-t`), it tops its
//! output buffer up to 64 KiB with 82-byte PACKET_INs and writes it once.
//! Linux reports `POLLOUT` while at most 2/3 of the socket's send buffer is
//! queued, so that is how many requests each switch keeps in flight in the
//! kernel, plus what the controller has read and not answered. In latency
//! mode a switch has one request in flight. Nagle's algorithm stays on.
//! A *response* is a FLOW_MOD whose command is ADD or MODIFY_STRICT, or a
//! PACKET_OUT not carrying LLDP, received after the handshake; buffer ids
//! are not matched, so two answers to one request count twice.
//! Each test lasts `-m` ms; then cbench sleeps 100 ms, reads and discards
//! what has arrived, and starts the next; a test's figure is its responses
//! over its own length, and `RESULT` gives min/max/avg/stdev over the
//! tests after the first `-w`.

use crate::Error;
use crate::compare::scenarios::Case;
use crate::cpus::{CpuMeter, CpuUse};
use crate::spec::Mode;
use baton_openflow::Version;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Length of each cbench test (`-m`), cbench's default.
pub const MS_PER_TEST: u64 = 1000;

/// cbench's pause between tests (`usleep(100000)` in `run_test`).
const PAUSE_MS: u64 = 100;

/// One cbench run's parameters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Invocation {
    /// `-s`.
    pub switches: usize,
    /// `-M`: source MACs per switch.
    pub macs: usize,
    /// `-t` (else latency mode).
    pub throughput: bool,
    /// `-l`: tests in all.
    pub loops: u32,
    /// `-w`: tests not counted at the start.
    pub warmup_loops: u32,
    /// `-m`.
    pub ms_per_test: u64,
    /// `-i`: milliseconds between connection groups.
    pub connect_delay_ms: u64,
    /// `-I`: switches per connection group.
    pub connect_group: usize,
}

impl Invocation {
    /// How cbench runs `case`, or why it cannot: it emulates OpenFlow 1.0
    /// switches in throughput or latency mode only, without rates or a
    /// probe. The warm-up and the counted time become whole 1-second tests
    /// (at least one of each). Switches connect in groups of
    /// `connect_group`, `connect_delay` apart, as the emulator's do.
    pub fn for_case(
        case: &Case,
        connect_group: usize,
        connect_delay: Duration,
    ) -> Result<Invocation, String> {
        if case.version != Version::V10 {
            return Err("cbench speaks OpenFlow 1.0 only".into());
        }
        let throughput = match case.mode {
            Mode::Throughput => true,
            Mode::Latency => false,
            Mode::Rate => return Err("cbench has no rate mode".into()),
        };
        if case.probe || case.rates.is_some() || case.phases.is_some() {
            return Err("cbench has no rates, phases or probe".into());
        }
        if case.switches == 0 {
            return Err("no switches".into());
        }
        let secs = |s: f64| (s.max(0.0) * 1000.0 / MS_PER_TEST as f64).round() as u32;
        let warmup_loops = secs(case.warmup).max(1);
        Ok(Invocation {
            switches: case.switches,
            macs: case.macs.max(1),
            throughput,
            loops: warmup_loops + secs(case.duration).max(1),
            warmup_loops,
            ms_per_test: MS_PER_TEST,
            connect_delay_ms: connect_delay.as_millis() as u64,
            connect_group: connect_group.max(1),
        })
    }

    /// The arguments for a controller at `addr`.
    pub fn args(&self, addr: SocketAddr) -> Vec<String> {
        let mut a = vec![
            "-c".to_string(),
            addr.ip().to_string(),
            "-p".into(),
            addr.port().to_string(),
            "-s".into(),
            self.switches.to_string(),
            "-M".into(),
            self.macs.to_string(),
            "-l".into(),
            self.loops.to_string(),
            "-w".into(),
            self.warmup_loops.to_string(),
            "-m".into(),
            self.ms_per_test.to_string(),
        ];
        if self.throughput {
            a.push("-t".into());
        }
        if self.connect_delay_ms > 0 {
            a.extend([
                "-i".into(),
                self.connect_delay_ms.to_string(),
                "-I".into(),
                self.connect_group.to_string(),
            ]);
        }
        a
    }

    /// How long a run may take before it is killed: connecting, every test
    /// and pause, and 20 s to spare. cbench now and then never ends (seen
    /// against the responder on a loaded machine: it stopped sending after
    /// a few tests and printed nothing more); such a run counts as failed.
    pub fn time_limit(&self) -> Duration {
        let groups = self.switches.div_ceil(self.connect_group) as u64;
        let ms = groups * self.connect_delay_ms
            + u64::from(self.loops) * (self.ms_per_test + PAUSE_MS)
            + 20_000;
        Duration::from_millis(ms)
    }
}

/// One cbench run's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CbenchRun {
    /// Switches of the `RESULT` line.
    pub switches: usize,
    /// Counted tests.
    pub tests: usize,
    /// Smallest counted test, responses/s.
    pub min: f64,
    /// Largest counted test, responses/s.
    pub max: f64,
    /// Mean of the counted tests, responses/s: cbench's figure.
    pub avg: f64,
    /// Their standard deviation.
    pub stdev: f64,
    /// Every test's responses/s, warm-up included, in order.
    pub per_test: Vec<f64>,
    /// Jain's index over the switches' responses in the counted tests
    /// (when the per-test lines list every switch).
    pub jain: Option<f64>,
    /// How long cbench and the controller ran and waited for a CPU during
    /// the run (when [`run`] ran it).
    pub cpu_use: Option<CpuUse>,
}

/// One per-test line: `HH:MM:SS.mmm N switches: flows/sec:  c1  c2 ...
/// total = X per ms`. Returns the per-switch counts and the total
/// responses/s.
fn parse_test_line(line: &str) -> Option<(Vec<u64>, f64)> {
    let (_, rest) = line.split_once("flows/sec:")?;
    let (counts, total) = rest.split_once("total =")?;
    let counts = counts
        .split_whitespace()
        .map(|c| c.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    let per_ms: f64 = total.split_whitespace().next()?.parse().ok()?;
    Some((counts, per_ms * 1000.0))
}

/// `RESULT: N switches T tests min/max/avg/stdev = a/b/c/d responses/s`.
fn parse_result_line(line: &str) -> Option<(usize, usize, [f64; 4])> {
    let rest = line.trim().strip_prefix("RESULT:")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let [n, "switches", t, "tests", "min/max/avg/stdev", "=", v, ..] = words.as_slice() else {
        return None;
    };
    let v: Vec<f64> = v
        .split('/')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    Some((n.parse().ok()?, t.parse().ok()?, v.try_into().ok()?))
}

/// Reads cbench's standard output. The last `RESULT` line is the run's
/// figure; the per-test lines between it and the previous `RESULT` give
/// every test and, over the counted ones (after `warmup_loops`), Jain's
/// index over switches.
pub fn parse(output: &str, warmup_loops: u32) -> Result<CbenchRun, String> {
    // The tests since the previous RESULT line belong to the next one.
    let mut tests_seen: Vec<(Vec<u64>, f64)> = Vec::new();
    let mut result = None;
    for line in output.lines() {
        if let Some(r) = parse_result_line(line) {
            result = Some((r, std::mem::take(&mut tests_seen)));
        } else if let Some(t) = parse_test_line(line) {
            tests_seen.push(t);
        }
    }
    let Some(((switches, tests, [min, max, avg, stdev]), tests_seen)) = result else {
        return Err(match output.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(last) => format!("no RESULT line in cbench's output (last line: `{last}`)"),
            None => "cbench printed nothing".into(),
        });
    };
    let per_test = tests_seen.iter().map(|t| t.1).collect();
    let counted = tests_seen
        .iter()
        .skip(warmup_loops as usize)
        .take(tests)
        .map(|t| &t.0)
        .filter(|c| c.len() == switches);
    let mut sums = vec![0u64; switches];
    let mut n = 0;
    for c in counted {
        sums.iter_mut().zip(c).for_each(|(s, c)| *s += c);
        n += 1;
    }
    let jain = (n > 0 && switches > 0).then(|| {
        let xs: Vec<f64> = sums.iter().map(|&s| s as f64).collect();
        crate::stats::jain(&xs)
    });
    Ok(CbenchRun {
        switches,
        tests,
        min,
        max,
        avg,
        stdev,
        per_test,
        jain,
        cpu_use: None,
    })
}

/// `explicit`, else `cbench` on `PATH`.
pub fn find(explicit: Option<&Path>) -> Option<PathBuf> {
    match explicit {
        Some(p) => p.is_file().then(|| p.to_path_buf()),
        None => crate::compare::targets::which("cbench"),
    }
}

/// Runs `program` with `inv` against `addr`, its standard output and error
/// in `log_base`.out and .err, killed after [`Invocation::time_limit`].
/// cbench inherits the calling thread's CPU affinity (compare pins it to
/// the emulator's CPUs). With `controller`, the controller's process, the
/// run records how long each ran and waited for a CPU.
pub fn run(
    program: &Path,
    inv: &Invocation,
    addr: SocketAddr,
    controller: Option<u32>,
    log_base: &Path,
) -> Result<CbenchRun, Error> {
    let out_path = log_base.with_extension("out");
    let err_path = log_base.with_extension("err");
    let mut child = Command::new(program)
        .args(inv.args(addr))
        .stdin(Stdio::null())
        .stdout(Stdio::from(File::create(&out_path)?))
        .stderr(Stdio::from(File::create(&err_path)?))
        .spawn()
        .map_err(|e| Error::new(format!("cannot start {}: {e}", program.display())))?;
    let start = Instant::now();
    let meter = CpuMeter::start(Some(child.id()), controller);
    let mut cpu_use = None;
    let limit = inv.time_limit();
    let status = loop {
        // Read while cbench runs: its threads are gone once it exits.
        let w = meter.read();
        if w.generator_wait_pct.is_some() {
            cpu_use = Some(w);
        }
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    let tail = || {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    };
    let Some(status) = status else {
        return Err(Error::new(format!(
            "cbench did not finish within {limit:?}: {}",
            tail()
        )));
    };
    let mut r = parse(&output, inv.warmup_loops)
        .map_err(|e| Error::new(format!("cbench exited ({status}): {e}; stderr: {}", tail())))?;
    r.cpu_use = cpu_use;
    Ok(r)
}

#[cfg(test)]
mod tests;
