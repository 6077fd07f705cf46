//! Ports: `ofp_phy_port` (1.0.0 §5.2.1) with its config, state and feature
//! bits, the OFPT_PORT_STATUS body (§5.4.3) and the OFPT_PORT_MOD body
//! (§5.3.3), generated with 1.3's from one definition
//! (`crate::twin::ports!`).
//!
//! Bit sets are plain `u32`s with named constants, kept whole so undefined
//! bits round-trip.

use crate::error::DecodeError;
use crate::types::{MacAddr, PortNo};
use crate::v10::ofmatch::port_to_wire;
use crate::wire::Reader;

/// Size of `ofp_phy_port`.
pub const PHY_PORT_LEN: usize = 48;
/// `OFP_MAX_PORT_NAME_LEN`.
pub const MAX_PORT_NAME_LEN: usize = 16;

/// `ofp_port_config` bits (1.0.0 §5.2.1).
pub mod config {
    pub use crate::twin::port_bits::config::*;

    /// `OFPPC_NO_STP`: disable 802.1D spanning tree on the port.
    pub const NO_STP: u32 = 1 << 1;
    /// `OFPPC_NO_RECV_STP`: drop received 802.1D STP packets.
    pub const NO_RECV_STP: u32 = 1 << 3;
    /// `OFPPC_NO_FLOOD`: do not include this port when flooding.
    pub const NO_FLOOD: u32 = 1 << 4;
}

/// `ofp_port_state` bits and values (1.0.0 §5.2.1).
pub mod state {
    pub use crate::twin::port_bits::state::*;

    /// `OFPPS_STP_LISTEN`: not learning or relaying frames.
    pub const STP_LISTEN: u32 = 0 << 8;
    /// `OFPPS_STP_LEARN`: learning but not relaying frames.
    pub const STP_LEARN: u32 = 1 << 8;
    /// `OFPPS_STP_FORWARD`: learning and relaying frames.
    pub const STP_FORWARD: u32 = 2 << 8;
    /// `OFPPS_STP_BLOCK`: not part of the spanning tree.
    pub const STP_BLOCK: u32 = 3 << 8;
    /// `OFPPS_STP_MASK`: the bits of the STP state.
    pub const STP_MASK: u32 = 3 << 8;
}

/// `ofp_port_features` bits (1.0.0 §5.2.1), used by `curr`, `advertised`,
/// `supported` and `peer`.
pub mod features {
    pub use crate::twin::port_bits::rates::*;

    /// `OFPPF_COPPER`.
    pub const COPPER: u32 = 1 << 7;
    /// `OFPPF_FIBER`.
    pub const FIBER: u32 = 1 << 8;
    /// `OFPPF_AUTONEG`.
    pub const AUTONEG: u32 = 1 << 9;
    /// `OFPPF_PAUSE`.
    pub const PAUSE: u32 = 1 << 10;
    /// `OFPPF_PAUSE_ASYM`.
    pub const PAUSE_ASYM: u32 = 1 << 11;
}

crate::twin::ports! {
    desc: PhyPort, c: "ofp_phy_port", spec: "1.0.0 §5.2.1",
    status_spec: "1.0.0 §5.4.3", mod_spec: "1.0.0 §5.3.3",
    name_len: MAX_PORT_NAME_LEN,
    head: read |r: &mut Reader<'_>, [port_no, _, hw_addr, _]: [&'static str; 4]| {
            Ok::<_, DecodeError>((PortNo::from_of10(r.u16(port_no)?), MacAddr(r.array(hw_addr)?)))
        },
        write |out: &mut Vec<u8>, port: PortNo, hw_addr: MacAddr| {
            out.put_u16(port_to_wire(port));
            out.put_slice(&hw_addr.0);
        },
    extra: [],
    parse: parse, emit: emit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phy_port_layout() {
        let p = PhyPort {
            port_no: PortNo::LOCAL,
            hw_addr: MacAddr([0, 1, 2, 3, 4, 5]),
            name: "br0".into(),
            config: config::NO_FLOOD,
            state: state::STP_BLOCK | state::LINK_DOWN,
            curr: features::F_1GB_FD | features::COPPER,
            advertised: 0,
            supported: 0xffff_ffff,
            peer: 7,
        };
        let mut out = Vec::new();
        p.emit(&mut out);
        assert_eq!(out.len(), PHY_PORT_LEN);
        assert_eq!(&out[0..2], &[0xff, 0xfe]);
        assert_eq!(&out[8..12], b"br0\0");
        assert_eq!(&out[24..28], &[0, 0, 0, 0x10]);
        assert_eq!(PhyPort::parse(&mut Reader::new(&out)).unwrap(), p);
        assert!(PhyPort::parse(&mut Reader::new(&out[..47])).is_err());
    }

    #[test]
    fn names_keep_their_terminator() {
        let p = PhyPort {
            port_no: PortNo(1),
            hw_addr: MacAddr::default(),
            name: "0123456789abcdef".into(),
            config: 0,
            state: 0,
            curr: 0,
            advertised: 0,
            supported: 0,
            peer: 0,
        };
        let mut out = Vec::new();
        p.emit(&mut out);
        // Too long for the field: truncated to leave room for the NUL.
        assert_eq!(&out[8..24], b"0123456789abcde\0");
        let back = PhyPort::parse(&mut Reader::new(&out)).unwrap();
        assert_eq!(back.name, "0123456789abcde");
    }
}
