//! OFPT_STATS_REQUEST and OFPT_STATS_REPLY bodies (1.0.0 §5.3.5): the
//! `ofp_stats_request` / `ofp_stats_reply` type and flags, and every body
//! kind (desc, flow, aggregate, table, port, queue, vendor).
//!
//! Replies that are arrays are decoded whole; every entry's length is
//! checked against the bytes present before it is trusted. An unknown
//! stats type is [`ErrorKind::UnknownStatsType`](crate::ErrorKind::UnknownStatsType) (`OFPBRC_BAD_STAT`).
//!
//! Parts: `types.rs` (the stats type, constants and length checks),
//! `request.rs` and `reply.rs`; this module gathers their public items.

mod reply;
mod request;
mod types;

pub use reply::{
    AggregateStats, DescStats, FlowStats, PortStats, QueueStats, StatsReply, StatsReplyBody,
    TableStats,
};
pub use request::{FlowStatsRequest, StatsRequest, StatsRequestBody};
pub use types::{
    DESC_STR_LEN, MAX_TABLE_NAME_LEN, OFPQ_ALL, OFPSF_REPLY_MORE, SERIAL_NUM_LEN, StatsType,
};

#[cfg(test)]
mod tests;
