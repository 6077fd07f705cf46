//! The [`Network`] handle: sending to any switch, requests that expect a
//! reply, listing switches, the views, the time, background threads and
//! timers.
//!
//! A [`Network`] is backed by the running controller or, in tests, by the
//! in-memory harness of [`crate::testing`]; applications cannot tell
//! which, so the same code runs in both.

use crate::env::pinned;
use crate::env::{
    Change, Committed, Environment, Publish, Snapshot, Transaction, TxError, UndeclaredWrite,
    Versioned, View, ViewAccess, ViewId,
};
use crate::requests::{Reply, RequestError, Requests};
use crate::switch::{SendError, SwitchId, SwitchInfo};
use crate::sync::lock;
use baton_openflow::neutral::{self, ActionSpec, FlowSpec, MatchSpec, Message, PacketOut, Payload};
use baton_openflow::{Cookie, DatapathId, PortNo, Version, Xid};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// The negotiated version of a switch, if it is up.
    fn version(&self, id: SwitchId) -> Option<Version>;
    /// A transaction id for a message the network handle sends.
    fn next_xid(&self) -> Xid;
    /// The environment of views.
    fn env(&self) -> &Environment;
    /// The requests waiting for replies.
    fn requests(&self) -> &Requests;
}

/// A handle on the running network for background threads, timers and
/// handlers that address other switches. Cheap to clone.
#[derive(Clone)]
pub struct Network {
    fabric: Arc<dyn Fabric>,
    /// The cookie bits of the application this handle belongs to
    /// (`AnyApp::cookie_tag` << 48), 0 for the controller's own.
    cookie: u64,
    /// The application's name and the views it declared, if this handle is
    /// an application's.
    app: Option<Arc<(String, ViewAccess)>>,
}

/// The cookie bits an application's flows carry besides its tag.
const COOKIE_LOW: u64 = (1 << 48) - 1;

impl Network {
    pub(crate) fn new(fabric: Arc<dyn Fabric>) -> Network {
        Network {
            fabric,
            cookie: 0,
            app: None,
        }
    }

    /// The handle of the application called `name`, with cookie tag
    /// `tag` and the views it declared.
    pub(crate) fn for_app(&self, name: &str, tag: u16, access: ViewAccess) -> Network {
        Network {
            fabric: self.fabric.clone(),
            cookie: u64::from(tag) << 48,
            app: Some(Arc::new((name.to_string(), access))),
        }
    }

    /// The views this handle's application declared.
    pub(crate) fn access(&self) -> Option<&ViewAccess> {
        self.app.as_deref().map(|(_, a)| a)
    }

    /// Every view of the environment now, as one consistent picture
    /// (no lock, no copy). While the pipeline hands one event to its
    /// applications in turn, the picture that event's first read found,
    /// plus what its applications published (the runtime's `env::pinned`).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        pinned::snapshot(self.fabric.env())
    }

    /// The current version of view `T` (within an event, as
    /// [`Network::snapshot`] says).
    pub fn view<T: View>(&self) -> Option<Versioned<T>> {
        pinned::read::<T>(self.fabric.env())
    }

    /// The environment itself (for the runtime's DAGs).
    pub(crate) fn env(&self) -> &Environment {
        self.fabric.env()
    }

    /// Publishes new versions of one or several views together. An
    /// application may publish only the views it declared it writes
    /// ([`crate::App::views`]).
    pub fn publish(&self, p: Publish) -> Result<Vec<Change>, UndeclaredWrite> {
        self.declared(p.ids())?;
        Ok(self.fabric.env().publish(p))
    }

    /// Refuses a write of a view this handle's application did not
    /// declare it writes.
    fn declared(&self, mut views: impl Iterator<Item = ViewId>) -> Result<(), UndeclaredWrite> {
        let Some((name, access)) = self.app.as_deref() else {
            return Ok(());
        };
        match views.find(|&id| !access.does_write(id)) {
            Some(view) => Err(UndeclaredWrite {
                app: name.clone(),
                view,
            }),
            None => Ok(()),
        }
    }

    /// Runs `f` as a transaction across views ([`crate::env::transaction`],
    /// McNettle §4.4): it reads and writes views through the
    /// [`Transaction`], and its writes are published together only if no
    /// view it read changed meanwhile; otherwise it runs again on the new
    /// versions, up to `attempts` times. `f` holds no lock and undoes
    /// nothing: an attempt that does not commit leaves no trace. An
    /// application may write only the views it declared it writes.
    pub fn atomically<R, E>(
        &self,
        attempts: u32,
        f: impl FnMut(&mut Transaction) -> Result<R, E>,
    ) -> Result<Committed<R>, TxError<E>> {
        let check = |tx: &Transaction| self.declared(tx.written());
        self.fabric.env().atomically_checked(attempts, check, f)
    }

    /// `cookie` as the application of this handle installs it: its tag in
    /// the top 16 bits, the application's own value in the rest.
    pub(crate) fn tag_cookie(&self, cookie: Cookie) -> Cookie {
        if self.cookie == 0 {
            return cookie;
        }
        Cookie(self.cookie | (cookie.0 & COOKIE_LOW))
    }

    /// The cookie value and mask that select exactly this application's
    /// flows (`None` for the controller's own handle).
    pub fn own_cookie(&self) -> Option<(Cookie, u64)> {
        (self.cookie != 0).then_some((Cookie(self.cookie), !COOKIE_LOW))
    }

    /// Encodes with `write` for switch `id`'s version and a fresh xid,
    /// and sends: for messages the other methods do not write (a 1.3
    /// METER_MOD, say). Flows written this way are not tagged with the
    /// application's cookie ([`Network::add_flow`] is). Nothing is sent
    /// if `write` writes nothing (a 1.3-only message for a 1.0 switch).
    pub fn send_with(
        &self,
        id: SwitchId,
        write: impl FnOnce(&mut Vec<u8>, Version, Xid),
    ) -> Result<(), SendError> {
        self.send_with_buffer(id, &mut Vec::with_capacity(128), write)
    }

    /// [`Network::send_with`] into a buffer the caller keeps (cleared
    /// first): a path that sends to many switches at once allocates
    /// nothing per switch.
    pub fn send_with_buffer(
        &self,
        id: SwitchId,
        out: &mut Vec<u8>,
        write: impl FnOnce(&mut Vec<u8>, Version, Xid),
    ) -> Result<(), SendError> {
        let version = self.fabric.version(id).ok_or(SendError::Gone)?;
        out.clear();
        write(out, version, self.fabric.next_xid());
        if out.is_empty() {
            return Ok(());
        }
        self.fabric.send(id, out)
    }

    /// Installs a flow on switch `id`, tagged with this application's
    /// cookie as [`crate::SwitchCtx::add_flow`] does.
    pub fn add_flow(&self, id: SwitchId, flow: &FlowSpec<'_>) -> Result<(), SendError> {
        let flow = FlowSpec {
            cookie: self.tag_cookie(flow.cookie),
            ..*flow
        };
        self.send_with(id, |out, v, xid| {
            neutral::encode_flow_add(out, v, xid, &flow)
        })
    }

    /// Deletes the flows of switch `id` that `match_` covers (not strict),
    /// only those that output to `out_port` unless it is [`PortNo::ANY`].
    pub fn delete_flows(
        &self,
        id: SwitchId,
        match_: &MatchSpec,
        out_port: PortNo,
    ) -> Result<(), SendError> {
        self.send_with(id, |out, v, xid| {
            neutral::encode_flow_delete(out, v, xid, match_, out_port)
        })
    }

    /// Sends `msg` to switch `id` and returns the reply to come (every
    /// part of a multipart reply, or the OFPT_ERROR the switch answered
    /// with), which the applications do not see. Wait for it from a
    /// background thread or a timer, never from a handler of the same
    /// switch.
    pub fn request(&self, id: SwitchId, msg: &Message) -> Reply {
        let requests = self.fabric.requests();
        let xid = self.fabric.next_xid();
        let reply = requests.register(id, xid);
        match self.fabric.version(id) {
            None => requests.fail(id, xid, RequestError::Gone),
            Some(v) if v != msg.version() => requests.fail(id, xid, RequestError::WrongVersion),
            Some(_) => {
                let mut out = Vec::with_capacity(64);
                msg.encode(xid, &mut out);
                if self.fabric.send(id, &out).is_err() {
                    requests.fail(id, xid, RequestError::Gone);
                }
            }
        }
        reply
    }

    /// Sends a packet out of switch `id`.
    pub fn packet_out(&self, id: SwitchId, po: &PacketOut<'_>) -> Result<(), SendError> {
        self.packet_outs(id, std::slice::from_ref(po))
    }

    /// Sends packets out of switch `id` in one write, each with its own
    /// xid (a round of discovery probes, one per port).
    pub fn packet_outs(&self, id: SwitchId, pos: &[PacketOut<'_>]) -> Result<(), SendError> {
        let version = self.fabric.version(id).ok_or(SendError::Gone)?;
        let mut out = Vec::with_capacity(128 * pos.len());
        for po in pos {
            neutral::encode_packet_out(&mut out, version, self.fabric.next_xid(), po);
        }
        if out.is_empty() {
            return Ok(());
        }
        self.fabric.send(id, &out)
    }

    /// Sends each frame out of its port of switch `id`, from the
    /// controller, in one write (discovery's probes of a switch's ports,
    /// the probes of its silent hosts).
    pub fn frames_out<F: AsRef<[u8]>>(
        &self,
        id: SwitchId,
        frames: &[(PortNo, F)],
    ) -> Result<(), SendError> {
        let actions: Vec<[ActionSpec; 1]> = frames
            .iter()
            .map(|&(port, _)| [ActionSpec::output(port)])
            .collect();
        let outs: Vec<PacketOut<'_>> = frames
            .iter()
            .zip(&actions)
            .map(|((_, frame), actions)| PacketOut {
                payload: Payload::Frame(frame.as_ref()),
                in_port: PortNo::CONTROLLER,
                actions,
            })
            .collect();
        self.packet_outs(id, &outs)
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

    /// Whether the connection `id` is still up, whatever this instance's
    /// role for its switch: in `switch_down`, false when the switch
    /// disconnected, true when this instance stopped serving it (a
    /// cluster's handover, an application stopped).
    pub fn is_connected(&self, id: SwitchId) -> bool {
        self.fabric.version(id).is_some()
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

    /// Removes the timers this handle's application set (it stopped).
    pub(crate) fn stop_timers(&self) {
        self.fabric.timers().remove(self.cookie);
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
            cookie: self.cookie,
            app: self.app.clone(),
            run: Box::new(f),
        });
    }
}

/// A periodic callback.
pub(crate) struct Timer {
    name: String,
    period: Duration,
    next: Instant,
    /// The cookie bits and the declarations of the application that set
    /// it.
    cookie: u64,
    app: Option<Arc<(String, ViewAccess)>>,
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

    /// Removes the timers of the application with these cookie bits.
    fn remove(&self, cookie: u64) {
        lock(&self.list).retain(|t| t.cookie != cookie);
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
            // Each application's timer runs with its own handle.
            let own = Network {
                fabric: net.fabric.clone(),
                cookie: t.cookie,
                app: t.app.clone(),
            };
            (t.run)(&own);
            // Catch up without firing again for each missed period.
            while t.next <= now {
                t.next += t.period;
            }
        }
        lock(&self.list).extend(due);
    }
}
