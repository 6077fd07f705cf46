//! The 1.3 meter table (1.3.5 §5.7, §7.3.4.4): meters with drop bands,
//! each band a token bucket refilled from the clock passed in.
//!
//! A packet that exceeds some band's rate is handled by the exceeded band
//! with the highest rate (§5.7.1); the only band type implemented is
//! `OFPMBT_DROP` (others are refused with `OFPMMFC_BAD_BAND`, as Open
//! vSwitch's userspace datapath does). Without `OFPMF_BURST` a band's
//! bucket holds one second's worth of its rate.

use crate::action::Known;
use crate::error::OfError;
use baton_openflow::v13::MeterMod;
use baton_openflow::v13::meter::{MeterBand, meter_flags, meter_id};
use std::collections::BTreeMap;
use std::time::Instant;

/// Meters a switch holds by default.
pub const DEFAULT_MAX_METERS: u32 = 65_536;
/// Bands per meter.
pub const MAX_BANDS: u8 = 8;

/// One band and its bucket.
#[derive(Debug, Clone)]
pub struct Band {
    /// Rate, in kb/s or packets/s per the meter's flags.
    pub rate: u32,
    /// Bucket size in the same unit.
    pub burst: u32,
    tokens: f64,
    last: Option<Instant>,
    /// Packets this band dropped.
    pub packets: u64,
    /// Bytes this band dropped.
    pub bytes: u64,
}

/// A meter.
#[derive(Debug, Clone)]
pub struct Meter {
    /// `OFPMF_*` flags.
    pub flags: u16,
    /// Its bands.
    pub bands: Vec<Band>,
    /// The bands as sent, for meter-config replies.
    pub wire: Vec<MeterBand>,
    /// When it was added.
    pub created: Instant,
    /// Packets that went through it.
    pub packets: u64,
    /// Bytes that went through it.
    pub bytes: u64,
}

impl Meter {
    /// Checks and builds the meter of a METER_MOD.
    pub fn compile(mm: &MeterMod, now: Instant) -> Result<Meter, OfError> {
        let known =
            meter_flags::KBPS | meter_flags::PKTPS | meter_flags::BURST | meter_flags::STATS;
        let kbps = mm.flags & meter_flags::KBPS != 0;
        let pktps = mm.flags & meter_flags::PKTPS != 0;
        if mm.flags & !known != 0 || (kbps && pktps) {
            return Err(OfError::BadMeterFlags);
        }
        if mm.bands.len() > usize::from(MAX_BANDS) {
            return Err(OfError::OutOfBands);
        }
        let burst = mm.flags & meter_flags::BURST != 0;
        let mut bands = Vec::with_capacity(mm.bands.len());
        for b in &mm.bands {
            let MeterBand::Drop { rate, burst_size } = *b else {
                return Err(OfError::BadBand);
            };
            if rate == 0 {
                return Err(OfError::BadMeterRate);
            }
            let size = if burst && burst_size > 0 {
                burst_size
            } else {
                rate
            };
            bands.push(Band {
                rate,
                burst: size,
                tokens: f64::from(size),
                last: None,
                packets: 0,
                bytes: 0,
            });
        }
        Ok(Meter {
            flags: mm.flags,
            bands,
            wire: mm.bands.clone(),
            created: now,
            packets: 0,
            bytes: 0,
        })
    }

    /// Meters a packet of `bytes` bytes at `now`: true when it may pass.
    pub fn admit(&mut self, now: Instant, bytes: usize) -> bool {
        self.packets += 1;
        self.bytes += bytes as u64;
        let cost = if self.flags & meter_flags::PKTPS != 0 {
            1.0
        } else {
            // kb/s: bits / 1000.
            bytes as f64 * 8.0 / 1000.0
        };
        let mut worst: Option<usize> = None;
        for i in 0..self.bands.len() {
            let b = &mut self.bands[i];
            let elapsed = b
                .last
                .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
            b.last = Some(now);
            b.tokens = (b.tokens + elapsed * f64::from(b.rate)).min(f64::from(b.burst));
            if b.tokens < cost {
                let rate = b.rate;
                if worst.is_none_or(|w| self.bands[w].rate < rate) {
                    worst = Some(i);
                }
            } else {
                b.tokens -= cost;
            }
        }
        match worst {
            Some(i) => {
                let b = &mut self.bands[i];
                b.packets += 1;
                b.bytes += bytes as u64;
                false
            }
            None => true,
        }
    }
}

/// The meter table.
#[derive(Debug, Clone)]
pub struct MeterTable {
    meters: BTreeMap<u32, Meter>,
    max: u32,
}

impl Default for MeterTable {
    fn default() -> Self {
        MeterTable {
            meters: BTreeMap::new(),
            max: DEFAULT_MAX_METERS,
        }
    }
}

impl Known for MeterTable {
    fn contains(&self, id: u32) -> bool {
        self.meters.contains_key(&id)
    }
}

impl MeterTable {
    /// The most meters the table holds (`max_meter`).
    pub fn max(&self) -> u32 {
        self.max
    }

    /// True when meter `id` exists.
    pub fn contains(&self, id: u32) -> bool {
        self.meters.contains_key(&id)
    }

    /// Meter `id`.
    pub fn get(&self, id: u32) -> Option<&Meter> {
        self.meters.get(&id)
    }

    /// Every meter by id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Meter)> {
        self.meters.iter().map(|(k, v)| (*k, v))
    }

    fn check_id(id: u32) -> Result<(), OfError> {
        if id == 0 || id > meter_id::MAX {
            Err(OfError::InvalidMeter)
        } else {
            Ok(())
        }
    }

    /// `OFPMC_ADD`.
    pub fn add(&mut self, id: u32, m: Meter) -> Result<(), OfError> {
        Self::check_id(id)?;
        if self.meters.contains_key(&id) {
            return Err(OfError::MeterExists);
        }
        if self.meters.len() >= self.max as usize {
            return Err(OfError::OutOfMeters);
        }
        self.meters.insert(id, m);
        Ok(())
    }

    /// `OFPMC_MODIFY`.
    pub fn modify(&mut self, id: u32, mut m: Meter) -> Result<(), OfError> {
        Self::check_id(id)?;
        let old = self.meters.get_mut(&id).ok_or(OfError::UnknownMeter)?;
        m.created = old.created;
        m.packets = old.packets;
        m.bytes = old.bytes;
        *old = m;
        Ok(())
    }

    /// `OFPMC_DELETE`: the ids removed (`OFPM_ALL` removes every meter).
    pub fn delete(&mut self, id: u32) -> Vec<u32> {
        if id == meter_id::ALL {
            let ids = self.meters.keys().copied().collect();
            self.meters.clear();
            ids
        } else {
            self.meters.remove(&id).map(|_| id).into_iter().collect()
        }
    }

    /// Meters a packet; true when it may pass (an unknown meter passes).
    pub fn admit(&mut self, id: u32, now: Instant, bytes: usize) -> bool {
        self.meters.get_mut(&id).is_none_or(|m| m.admit(now, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::v13::MeterModCommand;
    use std::time::Duration;

    fn meter(flags: u16, bands: Vec<MeterBand>) -> Result<Meter, OfError> {
        Meter::compile(
            &MeterMod {
                command: MeterModCommand::Add,
                flags,
                meter_id: 1,
                bands,
            },
            Instant::now(),
        )
    }

    #[test]
    fn packet_rate_band_drops_the_excess_and_refills() {
        let t0 = Instant::now();
        let mut m = meter(
            meter_flags::PKTPS | meter_flags::BURST,
            vec![MeterBand::Drop {
                rate: 10,
                burst_size: 5,
            }],
        )
        .unwrap();
        let passed = (0..8).filter(|_| m.admit(t0, 100)).count();
        assert_eq!(passed, 5);
        assert_eq!(m.bands[0].packets, 3);
        // 10 packets/s: after 300 ms, 3 more tokens.
        let t1 = t0 + Duration::from_millis(300);
        let passed = (0..5).filter(|_| m.admit(t1, 100)).count();
        assert_eq!(passed, 3);
    }

    #[test]
    fn kbps_band_and_bad_meters() {
        let t0 = Instant::now();
        // 8 kb/s with a 1 s bucket: 1000 bytes pass, the next do not.
        let mut m = meter(
            meter_flags::KBPS,
            vec![MeterBand::Drop {
                rate: 8,
                burst_size: 0,
            }],
        )
        .unwrap();
        assert!(m.admit(t0, 1000));
        assert!(!m.admit(t0, 1));
        assert!(m.admit(t0 + Duration::from_secs(1), 1000));
        assert_eq!(
            meter(
                meter_flags::KBPS,
                vec![MeterBand::DscpRemark {
                    rate: 1,
                    burst_size: 0,
                    prec_level: 1
                }]
            )
            .unwrap_err(),
            OfError::BadBand
        );
        assert_eq!(
            meter(meter_flags::KBPS | meter_flags::PKTPS, vec![]).unwrap_err(),
            OfError::BadMeterFlags
        );
        let mut t = MeterTable::default();
        assert_eq!(
            t.add(0, meter(0, vec![]).unwrap()),
            Err(OfError::InvalidMeter)
        );
        t.add(5, meter(0, vec![]).unwrap()).unwrap();
        assert_eq!(
            t.add(5, meter(0, vec![]).unwrap()),
            Err(OfError::MeterExists)
        );
        assert_eq!(
            t.modify(6, meter(0, vec![]).unwrap()),
            Err(OfError::UnknownMeter)
        );
        assert_eq!(t.delete(meter_id::ALL), vec![5]);
    }
}
