//! The Ethernet frames the emulated switches put in their PACKET_INs, and
//! the addressing plan behind them.
//!
//! Each switch `s` (0-based, datapath id `s + 1`) has `M` hosts and one
//! gateway. Host `h` has MAC `00:SS:SS:HH:HH:HH` (`SS` = `s + 1`, `HH` =
//! `h + 1`) and sits on port `1 + h % (PORTS - 1)`; the gateway has MAC
//! `00:SS:SS:ff:ff:ff` on port [`PORTS`]. Before the measured traffic each
//! switch sends one ARP request from its gateway (broadcast), so a learning
//! switch learns where the gateway is; every later request is a 64-byte
//! TCP/IPv4 frame from host `k mod M` to the gateway, which a learning
//! switch answers with a FLOW_MOD (like cbench, the emulator never installs
//! the flow, so the next packet from that host is a miss again).
//!
//! Frames are built once per switch with etherparse; per request only the
//! source MAC is patched in place ([`DataFrame::set_host`]), so sending
//! allocates nothing.

use baton_openflow::{MacAddr, PortNo};
use etherparse::{ArpHardwareId, ArpOperation, ArpPacket, EtherType, PacketBuilder};

/// Ports of each emulated switch.
pub const PORTS: u16 = 4;

/// Length of the data frames (Ethernet II + IPv4 + TCP + 10 bytes).
pub const DATA_FRAME_LEN: usize = 64;

/// Where the source MAC sits in an Ethernet II frame (after the 6-byte
/// destination).
const ETH_SRC: std::ops::Range<usize> = 6..12;

/// The bytes of a data frame that name its source host: the last three of
/// the source MAC, `host + 1` in big-endian order.
pub const SRC_HOST: std::ops::Range<usize> = 9..12;

/// The largest number of hosts per switch the addressing plan allows.
pub const MAX_HOSTS: usize = 0xff_fffe;

fn switch_bytes(switch: usize) -> [u8; 2] {
    ((switch as u32 + 1) as u16).to_be_bytes()
}

/// MAC of host `host` of switch `switch`.
pub fn host_mac(switch: usize, host: usize) -> MacAddr {
    let [s1, s2] = switch_bytes(switch);
    let h = ((host % MAX_HOSTS) as u32 + 1).to_be_bytes();
    MacAddr([0, s1, s2, h[1], h[2], h[3]])
}

/// MAC of the gateway of switch `switch`.
pub fn gateway_mac(switch: usize) -> MacAddr {
    let [s1, s2] = switch_bytes(switch);
    MacAddr([0, s1, s2, 0xff, 0xff, 0xff])
}

/// The port host `host` is on.
pub fn host_port(host: usize) -> PortNo {
    PortNo(1 + (host % (PORTS as usize - 1)) as u32)
}

/// The port the gateway is on.
pub fn gateway_port() -> PortNo {
    PortNo(PORTS as u32)
}

fn ip(switch: usize, last: u8) -> [u8; 4] {
    let [s1, s2] = switch_bytes(switch);
    [10, s1, s2, last]
}

/// A switch's data frame, patched per request.
#[derive(Debug, Clone)]
pub struct DataFrame {
    bytes: Vec<u8>,
    switch: usize,
}

impl DataFrame {
    /// The TCP/IPv4 frame from host 0 of `switch` to its gateway.
    pub fn new(switch: usize) -> DataFrame {
        let builder = PacketBuilder::ethernet2(host_mac(switch, 0).0, gateway_mac(switch).0)
            .ipv4(ip(switch, 1), ip(switch, 254), 64)
            .tcp(1024, 80, 1, 4096);
        let payload = [0u8; DATA_FRAME_LEN - 54];
        let mut bytes = Vec::with_capacity(builder.size(payload.len()));
        // Writing into a Vec cannot fail.
        let _ = builder.write(&mut bytes, &payload);
        DataFrame { bytes, switch }
    }

    /// Makes the frame come from host `host`.
    #[inline]
    pub fn set_host(&mut self, host: usize) {
        let mac = host_mac(self.switch, host);
        if let Some(dst) = self.bytes.get_mut(ETH_SRC) {
            dst.copy_from_slice(&mac.0);
        }
    }

    /// The frame.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The ARP request the gateway of `switch` broadcasts before traffic
/// starts, so a learning switch learns it.
pub fn gateway_arp(switch: usize) -> Vec<u8> {
    let gw = gateway_mac(switch).0;
    let mut out = Vec::with_capacity(64);
    if let Ok(arp) = ArpPacket::new(
        ArpHardwareId::ETHERNET,
        EtherType::IPV4,
        ArpOperation::REQUEST,
        &gw,
        &ip(switch, 254),
        &[0; 6],
        &ip(switch, 1),
    ) {
        let builder = PacketBuilder::ethernet2(gw, [0xff; 6]).arp(arp);
        let _ = builder.write(&mut out);
    }
    // Pad to the Ethernet minimum of 60 bytes.
    if out.len() < 60 {
        out.resize(60, 0);
    }
    out
}

/// True when `frame` is an LLDP frame (EtherType 0x88cc), which cbench
/// does not count as a response when a controller sends it out.
pub fn is_lldp(frame: &[u8]) -> bool {
    etherparse::Ethernet2HeaderSlice::from_slice(frame)
        .map(|h| h.ether_type() == EtherType(0x88cc))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    #[test]
    fn addressing_plan() {
        assert_eq!(host_mac(0, 0), MacAddr([0, 0, 1, 0, 0, 1]));
        assert_eq!(
            host_mac(0x1233, 0x0a0b0b),
            MacAddr([0, 0x12, 0x34, 0x0a, 0x0b, 0x0c])
        );
        assert_eq!(gateway_mac(2), MacAddr([0, 0, 3, 0xff, 0xff, 0xff]));
        assert!(!host_mac(5, 7).is_multicast());
        assert_eq!(host_port(0), PortNo(1));
        assert_eq!(host_port(3), PortNo(1));
        assert_eq!(host_port(2), PortNo(3));
        assert_eq!(gateway_port(), PortNo(4));
    }

    #[test]
    fn the_host_bytes_are_the_end_of_the_source_mac() {
        let mut f = DataFrame::new(2);
        f.set_host(0x0a0b0b);
        assert_eq!(&f.bytes()[SRC_HOST], &[0x0a, 0x0b, 0x0c]);
        assert_eq!(&f.bytes()[ETH_SRC][3..], &f.bytes()[SRC_HOST]);
    }

    #[test]
    fn data_frame_parses_and_patches() {
        let mut f = DataFrame::new(1);
        assert_eq!(f.bytes().len(), DATA_FRAME_LEN);
        f.set_host(41);
        let p = SlicedPacket::from_ethernet(f.bytes()).unwrap();
        let eth = p.link.unwrap().to_header().unwrap();
        let eth = match eth {
            etherparse::LinkHeader::Ethernet2(e) => e,
            _ => panic!("not ethernet"),
        };
        assert_eq!(eth.source, host_mac(1, 41).0);
        assert_eq!(eth.destination, gateway_mac(1).0);
        assert!(matches!(p.net, Some(NetSlice::Ipv4(_))));
        assert!(matches!(p.transport, Some(TransportSlice::Tcp(_))));
        assert!(!is_lldp(f.bytes()));
    }

    #[test]
    fn arp_is_broadcast_from_gateway() {
        let a = gateway_arp(3);
        assert_eq!(a.len(), 60);
        assert_eq!(&a[0..6], &[0xff; 6]);
        assert_eq!(&a[6..12], &gateway_mac(3).0);
        assert_eq!(&a[12..14], &[0x08, 0x06]);
        let mut lldp = a.clone();
        lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
        assert!(is_lldp(&lldp));
    }
}
