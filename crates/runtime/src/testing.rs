//! A test harness for applications: the pipeline, in-memory switches of
//! either version, and simulated time, with no sockets and no threads.
//!
//! ```
//! use baton_runtime::testing::Harness;
//! use baton_runtime::{AnyApp, App, PacketInBatch, SwitchCtx};
//! use baton_openflow::neutral::{ActionSpec, Message, PacketOut};
//! use baton_openflow::{PortNo, Version, v10};
//!
//! /// Floods every packet.
//! struct Flood;
//! impl App for Flood {
//!     type Switch = ();
//!     fn name(&self) -> &str { "flood" }
//!     fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
//!     fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
//!         batch.for_each(|sw, _, pi| {
//!             sw.packet_out(&PacketOut {
//!                 payload: pi.payload(),
//!                 in_port: pi.in_port(),
//!                 actions: &[ActionSpec::output(PortNo::FLOOD)],
//!             })
//!         });
//!     }
//! }
//!
//! let mut h = Harness::new(vec![AnyApp::new(Flood)]);
//! let sw = h.connect(1, Version::V10);
//! h.packet_in(sw, 3, &[0xff; 60]);
//! match &h.sent(sw)[..] {
//!     [Message::V10(v10::Message::PacketOut(po))] => assert_eq!(po.in_port, PortNo(3)),
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! Every message goes through the same session and pipeline code as in
//! the running controller (`pipeline.rs`): a PACKET_IN the harness sends
//! is framed, checked and parsed by the session, handed to the
//! applications in a batch, and what they send back is decoded for the
//! test to look at. Time passes only when the test says so
//! ([`Harness::advance`]), which runs due timers and the sessions'
//! keepalive.

use crate::app::AnyApp;
use crate::batch::Batch;
use crate::conn::Connection;
use crate::context::BatchSwitches;
use crate::dag::{Dag, DagSet};
use crate::env::{Environment, Snapshot};
use crate::network::{Fabric, Network, Timers};
use crate::pipeline::Pipeline;
use crate::requests::Requests;
use crate::session::{CloseReason, Session, SessionConfig};
use crate::switch::{SendError, SwitchId, SwitchInfo};
use crate::sync::lock;
use baton_openflow::neutral::{Message, PortDesc};
use baton_openflow::types::PortReason;
use baton_openflow::v13::multipart::{MultipartReply, MultipartReplyBody};
use baton_openflow::{BufferId, DatapathId, PortNo, Version, Xid, v10, v13};

mod switch_side;
mod ticks;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
pub use switch_side::{encode_packet_in, features_reply, hello, phy_port, port, port13};
pub use ticks::{Tick, Ticks};

/// One PACKET_IN for [`Harness::batch_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInSpec<'a> {
    /// The switch port it arrived on.
    pub in_port: u32,
    /// The switch kept it in a buffer (a fresh buffer id is given).
    pub buffered: bool,
    /// The frame.
    pub frame: &'a [u8],
}

/// The in-memory network behind a harness's [`Network`].
struct TestFabric {
    now: Mutex<Instant>,
    up: Mutex<Vec<SwitchInfo>>,
    /// Bytes sent to each switch, in order, not yet read by the test.
    sent: Mutex<HashMap<SwitchId, Vec<u8>>>,
    weights: Mutex<HashMap<SwitchId, u32>>,
    timers: Timers,
    env: Environment,
    requests: Requests,
    xids: AtomicU32,
}

impl Fabric for TestFabric {
    fn send(&self, id: SwitchId, bytes: &[u8]) -> Result<(), SendError> {
        if !lock(&self.up).iter().any(|s| s.id == id) {
            return Err(SendError::Gone);
        }
        lock(&self.sent)
            .entry(id)
            .or_default()
            .extend_from_slice(bytes);
        Ok(())
    }

    fn switches(&self) -> Vec<SwitchInfo> {
        lock(&self.up).clone()
    }

    fn set_weight(&self, id: SwitchId, weight: u32) -> bool {
        if !lock(&self.up).iter().any(|s| s.id == id) {
            return false;
        }
        lock(&self.weights).insert(id, weight.max(1));
        true
    }

    fn is_running(&self) -> bool {
        true
    }

    fn now(&self) -> Instant {
        *lock(&self.now)
    }

    fn timers(&self) -> &Timers {
        &self.timers
    }

    fn version(&self, id: SwitchId) -> Option<Version> {
        lock(&self.up)
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.version)
    }

    fn next_xid(&self) -> Xid {
        Xid(self.xids.fetch_add(1, Ordering::Relaxed) | 1 << 31)
    }

    fn env(&self) -> &Environment {
        &self.env
    }

    fn requests(&self) -> &Requests {
        &self.requests
    }
}

/// One in-memory switch.
struct TestSwitch {
    conn: Connection,
    closing: Option<CloseReason>,
    next_buffer: u32,
}

/// The switches as a batch sees them.
struct Switches<'a> {
    list: &'a mut [Option<TestSwitch>],
    fabric: &'a TestFabric,
}

impl BatchSwitches for Switches<'_> {
    fn get(&mut self, i: usize) -> Option<&mut Connection> {
        let s = self.list.get_mut(i)?.as_mut()?;
        if s.closing.is_some() {
            return None;
        }
        Some(&mut s.conn)
    }

    fn close(&mut self, i: usize, reason: CloseReason) {
        if let Some(Some(s)) = self.list.get_mut(i) {
            s.closing.get_or_insert(reason);
        }
    }

    fn switch_up(&mut self, i: usize) {
        if let Some(Some(s)) = self.list.get(i) {
            lock(&self.fabric.up).push(s.conn.info());
        }
    }

    /// The harness is a standalone controller: it serves every switch.
    fn serves(&self, _: usize) -> bool {
        true
    }

    fn reply(&mut self, i: usize, xid: Xid, msg: Message) -> Option<Message> {
        let id = self.list.get(i)?.as_ref()?.conn.id;
        self.fabric.requests.offer(id, xid, msg)
    }
}

/// Applications, switches and a clock, all in memory.
pub struct Harness {
    pipeline: Pipeline,
    fabric: Arc<TestFabric>,
    net: Network,
    session: SessionConfig,
    switches: Vec<Option<TestSwitch>>,
    batch: Batch,
    /// Why each switch that left was closed.
    closed: HashMap<SwitchId, CloseReason>,
    dags: DagSet,
}

impl Harness {
    /// A harness running `apps` in this order, started at once, with the
    /// controller's default session settings.
    pub fn new(apps: Vec<AnyApp>) -> Harness {
        Harness::with_session(apps, SessionConfig::default())
    }

    /// [`Harness::new`] with application DAGs ([`crate::dag`]), run when
    /// the views they are triggered by change (timer-triggered ones as
    /// simulated time passes).
    pub fn with_dags(apps: Vec<AnyApp>, dags: Vec<Dag>) -> Harness {
        Harness::build(apps, SessionConfig::default(), dags)
    }

    /// Stops application `name` as the operator would (it gets no more
    /// events, and the DAGs it brought no longer run); false if there is
    /// none or it was stopped already.
    pub fn stop_app(&mut self, name: &str) -> bool {
        self.pipeline
            .find(name)
            .is_some_and(|i| self.pipeline.stop(i))
    }

    /// Starts application `name` again; false if there is none or it runs.
    pub fn start_app(&mut self, name: &str) -> bool {
        self.pipeline
            .find(name)
            .is_some_and(|i| self.pipeline.start_again(i))
    }

    /// The DAGs it runs.
    pub fn dags(&self) -> &DagSet {
        &self.dags
    }

    /// [`Harness::new`] with other session settings (keepalive times,
    /// `miss_send_len`, the 1.3 table-miss flow).
    pub fn with_session(apps: Vec<AnyApp>, session: SessionConfig) -> Harness {
        Harness::build(apps, session, Vec::new())
    }

    /// A harness running `apps`, the DAGs they bring and `dags`.
    fn build(apps: Vec<AnyApp>, session: SessionConfig, dags: Vec<Dag>) -> Harness {
        let fabric = Arc::new(TestFabric {
            now: Mutex::new(Instant::now()),
            up: Mutex::new(Vec::new()),
            sent: Mutex::new(HashMap::new()),
            weights: Mutex::new(HashMap::new()),
            timers: Timers::default(),
            env: Environment::default(),
            requests: Requests::default(),
            xids: AtomicU32::new(1),
        });
        let net = Network::new(fabric.clone());
        let pipeline = Pipeline::new(apps, &net);
        pipeline.start();
        let dags = DagSet::new(crate::dag::merged(pipeline.dags(), dags));
        dags.start_timers(&net);
        Harness {
            pipeline,
            fabric,
            net,
            session,
            switches: Vec::new(),
            batch: Batch::default(),
            closed: HashMap::new(),
            dags,
        }
    }

    /// The network as the applications see it.
    pub fn network(&self) -> Network {
        self.net.clone()
    }

    /// The environment's views now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.fabric.env.snapshot()
    }

    /// The simulated time.
    pub fn now(&self) -> Instant {
        self.fabric.now()
    }

    /// Accepts a connection from a switch the test drives itself with raw
    /// bytes (an in-process software switch, say): the controller's HELLO
    /// is waiting in [`Harness::take_bytes`], and the handshake runs as the
    /// switch's bytes arrive through [`Harness::receive_bytes`].
    pub fn accept(&mut self) -> SwitchId {
        let id = SwitchId::new(self.switches.len() as u32, 0);
        let mut hello = Vec::new();
        let session = Session::new(self.session, self.now(), &mut hello);
        self.switches.push(Some(TestSwitch {
            conn: Connection::new(id, None, session),
            closing: None,
            next_buffer: 0,
        }));
        lock(&self.fabric.sent).insert(id, hello);
        id
    }

    /// Everything sent to the switch since the last call, as bytes.
    pub fn take_bytes(&mut self, sw: SwitchId) -> Vec<u8> {
        lock(&self.fabric.sent).remove(&sw).unwrap_or_default()
    }

    /// Connects a switch of `version` with datapath id `dpid` and runs its
    /// handshake (a switch's HELLO, then FEATURES_REPLY), so applications
    /// see it come up. What the controller sent during the handshake
    /// itself (HELLO, FEATURES_REQUEST, SET_CONFIG, the 1.3 table-miss
    /// flow) is discarded; what applications sent at `switch_up` is kept
    /// for [`Harness::sent`].
    pub fn connect(&mut self, dpid: u64, version: Version) -> SwitchId {
        self.connect_with_ports(dpid, version, &[])
    }

    /// [`Harness::connect`] for a switch with these ports (1.0: listed in
    /// FEATURES_REPLY; 1.3: in the reply to the port description request
    /// the controller sends after FEATURES_REPLY).
    pub fn connect_with_ports(
        &mut self,
        dpid: u64,
        version: Version,
        ports: &[PortDesc],
    ) -> SwitchId {
        let idx = self.switches.len();
        let id = SwitchId::new(idx as u32, 0);
        let mut discard = Vec::new();
        let session = Session::new(self.session, self.now(), &mut discard);
        self.switches.push(Some(TestSwitch {
            conn: Connection::new(id, None, session),
            closing: None,
            next_buffer: 0,
        }));
        self.receive_bytes(id, &hello(version));
        let mut features = features_reply(version, DatapathId(dpid));
        if let Message::V10(v10::Message::FeaturesReply(f)) = &mut features {
            f.ports = ports.iter().map(phy_port).collect();
        }
        self.receive(id, features);
        // The session's own handshake messages come first in the log:
        // FEATURES_REQUEST, SET_CONFIG, and on 1.3 the table-miss flow and
        // the port description request, which is answered.
        let mut handshake = 2;
        if version == Version::V13 {
            handshake += 1 + usize::from(self.session.table_miss_13);
        }
        let mut log = lock(&self.fabric.sent).remove(&id).unwrap_or_default();
        let mut skip = 0;
        let mut port_desc_xid = None;
        for _ in 0..handshake {
            let Ok(Some(len)) = baton_openflow::frame(&log[skip..]) else {
                break;
            };
            if let Ok((xid, Message::V13(v13::Message::MultipartRequest(_)))) =
                Message::decode(&log[skip..skip + len])
            {
                port_desc_xid = Some(xid);
            }
            skip += len;
        }
        log.drain(..skip);
        if !log.is_empty() {
            lock(&self.fabric.sent).insert(id, log);
        }
        if let Some(xid) = port_desc_xid {
            let mut reply = Vec::new();
            v13::Message::MultipartReply(MultipartReply {
                flags: 0,
                body: MultipartReplyBody::PortDesc(ports.iter().map(port13).collect()),
            })
            .encode(xid, &mut reply);
            self.receive_bytes(id, &reply);
        }
        id
    }

    /// The switch reports a port change (PORT_STATUS): `Add` or `Modify`
    /// with the port's new description, or `Delete`.
    pub fn port_status(&mut self, sw: SwitchId, reason: PortReason, port: &PortDesc) {
        let Some(Some(s)) = self.switches.get(sw.index()) else {
            return;
        };
        let msg: Message = match s.conn.session.version() {
            Version::V10 => v10::Message::PortStatus(v10::PortStatus {
                reason,
                desc: phy_port(port),
            })
            .into(),
            Version::V13 => v13::Message::PortStatus(v13::PortStatus {
                reason,
                desc: port13(port),
            })
            .into(),
        };
        self.receive(sw, msg);
    }

    /// The switch sends one PACKET_IN of `frame` that arrived on
    /// `in_port`, kept in a fresh buffer (whose id is returned).
    pub fn packet_in(&mut self, sw: SwitchId, in_port: u32, frame: &[u8]) -> BufferId {
        self.batch_of(&[(
            sw,
            PacketInSpec {
                in_port,
                buffered: true,
                frame,
            },
        )])[0]
    }

    /// The switch sends one PACKET_IN carrying the whole frame, not
    /// buffered.
    pub fn packet_in_unbuffered(&mut self, sw: SwitchId, in_port: u32, frame: &[u8]) {
        self.batch_of(&[(
            sw,
            PacketInSpec {
                in_port,
                buffered: false,
                frame,
            },
        )]);
    }

    /// Several PACKET_INs, from one switch or several, handled as one
    /// batch; returns each one's buffer id ([`BufferId::NONE`] when not
    /// buffered).
    pub fn batch_of(&mut self, packet_ins: &[(SwitchId, PacketInSpec<'_>)]) -> Vec<BufferId> {
        let mut ids = Vec::with_capacity(packet_ins.len());
        let mut bytes = Vec::new();
        for &(sw, spec) in packet_ins {
            let Some(Some(s)) = self.switches.get_mut(sw.index()) else {
                ids.push(BufferId::NONE);
                continue;
            };
            let buffer_id = if spec.buffered {
                s.next_buffer += 1;
                BufferId(s.next_buffer)
            } else {
                BufferId::NONE
            };
            ids.push(buffer_id);
            bytes.clear();
            encode_packet_in(
                &mut bytes,
                s.conn.session.version(),
                buffer_id,
                PortNo(spec.in_port),
                spec.frame,
            );
            self.queue_bytes(sw, &bytes);
        }
        self.run_batch();
        ids
    }

    /// The switch sends `msg` (a PORT_STATUS, FLOW_REMOVED, ERROR, a
    /// statistics reply, ...).
    pub fn receive(&mut self, sw: SwitchId, msg: impl Into<Message>) {
        let mut bytes = Vec::new();
        msg.into().encode(Xid(0), &mut bytes);
        self.receive_bytes(sw, &bytes);
    }

    /// The switch answers a request of transaction id `xid` with `msg`.
    pub fn reply(&mut self, sw: SwitchId, xid: Xid, msg: impl Into<Message>) {
        let mut bytes = Vec::new();
        msg.into().encode(xid, &mut bytes);
        self.receive_bytes(sw, &bytes);
    }

    /// The switch sends these bytes, which need not be well formed.
    pub fn receive_bytes(&mut self, sw: SwitchId, bytes: &[u8]) {
        self.queue_bytes(sw, bytes);
        self.run_batch();
    }

    /// Adds bytes to a switch's receive buffer and its complete messages
    /// to the batch.
    fn queue_bytes(&mut self, sw: SwitchId, bytes: &[u8]) {
        let now = self.now();
        let Some(Some(s)) = self.switches.get_mut(sw.index()) else {
            return;
        };
        if s.closing.is_some() {
            return;
        }
        s.conn.recv.push(bytes);
        loop {
            match s.conn.recv.next_message() {
                Ok(Some(msg)) => {
                    let conn = &mut s.conn;
                    self.batch
                        .add(sw.index() as u32, &mut conn.session, &conn.recv, msg, now);
                }
                Ok(None) => break,
                Err(e) => {
                    s.closing = Some(CloseReason::Unframeable(e));
                    break;
                }
            }
        }
    }

    fn run_batch(&mut self) {
        let now = self.now();
        for s in self.switches.iter_mut().flatten() {
            self.pipeline.reconcile(&mut s.conn, true);
        }
        self.batch.process(
            &mut Switches {
                list: &mut self.switches,
                fabric: &self.fabric,
            },
            &self.pipeline,
            now,
        );
        self.settle();
    }

    /// Hands new versions of views to the applications that read them,
    /// until no application publishes anything more (the runtime does this
    /// on its view thread).
    fn deliver_view_changes(&mut self) {
        // A bound, so two applications that republish on each other's
        // changes cannot hang a test.
        for _ in 0..64 {
            let changes = self.fabric.env.take_changes(Duration::ZERO);
            if changes.is_empty() {
                return;
            }
            self.pipeline
                .views_changed(&self.fabric.env.snapshot(), &changes);
            let pipeline = &self.pipeline;
            self.dags
                .on_changes(&self.net, &changes, |app| pipeline.runs(app));
        }
        panic!("applications kept publishing views in reply to each other");
    }

    /// Moves staged output to the switches' logs, compacts their buffers,
    /// closes the switches that must close, and delivers view changes.
    fn settle(&mut self) {
        for i in 0..self.switches.len() {
            let Some(s) = self.switches[i].as_mut() else {
                continue;
            };
            if !s.conn.out.is_empty() {
                let out = std::mem::take(&mut s.conn.out);
                lock(&self.fabric.sent)
                    .entry(s.conn.id)
                    .or_default()
                    .extend_from_slice(&out);
            }
            s.conn.recv.compact_for(0);
            if s.closing.is_some() {
                self.close(i);
            }
        }
        self.deliver_view_changes();
    }

    fn close(&mut self, i: usize) {
        let Some(mut s) = self.switches[i].take() else {
            return;
        };
        let info = s.conn.info();
        lock(&self.fabric.up).retain(|u| u.id != info.id);
        let states = std::mem::take(&mut s.conn.states);
        self.pipeline.switch_down(&info, states);
        let reason = s.closing.unwrap_or(CloseReason::PeerClosed);
        self.fabric.requests.switch_gone(info.id);
        self.closed.insert(info.id, reason);
    }

    /// The switch closes its connection; applications see it go.
    pub fn disconnect(&mut self, sw: SwitchId) {
        if let Some(Some(s)) = self.switches.get_mut(sw.index()) {
            s.closing = Some(CloseReason::PeerClosed);
            self.close(sw.index());
            self.deliver_view_changes();
        }
    }

    /// Whether the switch is still connected.
    pub fn is_connected(&self, sw: SwitchId) -> bool {
        matches!(self.switches.get(sw.index()), Some(Some(_)))
    }

    /// Why the controller closed a switch's connection, if it did.
    pub fn close_reason(&self, sw: SwitchId) -> Option<&CloseReason> {
        self.closed.get(&sw)
    }

    /// Everything sent to the switch since the last call, decoded, in
    /// order.
    pub fn sent(&mut self, sw: SwitchId) -> Vec<Message> {
        let bytes = self.take_bytes(sw);
        let mut msgs = Vec::new();
        let mut rest = &bytes[..];
        while let Ok(Some(len)) = baton_openflow::frame(rest) {
            match Message::decode(&rest[..len]) {
                Ok((_, m)) => msgs.push(m),
                Err(e) => panic!("the controller sent a message that does not decode: {e}"),
            }
            rest = &rest[len..];
        }
        msgs
    }

    /// Lets `d` of simulated time pass: due application timers run, and
    /// each switch's session does its keepalive (a switch that stays
    /// silent past the echo timeout is closed).
    pub fn advance(&mut self, d: Duration) {
        let target = self.now() + d;
        // Step through timer deadlines so periodic timers fire each period.
        loop {
            let next = self.fabric.timers.next_due().filter(|&t| t <= target);
            let step_to = next.unwrap_or(target);
            *lock(&self.fabric.now) = step_to;
            self.fabric.timers.run_due(step_to, &self.net);
            self.poll_timeouts(step_to);
            if next.is_none() {
                break;
            }
        }
    }

    fn poll_timeouts(&mut self, now: Instant) {
        for s in self.switches.iter_mut().flatten() {
            if s.closing.is_some() {
                continue;
            }
            let conn = &mut s.conn;
            if let Some(reason) = conn.session.poll_timeout(now, &mut conn.out) {
                s.closing = Some(reason);
            }
        }
        self.settle();
    }

    /// The weight an application gave a switch ([`Network::set_weight`]),
    /// if it gave one.
    pub fn weight(&self, sw: SwitchId) -> Option<u32> {
        lock(&self.fabric.weights).get(&sw).copied()
    }
}
