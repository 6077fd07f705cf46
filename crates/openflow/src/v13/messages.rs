//! Bodies of the OpenFlow 1.3 messages that are neither hot nor
//! multipart (1.3.5 §7.3, §7.4, §7.5): errors, features, switch config,
//! port status and port mod, table mod, queue config, roles and async
//! config. Each body has `decode_body(r)`, which reads from just after the
//! header, and `encode_body(out)`.

use crate::error::{DecodeError, ErrorKind};
use crate::types::PortReason;
use crate::types::{DatapathId, MacAddr, PortNo};
use crate::v13::port::Port;
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
        let c = err.reply(crate::types::Version::V13);
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

/// OFPT_PORT_STATUS's body (`ofp_port_status`, 1.3.5 §7.4.3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortStatus {
    /// `reason`.
    pub reason: PortReason,
    /// `desc`.
    pub desc: Port,
}

impl PortStatus {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<PortStatus, DecodeError> {
        let reason = r.u8("ofp_port_status.reason")?.into();
        r.skip(7, "ofp_port_status.pad")?;
        Ok(PortStatus {
            reason,
            desc: Port::parse(r)?,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u8(self.reason.into());
        out.put_zeros(7);
        self.desc.emit(out);
    }
}

/// OFPT_PORT_MOD's body (`ofp_port_mod`, 1.3.5 §7.3.4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortMod {
    /// `port_no`.
    pub port_no: PortNo,
    /// `hw_addr`, a sanity check.
    pub hw_addr: MacAddr,
    /// `config`: `port_config` bits to set.
    pub config: u32,
    /// `mask`: which `config` bits to change.
    pub mask: u32,
    /// `advertise`: `port_features` bits, or 0 to leave unchanged.
    pub advertise: u32,
}

impl PortMod {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<PortMod, DecodeError> {
        let port_no = PortNo(r.u32("ofp_port_mod.port_no")?);
        r.skip(4, "ofp_port_mod.pad")?;
        let hw_addr = MacAddr(r.array("ofp_port_mod.hw_addr")?);
        r.skip(2, "ofp_port_mod.pad2")?;
        let config = r.u32("ofp_port_mod.config")?;
        let mask = r.u32("ofp_port_mod.mask")?;
        let advertise = r.u32("ofp_port_mod.advertise")?;
        r.skip(4, "ofp_port_mod.pad3")?;
        Ok(PortMod {
            port_no,
            hw_addr,
            config,
            mask,
            advertise,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port_no.0);
        out.put_zeros(4);
        out.put_slice(&self.hw_addr.0);
        out.put_zeros(2);
        out.put_u32(self.config);
        out.put_u32(self.mask);
        out.put_u32(self.advertise);
        out.put_zeros(4);
    }
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

/// `OFPQ_ALL`: all queues (queue stats requests).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// One queue property (`ofp_queue_prop_header` and what follows,
/// 1.3.5 §7.2.2). Experimenter and unknown properties keep their bytes
/// exactly (no padding is added), so they round-trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QueueProp {
    /// OFPQT_MIN_RATE: minimum rate in 1/10 of a percent (> 1000: disabled).
    MinRate(u16),
    /// OFPQT_MAX_RATE: maximum rate in 1/10 of a percent.
    MaxRate(u16),
    /// OFPQT_EXPERIMENTER.
    Experimenter {
        /// Experimenter id.
        experimenter: u32,
        /// Experimenter-defined bytes.
        data: Vec<u8>,
    },
    /// A property type this codec does not know, kept as received.
    Unknown {
        /// `property`.
        property: u16,
        /// The bytes after the 8-byte property header.
        data: Vec<u8>,
    },
}

const OFPQT_MIN_RATE: u16 = 1;
const OFPQT_MAX_RATE: u16 = 2;
const OFPQT_EXPERIMENTER: u16 = 0xffff;

impl QueueProp {
    fn wire_len(&self) -> usize {
        match self {
            QueueProp::MinRate(_) | QueueProp::MaxRate(_) => 16,
            QueueProp::Experimenter { data, .. } => 16 + data.len(),
            QueueProp::Unknown { data, .. } => 8 + data.len(),
        }
    }

    /// Decodes one property; a length that does not fit its type or the
    /// input is [`ErrorKind::BadLength`].
    pub fn parse(r: &mut Reader<'_>) -> Result<QueueProp, DecodeError> {
        let at = r.offset();
        let property = r.u16("ofp_queue_prop_header.property")?;
        let len = r.u16("ofp_queue_prop_header.len")?;
        let bad_len = || {
            DecodeError::new(
                ErrorKind::BadLength {
                    claimed: len as usize,
                },
                at + 2,
                "ofp_queue_prop_header.len",
            )
        };
        let min = match property {
            OFPQT_MIN_RATE | OFPQT_MAX_RATE | OFPQT_EXPERIMENTER => 16,
            _ => 8,
        };
        let body_len = (len as usize)
            .checked_sub(4)
            .filter(|&n| len as usize >= min && n <= r.remaining())
            .ok_or_else(bad_len)?;
        let mut b = r.sub(body_len, "queue property")?;
        b.skip(4, "ofp_queue_prop_header.pad")?;
        Ok(match property {
            OFPQT_MIN_RATE | OFPQT_MAX_RATE if len != 16 => return Err(bad_len()),
            OFPQT_MIN_RATE => QueueProp::MinRate(b.u16("ofp_queue_prop_min_rate.rate")?),
            OFPQT_MAX_RATE => QueueProp::MaxRate(b.u16("ofp_queue_prop_max_rate.rate")?),
            OFPQT_EXPERIMENTER => {
                let experimenter = b.u32("ofp_queue_prop_experimenter.experimenter")?;
                b.skip(4, "ofp_queue_prop_experimenter.pad")?;
                QueueProp::Experimenter {
                    experimenter,
                    data: b.take_rest().to_vec(),
                }
            }
            _ => QueueProp::Unknown {
                property,
                data: b.take_rest().to_vec(),
            },
        })
    }

    /// Appends the property.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let property = match self {
            QueueProp::MinRate(_) => OFPQT_MIN_RATE,
            QueueProp::MaxRate(_) => OFPQT_MAX_RATE,
            QueueProp::Experimenter { .. } => OFPQT_EXPERIMENTER,
            QueueProp::Unknown { property, .. } => *property,
        };
        out.put_u16(property);
        out.put_u16(self.wire_len().min(u16::MAX as usize) as u16);
        out.put_zeros(4);
        match self {
            QueueProp::MinRate(rate) | QueueProp::MaxRate(rate) => {
                out.put_u16(*rate);
                out.put_zeros(6);
            }
            QueueProp::Experimenter { experimenter, data } => {
                out.put_u32(*experimenter);
                out.put_zeros(4);
                out.put_slice(data);
            }
            QueueProp::Unknown { data, .. } => out.put_slice(data),
        }
    }
}

/// `ofp_packet_queue` (1.3.5 §7.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketQueue {
    /// `queue_id`.
    pub queue_id: u32,
    /// `port` the queue is attached to.
    pub port: PortNo,
    /// `properties`.
    pub properties: Vec<QueueProp>,
}

impl PacketQueue {
    /// Decodes one queue; a `len` below 16 or past the input is
    /// [`ErrorKind::BadLength`].
    pub fn parse(r: &mut Reader<'_>) -> Result<PacketQueue, DecodeError> {
        let queue_id = r.u32("ofp_packet_queue.queue_id")?;
        let port = PortNo(r.u32("ofp_packet_queue.port")?);
        let at = r.offset();
        let len = r.u16("ofp_packet_queue.len")?;
        let body_len = (len as usize)
            .checked_sub(10)
            .filter(|&n| len >= 16 && n <= r.remaining())
            .ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadLength {
                        claimed: len as usize,
                    },
                    at,
                    "ofp_packet_queue.len",
                )
            })?;
        let mut b = r.sub(body_len, "ofp_packet_queue")?;
        b.skip(6, "ofp_packet_queue.pad")?;
        let mut properties = Vec::new();
        while !b.is_empty() {
            properties.push(QueueProp::parse(&mut b)?);
        }
        Ok(PacketQueue {
            queue_id,
            port,
            properties,
        })
    }

    /// Appends the queue.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.queue_id);
        out.put_u32(self.port.0);
        let at = out.len();
        out.put_u16(0);
        out.put_zeros(6);
        for p in &self.properties {
            p.emit(out);
        }
        let len = (out.len() - at + 8).min(u16::MAX as usize) as u16;
        out.patch_u16(at, len);
    }
}

/// OFPT_QUEUE_GET_CONFIG_REPLY's body (`ofp_queue_get_config_reply`,
/// 1.3.5 §7.3.6).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueConfig {
    /// `port` that was queried.
    pub port: PortNo,
    /// The port's queues.
    pub queues: Vec<PacketQueue>,
}

impl QueueConfig {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<QueueConfig, DecodeError> {
        let port = PortNo(r.u32("ofp_queue_get_config_reply.port")?);
        r.skip(4, "ofp_queue_get_config_reply.pad")?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::parse(r)?);
        }
        Ok(QueueConfig { port, queues })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port.0);
        out.put_zeros(4);
        for q in &self.queues {
            q.emit(out);
        }
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

    #[test]
    fn queue_config_round_trip() {
        let q = QueueConfig {
            port: PortNo(1),
            queues: vec![
                PacketQueue {
                    queue_id: 7,
                    port: PortNo(1),
                    properties: vec![
                        QueueProp::MinRate(100),
                        QueueProp::MaxRate(900),
                        QueueProp::Experimenter {
                            experimenter: 0x2320,
                            data: vec![1, 2, 3],
                        },
                        QueueProp::Unknown {
                            property: 9,
                            data: vec![],
                        },
                    ],
                },
                PacketQueue {
                    queue_id: 8,
                    port: PortNo(1),
                    properties: vec![],
                },
            ],
        };
        let mut out = Vec::new();
        q.encode_body(&mut out);
        assert_eq!(&out[16..18], &[0, 16 + 16 + 16 + 19 + 8]);
        let mut r = Reader::new(&out);
        assert_eq!(QueueConfig::decode_body(&mut r).unwrap(), q);
        assert!(r.is_empty());
    }

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
