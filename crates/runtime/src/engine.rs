//! The per-thread engine every scheduler drives: serve a switch (one read,
//! chop into messages), process a batch (handshake, keepalive, the
//! application pipeline), flush output (one write per switch per batch),
//! and hand connections back.
//!
//! Schedulers differ only in *which* switch they serve next and *when* they
//! release a batch; everything a message goes through is here, once.

use crate::App;
use crate::app::{EventRef, Flow, Network, SwitchCtx};
use crate::config::{Batching, Config};
use crate::conn::{Conn, Phase, ReadOutcome, header_of};
use crate::ibt::Ibt;
use crate::stats::WorkerStats;
use crate::switch::{OutQueue, SwitchId, SwitchInfo, SwitchTable, TaskState, lock};
use baton_openflow::hello::{Hello, negotiate};
use baton_openflow::neutral::{self, PacketIn};
use baton_openflow::{DatapathId, DecodeError, ErrorCode, Version, v10, v13};
use std::collections::HashMap;
use std::net::Shutdown;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

/// Staged output a switch with input waiting may accumulate before it is
/// written (see [`Engine::flush`]).
const WRITE_BATCH: usize = 32 * 1024;

/// The versions baton offers in its HELLO.
pub const VERSIONS: [Version; 2] = [Version::V10, Version::V13];

/// State shared by every thread of one runtime.
pub(crate) struct Shared {
    pub table: Arc<SwitchTable>,
    pub apps: Vec<Arc<dyn App>>,
    pub config: Config,
    pub net: Network,
    /// Which connection holds each datapath id.
    pub dpids: Mutex<HashMap<DatapathId, SwitchId>>,
    pub workers: Vec<Arc<WorkerStats>>,
    /// The BDU in nanoseconds; changeable while running.
    pub bdu_ns: AtomicU64,
}

/// A connection held for the length of a batch.
pub(crate) struct Held {
    pub idx: usize,
    pub conn: Box<Conn>,
    /// Input is waiting: the last read filled the space offered, or a
    /// complete message is still buffered (see [`Engine::fill`]).
    pub more: bool,
    /// Why it must be closed after this batch, if it must.
    pub closing: Option<String>,
    pub rx: u32,
    pub packet_ins: u32,
    /// PACKET_INs the pipeline answered in the current batch (published
    /// to the switch's counters at the end of each batch).
    pub answered: u32,
}

impl Held {
    /// The connection, unless it is being closed.
    #[inline]
    pub fn live_conn(&mut self) -> Option<&mut Conn> {
        if self.closing.is_some() {
            return None;
        }
        Some(&mut self.conn)
    }
}

/// One switch's messages from one read, handed from the shared-queue
/// reader to a worker: the connection itself and where its messages are.
pub(crate) struct Chunk {
    held: Held,
    msgs: Vec<(u32, u32)>,
}

/// One message of the batch.
#[derive(Debug, Clone, Copy)]
struct MsgRef {
    held: u32,
    at: u32,
    len: u32,
}

/// A connection released after its batch: the caller decides where it
/// goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Released {
    pub idx: usize,
    pub id: SwitchId,
    /// Input is waiting (the read was full, or an event came while held).
    pub ready: bool,
}

/// One thread's batch under construction and its IBT state.
pub(crate) struct Engine {
    pub shared: Arc<Shared>,
    held: Vec<Held>,
    msgs: Vec<MsgRef>,
    events: Vec<EventRef>,
    deferred: Vec<usize>,
    released: Vec<Released>,
    ibt: Ibt,
    /// Smoothed input rate of this worker, bytes per second.
    input_rate: f64,
    /// Bytes read into the current batch.
    batch_bytes: usize,
    batch_started: Option<Instant>,
    stats: Arc<WorkerStats>,
    last_trace: Instant,
}

impl Engine {
    pub fn new(shared: Arc<Shared>, worker: usize) -> Engine {
        let bdu = Duration::from_nanos(shared.bdu_ns.load(Ordering::Relaxed));
        let stats = shared.workers[worker.min(shared.workers.len() - 1)].clone();
        Engine {
            shared,
            held: Vec::new(),
            msgs: Vec::new(),
            events: Vec::new(),
            deferred: Vec::new(),
            released: Vec::new(),
            ibt: Ibt::new(bdu),
            input_rate: 0.0,
            batch_bytes: 0,
            batch_started: None,
            stats,
            last_trace: Instant::now(),
        }
    }

    /// Messages in the batch under construction.
    pub fn batch_len(&self) -> usize {
        self.msgs.len()
    }

    /// Switches held in the batch under construction.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// True when the batch should be processed now: adaptive batching
    /// waits for IBT messages; static batching processes each read.
    pub fn batch_full(&self) -> bool {
        match self.shared.config.batching() {
            Batching::Adaptive => self.msgs.len() >= self.ibt.threshold() as usize,
            Batching::Static => !self.held.is_empty(),
        }
    }

    /// Bytes of input to serve from a switch per service chance (times its
    /// weight).
    ///
    /// Static batching serves `static_read_size` (Beacon's 64 KB read).
    /// Adaptive batching sizes the quantum so that one round over the
    /// `ready` switches takes about one BDU at this worker's measured input
    /// rate, within `[min_read, max_read]`: under overload with many
    /// switches this is Maestro's small quantum (fine-grained rounds,
    /// bounded delay for a low-rate switch); with few busy switches it
    /// grows towards a large one. Either way a busy switch is read ahead
    /// in large reads (see [`Engine::fill`]), so small quanta do not cost a
    /// system call each.
    pub fn quantum(&self, ready: usize) -> usize {
        let cfg = &self.shared.config;
        if cfg.batching() == Batching::Static {
            return cfg.static_read_size;
        }
        let bdu = Duration::from_nanos(self.shared.bdu_ns.load(Ordering::Relaxed));
        let per_round = self.input_rate * bdu.as_secs_f64();
        let q = per_round / ready.max(1) as f64;
        (q as usize).clamp(cfg.min_read, cfg.max_read.max(cfg.min_read))
    }

    /// Serves switch `idx`, whose connection the caller took by moving its
    /// state to `Running`: adds up to `quantum` bytes (times the switch's
    /// weight) of its complete messages to the batch, reading first if
    /// fewer than that are buffered. Returns the number of messages added.
    pub fn serve(&mut self, idx: usize, conn: Box<Conn>, quantum: usize) -> usize {
        let slot = &self.shared.table.slots[idx];
        if self.batch_started.is_none() {
            self.batch_started = Some(Instant::now());
        }
        let mut held = Held {
            idx,
            conn,
            more: false,
            closing: None,
            rx: 0,
            packet_ins: 0,
            answered: 0,
        };
        if slot.kill.load(Ordering::Acquire) {
            held.closing = Some("disconnected by the controller".into());
        }
        self.held.push(held);
        self.fill(self.held.len() - 1, quantum, true)
    }

    /// Serves held switches that have more input again, so a batch can
    /// reach IBT even when few switches are active (seed 000 Fig. 16).
    /// Their buffers are not compacted (batch entries point into them).
    /// Returns the number of messages added.
    pub fn refill(&mut self) -> usize {
        /// Past this, a switch's buffer is not grown further in one batch.
        const MAX_HELD_BUFFER: usize = 256 * 1024;
        let quantum = self.quantum(self.held.len());
        let mut added = 0;
        for h in 0..self.held.len() {
            let held = &self.held[h];
            if held.more && held.closing.is_none() && held.conn.buffered() <= MAX_HELD_BUFFER {
                added += self.fill(h, quantum, false);
            }
        }
        added
    }

    /// One service of held switch `h`: reads if less than a quantum of
    /// complete messages is buffered, then hands at most a quantum of them
    /// (at least one) to the batch.
    ///
    /// Reading and serving are decoupled so that the default scheduler
    /// keeps Maestro's fine-grained rounds (a quantum per switch per
    /// round, seed 000 §3.2) without paying a system call per quantum: a
    /// switch whose last read filled the space offered is *read ahead*, up
    /// to `max_read` bytes at once (what NOX and Beacon read), and the
    /// surplus waits in its buffer for the following rounds.
    fn fill(&mut self, h: usize, quantum: usize, compact: bool) -> usize {
        let cfg = &self.shared.config;
        let table = &self.shared.table;
        let held = &mut self.held[h];
        let slot = &table.slots[held.idx];
        let budget = quantum * slot.weight() as usize;
        let mut read = false;
        let mut added = 0;
        let mut taken = 0;
        let buffered_message = loop {
            if !read
                && held.closing.is_none()
                && (held.conn.unconsumed() < budget || !held.conn.has_message())
            {
                read = true;
                let want = if held.conn.busy {
                    budget.max(cfg.max_read)
                } else {
                    budget
                };
                // Compacting moves bytes, so only before this switch has
                // messages in the batch.
                if compact && added == 0 {
                    held.conn.compact_for(want);
                }
                match held.conn.read(want) {
                    Ok(ReadOutcome::Data) => {
                        slot.last_rx_ms.store(table.now_ms(), Ordering::Relaxed);
                    }
                    Ok(ReadOutcome::WouldBlock) => {}
                    Ok(ReadOutcome::Eof) => {
                        held.closing = Some("connection closed by the switch".into())
                    }
                    Err(e) => held.closing = Some(format!("read error: {e}")),
                }
            }
            while held.closing.is_none() && (taken < budget || added == 0) {
                match held.conn.next_message() {
                    Ok(Some((at, len))) => {
                        self.batch_bytes += len as usize;
                        taken += len as usize;
                        added += 1;
                        self.msgs.push(MsgRef {
                            held: h as u32,
                            at,
                            len,
                        });
                    }
                    Ok(None) => break,
                    Err(e) => {
                        held.closing = Some(format!("unrecoverable framing error: {e}"));
                    }
                }
            }
            // Served from the buffer alone and now out of messages: data
            // that arrived meanwhile had its readiness edge taken by the
            // services that did not read, so read now rather than wait for
            // an edge that will not come (which would starve the switch).
            let buffered_message = held.conn.has_message();
            if read || held.closing.is_some() || buffered_message {
                break buffered_message;
            }
        };
        // Input is waiting if the last read filled the space offered (the
        // socket may hold more, and edge-triggered readiness will not say
        // so again) or a complete message is still buffered.
        held.more = held.conn.busy || buffered_message;
        held.rx += added as u32;
        added
    }

    /// Processes the batch, flushes its output, and records it for IBT:
    /// `input_pending` says whether any switch still has input (Fig. 4
    /// releases a batch early, and steps IBT down, when none has).
    /// Returns the released connections; the caller re-queues the ready
    /// ones.
    pub fn process(&mut self, input_pending: bool) -> &[Released] {
        self.released.clear();
        if self.held.is_empty() {
            return &self.released;
        }
        let started = self.batch_started.take().unwrap_or_else(Instant::now);
        let n = self.msgs.len();
        let full = n >= self.ibt.threshold() as usize;
        for i in 0..self.msgs.len() {
            let m = self.msgs[i];
            self.dispatch(m);
        }
        self.deliver_packet_ins();
        self.flush();
        let elapsed = started.elapsed();
        if self.shared.config.batching() == Batching::Adaptive {
            let bdu = Duration::from_nanos(self.shared.bdu_ns.load(Ordering::Relaxed));
            if bdu != self.ibt.bdu() {
                self.ibt.set_bdu(bdu);
            }
            if full {
                self.ibt.full_batch(n as u32, elapsed);
            } else if !input_pending {
                self.ibt.idle();
            }
        }
        self.record(n, elapsed);
        // Input rate for the read quantum: bytes per second of busy time,
        // smoothed like IBT's score (w = 0.2).
        let rate = self.batch_bytes as f64 / elapsed.as_secs_f64().max(1e-9);
        self.input_rate = if self.input_rate == 0.0 {
            rate
        } else {
            0.8 * self.input_rate + 0.2 * rate
        };
        self.batch_bytes = 0;
        self.msgs.clear();
        self.release_all();
        &self.released
    }

    fn record(&mut self, n: usize, elapsed: Duration) {
        let s = &self.stats;
        s.batches.fetch_add(1, Ordering::Relaxed);
        s.messages.fetch_add(n as u64, Ordering::Relaxed);
        s.batch_ns
            .fetch_add(elapsed.as_nanos() as u64, Ordering::Relaxed);
        s.max_batch.fetch_max(n as u64, Ordering::Relaxed);
        s.ibt
            .store(u64::from(self.ibt.threshold()), Ordering::Relaxed);
        if self.last_trace.elapsed() >= Duration::from_millis(100) {
            self.last_trace = Instant::now();
            s.trace(self.shared.table.now_ms(), self.ibt.threshold());
        }
    }

    fn dispatch(&mut self, m: MsgRef) {
        let Some(held) = self.held.get_mut(m.held as usize) else {
            return;
        };
        if held.closing.is_some() {
            return;
        }
        let Some((version, msg_type, xid)) = header_of(held.conn.message(m.at, m.len)) else {
            return;
        };
        match held.conn.phase {
            Phase::AwaitHello => self.on_hello(m),
            Phase::AwaitFeatures | Phase::Up => {
                let conn_version = held.conn.version;
                if version != conn_version.wire() {
                    let bad = DecodeError::new(
                        baton_openflow::ErrorKind::BadVersion(version),
                        0,
                        "ofp_header.version",
                    );
                    let conn = &mut held.conn;
                    let (msg, out, _, _) = conn.parts(m.at, m.len);
                    neutral::encode_error(
                        out,
                        conn_version,
                        baton_openflow::Xid(xid),
                        bad.reply(conn_version),
                        &msg[..msg.len().min(64)],
                    );
                    return;
                }
                // ERROR, ECHO_REQUEST, ECHO_REPLY, FEATURES_REPLY and
                // PACKET_IN have the same numbers in 1.0 and 1.3.
                match msg_type {
                    2 => {
                        let conn = &mut held.conn;
                        let (msg, out, _, _) = conn.parts(m.at, m.len);
                        neutral::encode_echo_reply(
                            out,
                            conn_version,
                            baton_openflow::Xid(xid),
                            msg.get(8..).unwrap_or(&[]),
                        );
                    }
                    3 => {
                        let slot = &self.shared.table.slots[held.idx];
                        slot.echo_sent_ms.store(0, Ordering::Relaxed);
                    }
                    6 if held.conn.phase == Phase::AwaitFeatures => self.on_features(m),
                    10 if held.conn.phase == Phase::Up => {
                        held.packet_ins += 1;
                        match PacketIn::parse(held.conn.message(m.at, m.len)) {
                            Ok(_) => self.events.push(EventRef {
                                held: m.held,
                                at: m.at,
                                len: m.len,
                                stopped: false,
                                answered: false,
                            }),
                            Err(e) => self.reply_error(m, &e),
                        }
                    }
                    0 => {} // a second HELLO: nothing to do
                    _ if held.conn.phase == Phase::Up => {
                        if !self.known_type(conn_version, msg_type) {
                            let e = DecodeError::new(
                                baton_openflow::ErrorKind::UnknownType(msg_type),
                                1,
                                "ofp_header.type",
                            );
                            self.reply_error(m, &e);
                            return;
                        }
                        // Keep per-switch order: packet-ins before this
                        // message reach the applications first.
                        self.deliver_packet_ins();
                        self.deliver_message(m);
                    }
                    _ => {
                        tracing::debug!(
                            switch = %held.conn.id,
                            msg_type,
                            "message before the handshake finished; ignored"
                        );
                    }
                }
            }
        }
    }

    fn known_type(&self, version: Version, msg_type: u8) -> bool {
        match version {
            Version::V10 => baton_openflow::header::MsgType10::from(msg_type)
                .length_rule()
                .is_some(),
            Version::V13 => baton_openflow::header::MsgType13::from(msg_type)
                .length_rule()
                .is_some(),
        }
    }

    fn reply_error(&mut self, m: MsgRef, e: &DecodeError) {
        let Some(held) = self.held.get_mut(m.held as usize) else {
            return;
        };
        let version = held.conn.version;
        let code = e.reply(version);
        tracing::debug!(switch = %held.conn.id, error = %e, "bad message from switch");
        let conn = &mut held.conn;
        let (msg, out, _, _) = conn.parts(m.at, m.len);
        let xid = header_of(msg).map_or(0, |h| h.2);
        neutral::encode_error(
            out,
            version,
            baton_openflow::Xid(xid),
            code,
            &msg[..msg.len().min(64)],
        );
    }

    fn on_hello(&mut self, m: MsgRef) {
        let held = &mut self.held[m.held as usize];
        let msg = held.conn.message(m.at, m.len);
        let Some((peer_version, msg_type, xid)) = header_of(msg) else {
            return;
        };
        if msg_type != 0 {
            held.closing = Some(format!("first message was type {msg_type}, not HELLO"));
            return;
        }
        let hello = Hello::decode_body(&msg[8..], 8).unwrap_or_default();
        match negotiate(&VERSIONS, peer_version, &hello) {
            Ok(v) => {
                held.conn.version = v;
                held.conn.phase = Phase::AwaitFeatures;
                let xid = held.conn.xid();
                neutral::encode_features_request(&mut held.conn.wstage, v, xid);
            }
            Err(e) => {
                // OFPET_HELLO_FAILED / OFPHFC_INCOMPATIBLE, in a version the
                // peer can read.
                let v = if peer_version >= 4 {
                    Version::V13
                } else {
                    Version::V10
                };
                neutral::encode_error(
                    &mut held.conn.wstage,
                    v,
                    baton_openflow::Xid(xid),
                    ErrorCode::new(0, 0),
                    e.to_string().as_bytes(),
                );
                held.closing = Some(e.to_string());
            }
        }
    }

    fn on_features(&mut self, m: MsgRef) {
        let shared = self.shared.clone();
        let held = &mut self.held[m.held as usize];
        let msg = held.conn.message(m.at, m.len);
        let dpid = match held.conn.version {
            Version::V10 => match v10::decode(msg) {
                Ok((_, v10::Message::FeaturesReply(f))) => Ok(f.datapath_id),
                Ok(_) => return,
                Err(e) => Err(e),
            },
            Version::V13 => match v13::decode(msg) {
                Ok((_, v13::Message::FeaturesReply(f))) => Ok(f.datapath_id),
                Ok(_) => return,
                Err(e) => Err(e),
            },
        };
        let dpid = match dpid {
            Ok(d) => d,
            Err(e) => {
                held.closing = Some(format!("malformed FEATURES_REPLY: {e}"));
                return;
            }
        };
        let conn = &mut held.conn;
        conn.dpid = dpid;
        conn.phase = Phase::Up;
        let id = conn.id;
        let version = conn.version;
        let slot = &shared.table.slots[held.idx];
        slot.dpid.store(dpid.0, Ordering::Release);
        slot.version.store(version.wire(), Ordering::Release);
        if let Some(&(_, w)) = shared.config.weights.iter().find(|(d, _)| *d == dpid) {
            slot.weight.store(w, Ordering::Relaxed);
        }
        let xid = conn.xid();
        neutral::encode_set_config(&mut conn.wstage, version, xid, shared.config.miss_send_len);
        if version == Version::V13 && shared.config.table_miss_13 {
            let xid = conn.xid();
            neutral::encode_table_miss(&mut conn.wstage, xid);
        }
        slot.up.store(true, Ordering::Release);
        // A switch that reconnects replaces its old connection. The new one
        // is listed first, so the network never shows the datapath missing.
        let old = lock(&shared.dpids).insert(dpid, id);
        if let Some(old) = old.filter(|&o| o != id) {
            if let Some(old_slot) = shared.table.get(old) {
                tracing::info!(
                    dpid = %dpid,
                    old = %old,
                    new = %id,
                    "datapath reconnected; closing its previous connection"
                );
                old_slot.kill.store(true, Ordering::Release);
                if let Some(s) = lock(&old_slot.out).stream.as_ref() {
                    let _ = s.shutdown(Shutdown::Both);
                }
            }
        }
        tracing::info!(dpid = %dpid, switch = %id, version = %version, peer = %conn.peer, "switch connected");
        let info = SwitchInfo {
            id,
            dpid,
            version,
            peer: Some(conn.peer),
        };
        for (app_idx, app) in shared.apps.iter().enumerate() {
            let (out, locals, xid) = (&mut conn.wstage, &mut conn.locals, &mut conn.next_xid);
            let mut ctx = SwitchCtx {
                info,
                out,
                locals,
                app: app_idx,
                xid,
                net: &shared.net,
            };
            app.switch_up(&mut ctx);
        }
    }

    fn deliver_packet_ins(&mut self) {
        if self.events.is_empty() {
            return;
        }
        let shared = self.shared.clone();
        for (app_idx, app) in shared.apps.iter().enumerate() {
            let mut batch = crate::app::PacketInBatch {
                conns: &mut self.held,
                events: &mut self.events,
                app: app_idx,
                net: &shared.net,
            };
            if batch.is_empty() {
                break;
            }
            app.packet_in(&mut batch);
        }
        for ev in &self.events {
            if ev.answered {
                if let Some(h) = self.held.get_mut(ev.held as usize) {
                    h.answered += 1;
                }
            }
        }
        self.events.clear();
        // Published before the replies are flushed, so a switch that has
        // its replies also finds them counted.
        for h in &mut self.held {
            if h.answered > 0 {
                let c = &self.shared.table.slots[h.idx].counters;
                c.answered
                    .fetch_add(u64::from(h.answered), Ordering::Relaxed);
                h.answered = 0;
            }
        }
    }

    fn deliver_message(&mut self, m: MsgRef) {
        let shared = self.shared.clone();
        let held = &mut self.held[m.held as usize];
        let conn = &mut held.conn;
        let info = SwitchInfo {
            id: conn.id,
            dpid: conn.dpid,
            version: conn.version,
            peer: Some(conn.peer),
        };
        for (app_idx, app) in shared.apps.iter().enumerate() {
            let (msg, out, locals, xid) = conn.parts(m.at, m.len);
            let mut ctx = SwitchCtx {
                info,
                out,
                locals,
                app: app_idx,
                xid,
                net: &shared.net,
            };
            if app.message(&mut ctx, msg) == Flow::Stop {
                break;
            }
        }
    }

    /// Writes each held switch's staged output with one system call
    /// (seed 002 Alg. 2). A switch whose output lock another thread holds
    /// is skipped and revisited after the others (thesis §4.2.3.1).
    ///
    /// A switch that still has input waiting keeps output smaller than
    /// [`WRITE_BATCH`] staged until a later service: with fine-grained
    /// rounds one quantum's replies are a few kilobytes, and a write per
    /// quantum would cost a system call per few dozen replies. Its next
    /// service comes within a round, and the output is written as soon as
    /// the switch runs out of input, so the delay added is bounded by the
    /// rounds it takes to stage `WRITE_BATCH` bytes.
    fn flush(&mut self) {
        let table = self.shared.table.clone();
        self.deferred.clear();
        for i in 0..self.held.len() {
            let h = &mut self.held[i];
            let staged = h.conn.wstage.len();
            if staged == 0 || (h.more && h.closing.is_none() && staged < WRITE_BATCH) {
                continue;
            }
            let slot = &table.slots[h.idx];
            match slot.out.try_lock() {
                Ok(mut q) => write_staged(&table, h, &mut q),
                Err(TryLockError::Poisoned(p)) => write_staged(&table, h, &mut p.into_inner()),
                Err(TryLockError::WouldBlock) => self.deferred.push(i),
            }
        }
        for k in 0..self.deferred.len() {
            let h = &mut self.held[self.deferred[k]];
            let slot = &table.slots[h.idx];
            let mut q = lock(&slot.out);
            write_staged(&table, h, &mut q);
        }
    }

    fn release_all(&mut self) {
        let shared = self.shared.clone();
        for h in self.held.drain(..) {
            let slot = &shared.table.slots[h.idx];
            let c = &slot.counters;
            c.rx_msgs.fetch_add(u64::from(h.rx), Ordering::Relaxed);
            c.packet_ins
                .fetch_add(u64::from(h.packet_ins), Ordering::Relaxed);
            if let Some(reason) = h.closing {
                close(&shared, h.idx, h.conn, &reason);
                continue;
            }
            let id = h.conn.id;
            slot.put_conn(h.conn);
            self.released.push(Released {
                idx: h.idx,
                id,
                ready: h.more,
            });
        }
    }

    /// Takes the switch just served, with its messages, out of this
    /// engine (the shared-queue reader hands it to a worker). `spare` is a
    /// vector to reuse for the message positions.
    pub fn take_chunk(&mut self, mut spare: Vec<(u32, u32)>) -> Option<Chunk> {
        let held = self.held.pop()?;
        spare.clear();
        spare.extend(self.msgs.drain(..).map(|m| (m.at, m.len)));
        self.batch_started = None;
        Some(Chunk { held, msgs: spare })
    }

    /// Adds a chunk from the shared queue to this engine's batch; returns
    /// its emptied position vector for reuse.
    pub fn adopt(&mut self, chunk: Chunk) -> Vec<(u32, u32)> {
        if self.batch_started.is_none() {
            self.batch_started = Some(Instant::now());
        }
        let h = self.held.len() as u32;
        self.msgs.extend(
            chunk
                .msgs
                .iter()
                .map(|&(at, len)| MsgRef { held: h, at, len }),
        );
        self.held.push(chunk.held);
        let mut v = chunk.msgs;
        v.clear();
        v
    }
}

fn write_staged(table: &SwitchTable, h: &mut Held, q: &mut OutQueue) {
    let slot = &table.slots[h.idx];
    let id = h.conn.id;
    if table.write_locked(id, slot, q, &h.conn.wstage).is_err() && h.closing.is_none() {
        h.closing = Some("output failed".into());
    }
    h.conn.wstage.clear();
    // A one-off burst should not pin a large buffer to an idle switch.
    if h.conn.wstage.capacity() > 1 << 20 {
        h.conn.wstage = Vec::new();
    }
}

/// Closes a connection the caller owns: unregisters it, tells the
/// applications, frees its slot, and logs one line.
pub(crate) fn close(shared: &Shared, idx: usize, conn: Box<Conn>, reason: &str) {
    let table = &shared.table;
    let slot = &table.slots[idx];
    let id = conn.id;
    // Off the network view before the applications hear of it, so an
    // application (or test) that sees `switch_down` never still finds the
    // switch listed.
    slot.up.store(false, Ordering::Release);
    table.deregister(id, &conn.stream);
    let _ = conn.stream.shutdown(Shutdown::Both);
    lock(&slot.out).stream = None;
    let was_up = conn.phase == Phase::Up;
    if was_up {
        let mut dpids = lock(&shared.dpids);
        if dpids.get(&conn.dpid) == Some(&id) {
            dpids.remove(&conn.dpid);
        }
        drop(dpids);
        let info = SwitchInfo {
            id,
            dpid: conn.dpid,
            version: conn.version,
            peer: Some(conn.peer),
        };
        for app in &shared.apps {
            app.switch_down(&info);
        }
        tracing::info!(dpid = %conn.dpid, switch = %id, peer = %conn.peer, reason, "switch disconnected");
    } else {
        tracing::info!(switch = %id, peer = %conn.peer, reason, "connection closed before handshake finished");
    }
    drop(conn);
    debug_assert!(matches!(
        slot.state(),
        TaskState::Running | TaskState::Notified
    ));
    table.release(idx);
}
