//! # baton-bench: a cbench-compatible switch emulator and benchmark runner
//!
//! `baton bench` emulates N OpenFlow switches (1.0 by default, 1.3 on
//! request) that connect to **any** controller, complete the handshake and
//! send PACKET_INs carrying frames from M source MACs per switch, the way
//! cbench does, and counts the FLOW_MODs and PACKET_OUTs that come back.
//! On top of cbench's throughput and latency modes it offers the
//! evaluation method of Maestro §4: switches sending at set,
//! possibly skewed rates, schedules of changing aggregate rates, a
//! low-rate probe switch whose end-to-end delay is reported apart, and
//! each switch's deviation from its max-min fair share.
//!
//! ## Layout
//! - [`spec`]: the load to offer (`--mode`, `--rates`, `--phases`) and the
//!   [`spec::Schedule`] it becomes. No I/O.
//! - [`frames`]: the Ethernet frames inside the PACKET_INs and the
//!   addressing plan.
//! - [`switch`]: one switch's OpenFlow behaviour (handshake, replies,
//!   classifying responses), without sockets.
//! - [`emulator`]: the threads, the epoll loops and the coordinator; the
//!   only module of the emulator that touches sockets and clocks.
//! - [`stats`]: Jain's index, max-min fair shares, deviation CDFs,
//!   percentiles, controller CPU time. Pure functions.
//! - [`report`]: turns raw results into the figures of a run, the terminal
//!   table, the JSON and the one-line summary.
//! - [`plot`]: SVG (and, when a font is found, PNG) charts.
//! - [`responder`]: `baton bench responder`, the do-nothing controller that
//!   is the ceiling any controller can reach on a machine.
//! - [`compare`]: `baton bench compare`, one scenario against several
//!   controllers started side by side, interleaved, medians and ratios.
//! - [`cpus`]: the CPUs the benchmark may run on, pinning, and the default
//!   thread count (one per CPU of the affinity mask).
//! - [`cbench`]: real cbench as a peer of the emulator in `compare`: its
//!   command line for a case, running it, reading its output.
//! - [`topology`]: `baton bench --topology`, an emulated network of linked
//!   switches and hosts (`baton-netemu`) against a controller, with its
//!   REST API's view of the network checked beside it.
//! - [`cli`]: the command line ([`cli::BenchArgs`], [`cli::main`]).
//!
//! ## Cost per request, and what the ceiling measures
//! Each emulator thread owns a subset of the switches and runs its own
//! event loop; a request is a patched copy of a pre-encoded PACKET_IN
//! appended to a per-connection buffer (64 KiB, cbench's `BUFLEN`) that is
//! written once per loop iteration; a response is read in place from a
//! 128 KiB read buffer; no message allocates. The responder costs less per
//! request than any generator, so with one core each, `bench` against
//! `responder` measures the generator: a controller's ratio to the
//! responder is comparable between two tools only if they cost about the
//! same per request. In throughput mode the emulator writes as cbench does
//! ([`emulator::Writes`]); BENCHMARKS.md ("cbench and `baton bench` side by
//! side") compares the two tools' costs and figures.
#![deny(missing_docs)]

pub mod cbench;
pub mod cli;
pub mod compare;
pub mod cpus;
pub mod emulator;
pub mod frames;
pub mod plot;
pub mod report;
pub mod responder;
pub mod spec;
pub mod stats;
pub mod switch;
pub mod topology;

use std::fmt;

/// An error that ends a benchmark, with a message for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    /// An error saying `msg`.
    pub fn new(msg: impl Into<String>) -> Error {
        Error(msg.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<spec::SpecError> for Error {
    fn from(e: spec::SpecError) -> Error {
        Error(e.0)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error(e.to_string())
    }
}
