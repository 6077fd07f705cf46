//! `ofp_match` with `OFPMT_OXM` (1.3.5 §7.2.3.1): the checked borrowed
//! [`MatchRef`] the views use, the owned [`Match13`], and the writers of a
//! match ([`emit_match`], [`emit_match_with`], [`start_match`] /
//! [`finish_match`]).

use super::field::OFPMT_OXM;
use super::tlv::{OxmIter, oxms_valid};
use super::value::Oxm;
use crate::error::{DecodeError, ErrorKind};
use crate::types::PortNo;
use crate::wire::{Fixed, Put, Reader, pad8};

/// A checked `ofp_match` borrowed from a received message (1.3.5 §7.2.3.1):
/// every TLV has been validated once, so iterating again cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchRef<'a> {
    oxms: &'a [u8],
    base: usize,
}

impl<'a> MatchRef<'a> {
    /// Reads an `ofp_match` (type, length, OXMs, padding to 8) and checks
    /// every TLV, without allocating. A type other than `OFPMT_OXM` is
    /// [`ErrorKind::BadMatchType`]; a length below 4 or beyond the input is
    /// [`ErrorKind::BadMatchLength`].
    ///
    /// A valid match is read in one pass over its bytes (the fixed part at
    /// constant offsets, the TLVs by `oxms_valid`); only a match that
    /// fails it goes through [`Reader`] and [`OxmIter`] again to say why.
    #[inline]
    pub fn parse(r: &mut Reader<'a>) -> Result<MatchRef<'a>, DecodeError> {
        let rest = r.rest();
        if let [t0, t1, l0, l1, ..] = *rest
            && u16::from_be_bytes([t0, t1]) == OFPMT_OXM
            && let length = usize::from(u16::from_be_bytes([l0, l1]))
            && length >= 4
            && let Some(oxms) = rest.get(4..length)
            && length + pad8(length) <= rest.len()
            && oxms_valid(oxms)
        {
            let base = r.offset() + 4;
            r.skip(length + pad8(length), "ofp_match")?;
            return Ok(MatchRef { oxms, base });
        }
        Self::parse_invalid(r)
    }

    /// [`MatchRef::parse`] step by step, for a match its one pass refused:
    /// returns the first error.
    #[cold]
    #[inline(never)]
    fn parse_invalid(r: &mut Reader<'a>) -> Result<MatchRef<'a>, DecodeError> {
        let at = r.offset();
        let match_type = r.u16("ofp_match.type")?;
        if match_type != OFPMT_OXM {
            return Err(DecodeError::new(
                ErrorKind::BadMatchType(match_type),
                at,
                "ofp_match.type",
            ));
        }
        let length = r.u16("ofp_match.length")?;
        let body_len = (length as usize)
            .checked_sub(4)
            .filter(|&n| n <= r.remaining())
            .ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadMatchLength(length),
                    at + 2,
                    "ofp_match.length",
                )
            })?;
        let base = r.offset();
        let oxms = r.bytes(body_len, "ofp_match.oxm_fields")?;
        for tlv in OxmIter::new(oxms, base) {
            tlv?;
        }
        r.skip(pad8(length as usize), "ofp_match padding")?;
        Ok(MatchRef { oxms, base })
    }

    /// The match whose OXMs are `oxms`, at byte `base` of the message,
    /// without checking them: for views whose `new_checked` ran
    /// [`MatchRef::parse`] over the same bytes.
    #[inline]
    pub(crate) const fn new_unchecked(oxms: &'a [u8], base: usize) -> MatchRef<'a> {
        MatchRef { oxms, base }
    }

    /// The TLVs. Never yields an error once [`MatchRef::parse`] succeeded.
    #[inline]
    pub fn iter(&self) -> OxmIter<'a> {
        OxmIter::new(self.oxms, self.base)
    }

    /// The raw OXM bytes (without type, length and padding).
    #[inline]
    pub fn oxm_bytes(&self) -> &'a [u8] {
        self.oxms
    }

    /// The `IN_PORT` value, if the match has one. Switches write it first
    /// (Open vSwitch does), where it is read without a scan.
    #[inline]
    pub fn in_port(&self) -> Option<PortNo> {
        // OXM_OF_IN_PORT: class OPENFLOW_BASIC, field 0, no mask, 4 bytes.
        const IN_PORT: [u8; 4] = 0x8000_0004u32.to_be_bytes();
        match *self.oxms {
            [h0, h1, h2, h3, p0, p1, p2, p3, ..] if [h0, h1, h2, h3] == IN_PORT => {
                Some(PortNo(u32::from_be_bytes([p0, p1, p2, p3])))
            }
            _ => self.in_port_slow(),
        }
    }

    #[cold]
    fn in_port_slow(&self) -> Option<PortNo> {
        self.iter().find_map(|t| t.ok()?.in_port())
    }

    /// The owned form.
    pub fn to_owned(&self) -> Match13 {
        Match13 {
            fields: self
                .iter()
                .filter_map(Result::ok)
                .map(|t| t.to_oxm())
                .collect(),
        }
    }

    /// Bytes the match takes on the wire, padding included.
    #[inline]
    pub fn wire_len(&self) -> usize {
        let len = 4 + self.oxms.len();
        len + pad8(len)
    }
}

/// `ofp_match` with `OFPMT_OXM` (1.3.5 §7.2.3.1), owned: the TLVs in wire
/// order. An empty match matches every packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Match13 {
    /// The OXM TLVs, in wire order.
    pub fields: Vec<Oxm>,
}

impl Match13 {
    /// The empty match (all fields wildcarded).
    pub const fn all() -> Match13 {
        Match13 { fields: Vec::new() }
    }

    /// Reads an `ofp_match` and its padding; see [`MatchRef::parse`] for
    /// the errors.
    pub fn parse(r: &mut Reader<'_>) -> Result<Match13, DecodeError> {
        Ok(MatchRef::parse(r)?.to_owned())
    }

    /// Appends the match, padded to 8 bytes.
    pub fn emit(&self, out: &mut Vec<u8>) {
        emit_match(out, &self.fields);
    }

    /// Bytes the match takes on the wire, padding included.
    pub fn wire_len(&self) -> usize {
        let len = 4 + self.fields.iter().map(Oxm::wire_len).sum::<usize>();
        len + pad8(len)
    }

    /// The `IN_PORT` value, if the match has one.
    pub fn in_port(&self) -> Option<PortNo> {
        self.fields.iter().find_map(|o| match o {
            Oxm::InPort(p) => Some(*p),
            _ => None,
        })
    }
}

/// Starts an `ofp_match`: writes its type and a placeholder length, and
/// returns where it starts for [`finish_match`]. Emit the TLVs in between
/// with [`Oxm::emit`].
#[inline]
pub fn start_match(out: &mut Vec<u8>) -> usize {
    let at = out.len();
    out.put_u16(OFPMT_OXM);
    out.put_u16(0);
    at
}

/// Finishes the `ofp_match` started at `at`: fills in its length (type,
/// length and TLVs, without padding) and pads it to 8 bytes.
#[inline]
pub fn finish_match(out: &mut Vec<u8>, at: usize) {
    let len = out.len().saturating_sub(at);
    out.patch_u16(at + 2, len.min(u16::MAX as usize) as u16);
    out.put_zeros(pad8(len));
}

/// Room for a match built by [`emit_match_with`]: the largest exact match
/// of a frame, IPv6 neighbour discovery under a VLAN (16 TLVs), is 152
/// bytes with its header, a multiple of 8 (the exact module's
/// `the_largest_exact_match_fills_match_buf`), and the sparse matches of
/// `neutral` are smaller (at most 96).
///
/// No larger than that: a buffer of it is zeroed for every FLOW_MOD a
/// flow request writes, and at 256 bytes that zeroing was a `memset` call,
/// 35 instructions per 1.3 flow request (BENCHMARKS.md, eleventh session).
pub const MATCH_BUF: usize = 152;

/// Appends an `ofp_match` whose TLVs `write_oxms` writes, built on the
/// stack and appended with one copy (see [`crate::wire::Fixed`]). For
/// matches of bounded size only: bytes past [`MATCH_BUF`] are dropped.
#[inline]
pub fn emit_match_with(out: &mut Vec<u8>, write_oxms: impl FnOnce(&mut Fixed<MATCH_BUF>)) {
    let mut b = Fixed::<MATCH_BUF>::new();
    put_match_with(&mut b, write_oxms);
    out.put_slice(b.as_slice());
}

/// Writes an `ofp_match` whose TLVs `write_oxms` writes into `b`, after
/// what it holds: type, length, the TLVs, padding to 8 bytes. For a
/// message built whole on the stack (the 1.3 FLOW_MOD of
/// `neutral::encode_flow_add`); bytes past `N` are dropped.
#[inline]
pub fn put_match_with<const N: usize>(b: &mut Fixed<N>, write_oxms: impl FnOnce(&mut Fixed<N>)) {
    let at = b.as_slice().len();
    b.put_u16(OFPMT_OXM);
    b.put_u16(0);
    write_oxms(b);
    let len = b.as_slice().len() - at;
    b.patch_u16(at + 2, len as u16);
    b.put_zeros(pad8(len));
}

/// Appends a whole `ofp_match` holding `oxms`.
#[inline]
pub fn emit_match(out: &mut Vec<u8>, oxms: &[Oxm]) {
    let at = start_match(out);
    for o in oxms {
        o.emit(out);
    }
    finish_match(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v13::oxm::OFPXMC_EXPERIMENTER;
    use proptest::prelude::*;

    /// Both ways of reading a match: the result and where the reader ends.
    fn both(b: &[u8]) -> [(Result<MatchRef<'_>, DecodeError>, usize); 2] {
        let (mut fast, mut slow) = (Reader::with_base(b, 3), Reader::with_base(b, 3));
        [
            (MatchRef::parse(&mut fast), fast.offset()),
            (MatchRef::parse_invalid(&mut slow), slow.offset()),
        ]
    }

    proptest! {
        /// The one-pass read accepts exactly what the step-by-step one
        /// accepts, with the same match, and lets it report the errors:
        /// matches near the rules (type, length and padding right or a
        /// little off, TLVs from the iterator's tests), cut anywhere.
        #[test]
        fn one_pass_parse_agrees_with_step_by_step(
            tlvs in proptest::collection::vec(super::super::tlv::tests::tlv(), 0..5),
            typ in prop_oneof![4 => Just(OFPMT_OXM), 1 => 0u16..3],
            len_off in prop_oneof![4 => Just(0i32), 1 => -5i32..6],
            pad in prop_oneof![4 => Just(true), 1 => Just(false)],
            tail in proptest::collection::vec(any::<u8>(), 0..3),
            cut in any::<proptest::sample::Index>(),
        ) {
            let oxms = tlvs.concat();
            let len = (4 + oxms.len() as i32 + len_off).clamp(0, 0xffff) as u16;
            let mut b = typ.to_be_bytes().to_vec();
            b.extend(len.to_be_bytes());
            b.extend(&oxms);
            if pad {
                b.extend(std::iter::repeat_n(0, pad8(4 + oxms.len())));
            }
            b.extend(tail);
            let [fast, slow] = both(&b);
            prop_assert_eq!(fast, slow);
            let cut = &b[..cut.index(b.len() + 1)];
            let [fast, slow] = both(cut);
            prop_assert_eq!(fast, slow);
        }
    }

    #[test]
    fn in_port_match_bytes() {
        let mut out = Vec::new();
        emit_match(&mut out, &[Oxm::InPort(PortNo(1))]);
        assert_eq!(out, [0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0]);
        let m = Match13::parse(&mut Reader::new(&out)).unwrap();
        assert_eq!(m.fields, [Oxm::InPort(PortNo(1))]);
        assert_eq!(m.wire_len(), out.len());
        // The empty match is 4 bytes plus 4 of padding.
        let mut out = Vec::new();
        Match13::all().emit(&mut out);
        assert_eq!(out, [0, 1, 0, 4, 0, 0, 0, 0]);
    }

    fn err(bytes: &[u8]) -> ErrorKind {
        MatchRef::parse(&mut Reader::new(bytes))
            .unwrap_err()
            .kind()
            .clone()
    }

    #[test]
    fn bad_matches() {
        assert_eq!(err(&[0, 0, 0, 4, 0, 0, 0, 0]), ErrorKind::BadMatchType(0));
        assert_eq!(err(&[0, 1, 0, 3, 0, 0, 0, 0]), ErrorKind::BadMatchLength(3));
        assert_eq!(
            err(&[0, 1, 0, 20, 0, 0, 0, 0]),
            ErrorKind::BadMatchLength(20)
        );
        // IN_PORT with length 3.
        assert_eq!(
            err(&[0, 1, 0, 11, 0x80, 0, 0, 3, 0, 0, 1, 0]),
            ErrorKind::BadOxmLength {
                field: 0,
                length: 3
            }
        );
        // IN_PORT with a mask: not maskable.
        assert_eq!(
            err(&[0, 1, 0, 16, 0x80, 0, 1, 8, 0, 0, 0, 1, 0, 0, 0, 1]),
            ErrorKind::BadOxmLength {
                field: 0,
                length: 8
            }
        );
        // Field 40 does not exist.
        assert_eq!(
            err(&[0, 1, 0, 9, 0x80, 0, 80, 1, 0, 0, 0, 0]),
            ErrorKind::BadOxmField {
                class: 0x8000,
                field: 40
            }
        );
        // ETH_TYPE twice.
        assert_eq!(
            err(&[0, 1, 0, 16, 0x80, 0, 10, 2, 8, 0, 0x80, 0, 10, 2, 8, 0]),
            ErrorKind::DuplicateOxmField(5)
        );
        // A TLV running past the match.
        assert_eq!(
            err(&[0, 1, 0, 8, 0x80, 0, 10, 2, 8, 0, 0, 0]),
            ErrorKind::BadOxmLength {
                field: 5,
                length: 2
            }
        );
    }

    #[test]
    fn other_classes_round_trip() {
        let o = Oxm::Other {
            class: OFPXMC_EXPERIMENTER,
            field: 5,
            has_mask: false,
            body: vec![0, 0, 0x23, 0x20, 1, 2],
        };
        let mut out = Vec::new();
        emit_match(&mut out, &[o.clone(), o.clone()]);
        let m = Match13::parse(&mut Reader::new(&out)).unwrap();
        assert_eq!(m.fields, [o.clone(), o]);
        // An experimenter TLV too short for its id.
        assert_eq!(
            err(&[0, 1, 0, 10, 0xff, 0xff, 0, 2, 0, 0, 0, 0]),
            ErrorKind::BadOxmLength {
                field: 0,
                length: 2
            }
        );
    }
}
