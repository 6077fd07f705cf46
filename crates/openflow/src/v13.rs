//! OpenFlow 1.3.5: every message a controller sends or receives.
//!
//! ## Layout
//! - The hot messages have one module each, in the pattern of the 1.0
//!   ones (smoltcp's `wire`): a view over `T: AsRef<[u8]>` that reads its
//!   fields from the buffer (setters where `T: AsMut<[u8]>`), an owned
//!   form with `parse`, `emit` and `buffer_len`, and allocation-free
//!   encoders: [`packet_in`] (§7.4.1), [`flow_mod`] (§7.3.4.1),
//!   [`packet_out`] (§7.3.7), and ECHO and BARRIER ([`EchoView`],
//!   [`BarrierView`], shared with 1.0 in [`crate::echo`]).
//! - [`oxm`]: OXM TLVs, the table of basic fields, `ofp_match`
//!   ([`Match13`]), the zero-allocation [`OxmIter`] and the exact match of
//!   a frame's key (§7.2.3).
//! - [`action`] (§7.2.5) and [`instruction`] (§7.2.4): owned enums and
//!   zero-allocation iterators.
//! - [`port`] (`ofp_port`, §7.2.1), [`group`] (buckets, GROUP_MOD,
//!   §7.3.4.2), [`meter`] (bands, METER_MOD, §7.3.4.4), [`queue`] (queue
//!   configuration, §7.3.6).
//! - [`messages`]: the other bodies (errors, features, config, port status,
//!   port and table mod, FLOW_REMOVED, role, async config).
//! - [`multipart`] and [`table_features`]: multipart requests and replies
//!   (§7.3.5).
//!
//! ## Entry points
//! [`decode`] turns one whole message into `(Xid, Message)`, reading the
//! hot messages through their views; [`Message::encode`] appends one,
//! writing them through the same encoders. Both check every length field;
//! see the crate's no-panic contract.

pub mod action;
pub mod flow_mod;
pub mod group;
pub mod instruction;
pub mod messages;
pub mod meter;
pub mod multipart;
pub mod oxm;
pub mod packet_in;
pub mod packet_out;
pub mod port;
pub mod queue;
pub mod table_features;

pub use crate::switch_config::SwitchConfig;
pub use crate::types::PortReason;
pub use action::{Action, ActionIter};
pub use flow_mod::{
    FLOW_MOD_HEAD_LEN, FlowMod, FlowModCommand, FlowModHead, FlowModView, encode_flow_mod,
    encode_flow_mod_apply, flow_mod_head_bytes, start_flow_mod,
};
pub use group::{Bucket, GroupMod, GroupModCommand, GroupType};
pub use instruction::{Instruction, InstructionIter, InstructionRef};
pub use messages::{
    AsyncConfig, ControllerRole, ErrorMsg, ErrorType, FlowRemoved, FlowRemovedReason, PortMod,
    PortStatus, Role, SwitchFeatures, TableMod,
};
pub use meter::{MeterBand, MeterMod, MeterModCommand};
pub use multipart::{MultipartReply, MultipartRequest};
pub use oxm::{Match13, MatchRef, Oxm, OxmField, OxmIter, OxmRef};
pub use packet_in::{PacketIn, PacketInReason, PacketInView, encode_packet_in};
pub use packet_out::{PacketOut, PacketOutView, encode_packet_out, encode_packet_out_with};
pub use port::Port;
pub use queue::{PacketQueue, QueueConfig, QueueProp};

use crate::error::{DecodeError, ErrorKind};
use crate::header::{HEADER_LEN, Header, MsgType13, finish_message, start_message};
use crate::hello::Hello;
use crate::types::{PortNo, Xid};
use crate::version::Version;
use crate::wire::{Put, Reader};

crate::twin::echo_and_barrier! {
    version: V13,
    echo_request: "1.3.5 §7.5.2",
    echo_reply: "1.3.5 §7.5.3",
    barrier: "1.3.5 §7.3.8",
}

crate::twin::message! {
    version: V13,
    msg_type: MsgType13,
    doc: "One OpenFlow 1.3 message: a variant per [`MsgType13`] (1.3.5 §7).",
    header_only: [GetAsyncRequest],
    bodies: encode_body, |out| {
        Message::Experimenter {
            experimenter,
            exp_type,
            data,
        } => {
            out.put_u32(*experimenter);
            out.put_u32(*exp_type);
            out.put_slice(data);
        }
        Message::GroupMod(g) => g.encode_body(out),
        Message::TableMod(t) => t.encode_body(out),
        Message::MultipartRequest(m) => m.encode_body(out),
        Message::MultipartReply(m) => m.encode_body(out),
        Message::QueueGetConfigRequest { port } => {
            out.put_u32(port.0);
            out.put_zeros(4);
        }
        Message::QueueGetConfigReply(q) => q.encode_body(out),
        Message::RoleRequest(r) | Message::RoleReply(r) => r.encode_body(out),
        Message::GetAsyncReply(a) | Message::SetAsync(a) => a.encode_body(out),
        Message::MeterMod(m) => m.encode_body(out),
    },
    own: [
        /// OFPT_EXPERIMENTER (`ofp_experimenter_header`, 1.3.5 §7.5.4).
        Experimenter {
            /// `experimenter` id.
            experimenter: u32,
            /// `exp_type`.
            exp_type: u32,
            /// Experimenter-defined bytes.
            data: Vec<u8>,
        },
        /// OFPT_GROUP_MOD.
        GroupMod(GroupMod),
        /// OFPT_TABLE_MOD.
        TableMod(TableMod),
        /// OFPT_MULTIPART_REQUEST.
        MultipartRequest(MultipartRequest),
        /// OFPT_MULTIPART_REPLY.
        MultipartReply(MultipartReply),
        /// OFPT_QUEUE_GET_CONFIG_REPLY.
        QueueGetConfigReply(QueueConfig),
        /// OFPT_ROLE_REQUEST.
        RoleRequest(Role),
        /// OFPT_ROLE_REPLY.
        RoleReply(Role),
        /// OFPT_GET_ASYNC_REQUEST.
        GetAsyncRequest,
        /// OFPT_GET_ASYNC_REPLY.
        GetAsyncReply(AsyncConfig),
        /// OFPT_SET_ASYNC.
        SetAsync(AsyncConfig),
        /// OFPT_METER_MOD.
        MeterMod(MeterMod),
    ],
}

/// Decodes one whole OpenFlow 1.3 message (exactly one: `msg.len()` must
/// equal the header's length; use [`crate::header::frame`] to cut a
/// stream). The header goes through [`Header::check`]; the hot messages
/// are read through their views.
pub fn decode(msg: &[u8]) -> Result<(Xid, Message), DecodeError> {
    use MsgType13 as T;
    let h = Header::check(msg, Version::V13)?;
    let t = MsgType13::from(h.msg_type);
    let mut r = Reader::new(msg);
    let r = &mut r;
    r.skip(HEADER_LEN, "ofp_header")?;
    let m = match t {
        T::Hello => Message::Hello(Hello::decode_body(r.take_rest(), HEADER_LEN)?),
        T::Error => Message::Error(ErrorMsg::decode_body(r)?),
        T::EchoRequest => Message::EchoRequest(r.take_rest().to_vec()),
        T::EchoReply => Message::EchoReply(r.take_rest().to_vec()),
        T::Experimenter => Message::Experimenter {
            experimenter: r.u32("ofp_experimenter_header.experimenter")?,
            exp_type: r.u32("ofp_experimenter_header.exp_type")?,
            data: r.take_rest().to_vec(),
        },
        T::FeaturesRequest => Message::FeaturesRequest,
        T::FeaturesReply => Message::FeaturesReply(SwitchFeatures::decode_body(r)?),
        T::GetConfigRequest => Message::GetConfigRequest,
        T::GetConfigReply => Message::GetConfigReply(SwitchConfig::decode_body(r)?),
        T::SetConfig => Message::SetConfig(SwitchConfig::decode_body(r)?),
        T::PacketIn => {
            r.take_rest();
            Message::PacketIn(PacketIn::parse(&PacketInView::new_checked(msg)?)?)
        }
        T::FlowRemoved => Message::FlowRemoved(FlowRemoved::decode_body(r)?),
        T::PortStatus => Message::PortStatus(PortStatus::decode_body(r)?),
        T::PacketOut => {
            r.take_rest();
            Message::PacketOut(PacketOut::parse(&PacketOutView::new_checked(msg)?)?)
        }
        T::FlowMod => {
            r.take_rest();
            Message::FlowMod(FlowMod::parse(&FlowModView::new_checked(msg)?)?)
        }
        T::GroupMod => Message::GroupMod(GroupMod::decode_body(r.take_rest(), HEADER_LEN)?),
        T::PortMod => Message::PortMod(PortMod::decode_body(r)?),
        T::TableMod => Message::TableMod(TableMod::decode_body(r)?),
        T::MultipartRequest => {
            Message::MultipartRequest(MultipartRequest::decode(r.take_rest(), HEADER_LEN)?)
        }
        T::MultipartReply => {
            Message::MultipartReply(MultipartReply::decode(r.take_rest(), HEADER_LEN)?)
        }
        T::BarrierRequest => Message::BarrierRequest,
        T::BarrierReply => Message::BarrierReply,
        T::QueueGetConfigRequest => {
            let port = PortNo(r.u32("ofp_queue_get_config_request.port")?);
            r.skip(4, "ofp_queue_get_config_request.pad")?;
            Message::QueueGetConfigRequest { port }
        }
        T::QueueGetConfigReply => Message::QueueGetConfigReply(QueueConfig::decode_body(r)?),
        T::RoleRequest => Message::RoleRequest(Role::decode_body(r)?),
        T::RoleReply => Message::RoleReply(Role::decode_body(r)?),
        T::GetAsyncRequest => Message::GetAsyncRequest,
        T::GetAsyncReply => Message::GetAsyncReply(AsyncConfig::decode_body(r)?),
        T::SetAsync => Message::SetAsync(AsyncConfig::decode_body(r)?),
        T::MeterMod => Message::MeterMod(MeterMod::decode_body(r.take_rest(), HEADER_LEN)?),
        // Header::check rejected unknown types.
        T::Unknown(x) => {
            return Err(DecodeError::new(
                ErrorKind::UnknownType(x),
                1,
                "ofp_header.type",
            ));
        }
    };
    // Fixed-size bodies: the length rule made the message exactly as long
    // as the body; anything left is a decoder bug or a bad length.
    r.finish("message body")?;
    Ok((h.xid, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_request_vector() {
        let (xid, m) = decode(&[4, 5, 0, 8, 0, 0, 0, 2]).unwrap();
        assert_eq!((xid, m), (Xid(2), Message::FeaturesRequest));
        let mut out = Vec::new();
        Message::FeaturesRequest.encode(Xid(2), &mut out);
        assert_eq!(out, [4, 5, 0, 8, 0, 0, 0, 2]);
    }

    #[test]
    fn header_errors() {
        let kind = |b: &[u8]| decode(b).unwrap_err().kind().clone();
        assert_eq!(kind(&[1, 5, 0, 8, 0, 0, 0, 2]), ErrorKind::BadVersion(1));
        assert_eq!(kind(&[4, 99, 0, 8, 0, 0, 0, 2]), ErrorKind::UnknownType(99));
        assert_eq!(
            kind(&[4, 5, 0, 9, 0, 0, 0, 2, 0]),
            ErrorKind::BadLength { claimed: 9 }
        );
        assert_eq!(
            kind(&[4, 5, 0, 8, 0, 0, 0, 2, 0]),
            ErrorKind::BadLength { claimed: 8 }
        );
        assert!(matches!(kind(&[4, 5, 0]), ErrorKind::TooShort { .. }));
    }
}
