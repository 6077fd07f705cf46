//! OFPT_PACKET_IN (`ofp_packet_in`, 1.3.5 §7.4.1): the view over received
//! bytes, the owned form and the encoder.
//!
//! The fixed fields sit at constant offsets; the match that follows them
//! has a length of its own (its header says it), and the frame starts 2
//! bytes after the match's padding. The view reads all of them from the
//! buffer, as the 1.0 view does.

use crate::error::DecodeError;
use crate::header::{MsgType13, finish_message};
use crate::types::{BufferId, Cookie, PortNo, Xid};
use crate::v13::oxm::{Match13, MatchRef, Oxm, OxmIter, emit_match};
use crate::wire::{Put, Reader, get_u8, get_u16, get_u64, pad8, set_u8, set_u64};

/// Byte offsets of `ofp_packet_in`, header included.
mod field {
    use crate::wire::Field;

    pub use crate::twin::packet_in_offsets::*;
    pub const REASON: usize = 14;
    pub const TABLE_ID: usize = 15;
    pub const COOKIE: Field = 16..24;
    /// `ofp_match`: type, then length (of type, length and OXMs, without
    /// the padding to 8), then the OXMs.
    pub const MATCH: usize = 24;
    pub const MATCH_LEN: Field = 26..28;
    pub const OXMS: usize = 28;
    /// After the padded match: 2 bytes of padding, then the frame.
    pub const PAD_AFTER_MATCH: usize = 2;
}

/// The head of an `ofp_match` holding only OXM_OF_IN_PORT: type OXM,
/// length 12 (padded to 16), the TLV header (class OPENFLOW_BASIC, field
/// IN_PORT, no mask, 4 bytes).
const IN_PORT_ONLY_MATCH: [u8; 8] = [0, 1, 0, 12, 0x80, 0, 0, 4];

crate::header::message_view! {
    /// A view of an OFPT_PACKET_IN in a buffer (1.3.5 §7.4.1).
    ///
    /// [`PacketInView::new_checked`] checks the header, the match with every
    /// OXM and its padding, and the 2 bytes before the frame, without
    /// allocating. After that no accessor panics, and the match's OXMs
    /// iterate without an error; on a buffer it would have refused, accessors
    /// read missing fields as zero and never panic either.
    PacketInView
}

crate::twin::packet_in_fields! {
    version: V13,
    reason_spec: "1.3.5 §7.4.1",
    reasons: [
        /// `OFPR_INVALID_TTL`: packet has invalid TTL.
        InvalidTtl = 2,
    ],
    new_checked_doc: "A view of `buffer`, which must hold exactly one OFPT_PACKET_IN \
        ([`Header::check`](crate::header::Header::check), then the match as [`MatchRef::parse`] checks it, then \
        the padding before the frame).",
    fast: table_miss_fast,
    then: |b| if in_port_only(b) { Ok(()) } else { check_match(b) },
    msg_type: MsgType13::PacketIn,
    owned: [
        /// `table_id` of the table that was looked up.
        table_id: u8 = |v| v.table_id(),
        /// `cookie` of the flow entry that was looked up.
        cookie: Cookie = |v| v.cookie(),
        /// `match`: the packet's metadata (at least IN_PORT); the view
        /// checked it.
        match_: Match13 = |v| v.match_().to_owned(),
    ],
    emit: |p, xid, out| {
        let (m, d) = (&p.match_.fields, &p.data);
        encode_packet_in(out, xid, p.buffer_id, p.total_len, p.reason, p.table_id, p.cookie, m, d)
    },
}

impl<T: AsRef<[u8]>> PacketInView<T> {
    /// `table_id`.
    #[inline]
    pub fn table_id(&self) -> u8 {
        get_u8(self.buffer.as_ref(), field::TABLE_ID)
    }

    /// `cookie`.
    #[inline]
    pub fn cookie(&self) -> Cookie {
        Cookie(get_u64(self.buffer.as_ref(), field::COOKIE))
    }

    /// The match's `length` field: type, length and OXMs, without padding.
    #[inline]
    pub fn match_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::MATCH_LEN)
    }

    /// The `IN_PORT` OXM's value, which switches always include
    /// (1.3.5 §7.4.1); `None` if this one did not.
    #[inline]
    pub fn in_port(&self) -> Option<PortNo> {
        match_in(self.buffer.as_ref(), self.match_len()).in_port()
    }

    /// Where the frame starts: after the padded match and 2 bytes.
    #[inline]
    fn data_start(&self) -> usize {
        let len = usize::from(self.match_len());
        field::MATCH + len + pad8(len) + field::PAD_AFTER_MATCH
    }
}

/// True if `b` is a whole 1.3 PACKET_IN (version 4, type PACKET_IN, its
/// length field its length) with the table-miss match of [`in_port_only`]:
/// what the full check accepts, checked with two compares (the fast path
/// of [`PacketInView::new_checked`]; the header table's check cost 15-19
/// instructions more per message, BENCHMARKS.md "Eleventh session").
#[inline]
fn table_miss_fast(b: &[u8]) -> bool {
    matches!(*b, [4, 10, l0, l1, ..] if usize::from(u16::from_be_bytes([l0, l1])) == b.len())
        && in_port_only(b)
}

/// True if the PACKET_IN in `b` has the match switches send for a table
/// miss (Open vSwitch, for a frame without tunnel metadata), IN_PORT
/// alone, and room for the padding before the frame: what
/// [`check_match`] accepts whatever the port, checked in one compare.
#[inline]
fn in_port_only(b: &[u8]) -> bool {
    b.get(field::MATCH..field::OXMS + 4) == Some(&IN_PORT_ONLY_MATCH[..])
        && b.len() >= field::MATCH + 16 + field::PAD_AFTER_MATCH
}

/// Checks the match of the PACKET_IN in `b` as [`MatchRef::parse`] does,
/// then the 2 bytes after it.
fn check_match(b: &[u8]) -> Result<(), DecodeError> {
    let mut r = Reader::new(b);
    r.skip(field::MATCH, "ofp_packet_in")?;
    MatchRef::parse(&mut r)?;
    r.skip(field::PAD_AFTER_MATCH, "ofp_packet_in.pad")?;
    Ok(())
}

/// The match of the PACKET_IN in `b`, whose `length` field is `len`.
#[inline]
fn match_in(b: &[u8], len: u16) -> MatchRef<'_> {
    let end = field::MATCH + usize::from(len);
    let oxms = b.get(field::OXMS..end).unwrap_or(&[]);
    MatchRef::new_unchecked(oxms, field::OXMS)
}

impl<'a, T: AsRef<[u8]> + ?Sized> PacketInView<&'a T> {
    /// The checked match.
    #[inline]
    pub fn match_(&self) -> MatchRef<'a> {
        match_in(self.buffer.as_ref(), self.match_len())
    }

    /// The match's OXMs (already checked: the iterator yields no errors).
    #[inline]
    pub fn match_fields(&self) -> OxmIter<'a> {
        self.match_().iter()
    }

    /// The frame (or its first bytes when buffered).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        let start = self.data_start();
        self.buffer.as_ref().get(start..).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PacketInView<T> {
    /// Sets `table_id`.
    #[inline]
    pub fn set_table_id(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::TABLE_ID, v);
    }

    /// Sets `cookie`.
    #[inline]
    pub fn set_cookie(&mut self, v: Cookie) {
        set_u64(self.buffer.as_mut(), field::COOKIE, v.0);
    }

    /// The frame, to rewrite in place.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let start = self.data_start();
        self.buffer.as_mut().get_mut(start..).unwrap_or(&mut [])
    }
}

impl PacketIn {
    /// Bytes of the whole message.
    pub fn buffer_len(&self) -> usize {
        field::MATCH + self.match_.wire_len() + field::PAD_AFTER_MATCH + self.data.len()
    }
}

/// Appends an OFPT_PACKET_IN (1.3.5 §7.4.1) whose match holds
/// `match_oxms`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn encode_packet_in(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    total_len: u16,
    reason: PacketInReason,
    table_id: u8,
    cookie: Cookie,
    match_oxms: &[Oxm],
    data: &[u8],
) {
    let at = out.len();
    let mut b: [u8; field::MATCH] = packet_in_head(xid, buffer_id, total_len, reason);
    let mut v = PacketInView::new_unchecked(&mut b[..]);
    v.set_table_id(table_id);
    v.set_cookie(cookie);
    out.put_slice(&b);
    emit_match(out, match_oxms);
    out.put_zeros(field::PAD_AFTER_MATCH);
    out.put_slice(data);
    finish_message(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut out = Vec::new();
        let oxms = [Oxm::EthType(0x0800), Oxm::InPort(PortNo(9))];
        encode_packet_in(
            &mut out,
            Xid(3),
            BufferId(5),
            64,
            PacketInReason::Action,
            2,
            Cookie(7),
            &oxms,
            b"frame",
        );
        out
    }

    #[test]
    fn fields_are_read_from_the_buffer() {
        let out = sample();
        let v = PacketInView::new_checked(&out[..]).unwrap();
        assert_eq!(
            (v.xid(), v.buffer_id(), v.total_len()),
            (Xid(3), BufferId(5), 64)
        );
        assert_eq!((v.reason(), v.table_id()), (PacketInReason::Action, 2));
        assert_eq!(v.cookie(), Cookie(7));
        assert_eq!(v.match_len(), 4 + 6 + 8);
        // IN_PORT is not first here: found by the scan.
        assert_eq!(v.in_port(), Some(PortNo(9)));
        assert_eq!(v.data(), b"frame");
        assert_eq!(PacketIn::parse(&v).unwrap().buffer_len(), out.len());
    }

    #[test]
    fn setters_write_what_getters_read() {
        let mut out = sample();
        let mut v = PacketInView::new_checked(&mut out[..]).unwrap();
        v.set_table_id(9);
        v.set_cookie(Cookie(1));
        v.data_mut()[0] = b'F';
        let v = PacketInView::new_checked(&out[..]).unwrap();
        assert_eq!(
            (v.table_id(), v.cookie(), v.data()),
            (9, Cookie(1), &b"Frame"[..])
        );
    }

    fn in_port_only_sample(port: u32, frame: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let oxms = [Oxm::InPort(PortNo(port))];
        encode_packet_in(
            &mut out,
            Xid(3),
            BufferId::NONE,
            64,
            PacketInReason::NoMatch,
            0,
            Cookie(0),
            &oxms,
            frame,
        );
        out
    }

    #[test]
    fn the_in_port_only_check_accepts_what_the_match_check_accepts() {
        let out = in_port_only_sample(0xfffffffe, b"frame");
        assert!(in_port_only(&out));
        let v = PacketInView::new_checked(&out[..]).unwrap();
        assert_eq!(
            (v.in_port(), v.data()),
            (Some(PortNo(0xfffffffe)), &b"frame"[..])
        );
        // Every byte of the match and the pad after it changed, and every
        // truncation: the one-compare check never accepts what the general
        // check refuses.
        for at in field::MATCH..field::MATCH + 18 {
            for v in [0u8, 1, 4, 12, 16, 0x7f, 0x80, 0xff] {
                let mut b = out.clone();
                b[at] = v;
                if in_port_only(&b) {
                    assert!(check_match(&b).is_ok(), "byte {at} = {v}");
                }
            }
        }
        for len in 0..out.len() {
            if in_port_only(&out[..len]) {
                assert!(check_match(&out[..len]).is_ok(), "cut at {len}");
            }
        }
        // Without a frame, the pad after the match is the end.
        let empty = in_port_only_sample(1, b"");
        assert_eq!(empty.len(), field::MATCH + 16 + field::PAD_AFTER_MATCH);
        assert!(in_port_only(&empty) && check_match(&empty).is_ok());
        assert!(!in_port_only(&empty[..empty.len() - 1]));
        assert!(check_match(&empty[..empty.len() - 1]).is_err());
    }

    /// True unless the fast check accepts `b` and the full check refuses it.
    fn fast_implies_full(b: &[u8]) -> bool {
        !table_miss_fast(b) || PacketInView::<&[u8]>::check_slow(b).is_ok()
    }

    /// `b` cut to `len` bytes, with a length field that says so.
    fn cut_to(b: &[u8], len: usize) -> Vec<u8> {
        let mut b = b[..len.min(b.len())].to_vec();
        let field = (b.len() as u16).to_be_bytes();
        if let Some(l) = b.get_mut(2..4) {
            l.copy_from_slice(&field);
        }
        b
    }

    #[test]
    fn the_fast_check_accepts_only_what_the_full_check_accepts() {
        let out = in_port_only_sample(7, b"frame");
        assert!(table_miss_fast(&out));
        for at in 0..field::MATCH + 18 {
            for v in [0u8, 1, 3, 4, 5, 10, 12, 16, 0x7f, 0x80, 0xff] {
                let mut b = out.clone();
                b[at] = v;
                assert!(fast_implies_full(&b), "byte {at} = {v}");
            }
        }
        for len in 0..=out.len() {
            let cut = out.len() - len;
            assert!(fast_implies_full(&cut_to(&out, len)), "{cut} bytes cut");
            assert!(!table_miss_fast(&out[..len]) || cut == 0);
        }
        // Another version or type with the same bytes goes the long way
        // and is refused.
        for (at, v) in [(0, 1u8), (1, 13)] {
            let mut b = out.clone();
            b[at] = v;
            assert!(!table_miss_fast(&b) && PacketInView::new_checked(&b[..]).is_err());
        }
    }

    proptest::proptest! {
        /// Any of the first 44 bytes set to any value, any frame length,
        /// any truncation: the fast check implies the full one.
        #[test]
        fn the_fast_check_implies_the_full_check(
            port in proptest::prelude::any::<u32>(),
            frame_len in 0usize..40,
            at in 0usize..44,
            value in proptest::prelude::any::<u8>(),
            cut in 0usize..64,
        ) {
            let mut b = in_port_only_sample(port, &vec![0xab; frame_len]);
            if let Some(x) = b.get_mut(at) {
                *x = value;
            }
            let b = cut_to(&b, b.len().saturating_sub(cut));
            proptest::prop_assert!(fast_implies_full(&b));
        }

        /// One byte of the match or the pad set to any value, any frame
        /// length, any truncation: a changed port or pad byte keeps the
        /// one-compare check firing, so the implication is exercised.
        #[test]
        fn in_port_only_implies_a_valid_match(
            port in proptest::prelude::any::<u32>(),
            frame_len in 0usize..40,
            at in 0usize..18,
            value in proptest::prelude::any::<u8>(),
            cut in 0usize..64,
        ) {
            let mut b = in_port_only_sample(port, &vec![0xab; frame_len]);
            b[field::MATCH + at] = value;
            b.truncate(b.len().saturating_sub(cut));
            if in_port_only(&b) {
                proptest::prop_assert!(check_match(&b).is_ok());
            }
        }
    }

    #[test]
    fn unchecked_short_buffers_read_zeros() {
        let v = PacketInView::new_unchecked(&[4u8, 10, 0][..]);
        assert_eq!((v.match_len(), v.in_port(), v.data()), (0, None, &[][..]));
        // A match running past the message.
        let mut out = sample();
        out[27] = 200;
        assert!(PacketInView::new_checked(&out[..]).is_err());
    }
}
