//! The sockets, readiness and clock, for every scheduler: reading a
//! switch's socket into its receive buffer, writing its output with one
//! `write` when nothing is pending (Beacon Alg. 2) and waiting for
//! writability otherwise, epoll registrations, turning epoll events into
//! "this switch is ready", and the controller's clock.
//!
//! A switch's socket is a [`Transport`] (`io/transport.rs`): plain TCP,
//! or TLS over TCP. Both go through the functions here; for TLS, reading
//! also runs the handshake, whose output is written like any other, and
//! the bytes waiting for writability are ciphertext.
//!
//! Nothing else in the runtime makes a system call on a switch's socket.

pub(crate) mod transport;

use crate::framing::{ReadOutcome, RecvBuffer};
use crate::session::CloseReason;
use crate::stats::Tally;
use crate::switch::{SendError, SwitchId};
use crate::sync::lock;
use crate::table::{Kill, OutQueue, Slot, SwitchTable};
use baton_openflow::DatapathId;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
pub(crate) use transport::Transport;

/// The token of a poller's waker (switch tokens are slot indices).
pub(crate) const WAKER: Token = Token(usize::MAX - 1);

/// The controller's clock: `Instant`s for sessions, milliseconds since
/// start for the per-switch atomics other threads read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    epoch: Instant,
}

impl Clock {
    pub fn new() -> Clock {
        Clock {
            epoch: Instant::now(),
        }
    }

    pub fn now(&self) -> Instant {
        Instant::now()
    }

    /// Milliseconds since the clock started.
    pub fn now_ms(&self) -> u64 {
        self.ms(Instant::now())
    }

    /// `t` in milliseconds since the clock started.
    pub fn ms(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_millis() as u64
    }
}

/// Reads at most `want` bytes from switch `idx`'s socket into its buffer
/// with one system call. Over TLS this runs the handshake too, and what
/// the handshake (or an alert) has to send is written before returning.
/// An error is the close it calls for.
#[inline]
pub(crate) fn read(
    table: &SwitchTable,
    idx: usize,
    stream: &Transport,
    recv: &mut RecvBuffer,
    want: usize,
) -> Result<ReadOutcome, CloseReason> {
    match stream {
        Transport::Tcp(tcp) => recv
            .fill_from(tcp, want)
            .map_err(|e| CloseReason::ReadFailed(e.to_string())),
        Transport::Tls(tls) => {
            let outcome = tls.read(recv, want);
            if tls.has_output() {
                let slot = &table.slots[idx];
                table.flush_pending(slot.id(idx), slot);
            }
            outcome
        }
    }
}

/// Waits up to `timeout` for readiness on `poll`; writes pending output of
/// every writable switch, and calls `ready` with the slot index of every
/// switch that has input (or an error or hang-up to read).
pub(crate) fn poll_ready(
    poll: &mut Poll,
    events: &mut Events,
    timeout: Option<Duration>,
    table: &SwitchTable,
    mut ready: impl FnMut(usize),
) -> io::Result<()> {
    if let Err(e) = poll.poll(events, timeout) {
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    for ev in events.iter() {
        if ev.token() == WAKER {
            continue;
        }
        let idx = ev.token().0;
        let Some(slot) = table.slots.get(idx) else {
            continue;
        };
        if ev.is_writable() {
            table.flush_pending(slot.id(idx), slot);
        }
        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
            ready(idx);
        }
    }
    Ok(())
}

/// Shuts a socket down both ways, so that whoever serves it reads EOF.
pub(crate) fn shut(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
}

fn token(id: SwitchId) -> Token {
    Token(id.index())
}

impl SwitchTable {
    /// Appends `bytes` to `id`'s output and writes what the socket takes,
    /// with one `write` call when nothing is pending (Beacon Alg. 2).
    pub fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        let slot = self.get(id).ok_or(SendError::Gone)?;
        if bytes.is_empty() {
            return Ok(());
        }
        let mut q = lock(&slot.out);
        let mut tally = Tally::default();
        let msgs = tally.count_all(bytes);
        let sent = self.write_locked(id, slot, &mut q, bytes, msgs);
        tally.drain_into(&self.sent_elsewhere.tx);
        sent
    }

    /// [`SwitchTable::send`] for a caller that already holds the output
    /// lock and has counted the messages of `bytes` by type: `msgs` of
    /// them (`bytes` holds only whole messages: what the runtime writes).
    pub fn write_locked(
        &self,
        id: SwitchId,
        slot: &Slot,
        q: &mut OutQueue,
        bytes: &[u8],
        msgs: u64,
    ) -> Result<(), SendError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let Some(stream) = q.stream.clone() else {
            return Err(SendError::Gone);
        };
        slot.counters.tx_msgs.fetch_add(msgs, Ordering::Relaxed);
        let written = match &*stream {
            Transport::Tcp(tcp) => write_plain(tcp, slot, &mut q.pending, bytes),
            Transport::Tls(tls) => tls.send(
                bytes,
                &mut q.pending,
                &slot.counters.tx_writes,
                &slot.counters.tx_bytes,
            ),
        };
        if written.is_err() {
            // The reader will see the error and close the switch.
            slot.kill(Kill::WriteFailed);
            stream.shutdown();
            return Err(SendError::Gone);
        }
        if q.pending.len() > self.max_output {
            tracing::warn!(
                switch = %id,
                dpid = %DatapathId(slot.dpid.load(Ordering::Relaxed)),
                backlog = q.pending.len(),
                limit = self.max_output,
                "switch is not reading; output backlog exceeds the limit, disconnecting"
            );
            q.pending = Vec::new();
            slot.kill(Kill::OutputOverflow);
            stream.shutdown();
            return Err(SendError::Overflow);
        }
        if !q.pending.is_empty() && !q.want_writable {
            q.want_writable = true;
            self.reregister(id, slot, &stream, true);
        }
        Ok(())
    }

    /// Writes what is pending: the socket became writable, or (TLS) the
    /// handshake or an alert has something to send.
    pub fn flush_pending(&self, id: SwitchId, slot: &Slot) {
        let mut q = lock(&slot.out);
        let Some(stream) = q.stream.clone() else {
            return;
        };
        if let Transport::Tls(tls) = &*stream {
            tls.take_sealed(&mut q.pending);
        }
        let tcp = stream.tcp();
        while !q.pending.is_empty() {
            slot.counters.tx_writes.fetch_add(1, Ordering::Relaxed);
            match (&*tcp).write(&q.pending) {
                Ok(0) => break,
                Ok(n) => {
                    slot.counters
                        .tx_bytes
                        .fetch_add(n as u64, Ordering::Relaxed);
                    q.pending.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    slot.kill(Kill::WriteFailed);
                    stream.shutdown();
                    q.pending.clear();
                    break;
                }
            }
        }
        let writable = !q.pending.is_empty();
        if writable != q.want_writable {
            q.want_writable = writable;
            // Release the memory of a large backlog.
            if !writable && q.pending.capacity() > 64 * 1024 {
                q.pending = Vec::new();
            }
            self.reregister(id, slot, &stream, writable);
        }
    }

    fn reregister(&self, id: SwitchId, slot: &Slot, stream: &Transport, writable: bool) {
        let poller = slot.registered_with.load(Ordering::Acquire);
        let Some(reg) = self.registries.get(poller) else {
            return;
        };
        let fd = stream.as_raw_fd();
        if let Err(e) = reg.reregister(&mut SourceFd(&fd), token(id), interest(writable)) {
            tracing::debug!(switch = %id, error = %e, "reregister failed");
        }
    }

    /// Registers a new connection's socket with poller `poller`.
    pub fn register(&self, id: SwitchId, stream: &Transport, poller: usize) -> io::Result<()> {
        let slot = &self.slots[id.index()];
        slot.registered_with.store(poller, Ordering::Release);
        let fd = stream.as_raw_fd();
        self.registries[poller].register(&mut SourceFd(&fd), token(id), Interest::READABLE)
    }

    /// Moves a socket's registration to another poller (dynamic
    /// re-partitioning).
    pub fn move_registration(&self, id: SwitchId, stream: &Transport, to: usize) {
        let slot = &self.slots[id.index()];
        let from = slot.registered_with.load(Ordering::Acquire);
        if from == to {
            return;
        }
        let fd = stream.as_raw_fd();
        let _ = self.registries[from].deregister(&mut SourceFd(&fd));
        let writable = lock(&slot.out).want_writable;
        slot.registered_with.store(to, Ordering::Release);
        if let Err(e) =
            self.registries[to].register(&mut SourceFd(&fd), token(id), interest(writable))
        {
            tracing::warn!(switch = %id, error = %e, "could not move switch to another worker");
        }
    }

    pub fn deregister(&self, id: SwitchId, stream: &Transport) {
        let slot = &self.slots[id.index()];
        let poller = slot.registered_with.load(Ordering::Acquire);
        let fd = stream.as_raw_fd();
        if let Some(reg) = self.registries.get(poller) {
            let _ = reg.deregister(&mut SourceFd(&fd));
        }
    }
}

/// Writes `bytes` to a plain TCP socket with one `write` when nothing is
/// pending (Beacon Alg. 2), and queues what it does not take; an error is
/// a failed socket.
#[inline]
fn write_plain(
    tcp: &TcpStream,
    slot: &Slot,
    pending: &mut Vec<u8>,
    bytes: &[u8],
) -> io::Result<()> {
    if !pending.is_empty() {
        pending.extend_from_slice(bytes);
        return Ok(());
    }
    slot.counters.tx_writes.fetch_add(1, Ordering::Relaxed);
    match (&*tcp).write(bytes) {
        Ok(n) => {
            slot.counters
                .tx_bytes
                .fetch_add(n as u64, Ordering::Relaxed);
            if n < bytes.len() {
                pending.extend_from_slice(&bytes[n..]);
            }
            Ok(())
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            pending.extend_from_slice(bytes);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn interest(writable: bool) -> Interest {
    if writable {
        Interest::READABLE | Interest::WRITABLE
    } else {
        Interest::READABLE
    }
}
