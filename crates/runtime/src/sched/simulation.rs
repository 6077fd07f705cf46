//! The fair scheduler on synthetic time: its run queues
//! ([`super::queues::RunQueues`]) and the scheduling policy
//! ([`crate::policy::Policy`]) driven as `run_worker` and the engine drive
//! them, over emulated switches whose sockets are byte counters and whose
//! requests cost a fixed time to process. No sockets and no clock, so the
//! properties the papers claim are checked exactly and repeatably:
//! weighted max-min shares under skewed load (Maestro §3, Fig. 7-8), the
//! batching-delay bound through a load step (Maestro §4.3), Surplus Round
//! Robin's pay-back, and a light switch served within one round while 63
//! heavy ones are busy.

use super::queues::{Entry, RunQueues};
use crate::config::Batching;
use crate::policy::{Params, Policy, Service};
use crate::table::{SwitchTable, TaskState};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Bytes of one request (a PACKET_IN with a small frame).
const MSG: usize = 128;
/// What a switch's socket holds before its sender blocks (TCP's window).
const SOCKET: usize = 256 * 1024;
const KB: usize = 1024;
const BDU: Duration = Duration::from_millis(1);

/// One emulated switch.
#[derive(Debug, Default, Clone)]
struct Switch {
    /// Requests per second it offers.
    rate: f64,
    weight: u32,
    /// Requests offered so far (sent or blocked).
    offered: u64,
    /// Bytes in its socket, not read yet.
    socket: usize,
    /// Bytes read into its receive buffer, not served yet.
    buffered: usize,
    /// The last read filled the space offered.
    busy: bool,
    /// Input waits (set by a service, read when it is released).
    more: bool,
    /// Requests processed while counting.
    served: u64,
    /// Requests processed before each one of its own since its last
    /// arrival was noticed, if one waits: see [`Sim::light_waits`].
    waiting_since: Option<u64>,
}

/// One worker's run over emulated switches.
struct Sim {
    switches: Vec<Switch>,
    table: SwitchTable,
    queues: RunQueues,
    policy: Policy,
    /// Synthetic time since the start.
    now: Duration,
    t0: Instant,
    /// Fixed cost of a batch (system calls, the applications' per-batch
    /// work) and cost of each request in it.
    batch_cost: Duration,
    request_cost: Duration,
    /// The batch under construction: held switches and its requests.
    held: Vec<usize>,
    batch: usize,
    /// Only what is processed after this counts towards `served`.
    count_from: Duration,
    /// How long each batch took, with when it ended.
    batches: Vec<(Duration, Duration)>,
    /// Services of any switch between the noticed arrival of a watched
    /// switch's request and that request's service.
    watched: Option<usize>,
    services: u64,
    light_waits: Vec<u64>,
    pass_overs: u64,
    /// While counting: bytes read, and bytes already buffered when a read
    /// was made (which `RecvBuffer::compact_for` moves to the buffer's
    /// front first).
    read_bytes: usize,
    held_at_reads: usize,
}

impl Sim {
    fn new(rates: &[f64], weights: &[u32], request_cost: Duration) -> Sim {
        let n = rates.len();
        let table = SwitchTable::new(n, crate::Mastership::Standalone);
        for (i, &weight) in weights.iter().enumerate() {
            assert_eq!(table.allocate(), Some(i));
            let slot = &table.slots[i];
            slot.state.store(TaskState::Idle as u8, Ordering::Release);
            slot.weight.store(weight, Ordering::Relaxed);
        }
        Sim {
            switches: (0..n)
                .map(|i| Switch {
                    rate: rates[i],
                    weight: weights[i],
                    ..Switch::default()
                })
                .collect(),
            table,
            queues: RunQueues::new(1, Vec::new(), true),
            policy: Policy::new(params(16 * KB)),
            now: Duration::ZERO,
            t0: Instant::now(),
            batch_cost: Duration::from_micros(20),
            request_cost,
            held: Vec::new(),
            batch: 0,
            count_from: Duration::ZERO,
            batches: Vec::new(),
            watched: None,
            services: 0,
            light_waits: Vec::new(),
            pass_overs: 0,
            read_bytes: 0,
            held_at_reads: 0,
        }
    }

    fn instant(&self) -> Instant {
        self.t0 + self.now
    }

    /// Requests arrive up to now; a switch with input that is neither
    /// queued nor held becomes ready (its readiness edge).
    fn arrive(&mut self) {
        let secs = self.now.as_secs_f64();
        for (i, s) in self.switches.iter_mut().enumerate() {
            let due = (s.rate * secs) as u64;
            while s.offered < due {
                s.offered += 1;
                if s.socket + MSG <= SOCKET {
                    s.socket += MSG;
                    if Some(i) == self.watched && s.waiting_since.is_none() {
                        s.waiting_since = Some(self.services);
                    }
                }
            }
            if s.socket > 0 && self.table.slots[i].state() == TaskState::Idle {
                self.queues.ready(&self.table, i);
            }
        }
    }

    /// One service of held switch `i`, as `Engine::fill` does it.
    fn fill(&mut self, i: usize, quantum: usize) -> usize {
        let slot = &self.table.slots[i];
        let s = &mut self.switches[i];
        self.services += 1;
        let grant = match self.policy.service(
            quantum,
            s.weight,
            slot.surplus.load(Ordering::Relaxed),
            false,
        ) {
            Service::PassOver { surplus } => {
                s.more = true;
                slot.surplus.store(surplus, Ordering::Relaxed);
                self.pass_overs += 1;
                return 0;
            }
            Service::Serve(grant) => grant,
        };
        let (mut read, mut taken, mut added) = (false, 0, 0);
        let buffered_message = loop {
            if !read && (s.buffered < grant.limit || s.buffered < MSG) {
                read = true;
                let want = self.policy.read_size(grant.limit, s.busy, s.buffered);
                let n = s.socket.min(want / MSG * MSG);
                if self.now >= self.count_from {
                    self.read_bytes += n;
                    self.held_at_reads += s.buffered;
                }
                s.socket -= n;
                s.buffered += n;
                s.busy = n == want / MSG * MSG;
            }
            while (taken < grant.limit || added == 0) && s.buffered >= MSG {
                s.buffered -= MSG;
                taken += MSG;
                added += 1;
            }
            let buffered_message = s.buffered >= MSG;
            if read || buffered_message {
                break buffered_message;
            }
        };
        s.more = s.busy || buffered_message;
        if added > 0 {
            if let Some(since) = s.waiting_since.take() {
                self.light_waits.push(self.services - 1 - since);
            }
        }
        self.policy.took(taken);
        let idle = added == 0 && !s.more;
        if let Some(surplus) = self.policy.surplus_after(grant, taken, idle) {
            slot.surplus.store(surplus, Ordering::Relaxed);
        }
        if self.now >= self.count_from {
            s.served += added as u64;
        }
        self.batch += added;
        added
    }

    /// Processes the batch: its cost passes, IBT adapts, and the held
    /// switches go back to the queues as `queues::requeue` sends them.
    fn process(&mut self, pending: bool) {
        if self.held.is_empty() {
            return;
        }
        self.now += self.batch_cost + self.request_cost * self.batch as u32;
        let took = self
            .policy
            .batch_done(self.instant(), self.batch, pending, BDU);
        self.batches.push((self.now, took));
        self.batch = 0;
        for i in std::mem::take(&mut self.held) {
            let slot = &self.table.slots[i];
            if slot.finish_service(self.switches[i].more) {
                let round =
                    (slot.round.load(Ordering::Relaxed) + 1).max(self.queues.current_round());
                self.queues.push(
                    0,
                    Entry {
                        idx: i as u32,
                        generation: 0,
                        round,
                    },
                );
            }
        }
    }

    /// Runs until `end`, as `queues::run_worker` runs a worker.
    fn run(&mut self, end: Duration) {
        while self.now < end {
            self.arrive();
            if !self.queues.has_work_for(0) && self.held.is_empty() {
                self.now += Duration::from_micros(10);
                continue;
            }
            let pass = self.queues.len(0).max(1);
            for _ in 0..pass {
                let Some(e) = self.queues.pop(0) else { break };
                let i = e.idx as usize;
                let slot = &self.table.slots[i];
                assert!(slot.transition(TaskState::Queued, TaskState::Running));
                slot.round.store(e.round, Ordering::Relaxed);
                self.policy.begin(self.instant());
                self.held.push(i);
                let quantum = self.policy.quantum(self.queues.len(0) + 1);
                self.fill(i, quantum);
                if self.policy.batch_full(self.batch, self.held.len()) {
                    let pending = self.queues.has_work_for(0);
                    self.process(pending);
                    break;
                }
            }
            if self.batch > 0 || !self.queues.has_work_for(0) {
                while !self.policy.batch_full(self.batch, self.held.len())
                    && !self.queues.has_work_for(0)
                {
                    let quantum = self.policy.quantum(self.held.len());
                    let mut added = 0;
                    for h in 0..self.held.len() {
                        let i = self.held[h];
                        let s = &self.switches[i];
                        if s.more && self.policy.may_refill(s.buffered) {
                            added += self.fill(i, quantum);
                        }
                    }
                    if added == 0 {
                        break;
                    }
                }
                let pending = self.queues.has_work_for(0);
                if self.policy.batch_full(self.batch, self.held.len()) || !pending {
                    self.process(pending);
                }
            }
        }
    }

    fn served(&self) -> Vec<f64> {
        let secs = (self.now - self.count_from).as_secs_f64();
        self.switches
            .iter()
            .map(|s| s.served as f64 / secs)
            .collect()
    }
}

/// The fair scheduler's parameters with the quantum's floor at
/// `min_read` (16 KB by default).
fn params(min_read: usize) -> Params {
    Params {
        batching: Batching::Adaptive,
        fair: true,
        min_read,
        max_read: 64 * KB,
        static_read: 64 * KB,
        bdu: BDU,
    }
}

/// Weighted max-min fair shares of `capacity` among `demands`.
fn max_min(demands: &[f64], weights: &[u32], capacity: f64) -> Vec<f64> {
    let mut share = vec![0.0; demands.len()];
    let mut open: Vec<usize> = (0..demands.len()).collect();
    let mut left = capacity;
    while !open.is_empty() {
        let w: f64 = open.iter().map(|&i| f64::from(weights[i])).sum();
        let per_weight = left / w;
        let (sated, hungry): (Vec<usize>, Vec<usize>) = open
            .iter()
            .partition(|&&i| demands[i] <= per_weight * f64::from(weights[i]));
        if sated.is_empty() {
            for &i in &hungry {
                share[i] = per_weight * f64::from(weights[i]);
            }
            break;
        }
        for &i in &sated {
            share[i] = demands[i];
            left -= demands[i];
        }
        open = hungry;
    }
    share
}

#[test]
fn skewed_loads_get_their_weighted_max_min_shares() {
    // Maestro Fig. 7-8's setting: skewed demands at twice the capacity.
    // Four light switches below their share, four heavy ones (two of
    // weight 2) far above it.
    let cost = Duration::from_micros(2);
    let rates = [5e3, 10e3, 20e3, 30e3, 300e3, 300e3, 300e3, 300e3];
    let weights = [1, 1, 1, 1, 1, 1, 2, 2];
    let mut sim = Sim::new(&rates, &weights, cost);
    sim.count_from = Duration::from_millis(300);
    sim.run(Duration::from_secs(3));
    let got = sim.served();
    let capacity: f64 = got.iter().sum();
    assert!(capacity > 400e3, "the worker was not kept busy: {capacity}");
    let want = max_min(&rates, &weights, capacity);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 0.03 * w,
            "switch {i}: {g:.0}/s against its share {w:.0}/s ({got:?})"
        );
    }
}

#[test]
fn busy_switches_pay_back_whole_reads_and_share_equally() {
    // Sixteen switches all far above their share, with a cheap
    // application (250 ns a request, as the learning switch): the quantum
    // sits at its floor, a service takes a whole read and pays the
    // surplus back by being passed over (SRR), and over the run the
    // shares are equal.
    let rates = vec![1e6; 16];
    let mut sim = Sim::new(&rates, &[1; 16], Duration::from_nanos(250));
    sim.count_from = Duration::from_millis(300);
    sim.run(Duration::from_secs(2));
    let got = sim.served();
    let mean = got.iter().sum::<f64>() / got.len() as f64;
    assert!(sim.pass_overs > 0, "no switch ever paid a surplus back");
    // A whole read lands on an almost empty buffer: the service before
    // took what the read before brought, so little is moved to the
    // buffer's front before a read (a whole read beyond what was held
    // kept the same backlog held from read to read: 0.23 of a byte moved
    // per byte read here, 0.07 now).
    let moved = sim.held_at_reads as f64 / sim.read_bytes as f64;
    assert!(moved < 0.1, "{moved:.2} of a byte moved per byte read");
    for (i, g) in got.iter().enumerate() {
        assert!(
            (g - mean).abs() <= 0.02 * mean,
            "switch {i}: {g:.0}/s against the mean {mean:.0}/s"
        );
    }
}

#[test]
fn the_batching_delay_bound_holds_through_a_load_step() {
    // Light load, then a step to four times capacity (Maestro §4.3,
    // Table 1). A batch costs 20 µs plus 2 µs a request, so throughput
    // grows with the batch and IBT climbs until the 1 ms BDU stops it.
    // With a 1 KB quantum floor (the partitions' default) a batch gathers
    // many services, so IBT, not one service, sets its size.
    let mut sim = Sim::new(&[2e3; 16], &[1; 16], Duration::from_micros(2));
    sim.policy = Policy::new(params(KB));
    sim.run(Duration::from_millis(500));
    let light_ibt = sim.policy.threshold();
    let light_max = sim.batches.iter().map(|b| b.1).max().unwrap();
    for s in &mut sim.switches {
        // From now on 125,000 requests/s each: 4x what 2 µs allows.
        s.rate = 125e3;
        s.offered = (s.rate * sim.now.as_secs_f64()) as u64;
    }
    let step = sim.now;
    sim.run(step + Duration::from_secs(2));
    let after: Vec<Duration> = sim
        .batches
        .iter()
        .filter(|b| b.0 > step + Duration::from_millis(100))
        .map(|b| b.1)
        .collect();
    let worst = *after.iter().max().unwrap();
    let ibt = sim.policy.threshold();
    assert!(light_ibt <= 20, "light load keeps IBT low: {light_ibt}");
    assert!(
        light_max < BDU / 4,
        "light batches are short: {light_max:?}"
    );
    assert!(ibt >= 200, "overload raised IBT only to {ibt}");
    // A batch may pass the bound by the steps IBT takes before it turns,
    // and by the service that filled it: a whole read, at most a quarter
    // of a BDU's input (`Policy::service`).
    let slack = sim.request_cost * 2 * crate::ibt::IBT_STEP + BDU / 4;
    assert!(
        worst <= BDU + slack,
        "a batch took {worst:?} against the bound {BDU:?}"
    );
}

#[test]
fn a_light_switch_is_served_within_a_round_among_63_busy_ones() {
    // 63 switches each far above their share, one asking 200 times a
    // second: its request waits at most for the rest of the round in
    // progress (none at all when it has not been served in it yet).
    let mut rates = vec![100e3; 63];
    rates.push(200.0);
    let mut sim = Sim::new(&rates, &[1; 64], Duration::from_micros(2));
    sim.watched = Some(63);
    sim.run(Duration::from_secs(2));
    assert!(sim.light_waits.len() > 50, "{:?}", sim.light_waits);
    // Every request answered but those of the last round in progress.
    assert!(
        sim.switches[63].served >= 395,
        "{}",
        sim.switches[63].served
    );
    let worst = *sim.light_waits.iter().max().unwrap();
    assert!(
        worst <= 63,
        "the light switch waited for {worst} services of others"
    );
}
