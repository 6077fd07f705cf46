//! A MAC -> value table for learning switches, built for batches.
//!
//! Why not `HashMap`: with cbench's 100,000 hosts per switch the tables
//! outgrow the caches, and a learning switch's cost becomes the cache
//! misses of its lookups (measured: 446 ns per request with a `HashMap` of
//! 16 x 100k hosts against 236 ns with 1,000 hosts; see BENCHMARKS.md).
//! This table keeps each entry's key and value in one 16-byte slot, so a
//! lookup touches one cache line (hashbrown touches a control group and a
//! bucket), and [`MacTable::prefetch`] lets a handler that has a whole
//! batch start loading the slots of the requests [`PREFETCH_AHEAD`] ahead
//! of the one it answers, so the processor overlaps their misses instead
//! of paying them one after another (memory-level parallelism; Maestro's
//! argument for batching, Maestro §3.3, applied to the application). A
//! prefetch instruction rather than a plain load: a load that misses holds
//! up retirement, so a loop of loads keeps only the misses of the few
//! iterations that fit in the reorder window in flight; measured, 3.55 M
//! -> 4.85 M responses/s (issue 12, third session: BENCHMARKS.md's git
//! history). That is one of the crate's two uses of `unsafe`, one
//! instruction that cannot fault; the other is the table's memory
//! (`storage.rs`: the mapping, and the [`Zeroable`] promise that lets
//! zero-filled memory be read as slots).
//!
//! Open addressing with linear probing, power-of-two capacity, at most
//! half full; it grows by doubling (an allocation only when it grows) and
//! is cleared when it would pass its bound, or when the [`HostBudget`] it
//! shares with other tables has no room left for it to grow. Tables of 2 MiB or more live on
//! huge pages (`storage.rs`), so that their lookups do not also miss the
//! TLB: 16 tables of 4 MiB on 4 KiB pages are 16k pages against the ~2k
//! entries of a second-level TLB, on 2 MiB pages 32. Smaller tables stay
//! on the heap, so many switches with few hosts cost no huge pages.

mod storage;

use baton_openflow::{DatapathId, MacAddr, PortNo};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use storage::Slots;
pub use storage::Zeroable;

// SAFETY: integers inside.
#[allow(unsafe_code)]
unsafe impl Zeroable for PortNo {}
// SAFETY: an integer inside.
#[allow(unsafe_code)]
unsafe impl Zeroable for DatapathId {}
// SAFETY: an integer.
#[allow(unsafe_code)]
unsafe impl Zeroable for u8 {}
// SAFETY: each field is zero-valid, and padding may hold anything.
#[allow(unsafe_code)]
unsafe impl<A: Zeroable, B: Zeroable> Zeroable for (A, B) {}
// SAFETY: an integer and a zero-valid value.
#[allow(unsafe_code)]
unsafe impl<V: Zeroable> Zeroable for Slot<V> {}

/// An occupied slot has this bit set in its key.
const OCCUPIED: u64 = 1 << 63;

#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(16))]
struct Slot<V> {
    /// `OCCUPIED | mac` (48 bits), or 0 when empty.
    key: u64,
    value: V,
}

/// Slots a new table starts with.
const FIRST_SLOTS: usize = 64;

/// MAC -> `V` (a port, or a switch and port), for one switch or one shard
/// of a shared table.
#[derive(Debug)]
pub struct MacTable<V: Zeroable = PortNo> {
    slots: Slots<Slot<V>>,
    len: usize,
    max_len: usize,
    /// The budget its slots count against, if any.
    budget: Option<Arc<HostBudget>>,
    /// Mixed into each key before it picks a slot ([`placement_seed`]).
    seed: u64,
}

/// A random number, the same for every table of the process, mixed into
/// each key before it picks a slot: addresses are chosen by the hosts
/// that send them, and with the plain multiply a sender that knew it
/// could pick addresses that all land on one run of slots and turn each
/// look-up into a walk of the run (HashDoS). 0 if the system gives no
/// randomness (the tables still work, as before).
fn placement_seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).map_or(0, |()| u64::from_ne_bytes(b))
    })
}

/// The slots that many tables may hold together: a bound on the memory of
/// all of a controller's per-switch tables, where each table's own bound
/// ([`MacTable::new`]'s `max_len`) multiplied by thousands of switches
/// bounds nothing useful.
///
/// A table takes its slots from the budget when it grows and gives them
/// back when it is dropped; a table that would grow past the budget is
/// cleared instead (it keeps its memory and relearns). The budget is
/// touched only when a table is made, grows or goes, never per lookup, so
/// tables on different workers share it without meeting on the packet
/// path (McNettle §4: shared state only where it is cheap).
#[derive(Debug)]
pub struct HostBudget {
    /// Most slots the tables may hold together.
    limit: AtomicUsize,
    /// Slots they hold now.
    used: AtomicUsize,
}

impl HostBudget {
    /// A budget for `hosts` entries in all tables together (each table is
    /// at most half full, so `2 * hosts` slots).
    pub fn for_hosts(hosts: usize) -> Arc<HostBudget> {
        Arc::new(HostBudget {
            limit: AtomicUsize::new(hosts.saturating_mul(2)),
            used: AtomicUsize::new(0),
        })
    }

    /// Changes the bound to `hosts` entries; tables already past it keep
    /// their memory until they go, and none grows while it is passed.
    pub fn set_hosts(&self, hosts: usize) {
        self.limit.store(hosts.saturating_mul(2), Ordering::Relaxed);
    }

    /// Slots the tables hold now.
    pub fn slots_used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Takes `n` slots if they fit.
    fn try_take(&self, n: usize) -> bool {
        let limit = self.limit.load(Ordering::Relaxed);
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(n).filter(|&after| after <= limit)
            })
            .is_ok()
    }

    /// Takes `n` slots whether or not they fit: a new table's first
    /// slots, which every switch needs to learn anything at all.
    fn take(&self, n: usize) {
        self.used.fetch_add(n, Ordering::Relaxed);
    }

    fn give_back(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::Relaxed);
    }
}

fn key_of(mac: &MacAddr) -> u64 {
    OCCUPIED | mac.to_u64()
}

/// How many requests ahead of the one being answered a handler prefetches
/// the table slots ([`MacTable::prefetch`]): far enough that a slot
/// arrives before it is used, near enough that it is still in the L1
/// cache then. Prefetching a whole batch (thousands of requests) first,
/// as the learning switch did, left most slots evicted again before their
/// turn: 16 ahead answered 1.23x as many requests under cbench at 16
/// switches, and 8 the same (issue 28, fifth session of 2026-11-28;
/// BENCHMARKS.md, "The learning switch's match and its limit").
pub const PREFETCH_AHEAD: usize = 16;

/// Asks the processor to bring `value`'s cache line in, and returns at
/// once. Unlike a load, a prefetch retires without waiting for memory, so
/// a loop of them keeps as many misses in flight as the core allows
/// instead of as many as fit in its reorder window.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_read<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults and has no effect a
    // program can observe other than timing; the pointer comes from a
    // live reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

impl<V: Zeroable + Default> MacTable<V> {
    /// An empty table that holds at most `max_len` entries before it is
    /// cleared.
    pub fn new(max_len: usize) -> MacTable<V> {
        MacTable {
            slots: Slots::zeroed(FIRST_SLOTS),
            len: 0,
            max_len: max_len.max(1),
            budget: None,
            seed: placement_seed(),
        }
    }

    /// [`MacTable::new`], whose slots also count against `budget`.
    pub fn with_budget(max_len: usize, budget: &Arc<HostBudget>) -> MacTable<V> {
        budget.take(FIRST_SLOTS);
        let mut table = MacTable::new(max_len);
        table.budget = Some(Arc::clone(budget));
        table
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: the multiply spreads the low bits (the host
        // part of a MAC) over the top bits, which pick the slot.
        let h = (key ^ self.seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let bits = self.slots.len().trailing_zeros();
        (h >> (64 - bits)) as usize
    }

    /// Starts loading the slot where `mac` would live into the cache,
    /// without waiting for it. Call it for the MACs of the request
    /// [`PREFETCH_AHEAD`] ahead of the one being answered; the lookups
    /// then hit the cache.
    #[inline]
    pub fn prefetch(&self, mac: &MacAddr) {
        let key = key_of(mac);
        if let Some(slot) = self.slots.get(self.home(key)) {
            prefetch_read(slot);
        }
    }

    /// What was learnt for `mac`.
    #[inline]
    pub fn get(&self, mac: &MacAddr) -> Option<V> {
        let key = key_of(mac);
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s.key == key {
                return Some(s.value);
            }
            if s.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// What was learnt for `mac`, to change in place.
    #[inline]
    pub fn get_mut(&mut self, mac: &MacAddr) -> Option<&mut V> {
        let key = key_of(mac);
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            if self.slots[i].key == key {
                return Some(&mut self.slots[i].value);
            }
            if self.slots[i].key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Forgets `mac`; returns what was learnt for it. The entries after it
    /// in its run move back to close the gap (backward-shift deletion), so
    /// a look-up still stops at the first empty slot.
    pub fn remove(&mut self, mac: &MacAddr) -> Option<V> {
        let key = key_of(mac);
        let mask = self.slots.len() - 1;
        let mut hole = self.home(key);
        loop {
            match self.slots[hole].key {
                k if k == key => break,
                0 => return None,
                _ => hole = (hole + 1) & mask,
            }
        }
        let value = self.slots[hole].value;
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let k = self.slots[i].key;
            if k == 0 {
                break;
            }
            // The entry at `i` may fill the hole if its home is not in
            // (hole, i]: it was placed past the hole.
            let home = self.home(k);
            let between = if hole <= i {
                hole < home && home <= i
            } else {
                hole < home || home <= i
            };
            if !between {
                self.slots[hole] = self.slots[i];
                hole = i;
            }
        }
        self.slots[hole] = Slot::default();
        self.len -= 1;
        Some(value)
    }

    /// Learns (or moves) `mac` to `value`; returns its previous value.
    #[inline]
    pub fn insert(&mut self, mac: &MacAddr, value: V) -> Option<V> {
        let key = key_of(mac);
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &mut self.slots[i];
            if s.key == key {
                return Some(std::mem::replace(&mut s.value, value));
            }
            if s.key == 0 {
                break;
            }
            i = (i + 1) & mask;
        }
        if self.len >= self.max_len || (self.len + 1) * 2 > self.slots.len() {
            self.make_room_and_insert(mac, value);
            return None;
        }
        self.slots[i] = Slot { key, value };
        self.len += 1;
        None
    }

    /// [`MacTable::insert`] of a new entry into a table that is full (it
    /// is cleared) or half full (it grows). Out of line, so that the
    /// common insert stays small enough to be inlined.
    #[cold]
    #[inline(never)]
    fn make_room_and_insert(&mut self, mac: &MacAddr, value: V) {
        let added = self.slots.len();
        let may_grow =
            self.len < self.max_len && self.budget.as_ref().is_none_or(|b| b.try_take(added));
        if may_grow {
            self.grow();
        } else {
            self.clear();
        }
        self.insert(mac, value);
    }

    /// Forgets everything (keeps the memory).
    pub fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
    }

    /// Keeps only the entries for which `keep` holds (rebuilds the table).
    pub fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        let n = self.slots.len();
        let old = std::mem::replace(&mut self.slots, Slots::zeroed(n));
        self.len = 0;
        let mask = self.slots.len() - 1;
        for &s in old.iter().filter(|s| s.key != 0 && keep(&s.value)) {
            let mut i = self.home(s.key);
            while self.slots[i].key != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
            self.len += 1;
        }
    }

    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, Slots::zeroed(n));
        let mask = self.slots.len() - 1;
        for &s in old.iter().filter(|s| s.key != 0) {
            let mut i = self.home(s.key);
            while self.slots[i].key != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }
}

impl<V: Zeroable> Clone for MacTable<V> {
    /// A copy with memory of its own, counted against the same budget
    /// (whether or not it fits: the copy already exists).
    fn clone(&self) -> Self {
        if let Some(b) = &self.budget {
            b.take(self.slots.len());
        }
        MacTable {
            slots: self.slots.clone(),
            len: self.len,
            max_len: self.max_len,
            budget: self.budget.clone(),
            seed: self.seed,
        }
    }
}

impl<V: Zeroable> Drop for MacTable<V> {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.give_back(self.slots.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn mac(n: u64) -> MacAddr {
        let b = n.to_be_bytes();
        MacAddr([b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    #[test]
    fn behaves_like_a_map() {
        let mut t: MacTable = MacTable::new(1 << 20);
        let mut reference = HashMap::new();
        // A deterministic pseudo-random sequence of inserts and moves.
        let mut x: u64 = 12345;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = mac(x % 20_000);
            let p = PortNo((x >> 20) as u32 % 48);
            t.insert(&m, p);
            reference.insert(m, p);
        }
        assert_eq!(t.len(), reference.len());
        for (m, p) in &reference {
            assert_eq!(t.get(m), Some(*p));
        }
        assert_eq!(t.get(&mac(1 << 40)), None);
        // The all-zero MAC is a valid key.
        t.insert(&mac(0), PortNo(9));
        assert_eq!(t.get(&mac(0)), Some(PortNo(9)));
    }

    #[test]
    fn removing_keeps_every_other_entry_found() {
        let mut t: MacTable = MacTable::new(1 << 20);
        let mut reference = HashMap::new();
        let mut x: u64 = 99;
        for round in 0..60_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = mac(x % 3_000);
            if round % 3 == 0 {
                assert_eq!(t.remove(&m), reference.remove(&m), "round {round}");
            } else {
                let p = PortNo(round as u32);
                t.insert(&m, p);
                reference.insert(m, p);
            }
        }
        assert_eq!(t.len(), reference.len());
        for (m, p) in &reference {
            assert_eq!(t.get(m), Some(*p));
        }
        for i in 0..3_000 {
            assert_eq!(t.get(&mac(i)), reference.get(&mac(i)).copied());
        }
        if let Some(p) = t.get_mut(&mac(x % 3_000)) {
            *p = PortNo(7);
        }
        assert!(t.get(&mac(x % 3_000)).is_none_or(|p| p == PortNo(7)));
    }

    #[test]
    fn stays_within_its_bound() {
        let mut t: MacTable = MacTable::new(100);
        for i in 0..1000 {
            t.insert(&mac(i), PortNo(1));
            assert!(t.len() <= 100);
        }
        assert_eq!(t.get(&mac(999)), Some(PortNo(1)));
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.get(&mac(999)), None);
    }

    #[test]
    fn tables_sharing_a_budget_stop_growing_at_it_and_give_it_back() {
        // 4 tables of up to 10,000 hosts each, 2,000 hosts together: 4,000
        // slots, so after their first 64 each may grow to 1,024 at most
        // (64 + 128 + 256 + 512) before the budget runs out.
        let budget = HostBudget::for_hosts(2_000);
        let mut tables: Vec<MacTable> = (0..4)
            .map(|_| MacTable::with_budget(10_000, &budget))
            .collect();
        assert_eq!(budget.slots_used(), 4 * 64);
        for i in 0..5_000u64 {
            for (s, t) in tables.iter_mut().enumerate() {
                let m = mac(((s as u64) << 32) | i);
                t.insert(&m, PortNo(1));
                // What was just learnt is always there, cleared or not.
                assert_eq!(t.get(&m), Some(PortNo(1)));
                assert!(budget.slots_used() <= 4_000);
            }
        }
        for t in &tables {
            // Cleared each time it reached half of the slots it could get.
            assert!(t.slots.len() <= 1_024, "{} slots", t.slots.len());
            assert!(t.len() <= t.slots.len() / 2);
        }
        let held: usize = tables.iter().map(|t| t.slots.len()).sum();
        assert_eq!(budget.slots_used(), held);
        let copy = tables[0].clone();
        assert_eq!(budget.slots_used(), held + copy.slots.len());
        drop(copy);
        tables.pop();
        assert_eq!(
            budget.slots_used(),
            tables.iter().map(|t| t.slots.len()).sum::<usize>()
        );
        // A table on its own grows as before.
        let mut alone: MacTable = MacTable::new(10_000);
        for i in 0..5_000 {
            alone.insert(&mac(i), PortNo(1));
        }
        assert_eq!(alone.len(), 5_000);
        drop(tables);
        assert_eq!(budget.slots_used(), 0);
    }

    #[test]
    fn a_lowered_budget_stops_growth_and_a_raised_one_allows_it() {
        let budget = HostBudget::for_hosts(1 << 20);
        let mut t: MacTable = MacTable::with_budget(1 << 20, &budget);
        budget.set_hosts(32);
        for i in 0..1_000 {
            t.insert(&mac(i), PortNo(1));
        }
        assert_eq!(
            t.slots.len(),
            64,
            "past the budget from the start: never grows"
        );
        budget.set_hosts(1 << 20);
        for i in 0..1_000 {
            t.insert(&mac(i), PortNo(1));
        }
        assert_eq!(t.len(), 1_000);
    }

    #[test]
    fn retain_keeps_what_is_asked() {
        let mut t: MacTable<(u8, PortNo)> = MacTable::new(1000);
        for i in 0..300 {
            t.insert(&mac(i), ((i % 3) as u8, PortNo(i as u32)));
        }
        t.retain(|(sw, _)| *sw != 1);
        assert_eq!(t.len(), 200);
        assert_eq!(t.get(&mac(1)), None);
        assert_eq!(t.get(&mac(3)), Some((0, PortNo(3))));
    }

    #[test]
    fn a_large_table_moves_onto_aligned_mapped_memory_and_keeps_its_entries() {
        let mut t: MacTable = MacTable::new(200_000);
        assert!(!t.slots.is_mapped(), "a small table stays on the heap");
        for i in 0..150_000 {
            t.insert(&mac(i * 7919), PortNo((i % 48) as u32));
        }
        // 150,000 entries at most half full: 2^19 slots of 16 bytes.
        let storage::Slots::Mapped(m) = &t.slots else {
            panic!("a table of {} slots should be mapped", t.slots.len());
        };
        assert_eq!(m.addr() % (2 << 20), 0, "2 MiB-aligned");
        let copy = t.clone();
        for i in 0..150_000 {
            assert_eq!(copy.get(&mac(i * 7919)), Some(PortNo((i % 48) as u32)));
        }
        t.retain(|p| p.0 % 2 == 0);
        assert_eq!(t.len(), 75_000);
        assert_eq!(t.get(&mac(7919)), None);
        assert_eq!(t.get(&mac(2 * 7919)), Some(PortNo(2)));
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.get(&mac(2 * 7919)), None);
        assert_eq!(copy.len(), 150_000, "the clone is its own memory");
    }

    /// How much of four cbench-sized tables the kernel put on huge pages
    /// (`AnonHugePages` of their mappings); prints, asserts nothing, as
    /// transparent huge pages may be off. `cargo test -p baton-apps
    /// huge_pages -- --ignored --nocapture`.
    #[test]
    #[ignore = "reports the kernel's choice; run by hand"]
    fn huge_pages_in_use() {
        let tables: Vec<MacTable> = (0..4u64)
            .map(|s| {
                let mut t = MacTable::new(1 << 20);
                for i in 0..100_000 {
                    t.insert(&mac((s << 32) | i), PortNo(1));
                }
                t
            })
            .collect();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        for t in &tables {
            let storage::Slots::Mapped(m) = &t.slots else {
                continue;
            };
            let mut lines = smaps.lines().skip_while(|l| {
                let range = l.split(' ').next().unwrap_or("");
                let (a, _) = range.split_once('-').unwrap_or(("", ""));
                usize::from_str_radix(a, 16).ok() != Some(m.addr())
            });
            let huge = lines.find(|l| l.starts_with("AnonHugePages:"));
            println!("{} slots at {:#x}: {huge:?}", t.slots.len(), m.addr());
        }
    }
}
