//! # baton-switch: an extensible OpenFlow software switch, as a library
//!
//! A switch that a program links in, as Mirage's is (Mirage §III-B): a
//! network function can be a switch with a few lines of its own logic
//! ([`ext`]), and a test can run a whole network of switches in one
//! process ([`inproc`]). It speaks OpenFlow 1.0 or 1.3 (one version per
//! switch, chosen when it is built) through the codec of
//! `baton-openflow`, so real tools (`ovs-ofctl`, `ovs-testcontroller`)
//! can drive it.
//!
//! ## Design: an I/O-free core, drivers around it
//! The core reads no clock and opens no socket (quinn-proto's shape).
//! [`switch::Switch`] takes frames and the time and sends frames out
//! through a [`datapath::Transmit`] it is handed; messages for
//! controllers wait as [`datapath::Event`]s. [`proto::Connection`] is one
//! controller connection: bytes and time in, bytes and events out. The
//! drivers move bytes and time: [`inproc::Network`] in a test, on a clock
//! the test moves; [`io::Runner`] in a program, on the real clock, with
//! sockets to controllers and real interfaces.
//!
//! ## What each module owns
//! - [`key`]: the packed lookup key of a packet and a flow's match as
//!   value and mask over it ([`key::FlowMatch`]), shared by both versions;
//!   it holds the pipeline fields `metadata` and `tunnel_id` beside the
//!   packet's (`tunnel_id` is 0 on arrival: the switch has no tunnel
//!   ports).
//! - [`match10`], [`match13`]: compiling each version's match into a
//!   [`key::FlowMatch`], with 1.0 normalisation and 1.3's checks
//!   (prerequisites, masks, values).
//! - [`classifier`]: tuple space search over the flows of a table, and
//!   the exact-match cache in front of it.
//! - [`table`]: a flow table: entries, counters, timeouts, and the table
//!   half of flow-mod semantics (replace, overlap, strict and loose
//!   selection, filters).
//! - [`action`]: actions, instructions and the 1.3 action set in one
//!   form for both versions, and their compilers and checks.
//! - [`rewrite`]: rewriting frames in place (set-field, neighbour
//!   discovery fields among them; VLAN; MPLS; PBB; TTLs and their copies
//!   between MPLS and IP) with checksum updates. Every 1.3 action type
//!   runs and every basic match field matches; what stays refused is
//!   set-field (its prerequisites met) on `in_port`, `in_phy_port`,
//!   `metadata`, `eth_type` and `ipv6_exthdr` (`OFPBAC_BAD_SET_TYPE`)
//!   and on `ip_proto` (`OFPBAC_MATCH_INCONSISTENT` in a flow, whose
//!   transport fields it would change the meaning of; `BAD_SET_TYPE` in
//!   a packet-out or a group bucket).
//! - [`group`], [`meter`]: the 1.3 group and meter tables.
//! - [`port`], [`buffer`]: ports with state and counters; the bounded pool
//!   of frames sent to controllers.
//! - [`datapath`]: ports, groups, meters, buffers and extensions together,
//!   and executing actions on a packet (output, packet-in, groups).
//! - [`mods`]: the version-neutral forms of flow, group and meter mods,
//!   and the switch's [`Config`].
//! - [`switch`]: the tables beside the datapath, the pipeline, and the
//!   version-neutral halves of flow, group, meter and port mods,
//!   packet-outs and expiry.
//! - [`roles`]: controller roles and generation ids (1.3).
//! - [`proto`]: the per-controller protocol machine, with [`proto::v10`]
//!   and [`proto::v13`] applying each version's messages.
//! - [`ext`]: the extension API: experimenter messages, extra actions, a
//!   packet hook.
//! - [`inproc`]: the in-process datapath: ports are queues; a network of
//!   switches and controllers in one thread.
//! - [`io`]: the only module with sockets, threads and a clock: the event
//!   loop ([`io::Runner`], mio), controller targets (`tcp:`, `ptcp:`) with
//!   reconnect backoff, the AF_PACKET datapath ([`io::afpacket`], mapped
//!   rings, link changes from rtnetlink through [`io::netlink`]) and
//!   in-process ports for a threaded switch ([`io::shared`]).
//!
//! ## Contract
//! Nothing a controller sends makes the switch panic: decode errors get
//! the error the codec names, refused requests the error the
//! specification names ([`error::OfError`]), and a fuzz-style property
//! test holds the protocol machine to it. The forwarding path allocates
//! nothing per packet once its buffers have grown: the classifier and
//! cache do not allocate on lookup, and packet copies come from reused
//! buffers.
#![deny(missing_docs)]

pub mod action;
pub mod buffer;
pub mod classifier;
pub mod datapath;
pub mod error;
pub mod ext;
pub mod group;
pub mod inproc;
pub mod io;
pub mod key;
pub mod match10;
pub mod match13;
pub mod meter;
pub mod mods;
pub mod port;
pub mod proto;
pub mod rewrite;
pub mod roles;
pub mod switch;
pub mod table;
#[doc(hidden)]
pub mod testutil;

pub use datapath::{Event, Transmit};
pub use error::OfError;
pub use ext::{Extension, Verdict};
pub use port::PortSpec;
pub use proto::Connection;
pub use switch::{Config, Switch};
