//! Run-queue schedulers: `fair` (the default), `static-partition` and
//! `dynamic-partition`.
//!
//! Each worker has its own epoll instance and run queue of ready switches,
//! and serves each switch it pops to completion on its own core (no
//! hand-off on the hot path, Maestro §3.2.5, McNettle §5.1). A switch is
//! queued when it becomes readable, served once per round (`weight` reads
//! worth of input), and re-queued at the tail while input remains, so the
//! switches of one queue share its worker round-robin.
//!
//! - `static-partition` (NOX, Beacon, §3.2.2): a switch's worker is fixed
//!   at connect time (round-robin); no stealing. Fast, but an unlucky
//!   assignment leaves some workers idle and some switches starved.
//! - `dynamic-partition` (§3.2.3): as static, plus a thread that every
//!   period measures each switch's input rate and re-assigns switches with
//!   the greedy algorithm of Fig. 3 ([`super::partition::greedy`]).
//! - `fair`: as static, plus *global rounds* and *stealing*. Every queue
//!   entry carries the round in which it is due. A worker serves its own
//!   queue while the entry at its head is due in the current round; when
//!   it has nothing due, it takes due entries from the heads of other
//!   workers' queues; when no queue has anything due, the round advances.
//!   A switch that becomes ready from idle (a light switch, below its
//!   fair share) is served before the busy ones: first if it sat out the
//!   last round as well (a probe, a new flow: fq_codel's new flows, RFC
//!   8290 §4.1), else in the order the light switches became ready; in
//!   the current round if it has not been served in it, else in the
//!   next. So a light switch waits for the service in progress and the
//!   light switches ahead of it, not for a whole round, and the rounds
//!   can use a larger quantum ([`crate::SchedulerKind::default_min_read`]).
//!   A busy switch, queued again after its service, joins the tail, due
//!   in its next round. (With every light switch pushed at the head and
//!   those served in the round at the tail, behind the busy ones, light
//!   switches were served out of the order they came: with 10,000
//!   switches in latency mode p99 was 1.12-1.59x the responder's, against
//!   0.98-1.06x in the order they came; serving every light switch in
//!   that order, a probe among busy switches waited 2.5 ms instead of
//!   1.0. BENCHMARKS.md, "Scaling in switches and workers".)
//!   A busy switch that took a whole read pays back its surplus by being
//!   passed over (Surplus Round Robin, `policy/surplus.rs`): in the queue,
//!   without being taken, and queued again for its next round.
//!   So every ready switch gets its `weight` chances per round whichever
//!   worker it sits on (weighted max-min fairness, as Maestro-Round-Robin),
//!   while most services stay on the switch's own core (the throughput of
//!   a partition). This is distributed weighted round-robin with work
//!   stealing; the stealing also keeps every worker busy while any switch
//!   has input (work conservation), which static partitioning cannot.

use crate::config::SchedulerKind;
use crate::controller::Controller;
use crate::engine::{Engine, Released};
use crate::io::poll_ready;
use crate::sync::lock;
use crate::table::{SwitchTable, TaskState};
use mio::{Events, Poll, Waker};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// How long an idle worker sleeps in epoll before re-checking for stop and
/// stealable work.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// A queued switch: slot, generation, and the round it is due in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub idx: u32,
    pub generation: u32,
    pub round: u64,
}

/// Where in its worker's queue a switch waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// Ready from idle after sitting out the last round as well (a probe,
    /// a new flow): served first.
    First,
    /// Ready from idle, served in the last round or this one (a light
    /// switch with steady traffic): after `First`, before the busy ones.
    Light,
    /// Busy (or any switch, for the partition schedulers).
    Rest,
}

/// One worker's run queue: three lanes, each in the order its entries
/// came, served in that order of lanes as far as their heads are due.
#[derive(Debug, Default)]
struct Queue {
    first: VecDeque<Entry>,
    light: VecDeque<Entry>,
    rest: VecDeque<Entry>,
}

impl Queue {
    fn push(&mut self, e: Entry, lane: Lane) {
        match lane {
            Lane::First => self.first.push_back(e),
            Lane::Light => self.light.push_back(e),
            Lane::Rest => self.rest.push_back(e),
        }
    }

    /// The next entry in round `round`: due ones only when `due_only`.
    /// A light switch due in the next round at the head of its lane keeps
    /// the light ones behind it waiting until then (each still gets a
    /// turn per round it is ready in, and in the order they came).
    fn pop(&mut self, due_only: bool, round: u64) -> Option<Entry> {
        let due = |q: &VecDeque<Entry>| q.front().is_some_and(|e| e.round <= round);
        if let Some(e) = self.first.pop_front() {
            return Some(e);
        }
        if due(&self.light) {
            return self.light.pop_front();
        }
        if due(&self.rest) || !due_only {
            if let Some(e) = self.rest.pop_front() {
                return Some(e);
            }
        }
        if due_only {
            None
        } else {
            self.light.pop_front()
        }
    }

    fn len(&self) -> usize {
        self.first.len() + self.light.len() + self.rest.len()
    }
}

/// The workers' run queues.
pub(crate) struct RunQueues {
    queues: Vec<Mutex<Queue>>,
    lens: Vec<AtomicUsize>,
    round: AtomicU64,
    steal: bool,
    sleeping: Vec<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
}

impl RunQueues {
    /// Queues for `workers` workers; `wakers[w]` interrupts worker `w`'s
    /// epoll wait (tests pass none).
    pub fn new(workers: usize, wakers: Vec<Arc<Waker>>, steal: bool) -> RunQueues {
        let n = workers.max(1);
        RunQueues {
            queues: (0..n).map(|_| Mutex::new(Queue::default())).collect(),
            lens: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            round: AtomicU64::new(0),
            steal,
            sleeping: (0..n).map(|_| AtomicBool::new(false)).collect(),
            wakers,
        }
    }

    pub fn current_round(&self) -> u64 {
        self.round.load(Ordering::Acquire)
    }

    /// Queues a switch on worker `w`, waking it (or, when stealing is on,
    /// another sleeping worker) if needed.
    pub fn push(&self, w: usize, e: Entry) {
        self.push_at(w, e, Lane::Rest);
    }

    /// As [`RunQueues::push`], into `lane`.
    fn push_at(&self, w: usize, e: Entry, lane: Lane) {
        let w = w % self.queues.len();
        let len = {
            let mut q = lock(&self.queues[w]);
            q.push(e, lane);
            q.len()
        };
        self.lens[w].store(len, Ordering::Release);
        if self.sleeping[w].load(Ordering::Acquire) {
            self.wake(w);
        } else if self.steal && len > 1 {
            if let Some(v) =
                (0..self.sleeping.len()).find(|&v| self.sleeping[v].load(Ordering::Acquire))
            {
                self.wake(v);
            }
        }
    }

    fn wake(&self, w: usize) {
        if self.sleeping[w].swap(false, Ordering::AcqRel) {
            if let Some(waker) = self.wakers.get(w) {
                let _ = waker.wake();
            }
        }
    }

    pub fn wake_all(&self) {
        for w in &self.wakers {
            let _ = w.wake();
        }
    }

    fn pop_own(&self, w: usize, due_only: bool, round: u64) -> Option<Entry> {
        let mut q = lock(&self.queues[w]);
        let e = q.pop(due_only, round)?;
        self.lens[w].store(q.len(), Ordering::Release);
        Some(e)
    }

    fn steal_from_others(&self, w: usize, due_only: bool, round: u64) -> Option<Entry> {
        let n = self.queues.len();
        (1..n)
            .map(|k| (w + k) % n)
            .filter(|&v| self.lens[v].load(Ordering::Acquire) > 0)
            .find_map(|v| self.pop_own(v, due_only, round))
    }

    /// The next switch worker `w` should serve.
    pub fn pop(&self, w: usize) -> Option<Entry> {
        if !self.steal {
            return self.pop_own(w, false, u64::MAX);
        }
        let round = self.current_round();
        if let Some(e) = self.pop_own(w, true, round) {
            return Some(e);
        }
        if let Some(e) = self.steal_from_others(w, true, round) {
            return Some(e);
        }
        // Nothing due in this round anywhere: start the next one.
        if self.lens.iter().any(|l| l.load(Ordering::Acquire) > 0) {
            let _ =
                self.round
                    .compare_exchange(round, round + 1, Ordering::AcqRel, Ordering::Acquire);
            let round = self.current_round();
            return self
                .pop_own(w, false, round)
                .or_else(|| self.steal_from_others(w, false, round));
        }
        None
    }

    /// Whether worker `w` could find work without polling.
    pub fn has_work_for(&self, w: usize) -> bool {
        if self.lens[w].load(Ordering::Acquire) > 0 {
            return true;
        }
        self.steal && self.lens.iter().any(|l| l.load(Ordering::Acquire) > 0)
    }

    pub fn len(&self, w: usize) -> usize {
        self.lens[w].load(Ordering::Acquire)
    }

    /// Switch `idx` has input (or its session needs service): queue it on
    /// its home worker unless it is queued or being served already.
    pub fn ready(&self, table: &SwitchTable, idx: usize) {
        let Some(slot) = table.slots.get(idx) else {
            return;
        };
        if slot.notify() {
            // Fair: a switch ready from idle goes before the busy ones:
            // first if it sat out the last round too, else after the
            // light ones ready before it; in this round if its turn in it
            // is still to come, else in the next, so it gets no more than
            // its share.
            let round = self.current_round();
            let last = slot.round.load(Ordering::Relaxed);
            let (lane, due) = if !self.steal {
                (Lane::Rest, round)
            } else if last.saturating_add(1) < round {
                (Lane::First, round)
            } else if last < round {
                (Lane::Light, round)
            } else {
                (Lane::Light, round + 1)
            };
            let entry = Entry {
                idx: idx as u32,
                generation: slot.generation.load(Ordering::Acquire),
                round: due,
            };
            self.push_at(slot.home.load(Ordering::Acquire), entry, lane);
        }
    }
}

/// Runs worker `w` until the runtime stops.
pub(crate) fn run_worker(ctl: Arc<Controller>, queues: Arc<RunQueues>, w: usize, mut poll: Poll) {
    let kind = ctl.config.scheduler;
    let table = ctl.table.clone();
    let mut engine = Engine::new(ctl.clone(), w);
    let mut events = Events::with_capacity(1024);
    while ctl.is_running() {
        let busy = queues.has_work_for(w) || engine.batch_len() > 0;
        let timeout = if busy {
            Some(Duration::ZERO)
        } else {
            queues.sleeping[w].store(true, Ordering::Release);
            // Re-check after announcing sleep, so a push in between wakes us.
            if queues.has_work_for(w) {
                queues.sleeping[w].store(false, Ordering::Release);
                Some(Duration::ZERO)
            } else {
                Some(IDLE_POLL)
            }
        };
        let polled = poll_ready(&mut poll, &mut events, timeout, &ctl.sockets, |idx| {
            queues.ready(&table, idx)
        });
        queues.sleeping[w].store(false, Ordering::Release);
        if let Err(e) = polled {
            tracing::error!(worker = w, error = %e, "epoll failed");
            break;
        }
        // One pass: serve as many switches as are queued now, then poll
        // again so that newly ready switches join the rotation.
        let pass = queues.len(w).max(1);
        for _ in 0..pass {
            let Some(e) = queues.pop(w) else {
                break;
            };
            let idx = e.idx as usize;
            let slot = &table.slots[idx];
            if slot.generation.load(Ordering::Acquire) != e.generation {
                continue;
            }
            let quantum = engine.quantum(queues.len(w) + 1);
            if engine.pass_over(idx, quantum) {
                // Still queued, with its input: its chance in this round
                // is spent. Only `fair` keeps a surplus, and it re-queues
                // a switch on the worker that had its last chance.
                slot.round.store(e.round, Ordering::Relaxed);
                slot.home.store(w, Ordering::Release);
                queues.push(w, next_round(&queues, e));
                continue;
            }
            if !slot.transition(TaskState::Queued, TaskState::Running) {
                continue;
            }
            slot.round.store(e.round, Ordering::Relaxed);
            let Some(task) = slot.take_task() else {
                slot.finish_service(false);
                continue;
            };
            engine.serve(idx, task, quantum);
            if engine.batch_full() {
                let pending = queues.has_work_for(w);
                requeue(&ctl, &queues, w, kind, engine.process(pending));
                // Fair polls before the next batch, so that a switch that
                // became ready meanwhile is queued (at the head) after
                // about a batch rather than after a pass over the queue.
                if kind == SchedulerKind::Fair {
                    break;
                }
            }
        }
        if engine.batch_len() > 0 || !queues.has_work_for(w) {
            // Few switches: read the held ones again before giving up on a
            // full batch.
            while !engine.batch_full() && !queues.has_work_for(w) && engine.refill() > 0 {}
            let pending = queues.has_work_for(w);
            if engine.batch_full() || !pending {
                requeue(&ctl, &queues, w, kind, engine.process(pending));
            }
        }
    }
    // Hand back whatever is held so the runtime can close it.
    let _ = engine.process(false);
}

fn requeue(
    ctl: &Controller,
    queues: &RunQueues,
    w: usize,
    kind: SchedulerKind,
    released: &[Released],
) {
    let table = &ctl.table;
    for r in released {
        let slot = &table.slots[r.idx];
        if kind == SchedulerKind::DynamicPartition {
            // A no-op unless the repartitioner gave it a new home.
            ctl.sockets
                .move_registration(r.id, slot.home.load(Ordering::Acquire));
        }
        if slot.finish_service(r.ready) {
            // A switch that keeps its input pending stays with the worker
            // that served it last (stealing migrates busy switches); the
            // partition schedulers keep it on its assigned worker.
            let target = if kind == SchedulerKind::Fair {
                slot.home.store(w, Ordering::Release);
                w
            } else {
                slot.home.load(Ordering::Acquire)
            };
            let served = Entry {
                idx: r.idx as u32,
                generation: r.id.generation(),
                round: slot.round.load(Ordering::Relaxed),
            };
            queues.push(target, next_round(queues, served));
        }
    }
}

/// Entry `e`, which had its chance in its round, due in its next one (or
/// the current round, if that is later).
fn next_round(queues: &RunQueues, e: Entry) -> Entry {
    Entry {
        round: (e.round + 1).max(queues.current_round()),
        ..e
    }
}

/// Re-partitions switches by input rate every period (dynamic-partition).
pub(crate) fn run_repartitioner(ctl: Arc<Controller>, workers: usize) {
    let table = &ctl.table;
    let mut last: Vec<u64> = Vec::new();
    while ctl.is_running() {
        std::thread::park_timeout(ctl.config.repartition_period);
        if !ctl.is_running() {
            break;
        }
        let hw = table
            .high_water
            .load(Ordering::Acquire)
            .min(table.slots.len());
        last.resize(hw, 0);
        let mut rates = vec![0.0; hw];
        for (i, rate) in rates.iter_mut().enumerate() {
            let s = &table.slots[i];
            let now = s.counters.rx_msgs.load(Ordering::Relaxed);
            *rate = now.saturating_sub(last[i]) as f64;
            last[i] = now;
        }
        let assignment = super::partition::greedy(&rates, workers);
        for (i, &w) in assignment.iter().enumerate() {
            let s = &table.slots[i];
            if s.state() != TaskState::Free {
                s.home.store(w, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `steps` rounds of every worker in lock-step, each switch
    /// always having input (overload), re-queued as `run_worker` does:
    /// `fair` keeps a switch with the worker that served it, round + 1;
    /// the partitions return it to its home. Returns services per switch.
    fn simulate(steal: bool, homes: &[usize], workers: usize, steps: usize) -> Vec<u64> {
        let q = RunQueues::new(workers, Vec::new(), steal);
        for (i, &h) in homes.iter().enumerate() {
            q.push(
                h,
                Entry {
                    idx: i as u32,
                    generation: 0,
                    round: 0,
                },
            );
        }
        let mut served = vec![0u64; homes.len()];
        for _ in 0..steps {
            for w in 0..workers {
                let Some(e) = q.pop(w) else { continue };
                served[e.idx as usize] += 1;
                let round = (e.round + 1).max(q.current_round());
                let target = if steal { w } else { homes[e.idx as usize] };
                q.push(target, Entry { round, ..e });
            }
        }
        served
    }

    fn jain(x: &[u64]) -> f64 {
        let s: f64 = x.iter().map(|&v| v as f64).sum();
        let s2: f64 = x.iter().map(|&v| (v as f64).powi(2)).sum();
        s * s / (x.len() as f64 * s2)
    }

    #[test]
    fn static_partition_gives_an_unlucky_worker_s_switches_less() {
        // Three switches landed on worker 0, one on worker 1 (Maestro
        // §3.2.2: equal counts per worker are not equal load).
        let served = simulate(false, &[0, 0, 0, 1], 2, 3000);
        assert_eq!(served, vec![1000, 1000, 1000, 3000]);
        assert!(jain(&served) < 0.8);
    }

    #[test]
    fn fair_gives_every_switch_one_service_per_round() {
        let served = simulate(true, &[0, 0, 0, 1], 2, 3000);
        let (min, max) = (served.iter().min().unwrap(), served.iter().max().unwrap());
        assert!(max - min <= 1, "{served:?}");
        assert!(jain(&served) > 0.999);
        // Work conserving: both workers busy every step.
        assert_eq!(served.iter().sum::<u64>(), 6000);
    }

    #[test]
    fn fair_is_fair_with_many_switches_on_one_worker() {
        let homes: Vec<usize> = (0..37)
            .map(|i| if i < 30 { 0 } else { 1 + i % 3 })
            .collect();
        let served = simulate(true, &homes, 4, 3700);
        let (min, max) = (served.iter().min().unwrap(), served.iter().max().unwrap());
        assert!(max - min <= 1, "{served:?}");
    }

    #[test]
    fn the_round_advances_only_when_nothing_is_due() {
        let q = RunQueues::new(2, Vec::new(), true);
        q.push(
            0,
            Entry {
                idx: 0,
                generation: 0,
                round: 1,
            },
        );
        q.push(
            1,
            Entry {
                idx: 1,
                generation: 0,
                round: 0,
            },
        );
        // Worker 0's own head is not due: it takes worker 1's due entry.
        assert_eq!(q.pop(0).map(|e| e.idx), Some(1));
        assert_eq!(q.current_round(), 0);
        // Nothing due anywhere: the round advances and work continues.
        assert_eq!(q.pop(1).map(|e| e.idx), Some(0));
        assert_eq!(q.current_round(), 1);
        assert_eq!(q.pop(0), None);
        assert!(!q.has_work_for(0));
    }

    /// A slot made `Idle` (connected, not queued) that was last served in
    /// `round`.
    fn idle_slot(t: &SwitchTable, round: u64) -> usize {
        let i = t.allocate().unwrap();
        let slot = &t.slots[i];
        slot.state.store(TaskState::Idle as u8, Ordering::Release);
        slot.round.store(round, Ordering::Relaxed);
        i
    }

    fn busy_entry(idx: u32, round: u64) -> Entry {
        Entry {
            idx,
            generation: 0,
            round,
        }
    }

    #[test]
    fn fair_lets_a_switch_that_has_not_had_its_turn_in_first() {
        let t = SwitchTable::new(8, crate::Mastership::Standalone);
        let q = RunQueues::new(1, Vec::new(), true);
        // Advance to round 2 with two busy switches queued, due now.
        q.round.store(2, Ordering::Release);
        q.push(0, busy_entry(6, 2));
        q.push(0, busy_entry(7, 2));
        let light = idle_slot(&t, 0);
        let served = idle_slot(&t, 2);
        q.ready(&t, served);
        q.ready(&t, light);
        // The light switch (last served in round 0) comes first, the busy
        // ones keep their order, and the switch served in this round
        // already waits for round 3.
        let order: Vec<(usize, u64)> = std::iter::from_fn(|| q.pop(0))
            .map(|e| (e.idx as usize, e.round))
            .collect();
        assert_eq!(order, vec![(light, 2), (6, 2), (7, 2), (served, 3)]);
        assert_eq!(q.current_round(), 3);
    }

    #[test]
    fn fair_serves_the_light_switches_in_the_order_they_became_ready() {
        let t = SwitchTable::new(8, crate::Mastership::Standalone);
        let q = RunQueues::new(1, Vec::new(), true);
        q.round.store(2, Ordering::Release);
        // Served in round 2 and ready again: due in round 3.
        let early = idle_slot(&t, 2);
        q.ready(&t, early);
        q.push(0, busy_entry(7, 3));
        // The round ends; a switch last served in round 2 becomes ready.
        q.round.store(3, Ordering::Release);
        let late = idle_slot(&t, 2);
        q.ready(&t, late);
        // Both light ones before the busy one, the earlier first: neither
        // waits for the light switches that became ready after it.
        let order: Vec<usize> = std::iter::from_fn(|| q.pop(0))
            .map(|e| e.idx as usize)
            .collect();
        assert_eq!(order, vec![early, late, 7]);
        assert_eq!(q.current_round(), 3);
    }

    #[test]
    fn partitions_queue_a_ready_switch_at_the_tail() {
        let t = SwitchTable::new(8, crate::Mastership::Standalone);
        let q = RunQueues::new(1, Vec::new(), false);
        q.push(0, busy_entry(7, 0));
        let light = idle_slot(&t, 0);
        q.ready(&t, light);
        assert_eq!(q.pop(0).map(|e| e.idx), Some(7));
        assert_eq!(q.pop(0).map(|e| e.idx as usize), Some(light));
    }

    #[test]
    fn partitions_never_steal() {
        let q = RunQueues::new(2, Vec::new(), false);
        q.push(
            0,
            Entry {
                idx: 0,
                generation: 0,
                round: 0,
            },
        );
        assert_eq!(q.pop(1), None);
        assert!(!q.has_work_for(1));
        assert_eq!(q.pop(0).map(|e| e.idx), Some(0));
    }
}
