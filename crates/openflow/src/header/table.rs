//! The declarative tables of raw message types, one per version, after
//! Open vSwitch's `ofp-msgs.h`: each line gives a type's wire number, its
//! meaning ([`MsgKind`], OVS's `enum ofptype`) and the length rule of its
//! fixed part. [`super::Header::check`] reads them.

use crate::error::{DecodeError, ErrorKind};
use crate::version::Version;

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
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $kind:ident, $min:literal ..= $max:expr ; )+
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

            /// What this type means ([`MsgKind::Unknown`] for an unknown
            /// type).
            pub const fn kind(self) -> MsgKind {
                match self {
                    $( $name::$variant => MsgKind::$kind, )+
                    $name::Unknown(_) => MsgKind::Unknown,
                }
            }
        }

        impl From<$name> for MsgKind {
            fn from(t: $name) -> MsgKind {
                t.kind()
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
        Hello = 0 => Hello, 8..=ANY;
        /// OFPT_ERROR.
        Error = 1 => Error, 12..=ANY;
        /// OFPT_ECHO_REQUEST.
        EchoRequest = 2 => EchoRequest, 8..=ANY;
        /// OFPT_ECHO_REPLY.
        EchoReply = 3 => EchoReply, 8..=ANY;
        /// OFPT_VENDOR.
        Vendor = 4 => Experimenter, 12..=ANY;
        /// OFPT_FEATURES_REQUEST.
        FeaturesRequest = 5 => FeaturesRequest, 8..=8;
        /// OFPT_FEATURES_REPLY: 32 bytes then `ofp_phy_port[]` (48 each).
        FeaturesReply = 6 => FeaturesReply, 32..=ANY;
        /// OFPT_GET_CONFIG_REQUEST.
        GetConfigRequest = 7 => GetConfigRequest, 8..=8;
        /// OFPT_GET_CONFIG_REPLY.
        GetConfigReply = 8 => GetConfigReply, 12..=12;
        /// OFPT_SET_CONFIG.
        SetConfig = 9 => SetConfig, 12..=12;
        /// OFPT_PACKET_IN: 18 bytes then the frame.
        PacketIn = 10 => PacketIn, 18..=ANY;
        /// OFPT_FLOW_REMOVED.
        FlowRemoved = 11 => FlowRemoved, 88..=88;
        /// OFPT_PORT_STATUS.
        PortStatus = 12 => PortStatus, 64..=64;
        /// OFPT_PACKET_OUT: 16 bytes, actions, then the frame.
        PacketOut = 13 => PacketOut, 16..=ANY;
        /// OFPT_FLOW_MOD: 72 bytes then actions.
        FlowMod = 14 => FlowMod, 72..=ANY;
        /// OFPT_PORT_MOD.
        PortMod = 15 => PortMod, 32..=32;
        /// OFPT_STATS_REQUEST.
        StatsRequest = 16 => StatsRequest, 12..=ANY;
        /// OFPT_STATS_REPLY.
        StatsReply = 17 => StatsReply, 12..=ANY;
        /// OFPT_BARRIER_REQUEST.
        BarrierRequest = 18 => BarrierRequest, 8..=8;
        /// OFPT_BARRIER_REPLY.
        BarrierReply = 19 => BarrierReply, 8..=8;
        /// OFPT_QUEUE_GET_CONFIG_REQUEST.
        QueueGetConfigRequest = 20 => QueueGetConfigRequest, 12..=12;
        /// OFPT_QUEUE_GET_CONFIG_REPLY: 16 bytes then `ofp_packet_queue[]`.
        QueueGetConfigReply = 21 => QueueGetConfigReply, 16..=ANY;
    }
}

msg_table! {
    /// OpenFlow 1.3 message types (1.3.5 §7.1, `enum ofp_type`) and their
    /// lengths.
    pub enum MsgType13 {
        /// OFPT_HELLO: 8 bytes then hello elements.
        Hello = 0 => Hello, 8..=ANY;
        /// OFPT_ERROR.
        Error = 1 => Error, 12..=ANY;
        /// OFPT_ECHO_REQUEST.
        EchoRequest = 2 => EchoRequest, 8..=ANY;
        /// OFPT_ECHO_REPLY.
        EchoReply = 3 => EchoReply, 8..=ANY;
        /// OFPT_EXPERIMENTER.
        Experimenter = 4 => Experimenter, 16..=ANY;
        /// OFPT_FEATURES_REQUEST.
        FeaturesRequest = 5 => FeaturesRequest, 8..=8;
        /// OFPT_FEATURES_REPLY (no ports in 1.3).
        FeaturesReply = 6 => FeaturesReply, 32..=32;
        /// OFPT_GET_CONFIG_REQUEST.
        GetConfigRequest = 7 => GetConfigRequest, 8..=8;
        /// OFPT_GET_CONFIG_REPLY.
        GetConfigReply = 8 => GetConfigReply, 12..=12;
        /// OFPT_SET_CONFIG.
        SetConfig = 9 => SetConfig, 12..=12;
        /// OFPT_PACKET_IN: 24 bytes, a match (at least 8), 2 pad, the frame.
        PacketIn = 10 => PacketIn, 34..=ANY;
        /// OFPT_FLOW_REMOVED: 48 bytes then a match.
        FlowRemoved = 11 => FlowRemoved, 56..=ANY;
        /// OFPT_PORT_STATUS.
        PortStatus = 12 => PortStatus, 80..=80;
        /// OFPT_PACKET_OUT: 24 bytes, actions, then the frame.
        PacketOut = 13 => PacketOut, 24..=ANY;
        /// OFPT_FLOW_MOD: 48 bytes, a match, then instructions.
        FlowMod = 14 => FlowMod, 56..=ANY;
        /// OFPT_GROUP_MOD: 16 bytes then buckets.
        GroupMod = 15 => GroupMod, 16..=ANY;
        /// OFPT_PORT_MOD.
        PortMod = 16 => PortMod, 40..=40;
        /// OFPT_TABLE_MOD.
        TableMod = 17 => TableMod, 16..=16;
        /// OFPT_MULTIPART_REQUEST.
        MultipartRequest = 18 => StatsRequest, 16..=ANY;
        /// OFPT_MULTIPART_REPLY.
        MultipartReply = 19 => StatsReply, 16..=ANY;
        /// OFPT_BARRIER_REQUEST.
        BarrierRequest = 20 => BarrierRequest, 8..=8;
        /// OFPT_BARRIER_REPLY.
        BarrierReply = 21 => BarrierReply, 8..=8;
        /// OFPT_QUEUE_GET_CONFIG_REQUEST.
        QueueGetConfigRequest = 22 => QueueGetConfigRequest, 16..=16;
        /// OFPT_QUEUE_GET_CONFIG_REPLY: 16 bytes then `ofp_packet_queue[]`.
        QueueGetConfigReply = 23 => QueueGetConfigReply, 16..=ANY;
        /// OFPT_ROLE_REQUEST.
        RoleRequest = 24 => RoleRequest, 24..=24;
        /// OFPT_ROLE_REPLY.
        RoleReply = 25 => RoleReply, 24..=24;
        /// OFPT_GET_ASYNC_REQUEST.
        GetAsyncRequest = 26 => GetAsyncRequest, 8..=8;
        /// OFPT_GET_ASYNC_REPLY.
        GetAsyncReply = 27 => GetAsyncReply, 32..=32;
        /// OFPT_SET_ASYNC.
        SetAsync = 28 => SetAsync, 32..=32;
        /// OFPT_METER_MOD: 16 bytes then bands.
        MeterMod = 29 => MeterMod, 16..=ANY;
    }
}

/// Whether a message of a request/reply pair (ECHO, BARRIER) is the
/// request or the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// OFPT_ECHO_REQUEST / OFPT_BARRIER_REQUEST.
    Request,
    /// OFPT_ECHO_REPLY / OFPT_BARRIER_REPLY.
    Reply,
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

/// The length rule of raw type `raw` in `version`'s table; `None` for a
/// type the version does not have.
#[inline]
pub fn length_rule(version: Version, raw: u8) -> Option<LengthRule> {
    match version {
        Version::V10 => MsgType10::from(raw).length_rule(),
        Version::V13 => MsgType13::from(raw).length_rule(),
    }
}

impl MsgKind {
    /// Its name in snake case, `packet_in`, as metrics and logs write it.
    pub fn name(self) -> &'static str {
        match self {
            MsgKind::Hello => "hello",
            MsgKind::Error => "error",
            MsgKind::EchoRequest => "echo_request",
            MsgKind::EchoReply => "echo_reply",
            MsgKind::Experimenter => "experimenter",
            MsgKind::FeaturesRequest => "features_request",
            MsgKind::FeaturesReply => "features_reply",
            MsgKind::GetConfigRequest => "get_config_request",
            MsgKind::GetConfigReply => "get_config_reply",
            MsgKind::SetConfig => "set_config",
            MsgKind::PacketIn => "packet_in",
            MsgKind::FlowRemoved => "flow_removed",
            MsgKind::PortStatus => "port_status",
            MsgKind::PacketOut => "packet_out",
            MsgKind::FlowMod => "flow_mod",
            MsgKind::GroupMod => "group_mod",
            MsgKind::PortMod => "port_mod",
            MsgKind::TableMod => "table_mod",
            MsgKind::StatsRequest => "stats_request",
            MsgKind::StatsReply => "stats_reply",
            MsgKind::BarrierRequest => "barrier_request",
            MsgKind::BarrierReply => "barrier_reply",
            MsgKind::QueueGetConfigRequest => "queue_get_config_request",
            MsgKind::QueueGetConfigReply => "queue_get_config_reply",
            MsgKind::RoleRequest => "role_request",
            MsgKind::RoleReply => "role_reply",
            MsgKind::GetAsyncRequest => "get_async_request",
            MsgKind::GetAsyncReply => "get_async_reply",
            MsgKind::SetAsync => "set_async",
            MsgKind::MeterMod => "meter_mod",
            MsgKind::Unknown => "unknown",
        }
    }

    /// The kind of raw type `raw` in `version`.
    #[inline]
    pub fn of(version: Version, raw: u8) -> MsgKind {
        match version {
            Version::V10 => MsgType10::from(raw).kind(),
            Version::V13 => MsgType13::from(raw).kind(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(MsgKind::PacketIn.name(), "packet_in");
        assert_eq!(
            MsgKind::QueueGetConfigReply.name(),
            "queue_get_config_reply"
        );
    }
}
