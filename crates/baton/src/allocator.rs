//! The process's memory allocator: jemalloc, with its background threads
//! giving freed pages back to the system.
//!
//! Why not glibc's: a long-running controller frees memory in bursts, and
//! glibc keeps what is freed in the middle of its heap. In the 10-minute
//! soak with 10,000 switches and the network services (BENCHMARKS.md), a
//! MAC flood aging out of the full million-host table and refilling it
//! left the heap in use flat but grew RSS by 8-10% in those minutes, its
//! free chunks growing from 46 to 72-112 MiB; `malloc_trim` gave them back
//! but held the allocator's locks for 17-120 ms. With jemalloc the same
//! soak's RSS rose 1.9% in the aging minute and ended 1.0% below the
//! first minute's. Why not mimalloc: tried first, it left the learning
//! switch's 10,000 growing tables 22% larger (Tried and not kept).

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Starts jemalloc's background threads, which give freed pages back to
/// the system once they have gone unused for its decay time (10 s).
/// Without them that happens only as the process allocates and frees: a
/// learning switch whose tables have reached their bound does neither,
/// and kept the pages its tables' growth had freed for the rest of a soak
/// (889.8 MiB from the second minute to the tenth, against 798.2 with
/// the threads).
pub fn purge_in_background() {
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(true) {
        tracing::warn!(error = %e, "jemalloc's background threads did not start: freed memory goes back to the system only as the controller allocates");
    }
}
