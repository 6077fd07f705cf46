//! Reading OXM TLVs (1.3.5 §7.2.3.2): one TLV checked against the table
//! of basic fields ([`OxmRef`]), and the zero-allocation [`OxmIter`] over
//! a match's TLVs.

use super::field::{OFPXMC_EXPERIMENTER, OFPXMC_OPENFLOW_BASIC, OxmField, OxmHeader};
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
mod tests {
    use super::*;

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
