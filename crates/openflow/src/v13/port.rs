//! `ofp_port`, the description of a switch port (1.3.5 §7.2.1), with its
//! config, state and feature bits.

use crate::error::DecodeError;
use crate::types::{MacAddr, PortNo};
use crate::wire::{Put, Reader};

/// Size of `ofp_port`.
pub const PORT_LEN: usize = 64;
/// Size of the NUL-padded `name` field (`OFP_MAX_PORT_NAME_LEN`).
pub const PORT_NAME_LEN: usize = 16;

/// `enum ofp_port_config` bits (1.3.5 §7.2.1).
pub mod port_config {
    /// OFPPC_PORT_DOWN: port is administratively down.
    pub const PORT_DOWN: u32 = 1 << 0;
    /// OFPPC_NO_RECV: drop all packets received by the port.
    pub const NO_RECV: u32 = 1 << 2;
    /// OFPPC_NO_FWD: drop packets forwarded to the port.
    pub const NO_FWD: u32 = 1 << 5;
    /// OFPPC_NO_PACKET_IN: do not send packet-in messages for the port.
    pub const NO_PACKET_IN: u32 = 1 << 6;
}

/// `enum ofp_port_state` bits (1.3.5 §7.2.1).
pub mod port_state {
    /// OFPPS_LINK_DOWN: no physical link present.
    pub const LINK_DOWN: u32 = 1 << 0;
    /// OFPPS_BLOCKED: port is blocked.
    pub const BLOCKED: u32 = 1 << 1;
    /// OFPPS_LIVE: live for fast failover groups.
    pub const LIVE: u32 = 1 << 2;
}

/// `enum ofp_port_features` bits (1.3.5 §7.2.1).
pub mod port_features {
    /// OFPPF_10MB_HD.
    pub const F_10MB_HD: u32 = 1 << 0;
    /// OFPPF_10MB_FD.
    pub const F_10MB_FD: u32 = 1 << 1;
    /// OFPPF_100MB_HD.
    pub const F_100MB_HD: u32 = 1 << 2;
    /// OFPPF_100MB_FD.
    pub const F_100MB_FD: u32 = 1 << 3;
    /// OFPPF_1GB_HD.
    pub const F_1GB_HD: u32 = 1 << 4;
    /// OFPPF_1GB_FD.
    pub const F_1GB_FD: u32 = 1 << 5;
    /// OFPPF_10GB_FD.
    pub const F_10GB_FD: u32 = 1 << 6;
    /// OFPPF_40GB_FD.
    pub const F_40GB_FD: u32 = 1 << 7;
    /// OFPPF_100GB_FD.
    pub const F_100GB_FD: u32 = 1 << 8;
    /// OFPPF_1TB_FD.
    pub const F_1TB_FD: u32 = 1 << 9;
    /// OFPPF_OTHER: other rate, not in the list.
    pub const OTHER: u32 = 1 << 10;
    /// OFPPF_COPPER.
    pub const COPPER: u32 = 1 << 11;
    /// OFPPF_FIBER.
    pub const FIBER: u32 = 1 << 12;
    /// OFPPF_AUTONEG.
    pub const AUTONEG: u32 = 1 << 13;
    /// OFPPF_PAUSE.
    pub const PAUSE: u32 = 1 << 14;
    /// OFPPF_PAUSE_ASYM.
    pub const PAUSE_ASYM: u32 = 1 << 15;
}

/// `ofp_port` (1.3.5 §7.2.1, 64 bytes).
///
/// `name` is read up to its first NUL and never includes the field's last
/// byte; bytes that are not UTF-8 become `?`. Names of at most 15 bytes
/// without NUL survive a round trip; longer ones are cut on encode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Port {
    /// `port_no`.
    pub port_no: PortNo,
    /// `hw_addr`.
    pub hw_addr: MacAddr,
    /// `name`.
    pub name: String,
    /// `config`: [`port_config`] bits.
    pub config: u32,
    /// `state`: [`port_state`] bits.
    pub state: u32,
    /// `curr`: current features ([`port_features`] bits).
    pub curr: u32,
    /// `advertised`: features being advertised by the port.
    pub advertised: u32,
    /// `supported`: features supported by the port.
    pub supported: u32,
    /// `peer`: features advertised by the peer.
    pub peer: u32,
    /// `curr_speed`: current bitrate in kbps.
    pub curr_speed: u32,
    /// `max_speed`: maximum bitrate in kbps.
    pub max_speed: u32,
}

impl Port {
    /// Decodes an `ofp_port`.
    pub fn parse(r: &mut Reader<'_>) -> Result<Port, DecodeError> {
        let port_no = PortNo(r.u32("ofp_port.port_no")?);
        r.skip(4, "ofp_port.pad")?;
        let hw_addr = MacAddr(r.array("ofp_port.hw_addr")?);
        r.skip(2, "ofp_port.pad2")?;
        let name = r.fixed_string(PORT_NAME_LEN, "ofp_port.name")?;
        Ok(Port {
            port_no,
            hw_addr,
            name,
            config: r.u32("ofp_port.config")?,
            state: r.u32("ofp_port.state")?,
            curr: r.u32("ofp_port.curr")?,
            advertised: r.u32("ofp_port.advertised")?,
            supported: r.u32("ofp_port.supported")?,
            peer: r.u32("ofp_port.peer")?,
            curr_speed: r.u32("ofp_port.curr_speed")?,
            max_speed: r.u32("ofp_port.max_speed")?,
        })
    }

    /// Appends the 64-byte `ofp_port`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port_no.0);
        out.put_zeros(4);
        out.put_slice(&self.hw_addr.0);
        out.put_zeros(2);
        out.put_fixed_str(self.name.as_bytes(), PORT_NAME_LEN);
        for v in [
            self.config,
            self.state,
            self.curr,
            self.advertised,
            self.supported,
            self.peer,
            self.curr_speed,
            self.max_speed,
        ] {
            out.put_u32(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_is_64_bytes_and_round_trips() {
        let p = Port {
            port_no: PortNo(3),
            hw_addr: MacAddr([2, 0, 0, 0, 0, 3]),
            name: "s1-eth3".into(),
            config: port_config::NO_PACKET_IN,
            state: port_state::LIVE,
            curr: port_features::F_10GB_FD | port_features::COPPER,
            advertised: 0,
            supported: 0,
            peer: 0,
            curr_speed: 10_000_000,
            max_speed: 0,
        };
        let mut out = Vec::new();
        p.emit(&mut out);
        assert_eq!(out.len(), PORT_LEN);
        assert_eq!(&out[16..24], b"s1-eth3\0");
        let mut r = Reader::new(&out);
        assert_eq!(Port::parse(&mut r).unwrap(), p);
        assert!(r.is_empty());
    }

    #[test]
    fn odd_names_are_stable() {
        let name = |b: &[u8]| Reader::new(b).fixed_string(b.len(), "name").unwrap();
        assert_eq!(name(&[b'a', 0xff, 0xfe, b'b', 0]), "a??b");
        assert_eq!(name("é\0".as_bytes()), "é");
        // No NUL: the last byte is the terminator's place.
        assert_eq!(name(b"abcd"), "abc");
        assert_eq!(name(b"ab\0d"), "ab");
    }
}
