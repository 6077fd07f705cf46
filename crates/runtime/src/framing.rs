//! A switch's receive buffer: bytes in, whole OpenFlow messages out
//! (chunked reads and reusable buffers, lent from switch to switch while
//! they hold nothing: `conn.rs`'s `SpareBuffers`; McNettle §5.2-5.3;
//! Maestro §3.3's small reads). No sockets: bytes come from any
//! [`Read`] ([`RecvBuffer::fill_from`]) or are handed in
//! ([`RecvBuffer::push`]), so tests feed it byte slices.
//!
//! Messages are chopped in place: [`RecvBuffer::next_message`] returns
//! where a message lies, and the bytes stay where they are until the next
//! [`RecvBuffer::compact_for`], so a batch can refer to messages of
//! several reads without copying them.

use baton_openflow::DecodeError;
use baton_openflow::header::MAX_MESSAGE_LEN;
use std::io::{self, Read};

/// Initial buffer; grows (once, not per read) when a larger message or
/// read size needs it.
const INITIAL_LEN: usize = 4096;

/// How far into its buffer a switch's unconsumed input may lie before a
/// service moves it to the front even without reading
/// ([`RecvBuffer::compact_for`]): a maximal message.
const FAR: usize = MAX_MESSAGE_LEN;

/// What one read produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// Read some bytes ([`RecvBuffer::busy`] says whether they filled the
    /// space offered, so that more input is probably waiting).
    Data,
    /// Nothing to read right now.
    WouldBlock,
    /// The peer closed the connection.
    Eof,
}

/// Received bytes; `[start, end)` is not yet handed out as messages.
#[derive(Debug)]
pub(crate) struct RecvBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The last read filled the space offered: the peer sends faster than
    /// it is served, so it is read ahead (see `Policy::read_size`).
    pub busy: bool,
}

impl Default for RecvBuffer {
    /// No memory until it reads or is given some.
    fn default() -> Self {
        RecvBuffer {
            buf: Vec::new(),
            start: 0,
            end: 0,
            busy: false,
        }
    }
}

impl RecvBuffer {
    /// Makes room for a read of `want` bytes at the front of the buffer
    /// (`want` 0 at the start of a service that may not read): moves the
    /// unconsumed bytes (complete messages read ahead, and a partial one)
    /// there when
    /// - they are no more than the read itself, a copy much cheaper than
    ///   the read: reads then land in the same few cache-warm kilobytes
    ///   rather than sweeping the buffer;
    /// - the space after them is short;
    /// - or they lie at least [`FAR`] in and no nearer the front than
    ///   their own length, so a copy costs at most a byte per byte
    ///   consumed since the last one. Without this, a switch served from
    ///   read-ahead and read again only after messages of the same
    ///   service were in the batch (which forbids moving bytes) was never
    ///   compacted: under callgrind's slow run its buffer grew by a read at
    ///   a time to 32 MB (BENCHMARKS.md, "Fairness and the schedulers").
    ///
    /// A switch read far ahead is not copied on every service. Call it
    /// only when no message of this buffer is in a batch: it moves bytes
    /// that batch entries would point into.
    pub fn compact_for(&mut self, want: usize) {
        let unconsumed = self.end - self.start;
        if unconsumed == 0 {
            self.start = 0;
            self.end = 0;
        } else if self.start > 0
            && (unconsumed <= want
                || self.buf.len() - self.end < want
                || self.start >= FAR.max(unconsumed))
        {
            self.buf.copy_within(self.start..self.end, 0);
            self.end = unconsumed;
            self.start = 0;
        }
    }

    /// Whether the buffer has memory to read into (it gets some when it
    /// reads, if not lent any: [`RecvBuffer::give_memory`]).
    pub fn has_memory(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Gives a buffer without memory `buf` to read into.
    pub fn give_memory(&mut self, buf: Vec<u8>) {
        debug_assert!(self.buf.is_empty());
        self.buf = buf;
    }

    /// Takes the buffer's memory when it holds no bytes, leaving it none.
    pub fn take_memory_if_drained(&mut self) -> Option<Vec<u8>> {
        if self.end != self.start || self.buf.is_empty() {
            return None;
        }
        self.start = 0;
        self.end = 0;
        Some(std::mem::take(&mut self.buf))
    }

    /// Bytes received but not yet handed out.
    pub fn unconsumed(&self) -> usize {
        self.end - self.start
    }

    /// Bytes held, handed out or not.
    pub fn buffered(&self) -> usize {
        self.end
    }

    /// Whether a complete message (or a framing error, which the next
    /// [`RecvBuffer::next_message`] reports) is buffered.
    pub fn has_message(&self) -> bool {
        !matches!(
            baton_openflow::frame(&self.buf[self.start..self.end]),
            Ok(None)
        )
    }

    /// Grows the buffer for `want` more bytes and for the whole of a
    /// partial message whose header says it is larger; returns the space
    /// after the received bytes, at most `want` (and at least 1).
    fn reserve(&mut self, want: usize) -> usize {
        let partial_len = self.partial_message_len().unwrap_or(0);
        let need = (self.end + want).max(self.start + partial_len);
        if need > self.buf.len() {
            let cap = need
                .min(self.start + MAX_MESSAGE_LEN + want)
                .max(INITIAL_LEN)
                .max(self.end + 1);
            // Never shorter than it is, nor without room for a byte: the
            // bound alone cut the buffer back, below the bytes it held when
            // more than a maximal message plus a read was unconsumed.
            if cap > self.buf.len() {
                self.buf.resize(cap, 0);
            }
        }
        (self.buf.len() - self.end).min(want.max(1))
    }

    /// Reads at most `want` bytes from `source` with one call (fewer if a
    /// partial message already occupies the buffer's front).
    pub fn fill_from(&mut self, mut source: impl Read, want: usize) -> io::Result<ReadOutcome> {
        let space = self.reserve(want);
        loop {
            match source.read(&mut self.buf[self.end..self.end + space]) {
                Ok(0) => return Ok(ReadOutcome::Eof),
                Ok(n) => {
                    self.end += n;
                    self.busy = n == space;
                    return Ok(ReadOutcome::Data);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.busy = false;
                    return Ok(ReadOutcome::WouldBlock);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Appends `bytes` as if they had been read (for tests and in-process
    /// switches).
    pub fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let space = self.reserve(rest.len());
            let n = space.min(rest.len());
            self.buf[self.end..self.end + n].copy_from_slice(&rest[..n]);
            self.end += n;
            rest = &rest[n..];
        }
    }

    fn partial_message_len(&self) -> Option<usize> {
        let b = self.buf.get(self.start..self.end)?;
        if b.len() < 4 {
            return None;
        }
        Some(u16::from_be_bytes([b[2], b[3]]) as usize)
    }

    /// Chops the next complete message: returns its position and length.
    /// The bytes stay in place until the next [`RecvBuffer::compact_for`].
    /// An error means the stream cannot be framed any further.
    pub fn next_message(&mut self) -> Result<Option<(u32, u32)>, DecodeError> {
        let avail = &self.buf[self.start..self.end];
        match baton_openflow::frame(avail)? {
            Some(len) => {
                let at = self.start;
                self.start += len;
                Ok(Some((at as u32, len as u32)))
            }
            None => Ok(None),
        }
    }

    /// The bytes at a position [`RecvBuffer::next_message`] returned.
    #[inline]
    pub fn slice(&self, at: u32, len: u32) -> &[u8] {
        let (at, len) = (at as usize, len as usize);
        self.buf.get(at..at + len).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A maximal (65,535-byte) message whose xid's last byte is `tag`.
    fn maximal_message(tag: u8) -> Vec<u8> {
        let mut m = vec![1, 2, 0xff, 0xff, 0, 0, 0, tag];
        m.resize(0xffff, 7);
        m
    }

    /// A reader that hands out its bytes in chunks of at most `step`.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.bytes.is_empty() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = self.step.min(out.len()).min(self.bytes.len());
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn chops_messages_across_reads() {
        let mut r = RecvBuffer::default();
        // Two HELLOs and the first 5 bytes of an ECHO of 12 bytes.
        let mut bytes = vec![1, 0, 0, 8, 0, 0, 0, 1, 1, 0, 0, 8, 0, 0, 0, 2];
        bytes.extend_from_slice(&[1, 2, 0, 12, 0]);
        assert_eq!(r.fill_from(&bytes[..], 2048).unwrap(), ReadOutcome::Data);
        assert!(!r.busy, "the read did not fill the space offered");
        let a = r.next_message().unwrap().unwrap();
        let b = r.next_message().unwrap().unwrap();
        assert_eq!(r.slice(a.0, a.1)[7], 1);
        assert_eq!(r.slice(b.0, b.1)[7], 2);
        assert_eq!(r.next_message().unwrap(), None);
        assert_eq!(r.unconsumed(), 5);
        assert!(!r.has_message());
        r.compact_for(2048);
        r.push(&[0, 0, 3, b'a', b'b', b'c', b'd']);
        let e = r.next_message().unwrap().unwrap();
        assert_eq!(
            r.slice(e.0, e.1),
            &[1, 2, 0, 12, 0, 0, 0, 3, b'a', b'b', b'c', b'd']
        );
        assert_eq!(r.unconsumed(), 0);
    }

    #[test]
    fn a_full_read_marks_the_peer_busy_and_would_block_clears_it() {
        let mut r = RecvBuffer::default();
        let hellos: Vec<u8> = (0..8).flat_map(|x| [1, 0, 0, 8, 0, 0, 0, x]).collect();
        let mut src = Trickle {
            bytes: &hellos,
            step: 64,
        };
        assert_eq!(r.fill_from(&mut src, 16).unwrap(), ReadOutcome::Data);
        assert!(r.busy);
        assert_eq!(r.unconsumed(), 16);
        assert_eq!(r.fill_from(&mut src, 64).unwrap(), ReadOutcome::Data);
        assert_eq!(r.fill_from(&mut src, 64).unwrap(), ReadOutcome::WouldBlock);
        assert!(!r.busy);
        let mut n = 0;
        while let Some((at, len)) = r.next_message().unwrap() {
            assert_eq!(r.slice(at, len)[7], n);
            n += 1;
        }
        assert_eq!(n, 8);
    }

    #[test]
    fn grows_for_a_large_message_and_rejects_bad_lengths() {
        let mut r = RecvBuffer::default();
        let big = maximal_message(9);
        let mut src = Trickle {
            bytes: &big,
            step: 3000,
        };
        let mut got = None;
        for _ in 0..100 {
            let _ = r.fill_from(&mut src, 2048).unwrap();
            if let Some(m) = r.next_message().unwrap() {
                got = Some(m);
                break;
            }
        }
        assert_eq!(got.unwrap().1, 0xffff);
        r.compact_for(2048);
        r.push(&[1, 0, 0, 4]);
        assert!(
            r.has_message(),
            "a framing error counts as something to report"
        );
        assert!(r.next_message().is_err());
    }

    #[test]
    fn compacting_moves_a_short_tail_to_the_front_even_with_room_after_it() {
        let mut r = RecvBuffer::default();
        let hellos: Vec<u8> = (0..4).flat_map(|x| [1, 0, 0, 8, 0, 0, 0, x]).collect();
        r.push(&hellos);
        r.push(&[1, 0, 0]);
        while r.next_message().unwrap().is_some() {}
        r.compact_for(2048);
        assert_eq!(r.buffered(), 3, "the partial header now starts the buffer");
        assert_eq!(r.unconsumed(), 3);
        r.push(&[8, 0, 0, 0, 9]);
        let (at, len) = r.next_message().unwrap().unwrap();
        assert_eq!((at, len), (0, 8));
        assert_eq!(r.slice(at, len)[7], 9);
    }

    #[test]
    fn input_far_into_the_buffer_moves_to_the_front_without_a_read() {
        let mut r = RecvBuffer::default();
        let big = maximal_message(0);
        r.push(&big);
        r.push(&big);
        r.push(&[1, 0, 0, 8, 0, 0, 0, 5]);
        r.next_message().unwrap().unwrap();
        r.compact_for(0);
        assert_eq!(r.buffered(), 2 * 0xffff + 8, "more ahead than behind: left");
        r.next_message().unwrap().unwrap();
        r.compact_for(0);
        assert_eq!(r.buffered(), 8, "the last message now starts the buffer");
        let (at, len) = r.next_message().unwrap().unwrap();
        assert_eq!((at, len), (0, 8));
        assert_eq!(r.slice(at, len)[7], 5);
    }

    #[test]
    fn reading_behind_much_unconsumed_input_keeps_it_whole() {
        // More than a maximal message plus a read is waiting: growing for
        // the next read must not cut the buffer below what it holds.
        let mut r = RecvBuffer::default();
        for x in 0..4 {
            r.push(&maximal_message(x));
        }
        let first = r.next_message().unwrap().unwrap();
        assert_eq!(r.slice(first.0, first.1)[7], 0);
        let mut hello = &[1, 0, 0, 8, 0, 0, 0, 4][..];
        while !hello.is_empty() {
            assert_eq!(r.fill_from(&mut hello, 2048).unwrap(), ReadOutcome::Data);
        }
        for x in 1..5 {
            let (at, len) = r.next_message().unwrap().unwrap();
            assert_eq!(r.slice(at, len)[7], x);
        }
        assert_eq!(r.next_message().unwrap(), None);
    }

    #[test]
    fn reports_eof() {
        let mut r = RecvBuffer::default();
        assert_eq!(r.fill_from(&[][..], 64).unwrap(), ReadOutcome::Eof);
    }
}
