//! One flow table: its entries with counters and timeouts, the classifier
//! and cache that find them, and the table half of the flow-mod semantics
//! (1.0.0 §4.6, 1.3.5 §6.4): adding with replacement and overlap checks,
//! selecting entries strictly or not with the `out_port`, `out_group` and
//! cookie filters, and expiry against a clock passed in.

use crate::action::Program;
use crate::classifier::{Classifier, Emc, Rule, key_hash};
use crate::error::OfError;
use crate::key::{FlowMatch, Key};
use baton_openflow::types::{Cookie, PortNo};
use baton_openflow::v10::Match10;
use baton_openflow::v13::Match13;
use baton_openflow::{v10, v13};
use slab::Slab;
use std::time::{Duration, Instant};

/// A flow's match as the controller sent it (1.0: normalised), for
/// statistics and FLOW_REMOVED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireMatch {
    /// 1.0 `ofp_match`.
    V10(Match10),
    /// 1.3 OXM match.
    V13(Match13),
}

/// A flow's actions as the controller sent them, for statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireActions {
    /// 1.0 actions.
    V10(Vec<v10::Action>),
    /// 1.3 instructions.
    V13(Vec<v13::Instruction>),
}

/// Why a flow left its table (`ofp_flow_removed_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovedReason {
    /// Idle timeout.
    IdleTimeout,
    /// Hard timeout.
    HardTimeout,
    /// A DELETE flow-mod.
    Delete,
    /// Its group was deleted (1.3).
    GroupDelete,
}

/// What a flow-mod ADD carries.
#[derive(Debug, Clone)]
pub struct NewFlow {
    /// Priority.
    pub priority: u16,
    /// Compiled match.
    pub match_: FlowMatch,
    /// The match as sent.
    pub wire_match: WireMatch,
    /// Cookie.
    pub cookie: Cookie,
    /// Idle timeout, seconds (0: none).
    pub idle_timeout: u16,
    /// Hard timeout, seconds (0: none).
    pub hard_timeout: u16,
    /// `OFPFF_*` flags.
    pub flags: u16,
    /// Compiled instructions.
    pub program: Program,
    /// The actions as sent.
    pub wire_actions: WireActions,
}

/// An installed flow.
#[derive(Debug, Clone)]
pub struct FlowEntry {
    /// What it was added with.
    pub flow: NewFlow,
    /// When it was added (or replaced).
    pub created: Instant,
    /// When a packet last hit it.
    pub last_used: Instant,
    /// Packets that hit it.
    pub packets: u64,
    /// Bytes of those packets.
    pub bytes: u64,
    seq: u64,
}

impl FlowEntry {
    /// Time since it was added, as (seconds, nanoseconds).
    pub fn duration(&self, now: Instant) -> (u32, u32) {
        let d = now.saturating_duration_since(self.created);
        (
            d.as_secs().min(u64::from(u32::MAX)) as u32,
            d.subsec_nanos(),
        )
    }

    /// Why it has expired at `now`, if it has (hard before idle, as Open
    /// vSwitch checks them).
    pub fn expiry(&self, now: Instant) -> Option<RemovedReason> {
        let f = &self.flow;
        let secs = |s: u16| Duration::from_secs(u64::from(s));
        if f.hard_timeout != 0
            && now.saturating_duration_since(self.created) >= secs(f.hard_timeout)
        {
            return Some(RemovedReason::HardTimeout);
        }
        if f.idle_timeout != 0
            && now.saturating_duration_since(self.last_used) >= secs(f.idle_timeout)
        {
            return Some(RemovedReason::IdleTimeout);
        }
        None
    }
}

/// Which entries a modify, delete or statistics request names.
#[derive(Debug, Clone, Copy)]
pub struct Selector<'a> {
    /// The request's match.
    pub match_: &'a FlowMatch,
    /// Strict: the same match and this priority; otherwise every entry
    /// at least as specific as the match.
    pub strict: Option<u16>,
    /// Only entries with an output to this port.
    pub out_port: Option<PortNo>,
    /// Only entries with an action naming this group.
    pub out_group: Option<u32>,
    /// Only entries whose cookie equals `value` under `mask` (1.3).
    pub cookie: Option<(u64, u64)>,
}

impl Selector<'_> {
    fn accepts(&self, e: &FlowEntry) -> bool {
        let f = &e.flow;
        let by_match = match self.strict {
            Some(p) => f.priority == p && f.match_ == *self.match_,
            None => f.match_.is_within(self.match_),
        };
        by_match
            && self.out_port.is_none_or(|p| f.program.outputs_to(p))
            && self.out_group.is_none_or(|g| f.program.uses_group(g))
            && self.cookie.is_none_or(|(v, m)| f.cookie.0 & m == v & m)
    }
}

/// A flow table.
#[derive(Debug, Clone)]
pub struct FlowTable {
    entries: Slab<FlowEntry>,
    classifier: Classifier,
    emc: Emc,
    use_cache: bool,
    max_entries: usize,
    next_seq: u64,
    timed: usize,
    /// Packets looked up (`lookup_count`).
    pub lookups: u64,
    /// Packets that hit a flow (`matched_count`).
    pub matched: u64,
}

impl FlowTable {
    /// An empty table that holds at most `max_entries` flows.
    pub fn new(max_entries: usize) -> FlowTable {
        FlowTable {
            entries: Slab::new(),
            classifier: Classifier::default(),
            emc: Emc::default(),
            use_cache: true,
            max_entries,
            next_seq: 0,
            timed: 0,
            lookups: 0,
            matched: 0,
        }
    }

    /// Turns the exact-match cache on or off (for tests and benchmarks).
    pub fn set_cache(&mut self, on: bool) {
        self.use_cache = on;
    }

    /// Number of flows (`active_count`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the table holds no flow.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The most flows the table holds (`max_entries`).
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// The classifier (for statistics and benchmarks).
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// The flow with handle `id`.
    pub fn get(&self, id: u32) -> Option<&FlowEntry> {
        self.entries.get(id as usize)
    }

    /// Every flow with its handle, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &FlowEntry)> {
        self.entries.iter().map(|(i, e)| (i as u32, e))
    }

    fn rule(id: u32, e: &FlowEntry) -> Rule {
        Rule {
            priority: e.flow.priority,
            seq: e.seq,
            id,
        }
    }

    /// Adds a flow. An entry with the same match and priority is replaced
    /// (and returned), keeping its counters unless `reset_counts`;
    /// `check_overlap` refuses a flow that some packet could hit together
    /// with another of the same priority (`OFPFMFC_OVERLAP`); a full table
    /// answers `OFPFMFC_TABLE_FULL`.
    pub fn add(
        &mut self,
        now: Instant,
        flow: NewFlow,
        check_overlap: bool,
        reset_counts: bool,
    ) -> Result<Option<FlowEntry>, OfError> {
        if check_overlap
            && self.entries.iter().any(|(_, e)| {
                e.flow.priority == flow.priority && e.flow.match_.overlaps(&flow.match_)
            })
        {
            return Err(OfError::Overlap);
        }
        let same = self
            .classifier
            .find(&flow.match_, flow.priority)
            .map(|r| r.id);
        let (packets, bytes, replaced) = match same {
            Some(id) => {
                let old = self.remove(id);
                let keep = !reset_counts;
                let counts = if keep {
                    (old.packets, old.bytes)
                } else {
                    (0, 0)
                };
                (counts.0, counts.1, Some(old))
            }
            None => {
                if self.entries.len() >= self.max_entries {
                    return Err(OfError::TableFull);
                }
                (0, 0, None)
            }
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        if flow.idle_timeout != 0 || flow.hard_timeout != 0 {
            self.timed += 1;
        }
        let m = flow.match_;
        let entry = FlowEntry {
            flow,
            created: now,
            last_used: now,
            packets,
            bytes,
            seq,
        };
        let id = self.entries.insert(entry) as u32;
        let rule = Self::rule(id, &self.entries[id as usize]);
        self.classifier.insert(&m, rule);
        Ok(replaced)
    }

    /// The handles of the flows `sel` names.
    pub fn select(&self, sel: &Selector<'_>) -> Vec<u32> {
        if let Some(p) = sel.strict {
            // Strict selection names at most one flow: find it through the
            // classifier rather than by a scan.
            return self
                .classifier
                .find(sel.match_, p)
                .map(|r| r.id)
                .filter(|&id| {
                    self.entries
                        .get(id as usize)
                        .is_some_and(|e| sel.accepts(e))
                })
                .into_iter()
                .collect();
        }
        self.entries
            .iter()
            .filter(|(_, e)| sel.accepts(e))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Replaces the instructions of flow `id` (a MODIFY).
    pub fn modify(&mut self, id: u32, program: Program, wire: WireActions, reset_counts: bool) {
        if let Some(e) = self.entries.get_mut(id as usize) {
            e.flow.program = program;
            e.flow.wire_actions = wire;
            if reset_counts {
                e.packets = 0;
                e.bytes = 0;
            }
        }
    }

    /// Removes flow `id` and returns it.
    ///
    /// # Panics
    /// If `id` is not a flow of this table (a caller bug, never input).
    pub fn remove(&mut self, id: u32) -> FlowEntry {
        let e = self.entries.remove(id as usize);
        self.classifier.remove(&e.flow.match_, Self::rule(id, &e));
        if e.flow.idle_timeout != 0 || e.flow.hard_timeout != 0 {
            self.timed -= 1;
        }
        e
    }

    /// The flow a packet with key `k` hits, counting the lookup.
    #[inline]
    pub fn lookup(&mut self, k: &Key) -> Option<u32> {
        self.lookups += 1;
        let found = if self.use_cache {
            let generation = self.classifier.generation();
            let hash = key_hash(k);
            match self.emc.get(generation, k, hash) {
                Some(hit) => hit,
                None => {
                    let r = self.classifier.lookup(k);
                    self.emc.put(generation, k, hash, r);
                    r
                }
            }
        } else {
            self.classifier.lookup(k)
        };
        let id = found?.id;
        self.matched += 1;
        Some(id)
    }

    /// Counts a packet of `bytes` bytes against flow `id`.
    #[inline]
    pub fn hit(&mut self, id: u32, now: Instant, bytes: usize) -> Option<&FlowEntry> {
        let e = self.entries.get_mut(id as usize)?;
        e.packets += 1;
        e.bytes += bytes as u64;
        e.last_used = now;
        Some(e)
    }

    /// True when some flow has a timeout (and [`FlowTable::expire`] has
    /// work to do).
    pub fn has_timeouts(&self) -> bool {
        self.timed > 0
    }

    /// Removes and returns the flows that have expired at `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<(FlowEntry, RemovedReason)> {
        if self.timed == 0 {
            return Vec::new();
        }
        let dead: Vec<(u32, RemovedReason)> = self
            .entries
            .iter()
            .filter_map(|(i, e)| e.expiry(now).map(|r| (i as u32, r)))
            .collect();
        dead.into_iter()
            .map(|(id, r)| (self.remove(id), r))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::slot;

    fn flow(priority: u16, port: Option<u64>, idle: u16, hard: u16) -> NewFlow {
        let mut m = FlowMatch::ALL;
        if let Some(p) = port {
            m.exact(slot::IN_PORT, p);
        }
        NewFlow {
            priority,
            match_: m,
            wire_match: WireMatch::V13(Match13::all()),
            cookie: Cookie(priority.into()),
            idle_timeout: idle,
            hard_timeout: hard,
            flags: 0,
            program: Program::default(),
            wire_actions: WireActions::V13(vec![]),
        }
    }

    fn key(port: u64) -> Key {
        let mut k = Key::default();
        k.set(slot::IN_PORT, port);
        k
    }

    #[test]
    fn replace_keeps_counters_unless_reset() {
        let t0 = Instant::now();
        let mut t = FlowTable::new(10);
        assert!(
            t.add(t0, flow(5, Some(1), 0, 0), false, false)
                .unwrap()
                .is_none()
        );
        let id = t.lookup(&key(1)).unwrap();
        t.hit(id, t0, 100);
        let old = t
            .add(t0, flow(5, Some(1), 0, 0), false, false)
            .unwrap()
            .unwrap();
        assert_eq!(old.packets, 1);
        let id = t.lookup(&key(1)).unwrap();
        assert_eq!(t.get(id).unwrap().packets, 1);
        t.add(t0, flow(5, Some(1), 0, 0), false, true).unwrap();
        let id = t.lookup(&key(1)).unwrap();
        assert_eq!(t.get(id).unwrap().bytes, 0);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn overlap_and_full_table() {
        let t0 = Instant::now();
        let mut t = FlowTable::new(2);
        t.add(t0, flow(5, Some(1), 0, 0), false, false).unwrap();
        assert_eq!(
            t.add(t0, flow(5, None, 0, 0), true, false).unwrap_err(),
            OfError::Overlap
        );
        // Another priority does not overlap.
        t.add(t0, flow(6, None, 0, 0), true, false).unwrap();
        assert_eq!(
            t.add(t0, flow(7, None, 0, 0), false, false).unwrap_err(),
            OfError::TableFull
        );
        // Replacing in a full table is fine.
        t.add(t0, flow(6, None, 0, 0), false, false).unwrap();
    }

    #[test]
    fn timeouts_follow_the_injected_clock() {
        let t0 = Instant::now();
        let mut t = FlowTable::new(10);
        t.add(t0, flow(1, Some(1), 10, 0), false, false).unwrap();
        t.add(t0, flow(1, Some(2), 0, 30), false, false).unwrap();
        t.add(t0, flow(1, Some(3), 0, 0), false, false).unwrap();
        assert!(t.expire(t0 + Duration::from_secs(9)).is_empty());
        // A hit at 9 s keeps the idle flow alive until 19 s.
        let id = t.lookup(&key(1)).unwrap();
        t.hit(id, t0 + Duration::from_secs(9), 60);
        assert!(t.expire(t0 + Duration::from_secs(18)).is_empty());
        let gone = t.expire(t0 + Duration::from_secs(19));
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].1, RemovedReason::IdleTimeout);
        assert_eq!(gone[0].0.packets, 1);
        let gone = t.expire(t0 + Duration::from_secs(30));
        assert_eq!(gone[0].1, RemovedReason::HardTimeout);
        assert!(!t.has_timeouts());
        assert_eq!(t.len(), 1);
        assert!(t.lookup(&key(1)).is_none());
    }

    #[test]
    fn selection_strict_and_loose() {
        let t0 = Instant::now();
        let mut t = FlowTable::new(10);
        t.add(t0, flow(5, Some(1), 0, 0), false, false).unwrap();
        t.add(t0, flow(6, Some(1), 0, 0), false, false).unwrap();
        t.add(t0, flow(5, None, 0, 0), false, false).unwrap();
        let all = FlowMatch::ALL;
        let loose = Selector {
            match_: &all,
            strict: None,
            out_port: None,
            out_group: None,
            cookie: None,
        };
        assert_eq!(t.select(&loose).len(), 3);
        let strict = Selector {
            strict: Some(5),
            ..loose
        };
        assert_eq!(t.select(&strict).len(), 1);
        let by_cookie = Selector {
            cookie: Some((6, u64::MAX)),
            ..loose
        };
        assert_eq!(t.select(&by_cookie).len(), 1);
        let by_port = Selector {
            out_port: Some(PortNo(3)),
            ..loose
        };
        assert!(t.select(&by_port).is_empty());
    }
}
