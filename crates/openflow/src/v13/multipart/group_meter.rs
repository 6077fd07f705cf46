//! Group and meter structures inside multipart replies (1.3.5
//! §7.3.5.9-§7.3.5.14): group statistics, descriptions and features, meter
//! statistics, configuration and features.
//!
//! Each has `parse(r: &mut Reader)` and `emit(&self, out)`. Entries with a
//! `length` field are read through a sub-reader of exactly that length
//! after checking it against the entry's minimum and the bytes present.

use super::stats::{entry_rest, patch_len};
use crate::error::DecodeError;
use crate::v13::group::{Bucket, GroupType};
use crate::v13::meter::MeterBand;
use crate::wire::{Put, Reader};

/// Size of the fixed part of `ofp_group_stats`.
pub const GROUP_STATS_LEN: usize = 40;
/// Size of `ofp_bucket_counter`.
pub const BUCKET_COUNTER_LEN: usize = 16;
/// Size of the fixed part of `ofp_group_desc`.
pub const GROUP_DESC_LEN: usize = 8;
/// Size of `ofp_group_features`.
pub const GROUP_FEATURES_LEN: usize = 40;
/// Size of the fixed part of `ofp_meter_stats`.
pub const METER_STATS_LEN: usize = 40;
/// Size of `ofp_meter_band_stats`.
pub const METER_BAND_STATS_LEN: usize = 16;
/// Size of the fixed part of `ofp_meter_config`.
pub const METER_CONFIG_LEN: usize = 8;
/// Size of `ofp_meter_features`.
pub const METER_FEATURES_LEN: usize = 16;

/// `ofp_bucket_counter` (1.3.5 §7.3.5.9): counters of one group bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BucketCounter {
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
}

/// `ofp_group_stats` (1.3.5 §7.3.5.9).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupStats {
    /// `group_id`.
    pub group_id: u32,
    /// `ref_count`: flows or groups that forward to this group.
    pub ref_count: u32,
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `duration_sec`: time the group has been alive, seconds.
    pub duration_sec: u32,
    /// `duration_nsec`: the part of the duration beyond `duration_sec`.
    pub duration_nsec: u32,
    /// `bucket_stats`, one per bucket.
    pub bucket_stats: Vec<BucketCounter>,
}

impl GroupStats {
    /// Decodes one `ofp_group_stats`, consuming exactly its `length`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let start = r.offset();
        let len = r.u16("ofp_group_stats.length")? as usize;
        let mut e = entry_rest(r, start, start, len, GROUP_STATS_LEN, "ofp_group_stats")?;
        e.skip(2, "ofp_group_stats.pad")?;
        let group_id = e.u32("ofp_group_stats.group_id")?;
        let ref_count = e.u32("ofp_group_stats.ref_count")?;
        e.skip(4, "ofp_group_stats.pad2")?;
        let packet_count = e.u64("ofp_group_stats.packet_count")?;
        let byte_count = e.u64("ofp_group_stats.byte_count")?;
        let duration_sec = e.u32("ofp_group_stats.duration_sec")?;
        let duration_nsec = e.u32("ofp_group_stats.duration_nsec")?;
        let mut bucket_stats = Vec::with_capacity(e.remaining() / BUCKET_COUNTER_LEN);
        while !e.is_empty() {
            bucket_stats.push(BucketCounter {
                packet_count: e.u64("ofp_bucket_counter.packet_count")?,
                byte_count: e.u64("ofp_bucket_counter.byte_count")?,
            });
        }
        Ok(GroupStats {
            group_id,
            ref_count,
            packet_count,
            byte_count,
            duration_sec,
            duration_nsec,
            bucket_stats,
        })
    }

    /// Appends `ofp_group_stats`, filling in `length`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u16(0);
        out.put_zeros(2);
        out.put_u32(self.group_id);
        out.put_u32(self.ref_count);
        out.put_zeros(4);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        for b in &self.bucket_stats {
            out.put_u64(b.packet_count);
            out.put_u64(b.byte_count);
        }
        patch_len(out, start, start);
    }
}

/// `ofp_group_desc` (1.3.5 §7.3.5.10): one group's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    /// `type`.
    pub group_type: GroupType,
    /// `group_id`.
    pub group_id: u32,
    /// `buckets`.
    pub buckets: Vec<Bucket>,
}

impl GroupDesc {
    /// Decodes one `ofp_group_desc`, consuming exactly its `length`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let start = r.offset();
        let len = r.u16("ofp_group_desc.length")? as usize;
        let mut e = entry_rest(r, start, start, len, GROUP_DESC_LEN, "ofp_group_desc")?;
        let group_type = GroupType::from(e.u8("ofp_group_desc.type")?);
        e.skip(1, "ofp_group_desc.pad")?;
        let group_id = e.u32("ofp_group_desc.group_id")?;
        let mut buckets = Vec::new();
        while !e.is_empty() {
            buckets.push(Bucket::parse(&mut e)?);
        }
        Ok(GroupDesc {
            group_type,
            group_id,
            buckets,
        })
    }

    /// Appends `ofp_group_desc`, filling in `length`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u16(0);
        out.put_u8(self.group_type.into());
        out.put_zeros(1);
        out.put_u32(self.group_id);
        self.buckets.iter().for_each(|b| b.emit(out));
        patch_len(out, start, start);
    }
}

/// `ofp_group_features` (1.3.5 §7.3.5.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupFeatures {
    /// `types`: bitmap of supported OFPGT_* (bit n = type n).
    pub types: u32,
    /// `capabilities`: OFPGFC_* bits.
    pub capabilities: u32,
    /// `max_groups`: per type, the most groups.
    pub max_groups: [u32; 4],
    /// `actions`: per type, bitmap of supported OFPAT_*.
    pub actions: [u32; 4],
}

impl GroupFeatures {
    /// Decodes `ofp_group_features`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let types = r.u32("ofp_group_features.types")?;
        let capabilities = r.u32("ofp_group_features.capabilities")?;
        let mut max_groups = [0u32; 4];
        for v in &mut max_groups {
            *v = r.u32("ofp_group_features.max_groups")?;
        }
        let mut actions = [0u32; 4];
        for v in &mut actions {
            *v = r.u32("ofp_group_features.actions")?;
        }
        Ok(GroupFeatures {
            types,
            capabilities,
            max_groups,
            actions,
        })
    }

    /// Appends `ofp_group_features`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.types);
        out.put_u32(self.capabilities);
        self.max_groups.iter().for_each(|&v| out.put_u32(v));
        self.actions.iter().for_each(|&v| out.put_u32(v));
    }
}

/// `ofp_meter_band_stats` (1.3.5 §7.3.5.12): counters of one meter band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterBandStats {
    /// `packet_band_count`.
    pub packet_band_count: u64,
    /// `byte_band_count`.
    pub byte_band_count: u64,
}

/// `ofp_meter_stats` (1.3.5 §7.3.5.12).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeterStats {
    /// `meter_id`.
    pub meter_id: u32,
    /// `flow_count`: flows bound to the meter.
    pub flow_count: u32,
    /// `packet_in_count`.
    pub packet_in_count: u64,
    /// `byte_in_count`.
    pub byte_in_count: u64,
    /// `duration_sec`: time the meter has been alive, seconds.
    pub duration_sec: u32,
    /// `duration_nsec`: the part of the duration beyond `duration_sec`.
    pub duration_nsec: u32,
    /// `band_stats`, one per band.
    pub band_stats: Vec<MeterBandStats>,
}

impl MeterStats {
    /// Decodes one `ofp_meter_stats`, consuming exactly its `len`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let start = r.offset();
        let meter_id = r.u32("ofp_meter_stats.meter_id")?;
        let len_at = r.offset();
        let len = r.u16("ofp_meter_stats.len")? as usize;
        let mut e = entry_rest(r, start, len_at, len, METER_STATS_LEN, "ofp_meter_stats")?;
        e.skip(6, "ofp_meter_stats.pad")?;
        let flow_count = e.u32("ofp_meter_stats.flow_count")?;
        let packet_in_count = e.u64("ofp_meter_stats.packet_in_count")?;
        let byte_in_count = e.u64("ofp_meter_stats.byte_in_count")?;
        let duration_sec = e.u32("ofp_meter_stats.duration_sec")?;
        let duration_nsec = e.u32("ofp_meter_stats.duration_nsec")?;
        let mut band_stats = Vec::with_capacity(e.remaining() / METER_BAND_STATS_LEN);
        while !e.is_empty() {
            band_stats.push(MeterBandStats {
                packet_band_count: e.u64("ofp_meter_band_stats.packet_band_count")?,
                byte_band_count: e.u64("ofp_meter_band_stats.byte_band_count")?,
            });
        }
        Ok(MeterStats {
            meter_id,
            flow_count,
            packet_in_count,
            byte_in_count,
            duration_sec,
            duration_nsec,
            band_stats,
        })
    }

    /// Appends `ofp_meter_stats`, filling in `len`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u32(self.meter_id);
        out.put_u16(0);
        out.put_zeros(6);
        out.put_u32(self.flow_count);
        out.put_u64(self.packet_in_count);
        out.put_u64(self.byte_in_count);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        for b in &self.band_stats {
            out.put_u64(b.packet_band_count);
            out.put_u64(b.byte_band_count);
        }
        patch_len(out, start, start + 4);
    }
}

/// `ofp_meter_config` (1.3.5 §7.3.5.13): one meter's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterConfig {
    /// `flags` (OFPMF_*).
    pub flags: u16,
    /// `meter_id`.
    pub meter_id: u32,
    /// `bands`.
    pub bands: Vec<MeterBand>,
}

impl MeterConfig {
    /// Decodes one `ofp_meter_config`, consuming exactly its `length`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let start = r.offset();
        let len = r.u16("ofp_meter_config.length")? as usize;
        let mut e = entry_rest(r, start, start, len, METER_CONFIG_LEN, "ofp_meter_config")?;
        let flags = e.u16("ofp_meter_config.flags")?;
        let meter_id = e.u32("ofp_meter_config.meter_id")?;
        let mut bands = Vec::new();
        while !e.is_empty() {
            bands.push(MeterBand::parse(&mut e)?);
        }
        Ok(MeterConfig {
            flags,
            meter_id,
            bands,
        })
    }

    /// Appends `ofp_meter_config`, filling in `length`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u16(0);
        out.put_u16(self.flags);
        out.put_u32(self.meter_id);
        self.bands.iter().for_each(|b| b.emit(out));
        patch_len(out, start, start);
    }
}

/// `ofp_meter_features` (1.3.5 §7.3.5.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterFeatures {
    /// `max_meter`: the most meters.
    pub max_meter: u32,
    /// `band_types`: bitmap of supported OFPMBT_* (bit n = type n).
    pub band_types: u32,
    /// `capabilities`: OFPMF_* bits.
    pub capabilities: u32,
    /// `max_bands`: the most bands per meter.
    pub max_bands: u8,
    /// `max_color`: the most color values.
    pub max_color: u8,
}

impl MeterFeatures {
    /// Decodes `ofp_meter_features`.
    pub fn parse(r: &mut Reader) -> Result<Self, DecodeError> {
        let m = MeterFeatures {
            max_meter: r.u32("ofp_meter_features.max_meter")?,
            band_types: r.u32("ofp_meter_features.band_types")?,
            capabilities: r.u32("ofp_meter_features.capabilities")?,
            max_bands: r.u8("ofp_meter_features.max_bands")?,
            max_color: r.u8("ofp_meter_features.max_color")?,
        };
        r.skip(2, "ofp_meter_features.pad")?;
        Ok(m)
    }

    /// Appends `ofp_meter_features`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.max_meter);
        out.put_u32(self.band_types);
        out.put_u32(self.capabilities);
        out.put_u8(self.max_bands);
        out.put_u8(self.max_color);
        out.put_zeros(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn sizes_match_the_spec() {
        for (emit, len) in [
            (
                &(|o: &mut Vec<u8>| GroupStats::default().emit(o)) as &dyn Fn(&mut Vec<u8>),
                GROUP_STATS_LEN,
            ),
            (&|o| GroupFeatures::default().emit(o), GROUP_FEATURES_LEN),
            (&|o| MeterStats::default().emit(o), METER_STATS_LEN),
            (&|o| MeterFeatures::default().emit(o), METER_FEATURES_LEN),
        ] {
            let mut out = Vec::new();
            emit(&mut out);
            assert_eq!(out.len(), len);
        }
    }

    #[test]
    fn entry_lengths_are_checked() {
        let g = GroupStats {
            group_id: 1,
            bucket_stats: vec![BucketCounter::default(); 2],
            ..GroupStats::default()
        };
        let mut out = Vec::new();
        g.emit(&mut out);
        assert_eq!(&out[..2], &[0, 72]);
        assert_eq!(GroupStats::parse(&mut Reader::new(&out)).unwrap(), g);
        // Below the minimum, beyond the bytes present, and not on a
        // counter boundary.
        for (len, kind) in [
            (39u16, ErrorKind::BadLength { claimed: 39 }),
            (80, ErrorKind::BadLength { claimed: 80 }),
            (70, ErrorKind::TooShort { need: 8, have: 6 }),
        ] {
            let mut bad = out.clone();
            bad[..2].copy_from_slice(&len.to_be_bytes());
            let e = GroupStats::parse(&mut Reader::new(&bad)).unwrap_err();
            assert_eq!(e.kind(), &kind);
        }
    }

    #[test]
    fn meter_stats_len_is_after_meter_id() {
        let m = MeterStats {
            meter_id: 9,
            band_stats: vec![MeterBandStats {
                packet_band_count: 1,
                byte_band_count: 2,
            }],
            ..MeterStats::default()
        };
        let mut out = Vec::new();
        m.emit(&mut out);
        assert_eq!(&out[..6], &[0, 0, 0, 9, 0, 56]);
        assert_eq!(MeterStats::parse(&mut Reader::new(&out)).unwrap(), m);
        out[5] = 8;
        let e = MeterStats::parse(&mut Reader::new(&out)).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 8 });
        assert_eq!(e.offset(), 4);
    }
}
