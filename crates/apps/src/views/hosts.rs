//! The hosts view ([`Hosts`]) and the table behind it ([`HostTable`]),
//! which only `devices` writes.
//!
//! Unlike the other views, the hosts are not copied into each version. A
//! network's hosts are many (a data centre's VMs, a MAC flood's million)
//! and a new one comes with any packet, so neither a copy per version nor
//! a persistent map's path per change is cheap enough: with `imbl`'s
//! ordered maps the default pipeline paid four look-ups of 280-490
//! instructions per packet and a path copy of about a kilobyte per new
//! host, ten times what the learning switch spends on a whole request
//! (BENCHMARKS.md, "The network services' cost per request"). Instead one
//! table is shared by every version, and a version is the table as of a
//! sequence number:
//! - `devices` changes the table in place and records each change (a host
//!   learnt, moved or gone) in a batch of its own; committing the batch
//!   ([`HostTable::commit`]) numbers the changes, appends them to the
//!   table's change log and publishes the new version, once per batch of
//!   packet-ins rather than once per host;
//! - a host learnt after a version's number is not seen through it, so
//!   the applications that handle one event agree on which hosts exist
//!   (the runtime pins one version of every view per event): a host
//!   another worker learns while `bandwidth` and then `routing` look at a
//!   packet is unknown to both;
//! - a host that moved or went is seen where it is now through every
//!   version: the readers that act on such changes read them from the log
//!   ([`Hosts::changes_since`]), which costs the changes, not a comparison
//!   of two versions' millions of hosts.
//!
//! A look-up is a hash of the address, keyed with a random seed per table
//! (foldhash; a sender that picks its addresses cannot make them collide),
//! into one of [`SHARDS`] hash maps, each under a reader-writer lock that
//! only a change takes for writing: the packet-in path of every worker
//! reads without waiting for another's, and refreshing a host's last-seen
//! time is an atomic store under the read lock.

mod segmented;

use super::PortRef;
use crate::mac_table::{MacTable, Zeroable};
use crate::sync::lock;
use baton_openflow::{DatapathId, MacAddr, PortNo};
use baton_runtime::env::View;
use segmented::Segmented;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::hash::BuildHasher;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// A host the network has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Its Ethernet address.
    pub mac: MacAddr,
    /// The VLAN it was seen on, if tagged.
    pub vlan: Option<u16>,
    /// IPv4 addresses it used (ARP sender, IPv4 source).
    pub ipv4: BTreeSet<Ipv4Addr>,
    /// IPv6 addresses it used (IPv6 source, neighbour discovery).
    pub ipv6: BTreeSet<Ipv6Addr>,
    /// Where it is attached.
    pub at: PortRef,
    /// When it was first seen.
    pub first_seen: Instant,
    /// When it was last seen (to the millisecond).
    pub last_seen: Instant,
    /// When it was first seen at `at`, in milliseconds since the Unix
    /// epoch: of two members of a cluster that saw it at different ports,
    /// the later sighting is where it is now.
    pub at_since_ms: u64,
}

/// The Ethernet address `devices` asks silent hosts from (an ARP probe,
/// `devices.rs`): locally administered, never a host's. Nothing is
/// learnt from it, and what is sent to it (the answers) goes no further
/// than the controller: `routing` drops it rather than flood it.
pub const PROBE_MAC: MacAddr = MacAddr([0x0a, 0xba, 0x70, 0x0e, 0x00, 0x01]);

/// A host not seen for a while ([`HostTable::silent`]), with what it
/// takes to ask it whether it is still there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Silent {
    /// Its Ethernet address.
    pub mac: MacAddr,
    /// Where it is attached.
    pub at: PortRef,
    /// The VLAN it was seen on, if tagged.
    pub vlan: Option<u16>,
    /// The first IPv4 address it used, if any.
    pub ipv4: Option<Ipv4Addr>,
    /// When it was last seen (to the millisecond).
    pub last_seen: Instant,
}

/// What changed about one host, as the change log keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostChange {
    /// The change's number: the first version that shows it.
    pub seq: u64,
    /// The host.
    pub mac: MacAddr,
    /// What happened.
    pub what: HostEvent,
}

/// What happened to a host ([`HostChange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostEvent {
    /// It was learnt, attached here.
    Learnt {
        /// Where.
        at: PortRef,
    },
    /// It was seen at another port.
    Moved {
        /// Where it was.
        from: PortRef,
        /// Where it is now.
        to: PortRef,
    },
    /// It was forgotten.
    Gone {
        /// Where it was.
        from: PortRef,
    },
}

/// A reader asked for changes the log no longer holds: it fell more than
/// `LOG_CAPACITY` (2^18) changes behind, and must look at the hosts afresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behind {
    /// The oldest change the log still holds.
    pub oldest: u64,
}

impl fmt::Display for Behind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the hosts' change log starts at change {}: more changes came than it keeps",
            self.oldest
        )
    }
}

impl std::error::Error for Behind {}

/// The shards of the table: enough that workers seldom read-lock the same
/// one at once, few enough to walk for a listing.
pub const SHARDS: usize = 64;

/// The changes the log keeps for readers that follow the hosts (routing's
/// DAG reads them at each run, within milliseconds): a MAC flood's
/// half-million hosts aging out at once passes this, and a reader that
/// falls that far behind looks at the hosts afresh ([`Behind`]). About 10
/// MiB at most.
pub const LOG_CAPACITY: usize = 1 << 18;

/// The sequence number of a host learnt in a batch not yet committed: no
/// version sees it.
const UNCOMMITTED: u64 = u64::MAX;

/// The table's hash: foldhash, seeded at random per table.
type Hasher = foldhash::fast::RandomState;

/// A host's addresses of one family: most hosts have one, held inline;
/// more go in a list of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Addresses<T> {
    first: Option<T>,
    // Boxed so that a host with one address pays 8 bytes for the others,
    // not 24.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<T>>>,
}

impl<T> Default for Addresses<T> {
    fn default() -> Addresses<T> {
        Addresses {
            first: None,
            more: None,
        }
    }
}

impl<T: Copy + Ord> Addresses<T> {
    fn of(set: &BTreeSet<T>) -> Addresses<T> {
        let mut a = Addresses::default();
        for &x in set {
            a.insert(x);
        }
        a
    }

    fn one(x: Option<T>) -> Addresses<T> {
        Addresses {
            first: x,
            more: None,
        }
    }

    #[inline]
    fn contains(&self, x: T) -> bool {
        self.first == Some(x) || self.more.as_ref().is_some_and(|m| m.contains(&x))
    }

    /// Adds `x`; false if it was there.
    fn insert(&mut self, x: T) -> bool {
        if self.contains(x) {
            return false;
        }
        match self.first {
            None => self.first = Some(x),
            Some(_) => self.more.get_or_insert_default().push(x),
        }
        true
    }

    fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.first
            .into_iter()
            .chain(self.more.iter().flat_map(|m| m.iter().copied()))
    }

    fn set(&self) -> BTreeSet<T> {
        self.iter().collect()
    }
}

/// One host in the table, its record in place (no allocation for a host
/// with one address of each family): a new host under a MAC flood cost
/// three allocations when it was an `Arc<Host>` with its sets.
struct Entry {
    mac: MacAddr,
    at: PortRef,
    vlan: Option<u16>,
    /// The member of the cluster whose switch it is attached to, if not
    /// this instance's.
    peer: Option<Arc<str>>,
    /// The change number that made it visible ([`UNCOMMITTED`] until its
    /// batch is committed).
    learnt: u64,
    /// Milliseconds on the table's clock ([`Table::zero`]).
    last_seen_ms: AtomicU64,
    first_seen_ms: u64,
    at_since_ms: u64,
    ipv4: Addresses<Ipv4Addr>,
    /// Boxed: an entry of a host without IPv6 addresses is 24 bytes
    /// smaller.
    ipv6: Option<Box<Addresses<Ipv6Addr>>>,
}

impl Entry {
    /// The whole record, on a table whose clock started at `zero`.
    fn host(&self, zero: Instant) -> Host {
        let at = |ms: u64| zero + Duration::from_millis(ms);
        Host {
            mac: self.mac,
            vlan: self.vlan,
            ipv4: self.ipv4.set(),
            ipv6: self.ipv6.as_ref().map_or_else(BTreeSet::new, |a| a.set()),
            at: self.at,
            first_seen: at(self.first_seen_ms),
            last_seen: at(self.last_seen_ms.load(Ordering::Relaxed)),
            at_since_ms: self.at_since_ms,
        }
    }
}

/// What a packet says about its sender ([`HostTable::see`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sender {
    /// Its Ethernet address.
    pub mac: MacAddr,
    /// The VLAN of its frame, if tagged.
    pub vlan: Option<u16>,
    /// The IPv4 address it uses, if the frame says.
    pub ipv4: Option<Ipv4Addr>,
    /// The IPv6 address it uses, if the frame says.
    pub ipv6: Option<Ipv6Addr>,
}

/// Whether `e` was last seen `timeout_ms` or more before `now_ms`.
fn silent(e: &Entry, now_ms: u64, timeout_ms: u64) -> bool {
    now_ms.saturating_sub(e.last_seen_ms.load(Ordering::Relaxed)) >= timeout_ms
}

/// The change log: changes `first..next`, oldest first.
#[derive(Default)]
struct Log {
    changes: VecDeque<HostChange>,
    /// The number of the next change.
    next: u64,
}

/// What a look-up on the packet-in path reads of a host, in its slot of
/// the shard's index: where it is, when it became visible, and where its
/// whole entry is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
struct Slot {
    dpid: u64,
    port: u32,
    /// Its entry in [`Shard::entries`].
    entry: u32,
    learnt: u64,
}

// SAFETY: integers only, so all zeroes is a valid (empty) value.
#[allow(unsafe_code)]
unsafe impl Zeroable for Slot {}

/// One shard of the table: an index from address to slot (open
/// addressing, 32-byte slots, on huge pages once large: the learning
/// switch's [`MacTable`]) and the entries themselves in a vector that
/// never moves them ([`Segmented`]). A
/// look-up that needs only where a host is reads one slot, which
/// [`Shard::prefetch`] can load ahead; a new host writes a slot and the
/// vector's end. With a `HashMap` of whole entries, each new or refused
/// host missed the cache twice, on the control bytes and on the entry,
/// and a MAC flood's learning at 64 switches took half of the worker for
/// seconds (perf, cbench at 64 switches x 100,000 hosts).
struct Shard {
    index: MacTable<Slot>,
    entries: Segmented<Entry>,
}

impl Shard {
    fn new() -> Shard {
        Shard {
            // Never cleared: it grows as hosts come.
            index: MacTable::new(usize::MAX),
            entries: Segmented::default(),
        }
    }

    #[inline]
    fn slot(&self, mac: &MacAddr) -> Option<Slot> {
        self.index.get(mac)
    }

    fn get(&self, mac: &MacAddr) -> Option<&Entry> {
        Some(&self.entries[self.slot(mac)?.entry as usize])
    }

    #[inline]
    fn prefetch(&self, mac: &MacAddr) {
        self.index.prefetch(mac);
    }

    /// Changes host `mac`'s entry with `f`, and its slot with it.
    fn update<R>(&mut self, mac: &MacAddr, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
        let slot = self.index.get_mut(mac)?;
        let e = &mut self.entries[slot.entry as usize];
        let r = f(e);
        *slot = Slot {
            dpid: e.at.dpid.0,
            port: e.at.port.0,
            entry: slot.entry,
            learnt: e.learnt,
        };
        Some(r)
    }

    /// Adds `e`, or replaces the entry of its host (returned).
    fn insert(&mut self, e: Entry) -> Option<Entry> {
        let mac = e.mac;
        if self.index.get(&mac).is_some() {
            return self.update(&mac, |old| std::mem::replace(old, e));
        }
        let slot = Slot {
            dpid: e.at.dpid.0,
            port: e.at.port.0,
            entry: self.entries.len() as u32,
            learnt: e.learnt,
        };
        self.entries.push(e);
        self.index.insert(&mac, slot);
        None
    }

    /// Takes host `mac` out: its entry's place goes to the last entry.
    fn remove(&mut self, mac: &MacAddr) -> Option<Entry> {
        let slot = self.index.remove(mac)?;
        let e = self.entries.swap_remove(slot.entry as usize)?;
        if let Some(moved) = self.entries.get(slot.entry as usize)
            && let Some(s) = self.index.get_mut(&moved.mac)
        {
            s.entry = slot.entry;
        }
        Some(e)
    }
}

/// The hosts that joined a switch ([`Table::by_switch`]), in the order
/// they came: a host that leaves stays listed (as stale) until the list
/// is mostly stale and is compacted. Appending costs a write to the end
/// of a list; a hash set per switch cost a cache miss per new host (at
/// cbench's 100,000 hosts a switch, a fifth of a MAC flood's learning).
#[derive(Debug, Default)]
struct SwitchHosts {
    macs: Vec<MacAddr>,
    /// How many of `macs` left since the last compaction.
    stale: usize,
}

struct Table {
    hasher: Hasher,
    shards: Box<[RwLock<Shard>]>,
    by_ipv4: RwLock<HashMap<Ipv4Addr, MacAddr, Hasher>>,
    by_switch: Mutex<HashMap<DatapathId, SwitchHosts, Hasher>>,
    log: Mutex<Log>,
    /// The number of the last change committed.
    committed: AtomicU64,
    /// Moves up at each commit that moved or forgot a host.
    epoch: AtomicU64,
    /// Hosts held, and those of them attached to this instance's switches.
    len: AtomicUsize,
    own: AtomicUsize,
    /// The zero of the table's clock (the last-seen times): the first
    /// time it was given.
    zero: OnceLock<Instant>,
}

impl Table {
    fn new() -> Table {
        let hasher = Hasher::default();
        Table {
            shards: (0..SHARDS).map(|_| RwLock::new(Shard::new())).collect(),
            by_ipv4: RwLock::new(HashMap::with_hasher(hasher.clone())),
            by_switch: Mutex::new(HashMap::with_hasher(hasher.clone())),
            hasher,
            log: Mutex::new(Log {
                changes: VecDeque::new(),
                next: 1,
            }),
            committed: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            len: AtomicUsize::new(0),
            own: AtomicUsize::new(0),
            zero: OnceLock::new(),
        }
    }

    #[inline]
    fn shard(&self, mac: &MacAddr) -> &RwLock<Shard> {
        let h = self.hasher.hash_one(mac.to_u64());
        &self.shards[(h >> 40) as usize % SHARDS]
    }

    fn read(&self, mac: &MacAddr) -> RwLockReadGuard<'_, Shard> {
        self.shard(mac).read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, mac: &MacAddr) -> RwLockWriteGuard<'_, Shard> {
        self.shard(mac).write().unwrap_or_else(|e| e.into_inner())
    }

    fn zero(&self, now: Instant) -> Instant {
        *self.zero.get_or_init(|| now)
    }

    fn ms(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.zero(now)).as_millis() as u64
    }

    /// Takes host `mac`'s old addresses `before` (those not in `now`)
    /// away from it, and points its addresses `now` at it.
    fn index_ipv4(&self, before: &Addresses<Ipv4Addr>, now: &Addresses<Ipv4Addr>, mac: MacAddr) {
        if before == now {
            return;
        }
        let mut by_ipv4 = self.by_ipv4.write().unwrap_or_else(|e| e.into_inner());
        for ip in before.iter() {
            if by_ipv4.get(&ip) == Some(&mac) && !now.contains(ip) {
                by_ipv4.remove(&ip);
            }
        }
        for ip in now.iter() {
            by_ipv4.insert(ip, mac);
        }
    }

    /// Moves `mac` from switch `before`'s hosts to switch `now`'s.
    fn index_switch(&self, before: Option<DatapathId>, now: Option<DatapathId>, mac: MacAddr) {
        if before == now {
            return;
        }
        let mut by_switch = lock(&self.by_switch);
        if let Some(d) = before
            && let Some(hosts) = by_switch.get_mut(&d)
        {
            hosts.stale += 1;
            if hosts.stale * 2 > hosts.macs.len() {
                let live = self.compact(d, hosts);
                if live == 0 {
                    by_switch.remove(&d);
                }
            }
        }
        if let Some(d) = now {
            by_switch.entry(d).or_default().macs.push(mac);
        }
    }

    /// The hosts of `hosts` (switch `dpid`'s list) that are attached to
    /// it now, each once, by address.
    fn live_on(&self, dpid: DatapathId, hosts: &[MacAddr]) -> Vec<MacAddr> {
        let mut live: Vec<MacAddr> = hosts
            .iter()
            .copied()
            .filter(|m| self.read(m).slot(m).is_some_and(|s| s.dpid == dpid.0))
            .collect();
        live.sort_unstable();
        live.dedup();
        live
    }

    /// Drops the stale entries of switch `dpid`'s list; how many are left.
    /// (Its caller holds `by_switch`, and this the shards' read locks in
    /// turn: no writer of a shard takes `by_switch` before releasing it.)
    fn compact(&self, dpid: DatapathId, hosts: &mut SwitchHosts) -> usize {
        hosts.macs = self.live_on(dpid, &hosts.macs);
        hosts.stale = 0;
        hosts.macs.len()
    }

    /// What `f` makes of each host held, shard by shard (each under its
    /// read lock for its walk alone).
    fn walk<T>(&self, mut f: impl FnMut(&Entry) -> Option<T>) -> Vec<T> {
        let mut all = Vec::with_capacity(self.len.load(Ordering::Relaxed));
        for shard in self.shards.iter() {
            let shard = shard.read().unwrap_or_else(|e| e.into_inner());
            all.extend(shard.entries.iter().filter_map(&mut f));
        }
        all
    }

    /// The hosts held on switch `dpid`, committed or not, by address.
    fn on_switch(&self, dpid: DatapathId) -> Vec<MacAddr> {
        let listed: Vec<MacAddr> = lock(&self.by_switch)
            .get(&dpid)
            .map(|h| h.macs.clone())
            .unwrap_or_default();
        self.live_on(dpid, &listed)
    }
}

/// The hosts, as of one version: the hosts view, written by `devices`
/// (the module docs say how versions share one table). Cloning one costs
/// a reference count.
#[derive(Clone)]
pub struct Hosts {
    table: Arc<Table>,
    /// Hosts learnt by later changes are not seen.
    seq: u64,
}

impl View for Hosts {
    const NAME: &'static str = "hosts";
}

impl Default for Hosts {
    /// No hosts.
    fn default() -> Hosts {
        HostTable::new().view()
    }
}

impl fmt::Debug for Hosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hosts")
            .field("seq", &self.seq)
            .field("len", &self.len())
            .finish()
    }
}

impl Hosts {
    /// Where host `mac` is attached: the look-up of the packet-in paths
    /// (one slot of the index).
    #[inline]
    pub fn at(&self, mac: &MacAddr) -> Option<PortRef> {
        let slot = self.table.read(mac).slot(mac)?;
        (slot.learnt <= self.seq).then(|| PortRef::new(DatapathId(slot.dpid), PortNo(slot.port)))
    }

    /// Host `mac`'s record.
    pub fn get(&self, mac: &MacAddr) -> Option<Host> {
        let zero = *self.table.zero.get()?;
        let shard = self.table.read(mac);
        shard
            .get(mac)
            .filter(|e| e.learnt <= self.seq)
            .map(|e| e.host(zero))
    }

    /// Whether host `mac` is known.
    pub fn contains(&self, mac: &MacAddr) -> bool {
        self.at(mac).is_some()
    }

    /// The host that uses this IPv4 address.
    pub fn by_ipv4(&self, ip: Ipv4Addr) -> Option<Host> {
        self.get(&self.mac_of(ip)?)
    }

    /// The Ethernet address of the host that uses this IPv4 address.
    pub fn mac_of(&self, ip: Ipv4Addr) -> Option<MacAddr> {
        let by_ipv4 = self.table.by_ipv4.read().unwrap_or_else(|e| e.into_inner());
        let mac = *by_ipv4.get(&ip)?;
        drop(by_ipv4);
        self.contains(&mac).then_some(mac)
    }

    /// Hosts known (those of batches not yet committed included).
    pub fn len(&self) -> usize {
        self.table.len.load(Ordering::Relaxed)
    }

    /// True when none is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every host, by address.
    pub fn list(&self) -> Vec<Host> {
        let Some(&zero) = self.table.zero.get() else {
            return Vec::new();
        };
        let mut all = self
            .table
            .walk(|e| (e.learnt <= self.seq).then(|| e.host(zero)));
        all.sort_unstable_by_key(|h| h.mac);
        all
    }

    /// The hosts attached to switch `dpid`, by address.
    pub fn on_switch(&self, dpid: DatapathId) -> Vec<Host> {
        let macs = self.table.on_switch(dpid);
        macs.iter().filter_map(|m| self.get(m)).collect()
    }

    /// The switches that have hosts attached (and, for a moment after its
    /// last host left, one that had).
    pub fn switches(&self) -> Vec<DatapathId> {
        let mut switches: Vec<DatapathId> = lock(&self.table.by_switch).keys().copied().collect();
        switches.sort_unstable();
        switches
    }

    /// The number of the last change this version shows.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The changes after change `after` up to this version's, oldest
    /// first; [`Behind`] if the log no longer holds them all.
    pub fn changes_since(&self, after: u64) -> Result<Vec<HostChange>, Behind> {
        let log = lock(&self.table.log);
        let oldest = log.next - log.changes.len() as u64;
        if after + 1 < oldest && after < self.seq {
            return Err(Behind { oldest });
        }
        let from = (after + 1).saturating_sub(oldest) as usize;
        let to = (self.seq + 1)
            .saturating_sub(oldest)
            .min(log.changes.len() as u64) as usize;
        Ok(log.changes.range(from.min(to)..to).copied().collect())
    }

    /// Whether `other` is a version of the same table.
    pub fn same_table(&self, other: &Hosts) -> bool {
        Arc::ptr_eq(&self.table, &other.table)
    }
}

/// A small cache of where hosts are, for the packet-in path of one
/// switch (routing keeps one in each switch's state): the answers of one
/// version of the hosts, dropped when the version changes. A look-up in
/// the table takes its shard's read lock, two atomic read-modify-writes
/// that cost as much as the rest of routing a flooded packet (perf, the
/// default pipeline under cbench); a switch asks about the same few
/// destinations again and again (its gateways, its busy servers), so most
/// of its look-ups are answered here. Direct-mapped, [`HostCache::SLOTS`]
/// slots: 2 KiB a switch.
#[derive(Debug, Clone)]
pub struct HostCache {
    slots: Box<[CachedAt; HostCache::SLOTS]>,
}

#[derive(Debug, Clone, Copy, Default)]
struct CachedAt {
    /// `OCCUPIED | mac`, 0 when empty.
    key: u64,
    /// The version of the hosts the answer is of.
    seq: u64,
    at: Option<PortRef>,
}

impl Default for HostCache {
    fn default() -> HostCache {
        HostCache {
            slots: Box::new([CachedAt::default(); HostCache::SLOTS]),
        }
    }
}

impl HostCache {
    /// Slots of a cache.
    pub const SLOTS: usize = 64;

    /// Where host `mac` is attached according to `hosts` ([`Hosts::at`]).
    #[inline]
    pub fn at(&mut self, hosts: &Hosts, mac: &MacAddr) -> Option<PortRef> {
        const OCCUPIED: u64 = 1 << 63;
        let key = OCCUPIED | mac.to_u64();
        // Fibonacci hashing of the address: the multiply spreads its low
        // (host) bits over the top six, which pick the slot. Unkeyed, but
        // a collision costs a table look-up, nothing more.
        let slot = &mut self.slots[(key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize];
        // Another table's versions are numbered afresh: its answers are
        // not these.
        let seq = hosts.seq ^ (Arc::as_ptr(&hosts.table) as u64).rotate_left(32);
        if slot.key != key || slot.seq != seq {
            *slot = CachedAt {
                key,
                seq,
                at: hosts.at(mac),
            };
        }
        slot.at
    }
}

/// What [`HostTable::see`] made of a sighting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The host is known as seen: its last-seen time is refreshed.
    Same,
    /// It was not known, and is now.
    Learnt,
    /// It was known at another port (this one's, or another member's
    /// switch), and is now known here, with the addresses just seen.
    Moved(PortRef),
    /// It was known here; a VLAN or an address is new.
    Updated,
    /// It was not known, and was not learnt: the table holds `max_own` of
    /// this instance's hosts.
    Refused,
}

/// Changes made to the table and not yet committed ([`HostTable::commit`]).
#[derive(Debug, Default)]
pub struct Batch {
    changes: Vec<HostChange>,
}

impl Batch {
    /// Whether it holds no change.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// What [`HostTable::put`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    /// The host was not known.
    Learnt,
    /// It was known at another port, there.
    Moved(PortRef),
    /// It was known there; its record changed (an address, the VLAN, who
    /// serves it).
    Updated,
}

/// The host table: `devices`' handle on it, which changes it; every other
/// application reads its versions ([`Hosts`]).
pub struct HostTable {
    table: Arc<Table>,
}

impl Default for HostTable {
    fn default() -> HostTable {
        HostTable::new()
    }
}

impl HostTable {
    /// An empty table.
    pub fn new() -> HostTable {
        HostTable {
            table: Arc::new(Table::new()),
        }
    }

    /// The table as of its last commit.
    pub fn view(&self) -> Hosts {
        Hosts {
            table: self.table.clone(),
            seq: self.table.committed.load(Ordering::Acquire),
        }
    }

    /// A number that moves up whenever a commit moved or forgot a host:
    /// what a cache of the table's answers (`devices`' per switch) is
    /// valid for. A host learnt does not move it (no cached answer said
    /// anything of that host but that it was refused, and the table that
    /// refused it had no room, which only a host forgotten makes).
    pub fn epoch(&self) -> u64 {
        self.table.epoch.load(Ordering::Acquire)
    }

    /// `now` in whole seconds on the table's clock (wrapping after 136
    /// years).
    pub fn seconds(&self, now: Instant) -> u32 {
        (self.table.ms(now) / 1000) as u32
    }

    /// Hosts held, this instance's and the other members'.
    pub fn len(&self) -> usize {
        self.table.len.load(Ordering::Relaxed)
    }

    /// True when none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hosts held that are attached to this instance's switches.
    pub fn own_len(&self) -> usize {
        self.table.own.load(Ordering::Relaxed)
    }

    /// Host `mac`'s record and the member whose switch it is on (`None`:
    /// this instance's), committed or not.
    pub fn get(&self, mac: &MacAddr) -> Option<(Host, Option<Arc<str>>)> {
        let zero = *self.table.zero.get()?;
        let shard = self.table.read(mac);
        shard.get(mac).map(|e| (e.host(zero), e.peer.clone()))
    }

    /// Starts loading the index slot of host `mac` into the cache, and
    /// returns at once: for a caller about to [`HostTable::see`] several
    /// hosts, so that their look-ups' cache misses overlap.
    #[inline]
    pub fn prefetch(&self, mac: &MacAddr) {
        self.table.read(mac).prefetch(mac);
    }

    /// `sender` was seen on this instance's port `at` at `now` (`wall_ms`
    /// on the wall clock, for [`Host::at_since_ms`]): refreshes its
    /// last-seen time if it is known so; learns it if it is new and fewer
    /// than `max_own` of this instance's hosts are held; moves it here
    /// (with the addresses just seen) if it was elsewhere; adds a new VLAN
    /// or address if it was here. A change is recorded in `batch`; a new
    /// host is seen by versions once the batch is committed.
    pub fn see(
        &self,
        sender: &Sender,
        at: PortRef,
        (now, wall_ms): (Instant, u64),
        max_own: usize,
        batch: &mut Batch,
    ) -> Seen {
        /// What changed in an entry that was there.
        enum Change {
            Here {
                new_ipv4: Option<Ipv4Addr>,
                more: bool,
            },
            Away {
                from: PortRef,
                was_peer: bool,
                before: Addresses<Ipv4Addr>,
            },
        }
        let table = &self.table;
        let mac = sender.mac;
        let ms = table.ms(now);
        let mut shard = table.write(&mac);
        let change = shard.update(&mac, |e| {
            e.last_seen_ms.store(ms, Ordering::Relaxed);
            if e.at == at && e.peer.is_none() {
                let vlan = std::mem::replace(&mut e.vlan, sender.vlan) != sender.vlan;
                let new_ipv4 = sender.ipv4.filter(|&ip| e.ipv4.insert(ip));
                let ipv6 = sender
                    .ipv6
                    .is_some_and(|ip| e.ipv6.get_or_insert_default().insert(ip));
                return Change::Here {
                    new_ipv4,
                    more: vlan || ipv6,
                };
            }
            let from = e.at;
            let was_peer = e.peer.take().is_some();
            let before = std::mem::replace(&mut e.ipv4, Addresses::one(sender.ipv4));
            e.ipv6 = sender.ipv6.map(|ip| Box::new(Addresses::one(Some(ip))));
            e.at = at;
            e.vlan = sender.vlan;
            e.at_since_ms = wall_ms;
            Change::Away {
                from,
                was_peer,
                before,
            }
        });
        let Some(change) = change else {
            if table.own.load(Ordering::Relaxed) >= max_own {
                return Seen::Refused;
            }
            let ipv4 = Addresses::one(sender.ipv4);
            shard.insert(Entry {
                mac,
                at,
                vlan: sender.vlan,
                peer: None,
                learnt: UNCOMMITTED,
                last_seen_ms: AtomicU64::new(ms),
                first_seen_ms: ms,
                at_since_ms: wall_ms,
                ipv4: ipv4.clone(),
                ipv6: sender.ipv6.map(|ip| Box::new(Addresses::one(Some(ip)))),
            });
            drop(shard);
            table.len.fetch_add(1, Ordering::Relaxed);
            table.own.fetch_add(1, Ordering::Relaxed);
            table.index_ipv4(&Addresses::default(), &ipv4, mac);
            table.index_switch(None, Some(at.dpid), mac);
            batch.changes.push(HostChange {
                seq: 0,
                mac,
                what: HostEvent::Learnt { at },
            });
            return Seen::Learnt;
        };
        drop(shard);
        match change {
            Change::Here { new_ipv4, more } => {
                if let Some(ip) = new_ipv4 {
                    table.index_ipv4(&Addresses::default(), &Addresses::one(Some(ip)), mac);
                }
                match more || new_ipv4.is_some() {
                    true => Seen::Updated,
                    false => Seen::Same,
                }
            }
            Change::Away {
                from,
                was_peer,
                before,
            } => {
                if was_peer {
                    table.own.fetch_add(1, Ordering::Relaxed);
                }
                table.index_ipv4(&before, &Addresses::one(sender.ipv4), mac);
                table.index_switch(Some(from.dpid), Some(at.dpid), mac);
                if from == at {
                    return Seen::Updated;
                }
                batch.changes.push(HostChange {
                    seq: 0,
                    mac,
                    what: HostEvent::Moved { from, to: at },
                });
                Seen::Moved(from)
            }
        }
    }

    /// Adds or replaces `host` (on a switch of member `peer`, `None` for
    /// this instance's), seen last at `host.last_seen`: another member's
    /// facts, or a table built by hand. The change is recorded in `batch`,
    /// and a new host is seen by versions only once the batch is
    /// committed.
    pub fn put(&self, host: Host, peer: Option<Arc<str>>, batch: &mut Batch) -> Put {
        let table = &self.table;
        let (mac, at) = (host.mac, host.at);
        let mine = peer.is_none();
        let mut entry = Entry {
            mac,
            at,
            vlan: host.vlan,
            peer,
            learnt: UNCOMMITTED,
            last_seen_ms: AtomicU64::new(table.ms(host.last_seen)),
            first_seen_ms: table.ms(host.first_seen),
            at_since_ms: host.at_since_ms,
            ipv4: Addresses::of(&host.ipv4),
            ipv6: (!host.ipv6.is_empty()).then(|| Box::new(Addresses::of(&host.ipv6))),
        };
        let ipv4 = entry.ipv4.clone();
        let mut shard = table.write(&mac);
        // A host already known keeps its number: it stays visible.
        if let Some(old) = shard.get(&mac) {
            entry.learnt = old.learnt;
        }
        let before = shard.insert(entry);
        drop(shard);
        if before.is_none() {
            table.len.fetch_add(1, Ordering::Relaxed);
        }
        let was_mine = before.as_ref().map(|e| e.peer.is_none());
        match (was_mine, mine) {
            (Some(true), false) => {
                table.own.fetch_sub(1, Ordering::Relaxed);
            }
            (None | Some(false), true) => {
                table.own.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        let no_addresses = Addresses::default();
        table.index_ipv4(
            before.as_ref().map_or(&no_addresses, |e| &e.ipv4),
            &ipv4,
            mac,
        );
        table.index_switch(before.as_ref().map(|e| e.at.dpid), Some(at.dpid), mac);
        let (what, put) = match &before {
            None => (Some(HostEvent::Learnt { at }), Put::Learnt),
            Some(old) if old.at != at => (
                Some(HostEvent::Moved {
                    from: old.at,
                    to: at,
                }),
                Put::Moved(old.at),
            ),
            Some(_) => (None, Put::Updated),
        };
        if let Some(what) = what {
            batch.changes.push(HostChange { seq: 0, mac, what });
        }
        put
    }

    /// Forgets host `mac`, recording it in `batch`; its record and the
    /// member whose switch it was on, if it was known.
    pub fn remove(&self, mac: &MacAddr, batch: &mut Batch) -> Option<(Host, Option<Arc<str>>)> {
        self.remove_if(mac, batch, |_| true)
    }

    /// Forgets this instance's host `mac` if it has not been seen for
    /// `timeout` at `now` (checked under the lock that a sighting's
    /// refresh cannot pass, so a host seen again since it was found silent
    /// stays); true if it did.
    pub fn remove_silent(
        &self,
        mac: &MacAddr,
        now: Instant,
        timeout: Duration,
        batch: &mut Batch,
    ) -> bool {
        let (now, timeout) = (self.table.ms(now), timeout.as_millis() as u64);
        self.remove_if(mac, batch, |e| e.peer.is_none() && silent(e, now, timeout))
            .is_some()
    }

    fn remove_if(
        &self,
        mac: &MacAddr,
        batch: &mut Batch,
        when: impl FnOnce(&Entry) -> bool,
    ) -> Option<(Host, Option<Arc<str>>)> {
        let table = &self.table;
        let old = {
            let mut shard = table.write(mac);
            if !when(shard.get(mac)?) {
                return None;
            }
            shard.remove(mac)?
        };
        table.len.fetch_sub(1, Ordering::Relaxed);
        if old.peer.is_none() {
            table.own.fetch_sub(1, Ordering::Relaxed);
        }
        table.index_ipv4(&old.ipv4, &Addresses::default(), *mac);
        table.index_switch(Some(old.at.dpid), None, *mac);
        batch.changes.push(HostChange {
            seq: 0,
            mac: *mac,
            what: HostEvent::Gone { from: old.at },
        });
        let zero = *table.zero.get()?;
        Some((old.host(zero), old.peer))
    }

    /// Numbers `batch`'s changes, appends them to the log, makes its new
    /// hosts visible, and hands the new version to `publish` (under the
    /// log's lock, so versions are published in the order of their
    /// numbers). Nothing happens for an empty batch.
    pub fn commit(&self, batch: &mut Batch, publish: impl FnOnce(Hosts)) {
        if batch.changes.is_empty() {
            return;
        }
        let table = &self.table;
        let mut log = lock(&table.log);
        if batch
            .changes
            .iter()
            .any(|c| !matches!(c.what, HostEvent::Learnt { .. }))
        {
            table.epoch.fetch_add(1, Ordering::Release);
        }
        for mut change in batch.changes.drain(..) {
            change.seq = log.next;
            log.next += 1;
            if let HostEvent::Learnt { .. } = change.what {
                let seq = change.seq;
                table.write(&change.mac).update(&change.mac, |e| {
                    if e.learnt == UNCOMMITTED {
                        e.learnt = seq;
                    }
                });
            }
            log.changes.push_back(change);
        }
        while log.changes.len() > LOG_CAPACITY {
            log.changes.pop_front();
        }
        let seq = log.next - 1;
        table.committed.store(seq, Ordering::Release);
        publish(Hosts {
            table: table.clone(),
            seq,
        });
    }

    /// Adds or replaces `host` as this instance's and commits at once
    /// (tests, and tables built by hand).
    pub fn insert(&self, host: Host) -> Put {
        let mut batch = Batch::default();
        let put = self.put(host, None, &mut batch);
        self.commit(&mut batch, |_| {});
        put
    }

    /// This instance's hosts not seen for `timeout` at `now`, with what it
    /// takes to ask each whether it is still there.
    pub fn silent(&self, now: Instant, timeout: Duration) -> Vec<Silent> {
        let table = &self.table;
        let Some(&zero) = table.zero.get() else {
            return Vec::new();
        };
        let (now, timeout) = (table.ms(now), timeout.as_millis() as u64);
        table.walk(|e| {
            (e.peer.is_none() && silent(e, now, timeout)).then_some(Silent {
                mac: e.mac,
                at: e.at,
                vlan: e.vlan,
                ipv4: e.ipv4.first,
                last_seen: zero + Duration::from_millis(e.last_seen_ms.load(Ordering::Relaxed)),
            })
        })
    }

    /// Every host held (committed or not) with the member whose switch it
    /// is on.
    pub fn entries(&self) -> Vec<(Host, Option<Arc<str>>)> {
        let Some(&zero) = self.table.zero.get() else {
            return Vec::new();
        };
        let mut all = self.table.walk(|e| Some((e.host(zero), e.peer.clone())));
        all.sort_unstable_by_key(|(h, _)| h.mac);
        all
    }

    /// The hosts held on switch `dpid`, committed or not.
    pub fn on_switch(&self, dpid: DatapathId) -> Vec<MacAddr> {
        self.table.on_switch(dpid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::PortNo;

    fn p(d: u64, n: u32) -> PortRef {
        PortRef::new(DatapathId(d), PortNo(n))
    }

    fn host(n: u8, at: PortRef, now: Instant) -> Host {
        Host {
            mac: MacAddr([2, 0, 0, 0, 0, n]),
            vlan: None,
            ipv4: [Ipv4Addr::new(10, 0, 0, n)].into(),
            ipv6: BTreeSet::new(),
            at,
            first_seen: now,
            last_seen: now,
            at_since_ms: 0,
        }
    }

    fn on_switch(hosts: &Hosts, dpid: u64) -> Vec<u8> {
        hosts
            .on_switch(DatapathId(dpid))
            .iter()
            .map(|h| h.mac.0[5])
            .collect()
    }

    #[test]
    fn hosts_are_found_by_address_and_switch_as_they_come_move_and_go() {
        let now = Instant::now();
        let t = HostTable::new();
        t.insert(host(1, p(1, 1), now));
        t.insert(host(2, p(1, 2), now));
        t.insert(host(3, p(2, 1), now));
        let h = t.view();
        assert_eq!(on_switch(&h, 1), vec![1, 2]);
        assert_eq!(h.at(&host(3, p(0, 0), now).mac), Some(p(2, 1)));
        assert_eq!(h.by_ipv4(Ipv4Addr::new(10, 0, 0, 2)).unwrap().at, p(1, 2));
        t.insert(host(2, p(1, 3), now)); // another port, same switch
        assert_eq!(t.insert(host(1, p(2, 2), now)), Put::Moved(p(1, 1)));
        assert_eq!(
            on_switch(&h, 1),
            vec![2],
            "every version sees where it is now"
        );
        assert_eq!(on_switch(&h, 2), vec![1, 3]);
        // An address taken by another host.
        let mut four = host(4, p(2, 3), now);
        four.ipv4 = [Ipv4Addr::new(10, 0, 0, 2)].into();
        t.insert(four);
        assert_eq!(
            t.view()
                .by_ipv4(Ipv4Addr::new(10, 0, 0, 2))
                .map(|h| h.mac.0[5]),
            Some(4)
        );
        assert_eq!(
            h.by_ipv4(Ipv4Addr::new(10, 0, 0, 2)),
            None,
            "a version from before host 4 does not see it"
        );
        let mut batch = Batch::default();
        t.remove(&MacAddr([2, 0, 0, 0, 0, 2]), &mut batch);
        t.remove(&MacAddr([2, 0, 0, 0, 0, 4]), &mut batch);
        t.commit(&mut batch, |_| {});
        assert!(on_switch(&t.view(), 1).is_empty());
        assert_eq!(t.view().switches(), vec![DatapathId(2)]);
        assert!(t.view().by_ipv4(Ipv4Addr::new(10, 0, 0, 2)).is_none());
        assert_eq!((t.len(), t.own_len()), (2, 2));
        let listed: Vec<u8> = t.view().list().iter().map(|h| h.mac.0[5]).collect();
        assert_eq!(listed, vec![1, 3]);
    }

    #[test]
    fn a_new_host_is_seen_only_by_versions_from_its_commit_on() {
        let now = Instant::now();
        let t = HostTable::new();
        let before = t.view();
        let mut batch = Batch::default();
        assert_eq!(t.put(host(1, p(1, 1), now), None, &mut batch), Put::Learnt);
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        assert_eq!(t.view().at(&mac), None, "not committed");
        assert!(t.get(&mac).is_some(), "devices sees its own batch");
        let mut published = None;
        t.commit(&mut batch, |h| published = Some(h));
        let published = published.expect("a version");
        assert_eq!(published.at(&mac), Some(p(1, 1)));
        assert_eq!(before.at(&mac), None, "an earlier version does not see it");
        // A move is seen by every version that saw the host.
        let mut batch = Batch::default();
        t.put(host(1, p(1, 2), now), None, &mut batch);
        assert_eq!(published.at(&mac), Some(p(1, 2)));
        assert!(published.at(&mac).is_some(), "a move keeps it visible");
    }

    #[test]
    fn the_change_log_says_what_happened_since_a_version() {
        let now = Instant::now();
        let t = HostTable::new();
        let start = t.view().seq();
        t.insert(host(1, p(1, 1), now));
        t.insert(host(2, p(1, 2), now));
        let middle = t.view();
        t.insert(host(1, p(2, 1), now));
        t.insert(host(2, p(1, 2), now)); // no change: nothing logged
        let mut batch = Batch::default();
        t.remove(&MacAddr([2, 0, 0, 0, 0, 2]), &mut batch);
        t.commit(&mut batch, |_| {});
        let what = |changes: Vec<HostChange>| -> Vec<(u8, HostEvent)> {
            changes.iter().map(|c| (c.mac.0[5], c.what)).collect()
        };
        let now_view = t.view();
        assert_eq!(
            what(now_view.changes_since(middle.seq()).unwrap()),
            vec![
                (
                    1,
                    HostEvent::Moved {
                        from: p(1, 1),
                        to: p(2, 1)
                    }
                ),
                (2, HostEvent::Gone { from: p(1, 2) }),
            ]
        );
        assert_eq!(now_view.changes_since(start).unwrap().len(), 4);
        assert_eq!(
            middle.changes_since(start).unwrap().len(),
            2,
            "a version's changes stop at its own number"
        );
        assert!(now_view.changes_since(now_view.seq()).unwrap().is_empty());
    }

    #[test]
    fn a_reader_that_fell_behind_the_log_is_told() {
        let now = Instant::now();
        let t = HostTable::new();
        let mut batch = Batch::default();
        for n in 0..=LOG_CAPACITY {
            let mut h = host(0, p(1, 1), now);
            let b = (n as u64 + 1).to_be_bytes();
            h.mac = MacAddr([2, b[3], b[4], b[5], b[6], b[7]]);
            h.ipv4.clear();
            t.put(h, None, &mut batch);
            if n % 4096 == 0 {
                t.commit(&mut batch, |_| {});
            }
        }
        t.commit(&mut batch, |_| {});
        let v = t.view();
        assert_eq!(v.changes_since(0), Err(Behind { oldest: 2 }));
        assert_eq!(v.changes_since(1).unwrap().len(), LOG_CAPACITY);
    }

    fn sender(n: u8, ip: Option<[u8; 4]>) -> Sender {
        Sender {
            mac: MacAddr([2, 0, 0, 0, 0, n]),
            vlan: None,
            ipv4: ip.map(Ipv4Addr::from),
            ipv6: None,
        }
    }

    #[test]
    fn a_sighting_refreshes_a_host_known_as_seen_and_changes_what_differs() {
        let t0 = Instant::now();
        let t = HostTable::new();
        t.insert(host(1, p(1, 1), t0));
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        let later = t0 + Duration::from_secs(5);
        let one = sender(1, Some([10, 0, 0, 1]));
        let mut batch = Batch::default();
        assert_eq!(t.see(&one, p(1, 1), (later, 7), 10, &mut batch), Seen::Same);
        assert_eq!(t.view().get(&mac).unwrap().last_seen, later);
        assert!(
            t.silent(later + Duration::from_secs(9), Duration::from_secs(10))
                .is_empty()
        );
        assert_eq!(
            t.silent(later + Duration::from_secs(10), Duration::from_secs(10)),
            vec![Silent {
                mac,
                at: p(1, 1),
                vlan: None,
                ipv4: Some(Ipv4Addr::new(10, 0, 0, 1)),
                last_seen: later,
            }]
        );
        let see = |s: &Sender, at, batch: &mut Batch| t.see(s, at, (later, 7), 10, batch);
        // Another address at the same port: added.
        let other_ip = sender(1, Some([10, 0, 0, 9]));
        assert_eq!(see(&other_ip, p(1, 1), &mut batch), Seen::Updated);
        assert_eq!(see(&other_ip, p(1, 1), &mut batch), Seen::Same);
        let h = t.get(&mac).unwrap().0;
        assert_eq!(h.ipv4.len(), 2);
        assert!(batch.is_empty(), "nothing the log keeps");
        // Another port: moved, with the address just seen only.
        assert_eq!(see(&one, p(1, 2), &mut batch), Seen::Moved(p(1, 1)));
        let h = t.get(&mac).unwrap().0;
        assert_eq!((h.at, h.ipv4.len(), h.at_since_ms), (p(1, 2), 1, 7));
        assert_eq!(t.view().mac_of(Ipv4Addr::new(10, 0, 0, 9)), None);
        // A new one, then none while ten are held.
        assert_eq!(see(&sender(2, None), p(1, 3), &mut batch), Seen::Learnt);
        assert_eq!(
            t.see(&sender(3, None), p(1, 3), (later, 7), 2, &mut batch),
            Seen::Refused
        );
        t.commit(&mut batch, |_| {});
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn another_member_s_host_is_counted_apart_and_never_silent_here() {
        let now = Instant::now();
        let t = HostTable::new();
        let mut batch = Batch::default();
        t.put(host(1, p(1, 1), now), Some(Arc::from("b")), &mut batch);
        t.put(host(2, p(2, 1), now), None, &mut batch);
        t.commit(&mut batch, |_| {});
        assert_eq!((t.len(), t.own_len()), (2, 1));
        let later = now + Duration::from_secs(100);
        assert_eq!(
            t.silent(later, Duration::from_secs(1))
                .iter()
                .map(|s| s.mac)
                .collect::<Vec<_>>(),
            vec![MacAddr([2, 0, 0, 0, 0, 2])]
        );
        let mut batch = Batch::default();
        assert_eq!(
            t.see(&sender(1, None), p(1, 1), (later, 0), 10, &mut batch),
            Seen::Updated,
            "another member's host, seen here: this instance's now"
        );
        assert_eq!((t.len(), t.own_len()), (2, 2));
        // Back to the other member, by its facts.
        assert_eq!(
            t.put(host(1, p(1, 1), later), Some(Arc::from("b")), &mut batch),
            Put::Updated
        );
        assert_eq!((t.len(), t.own_len()), (2, 1));
    }

    #[test]
    fn a_host_cache_answers_as_its_version_until_the_version_changes() {
        let now = Instant::now();
        let t = HostTable::new();
        t.insert(host(1, p(1, 1), now));
        let v1 = t.view();
        let mut cache = HostCache::default();
        let (one, two) = (MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2]));
        assert_eq!(cache.at(&v1, &one), Some(p(1, 1)));
        assert_eq!(cache.at(&v1, &two), None);
        t.insert(host(2, p(1, 2), now));
        t.insert(host(1, p(2, 1), now));
        assert_eq!(
            cache.at(&v1, &two),
            None,
            "the same version: the same answer"
        );
        let v2 = t.view();
        assert_eq!(cache.at(&v2, &two), Some(p(1, 2)));
        assert_eq!(cache.at(&v2, &one), Some(p(2, 1)));
        // Another table, at the same number, is asked again.
        let other = HostTable::new();
        other.insert(host(1, p(9, 9), now));
        other.insert(host(3, p(9, 9), now));
        other.insert(host(4, p(9, 9), now));
        assert_eq!(other.view().seq(), v2.seq());
        assert_eq!(cache.at(&other.view(), &one), Some(p(9, 9)));
    }
}
