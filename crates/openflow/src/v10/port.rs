//! Ports: `ofp_phy_port` (1.0.0 §5.2.1) with its config, state and feature
//! bits, the OFPT_PORT_STATUS body (§5.4.3) and the OFPT_PORT_MOD body
//! (§5.3.3).
//!
//! Bit sets are plain `u32`s with named constants, kept whole so undefined
//! bits round-trip.

use crate::error::DecodeError;
use crate::types::PortReason;
use crate::types::{MacAddr, PortNo};
use crate::v10::ofmatch::port_to_wire;
use crate::wire::{Put, Reader};

/// Size of `ofp_phy_port`.
pub const PHY_PORT_LEN: usize = 48;
/// `OFP_MAX_PORT_NAME_LEN`.
pub const MAX_PORT_NAME_LEN: usize = 16;

/// `ofp_port_config` bits (1.0.0 §5.2.1).
pub mod config {
    /// `OFPPC_PORT_DOWN`: port is administratively down.
    pub const PORT_DOWN: u32 = 1 << 0;
    /// `OFPPC_NO_STP`: disable 802.1D spanning tree on the port.
    pub const NO_STP: u32 = 1 << 1;
    /// `OFPPC_NO_RECV`: drop all packets except 802.1D spanning tree.
    pub const NO_RECV: u32 = 1 << 2;
    /// `OFPPC_NO_RECV_STP`: drop received 802.1D STP packets.
    pub const NO_RECV_STP: u32 = 1 << 3;
    /// `OFPPC_NO_FLOOD`: do not include this port when flooding.
    pub const NO_FLOOD: u32 = 1 << 4;
    /// `OFPPC_NO_FWD`: drop packets forwarded to the port.
    pub const NO_FWD: u32 = 1 << 5;
    /// `OFPPC_NO_PACKET_IN`: do not send packet-in messages for the port.
    pub const NO_PACKET_IN: u32 = 1 << 6;
}

/// `ofp_port_state` bits and values (1.0.0 §5.2.1).
pub mod state {
    /// `OFPPS_LINK_DOWN`: no physical link present.
    pub const LINK_DOWN: u32 = 1 << 0;
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
    /// `OFPPF_10MB_HD`.
    pub const F_10MB_HD: u32 = 1 << 0;
    /// `OFPPF_10MB_FD`.
    pub const F_10MB_FD: u32 = 1 << 1;
    /// `OFPPF_100MB_HD`.
    pub const F_100MB_HD: u32 = 1 << 2;
    /// `OFPPF_100MB_FD`.
    pub const F_100MB_FD: u32 = 1 << 3;
    /// `OFPPF_1GB_HD`.
    pub const F_1GB_HD: u32 = 1 << 4;
    /// `OFPPF_1GB_FD`.
    pub const F_1GB_FD: u32 = 1 << 5;
    /// `OFPPF_10GB_FD`.
    pub const F_10GB_FD: u32 = 1 << 6;
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

/// `ofp_phy_port` (1.0.0 §5.2.1): a port's description.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PhyPort {
    /// `port_no`.
    pub port_no: PortNo,
    /// `hw_addr`.
    pub hw_addr: MacAddr,
    /// `name`, up to 16 bytes before the first NUL.
    pub name: String,
    /// `config`: [`config`] bits.
    pub config: u32,
    /// `state`: [`state`] bits.
    pub state: u32,
    /// `curr`: current [`features`].
    pub curr: u32,
    /// `advertised`: [`features`] advertised by the port.
    pub advertised: u32,
    /// `supported`: [`features`] supported by the port.
    pub supported: u32,
    /// `peer`: [`features`] advertised by the peer.
    pub peer: u32,
}

impl PhyPort {
    /// Reads a 48-byte `ofp_phy_port`.
    pub fn parse(r: &mut Reader<'_>) -> Result<PhyPort, DecodeError> {
        Ok(PhyPort {
            port_no: PortNo::from_of10(r.u16("ofp_phy_port.port_no")?),
            hw_addr: MacAddr(r.array("ofp_phy_port.hw_addr")?),
            name: r.fixed_string(MAX_PORT_NAME_LEN, "ofp_phy_port.name")?,
            config: r.u32("ofp_phy_port.config")?,
            state: r.u32("ofp_phy_port.state")?,
            curr: r.u32("ofp_phy_port.curr")?,
            advertised: r.u32("ofp_phy_port.advertised")?,
            supported: r.u32("ofp_phy_port.supported")?,
            peer: r.u32("ofp_phy_port.peer")?,
        })
    }

    /// Appends the 48-byte `ofp_phy_port`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(port_to_wire(self.port_no));
        out.put_slice(&self.hw_addr.0);
        out.put_fixed_str(self.name.as_bytes(), MAX_PORT_NAME_LEN);
        out.put_u32(self.config);
        out.put_u32(self.state);
        out.put_u32(self.curr);
        out.put_u32(self.advertised);
        out.put_u32(self.supported);
        out.put_u32(self.peer);
    }
}

/// The body of OFPT_PORT_STATUS (`ofp_port_status`, 1.0.0 §5.4.3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortStatus {
    /// `reason`.
    pub reason: PortReason,
    /// `desc`.
    pub desc: PhyPort,
}

impl PortStatus {
    /// Reads the body (56 bytes after the header).
    pub fn parse(r: &mut Reader<'_>) -> Result<PortStatus, DecodeError> {
        let reason = PortReason::from(r.u8("ofp_port_status.reason")?);
        r.skip(7, "ofp_port_status.pad")?;
        let desc = PhyPort::parse(r)?;
        Ok(PortStatus { reason, desc })
    }

    /// Appends the body.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.reason.into());
        out.put_zeros(7);
        self.desc.emit(out);
    }
}

/// The body of OFPT_PORT_MOD (`ofp_port_mod`, 1.0.0 §5.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortMod {
    /// `port_no`.
    pub port_no: PortNo,
    /// `hw_addr`: must match the port's, as a sanity check.
    pub hw_addr: MacAddr,
    /// `config`: [`config`] bits to set.
    pub config: u32,
    /// `mask`: which [`config`] bits to change.
    pub mask: u32,
    /// `advertise`: [`features`] to advertise; 0 leaves them unchanged.
    pub advertise: u32,
}

impl PortMod {
    /// Reads the body (24 bytes after the header).
    pub fn parse(r: &mut Reader<'_>) -> Result<PortMod, DecodeError> {
        let port_no = PortNo::from_of10(r.u16("ofp_port_mod.port_no")?);
        let hw_addr = MacAddr(r.array("ofp_port_mod.hw_addr")?);
        let config = r.u32("ofp_port_mod.config")?;
        let mask = r.u32("ofp_port_mod.mask")?;
        let advertise = r.u32("ofp_port_mod.advertise")?;
        r.skip(4, "ofp_port_mod.pad")?;
        Ok(PortMod {
            port_no,
            hw_addr,
            config,
            mask,
            advertise,
        })
    }

    /// Appends the body.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(port_to_wire(self.port_no));
        out.put_slice(&self.hw_addr.0);
        out.put_u32(self.config);
        out.put_u32(self.mask);
        out.put_u32(self.advertise);
        out.put_zeros(4);
    }
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
