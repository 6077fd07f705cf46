//! The classifier: which flow a packet key hits, by tuple space search
//! (Srinivasan et al.; the design of Open vSwitch's `lib/classifier.c`),
//! with an exact-match cache in front.
//!
//! Flows are grouped into *subtables* by mask. Within a subtable every
//! flow's match is a value under the same mask, so finding the flows a
//! key hits is one hash lookup of the masked key. A lookup visits the
//! subtables in order of the highest priority they hold and stops as soon
//! as no later subtable can hold a better flow (OVS's priority sorting),
//! so the cost grows with the number of distinct masks, not of flows.
//!
//! Ties between equal priorities, which the specs leave undefined
//! (1.0.0 §3.4, 1.3.5 §5.3), go to the flow added first (the smaller
//! `seq`), so the result is deterministic and a linear scan can check it.
//!
//! [`Emc`] caches the result of whole-key lookups (hits and misses). Each
//! entry records the classifier's generation, which every insertion and
//! removal bumps, so a change to the flows invalidates the whole cache at
//! once: a stale answer can never be returned.

use crate::key::{FlowMatch, KEY_WORDS, Key};
use rustc_hash::{FxBuildHasher, FxHasher};
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// A flow as the classifier knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Its priority.
    pub priority: u16,
    /// Insertion order, for ties.
    pub seq: u64,
    /// The owner's handle for the flow.
    pub id: u32,
}

impl Rule {
    /// True when `self` wins over `other`.
    #[inline]
    pub fn beats(&self, other: &Rule) -> bool {
        self.priority > other.priority || (self.priority == other.priority && self.seq < other.seq)
    }
}

#[derive(Debug, Clone)]
struct Subtable {
    mask: Key,
    words: SmallVec<[u8; KEY_WORDS]>,
    buckets: HashMap<Key, SmallVec<[Rule; 1]>, FxBuildHasher>,
    priorities: BTreeMap<u16, u32>,
    max_priority: u16,
    len: usize,
}

impl Subtable {
    fn new(mask: Key) -> Subtable {
        Subtable {
            mask,
            words: (0..KEY_WORDS as u8)
                .filter(|&i| mask.w[i as usize] != 0)
                .collect(),
            buckets: HashMap::default(),
            priorities: BTreeMap::new(),
            max_priority: 0,
            len: 0,
        }
    }

    #[inline]
    fn masked(&self, k: &Key) -> Key {
        let mut m = Key::default();
        for &i in &self.words {
            let i = usize::from(i);
            m.w[i] = k.w[i] & self.mask.w[i];
        }
        m
    }
}

/// A tuple-space-search classifier.
#[derive(Debug, Clone, Default)]
pub struct Classifier {
    subtables: Vec<Subtable>,
    len: usize,
    generation: u64,
}

impl Classifier {
    /// Number of flows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no flows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of distinct masks.
    pub fn subtables(&self) -> usize {
        self.subtables.len()
    }

    /// Bumped by every insertion and removal.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Adds a flow.
    pub fn insert(&mut self, m: &FlowMatch, rule: Rule) {
        self.generation += 1;
        self.len += 1;
        let idx = match self.subtables.iter().position(|s| s.mask == m.mask) {
            Some(i) => i,
            None => {
                self.subtables.push(Subtable::new(m.mask));
                self.subtables.len() - 1
            }
        };
        let st = &mut self.subtables[idx];
        let bucket = st.buckets.entry(m.key).or_default();
        let at = bucket
            .iter()
            .position(|r| rule.beats(r))
            .unwrap_or(bucket.len());
        bucket.insert(at, rule);
        *st.priorities.entry(rule.priority).or_default() += 1;
        st.len += 1;
        if rule.priority > st.max_priority || st.len == 1 {
            st.max_priority = rule.priority;
            self.sort();
        }
    }

    /// Removes a flow; false when it was not there.
    pub fn remove(&mut self, m: &FlowMatch, rule: Rule) -> bool {
        let Some(idx) = self.subtables.iter().position(|s| s.mask == m.mask) else {
            return false;
        };
        let st = &mut self.subtables[idx];
        let Some(bucket) = st.buckets.get_mut(&m.key) else {
            return false;
        };
        let Some(at) = bucket.iter().position(|r| r.id == rule.id) else {
            return false;
        };
        bucket.remove(at);
        if bucket.is_empty() {
            st.buckets.remove(&m.key);
        }
        if let Some(n) = st.priorities.get_mut(&rule.priority) {
            *n -= 1;
            if *n == 0 {
                st.priorities.remove(&rule.priority);
            }
        }
        st.len -= 1;
        self.len -= 1;
        self.generation += 1;
        if st.len == 0 {
            self.subtables.remove(idx);
        } else {
            let max = st.priorities.keys().next_back().copied().unwrap_or(0);
            if max != st.max_priority {
                st.max_priority = max;
                self.sort();
            }
        }
        true
    }

    /// The flow with exactly match `m` and priority `priority`, if any
    /// (the "identical flow" of ADD and the strict commands).
    pub fn find(&self, m: &FlowMatch, priority: u16) -> Option<Rule> {
        let st = self.subtables.iter().find(|s| s.mask == m.mask)?;
        st.buckets
            .get(&m.key)?
            .iter()
            .find(|r| r.priority == priority)
            .copied()
    }

    fn sort(&mut self) {
        self.subtables
            .sort_by_key(|s| std::cmp::Reverse(s.max_priority));
    }

    /// The best flow whose match accepts `k`.
    #[inline]
    pub fn lookup(&self, k: &Key) -> Option<Rule> {
        let mut best: Option<Rule> = None;
        for st in &self.subtables {
            if let Some(b) = best {
                if st.max_priority < b.priority {
                    break;
                }
            }
            if let Some(bucket) = st.buckets.get(&st.masked(k)) {
                if let Some(r) = bucket.first() {
                    if best.is_none_or(|b| r.beats(&b)) {
                        best = Some(*r);
                    }
                }
            }
        }
        best
    }
}

/// Entries in an exact-match cache: 4,096 of 128 bytes (512 KiB), enough
/// for the working set of a test network or a benchmark with a few
/// thousand active flows; a table's cache is allocated on its first
/// lookup.
pub const EMC_ENTRIES: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct EmcSlot {
    generation: u64,
    key: Key,
    rule: Option<Rule>,
}

/// An exact-match cache, direct-mapped, keyed by the whole packet key.
#[derive(Debug, Clone, Default)]
pub struct Emc {
    slots: Box<[EmcSlot]>,
}

/// The hash of a whole key, for [`Emc`].
#[inline]
pub fn key_hash(k: &Key) -> u64 {
    let mut h = FxHasher::default();
    k.hash(&mut h);
    h.finish()
}

impl Emc {
    fn ensure(&mut self) {
        if self.slots.is_empty() {
            self.slots = vec![
                EmcSlot {
                    generation: u64::MAX,
                    key: Key::default(),
                    rule: None,
                };
                EMC_ENTRIES
            ]
            .into_boxed_slice();
        }
    }

    #[inline]
    fn index(hash: u64) -> usize {
        ((hash ^ (hash >> 29)) as usize) & (EMC_ENTRIES - 1)
    }

    /// The cached result for `k` under `generation`: `Some(hit or miss)`,
    /// or `None` when not cached.
    #[inline]
    pub fn get(&self, generation: u64, k: &Key, hash: u64) -> Option<Option<Rule>> {
        let s = self.slots.get(Self::index(hash))?;
        (s.generation == generation && s.key == *k).then_some(s.rule)
    }

    /// Caches `rule` as the result for `k` under `generation`.
    #[inline]
    pub fn put(&mut self, generation: u64, k: &Key, hash: u64, rule: Option<Rule>) {
        self.ensure();
        self.slots[Self::index(hash)] = EmcSlot {
            generation,
            key: *k,
            rule,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::slot;

    fn rule(priority: u16, seq: u64) -> Rule {
        Rule {
            priority,
            seq,
            id: seq as u32,
        }
    }

    #[test]
    fn highest_priority_then_first_added_wins() {
        let mut c = Classifier::default();
        let mut a = FlowMatch::ALL;
        a.exact(slot::ETH_TYPE, 0x0800);
        let mut b = FlowMatch::ALL;
        b.exact(slot::IN_PORT, 1);
        c.insert(&FlowMatch::ALL, rule(0, 1));
        c.insert(&a, rule(10, 2));
        c.insert(&b, rule(10, 3));
        let mut k = Key::default();
        k.set(slot::ETH_TYPE, 0x0800);
        k.set(slot::IN_PORT, 1);
        assert_eq!(c.lookup(&k), Some(rule(10, 2)));
        assert!(c.remove(&a, rule(10, 2)));
        assert_eq!(c.lookup(&k), Some(rule(10, 3)));
        k.set(slot::IN_PORT, 2);
        assert_eq!(c.lookup(&k), Some(rule(0, 1)));
        assert!(!c.remove(&a, rule(10, 2)));
        assert_eq!(c.len(), 2);
        assert_eq!(c.subtables(), 2);
    }

    #[test]
    fn cache_entries_die_with_their_generation() {
        let mut e = Emc::default();
        let k = Key::default();
        let h = key_hash(&k);
        assert_eq!(e.get(1, &k, h), None);
        e.put(1, &k, h, Some(rule(1, 1)));
        assert_eq!(e.get(1, &k, h), Some(Some(rule(1, 1))));
        assert_eq!(e.get(2, &k, h), None);
        e.put(2, &k, h, None);
        assert_eq!(e.get(2, &k, h), Some(None));
    }
}
