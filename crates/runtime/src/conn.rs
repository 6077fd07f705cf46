//! One switch connection as its serving thread sees it: the reusable read
//! buffer and chopping of the byte stream into messages (seed 000 §3.1,
//! McNettle §5.2-5.3), the handshake phase, the staged replies of the
//! current batch, and each application's switch-local state.

use crate::switch::SwitchId;
use baton_openflow::header::{HEADER_LEN, MAX_MESSAGE_LEN};
use baton_openflow::{DatapathId, DecodeError, Version};
use std::any::Any;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

/// Each application's switch-local state, indexed by pipeline position.
pub(crate) type Locals = [Option<Box<dyn Any + Send>>];

/// Where the OpenFlow handshake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Our HELLO is sent; waiting for the switch's.
    AwaitHello,
    /// FEATURES_REQUEST sent; waiting for the reply.
    AwaitFeatures,
    /// Handshake done; applications see this switch.
    Up,
}

/// What one read produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// Read some bytes ([`Conn::busy`] says whether they filled the space
    /// offered, so that more input is probably waiting).
    Data,
    /// Nothing to read right now.
    WouldBlock,
    /// The peer closed the connection.
    Eof,
}

/// A switch connection, owned by the thread serving it.
pub(crate) struct Conn {
    pub id: SwitchId,
    pub stream: Arc<TcpStream>,
    pub peer: SocketAddr,
    pub phase: Phase,
    pub version: Version,
    pub dpid: DatapathId,
    /// Received bytes; `[start, end)` is not yet handed to a batch.
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// Replies produced for this switch during the current batch, written
    /// with one system call when the batch is flushed.
    pub wstage: Vec<u8>,
    /// Per-application switch-local state, indexed by pipeline position.
    pub locals: Vec<Option<Box<dyn Any + Send>>>,
    /// Next xid for messages the runtime originates.
    pub next_xid: u32,
    /// The last read filled the space offered: the switch sends faster
    /// than it is served, so it is read ahead (see `Engine::fill`).
    pub busy: bool,
}

/// Initial read buffer; grows (once, not per read) when a larger message
/// or read size needs it.
const INITIAL_RBUF: usize = 4096;

impl Conn {
    pub fn new(id: SwitchId, stream: Arc<TcpStream>, peer: SocketAddr, apps: usize) -> Conn {
        Conn {
            id,
            stream,
            peer,
            phase: Phase::AwaitHello,
            version: Version::V10,
            dpid: DatapathId(0),
            rbuf: vec![0; INITIAL_RBUF],
            start: 0,
            end: 0,
            wstage: Vec::new(),
            locals: (0..apps).map(|_| None).collect(),
            next_xid: 1,
            busy: false,
        }
    }

    /// A fresh xid for a runtime-originated message.
    pub fn xid(&mut self) -> baton_openflow::Xid {
        self.next_xid = self.next_xid.wrapping_add(1);
        baton_openflow::Xid(self.next_xid)
    }

    /// Makes room for a read of `want` bytes: moves the unconsumed bytes
    /// (complete messages read ahead, and a partial one) to the front of
    /// the buffer when the space after them is short, and only then, so a
    /// switch read ahead is not copied on every service. Only called when
    /// no message of this connection is in a batch, since it moves bytes
    /// that batch entries would point into.
    pub fn compact_for(&mut self, want: usize) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.start > 0 && self.rbuf.len() - self.end < want {
            self.rbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// Bytes read but not yet handed to a batch.
    pub fn unconsumed(&self) -> usize {
        self.end - self.start
    }

    /// Whether a complete message (or a framing error, which the next
    /// [`Conn::next_message`] reports) is buffered.
    pub fn has_message(&self) -> bool {
        !matches!(
            baton_openflow::frame(&self.rbuf[self.start..self.end]),
            Ok(None)
        )
    }

    /// Reads at most `want` bytes (fewer if a partial message already
    /// occupies the buffer's front) with one system call.
    pub fn read(&mut self, want: usize) -> io::Result<ReadOutcome> {
        // Make room for `want` more bytes, and for the whole of a partial
        // message whose header says it is larger.
        let partial_len = self.partial_message_len().unwrap_or(0);
        let need = (self.end + want).max(self.start + partial_len);
        if need > self.rbuf.len() {
            let cap = need
                .min(self.start + MAX_MESSAGE_LEN + want)
                .max(INITIAL_RBUF);
            self.rbuf.resize(cap, 0);
        }
        let space = (self.rbuf.len() - self.end).min(want.max(1));
        loop {
            match (&*self.stream).read(&mut self.rbuf[self.end..self.end + space]) {
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

    fn partial_message_len(&self) -> Option<usize> {
        let b = self.rbuf.get(self.start..self.end)?;
        if b.len() < 4 {
            return None;
        }
        Some(u16::from_be_bytes([b[2], b[3]]) as usize)
    }

    /// Chops the next complete message: returns its range in the buffer.
    /// The bytes stay in place until the next [`Conn::compact_for`].
    pub fn next_message(&mut self) -> Result<Option<(u32, u32)>, DecodeError> {
        let avail = &self.rbuf[self.start..self.end];
        match baton_openflow::frame(avail)? {
            Some(len) => {
                let at = self.start;
                self.start += len;
                Ok(Some((at as u32, len as u32)))
            }
            None => Ok(None),
        }
    }

    /// The bytes of a message chopped by [`Conn::next_message`].
    #[inline]
    pub fn message(&self, at: u32, len: u32) -> &[u8] {
        let (at, len) = (at as usize, len as usize);
        self.rbuf.get(at..at + len).unwrap_or(&[])
    }

    /// Splits the borrows a handler needs at once: one message's bytes,
    /// the staged output, the switch-local state and the xid counter.
    #[inline]
    pub fn parts(&mut self, at: u32, len: u32) -> (&[u8], &mut Vec<u8>, &mut Locals, &mut u32) {
        let (at, len) = (at as usize, len as usize);
        let msg = self.rbuf.get(at..at + len).unwrap_or(&[]);
        (msg, &mut self.wstage, &mut self.locals, &mut self.next_xid)
    }

    /// Bytes held in the read buffer, consumed or not.
    pub fn buffered(&self) -> usize {
        self.end
    }

    /// Whether unconsumed bytes are buffered (a partial message).
    #[cfg(test)]
    pub fn has_partial(&self) -> bool {
        self.end > self.start
    }
}

/// The minimum a message needs to be dispatched: its header.
pub(crate) fn header_of(msg: &[u8]) -> Option<(u8, u8, u32)> {
    if msg.len() < HEADER_LEN {
        return None;
    }
    Some((
        msg[0],
        msg[1],
        u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    fn pair() -> (Conn, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, peer) = l.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        (
            Conn::new(SwitchId::new(0, 0), Arc::new(server), peer, 1),
            client,
        )
    }

    fn wait_read(c: &mut Conn, want: usize) -> ReadOutcome {
        for _ in 0..1000 {
            match c.read(want).unwrap() {
                ReadOutcome::WouldBlock => std::thread::sleep(std::time::Duration::from_millis(1)),
                other => return other,
            }
        }
        panic!("no data");
    }

    #[test]
    fn chops_messages_across_reads() {
        let (mut c, mut peer) = pair();
        // Two HELLOs and the first 5 bytes of an ECHO of 12 bytes.
        let mut bytes = vec![1, 0, 0, 8, 0, 0, 0, 1, 1, 0, 0, 8, 0, 0, 0, 2];
        bytes.extend_from_slice(&[1, 2, 0, 12, 0]);
        peer.write_all(&bytes).unwrap();
        assert!(matches!(wait_read(&mut c, 2048), ReadOutcome::Data));
        let a = c.next_message().unwrap().unwrap();
        let b = c.next_message().unwrap().unwrap();
        assert_eq!(c.message(a.0, a.1)[7], 1);
        assert_eq!(c.message(b.0, b.1)[7], 2);
        assert_eq!(c.next_message().unwrap(), None);
        assert!(c.has_partial());
        assert!(!c.has_message());
        c.compact_for(2048);
        peer.write_all(&[0, 0, 3, b'a', b'b', b'c', b'd']).unwrap();
        wait_read(&mut c, 2048);
        let e = c.next_message().unwrap().unwrap();
        assert_eq!(
            c.message(e.0, e.1),
            &[1, 2, 0, 12, 0, 0, 0, 3, b'a', b'b', b'c', b'd']
        );
        assert!(!c.has_partial());
    }

    #[test]
    fn grows_for_a_large_message_and_rejects_bad_lengths() {
        let (mut c, mut peer) = pair();
        let mut big = vec![1, 2, 0xff, 0xff, 0, 0, 0, 9];
        big.resize(0xffff, 7);
        peer.write_all(&big).unwrap();
        let mut got = None;
        for _ in 0..200 {
            let _ = wait_read(&mut c, 2048);
            if let Some(m) = c.next_message().unwrap() {
                got = Some(m);
                break;
            }
        }
        assert_eq!(got.unwrap().1, 0xffff);
        c.compact_for(2048);
        peer.write_all(&[1, 0, 0, 4]).unwrap();
        wait_read(&mut c, 2048);
        assert!(c.next_message().is_err());
    }

    #[test]
    fn reports_eof() {
        let (mut c, peer) = pair();
        drop(peer);
        assert_eq!(wait_read(&mut c, 64), ReadOutcome::Eof);
    }
}
