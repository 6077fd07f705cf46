//! OFPT_HELLO bodies and version negotiation (1.3.5 §6.3.1, §7.5.1;
//! 1.0.0 §5.5.1).
//!
//! A HELLO's header carries the sender's highest version. Since 1.3.1 the
//! body may carry an `OFPHET_VERSIONBITMAP` element listing every version
//! the sender speaks. [`negotiate`] applies the spec's rule: with bitmaps on
//! both sides, the highest common version; otherwise the smaller of the two
//! header versions, if baton speaks it.

use crate::error::{DecodeError, ErrorKind};
use crate::header::{finish_message, start_message};
use crate::types::Xid;
use crate::version::Version;
use crate::wire::{Put, Reader, pad8};

/// `OFPHET_VERSIONBITMAP`.
pub const HELLO_ELEM_VERSIONBITMAP: u16 = 1;

/// One element of a HELLO body (`ofp_hello_elem_header`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelloElement {
    /// `ofp_hello_elem_versionbitmap`: bit `v` of word `v / 32` is set when
    /// the sender speaks wire version `v`.
    VersionBitmap(Vec<u32>),
    /// An element type this codec does not know, kept as received (body
    /// without padding).
    Unknown {
        /// Element type.
        elem_type: u16,
        /// Element body.
        data: Vec<u8>,
    },
}

/// The body of a HELLO.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// Elements in wire order.
    pub elements: Vec<HelloElement>,
}

impl Hello {
    /// The HELLO baton sends: a bitmap of the versions it speaks.
    pub fn baton() -> Hello {
        Hello {
            elements: vec![HelloElement::VersionBitmap(vec![bitmap_of(&[
                Version::V10,
                Version::V13,
            ])])],
        }
    }

    /// Decodes a HELLO body (the bytes after the header). `base` is the
    /// body's offset in the message, for error positions.
    pub fn decode_body(body: &[u8], base: usize) -> Result<Hello, DecodeError> {
        let mut r = Reader::with_base(body, base);
        let mut elements = Vec::new();
        while !r.is_empty() {
            let at = r.offset();
            let elem_type = r.u16("ofp_hello_elem_header.type")?;
            let len = r.u16("ofp_hello_elem_header.length")? as usize;
            if len < 4 {
                return Err(DecodeError::new(
                    ErrorKind::BadHelloElement,
                    at,
                    "ofp_hello_elem_header.length",
                ));
            }
            let mut body = r.sub(len - 4, "hello element body")?;
            // Padding to 8 bytes follows each element; the last one may be
            // unpadded in the wild, so take what is there.
            let pad = pad8(len).min(r.remaining());
            r.skip(pad, "hello element padding")?;
            if elem_type == HELLO_ELEM_VERSIONBITMAP {
                if body.remaining() % 4 != 0 {
                    return Err(DecodeError::new(
                        ErrorKind::BadHelloElement,
                        at,
                        "ofp_hello_elem_versionbitmap",
                    ));
                }
                let mut words = Vec::with_capacity(body.remaining() / 4);
                while !body.is_empty() {
                    words.push(body.u32("version bitmap word")?);
                }
                elements.push(HelloElement::VersionBitmap(words));
            } else {
                elements.push(HelloElement::Unknown {
                    elem_type,
                    data: body.take_rest().to_vec(),
                });
            }
        }
        Ok(Hello { elements })
    }

    /// Appends the body (elements, each padded to 8 bytes).
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        for e in &self.elements {
            let (t, body_len) = match e {
                HelloElement::VersionBitmap(w) => (HELLO_ELEM_VERSIONBITMAP, w.len() * 4),
                HelloElement::Unknown { elem_type, data } => (*elem_type, data.len()),
            };
            let len = 4 + body_len;
            out.put_u16(t);
            out.put_u16(len as u16);
            match e {
                HelloElement::VersionBitmap(w) => w.iter().for_each(|&x| out.put_u32(x)),
                HelloElement::Unknown { data, .. } => out.put_slice(data),
            }
            out.put_zeros(pad8(len));
        }
    }

    /// Appends a whole HELLO message with header version `version`.
    pub fn encode(&self, version: Version, xid: Xid, out: &mut Vec<u8>) {
        let at = start_message(out, version, 0, xid);
        self.encode_body(out);
        finish_message(out, at);
    }

    /// The versions the bitmap element lists, if there is one.
    pub fn bitmap(&self) -> Option<&[u32]> {
        self.elements.iter().find_map(|e| match e {
            HelloElement::VersionBitmap(w) => Some(w.as_slice()),
            HelloElement::Unknown { .. } => None,
        })
    }
}

/// A bitmap word list with the given versions set.
pub fn bitmap_of(versions: &[Version]) -> u32 {
    versions.iter().fold(0, |acc, v| acc | (1 << v.wire()))
}

fn bitmap_has(bitmap: &[u32], wire: u8) -> bool {
    let word = (wire / 32) as usize;
    bitmap
        .get(word)
        .is_some_and(|w| w & (1 << (wire % 32)) != 0)
}

/// Why negotiation failed: the peer speaks no version baton speaks. The
/// controller should send OFPET_HELLO_FAILED / OFPHFC_INCOMPATIBLE and close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incompatible {
    /// The peer's header version.
    pub peer_version: u8,
}

impl std::fmt::Display for Incompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "peer speaks no common OpenFlow version (its highest is 0x{:02x})",
            self.peer_version
        )
    }
}

impl std::error::Error for Incompatible {}

/// Picks the version for a connection from the HELLOs (1.3.5 §6.3.1).
///
/// `ours` are the versions we offer (our HELLO's bitmap); `peer_version`
/// and `peer` are the peer's HELLO header version and body.
pub fn negotiate(
    ours: &[Version],
    peer_version: u8,
    peer: &Hello,
) -> Result<Version, Incompatible> {
    let fail = Incompatible { peer_version };
    if let Some(bitmap) = peer.bitmap() {
        // Both sides sent bitmaps: the highest version set in both.
        return ours
            .iter()
            .copied()
            .filter(|v| bitmap_has(bitmap, v.wire()))
            .max()
            .ok_or(fail);
    }
    let our_highest = ours.iter().copied().max().ok_or(fail)?;
    let agreed = peer_version.min(our_highest.wire());
    Version::from_wire(agreed)
        .filter(|v| ours.contains(v))
        .ok_or(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: &[Version] = &[Version::V10, Version::V13];

    #[test]
    fn baton_hello_bytes() {
        let mut out = Vec::new();
        Hello::baton().encode(Version::V13, Xid(1), &mut out);
        assert_eq!(out, [4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12]);
        let back = Hello::decode_body(&out[8..], 8).unwrap();
        assert_eq!(back, Hello::baton());
    }

    #[test]
    fn negotiation_follows_the_spec() {
        let none = Hello::default();
        // cbench: a 1.0 HELLO without bitmap.
        assert_eq!(negotiate(BOTH, 1, &none), Ok(Version::V10));
        // A 1.5 switch without bitmap: min(5, 4) = 4.
        assert_eq!(negotiate(BOTH, 6, &none), Ok(Version::V13));
        // A 1.2 switch without bitmap: 3 is not ours.
        assert!(negotiate(BOTH, 3, &none).is_err());
        // OVS offering 1.0 and 1.3 with header version 4.
        let ovs = Hello {
            elements: vec![HelloElement::VersionBitmap(vec![0x12])],
        };
        assert_eq!(negotiate(BOTH, 4, &ovs), Ok(Version::V13));
        assert_eq!(negotiate(&[Version::V10], 4, &ovs), Ok(Version::V10));
        let only14 = Hello {
            elements: vec![HelloElement::VersionBitmap(vec![0x20])],
        };
        assert!(negotiate(BOTH, 5, &only14).is_err());
    }

    #[test]
    fn malformed_elements_are_errors() {
        assert!(Hello::decode_body(&[0, 1, 0, 2], 8).is_err());
        assert!(Hello::decode_body(&[0, 1, 0, 7, 0, 0, 0], 8).is_err());
        assert!(Hello::decode_body(&[0, 1, 0, 12, 0, 0], 8).is_err());
    }
}
