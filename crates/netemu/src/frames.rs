//! The frames hosts send and understand, built by hand into a caller's
//! buffer and read at fixed offsets: ARP requests and replies (RFC 826)
//! and the emulator's data packets, IPv4/UDP to port [`DATA_PORT`] whose
//! payload says which pair sent it, its sequence number and when.
//!
//! A data packet is 62 bytes: Ethernet (14), IPv4 without options (20,
//! checksummed), UDP (8, checksum 0 as IPv4 allows), then the payload
//! [`MAGIC`], pair, sequence number (32 bits each) and the sending time
//! (64 bits, nanoseconds of the network's clock), all big-endian.

use std::net::Ipv4Addr;

/// The UDP destination port of data packets.
pub const DATA_PORT: u16 = 5001;
/// The first bytes of a data packet's payload.
pub const MAGIC: [u8; 4] = *b"NEMU";
/// A data packet's length.
pub const DATA_LEN: usize = 62;
/// An ARP frame's length.
pub const ARP_LEN: usize = 42;
/// The broadcast Ethernet address.
pub const BROADCAST: [u8; 6] = [0xff; 6];

const ETH_IPV4: [u8; 2] = [0x08, 0x00];
const ETH_ARP: [u8; 2] = [0x08, 0x06];
const ARP_REQUEST: u16 = 1;
const ARP_REPLY: u16 = 2;

/// What a host made of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// An ARP request.
    ArpRequest {
        /// Who asks.
        sender_mac: [u8; 6],
        /// Its address.
        sender_ip: Ipv4Addr,
        /// The address asked for.
        target_ip: Ipv4Addr,
    },
    /// An ARP reply.
    ArpReply {
        /// The answer: the Ethernet address of `sender_ip`.
        sender_mac: [u8; 6],
        /// The address answered for.
        sender_ip: Ipv4Addr,
        /// Who asked.
        target_ip: Ipv4Addr,
    },
    /// One of the emulator's data packets.
    Data {
        /// Its Ethernet destination.
        dst_mac: [u8; 6],
        /// The pair that sent it.
        pair: u32,
        /// Its sequence number in the pair.
        seq: u32,
        /// When it was sent (nanoseconds of the network's clock).
        sent_ns: u64,
    },
    /// Anything else (LLDP probes, floods of other protocols).
    Other,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn mac(b: &[u8], at: usize) -> [u8; 6] {
    let mut m = [0; 6];
    m.copy_from_slice(&b[at..at + 6]);
    m
}

fn ip(b: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::from(be32(b, at))
}

/// Reads a frame.
pub fn classify(f: &[u8]) -> Received {
    if f.len() >= ARP_LEN && f[12..14] == ETH_ARP && f[14..20] == [0, 1, 8, 0, 6, 4] {
        let (sender_mac, sender_ip, target_ip) = (mac(f, 22), ip(f, 28), ip(f, 38));
        return match be16(f, 20) {
            ARP_REQUEST => Received::ArpRequest {
                sender_mac,
                sender_ip,
                target_ip,
            },
            ARP_REPLY => Received::ArpReply {
                sender_mac,
                sender_ip,
                target_ip,
            },
            _ => Received::Other,
        };
    }
    match data_fields(f) {
        Some((pair, seq)) => Received::Data {
            dst_mac: mac(f, 0),
            pair,
            seq,
            sent_ns: u64::from_be_bytes(f[54..62].try_into().unwrap_or([0; 8])),
        },
        None => Received::Other,
    }
}

/// The pair and sequence number of a data packet; `None` for any other
/// frame. Cheap enough to run on every hop when paths are traced.
pub fn data_fields(f: &[u8]) -> Option<(u32, u32)> {
    let ok = f.len() >= DATA_LEN
        && f[12..14] == ETH_IPV4
        && f[14] == 0x45
        && f[23] == 17
        && be16(f, 36) == DATA_PORT
        && f[42..46] == MAGIC;
    ok.then(|| (be32(f, 46), be32(f, 50)))
}

fn arp(
    out: &mut Vec<u8>,
    eth_dst: [u8; 6],
    op: u16,
    sha: [u8; 6],
    spa: Ipv4Addr,
    tha: [u8; 6],
    tpa: Ipv4Addr,
) {
    out.clear();
    out.extend_from_slice(&eth_dst);
    out.extend_from_slice(&sha);
    out.extend_from_slice(&ETH_ARP);
    out.extend_from_slice(&[0, 1, 8, 0, 6, 4]);
    out.extend_from_slice(&op.to_be_bytes());
    out.extend_from_slice(&sha);
    out.extend_from_slice(&spa.octets());
    out.extend_from_slice(&tha);
    out.extend_from_slice(&tpa.octets());
}

/// A broadcast ARP request from `mac`/`ip` for `target` into `out`.
pub fn arp_request(out: &mut Vec<u8>, mac: [u8; 6], ip: Ipv4Addr, target: Ipv4Addr) {
    arp(out, BROADCAST, ARP_REQUEST, mac, ip, [0; 6], target);
}

/// The ARP reply of `mac`/`ip` to `asker_mac`/`asker_ip` into `out`.
pub fn arp_reply(
    out: &mut Vec<u8>,
    mac: [u8; 6],
    ip: Ipv4Addr,
    asker_mac: [u8; 6],
    asker_ip: Ipv4Addr,
) {
    arp(out, asker_mac, ARP_REPLY, mac, ip, asker_mac, asker_ip);
}

/// The addresses of a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// Source Ethernet address.
    pub src_mac: [u8; 6],
    /// Destination Ethernet address.
    pub dst_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: Ipv4Addr,
    /// Destination IPv4 address.
    pub dst_ip: Ipv4Addr,
}

/// Data packet `seq` of `pair`, sent at `sent_ns`, into `out`.
pub fn data(out: &mut Vec<u8>, a: &Addresses, pair: u32, seq: u32, sent_ns: u64) {
    out.clear();
    out.extend_from_slice(&a.dst_mac);
    out.extend_from_slice(&a.src_mac);
    out.extend_from_slice(&ETH_IPV4);
    let ip_start = out.len();
    let total = (DATA_LEN - 14) as u16;
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    // Identification (the low bits of seq), don't fragment, TTL 64, UDP.
    out.extend_from_slice(&(seq as u16).to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, 17, 0, 0]);
    out.extend_from_slice(&a.src_ip.octets());
    out.extend_from_slice(&a.dst_ip.octets());
    let sum = checksum(&out[ip_start..ip_start + 20]);
    out[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());
    // A source port per pair, so pairs between the same hosts are
    // distinct microflows.
    let sport = 49_152 + (pair % 16_384) as u16;
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&DATA_PORT.to_be_bytes());
    out.extend_from_slice(&((DATA_LEN - 34) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&pair.to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&sent_ns.to_be_bytes());
}

/// The Internet checksum (RFC 1071) of `bytes`, etherparse's (which sums
/// in native byte order, as its own headers do).
fn checksum(bytes: &[u8]) -> u16 {
    etherparse::checksum::Sum16BitWords::new()
        .add_slice(bytes)
        .ones_complement()
        .to_be()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const B: [u8; 6] = [2, 0, 0, 0, 0, 2];

    #[test]
    fn arp_round_trip() {
        let (ia, ib) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut f = Vec::new();
        arp_request(&mut f, A, ia, ib);
        assert_eq!(f.len(), ARP_LEN);
        assert_eq!(f[..6], BROADCAST);
        assert_eq!(
            classify(&f),
            Received::ArpRequest {
                sender_mac: A,
                sender_ip: ia,
                target_ip: ib
            }
        );
        arp_reply(&mut f, B, ib, A, ia);
        assert_eq!(f[..6], A);
        assert_eq!(
            classify(&f),
            Received::ArpReply {
                sender_mac: B,
                sender_ip: ib,
                target_ip: ia
            }
        );
    }

    #[test]
    fn data_packets_carry_pair_seq_and_time_with_a_valid_header() {
        let a = Addresses {
            src_mac: A,
            dst_mac: B,
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        };
        let mut f = Vec::new();
        data(&mut f, &a, 7, 42, 123_456_789);
        assert_eq!(f.len(), DATA_LEN);
        assert_eq!(checksum(&f[14..34]), 0, "the IPv4 header checksums to zero");
        let ip = etherparse::Ipv4HeaderSlice::from_slice(&f[14..34]).unwrap();
        assert_eq!(ip.header_checksum(), ip.to_header().calc_header_checksum());
        assert_eq!(data_fields(&f), Some((7, 42)));
        assert_eq!(
            classify(&f),
            Received::Data {
                dst_mac: B,
                pair: 7,
                seq: 42,
                sent_ns: 123_456_789
            }
        );
        // Short or foreign frames are nothing of ours, and do not panic.
        assert_eq!(classify(&f[..40]), Received::Other);
        assert_eq!(classify(&[]), Received::Other);
        let mut lldp = f.clone();
        lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
        assert_eq!(classify(&lldp), Received::Other);
    }
}
