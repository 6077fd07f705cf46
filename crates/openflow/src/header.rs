//! The common `ofp_header`, stream framing, and the declarative table of raw
//! message types per version.
//!
//! The tables ([`MsgType10`], [`MsgType13`]) follow Open vSwitch's
//! `ofp-msgs.h`: one line per raw type giving its wire number and the
//! length rule of its fixed part. The per-version decoders use
//! [`MsgType10::length_rule`] / [`MsgType13::length_rule`] to reject bad
//! lengths before looking at a body, so the rule lives in one place.

use crate::error::{DecodeError, ErrorKind};
use crate::types::{Version, Xid};
use crate::wire::{Put, Reader};

/// Size of `ofp_header` (both versions, 1.0.0 §5.1.1, 1.3.5 §7.1.1).
pub const HEADER_LEN: usize = 8;

/// The largest message the 16-bit length field can describe.
pub const MAX_MESSAGE_LEN: usize = u16::MAX as usize;

/// `ofp_header`: version, type, length, xid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `version`.
    pub version: u8,
    /// `type`, to be read with the table of `version`.
    pub msg_type: u8,
    /// `length`, header included.
    pub length: u16,
    /// `xid`.
    pub xid: Xid,
}

impl Header {
    /// Parses the first 8 bytes of `buf`. Checks only that `length` is at
    /// least [`HEADER_LEN`] and no more than `buf.len()`.
    pub fn parse(buf: &[u8]) -> Result<Header, DecodeError> {
        let mut r = Reader::new(buf);
        let version = r.u8("ofp_header.version")?;
        let msg_type = r.u8("ofp_header.type")?;
        let length = r.u16("ofp_header.length")?;
        let xid = Xid(r.u32("ofp_header.xid")?);
        if (length as usize) < HEADER_LEN || length as usize > buf.len() {
            return Err(DecodeError::new(
                ErrorKind::BadLength {
                    claimed: length as usize,
                },
                2,
                "ofp_header.length",
            ));
        }
        Ok(Header {
            version,
            msg_type,
            length,
            xid,
        })
    }

    /// Appends the header.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.version);
        out.put_u8(self.msg_type);
        out.put_u16(self.length);
        out.put_u32(self.xid.0);
    }
}

/// Finds the first complete message at the start of a stream buffer.
///
/// Returns `Ok(Some(len))` when `buf` holds a whole message of `len` bytes,
/// `Ok(None)` when more bytes are needed, and an error when the length field
/// is below [`HEADER_LEN`] (the stream cannot be resynchronised; the
/// connection must be closed).
#[inline]
pub fn frame(buf: &[u8]) -> Result<Option<usize>, DecodeError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
    if len < HEADER_LEN {
        return Err(DecodeError::new(
            ErrorKind::BadLength { claimed: len },
            2,
            "ofp_header.length",
        ));
    }
    Ok((buf.len() >= len).then_some(len))
}

/// The 8 header bytes with a placeholder (zero) length, for encoders that
/// build a message's fixed part in one array; [`finish_message`] fills the
/// length in.
#[inline]
pub fn header_bytes(version: Version, msg_type: u8, xid: Xid) -> [u8; HEADER_LEN] {
    let x = xid.0.to_be_bytes();
    [version.wire(), msg_type, 0, 0, x[0], x[1], x[2], x[3]]
}

/// Writes a header with a placeholder length; returns the offset of the
/// header so [`finish_message`] can fill the length in.
#[inline]
pub fn start_message(out: &mut Vec<u8>, version: Version, msg_type: u8, xid: Xid) -> usize {
    let at = out.len();
    out.put_slice(&header_bytes(version, msg_type, xid));
    at
}

/// Fills in the length of the message that starts at `at` and runs to the
/// end of `out`. Messages longer than [`MAX_MESSAGE_LEN`] cannot be
/// expressed; encoders check their inputs so this never happens, and the
/// length saturates rather than wrapping if it did.
#[inline]
pub fn finish_message(out: &mut Vec<u8>, at: usize) {
    let len = (out.len() - at).min(MAX_MESSAGE_LEN) as u16;
    out.patch_u16(at + 2, len);
}

/// How long a message of a given type may be: at least `min`, at most
/// `max` (both header included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthRule {
    /// Smallest valid length.
    pub min: u16,
    /// Largest valid length.
    pub max: u16,
}

impl LengthRule {
    /// Checks `length` against the rule.
    pub fn check(self, length: u16, what: &'static str) -> Result<(), DecodeError> {
        if length < self.min || length > self.max {
            Err(DecodeError::new(
                ErrorKind::BadLength {
                    claimed: length as usize,
                },
                2,
                what,
            ))
        } else {
            Ok(())
        }
    }
}

macro_rules! msg_table {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, $min:literal ..= $max:expr ; )+
        }
    ) => {
        crate::wire_enum! {
            $(#[$meta])*
            pub enum $name: u8 {
                $( $(#[$vmeta])* $variant = $value, )+
            }
        }

        impl $name {
            /// The length rule of this type; `None` for an unknown type.
            pub const fn length_rule(self) -> Option<LengthRule> {
                match self {
                    $( $name::$variant => Some(LengthRule { min: $min, max: $max }), )+
                    $name::Unknown(_) => None,
                }
            }
        }
    };
}

const ANY: u16 = u16::MAX;

msg_table! {
    /// OpenFlow 1.0 message types (1.0.0 §5.1, `enum ofp_type`) and their
    /// lengths.
    pub enum MsgType10 {
        /// OFPT_HELLO.
        Hello = 0, 8..=ANY;
        /// OFPT_ERROR.
        Error = 1, 12..=ANY;
        /// OFPT_ECHO_REQUEST.
        EchoRequest = 2, 8..=ANY;
        /// OFPT_ECHO_REPLY.
        EchoReply = 3, 8..=ANY;
        /// OFPT_VENDOR.
        Vendor = 4, 12..=ANY;
        /// OFPT_FEATURES_REQUEST.
        FeaturesRequest = 5, 8..=8;
        /// OFPT_FEATURES_REPLY: 32 bytes then `ofp_phy_port[]` (48 each).
        FeaturesReply = 6, 32..=ANY;
        /// OFPT_GET_CONFIG_REQUEST.
        GetConfigRequest = 7, 8..=8;
        /// OFPT_GET_CONFIG_REPLY.
        GetConfigReply = 8, 12..=12;
        /// OFPT_SET_CONFIG.
        SetConfig = 9, 12..=12;
        /// OFPT_PACKET_IN: 18 bytes then the frame.
        PacketIn = 10, 18..=ANY;
        /// OFPT_FLOW_REMOVED.
        FlowRemoved = 11, 88..=88;
        /// OFPT_PORT_STATUS.
        PortStatus = 12, 64..=64;
        /// OFPT_PACKET_OUT: 16 bytes, actions, then the frame.
        PacketOut = 13, 16..=ANY;
        /// OFPT_FLOW_MOD: 72 bytes then actions.
        FlowMod = 14, 72..=ANY;
        /// OFPT_PORT_MOD.
        PortMod = 15, 32..=32;
        /// OFPT_STATS_REQUEST.
        StatsRequest = 16, 12..=ANY;
        /// OFPT_STATS_REPLY.
        StatsReply = 17, 12..=ANY;
        /// OFPT_BARRIER_REQUEST.
        BarrierRequest = 18, 8..=8;
        /// OFPT_BARRIER_REPLY.
        BarrierReply = 19, 8..=8;
        /// OFPT_QUEUE_GET_CONFIG_REQUEST.
        QueueGetConfigRequest = 20, 12..=12;
        /// OFPT_QUEUE_GET_CONFIG_REPLY: 16 bytes then `ofp_packet_queue[]`.
        QueueGetConfigReply = 21, 16..=ANY;
    }
}

msg_table! {
    /// OpenFlow 1.3 message types (1.3.5 §7.1, `enum ofp_type`) and their
    /// lengths.
    pub enum MsgType13 {
        /// OFPT_HELLO: 8 bytes then hello elements.
        Hello = 0, 8..=ANY;
        /// OFPT_ERROR.
        Error = 1, 12..=ANY;
        /// OFPT_ECHO_REQUEST.
        EchoRequest = 2, 8..=ANY;
        /// OFPT_ECHO_REPLY.
        EchoReply = 3, 8..=ANY;
        /// OFPT_EXPERIMENTER.
        Experimenter = 4, 16..=ANY;
        /// OFPT_FEATURES_REQUEST.
        FeaturesRequest = 5, 8..=8;
        /// OFPT_FEATURES_REPLY (no ports in 1.3).
        FeaturesReply = 6, 32..=32;
        /// OFPT_GET_CONFIG_REQUEST.
        GetConfigRequest = 7, 8..=8;
        /// OFPT_GET_CONFIG_REPLY.
        GetConfigReply = 8, 12..=12;
        /// OFPT_SET_CONFIG.
        SetConfig = 9, 12..=12;
        /// OFPT_PACKET_IN: 24 bytes, a match (at least 8), 2 pad, the frame.
        PacketIn = 10, 34..=ANY;
        /// OFPT_FLOW_REMOVED: 48 bytes then a match.
        FlowRemoved = 11, 56..=ANY;
        /// OFPT_PORT_STATUS.
        PortStatus = 12, 80..=80;
        /// OFPT_PACKET_OUT: 24 bytes, actions, then the frame.
        PacketOut = 13, 24..=ANY;
        /// OFPT_FLOW_MOD: 48 bytes, a match, then instructions.
        FlowMod = 14, 56..=ANY;
        /// OFPT_GROUP_MOD: 16 bytes then buckets.
        GroupMod = 15, 16..=ANY;
        /// OFPT_PORT_MOD.
        PortMod = 16, 40..=40;
        /// OFPT_TABLE_MOD.
        TableMod = 17, 16..=16;
        /// OFPT_MULTIPART_REQUEST.
        MultipartRequest = 18, 16..=ANY;
        /// OFPT_MULTIPART_REPLY.
        MultipartReply = 19, 16..=ANY;
        /// OFPT_BARRIER_REQUEST.
        BarrierRequest = 20, 8..=8;
        /// OFPT_BARRIER_REPLY.
        BarrierReply = 21, 8..=8;
        /// OFPT_QUEUE_GET_CONFIG_REQUEST.
        QueueGetConfigRequest = 22, 16..=16;
        /// OFPT_QUEUE_GET_CONFIG_REPLY: 16 bytes then `ofp_packet_queue[]`.
        QueueGetConfigReply = 23, 16..=ANY;
        /// OFPT_ROLE_REQUEST.
        RoleRequest = 24, 24..=24;
        /// OFPT_ROLE_REPLY.
        RoleReply = 25, 24..=24;
        /// OFPT_GET_ASYNC_REQUEST.
        GetAsyncRequest = 26, 8..=8;
        /// OFPT_GET_ASYNC_REPLY.
        GetAsyncReply = 27, 32..=32;
        /// OFPT_SET_ASYNC.
        SetAsync = 28, 32..=32;
        /// OFPT_METER_MOD: 16 bytes then bands.
        MeterMod = 29, 16..=ANY;
    }
}

/// What a message is, whatever its version: the meaning of a raw type
/// number, separate from its wire number (Open vSwitch's `enum ofptype`
/// beside the raw tables of `ofp-msgs.h`). Dispatch goes through this, so
/// code that handles, say, an ECHO_REQUEST does not depend on the number
/// each version gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsgKind {
    /// OFPT_HELLO.
    Hello,
    /// OFPT_ERROR.
    Error,
    /// OFPT_ECHO_REQUEST.
    EchoRequest,
    /// OFPT_ECHO_REPLY.
    EchoReply,
    /// OFPT_VENDOR (1.0) / OFPT_EXPERIMENTER (1.3).
    Experimenter,
    /// OFPT_FEATURES_REQUEST.
    FeaturesRequest,
    /// OFPT_FEATURES_REPLY.
    FeaturesReply,
    /// OFPT_GET_CONFIG_REQUEST.
    GetConfigRequest,
    /// OFPT_GET_CONFIG_REPLY.
    GetConfigReply,
    /// OFPT_SET_CONFIG.
    SetConfig,
    /// OFPT_PACKET_IN.
    PacketIn,
    /// OFPT_FLOW_REMOVED.
    FlowRemoved,
    /// OFPT_PORT_STATUS.
    PortStatus,
    /// OFPT_PACKET_OUT.
    PacketOut,
    /// OFPT_FLOW_MOD.
    FlowMod,
    /// OFPT_GROUP_MOD (1.3).
    GroupMod,
    /// OFPT_PORT_MOD.
    PortMod,
    /// OFPT_TABLE_MOD (1.3).
    TableMod,
    /// OFPT_STATS_REQUEST (1.0) / OFPT_MULTIPART_REQUEST (1.3).
    StatsRequest,
    /// OFPT_STATS_REPLY (1.0) / OFPT_MULTIPART_REPLY (1.3).
    StatsReply,
    /// OFPT_BARRIER_REQUEST.
    BarrierRequest,
    /// OFPT_BARRIER_REPLY.
    BarrierReply,
    /// OFPT_QUEUE_GET_CONFIG_REQUEST.
    QueueGetConfigRequest,
    /// OFPT_QUEUE_GET_CONFIG_REPLY.
    QueueGetConfigReply,
    /// OFPT_ROLE_REQUEST (1.3).
    RoleRequest,
    /// OFPT_ROLE_REPLY (1.3).
    RoleReply,
    /// OFPT_GET_ASYNC_REQUEST (1.3).
    GetAsyncRequest,
    /// OFPT_GET_ASYNC_REPLY (1.3).
    GetAsyncReply,
    /// OFPT_SET_ASYNC (1.3).
    SetAsync,
    /// OFPT_METER_MOD (1.3).
    MeterMod,
    /// A type number the version's table does not have.
    Unknown,
}

impl MsgKind {
    /// The kind of raw type `raw` in `version`.
    #[inline]
    pub fn of(version: Version, raw: u8) -> MsgKind {
        match version {
            Version::V10 => MsgType10::from(raw).into(),
            Version::V13 => MsgType13::from(raw).into(),
        }
    }
}

impl From<MsgType10> for MsgKind {
    fn from(t: MsgType10) -> MsgKind {
        use MsgType10 as T;
        match t {
            T::Hello => MsgKind::Hello,
            T::Error => MsgKind::Error,
            T::EchoRequest => MsgKind::EchoRequest,
            T::EchoReply => MsgKind::EchoReply,
            T::Vendor => MsgKind::Experimenter,
            T::FeaturesRequest => MsgKind::FeaturesRequest,
            T::FeaturesReply => MsgKind::FeaturesReply,
            T::GetConfigRequest => MsgKind::GetConfigRequest,
            T::GetConfigReply => MsgKind::GetConfigReply,
            T::SetConfig => MsgKind::SetConfig,
            T::PacketIn => MsgKind::PacketIn,
            T::FlowRemoved => MsgKind::FlowRemoved,
            T::PortStatus => MsgKind::PortStatus,
            T::PacketOut => MsgKind::PacketOut,
            T::FlowMod => MsgKind::FlowMod,
            T::PortMod => MsgKind::PortMod,
            T::StatsRequest => MsgKind::StatsRequest,
            T::StatsReply => MsgKind::StatsReply,
            T::BarrierRequest => MsgKind::BarrierRequest,
            T::BarrierReply => MsgKind::BarrierReply,
            T::QueueGetConfigRequest => MsgKind::QueueGetConfigRequest,
            T::QueueGetConfigReply => MsgKind::QueueGetConfigReply,
            T::Unknown(_) => MsgKind::Unknown,
        }
    }
}

impl From<MsgType13> for MsgKind {
    fn from(t: MsgType13) -> MsgKind {
        use MsgType13 as T;
        match t {
            T::Hello => MsgKind::Hello,
            T::Error => MsgKind::Error,
            T::EchoRequest => MsgKind::EchoRequest,
            T::EchoReply => MsgKind::EchoReply,
            T::Experimenter => MsgKind::Experimenter,
            T::FeaturesRequest => MsgKind::FeaturesRequest,
            T::FeaturesReply => MsgKind::FeaturesReply,
            T::GetConfigRequest => MsgKind::GetConfigRequest,
            T::GetConfigReply => MsgKind::GetConfigReply,
            T::SetConfig => MsgKind::SetConfig,
            T::PacketIn => MsgKind::PacketIn,
            T::FlowRemoved => MsgKind::FlowRemoved,
            T::PortStatus => MsgKind::PortStatus,
            T::PacketOut => MsgKind::PacketOut,
            T::FlowMod => MsgKind::FlowMod,
            T::GroupMod => MsgKind::GroupMod,
            T::PortMod => MsgKind::PortMod,
            T::TableMod => MsgKind::TableMod,
            T::MultipartRequest => MsgKind::StatsRequest,
            T::MultipartReply => MsgKind::StatsReply,
            T::BarrierRequest => MsgKind::BarrierRequest,
            T::BarrierReply => MsgKind::BarrierReply,
            T::QueueGetConfigRequest => MsgKind::QueueGetConfigRequest,
            T::QueueGetConfigReply => MsgKind::QueueGetConfigReply,
            T::RoleRequest => MsgKind::RoleRequest,
            T::RoleReply => MsgKind::RoleReply,
            T::GetAsyncRequest => MsgKind::GetAsyncRequest,
            T::GetAsyncReply => MsgKind::GetAsyncReply,
            T::SetAsync => MsgKind::SetAsync,
            T::MeterMod => MsgKind::MeterMod,
            T::Unknown(_) => MsgKind::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_waits_for_whole_message() {
        let hello = [1u8, 0, 0, 8, 0, 0, 0, 1];
        assert_eq!(frame(&hello[..3]).unwrap(), None);
        assert_eq!(frame(&hello[..7]).unwrap(), None);
        assert_eq!(frame(&hello).unwrap(), Some(8));
        assert!(frame(&[1, 0, 0, 7]).is_err());
    }

    #[test]
    fn start_and_finish_fill_length() {
        let mut out = vec![0xaa];
        let at = start_message(&mut out, Version::V13, 2, Xid(5));
        out.extend_from_slice(b"ping");
        finish_message(&mut out, at);
        assert_eq!(
            &out[1..],
            &[4, 2, 0, 12, 0, 0, 0, 5, b'p', b'i', b'n', b'g']
        );
        let h = Header::parse(&out[1..]).unwrap();
        assert_eq!(h.length, 12);
    }

    #[test]
    fn table_gives_length_rules() {
        let r = MsgType10::from(5u8).length_rule().unwrap();
        assert!(r.check(8, "x").is_ok());
        assert!(r.check(9, "x").is_err());
        assert_eq!(MsgType13::from(200u8).length_rule(), None);
        assert_eq!(MsgType13::from(29u8), MsgType13::MeterMod);
    }

    #[test]
    fn kinds_name_the_same_meaning_in_both_versions() {
        assert_eq!(MsgKind::of(Version::V10, 10), MsgKind::PacketIn);
        assert_eq!(MsgKind::of(Version::V13, 10), MsgKind::PacketIn);
        assert_eq!(MsgKind::of(Version::V10, 18), MsgKind::BarrierRequest);
        assert_eq!(MsgKind::of(Version::V13, 20), MsgKind::BarrierRequest);
        assert_eq!(MsgKind::of(Version::V10, 17), MsgKind::StatsReply);
        assert_eq!(MsgKind::of(Version::V13, 19), MsgKind::StatsReply);
        assert_eq!(MsgKind::of(Version::V10, 24), MsgKind::Unknown);
        assert_eq!(MsgKind::of(Version::V13, 24), MsgKind::RoleRequest);
    }
}
