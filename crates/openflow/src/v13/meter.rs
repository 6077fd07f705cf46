//! Meters (1.3.5 §7.3.4.4): OFPT_METER_MOD's body, its command and flag
//! codes, and the meter bands that meter-config replies reuse.

use crate::error::{DecodeError, ErrorKind};
use crate::wire::{Put, Reader};

crate::wire_enum! {
    /// `enum ofp_meter_mod_command` (1.3.5 §7.3.4.4).
    pub enum MeterModCommand: u16 {
        /// OFPMC_ADD.
        Add = 0,
        /// OFPMC_MODIFY.
        Modify = 1,
        /// OFPMC_DELETE.
        Delete = 2,
    }
}

crate::wire_enum! {
    /// `enum ofp_meter_band_type` (1.3.5 §7.3.4.4).
    pub enum MeterBandType: u16 {
        /// OFPMBT_DROP.
        Drop = 1,
        /// OFPMBT_DSCP_REMARK.
        DscpRemark = 2,
        /// OFPMBT_EXPERIMENTER.
        Experimenter = 0xffff,
    }
}

/// `enum ofp_meter_flags` bits (1.3.5 §7.3.4.4).
pub mod meter_flags {
    /// OFPMF_KBPS: rate value in kb/s.
    pub const KBPS: u16 = 1 << 0;
    /// OFPMF_PKTPS: rate value in packet/sec.
    pub const PKTPS: u16 = 1 << 1;
    /// OFPMF_BURST: do burst size.
    pub const BURST: u16 = 1 << 2;
    /// OFPMF_STATS: collect statistics.
    pub const STATS: u16 = 1 << 3;
}

/// Reserved meter numbers (`enum ofp_meter`, 1.3.5 §7.3.4.4).
pub mod meter_id {
    /// OFPM_MAX: last usable meter.
    pub const MAX: u32 = 0xffff_0000;
    /// OFPM_SLOWPATH: meter for slow datapath.
    pub const SLOWPATH: u32 = 0xffff_fffd;
    /// OFPM_CONTROLLER: meter for controller connection.
    pub const CONTROLLER: u32 = 0xffff_fffe;
    /// OFPM_ALL: all meters (stats requests, delete).
    pub const ALL: u32 = 0xffff_ffff;
}

/// Size of `ofp_meter_band_header`'s common part (type, len, rate,
/// burst_size).
const BAND_HEADER_LEN: usize = 12;

/// One meter band (1.3.5 §7.3.4.4). Experimenter and unknown bands keep
/// their bytes exactly (no padding is added), so they round-trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MeterBand {
    /// OFPMBT_DROP (`ofp_meter_band_drop`, 16 bytes).
    Drop {
        /// Rate for dropping packets.
        rate: u32,
        /// Size of bursts.
        burst_size: u32,
    },
    /// OFPMBT_DSCP_REMARK (`ofp_meter_band_dscp_remark`, 16 bytes).
    DscpRemark {
        /// Rate for remarking packets.
        rate: u32,
        /// Size of bursts.
        burst_size: u32,
        /// Number of drop precedence levels to add.
        prec_level: u8,
    },
    /// OFPMBT_EXPERIMENTER (`ofp_meter_band_experimenter`).
    Experimenter {
        /// Rate.
        rate: u32,
        /// Size of bursts.
        burst_size: u32,
        /// Experimenter id.
        experimenter: u32,
        /// Experimenter-defined bytes after the id.
        data: Vec<u8>,
    },
    /// A band type this codec does not know, kept as received.
    Unknown {
        /// `type`.
        band_type: u16,
        /// Rate.
        rate: u32,
        /// Size of bursts.
        burst_size: u32,
        /// The bytes after `burst_size`.
        data: Vec<u8>,
    },
}

impl MeterBand {
    /// The band's type code.
    pub fn band_type(&self) -> MeterBandType {
        match self {
            MeterBand::Drop { .. } => MeterBandType::Drop,
            MeterBand::DscpRemark { .. } => MeterBandType::DscpRemark,
            MeterBand::Experimenter { .. } => MeterBandType::Experimenter,
            MeterBand::Unknown { band_type, .. } => MeterBandType::from(*band_type),
        }
    }

    /// Bytes this band takes on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            MeterBand::Drop { .. } | MeterBand::DscpRemark { .. } => 16,
            MeterBand::Experimenter { data, .. } => 16 + data.len(),
            MeterBand::Unknown { data, .. } => BAND_HEADER_LEN + data.len(),
        }
    }

    /// Decodes one band; a length that does not fit the type or the input
    /// is [`ErrorKind::BadLength`].
    pub fn parse(r: &mut Reader<'_>) -> Result<MeterBand, DecodeError> {
        let at = r.offset();
        let band_type = r.u16("ofp_meter_band_header.type")?;
        let len = r.u16("ofp_meter_band_header.len")?;
        let bad_len = || {
            DecodeError::new(
                ErrorKind::BadLength {
                    claimed: len as usize,
                },
                at + 2,
                "ofp_meter_band_header.len",
            )
        };
        let ty = MeterBandType::from(band_type);
        let min = match ty {
            MeterBandType::Unknown(_) => BAND_HEADER_LEN,
            _ => 16,
        };
        let body_len = (len as usize)
            .checked_sub(4)
            .filter(|&n| len as usize >= min && n <= r.remaining())
            .ok_or_else(bad_len)?;
        let mut b = r.sub(body_len, "ofp_meter_band")?;
        let rate = b.u32("ofp_meter_band_header.rate")?;
        let burst_size = b.u32("ofp_meter_band_header.burst_size")?;
        Ok(match ty {
            MeterBandType::Drop | MeterBandType::DscpRemark if len != 16 => return Err(bad_len()),
            MeterBandType::Drop => MeterBand::Drop { rate, burst_size },
            MeterBandType::DscpRemark => MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level: b.u8("ofp_meter_band_dscp_remark.prec_level")?,
            },
            MeterBandType::Experimenter => MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter: b.u32("ofp_meter_band_experimenter.experimenter")?,
                data: b.take_rest().to_vec(),
            },
            MeterBandType::Unknown(band_type) => MeterBand::Unknown {
                band_type,
                rate,
                burst_size,
                data: b.take_rest().to_vec(),
            },
        })
    }

    /// Appends the band.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.band_type().into());
        out.put_u16(self.wire_len().min(u16::MAX as usize) as u16);
        match self {
            MeterBand::Drop { rate, burst_size } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_zeros(4);
            }
            MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level,
            } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_u8(*prec_level);
                out.put_zeros(3);
            }
            MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter,
                data,
            } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            MeterBand::Unknown {
                rate,
                burst_size,
                data,
                ..
            } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_slice(data);
            }
        }
    }
}

/// Decodes the bands filling `region` (at byte `base`).
pub fn parse_bands(region: &[u8], base: usize) -> Result<Vec<MeterBand>, DecodeError> {
    let mut r = Reader::with_base(region, base);
    let mut out = Vec::new();
    while !r.is_empty() {
        out.push(MeterBand::parse(&mut r)?);
    }
    Ok(out)
}

/// Appends every band.
pub fn emit_bands(out: &mut Vec<u8>, bands: &[MeterBand]) {
    for b in bands {
        b.emit(out);
    }
}

/// The body of OFPT_METER_MOD (`ofp_meter_mod` after the header,
/// 1.3.5 §7.3.4.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MeterMod {
    /// `command`.
    pub command: MeterModCommand,
    /// `flags`: [`meter_flags`] bits.
    pub flags: u16,
    /// `meter_id`.
    pub meter_id: u32,
    /// `bands`.
    pub bands: Vec<MeterBand>,
}

impl MeterMod {
    /// Decodes the body (everything after the header; `base` is its offset
    /// in the message).
    pub fn decode_body(body: &[u8], base: usize) -> Result<MeterMod, DecodeError> {
        let mut r = Reader::with_base(body, base);
        let command = r.u16("ofp_meter_mod.command")?.into();
        let flags = r.u16("ofp_meter_mod.flags")?;
        let meter_id = r.u32("ofp_meter_mod.meter_id")?;
        let base = r.offset();
        let bands = parse_bands(r.take_rest(), base)?;
        Ok(MeterMod {
            command,
            flags,
            meter_id,
            bands,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u16(self.command.into());
        out.put_u16(self.flags);
        out.put_u32(self.meter_id);
        emit_bands(out, &self.bands);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_round_trip_and_errors() {
        let bands = vec![
            MeterBand::Drop {
                rate: 1000,
                burst_size: 10,
            },
            MeterBand::DscpRemark {
                rate: 5,
                burst_size: 6,
                prec_level: 2,
            },
            MeterBand::Experimenter {
                rate: 1,
                burst_size: 2,
                experimenter: 0x2320,
                data: vec![1, 2, 3],
            },
            MeterBand::Unknown {
                band_type: 7,
                rate: 1,
                burst_size: 2,
                data: vec![9; 4],
            },
        ];
        let mut out = Vec::new();
        emit_bands(&mut out, &bands);
        assert_eq!(
            out.len(),
            bands.iter().map(MeterBand::wire_len).sum::<usize>()
        );
        assert_eq!(&out[..4], &[0, 1, 0, 16]);
        assert_eq!(parse_bands(&out, 0).unwrap(), bands);
        assert_eq!(
            parse_bands(&[0, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0], 0)
                .unwrap_err()
                .kind(),
            &ErrorKind::BadLength { claimed: 12 }
        );
    }
}
