//! `shared-queue`: Maestro-Shared-Queue (Maestro §3.2.1).
//!
//! One reader thread polls every switch, reads at most the read size from
//! each ready one in turn (an equal chance in bytes), chops the bytes into
//! messages and puts them on a queue shared by all workers. Workers take
//! chunks off the queue up to the IBT, process and flush them. Kept for
//! comparison: the shared queue's lock and the hand-off between cores are
//! what the other designs avoid.
//!
//! A switch has at most one chunk in flight: the reader does not read it
//! again until a worker has released it. That keeps each switch's events
//! in order and its switch-local state owned by one thread, as the API
//! promises, and hands the chunk over without copying its bytes (the
//! chunk is the connection itself, with its part of a batch: the records
//! of its PACKET_INs and the positions of its other messages).

use crate::batch::Batch;
use crate::controller::Controller;
use crate::engine::{Chunk, Engine};
use crate::io::poll_ready;
use crate::sync::lock;
use crate::table::TaskState;
use mio::{Events, Poll, Waker};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

const IDLE_POLL: Duration = Duration::from_millis(50);

/// The queue between the reader and the workers.
pub(crate) struct Queue {
    chunks: Mutex<VecDeque<Chunk>>,
    available: Condvar,
    /// Batches returned by workers, emptied, for reuse.
    spare: Mutex<Vec<Batch>>,
    reader: Arc<Waker>,
    ready: Mutex<Vec<bool>>,
    reader_asleep: AtomicBool,
}

impl Queue {
    pub fn new(reader: Arc<Waker>) -> Queue {
        Queue {
            chunks: Mutex::new(VecDeque::new()),
            available: Condvar::new(),
            spare: Mutex::new(Vec::new()),
            reader,
            ready: Mutex::new(Vec::new()),
            reader_asleep: AtomicBool::new(false),
        }
    }
}

impl Queue {
    /// Switch `idx` needs service (its session's timer): the reader serves
    /// it in its next pass.
    pub fn ready(&self, idx: usize) {
        {
            let mut ready = lock(&self.ready);
            if ready.len() <= idx {
                ready.resize(idx + 1, false);
            }
            ready[idx] = true;
        }
        let _ = self.reader.wake();
    }
}

/// The reader ("select") thread.
pub(crate) fn run_reader(ctl: Arc<Controller>, q: Arc<Queue>, mut poll: Poll) {
    let table = ctl.table.clone();
    let mut engine = Engine::new(ctl.clone(), 0);
    let mut events = Events::with_capacity(1024);
    let mut ready: Vec<bool> = vec![false; table.slots.len()];
    let mut served_last_pass = false;
    while ctl.is_running() {
        let timeout = if served_last_pass {
            Duration::ZERO
        } else {
            IDLE_POLL
        };
        q.reader_asleep.store(!served_last_pass, Ordering::Release);
        let polled = poll_ready(&mut poll, &mut events, Some(timeout), &ctl.sockets, |idx| {
            ready[idx] = true
        });
        q.reader_asleep.store(false, Ordering::Release);
        if let Err(e) = polled {
            tracing::error!(error = %e, "epoll failed");
            break;
        }
        // Switches released by workers with input still pending, or whose
        // sessions need service.
        for (idx, r) in lock(&q.ready).iter_mut().enumerate() {
            if std::mem::take(r) {
                ready[idx] = true;
            }
        }
        served_last_pass = false;
        let hw = table.high_water();
        // The reader never processes batches, so it has no input rate of
        // its own: it reads `min_read`.
        let quantum = engine.quantum(hw.max(1));
        for (idx, is_ready) in ready.iter_mut().enumerate().take(hw) {
            if !*is_ready {
                continue;
            }
            let slot = &table.slots[idx];
            if !slot.transition(TaskState::Idle, TaskState::Running) {
                if slot.state() == TaskState::Free {
                    *is_ready = false;
                }
                continue;
            }
            *is_ready = false;
            let Some(task) = slot.take_task() else {
                slot.finish_service(false);
                continue;
            };
            engine.serve(idx, task, quantum);
            let spare = lock(&q.spare).pop().unwrap_or_default();
            let Some(chunk) = engine.take_chunk(spare) else {
                continue;
            };
            served_last_pass = true;
            lock(&q.chunks).push_back(chunk);
            q.available.notify_one();
        }
    }
    q.available.notify_all();
}

/// A worker: takes chunks up to the IBT, processes, releases.
pub(crate) fn run_worker(ctl: Arc<Controller>, q: Arc<Queue>, w: usize) {
    let table = ctl.table.clone();
    let mut engine = Engine::new(ctl.clone(), w);
    while ctl.is_running() {
        {
            let mut chunks = lock(&q.chunks);
            while chunks.is_empty() && ctl.is_running() {
                chunks = q
                    .available
                    .wait_timeout(chunks, IDLE_POLL)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            while let Some(chunk) = chunks.pop_front() {
                let spare = engine.adopt(chunk);
                lock(&q.spare).push(spare);
                if engine.batch_full() {
                    break;
                }
            }
        }
        let pending = !lock(&q.chunks).is_empty();
        let released = engine.process(pending);
        let mut wake = false;
        {
            let mut ready = lock(&q.ready);
            for r in released {
                table.slots[r.idx].finish_service(false);
                if r.ready {
                    if ready.len() <= r.idx {
                        ready.resize(r.idx + 1, false);
                    }
                    ready[r.idx] = true;
                    wake = true;
                }
            }
        }
        if wake || q.reader_asleep.load(Ordering::Acquire) {
            let _ = q.reader.wake();
        }
    }
    let _ = engine.process(false);
}
