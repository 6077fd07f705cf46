//! # baton-openflow: the OpenFlow 1.0 and 1.3 wire codec
//!
//! Everything baton sends to or receives from a switch goes through this
//! crate. It does no I/O and keeps no clock: it turns bytes into values and
//! values into bytes, and nothing else.
//!
//! ## Layout
//! - [`version`]: the versions baton speaks; [`types`]: the values both
//!   share; [`switch_config`]: the one body laid out the same in both;
//!   [`wire`]: bounds-checked reading and writing, the only place
//!   that indexes raw bytes; [`error`]: decode errors and the OFPT_ERROR
//!   each one calls for.
//! - [`header`]: `ofp_header`, stream framing ([`header::frame`]), the
//!   declarative per-version tables of message types with their meaning
//!   ([`MsgKind`]) and length rules (after Open vSwitch's `ofp-msgs.h`),
//!   and the one header check ([`Header::check`]) every decoder and view
//!   goes through.
//! - [`hello`]: HELLO bodies and version negotiation; [`echo`]: ECHO and
//!   BARRIER, laid out the same in both versions.
//! - [`v10`]: OpenFlow 1.0.0, every message a controller sends or receives.
//! - [`v13`]: OpenFlow 1.3.5, every message a controller sends or receives,
//!   OXM matches, instructions, groups, meters and multipart.
//! - [`packet`]: extracting the header fields of a frame ([`packet::FlowKey`]:
//!   Ethernet, 802.1Q, ARP, IPv4/6, TCP, UDP, ICMP/ICMPv6), the
//!   per-flow-request step. It knows nothing of either version's match;
//!   each version writes the exact match of a key itself.
//! - [`neutral`]: version-neutral messages, what applications need most
//!   (a parsed packet-in, "install this match -> these actions",
//!   packet-out, ports, any message decoded in its own version), so an
//!   application is written once and runs against either version.
//!
//! ## One design for every message (smoltcp's `wire`)
//! Each version has an owned `Message` enum with `decode`, `encode` and
//! `encoded_len`, for everything. The hot messages (PACKET_IN, FLOW_MOD,
//! PACKET_OUT, ECHO, BARRIER) have, in both versions and in one module per
//! message:
//! - a *view* `XxxView<T: AsRef<[u8]>>` whose getters read each field at
//!   its offset in the buffer (a private `mod field` table of offsets),
//!   with setters where `T: AsMut<[u8]>`; `new_checked` runs the header
//!   check and checks every nested length once, `new_unchecked` checks
//!   nothing, `into_inner` gives the buffer back;
//! - an *owned form* (`v10::PacketIn`, `v13::FlowMod`, ...) with `parse`
//!   (from a checked view), `emit` (the whole message, appended) and
//!   `buffer_len` (its encoded length);
//! - encoders that append the message to a caller-owned `Vec<u8>` from
//!   borrowed inputs: once that buffer has grown to its working size, the
//!   hot path allocates nothing (a test with a counting allocator checks
//!   this). The owned form's `emit` calls them, and `Message::decode`
//!   reads through the views: one way to read and one way to write each
//!   message.
//!
//! ## The no-panic contract
//! No input makes a decoder panic, loop without end or allocate more than a
//! small multiple of the input's length: every read goes through
//! [`wire::Reader`] or the field readers of [`wire`], which return an error
//! or zero instead of indexing out of bounds, and every length field is
//! checked before it is trusted. Once a view's `new_checked` has
//! succeeded, none of its accessors panics and its iterators over checked
//! regions (a 1.3 match's OXMs, instructions' headers) yield no error; a
//! view made with `new_unchecked` over bytes `new_checked` would refuse
//! reads missing fields as zero and still never panics. Encoders never
//! panic; an owned message whose contents cannot fit a 16-bit length is
//! the caller's bug and is written with a saturated length. Errors are
//! [`DecodeError`]s that say what was wrong, where, and which OFPT_ERROR
//! type and code to send back ([`DecodeError::reply`]). cargo-fuzz targets
//! (`crates/openflow/fuzz`, through [`fuzzing`]) hold the decoders and
//! every view to this contract.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod echo;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
pub mod hello;
pub mod neutral;
pub mod packet;
pub mod port_counters;
pub mod switch_config;
mod twin;
pub mod types;
pub mod v10;
pub mod v13;
pub mod version;
pub mod wire;

pub use error::{DecodeError, ErrorCode, ErrorKind};
pub use header::{Header, MsgKind, frame};
pub use types::{BufferId, Cookie, DatapathId, MacAddr, PortNo, Xid};
pub use version::Version;
