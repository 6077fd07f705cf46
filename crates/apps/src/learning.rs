//! Learning switches: local (McNettle §4.1, Fig. 5) and global (§4.2).
//!
//! On each PACKET_IN: remember that the source MAC lives behind the input
//! port; if the destination MAC is known, install an exact-match flow to
//! its port (using the switch's buffer when it has one, otherwise sending
//! the packet along with a PACKET_OUT); if not, flood the packet.

use crate::mac_table::MacTable;
use baton_openflow::neutral::{
    ActionSpec, FlowSpec, MatchSpec, PacketIn, PacketOut, Payload, encode_flow_add,
    encode_packet_out,
};
use baton_openflow::{Cookie, DatapathId, MacAddr, PortNo};
use baton_runtime::{App, Flow, PacketInBatch, SwitchCtx, SwitchInfo};
use std::sync::RwLock;

/// Settings shared by both learning switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LearningConfig {
    /// Idle timeout of installed flows, seconds.
    pub idle_timeout: u16,
    /// Hard timeout of installed flows, seconds (0: none).
    pub hard_timeout: u16,
    /// Priority of installed flows.
    pub priority: u16,
    /// A host table that grows past this many entries is cleared: a bound
    /// on memory under MAC floods, at the cost of relearning.
    pub max_hosts: usize,
}

impl Default for LearningConfig {
    fn default() -> Self {
        LearningConfig {
            idle_timeout: 10,
            hard_timeout: 0,
            priority: 0x8000,
            max_hosts: 1 << 20,
        }
    }
}

/// Cookie on flows the learning switches install, so operators can find
/// (and delete) them.
pub const LEARNING_COOKIE: Cookie = Cookie(0x6261_746f_6e4c_5357); // "batonLSW"

fn macs(data: &[u8]) -> Option<(MacAddr, MacAddr)> {
    let dst: [u8; 6] = data.get(0..6)?.try_into().ok()?;
    let src: [u8; 6] = data.get(6..12)?.try_into().ok()?;
    Some((MacAddr(dst), MacAddr(src)))
}

/// Answers one packet-in: a flow to `out_port` if known (and not the
/// input port), else a flood.
fn respond(
    sw: &mut SwitchCtx<'_>,
    pi: &PacketIn<'_>,
    out_port: Option<PortNo>,
    cfg: &LearningConfig,
) {
    let version = sw.version();
    let in_port = pi.in_port();
    match out_port {
        Some(port) if port == in_port => {
            // The destination is behind the port the packet came in on:
            // the switch would send it back where it came from. Drop it.
        }
        Some(port) => {
            let actions = [ActionSpec::Output { port, max_len: 0 }];
            let key = pi.key();
            let spec = FlowSpec {
                match_: MatchSpec::exact(&key),
                priority: cfg.priority,
                idle_timeout: cfg.idle_timeout,
                hard_timeout: cfg.hard_timeout,
                cookie: LEARNING_COOKIE,
                buffer_id: pi.buffer_id(),
                flags: 0,
                actions: &actions,
            };
            let xid = sw.xid();
            encode_flow_add(sw.out(), version, xid, &spec);
            if pi.buffer_id().is_none() {
                let xid = sw.xid();
                let po = PacketOut {
                    payload: Payload::Frame(pi.data()),
                    in_port,
                    actions: &actions,
                };
                encode_packet_out(sw.out(), version, xid, &po);
            }
        }
        None => {
            let flood = [ActionSpec::Output {
                port: PortNo::FLOOD,
                max_len: 0,
            }];
            let xid = sw.xid();
            let po = PacketOut {
                payload: pi.payload(),
                in_port,
                actions: &flood,
            };
            encode_packet_out(sw.out(), version, xid, &po);
        }
    }
}

/// The local learning switch: one MAC table per switch, in switch-local
/// state (no locks).
#[derive(Debug, Clone, Default)]
pub struct LearningSwitch {
    cfg: LearningConfig,
}

impl LearningSwitch {
    /// A learning switch with these settings.
    pub fn new(cfg: LearningConfig) -> LearningSwitch {
        LearningSwitch { cfg }
    }
}

impl App for LearningSwitch {
    fn name(&self) -> &str {
        "learning-switch"
    }

    fn switch_up(&self, sw: &mut SwitchCtx<'_>) {
        sw.set_local(MacTable::<PortNo>::new(self.cfg.max_hosts));
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_>) {
        let cfg = &self.cfg;
        // First pass: start loading every table slot the batch will use,
        // so their cache misses overlap (see `mac_table`).
        batch.for_each(|ev| {
            if let Some((dst, src)) = macs(ev.packet_in.data()) {
                if let Some(table) = ev.switch.local::<MacTable>() {
                    table.prefetch(&src);
                    table.prefetch(&dst);
                }
            }
            Flow::Continue
        });
        batch.for_each(|ev| {
            let Some((dst, src)) = macs(ev.packet_in.data()) else {
                return Flow::Continue;
            };
            let in_port = ev.packet_in.in_port();
            let table = ev
                .switch
                .local_or_insert_with(|| MacTable::<PortNo>::new(cfg.max_hosts));
            if !src.is_multicast() {
                table.insert(&src, in_port);
            }
            let out = if dst.is_multicast() {
                None
            } else {
                table.get(&dst)
            };
            respond(&mut ev.switch, &ev.packet_in, out, cfg);
            Flow::Continue
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
#[derive(Debug)]
pub struct GlobalLearningSwitch {
    cfg: LearningConfig,
    shards: Box<[RwLock<HostShard>]>,
}

impl GlobalLearningSwitch {
    /// An empty table with these settings.
    pub fn new(cfg: LearningConfig) -> GlobalLearningSwitch {
        GlobalLearningSwitch {
            cfg,
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
    fn name(&self) -> &str {
        "global-learning-switch"
    }

    fn switch_down(&self, sw: &SwitchInfo) {
        for shard in self.shards.iter() {
            let mut s = shard.write().unwrap_or_else(|e| e.into_inner());
            s.retain(|(dpid, _)| *dpid != sw.dpid);
        }
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_>) {
        let cfg = &self.cfg;
        batch.for_each(|ev| {
            let Some((dst, src)) = macs(ev.packet_in.data()) else {
                return Flow::Continue;
            };
            let here = ev.switch.dpid();
            let in_port = ev.packet_in.in_port();
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
            respond(&mut ev.switch, &ev.packet_in, out, cfg);
            Flow::Continue
        });
    }
}
