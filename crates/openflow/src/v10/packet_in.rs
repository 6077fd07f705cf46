//! OFPT_PACKET_IN (`ofp_packet_in`, 1.0.0 §5.4.1): the view over received
//! bytes, the owned form and the encoder.
//!
//! The hottest message of the controller: every flow request starts with
//! one, so [`PacketInView::new_checked`] takes an inline fast path for a
//! well-formed message and leaves the full check, for the precise error,
//! out of line.

use crate::error::DecodeError;
use crate::header::{MsgType10, finish_message};
use crate::types::{BufferId, PortNo, Xid};
use crate::v10::ofmatch::port_to_wire;
use crate::wire::{Put, get_u16, set_u16};

/// Byte offsets of `ofp_packet_in`, header included.
mod field {
    use crate::wire::{Field, Rest};

    pub use crate::twin::packet_in_offsets::*;
    pub const IN_PORT: Field = 14..16;
    pub const REASON: usize = 16;
    // 17: one byte of padding.
    pub const DATA: Rest = 18..;
}

/// The fixed part, header included: where the frame starts.
const FIXED_LEN: usize = field::DATA.start;

crate::header::message_view! {
    /// A view of an OFPT_PACKET_IN in a buffer (1.0.0 §5.4.1).
    ///
    /// Once [`PacketInView::new_checked`] succeeded no accessor panics; on a
    /// buffer it would have refused (through [`PacketInView::new_unchecked`])
    /// they read missing fields as zero and never panic either.
    PacketInView
}

crate::twin::packet_in_fields! {
    version: V10,
    reason_spec: "1.0.0 §5.4.1",
    reasons: [],
    new_checked_doc: "A view of `buffer`, which must hold exactly one OFPT_PACKET_IN: \
        the header check ([`Header::check`](crate::header::Header::check)) with its length rule, which covers the \
        18-byte fixed part.",
    // Version 1, type PACKET_IN, length field == length, at least the
    // fixed part.
    fast: |b: &[u8]| matches!(*b, [1, 10, l0, l1, ..]
        if b.len() >= FIXED_LEN && usize::from(u16::from_be_bytes([l0, l1])) == b.len()),
    then: |_| Ok(()),
    msg_type: MsgType10::PacketIn,
    owned: [
        /// `in_port`.
        in_port: PortNo = |v| v.in_port(),
    ],
    emit: |p, xid, out| {
        encode_packet_in(out, xid, p.buffer_id, p.total_len, p.in_port, p.reason, &p.data)
    },
}

impl<T: AsRef<[u8]>> PacketInView<T> {
    /// `in_port`.
    #[inline]
    pub fn in_port(&self) -> PortNo {
        PortNo::from_of10(get_u16(self.buffer.as_ref(), field::IN_PORT))
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> PacketInView<&'a T> {
    /// `data`: the frame (or its first `miss_send_len` bytes).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.buffer.as_ref().get(field::DATA).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PacketInView<T> {
    /// Sets `in_port`.
    #[inline]
    pub fn set_in_port(&mut self, v: PortNo) {
        set_u16(self.buffer.as_mut(), field::IN_PORT, port_to_wire(v));
    }

    /// The frame, to rewrite in place.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut().get_mut(field::DATA).unwrap_or(&mut [])
    }
}

impl PacketIn {
    /// Bytes of the whole message.
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN + self.data.len()
    }
}

/// Appends an OFPT_PACKET_IN (1.0.0 §5.4.1).
#[inline]
pub fn encode_packet_in(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    total_len: u16,
    in_port: PortNo,
    reason: PacketInReason,
    data: &[u8],
) {
    let at = out.len();
    let mut b: [u8; FIXED_LEN] = packet_in_head(xid, buffer_id, total_len, reason);
    PacketInView::new_unchecked(&mut b[..]).set_in_port(in_port);
    out.put_slice(&b);
    out.put_slice(data);
    finish_message(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn packet_in_view_reads_fields() {
        let mut out = Vec::new();
        encode_packet_in(
            &mut out,
            Xid(7),
            BufferId(0x100),
            60,
            PortNo(2),
            PacketInReason::NoMatch,
            &[0xaa; 4],
        );
        assert_eq!(
            out,
            [
                1, 10, 0, 22, 0, 0, 0, 7, 0, 0, 1, 0, 0, 60, 0, 2, 0, 0, 0xaa, 0xaa, 0xaa, 0xaa
            ]
        );
        let v = PacketInView::new_checked(&out[..]).unwrap();
        assert_eq!(v.xid(), Xid(7));
        assert_eq!(v.buffer_id(), BufferId(0x100));
        assert_eq!(v.total_len(), 60);
        assert_eq!(v.in_port(), PortNo(2));
        assert_eq!(v.reason(), PacketInReason::NoMatch);
        assert_eq!(v.data(), &[0xaa; 4]);
        let p = PacketIn::parse(&v).unwrap();
        assert_eq!(p.buffer_len(), out.len());
    }

    #[test]
    fn setters_write_what_getters_read() {
        let mut out = Vec::new();
        encode_packet_in(
            &mut out,
            Xid(1),
            BufferId::NONE,
            4,
            PortNo(1),
            PacketInReason::NoMatch,
            b"abcd",
        );
        let mut v = PacketInView::new_checked(&mut out[..]).unwrap();
        v.set_in_port(PortNo::LOCAL);
        v.set_reason(PacketInReason::Action);
        v.data_mut()[0] = b'z';
        let v = PacketInView::new_checked(&out[..]).unwrap();
        assert_eq!(v.in_port(), PortNo::LOCAL);
        assert_eq!(v.reason(), PacketInReason::Action);
        assert_eq!(v.data(), b"zbcd");
    }

    #[test]
    fn unchecked_short_buffers_read_zeros() {
        let v = PacketInView::new_unchecked(&[1u8, 10][..]);
        assert_eq!((v.xid(), v.total_len(), v.data()), (Xid(0), 0, &[][..]));
        assert_eq!(
            PacketInView::new_checked(&[1u8, 10, 0, 8, 0, 0, 0, 0][..])
                .unwrap_err()
                .kind(),
            &ErrorKind::BadLength { claimed: 8 }
        );
    }
}
