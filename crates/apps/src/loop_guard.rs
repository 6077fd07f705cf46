//! [`LoopGuard`]: what a learning switch does about a loop in the network.
//!
//! A learning switch floods out of every port. On a topology with a loop
//! (a ring, a torus, two cables between the same pair of switches) every
//! broadcast then circulates for ever, multiplying at each switch with
//! more than two links, until the switches cannot read the controller's
//! answers fast enough and the runtime disconnects them for their output
//! backlog. The network services (`topology,devices,routing`) flood over
//! a spanning tree instead and are what such a network needs.
//!
//! The learning switches cannot fix the loop, but they can notice it and
//! keep the controller and every switch alive. A loop's signature at one
//! switch is the same source address learnt on different ports over and
//! over: each copy of a circulating frame comes back from another
//! direction. A host that really moves is learnt on its new port once.
//! [`LoopGuard`], one per switch, counts such moves; more than
//! [`MOVES_FOR_LOOP`] within [`WINDOW`] is a loop. It then says so once in
//! the log (the switch, the address, the ports, and what to run instead),
//! and paces the switch's floods with a token bucket ([`FLOODS_PER_SECOND`]
//! a second, as many in a burst): floods beyond it are dropped, which ends
//! the copies that would have gone round again. Once [`QUIET`] passes with
//! no move it says the loop is gone and floods freely again.
//!
//! The guard costs the packet path nothing while there is no loop: a move
//! is a comparison the table's insert makes anyway, and the clock is read
//! only when a move happens or a flood is paced.

use baton_openflow::{DatapathId, MacAddr, PortNo};
use std::time::{Duration, Instant};

/// The window over which moves are counted.
pub const WINDOW: Duration = Duration::from_secs(1);

/// More moves than this within [`WINDOW`] on one switch is a loop. A host
/// moves once when it moves; on a ring of four Open vSwitch bridges with
/// the learning switch, one ARP request moved its sender's address past
/// this at every bridge within 18-50 ms (three runs), a thousand times a
/// second or more (BENCHMARKS.md, "Loops and the learning switch's loop guard"). Twenty leaves room for
/// many hosts moving at once (a rack's virtual machines migrating)
/// without a false alarm.
pub const MOVES_FOR_LOOP: u32 = 20;

/// Floods a switch may send each second while a loop is suspected, and in
/// a burst: enough for a hundred hosts to ARP each second, and a bound on
/// what a storm costs the controller and the switch.
pub const FLOODS_PER_SECOND: u32 = 100;

/// A suspected loop ends after this long without a move.
pub const QUIET: Duration = Duration::from_secs(10);

/// What changed after a move or a flood, for the caller's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing worth counting.
    None,
    /// A loop is newly suspected (and was logged).
    LoopFound,
}

/// One switch's loop detector and flood pacer.
#[derive(Debug, Clone, Default)]
pub struct LoopGuard {
    /// When the current counting window began.
    window_start: Option<Instant>,
    /// Moves within it.
    moves: u32,
    /// Set while a loop is suspected.
    pacing: Option<Pacing>,
}

#[derive(Debug, Clone)]
struct Pacing {
    /// The latest move seen.
    last_move: Instant,
    /// Floods left in the bucket.
    tokens: u32,
    /// When the bucket was last filled.
    filled: Instant,
    /// Floods dropped since the loop was found.
    dropped: u64,
}

impl LoopGuard {
    /// Whether a loop is suspected (floods are paced).
    pub fn is_pacing(&self) -> bool {
        self.pacing.is_some()
    }

    /// Source `mac` was learnt on `to` at `now`, having been on `from`.
    pub fn moved(
        &mut self,
        dpid: DatapathId,
        now: Instant,
        mac: MacAddr,
        (from, to): (PortNo, PortNo),
    ) -> Change {
        if let Some(p) = &mut self.pacing {
            p.last_move = now;
            return Change::None;
        }
        match self.window_start {
            Some(start) if now.saturating_duration_since(start) < WINDOW => self.moves += 1,
            _ => {
                self.window_start = Some(now);
                self.moves = 1;
            }
        }
        if self.moves <= MOVES_FOR_LOOP {
            return Change::None;
        }
        tracing::warn!(
            %dpid,
            %mac,
            ports = %format_args!("{} and {}", from.0, to.0),
            moves = self.moves,
            "loop suspected: a source address keeps moving between ports of this switch; \
             a learning switch floods out of every port and cannot run a network with loops \
             (run the network services instead: --apps topology,devices,routing, the default); \
             its floods are now paced to {FLOODS_PER_SECOND} a second"
        );
        self.pacing = Some(Pacing {
            last_move: now,
            tokens: FLOODS_PER_SECOND,
            filled: now,
            dropped: 0,
        });
        Change::LoopFound
    }

    /// Whether the switch may flood now (`now` is read only while a loop
    /// is suspected). False means drop the packet instead.
    #[inline]
    pub fn may_flood(&mut self, dpid: DatapathId, now: impl FnOnce() -> Instant) -> bool {
        self.pacing.is_none() || self.paced_flood(dpid, now())
    }

    /// [`LoopGuard::may_flood`] while a loop is suspected.
    #[cold]
    fn paced_flood(&mut self, dpid: DatapathId, now: Instant) -> bool {
        let Some(p) = &mut self.pacing else {
            return true;
        };
        if now.saturating_duration_since(p.last_move) >= QUIET {
            tracing::info!(
                %dpid,
                floods_dropped = p.dropped,
                "no more signs of a loop: floods are no longer paced"
            );
            self.pacing = None;
            self.window_start = None;
            return true;
        }
        let since = now.saturating_duration_since(p.filled);
        let earned = (since.as_micros() * u128::from(FLOODS_PER_SECOND) / 1_000_000) as u32;
        if earned > 0 {
            p.tokens = (p.tokens + earned).min(FLOODS_PER_SECOND);
            p.filled = now;
        }
        if p.tokens == 0 {
            p.dropped += 1;
            return false;
        }
        p.tokens -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SW: DatapathId = DatapathId(7);
    const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const MS: Duration = Duration::from_millis(1);

    /// `n` moves of one address between ports 1 and 2, one every `every`
    /// from `start`; returns the time of the last.
    fn flap(g: &mut LoopGuard, start: Instant, n: u32, every: Duration) -> (Instant, u32) {
        let mut found = 0;
        let mut t = start;
        for i in 0..n {
            t = start + every * i;
            let ports = if i % 2 == 0 { (1, 2) } else { (2, 1) };
            if g.moved(SW, t, MAC, (PortNo(ports.0), PortNo(ports.1))) == Change::LoopFound {
                found += 1;
            }
        }
        (t, found)
    }

    #[test]
    fn hosts_that_move_now_and_then_are_no_loop() {
        let mut g = LoopGuard::default();
        let t0 = Instant::now();
        // Twenty moves in a second (a rack migrating), then one a second.
        let (t, found) = flap(&mut g, t0, MOVES_FOR_LOOP, 10 * MS);
        assert_eq!(found, 0);
        let (_, found) = flap(&mut g, t + WINDOW, 30, WINDOW);
        assert_eq!(found, 0);
        assert!(!g.is_pacing());
        assert!(g.may_flood(SW, || panic!("no clock read without a loop")));
    }

    #[test]
    fn an_address_flapping_hundreds_of_times_a_second_is_a_loop_found_once() {
        let mut g = LoopGuard::default();
        let (_, found) = flap(&mut g, Instant::now(), 500, MS);
        assert_eq!(found, 1);
        assert!(g.is_pacing());
    }

    #[test]
    fn a_loop_paces_floods_to_the_bucket_and_its_refill() {
        let mut g = LoopGuard::default();
        let t0 = Instant::now();
        let (t, _) = flap(&mut g, t0, MOVES_FOR_LOOP + 1, MS);
        // A burst of the bucket's size, then nothing within the same
        // instant.
        let allowed = (0..1000).filter(|_| g.may_flood(SW, || t)).count();
        assert_eq!(allowed, FLOODS_PER_SECOND as usize);
        // Half a second later, half a bucket more.
        let later = t + Duration::from_millis(500);
        let allowed = (0..1000).filter(|_| g.may_flood(SW, || later)).count();
        assert_eq!(allowed, FLOODS_PER_SECOND as usize / 2);
    }

    #[test]
    fn a_loop_ends_after_a_quiet_spell_and_can_be_found_again() {
        let mut g = LoopGuard::default();
        let t0 = Instant::now();
        let (t, _) = flap(&mut g, t0, 100, MS);
        // Moves keep the suspicion alive.
        let (t, found) = flap(&mut g, t + QUIET / 2, 3, MS);
        assert_eq!(found, 0);
        assert!(g.may_flood(SW, || t + QUIET / 2));
        assert!(g.is_pacing());
        // Quiet for QUIET: floods are free again.
        assert!(g.may_flood(SW, || t + QUIET));
        assert!(!g.is_pacing());
        let (_, found) = flap(&mut g, t + QUIET * 2, 100, MS);
        assert_eq!(found, 1);
    }
}
