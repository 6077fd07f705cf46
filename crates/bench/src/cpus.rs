//! The CPUs the benchmark may run on: the calling thread's affinity mask
//! (what `taskset` set), pinning to a `taskset -c` style list, and the
//! default thread count that follows from them.
//!
//! Threads inherit the mask of the thread that starts them, and child
//! processes that of their parent, so pinning the calling thread before
//! starting the emulator's threads (or cbench) pins them all.
//!
//! [`WaitMeter`] says how long the generator and the controller waited
//! for a CPU during a run: on a shared machine another process on the
//! pinned CPUs, or the hypervisor taking them, lowers a figure without
//! any fault of the controller.

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

/// How long the benchmark's own processes waited for a CPU over an
/// interval, as a percentage of its wall time: the time their threads were
/// runnable but not running (`/proc/PID/task/*/schedstat`, run delay), and
/// the share of the CPUs' time the hypervisor took (`/proc/stat`, steal).
/// A load generator and a controller pinned to CPUs of their own wait
/// little; on a shared machine another process on those CPUs shows here,
/// and the figures of that run are the worse for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Wait {
    /// The load generator's threads (the emulator, or cbench), percent of
    /// wall time (summed over threads).
    pub generator_pct: Option<f64>,
    /// The controller's threads, percent of wall time (summed over
    /// threads).
    pub controller_pct: Option<f64>,
    /// Percent of the machine's CPU time stolen by the hypervisor.
    pub steal_pct: Option<f64>,
}

/// A [`Wait`] measurement under way.
#[derive(Debug, Clone, Copy)]
pub struct WaitMeter {
    at: std::time::Instant,
    generator: Option<(u32, u64)>,
    controller: Option<(u32, u64)>,
    steal: Option<(u64, usize)>,
}

impl WaitMeter {
    /// Starts measuring the processes `generator` and `controller` (the
    /// threads alive at each reading count).
    pub fn start(generator: Option<u32>, controller: Option<u32>) -> WaitMeter {
        let first = |pid: Option<u32>| pid.and_then(|p| Some((p, run_delay_ns(p)?)));
        WaitMeter {
            at: std::time::Instant::now(),
            generator: first(generator),
            controller: first(controller),
            steal: read_steal(),
        }
    }

    /// The wait since [`WaitMeter::start`]; may be called more than once
    /// (a process that may exit is read while it runs, the last reading
    /// kept). A process that has gone reads as `None`.
    pub fn read(&self) -> Wait {
        let secs = self.at.elapsed().as_secs_f64();
        let pct = |x: f64| (secs > 0.0).then(|| (x / secs * 100.0).max(0.0));
        let delay = |d: Option<(u32, u64)>| {
            let (pid, a) = d?;
            pct(run_delay_ns(pid)?.saturating_sub(a) as f64 / 1e9)
        };
        let steal_pct = self.steal.zip(read_steal()).and_then(|((a, n), (b, _))| {
            // USER_HZ is 100 on every Linux architecture baton builds for.
            pct(b.saturating_sub(a) as f64 / 100.0 / n.max(1) as f64)
        });
        Wait {
            generator_pct: delay(self.generator),
            controller_pct: delay(self.controller),
            steal_pct,
        }
    }
}

/// The run delay of every live thread of `pid`, summed, nanoseconds.
pub fn run_delay_ns(pid: u32) -> Option<u64> {
    let mut sum = 0;
    let mut any = false;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue;
        };
        if let Some(d) = parse_schedstat_delay(&text) {
            sum += d;
            any = true;
        }
    }
    any.then_some(sum)
}

/// The second field of a `schedstat` file: nanoseconds runnable but
/// waiting for a CPU.
fn parse_schedstat_delay(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
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
        assert_eq!(parse_schedstat_delay("2301 91616 1\n"), Some(91616));
        assert_eq!(parse_schedstat_delay("2301\n"), None);
        let stat = "cpu  1485691 30419 387593 453209 5022 0 44466 7591 0 0\n\
                    cpu0 716696 16677 197046 247896 1575 0 22724 3663 0 0\n\
                    cpu1 768994 13742 190547 205313 3447 0 21742 3928 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(parse_stat_steal(stat), Some((7591, 2)));
        assert_eq!(parse_stat_steal("intr 1\n"), None);
    }

    #[test]
    fn a_wait_is_measured_per_process() {
        if !std::path::Path::new("/proc/self/schedstat").exists() {
            return; // a kernel without CONFIG_SCHED_INFO
        }
        let me = std::process::id();
        assert!(run_delay_ns(me).is_some());
        let w = WaitMeter::start(Some(me), None).read();
        assert!(w.generator_pct.is_some_and(|p| p >= 0.0), "{w:?}");
        assert_eq!(w.controller_pct, None);
        // A process that is not there reads as unknown.
        let gone = WaitMeter::start(Some(u32::MAX), None).read();
        assert_eq!(gone.generator_pct, None);
    }
}
