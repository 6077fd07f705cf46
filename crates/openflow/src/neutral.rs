//! Version-neutral messages: what applications need most, in a form that
//! is written once and runs against OpenFlow 1.0 and 1.3.
//!
//! Like Beacon's and Maestro's applications (learning switch, hub,
//! routing), most controller logic needs only: a received packet-in
//! ([`PacketIn`]) and its header fields ([`crate::packet::FlowKey`]);
//! "install this match -> these actions" ([`FlowSpec`],
//! [`encode_flow_add`]); "send this packet out" ([`PacketOut`],
//! [`encode_packet_out`]); the handshake and liveness messages; and any
//! other message decoded in its version's owned form ([`Message`]); ports
//! as either version describes them ([`PortDesc`]). This
//! module gives those, dispatching on the connection's
//! [`Version`](crate::Version) to the per-version views and encoders of
//! [`crate::v10`] and [`crate::v13`] (it writes no wire structure of its
//! own).
//!
//! [`ActionSpec`] and [`MatchSpec`] hold only what both versions can
//! express with the same meaning. Everything else (groups, meters,
//! multiple tables, IPv6 rewrites, ...) goes through the version modules.
//!
//! Every encoder appends to a caller-owned `out` and, once `out` has grown
//! to its working size, allocates nothing, except [`encode_hello`]
//! (connection setup only) and [`encode_error`] (off the hot path).

mod action;
mod control;
mod flow;
mod matching;
mod message;
mod packet_in;
mod packet_out;
mod port;

pub use action::ActionSpec;
pub use control::{
    encode_barrier_request, encode_echo_reply, encode_echo_request, encode_error,
    encode_features_request, encode_hello, encode_set_config,
};
pub use flow::{
    FLOW_CHECK_OVERLAP, FLOW_SEND_FLOW_REM, FlowSpec, encode_flow_add, encode_flow_delete,
    encode_flow_delete_by_cookie, encode_flow_modify13, encode_meter, encode_table_miss,
};
pub use matching::{Ipv4Prefix, L2Match, L4Match, MatchFields, MatchSpec, NetMatch, VlanMatch};
pub use message::Message;
pub use packet_in::{PacketIn, PacketInReason, encode_packet_in_no_match};
pub use packet_out::{PacketOut, PacketOutTemplate, Payload, encode_packet_out};
pub use port::{PortDesc, encode_port_desc_request};

#[cfg(test)]
mod tests;
