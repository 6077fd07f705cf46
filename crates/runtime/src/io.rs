//! The sockets, readiness and clock, for every scheduler: reading a
//! switch's socket into its receive buffer, writing its output with one
//! `write` when nothing is pending (Beacon Alg. 2) and waiting for
//! writability otherwise, epoll registrations, turning epoll events into
//! "this switch is ready", and the controller's clock.
//!
//! Nothing else in the runtime makes a system call on a switch's socket.

use crate::framing::{ReadOutcome, RecvBuffer};
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

/// Reads at most `want` bytes from a switch's socket into its buffer with
/// one system call.
pub(crate) fn read(
    stream: &TcpStream,
    recv: &mut RecvBuffer,
    want: usize,
) -> io::Result<ReadOutcome> {
    recv.fill_from(stream, want)
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
        let sent = self.write_locked(id, slot, &mut q, bytes, &mut tally);
        tally.drain_into(&self.sent_elsewhere.tx);
        sent
    }

    /// [`SwitchTable::send`] for a caller that already holds the output
    /// lock; the messages are counted by type into `tally` (`bytes` holds
    /// only whole messages: what the runtime writes).
    pub fn write_locked(
        &self,
        id: SwitchId,
        slot: &Slot,
        q: &mut OutQueue,
        bytes: &[u8],
        tally: &mut Tally,
    ) -> Result<(), SendError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let Some(stream) = q.stream.clone() else {
            return Err(SendError::Gone);
        };
        slot.counters
            .tx_msgs
            .fetch_add(tally.count_all(bytes), Ordering::Relaxed);
        if q.pending.is_empty() {
            slot.counters.tx_writes.fetch_add(1, Ordering::Relaxed);
            match (&*stream).write(bytes) {
                Ok(n) => {
                    slot.counters
                        .tx_bytes
                        .fetch_add(n as u64, Ordering::Relaxed);
                    if n < bytes.len() {
                        q.pending.extend_from_slice(&bytes[n..]);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) =>
                {
                    q.pending.extend_from_slice(bytes);
                }
                Err(_) => {
                    // The reader will see the error and close the switch.
                    slot.kill(Kill::WriteFailed);
                    shut(&stream);
                    return Err(SendError::Gone);
                }
            }
        } else {
            q.pending.extend_from_slice(bytes);
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
            shut(&stream);
            return Err(SendError::Overflow);
        }
        if !q.pending.is_empty() && !q.want_writable {
            q.want_writable = true;
            self.reregister(id, slot, &stream, true);
        }
        Ok(())
    }

    /// The socket became writable: write what is pending.
    pub fn flush_pending(&self, id: SwitchId, slot: &Slot) {
        let mut q = lock(&slot.out);
        let Some(stream) = q.stream.clone() else {
            return;
        };
        while !q.pending.is_empty() {
            slot.counters.tx_writes.fetch_add(1, Ordering::Relaxed);
            match (&*stream).write(&q.pending) {
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
                    shut(&stream);
                    q.pending.clear();
                    break;
                }
            }
        }
        if q.pending.is_empty() && q.want_writable {
            q.want_writable = false;
            // Release the memory of a large backlog.
            if q.pending.capacity() > 64 * 1024 {
                q.pending = Vec::new();
            }
            self.reregister(id, slot, &stream, false);
        }
    }

    fn reregister(&self, id: SwitchId, slot: &Slot, stream: &TcpStream, writable: bool) {
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
    pub fn register(&self, id: SwitchId, stream: &TcpStream, poller: usize) -> io::Result<()> {
        let slot = &self.slots[id.index()];
        slot.registered_with.store(poller, Ordering::Release);
        let fd = stream.as_raw_fd();
        self.registries[poller].register(&mut SourceFd(&fd), token(id), Interest::READABLE)
    }

    /// Moves a socket's registration to another poller (dynamic
    /// re-partitioning).
    pub fn move_registration(&self, id: SwitchId, stream: &TcpStream, to: usize) {
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

    pub fn deregister(&self, id: SwitchId, stream: &TcpStream) {
        let slot = &self.slots[id.index()];
        let poller = slot.registered_with.load(Ordering::Acquire);
        let fd = stream.as_raw_fd();
        if let Some(reg) = self.registries.get(poller) {
            let _ = reg.deregister(&mut SourceFd(&fd));
        }
    }
}

fn interest(writable: bool) -> Interest {
    if writable {
        Interest::READABLE | Interest::WRITABLE
    } else {
        Interest::READABLE
    }
}
