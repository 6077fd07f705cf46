//! The per-thread engine every scheduler drives: serve a switch (read,
//! chop into messages, add them to the batch, which reads each PACKET_IN
//! there and then: `batch.rs`), process the batch (the sessions' pass over
//! the other messages, then the pipeline, in `pipeline.rs`), flush output
//! (one write per switch per batch), and hand the switches back.
//!
//! Every decision on how much to serve, when a batch is full and when
//! replies are written is the [`Policy`]'s (`policy.rs`), which this loop
//! asks and gives the time from the controller's one clock; schedulers
//! differ only in *which* switch they serve next. Everything a message goes
//! through is here or in the modules this one calls, once.

use crate::batch::Batch;
use crate::closed::Closed;
use crate::conn::{Connection, SpareBuffers};
use crate::context::BatchSwitches;
use crate::controller::Controller;
use crate::framing::ReadOutcome;
use crate::io::{SwitchIo, Written};
use crate::outbox::{self, Outbox};
use crate::policy::{Params, Policy, Service};
use crate::session::CloseReason;
use crate::stats::{DelayTally, Tally, WorkerStats};
use crate::switch::SwitchId;
use crate::sync::lock;
use crate::table::Task;
use baton_openflow::Xid;
use baton_openflow::neutral::Message;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often a worker's IBT trace records a point.
const TRACE_INTERVAL: Duration = Duration::from_millis(100);

/// A switch held for the length of a batch.
pub(crate) struct Held {
    pub idx: usize,
    pub conn: Box<Connection>,
    /// Input is waiting: the last read filled the space offered, or a
    /// complete message is still buffered (see [`Engine::fill`]).
    pub more: bool,
    /// Why it must be closed after this batch, if it must.
    pub closing: Option<Closed>,
    /// Messages received in this batch.
    pub rx: u32,
    /// When it was first served in this batch: its messages wait from
    /// here until the batch's replies are written.
    pub since: Instant,
}

/// The held switches as the batch processor sees them.
struct HeldSwitches<'a> {
    held: &'a mut [Held],
    ctl: &'a Controller,
}

impl BatchSwitches for HeldSwitches<'_> {
    fn get(&mut self, i: usize) -> Option<&mut Connection> {
        let h = self.held.get_mut(i)?;
        if h.closing.is_some() {
            return None;
        }
        Some(&mut h.conn)
    }

    fn close(&mut self, i: usize, reason: CloseReason) {
        if let Some(h) = self.held.get_mut(i) {
            h.closing.get_or_insert(reason.into());
        }
    }

    fn switch_up(&mut self, i: usize) {
        if let Some(h) = self.held.get(i) {
            self.ctl.switch_up(h.idx, &h.conn);
        }
    }

    fn serves(&self, i: usize) -> bool {
        self.held
            .get(i)
            .is_some_and(|h| self.ctl.table.slots[h.idx].mastership().serves())
    }

    fn reply(&mut self, i: usize, xid: Xid, msg: Message) -> Option<Message> {
        let h = self.held.get(i)?;
        self.ctl.fabric.requests.offer(h.conn.id, xid, msg)
    }
}

/// One switch's messages from one read, handed from the shared-queue
/// reader to a worker: the switch itself and its part of a batch.
pub(crate) struct Chunk {
    held: Held,
    part: Batch,
}

/// A switch released after its batch: the caller decides where it goes
/// next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Released {
    pub idx: usize,
    pub id: SwitchId,
    /// Input is waiting (the read was full, or an event came while held).
    pub ready: bool,
}

/// One thread's batch under construction, and the policy that decides
/// what goes into it.
pub(crate) struct Engine {
    pub ctl: Arc<Controller>,
    held: Vec<Held>,
    batch: Batch,
    deferred: Vec<usize>,
    released: Vec<Released>,
    policy: Policy,
    /// The switches' sockets.
    io: Arc<dyn SwitchIo>,
    stats: Arc<WorkerStats>,
    last_trace: Instant,
    /// Messages read and written in the current batch, by type.
    rx_types: Tally,
    tx_types: Tally,
    /// (first served, messages) of each switch of the batch, and their
    /// waits, for the delay histogram.
    waits: Vec<(Instant, u32)>,
    delays: DelayTally,
    /// Buffers of the switches released with nothing in them, for the
    /// next switches served.
    spares: SpareBuffers,
    /// What the batch's applications sent to switches through the
    /// network handle, written when it is done ([`crate::outbox`]).
    outbox: Outbox,
}

impl Engine {
    /// Worker `worker`'s engine over the controller's sockets.
    pub fn new(ctl: Arc<Controller>, worker: usize) -> Engine {
        let io = ctl.sockets.clone();
        Engine::with_io(ctl, worker, io)
    }

    /// An engine that reaches the switches' sockets through `io`.
    pub fn with_io(ctl: Arc<Controller>, worker: usize, io: Arc<dyn SwitchIo>) -> Engine {
        let stats = ctl.workers[worker.min(ctl.workers.len() - 1)].clone();
        Engine {
            io,
            policy: Policy::new(Params::new(&ctl.config, ctl.bdu())),
            last_trace: ctl.clock.now(),
            ctl,
            held: Vec::new(),
            batch: Batch::default(),
            deferred: Vec::new(),
            released: Vec::new(),
            stats,
            rx_types: Tally::default(),
            tx_types: Tally::default(),
            waits: Vec::new(),
            delays: DelayTally::default(),
            spares: SpareBuffers::default(),
            outbox: Outbox::default(),
        }
    }

    /// Messages in the batch under construction.
    pub fn batch_len(&self) -> usize {
        self.batch.len()
    }

    /// Switches held in the batch under construction.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// True when the batch should be processed now ([`Policy::batch_full`]).
    pub fn batch_full(&self) -> bool {
        self.policy.batch_full(self.batch.len(), self.held.len())
    }

    /// Bytes of input to serve from a switch per service chance, with
    /// `ready` switches waiting ([`Policy::quantum`]).
    pub fn quantum(&self, ready: usize) -> usize {
        self.policy.quantum(ready)
    }

    /// Surplus Round Robin's pass-over of queued switch `idx` at
    /// `quantum`, decided before it is taken ([`Policy::service`]): true
    /// when the chance only pays back a quantum of its surplus; the caller
    /// then queues it again for its next round, without taking its task,
    /// holding it in a batch and releasing it, which cost as much as a
    /// small service each time (three chances in four are passed over when
    /// busy switches take whole reads at a 16 KB quantum).
    pub fn pass_over(&self, idx: usize, quantum: usize) -> bool {
        let slot = &self.ctl.table.slots[idx];
        let surplus = slot.surplus.load(Ordering::Relaxed);
        if surplus == 0 {
            return false;
        }
        let closing = self.io.killed(idx).is_some();
        match self
            .policy
            .service(quantum, slot.weight(), surplus, closing)
        {
            Service::PassOver { surplus } => {
                slot.surplus.store(surplus, Ordering::Relaxed);
                true
            }
            Service::Serve(_) => false,
        }
    }

    /// Serves switch `idx`, whose task the caller took by moving its
    /// state to `Running`: adds up to `quantum` bytes (times the switch's
    /// weight) of its complete messages to the batch, reading first if
    /// fewer than that are buffered. Returns the number of messages added.
    pub fn serve(&mut self, idx: usize, task: Task, quantum: usize) -> usize {
        let now = self.ctl.clock.now();
        self.policy.begin(now);
        let closing = self.io.killed(idx);
        let mut conn = task.conn;
        self.spares.lend(&mut conn);
        self.held.push(Held {
            idx,
            conn,
            more: false,
            closing,
            rx: 0,
            since: now,
        });
        self.fill(self.held.len() - 1, quantum, true, now)
    }

    /// Serves held switches that have more input again, so a batch can
    /// reach IBT even when few switches are active (Maestro Fig. 16).
    /// Their buffers are not compacted (batch entries point into them).
    /// Returns the number of messages added.
    pub fn refill(&mut self) -> usize {
        let quantum = self.quantum(self.held.len());
        let now = self.ctl.clock.now();
        let mut added = 0;
        for h in 0..self.held.len() {
            let held = &self.held[h];
            if held.more
                && held.closing.is_none()
                && self.policy.may_refill(held.conn.recv.buffered())
            {
                added += self.fill(h, quantum, false, now);
            }
        }
        added
    }

    /// One service of held switch `h`: reads if less than the policy's
    /// grant of complete messages is buffered, then hands at most the
    /// grant of them (at least one) to the batch, as received at `now`.
    ///
    /// Reading and serving are decoupled so that the default scheduler
    /// keeps Maestro's fine-grained rounds (a quantum per switch per
    /// round, Maestro §3.2) without paying a system call per quantum: a
    /// busy switch is read ahead ([`Policy::read_size`]) and the rest
    /// waits in its buffer for the following services. Whether the switch
    /// is passed over, and how much it may take, is the policy's
    /// ([`Policy::service`]).
    fn fill(&mut self, h: usize, quantum: usize, compact: bool, now: Instant) -> usize {
        let held = &mut self.held[h];
        let slot = &self.ctl.table.slots[held.idx];
        let surplus = slot.surplus.load(Ordering::Relaxed);
        let grant =
            match self
                .policy
                .service(quantum, slot.weight(), surplus, held.closing.is_some())
            {
                Service::PassOver { surplus } => {
                    // A chance to read a held switch again (`refill`);
                    // the queue passes a switch over before it is taken
                    // (`pass_over`). It has input: it stays ready.
                    held.more = true;
                    slot.surplus.store(surplus, Ordering::Relaxed);
                    return 0;
                }
                Service::Serve(grant) => grant,
            };
        let limit = grant.limit;
        // Not read while its output waits (`Sockets::pause_at`): served
        // from its buffer alone, and made ready again once the output is
        // written.
        let paused = self.io.output_paused(held.idx);
        let Connection { recv, session, .. } = &mut *held.conn;
        if compact {
            // Input left far into the buffer by earlier services moves to
            // the front, whether or not this service reads.
            recv.compact_for(0);
        }
        let mut read = paused;
        let mut added = 0;
        let mut taken = 0;
        let buffered_message = loop {
            if !read && held.closing.is_none() && (recv.unconsumed() < limit || !recv.has_message())
            {
                read = true;
                let want = self.policy.read_size(limit, recv.busy, recv.unconsumed());
                // Compacting moves bytes, so only before this switch has
                // messages in the batch.
                if compact && added == 0 {
                    recv.compact_for(want);
                }
                match self.io.read(held.idx, recv, want) {
                    Ok(ReadOutcome::Data | ReadOutcome::WouldBlock) => {}
                    Ok(ReadOutcome::Eof) => held.closing = Some(CloseReason::PeerClosed.into()),
                    Err(e) => held.closing = Some(e.into()),
                }
            }
            while held.closing.is_none() && (taken < limit || added == 0) {
                match recv.next_message() {
                    Ok(Some((at, len))) => {
                        self.rx_types.count(recv.slice(at, len));
                        taken += len as usize;
                        added += 1;
                        self.batch.add(h as u32, session, recv, (at, len), now);
                    }
                    Ok(None) => break,
                    Err(e) => held.closing = Some(CloseReason::Unframeable(e).into()),
                }
            }
            // Served from the buffer alone and now out of messages: data
            // that arrived meanwhile had its readiness edge taken by the
            // services that did not read, so read now rather than wait for
            // an edge that will not come (which would starve the switch).
            let buffered_message = recv.has_message();
            if read || held.closing.is_some() || buffered_message {
                break buffered_message;
            }
        };
        // Input is waiting if the last read filled the space offered (the
        // socket may hold more, and edge-triggered readiness will not say
        // so again) or a complete message is still buffered.
        held.more = (recv.busy && !paused) || buffered_message;
        held.rx += added as u32;
        self.policy.took(taken);
        let idle = added == 0 && !held.more;
        if let Some(surplus) = self.policy.surplus_after(grant, taken, idle) {
            slot.surplus.store(surplus, Ordering::Relaxed);
        }
        added
    }

    /// Processes the batch, flushes its output, and records it for IBT:
    /// `input_pending` says whether any switch still has input (Fig. 4
    /// releases a batch early, and steps IBT down, when none has).
    /// Returns the released switches; the caller re-queues the ready ones.
    pub fn process(&mut self, input_pending: bool) -> &[Released] {
        self.released.clear();
        if self.held.is_empty() {
            return &self.released;
        }
        let now = self.ctl.clock.now();
        let n = self.batch.len();
        let ctl = self.ctl.clone();
        for h in &mut self.held {
            let serves = ctl.table.slots[h.idx].mastership().serves();
            ctl.pipeline.reconcile(&mut h.conn, serves);
        }
        let (batch, held) = (&mut self.batch, &mut self.held);
        outbox::during(&mut self.outbox, || {
            batch.process(&mut HeldSwitches { held, ctl: &ctl }, &ctl.pipeline, now)
        });
        // Before the batch's own replies: a path's later flows reach their
        // switches before its first hop sends the packet on.
        let (io, tx_types) = (&self.io, &mut self.tx_types);
        self.outbox.drain(|id, bytes| {
            // Demoted (or past the fence) while the batch ran, as
            // `count_staged` checks.
            if ctl.table.get(id).is_some_and(|s| !ctl.table.may_change(s)) {
                crate::mastership::keep_read_only(bytes, 0);
            }
            let msgs = tx_types.count_all(bytes);
            // A failed write closes the switch (whoever reads it next).
            let _ = io.write(id, bytes, msgs, true);
        });
        self.poll_timeouts(now);
        // Counted before the replies are written, so whoever has a
        // switch's replies finds its messages counted; the ports the
        // operator reads follow the sessions'.
        self.waits.clear();
        for h in &mut self.held {
            let slot = &ctl.table.slots[h.idx];
            slot.counters
                .rx_msgs
                .fetch_add(u64::from(h.rx), Ordering::Relaxed);
            self.waits.push((h.since, h.rx));
            h.rx = 0;
            if h.conn.session.take_ports_changed() {
                let ports: Vec<_> = h.conn.session.ports().cloned().collect();
                *lock(&slot.ports) = std::sync::Arc::from(ports);
            }
        }
        self.count_staged();
        self.flush();
        let flushed = ctl.clock.now();
        for &(since, n) in &self.waits {
            self.delays
                .observe(flushed.saturating_duration_since(since), u64::from(n));
        }
        self.delays.drain_into(&self.stats.delay);
        self.rx_types.drain_into(&self.stats.types.rx);
        self.tx_types.drain_into(&self.stats.types.tx);
        let elapsed = self.policy.batch_done(flushed, n, input_pending, ctl.bdu());
        self.record(n, elapsed, flushed);
        self.release_all();
        &self.released
    }

    /// Keepalive for every held switch, and when each next needs waking
    /// without input (the timer thread reads it).
    fn poll_timeouts(&mut self, now: Instant) {
        let ctl = &self.ctl;
        for h in &mut self.held {
            if h.closing.is_some() {
                continue;
            }
            let conn = &mut *h.conn;
            if let Some(reason) = conn.session.poll_timeout(now, &mut conn.out) {
                h.closing = Some(Closed::join(reason, self.io.why_silent(h.idx, now)));
                continue;
            }
            let wake = ctl.clock.ms(conn.session.next_timeout());
            ctl.table.slots[h.idx]
                .wake_at_ms
                .store(wake, Ordering::Relaxed);
        }
    }

    fn record(&mut self, n: usize, elapsed: Duration, now: Instant) {
        let s = &self.stats;
        s.batches.fetch_add(1, Ordering::Relaxed);
        s.messages.fetch_add(n as u64, Ordering::Relaxed);
        s.batch_ns
            .fetch_add(elapsed.as_nanos() as u64, Ordering::Relaxed);
        s.max_batch.fetch_max(n as u64, Ordering::Relaxed);
        let threshold = self.policy.threshold();
        s.ibt.store(u64::from(threshold), Ordering::Relaxed);
        if now.saturating_duration_since(self.last_trace) >= TRACE_INTERVAL {
            self.last_trace = now;
            s.trace(self.ctl.clock.ms(now), threshold);
        }
    }

    /// Counts by type the replies the batch staged for each held switch,
    /// while they are still in the cache: a switch's staged output may
    /// wait several services to be written ([`crate::policy::WRITE_BATCH`]), by when
    /// walking it again costs a cache miss per message.
    fn count_staged(&mut self) {
        for h in &mut self.held {
            let conn = &mut h.conn;
            // Demoted (or past the fence) while the batch ran: what the
            // applications staged for the switch must not reach it.
            if !self.ctl.table.may_change(&self.ctl.table.slots[h.idx]) {
                let dropped = crate::mastership::keep_read_only(&mut conn.out, conn.counted);
                if dropped > 0 {
                    tracing::debug!(parent: &conn.span, dropped, "not master: staged changes dropped");
                }
            }
            let new = conn.out.get(conn.counted..).unwrap_or_default();
            conn.counted_msgs += self.tx_types.count_all(new);
            conn.counted = conn.out.len();
        }
    }

    /// Writes each held switch's staged output with one system call
    /// (Beacon Alg. 2), when the policy says so ([`Policy::write_now`]).
    /// A switch whose output lock another thread holds is skipped and
    /// revisited after the others (Maestro thesis §4.2.3.1).
    fn flush(&mut self) {
        self.deferred.clear();
        for i in 0..self.held.len() {
            let h = &mut self.held[i];
            let more_input = h.more && h.closing.is_none();
            if !self.policy.write_now(h.conn.out.len(), more_input) {
                continue;
            }
            if !write_staged(&*self.io, h, false) {
                self.deferred.push(i);
            }
        }
        for k in 0..self.deferred.len() {
            write_staged(&*self.io, &mut self.held[self.deferred[k]], true);
        }
    }

    fn release_all(&mut self) {
        let ctl = self.ctl.clone();
        let most_spares = self.held.len().max(SpareBuffers::KEEP);
        for mut h in self.held.drain(..) {
            let slot = &ctl.table.slots[h.idx];
            self.spares.take_back(&mut h.conn, most_spares);
            let task = Task { conn: h.conn };
            if let Some(reason) = h.closing {
                ctl.close(h.idx, task, &reason);
                continue;
            }
            let id = task.conn.id;
            slot.put_task(task);
            self.released.push(Released {
                idx: h.idx,
                id,
                ready: h.more,
            });
        }
    }

    /// Takes the switch just served, with its messages, out of this
    /// engine (the shared-queue reader hands it to a worker). `spare` is a
    /// batch to reuse for them.
    pub fn take_chunk(&mut self, spare: Batch) -> Option<Chunk> {
        let held = self.held.pop()?;
        let part = self.batch.take_into(spare);
        self.policy.batch_handed_off();
        Some(Chunk { held, part })
    }

    /// Adds a chunk from the shared queue to this engine's batch; returns
    /// its emptied batch for reuse.
    pub fn adopt(&mut self, chunk: Chunk) -> Batch {
        self.policy.begin(self.ctl.clock.now());
        let Chunk { held, mut part } = chunk;
        self.batch.append(&mut part, self.held.len() as u32);
        self.held.push(held);
        part
    }
}

/// Writes `h`'s staged output, which [`Engine::count_staged`] counted;
/// false (nothing done) when another thread holds its output and `wait`
/// is not set.
fn write_staged(io: &dyn SwitchIo, h: &mut Held, wait: bool) -> bool {
    let conn = &mut *h.conn;
    match io.write(conn.id, &conn.out, conn.counted_msgs, wait) {
        Written::Busy => return false,
        Written::Done => {}
        // Whoever failed the write asked for the close, and said why.
        Written::Failed(why) => {
            if h.closing.is_none() {
                h.closing = why;
            }
        }
    }
    conn.out.clear();
    conn.counted = 0;
    conn.counted_msgs = 0;
    // A one-off burst should not pin a large buffer to the switch, or to
    // the spares it goes back to.
    if conn.out.capacity() > 1 << 20 {
        conn.out = Vec::new();
    }
    true
}

#[cfg(test)]
mod tests;
