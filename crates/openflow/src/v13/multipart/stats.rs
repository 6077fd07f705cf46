//! The statistics structures inside multipart replies (1.3.5 §7.3.5.1-
//! §7.3.5.8): switch description, flow, aggregate, table, port and queue
//! statistics. Groups and meters are in [`super::group_meter`].
//!
//! Each has `parse(r: &mut Reader)` and `emit(&self, out)`. Entries with a
//! `length` field (here flow stats) are read through a sub-reader of
//! exactly that length, after checking it against the entry's minimum and
//! the bytes present, so a corrupt entry cannot reach into the next one.

use crate::error::{DecodeError, ErrorKind};
use crate::port_counters::PortCounters;
use crate::types::{Cookie, PortNo};
use crate::wire::{Put, Reader};

use crate::v13::instruction::Instruction;
use crate::v13::oxm::Match13;

/// `DESC_STR_LEN`: size of the description strings of `ofp_desc`.
pub const DESC_STR_LEN: usize = 256;
/// `SERIAL_NUM_LEN`: size of `ofp_desc.serial_num`.
pub const SERIAL_NUM_LEN: usize = 32;
/// Size of `ofp_desc`.
pub const DESC_LEN: usize = 4 * DESC_STR_LEN + SERIAL_NUM_LEN;
/// Size of the fixed part of `ofp_flow_stats`, without the match.
pub const FLOW_STATS_LEN: usize = 48;
/// Size of `ofp_aggregate_stats_reply`.
pub const AGGREGATE_STATS_LEN: usize = 24;
/// Size of `ofp_table_stats`.
pub const TABLE_STATS_LEN: usize = 24;
/// Size of `ofp_port_stats`.
pub const PORT_STATS_LEN: usize = 112;
/// Size of `ofp_queue_stats`.
pub const QUEUE_STATS_LEN: usize = 40;

/// Reads the rest of a length-prefixed entry that began at `start`, whose
/// `length` field (at `len_at`) said `len`: checks `len` against `min` and
/// the bytes present and returns a reader over exactly the rest.
pub(super) fn entry_rest<'a>(
    r: &mut Reader<'a>,
    start: usize,
    len_at: usize,
    len: usize,
    min: usize,
    what: &'static str,
) -> Result<Reader<'a>, DecodeError> {
    let consumed = r.offset() - start;
    len.checked_sub(consumed)
        .filter(|&rest| len >= min && rest <= r.remaining())
        .ok_or_else(|| DecodeError::new(ErrorKind::BadLength { claimed: len }, len_at, what))
        .and_then(|rest| r.sub(rest, what))
}

/// Writes a u16 length covering `out[start..]` at `at`, saturating.
pub(super) fn patch_len(out: &mut Vec<u8>, start: usize, at: usize) {
    let len = (out.len() - start).min(u16::MAX as usize) as u16;
    out.patch_u16(at, len);
}

/// `ofp_desc` (1.3.5 §7.3.5.1): the switch's description. Each string is
/// a NUL-terminated fixed field: decoded up to the first NUL but never
/// including the field's last byte (the terminator's place), each byte of
/// invalid UTF-8 read as `?`; written truncated to the field size less
/// one. So decode -> encode -> decode is stable whatever was received.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Desc {
    /// `mfr_desc` (256 bytes): manufacturer.
    pub mfr_desc: String,
    /// `hw_desc` (256 bytes): hardware revision.
    pub hw_desc: String,
    /// `sw_desc` (256 bytes): software revision.
    pub sw_desc: String,
    /// `serial_num` (32 bytes).
    pub serial_num: String,
    /// `dp_desc` (256 bytes): human-readable datapath description.
    pub dp_desc: String,
}

impl Desc {
    /// Decodes `ofp_desc`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Desc {
            mfr_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc.mfr_desc")?,
            hw_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc.hw_desc")?,
            sw_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc.sw_desc")?,
            serial_num: r.fixed_string(SERIAL_NUM_LEN, "ofp_desc.serial_num")?,
            dp_desc: r.fixed_string(DESC_STR_LEN, "ofp_desc.dp_desc")?,
        })
    }

    /// Appends `ofp_desc` (1056 bytes).
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_fixed_str(self.mfr_desc.as_bytes(), DESC_STR_LEN);
        out.put_fixed_str(self.hw_desc.as_bytes(), DESC_STR_LEN);
        out.put_fixed_str(self.sw_desc.as_bytes(), DESC_STR_LEN);
        out.put_fixed_str(self.serial_num.as_bytes(), SERIAL_NUM_LEN);
        out.put_fixed_str(self.dp_desc.as_bytes(), DESC_STR_LEN);
    }
}

/// `ofp_flow_stats` (1.3.5 §7.3.5.2): one flow entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowStats {
    /// `table_id`.
    pub table_id: u8,
    /// `duration_sec`: time the flow has been alive, seconds.
    pub duration_sec: u32,
    /// `duration_nsec`: the part of the duration beyond `duration_sec`.
    pub duration_nsec: u32,
    /// `priority`.
    pub priority: u16,
    /// `idle_timeout`.
    pub idle_timeout: u16,
    /// `hard_timeout`.
    pub hard_timeout: u16,
    /// `flags` (OFPFF_*).
    pub flags: u16,
    /// `cookie`.
    pub cookie: Cookie,
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `match`.
    pub match_: Match13,
    /// `instructions`.
    pub instructions: Vec<Instruction>,
}

impl FlowStats {
    /// Decodes one `ofp_flow_stats`, consuming exactly its `length`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let start = r.offset();
        let len = r.u16("ofp_flow_stats.length")? as usize;
        // The fixed part plus the smallest match (8 bytes).
        let mut e = entry_rest(r, start, start, len, FLOW_STATS_LEN + 8, "ofp_flow_stats")?;
        let table_id = e.u8("ofp_flow_stats.table_id")?;
        e.skip(1, "ofp_flow_stats.pad")?;
        let duration_sec = e.u32("ofp_flow_stats.duration_sec")?;
        let duration_nsec = e.u32("ofp_flow_stats.duration_nsec")?;
        let priority = e.u16("ofp_flow_stats.priority")?;
        let idle_timeout = e.u16("ofp_flow_stats.idle_timeout")?;
        let hard_timeout = e.u16("ofp_flow_stats.hard_timeout")?;
        let flags = e.u16("ofp_flow_stats.flags")?;
        e.skip(4, "ofp_flow_stats.pad2")?;
        let cookie = Cookie(e.u64("ofp_flow_stats.cookie")?);
        let packet_count = e.u64("ofp_flow_stats.packet_count")?;
        let byte_count = e.u64("ofp_flow_stats.byte_count")?;
        let match_ = Match13::parse(&mut e)?;
        let mut instructions = Vec::new();
        while !e.is_empty() {
            instructions.push(Instruction::parse(&mut e)?);
        }
        Ok(FlowStats {
            table_id,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            flags,
            cookie,
            packet_count,
            byte_count,
            match_,
            instructions,
        })
    }

    /// Appends `ofp_flow_stats`, filling in `length`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u16(0);
        out.put_u8(self.table_id);
        out.put_zeros(1);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.priority);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u16(self.flags);
        out.put_zeros(4);
        out.put_u64(self.cookie.0);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        self.match_.emit(out);
        self.instructions.iter().for_each(|i| i.emit(out));
        patch_len(out, start, start);
    }
}

/// `ofp_aggregate_stats_reply` (1.3.5 §7.3.5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AggregateStats {
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `flow_count`.
    pub flow_count: u32,
}

impl AggregateStats {
    /// Decodes `ofp_aggregate_stats_reply`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let a = AggregateStats {
            packet_count: r.u64("ofp_aggregate_stats_reply.packet_count")?,
            byte_count: r.u64("ofp_aggregate_stats_reply.byte_count")?,
            flow_count: r.u32("ofp_aggregate_stats_reply.flow_count")?,
        };
        r.skip(4, "ofp_aggregate_stats_reply.pad")?;
        Ok(a)
    }

    /// Appends `ofp_aggregate_stats_reply`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        out.put_u32(self.flow_count);
        out.put_zeros(4);
    }
}

/// `ofp_table_stats` (1.3.5 §7.3.5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableStats {
    /// `table_id`.
    pub table_id: u8,
    /// `active_count`: entries in the table.
    pub active_count: u32,
    /// `lookup_count`: packets looked up.
    pub lookup_count: u64,
    /// `matched_count`: packets that hit an entry.
    pub matched_count: u64,
}

impl TableStats {
    /// Decodes `ofp_table_stats`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let table_id = r.u8("ofp_table_stats.table_id")?;
        r.skip(3, "ofp_table_stats.pad")?;
        Ok(TableStats {
            table_id,
            active_count: r.u32("ofp_table_stats.active_count")?,
            lookup_count: r.u64("ofp_table_stats.lookup_count")?,
            matched_count: r.u64("ofp_table_stats.matched_count")?,
        })
    }

    /// Appends `ofp_table_stats`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.active_count);
        out.put_u64(self.lookup_count);
        out.put_u64(self.matched_count);
    }
}

/// `ofp_port_stats` (1.3.5 §7.3.5.6). Counters a switch does not keep
/// are all ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortStats {
    /// `port_no`.
    pub port_no: PortNo,
    /// The counters.
    pub counters: PortCounters,
    /// `duration_sec`: time the port has been alive, seconds.
    pub duration_sec: u32,
    /// `duration_nsec`: the part of the duration beyond `duration_sec`.
    pub duration_nsec: u32,
}

impl PortStats {
    /// Decodes `ofp_port_stats`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let port_no = PortNo(r.u32("ofp_port_stats.port_no")?);
        r.skip(4, "ofp_port_stats.pad")?;
        Ok(PortStats {
            port_no,
            counters: PortCounters::parse(r)?,
            duration_sec: r.u32("ofp_port_stats.duration_sec")?,
            duration_nsec: r.u32("ofp_port_stats.duration_nsec")?,
        })
    }

    /// Appends `ofp_port_stats`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port_no.0);
        out.put_zeros(4);
        self.counters.emit(out);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
    }
}

crate::twin::queue_stats! {
    spec: "1.3.5 §7.3.5.8",
    port: read |r: &mut Reader<'_>| r.u32("ofp_queue_stats.port_no").map(PortNo),
        write |out: &mut Vec<u8>, p: PortNo| out.put_u32(p.0),
    extra: [
        /// `duration_sec`: time the queue has been alive, seconds.
        duration_sec,
        /// `duration_nsec`: the part of the duration beyond `duration_sec`.
        duration_nsec,
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_spec() {
        let mut out = Vec::new();
        Desc::default().emit(&mut out);
        assert_eq!(out.len(), DESC_LEN);
        for (emit, len) in [
            (
                &(|o: &mut Vec<u8>| AggregateStats::default().emit(o)) as &dyn Fn(&mut Vec<u8>),
                AGGREGATE_STATS_LEN,
            ),
            (&|o| TableStats::default().emit(o), TABLE_STATS_LEN),
            (&|o| PortStats::default().emit(o), PORT_STATS_LEN),
            (&|o| QueueStats::default().emit(o), QUEUE_STATS_LEN),
        ] {
            let mut out = Vec::new();
            emit(&mut out);
            assert_eq!(out.len(), len);
        }
    }

    fn string_of(field: &[u8]) -> String {
        Reader::new(field).fixed_string(field.len(), "s").unwrap()
    }

    #[test]
    fn fixed_strings_are_stable() {
        assert_eq!(string_of(b"ab\xffc\xe2\x82\0zz"), "ab?c??");
        assert_eq!(string_of("d\u{e9}j\u{e0}\0".as_bytes()), "d\u{e9}j\u{e0}");
        // No terminator: the last byte is the terminator's place.
        assert_eq!(string_of(b"abcd"), "abc");
        assert_eq!(string_of(b""), "");
        // A desc of invalid bytes with no NULs re-encodes and decodes
        // stably.
        let raw = vec![0xffu8; DESC_LEN];
        let d = Desc::parse(&mut Reader::new(&raw)).unwrap();
        assert_eq!(d.mfr_desc.len(), DESC_STR_LEN - 1);
        let mut out = Vec::new();
        d.emit(&mut out);
        assert_eq!(Desc::parse(&mut Reader::new(&out)).unwrap(), d);
    }
}
