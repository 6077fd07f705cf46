//! OFPT_STATS_REQUEST bodies (1.0.0 §5.3.5).

use super::types::{FLOW_STATS_REQUEST_LEN, StatsType, exact, stats_head, unknown_stats_type};
use crate::error::DecodeError;
use crate::types::PortNo;
use crate::v10::ofmatch::{Match10, port_to_wire};
use crate::wire::{Put, Reader};

/// `ofp_flow_stats_request` / `ofp_aggregate_stats_request` (1.0.0
/// §5.3.5): which flows to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowStatsRequest {
    /// `match`: fields to match.
    pub match_: Match10,
    /// `table_id`: 0xff for all tables.
    pub table_id: u8,
    /// `out_port`: require an output action to this port; `OFPP_NONE`
    /// ([`PortNo::ANY`]) for no restriction.
    pub out_port: PortNo,
}

impl FlowStatsRequest {
    fn parse(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let match_ = Match10::parse(r)?;
        let table_id = r.u8("ofp_flow_stats_request.table_id")?;
        r.skip(1, "ofp_flow_stats_request.pad")?;
        let out_port = PortNo::from_of10(r.u16("ofp_flow_stats_request.out_port")?);
        Ok(FlowStatsRequest {
            match_,
            table_id,
            out_port,
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        self.match_.emit(out);
        out.put_u8(self.table_id);
        out.put_u8(0);
        out.put_u16(port_to_wire(self.out_port));
    }
}

/// The body of a stats request, by type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StatsRequestBody {
    /// `OFPST_DESC`: no body.
    Desc,
    /// `OFPST_FLOW`.
    Flow(FlowStatsRequest),
    /// `OFPST_AGGREGATE`.
    Aggregate(FlowStatsRequest),
    /// `OFPST_TABLE`: no body.
    Table,
    /// `OFPST_PORT` (`ofp_port_stats_request`).
    Port {
        /// Port to report; `OFPP_NONE` for all.
        port_no: PortNo,
    },
    /// `OFPST_QUEUE` (`ofp_queue_stats_request`).
    Queue {
        /// Port; `OFPP_ALL` for all.
        port_no: PortNo,
        /// Queue; [`OFPQ_ALL`](super::OFPQ_ALL) for all.
        queue_id: u32,
    },
    /// `OFPST_VENDOR`: vendor id then vendor-defined bytes.
    Vendor {
        /// Vendor id.
        vendor: u32,
        /// Bytes after the vendor id.
        data: Vec<u8>,
    },
}

/// An OFPT_STATS_REQUEST body (`ofp_stats_request`, 1.0.0 §5.3.5).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StatsRequest {
    /// `flags` (none defined for requests; kept as received).
    pub flags: u16,
    /// The typed body.
    pub body: StatsRequestBody,
}

impl StatsRequest {
    /// The `OFPST_*` type.
    pub fn stats_type(&self) -> StatsType {
        match self.body {
            StatsRequestBody::Desc => StatsType::Desc,
            StatsRequestBody::Flow(_) => StatsType::Flow,
            StatsRequestBody::Aggregate(_) => StatsType::Aggregate,
            StatsRequestBody::Table => StatsType::Table,
            StatsRequestBody::Port { .. } => StatsType::Port,
            StatsRequestBody::Queue { .. } => StatsType::Queue,
            StatsRequestBody::Vendor { .. } => StatsType::Vendor,
        }
    }

    /// Reads everything after the header (from the `type` field to the end
    /// of `r`).
    pub fn parse(r: &mut Reader<'_>) -> Result<StatsRequest, DecodeError> {
        let (stats_type, flags, at) = stats_head(r)?;
        let body = match stats_type {
            StatsType::Desc => StatsRequestBody::Desc,
            StatsType::Flow => {
                StatsRequestBody::Flow(exact(r, FLOW_STATS_REQUEST_LEN, FlowStatsRequest::parse)?)
            }
            StatsType::Aggregate => StatsRequestBody::Aggregate(exact(
                r,
                FLOW_STATS_REQUEST_LEN,
                FlowStatsRequest::parse,
            )?),
            StatsType::Table => StatsRequestBody::Table,
            StatsType::Port => exact(r, 8, |r| {
                let port_no = PortNo::from_of10(r.u16("ofp_port_stats_request.port_no")?);
                r.skip(6, "ofp_port_stats_request.pad")?;
                Ok(StatsRequestBody::Port { port_no })
            })?,
            StatsType::Queue => exact(r, 8, |r| {
                let port_no = PortNo::from_of10(r.u16("ofp_queue_stats_request.port_no")?);
                r.skip(2, "ofp_queue_stats_request.pad")?;
                let queue_id = r.u32("ofp_queue_stats_request.queue_id")?;
                Ok(StatsRequestBody::Queue { port_no, queue_id })
            })?,
            StatsType::Vendor => {
                let vendor = r.u32("ofp_stats_request vendor id")?;
                StatsRequestBody::Vendor {
                    vendor,
                    data: r.take_rest().to_vec(),
                }
            }
            StatsType::Unknown(t) => return Err(unknown_stats_type(t, at)),
        };
        r.finish("ofp_stats_request body")?;
        Ok(StatsRequest { flags, body })
    }

    /// Appends everything after the header.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.stats_type().into());
        out.put_u16(self.flags);
        match &self.body {
            StatsRequestBody::Desc | StatsRequestBody::Table => {}
            StatsRequestBody::Flow(f) | StatsRequestBody::Aggregate(f) => f.emit(out),
            StatsRequestBody::Port { port_no } => {
                out.put_u16(port_to_wire(*port_no));
                out.put_zeros(6);
            }
            StatsRequestBody::Queue { port_no, queue_id } => {
                out.put_u16(port_to_wire(*port_no));
                out.put_zeros(2);
                out.put_u32(*queue_id);
            }
            StatsRequestBody::Vendor { vendor, data } => {
                out.put_u32(*vendor);
                out.put_slice(data);
            }
        }
    }
}
