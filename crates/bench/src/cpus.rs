//! The CPUs the benchmark may run on: the calling thread's affinity mask
//! (what `taskset` set), pinning to a `taskset -c` style list, and the
//! default thread count that follows from them.
//!
//! Threads inherit the mask of the thread that starts them, and child
//! processes that of their parent, so pinning the calling thread before
//! starting the emulator's threads (or cbench) pins them all.
//!
//! [`CpuMeter`] says how long the generator and the controller ran and
//! waited for a CPU during a run: on a shared machine another process on
//! the pinned CPUs, or the hypervisor taking them, lowers a figure without
//! any fault of the controller; and the one of the two that ran all the
//! time set the pace.

use crate::Error;

/// The CPUs the calling thread may run on, in increasing order; empty
/// when the mask cannot be read.
pub fn allowed() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data, zeroed is a valid (empty) set;
    // sched_getaffinity writes at most `size_of::<cpu_set_t>()` bytes into
    // it; CPU_ISSET reads inside it for indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// One thread per CPU the calling thread may run on (so `taskset -c 0
/// baton bench` starts one emulator thread, and `taskset -c 1 baton bench
/// responder` one I/O thread); the number of cores when the mask cannot be
/// read.
pub fn default_threads() -> usize {
    match allowed().len() {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Pins the calling thread (and the threads and processes it starts later)
/// to `cpus`, a `taskset -c` style list (`0`, `0-3,6`). Returns how many
/// CPUs that is.
pub fn pin_current_thread(cpus: &str) -> Result<usize, Error> {
    let list = parse_cpu_list(cpus)?;
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside
    // it (indices are checked against CPU_SETSIZE); sched_setaffinity
    // reads `size_of::<cpu_set_t>()` bytes from a valid pointer.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &c in &list {
            if c < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c, &mut set);
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(Error::new(format!(
                "cannot pin the benchmark to CPUs {cpus}: {}",
                std::io::Error::last_os_error()
            )));
        }
    }
    Ok(list.len())
}

/// Parses a `taskset -c` CPU list.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, Error> {
    let bad = || Error::new(format!("bad CPU list `{s}` (e.g. 0 or 0-3,6)"));
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b || b - a > 4096 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// How the benchmark's processes used the CPUs over an interval, as
/// percentages of its wall time (`/proc/PID/task/*/schedstat`): how long
/// their threads ran, and how long they were runnable but not running (run
/// delay), with the share of the CPUs' time the hypervisor took
/// (`/proc/stat`, steal).
/// - A load generator and a controller pinned to CPUs of their own wait
///   little; on a shared machine another process on those CPUs shows
///   here, and the figures of that run are the worse for it.
/// - Which of the two ran near 100% of its core says which set the pace:
///   a generator at 100% beside a controller well below it is the limit
///   of that run.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct CpuUse {
    /// The load generator's threads (the emulator, or cbench) waiting,
    /// percent of wall time (summed over threads).
    pub generator_wait_pct: Option<f64>,
    /// The controller's threads waiting, percent of wall time (summed over
    /// threads).
    pub controller_wait_pct: Option<f64>,
    /// Percent of the machine's CPU time stolen by the hypervisor.
    pub steal_pct: Option<f64>,
    /// The load generator's threads running, percent of wall time (summed
    /// over threads: 100 is one core busy).
    pub generator_busy_pct: Option<f64>,
    /// The controller's threads running, percent of wall time (summed over
    /// threads).
    pub controller_busy_pct: Option<f64>,
}

/// A [`CpuUse`] measurement under way.
#[derive(Debug, Clone, Copy)]
pub struct CpuMeter {
    at: std::time::Instant,
    generator: Option<(u32, SchedStat)>,
    controller: Option<(u32, SchedStat)>,
    steal: Option<(u64, usize)>,
}

impl CpuMeter {
    /// Starts measuring the processes `generator` and `controller` (the
    /// threads alive at each reading count).
    pub fn start(generator: Option<u32>, controller: Option<u32>) -> CpuMeter {
        let first = |pid: Option<u32>| pid.and_then(|p| Some((p, sched_stat(p)?)));
        CpuMeter {
            at: std::time::Instant::now(),
            generator: first(generator),
            controller: first(controller),
            steal: read_steal(),
        }
    }

    /// The use since [`CpuMeter::start`]; may be called more than once
    /// (a process that may exit is read while it runs, the last reading
    /// kept). A process that has gone reads as `None`.
    pub fn read(&self) -> CpuUse {
        let secs = self.at.elapsed().as_secs_f64();
        let pct = |used_secs: f64| (secs > 0.0).then(|| used_secs / secs * 100.0);
        let ns_pct = |ns: u64| pct(ns as f64 / 1e9);
        // (busy, waiting) percentages of a process since the start.
        let since = |d: Option<(u32, SchedStat)>| {
            let (pid, a) = d?;
            let b = sched_stat(pid)?;
            Some((
                ns_pct(b.run_ns.saturating_sub(a.run_ns))?,
                ns_pct(b.delay_ns.saturating_sub(a.delay_ns))?,
            ))
        };
        let steal_pct = self.steal.zip(read_steal()).and_then(|((a, n), (b, _))| {
            // USER_HZ is 100 on every Linux architecture baton builds for.
            pct(b.saturating_sub(a) as f64 / 100.0 / n.max(1) as f64)
        });
        let (generator_busy_pct, generator_wait_pct) = since(self.generator).unzip();
        let (controller_busy_pct, controller_wait_pct) = since(self.controller).unzip();
        CpuUse {
            generator_wait_pct,
            controller_wait_pct,
            steal_pct,
            generator_busy_pct,
            controller_busy_pct,
        }
    }
}

/// A process's threads' time on a CPU and waiting for one, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct SchedStat {
    run_ns: u64,
    delay_ns: u64,
}

/// [`SchedStat`] of every live thread of `pid`.
fn sched_stat(pid: u32) -> Option<SchedStat> {
    let mut sum = SchedStat::default();
    let mut any = false;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue;
        };
        if let Some(s) = parse_schedstat(&text) {
            sum.run_ns += s.run_ns;
            sum.delay_ns += s.delay_ns;
            any = true;
        }
    }
    any.then_some(sum)
}

/// The first two fields of a `schedstat` file: nanoseconds on a CPU, and
/// runnable but waiting for one.
fn parse_schedstat(text: &str) -> Option<SchedStat> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some(SchedStat {
        run_ns: fields.next()??,
        delay_ns: fields.next()??,
    })
}

fn read_steal() -> Option<(u64, usize)> {
    parse_stat_steal(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The steal ticks of `/proc/stat`'s `cpu` line (all CPUs) and how many
/// `cpuN` lines there are.
fn parse_stat_steal(text: &str) -> Option<(u64, usize)> {
    let all = text.lines().find(|l| l.starts_with("cpu "))?;
    // cpu user nice system idle iowait irq softirq steal ...
    let steal = all.split_whitespace().nth(8)?.parse().ok()?;
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some((steal, cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }

    #[test]
    fn the_default_follows_the_affinity_mask() {
        // In a thread of its own, so the test runner's threads keep their
        // mask.
        std::thread::spawn(|| {
            let all = allowed();
            assert!(!all.is_empty(), "the mask is readable on Linux");
            assert_eq!(default_threads(), all.len());
            let first = all[0].to_string();
            assert_eq!(pin_current_thread(&first).unwrap(), 1);
            assert_eq!(allowed(), vec![all[0]]);
            assert_eq!(default_threads(), 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn reads_the_kernels_accounting() {
        assert_eq!(
            parse_schedstat("2301 91616 1\n"),
            Some(SchedStat {
                run_ns: 2301,
                delay_ns: 91616
            })
        );
        assert_eq!(parse_schedstat("2301\n"), None);
        let stat = "cpu  1485691 30419 387593 453209 5022 0 44466 7591 0 0\n\
                    cpu0 716696 16677 197046 247896 1575 0 22724 3663 0 0\n\
                    cpu1 768994 13742 190547 205313 3447 0 21742 3928 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(parse_stat_steal(stat), Some((7591, 2)));
        assert_eq!(parse_stat_steal("intr 1\n"), None);
    }

    #[test]
    fn cpu_use_is_measured_per_process() {
        if !std::path::Path::new("/proc/self/schedstat").exists() {
            return; // a kernel without CONFIG_SCHED_INFO
        }
        let me = std::process::id();
        assert!(sched_stat(me).is_some());
        let meter = CpuMeter::start(Some(me), None);
        // Busy for a while: this process ran for at least that long.
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        while spin.elapsed() < std::time::Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let u = meter.read();
        assert!(u.generator_wait_pct.is_some_and(|p| p >= 0.0), "{u:?}");
        assert!(u.generator_busy_pct.is_some_and(|p| p > 0.0), "{u:?}");
        assert_eq!((u.controller_wait_pct, u.controller_busy_pct), (None, None));
        // A process that is not there reads as unknown.
        let gone = CpuMeter::start(Some(u32::MAX), None).read();
        assert_eq!(
            (gone.generator_wait_pct, gone.generator_busy_pct),
            (None, None)
        );
    }
}
