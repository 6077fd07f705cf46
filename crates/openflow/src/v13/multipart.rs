//! OpenFlow 1.3 multipart messages (1.3.5 §7.3.5): the bodies of
//! OFPT_MULTIPART_REQUEST and OFPT_MULTIPART_REPLY.
//!
//! This module owns [`MultipartRequest`] and [`MultipartReply`] (the part
//! of the message after `ofp_header`: `type`, `flags`, 4 pad bytes and the
//! typed body), the [`MultipartType`] table, and, in [`stats`] and
//! [`group_meter`], every reply structure of §7.3.5.1-§7.3.5.14. Table
//! features live in [`super::table_features`].
//!
//! Decoding is strict: each body must be consumed exactly (fixed-size
//! bodies must have exactly their size, arrays must end on an entry
//! boundary), every entry's own `length` field is checked against its
//! minimum and the bytes present before it is trusted, and an unknown
//! multipart type is [`ErrorKind::UnknownStatsType`] (OFPBRC_BAD_STAT).
//! `flags` are kept as received so they round-trip.

pub mod group_meter;
pub mod stats;

use crate::error::{DecodeError, ErrorKind};
use crate::types::{Cookie, PortNo};
use crate::wire::{Put, Reader};

use crate::v13::oxm::Match13;
use crate::v13::port::Port;
use crate::v13::table_features::TableFeatures;

pub use group_meter::{
    BucketCounter, GroupDesc, GroupFeatures, GroupStats, MeterBandStats, MeterConfig,
    MeterFeatures, MeterStats,
};
pub use stats::{AggregateStats, Desc, FlowStats, PortStats, QueueStats, TableStats};

/// Size of the multipart part of the header: `type`, `flags`, `pad[4]`.
pub const MULTIPART_HEADER_LEN: usize = 8;

/// `OFPMPF_REQ_MORE` (1.3.5 §7.3.5): more requests follow.
pub const OFPMPF_REQ_MORE: u16 = 1;

/// `OFPMPF_REPLY_MORE` (1.3.5 §7.3.5): more replies follow.
pub const OFPMPF_REPLY_MORE: u16 = 1;

crate::wire_enum! {
    /// `enum ofp_multipart_type` (1.3.5 §7.3.5).
    pub enum MultipartType: u16 {
        /// OFPMP_DESC.
        Desc = 0,
        /// OFPMP_FLOW.
        Flow = 1,
        /// OFPMP_AGGREGATE.
        Aggregate = 2,
        /// OFPMP_TABLE.
        Table = 3,
        /// OFPMP_PORT_STATS.
        PortStats = 4,
        /// OFPMP_QUEUE.
        Queue = 5,
        /// OFPMP_GROUP.
        Group = 6,
        /// OFPMP_GROUP_DESC.
        GroupDesc = 7,
        /// OFPMP_GROUP_FEATURES.
        GroupFeatures = 8,
        /// OFPMP_METER.
        Meter = 9,
        /// OFPMP_METER_CONFIG.
        MeterConfig = 10,
        /// OFPMP_METER_FEATURES.
        MeterFeatures = 11,
        /// OFPMP_TABLE_FEATURES.
        TableFeatures = 12,
        /// OFPMP_PORT_DESC.
        PortDesc = 13,
        /// OFPMP_EXPERIMENTER.
        Experimenter = 0xffff,
    }
}

/// `ofp_flow_stats_request` / `ofp_aggregate_stats_request` (1.3.5
/// §7.3.5.2, §7.3.5.3): which flows to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowStatsRequest {
    /// `table_id` (OFPTT_ALL = 0xff for all tables).
    pub table_id: u8,
    /// `out_port` (OFPP_ANY for no restriction).
    pub out_port: PortNo,
    /// `out_group` (OFPG_ANY = 0xffffffff for no restriction).
    pub out_group: u32,
    /// `cookie`.
    pub cookie: Cookie,
    /// `cookie_mask` (0: no restriction).
    pub cookie_mask: Cookie,
    /// `match`.
    pub match_: Match13,
}

/// `ofp_experimenter_multipart_header` and the data after it (1.3.5
/// §7.3.5.16), for requests and replies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperimenterMultipart {
    /// `experimenter`.
    pub experimenter: u32,
    /// `exp_type`.
    pub exp_type: u32,
    /// Experimenter-defined data, as received.
    pub data: Vec<u8>,
}

/// An OFPT_MULTIPART_REQUEST after its `ofp_header` (1.3.5 §7.3.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartRequest {
    /// `flags` (OFPMPF_REQ_MORE), kept as received.
    pub flags: u16,
    /// The typed body.
    pub body: MultipartRequestBody,
}

/// The body of a multipart request, one variant per OFPMP_* type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartRequestBody {
    /// OFPMP_DESC: empty body (§7.3.5.1).
    Desc,
    /// OFPMP_FLOW (§7.3.5.2).
    Flow(FlowStatsRequest),
    /// OFPMP_AGGREGATE (§7.3.5.3).
    Aggregate(FlowStatsRequest),
    /// OFPMP_TABLE: empty body (§7.3.5.4).
    Table,
    /// OFPMP_PORT_STATS: `ofp_port_stats_request` (§7.3.5.6).
    PortStats {
        /// `port_no` (OFPP_ANY for all ports).
        port_no: PortNo,
    },
    /// OFPMP_QUEUE: `ofp_queue_stats_request` (§7.3.5.8).
    Queue {
        /// `port_no` (OFPP_ANY for all ports).
        port_no: PortNo,
        /// `queue_id` (OFPQ_ALL = 0xffffffff for all queues).
        queue_id: u32,
    },
    /// OFPMP_GROUP: `ofp_group_stats_request` (§7.3.5.9).
    Group {
        /// `group_id` (OFPG_ALL = 0xfffffffc for all groups).
        group_id: u32,
    },
    /// OFPMP_GROUP_DESC: empty body (§7.3.5.10).
    GroupDesc,
    /// OFPMP_GROUP_FEATURES: empty body (§7.3.5.11).
    GroupFeatures,
    /// OFPMP_METER: `ofp_meter_multipart_request` (§7.3.5.12).
    Meter {
        /// `meter_id` (OFPM_ALL = 0xffffffff for all meters).
        meter_id: u32,
    },
    /// OFPMP_METER_CONFIG: `ofp_meter_multipart_request` (§7.3.5.13).
    MeterConfig {
        /// `meter_id` (OFPM_ALL = 0xffffffff for all meters).
        meter_id: u32,
    },
    /// OFPMP_METER_FEATURES: empty body (§7.3.5.14).
    MeterFeatures,
    /// OFPMP_TABLE_FEATURES: zero tables to query, or the whole pipeline
    /// to set (§7.3.5.5).
    TableFeatures(Vec<TableFeatures>),
    /// OFPMP_PORT_DESC: empty body (§7.3.5.7).
    PortDesc,
    /// OFPMP_EXPERIMENTER (§7.3.5.16).
    Experimenter(ExperimenterMultipart),
}

/// An OFPT_MULTIPART_REPLY after its `ofp_header` (1.3.5 §7.3.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartReply {
    /// `flags` (OFPMPF_REPLY_MORE), kept as received.
    pub flags: u16,
    /// The typed body.
    pub body: MultipartReplyBody,
}

/// The body of a multipart reply, one variant per OFPMP_* type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartReplyBody {
    /// OFPMP_DESC: `ofp_desc` (§7.3.5.1).
    Desc(Desc),
    /// OFPMP_FLOW: `ofp_flow_stats[]` (§7.3.5.2).
    Flow(Vec<FlowStats>),
    /// OFPMP_AGGREGATE: `ofp_aggregate_stats_reply` (§7.3.5.3).
    Aggregate(AggregateStats),
    /// OFPMP_TABLE: `ofp_table_stats[]` (§7.3.5.4).
    Table(Vec<TableStats>),
    /// OFPMP_PORT_STATS: `ofp_port_stats[]` (§7.3.5.6).
    PortStats(Vec<PortStats>),
    /// OFPMP_QUEUE: `ofp_queue_stats[]` (§7.3.5.8).
    Queue(Vec<QueueStats>),
    /// OFPMP_GROUP: `ofp_group_stats[]` (§7.3.5.9).
    Group(Vec<GroupStats>),
    /// OFPMP_GROUP_DESC: `ofp_group_desc[]` (§7.3.5.10).
    GroupDesc(Vec<GroupDesc>),
    /// OFPMP_GROUP_FEATURES: `ofp_group_features` (§7.3.5.11).
    GroupFeatures(GroupFeatures),
    /// OFPMP_METER: `ofp_meter_stats[]` (§7.3.5.12).
    Meter(Vec<MeterStats>),
    /// OFPMP_METER_CONFIG: `ofp_meter_config[]` (§7.3.5.13).
    MeterConfig(Vec<MeterConfig>),
    /// OFPMP_METER_FEATURES: `ofp_meter_features` (§7.3.5.14).
    MeterFeatures(MeterFeatures),
    /// OFPMP_TABLE_FEATURES: `ofp_table_features[]` (§7.3.5.5).
    TableFeatures(Vec<TableFeatures>),
    /// OFPMP_PORT_DESC: `ofp_port[]` (§7.3.5.7).
    PortDesc(Vec<Port>),
    /// OFPMP_EXPERIMENTER (§7.3.5.16).
    Experimenter(ExperimenterMultipart),
}

/// Reads the multipart `type`, `flags` and padding; an unknown type is
/// [`ErrorKind::UnknownStatsType`].
fn parse_multipart_header(
    r: &mut Reader,
    what: &'static str,
) -> Result<(MultipartType, u16), DecodeError> {
    let at = r.offset();
    let ty = MultipartType::from(r.u16(what)?);
    let flags = r.u16(what)?;
    r.skip(4, what)?;
    if let MultipartType::Unknown(t) = ty {
        return Err(DecodeError::new(ErrorKind::UnknownStatsType(t), at, what));
    }
    Ok((ty, flags))
}

fn emit_multipart_header(out: &mut Vec<u8>, ty: MultipartType, flags: u16) {
    out.put_u16(ty.into());
    out.put_u16(flags);
    out.put_zeros(4);
}

/// Decodes entries until the body is used up; an entry cut short is an
/// error, so the array must end on an entry boundary.
fn parse_array<'a, T>(
    r: &mut Reader<'a>,
    parse: impl Fn(&mut Reader<'a>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::new();
    while !r.is_empty() {
        out.push(parse(r)?);
    }
    Ok(out)
}

impl ExperimenterMultipart {
    fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let experimenter = r.u32("ofp_experimenter_multipart_header.experimenter")?;
        let exp_type = r.u32("ofp_experimenter_multipart_header.exp_type")?;
        let data = r.take_rest().to_vec();
        Ok(ExperimenterMultipart {
            experimenter,
            exp_type,
            data,
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.experimenter);
        out.put_u32(self.exp_type);
        out.put_slice(&self.data);
    }
}

impl FlowStatsRequest {
    /// Decodes `ofp_flow_stats_request` (also the aggregate request).
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let table_id = r.u8("ofp_flow_stats_request.table_id")?;
        r.skip(3, "ofp_flow_stats_request.pad")?;
        let out_port = PortNo(r.u32("ofp_flow_stats_request.out_port")?);
        let out_group = r.u32("ofp_flow_stats_request.out_group")?;
        r.skip(4, "ofp_flow_stats_request.pad2")?;
        let cookie = Cookie(r.u64("ofp_flow_stats_request.cookie")?);
        let cookie_mask = Cookie(r.u64("ofp_flow_stats_request.cookie_mask")?);
        let match_ = Match13::parse(r)?;
        Ok(FlowStatsRequest {
            table_id,
            out_port,
            out_group,
            cookie,
            cookie_mask,
            match_,
        })
    }

    /// Appends `ofp_flow_stats_request`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.out_port.0);
        out.put_u32(self.out_group);
        out.put_zeros(4);
        out.put_u64(self.cookie.0);
        out.put_u64(self.cookie_mask.0);
        self.match_.emit(out);
    }
}

impl MultipartRequestBody {
    /// The OFPMP_* type of this body.
    pub fn multipart_type(&self) -> MultipartType {
        use MultipartType as T;
        match self {
            Self::Desc => T::Desc,
            Self::Flow(_) => T::Flow,
            Self::Aggregate(_) => T::Aggregate,
            Self::Table => T::Table,
            Self::PortStats { .. } => T::PortStats,
            Self::Queue { .. } => T::Queue,
            Self::Group { .. } => T::Group,
            Self::GroupDesc => T::GroupDesc,
            Self::GroupFeatures => T::GroupFeatures,
            Self::Meter { .. } => T::Meter,
            Self::MeterConfig { .. } => T::MeterConfig,
            Self::MeterFeatures => T::MeterFeatures,
            Self::TableFeatures(_) => T::TableFeatures,
            Self::PortDesc => T::PortDesc,
            Self::Experimenter(_) => T::Experimenter,
        }
    }
}

impl MultipartRequest {
    /// A request with no flags.
    pub fn new(body: MultipartRequestBody) -> Self {
        MultipartRequest { flags: 0, body }
    }

    /// Decodes the part of an OFPT_MULTIPART_REQUEST after `ofp_header`:
    /// `body` starts at the multipart `type` field and runs to the end of
    /// the message; `base` is its offset in the message (8), for error
    /// positions.
    pub fn decode(body: &[u8], base: usize) -> Result<Self, DecodeError> {
        use MultipartType as T;
        let mut r = Reader::with_base(body, base);
        let (ty, flags) = parse_multipart_header(&mut r, "ofp_multipart_request")?;
        let body = match ty {
            T::Desc => MultipartRequestBody::Desc,
            T::Flow => MultipartRequestBody::Flow(FlowStatsRequest::parse(&mut r)?),
            T::Aggregate => MultipartRequestBody::Aggregate(FlowStatsRequest::parse(&mut r)?),
            T::Table => MultipartRequestBody::Table,
            T::PortStats => {
                let port_no = PortNo(r.u32("ofp_port_stats_request.port_no")?);
                r.skip(4, "ofp_port_stats_request.pad")?;
                MultipartRequestBody::PortStats { port_no }
            }
            T::Queue => MultipartRequestBody::Queue {
                port_no: PortNo(r.u32("ofp_queue_stats_request.port_no")?),
                queue_id: r.u32("ofp_queue_stats_request.queue_id")?,
            },
            T::Group => {
                let group_id = r.u32("ofp_group_stats_request.group_id")?;
                r.skip(4, "ofp_group_stats_request.pad")?;
                MultipartRequestBody::Group { group_id }
            }
            T::GroupDesc => MultipartRequestBody::GroupDesc,
            T::GroupFeatures => MultipartRequestBody::GroupFeatures,
            T::Meter | T::MeterConfig => {
                let meter_id = r.u32("ofp_meter_multipart_request.meter_id")?;
                r.skip(4, "ofp_meter_multipart_request.pad")?;
                if ty == T::Meter {
                    MultipartRequestBody::Meter { meter_id }
                } else {
                    MultipartRequestBody::MeterConfig { meter_id }
                }
            }
            T::MeterFeatures => MultipartRequestBody::MeterFeatures,
            T::TableFeatures => {
                MultipartRequestBody::TableFeatures(parse_array(&mut r, TableFeatures::parse)?)
            }
            T::PortDesc => MultipartRequestBody::PortDesc,
            T::Experimenter => {
                MultipartRequestBody::Experimenter(ExperimenterMultipart::parse(&mut r)?)
            }
            // parse_multipart_header has rejected unknown types.
            T::Unknown(t) => {
                return Err(DecodeError::new(
                    ErrorKind::UnknownStatsType(t),
                    base,
                    "ofp_multipart_request.type",
                ));
            }
        };
        r.finish("ofp_multipart_request body")?;
        Ok(MultipartRequest { flags, body })
    }

    /// Appends the part after `ofp_header`: `type`, `flags`, 4 pad bytes
    /// and the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        emit_multipart_header(out, self.multipart_type(), self.flags);
        match &self.body {
            MultipartRequestBody::Desc
            | MultipartRequestBody::Table
            | MultipartRequestBody::GroupDesc
            | MultipartRequestBody::GroupFeatures
            | MultipartRequestBody::MeterFeatures
            | MultipartRequestBody::PortDesc => {}
            MultipartRequestBody::Flow(f) | MultipartRequestBody::Aggregate(f) => f.emit(out),
            MultipartRequestBody::PortStats { port_no } => {
                out.put_u32(port_no.0);
                out.put_zeros(4);
            }
            MultipartRequestBody::Queue { port_no, queue_id } => {
                out.put_u32(port_no.0);
                out.put_u32(*queue_id);
            }
            MultipartRequestBody::Group { group_id: id }
            | MultipartRequestBody::Meter { meter_id: id }
            | MultipartRequestBody::MeterConfig { meter_id: id } => {
                out.put_u32(*id);
                out.put_zeros(4);
            }
            MultipartRequestBody::TableFeatures(tables) => {
                tables.iter().for_each(|t| t.emit(out));
            }
            MultipartRequestBody::Experimenter(e) => e.emit(out),
        }
    }

    /// The OFPMP_* type.
    pub fn multipart_type(&self) -> MultipartType {
        self.body.multipart_type()
    }
}

impl MultipartReplyBody {
    /// The OFPMP_* type of this body.
    pub fn multipart_type(&self) -> MultipartType {
        use MultipartType as T;
        match self {
            Self::Desc(_) => T::Desc,
            Self::Flow(_) => T::Flow,
            Self::Aggregate(_) => T::Aggregate,
            Self::Table(_) => T::Table,
            Self::PortStats(_) => T::PortStats,
            Self::Queue(_) => T::Queue,
            Self::Group(_) => T::Group,
            Self::GroupDesc(_) => T::GroupDesc,
            Self::GroupFeatures(_) => T::GroupFeatures,
            Self::Meter(_) => T::Meter,
            Self::MeterConfig(_) => T::MeterConfig,
            Self::MeterFeatures(_) => T::MeterFeatures,
            Self::TableFeatures(_) => T::TableFeatures,
            Self::PortDesc(_) => T::PortDesc,
            Self::Experimenter(_) => T::Experimenter,
        }
    }
}

impl MultipartReply {
    /// A reply with no flags.
    pub fn new(body: MultipartReplyBody) -> Self {
        MultipartReply { flags: 0, body }
    }

    /// True when OFPMPF_REPLY_MORE is set: more replies to the same
    /// request follow.
    pub fn more(&self) -> bool {
        self.flags & OFPMPF_REPLY_MORE != 0
    }

    /// Decodes the part of an OFPT_MULTIPART_REPLY after `ofp_header`:
    /// `body` starts at the multipart `type` field and runs to the end of
    /// the message; `base` is its offset in the message (8), for error
    /// positions.
    pub fn decode(body: &[u8], base: usize) -> Result<Self, DecodeError> {
        use MultipartReplyBody as B;
        use MultipartType as T;
        let mut r = Reader::with_base(body, base);
        let (ty, flags) = parse_multipart_header(&mut r, "ofp_multipart_reply")?;
        let r = &mut r;
        let body = match ty {
            T::Desc => B::Desc(Desc::parse(r)?),
            T::Flow => B::Flow(parse_array(r, FlowStats::parse)?),
            T::Aggregate => B::Aggregate(AggregateStats::parse(r)?),
            T::Table => B::Table(parse_array(r, TableStats::parse)?),
            T::PortStats => B::PortStats(parse_array(r, PortStats::parse)?),
            T::Queue => B::Queue(parse_array(r, QueueStats::parse)?),
            T::Group => B::Group(parse_array(r, GroupStats::parse)?),
            T::GroupDesc => B::GroupDesc(parse_array(r, GroupDesc::parse)?),
            T::GroupFeatures => B::GroupFeatures(GroupFeatures::parse(r)?),
            T::Meter => B::Meter(parse_array(r, MeterStats::parse)?),
            T::MeterConfig => B::MeterConfig(parse_array(r, MeterConfig::parse)?),
            T::MeterFeatures => B::MeterFeatures(MeterFeatures::parse(r)?),
            T::TableFeatures => B::TableFeatures(parse_array(r, TableFeatures::parse)?),
            T::PortDesc => B::PortDesc(parse_array(r, Port::parse)?),
            T::Experimenter => B::Experimenter(ExperimenterMultipart::parse(r)?),
            // parse_multipart_header has rejected unknown types.
            T::Unknown(t) => {
                return Err(DecodeError::new(
                    ErrorKind::UnknownStatsType(t),
                    base,
                    "ofp_multipart_reply.type",
                ));
            }
        };
        r.finish("ofp_multipart_reply body")?;
        Ok(MultipartReply { flags, body })
    }

    /// Appends the part after `ofp_header`: `type`, `flags`, 4 pad bytes
    /// and the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        use MultipartReplyBody as B;
        emit_multipart_header(out, self.multipart_type(), self.flags);
        match &self.body {
            B::Desc(d) => d.emit(out),
            B::Flow(v) => v.iter().for_each(|e| e.emit(out)),
            B::Aggregate(a) => a.emit(out),
            B::Table(v) => v.iter().for_each(|e| e.emit(out)),
            B::PortStats(v) => v.iter().for_each(|e| e.emit(out)),
            B::Queue(v) => v.iter().for_each(|e| e.emit(out)),
            B::Group(v) => v.iter().for_each(|e| e.emit(out)),
            B::GroupDesc(v) => v.iter().for_each(|e| e.emit(out)),
            B::GroupFeatures(g) => g.emit(out),
            B::Meter(v) => v.iter().for_each(|e| e.emit(out)),
            B::MeterConfig(v) => v.iter().for_each(|e| e.emit(out)),
            B::MeterFeatures(m) => m.emit(out),
            B::TableFeatures(v) => v.iter().for_each(|e| e.emit(out)),
            B::PortDesc(v) => v.iter().for_each(|e| e.emit(out)),
            B::Experimenter(e) => e.emit(out),
        }
    }

    /// The OFPMP_* type.
    pub fn multipart_type(&self) -> MultipartType {
        self.body.multipart_type()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desc_request_bytes() {
        let m = MultipartRequest::new(MultipartRequestBody::Desc);
        let mut out = Vec::new();
        m.encode_body(&mut out);
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(MultipartRequest::decode(&out, 8).unwrap(), m);
    }

    #[test]
    fn unknown_type_is_bad_stat() {
        let e = MultipartRequest::decode(&[0, 99, 0, 0, 0, 0, 0, 0], 8).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::UnknownStatsType(99));
        assert_eq!(e.offset(), 8);
        let e = MultipartReply::decode(&[0, 14, 0, 0, 0, 0, 0, 0], 8).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::UnknownStatsType(14));
    }

    #[test]
    fn empty_bodies_must_be_empty() {
        let e = MultipartRequest::decode(&[0, 0, 0, 0, 0, 0, 0, 0, 1], 8).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::TrailingBytes { extra: 1 });
        assert_eq!(e.offset(), 16);
    }

    #[test]
    fn fixed_requests_round_trip() {
        for body in [
            MultipartRequestBody::PortStats {
                port_no: PortNo::ANY,
            },
            MultipartRequestBody::Queue {
                port_no: PortNo(3),
                queue_id: 0xffff_ffff,
            },
            MultipartRequestBody::Group { group_id: 7 },
            MultipartRequestBody::Meter { meter_id: 1 },
            MultipartRequestBody::MeterConfig { meter_id: 2 },
        ] {
            let m = MultipartRequest {
                flags: OFPMPF_REQ_MORE,
                body,
            };
            let mut out = Vec::new();
            m.encode_body(&mut out);
            assert_eq!(out.len(), 16);
            assert_eq!(MultipartRequest::decode(&out, 8).unwrap(), m);
            for n in 0..out.len() {
                assert!(MultipartRequest::decode(&out[..n], 8).is_err());
            }
        }
    }
}
