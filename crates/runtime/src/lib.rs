//! # baton-runtime: connections, scheduling, batching, and the application API
//!
//! The runtime is the only part of baton that touches sockets and threads.
//! It accepts OpenFlow 1.0 and 1.3 switches, negotiates the version,
//! completes the handshake, keeps connections alive, and runs every
//! switch's messages through the application pipeline on worker threads.
//!
//! ## Design, and where it comes from
//! - **Run to completion** (Beacon §5.2.2, McNettle §5.1): a message is
//!   read, parsed, handled and answered on one core; the only hand-off is
//!   in the `shared-queue` scheduler, kept for comparison.
//! - **Schedulers** ([`SchedulerKind`], seed 000 §3.2): `fair` (default),
//!   `shared-queue`, `static-partition`, `dynamic-partition`,
//!   `round-robin`. All drive one engine (`engine.rs`) and differ only in
//!   which switch a worker serves next. Weighted max-min fairness: a
//!   switch of weight *w* is offered *w* reads per round.
//! - **Input batching** ([`ibt`], seed 000 Fig. 4): small reads, and a
//!   batch of up to IBT messages that may span switches; IBT adapts to
//!   throughput and is held under the batching-delay upper bound (BDU).
//!   `--batching static` gives NOX/Beacon's one-large-read batches.
//! - **Output batching** (seed 002 Alg. 2-3, thesis §4.2.3.1): replies are
//!   staged per switch and written with one `write` per switch per batch; a
//!   full socket waits for writability; a worker that finds another one
//!   writing to a switch does its other writes first.
//! - **Memory** (McNettle §5.3, thesis §4.2.2.6): per-switch read and
//!   staging buffers are reused; the hot path allocates nothing per
//!   message. Every buffer is bounded: a switch whose unsent output passes
//!   [`Config::max_output`] is disconnected with a log line.
//! - **State** (McNettle §4): switch-local application state needs no lock,
//!   because a switch is served by one worker at a time (the task state
//!   machine in `switch.rs`); shared state is the application's own.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod app;
pub mod config;
mod conn;
mod engine;
pub mod ibt;
mod runtime;
pub mod sched;
pub mod stats;
mod switch;

pub use app::{App, Flow, Network, PacketInBatch, PacketInEvent, SwitchCtx};
pub use config::{Batching, Config, SchedulerKind, parse_duration, parse_weight};
pub use engine::VERSIONS;
pub use runtime::Runtime;
pub use stats::Snapshot;
pub use switch::{SendError, SwitchId, SwitchInfo};
