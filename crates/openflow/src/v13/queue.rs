//! Queue configuration (1.3.5 §7.2.2, §7.3.6): queue properties, a port's
//! queues, and the OFPT_QUEUE_GET_CONFIG_REPLY body.

use crate::error::{DecodeError, ErrorKind};
use crate::types::PortNo;
use crate::wire::{Put, Reader};

/// `OFPQ_ALL`: all queues (queue stats requests).
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// One queue property (`ofp_queue_prop_header` and what follows,
/// 1.3.5 §7.2.2). Experimenter and unknown properties keep their bytes
/// exactly (no padding is added), so they round-trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QueueProp {
    /// OFPQT_MIN_RATE: minimum rate in 1/10 of a percent (> 1000: disabled).
    MinRate(u16),
    /// OFPQT_MAX_RATE: maximum rate in 1/10 of a percent.
    MaxRate(u16),
    /// OFPQT_EXPERIMENTER.
    Experimenter {
        /// Experimenter id.
        experimenter: u32,
        /// Experimenter-defined bytes.
        data: Vec<u8>,
    },
    /// A property type this codec does not know, kept as received.
    Unknown {
        /// `property`.
        property: u16,
        /// The bytes after the 8-byte property header.
        data: Vec<u8>,
    },
}

const OFPQT_MIN_RATE: u16 = 1;
const OFPQT_MAX_RATE: u16 = 2;
const OFPQT_EXPERIMENTER: u16 = 0xffff;

impl QueueProp {
    fn wire_len(&self) -> usize {
        match self {
            QueueProp::MinRate(_) | QueueProp::MaxRate(_) => 16,
            QueueProp::Experimenter { data, .. } => 16 + data.len(),
            QueueProp::Unknown { data, .. } => 8 + data.len(),
        }
    }

    /// Decodes one property; a length that does not fit its type or the
    /// input is [`ErrorKind::BadLength`].
    pub fn parse(r: &mut Reader<'_>) -> Result<QueueProp, DecodeError> {
        let at = r.offset();
        let property = r.u16("ofp_queue_prop_header.property")?;
        let len = r.u16("ofp_queue_prop_header.len")?;
        let bad_len = || {
            DecodeError::new(
                ErrorKind::BadLength {
                    claimed: len as usize,
                },
                at + 2,
                "ofp_queue_prop_header.len",
            )
        };
        let min = match property {
            OFPQT_MIN_RATE | OFPQT_MAX_RATE | OFPQT_EXPERIMENTER => 16,
            _ => 8,
        };
        let body_len = (len as usize)
            .checked_sub(4)
            .filter(|&n| len as usize >= min && n <= r.remaining())
            .ok_or_else(bad_len)?;
        let mut b = r.sub(body_len, "queue property")?;
        b.skip(4, "ofp_queue_prop_header.pad")?;
        Ok(match property {
            OFPQT_MIN_RATE | OFPQT_MAX_RATE if len != 16 => return Err(bad_len()),
            OFPQT_MIN_RATE => QueueProp::MinRate(b.u16("ofp_queue_prop_min_rate.rate")?),
            OFPQT_MAX_RATE => QueueProp::MaxRate(b.u16("ofp_queue_prop_max_rate.rate")?),
            OFPQT_EXPERIMENTER => {
                let experimenter = b.u32("ofp_queue_prop_experimenter.experimenter")?;
                b.skip(4, "ofp_queue_prop_experimenter.pad")?;
                QueueProp::Experimenter {
                    experimenter,
                    data: b.take_rest().to_vec(),
                }
            }
            _ => QueueProp::Unknown {
                property,
                data: b.take_rest().to_vec(),
            },
        })
    }

    /// Appends the property.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let property = match self {
            QueueProp::MinRate(_) => OFPQT_MIN_RATE,
            QueueProp::MaxRate(_) => OFPQT_MAX_RATE,
            QueueProp::Experimenter { .. } => OFPQT_EXPERIMENTER,
            QueueProp::Unknown { property, .. } => *property,
        };
        out.put_u16(property);
        out.put_u16(self.wire_len().min(u16::MAX as usize) as u16);
        out.put_zeros(4);
        match self {
            QueueProp::MinRate(rate) | QueueProp::MaxRate(rate) => {
                out.put_u16(*rate);
                out.put_zeros(6);
            }
            QueueProp::Experimenter { experimenter, data } => {
                out.put_u32(*experimenter);
                out.put_zeros(4);
                out.put_slice(data);
            }
            QueueProp::Unknown { data, .. } => out.put_slice(data),
        }
    }
}

/// `ofp_packet_queue` (1.3.5 §7.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketQueue {
    /// `queue_id`.
    pub queue_id: u32,
    /// `port` the queue is attached to.
    pub port: PortNo,
    /// `properties`.
    pub properties: Vec<QueueProp>,
}

impl PacketQueue {
    /// Decodes one queue; a `len` below 16 or past the input is
    /// [`ErrorKind::BadLength`].
    pub fn parse(r: &mut Reader<'_>) -> Result<PacketQueue, DecodeError> {
        let queue_id = r.u32("ofp_packet_queue.queue_id")?;
        let port = PortNo(r.u32("ofp_packet_queue.port")?);
        let at = r.offset();
        let len = r.u16("ofp_packet_queue.len")?;
        let body_len = (len as usize)
            .checked_sub(10)
            .filter(|&n| len >= 16 && n <= r.remaining())
            .ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadLength {
                        claimed: len as usize,
                    },
                    at,
                    "ofp_packet_queue.len",
                )
            })?;
        let mut b = r.sub(body_len, "ofp_packet_queue")?;
        b.skip(6, "ofp_packet_queue.pad")?;
        let mut properties = Vec::new();
        while !b.is_empty() {
            properties.push(QueueProp::parse(&mut b)?);
        }
        Ok(PacketQueue {
            queue_id,
            port,
            properties,
        })
    }

    /// Appends the queue.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.queue_id);
        out.put_u32(self.port.0);
        let at = out.len();
        out.put_u16(0);
        out.put_zeros(6);
        for p in &self.properties {
            p.emit(out);
        }
        let len = (out.len() - at + 8).min(u16::MAX as usize) as u16;
        out.patch_u16(at, len);
    }
}

/// OFPT_QUEUE_GET_CONFIG_REPLY's body (`ofp_queue_get_config_reply`,
/// 1.3.5 §7.3.6).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueConfig {
    /// `port` that was queried.
    pub port: PortNo,
    /// The port's queues.
    pub queues: Vec<PacketQueue>,
}

impl QueueConfig {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<QueueConfig, DecodeError> {
        let port = PortNo(r.u32("ofp_queue_get_config_reply.port")?);
        r.skip(4, "ofp_queue_get_config_reply.pad")?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::parse(r)?);
        }
        Ok(QueueConfig { port, queues })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port.0);
        out.put_zeros(4);
        for q in &self.queues {
            q.emit(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_config_round_trip() {
        let q = QueueConfig {
            port: PortNo(1),
            queues: vec![
                PacketQueue {
                    queue_id: 7,
                    port: PortNo(1),
                    properties: vec![
                        QueueProp::MinRate(100),
                        QueueProp::MaxRate(900),
                        QueueProp::Experimenter {
                            experimenter: 0x2320,
                            data: vec![1, 2, 3],
                        },
                        QueueProp::Unknown {
                            property: 9,
                            data: vec![],
                        },
                    ],
                },
                PacketQueue {
                    queue_id: 8,
                    port: PortNo(1),
                    properties: vec![],
                },
            ],
        };
        let mut out = Vec::new();
        q.encode_body(&mut out);
        assert_eq!(&out[16..18], &[0, 16 + 16 + 16 + 19 + 8]);
        let mut r = Reader::new(&out);
        assert_eq!(QueueConfig::decode_body(&mut r).unwrap(), q);
        assert!(r.is_empty());
    }
}
