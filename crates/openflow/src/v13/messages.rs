//! Bodies of the OpenFlow 1.3 messages that are neither hot nor
//! multipart (1.3.5 §7.3, §7.4, §7.5): errors, features, switch config,
//! port status and port mod, table mod, FLOW_REMOVED, roles and async
//! config (queue configuration is in [`super::queue`]). Each body has `decode_body(r)`, which reads from just after the
//! header, and `encode_body(out)`.

use crate::error::DecodeError;
use crate::types::{Cookie, DatapathId};
use crate::v13::oxm::Match13;
pub use crate::v13::port::{PortMod, PortStatus};
use crate::wire::{Put, Reader};

crate::wire_enum! {
    /// `enum ofp_error_type` (1.3.5 §7.4.4), without `OFPET_EXPERIMENTER`
    /// (0xffff), which has its own form [`ErrorMsg::Experimenter`].
    pub enum ErrorType: u16 {
        /// OFPET_HELLO_FAILED.
        HelloFailed = 0,
        /// OFPET_BAD_REQUEST.
        BadRequest = 1,
        /// OFPET_BAD_ACTION.
        BadAction = 2,
        /// OFPET_BAD_INSTRUCTION.
        BadInstruction = 3,
        /// OFPET_BAD_MATCH.
        BadMatch = 4,
        /// OFPET_FLOW_MOD_FAILED.
        FlowModFailed = 5,
        /// OFPET_GROUP_MOD_FAILED.
        GroupModFailed = 6,
        /// OFPET_PORT_MOD_FAILED.
        PortModFailed = 7,
        /// OFPET_TABLE_MOD_FAILED.
        TableModFailed = 8,
        /// OFPET_QUEUE_OP_FAILED.
        QueueOpFailed = 9,
        /// OFPET_SWITCH_CONFIG_FAILED.
        SwitchConfigFailed = 10,
        /// OFPET_ROLE_REQUEST_FAILED.
        RoleRequestFailed = 11,
        /// OFPET_METER_MOD_FAILED.
        MeterModFailed = 12,
        /// OFPET_TABLE_FEATURES_FAILED.
        TableFeaturesFailed = 13,
    }
}

/// `OFPET_EXPERIMENTER`.
pub const OFPET_EXPERIMENTER: u16 = 0xffff;

/// How many bytes of an offending message an error reply carries (1.3.5
/// §7.4.4: "at least 64 bytes of the failed request").
pub const ERROR_DATA_LEN: usize = 64;

/// OFPT_ERROR's body (1.3.5 §7.4.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorMsg {
    /// `ofp_error_msg`. `error_type` must not be `Unknown(0xffff)`, which
    /// would be read back as [`ErrorMsg::Experimenter`].
    Standard {
        /// `type`.
        error_type: ErrorType,
        /// `code`, whose meaning depends on `error_type`.
        code: u16,
        /// Usually the start of the offending message.
        data: Vec<u8>,
    },
    /// `ofp_error_experimenter_msg` (`type` = `OFPET_EXPERIMENTER`).
    Experimenter {
        /// `exp_type`.
        exp_type: u16,
        /// `experimenter`.
        experimenter: u32,
        /// Experimenter-defined bytes.
        data: Vec<u8>,
    },
}

impl ErrorMsg {
    /// The error to send back for a message that failed to decode: the
    /// type and code [`DecodeError::reply`] gives for 1.3, with the first
    /// [`ERROR_DATA_LEN`] bytes of the offending message.
    pub fn for_decode_error(err: &DecodeError, offending: &[u8]) -> ErrorMsg {
        let c = err.reply(crate::version::Version::V13);
        ErrorMsg::Standard {
            error_type: c.error_type.into(),
            code: c.code,
            data: offending[..offending.len().min(ERROR_DATA_LEN)].to_vec(),
        }
    }

    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<ErrorMsg, DecodeError> {
        let t = r.u16("ofp_error_msg.type")?;
        if t == OFPET_EXPERIMENTER {
            let exp_type = r.u16("ofp_error_experimenter_msg.exp_type")?;
            let experimenter = r.u32("ofp_error_experimenter_msg.experimenter")?;
            Ok(ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                data: r.take_rest().to_vec(),
            })
        } else {
            let code = r.u16("ofp_error_msg.code")?;
            Ok(ErrorMsg::Standard {
                error_type: t.into(),
                code,
                data: r.take_rest().to_vec(),
            })
        }
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        match self {
            ErrorMsg::Standard {
                error_type,
                code,
                data,
            } => {
                out.put_u16((*error_type).into());
                out.put_u16(*code);
                out.put_slice(data);
            }
            ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                data,
            } => {
                out.put_u16(OFPET_EXPERIMENTER);
                out.put_u16(*exp_type);
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
        }
    }
}

/// `enum ofp_capabilities` bits of [`SwitchFeatures::capabilities`]
/// (1.3.5 §7.3.1).
pub mod capabilities {
    /// OFPC_FLOW_STATS.
    pub const FLOW_STATS: u32 = 1 << 0;
    /// OFPC_TABLE_STATS.
    pub const TABLE_STATS: u32 = 1 << 1;
    /// OFPC_PORT_STATS.
    pub const PORT_STATS: u32 = 1 << 2;
    /// OFPC_GROUP_STATS.
    pub const GROUP_STATS: u32 = 1 << 3;
    /// OFPC_IP_REASM.
    pub const IP_REASM: u32 = 1 << 5;
    /// OFPC_QUEUE_STATS.
    pub const QUEUE_STATS: u32 = 1 << 6;
    /// OFPC_PORT_BLOCKED.
    pub const PORT_BLOCKED: u32 = 1 << 8;
}

/// OFPT_FEATURES_REPLY's body (`ofp_switch_features`, 1.3.5 §7.3.1). The
/// `reserved` word is ignored on decode and written as zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SwitchFeatures {
    /// `datapath_id`.
    pub datapath_id: DatapathId,
    /// `n_buffers`: packets the switch can buffer at once.
    pub n_buffers: u32,
    /// `n_tables`: tables supported.
    pub n_tables: u8,
    /// `auxiliary_id`: 0 for the main connection.
    pub auxiliary_id: u8,
    /// `capabilities`: [`capabilities`] bits.
    pub capabilities: u32,
}

impl SwitchFeatures {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<SwitchFeatures, DecodeError> {
        let datapath_id = DatapathId(r.u64("ofp_switch_features.datapath_id")?);
        let n_buffers = r.u32("ofp_switch_features.n_buffers")?;
        let n_tables = r.u8("ofp_switch_features.n_tables")?;
        let auxiliary_id = r.u8("ofp_switch_features.auxiliary_id")?;
        r.skip(2, "ofp_switch_features.pad")?;
        let capabilities = r.u32("ofp_switch_features.capabilities")?;
        r.skip(4, "ofp_switch_features.reserved")?;
        Ok(SwitchFeatures {
            datapath_id,
            n_buffers,
            n_tables,
            auxiliary_id,
            capabilities,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u64(self.datapath_id.0);
        out.put_u32(self.n_buffers);
        out.put_u8(self.n_tables);
        out.put_u8(self.auxiliary_id);
        out.put_zeros(2);
        out.put_u32(self.capabilities);
        out.put_zeros(4);
    }
}

/// `enum ofp_config_flags` values of [`SwitchConfig::flags`](crate::switch_config::SwitchConfig::flags)
/// (1.3.5 §7.3.2).
pub mod config_flags {
    /// OFPC_FRAG_NORMAL: no special handling for fragments.
    pub const FRAG_NORMAL: u16 = 0;
    /// OFPC_FRAG_DROP: drop fragments.
    pub const FRAG_DROP: u16 = 1;
    /// OFPC_FRAG_REASM: reassemble (only if OFPC_IP_REASM set).
    pub const FRAG_REASM: u16 = 2;
    /// OFPC_FRAG_MASK.
    pub const FRAG_MASK: u16 = 3;
}

/// Reserved table numbers (`enum ofp_table`, 1.3.5 §7.2.2 / §7.3.3).
pub mod table_id {
    /// OFPTT_MAX: last usable table number.
    pub const MAX: u8 = 0xfe;
    /// OFPTT_ALL: wildcard table (delete, stats, table mod).
    pub const ALL: u8 = 0xff;
}

/// OFPT_TABLE_MOD's body (`ofp_table_mod`, 1.3.5 §7.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TableMod {
    /// `table_id` ([`table_id::ALL`] for all tables).
    pub table_id: u8,
    /// `config` (`OFPTC_*` bits, deprecated in 1.3).
    pub config: u32,
}

impl TableMod {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<TableMod, DecodeError> {
        let table_id = r.u8("ofp_table_mod.table_id")?;
        r.skip(3, "ofp_table_mod.pad")?;
        Ok(TableMod {
            table_id,
            config: r.u32("ofp_table_mod.config")?,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.config);
    }
}

crate::wire_enum! {
    /// `enum ofp_flow_removed_reason` (1.3.5 §7.4.2).
    pub enum FlowRemovedReason: u8 {
        /// OFPRR_IDLE_TIMEOUT.
        IdleTimeout = 0,
        /// OFPRR_HARD_TIMEOUT.
        HardTimeout = 1,
        /// OFPRR_DELETE: evicted by a DELETE flow mod.
        Delete = 2,
        /// OFPRR_GROUP_DELETE: group was removed.
        GroupDelete = 3,
    }
}

/// OFPT_FLOW_REMOVED's body (`ofp_flow_removed`, 1.3.5 §7.4.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlowRemoved {
    /// `cookie`.
    pub cookie: Cookie,
    /// `priority`.
    pub priority: u16,
    /// `reason`.
    pub reason: FlowRemovedReason,
    /// `table_id`.
    pub table_id: u8,
    /// `duration_sec`: time the flow was alive, seconds.
    pub duration_sec: u32,
    /// `duration_nsec`: and nanoseconds beyond `duration_sec`.
    pub duration_nsec: u32,
    /// `idle_timeout` from the flow mod.
    pub idle_timeout: u16,
    /// `hard_timeout` from the flow mod.
    pub hard_timeout: u16,
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `match`.
    pub match_: Match13,
}

impl FlowRemoved {
    /// Decodes the body (the match must end the message).
    pub fn decode_body(r: &mut Reader<'_>) -> Result<FlowRemoved, DecodeError> {
        let fr = FlowRemoved {
            cookie: Cookie(r.u64("ofp_flow_removed.cookie")?),
            priority: r.u16("ofp_flow_removed.priority")?,
            reason: r.u8("ofp_flow_removed.reason")?.into(),
            table_id: r.u8("ofp_flow_removed.table_id")?,
            duration_sec: r.u32("ofp_flow_removed.duration_sec")?,
            duration_nsec: r.u32("ofp_flow_removed.duration_nsec")?,
            idle_timeout: r.u16("ofp_flow_removed.idle_timeout")?,
            hard_timeout: r.u16("ofp_flow_removed.hard_timeout")?,
            packet_count: r.u64("ofp_flow_removed.packet_count")?,
            byte_count: r.u64("ofp_flow_removed.byte_count")?,
            match_: Match13::parse(r)?,
        };
        r.finish("ofp_flow_removed")?;
        Ok(fr)
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u64(self.cookie.0);
        out.put_u16(self.priority);
        out.put_u8(self.reason.into());
        out.put_u8(self.table_id);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        self.match_.emit(out);
    }
}

crate::wire_enum! {
    /// `enum ofp_controller_role` (1.3.5 §7.3.9).
    pub enum ControllerRole: u32 {
        /// OFPCR_ROLE_NOCHANGE.
        NoChange = 0,
        /// OFPCR_ROLE_EQUAL.
        Equal = 1,
        /// OFPCR_ROLE_MASTER.
        Master = 2,
        /// OFPCR_ROLE_SLAVE.
        Slave = 3,
    }
}

/// The body of OFPT_ROLE_REQUEST and OFPT_ROLE_REPLY (`ofp_role_request`,
/// 1.3.5 §7.3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Role {
    /// `role`.
    pub role: ControllerRole,
    /// `generation_id`, a master election generation id.
    pub generation_id: u64,
}

impl Role {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<Role, DecodeError> {
        let role = r.u32("ofp_role_request.role")?.into();
        r.skip(4, "ofp_role_request.pad")?;
        Ok(Role {
            role,
            generation_id: r.u64("ofp_role_request.generation_id")?,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u32(self.role.into());
        out.put_zeros(4);
        out.put_u64(self.generation_id);
    }
}

/// The body of OFPT_GET_ASYNC_REPLY and OFPT_SET_ASYNC (`ofp_async_config`,
/// 1.3.5 §7.3.10). Index 0 is for master/equal roles, 1 for slave; each
/// mask has bit `1 << reason` set for the reasons to receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AsyncConfig {
    /// `packet_in_mask`.
    pub packet_in_mask: [u32; 2],
    /// `port_status_mask`.
    pub port_status_mask: [u32; 2],
    /// `flow_removed_mask`.
    pub flow_removed_mask: [u32; 2],
}

impl AsyncConfig {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<AsyncConfig, DecodeError> {
        let mut pair = |what| -> Result<[u32; 2], DecodeError> { Ok([r.u32(what)?, r.u32(what)?]) };
        Ok(AsyncConfig {
            packet_in_mask: pair("ofp_async_config.packet_in_mask")?,
            port_status_mask: pair("ofp_async_config.port_status_mask")?,
            flow_removed_mask: pair("ofp_async_config.flow_removed_mask")?,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        for m in [
            self.packet_in_mask,
            self.port_status_mask,
            self.flow_removed_mask,
        ] {
            out.put_u32(m[0]);
            out.put_u32(m[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn error_for_decode_error() {
        let e = DecodeError::new(ErrorKind::BadActionType(99), 40, "action");
        let msg = [0u8; 100];
        match ErrorMsg::for_decode_error(&e, &msg) {
            ErrorMsg::Standard {
                error_type,
                code,
                data,
            } => {
                assert_eq!(error_type, ErrorType::BadAction);
                assert_eq!(code, 0);
                assert_eq!(data.len(), ERROR_DATA_LEN);
            }
            other => panic!("{other:?}"),
        }
    }
}
