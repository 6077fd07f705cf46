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

crate::twin::message! {
    version: V10,
    msg_type: MsgType10,
    doc: "One OpenFlow 1.0 message, owned (1.0.0 §5.3 to §5.5): a variant per [`MsgType10`].",
    header_only: [],
    bodies: emit, |out| {
        Message::Vendor { vendor, data } => {
            out.put_u32(*vendor);
            out.put_slice(data);
        }
        Message::StatsRequest(s) => s.emit(out),
        Message::StatsReply(s) => s.emit(out),
        Message::QueueGetConfigRequest { port } => {
            out.put_u16(port_to_wire(*port));
            out.put_zeros(2);
        }
        Message::QueueGetConfigReply { port, queues } => {
            messages::emit_queue_config_reply(out, *port, queues)
        }
    },
    own: [
        /// OFPT_VENDOR (§5.5.4).
        Vendor {
            /// Vendor id.
            vendor: u32,
            /// Vendor-defined bytes after the id.
            data: Vec<u8>,
        },
        /// OFPT_STATS_REQUEST (§5.3.5).
        StatsRequest(StatsRequest),
        /// OFPT_STATS_REPLY (§5.3.5).
        StatsReply(StatsReply),
        /// OFPT_QUEUE_GET_CONFIG_REPLY (§5.3.4).
        QueueGetConfigReply {
            /// Port queried.
            port: PortNo,
            /// Its queues.
            queues: Vec<PacketQueue>,
        },
    ],
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
