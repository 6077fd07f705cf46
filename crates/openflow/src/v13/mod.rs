//! OpenFlow 1.3.5: every message a controller sends or receives.
//!
//! ## Layout
//! - [`oxm`]: OXM TLVs, the table of basic fields, `ofp_match`
//!   ([`Match13`]) and the zero-allocation [`OxmIter`] (§7.2.3).
//! - [`action`] (§7.2.5) and [`instruction`] (§7.2.4): owned enums and
//!   zero-allocation iterators.
//! - [`port`] (`ofp_port`, §7.2.1), [`group`] (buckets, GROUP_MOD,
//!   §7.3.4.2), [`meter`] (bands, METER_MOD, §7.3.4.4).
//! - [`flow`]: PACKET_IN, FLOW_REMOVED, PACKET_OUT, FLOW_MOD, owned.
//! - [`messages`]: the other bodies (errors, features, config, port status,
//!   port and table mod, queue config, role, async config).
//! - [`multipart`] and [`table_features`]: multipart requests and replies
//!   (§7.3.5).
//! - [`view`]: the hot path, borrowing views and borrowed encoders.
//!
//! ## Entry points
//! [`decode`] turns one whole message into `(Xid, Message)`;
//! [`Message::encode`] appends one. Both check every length field; see the
//! crate's no-panic contract.

pub mod action;
pub mod flow;
pub mod group;
pub mod instruction;
pub mod messages;
pub mod meter;
pub mod multipart;
pub mod oxm;
pub mod port;
pub mod table_features;
pub mod view;

pub use crate::switch_config::SwitchConfig;
pub use crate::types::PortReason;
pub use action::{Action, ActionIter};
pub use flow::{
    FlowMod, FlowModCommand, FlowModHead, FlowRemoved, FlowRemovedReason, PacketIn, PacketInReason,
    PacketOut,
};
pub use group::{Bucket, GroupMod, GroupModCommand, GroupType};
pub use instruction::{Instruction, InstructionIter, InstructionRef};
pub use messages::{
    AsyncConfig, ControllerRole, ErrorMsg, ErrorType, PacketQueue, PortMod, PortStatus,
    QueueConfig, QueueProp, Role, SwitchFeatures, TableMod,
};
pub use meter::{MeterBand, MeterMod, MeterModCommand};
pub use multipart::{MultipartReply, MultipartRequest};
pub use oxm::{Match13, MatchRef, Oxm, OxmField, OxmIter, OxmRef};
pub use port::Port;
pub use view::{
    EchoView, FlowModView, PacketInView, PacketOutView, encode_barrier_reply,
    encode_barrier_request, encode_echo_reply, encode_echo_request, encode_flow_mod,
    encode_flow_mod_apply, encode_packet_in, encode_packet_out, encode_packet_out_with,
    start_flow_mod,
};

use crate::error::{DecodeError, ErrorKind};
use crate::header::{HEADER_LEN, Header, MsgType13, finish_message, start_message};
use crate::hello::Hello;
use crate::types::{PortNo, Version, Xid};
use crate::wire::{Put, Reader};

/// One OpenFlow 1.3 message: a variant per [`MsgType13`] (1.3.5 §7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// OFPT_HELLO.
    Hello(Hello),
    /// OFPT_ERROR.
    Error(ErrorMsg),
    /// OFPT_ECHO_REQUEST with its payload.
    EchoRequest(Vec<u8>),
    /// OFPT_ECHO_REPLY with its payload.
    EchoReply(Vec<u8>),
    /// OFPT_EXPERIMENTER (`ofp_experimenter_header`, 1.3.5 §7.5.4).
    Experimenter {
        /// `experimenter` id.
        experimenter: u32,
        /// `exp_type`.
        exp_type: u32,
        /// Experimenter-defined bytes.
        data: Vec<u8>,
    },
    /// OFPT_FEATURES_REQUEST.
    FeaturesRequest,
    /// OFPT_FEATURES_REPLY.
    FeaturesReply(SwitchFeatures),
    /// OFPT_GET_CONFIG_REQUEST.
    GetConfigRequest,
    /// OFPT_GET_CONFIG_REPLY.
    GetConfigReply(SwitchConfig),
    /// OFPT_SET_CONFIG.
    SetConfig(SwitchConfig),
    /// OFPT_PACKET_IN.
    PacketIn(PacketIn),
    /// OFPT_FLOW_REMOVED.
    FlowRemoved(FlowRemoved),
    /// OFPT_PORT_STATUS.
    PortStatus(PortStatus),
    /// OFPT_PACKET_OUT.
    PacketOut(PacketOut),
    /// OFPT_FLOW_MOD.
    FlowMod(FlowMod),
    /// OFPT_GROUP_MOD.
    GroupMod(GroupMod),
    /// OFPT_PORT_MOD.
    PortMod(PortMod),
    /// OFPT_TABLE_MOD.
    TableMod(TableMod),
    /// OFPT_MULTIPART_REQUEST.
    MultipartRequest(MultipartRequest),
    /// OFPT_MULTIPART_REPLY.
    MultipartReply(MultipartReply),
    /// OFPT_BARRIER_REQUEST.
    BarrierRequest,
    /// OFPT_BARRIER_REPLY.
    BarrierReply,
    /// OFPT_QUEUE_GET_CONFIG_REQUEST (`ofp_queue_get_config_request`,
    /// 1.3.5 §7.3.6).
    QueueGetConfigRequest {
        /// Port to query (`PortNo::ANY` for all).
        port: PortNo,
    },
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
}

/// Checks the header of one whole message: version 4
/// ([`ErrorKind::BadVersion`]), `length == msg.len()`
/// ([`ErrorKind::BadLength`]), a known type ([`ErrorKind::UnknownType`])
/// and the type's length rule. Returns the header, the type and a reader
/// positioned after the header.
pub(crate) fn open(msg: &[u8]) -> Result<(Header, MsgType13, Reader<'_>), DecodeError> {
    let h = Header::parse(msg)?;
    if h.version != Version::V13.wire() {
        return Err(DecodeError::new(
            ErrorKind::BadVersion(h.version),
            0,
            "ofp_header.version",
        ));
    }
    if h.length as usize != msg.len() {
        return Err(DecodeError::new(
            ErrorKind::BadLength {
                claimed: h.length as usize,
            },
            2,
            "ofp_header.length",
        ));
    }
    let t = MsgType13::from(h.msg_type);
    let rule = t.length_rule().ok_or_else(|| {
        DecodeError::new(ErrorKind::UnknownType(h.msg_type), 1, "ofp_header.type")
    })?;
    rule.check(h.length, "ofp_header.length")?;
    let mut r = Reader::new(msg);
    r.skip(HEADER_LEN, "ofp_header")?;
    Ok((h, t, r))
}

/// Decodes one whole OpenFlow 1.3 message (exactly one: `msg.len()` must
/// equal the header's length; use [`crate::header::frame`] to cut a
/// stream).
pub fn decode(msg: &[u8]) -> Result<(Xid, Message), DecodeError> {
    use MsgType13 as T;
    let (h, t, mut r) = open(msg)?;
    let r = &mut r;
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
            Message::PacketIn(PacketInView::parse(msg)?.to_owned())
        }
        T::FlowRemoved => Message::FlowRemoved(FlowRemoved::decode_body(r)?),
        T::PortStatus => Message::PortStatus(PortStatus::decode_body(r)?),
        T::PacketOut => {
            r.take_rest();
            Message::PacketOut(PacketOutView::parse(msg)?.to_owned()?)
        }
        T::FlowMod => {
            r.take_rest();
            Message::FlowMod(FlowModView::parse(msg)?.to_owned()?)
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
        // open() rejected unknown types.
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

impl Message {
    /// The message's type.
    pub fn msg_type(&self) -> MsgType13 {
        use MsgType13 as T;
        match self {
            Message::Hello(_) => T::Hello,
            Message::Error(_) => T::Error,
            Message::EchoRequest(_) => T::EchoRequest,
            Message::EchoReply(_) => T::EchoReply,
            Message::Experimenter { .. } => T::Experimenter,
            Message::FeaturesRequest => T::FeaturesRequest,
            Message::FeaturesReply(_) => T::FeaturesReply,
            Message::GetConfigRequest => T::GetConfigRequest,
            Message::GetConfigReply(_) => T::GetConfigReply,
            Message::SetConfig(_) => T::SetConfig,
            Message::PacketIn(_) => T::PacketIn,
            Message::FlowRemoved(_) => T::FlowRemoved,
            Message::PortStatus(_) => T::PortStatus,
            Message::PacketOut(_) => T::PacketOut,
            Message::FlowMod(_) => T::FlowMod,
            Message::GroupMod(_) => T::GroupMod,
            Message::PortMod(_) => T::PortMod,
            Message::TableMod(_) => T::TableMod,
            Message::MultipartRequest(_) => T::MultipartRequest,
            Message::MultipartReply(_) => T::MultipartReply,
            Message::BarrierRequest => T::BarrierRequest,
            Message::BarrierReply => T::BarrierReply,
            Message::QueueGetConfigRequest { .. } => T::QueueGetConfigRequest,
            Message::QueueGetConfigReply(_) => T::QueueGetConfigReply,
            Message::RoleRequest(_) => T::RoleRequest,
            Message::RoleReply(_) => T::RoleReply,
            Message::GetAsyncRequest => T::GetAsyncRequest,
            Message::GetAsyncReply(_) => T::GetAsyncReply,
            Message::SetAsync(_) => T::SetAsync,
            Message::MeterMod(_) => T::MeterMod,
        }
    }

    /// Appends the whole message with transaction id `xid`.
    pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
        match self {
            Message::Hello(h) => return h.encode(Version::V13, xid, out),
            Message::EchoRequest(p) => return view::encode_echo_request(out, xid, p),
            Message::EchoReply(p) => return view::encode_echo_reply(out, xid, p),
            Message::PacketIn(p) => return p.encode(xid, out),
            Message::PacketOut(p) => return p.encode(xid, out),
            Message::FlowMod(f) => return f.encode(xid, out),
            Message::BarrierRequest => return view::encode_barrier_request(out, xid),
            Message::BarrierReply => return view::encode_barrier_reply(out, xid),
            _ => {}
        }
        let at = start_message(out, Version::V13, self.msg_type().into(), xid);
        match self {
            Message::Error(e) => e.encode_body(out),
            Message::Experimenter {
                experimenter,
                exp_type,
                data,
            } => {
                out.put_u32(*experimenter);
                out.put_u32(*exp_type);
                out.put_slice(data);
            }
            Message::FeaturesReply(f) => f.encode_body(out),
            Message::GetConfigReply(c) | Message::SetConfig(c) => c.encode_body(out),
            Message::FlowRemoved(f) => f.encode_body(out),
            Message::PortStatus(p) => p.encode_body(out),
            Message::GroupMod(g) => g.encode_body(out),
            Message::PortMod(p) => p.encode_body(out),
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
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::GetAsyncRequest
            | Message::Hello(_)
            | Message::EchoRequest(_)
            | Message::EchoReply(_)
            | Message::PacketIn(_)
            | Message::PacketOut(_)
            | Message::FlowMod(_)
            | Message::BarrierRequest
            | Message::BarrierReply => {}
        }
        finish_message(out, at);
    }
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
