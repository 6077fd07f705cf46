//! # baton-openflow: the OpenFlow 1.0 and 1.3 wire codec
//!
//! Everything baton sends to or receives from a switch goes through this
//! crate. It does no I/O and keeps no clock: it turns bytes into values and
//! values into bytes, and nothing else.
//!
//! ## Layout
//! - [`header`]: `ofp_header`, stream framing ([`header::frame`]) and the
//!   declarative per-version tables of message types with their length
//!   rules (after Open vSwitch's `ofp-msgs.h`), and [`MsgKind`], what each
//!   raw type means whatever the version, for dispatch.
//! - [`types`]: newtypes shared by both versions ([`DatapathId`],
//!   [`PortNo`], [`Xid`], ...); [`switch_config`]: the one body laid out
//!   the same in both.
//! - [`hello`]: HELLO bodies and version negotiation.
//! - [`v10`]: OpenFlow 1.0.0, every message a controller sends or receives.
//! - [`v13`]: OpenFlow 1.3.5, every message a controller sends or receives,
//!   OXM matches, instructions, groups, meters and multipart.
//! - [`packet`]: extracting the exact match of a frame (Ethernet, 802.1Q,
//!   ARP, IPv4/6, TCP, UDP, ICMP/ICMPv6), the per-flow-request step.
//! - [`neutral`]: version-neutral messages, what applications need most
//!   (a parsed packet-in, "install this match -> these actions",
//!   packet-out, any message decoded in its own version), so an
//!   application is written once and runs against either version.
//!
//! ## Two forms per message
//! Each version has an owned `Message` enum with `decode` and `encode`, for
//! everything. The hot messages (PACKET_IN, FLOW_MOD, PACKET_OUT, ECHO,
//! BARRIER) also have a borrowing *view* that reads fields in place from the
//! received bytes, and encoders that append straight into a caller-owned
//! `Vec<u8>`: once that buffer has grown to its working size, the hot path
//! allocates nothing (a test with a counting allocator checks this).
//!
//! ## The no-panic contract
//! No input makes a decoder panic, loop without end or allocate more than a
//! small multiple of the input's length: every read goes through
//! [`wire::Reader`], which returns an error instead of indexing out of
//! bounds, and every length field is checked before it is trusted. Once a
//! view's constructor has succeeded, none of its accessors panics. Encoders
//! never panic; an owned message whose contents cannot fit a 16-bit length
//! is the caller's bug and is written with a saturated length. Errors are
//! [`DecodeError`]s that say what was wrong, where, and which OFPT_ERROR
//! type and code to send back ([`DecodeError::reply`]). cargo-fuzz targets
//! (`crates/openflow/fuzz`) hold the decoders to this contract.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
pub mod hello;
pub mod neutral;
pub mod packet;
pub mod switch_config;
pub mod types;
pub mod v10;
pub mod v13;
pub mod wire;

pub use error::{DecodeError, ErrorCode, ErrorKind};
pub use header::{Header, MsgKind, frame};
pub use types::{BufferId, Cookie, DatapathId, MacAddr, PortNo, Version, Xid};
