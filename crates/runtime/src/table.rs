//! The table of connected switches and the per-switch state every thread
//! may touch: the task state that decides who serves a switch, counters,
//! the kill requests, and the time its session next needs service. The
//! sockets are not here: `io.rs` ([`crate::io::Sockets`]) owns them, by
//! the same slot index, and updates the write counters and kill requests
//! of this table.
//!
//! A switch's [`Task`] (its [`Connection`]) is owned by exactly
//! one thread at a time. The [`TaskState`] machine enforces that: a worker
//! may take the task only by moving the state from `Queued` (or `Idle`,
//! for the round-robin and shared-queue schedulers) to `Running`, and puts
//! it back before leaving `Running`. The `Mutex` around it is therefore
//! never contended; it exists to move the box between threads without
//! `unsafe`.
//! (Output is different: any thread may send to any switch, so the
//! output queue, in `io.rs`, has a real lock.)

use crate::conn::Connection;
use crate::mastership::{Mastership, SharedFence};
use crate::stats::{SwitchSnapshot, TypeCounters};
use crate::switch::{SwitchId, SwitchInfo};
use crate::sync::lock;
use baton_openflow::neutral::PortDesc;
use baton_openflow::{DatapathId, Version};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
    /// Being served by one thread, which owns the task.
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

/// A switch's connection: what the serving thread owns (its socket is
/// found by slot index in [`crate::io::Sockets`]).
pub(crate) struct Task {
    pub conn: Box<Connection>,
}

/// Per-switch counters, updated once per batch rather than per message.
#[derive(Debug, Default)]
pub(crate) struct SwitchCounters {
    /// OpenFlow messages received.
    pub rx_msgs: AtomicU64,
    /// OpenFlow messages sent.
    pub tx_msgs: AtomicU64,
    /// Bytes handed to the socket.
    pub tx_bytes: AtomicU64,
    /// `write` system calls.
    pub tx_writes: AtomicU64,
}

/// Why another thread wants a switch closed ([`Slot::kill`]): a request
/// across threads, which `io.rs` turns into the close's reason
/// (`Sockets::killed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kill {
    None = 0,
    Replaced = 1,
    OutputOverflow = 2,
    WriteFailed = 3,
}

impl Kill {
    fn from_u8(v: u8) -> Kill {
        match v {
            1 => Kill::Replaced,
            2 => Kill::OutputOverflow,
            3 => Kill::WriteFailed,
            _ => Kill::None,
        }
    }
}

/// One slot of the switch table.
pub(crate) struct Slot {
    pub generation: AtomicU32,
    pub state: AtomicU8,
    pub task: Mutex<Option<Task>>,
    /// Worker whose run queue this switch joins when it becomes ready.
    pub home: AtomicUsize,
    /// Service chances per round (weighted max-min fairness).
    pub weight: AtomicU32,
    /// The round of the switch's latest service (fair scheduler).
    pub round: AtomicU64,
    /// Bytes served beyond its quanta, paid back a quantum per service
    /// chance before it is served again (fair scheduler; see
    /// `Policy::service`).
    pub surplus: AtomicUsize,
    /// Datapath id once the handshake finished.
    pub dpid: AtomicU64,
    pub up: AtomicBool,
    pub version: AtomicU8,
    /// When (milliseconds on the controller's clock) the switch's session
    /// next needs service even without input (keepalive).
    pub wake_at_ms: AtomicU64,
    /// A [`Kill`] another thread asked for; the serving thread closes it.
    pub kill: AtomicU8,
    pub counters: SwitchCounters,
    /// What the operator sees that only the serving thread knows: the
    /// peer's address, when the connection was accepted (milliseconds on
    /// the controller's clock), and the ports as last described.
    pub peer: Mutex<Option<SocketAddr>>,
    pub accepted_ms: AtomicU64,
    pub ports: Mutex<Arc<[PortDesc]>>,
    /// Whether this instance serves the switch ([`Mastership`], as a
    /// `u8`), and the generation id of the role it was last given
    /// (`u64::MAX`: none yet).
    pub mastership: AtomicU8,
    pub role_generation: AtomicU64,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            generation: AtomicU32::new(0),
            state: AtomicU8::new(TaskState::Free as u8),
            task: Mutex::new(None),
            home: AtomicUsize::new(0),
            weight: AtomicU32::new(1),
            round: AtomicU64::new(0),
            surplus: AtomicUsize::new(0),
            dpid: AtomicU64::new(0),
            up: AtomicBool::new(false),
            version: AtomicU8::new(0),
            wake_at_ms: AtomicU64::new(u64::MAX),
            kill: AtomicU8::new(Kill::None as u8),
            counters: SwitchCounters::default(),
            peer: Mutex::new(None),
            accepted_ms: AtomicU64::new(0),
            mastership: AtomicU8::new(0),
            role_generation: AtomicU64::new(u64::MAX),
            ports: Mutex::new(Arc::from(Vec::new())),
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

    pub fn take_task(&self) -> Option<Task> {
        lock(&self.task).take()
    }

    pub fn put_task(&self, task: Task) {
        *lock(&self.task) = Some(task);
    }

    pub fn id(&self, index: usize) -> SwitchId {
        SwitchId::new(index as u32, self.generation.load(Ordering::Acquire))
    }

    pub fn weight(&self) -> u32 {
        self.weight.load(Ordering::Relaxed).max(1)
    }

    /// Whether this instance is the switch's master, slave, or
    /// standalone (a master past its fence still is one:
    /// [`SwitchTable::may_change`] says whether it may act).
    pub fn mastership(&self) -> Mastership {
        Mastership::from_u8(self.mastership.load(Ordering::Acquire))
    }

    /// Asks the serving thread to close the switch.
    pub fn kill(&self, why: Kill) {
        self.kill.store(why as u8, Ordering::Release);
    }

    /// The kill asked for, `Kill::None` if none.
    pub fn killed(&self) -> Kill {
        Kill::from_u8(self.kill.load(Ordering::Acquire))
    }
}

/// Everything about connected switches that threads share.
pub(crate) struct SwitchTable {
    pub slots: Box<[Slot]>,
    free: Mutex<Vec<u32>>,
    /// One past the highest slot index ever used (round-robin iterates
    /// up to here).
    pub high_water: AtomicUsize,
    /// Messages sent from outside the workers' batches (applications'
    /// timers and threads, the operator, the handshake's HELLO), by type.
    pub sent_elsewhere: TypeCounters,
    /// What a newly connected switch is: [`Mastership::Standalone`], or
    /// [`Mastership::Slave`] in a cluster until it is decided.
    initial: Mastership,
    /// Until when a master may act ([`crate::mastership::Fence`]).
    pub fence: SharedFence,
}

impl SwitchTable {
    pub fn new(max_switches: usize, initial: Mastership) -> SwitchTable {
        let max = max_switches.clamp(1, u32::MAX as usize / 2);
        let slots: Box<[Slot]> = (0..max).map(|_| Slot::new()).collect();
        for s in slots.iter() {
            s.mastership.store(initial.to_u8(), Ordering::Relaxed);
        }
        SwitchTable {
            initial,
            slots,
            free: Mutex::new((0..max as u32).rev().collect()),
            high_water: AtomicUsize::new(0),
            sent_elsewhere: TypeCounters::default(),
            fence: SharedFence::open(),
        }
    }

    /// Whether what changes switch `slot` may be sent to it now: not to a
    /// slave's, nor to a master's once its fence has passed.
    pub fn may_change(&self, slot: &Slot) -> bool {
        match slot.mastership() {
            Mastership::Standalone => true,
            Mastership::Slave => false,
            Mastership::Master => self.fence.holds(),
        }
    }

    /// Each connected switch's counters.
    pub fn snapshots(&self) -> Vec<SwitchSnapshot> {
        self.used()
            .filter(|(_, s)| s.state() != TaskState::Free)
            .map(|(i, s)| {
                let c = &s.counters;
                SwitchSnapshot {
                    id: s.id(i),
                    dpid: DatapathId(s.dpid.load(Ordering::Relaxed)),
                    rx_msgs: c.rx_msgs.load(Ordering::Relaxed),
                    tx_bytes: c.tx_bytes.load(Ordering::Relaxed),
                    tx_writes: c.tx_writes.load(Ordering::Relaxed),
                    weight: s.weight(),
                }
            })
            .collect()
    }

    /// One past the highest slot index ever used.
    pub fn high_water(&self) -> usize {
        self.high_water
            .load(Ordering::Acquire)
            .min(self.slots.len())
    }

    /// Slots up to the high-water mark, with their indices.
    pub fn used(&self) -> impl Iterator<Item = (usize, &Slot)> {
        self.slots[..self.high_water()].iter().enumerate()
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
        slot.kill(Kill::None);
        slot.dpid.store(0, Ordering::Release);
        slot.wake_at_ms.store(u64::MAX, Ordering::Release);
        slot.weight.store(1, Ordering::Release);
        slot.surplus.store(0, Ordering::Relaxed);
        slot.mastership
            .store(self.initial.to_u8(), Ordering::Release);
        slot.role_generation.store(u64::MAX, Ordering::Release);
        *lock(&slot.peer) = None;
        *lock(&slot.ports) = Arc::from(Vec::new());
        let c = &slot.counters;
        for counter in [&c.rx_msgs, &c.tx_msgs, &c.tx_bytes, &c.tx_writes] {
            counter.store(0, Ordering::Relaxed);
        }
        slot.state.store(TaskState::Free as u8, Ordering::Release);
        lock(&self.free).push(idx as u32);
    }

    /// The slot of `id`, if `id` is still current.
    pub fn get(&self, id: SwitchId) -> Option<&Slot> {
        let slot = self.slots.get(id.index())?;
        (slot.generation.load(Ordering::Acquire) == id.generation()
            && slot.state() != TaskState::Free)
            .then_some(slot)
    }

    /// Information about every switch that finished its handshake and
    /// that this instance serves (all of them, unless it is a cluster's
    /// slave for some).
    pub fn switches(&self) -> Vec<SwitchInfo> {
        self.used()
            .filter_map(|(i, s)| {
                if !s.up.load(Ordering::Acquire)
                    || s.state() == TaskState::Free
                    || !s.mastership().serves()
                {
                    return None;
                }
                Some(SwitchInfo {
                    id: s.id(i),
                    dpid: DatapathId(s.dpid.load(Ordering::Acquire)),
                    version: Version::from_wire(s.version.load(Ordering::Acquire))?,
                    peer: *lock(&s.peer),
                })
            })
            .collect()
    }
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
        let t = SwitchTable::new(4, Mastership::Standalone);
        let i = t.allocate().unwrap();
        t.slots[i]
            .state
            .store(TaskState::Idle as u8, Ordering::Release);
        let id = t.slots[i].id(i);
        assert!(t.get(id).is_some());
        t.release(i);
        assert!(t.get(id).is_none());
    }

    #[test]
    fn kills_carry_their_reason() {
        let s = Slot::new();
        assert_eq!(s.killed(), Kill::None);
        s.kill(Kill::Replaced);
        assert_eq!(s.killed(), Kill::Replaced);
        s.kill(Kill::OutputOverflow);
        assert_eq!(s.killed(), Kill::OutputOverflow);
        s.kill(Kill::WriteFailed);
        assert_eq!(s.killed(), Kill::WriteFailed);
    }
}
