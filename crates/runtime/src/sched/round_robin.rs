//! `round-robin`: Maestro-Round-Robin (Maestro §3.2.4, Maestro thesis §4.2.2.4).
//!
//! Every worker runs its own round over *all* switches. A switch that
//! another worker is serving is skipped and revisited once before the round
//! ends. Only one worker at a time polls epoll, once per round, and shares
//! what it learnt through per-switch ready flags, so idle sockets cost no
//! reads. Fair (each ready switch gets `weight` chances per round per
//! worker) at the price of every worker touching every switch's flags.

use crate::controller::Controller;
use crate::engine::{Engine, Released};
use crate::io::poll_ready;
use crate::sync::lock;
use crate::table::TaskState;
use mio::{Events, Poll};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long the polling worker blocks when no switch is ready.
const IDLE_POLL: Duration = Duration::from_millis(20);

/// What the round-robin workers share: readiness flags and the poller.
pub(crate) struct Readiness {
    ready: Box<[AtomicBool]>,
    poll: Mutex<Poll>,
    idle: Mutex<()>,
    wake: Condvar,
}

impl Readiness {
    pub fn new(ctl: &Controller, poll: Poll) -> Readiness {
        Readiness {
            ready: (0..ctl.table.slots.len())
                .map(|_| AtomicBool::new(false))
                .collect(),
            poll: Mutex::new(poll),
            idle: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Switch `idx` needs service (its session's timer).
    pub fn ready(&self, idx: usize) {
        if let Some(r) = self.ready.get(idx) {
            r.store(true, Ordering::Release);
            self.wake.notify_all();
        }
    }
}

fn release(ctl: &Controller, rr: &Readiness, released: &[Released]) {
    for r in released {
        ctl.table.slots[r.idx].finish_service(false);
        if r.ready {
            rr.ready[r.idx].store(true, Ordering::Release);
        }
    }
}

/// Takes switch `idx` if no other worker has it; false if busy.
fn try_serve(
    ctl: &Controller,
    rr: &Readiness,
    engine: &mut Engine,
    idx: usize,
    ready: usize,
) -> bool {
    let slot = &ctl.table.slots[idx];
    if !slot.transition(TaskState::Idle, TaskState::Running) {
        return slot.state() == TaskState::Free;
    }
    rr.ready[idx].store(false, Ordering::Release);
    let Some(task) = slot.take_task() else {
        slot.finish_service(false);
        return true;
    };
    let quantum = engine.quantum(ready);
    engine.serve(idx, task, quantum);
    if engine.batch_full() {
        let released = engine.process(true);
        release(ctl, rr, released);
    }
    true
}

/// Runs worker `w` until the runtime stops.
pub(crate) fn run_worker(ctl: Arc<Controller>, rr: Arc<Readiness>, w: usize) {
    let table = ctl.table.clone();
    let workers = ctl.workers.len().max(1);
    let mut engine = Engine::new(ctl.clone(), w);
    let mut skipped = Vec::new();
    let mut events = Events::with_capacity(1024);
    // Switches found ready in the previous round: the read quantum divides
    // a BDU's worth of input among them.
    let mut ready_last_round = 1;
    while ctl.is_running() {
        let hw = table.high_water();
        let mut found = false;
        let mut ready_now = 0;
        if hw > 0 {
            // Workers start their rounds at different places so they
            // rarely collide on the same switch.
            let start = w * hw / workers;
            for k in 0..hw {
                let idx = (start + k) % hw;
                if !rr.ready[idx].load(Ordering::Acquire) {
                    continue;
                }
                found = true;
                ready_now += 1;
                if !try_serve(&ctl, &rr, &mut engine, idx, ready_last_round) {
                    skipped.push(idx);
                }
            }
            // Revisit the switches that were busy, so each gets its chance
            // this round.
            for idx in skipped.drain(..) {
                if rr.ready[idx].load(Ordering::Acquire) {
                    try_serve(&ctl, &rr, &mut engine, idx, ready_last_round);
                }
            }
        }
        ready_last_round = ready_now.max(1);
        // Processed whenever it holds a switch, messages or not: a switch
        // whose read took none (a message arriving in pieces) would
        // otherwise stay held, and its later input would find it taken.
        if engine.held_len() > 0 {
            // Read the held switches again only when they are all the
            // ready ones; otherwise the last switches of a round would get
            // extra chances.
            while !engine.batch_full() && engine.held_len() >= ready_now && engine.refill() > 0 {}
            let pending = rr.ready.iter().take(hw).any(|r| r.load(Ordering::Relaxed));
            let released = engine.process(pending);
            release(&ctl, &rr, released);
        }
        // End of round: one worker polls and shares readiness.
        if let Ok(mut poll) = rr.poll.try_lock() {
            let timeout = if found { Duration::ZERO } else { IDLE_POLL };
            let mut any = false;
            let polled = poll_ready(&mut poll, &mut events, Some(timeout), &ctl.sockets, |idx| {
                rr.ready[idx].store(true, Ordering::Release);
                any = true;
            });
            if let Err(e) = polled {
                tracing::error!(error = %e, "epoll failed");
            }
            if any {
                rr.wake.notify_all();
            }
        } else if !found {
            let guard = lock(&rr.idle);
            let _ = rr.wake.wait_timeout(guard, IDLE_POLL);
        }
    }
    let released = engine.process(false);
    release(&ctl, &rr, released);
    rr.wake.notify_all();
}
