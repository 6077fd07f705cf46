//! Frames for tests, examples and benchmarks, built with etherparse.
//! Not part of the switch; public so integration tests and benches can
//! share it.

use etherparse::PacketBuilder;

/// An IPv4/UDP frame from 10.0.0.1:1000 to 10.0.0.2:`dst_port` with 18
/// payload bytes (a 64-byte frame without FCS).
pub fn udp_frame(src: [u8; 6], dst: [u8; 6], dst_port: u16) -> Vec<u8> {
    udp_frame_sized(src, dst, [10, 0, 0, 1], [10, 0, 0, 2], dst_port, 18)
}

/// An IPv4/UDP frame with the given addresses and `payload` bytes.
pub fn udp_frame_sized(
    src: [u8; 6],
    dst: [u8; 6],
    ip_src: [u8; 4],
    ip_dst: [u8; 4],
    dst_port: u16,
    payload: usize,
) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src, dst)
        .ipv4(ip_src, ip_dst, 64)
        .udp(1000, dst_port);
    let data = vec![0xab; payload];
    let mut out = Vec::with_capacity(b.size(data.len()));
    // Writing to a Vec cannot fail.
    let _ = b.write(&mut out, &data);
    out
}

/// An IPv4/TCP SYN from 10.0.0.1:`src_port` to 10.0.0.2:`dst_port`.
pub fn tcp_frame(src: [u8; 6], dst: [u8; 6], src_port: u16, dst_port: u16) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src, dst)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(src_port, dst_port, 1, 1024)
        .syn();
    let mut out = Vec::with_capacity(b.size(0));
    let _ = b.write(&mut out, &[]);
    out
}

/// A broadcast ARP request from `src` (10.0.0.1) for 10.0.0.2.
pub fn arp_request(src: [u8; 6]) -> Vec<u8> {
    let mut f = Vec::with_capacity(42);
    f.extend_from_slice(&[0xff; 6]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[10, 0, 0, 1]);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&[10, 0, 0, 2]);
    f
}

/// `frame` with an 802.1Q tag (`vid`, `pcp`) inserted after the MACs.
pub fn with_vlan(frame: &[u8], vid: u16, pcp: u8) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    let tci = (u16::from(pcp) << 13) | (vid & 0x0fff);
    f.extend_from_slice(&[0x81, 0x00]);
    f.extend_from_slice(&tci.to_be_bytes());
    f.extend_from_slice(&frame[12..]);
    f
}
