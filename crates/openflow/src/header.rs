//! The common `ofp_header`, stream framing, and the declarative table of raw
//! message types per version.
//!
//! The tables ([`MsgType10`], [`MsgType13`]) follow Open vSwitch's
//! `ofp-msgs.h`: one line per raw type giving its wire number, its meaning
//! ([`MsgKind`], OVS's `enum ofptype`) and the length rule of its fixed
//! part. [`Header::check`] is the one header check: every decoder and view
//! of both versions calls it, and it rejects bad versions, types and
//! lengths from these tables before a body is looked at.

mod table;

pub use table::{Direction, LengthRule, MsgKind, MsgType10, MsgType13, length_rule};

use crate::error::{DecodeError, ErrorKind};
use crate::types::Xid;
use crate::version::Version;
use crate::wire::{Put, Reader, get_u16};

/// Size of `ofp_header` (both versions, 1.0.0 §5.1.1, 1.3.5 §7.1.1).
pub const HEADER_LEN: usize = 8;

/// The largest message the 16-bit length field can describe.
pub const MAX_MESSAGE_LEN: usize = u16::MAX as usize;

/// Byte offsets of the `ofp_header` fields (1.0.0 §5.1.1, 1.3.5 §7.1.1),
/// which every view reads.
pub(crate) mod field {
    use crate::wire::Field;

    pub const TYPE: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const XID: Field = 4..8;
}

/// Declares a view of one kind of message over a buffer `T: AsRef<[u8]>`
/// (smoltcp's `wire` pattern) with the parts every view shares: the
/// struct, `new_unchecked`, `into_inner` and the header's `xid`. Each view
/// module adds `new_checked` and the getters and setters of its own
/// fields. `$name<V>` declares a view generic over the wire version `V`
/// (for the messages laid out the same in both versions).
macro_rules! message_view {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            $crate::header::message_view!(@common $name);
        }
    };
    ($(#[$meta:meta])* $name:ident<V>) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>, const V: u8> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>, const V: u8> $name<T, V> {
            $crate::header::message_view!(@common $name);
        }
    };
    (@common $name:ident) => {
        /// A view of `buffer` without any check: accessors still never
        /// panic, and read the fields a short buffer lacks as zero.
        #[inline]
        pub const fn new_unchecked(buffer: T) -> Self {
            $name { buffer }
        }

        /// The buffer.
        #[inline]
        pub fn into_inner(self) -> T {
            self.buffer
        }

        /// `xid`.
        #[inline]
        pub fn xid(&self) -> $crate::types::Xid {
            $crate::types::Xid($crate::wire::get_u32(
                self.buffer.as_ref(),
                $crate::header::field::XID,
            ))
        }
    };
}
pub(crate) use message_view;

/// `ofp_header`: version, type, length, xid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `version`.
    pub version: u8,
    /// `type`, to be read with the table of `version`.
    pub msg_type: u8,
    /// `length`, header included.
    pub length: u16,
    /// `xid`.
    pub xid: Xid,
}

impl Header {
    /// Parses the first 8 bytes of `buf`. Checks only that `length` is at
    /// least [`HEADER_LEN`] and no more than `buf.len()`.
    pub fn parse(buf: &[u8]) -> Result<Header, DecodeError> {
        let mut r = Reader::new(buf);
        let version = r.u8("ofp_header.version")?;
        let msg_type = r.u8("ofp_header.type")?;
        let length = r.u16("ofp_header.length")?;
        let xid = Xid(r.u32("ofp_header.xid")?);
        if (length as usize) < HEADER_LEN || length as usize > buf.len() {
            return Err(bad_length(length));
        }
        Ok(Header {
            version,
            msg_type,
            length,
            xid,
        })
    }

    /// The one header check of a whole received message, which every
    /// decoder and view of both versions goes through (1.0.0 §5.1.1,
    /// 1.3.5 §7.1.1), in this order: 8 bytes at least
    /// ([`ErrorKind::TooShort`]), `version`'s wire number
    /// ([`ErrorKind::BadVersion`]), `length == msg.len()`
    /// ([`ErrorKind::BadLength`]), a type in the version's table
    /// ([`ErrorKind::UnknownType`]) and that type's length rule
    /// ([`ErrorKind::BadLength`]).
    #[inline]
    pub fn check(msg: &[u8], version: Version) -> Result<Header, DecodeError> {
        let &[v, msg_type, l0, l1, x0, x1, x2, x3, ..] = msg else {
            return Err(too_short(msg));
        };
        let length = u16::from_be_bytes([l0, l1]);
        if v != version.wire() {
            return Err(DecodeError::new(
                ErrorKind::BadVersion(v),
                0,
                "ofp_header.version",
            ));
        }
        if usize::from(length) != msg.len() {
            return Err(bad_length(length));
        }
        let rule = length_rule(version, msg_type).ok_or_else(|| {
            DecodeError::new(ErrorKind::UnknownType(msg_type), 1, "ofp_header.type")
        })?;
        rule.check(length, "ofp_header.length")?;
        Ok(Header {
            version: v,
            msg_type,
            length,
            xid: Xid(u32::from_be_bytes([x0, x1, x2, x3])),
        })
    }

    /// [`Header::check`], and the message must be one of `kinds`: a view
    /// reads one kind of message, and another type is
    /// [`ErrorKind::UnknownType`] (not a type this view reads).
    #[inline]
    pub fn check_kind(
        msg: &[u8],
        version: Version,
        kinds: &[MsgKind],
    ) -> Result<(Header, MsgKind), DecodeError> {
        let h = Header::check(msg, version)?;
        let kind = MsgKind::of(version, h.msg_type);
        if kinds.contains(&kind) {
            Ok((h, kind))
        } else {
            Err(DecodeError::new(
                ErrorKind::UnknownType(h.msg_type),
                1,
                "ofp_header.type (not the type this view reads)",
            ))
        }
    }

    /// What the message is: the meaning of `msg_type` in the table of
    /// `version` ([`MsgKind::Unknown`] for a version baton does not speak).
    #[inline]
    pub fn kind(&self) -> MsgKind {
        match Version::from_wire(self.version) {
            Some(v) => MsgKind::of(v, self.msg_type),
            None => MsgKind::Unknown,
        }
    }

    /// Appends the header.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.version);
        out.put_u8(self.msg_type);
        out.put_u16(self.length);
        out.put_u32(self.xid.0);
    }
}

#[cold]
fn too_short(msg: &[u8]) -> DecodeError {
    DecodeError::new(
        ErrorKind::TooShort {
            need: HEADER_LEN,
            have: msg.len(),
        },
        0,
        "ofp_header",
    )
}

#[cold]
fn bad_length(length: u16) -> DecodeError {
    DecodeError::new(
        ErrorKind::BadLength {
            claimed: usize::from(length),
        },
        2,
        "ofp_header.length",
    )
}

/// Finds the first complete message at the start of a stream buffer.
///
/// Returns `Ok(Some(len))` when `buf` holds a whole message of `len` bytes,
/// `Ok(None)` when more bytes are needed, and an error when the length field
/// is below [`HEADER_LEN`] (the stream cannot be resynchronised; the
/// connection must be closed).
#[inline]
pub fn frame(buf: &[u8]) -> Result<Option<usize>, DecodeError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = usize::from(get_u16(buf, field::LENGTH));
    if len < HEADER_LEN {
        return Err(DecodeError::new(
            ErrorKind::BadLength { claimed: len },
            2,
            "ofp_header.length",
        ));
    }
    Ok((buf.len() >= len).then_some(len))
}

/// The 8 header bytes with a placeholder (zero) length, for encoders that
/// build a message's fixed part in one array; [`finish_message`] fills the
/// length in.
#[inline]
pub fn header_bytes(version: Version, msg_type: u8, xid: Xid) -> [u8; HEADER_LEN] {
    let x = xid.0.to_be_bytes();
    [version.wire(), msg_type, 0, 0, x[0], x[1], x[2], x[3]]
}

/// Writes a header with a placeholder length; returns the offset of the
/// header so [`finish_message`] can fill the length in.
#[inline]
pub fn start_message(out: &mut Vec<u8>, version: Version, msg_type: u8, xid: Xid) -> usize {
    let at = out.len();
    out.put_slice(&header_bytes(version, msg_type, xid));
    at
}

/// Fills in the length of the message that starts at `at` and runs to the
/// end of `out`. Messages longer than [`MAX_MESSAGE_LEN`] cannot be
/// expressed; encoders check their inputs so this never happens, and the
/// length saturates rather than wrapping if it did.
#[inline]
pub fn finish_message(out: &mut Vec<u8>, at: usize) {
    let len = (out.len() - at).min(MAX_MESSAGE_LEN) as u16;
    out.patch_u16(at + 2, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_waits_for_whole_message() {
        let hello = [1u8, 0, 0, 8, 0, 0, 0, 1];
        assert_eq!(frame(&hello[..3]).unwrap(), None);
        assert_eq!(frame(&hello[..7]).unwrap(), None);
        assert_eq!(frame(&hello).unwrap(), Some(8));
        assert!(frame(&[1, 0, 0, 7]).is_err());
    }

    #[test]
    fn start_and_finish_fill_length() {
        let mut out = vec![0xaa];
        let at = start_message(&mut out, Version::V13, 2, Xid(5));
        out.extend_from_slice(b"ping");
        finish_message(&mut out, at);
        assert_eq!(
            &out[1..],
            &[4, 2, 0, 12, 0, 0, 0, 5, b'p', b'i', b'n', b'g']
        );
        let h = Header::parse(&out[1..]).unwrap();
        assert_eq!(h.length, 12);
    }
}
