//! Learning switches: local (McNettle §4.1, Fig. 5) and global (§4.2).
//!
//! On each PACKET_IN: remember that the source MAC lives behind the input
//! port; then answer it, always with exactly one FLOW_MOD or PACKET_OUT
//! (plus the PACKET_OUT that carries an unbuffered packet along a new
//! flow):
//! - destination known on another port: an exact-match flow to that port,
//!   which also forwards the packet when the switch buffered it;
//! - destination known on the input port itself: a short-lived exact-match
//!   drop flow carrying the packet's buffer, as Open vSwitch's learning
//!   switch does, so the switch frees its buffer and the flow's next
//!   packets stop coming back;
//! - destination unknown or multicast: flood the packet.

use crate::mac_table::MacTable;
use crate::settings::{AppSettings, Settings};
use baton_openflow::neutral::{ActionSpec, FlowSpec, PacketOut, Payload};
use baton_openflow::{Cookie, DatapathId, MacAddr, PortNo};
use baton_runtime::{App, PacketIn, PacketInBatch, SwitchCtx, SwitchInfo};
use serde::{Deserialize, Serialize};
use std::sync::RwLock;

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
    /// Priority of installed flows.
    pub priority: u16,
    /// A host table that grows past this many entries is cleared: a bound
    /// on memory under MAC floods, at the cost of relearning. A change
    /// applies to the tables of switches that connect after it (the
    /// global switch's table keeps the size it started with).
    pub max_hosts: usize,
}

impl AppSettings for LearningConfig {
    fn check(&self) -> Result<(), String> {
        if self.max_hosts == 0 {
            return Err("setting \"max_hosts\": must be at least 1".to_string());
        }
        if self.drop_timeout == 0 {
            return Err(
                "setting \"drop_timeout\": must be at least 1 s (a drop flow without a timeout would cut a host off for good)".to_string(),
            );
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
            priority: 0x8000,
            max_hosts: 1 << 20,
        }
    }
}

const FLOOD: [ActionSpec; 1] = [ActionSpec::Output {
    port: PortNo::FLOOD,
    max_len: 0,
}];

/// Answers one packet-in: a flow to `out_port` if known (a drop flow if
/// that is the input port), else a flood.
fn respond(
    sw: &mut SwitchCtx<'_>,
    pi: &PacketIn<'_>,
    out_port: Option<PortNo>,
    cfg: &LearningConfig,
) {
    let in_port = pi.in_port();
    let Some(port) = out_port else {
        sw.packet_out(&PacketOut {
            payload: pi.payload(),
            in_port,
            actions: &FLOOD,
        });
        return;
    };
    let output = [ActionSpec::Output { port, max_len: 0 }];
    let (actions, idle_timeout, hard_timeout) = if port == in_port {
        (&[][..], 0, cfg.drop_timeout)
    } else {
        (&output[..], cfg.idle_timeout, cfg.hard_timeout)
    };
    sw.add_flow(&FlowSpec {
        match_: pi.exact_match(),
        priority: cfg.priority,
        idle_timeout,
        hard_timeout,
        // The runtime tags it with the application's cookie.
        cookie: Cookie(0),
        buffer_id: pi.buffer_id(),
        flags: 0,
        actions,
    });
    if pi.buffer_id().is_none() && !actions.is_empty() {
        sw.packet_out(&PacketOut {
            payload: Payload::Frame(pi.data()),
            in_port,
            actions,
        });
    }
}

/// The local learning switch: one MAC table per switch, in switch-local
/// state (no locks).
pub struct LearningSwitch {
    settings: Settings<LearningConfig>,
}

impl LearningSwitch {
    /// A learning switch with these settings.
    pub fn new(cfg: LearningConfig) -> LearningSwitch {
        LearningSwitch {
            settings: Settings::new(cfg),
        }
    }
}

impl App for LearningSwitch {
    type Switch = MacTable<PortNo>;

    fn name(&self) -> &str {
        "learning-switch"
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) -> MacTable<PortNo> {
        MacTable::new(self.settings.get().max_hosts)
    }

    fn settings(&self) -> serde_json::Value {
        self.settings.json()
    }

    fn configure(&self, changes: &serde_json::Value) -> Result<(), String> {
        self.settings.merge(changes)
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, MacTable<PortNo>>) {
        let cfg = &**self.settings.get();
        // First pass over the whole batch: start loading every table slot
        // it will use, so their cache misses overlap (see `mac_table`).
        batch.for_each_switch(|_, table, events| {
            for pi in events.iter() {
                if let (Some(dst), Some(src)) = (pi.eth_dst(), pi.eth_src()) {
                    table.prefetch(&src);
                    table.prefetch(&dst);
                }
            }
        });
        batch.for_each_switch(|sw, table, events| {
            for pi in events.iter() {
                let (Some(dst), Some(src)) = (pi.eth_dst(), pi.eth_src()) else {
                    continue;
                };
                if !src.is_multicast() {
                    table.insert(&src, pi.in_port());
                }
                let out = if dst.is_multicast() {
                    None
                } else {
                    table.get(&dst)
                };
                respond(sw, &pi, out, cfg);
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
}

impl GlobalLearningSwitch {
    /// An empty table with these settings.
    pub fn new(cfg: LearningConfig) -> GlobalLearningSwitch {
        GlobalLearningSwitch {
            settings: Settings::new(cfg),
            shards: (0..SHARDS)
                .map(|_| RwLock::new(MacTable::new(cfg.max_hosts / SHARDS + 1)))
                .collect(),
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
    type Switch = ();

    fn name(&self) -> &str {
        "global-learning-switch"
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}

    fn settings(&self) -> serde_json::Value {
        self.settings.json()
    }

    fn configure(&self, changes: &serde_json::Value) -> Result<(), String> {
        self.settings.merge(changes)
    }

    fn switch_down(&self, sw: &SwitchInfo, _state: ()) {
        for shard in self.shards.iter() {
            let mut s = shard.write().unwrap_or_else(|e| e.into_inner());
            s.retain(|(dpid, _)| *dpid != sw.dpid);
        }
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        let cfg = &**self.settings.get();
        batch.for_each(|sw, _, pi| {
            let (Some(dst), Some(src)) = (pi.eth_dst(), pi.eth_src()) else {
                return;
            };
            let here = sw.dpid();
            let in_port = pi.in_port();
            if !src.is_multicast() && self.locate(&src) != Some((here, in_port)) {
                let mut shard = self.shard(&src).write().unwrap_or_else(|e| e.into_inner());
                shard.insert(&src, (here, in_port));
            }
            // Without topology, a host known at another switch is flooded
            // towards from here.
            let out = if dst.is_multicast() {
                None
            } else {
                self.locate(&dst)
                    .and_then(|(dpid, port)| (dpid == here).then_some(port))
            };
            respond(sw, pi, out, cfg);
        });
    }
}
