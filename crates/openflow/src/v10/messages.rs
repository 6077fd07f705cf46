//! Owned bodies of the OpenFlow 1.0 messages that are not on the hot path
//! (1.0.0 §5.3 to §5.5: errors, features, FLOW_REMOVED, queue
//! configuration) and the wire enumerations and flag constants they use.
//! The hot messages have their own modules ([`super::packet_in`],
//! [`super::flow_mod`], [`super::packet_out`]).

use crate::error::{DecodeError, ErrorKind};
use crate::types::{Cookie, DatapathId, PortNo};
use crate::v10::ofmatch::{Match10, port_to_wire};
use crate::v10::port::{PHY_PORT_LEN, PhyPort};
use crate::version::Version;
use crate::wire::{Put, Reader};

crate::wire_enum! {
    /// `ofp_flow_removed_reason` (1.0.0 §5.4.2).
    pub enum FlowRemovedReason: u8 {
        /// `OFPRR_IDLE_TIMEOUT`.
        IdleTimeout = 0,
        /// `OFPRR_HARD_TIMEOUT`.
        HardTimeout = 1,
        /// `OFPRR_DELETE`: evicted by a DELETE flow mod.
        Delete = 2,
    }
}

/// `ofp_capabilities` bits of [`SwitchFeatures::capabilities`] (1.0.0
/// §5.3.1).
pub mod capabilities {
    /// `OFPC_FLOW_STATS`.
    pub const FLOW_STATS: u32 = 1 << 0;
    /// `OFPC_TABLE_STATS`.
    pub const TABLE_STATS: u32 = 1 << 1;
    /// `OFPC_PORT_STATS`.
    pub const PORT_STATS: u32 = 1 << 2;
    /// `OFPC_STP`.
    pub const STP: u32 = 1 << 3;
    /// `OFPC_RESERVED`.
    pub const RESERVED: u32 = 1 << 4;
    /// `OFPC_IP_REASM`.
    pub const IP_REASM: u32 = 1 << 5;
    /// `OFPC_QUEUE_STATS`.
    pub const QUEUE_STATS: u32 = 1 << 6;
    /// `OFPC_ARP_MATCH_IP`.
    pub const ARP_MATCH_IP: u32 = 1 << 7;
}

/// `ofp_config_flags` of [`SwitchConfig::flags`](crate::switch_config::SwitchConfig::flags) (1.0.0 §5.3.2).
pub mod config_flags {
    /// `OFPC_FRAG_NORMAL`: no special handling of IP fragments.
    pub const FRAG_NORMAL: u16 = 0;
    /// `OFPC_FRAG_DROP`: drop fragments.
    pub const FRAG_DROP: u16 = 1;
    /// `OFPC_FRAG_REASM`: reassemble (only if `OFPC_IP_REASM` is set).
    pub const FRAG_REASM: u16 = 2;
    /// `OFPC_FRAG_MASK`.
    pub const FRAG_MASK: u16 = 3;
}

/// `ofp_error_type` values (1.0.0 §5.4.4).
pub mod error_type {
    /// `OFPET_HELLO_FAILED`.
    pub const HELLO_FAILED: u16 = 0;
    /// `OFPET_BAD_REQUEST`.
    pub const BAD_REQUEST: u16 = 1;
    /// `OFPET_BAD_ACTION`.
    pub const BAD_ACTION: u16 = 2;
    /// `OFPET_FLOW_MOD_FAILED`.
    pub const FLOW_MOD_FAILED: u16 = 3;
    /// `OFPET_PORT_MOD_FAILED`.
    pub const PORT_MOD_FAILED: u16 = 4;
    /// `OFPET_QUEUE_OP_FAILED`.
    pub const QUEUE_OP_FAILED: u16 = 5;
}

/// The body of OFPT_ERROR (`ofp_error_msg`, 1.0.0 §5.4.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ErrorMsg {
    /// `type`: an [`error_type`] value.
    pub error_type: u16,
    /// `code`, meaning per type.
    pub code: u16,
    /// `data`: for most errors, at least 64 bytes of the failed request;
    /// ASCII text for HELLO_FAILED.
    pub data: Vec<u8>,
}

impl ErrorMsg {
    /// The reply to a message that failed to decode with `err`: its type
    /// and code from [`DecodeError::reply`], and the first 64 bytes of the
    /// offending message as the spec asks.
    pub fn for_decode_error(err: &DecodeError, offending: &[u8]) -> ErrorMsg {
        let code = err.reply(Version::V10);
        ErrorMsg {
            error_type: code.error_type,
            code: code.code,
            data: offending.get(..64).unwrap_or(offending).to_vec(),
        }
    }

    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ErrorMsg {
            error_type: r.u16("ofp_error_msg.type")?,
            code: r.u16("ofp_error_msg.code")?,
            data: r.take_rest().to_vec(),
        })
    }

    pub(crate) fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.error_type);
        out.put_u16(self.code);
        out.put_slice(&self.data);
    }
}

/// The body of OFPT_FEATURES_REPLY (`ofp_switch_features`, 1.0.0 §5.3.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SwitchFeatures {
    /// `datapath_id`.
    pub datapath_id: DatapathId,
    /// `n_buffers`: packets the switch can buffer at once.
    pub n_buffers: u32,
    /// `n_tables`.
    pub n_tables: u8,
    /// `capabilities`: [`capabilities`] bits.
    pub capabilities: u32,
    /// `actions`: bit `1 << OFPAT_*` set for each supported action type.
    pub actions: u32,
    /// `ports`.
    pub ports: Vec<PhyPort>,
}

impl SwitchFeatures {
    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let datapath_id = DatapathId(r.u64("ofp_switch_features.datapath_id")?);
        let n_buffers = r.u32("ofp_switch_features.n_buffers")?;
        let n_tables = r.u8("ofp_switch_features.n_tables")?;
        r.skip(3, "ofp_switch_features.pad")?;
        let capabilities = r.u32("ofp_switch_features.capabilities")?;
        let actions = r.u32("ofp_switch_features.actions")?;
        if r.remaining() % PHY_PORT_LEN != 0 {
            return Err(DecodeError::new(
                ErrorKind::BadLength {
                    claimed: r.remaining(),
                },
                r.offset(),
                "ofp_switch_features.ports",
            ));
        }
        let mut ports = Vec::with_capacity(r.remaining() / PHY_PORT_LEN);
        while !r.is_empty() {
            ports.push(PhyPort::parse(r)?);
        }
        Ok(SwitchFeatures {
            datapath_id,
            n_buffers,
            n_tables,
            capabilities,
            actions,
            ports,
        })
    }

    pub(crate) fn emit(&self, out: &mut Vec<u8>) {
        out.put_u64(self.datapath_id.0);
        out.put_u32(self.n_buffers);
        out.put_u8(self.n_tables);
        out.put_zeros(3);
        out.put_u32(self.capabilities);
        out.put_u32(self.actions);
        self.ports.iter().for_each(|p| p.emit(out));
    }
}

/// The body of OFPT_FLOW_REMOVED (`ofp_flow_removed`, 1.0.0 §5.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowRemoved {
    /// `match`.
    pub match_: Match10,
    /// `cookie`.
    pub cookie: Cookie,
    /// `priority`.
    pub priority: u16,
    /// `reason`.
    pub reason: FlowRemovedReason,
    /// `duration_sec`.
    pub duration_sec: u32,
    /// `duration_nsec`.
    pub duration_nsec: u32,
    /// `idle_timeout`.
    pub idle_timeout: u16,
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
}

impl FlowRemoved {
    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let match_ = Match10::parse(r)?;
        let cookie = Cookie(r.u64("ofp_flow_removed.cookie")?);
        let priority = r.u16("ofp_flow_removed.priority")?;
        let reason = FlowRemovedReason::from(r.u8("ofp_flow_removed.reason")?);
        r.skip(1, "ofp_flow_removed.pad")?;
        let duration_sec = r.u32("ofp_flow_removed.duration_sec")?;
        let duration_nsec = r.u32("ofp_flow_removed.duration_nsec")?;
        let idle_timeout = r.u16("ofp_flow_removed.idle_timeout")?;
        r.skip(2, "ofp_flow_removed.pad2")?;
        Ok(FlowRemoved {
            match_,
            cookie,
            priority,
            reason,
            duration_sec,
            duration_nsec,
            idle_timeout,
            packet_count: r.u64("ofp_flow_removed.packet_count")?,
            byte_count: r.u64("ofp_flow_removed.byte_count")?,
        })
    }

    pub(crate) fn emit(&self, out: &mut Vec<u8>) {
        self.match_.emit(out);
        out.put_u64(self.cookie.0);
        out.put_u16(self.priority);
        out.put_u8(self.reason.into());
        out.put_u8(0);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.idle_timeout);
        out.put_zeros(2);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
    }
}

/// `OFPQT_NONE`: no property.
pub const OFPQT_NONE: u16 = 0;
/// `OFPQT_MIN_RATE`: minimum datarate guaranteed.
pub const OFPQT_MIN_RATE: u16 = 1;

/// A queue property (`ofp_queue_prop_header` and body, 1.0.0 §5.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QueueProp {
    /// `ofp_queue_prop_min_rate` (16 bytes): `rate` in 1/10 of a percent;
    /// above 1000 means disabled.
    MinRate(u16),
    /// Any other property (including `OFPQT_NONE`), kept raw.
    Unknown {
        /// `property`.
        property: u16,
        /// The bytes after the 8-byte property header.
        data: Vec<u8>,
    },
}

/// `ofp_packet_queue` (1.0.0 §5.2.2): a queue and its properties.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketQueue {
    /// `queue_id`.
    pub queue_id: u32,
    /// `properties`.
    pub properties: Vec<QueueProp>,
}

impl PacketQueue {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let at = r.offset();
        let queue_id = r.u32("ofp_packet_queue.queue_id")?;
        let len = r.u16("ofp_packet_queue.len")?;
        let body = usize::from(len)
            .checked_sub(8)
            .filter(|&b| b + 2 <= r.remaining())
            .ok_or_else(|| bad_len(len, at + 4, "ofp_packet_queue.len"))?;
        r.skip(2, "ofp_packet_queue.pad")?;
        let mut q = r.sub(body, "ofp_packet_queue.properties")?;
        let mut properties = Vec::new();
        while !q.is_empty() {
            let at = q.offset();
            let property = q.u16("ofp_queue_prop_header.property")?;
            let len = q.u16("ofp_queue_prop_header.len")?;
            let plen = usize::from(len)
                .checked_sub(8)
                .filter(|&b| b + 4 <= q.remaining())
                .ok_or_else(|| bad_len(len, at + 2, "ofp_queue_prop_header.len"))?;
            q.skip(4, "ofp_queue_prop_header.pad")?;
            let mut p = q.sub(plen, "queue property body")?;
            properties.push(if property == OFPQT_MIN_RATE {
                if plen != 8 {
                    return Err(bad_len(len, at + 2, "ofp_queue_prop_min_rate.len"));
                }
                let rate = p.u16("ofp_queue_prop_min_rate.rate")?;
                QueueProp::MinRate(rate)
            } else {
                QueueProp::Unknown {
                    property,
                    data: p.take_rest().to_vec(),
                }
            });
        }
        Ok(PacketQueue {
            queue_id,
            properties,
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.put_u32(self.queue_id);
        out.put_u16(0);
        out.put_zeros(2);
        for p in &self.properties {
            match p {
                QueueProp::MinRate(rate) => {
                    out.put_u16(OFPQT_MIN_RATE);
                    out.put_u16(16);
                    out.put_zeros(4);
                    out.put_u16(*rate);
                    out.put_zeros(6);
                }
                QueueProp::Unknown { property, data } => {
                    out.put_u16(*property);
                    out.put_u16((8 + data.len()).min(usize::from(u16::MAX)) as u16);
                    out.put_zeros(4);
                    out.put_slice(data);
                }
            }
        }
        let len = (out.len() - at).min(usize::from(u16::MAX)) as u16;
        out.patch_u16(at + 4, len);
    }
}

fn bad_len(len: u16, at: usize, what: &'static str) -> DecodeError {
    DecodeError::new(
        ErrorKind::BadLength {
            claimed: usize::from(len),
        },
        at,
        what,
    )
}

/// Reads the OFPT_QUEUE_GET_CONFIG_REPLY body: port, padding, queues.
pub(crate) fn parse_queue_config_reply(
    r: &mut Reader<'_>,
) -> Result<(PortNo, Vec<PacketQueue>), DecodeError> {
    let port = PortNo::from_of10(r.u16("ofp_queue_get_config_reply.port")?);
    r.skip(6, "ofp_queue_get_config_reply.pad")?;
    let mut queues = Vec::new();
    while !r.is_empty() {
        queues.push(PacketQueue::parse(r)?);
    }
    Ok((port, queues))
}

/// Appends the OFPT_QUEUE_GET_CONFIG_REPLY body.
pub(crate) fn emit_queue_config_reply(out: &mut Vec<u8>, port: PortNo, queues: &[PacketQueue]) {
    out.put_u16(port_to_wire(port));
    out.put_zeros(6);
    queues.iter().for_each(|q| q.emit(out));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_properties() {
        let q = PacketQueue {
            queue_id: 7,
            properties: vec![
                QueueProp::MinRate(500),
                QueueProp::Unknown {
                    property: OFPQT_NONE,
                    data: vec![],
                },
                QueueProp::Unknown {
                    property: 9,
                    data: vec![1, 2, 3],
                },
            ],
        };
        let mut out = Vec::new();
        q.emit(&mut out);
        assert_eq!(out.len(), 8 + 16 + 8 + 11);
        assert_eq!(&out[4..6], &[0, 43]);
        assert_eq!(PacketQueue::parse(&mut Reader::new(&out)).unwrap(), q);
        // min-rate with a wrong length.
        let mut bad = out.clone();
        bad[8 + 3] = 24;
        assert!(PacketQueue::parse(&mut Reader::new(&bad)).is_err());
        // property running past the queue.
        let mut bad = out;
        bad[8 + 16 + 8 + 3] = 12;
        let e = PacketQueue::parse(&mut Reader::new(&bad)).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 12 });
    }

    #[test]
    fn error_for_decode_error() {
        let e = DecodeError::new(ErrorKind::BadActionType(99), 72, "x");
        let msg = [0u8; 100];
        let m = ErrorMsg::for_decode_error(&e, &msg);
        assert_eq!((m.error_type, m.code), (error_type::BAD_ACTION, 0));
        assert_eq!(m.data.len(), 64);
    }

    #[test]
    fn features_ports_must_be_whole() {
        let f = SwitchFeatures {
            datapath_id: DatapathId(1),
            n_buffers: 256,
            n_tables: 1,
            capabilities: capabilities::FLOW_STATS,
            actions: 0xfff,
            ports: vec![],
        };
        let mut out = Vec::new();
        f.emit(&mut out);
        out.push(0);
        let e = SwitchFeatures::parse(&mut Reader::new(&out)).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 1 });
    }
}
