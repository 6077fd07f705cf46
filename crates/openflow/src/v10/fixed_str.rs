//! [`FixedStr`], the NUL-padded `char name[N]` fields of OpenFlow
//! structures (port names, table names, description strings; 1.0.0 §5.2.1,
//! §5.3.5).
//!
//! The value is the bytes before the first NUL, up to `N` of them, kept as
//! bytes (switches are not bound to UTF-8), inline and `Copy`, so decoding
//! never allocates and `emit(parse(b)) == b` for every field whose bytes
//! after the first NUL are zeros.

use crate::error::DecodeError;
use crate::wire::{Put, Reader};
use std::borrow::Cow;
use std::fmt;

/// A fixed-size, NUL-padded string field of `N` bytes.
///
/// Invariant: every byte after the first NUL is NUL, so equality and
/// hashing compare the string's contents only.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedStr<const N: usize> {
    buf: [u8; N],
}

impl<const N: usize> FixedStr<N> {
    /// The empty string.
    pub const EMPTY: FixedStr<N> = FixedStr { buf: [0; N] };

    /// The string made of `s` up to its first NUL, truncated to `N` bytes.
    pub fn new(s: &[u8]) -> FixedStr<N> {
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len()).min(N);
        let mut buf = [0; N];
        if let (Some(dst), Some(src)) = (buf.get_mut(..end), s.get(..end)) {
            dst.copy_from_slice(src);
        }
        FixedStr { buf }
    }

    /// The bytes before the first NUL.
    pub fn as_bytes(&self) -> &[u8] {
        let end = self.buf.iter().position(|&c| c == 0).unwrap_or(N);
        self.buf.get(..end).unwrap_or(&[])
    }

    /// The string, if it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }

    /// The string, with invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }

    /// Length in bytes (up to the first NUL).
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// True for the empty string.
    pub fn is_empty(&self) -> bool {
        self.buf.first().is_none_or(|&c| c == 0)
    }

    /// Reads the `N`-byte field.
    pub fn parse(r: &mut Reader<'_>, what: &'static str) -> Result<FixedStr<N>, DecodeError> {
        Ok(FixedStr::new(r.fixed_str(N, what)?))
    }

    /// Appends the `N`-byte field: the string, then NULs. A string of
    /// exactly `N` bytes is written without a terminator, as received.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_slice(&self.buf);
    }
}

impl<const N: usize> Default for FixedStr<N> {
    fn default() -> Self {
        FixedStr::EMPTY
    }
}

impl<const N: usize> From<&str> for FixedStr<N> {
    fn from(s: &str) -> Self {
        FixedStr::new(s.as_bytes())
    }
}

impl<const N: usize> fmt::Display for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl<const N: usize> fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_nul_and_keeps_full_width() {
        let s = FixedStr::<4>::new(b"ab\0cd");
        assert_eq!(s.as_bytes(), b"ab");
        assert_eq!(s, FixedStr::<4>::from("ab"));
        let full = FixedStr::<4>::new(b"abcdef");
        assert_eq!(full.as_bytes(), b"abcd");
        let mut out = Vec::new();
        full.emit(&mut out);
        s.emit(&mut out);
        assert_eq!(out, b"abcdab\0\0");
        let mut r = Reader::new(&out);
        assert_eq!(FixedStr::<4>::parse(&mut r, "x").unwrap(), full);
        assert_eq!(FixedStr::<4>::parse(&mut r, "x").unwrap(), s);
        assert!(FixedStr::<4>::EMPTY.is_empty());
        assert_eq!(format!("{s:?} {s}"), "\"ab\" ab");
    }
}
