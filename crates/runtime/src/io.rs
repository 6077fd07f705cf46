//! The sockets, readiness and clock, for every scheduler. [`Sockets`]
//! owns every switch's socket, indexed like the switch table (by slot):
//! its [`Transport`], its unsent output ([`OutQueue`]), which poller's
//! epoll holds it, the pollers' registries and the output limit. It reads
//! a switch's socket into its receive buffer, writes output with one
//! `write` when nothing is pending (Beacon Alg. 2) and waits for
//! writability otherwise, and registers, moves and closes sockets.
//! [`poll_ready`] turns epoll events into "this switch is ready"; [`Clock`]
//! is the controller's clock.
//!
//! What goes wrong with a socket is a [`TransportError`], io's own type:
//! [`Sockets::read`] returns it, and a write that fails (on any thread)
//! is kept here for the serving thread, which asks [`Sockets::killed`].
//! The session's reasons are another type; `closed.rs` joins the two.
//!
//! A switch's socket is a [`Transport`] (`io/transport.rs`): plain TCP,
//! or TLS over TCP. Both go through [`Sockets`]; for TLS, reading also
//! runs the handshake, whose output is written like any other, and the
//! bytes waiting for writability are ciphertext.
//!
//! The switch table (`table.rs`) knows nothing of sockets: it keeps who
//! serves a switch, its counters and the kill requests, which the methods
//! here update (bytes written, a failed write). A switch's transport is
//! found by its slot index: the serving thread reads through it without a
//! lock (an `arc-swap` load, so a read costs what it cost when the
//! serving thread held the socket itself), writers hold the output lock.
//! The transport changes only under that lock, when a connection is
//! attached and when it is closed.
//!
//! The engine reaches a switch's socket only through [`SwitchIo`], which
//! [`Sockets`] implements over the real ones and the engine's tests in
//! memory. Nothing else in the runtime makes a system call on a switch's
//! socket.

pub(crate) mod transport;

use crate::closed::Closed;
use crate::framing::{ReadOutcome, RecvBuffer};
use crate::session::CloseReason;
use crate::stats::Tally;
use crate::switch::{SendError, SwitchId};
use crate::sync::lock;
use crate::table::{Kill, Slot, SwitchTable};
use arc_swap::ArcSwapOption;
use baton_openflow::DatapathId;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token};
use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};
pub(crate) use transport::{Transport, TransportError};

/// What the engine does to a switch's socket, by slot index: [`Sockets`]
/// over the real ones; the engine's tests over bytes in memory.
pub(crate) trait SwitchIo: Send + Sync {
    /// Reads at most `want` bytes of switch `idx`'s input into `recv`,
    /// with one system call; an error is the close it calls for.
    fn read(
        &self,
        idx: usize,
        recv: &mut RecvBuffer,
        want: usize,
    ) -> Result<ReadOutcome, TransportError>;

    /// Writes `bytes` (`msgs` whole messages) to switch `id` with one
    /// write, queueing what the socket does not take. Without `wait`,
    /// returns [`Written::Busy`] rather than wait for another thread
    /// writing to the same switch.
    fn write(&self, id: SwitchId, bytes: &[u8], msgs: u64, wait: bool) -> Written;

    /// Why another thread asked for switch `idx` to be closed, if it did.
    fn killed(&self, idx: usize) -> Option<Closed>;

    /// What the transport says of a switch whose session found it silent
    /// at `now` (an unfinished TLS handshake, output it stopped reading),
    /// if anything.
    fn why_silent(&self, idx: usize, now: Instant) -> Option<TransportError>;

    /// Whether switch `idx` is not to be read: its unsent output passed
    /// [`Sockets::pause_at`] and has not all been written since.
    fn output_paused(&self, idx: usize) -> bool;
}

/// The outcome of [`SwitchIo::write`].
#[derive(Debug)]
pub(crate) enum Written {
    /// Written, or queued for writability.
    Done,
    /// Another thread holds the switch's output; nothing was done.
    Busy,
    /// The switch must be closed, for this reason if known.
    Failed(Option<Closed>),
}

impl SwitchIo for Sockets {
    #[inline]
    fn read(
        &self,
        idx: usize,
        recv: &mut RecvBuffer,
        want: usize,
    ) -> Result<ReadOutcome, TransportError> {
        Sockets::read(self, idx, recv, want)
    }

    fn write(&self, id: SwitchId, bytes: &[u8], msgs: u64, wait: bool) -> Written {
        let queue = self.queue(id.index());
        let mut q = match queue.try_lock() {
            Ok(q) => q,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) if !wait => return Written::Busy,
            Err(TryLockError::WouldBlock) => lock(queue),
        };
        match self.write_locked(id, &mut q, bytes, msgs) {
            Ok(()) => Written::Done,
            Err(_) => Written::Failed(self.killed_locked(id.index(), &q)),
        }
    }

    fn killed(&self, idx: usize) -> Option<Closed> {
        Sockets::killed(self, idx)
    }

    fn why_silent(&self, idx: usize, now: Instant) -> Option<TransportError> {
        Sockets::why_silent(self, idx, now)
    }

    #[inline]
    fn output_paused(&self, idx: usize) -> bool {
        self.sockets[idx].paused.load(Ordering::Relaxed)
    }
}

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

/// Waits up to `timeout` for readiness on `poll`; writes pending output of
/// every writable switch, and calls `ready` with the slot index of every
/// switch that has input (or an error or hang-up to read).
pub(crate) fn poll_ready(
    poll: &mut Poll,
    events: &mut Events,
    timeout: Option<Duration>,
    sockets: &Sockets,
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
        if idx >= sockets.sockets.len() {
            continue;
        }
        // A switch whose reading was paused for its output is ready again
        // once that is written: its input's readiness edge came while it
        // was paused, and will not come again.
        let resumed = ev.is_writable() && sockets.flush_pending(idx);
        if resumed || ev.is_readable() || ev.is_read_closed() || ev.is_error() {
            ready(idx);
        }
    }
    Ok(())
}

/// Shuts a socket down both ways, so that whoever serves it reads EOF.
pub(crate) fn shut(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
}

fn token(idx: usize) -> Token {
    Token(idx)
}

/// Unsent output of one switch.
#[derive(Debug, Default)]
pub(crate) struct OutQueue {
    /// Bytes the socket did not accept yet (ciphertext, over TLS).
    pending: Vec<u8>,
    /// WRITABLE interest is registered.
    want_writable: bool,
    /// Why a write failed, for [`Kill::WriteFailed`].
    write_error: Option<io::ErrorKind>,
    /// Since when the switch is not read for its output
    /// ([`Socket::paused`]).
    paused_since: Option<Instant>,
}

/// One slot's socket.
#[derive(Default)]
struct Socket {
    /// `None` while the slot holds no connection; set and cleared with
    /// `out` held.
    transport: ArcSwapOption<Transport>,
    out: Mutex<OutQueue>,
    /// The switch is not read until its output is all written
    /// ([`Sockets::pause_at`]); set and cleared with `out` held, read
    /// without it by the thread serving the switch.
    paused: AtomicBool,
    /// Poller (worker or reader thread) whose epoll holds the socket.
    registered_with: AtomicUsize,
}

/// Every switch's socket, by slot index of the switch table.
pub(crate) struct Sockets {
    /// Counters, kill requests and generations, per slot.
    table: Arc<SwitchTable>,
    sockets: Box<[Socket]>,
    /// Pollers' registries, indexed by `Socket::registered_with`.
    registries: Vec<Registry>,
    /// A switch whose unsent output passes this is disconnected.
    max_output: usize,
    /// A switch whose unsent output reaches this is not read again until
    /// all of it is written ([`Sockets::pause_at`]).
    pause_at: usize,
}

impl Sockets {
    /// Sockets for every slot of `table`, polled by `registries`.
    pub fn new(table: Arc<SwitchTable>, registries: Vec<Registry>, max_output: usize) -> Sockets {
        Sockets {
            sockets: (0..table.slots.len()).map(|_| Socket::default()).collect(),
            table,
            registries,
            max_output,
            pause_at: Sockets::pause_at(max_output),
        }
    }

    /// The unsent output at which a switch stops being read: a quarter of
    /// `max_output` (1 MiB by default). A switch that reads its replies
    /// more slowly than it sends requests (cbench in throughput mode, a
    /// busy switch's CPU) is then held back by TCP's flow control, the
    /// way Netty's channels stop reading when not writable, instead of
    /// having its backlog grow to `max_output` and being disconnected;
    /// once it has read all of it, it is read again. One that stops
    /// reading altogether is closed when its session finds it silent
    /// ([`Sockets::why_silent`]). `max_output` stays the hard bound on
    /// what other threads send it meanwhile.
    fn pause_at(max_output: usize) -> usize {
        max_output / 4
    }

    /// How many pollers hold sockets.
    pub fn pollers(&self) -> usize {
        self.registries.len()
    }

    /// Slot `idx`'s output lock: what [`Sockets::write_locked`] needs held.
    pub fn queue(&self, idx: usize) -> &Mutex<OutQueue> {
        &self.sockets[idx].out
    }

    /// Gives slot `idx` its new connection's socket, before the slot is
    /// served; [`Sockets::register`] then has readiness reported.
    pub fn attach(&self, idx: usize, transport: Transport) {
        let socket = &self.sockets[idx];
        let mut q = lock(&socket.out);
        *q = OutQueue::default();
        socket.paused.store(false, Ordering::Relaxed);
        socket.transport.store(Some(Arc::new(transport)));
    }

    /// Registers switch `id`'s socket with poller `poller`.
    pub fn register(&self, id: SwitchId, poller: usize) -> io::Result<()> {
        let socket = &self.sockets[id.index()];
        let _q = lock(&socket.out);
        let t = socket.transport.load();
        let Some(t) = t.as_ref() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        socket.registered_with.store(poller, Ordering::Release);
        let fd = t.as_raw_fd();
        self.registries[poller].register(&mut SourceFd(&fd), token(id.index()), Interest::READABLE)
    }

    /// Reads at most `want` bytes from switch `idx`'s socket into its
    /// buffer with one system call. Over TLS this runs the handshake too,
    /// and what the handshake (or an alert) has to send is written before
    /// returning. An error is the close it calls for. Only the thread
    /// serving the switch reads.
    #[inline]
    pub fn read(
        &self,
        idx: usize,
        recv: &mut RecvBuffer,
        want: usize,
    ) -> Result<ReadOutcome, TransportError> {
        // No socket: the slot is being closed; nothing more will come.
        let transport = self.sockets[idx].transport.load();
        let Some(transport) = transport.as_deref() else {
            return Ok(ReadOutcome::Eof);
        };
        match transport {
            Transport::Tcp(tcp) => recv.fill_from(tcp, want).map_err(TransportError::Read),
            Transport::Tls(tls) => {
                let outcome = tls.read(recv, want);
                if tls.has_output() {
                    // The switch is being read, so a pause this ends needs no
                    // readiness: its service sees the pause is over.
                    self.flush_pending(idx);
                }
                outcome
            }
        }
    }

    /// Why switch `idx` is silent at `now`, when its session finds it so
    /// and the transport knows better: its TLS handshake has not
    /// finished, or it has not been read since its output stopped being
    /// written ([`Sockets::pause_at`]).
    pub fn why_silent(&self, idx: usize, now: Instant) -> Option<TransportError> {
        let socket = &self.sockets[idx];
        if let Some(since) = lock(&socket.out).paused_since {
            return Some(TransportError::NotReading {
                for_: now.saturating_duration_since(since),
            });
        }
        socket.transport.load().as_ref()?.unfinished(now)
    }

    /// Why another thread asked for switch `idx` to be closed, if it did
    /// (a write that failed, a backlog past the limit, a replacement).
    pub fn killed(&self, idx: usize) -> Option<Closed> {
        match self.table.slots[idx].killed() {
            Kill::None => None,
            _ => self.killed_locked(idx, &lock(self.queue(idx))),
        }
    }

    /// [`Sockets::killed`] for a caller that holds the output lock.
    pub fn killed_locked(&self, idx: usize, q: &OutQueue) -> Option<Closed> {
        Some(match self.table.slots[idx].killed() {
            Kill::None => return None,
            Kill::Replaced => CloseReason::Replaced.into(),
            Kill::OutputOverflow => TransportError::OutputOverflow.into(),
            Kill::WriteFailed => {
                TransportError::Write(q.write_error.unwrap_or(io::ErrorKind::Other)).into()
            }
        })
    }

    /// Shuts switch `idx`'s socket down both ways, so that whoever serves
    /// it reads EOF (another thread asked for it to close).
    pub fn shutdown(&self, idx: usize) {
        if let Some(t) = self.sockets[idx].transport.load().as_ref() {
            t.shutdown();
        }
    }

    /// Closes switch `idx`'s socket for good: unregisters it, shuts it
    /// down and drops it with its unsent output. By the thread that owns
    /// the switch, before its slot is released.
    pub fn close(&self, idx: usize) {
        let socket = &self.sockets[idx];
        let mut q = lock(&socket.out);
        if let Some(t) = socket.transport.swap(None) {
            let poller = socket.registered_with.load(Ordering::Acquire);
            if let Some(reg) = self.registries.get(poller) {
                let _ = reg.deregister(&mut SourceFd(&t.as_raw_fd()));
            }
            t.shutdown();
        }
        *q = OutQueue::default();
        socket.paused.store(false, Ordering::Relaxed);
    }

    /// Appends `bytes` to `id`'s output and writes what the socket takes,
    /// with one `write` call when nothing is pending (Beacon Alg. 2).
    pub fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        self.table.get(id).ok_or(SendError::Gone)?;
        if bytes.is_empty() {
            return Ok(());
        }
        let mut q = lock(self.queue(id.index()));
        let mut tally = Tally::default();
        let msgs = tally.count_all(bytes);
        let sent = self.write_locked(id, &mut q, bytes, msgs);
        tally.drain_into(&self.table.sent_elsewhere.tx);
        sent
    }

    /// [`Sockets::send`] for a caller that already holds the output lock
    /// ([`Sockets::queue`]) and has counted the messages of `bytes` by
    /// type: `msgs` of them (`bytes` holds only whole messages: what the
    /// runtime writes).
    pub fn write_locked(
        &self,
        id: SwitchId,
        q: &mut OutQueue,
        bytes: &[u8],
        msgs: u64,
    ) -> Result<(), SendError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let stream = self.sockets[id.index()].transport.load();
        let Some(stream) = stream.as_deref() else {
            return Err(SendError::Gone);
        };
        let slot = &self.table.slots[id.index()];
        // The point of sending: a master past its fence (or a slave) sends
        // nothing that changes the switch, whatever was decided before.
        let fenced;
        let (bytes, msgs) = if !self.table.may_change(slot)
            && crate::mastership::any_changes_state(bytes)
        {
            let mut kept = bytes.to_vec();
            let dropped = crate::mastership::keep_read_only(&mut kept, 0);
            tracing::debug!(switch = %id, dropped, "not master or past the lease: changes dropped at the socket");
            fenced = kept;
            (&fenced[..], msgs.saturating_sub(dropped as u64))
        } else {
            (bytes, msgs)
        };
        if bytes.is_empty() {
            return Ok(());
        }
        slot.counters.tx_msgs.fetch_add(msgs, Ordering::Relaxed);
        let written = match stream {
            Transport::Tcp(tcp) => write_plain(tcp, slot, &mut q.pending, bytes),
            Transport::Tls(tls) => tls.send(
                bytes,
                &mut q.pending,
                &slot.counters.tx_writes,
                &slot.counters.tx_bytes,
            ),
        };
        if let Err(e) = written {
            // The reader will see the error and close the switch.
            q.write_error = Some(e.kind());
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
        if q.pending.len() >= self.pause_at && q.paused_since.is_none() {
            q.paused_since = Some(Instant::now());
            self.sockets[id.index()]
                .paused
                .store(true, Ordering::Relaxed);
        }
        if !q.pending.is_empty() && !q.want_writable {
            q.want_writable = true;
            self.reregister(id.index(), stream, true);
        }
        Ok(())
    }

    /// Writes what switch `idx` has pending: the socket became writable,
    /// or (TLS) the handshake or an alert has something to send. True
    /// when that resumed the switch's reading ([`Sockets::pause_at`]): the
    /// caller makes it ready.
    pub fn flush_pending(&self, idx: usize) -> bool {
        let slot = &self.table.slots[idx];
        let mut q = lock(self.queue(idx));
        let stream = self.sockets[idx].transport.load();
        let Some(stream) = stream.as_deref() else {
            return false;
        };
        if let Transport::Tls(tls) = stream {
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
                Err(e) => {
                    q.write_error = Some(e.kind());
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
            self.reregister(idx, stream, writable);
        }
        if writable || q.paused_since.take().is_none() {
            return false;
        }
        self.sockets[idx].paused.store(false, Ordering::Relaxed);
        true
    }

    /// Changes the interest of switch `idx`'s registration; the caller
    /// holds its output lock.
    fn reregister(&self, idx: usize, stream: &Transport, writable: bool) {
        let poller = self.sockets[idx].registered_with.load(Ordering::Acquire);
        let Some(reg) = self.registries.get(poller) else {
            return;
        };
        let fd = stream.as_raw_fd();
        if let Err(e) = reg.reregister(&mut SourceFd(&fd), token(idx), interest(writable)) {
            let id = self.table.slots[idx].id(idx);
            tracing::debug!(switch = %id, error = %e, "reregister failed");
        }
    }

    /// Moves switch `id`'s registration to poller `to`, if it is not
    /// there (dynamic re-partitioning). Under the output lock, so that a
    /// writer's change of interest cannot go to the poller it leaves.
    pub fn move_registration(&self, id: SwitchId, to: usize) {
        let socket = &self.sockets[id.index()];
        let from = socket.registered_with.load(Ordering::Acquire);
        if from == to {
            return;
        }
        let q = lock(&socket.out);
        let stream = socket.transport.load();
        let Some(stream) = stream.as_deref() else {
            return;
        };
        let fd = stream.as_raw_fd();
        let _ = self.registries[from].deregister(&mut SourceFd(&fd));
        socket.registered_with.store(to, Ordering::Release);
        let interest = interest(q.want_writable);
        if let Err(e) =
            self.registries[to].register(&mut SourceFd(&fd), token(id.index()), interest)
        {
            tracing::warn!(switch = %id, error = %e, "could not move switch to another worker");
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
