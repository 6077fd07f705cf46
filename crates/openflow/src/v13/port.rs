//! `ofp_port`, the description of a switch port (1.3.5 §7.2.1), with its
//! config, state and feature bits, the OFPT_PORT_STATUS body (§7.4.3) and
//! the OFPT_PORT_MOD body (§7.3.4.3), generated with 1.0's from one
//! definition (`crate::twin::ports!`).

use crate::error::DecodeError;
use crate::types::{MacAddr, PortNo};
use crate::wire::Reader;

/// Size of `ofp_port`.
pub const PORT_LEN: usize = 64;
/// Size of the NUL-padded `name` field (`OFP_MAX_PORT_NAME_LEN`).
pub const PORT_NAME_LEN: usize = 16;

/// `enum ofp_port_config` bits (1.3.5 §7.2.1).
pub mod port_config {
    pub use crate::twin::port_bits::config::*;
}

/// `enum ofp_port_state` bits (1.3.5 §7.2.1).
pub mod port_state {
    pub use crate::twin::port_bits::state::*;

    /// OFPPS_BLOCKED: port is blocked.
    pub const BLOCKED: u32 = 1 << 1;
    /// OFPPS_LIVE: live for fast failover groups.
    pub const LIVE: u32 = 1 << 2;
}

/// `enum ofp_port_features` bits (1.3.5 §7.2.1).
pub mod port_features {
    pub use crate::twin::port_bits::rates::*;

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

crate::twin::ports! {
    desc: Port, c: "ofp_port", spec: "1.3.5 §7.2.1, 64 bytes",
    status_spec: "1.3.5 §7.4.3", mod_spec: "1.3.5 §7.3.4.3",
    name_len: PORT_NAME_LEN,
    head: read |r: &mut Reader<'_>, [port_no, pad, hw_addr, pad2]: [&'static str; 4]| {
            let port_no = PortNo(r.u32(port_no)?);
            r.skip(4, pad)?;
            let hw_addr = MacAddr(r.array(hw_addr)?);
            r.skip(2, pad2)?;
            Ok::<_, DecodeError>((port_no, hw_addr))
        },
        write |out: &mut Vec<u8>, port: PortNo, hw_addr: MacAddr| {
            out.put_u32(port.0);
            out.put_zeros(4);
            out.put_slice(&hw_addr.0);
            out.put_zeros(2);
        },
    extra: [
        /// `curr_speed`: current bitrate in kbps.
        curr_speed,
        /// `max_speed`: maximum bitrate in kbps.
        max_speed,
    ],
    parse: decode_body, emit: encode_body,
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
