//! A switch's socket: plain TCP, or TCP carrying TLS. One type, so that
//! reading, writing, the writable-event flush and closing go through one
//! path whichever a switch uses (`io.rs` calls them). Also what can go
//! wrong with one, [`TransportError`]: io's reasons to close a switch,
//! apart from the session's (`closed.rs` joins the two).
//!
//! TLS keeps its state, a [`rustls::ServerConnection`], behind a mutex of
//! its own: the serving thread decrypts input with it while any thread
//! may encrypt output. Lock order: a switch's output queue first, then
//! its TLS state (a writer holds the first to append and write). The
//! reader takes the TLS state alone, and writes what the handshake or an
//! alert produced only after dropping it (`io.rs`), so the two cannot
//! deadlock.
//!
//! Ciphertext is read with one system call into a buffer of the
//! connection's own, then handed to rustls from memory, record by
//! record, so a TLS switch costs the same number of `read` calls as a
//! TCP one. Output is sealed by rustls and written straight from its
//! buffers when nothing is queued before it; what the socket does not
//! take waits, as ciphertext, in the output queue like a TCP switch's
//! bytes.

use crate::framing::{ReadOutcome, RecvBuffer};
use crate::sync::lock;
use rustls::ServerConnection;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Smallest ciphertext read: one full TLS record (16 KiB of plaintext
/// and its overhead) fits, so a record never needs two reads for want of
/// room.
const MIN_CIPHERTEXT_READ: usize = 16 * 1024 + 512;

/// Why io gives up on a switch's socket. `Display` is the log's text,
/// [`TransportError::label`] the metrics' label.
#[derive(Debug)]
pub(crate) enum TransportError {
    /// Reading from the socket failed.
    Read(io::Error),
    /// Writing to the socket failed (whichever thread wrote).
    Write(io::ErrorKind),
    /// The switch did not read its output, and the backlog passed
    /// `Config::max_output`. io's: it owns the output queue and its limit.
    OutputOverflow,
    /// The switch stopped reading: its output waited, and it was not read
    /// meanwhile (`Sockets::pause_at`), until its session found it silent.
    NotReading {
        /// Since its output stopped being written.
        for_: Duration,
    },
    /// TLS failed: the handshake (a switch without an acceptable
    /// certificate, no common cipher, not TLS at all) or a record later.
    Tls(rustls::Error),
    /// The TLS handshake had not finished when the session stopped
    /// waiting for the switch (the echo timeout).
    TlsHandshakeUnfinished {
        /// Since the connection was accepted.
        after: Duration,
    },
}

impl TransportError {
    /// The metrics' label: `read_failed`, `write_failed`,
    /// `output_overflow`, `not_reading`, `tls` (any TLS failure, an
    /// unfinished handshake included, as before the two types were split).
    pub fn label(&self) -> &'static str {
        match self {
            TransportError::Read(_) => "read_failed",
            TransportError::Write(_) => "write_failed",
            TransportError::OutputOverflow => "output_overflow",
            TransportError::NotReading { .. } => "not_reading",
            TransportError::Tls(_) | TransportError::TlsHandshakeUnfinished { .. } => "tls",
        }
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Read(e) => write!(f, "read error: {e}"),
            TransportError::Write(kind) => write!(f, "write error: {kind}"),
            TransportError::OutputOverflow => {
                f.write_str("the switch is not reading; its output backlog passed the limit")
            }
            TransportError::NotReading { for_ } => write!(
                f,
                "the switch is not reading; its output has waited {} ms",
                for_.as_millis()
            ),
            TransportError::Tls(e) => write!(f, "TLS: {e}"),
            TransportError::TlsHandshakeUnfinished { after } => {
                write!(
                    f,
                    "TLS: handshake unfinished after {} ms",
                    after.as_millis()
                )
            }
        }
    }
}

/// One switch's socket.
pub(crate) enum Transport {
    /// OpenFlow straight over TCP.
    Tcp(TcpStream),
    /// OpenFlow over TLS over TCP (boxed: rustls' state is over a
    /// kilobyte, and a TCP switch's transport stays a socket's size).
    Tls(Box<Tls>),
}

/// A TLS connection: the socket and rustls' state for it.
pub(crate) struct Tls {
    tcp: TcpStream,
    /// When the connection was accepted (the handshake's start).
    accepted: Instant,
    state: Mutex<TlsState>,
}

struct TlsState {
    conn: ServerConnection,
    /// Ciphertext read from the socket and not yet handed to rustls:
    /// `input[start..end]`.
    input: Vec<u8>,
    start: usize,
    end: usize,
}

impl Transport {
    /// A TLS connection over `tcp` configured by `config`, accepted at
    /// `now`, its handshake not begun (the switch speaks first).
    pub fn tls(
        tcp: TcpStream,
        config: Arc<rustls::ServerConfig>,
        now: Instant,
    ) -> Result<Transport, rustls::Error> {
        let mut conn = ServerConnection::new(config)?;
        // The output queue bounds the backlog (`Config::max_output`);
        // rustls' own limit would only split writes.
        conn.set_buffer_limit(None);
        Ok(Transport::Tls(Box::new(Tls {
            tcp,
            accepted: now,
            state: Mutex::new(TlsState {
                conn,
                input: Vec::new(),
                start: 0,
                end: 0,
            }),
        })))
    }

    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Tcp(s) => s,
            Transport::Tls(t) => &t.tcp,
        }
    }

    /// Shuts the socket down both ways, so that whoever serves it reads
    /// EOF.
    pub fn shutdown(&self) {
        let _ = self.tcp().shutdown(Shutdown::Both);
    }

    /// The TLS handshake not finished at `now`, if that is so.
    pub fn unfinished(&self, now: Instant) -> Option<TransportError> {
        match self {
            Transport::Tcp(_) => None,
            Transport::Tls(t) => lock(&t.state).conn.is_handshaking().then(|| {
                TransportError::TlsHandshakeUnfinished {
                    after: now.saturating_duration_since(t.accepted),
                }
            }),
        }
    }

    /// Queues the controller's first bytes (its HELLO). Over TCP they are
    /// written at once; over TLS they wait, sealed, for the handshake to
    /// finish and leave with its last flight.
    pub fn greet(&self, hello: &[u8]) -> io::Result<()> {
        match self {
            Transport::Tcp(s) => (&*s).write_all(hello),
            Transport::Tls(t) => lock(&t.state).conn.writer().write_all(hello),
        }
    }
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Tcp(s) => f.debug_tuple("Tcp").field(s).finish(),
            Transport::Tls(t) => f.debug_tuple("Tls").field(&t.tcp).finish(),
        }
    }
}

impl AsRawFd for Transport {
    fn as_raw_fd(&self) -> RawFd {
        self.tcp().as_raw_fd()
    }
}

impl Tls {
    /// Reads up to `want` bytes of plaintext into `recv` with one
    /// system call (more only while each fills the space offered),
    /// running the handshake on the way. Errors are the close they call
    /// for.
    pub fn read(&self, recv: &mut RecvBuffer, want: usize) -> Result<ReadOutcome, TransportError> {
        let mut st = lock(&self.state);
        let mut reader = Decrypt {
            st: &mut st,
            tcp: &self.tcp,
            failure: None,
        };
        match recv.fill_from(&mut reader, want) {
            Ok(outcome) => Ok(outcome),
            Err(e) => Err(match reader.failure.take() {
                Some(tls) => TransportError::Tls(tls),
                None => TransportError::Read(e),
            }),
        }
    }

    /// `true` when rustls has sealed output to write (the handshake's, an
    /// alert, or application data sealed meanwhile).
    pub fn has_output(&self) -> bool {
        lock(&self.state).conn.wants_write()
    }

    /// Seals `plain` (whole OpenFlow messages) for sending. When
    /// `pending` is empty, writes what the socket takes straight from
    /// rustls' buffers; what is left is appended to `pending`. Counts
    /// `write` calls and bytes written into `writes` and `written`.
    pub fn send(
        &self,
        plain: &[u8],
        pending: &mut Vec<u8>,
        writes: &AtomicU64,
        written: &AtomicU64,
    ) -> io::Result<()> {
        let mut st = lock(&self.state);
        st.conn.writer().write_all(plain)?;
        if pending.is_empty() {
            while st.conn.wants_write() {
                writes.fetch_add(1, Ordering::Relaxed);
                match st.conn.write_tls(&mut &self.tcp) {
                    Ok(n) => {
                        written.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
        }
        take_sealed(&mut st.conn, pending);
        Ok(())
    }

    /// Appends what rustls has sealed and not yet written to `pending`.
    pub fn take_sealed(&self, pending: &mut Vec<u8>) {
        take_sealed(&mut lock(&self.state).conn, pending);
    }
}

fn take_sealed(conn: &mut ServerConnection, pending: &mut Vec<u8>) {
    while conn.wants_write() {
        // Writing into a `Vec` cannot fail.
        if conn.write_tls(pending).is_err() {
            break;
        }
    }
}

/// Plaintext from a TLS connection as a [`Read`], so that
/// [`RecvBuffer::fill_from`] fills a TLS switch's buffer as it fills a
/// TCP one.
struct Decrypt<'a> {
    st: &'a mut TlsState,
    tcp: &'a TcpStream,
    /// The TLS error behind an `Err` returned, if one was.
    failure: Option<rustls::Error>,
}

impl Read for Decrypt<'_> {
    /// Fills `out` as far as it can: plaintext rustls holds, then the
    /// ciphertext read ahead, then the socket. Returns fewer bytes than
    /// `out` holds only when the socket is drained (its last read came
    /// short or would block), so edge-triggered readiness stays sound:
    /// a full `out` tells the caller more may be waiting, as over TCP.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let st = &mut *self.st;
        if st.input.len() < out.len().max(MIN_CIPHERTEXT_READ) {
            st.input.resize(out.len().max(MIN_CIPHERTEXT_READ), 0);
        }
        let mut filled = 0;
        let mut drained = false;
        loop {
            match st.conn.reader().read(&mut out[filled..]) {
                Ok(0) => return Ok(filled), // close_notify: EOF after this
                Ok(n) => {
                    filled += n;
                    if filled == out.len() {
                        return Ok(filled);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The socket closed without close_notify: EOF too.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(filled),
                Err(e) => return Err(e),
            }
            if st.start < st.end {
                let n = st.conn.read_tls(&mut &st.input[st.start..st.end])?;
                if n == 0 {
                    // rustls took nothing: it would never take more.
                    return Err(io::Error::other("TLS input buffer stuck"));
                }
                st.start += n;
                if let Err(e) = st.conn.process_new_packets() {
                    self.failure = Some(e);
                    return Err(io::Error::other("TLS failed"));
                }
                continue;
            }
            if drained {
                break;
            }
            st.start = 0;
            st.end = 0;
            match (&*self.tcp).read(&mut st.input) {
                Ok(0) => {
                    // Tell rustls, which then reports EOF as above.
                    let _ = st.conn.read_tls(&mut &[][..]);
                    if let Err(e) = st.conn.process_new_packets() {
                        self.failure = Some(e);
                        return Err(io::Error::other("TLS failed"));
                    }
                    drained = true;
                }
                Ok(n) => {
                    st.end = n;
                    drained = n < st.input.len();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => drained = true,
                Err(e) => return Err(e),
            }
        }
        if filled == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(filled)
    }
}
