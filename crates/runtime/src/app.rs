//! The application API: what an application implements ([`App`]) and what
//! it is handed ([`SwitchCtx`], [`PacketInBatch`], [`Network`]).
//!
//! The model combines the three papers:
//! - **Beacon** (seed 002 §5.1): applications form an ordered pipeline;
//!   each sees an event after the ones before it, and may stop it
//!   ([`Flow::Stop`]) so later applications do not see it.
//! - **Maestro** (seed 000 §3.3): packet-ins arrive in *batches*, possibly
//!   from several switches; within a batch each switch's events are in
//!   arrival order.
//! - **McNettle** (seed 001 §4): each application may keep *switch-local*
//!   state ([`SwitchCtx::local`]) that it mutates without locks, because
//!   only one worker serves a switch at a time; *network state* shared by
//!   all switches is the application's own field, with whatever
//!   synchronisation it chooses; background threads and timers send to any
//!   switch through [`Network`].
//!
//! Replies to the switch an event came from are appended to that switch's
//! staged output ([`SwitchCtx::out`]) and written with one system call per
//! switch when the batch is flushed.

use crate::switch::{SendError, SwitchId, SwitchInfo, SwitchTable};
use baton_openflow::neutral::PacketIn;
use baton_openflow::{DatapathId, Version, Xid};
use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Whether later applications in the pipeline see an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Pass the event on.
    Continue,
    /// Consume it.
    Stop,
}

/// An application. Every method has a default that does nothing, so an
/// application overrides only what it handles.
///
/// One instance serves every switch and every worker thread at once, hence
/// `Send + Sync`: keep state that belongs to one switch in
/// [`SwitchCtx::set_local`], and state shared by switches behind the
/// synchronisation of your choice.
pub trait App: Send + Sync + 'static {
    /// A short name, used in logs and on the command line.
    fn name(&self) -> &str;

    /// Called once when the runtime starts, with a handle for background
    /// threads and timers.
    fn start(&self, _net: &Network) {}

    /// A switch finished its handshake. Set switch-local state here;
    /// messages appended to [`SwitchCtx::out`] are sent to it.
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}

    /// A switch disconnected. Its switch-local state is dropped after this.
    fn switch_down(&self, _sw: &SwitchInfo) {}

    /// A batch of PACKET_INs. Use [`PacketInBatch::for_each`] to visit the
    /// events that earlier applications did not stop.
    fn packet_in(&self, _batch: &mut PacketInBatch<'_>) {}

    /// Any other message from a switch after its handshake (PORT_STATUS,
    /// FLOW_REMOVED, ERROR, statistics replies, ...), as raw bytes of the
    /// negotiated version; decode with `baton_openflow::v10::decode` or
    /// `v13::decode`.
    fn message(&self, _sw: &mut SwitchCtx<'_>, _msg: &[u8]) -> Flow {
        Flow::Continue
    }
}

/// One switch, as a handler sees it while the switch's worker owns it.
pub struct SwitchCtx<'a> {
    pub(crate) info: SwitchInfo,
    pub(crate) out: &'a mut Vec<u8>,
    pub(crate) locals: &'a mut crate::conn::Locals,
    pub(crate) app: usize,
    pub(crate) xid: &'a mut u32,
    pub(crate) net: &'a Network,
}

impl<'a> SwitchCtx<'a> {
    /// Id, datapath id, version.
    pub fn info(&self) -> &SwitchInfo {
        &self.info
    }

    /// The runtime's id of this connection.
    pub fn id(&self) -> SwitchId {
        self.info.id
    }

    /// The switch's datapath id.
    pub fn dpid(&self) -> DatapathId {
        self.info.dpid
    }

    /// The negotiated OpenFlow version.
    pub fn version(&self) -> Version {
        self.info.version
    }

    /// This application's state for this switch, if set and of type `T`.
    /// No lock: only the worker serving the switch can reach it.
    pub fn local<T: Any + Send>(&mut self) -> Option<&mut T> {
        self.locals.get_mut(self.app)?.as_mut()?.downcast_mut()
    }

    /// Sets this application's state for this switch.
    pub fn set_local<T: Any + Send>(&mut self, value: T) {
        if let Some(slot) = self.locals.get_mut(self.app) {
            *slot = Some(Box::new(value));
        }
    }

    /// This application's state for this switch, created by `init` on
    /// first use.
    pub fn local_or_insert_with<T: Any + Send>(&mut self, init: impl FnOnce() -> T) -> &mut T {
        let app = self.app;
        let slot = &mut self.locals[app];
        if !slot.as_ref().is_some_and(|b| b.is::<T>()) {
            *slot = Some(Box::new(init()));
        }
        slot.as_mut()
            .and_then(|b| b.downcast_mut())
            .expect("just inserted a value of this type")
    }

    /// The switch's staged output: encode messages into it (for example
    /// with `baton_openflow::neutral::encode_flow_add`); they are written
    /// with the rest of the batch.
    pub fn out(&mut self) -> &mut Vec<u8> {
        self.out
    }

    /// A fresh transaction id for a message to this switch.
    pub fn xid(&mut self) -> Xid {
        *self.xid = self.xid.wrapping_add(1);
        Xid(*self.xid)
    }

    /// The whole network, to send to other switches.
    pub fn net(&self) -> &Network {
        self.net
    }
}

/// A PACKET_IN with its switch.
pub struct PacketInEvent<'a> {
    /// The parsed message (a borrowing view; no copy was made).
    pub packet_in: PacketIn<'a>,
    /// The switch it came from.
    pub switch: SwitchCtx<'a>,
}

/// Where an event of a batch lives: which held connection, which bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventRef {
    pub held: u32,
    pub at: u32,
    pub len: u32,
    pub stopped: bool,
    pub answered: bool,
}

/// A batch of PACKET_INs handed to one application.
pub struct PacketInBatch<'a> {
    pub(crate) conns: &'a mut [crate::engine::Held],
    pub(crate) events: &'a mut [EventRef],
    pub(crate) app: usize,
    pub(crate) net: &'a Network,
}

impl PacketInBatch<'_> {
    /// Events not stopped by an earlier application.
    pub fn len(&self) -> usize {
        self.events.iter().filter(|e| !e.stopped).count()
    }

    /// True when every event was stopped earlier.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` for each live event, in arrival order per switch;
    /// [`Flow::Stop`] hides that event from later applications.
    pub fn for_each(&mut self, mut f: impl FnMut(&mut PacketInEvent<'_>) -> Flow) {
        for ev in self.events.iter_mut() {
            if ev.stopped {
                continue;
            }
            let Some(conn) = self
                .conns
                .get_mut(ev.held as usize)
                .and_then(|h| h.live_conn())
            else {
                continue;
            };
            let info = SwitchInfo {
                id: conn.id,
                dpid: conn.dpid,
                version: conn.version,
                peer: Some(conn.peer),
            };
            let (msg, out, locals, xid) = conn.parts(ev.at, ev.len);
            // The runtime validated every packet-in when it formed the
            // batch; a failure here cannot happen, and skipping is safe.
            let Ok(packet_in) = PacketIn::parse(msg) else {
                continue;
            };
            let before = out.len();
            let mut event = PacketInEvent {
                packet_in,
                switch: SwitchCtx {
                    info,
                    out,
                    locals,
                    app: self.app,
                    xid,
                    net: self.net,
                },
            };
            if f(&mut event) == Flow::Stop {
                ev.stopped = true;
            }
            if event.switch.out.len() > before {
                ev.answered = true;
            }
        }
    }
}

/// A handle on the running network for background threads, timers and
/// handlers that address other switches. Cheap to clone.
#[derive(Clone)]
pub struct Network {
    pub(crate) table: Arc<SwitchTable>,
    pub(crate) running: Arc<AtomicBool>,
}

impl Network {
    /// Sends encoded messages to a switch now (one `write`, or queued if
    /// the socket is full).
    pub fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        self.table.send(id, bytes)
    }

    /// Every switch that finished its handshake.
    pub fn switches(&self) -> Vec<SwitchInfo> {
        self.table.switches()
    }

    /// The switch with this datapath id, if connected.
    pub fn find(&self, dpid: DatapathId) -> Option<SwitchInfo> {
        self.switches().into_iter().find(|s| s.dpid == dpid)
    }

    /// Gives a switch `weight` service chances per round (weighted max-min
    /// fairness, seed 000 §3.2.1). Returns false for a stale id.
    pub fn set_weight(&self, id: SwitchId, weight: u32) -> bool {
        match self.table.get(id) {
            Some(slot) => {
                slot.weight.store(weight.max(1), Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// True until the runtime stops; background loops should check it.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Runs `f` on a background thread (McNettle's asynchronous threads).
    pub fn spawn(&self, name: &str, f: impl FnOnce(Network) + Send + 'static) {
        let net = self.clone();
        if let Err(e) = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || f(net))
        {
            tracing::error!(error = %e, "could not start background thread {name}");
        }
    }

    /// Calls `f` every `period` until the runtime stops.
    pub fn every(
        &self,
        name: &str,
        period: Duration,
        mut f: impl FnMut(&Network) + Send + 'static,
    ) {
        self.spawn(name, move |net| {
            while net.is_running() {
                std::thread::park_timeout(period);
                if net.is_running() {
                    f(&net);
                }
            }
        });
    }
}
