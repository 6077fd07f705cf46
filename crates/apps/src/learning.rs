//! Learning switches: local (McNettle §4.1, Fig. 5) and global (§4.2).
//!
//! On each PACKET_IN: remember that the source MAC lives behind the input
//! port; then answer it, always with exactly one FLOW_MOD or PACKET_OUT
//! (plus the PACKET_OUT that carries an unbuffered packet along a new
//! flow):
//! - destination known on another port: a flow to that port, which also
//!   forwards the packet when the switch buffered it;
//! - destination known on the input port itself: a short-lived drop flow
//!   carrying the packet's buffer, as Open vSwitch's learning switch
//!   does, so the switch frees its buffer and the flow's next packets
//!   stop coming back;
//! - destination unknown or multicast: flood the packet.
//!
//! What the flows match is the `match` setting ([`LearnedMatch`]): by
//! default what an L2 device tells apart (input port, both Ethernet
//! addresses, the VLAN), so a switch holds one flow per pair of hosts
//! and input port; or the packet's exact match, one flow per microflow
//! (each TCP or UDP connection, each ICMP type), as McNettle and the
//! cbench papers' learning switches install.
//!
//! A learning switch floods out of every port, so it cannot run a network
//! with loops; each switch's [`LoopGuard`] notices a loop, says so once in
//! the log, and paces the switch's floods until it is gone (`loop_guard`).

use crate::loop_guard::{Change, LoopGuard};
use crate::mac_table::{HostBudget, MacTable, PREFETCH_AHEAD};
use crate::priority;
use crate::settings::{AppSettings, Settings};
use baton_openflow::neutral::{ActionSpec, FlowSpec, MatchSpec, PacketOut, Payload};
use baton_openflow::{Cookie, DatapathId, MacAddr, PortNo};
use baton_runtime::{App, PacketIn, PacketInBatch, SwitchCtx, SwitchInfo};
use baton_runtime::{Configurable, SettingsError};
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

/// Settings shared by both learning switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearningConfig {
    /// Idle timeout of installed flows, seconds.
    pub idle_timeout: u16,
    /// Hard timeout of installed flows, seconds (0: none).
    pub hard_timeout: u16,
    /// Hard timeout of the drop flows for packets whose destination is
    /// behind their input port, seconds: short, so a host that moves is
    /// not cut off for long.
    pub drop_timeout: u16,
    /// Priority of installed flows (default: the base of
    /// [`priority::LEARNING`]).
    pub priority: u16,
    /// What installed flows match.
    #[serde(rename = "match")]
    pub match_: LearnedMatch,
    /// A host table that grows past this many entries is cleared: a bound
    /// on memory under MAC floods, at the cost of relearning. A change
    /// applies to the tables of switches that connect after it (the
    /// global switch's table keeps the size it started with).
    pub max_hosts: usize,
    /// The hosts all switches' tables hold together (the local learning
    /// switch; the global one has one table, bounded by `max_hosts`). A
    /// table that would grow past it is cleared instead, so the tables
    /// take at most 32 bytes per host of it (512 MiB at the default 2^24)
    /// however many switches connect. A change applies when the next
    /// switch connects.
    pub max_hosts_total: usize,
}

impl AppSettings for LearningConfig {
    fn check(&self) -> Result<(), SettingsError> {
        if self.max_hosts == 0 {
            return Err(SettingsError::invalid("max_hosts", "must be at least 1"));
        }
        if self.max_hosts_total == 0 {
            return Err(SettingsError::invalid(
                "max_hosts_total",
                "must be at least 1",
            ));
        }
        if self.drop_timeout == 0 {
            return Err(SettingsError::invalid(
                "drop_timeout",
                "must be at least 1 s (a drop flow without a timeout would cut a host off for good)",
            ));
        }
        Ok(())
    }
}

impl Default for LearningConfig {
    fn default() -> Self {
        LearningConfig {
            idle_timeout: 10,
            hard_timeout: 0,
            drop_timeout: 5,
            priority: priority::LEARNING.base(),
            match_: LearnedMatch::L2,
            max_hosts: 1 << 20,
            max_hosts_total: 1 << 24,
        }
    }
}

/// What a learning switch's flows match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LearnedMatch {
    /// `"l2"`: input port, Ethernet source and destination, and the VLAN
    /// (its id when tagged, untagged otherwise;
    /// [`MatchSpec::l2_frame`]). One flow per pair of hosts and input
    /// port, whatever they say to each other: the switch's flow table
    /// grows with the hosts, not with their connections.
    #[default]
    L2,
    /// `"exact"`: every field of the packet that the version can match
    /// (1.0.0 §5.2.3's twelve, 1.3's OXM fields of the frame's
    /// protocols). One flow per microflow: each connection between two
    /// hosts costs a packet-in and a flow of its own.
    Exact,
}

const FLOOD: [ActionSpec; 1] = [ActionSpec::Output {
    port: PortNo::FLOOD,
    max_len: 0,
}];

crate::counters::named_counters! {
    /// What the learning switches count, for the operator.
    struct LearningCounters, live Counters {
        /// Loops found (each switch's suspicion counts once).
        loops_found,
        /// Floods dropped by the pacing of a switch on a loop.
        floods_paced,
    }
}

impl Counters {
    /// `mac` moved from port `before` to the packet-in's port: tell the
    /// switch's guard. Out of line: on a network without loops it runs
    /// only when a host moves.
    #[cold]
    #[inline(never)]
    fn moved(
        &self,
        sw: &SwitchCtx<'_>,
        guard: &mut LoopGuard,
        pi: &PacketIn<'_>,
        mac: MacAddr,
        before: PortNo,
    ) {
        let now = sw.net().now();
        if guard.moved(sw.dpid(), now, mac, (before, pi.in_port())) == Change::LoopFound {
            self.loops_found.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Answers one packet-in: a flow to `out_port` if known (a drop flow if
/// that is the input port), else a flood, or a drop while the switch's
/// floods are paced.
fn respond(
    sw: &mut SwitchCtx<'_>,
    pi: &PacketIn<'_>,
    out_port: Option<PortNo>,
    cfg: &LearningConfig,
    (guard, counters): (&mut LoopGuard, &Counters),
) {
    let in_port = pi.in_port();
    let Some(port) = out_port else {
        let dpid = sw.dpid();
        if guard.may_flood(dpid, || sw.net().now()) {
            sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port,
                actions: &FLOOD,
            });
        } else {
            counters.floods_paced.fetch_add(1, Ordering::Relaxed);
            sw.drop_packet(pi);
        }
        return;
    };
    let output = [ActionSpec::Output { port, max_len: 0 }];
    let (actions, idle_timeout, hard_timeout) = if port == in_port {
        (&[][..], 0, cfg.drop_timeout)
    } else {
        (&output[..], cfg.idle_timeout, cfg.hard_timeout)
    };
    let match_ = match cfg.match_ {
        LearnedMatch::Exact => pi.exact_match(),
        // The caller read both addresses, so the frame has them.
        LearnedMatch::L2 => {
            MatchSpec::l2_frame(in_port, pi.data()).unwrap_or_else(|| pi.exact_match())
        }
    };
    sw.add_flow(&FlowSpec {
        match_,
        priority: cfg.priority,
        idle_timeout,
        hard_timeout,
        // The runtime tags it with the application's cookie.
        cookie: Cookie(0),
        buffer_id: pi.buffer_id(),
        flags: 0,
        actions,
        meter: None,
    });
    if pi.buffer_id().is_none() && !actions.is_empty() {
        sw.packet_out(&PacketOut {
            payload: Payload::Frame(pi.data()),
            in_port,
            actions,
        });
    }
}

/// Starts loading the table slots of `pi`'s two addresses.
fn prefetch_slots(table: &MacTable<PortNo>, pi: &PacketIn<'_>) {
    if let (Some(dst), Some(src)) = (pi.eth_dst(), pi.eth_src()) {
        table.prefetch(&src);
        table.prefetch(&dst);
    }
}

/// The local learning switch: one MAC table per switch, in switch-local
/// state (no locks).
pub struct LearningSwitch {
    settings: Settings<LearningConfig>,
    counters: Counters,
    /// What all switches' tables hold together (`max_hosts_total`).
    hosts: Arc<HostBudget>,
}

impl LearningSwitch {
    /// A learning switch with these settings.
    pub fn new(cfg: LearningConfig) -> LearningSwitch {
        LearningSwitch {
            settings: Settings::new(cfg),
            counters: Counters::default(),
            hosts: HostBudget::for_hosts(cfg.max_hosts_total),
        }
    }

    /// The table slots (16 bytes each) all switches hold now.
    pub fn host_slots(&self) -> usize {
        self.hosts.slots_used()
    }
}

/// The local learning switch's state for one switch.
pub struct LocalSwitch {
    table: MacTable<PortNo>,
    guard: LoopGuard,
}

impl App for LearningSwitch {
    type Switch = LocalSwitch;

    fn name(&self) -> &str {
        "learning-switch"
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) -> LocalSwitch {
        let cfg = self.settings.get();
        self.hosts.set_hosts(cfg.max_hosts_total);
        LocalSwitch {
            table: MacTable::with_budget(cfg.max_hosts, &self.hosts),
            guard: LoopGuard::default(),
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters.snapshot().named()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        Some(&self.settings)
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, LocalSwitch>) {
        let cfg = &**self.settings.get();
        batch.for_each_switch(|sw, state, events| {
            let LocalSwitch { table, guard } = state;
            // The table slots of the packet-in `PREFETCH_AHEAD` ahead are
            // loaded while this one is answered, so their cache misses
            // overlap (see `mac_table`).
            let mut ahead = events.iter();
            for pi in ahead.by_ref().take(PREFETCH_AHEAD) {
                prefetch_slots(table, &pi);
            }
            for pi in events.iter() {
                if let Some(next) = ahead.next() {
                    prefetch_slots(table, &next);
                }
                let (Some(dst), Some(src)) = (pi.eth_dst(), pi.eth_src()) else {
                    continue;
                };
                if !src.is_multicast() {
                    let in_port = pi.in_port();
                    if let Some(before) = table.insert(&src, in_port) {
                        if before != in_port {
                            self.counters.moved(sw, guard, &pi, src, before);
                        }
                    }
                }
                let out = if dst.is_multicast() {
                    None
                } else {
                    table.get(&dst)
                };
                respond(sw, &pi, out, cfg, (guard, &self.counters));
            }
        });
    }
}

/// Number of shards of the global host table: enough that workers rarely
/// meet on one lock at the core counts we run (up to 16), small enough to
/// scan for `len`.
const SHARDS: usize = 64;

/// One shard of the global host table: MAC -> (switch, port).
type HostShard = MacTable<(DatapathId, PortNo)>;

/// The global learning switch: one host table (MAC -> switch and port)
/// shared by all switches, split into 64 (`SHARDS`) read-write-locked shards
/// by MAC hash. A lookup takes one read lock; learning takes a write lock
/// only when the location changed.
pub struct GlobalLearningSwitch {
    settings: Settings<LearningConfig>,
    shards: Box<[RwLock<HostShard>]>,
    counters: Counters,
}

impl GlobalLearningSwitch {
    /// An empty table with these settings.
    pub fn new(cfg: LearningConfig) -> GlobalLearningSwitch {
        GlobalLearningSwitch {
            settings: Settings::new(cfg),
            shards: (0..SHARDS)
                .map(|_| RwLock::new(MacTable::new(cfg.max_hosts / SHARDS + 1)))
                .collect(),
            counters: Counters::default(),
        }
    }

    fn shard(&self, mac: &MacAddr) -> &RwLock<HostShard> {
        let m = mac.0;
        let h = u32::from_le_bytes([m[2], m[3], m[4], m[5]]) as usize;
        &self.shards[h % SHARDS]
    }

    /// Where `mac` was last seen.
    pub fn locate(&self, mac: &MacAddr) -> Option<(DatapathId, PortNo)> {
        let shard = self.shard(mac).read().unwrap_or_else(|e| e.into_inner());
        shard.get(mac)
    }

    /// Hosts known.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }

    /// True when no host is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl App for GlobalLearningSwitch {
    /// Each switch's loop guard; the hosts are shared.
    type Switch = LoopGuard;

    fn name(&self) -> &str {
        "global-learning-switch"
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) -> LoopGuard {
        LoopGuard::default()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters.snapshot().named()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        Some(&self.settings)
    }

    fn switch_down(&self, sw: &SwitchInfo, _state: LoopGuard) {
        for shard in self.shards.iter() {
            let mut s = shard.write().unwrap_or_else(|e| e.into_inner());
            s.retain(|(dpid, _)| *dpid != sw.dpid);
        }
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, LoopGuard>) {
        let cfg = &**self.settings.get();
        batch.for_each(|sw, guard, pi| {
            let (Some(dst), Some(src)) = (pi.eth_dst(), pi.eth_src()) else {
                return;
            };
            let here = sw.dpid();
            let in_port = pi.in_port();
            let known = self.locate(&src);
            if !src.is_multicast() && known != Some((here, in_port)) {
                let mut shard = self.shard(&src).write().unwrap_or_else(|e| e.into_inner());
                shard.insert(&src, (here, in_port));
                drop(shard);
                if let Some((_, before)) = known.filter(|&(dpid, _)| dpid == here) {
                    self.counters.moved(sw, guard, pi, src, before);
                }
            }
            // Without topology, a host known at another switch is flooded
            // towards from here.
            let out = if dst.is_multicast() {
                None
            } else {
                self.locate(&dst)
                    .and_then(|(dpid, port)| (dpid == here).then_some(port))
            };
            respond(sw, pi, out, cfg, (guard, &self.counters));
        });
    }
}
