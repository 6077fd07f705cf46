//! "Zero allocation per message": the emulator (and the responder it runs
//! against, in the same process) allocate the same number of times in a
//! short run and in a run three times as long, although the long run
//! handles many more messages. Nothing here depends on speed: however
//! slow the machine, the long run moves more messages and allocates no
//! more.

use baton_bench::emulator::{self, Config};
use baton_bench::responder::{Responder, ResponderMode};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn run(duration: Duration) -> (u64, u64) {
    let r = Responder::start(
        "127.0.0.1:0".parse().unwrap(),
        1,
        ResponderMode::Template,
        None,
    )
    .unwrap();
    let mut c = Config::new(r.local_addr(), 2, duration);
    c.threads = 1;
    c.macs = 10;
    let before = ALLOCS.load(Ordering::Relaxed);
    let data = emulator::run(&c).unwrap();
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    let responses: u64 = data
        .switches
        .iter()
        .flat_map(|s| s.per_segment.iter())
        .map(|c| c.responses)
        .sum();
    drop(data);
    r.stop();
    (allocs, responses)
}

#[test]
fn allocations_do_not_grow_with_messages() {
    // Warm up lazily initialised statics (thread names, ...).
    let _ = run(Duration::from_millis(100));
    let (short_allocs, short_msgs) = run(Duration::from_millis(300));
    let (long_allocs, long_msgs) = run(Duration::from_millis(900));
    eprintln!(
        "short: {short_allocs} allocations, {short_msgs} responses; long: {long_allocs}, {long_msgs}"
    );
    assert!(long_msgs > short_msgs, "{long_msgs} vs {short_msgs}");
    // Per-second bins grow with the duration, but as one allocation each.
    assert!(
        long_allocs <= short_allocs + 50,
        "{long_allocs} allocations for {long_msgs} responses vs {short_allocs} for {short_msgs}"
    );
}
