//! The table of connected switches and the per-switch state every thread
//! may touch: the task state that decides who serves a switch, the output
//! queue, counters and timestamps.
//!
//! A switch's *connection* ([`Conn`]: read buffer, handshake, application
//! state) is owned by exactly one thread at a time. The [`TaskState`]
//! machine enforces that: a worker may take the connection only by moving
//! the state from `Queued` (or `Idle`, for the round-robin scheduler) to
//! `Running`, and puts it back before leaving `Running`. The `Mutex` around
//! it is therefore never contended; it exists to move the box between
//! threads without `unsafe`.
//!
//! Output is different: any thread may send to any switch, so the output
//! queue has a real lock, held only to append bytes and make one `write`.

use crate::conn::Conn;
use baton_openflow::{DatapathId, Version};
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// Identifies one connection: a slot index and the slot's generation, so
/// a stale id never reaches a newer switch in the same slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchId {
    index: u32,
    generation: u32,
}

impl SwitchId {
    pub(crate) fn new(index: u32, generation: u32) -> SwitchId {
        SwitchId { index, generation }
    }

    /// The slot index (dense, reused after disconnects).
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// The slot's generation when this connection was made.
    pub(crate) fn generation(self) -> u32 {
        self.generation
    }

    /// The mio token of this switch's socket.
    pub(crate) fn token(self) -> Token {
        Token(self.index as usize)
    }
}

impl std::fmt::Display for SwitchId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}.{}", self.index, self.generation)
    }
}

/// Who may serve a switch right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum TaskState {
    /// No connection in this slot.
    Free = 0,
    /// Connected, nothing pending that we know of; a readiness event
    /// queues it.
    Idle = 1,
    /// In exactly one run queue.
    Queued = 2,
    /// Being served by one thread, which owns the connection.
    Running = 3,
    /// Being served, and new input arrived meanwhile: re-queue it after.
    Notified = 4,
}

impl TaskState {
    fn from_u8(v: u8) -> TaskState {
        match v {
            1 => TaskState::Idle,
            2 => TaskState::Queued,
            3 => TaskState::Running,
            4 => TaskState::Notified,
            _ => TaskState::Free,
        }
    }
}

/// Per-switch counters, updated once per batch rather than per message.
#[derive(Debug, Default)]
pub struct SwitchCounters {
    /// OpenFlow messages received.
    pub rx_msgs: AtomicU64,
    /// PACKET_INs received.
    pub packet_ins: AtomicU64,
    /// PACKET_INs for which the pipeline sent something back.
    pub answered: AtomicU64,
    /// Bytes handed to the socket.
    pub tx_bytes: AtomicU64,
    /// `write` system calls.
    pub tx_writes: AtomicU64,
}

/// Unsent output of one switch.
#[derive(Debug, Default)]
pub(crate) struct OutQueue {
    pub stream: Option<Arc<TcpStream>>,
    /// Bytes the socket did not accept yet.
    pub pending: Vec<u8>,
    /// WRITABLE interest is registered.
    pub want_writable: bool,
}

/// One slot of the switch table.
pub(crate) struct Slot {
    pub generation: AtomicU32,
    pub state: AtomicU8,
    pub conn: Mutex<Option<Box<Conn>>>,
    pub out: Mutex<OutQueue>,
    /// Worker whose run queue this switch joins when it becomes ready.
    pub home: AtomicUsize,
    /// Poller (worker or reader thread) whose epoll holds the socket.
    pub registered_with: AtomicUsize,
    /// Service chances per round (weighted max-min fairness).
    pub weight: AtomicU32,
    /// The round of the switch's latest service (fair scheduler).
    pub round: AtomicU64,
    /// Datapath id once FEATURES_REPLY arrived.
    pub dpid: AtomicU64,
    pub up: AtomicBool,
    pub version: AtomicU8,
    /// Milliseconds since the runtime's epoch when the switch last sent
    /// anything.
    pub last_rx_ms: AtomicU64,
    /// When we last sent an ECHO_REQUEST that is still unanswered (0: none).
    pub echo_sent_ms: AtomicU64,
    /// Set by whoever wants the connection closed (overflow, timeout,
    /// replacement); the serving thread closes it.
    pub kill: AtomicBool,
    pub counters: SwitchCounters,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            generation: AtomicU32::new(0),
            state: AtomicU8::new(TaskState::Free as u8),
            conn: Mutex::new(None),
            out: Mutex::new(OutQueue::default()),
            home: AtomicUsize::new(0),
            registered_with: AtomicUsize::new(0),
            weight: AtomicU32::new(1),
            round: AtomicU64::new(0),
            dpid: AtomicU64::new(0),
            up: AtomicBool::new(false),
            version: AtomicU8::new(0),
            last_rx_ms: AtomicU64::new(0),
            echo_sent_ms: AtomicU64::new(0),
            kill: AtomicBool::new(false),
            counters: SwitchCounters::default(),
        }
    }

    pub fn state(&self) -> TaskState {
        TaskState::from_u8(self.state.load(Ordering::Acquire))
    }

    /// Moves the state `from` -> `to`; false if it was not `from`.
    pub fn transition(&self, from: TaskState, to: TaskState) -> bool {
        self.state
            .compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// A readiness event arrived. Returns true when the caller must put the
    /// switch in a run queue (it went Idle -> Queued).
    pub fn notify(&self) -> bool {
        loop {
            match self.state() {
                TaskState::Idle => {
                    if self.transition(TaskState::Idle, TaskState::Queued) {
                        return true;
                    }
                }
                TaskState::Running => {
                    if self.transition(TaskState::Running, TaskState::Notified) {
                        return false;
                    }
                }
                TaskState::Free | TaskState::Queued | TaskState::Notified => return false,
            }
        }
    }

    /// The serving thread is done. `more` says it knows input is pending.
    /// Returns true when the caller must re-queue the switch (the state is
    /// then `Queued`); otherwise the switch is `Idle`.
    pub fn finish_service(&self, more: bool) -> bool {
        if more {
            self.state.store(TaskState::Queued as u8, Ordering::Release);
            return true;
        }
        if self.transition(TaskState::Running, TaskState::Idle) {
            return false;
        }
        // Notified while running.
        self.state.store(TaskState::Queued as u8, Ordering::Release);
        true
    }

    pub fn take_conn(&self) -> Option<Box<Conn>> {
        lock(&self.conn).take()
    }

    pub fn put_conn(&self, conn: Box<Conn>) {
        *lock(&self.conn) = Some(conn);
    }

    pub fn id(&self, index: usize) -> SwitchId {
        SwitchId::new(index as u32, self.generation.load(Ordering::Acquire))
    }

    pub fn weight(&self) -> u32 {
        self.weight.load(Ordering::Relaxed).max(1)
    }
}

/// Locks a mutex, ignoring poisoning: a panicking application thread must
/// not take other switches down with it, and every structure behind these
/// locks stays consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a write to a switch failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The switch disconnected (or the id is stale).
    Gone,
    /// Its unsent output exceeded the limit; it is being disconnected.
    Overflow,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SendError::Gone => "switch is not connected",
            SendError::Overflow => "switch's output backlog exceeded the limit",
        })
    }
}

impl std::error::Error for SendError {}

/// Everything about connected switches that threads share.
pub(crate) struct SwitchTable {
    pub slots: Box<[Slot]>,
    free: Mutex<Vec<u32>>,
    /// One past the highest slot index ever used (round-robin iterates
    /// up to here).
    pub high_water: AtomicUsize,
    /// Pollers' registries, indexed by `Slot::registered_with`.
    pub registries: Vec<Registry>,
    pub max_output: usize,
    pub epoch: Instant,
}

impl SwitchTable {
    pub fn new(max_switches: usize, registries: Vec<Registry>, max_output: usize) -> SwitchTable {
        let max = max_switches.clamp(1, u32::MAX as usize / 2);
        SwitchTable {
            slots: (0..max).map(|_| Slot::new()).collect(),
            free: Mutex::new((0..max as u32).rev().collect()),
            high_water: AtomicUsize::new(0),
            registries,
            max_output,
            epoch: Instant::now(),
        }
    }

    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Takes a free slot for a new connection; `None` when full.
    pub fn allocate(&self) -> Option<usize> {
        let idx = lock(&self.free).pop()? as usize;
        self.high_water.fetch_max(idx + 1, Ordering::AcqRel);
        Some(idx)
    }

    /// Returns a slot whose connection has been closed.
    pub fn release(&self, idx: usize) {
        let slot = &self.slots[idx];
        slot.generation.fetch_add(1, Ordering::AcqRel);
        slot.up.store(false, Ordering::Release);
        slot.kill.store(false, Ordering::Release);
        slot.dpid.store(0, Ordering::Release);
        slot.echo_sent_ms.store(0, Ordering::Release);
        slot.weight.store(1, Ordering::Release);
        *lock(&slot.out) = OutQueue::default();
        slot.state.store(TaskState::Free as u8, Ordering::Release);
        lock(&self.free).push(idx as u32);
    }

    /// The slot of `id`, if `id` is still current.
    pub fn get(&self, id: SwitchId) -> Option<&Slot> {
        let slot = self.slots.get(id.index())?;
        (slot.generation.load(Ordering::Acquire) == id.generation
            && slot.state() != TaskState::Free)
            .then_some(slot)
    }

    /// Appends `bytes` to `id`'s output and writes what the socket takes,
    /// with one `write` call when nothing is pending (Beacon Alg. 2).
    pub fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        let slot = self.get(id).ok_or(SendError::Gone)?;
        self.send_slot(id, slot, bytes)
    }

    pub fn send_slot(&self, id: SwitchId, slot: &Slot, bytes: &[u8]) -> Result<(), SendError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut q = lock(&slot.out);
        self.write_locked(id, slot, &mut q, bytes)
    }

    /// [`SwitchTable::send_slot`] for a caller that already holds the
    /// output lock.
    pub fn write_locked(
        &self,
        id: SwitchId,
        slot: &Slot,
        q: &mut OutQueue,
        bytes: &[u8],
    ) -> Result<(), SendError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let Some(stream) = q.stream.clone() else {
            return Err(SendError::Gone);
        };
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
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    q.pending.extend_from_slice(bytes);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    q.pending.extend_from_slice(bytes);
                }
                Err(_) => {
                    // The reader will see the error and close the switch.
                    let _ = stream.shutdown(Shutdown::Both);
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
            slot.kill.store(true, Ordering::Release);
            let _ = stream.shutdown(Shutdown::Both);
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
                    let _ = stream.shutdown(Shutdown::Both);
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
        let interest = if writable {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        let fd = stream.as_raw_fd();
        if let Err(e) = reg.reregister(&mut SourceFd(&fd), id.token(), interest) {
            tracing::debug!(switch = %id, error = %e, "reregister failed");
        }
    }

    /// Registers a new connection's socket with poller `poller`.
    pub fn register(&self, id: SwitchId, stream: &TcpStream, poller: usize) -> io::Result<()> {
        let slot = &self.slots[id.index()];
        slot.registered_with.store(poller, Ordering::Release);
        let fd = stream.as_raw_fd();
        self.registries[poller].register(&mut SourceFd(&fd), id.token(), Interest::READABLE)
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
        let interest = if writable {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        slot.registered_with.store(to, Ordering::Release);
        if let Err(e) = self.registries[to].register(&mut SourceFd(&fd), id.token(), interest) {
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

    /// Information about every switch that finished its handshake.
    pub fn switches(&self) -> Vec<SwitchInfo> {
        let hw = self
            .high_water
            .load(Ordering::Acquire)
            .min(self.slots.len());
        (0..hw)
            .filter_map(|i| {
                let s = &self.slots[i];
                if !s.up.load(Ordering::Acquire) || s.state() == TaskState::Free {
                    return None;
                }
                Some(SwitchInfo {
                    id: s.id(i),
                    dpid: DatapathId(s.dpid.load(Ordering::Acquire)),
                    version: Version::from_wire(s.version.load(Ordering::Acquire))?,
                    peer: None,
                })
            })
            .collect()
    }
}

/// What applications know about a connected switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchInfo {
    /// The runtime's id of this connection.
    pub id: SwitchId,
    /// Its datapath id.
    pub dpid: DatapathId,
    /// The negotiated version.
    pub version: Version,
    /// The remote address, where known.
    pub peer: Option<SocketAddr>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_machine_never_double_queues() {
        let s = Slot::new();
        s.state.store(TaskState::Idle as u8, Ordering::Release);
        assert!(s.notify()); // Idle -> Queued: caller queues it
        assert!(!s.notify()); // already queued
        assert!(s.transition(TaskState::Queued, TaskState::Running));
        assert!(!s.notify()); // Running -> Notified
        assert_eq!(s.state(), TaskState::Notified);
        assert!(s.finish_service(false)); // must re-queue
        assert_eq!(s.state(), TaskState::Queued);
        assert!(s.transition(TaskState::Queued, TaskState::Running));
        assert!(!s.finish_service(false));
        assert_eq!(s.state(), TaskState::Idle);
        assert!(s.transition(TaskState::Idle, TaskState::Running));
        assert!(s.finish_service(true));
        assert_eq!(s.state(), TaskState::Queued);
    }

    #[test]
    fn stale_ids_are_rejected() {
        let t = SwitchTable::new(4, Vec::new(), 1024);
        let i = t.allocate().unwrap();
        t.slots[i]
            .state
            .store(TaskState::Idle as u8, Ordering::Release);
        let id = t.slots[i].id(i);
        assert!(t.get(id).is_some());
        t.release(i);
        assert!(t.get(id).is_none());
        assert_eq!(t.send(id, b"x"), Err(SendError::Gone));
    }
}
