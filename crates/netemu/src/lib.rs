//! # baton-netemu: an emulated OpenFlow network on one thread
//!
//! cbench's switches have no links and no hosts, so it cannot measure
//! what a controller's network services are for. This crate emulates a
//! network instead (issue 55, part 2, `baton bench --topology`): many
//! switches joined by links with a delay, hosts on their edge ports, and
//! link and switch events on a schedule, connected to a real controller
//! over TCP. An LLDP PACKET_OUT on a port arrives as a PACKET_IN on the
//! linked switch's peer port, so the controller discovers the topology;
//! hosts ARP and send traffic, so it learns them and installs paths; the
//! emulator reports when the switches were up, how fast paths were set
//! up, what was lost, and how long each event cut pairs off.
//!
//! Every emulated switch is `baton-switch`'s I/O-free core (real flow
//! tables: exact and wildcard matches, priorities, idle and hard
//! timeouts, FLOW_REMOVED; OpenFlow 1.0 or 1.3), so a packet that matches
//! an installed flow is forwarded by the emulator, not sent to the
//! controller, and an installed path is seen to carry a pair's packets
//! end to end.
//!
//! ## Design: an I/O-free core and a small shell
//! As `baton_switch::inproc` and quinn-proto: [`Network`] is given bytes
//! and the time and gives back bytes and events, so tests drive it on a
//! clock of their own; [`run`] drives it with sockets and the real clock.
//! One core: 10,000 switches (`torus:100x100`) are arrays indexed by
//! number, frames in flight one heap with reused buffers.
//!
//! ## What each module owns
//! - [`graph`]: the network as a compact graph (switches, links, host
//!   ports, host addresses), and netlab's generators.
//! - [`input`]: topologies from files (an edge list; the contract crate's
//!   JSON) and [`input::load`], which takes a generator's name or a file.
//! - [`schedule`]: the event schedule (`at 10s cut s3-s7; ...`), parsed
//!   and resolved against a graph.
//! - [`config`]: what a run emulates and how ([`Config`]).
//! - [`queue`]: frames in flight, in time order.
//! - [`frames`]: the ARP and data frames hosts send and read.
//! - [`traffic`]: hosts and pairs: what they send when, what they do
//!   with what they receive, and the latencies that measures.
//! - [`network`]: the I/O-free core: switches, links, hosts, events.
//! - [`report`]: what a run measured ([`Report`]).
//! - [`driver`]: the shell: sockets, the poller, the clock.
//!
//! ## Example
//! ```no_run
//! use baton_netemu::{Config, Graph, Schedule, run};
//! let mut cfg = Config::new("127.0.0.1:6653".parse()?, Graph::named("fat-tree:4")?);
//! cfg.events = Schedule::parse("at 2s cut a1-c1")?;
//! let report = run(cfg)?;
//! println!("{report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod config;
pub mod driver;
pub mod error;
pub mod frames;
pub mod graph;
pub mod input;
pub mod network;
pub mod queue;
pub mod report;
pub mod schedule;
pub mod traffic;

pub use config::{Config, ConnectPlan, Pairs, SwitchOptions, Traffic};
pub use driver::run;
pub use error::{Error, Result};
pub use graph::{End, Graph, HostId, Link, LinkId, SwitchId, SwitchNode};
pub use input::{FileHosts, load};
pub use network::{Network, Output};
pub use report::{EventReport, PairReport, Report, Summary};
pub use schedule::Schedule;
