//! The network as applications address it: switch ids and what is known
//! about each switch ([`SwitchInfo`]), and the [`Network`] handle for
//! sending to any switch, listing switches, the time, background threads
//! and timers.
//!
//! A [`Network`] is backed by the running controller or, in tests, by the
//! in-memory harness of [`crate::testing`]; applications cannot tell
//! which, so the same code runs in both.

use crate::sync::lock;
use baton_openflow::{DatapathId, Version};
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
}

impl fmt::Display for SwitchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}", self.index, self.generation)
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

/// Why a message could not be sent to a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The switch disconnected (or the id is stale).
    Gone,
    /// Its unsent output exceeded the limit; it is being disconnected.
    Overflow,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::Gone => "switch is not connected",
            SendError::Overflow => "switch's output backlog exceeded the limit",
        })
    }
}

impl std::error::Error for SendError {}

/// What a [`Network`] is backed by: the running controller, or the test
/// harness.
pub(crate) trait Fabric: Send + Sync + 'static {
    /// Sends encoded messages to a switch now.
    fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError>;
    /// Every switch that finished its handshake.
    fn switches(&self) -> Vec<SwitchInfo>;
    /// Sets a switch's service chances per round; false for a stale id.
    fn set_weight(&self, id: SwitchId, weight: u32) -> bool;
    /// True until the controller stops.
    fn is_running(&self) -> bool;
    /// The current time (the harness's is simulated).
    fn now(&self) -> Instant;
    /// The timers registered with [`Network::every`].
    fn timers(&self) -> &Timers;
}

/// A handle on the running network for background threads, timers and
/// handlers that address other switches. Cheap to clone.
#[derive(Clone)]
pub struct Network {
    fabric: Arc<dyn Fabric>,
}

impl Network {
    pub(crate) fn new(fabric: Arc<dyn Fabric>) -> Network {
        Network { fabric }
    }

    /// Sends encoded messages to a switch now (one `write`, or queued if
    /// the socket is full).
    pub fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        self.fabric.send(id, bytes)
    }

    /// Every switch that finished its handshake.
    pub fn switches(&self) -> Vec<SwitchInfo> {
        self.fabric.switches()
    }

    /// The switch with this datapath id, if connected.
    pub fn find(&self, dpid: DatapathId) -> Option<SwitchInfo> {
        self.switches().into_iter().find(|s| s.dpid == dpid)
    }

    /// Gives a switch `weight` service chances per round (weighted max-min
    /// fairness, Maestro §3.2.1). Returns false for a stale id.
    pub fn set_weight(&self, id: SwitchId, weight: u32) -> bool {
        self.fabric.set_weight(id, weight)
    }

    /// True until the runtime stops; background loops should check it.
    pub fn is_running(&self) -> bool {
        self.fabric.is_running()
    }

    /// The current time: the clock applications should age their state
    /// with (simulated under the test harness).
    pub fn now(&self) -> Instant {
        self.fabric.now()
    }

    /// Runs `f` on a background thread of its own (McNettle's
    /// asynchronous threads), for long-running work.
    pub fn spawn(&self, name: &str, f: impl FnOnce(Network) + Send + 'static) {
        let net = self.clone();
        if let Err(e) = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || f(net))
        {
            tracing::error!(error = %e, "could not start background thread {name}");
        }
    }

    /// Calls `f` every `period` until the runtime stops, on the runtime's
    /// timer thread (in the test harness, when simulated time passes).
    /// Keep `f` short: timers share one thread.
    pub fn every(&self, name: &str, period: Duration, f: impl FnMut(&Network) + Send + 'static) {
        let period = period.max(Duration::from_millis(1));
        self.fabric.timers().add(Timer {
            name: name.to_string(),
            period,
            next: self.now() + period,
            run: Box::new(f),
        });
    }
}

/// A periodic callback.
pub(crate) struct Timer {
    name: String,
    period: Duration,
    next: Instant,
    run: Box<dyn FnMut(&Network) + Send>,
}

/// The timers of one controller or harness.
#[derive(Default)]
pub(crate) struct Timers {
    list: Mutex<Vec<Timer>>,
}

impl Timers {
    fn add(&self, t: Timer) {
        lock(&self.list).push(t);
    }

    /// When the next timer is due.
    pub fn next_due(&self) -> Option<Instant> {
        lock(&self.list).iter().map(|t| t.next).min()
    }

    /// Runs every timer due at `now`, once each, outside the lock (a timer
    /// may add timers).
    pub fn run_due(&self, now: Instant, net: &Network) {
        let mut due: Vec<Timer> = {
            let mut list = lock(&self.list);
            let (due, later) = std::mem::take(&mut *list)
                .into_iter()
                .partition(|t| t.next <= now);
            *list = later;
            due
        };
        for t in &mut due {
            tracing::trace!(timer = %t.name, "timer fires");
            (t.run)(net);
            // Catch up without firing again for each missed period.
            while t.next <= now {
                t.next += t.period;
            }
        }
        lock(&self.list).extend(due);
    }
}
