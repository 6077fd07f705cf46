//! [`ArpRepr`]: an Ethernet/IPv4 ARP packet (RFC 826) in owned form, and
//! the one place baton writes ARP frames (routing's proxy ARP, the
//! testbed's hosts).
//!
//! Reading ARP is [`FlowKey::extract`]'s job ([`ArpKey`]); this is the
//! other direction, in smoltcp's `Repr` style: [`ArpRepr::emit`] appends
//! [`ArpRepr::buffer_len`] bytes, [`ArpRepr::emit_frame`] a whole Ethernet
//! frame of [`ArpRepr::frame_len`] bytes. Neither panics; both only
//! append, so a caller that reserved the length first allocates nothing
//! more.

use super::ArpKey;
#[cfg(doc)]
use super::FlowKey;
use super::consts::{
    ARP_OP_REPLY, ARP_OP_REQUEST, ETH_HEADER_LEN, ETH_MIN_FRAME_LEN, ETH_TYPE_ARP, ETH_TYPE_IPV4,
};
use crate::types::MacAddr;
use std::net::Ipv4Addr;

/// ARP hardware type Ethernet (RFC 826 `ar$hrd`).
const HTYPE_ETHERNET: u16 = 1;
/// Hardware address length: a MAC address.
const HLEN: u8 = 6;
/// Protocol address length: an IPv4 address.
const PLEN: u8 = 4;

/// An Ethernet/IPv4 ARP packet: hardware type 1, protocol type 0x0800,
/// 6-byte hardware and 4-byte protocol addresses; the fields that vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpRepr {
    /// Opcode ([`ARP_OP_REQUEST`], [`ARP_OP_REPLY`], or another, written
    /// as given).
    pub op: u16,
    /// Sender hardware address.
    pub sha: MacAddr,
    /// Sender protocol address.
    pub spa: Ipv4Addr,
    /// Target hardware address (zero in a request).
    pub tha: MacAddr,
    /// Target protocol address.
    pub tpa: Ipv4Addr,
}

impl ArpRepr {
    /// The length of an Ethernet/IPv4 ARP packet: 8 bytes of header and
    /// two pairs of 6- and 4-byte addresses.
    pub const PACKET_LEN: usize = 8 + 2 * (HLEN as usize + PLEN as usize);

    /// A request from `sha`/`spa`: who has `tpa`?
    pub const fn request(sha: MacAddr, spa: Ipv4Addr, tpa: Ipv4Addr) -> ArpRepr {
        ArpRepr {
            op: ARP_OP_REQUEST,
            sha,
            spa,
            tha: MacAddr([0; 6]),
            tpa,
        }
    }

    /// A reply from `sha`/`spa` (`spa` is at `sha`) to `tha`/`tpa`.
    pub const fn reply(sha: MacAddr, spa: Ipv4Addr, tha: MacAddr, tpa: Ipv4Addr) -> ArpRepr {
        ArpRepr {
            op: ARP_OP_REPLY,
            sha,
            spa,
            tha,
            tpa,
        }
    }

    /// How many bytes [`ArpRepr::emit`] appends.
    pub const fn buffer_len(&self) -> usize {
        Self::PACKET_LEN
    }

    /// Appends the ARP packet (not its Ethernet header) to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.reserve(self.buffer_len());
        out.extend_from_slice(&HTYPE_ETHERNET.to_be_bytes());
        out.extend_from_slice(&ETH_TYPE_IPV4.to_be_bytes());
        out.extend_from_slice(&[HLEN, PLEN]);
        out.extend_from_slice(&self.op.to_be_bytes());
        out.extend_from_slice(&self.sha.0);
        out.extend_from_slice(&self.spa.octets());
        out.extend_from_slice(&self.tha.0);
        out.extend_from_slice(&self.tpa.octets());
    }

    /// The Ethernet destination of the frame [`ArpRepr::emit_frame`]
    /// writes: broadcast for a request, the target's address otherwise.
    pub const fn eth_dst(&self) -> MacAddr {
        if self.op == ARP_OP_REQUEST {
            MacAddr::BROADCAST
        } else {
            self.tha
        }
    }

    /// How many bytes [`ArpRepr::emit_frame`] appends: Ethernet's minimum
    /// frame (without FCS), which the header and packet do not reach.
    pub const fn frame_len(&self) -> usize {
        let len = ETH_HEADER_LEN + self.buffer_len();
        if len < ETH_MIN_FRAME_LEN {
            ETH_MIN_FRAME_LEN
        } else {
            len
        }
    }

    /// Appends an Ethernet II frame carrying the packet to `out`: from
    /// `sha` to [`ArpRepr::eth_dst`], type 0x0806, padded with zeros to
    /// [`ArpRepr::frame_len`].
    pub fn emit_frame(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.reserve(self.frame_len());
        out.extend_from_slice(&self.eth_dst().0);
        out.extend_from_slice(&self.sha.0);
        out.extend_from_slice(&ETH_TYPE_ARP.to_be_bytes());
        self.emit(out);
        out.resize(start + self.frame_len(), 0);
    }
}

impl From<ArpKey> for ArpRepr {
    /// The packet an extracted [`ArpKey`] describes.
    fn from(k: ArpKey) -> ArpRepr {
        ArpRepr {
            op: k.op,
            sha: k.sha,
            spa: k.spa,
            tha: k.tha,
            tpa: k.tpa,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FlowKey, Network};
    use super::*;
    use crate::types::PortNo;
    use etherparse::{ArpHardwareId, ArpOperation, EtherType, Ethernet2HeaderSlice, LinkSlice};
    use etherparse::{NetSlice, SlicedPacket};

    const A: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
    const B: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0b]);
    const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

    fn frame(repr: &ArpRepr) -> Vec<u8> {
        let mut f = Vec::new();
        repr.emit_frame(&mut f);
        f
    }

    /// Reads `f` with etherparse alone: the Ethernet header's addresses and
    /// type, and the ARP packet's fields.
    fn etherparse_reads(f: &[u8]) -> ([u8; 6], [u8; 6], EtherType, etherparse::ArpPacket) {
        let p = SlicedPacket::from_ethernet(f).expect("etherparse reads the frame");
        let Some(LinkSlice::Ethernet2(eth)) = p.link else {
            panic!("not Ethernet II: {:?}", p.link);
        };
        let Some(NetSlice::Arp(arp)) = p.net else {
            panic!("not ARP: {:?}", p.net);
        };
        (
            eth.destination(),
            eth.source(),
            eth.ether_type(),
            arp.to_packet(),
        )
    }

    #[test]
    fn a_request_reads_back_with_etherparse() {
        let r = ArpRepr::request(A, IP_A, IP_B);
        let f = frame(&r);
        assert_eq!(f.len(), 60);
        assert_eq!(r.frame_len(), 60);
        let (dst, src, ty, arp) = etherparse_reads(&f);
        assert_eq!((dst, src, ty), ([0xff; 6], A.0, EtherType::ARP));
        assert_eq!(arp.hw_addr_type, ArpHardwareId::ETHERNET);
        assert_eq!(arp.proto_addr_type, EtherType::IPV4);
        assert_eq!(arp.operation, ArpOperation::REQUEST);
        assert_eq!(arp.sender_hw_addr(), &A.0);
        assert_eq!(arp.sender_protocol_addr(), &IP_A.octets());
        assert_eq!(arp.target_hw_addr(), &[0; 6]);
        assert_eq!(arp.target_protocol_addr(), &IP_B.octets());
        // The rest is padding.
        assert!(f[14 + ArpRepr::PACKET_LEN..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_reply_reads_back_with_etherparse() {
        let r = ArpRepr::reply(B, IP_B, A, IP_A);
        let f = frame(&r);
        let (dst, src, ty, arp) = etherparse_reads(&f);
        assert_eq!((dst, src, ty), (A.0, B.0, EtherType::ARP));
        assert_eq!(arp.operation, ArpOperation::REPLY);
        assert_eq!(arp.sender_hw_addr(), &B.0);
        assert_eq!(arp.sender_protocol_addr(), &IP_B.octets());
        assert_eq!(arp.target_hw_addr(), &A.0);
        assert_eq!(arp.target_protocol_addr(), &IP_A.octets());
    }

    #[test]
    fn emit_writes_what_etherparse_writes() {
        for (r, op) in [
            (ArpRepr::request(A, IP_A, IP_B), ArpOperation::REQUEST),
            (ArpRepr::reply(B, IP_B, A, IP_A), ArpOperation::REPLY),
        ] {
            let theirs = etherparse::ArpPacket::new(
                ArpHardwareId::ETHERNET,
                EtherType::IPV4,
                op,
                &r.sha.0,
                &r.spa.octets(),
                &r.tha.0,
                &r.tpa.octets(),
            )
            .unwrap();
            let mut ours = vec![0xee];
            r.emit(&mut ours);
            assert_eq!(ours[0], 0xee, "emit appends");
            assert_eq!(&ours[1..], &theirs.to_bytes()[..]);
            assert_eq!(ours.len() - 1, r.buffer_len());
        }
    }

    #[test]
    fn emit_frame_appends_to_what_is_there() {
        let r = ArpRepr::reply(B, IP_B, A, IP_A);
        let mut out = vec![1, 2, 3];
        r.emit_frame(&mut out);
        assert_eq!(&out[..3], &[1, 2, 3]);
        assert_eq!(out.len(), 3 + r.frame_len());
        assert_eq!(&out[3..], &frame(&r)[..]);
        let eth = Ethernet2HeaderSlice::from_slice(&out[3..]).unwrap();
        assert_eq!(eth.ether_type(), EtherType::ARP);
    }

    #[test]
    fn round_trips_through_the_flow_key() {
        for r in [
            ArpRepr::request(A, IP_A, IP_B),
            ArpRepr::reply(B, IP_B, A, IP_A),
            ArpRepr {
                op: 9,
                ..ArpRepr::request(A, IP_A, IP_B)
            },
        ] {
            let key = FlowKey::extract(PortNo(1), &frame(&r));
            assert_eq!(key.eth_type, ETH_TYPE_ARP);
            let Network::Arp(arp) = key.network else {
                panic!("{r:?} read as {:?}", key.network);
            };
            assert_eq!(ArpRepr::from(arp), r);
        }
        assert_eq!(ArpRepr::request(A, IP_A, IP_B).op, ARP_OP_REQUEST);
        assert_eq!(ArpRepr::reply(A, IP_A, B, IP_B).op, ARP_OP_REPLY);
    }
}
