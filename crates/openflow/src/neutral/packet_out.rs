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

/// A PACKET_OUT whose in_port and actions are fixed, encoded once, so
/// that each copy costs a copy of its bytes with the xid and the packet
/// written in ([`PacketOutTemplate::emit`]): a switch floods every
/// packet that came in on one port with the same actions, and encoding
/// them each time cost the default pipeline a sixth of its worker
/// (perf, flooding under cbench; BENCHMARKS.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketOutTemplate {
    in_port: PortNo,
    /// The message for a buffered packet, with buffer and xid to fill in.
    bytes: Vec<u8>,
}

/// Where a PACKET_OUT's fields lie, in both versions (1.0.0 §5.3.6, 1.3.5
/// §7.3.7: the header, then `buffer_id`).
mod field {
    pub const XID: usize = 4;
    pub const BUFFER_ID: usize = 8;
}

impl PacketOutTemplate {
    /// The PACKET_OUT of `version` for packets that came in on `in_port`,
    /// with `actions`.
    pub fn new(version: Version, in_port: PortNo, actions: &[ActionSpec]) -> PacketOutTemplate {
        let mut bytes = Vec::new();
        let po = PacketOut {
            payload: Payload::Buffered(BufferId::NONE),
            in_port,
            actions,
        };
        encode_packet_out(&mut bytes, version, Xid(0), &po);
        PacketOutTemplate { in_port, bytes }
    }

    /// The port it is for.
    pub fn in_port(&self) -> PortNo {
        self.in_port
    }

    /// Appends the PACKET_OUT of `payload` with `xid`: the same bytes as
    /// [`encode_packet_out`] writes for them.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>, xid: Xid, payload: Payload<'_>) {
        let at = out.len();
        let data: &[u8] = match payload {
            Payload::Buffered(_) => &[],
            Payload::Frame(frame) => frame,
        };
        out.reserve(self.bytes.len() + data.len());
        out.extend_from_slice(&self.bytes);
        out.extend_from_slice(data);
        let msg = &mut out[at..];
        msg[field::XID..field::XID + 4].copy_from_slice(&xid.0.to_be_bytes());
        if let Payload::Buffered(id) = payload {
            msg[field::BUFFER_ID..field::BUFFER_ID + 4].copy_from_slice(&id.0.to_be_bytes());
        }
        if !data.is_empty() {
            crate::header::finish_message(out, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::PortNo;

    #[test]
    fn a_template_writes_what_the_encoder_writes() {
        let actions = [ActionSpec::output(PortNo(2)), ActionSpec::output(PortNo(4))];
        for version in [Version::V10, Version::V13] {
            let t = PacketOutTemplate::new(version, PortNo(3), &actions);
            assert_eq!(t.in_port(), PortNo(3));
            for payload in [
                Payload::Buffered(BufferId(77)),
                Payload::Frame(&[1, 2, 3, 4, 5]),
                Payload::Frame(&[]),
            ] {
                let (mut from_template, mut encoded) = (vec![9], vec![9]);
                t.emit(&mut from_template, Xid(0x0102_0304), payload);
                let po = PacketOut {
                    payload,
                    in_port: PortNo(3),
                    actions: &actions,
                };
                encode_packet_out(&mut encoded, version, Xid(0x0102_0304), &po);
                assert_eq!(from_template, encoded, "{version:?} {payload:?}");
            }
        }
    }
}
