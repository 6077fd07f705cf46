//! What requests and replies share: the stats type, the constants and
//! structure lengths of 1.0.0 §5.3.5, and the length checks of a body.

use crate::error::{DecodeError, ErrorKind};
use crate::wire::Reader;

/// `OFPSF_REPLY_MORE`: more replies follow this one.
pub const OFPSF_REPLY_MORE: u16 = 1;
/// `OFPQ_ALL`: all queues of a port, in a queue stats request.
pub const OFPQ_ALL: u32 = 0xffff_ffff;
/// `DESC_STR_LEN`.
pub const DESC_STR_LEN: usize = 256;
/// `SERIAL_NUM_LEN`.
pub const SERIAL_NUM_LEN: usize = 32;
/// `OFP_MAX_TABLE_NAME_LEN`.
pub const MAX_TABLE_NAME_LEN: usize = 32;

pub(super) const FLOW_STATS_REQUEST_LEN: usize = 44;
pub(super) const FLOW_STATS_LEN: usize = 88;
pub(super) const AGGREGATE_REPLY_LEN: usize = 24;
pub(super) const TABLE_STATS_LEN: usize = 64;
pub(super) const PORT_STATS_LEN: usize = 104;
pub(super) const QUEUE_STATS_LEN: usize = 32;
pub(super) const DESC_STATS_LEN: usize = 4 * DESC_STR_LEN + SERIAL_NUM_LEN;

crate::wire_enum! {
    /// `ofp_stats_types` (1.0.0 §5.3.5).
    pub enum StatsType: u16 {
        /// `OFPST_DESC`.
        Desc = 0,
        /// `OFPST_FLOW`.
        Flow = 1,
        /// `OFPST_AGGREGATE`.
        Aggregate = 2,
        /// `OFPST_TABLE`.
        Table = 3,
        /// `OFPST_PORT`.
        Port = 4,
        /// `OFPST_QUEUE`.
        Queue = 5,
        /// `OFPST_VENDOR`.
        Vendor = 0xffff,
    }
}

/// Reads `type` and `flags`, and the offset of `type`.
pub(super) fn stats_head(r: &mut Reader<'_>) -> Result<(StatsType, u16, usize), DecodeError> {
    let at = r.offset();
    let raw = r.u16("ofp_stats.type")?;
    let flags = r.u16("ofp_stats.flags")?;
    Ok((StatsType::from(raw), flags, at))
}

pub(super) fn unknown_stats_type(t: u16, at: usize) -> DecodeError {
    DecodeError::new(ErrorKind::UnknownStatsType(t), at, "ofp_stats.type")
}

/// Reads a body that must be exactly `len` bytes.
pub(super) fn exact<T>(
    r: &mut Reader<'_>,
    len: usize,
    f: impl FnOnce(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    if r.remaining() != len {
        return Err(DecodeError::new(
            ErrorKind::BadLength {
                claimed: r.remaining(),
            },
            r.offset(),
            "stats body",
        ));
    }
    f(r)
}

/// Reads an array of fixed-size `len`-byte entries filling `r`.
pub(super) fn array<T>(
    r: &mut Reader<'_>,
    len: usize,
    mut f: impl FnMut(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    if r.remaining() % len != 0 {
        return Err(DecodeError::new(
            ErrorKind::BadLength {
                claimed: r.remaining(),
            },
            r.offset(),
            "stats array",
        ));
    }
    let mut v = Vec::with_capacity(r.remaining() / len);
    while !r.is_empty() {
        v.push(f(r)?);
    }
    Ok(v)
}
