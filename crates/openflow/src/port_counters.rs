//! [`PortCounters`]: the twelve counters of `ofp_port_stats`, laid out the
//! same in OpenFlow 1.0 (1.0.0 §5.3.5) and 1.3 (1.3.5 §7.3.5.6), so both
//! versions' port statistics and the software switch share one type.

use crate::error::DecodeError;
use crate::wire::{Put, Reader};

/// The counters of one port, in wire order. A switch fills those it does
/// not keep with all ones (or zero, as Open vSwitch and baton's switch do
/// for the error counters they never see).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortCounters {
    /// `rx_packets`: frames received.
    pub rx_packets: u64,
    /// `tx_packets`: frames sent.
    pub tx_packets: u64,
    /// `rx_bytes`: bytes received.
    pub rx_bytes: u64,
    /// `tx_bytes`: bytes sent.
    pub tx_bytes: u64,
    /// `rx_dropped`: frames dropped on receive.
    pub rx_dropped: u64,
    /// `tx_dropped`: frames dropped on send.
    pub tx_dropped: u64,
    /// `rx_errors`: receive errors.
    pub rx_errors: u64,
    /// `tx_errors`: send errors.
    pub tx_errors: u64,
    /// `rx_frame_err`: frame alignment errors.
    pub rx_frame_err: u64,
    /// `rx_over_err`: receive overruns.
    pub rx_over_err: u64,
    /// `rx_crc_err`: CRC errors.
    pub rx_crc_err: u64,
    /// `collisions`.
    pub collisions: u64,
}

impl From<[u64; 12]> for PortCounters {
    /// The counters in wire order.
    fn from(c: [u64; 12]) -> PortCounters {
        let [
            rx_packets,
            tx_packets,
            rx_bytes,
            tx_bytes,
            rx_dropped,
            tx_dropped,
            rx_errors,
            tx_errors,
            rx_frame_err,
            rx_over_err,
            rx_crc_err,
            collisions,
        ] = c;
        PortCounters {
            rx_packets,
            tx_packets,
            rx_bytes,
            tx_bytes,
            rx_dropped,
            tx_dropped,
            rx_errors,
            tx_errors,
            rx_frame_err,
            rx_over_err,
            rx_crc_err,
            collisions,
        }
    }
}

impl PortCounters {
    /// Their size on the wire: twelve 64-bit counters.
    pub const LEN: usize = 96;

    /// Reads the twelve counters.
    pub fn parse(r: &mut Reader) -> Result<PortCounters, DecodeError> {
        let mut c = [0u64; 12];
        for x in &mut c {
            *x = r.u64("ofp_port_stats counter")?;
        }
        Ok(PortCounters::from(c))
    }

    /// Appends the twelve counters, [`PortCounters::LEN`] bytes.
    pub fn emit(&self, out: &mut Vec<u8>) {
        for c in [
            self.rx_packets,
            self.tx_packets,
            self.rx_bytes,
            self.tx_bytes,
            self.rx_dropped,
            self.tx_dropped,
            self.rx_errors,
            self.tx_errors,
            self.rx_frame_err,
            self.rx_over_err,
            self.rx_crc_err,
            self.collisions,
        ] {
            out.put_u64(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_round_trip_in_wire_order() {
        let c = PortCounters::from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!((c.rx_packets, c.rx_crc_err, c.collisions), (1, 11, 12));
        let mut out = Vec::new();
        c.emit(&mut out);
        assert_eq!(out.len(), PortCounters::LEN);
        assert_eq!(&out[..8], &1u64.to_be_bytes());
        assert_eq!(&out[88..], &12u64.to_be_bytes());
        assert_eq!(PortCounters::parse(&mut Reader::new(&out)).unwrap(), c);
        assert!(PortCounters::parse(&mut Reader::new(&out[..95])).is_err());
    }
}
