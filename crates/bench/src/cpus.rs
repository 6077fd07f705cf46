//! The CPUs the benchmark may run on: the calling thread's affinity mask
//! (what `taskset` set), pinning to a `taskset -c` style list, and the
//! default thread count that follows from them.
//!
//! Threads inherit the mask of the thread that starts them, and child
//! processes that of their parent, so pinning the calling thread before
//! starting the emulator's threads (or cbench) pins them all.

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
}
