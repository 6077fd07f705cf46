//! OpenFlow 1.0.0: every message a controller sends or receives.
//!
//! - [`decode`] turns one whole message into an owned [`Message`];
//!   [`Message::encode`] appends one to a caller-owned buffer.
//! - The hot messages have one module each, in one pattern (smoltcp's
//!   `wire`): a view over `T: AsRef<[u8]>` that reads its fields at
//!   constant offsets (setters where `T: AsMut<[u8]>`), an owned form with
//!   `parse` (from a checked view), `emit` and `buffer_len`, and
//!   allocation-free encoders that the owned form's `emit` calls:
//!   [`packet_in`], [`flow_mod`], [`packet_out`], and ECHO and BARRIER
//!   ([`EchoView`], [`BarrierView`], shared with 1.3 in [`crate::echo`]).
//!   [`Message`] decodes them through their views and encodes them through
//!   the same encoders: one way to read and one way to write each.
//! - [`ofmatch`] is the 40-byte `ofp_match` ([`Match10`]) and the exact
//!   match of a frame's key, [`action`] the actions ([`Action`],
//!   [`ActionIter`]), [`port`] `ofp_phy_port` and the port messages,
//!   [`stats`] the STATS_REQUEST / STATS_REPLY bodies, [`messages`] the
//!   other owned bodies.
//!
//! Decoding is strict enough that `decode(encode(m)) == m` and
//! `encode(decode(b)) == b` for any `b` that decodes, except for padding
//! (ignored on input, written as zeros) and bytes after the first NUL of
//! fixed string fields.

pub mod action;
pub mod flow_mod;
pub mod messages;
pub mod ofmatch;
pub mod packet_in;
pub mod packet_out;
pub mod port;
pub mod stats;

pub use crate::switch_config::SwitchConfig;
pub use crate::types::PortReason;
pub use action::{Action, ActionIter, emit_actions};
pub use flow_mod::{
    FlowMod, FlowModCommand, FlowModHead, FlowModView, encode_flow_mod, encode_flow_mod_mapped,
};
pub use messages::{
    ErrorMsg, FlowRemoved, FlowRemovedReason, PacketQueue, QueueProp, SwitchFeatures,
};
pub use ofmatch::Match10;
pub use packet_in::{PacketIn, PacketInReason, PacketInView, encode_packet_in};
pub use packet_out::{PacketOut, PacketOutView, encode_packet_out, encode_packet_out_with};
pub use port::{PhyPort, PortMod, PortStatus};
pub use stats::{StatsReply, StatsReplyBody, StatsRequest, StatsRequestBody, StatsType};

use crate::error::DecodeError;
use crate::header::{HEADER_LEN, Header, MsgType10, finish_message, start_message};
use crate::hello::Hello;
use crate::types::{PortNo, Xid};
use crate::v10::ofmatch::port_to_wire;
use crate::version::Version;
use crate::wire::{Put, Reader};

crate::twin::echo_and_barrier! {
    version: V10,
    echo_request: "1.0.0 §5.5.2",
    echo_reply: "1.0.0 §5.5.3",
    barrier: "1.0.0 §5.3.7",
}

/// One OpenFlow 1.0 message, owned (1.0.0 §5.3 to §5.5). One variant per
/// [`MsgType10`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// OFPT_HELLO (§5.5.1). 1.0 defines no body; later versions' elements
    /// are decoded if present, and a body that is not a list of elements
    /// is ignored (decoded as an empty HELLO), as §5.5.1 requires.
    Hello(Hello),
    /// OFPT_ERROR (§5.4.4).
    Error(ErrorMsg),
    /// OFPT_ECHO_REQUEST (§5.5.2) with its payload.
    EchoRequest(Vec<u8>),
    /// OFPT_ECHO_REPLY (§5.5.3) with its payload.
    EchoReply(Vec<u8>),
    /// OFPT_VENDOR (§5.5.4).
    Vendor {
        /// Vendor id.
        vendor: u32,
        /// Vendor-defined bytes after the id.
        data: Vec<u8>,
    },
    /// OFPT_FEATURES_REQUEST (§5.3.1).
    FeaturesRequest,
    /// OFPT_FEATURES_REPLY (§5.3.1).
    FeaturesReply(SwitchFeatures),
    /// OFPT_GET_CONFIG_REQUEST (§5.3.2).
    GetConfigRequest,
    /// OFPT_GET_CONFIG_REPLY (§5.3.2).
    GetConfigReply(SwitchConfig),
    /// OFPT_SET_CONFIG (§5.3.2).
    SetConfig(SwitchConfig),
    /// OFPT_PACKET_IN (§5.4.1).
    PacketIn(PacketIn),
    /// OFPT_FLOW_REMOVED (§5.4.2).
    FlowRemoved(FlowRemoved),
    /// OFPT_PORT_STATUS (§5.4.3).
    PortStatus(PortStatus),
    /// OFPT_PACKET_OUT (§5.3.6).
    PacketOut(PacketOut),
    /// OFPT_FLOW_MOD (§5.3.3).
    FlowMod(FlowMod),
    /// OFPT_PORT_MOD (§5.3.3).
    PortMod(PortMod),
    /// OFPT_STATS_REQUEST (§5.3.5).
    StatsRequest(StatsRequest),
    /// OFPT_STATS_REPLY (§5.3.5).
    StatsReply(StatsReply),
    /// OFPT_BARRIER_REQUEST (§5.3.7).
    BarrierRequest,
    /// OFPT_BARRIER_REPLY (§5.3.7).
    BarrierReply,
    /// OFPT_QUEUE_GET_CONFIG_REQUEST (§5.3.4).
    QueueGetConfigRequest {
        /// Port to query.
        port: PortNo,
    },
    /// OFPT_QUEUE_GET_CONFIG_REPLY (§5.3.4).
    QueueGetConfigReply {
        /// Port queried.
        port: PortNo,
        /// Its queues.
        queues: Vec<PacketQueue>,
    },
}

/// Decodes one whole OpenFlow 1.0 message.
///
/// `msg` must be exactly one message (as [`crate::frame`] delimits it) and
/// pass [`Header::check`] for version 1; then the body is decoded
/// strictly, the hot messages through their views.
pub fn decode(msg: &[u8]) -> Result<(Xid, Message), DecodeError> {
    let h = Header::check(msg, Version::V10)?;
    let (ty, xid) = (MsgType10::from(h.msg_type), h.xid);
    let mut r = Reader::new(msg);
    r.skip(HEADER_LEN, "ofp_header")?;
    let m = match ty {
        // 1.0.0 §5.5.1: a HELLO has no body, and a receiver must ignore
        // one if present. Elements of later versions are kept when they
        // parse; a body that does not parse is ignored as the spec says.
        MsgType10::Hello => {
            Message::Hello(Hello::decode_body(r.take_rest(), HEADER_LEN).unwrap_or_default())
        }
        MsgType10::Error => Message::Error(ErrorMsg::parse(&mut r)?),
        MsgType10::EchoRequest => Message::EchoRequest(r.take_rest().to_vec()),
        MsgType10::EchoReply => Message::EchoReply(r.take_rest().to_vec()),
        MsgType10::Vendor => Message::Vendor {
            vendor: r.u32("ofp_vendor_header.vendor")?,
            data: r.take_rest().to_vec(),
        },
        MsgType10::FeaturesRequest => Message::FeaturesRequest,
        MsgType10::FeaturesReply => Message::FeaturesReply(SwitchFeatures::parse(&mut r)?),
        MsgType10::GetConfigRequest => Message::GetConfigRequest,
        MsgType10::GetConfigReply => Message::GetConfigReply(SwitchConfig::decode_body(&mut r)?),
        MsgType10::SetConfig => Message::SetConfig(SwitchConfig::decode_body(&mut r)?),
        MsgType10::PacketIn => {
            Message::PacketIn(PacketIn::parse(&PacketInView::new_checked(msg)?)?)
        }
        MsgType10::FlowRemoved => Message::FlowRemoved(FlowRemoved::parse(&mut r)?),
        MsgType10::PortStatus => Message::PortStatus(PortStatus::parse(&mut r)?),
        MsgType10::PacketOut => {
            Message::PacketOut(PacketOut::parse(&PacketOutView::new_checked(msg)?)?)
        }
        MsgType10::FlowMod => Message::FlowMod(FlowMod::parse(&FlowModView::new_checked(msg)?)?),
        MsgType10::PortMod => Message::PortMod(PortMod::parse(&mut r)?),
        MsgType10::StatsRequest => Message::StatsRequest(StatsRequest::parse(&mut r)?),
        MsgType10::StatsReply => Message::StatsReply(StatsReply::parse(&mut r)?),
        MsgType10::BarrierRequest => Message::BarrierRequest,
        MsgType10::BarrierReply => Message::BarrierReply,
        MsgType10::QueueGetConfigRequest => {
            let port = PortNo::from_of10(r.u16("ofp_queue_get_config_request.port")?);
            r.skip(2, "ofp_queue_get_config_request.pad")?;
            Message::QueueGetConfigRequest { port }
        }
        MsgType10::QueueGetConfigReply => {
            let (port, queues) = messages::parse_queue_config_reply(&mut r)?;
            Message::QueueGetConfigReply { port, queues }
        }
        // Header::check rejected unknown types already.
        MsgType10::Unknown(t) => {
            return Err(DecodeError::new(
                crate::ErrorKind::UnknownType(t),
                1,
                "ofp_header.type",
            ));
        }
    };
    // Bodies read through a view consumed nothing from `r`; the others
    // must have consumed everything.
    if !matches!(
        ty,
        MsgType10::PacketIn | MsgType10::PacketOut | MsgType10::FlowMod
    ) {
        r.finish("message body")?;
    }
    Ok((xid, m))
}

impl Message {
    /// The message's type.
    pub fn msg_type(&self) -> MsgType10 {
        match self {
            Message::Hello(_) => MsgType10::Hello,
            Message::Error(_) => MsgType10::Error,
            Message::EchoRequest(_) => MsgType10::EchoRequest,
            Message::EchoReply(_) => MsgType10::EchoReply,
            Message::Vendor { .. } => MsgType10::Vendor,
            Message::FeaturesRequest => MsgType10::FeaturesRequest,
            Message::FeaturesReply(_) => MsgType10::FeaturesReply,
            Message::GetConfigRequest => MsgType10::GetConfigRequest,
            Message::GetConfigReply(_) => MsgType10::GetConfigReply,
            Message::SetConfig(_) => MsgType10::SetConfig,
            Message::PacketIn(_) => MsgType10::PacketIn,
            Message::FlowRemoved(_) => MsgType10::FlowRemoved,
            Message::PortStatus(_) => MsgType10::PortStatus,
            Message::PacketOut(_) => MsgType10::PacketOut,
            Message::FlowMod(_) => MsgType10::FlowMod,
            Message::PortMod(_) => MsgType10::PortMod,
            Message::StatsRequest(_) => MsgType10::StatsRequest,
            Message::StatsReply(_) => MsgType10::StatsReply,
            Message::BarrierRequest => MsgType10::BarrierRequest,
            Message::BarrierReply => MsgType10::BarrierReply,
            Message::QueueGetConfigRequest { .. } => MsgType10::QueueGetConfigRequest,
            Message::QueueGetConfigReply { .. } => MsgType10::QueueGetConfigReply,
        }
    }

    /// Appends the whole message with transaction id `xid`. A message too
    /// long for the 16-bit length field is written with a saturated length
    /// (the caller's bug; it never panics).
    pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
        match self {
            Message::Hello(h) => h.encode(Version::V10, xid, out),
            Message::EchoRequest(p) => encode_echo_request(out, xid, p),
            Message::EchoReply(p) => encode_echo_reply(out, xid, p),
            Message::PacketIn(p) => p.emit(xid, out),
            Message::PacketOut(p) => p.emit(xid, out),
            Message::FlowMod(f) => f.emit(xid, out),
            Message::BarrierRequest => encode_barrier_request(out, xid),
            Message::BarrierReply => encode_barrier_reply(out, xid),
            _ => {
                let at = start_message(out, Version::V10, self.msg_type().into(), xid);
                self.emit_body(out);
                finish_message(out, at);
            }
        }
    }

    /// Bytes [`Message::encode`] appends: from the structure for the hot
    /// messages and the fixed-size ones; the other bodies are written into
    /// a scratch buffer and counted (allocates; off the hot path).
    pub fn encoded_len(&self) -> usize {
        match self {
            Message::EchoRequest(p) | Message::EchoReply(p) => HEADER_LEN + p.len(),
            Message::PacketIn(p) => p.buffer_len(),
            Message::PacketOut(p) => p.buffer_len(),
            Message::FlowMod(f) => f.buffer_len(),
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::BarrierRequest
            | Message::BarrierReply => HEADER_LEN,
            _ => {
                let mut scratch = Vec::new();
                self.encode(Xid(0), &mut scratch);
                scratch.len()
            }
        }
    }

    /// Bodies of the messages that have no encoder of their own.
    fn emit_body(&self, out: &mut Vec<u8>) {
        match self {
            Message::Error(e) => e.emit(out),
            Message::Vendor { vendor, data } => {
                out.put_u32(*vendor);
                out.put_slice(data);
            }
            Message::FeaturesReply(f) => f.emit(out),
            Message::GetConfigReply(c) | Message::SetConfig(c) => c.encode_body(out),
            Message::FlowRemoved(f) => f.emit(out),
            Message::PortStatus(p) => p.emit(out),
            Message::PortMod(p) => p.emit(out),
            Message::StatsRequest(s) => s.emit(out),
            Message::StatsReply(s) => s.emit(out),
            Message::QueueGetConfigRequest { port } => {
                out.put_u16(port_to_wire(*port));
                out.put_zeros(2);
            }
            Message::QueueGetConfigReply { port, queues } => {
                messages::emit_queue_config_reply(out, *port, queues)
            }
            // Written by `encode` through their own encoders.
            Message::Hello(_)
            | Message::EchoRequest(_)
            | Message::EchoReply(_)
            | Message::PacketIn(_)
            | Message::PacketOut(_)
            | Message::FlowMod(_)
            | Message::BarrierRequest
            | Message::BarrierReply
            | Message::FeaturesRequest
            | Message::GetConfigRequest => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn features_request_bytes() {
        let b = [1, 5, 0, 8, 0, 0, 0, 1];
        assert_eq!(decode(&b).unwrap(), (Xid(1), Message::FeaturesRequest));
        let mut out = Vec::new();
        Message::FeaturesRequest.encode(Xid(1), &mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn hello_body_is_ignored_when_malformed() {
        let b = [1, 0, 0, 11, 0, 0, 0, 1, 0xde, 0xad, 0xbe];
        assert_eq!(
            decode(&b).unwrap(),
            (Xid(1), Message::Hello(Hello::default()))
        );
    }

    #[test]
    fn header_errors_in_order() {
        assert!(matches!(
            decode(&[1, 5, 0, 8]).unwrap_err().kind(),
            ErrorKind::TooShort { .. }
        ));
        assert_eq!(
            decode(&[4, 5, 0, 8, 0, 0, 0, 1]).unwrap_err().kind(),
            &ErrorKind::BadVersion(4)
        );
        assert_eq!(
            decode(&[1, 5, 0, 9, 0, 0, 0, 1]).unwrap_err().kind(),
            &ErrorKind::BadLength { claimed: 9 }
        );
        assert_eq!(
            decode(&[1, 22, 0, 8, 0, 0, 0, 1]).unwrap_err().kind(),
            &ErrorKind::UnknownType(22)
        );
        // FEATURES_REQUEST must be exactly 8 bytes.
        assert_eq!(
            decode(&[1, 5, 0, 9, 0, 0, 0, 1, 0]).unwrap_err().kind(),
            &ErrorKind::BadLength { claimed: 9 }
        );
    }

    #[test]
    fn flow_mod_with_bad_action_is_bad_action() {
        let mut out = Vec::new();
        let fm = FlowMod::from_parts(
            FlowModHead {
                match_: Match10::ALL,
                cookie: crate::Cookie(0),
                command: FlowModCommand::Add,
                idle_timeout: 0,
                hard_timeout: 0,
                priority: 1,
                buffer_id: crate::BufferId::NONE,
                out_port: PortNo::ANY,
                flags: 0,
            },
            vec![Action::StripVlan],
        );
        Message::FlowMod(fm).encode(Xid(2), &mut out);
        out[72 + 1] = 42;
        let e = decode(&out).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadActionType(42));
        assert_eq!(e.offset(), 72);
        assert_eq!(
            e.reply(Version::V10),
            crate::ErrorCode::new(messages::error_type::BAD_ACTION, 0)
        );
    }
}
