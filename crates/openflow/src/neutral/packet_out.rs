//! [`PacketOut`]: "send this packet out with these actions", in either
//! version (1.0.0 §5.3.6, 1.3.5 §7.3.7).

use super::action::{ActionSpec, emit_v13_actions};
use crate::types::{BufferId, PortNo, Xid};
use crate::version::Version;
use crate::{v10, v13};

/// The packet a PACKET_OUT acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Payload<'a> {
    /// A packet the switch holds in this buffer (from a PACKET_IN).
    Buffered(BufferId),
    /// A frame carried in the message.
    Frame(&'a [u8]),
}

/// "Apply these actions to this packet" (an OFPT_PACKET_OUT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketOut<'a> {
    /// The packet.
    pub payload: Payload<'a>,
    /// The port the packet came in on, which `OFPP_IN_PORT` and flooding
    /// refer to ([`PortNo::CONTROLLER`] for a packet the controller made).
    pub in_port: PortNo,
    /// The actions; none drops a buffered packet (frees its buffer).
    pub actions: &'a [ActionSpec],
}

/// Appends a PACKET_OUT (1.0.0 §5.3.6, 1.3.5 §7.3.7).
pub fn encode_packet_out(out: &mut Vec<u8>, version: Version, xid: Xid, po: &PacketOut<'_>) {
    let (buffer_id, data) = match po.payload {
        Payload::Buffered(id) => (id, &[][..]),
        Payload::Frame(frame) => (BufferId::NONE, frame),
    };
    let actions = po.actions;
    match version {
        Version::V10 => v10::encode_packet_out_with(
            out,
            xid,
            buffer_id,
            po.in_port,
            |out| {
                for a in actions {
                    a.to_v10().emit(out);
                }
            },
            data,
        ),
        Version::V13 => v13::encode_packet_out_with(
            out,
            xid,
            buffer_id,
            po.in_port,
            |out| emit_v13_actions(out, actions),
            data,
        ),
    }
}
