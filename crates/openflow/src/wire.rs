//! Bounds-checked big-endian reading and appending, the only place that
//! indexes raw bytes.
//!
//! [`Reader`] never panics: every read either returns the value or a
//! [`DecodeError`] of kind [`ErrorKind::TooShort`] carrying the absolute
//! offset where the input ran out. Writing appends to a caller-owned
//! `Vec<u8>` ([`Put`]); once the vector has reached its steady-state capacity,
//! encoding allocates nothing.

use crate::error::{DecodeError, ErrorKind};

/// A cursor over a byte slice that reads big-endian integers.
///
/// `base` is the offset of `buf[0]` within the whole message, so errors
/// report positions a user can find in a hex dump.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over a whole message (offsets start at 0).
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
        }
    }

    /// A reader over `buf`, which starts at `base` within the message.
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// Absolute offset of the next byte to read.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when everything has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    fn too_short(&self, need: usize, what: &'static str) -> DecodeError {
        DecodeError::new(
            ErrorKind::TooShort {
                need,
                have: self.remaining(),
            },
            self.offset(),
            what,
        )
    }

    /// Takes the next `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.too_short(n, what));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Takes everything left.
    pub fn take_rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    /// Takes the next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let b = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// Reads a `u8`.
    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// Reads a big-endian `u16`.
    pub fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    /// Reads a big-endian `u32`.
    pub fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    /// Reads a big-endian `u64`.
    pub fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    /// Skips `n` padding bytes (their content is ignored, as the specs say
    /// receivers must).
    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<(), DecodeError> {
        self.bytes(n, what).map(|_| ())
    }

    /// Splits off a sub-reader over the next `n` bytes (for a TLV body).
    pub fn sub(&mut self, n: usize, what: &'static str) -> Result<Reader<'a>, DecodeError> {
        let base = self.offset();
        let b = self.bytes(n, what)?;
        Ok(Reader::with_base(b, base))
    }

    /// Reads a fixed-size, NUL-terminated string field (e.g. `char
    /// name[16]`): the text up to the first NUL, never including the field's
    /// last byte (the terminator's place), each byte of invalid UTF-8 read
    /// as `?`. Written back with [`Put::put_fixed_str`], decode -> encode ->
    /// decode is stable whatever was received.
    pub fn fixed_string(&mut self, n: usize, what: &'static str) -> Result<String, DecodeError> {
        let field = self.bytes(n, what)?;
        let text = field.get(..n.saturating_sub(1)).unwrap_or_default();
        let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        let text = text.get(..end).unwrap_or_default();
        let mut s = String::with_capacity(text.len());
        for chunk in text.utf8_chunks() {
            s.push_str(chunk.valid());
            s.extend(chunk.invalid().iter().map(|_| '?'));
        }
        Ok(s)
    }

    /// Fails with [`ErrorKind::TrailingBytes`] unless everything was read.
    pub fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::new(
                ErrorKind::TrailingBytes {
                    extra: self.remaining(),
                },
                self.offset(),
                what,
            ))
        }
    }
}

/// Big-endian appends to a caller-owned buffer.
pub trait Put {
    /// Appends one byte.
    fn put_u8(&mut self, v: u8);
    /// Appends a big-endian `u16`.
    fn put_u16(&mut self, v: u16);
    /// Appends a big-endian `u32`.
    fn put_u32(&mut self, v: u32);
    /// Appends a big-endian `u64`.
    fn put_u64(&mut self, v: u64);
    /// Appends raw bytes.
    fn put_slice(&mut self, v: &[u8]);
    /// Appends `n` zero bytes.
    fn put_zeros(&mut self, n: usize);
    /// Appends `s` NUL-padded (or truncated) to exactly `n` bytes; the last
    /// byte is always NUL, as the specs' fixed string fields require.
    fn put_fixed_str(&mut self, s: &[u8], n: usize);
    /// Overwrites a big-endian `u16` at `at` (for a length known only after
    /// the body is written). Does nothing if `at + 2` is past the end.
    fn patch_u16(&mut self, at: usize, v: u16);
}

impl Put for Vec<u8> {
    #[inline]
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    #[inline]
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_slice(&mut self, v: &[u8]) {
        self.extend_from_slice(v);
    }
    #[inline]
    fn put_zeros(&mut self, n: usize) {
        self.resize(self.len() + n, 0);
    }
    fn put_fixed_str(&mut self, s: &[u8], n: usize) {
        if n == 0 {
            return;
        }
        let take = s.len().min(n - 1);
        self.extend_from_slice(&s[..take]);
        self.put_zeros(n - take);
    }
    #[inline]
    fn patch_u16(&mut self, at: usize, v: u16) {
        if let Some(dst) = self.get_mut(at..at + 2) {
            dst.copy_from_slice(&v.to_be_bytes());
        }
    }
}

/// A fixed-size structure built on the stack and appended to a `Vec` with
/// one copy. Appending field by field to a `Vec` checks its capacity at
/// every field; for the hot messages' fixed parts (a 1.0 `ofp_match` is 13
/// fields) that checking cost more than the fields (callgrind, see
/// BENCHMARKS.md). Writes past `N` bytes are dropped (never a panic);
/// callers size `N` to the structure.
#[derive(Debug, Clone, Copy)]
pub struct Fixed<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Default for Fixed<N> {
    fn default() -> Self {
        Fixed {
            buf: [0; N],
            len: 0,
        }
    }
}

impl<const N: usize> Fixed<N> {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes written so far.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len.min(N)]
    }

    /// Appends `v`: with `M` constant, one bounds check and a copy of
    /// known size.
    #[inline]
    pub fn put_array<const M: usize>(&mut self, v: [u8; M]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + M) {
            dst.copy_from_slice(&v);
            self.len += M;
        }
    }
}

impl<const N: usize> Put for Fixed<N> {
    #[inline]
    fn put_u8(&mut self, v: u8) {
        self.put_array([v]);
    }
    #[inline]
    fn put_u16(&mut self, v: u16) {
        self.put_array(v.to_be_bytes());
    }
    #[inline]
    fn put_u32(&mut self, v: u32) {
        self.put_array(v.to_be_bytes());
    }
    #[inline]
    fn put_u64(&mut self, v: u64) {
        self.put_array(v.to_be_bytes());
    }
    #[inline]
    fn put_slice(&mut self, v: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + v.len()) {
            dst.copy_from_slice(v);
            self.len += v.len();
        }
    }
    #[inline]
    fn put_zeros(&mut self, n: usize) {
        // The buffer starts zeroed and is only ever appended to.
        self.len = (self.len + n).min(N);
    }
    fn put_fixed_str(&mut self, s: &[u8], n: usize) {
        if n == 0 {
            return;
        }
        let take = s.len().min(n - 1);
        self.put_slice(&s[..take]);
        self.put_zeros(n - take);
    }
    #[inline]
    fn patch_u16(&mut self, at: usize, v: u16) {
        if let Some(dst) = self.buf.get_mut(at..at + 2) {
            dst.copy_from_slice(&v.to_be_bytes());
        }
    }
}

/// A field of a fixed-layout structure: its byte range, as the views'
/// private `mod field` tables give it (smoltcp's `wire::field::Field`).
pub type Field = core::ops::Range<usize>;

/// What a structure holds from an offset to its end (smoltcp's `Rest`).
pub type Rest = core::ops::RangeFrom<usize>;

// Reads and writes of a view's fields. None of them panics: a field
// outside the buffer (which a view's `new_checked` rules out) reads as
// zero and is not written. With a constant field and a buffer whose
// length the caller checked, the compiler removes the test.

/// The byte at `at`.
#[inline(always)]
pub(crate) fn get_u8(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

/// The big-endian `u16` in `f`.
#[inline(always)]
pub(crate) fn get_u16(b: &[u8], f: Field) -> u16 {
    get_array(b, f).map_or(0, u16::from_be_bytes)
}

/// The big-endian `u32` in `f`.
#[inline(always)]
pub(crate) fn get_u32(b: &[u8], f: Field) -> u32 {
    get_array(b, f).map_or(0, u32::from_be_bytes)
}

/// The big-endian `u64` in `f`.
#[inline(always)]
pub(crate) fn get_u64(b: &[u8], f: Field) -> u64 {
    get_array(b, f).map_or(0, u64::from_be_bytes)
}

/// The bytes of `f` as an array, if `f` is in `b` and `N` long.
#[inline(always)]
pub(crate) fn get_array<const N: usize>(b: &[u8], f: Field) -> Option<[u8; N]> {
    b.get(f).and_then(|s| <[u8; N]>::try_from(s).ok())
}

/// Writes the byte at `at`.
#[inline(always)]
pub(crate) fn set_u8(b: &mut [u8], at: usize, v: u8) {
    if let Some(x) = b.get_mut(at) {
        *x = v;
    }
}

/// Writes a big-endian `u16` into `f`.
#[inline(always)]
pub(crate) fn set_u16(b: &mut [u8], f: Field, v: u16) {
    set_bytes(b, f, &v.to_be_bytes());
}

/// Writes a big-endian `u32` into `f`.
#[inline(always)]
pub(crate) fn set_u32(b: &mut [u8], f: Field, v: u32) {
    set_bytes(b, f, &v.to_be_bytes());
}

/// Writes a big-endian `u64` into `f`.
#[inline(always)]
pub(crate) fn set_u64(b: &mut [u8], f: Field, v: u64) {
    set_bytes(b, f, &v.to_be_bytes());
}

/// Writes `v` into `f` when both have the same length.
#[inline(always)]
pub(crate) fn set_bytes(b: &mut [u8], f: Field, v: &[u8]) {
    if let Some(dst) = b.get_mut(f).filter(|d| d.len() == v.len()) {
        dst.copy_from_slice(v);
    }
}

/// Number of zero bytes that pad `len` up to a multiple of 8, as OpenFlow
/// 1.3 requires for matches, actions lists and many structures.
#[inline]
pub const fn pad8(len: usize) -> usize {
    (8 - len % 8) % 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reports_offset_of_short_read() {
        let mut r = Reader::with_base(&[1, 2, 3], 10);
        assert_eq!(r.u16("a").unwrap(), 0x0102);
        let e = r.u32("b").unwrap_err();
        assert_eq!(e.offset(), 12);
        assert_eq!(e.kind(), &ErrorKind::TooShort { need: 4, have: 1 });
    }

    #[test]
    fn fixed_str_is_nul_terminated_and_truncated() {
        let mut v = Vec::new();
        v.put_fixed_str(b"abcdef", 4);
        assert_eq!(v, b"abc\0");
        let mut r = Reader::new(&v);
        assert_eq!(r.fixed_string(4, "s").unwrap(), "abc");
        // No NUL: the last byte is the terminator's place.
        assert_eq!(Reader::new(b"wxyz").fixed_string(4, "s").unwrap(), "wxy");
        assert_eq!(
            Reader::new(b"a\xffb\0").fixed_string(4, "s").unwrap(),
            "a?b"
        );
    }

    #[test]
    fn fixed_builds_like_a_vec_and_never_overflows() {
        let mut f = Fixed::<8>::new();
        let mut v = Vec::new();
        for p in [&mut f as &mut dyn Put, &mut v as &mut dyn Put] {
            p.put_u16(0x0102);
            p.put_zeros(1);
            p.put_u8(3);
            p.put_u32(0x0405_0607);
        }
        assert_eq!(f.as_slice(), v.as_slice());
        f.put_u64(9);
        f.put_slice(b"more");
        assert_eq!(f.as_slice().len(), 8);
    }

    #[test]
    fn pad8_rounds_up() {
        assert_eq!(pad8(0), 0);
        assert_eq!(pad8(4), 4);
        assert_eq!(pad8(8), 0);
        assert_eq!(pad8(13), 3);
    }
}
