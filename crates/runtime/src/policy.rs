//! The scheduling policy of one worker, apart from its I/O: how much of a
//! switch to serve per service chance (the quantum, Maestro §3.2), whether
//! to pass a switch over while it pays back a whole read (Surplus Round
//! Robin, [`surplus`]), how far to read ahead, when a batch is full (IBT,
//! Maestro §3.3 Fig. 4, in [`crate::ibt`]), when a switch's staged replies
//! are written, and the smoothed input rate these follow.
//!
//! [`Policy`] never reads a clock and never touches a socket: the engine
//! (`engine.rs`) gives it `now`, the bytes a service took and the size of
//! each batch, and does what it answers. So its decisions can be tested on
//! synthetic time (`sched/simulation.rs` runs it with the run queues over
//! emulated switches: weighted max-min shares, the batching-delay bound
//! under a load step, a light switch among 63 busy ones).

pub(crate) mod surplus;

use crate::config::{Batching, Config, SchedulerKind};
use crate::ibt::{Ibt, SMOOTHING_WEIGHT};
use std::time::{Duration, Instant};
use surplus::Chance;

/// Staged output a switch with input waiting may accumulate before it is
/// written ([`Policy::write_now`]). Chosen by cbench at 16 and 64
/// switches: 64 KiB was no better (BENCHMARKS.md, "Tried and not kept":
/// 3.11 M against 3.16 M), and writing each quantum's few kilobytes cost a
/// system call per few dozen replies.
pub(crate) const WRITE_BATCH: usize = 32 * 1024;

/// Past this many buffered bytes a held switch is not read again in the
/// same batch ([`Policy::may_refill`]): four whole reads (`max_read`,
/// 64 KiB by default) of one switch in one batch, enough for IBT to fill
/// a batch from few switches (Maestro Fig. 16), while a batch's buffers
/// cannot grow without bound (they are not compacted while the batch
/// points into them).
pub(crate) const MAX_HELD_BUFFER: usize = 256 * 1024;

/// A whole read is limited to this share of one BDU's input at the
/// measured rate, so that a switch that becomes ready waits at most that
/// long for the service in progress: without the limit a probe's delay
/// under overload went from 0.94 to 1.88 ms (BENCHMARKS.md, "Fairness and
/// the schedulers", tenth session).
const WHOLE_READ_SHARE_OF_BDU: f64 = 0.25;

/// What the policy needs of the configuration, read once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    pub batching: Batching,
    /// Surplus Round Robin and whole reads (the `fair` scheduler).
    pub fair: bool,
    /// The quantum's floor with adaptive batching.
    pub min_read: usize,
    /// The quantum's ceiling, and the read-ahead of a busy switch.
    pub max_read: usize,
    /// The fixed quantum with static batching (Beacon: 64 KB).
    pub static_read: usize,
    pub bdu: Duration,
}

impl Params {
    pub fn new(config: &Config, bdu: Duration) -> Params {
        Params {
            batching: config.batching(),
            fair: config.scheduler == SchedulerKind::Fair,
            min_read: config.min_read(),
            max_read: config.max_read,
            static_read: config.static_read_size,
            bdu,
        }
    }
}

/// What a switch's service chance does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    /// Passed over: it still pays back a whole read; `surplus` is left.
    PassOver { surplus: usize },
    /// Served under this grant.
    Serve(Grant),
}

/// How much one service may take from a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grant {
    /// What it is owed: its quantum (times its weight) less its surplus.
    pub allowance: usize,
    /// What it may take (more than `allowance` for a whole read).
    pub limit: usize,
}

/// One worker's scheduling decisions and the state they follow.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    params: Params,
    ibt: Ibt,
    /// Smoothed input rate, bytes per second of busy time.
    input_rate: f64,
    /// Bytes taken into the current batch.
    batch_bytes: usize,
    /// When the current batch's first switch was served.
    batch_started: Option<Instant>,
}

impl Policy {
    pub fn new(params: Params) -> Policy {
        Policy {
            ibt: Ibt::new(params.bdu),
            params,
            input_rate: 0.0,
            batch_bytes: 0,
            batch_started: None,
        }
    }

    /// The batch size IBT asks for now.
    pub fn threshold(&self) -> u32 {
        self.ibt.threshold()
    }

    /// The smoothed input rate, bytes per second of busy time.
    #[cfg(test)]
    pub fn input_rate(&self) -> f64 {
        self.input_rate
    }

    /// Bytes of input to serve from a switch per service chance (times its
    /// weight).
    ///
    /// Static batching serves `static_read` (Beacon's 64 KB read).
    /// Adaptive batching sizes the quantum so that one round over the
    /// `ready` switches takes about one BDU at the measured input rate,
    /// within `[min_read, max_read]`: under overload with many switches
    /// this is the floor, fine-grained rounds as Maestro's (§3.2); with few
    /// busy switches it grows towards a large one. Either way a busy switch
    /// is read ahead in large reads ([`Policy::read_size`]), so small
    /// quanta do not cost a system call each.
    pub fn quantum(&self, ready: usize) -> usize {
        let p = &self.params;
        if p.batching == Batching::Static {
            return p.static_read;
        }
        let per_round = self.input_rate * p.bdu.as_secs_f64();
        let q = per_round / ready.max(1) as f64;
        (q as usize).clamp(p.min_read, p.max_read.max(p.min_read))
    }

    /// The chance of a switch of `weight` with `surplus` bytes still to pay
    /// back, at `quantum`; a switch being closed is served plainly (its
    /// remaining messages are read and dropped).
    ///
    /// The fair scheduler serves as Surplus Round Robin does ([`surplus`]):
    /// once the quantum is at its floor (rounds then last longer than a
    /// BDU, and a switch's read-ahead waits that long and leaves the
    /// cache), a busy switch is served a whole read ([`Policy::whole_read`])
    /// while its bytes are fresh, and what it took beyond its quantum is
    /// paid back one quantum per chance, during which it is passed over.
    /// Over a few rounds every busy switch gets its quantum per round, as
    /// with fine-grained rounds, but each byte is framed soon after it is
    /// read.
    pub fn service(&self, quantum: usize, weight: u32, surplus: usize, closing: bool) -> Service {
        let budget = quantum * weight.max(1) as usize;
        if !self.params.fair || closing {
            return Service::Serve(Grant {
                allowance: budget,
                limit: budget,
            });
        }
        let whole_read = if quantum <= self.params.min_read {
            self.whole_read()
        } else {
            0
        };
        match surplus::chance(surplus, budget, whole_read) {
            Chance::PassOver { surplus } => Service::PassOver { surplus },
            Chance::Serve { allowance, limit } => Service::Serve(Grant { allowance, limit }),
        }
    }

    /// The surplus a switch carries after a service under `grant` that
    /// took `taken` bytes, `idle` if it turned out to have nothing (then it
    /// is forgiven, as DRR forgets the deficit of a queue that empties);
    /// `None` where the scheduler keeps no surplus.
    pub fn surplus_after(&self, grant: Grant, taken: usize, idle: bool) -> Option<usize> {
        self.params
            .fair
            .then(|| surplus::after(taken, grant.allowance, idle))
    }

    /// The most a fair service takes at once: a whole read (`max_read`),
    /// but no more than [`WHOLE_READ_SHARE_OF_BDU`] of a BDU's input at the
    /// measured rate (with an expensive application the quantum alone is
    /// served).
    fn whole_read(&self) -> usize {
        let per_bdu = self.input_rate * self.params.bdu.as_secs_f64();
        ((per_bdu * WHOLE_READ_SHARE_OF_BDU) as usize).min(self.params.max_read)
    }

    /// Bytes to ask the socket for when a service needs to read to take
    /// `limit` and `held` bytes are already buffered: a switch whose last
    /// read filled the space offered is read ahead up to a whole
    /// `max_read` (what NOX and Beacon read) *held*, and the rest waits in
    /// its buffer for the following services.
    ///
    /// The held bytes count against the read (up to half of it, so a read
    /// stays large): the read lands after them, and the buffer first moves
    /// them to its front (`RecvBuffer::compact_for`). Reading a whole
    /// `max_read` beyond them instead kept the same backlog held from one
    /// service to the next: under `fair` at 64 switches each read moved
    /// about 40 KB first, 46 bytes per 78-byte PACKET_IN (BENCHMARKS.md,
    /// "The learning switch's match and its limit", target 4).
    pub fn read_size(&self, limit: usize, busy: bool, held: usize) -> usize {
        if busy {
            let ahead = limit.max(self.params.max_read);
            ahead - held.min(ahead / 2)
        } else {
            limit
        }
    }

    /// Whether a held switch with `buffered` bytes may be read again in
    /// the same batch ([`MAX_HELD_BUFFER`]).
    pub fn may_refill(&self, buffered: usize) -> bool {
        buffered <= MAX_HELD_BUFFER
    }

    /// Whether the batch should be processed now: adaptive batching waits
    /// for IBT messages; static batching processes each read.
    pub fn batch_full(&self, messages: usize, held: usize) -> bool {
        match self.params.batching {
            Batching::Adaptive => messages >= self.ibt.threshold() as usize,
            Batching::Static => held > 0,
        }
    }

    /// Whether a switch's `staged` bytes of replies are written after this
    /// batch. A switch that still has input waiting (`more_input`) keeps
    /// less than [`WRITE_BATCH`] staged until a later service: with
    /// fine-grained rounds one quantum's replies are a few kilobytes, and a
    /// write per quantum would cost a system call per few dozen replies.
    /// Its next service comes within a round, and the output is written as
    /// soon as the switch runs out of input, so the delay added is bounded
    /// by the rounds it takes to stage `WRITE_BATCH` bytes.
    pub fn write_now(&self, staged: usize, more_input: bool) -> bool {
        staged > 0 && (!more_input || staged >= WRITE_BATCH)
    }

    /// A switch is served at `now`: the first service of a batch starts
    /// the batch's clock.
    pub fn begin(&mut self, now: Instant) {
        self.batch_started.get_or_insert(now);
    }

    /// A service took `bytes` into the batch.
    pub fn took(&mut self, bytes: usize) {
        self.batch_bytes += bytes;
    }

    /// A batch of `messages` finished at `now`, its replies written;
    /// `input_pending` says whether any switch still has input (Fig. 4
    /// releases a batch early, and steps IBT down, when none has). Adapts
    /// IBT under the BDU in force (changeable at run time, §3.3) and the
    /// input rate; returns how long the batch took from its first service.
    pub fn batch_done(
        &mut self,
        now: Instant,
        messages: usize,
        input_pending: bool,
        bdu: Duration,
    ) -> Duration {
        let started = self.batch_started.take().unwrap_or(now);
        let elapsed = now.saturating_duration_since(started);
        self.params.bdu = bdu;
        if self.params.batching == Batching::Adaptive {
            if bdu != self.ibt.bdu() {
                self.ibt.set_bdu(bdu);
            }
            if messages >= self.ibt.threshold() as usize {
                self.ibt.full_batch(messages as u32, elapsed);
            } else if !input_pending {
                self.ibt.idle();
            }
        }
        // Smoothed like IBT's score (Maestro §3.3: w = 0.2).
        let rate = self.batch_bytes as f64 / elapsed.as_secs_f64().max(1e-9);
        self.input_rate = if self.input_rate == 0.0 {
            rate
        } else {
            (1.0 - SMOOTHING_WEIGHT) * self.input_rate + SMOOTHING_WEIGHT * rate
        };
        self.batch_bytes = 0;
        elapsed
    }

    /// The batch in progress was handed away whole (the shared-queue
    /// reader passes a switch's messages to a worker): its clock restarts.
    pub fn batch_handed_off(&mut self) {
        self.batch_started = None;
    }
}

#[cfg(test)]
mod tests;
