//! `devices`: where each host is (Beacon §3.3's Device Manager), published
//! as the [`Hosts`] view.
//!
//! A host is learnt from the packet-ins it causes, by its source Ethernet
//! address, with the VLAN and the IPv4 and IPv6 addresses it uses (ARP
//! sender, IPv4 source, IPv6 source), and its attachment point: the switch
//! port the frame arrived on, but only on an *edge* port of the current
//! topology (never a port with a link, nor one still settling), so a frame
//! that crossed a link never teaches a wrong location. A host seen on
//! another edge port has moved; hosts on a port that turns out to carry a
//! link are forgotten at once.
//!
//! A host not seen for `host_timeout` is asked whether it is still there
//! (an ARP probe from [`PROBE_MAC`], out of its port) and forgotten if it
//! does not answer by the next walk (`Inner::age`): once routing's
//! flows carry its traffic, a host that talks all day may never reach the
//! controller again, and forgetting it would delete those flows.
//!
//! A host whose switch disconnected, or whose port went down, is *away*:
//! it stays listed for `away_grace`, so a switch that reconnects (Open
//! vSwitch retries within seconds, and keeps its flows meanwhile) or a
//! port that flaps does not make the hosts behind it vanish while they
//! talk over the flows they already have. One still away after the grace
//! is forgotten (within a second), and `routing` then deletes the
//! flows to and from it, so its next packets teach where it is.
//!
//! In a cluster, each member learns the hosts attached to the switches it
//! masters, and the [`Peers`] view brings the others': the published
//! [`Hosts`] is the merge of both. A host two members place at different
//! ports is where it was seen last ([`Host::at_since_ms`]): a member whose
//! own sighting is older forgets it (the host moved to another member's
//! switch). Through a handover nothing is forgotten: the member that had
//! the switch keeps its hosts until the new master has them (their
//! facts stay, `Served::HandedOver`), and the new master takes the hosts
//! the others' facts place on a switch it comes to master as its own,
//! without their packets coming to the controller (routing's flows stay
//! on the switch).
//!
//! The hosts live in one table ([`HostTable`], the view's docs say why),
//! changed in place: a packet from a host known as seen costs a look-up
//! and a store of its last-seen time, and a batch of packet-ins that
//! taught anything publishes one new version of the [`Hosts`] for all it
//! taught.

use crate::mac_table::{HostBudget, MacTable, PREFETCH_AHEAD, Zeroable};
use crate::settings::{AppSettings, Settings};
use crate::sync::lock;
use crate::views::{
    Batch, Host, HostTable, Hosts, PROBE_MAC, Peers, PortRef, Seen, Sender, Served, Silent,
    SwitchPorts, Topology,
};
use baton_openflow::DatapathId;
use baton_openflow::packet::{ArpRepr, Network as L3, Transport};
use baton_openflow::{MacAddr, PortNo};
use baton_runtime::env::{Change, Publish, Snapshot, ViewAccess};
use baton_runtime::{App, Events, Network, PacketInBatch, SwitchCtx, SwitchId};
use baton_runtime::{Configurable, SettingsError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The settings of host tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevicesConfig {
    /// A host not seen for this long is forgotten (asked first, with
    /// `probe_silent`, and forgotten a refresh later if it did not answer).
    #[serde(rename = "host_timeout_ms", with = "crate::settings::millis")]
    pub host_timeout: Duration,
    /// Whether a silent host with an IPv4 address, on a switch this
    /// instance serves, is asked whether it is still there (an ARP probe)
    /// before it is forgotten.
    pub probe_silent: bool,
    /// How often hosts are aged (a change applies when the application
    /// next starts).
    #[serde(rename = "refresh_ms", with = "crate::settings::millis")]
    pub refresh: Duration,
    /// How long a host whose switch or port is away (disconnected, down,
    /// not yet described again) stays listed: longer than a switch takes
    /// to reconnect (Open vSwitch backs off up to 8 s by default). Checked
    /// every [`AWAY_CHECK`].
    #[serde(rename = "away_grace_ms", with = "crate::settings::millis")]
    pub away_grace: Duration,
    /// The most hosts it tracks: while that many are known, a new one is
    /// not learnt (its packets are still answered: `routing` floods
    /// towards an unknown host) until others age out or go. A bound on
    /// memory under a MAC flood, which would otherwise grow for
    /// `host_timeout` at whatever rate the flood brings new addresses.
    pub max_hosts: usize,
}

/// How often hosts away for longer than the grace are looked for.
pub const AWAY_CHECK: Duration = Duration::from_secs(1);

/// Most silent hosts asked per second of `refresh`, at each walk
/// ([`Inner::age`]); the others wait for a later walk. When a MAC flood's
/// million addresses fall silent together, they are asked (and age out)
/// over 100 s rather than in a million PACKET_OUTs at once.
const PROBES_PER_SECOND: u64 = 10_000;

/// Most aged hosts taken out of the table per commit: each commit is a
/// version of the hosts, and routing's DAG follows the versions' changes
/// as they come, rather than half a million at once when a MAC flood ages
/// out (BENCHMARKS.md, the soak's aging minute).
const AGING_CHUNK: usize = 8192;

impl Default for DevicesConfig {
    fn default() -> Self {
        DevicesConfig {
            host_timeout: Duration::from_secs(300),
            probe_silent: true,
            refresh: Duration::from_secs(10),
            away_grace: Duration::from_secs(10),
            max_hosts: 1 << 20,
        }
    }
}

crate::counters::named_counters! {
    /// What host tracking has done.
    pub struct DevicesCounters, live Counters {
        /// Hosts learnt.
        learnt,
        /// Hosts seen on a new attachment point.
        moved,
        /// Silent hosts asked whether they are still there (ARP probes
        /// sent).
        probed,
        /// Hosts forgotten for silence.
        aged,
        /// Hosts forgotten because their port became a link port, or stayed
        /// away (switch gone, port down) longer than the grace.
        dropped,
        /// New hosts not learnt because `max_hosts` were known.
        refused,
    }
}

impl AppSettings for DevicesConfig {
    fn check(&self) -> Result<(), SettingsError> {
        if self.refresh.is_zero() {
            return Err(SettingsError::invalid("refresh_ms", "must be at least 1"));
        }
        if self.max_hosts == 0 {
            return Err(SettingsError::invalid("max_hosts", "must be at least 1"));
        }
        if self.host_timeout < self.refresh {
            return Err(SettingsError::invalid(
                "host_timeout_ms",
                "must be at least the refresh period",
            ));
        }
        Ok(())
    }
}

/// The sightings each switch's cache ([`SwitchDevices`]) may hold, all
/// switches together: 16 bytes a slot, at most half of them full, so at
/// most 512 MiB (2^24 hosts, the learning switch's `max_hosts_total`); a
/// switch's cache that would grow past it is cleared and refilled from
/// the table.
const CACHED_SIGHTINGS: usize = 1 << 24;

/// What a switch's cache holds of one source address, in 8 bytes: the
/// port and (a digest of) the address the table has it with, or that the
/// table refused it, as of the table epoch ([`HostTable::epoch`]), and
/// when its last-seen time last reached the table. Slots of 32 bytes
/// doubled the memory the kernel zeroes as the caches grow, which took
/// half of the worker while 64 switches' caches filled under cbench
/// (perf); so it is lossy where a wrong "seen so" costs at most a push
/// period (half the aging period, after which the host is told to the
/// table again): a 16-bit digest of the address, the epoch's low 15
/// bits, the seconds' low 16 bits, and not the VLAN.
///
/// Bits: 0-15 the port, 16-31 the address digest, 32-46 the epoch, 47
/// refused, 48-63 the seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cached(u64);

impl Cached {
    fn new(port: u16, digest: u16, epoch: u64, refused: bool, seconds: u32) -> Cached {
        let epoch = (epoch & 0x7fff) << 32;
        let refused = u64::from(refused) << 47;
        let seconds = u64::from(seconds as u16) << 48;
        Cached(u64::from(port) | u64::from(digest) << 16 | epoch | refused | seconds)
    }

    fn port(self) -> u16 {
        self.0 as u16
    }

    fn digest(self) -> u16 {
        (self.0 >> 16) as u16
    }

    fn epoch_matches(self, epoch: u64) -> bool {
        (self.0 >> 32) & 0x7fff == epoch & 0x7fff
    }

    fn refused(self) -> bool {
        self.0 & (1 << 47) != 0
    }

    /// Whether fewer than `period` seconds passed since `seconds`.
    fn pushed_within(self, now: u32, period: u32) -> bool {
        (now as u16).wrapping_sub((self.0 >> 48) as u16) < period.min(u32::from(u16::MAX)) as u16
    }

    /// A digest of the address a packet names (0: none).
    fn digest_of(s: &Sender) -> u16 {
        let x = match (s.ipv4, s.ipv6) {
            (Some(ip), _) => u64::from(u32::from(ip)),
            (None, Some(ip)) => {
                let n = u128::from(ip);
                (n as u64) ^ (n >> 64) as u64
            }
            (None, None) => return 0,
        };
        ((x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as u16).max(1)
    }
}

// SAFETY: an integer inside, so all zeroes is a valid (empty) value.
#[allow(unsafe_code)]
unsafe impl Zeroable for Cached {}

/// What `devices` keeps per switch: its ports as the topology has them,
/// and a cache of the senders seen on it (McNettle §4's switch-local
/// state: no lock). A packet from a host the cache has as seen, at the
/// table epoch of the batch, costs a look-up in it, prefetched ahead as
/// the learning switch's, and no look-up in the shared table: at cbench's
/// 100,000 hosts per switch the table's look-ups missed the caches twice
/// each and took two thirds of the worker (BENCHMARKS.md). Every host
/// that moves or goes, or a host table that gains room, moves the epoch,
/// and each cached sighting is checked against the table again at its
/// host's next packet.
pub struct SwitchDevices {
    ports: SwitchPorts,
    seen: MacTable<Cached>,
    /// The batch's senders its cache could not answer for (kept for its
    /// memory).
    unsure: Vec<(Sender, PortNo)>,
}

/// What only the timers and view changes touch, under one lock the
/// packet-in path never takes (but for a host that comes back from away).
#[derive(Default)]
struct State {
    /// Since when each away host's switch or port has not been live.
    away: HashMap<MacAddr, Instant>,
    /// The other members' facts, in a cluster, as last merged.
    peers: Option<Arc<Peers>>,
    /// The topology last followed ([`Inner::follow_topology`]).
    followed: Option<Arc<Topology>>,
    /// Hosts of switches handed over to another member that no other
    /// member has yet, and since when: kept as they are until one does
    /// (then replaced in place) or for [`crate::topology::HANDOVER_MAX`],
    /// so that routing never sees them gone on the way.
    handing_over: HashMap<MacAddr, Instant>,
    /// The silent hosts asked at the last walk, and when each had last
    /// been seen then ([`Inner::age`]).
    probed: HashMap<MacAddr, Instant>,
}

/// The host tracking application.
pub struct DevicesApp {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings<DevicesConfig>,
    table: HostTable,
    /// What the switches' caches hold together ([`CACHED_SIGHTINGS`]).
    cached: Arc<HostBudget>,
    state: Mutex<State>,
    /// Hosts in `state.away` (read without the lock by the packet-in path).
    away: AtomicUsize,
    /// Whether the log has said that `max_hosts` are known (said once each
    /// time the table fills).
    full: AtomicBool,
    counters: Counters,
    net: OnceLock<Network>,
}

impl DevicesApp {
    /// Host tracking with these settings.
    pub fn new(cfg: DevicesConfig) -> DevicesApp {
        DevicesApp {
            inner: Arc::new(Inner {
                settings: Settings::new(cfg),
                table: HostTable::new(),
                cached: HostBudget::for_hosts(CACHED_SIGHTINGS),
                state: Mutex::new(State::default()),
                away: AtomicUsize::new(0),
                full: AtomicBool::new(false),
                counters: Counters::default(),
                net: OnceLock::new(),
            }),
        }
    }

    /// What it has done so far.
    pub fn counters(&self) -> DevicesCounters {
        self.inner.counters.snapshot()
    }
}

impl Inner {
    /// Numbers `batch`'s changes and publishes the new version of the
    /// hosts.
    fn commit(&self, batch: &mut Batch) {
        self.table.commit(batch, |hosts| {
            if let Some(net) = self.net.get()
                && let Err(e) = net.publish(Publish::new().view(hosts))
            {
                tracing::error!(error = %e, "cannot publish the hosts");
            }
        });
    }

    /// The newest sighting any other member has of `mac`, with its name.
    fn theirs(peers: Option<&Peers>, mac: &MacAddr) -> Option<(Arc<str>, Arc<Host>)> {
        peers?
            .members
            .iter()
            .filter_map(|(node, facts)| Some((node.clone(), facts.hosts.get(mac)?.clone())))
            .max_by_key(|(_, h)| h.at_since_ms)
    }

    /// The peers' facts changed: their hosts join the table where no
    /// later sighting of this instance's (or of another peer's) says
    /// otherwise, and those they no longer have leave it, unless their
    /// switch is this instance's now in `topo` (a handover: it keeps them
    /// as its own). A host of this instance's that a peer saw at another
    /// port since has moved there.
    fn follow_peers(&self, peers: &Arc<Peers>, topo: Option<&Topology>) {
        let mut state = lock(&self.state);
        if state.peers.as_ref().is_some_and(|p| Arc::ptr_eq(p, peers)) {
            return;
        }
        let before = state.peers.replace(peers.clone());
        let mut batch = Batch::default();
        for (node, facts) in before.iter().flat_map(|p| p.members.iter()) {
            let still = peers.members.get(node);
            for mac in facts.hosts.keys() {
                if still.is_some_and(|f| f.hosts.contains_key(mac)) {
                    continue;
                }
                // Another member has it now (a handover): replaced below,
                // never forgotten meanwhile.
                if Inner::theirs(Some(peers), mac).is_some() {
                    continue;
                }
                if let Some((h, Some(peer))) = self.table.get(mac)
                    && peer == *node
                {
                    let ours = topo
                        .and_then(|t| t.switches.get(&h.at.dpid))
                        .is_some_and(|s| s.here().is_some());
                    if ours {
                        self.table.put(h, None, &mut batch);
                    } else {
                        self.table.remove(mac, &mut batch);
                    }
                }
            }
        }
        for (node, facts) in &peers.members {
            for (mac, theirs) in &facts.hosts {
                match self.table.get(mac) {
                    Some((now, peer)) if now == **theirs && peer.as_ref() == Some(node) => continue,
                    Some((now, _)) if now.at_since_ms >= theirs.at_since_ms => continue,
                    Some((mine, None)) if mine.at != theirs.at => {
                        self.counters.moved.fetch_add(1, Ordering::Relaxed);
                        tracing::info!(%mac, from = %mine.at, to = %theirs.at, "host moved to another member's switch");
                        if state.away.remove(mac).is_some() {
                            self.away.fetch_sub(1, Ordering::Relaxed);
                        }
                    }
                    _ => {}
                }
                self.table
                    .put(Host::clone(theirs), Some(node.clone()), &mut batch);
            }
        }
        state
            .handing_over
            .retain(|mac, _| match Inner::theirs(Some(peers), mac) {
                Some((node, theirs)) => {
                    self.table.put(Host::clone(&theirs), Some(node), &mut batch);
                    false
                }
                None => true,
            });
        drop(state);
        self.commit(&mut batch);
    }

    /// `sender` was seen at `at`, and the switch's cache could not say it
    /// is known so: tells the table ([`HostTable::see`]), which learns it,
    /// or what changed about it, unless it is new and `max_hosts` are
    /// known; false if it was refused.
    fn learn(
        &self,
        sender: &Sender,
        at: PortRef,
        clocks: (Instant, u64),
        batch: &mut Batch,
    ) -> bool {
        let max_hosts = self.settings.get().max_hosts;
        let seen = self.table.see(sender, at, clocks, max_hosts, batch);
        let mac = sender.mac;
        match seen {
            Seen::Refused => {
                self.counters.refused.fetch_add(1, Ordering::Relaxed);
                if !self.full.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        max_hosts,
                        %mac,
                        "host table full: new hosts are not learnt until others age out or go"
                    );
                }
                return false;
            }
            Seen::Learnt => {
                self.counters.learnt.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(%mac, %at, "host learnt");
            }
            Seen::Moved(from) => {
                self.counters.moved.fetch_add(1, Ordering::Relaxed);
                tracing::info!(%mac, %from, to = %at, "host moved");
            }
            Seen::Same | Seen::Updated => {}
        }
        // Seen on a live edge port: not away, wherever it was before.
        if self.away.load(Ordering::Relaxed) > 0 && lock(&self.state).away.remove(&mac).is_some() {
            self.away.fetch_sub(1, Ordering::Relaxed);
        }
        if self.table.own_len() < max_hosts {
            self.full.store(false, Ordering::Relaxed);
        }
        true
    }

    /// The senders of one switch's packet-ins (`events`, in order), which
    /// came in on `ports` of switch `dpid` (`cache`, its sightings); what
    /// they taught goes into `batch`. The cache's slots of the packet-in
    /// [`PREFETCH_AHEAD`] ahead are loaded while one is looked at; the
    /// senders the cache cannot answer for are then told to the table, its
    /// index slots loaded [`PREFETCH_AHEAD`] ahead in the same way (while
    /// a MAC flood fills the table, nearly every sender is one).
    fn learn_senders(
        &self,
        dpid: DatapathId,
        state: &mut SwitchDevices,
        events: &Events<'_>,
        (now, full): (Instant, bool),
        batch: &mut Batch,
    ) {
        let epoch = self.table.epoch();
        let now_s = self.table.seconds(now);
        let push_s = (self.settings.get().refresh.as_secs() / 2).max(1) as u32;
        let SwitchDevices {
            ports,
            seen: cache,
            unsure,
        } = state;
        let mut ahead = events.iter();
        let prefetch = |cache: &MacTable<Cached>, pi: &baton_runtime::PacketIn<'_>| {
            if let Some(src) = pi.eth_src() {
                cache.prefetch(&src);
            }
        };
        for pi in ahead.by_ref().take(PREFETCH_AHEAD) {
            prefetch(cache, &pi);
        }
        unsure.clear();
        for pi in events.iter() {
            if let Some(next) = ahead.next() {
                prefetch(cache, &next);
            }
            let port = pi.in_port();
            if !ports.is_edge(port) {
                continue;
            }
            let Some(s) = seen(&pi) else {
                continue;
            };
            if let Some(c) = cache.get(&s.mac)
                && c.epoch_matches(epoch)
            {
                let digest = Cached::digest_of(&s);
                let fresh = match c.refused() {
                    false => {
                        u32::from(c.port()) == port.0
                            && (digest == 0 || c.digest() == digest)
                            && c.pushed_within(now_s, push_s)
                    }
                    true => full,
                };
                if fresh {
                    continue;
                }
            }
            unsure.push((s, port));
        }
        if unsure.is_empty() {
            return;
        }
        let wall = wall_ms();
        for (s, _) in unsure.iter().take(PREFETCH_AHEAD) {
            self.table.prefetch(&s.mac);
        }
        for i in 0..unsure.len() {
            if let Some((next, _)) = unsure.get(i + PREFETCH_AHEAD) {
                self.table.prefetch(&next.mac);
            }
            let (s, port) = unsure[i];
            let refused = !self.learn(&s, PortRef::new(dpid, port), (now, wall), batch);
            // A port beyond 16 bits is not cached: its host goes to the
            // table at each packet.
            if let Ok(port) = u16::try_from(port.0) {
                let digest = Cached::digest_of(&s);
                cache.insert(&s.mac, Cached::new(port, digest, epoch, refused, now_s));
            }
        }
    }

    /// Follows a new topology: hosts on ports that carry a link are
    /// forgotten; hosts whose switch or port is not live are away (since
    /// `now`), and come back from away when it is live again. Only the
    /// hosts on switches that changed since the topology followed last
    /// are looked at ([`Topology::switches_changed_since`]): under a MAC
    /// flood each first host on a port is a new topology, and walking a
    /// million hosts at each took a seventh of the worker; at the end of a
    /// 10,000-switch soak, a walk per switch that left kept the controller
    /// busy for more than a quarter of an hour (BENCHMARKS.md).
    fn follow_topology(&self, topo: &Arc<Topology>, now: Instant) {
        let mut state = lock(&self.state);
        let last = state.followed.replace(topo.clone());
        let concerned: Vec<MacAddr> = match last {
            None => self
                .table
                .entries()
                .into_iter()
                .map(|(h, _)| h.mac)
                .collect(),
            Some(last) => topo
                .switches_changed_since(&last)
                .into_iter()
                .flat_map(|dpid| self.table.on_switch(dpid))
                .collect(),
        };
        let mut linked = Vec::new();
        let mut handed_over = Vec::new();
        let mut adopted = Batch::default();
        for mac in concerned {
            let h = match self.table.get(&mac) {
                Some((h, None)) => h,
                Some((h, Some(_))) => {
                    // Another member's host on a switch this one masters
                    // now (a handover): this member's from now on, without
                    // its packets having to come to the controller.
                    let here = topo.switches.get(&h.at.dpid).and_then(|s| s.here());
                    if here.is_some() && !topo.is_link_port(h.at) {
                        self.table.put(h, None, &mut adopted);
                    }
                    continue;
                }
                None => continue,
            };
            if topo.is_link_port(h.at) {
                linked.push(h.mac);
                continue;
            }
            let switch = topo.switches.get(&h.at.dpid);
            if switch.is_some_and(|s| matches!(s.served, Served::Peer(_))) {
                handed_over.push(h.mac);
                continue;
            }
            // Its switch is this instance's (again).
            state.handing_over.remove(&h.mac);
            let live = switch
                .and_then(|s| s.ports.get(&h.at.port))
                .is_some_and(|p| p.is_live());
            if live {
                state.away.remove(&h.mac);
            } else {
                state.away.entry(h.mac).or_insert(now);
            }
        }
        self.away.store(state.away.len(), Ordering::Relaxed);
        let mut batch = adopted;
        self.forget(&mut state, &linked, "its port carries a link", &mut batch);
        // Those no other member has yet stay as they are until one does.
        let (theirs_now, nobodys): (Vec<MacAddr>, Vec<MacAddr>) = handed_over
            .into_iter()
            .partition(|mac| Inner::theirs(state.peers.as_deref(), mac).is_some());
        for mac in nobodys {
            state.handing_over.entry(mac).or_insert(now);
        }
        self.forget(
            &mut state,
            &theirs_now,
            "another member masters its switch now",
            &mut batch,
        );
        drop(state);
        self.commit(&mut batch);
    }

    /// Forgets this instance's hosts `macs`, saying why ([`log_hosts`]);
    /// where another member has one of them, its sighting takes its place.
    fn forget(&self, state: &mut State, macs: &[MacAddr], why: &str, batch: &mut Batch) {
        if macs.is_empty() {
            return;
        }
        for mac in macs {
            state.away.remove(mac);
            // Replaced in place where another member has it (a host that
            // is never missing from the table is never gone for routing).
            match Inner::theirs(state.peers.as_deref(), mac) {
                Some((node, theirs)) => {
                    self.table.put(Host::clone(&theirs), Some(node), batch);
                }
                None => {
                    self.table.remove(mac, batch);
                }
            }
        }
        self.away.store(state.away.len(), Ordering::Relaxed);
        self.counters
            .dropped
            .fetch_add(macs.len() as u64, Ordering::Relaxed);
        log_hosts(macs, &format!("forgotten: {why}"));
    }

    /// Forgets the hosts that have been away for longer than the grace.
    fn expire_away(&self, now: Instant) {
        let mut state = lock(&self.state);
        let grace = self.settings.get().away_grace;
        let gone: Vec<MacAddr> = state
            .away
            .iter()
            .filter(|&(_, &since)| now.saturating_duration_since(since) >= grace)
            .map(|(&mac, _)| mac)
            .collect();
        let mut batch = Batch::default();
        self.forget(
            &mut state,
            &gone,
            "its switch or port has been away longer than the grace",
            &mut batch,
        );
        let unclaimed: Vec<MacAddr> = state
            .handing_over
            .iter()
            .filter(|&(_, &since)| {
                now.saturating_duration_since(since) >= crate::topology::HANDOVER_MAX
            })
            .map(|(&mac, _)| mac)
            .collect();
        for mac in &unclaimed {
            state.handing_over.remove(mac);
        }
        self.forget(
            &mut state,
            &unclaimed,
            "its switch was handed over and no member has it",
            &mut batch,
        );
        drop(state);
        self.commit(&mut batch);
    }

    /// Ages out the hosts not seen for `host_timeout`. A silent host with
    /// an IPv4 address on a switch this instance serves is asked first
    /// (`probe_silent`, [`probe_frame`]) and forgotten at the next walk if
    /// it has not been seen since; at most [`PROBES_PER_SECOND`] a second
    /// of `refresh` are asked per walk, and the others wait. A host
    /// without IPv4, or whose switch is not served here, goes at once.
    /// Before the probes, a host whose packets all went over routing's
    /// flows aged out under its traffic, its flows were deleted and its
    /// packets flooded (BENCHMARKS.md, the soak). Removals go
    /// [`AGING_CHUNK`] to a version; a host seen again between the walk
    /// and its removal stays ([`HostTable::remove_silent`]).
    fn age(&self, now: Instant) {
        let cfg = **self.settings.get();
        let timeout = cfg.host_timeout;
        let silent = self.table.silent(now, timeout);
        let asked_before = std::mem::take(&mut lock(&self.state).probed);
        let net = self.net.get();
        let topo = net.and_then(|n| n.view::<Topology>());
        let serving =
            |s: &Silent| -> Option<SwitchId> { topo.as_ref()?.switches.get(&s.at.dpid)?.here() };
        let mut budget = match cfg.probe_silent {
            true => PROBES_PER_SECOND * cfg.refresh.as_secs().max(1),
            false => 0,
        };
        let mut asked = HashMap::new();
        let mut probes: HashMap<SwitchId, Vec<(PortNo, Vec<u8>)>> = HashMap::new();
        let mut gone: Vec<(MacAddr, Duration)> = Vec::with_capacity(silent.len());
        for s in &silent {
            if let Some(&seen) = asked_before.get(&s.mac) {
                // Asked at the last walk: gone unless seen since, however
                // soon after (its answer may reach the table within the
                // millisecond of the probe, on another thread's clock).
                gone.push((s.mac, now.saturating_duration_since(seen)));
                continue;
            }
            match (cfg.probe_silent, s.ipv4, serving(s)) {
                (true, Some(ip), Some(id)) => {
                    if budget == 0 {
                        continue;
                    }
                    budget -= 1;
                    probes
                        .entry(id)
                        .or_default()
                        .push((s.at.port, probe_frame(s, ip)));
                    asked.insert(s.mac, s.last_seen);
                }
                _ => gone.push((s.mac, timeout)),
            }
        }
        lock(&self.state).probed = asked;
        if let Some(net) = net {
            self.send_probes(net, &probes);
        }
        let mut aged = Vec::with_capacity(gone.len());
        for chunk in gone.chunks(AGING_CHUNK) {
            let mut batch = Batch::default();
            for &(mac, silent_for) in chunk {
                if self.table.remove_silent(&mac, now, silent_for, &mut batch) {
                    aged.push(mac);
                }
            }
            self.commit(&mut batch);
        }
        if !aged.is_empty() {
            let mut state = lock(&self.state);
            for mac in &aged {
                state.away.remove(mac);
            }
            self.away.store(state.away.len(), Ordering::Relaxed);
        }
        self.counters
            .aged
            .fetch_add(aged.len() as u64, Ordering::Relaxed);
        log_hosts(&aged, "aged out");
    }

    /// Sends each switch's probes in one write.
    fn send_probes(&self, net: &Network, probes: &HashMap<SwitchId, Vec<(PortNo, Vec<u8>)>>) {
        let sent: usize = probes
            .iter()
            .filter(|(id, frames)| net.frames_out(**id, frames).is_ok())
            .map(|(_, frames)| frames.len())
            .sum();
        self.counters
            .probed
            .fetch_add(sent as u64, Ordering::Relaxed);
    }
}

/// The probe that asks silent host `s` whether it still has `ip`: an ARP
/// request from [`PROBE_MAC`] with sender address 0.0.0.0 (RFC 5227
/// §2.1.1's ARP probe, which a host answers and learns nothing from),
/// sent to the host's own address rather than broadcast (RFC 1122
/// §2.3.2.1's unicast poll), tagged with its VLAN if it had one.
fn probe_frame(s: &Silent, ip: Ipv4Addr) -> Vec<u8> {
    let arp = ArpRepr::request(PROBE_MAC, Ipv4Addr::UNSPECIFIED, ip);
    let mut frame = Vec::with_capacity(arp.frame_len() + 4);
    arp.emit_frame(&mut frame);
    frame[..6].copy_from_slice(&s.mac.0);
    if let Some(vid) = s.vlan {
        let tci = (vid & 0x0fff).to_be_bytes();
        frame.splice(12..12, [0x81, 0x00, tci[0], tci[1]]);
    }
    frame
}

/// Says in the log that `macs` were `what`: one line naming the host when
/// it is one, one line counting them when they are many (with each host
/// at debug level), so that a network losing a million hosts at once
/// (a MAC flood aging out, a switch with all its hosts leaving) writes one
/// line rather than a million.
fn log_hosts(macs: &[MacAddr], what: &str) {
    match macs {
        [] => {}
        [mac] => tracing::info!(%mac, "host {what}"),
        [first, ..] => {
            tracing::info!(hosts = macs.len(), %first, "hosts {what}");
            for mac in macs {
                tracing::debug!(%mac, "host {what}");
            }
        }
    }
}

/// Now, in milliseconds since the Unix epoch ([`Host::at_since_ms`]).
fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The sender facts of a frame, if its source is a host address.
///
/// Ethernet II frames of ARP and IPv4, tagged once or not, are read in
/// place (most of what reaches a controller); anything else through the
/// whole [`baton_openflow::packet::FlowKey`], which costs about 150
/// instructions more (BENCHMARKS.md).
fn seen(pi: &baton_openflow::neutral::PacketIn<'_>) -> Option<Sender> {
    let mac = pi.eth_src()?;
    if mac.is_multicast() || mac == MacAddr([0; 6]) || mac == PROBE_MAC {
        return None;
    }
    let usable4 = |ip: Ipv4Addr| !(ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast());
    let frame = pi.data();
    let ty = |at: usize| Some(u16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?));
    let (vlan, l3, eth_type) = match ty(12)? {
        0x8100 | 0x88a8 => {
            let tci = ty(14)?;
            (Some(tci & 0x0fff), 18, ty(16)?)
        }
        t => (None, 14, t),
    };
    let ip4 = |at: usize| -> Option<Ipv4Addr> {
        let b: [u8; 4] = frame.get(l3 + at..l3 + at + 4)?.try_into().ok()?;
        Some(Ipv4Addr::from(b)).filter(|&ip| usable4(ip))
    };
    match eth_type {
        // IPv4 with its version right and a whole header.
        0x0800
            if frame.get(l3).is_some_and(|b| b >> 4 == 4 && b & 0xf >= 5)
                && frame.len() >= l3 + 20 =>
        {
            return Some(Sender {
                mac,
                vlan,
                ipv4: ip4(12),
                ipv6: None,
            });
        }
        // ARP for IPv4 over Ethernet, the sender's address at 14.
        0x0806 if frame.get(l3 + 4..l3 + 6) == Some(&[6, 4]) && frame.len() >= l3 + 28 => {
            return Some(Sender {
                mac,
                vlan,
                ipv4: ip4(14),
                ipv6: None,
            });
        }
        _ => {}
    }
    let key = pi.key();
    let usable6 = |ip: Ipv6Addr| !(ip.is_unspecified() || ip.is_multicast());
    let (ipv4, ipv6) = match &key.network {
        L3::Arp(a) => (Some(a.spa).filter(|&ip| usable4(ip)), None),
        L3::Ipv4(ip) => (Some(ip.src).filter(|&ip| usable4(ip)), None),
        L3::Ipv6(ip) => {
            let src = Some(ip.src).filter(|&ip| usable6(ip));
            // A neighbour advertisement names its sender's address.
            let nd = match ip.transport {
                Transport::Icmpv6 {
                    icmp_type: 136,
                    nd: Some(nd),
                    ..
                } => Some(nd.target).filter(|&ip| usable6(ip)),
                _ => None,
            };
            (None, src.or(nd))
        }
        L3::Other => (None, None),
    };
    Some(Sender {
        mac,
        vlan: key.vlan.map(|v| v.vid),
        ipv4,
        ipv6,
    })
}

impl App for DevicesApp {
    /// The switch's ports and the senders seen on it.
    type Switch = SwitchDevices;

    fn name(&self) -> &str {
        "devices"
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters().named()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        Some(&self.inner.settings)
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<Topology>()
            .reads::<Peers>()
            .writes::<Hosts>()
    }

    fn start(&self, net: &Network) {
        let _ = self.inner.net.set(net.clone());
        let inner = self.inner.clone();
        net.every("devices", self.inner.settings.get().refresh, move |net| {
            inner.age(net.now())
        });
        let inner = self.inner.clone();
        net.every("devices-away", AWAY_CHECK, move |net| {
            inner.expire_away(net.now())
        });
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) -> SwitchDevices {
        let max_hosts = self.inner.settings.get().max_hosts;
        SwitchDevices {
            ports: SwitchPorts::default(),
            seen: MacTable::with_budget(max_hosts, &self.inner.cached),
            unsure: Vec::new(),
        }
    }

    fn view_changed(&self, net: &Network, snapshot: &Snapshot, _changes: &[Change]) {
        if let Some(p) = snapshot.get::<Peers>() {
            let topo = snapshot.get::<Topology>();
            self.inner.follow_peers(p.arc(), topo.as_deref());
        }
        if let Some(t) = snapshot.get::<Topology>() {
            self.inner.follow_topology(t.arc(), net.now());
        }
    }

    /// Learns the senders of the batch's packets that came in on edge
    /// ports, and publishes one version of the hosts for all that it
    /// learnt ([`Hosts`]' docs). A sender the switch's cache has as seen
    /// costs a look-up there ([`SwitchDevices`]).
    fn packet_in(&self, batch: &mut PacketInBatch<'_, SwitchDevices>) {
        let inner = &self.inner;
        let Some(net) = inner.net.get() else {
            return;
        };
        let Some(topo) = net.view::<Topology>() else {
            return;
        };
        let now = net.now();
        let full = inner.table.own_len() >= inner.settings.get().max_hosts;
        let mut changes = Batch::default();
        batch.for_each_switch(|sw, state, events| {
            let dpid = sw.dpid();
            state.ports.follow(&topo, dpid);
            inner.learn_senders(dpid, state, events, (now, full), &mut changes);
        });
        inner.commit(&mut changes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::{DatapathId, PortNo};

    fn sighting(app: &DevicesApp, last: u8, now: Instant) {
        let sender = Sender {
            mac: MacAddr([2, 0, 0, 0, 0, last]),
            vlan: None,
            ipv4: Some(Ipv4Addr::new(10, 0, 0, last)),
            ipv6: None,
        };
        let at = PortRef::new(DatapathId(1), PortNo(u32::from(last)));
        let inner = &app.inner;
        let mut batch = Batch::default();
        assert!(inner.learn(&sender, at, (now, 0), &mut batch));
        inner.commit(&mut batch);
    }

    /// A host seen again between the walk that found it silent and its
    /// removal stays; the others go.
    #[test]
    fn a_host_seen_again_while_it_ages_out_stays() {
        let app = DevicesApp::new(DevicesConfig::default());
        let timeout = DevicesConfig::default().host_timeout;
        let t0 = Instant::now();
        sighting(&app, 1, t0);
        sighting(&app, 2, t0);
        let later = t0 + timeout;
        let silent = app.inner.table.silent(later, timeout);
        assert_eq!(silent.len(), 2, "both silent");
        sighting(&app, 1, later);
        let mut batch = Batch::default();
        let removed: Vec<bool> = silent
            .iter()
            .map(|s| {
                app.inner
                    .table
                    .remove_silent(&s.mac, later, timeout, &mut batch)
            })
            .collect();
        app.inner.commit(&mut batch);
        assert_eq!(removed.iter().filter(|r| **r).count(), 1);
        let listed: Vec<_> = app
            .inner
            .table
            .view()
            .list()
            .iter()
            .map(|h| h.mac)
            .collect();
        assert_eq!(listed, vec![MacAddr([2, 0, 0, 0, 0, 1])]);
        assert_eq!(
            app.inner.table.view().by_ipv4(Ipv4Addr::new(10, 0, 0, 2)),
            None
        );
    }

    /// The in-place reading of a frame's sender agrees with the whole
    /// flow key's, tagged or not, ARP or IPv4.
    #[test]
    fn a_sender_is_read_in_place_as_the_flow_key_reads_it() {
        use baton_openflow::neutral::{self, PacketIn as Pi};
        let src = MacAddr([2, 0, 0, 0, 0, 7]);
        let mut frames: Vec<Vec<u8>> = Vec::new();
        let arp = baton_openflow::packet::ArpRepr::reply(
            src,
            Ipv4Addr::new(10, 0, 0, 7),
            MacAddr([2, 0, 0, 0, 0, 8]),
            Ipv4Addr::new(10, 0, 0, 8),
        );
        let mut f = Vec::new();
        arp.emit_frame(&mut f);
        frames.push(f.clone());
        // The same tagged: VLAN 5.
        let mut tagged = f[..12].to_vec();
        tagged.extend([0x81, 0x00, 0x00, 0x05]);
        tagged.extend(&f[12..]);
        frames.push(tagged);
        let mut ip = f[..12].to_vec();
        ip.extend([0x08, 0x00, 0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0]);
        ip.extend([10, 0, 0, 7, 10, 0, 0, 8]);
        frames.push(ip.clone());
        ip[26..30].copy_from_slice(&[0, 0, 0, 0]); // unspecified: not an address
        frames.push(ip);
        for frame in frames {
            let mut msg = Vec::new();
            neutral::encode_packet_in_no_match(
                &mut msg,
                baton_openflow::Version::V10,
                baton_openflow::Xid(1),
                baton_openflow::BufferId::NONE,
                PortNo(1),
                &frame,
            );
            let pi = Pi::parse(&msg).unwrap();
            let fast = seen(&pi).unwrap();
            let key = pi.key();
            let by_key = match &key.network {
                L3::Arp(a) => Some(a.spa),
                L3::Ipv4(ip) => Some(ip.src),
                _ => None,
            }
            .filter(|ip| !ip.is_unspecified());
            assert_eq!(fast.ipv4, by_key, "{frame:02x?}");
            assert_eq!(fast.vlan, key.vlan.map(|v| v.vid), "{frame:02x?}");
            assert_eq!(fast.mac, src);
        }
    }

    /// A probe is an ARP probe to the host alone, tagged as the host was.
    #[test]
    fn a_probe_asks_the_host_alone_on_its_vlan() {
        use baton_openflow::packet::FlowKey;
        let host = MacAddr([2, 0, 0, 0, 0, 9]);
        let ip = Ipv4Addr::new(10, 0, 0, 9);
        for vlan in [None, Some(5)] {
            let s = Silent {
                mac: host,
                at: PortRef::new(DatapathId(1), PortNo(3)),
                vlan,
                ipv4: Some(ip),
                last_seen: Instant::now(),
            };
            let frame = probe_frame(&s, ip);
            let key = FlowKey::extract(PortNo(3), &frame);
            assert_eq!((key.eth_dst, key.eth_src), (host, PROBE_MAC));
            assert_eq!(key.vlan.map(|v| v.vid), vlan);
            let L3::Arp(arp) = key.network else {
                panic!("not ARP: {key:?}");
            };
            assert_eq!(arp.op, baton_openflow::packet::consts::ARP_OP_REQUEST);
            assert_eq!(
                (arp.sha, arp.spa, arp.tpa),
                (PROBE_MAC, Ipv4Addr::UNSPECIFIED, ip)
            );
        }
    }

    #[test]
    fn a_cached_sighting_keeps_what_it_is_checked_by() {
        let c = Cached::new(7, 0xbeef, 0x1_8003, true, 70_000);
        assert_eq!((c.port(), c.digest(), c.refused()), (7, 0xbeef, true));
        assert!(c.epoch_matches(0x8003) && !c.epoch_matches(0x8004));
        assert!(c.pushed_within(70_004, 5) && !c.pushed_within(70_005, 5));
        assert!(!Cached::new(7, 1, 0, false, 0).refused());
        let sender = |ipv4: Option<[u8; 4]>| Sender {
            mac: MacAddr([2, 0, 0, 0, 0, 1]),
            vlan: None,
            ipv4: ipv4.map(Ipv4Addr::from),
            ipv6: None,
        };
        assert_eq!(Cached::digest_of(&sender(None)), 0, "no address");
        let a = Cached::digest_of(&sender(Some([10, 0, 0, 1])));
        assert_ne!(a, 0);
        assert_ne!(a, Cached::digest_of(&sender(Some([10, 0, 0, 2]))));
    }
}
