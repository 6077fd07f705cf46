//! [`PlainIpv4`]: the frame a flow request is usually about, whose exact
//! match lies at fixed offsets, so a FLOW_MOD's match can be written from
//! the frame's bytes without building a [`FlowKey`] first.
//!
//! Most packet-ins of a busy network carry an untagged Ethernet II frame
//! with an IPv4 header without options, not a fragment, and a TCP or UDP
//! header whose ports are readable, or a protocol whose header no match
//! reads (cbench's frames are IP protocol 255). For those
//! the match's fields are bytes at known offsets; building the 96-byte
//! [`FlowKey`], copying it and converting it cost more than the flow
//! request's whole encoding (BENCHMARKS.md, "OpenFlow 1.3 against 1.0 and the codec's costs"). Every
//! other frame is left to [`FlowKey::extract`]: this module recognises
//! only frames on which both give the same match, and the tests check
//! that over every frame shape [`FlowKey`] knows.

#[cfg(doc)]
use super::FlowKey;
use super::consts::{ETH_TYPE_IPV4, IP_PROTO_ICMP, IP_PROTO_SCTP, IP_PROTO_TCP, IP_PROTO_UDP};

/// Ethernet header, IPv4 header without options, and the 4 bytes of
/// transport ports: the bytes every field of the match comes from.
const FIXED_LEN: usize = 14 + 20 + 4;

/// Bytes 12-14 of a [`PlainIpv4`] frame, EtherType IPv4 then version 4
/// with a header of 5 words, as the low bytes of a little-endian word.
const IPV4_NO_OPTIONS: u32 = {
    let [t0, t1] = ETH_TYPE_IPV4.to_be_bytes();
    u32::from_le_bytes([t0, t1, 0x45, 0])
};

/// The transport of a [`PlainIpv4`] frame, as its exact match has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainTransport {
    /// TCP: the ports are matched.
    Tcp,
    /// UDP: the ports are matched.
    Udp,
    /// A protocol whose header neither version's match reads (not TCP,
    /// UDP, SCTP or ICMP): no transport fields.
    Unmatched,
}

/// An untagged Ethernet II / IPv4 (no options, not a fragment) frame
/// carrying TCP or UDP with readable ports, or a protocol no match reads,
/// checked once by [`PlainIpv4::new`]; its fields are read at fixed
/// offsets.
#[derive(Debug, Clone, Copy)]
pub struct PlainIpv4<'a> {
    h: &'a [u8; FIXED_LEN],
    transport: PlainTransport,
}

impl<'a> PlainIpv4<'a> {
    /// `frame` if it is such a frame, read as [`FlowKey::extract`] reads
    /// it: a TCP header needs 20 bytes within the IPv4 total length (or
    /// the bytes present, if fewer) and a data offset of at least 5, a UDP
    /// header 8 bytes.
    #[inline(always)]
    pub fn new(frame: &'a [u8]) -> Option<PlainIpv4<'a>> {
        let h: &[u8; FIXED_LEN] = frame.get(..FIXED_LEN)?.try_into().ok()?;
        // Bytes 12-14 as one word (the ToS byte masked off), and bytes
        // 20-21 with the flags' top bits masked off: no more-fragments
        // flag and no fragment offset. Fewer compares than byte by byte
        // (callgrind, `examples/flow_request_loop.rs`).
        let head = u32::from_le_bytes([h[12], h[13], h[14], h[15]]) & 0x00ff_ffff;
        let fragment = u16::from_le_bytes([h[20], h[21]]) & 0xff3f;
        if head != IPV4_NO_OPTIONS || fragment != 0 {
            return None;
        }
        // The IPv4 packet's bytes: as many as its total length says, or as
        // the frame holds (the transport header must end within both).
        let ip_len = usize::from(u16::from_be_bytes([h[16], h[17]])).min(frame.len() - 14);
        let transport = match h[23] {
            IP_PROTO_TCP
                if ip_len >= 20 + 20 && frame.get(14 + 20 + 12).is_some_and(|b| b >> 4 >= 5) =>
            {
                PlainTransport::Tcp
            }
            IP_PROTO_UDP if ip_len >= 20 + 8 => PlainTransport::Udp,
            // Short TCP / UDP headers, SCTP and ICMP: left to the key.
            IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_SCTP | IP_PROTO_ICMP => return None,
            _ => PlainTransport::Unmatched,
        };
        Some(PlainIpv4 { h, transport })
    }

    /// Ethernet destination.
    #[inline]
    pub fn eth_dst(&self) -> [u8; 6] {
        [
            self.h[0], self.h[1], self.h[2], self.h[3], self.h[4], self.h[5],
        ]
    }

    /// Ethernet source.
    #[inline]
    pub fn eth_src(&self) -> [u8; 6] {
        [
            self.h[6], self.h[7], self.h[8], self.h[9], self.h[10], self.h[11],
        ]
    }

    /// The IPv4 ToS byte (DSCP in its upper 6 bits, ECN in the lower 2).
    #[inline]
    pub fn tos(&self) -> u8 {
        self.h[15]
    }

    /// The IPv4 protocol.
    #[inline]
    pub fn proto(&self) -> u8 {
        self.h[23]
    }

    /// The transport, as the match has it.
    #[inline]
    pub fn transport(&self) -> PlainTransport {
        self.transport
    }

    /// IPv4 source.
    #[inline]
    pub fn ipv4_src(&self) -> [u8; 4] {
        [self.h[26], self.h[27], self.h[28], self.h[29]]
    }

    /// IPv4 destination.
    #[inline]
    pub fn ipv4_dst(&self) -> [u8; 4] {
        [self.h[30], self.h[31], self.h[32], self.h[33]]
    }

    /// Transport source port (TCP and UDP).
    #[inline]
    pub fn tp_src(&self) -> u16 {
        u16::from_be_bytes([self.h[34], self.h[35]])
    }

    /// Transport destination port (TCP and UDP).
    #[inline]
    pub fn tp_dst(&self) -> u16 {
        u16::from_be_bytes([self.h[36], self.h[37]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowKey;
    use crate::packet::tests::*;
    use crate::types::PortNo;
    use crate::v10::Match10;
    use crate::v13::oxm::{MATCH_BUF, put_exact_match, put_exact_match_frame};
    use crate::wire::Fixed;

    /// Both versions' exact match of `frame`, written from the frame,
    /// equals the one written from its key.
    fn assert_same_match(frame: &[u8]) {
        let port = PortNo(3);
        let key = FlowKey::extract(port, frame);
        assert_eq!(
            Match10::exact_frame(port, frame),
            Match10::exact(&key),
            "1.0 match of {frame:02x?}"
        );
        let (mut from_frame, mut from_key) = (Fixed::<MATCH_BUF>::new(), Fixed::<MATCH_BUF>::new());
        put_exact_match_frame(&mut from_frame, port, frame);
        put_exact_match(&mut from_key, &key);
        assert_eq!(
            from_frame.as_slice(),
            from_key.as_slice(),
            "1.3 match of {frame:02x?}"
        );
    }

    #[test]
    fn tcp_udp_and_unmatched_protocols_over_plain_ipv4_are_plain_and_others_are_not() {
        let transport = |f: &[u8]| PlainIpv4::new(f).map(|p| p.transport());
        assert_eq!(transport(&tcp_frame()), Some(PlainTransport::Tcp));
        assert_eq!(transport(&udp_frame()), Some(PlainTransport::Udp));
        // cbench's frame: IPv4 protocol 255, no transport header.
        let mut cbench = tcp_frame();
        cbench[23] = 255;
        assert_eq!(transport(&cbench), Some(PlainTransport::Unmatched));
        for other in [
            arp_frame(),
            icmp_frame(),
            vlan_udp_frame(),
            ipv6_tcp_frame(),
            ipv6_ns_frame(),
        ] {
            assert!(PlainIpv4::new(&other).is_none(), "{other:02x?}");
        }
    }

    #[test]
    fn every_frame_shape_and_truncation_gets_the_match_of_its_key() {
        for frame in [
            tcp_frame(),
            udp_frame(),
            arp_frame(),
            icmp_frame(),
            vlan_udp_frame(),
            ipv6_tcp_frame(),
            ipv6_ns_frame(),
        ] {
            for len in 0..=frame.len() {
                assert_same_match(&frame[..len]);
            }
        }
    }

    #[test]
    fn header_fields_that_decide_plainness_agree_with_the_key() {
        // Version/IHL, fragment flags and offset, total length, protocol
        // and TCP data offset: each value on either side of what makes a
        // frame plain.
        for base in [tcp_frame(), udp_frame()] {
            for ver_ihl in [0x45, 0x46, 0x44, 0x55] {
                for (flags, offset) in [(0x00, 0), (0x40, 0), (0x20, 0), (0x00, 1), (0x01, 0)] {
                    for total_len in [0u16, 19, 20, 27, 28, 39, 40, 41, 0xffff] {
                        for proto in [6u8, 17, 1, 132, 58, 255] {
                            for data_offset in [0x00u8, 0x40, 0x50, 0xf0] {
                                let mut f = base.clone();
                                f[14] = ver_ihl;
                                // DSCP 46, ECN 1: 1.0 keeps the DSCP bits.
                                f[15] = 0xb9;
                                f[20] = flags;
                                f[21] = offset;
                                f[16..18].copy_from_slice(&total_len.to_be_bytes());
                                f[23] = proto;
                                if let Some(b) = f.get_mut(46) {
                                    *b = data_offset;
                                }
                                assert_same_match(&f);
                            }
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_ipv4_looking_bytes_get_the_match_of_their_key(
            mut bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..100),
            ihl in proptest::sample::select(vec![0x45u8, 0x46]),
            proto in proptest::sample::select(vec![6u8, 17, 1, 255]),
        ) {
            // Steer toward plain frames: IPv4 ethertype, IHL 5, not a
            // fragment, TCP or UDP (the test above varies the fragment
            // fields).
            for (i, v) in [(12, 0x08), (13, 0x00), (14, ihl), (20, 0), (21, 0), (23, proto)] {
                if let Some(b) = bytes.get_mut(i) {
                    *b = v;
                }
            }
            assert_same_match(&bytes);
        }
    }
}
