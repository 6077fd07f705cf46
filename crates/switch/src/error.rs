//! The errors a switch sends back, named as the specifications name them
//! (OpenFlow 1.0.0 §5.4.4, OpenFlow 1.3.5 §7.4.4), each with its wire
//! type and code per version (Open vSwitch's `ofp-errors.h` shape).
//!
//! A request that fails is answered with an OFPT_ERROR carrying
//! [`OfError::code`] and the first 64 bytes of the request; nothing a
//! controller sends makes the switch panic.

use baton_openflow::Version;
use baton_openflow::error::ErrorCode;
use std::fmt;

/// An error the switch reports to a controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OfError {
    /// `OFPHFC_INCOMPATIBLE`: no common version.
    HelloIncompatible,
    /// `OFPBRC_BAD_VERSION`.
    BadVersion,
    /// `OFPBRC_BAD_TYPE`: a message type the switch does not handle.
    BadType,
    /// `OFPBRC_BAD_STAT` (1.0) / `OFPBRC_BAD_MULTIPART` (1.3).
    BadStat,
    /// `OFPBRC_BAD_VENDOR` (1.0) / `OFPBRC_BAD_EXPERIMENTER` (1.3).
    BadExperimenter,
    /// `OFPBRC_BAD_SUBTYPE` (1.0) / `OFPBRC_BAD_EXP_TYPE` (1.3).
    BadExpType,
    /// `OFPBRC_EPERM`.
    RequestEperm,
    /// `OFPBRC_BAD_LEN`.
    BadLen,
    /// `OFPBRC_BUFFER_EMPTY`: the buffer was already used.
    BufferEmpty,
    /// `OFPBRC_BUFFER_UNKNOWN`: no such buffer.
    BufferUnknown,
    /// `OFPBRC_BAD_TABLE_ID` (1.3).
    BadTableId,
    /// `OFPBRC_IS_SLAVE` (1.3): a slave controller tried to change state.
    IsSlave,
    /// `OFPBRC_BAD_PORT` (1.3): bad `in_port` in a packet-out.
    BadPort,
    /// `OFPBAC_BAD_TYPE`: unknown or unsupported action.
    BadActionType,
    /// `OFPBAC_BAD_LEN`.
    BadActionLen,
    /// `OFPBAC_BAD_VENDOR` / `OFPBAC_BAD_EXPERIMENTER`.
    BadActionExperimenter,
    /// `OFPBAC_BAD_VENDOR_TYPE` / `OFPBAC_BAD_EXP_TYPE`.
    BadActionExpType,
    /// `OFPBAC_BAD_OUT_PORT`.
    BadOutPort,
    /// `OFPBAC_BAD_ARGUMENT`.
    BadArgument,
    /// `OFPBAC_TOO_MANY`.
    TooManyActions,
    /// `OFPBAC_BAD_QUEUE`.
    BadQueue,
    /// `OFPBAC_BAD_OUT_GROUP` (1.3): the group does not exist.
    BadOutGroup,
    /// `OFPBAC_MATCH_INCONSISTENT` (1.3): a set-field without its
    /// prerequisites in the match.
    MatchInconsistent,
    /// `OFPBAC_BAD_SET_TYPE` (1.3): a field the switch cannot set.
    BadSetType,
    /// `OFPBAC_BAD_SET_ARGUMENT` (1.3).
    BadSetArgument,
    /// `OFPBIC_UNKNOWN_INST` (1.3).
    UnknownInstruction,
    /// `OFPBIC_UNSUP_INST` (1.3): e.g. an instruction given twice.
    UnsupportedInstruction,
    /// `OFPBIC_BAD_TABLE_ID` (1.3): goto a table that is not later.
    BadGotoTable,
    /// `OFPBIC_BAD_EXPERIMENTER` (1.3).
    BadInstructionExperimenter,
    /// `OFPBMC_BAD_WILDCARDS` (1.3): value bits outside the mask.
    BadWildcards,
    /// `OFPBMC_BAD_FIELD` (1.3): a field the switch cannot match.
    BadField,
    /// `OFPBMC_BAD_VALUE` (1.3).
    BadValue,
    /// `OFPBMC_BAD_PREREQ` (1.3): a field without its prerequisites.
    BadPrereq,
    /// `OFPFMFC_ALL_TABLES_FULL` (1.0) / `OFPFMFC_TABLE_FULL` (1.3).
    TableFull,
    /// `OFPFMFC_BAD_TABLE_ID` (1.3).
    FlowModBadTableId,
    /// `OFPFMFC_OVERLAP`: CHECK_OVERLAP found an overlapping flow.
    Overlap,
    /// `OFPFMFC_EPERM`.
    FlowModEperm,
    /// `OFPFMFC_BAD_EMERG_TIMEOUT` (1.0) / `OFPFMFC_BAD_TIMEOUT` (1.3).
    BadTimeout,
    /// `OFPFMFC_BAD_COMMAND`.
    BadFlowModCommand,
    /// `OFPFMFC_BAD_FLAGS` (1.3).
    BadFlowModFlags,
    /// `OFPFMFC_UNSUPPORTED` (1.0): e.g. emergency flows.
    FlowModUnsupported,
    /// `OFPGMFC_GROUP_EXISTS`.
    GroupExists,
    /// `OFPGMFC_INVALID_GROUP`.
    InvalidGroup,
    /// `OFPGMFC_WEIGHT_UNSUPPORTED`.
    WeightUnsupported,
    /// `OFPGMFC_OUT_OF_GROUPS`.
    OutOfGroups,
    /// `OFPGMFC_CHAINING_UNSUPPORTED`: a group action inside a bucket.
    ChainingUnsupported,
    /// `OFPGMFC_UNKNOWN_GROUP`.
    UnknownGroup,
    /// `OFPGMFC_BAD_TYPE`.
    BadGroupType,
    /// `OFPGMFC_BAD_COMMAND`.
    BadGroupCommand,
    /// `OFPGMFC_BAD_BUCKET`.
    BadBucket,
    /// `OFPGMFC_BAD_WATCH`.
    BadWatch,
    /// `OFPPMFC_BAD_PORT`.
    PortModBadPort,
    /// `OFPPMFC_BAD_HW_ADDR`.
    PortModBadHwAddr,
    /// `OFPTMFC_BAD_TABLE`.
    TableModBadTable,
    /// `OFPSCFC_BAD_FLAGS` (1.3).
    SwitchConfigBadFlags,
    /// `OFPRRFC_STALE`: an old generation id.
    RoleStale,
    /// `OFPRRFC_BAD_ROLE`.
    BadRole,
    /// `OFPMMFC_METER_EXISTS`.
    MeterExists,
    /// `OFPMMFC_INVALID_METER`.
    InvalidMeter,
    /// `OFPMMFC_UNKNOWN_METER`.
    UnknownMeter,
    /// `OFPMMFC_BAD_COMMAND`.
    BadMeterCommand,
    /// `OFPMMFC_BAD_FLAGS`.
    BadMeterFlags,
    /// `OFPMMFC_BAD_RATE`.
    BadMeterRate,
    /// `OFPMMFC_BAD_BAND`: a band type the switch does not implement.
    BadBand,
    /// `OFPMMFC_OUT_OF_METERS`.
    OutOfMeters,
    /// `OFPMMFC_OUT_OF_BANDS`.
    OutOfBands,
    /// `OFPTFFC_EPERM` (1.3): the pipeline cannot be changed.
    TableFeaturesEperm,
}

/// `ofp_error_type` numbers (1.0.0 §5.4.4 / 1.3.5 §7.4.4).
mod ty {
    pub const HELLO_FAILED: u16 = 0;
    pub const BAD_REQUEST: u16 = 1;
    pub const BAD_ACTION: u16 = 2;
    pub const BAD_INSTRUCTION_13: u16 = 3;
    pub const BAD_MATCH_13: u16 = 4;
    pub const FLOW_MOD_FAILED_10: u16 = 3;
    pub const FLOW_MOD_FAILED_13: u16 = 5;
    pub const GROUP_MOD_FAILED_13: u16 = 6;
    pub const PORT_MOD_FAILED_10: u16 = 4;
    pub const PORT_MOD_FAILED_13: u16 = 7;
    pub const TABLE_MOD_FAILED_13: u16 = 8;
    pub const SWITCH_CONFIG_FAILED_13: u16 = 10;
    pub const ROLE_REQUEST_FAILED_13: u16 = 11;
    pub const METER_MOD_FAILED_13: u16 = 12;
    pub const TABLE_FEATURES_FAILED_13: u16 = 13;
}

impl OfError {
    /// The wire type and code for a connection of `version`. Errors that
    /// 1.0 has no type for (groups, meters, roles, 1.3 match and
    /// instruction errors) only arise on 1.3 switches; for 1.0 they map to
    /// `OFPBRC_EPERM`.
    pub fn code(self, version: Version) -> ErrorCode {
        use OfError as E;
        use ty::*;
        let v13 = version == Version::V13;
        let fm = if v13 {
            FLOW_MOD_FAILED_13
        } else {
            FLOW_MOD_FAILED_10
        };
        let pm = if v13 {
            PORT_MOD_FAILED_13
        } else {
            PORT_MOD_FAILED_10
        };
        let (t, c) = match self {
            E::HelloIncompatible => (HELLO_FAILED, 0),
            E::BadVersion => (BAD_REQUEST, 0),
            E::BadType => (BAD_REQUEST, 1),
            E::BadStat => (BAD_REQUEST, 2),
            E::BadExperimenter => (BAD_REQUEST, 3),
            E::BadExpType => (BAD_REQUEST, 4),
            E::RequestEperm => (BAD_REQUEST, 5),
            E::BadLen => (BAD_REQUEST, 6),
            E::BufferEmpty => (BAD_REQUEST, 7),
            E::BufferUnknown => (BAD_REQUEST, 8),
            E::BadTableId if v13 => (BAD_REQUEST, 9),
            E::IsSlave if v13 => (BAD_REQUEST, 10),
            E::BadPort if v13 => (BAD_REQUEST, 11),
            E::BadTableId | E::IsSlave | E::BadPort => (BAD_REQUEST, 5),
            E::BadActionType => (BAD_ACTION, 0),
            E::BadActionLen => (BAD_ACTION, 1),
            E::BadActionExperimenter => (BAD_ACTION, 2),
            E::BadActionExpType => (BAD_ACTION, 3),
            E::BadOutPort => (BAD_ACTION, 4),
            E::BadArgument => (BAD_ACTION, 5),
            E::TooManyActions => (BAD_ACTION, 7),
            E::BadQueue => (BAD_ACTION, 8),
            E::BadOutGroup if v13 => (BAD_ACTION, 9),
            E::MatchInconsistent if v13 => (BAD_ACTION, 10),
            E::BadSetType if v13 => (BAD_ACTION, 13),
            E::BadSetArgument if v13 => (BAD_ACTION, 15),
            E::BadOutGroup | E::MatchInconsistent | E::BadSetType | E::BadSetArgument => {
                (BAD_ACTION, 5)
            }
            E::UnknownInstruction if v13 => (BAD_INSTRUCTION_13, 0),
            E::UnsupportedInstruction if v13 => (BAD_INSTRUCTION_13, 1),
            E::BadGotoTable if v13 => (BAD_INSTRUCTION_13, 2),
            E::BadInstructionExperimenter if v13 => (BAD_INSTRUCTION_13, 5),
            E::BadWildcards if v13 => (BAD_MATCH_13, 5),
            E::BadField if v13 => (BAD_MATCH_13, 6),
            E::BadValue if v13 => (BAD_MATCH_13, 7),
            E::BadPrereq if v13 => (BAD_MATCH_13, 9),
            E::TableFull => (fm, if v13 { 1 } else { 0 }),
            E::FlowModBadTableId if v13 => (fm, 2),
            E::Overlap => (fm, if v13 { 3 } else { 1 }),
            E::FlowModEperm => (fm, if v13 { 4 } else { 2 }),
            E::BadTimeout => (fm, if v13 { 5 } else { 3 }),
            E::BadFlowModCommand => (fm, if v13 { 6 } else { 4 }),
            E::BadFlowModFlags if v13 => (fm, 7),
            E::FlowModUnsupported if !v13 => (fm, 5),
            E::GroupExists if v13 => (GROUP_MOD_FAILED_13, 0),
            E::InvalidGroup if v13 => (GROUP_MOD_FAILED_13, 1),
            E::WeightUnsupported if v13 => (GROUP_MOD_FAILED_13, 2),
            E::OutOfGroups if v13 => (GROUP_MOD_FAILED_13, 3),
            E::ChainingUnsupported if v13 => (GROUP_MOD_FAILED_13, 5),
            E::UnknownGroup if v13 => (GROUP_MOD_FAILED_13, 8),
            E::BadGroupType if v13 => (GROUP_MOD_FAILED_13, 10),
            E::BadGroupCommand if v13 => (GROUP_MOD_FAILED_13, 11),
            E::BadBucket if v13 => (GROUP_MOD_FAILED_13, 12),
            E::BadWatch if v13 => (GROUP_MOD_FAILED_13, 13),
            E::PortModBadPort => (pm, 0),
            E::PortModBadHwAddr => (pm, 1),
            E::TableModBadTable if v13 => (TABLE_MOD_FAILED_13, 0),
            E::SwitchConfigBadFlags if v13 => (SWITCH_CONFIG_FAILED_13, 0),
            E::RoleStale if v13 => (ROLE_REQUEST_FAILED_13, 0),
            E::BadRole if v13 => (ROLE_REQUEST_FAILED_13, 2),
            E::MeterExists if v13 => (METER_MOD_FAILED_13, 1),
            E::InvalidMeter if v13 => (METER_MOD_FAILED_13, 2),
            E::UnknownMeter if v13 => (METER_MOD_FAILED_13, 3),
            E::BadMeterCommand if v13 => (METER_MOD_FAILED_13, 4),
            E::BadMeterFlags if v13 => (METER_MOD_FAILED_13, 5),
            E::BadMeterRate if v13 => (METER_MOD_FAILED_13, 6),
            E::BadBand if v13 => (METER_MOD_FAILED_13, 8),
            E::OutOfMeters if v13 => (METER_MOD_FAILED_13, 10),
            E::OutOfBands if v13 => (METER_MOD_FAILED_13, 11),
            E::TableFeaturesEperm if v13 => (TABLE_FEATURES_FAILED_13, 5),
            // 1.3-only errors on a 1.0 connection, and 1.0-only ones on
            // 1.3: the closest generic code.
            _ => (BAD_REQUEST, 5),
        };
        ErrorCode::new(t, c)
    }
}

impl fmt::Display for OfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for OfError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_each_spec() {
        let c = |e: OfError, v| {
            let c = e.code(v);
            (c.error_type, c.code)
        };
        assert_eq!(c(OfError::TableFull, Version::V10), (3, 0));
        assert_eq!(c(OfError::TableFull, Version::V13), (5, 1));
        assert_eq!(c(OfError::Overlap, Version::V10), (3, 1));
        assert_eq!(c(OfError::Overlap, Version::V13), (5, 3));
        assert_eq!(c(OfError::BadOutGroup, Version::V13), (2, 9));
        assert_eq!(c(OfError::UnknownGroup, Version::V13), (6, 8));
        assert_eq!(c(OfError::BadPrereq, Version::V13), (4, 9));
        assert_eq!(c(OfError::IsSlave, Version::V13), (1, 10));
        assert_eq!(c(OfError::BufferUnknown, Version::V10), (1, 8));
        assert_eq!(c(OfError::PortModBadPort, Version::V10), (4, 0));
        assert_eq!(c(OfError::PortModBadPort, Version::V13), (7, 0));
    }
}
