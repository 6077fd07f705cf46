//! Reading OXM TLVs (1.3.5 §7.2.3.2): one TLV checked against the table
//! of basic fields ([`OxmRef`]), and the zero-allocation [`OxmIter`] over
//! a match's TLVs.

use super::field::{
    OFPXMC_EXPERIMENTER, OFPXMC_OPENFLOW_BASIC, OXM_BASIC_FIELDS, OxmField, OxmHeader,
};
use super::value::{Oxm, OxmValue};
use crate::error::{DecodeError, ErrorKind};
use crate::types::PortNo;
use crate::wire::Reader;

/// One OXM TLV borrowed from a received message, already checked against
/// [`OXM_BASIC_FIELDS`](super::OXM_BASIC_FIELDS) (or, for other classes, against its own length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OxmRef<'a> {
    header: OxmHeader,
    body: &'a [u8],
}

impl<'a> OxmRef<'a> {
    /// The TLV header.
    #[inline]
    pub fn header(&self) -> OxmHeader {
        self.header
    }

    /// The basic field, if the class is `OFPXMC_OPENFLOW_BASIC`.
    #[inline]
    pub fn basic_field(&self) -> Option<OxmField> {
        (self.header.class == OFPXMC_OPENFLOW_BASIC).then(|| self.header.field.into())
    }

    /// The body (value, then mask if any).
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The typed value. Allocates only for non-basic classes
    /// ([`Oxm::Other`]).
    pub fn to_oxm(&self) -> Oxm {
        let h = self.header;
        let basic = match h.class {
            OFPXMC_OPENFLOW_BASIC => Oxm::from_basic(h.field.into(), h.has_mask, self.body),
            _ => None,
        };
        basic.unwrap_or_else(|| Oxm::Other {
            class: h.class,
            field: h.field,
            has_mask: h.has_mask,
            body: self.body.to_vec(),
        })
    }

    /// The port, if this is an unmasked `IN_PORT` TLV.
    #[inline]
    pub fn in_port(&self) -> Option<PortNo> {
        (self.basic_field() == Some(OxmField::InPort)).then(|| PortNo::read(self.body))
    }
}

/// Reads and checks one TLV (1.3.5 §7.2.3.2): basic fields must be in
/// [`OXM_BASIC_FIELDS`](super::OXM_BASIC_FIELDS) with exactly its length (doubled with a mask, which
/// only maskable fields may have); experimenter TLVs must hold their id.
pub(super) fn parse_tlv<'a>(r: &mut Reader<'a>) -> Result<OxmRef<'a>, DecodeError> {
    let at = r.offset();
    let header = OxmHeader::from_u32(r.u32("oxm header")?);
    let bad_len = || {
        DecodeError::new(
            ErrorKind::BadOxmLength {
                field: header.field,
                length: header.length,
            },
            at,
            "oxm_length",
        )
    };
    if header.length as usize > r.remaining() {
        return Err(bad_len());
    }
    let body = r.bytes(header.length as usize, "oxm body")?;
    match header.class {
        OFPXMC_OPENFLOW_BASIC => {
            let info = OxmField::from(header.field).info().ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadOxmField {
                        class: header.class,
                        field: header.field,
                    },
                    at,
                    "oxm_field",
                )
            })?;
            let want = if header.has_mask {
                if !info.maskable {
                    return Err(bad_len());
                }
                info.len * 2
            } else {
                info.len
            };
            if header.length != want {
                return Err(bad_len());
            }
        }
        OFPXMC_EXPERIMENTER if header.length < 4 => return Err(bad_len()),
        _ => {}
    }
    Ok(OxmRef { header, body })
}

/// Whether every TLV of an OXM region passes the checks [`OxmIter`] makes
/// (1.3.5 §7.2.3.2, §7.2.3.5): the same rules, answered yes or no in one
/// tight pass without building a [`DecodeError`], so that a valid match
/// (the common case: a received PACKET_IN) costs a few instructions per
/// TLV. [`MatchRef::parse`](super::MatchRef::parse) falls back to
/// [`OxmIter`] only when this says no, to report the first error.
#[inline]
pub(super) fn oxms_valid(mut rest: &[u8]) -> bool {
    let mut seen = 0u64;
    while let [c0, c1, f, len, body @ ..] = rest {
        let len = *len;
        match u16::from_be_bytes([*c0, *c1]) {
            OFPXMC_OPENFLOW_BASIC => {
                let field = f >> 1;
                let Some(info) = OXM_BASIC_FIELDS.get(usize::from(field)) else {
                    return false;
                };
                let want = match f & 1 {
                    0 => info.len,
                    _ if info.maskable => info.len * 2,
                    _ => return false,
                };
                let bit = 1u64 << field;
                if len != want || seen & bit != 0 {
                    return false;
                }
                seen |= bit;
            }
            OFPXMC_EXPERIMENTER if len < 4 => return false,
            _ => {}
        }
        let Some(next) = body.get(usize::from(len)..) else {
            return false;
        };
        rest = next;
    }
    rest.is_empty()
}

/// A zero-allocation iterator over the TLVs of an OXM region (the bytes of
/// an `ofp_match` after its type and length, padding excluded).
///
/// Yields each TLV checked against [`OXM_BASIC_FIELDS`](super::OXM_BASIC_FIELDS), and stops after
/// the first error: [`ErrorKind::BadOxmField`] for an unknown basic field,
/// [`ErrorKind::BadOxmLength`] for a length that does not fit the field or
/// the region, [`ErrorKind::DuplicateOxmField`] for a basic field seen
/// twice (1.3.5 §7.2.3.5), [`ErrorKind::TooShort`] for a cut header.
#[derive(Debug, Clone)]
pub struct OxmIter<'a> {
    r: Reader<'a>,
    seen: u64,
    failed: bool,
}

impl<'a> OxmIter<'a> {
    /// An iterator over `region`, which starts at byte `base` of the
    /// message.
    #[inline]
    pub fn new(region: &'a [u8], base: usize) -> OxmIter<'a> {
        OxmIter {
            r: Reader::with_base(region, base),
            seen: 0,
            failed: false,
        }
    }

    fn step(&mut self) -> Result<OxmRef<'a>, DecodeError> {
        let at = self.r.offset();
        let tlv = parse_tlv(&mut self.r)?;
        if tlv.header.class == OFPXMC_OPENFLOW_BASIC {
            // parse_tlv checked that the field is below 40.
            let bit = 1u64 << (tlv.header.field & 63);
            if self.seen & bit != 0 {
                return Err(DecodeError::new(
                    ErrorKind::DuplicateOxmField(tlv.header.field),
                    at,
                    "oxm_field",
                ));
            }
            self.seen |= bit;
        }
        Ok(tlv)
    }
}

impl<'a> Iterator for OxmIter<'a> {
    type Item = Result<OxmRef<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let item = self.step();
        self.failed = item.is_err();
        Some(item)
    }
}

impl Oxm {
    /// Decodes one OXM TLV (no duplicate check: that needs the whole
    /// match, see [`OxmIter`]).
    pub fn parse(r: &mut Reader<'_>) -> Result<Oxm, DecodeError> {
        Ok(parse_tlv(r)?.to_oxm())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A TLV whose header is near the rules: a basic field (often one of
    /// the first three, so duplicates are common; sometimes past the table), the experimenter or another class,
    /// with or without a mask, and a length that is right or off by a
    /// little.
    pub(in crate::v13::oxm) fn tlv() -> impl Strategy<Value = Vec<u8>> {
        (
            prop_oneof![8 => Just(0x8000u16), 1 => Just(0xffff), 1 => any::<u16>()],
            prop_oneof![3 => 0u8..3, 1 => 0u8..42],
            any::<bool>(),
            prop_oneof![3 => Just(0i8), 1 => -2i8..3],
            any::<u8>(),
        )
            .prop_map(|(class, field, mask, off, fill)| {
                let info = OxmField::from(field).info().map_or(4, |i| i.len);
                let len = (if mask { info * 2 } else { info }).saturating_add_signed(off);
                let mut b = class.to_be_bytes().to_vec();
                b.push(field << 1 | u8::from(mask));
                b.push(len);
                b.extend(std::iter::repeat_n(fill, usize::from(len)));
                b
            })
    }

    fn iter_ok(region: &[u8]) -> bool {
        OxmIter::new(region, 0).all(|t| t.is_ok())
    }

    proptest! {
        /// The fast check agrees with the iterator's on TLV lists near the
        /// rules (duplicates included), cut anywhere.
        #[test]
        fn oxms_valid_agrees_with_the_iterator(
            tlvs in proptest::collection::vec(tlv(), 0..6),
            cut in any::<proptest::sample::Index>(),
        ) {
            let region = tlvs.concat();
            prop_assert_eq!(oxms_valid(&region), iter_ok(&region));
            let cut = region.get(..cut.index(region.len() + 1)).unwrap_or(&region);
            prop_assert_eq!(oxms_valid(cut), iter_ok(cut));
        }

        /// And on arbitrary bytes.
        #[test]
        fn oxms_valid_agrees_on_any_bytes(region in proptest::collection::vec(any::<u8>(), 0..40)) {
            prop_assert_eq!(oxms_valid(&region), iter_ok(&region));
        }
    }

    #[test]
    fn pbb_isid_is_24_bits() {
        let o = Oxm::PbbIsid {
            value: 0xabcdef,
            mask: Some(0xff00ff),
        };
        let mut out = Vec::new();
        o.emit(&mut out);
        assert_eq!(out, [0x80, 0, 75, 6, 0xab, 0xcd, 0xef, 0xff, 0, 0xff]);
        assert_eq!(o.wire_len(), out.len());
        assert_eq!(Oxm::parse(&mut Reader::new(&out)).unwrap(), o);
    }
}
