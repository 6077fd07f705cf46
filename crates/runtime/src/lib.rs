//! # baton-runtime: connections, scheduling, batching, and the application API
//!
//! The runtime is the only part of baton that touches sockets and threads.
//! It accepts OpenFlow 1.0 and 1.3 switches, runs each one's protocol
//! session, and runs every switch's messages through the application
//! pipeline on worker threads.
//!
//! ## How a message goes through it
//! 1. **I/O** (`io.rs`): a scheduler learns from epoll that a switch has
//!    input, and a worker reads it into the switch's receive buffer
//!    (`framing.rs`), which chops the stream into whole messages in place.
//!    `io.rs` owns every switch's socket, by the switch table's slot
//!    index; a socket's failures are its own type, joined with the
//!    session's close reasons only where a switch is closed
//!    (`closed.rs`).
//! 2. **Batching** (`engine.rs`): a worker collects messages from the
//!    switches it serves into a batch of up to IBT messages (Maestro §3.3,
//!    Fig. 4; [`ibt`]).
//! 3. **Session** ([`session`]): each message goes through its switch's
//!    protocol session, which does the handshake, keepalive and error
//!    replies itself and turns the rest into events, each PACKET_IN
//!    checked and parsed once. The session does no I/O: bytes and time in,
//!    events and replies out.
//! 4. **Pipeline** (`pipeline.rs`): the events go to the applications in
//!    order ([`App`]), packet-ins in batches ([`PacketInBatch`]), each
//!    switch's events in arrival order.
//! 5. **Output**: replies are staged per switch and written with one
//!    `write` per switch per batch (Beacon Alg. 2-3).
//!
//! ## Design, and where it comes from
//! - **Run to completion** (Beacon §5.2, McNettle §5.1): a message is
//!   read, parsed, handled and answered on one core; the only hand-off is
//!   in the `shared-queue` scheduler, kept for comparison.
//! - **Schedulers** ([`SchedulerKind`], Maestro §3.2): `fair` (default),
//!   `shared-queue`, `static-partition`, `dynamic-partition`,
//!   `round-robin`. All drive one engine and differ only in which switch a
//!   worker serves next. Weighted max-min fairness: a switch of weight *w*
//!   is offered *w* quanta per round.
//! - **Memory** (McNettle §5.3, Maestro thesis §4.2.2.6): read and
//!   staging buffers are reused; the hot path allocates nothing per
//!   message. A switch holds them only while they hold its bytes: a
//!   worker takes back the empty ones when it releases a switch and lends
//!   them to the next it serves, so it reads and writes memory still in
//!   its cache (`conn.rs`, `SpareBuffers`). Every buffer is bounded: a switch whose unsent output
//!   reaches a quarter of [`Config::max_output`] is not read until it has
//!   read it all (a slow reader is held back by TCP's flow control, not
//!   dropped), and one whose output passes the limit is disconnected with
//!   a log line.
//! - **State** (McNettle §4): switch-local application state
//!   ([`App::Switch`]) needs no lock, because a switch is served by one
//!   worker at a time (the task state machine in `table.rs`); state shared
//!   by switches is the application's own.
//! - **Views** ([`env`](mod@env), Maestro thesis §3.2): network state that
//!   applications share (topology, hosts, routes) lives in one environment
//!   of typed, versioned, immutable views; readers take a consistent
//!   snapshot without locking, and applications hear of new versions of
//!   the views they read off the packet-in path. A transaction
//!   ([`env::transaction`], McNettle §4.4) reads and writes several views
//!   and commits all or nothing.
//! - **DAGs** ([`dag`], Maestro thesis §3.2.4-3.2.5): applications
//!   composed by their input and output views, run on a snapshot and
//!   committed together; conflicting DAGs run in turn.
//! - **TLS** ([`tls`]): a listener may speak OpenFlow over TLS (rustls);
//!   a switch's socket is then a TLS one (`io/transport.rs`), served by
//!   the same engine, its handshake run as its input arrives. Plain TCP
//!   pays one `match` per read and per write for it.
//! - **Testing** ([`testing`]): the same sessions and pipeline run in
//!   memory, with simulated time, so applications are tested without
//!   sockets.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod app;
pub mod config;
pub mod context;
pub mod control;
pub mod dag;
pub mod env;
pub mod event;
pub mod ibt;
pub mod mastership;
pub mod network;
pub mod requests;
pub mod sched;
pub mod session;
pub mod stats;
mod switch;
pub mod testing;
pub mod tls;

mod batch;
mod closed;
mod conn;
mod controller;
mod engine;
mod failure_log;
mod framing;
mod io;
mod outbox;
pub mod pipeline;
mod policy;
mod runtime;
mod sync;
mod table;

pub use app::{AnyApp, App, Configurable, SettingsError, Verdict};
pub use config::{Batching, Config, SchedulerKind, parse_duration, parse_weight};
pub use context::{Events, PacketInBatch, SwitchCtx, WrongVersion};
pub use event::PacketIn;
pub use mastership::{Fence, Mastership};
pub use network::Network;
pub use runtime::{Runtime, recv_buffer_to_ask};
pub use session::VERSIONS;
pub use stats::Statistics;
pub use switch::{SendError, SwitchId, SwitchInfo};
