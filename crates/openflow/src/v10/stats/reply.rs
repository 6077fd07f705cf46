//! OFPT_STATS_REPLY bodies (1.0.0 §5.3.5): desc, flow, aggregate, table,
//! port, queue and vendor.

use super::types::*;
use crate::error::{DecodeError, ErrorKind};
use crate::port_counters::PortCounters;
use crate::types::{Cookie, PortNo};
use crate::v10::action::{Action, ActionIter, emit_actions};
use crate::v10::ofmatch::{Match10, port_to_wire};
use crate::wire::{Put, Reader};

/// `ofp_desc_stats` (1.0.0 §5.3.5): the switch's description strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DescStats {
    /// `mfr_desc`: manufacturer.
    pub mfr_desc: String,
    /// `hw_desc`: hardware revision.
    pub hw_desc: String,
    /// `sw_desc`: software revision.
    pub sw_desc: String,
    /// `serial_num`.
    pub serial_num: String,
    /// `dp_desc`: human-readable datapath description.
    pub dp_desc: String,
}

impl DescStats {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(DescStats {
            mfr_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc_stats.mfr_desc")?,
            hw_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc_stats.hw_desc")?,
            sw_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc_stats.sw_desc")?,
            serial_num: r.fixed_string(SERIAL_NUM_LEN, "ofp_desc_stats.serial_num")?,
            dp_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc_stats.dp_desc")?,
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        out.put_fixed_str(self.mfr_desc.as_bytes(), DESC_STR_LEN);
        out.put_fixed_str(self.hw_desc.as_bytes(), DESC_STR_LEN);
        out.put_fixed_str(self.sw_desc.as_bytes(), DESC_STR_LEN);
        out.put_fixed_str(self.serial_num.as_bytes(), SERIAL_NUM_LEN);
        out.put_fixed_str(self.dp_desc.as_bytes(), DESC_STR_LEN);
    }
}

/// `ofp_flow_stats` (1.0.0 §5.3.5): one flow entry with its actions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlowStats {
    /// `table_id`.
    pub table_id: u8,
    /// `match`.
    pub match_: Match10,
    /// `duration_sec`.
    pub duration_sec: u32,
    /// `duration_nsec`.
    pub duration_nsec: u32,
    /// `priority`.
    pub priority: u16,
    /// `idle_timeout`.
    pub idle_timeout: u16,
    /// `hard_timeout`.
    pub hard_timeout: u16,
    /// `cookie`.
    pub cookie: Cookie,
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `actions`.
    pub actions: Vec<Action>,
}

impl FlowStats {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let at = r.offset();
        let length = r.u16("ofp_flow_stats.length")?;
        let bad = || {
            DecodeError::new(
                ErrorKind::BadLength {
                    claimed: usize::from(length),
                },
                at,
                "ofp_flow_stats.length",
            )
        };
        let rest = usize::from(length)
            .checked_sub(2)
            .filter(|_| usize::from(length) >= FLOW_STATS_LEN)
            .ok_or_else(bad)?;
        if rest > r.remaining() {
            return Err(bad());
        }
        let mut e = r.sub(rest, "ofp_flow_stats")?;
        let table_id = e.u8("ofp_flow_stats.table_id")?;
        e.skip(1, "ofp_flow_stats.pad")?;
        let match_ = Match10::parse(&mut e)?;
        let duration_sec = e.u32("ofp_flow_stats.duration_sec")?;
        let duration_nsec = e.u32("ofp_flow_stats.duration_nsec")?;
        let priority = e.u16("ofp_flow_stats.priority")?;
        let idle_timeout = e.u16("ofp_flow_stats.idle_timeout")?;
        let hard_timeout = e.u16("ofp_flow_stats.hard_timeout")?;
        e.skip(6, "ofp_flow_stats.pad2")?;
        let cookie = Cookie(e.u64("ofp_flow_stats.cookie")?);
        let packet_count = e.u64("ofp_flow_stats.packet_count")?;
        let byte_count = e.u64("ofp_flow_stats.byte_count")?;
        let base = e.offset();
        let actions = ActionIter::new(e.take_rest(), base).collect_vec()?;
        Ok(FlowStats {
            table_id,
            match_,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            cookie,
            packet_count,
            byte_count,
            actions,
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.put_u16(0);
        out.put_u8(self.table_id);
        out.put_u8(0);
        self.match_.emit(out);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.priority);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_zeros(6);
        out.put_u64(self.cookie.0);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        emit_actions(out, &self.actions);
        let len = (out.len() - at).min(0xfff8) as u16;
        out.patch_u16(at, len);
    }
}

/// `ofp_aggregate_stats_reply` (1.0.0 §5.3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AggregateStats {
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `flow_count`.
    pub flow_count: u32,
}

/// `ofp_table_stats` (1.0.0 §5.3.5): one table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableStats {
    /// `table_id`.
    pub table_id: u8,
    /// `name`.
    pub name: String,
    /// `wildcards`: `OFPFW_*` bits the table supports.
    pub wildcards: u32,
    /// `max_entries`.
    pub max_entries: u32,
    /// `active_count`.
    pub active_count: u32,
    /// `lookup_count`.
    pub lookup_count: u64,
    /// `matched_count`.
    pub matched_count: u64,
}

/// `ofp_port_stats` (1.0.0 §5.3.5): one port's counters (all ones when
/// unavailable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortStats {
    /// `port_no`.
    pub port_no: PortNo,
    /// The counters.
    pub counters: PortCounters,
}

crate::twin::queue_stats! {
    spec: "1.0.0 §5.3.5",
    port: read |r: &mut Reader<'_>| -> Result<PortNo, DecodeError> {
            let port_no = PortNo::from_of10(r.u16("ofp_queue_stats.port_no")?);
            r.skip(2, "ofp_queue_stats.pad")?;
            Ok(port_no)
        },
        write |out: &mut Vec<u8>, p| {
            out.put_u16(port_to_wire(p));
            out.put_zeros(2);
        },
    extra: [],
}

/// The body of a stats reply, by type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StatsReplyBody {
    /// `OFPST_DESC` (boxed: it is 1056 bytes).
    Desc(Box<DescStats>),
    /// `OFPST_FLOW`: zero or more flow entries.
    Flow(Vec<FlowStats>),
    /// `OFPST_AGGREGATE`.
    Aggregate(AggregateStats),
    /// `OFPST_TABLE`: one entry per table.
    Table(Vec<TableStats>),
    /// `OFPST_PORT`: one entry per port.
    Port(Vec<PortStats>),
    /// `OFPST_QUEUE`: one entry per queue.
    Queue(Vec<QueueStats>),
    /// `OFPST_VENDOR`: vendor id then vendor-defined bytes.
    Vendor {
        /// Vendor id.
        vendor: u32,
        /// Bytes after the vendor id.
        data: Vec<u8>,
    },
}

/// An OFPT_STATS_REPLY body (`ofp_stats_reply`, 1.0.0 §5.3.5).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StatsReply {
    /// `flags`: [`OFPSF_REPLY_MORE`] when more replies follow.
    pub flags: u16,
    /// The typed body.
    pub body: StatsReplyBody,
}

impl StatsReply {
    /// The `OFPST_*` type.
    pub fn stats_type(&self) -> StatsType {
        match self.body {
            StatsReplyBody::Desc(_) => StatsType::Desc,
            StatsReplyBody::Flow(_) => StatsType::Flow,
            StatsReplyBody::Aggregate(_) => StatsType::Aggregate,
            StatsReplyBody::Table(_) => StatsType::Table,
            StatsReplyBody::Port(_) => StatsType::Port,
            StatsReplyBody::Queue(_) => StatsType::Queue,
            StatsReplyBody::Vendor { .. } => StatsType::Vendor,
        }
    }

    /// True when [`OFPSF_REPLY_MORE`] is set.
    pub fn more(&self) -> bool {
        self.flags & OFPSF_REPLY_MORE != 0
    }

    /// Reads everything after the header (from the `type` field to the end
    /// of `r`).
    pub fn parse(r: &mut Reader<'_>) -> Result<StatsReply, DecodeError> {
        let (stats_type, flags, at) = stats_head(r)?;
        let body = match stats_type {
            StatsType::Desc => {
                StatsReplyBody::Desc(Box::new(exact(r, DESC_STATS_LEN, DescStats::parse)?))
            }
            StatsType::Flow => {
                let mut v = Vec::new();
                while !r.is_empty() {
                    v.push(FlowStats::parse(r)?);
                }
                StatsReplyBody::Flow(v)
            }
            StatsType::Aggregate => {
                StatsReplyBody::Aggregate(exact(r, AGGREGATE_REPLY_LEN, |r| {
                    let s = AggregateStats {
                        packet_count: r.u64("ofp_aggregate_stats_reply.packet_count")?,
                        byte_count: r.u64("ofp_aggregate_stats_reply.byte_count")?,
                        flow_count: r.u32("ofp_aggregate_stats_reply.flow_count")?,
                    };
                    r.skip(4, "ofp_aggregate_stats_reply.pad")?;
                    Ok(s)
                })?)
            }
            StatsType::Table => StatsReplyBody::Table(array(r, TABLE_STATS_LEN, |r| {
                let table_id = r.u8("ofp_table_stats.table_id")?;
                r.skip(3, "ofp_table_stats.pad")?;
                Ok(TableStats {
                    table_id,
                    name: r.fixed_string(MAX_TABLE_NAME_LEN, "ofp_table_stats.name")?,
                    wildcards: r.u32("ofp_table_stats.wildcards")?,
                    max_entries: r.u32("ofp_table_stats.max_entries")?,
                    active_count: r.u32("ofp_table_stats.active_count")?,
                    lookup_count: r.u64("ofp_table_stats.lookup_count")?,
                    matched_count: r.u64("ofp_table_stats.matched_count")?,
                })
            })?),
            StatsType::Port => StatsReplyBody::Port(array(r, PORT_STATS_LEN, |r| {
                let port_no = PortNo::from_of10(r.u16("ofp_port_stats.port_no")?);
                r.skip(6, "ofp_port_stats.pad")?;
                Ok(PortStats {
                    port_no,
                    counters: PortCounters::parse(r)?,
                })
            })?),
            StatsType::Queue => {
                StatsReplyBody::Queue(array(r, QUEUE_STATS_LEN, QueueStats::parse)?)
            }
            StatsType::Vendor => {
                let vendor = r.u32("ofp_stats_reply vendor id")?;
                StatsReplyBody::Vendor {
                    vendor,
                    data: r.take_rest().to_vec(),
                }
            }
            StatsType::Unknown(t) => return Err(unknown_stats_type(t, at)),
        };
        r.finish("ofp_stats_reply body")?;
        Ok(StatsReply { flags, body })
    }

    /// Appends everything after the header.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.stats_type().into());
        out.put_u16(self.flags);
        match &self.body {
            StatsReplyBody::Desc(d) => d.emit(out),
            StatsReplyBody::Flow(v) => v.iter().for_each(|f| f.emit(out)),
            StatsReplyBody::Aggregate(a) => {
                out.put_u64(a.packet_count);
                out.put_u64(a.byte_count);
                out.put_u32(a.flow_count);
                out.put_zeros(4);
            }
            StatsReplyBody::Table(v) => {
                for t in v {
                    out.put_u8(t.table_id);
                    out.put_zeros(3);
                    out.put_fixed_str(t.name.as_bytes(), MAX_TABLE_NAME_LEN);
                    out.put_u32(t.wildcards);
                    out.put_u32(t.max_entries);
                    out.put_u32(t.active_count);
                    out.put_u64(t.lookup_count);
                    out.put_u64(t.matched_count);
                }
            }
            StatsReplyBody::Port(v) => {
                for p in v {
                    out.put_u16(port_to_wire(p.port_no));
                    out.put_zeros(6);
                    p.counters.emit(out);
                }
            }
            StatsReplyBody::Queue(v) => v.iter().for_each(|q| q.emit(out)),
            StatsReplyBody::Vendor { vendor, data } => {
                out.put_u32(*vendor);
                out.put_slice(data);
            }
        }
    }
}
