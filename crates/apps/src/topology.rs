//! `topology`: discovery of the links between switches (Maestro §3.1
//! Fig. 2's ProbingApp and DiscoveryApp; Beacon §3.3's Topology),
//! published as the [`Topology`] view.
//!
//! Every live port of every switch sends an authenticated LLDP probe
//! ([`crate::lldp`]) when it comes up and every probe interval after; a
//! probe that comes back as a PACKET_IN on another switch's port is a link
//! from the port that sent it to the port it arrived on. A link is aged out
//! when its probes stop, and removed at once when either port goes down or
//! either switch disconnects.
//!
//! Discovery is where a host can lie to the controller, so probes are
//! checked before a link is believed (the attacks of Floodlight issues
//! #828 and #829, and TopoGuard's link fabrication):
//! - a frame with a wrong authenticator, or one that is truncated or not
//!   baton's, is dropped and counted;
//! - a probe older than `max_probe_age`, or one seen before (its nonce),
//!   is a replay; a probe that comes back to the port that sent it was
//!   reflected; both are dropped and counted;
//! - a port where host traffic was seen (once it had settled, with no link
//!   on it) is a host port: probes arriving on it, or claiming to come from
//!   it, are dropped and counted until the port goes down and up again, so
//!   a host cannot make its port a link port by relaying probes;
//! - LLDP arriving on a port is rate-limited (a token bucket per port), so
//!   an LLDP flood from a host costs the controller a bounded amount of
//!   work and never starves other switches.
//!
//! A port that just came up is *settling* for `settle_time`: long enough
//! for the probes of both ends to arrive, so a link port is not taken for
//! an edge port (flooded to, learnt on) before discovery has looked.
//!
//! In a cluster, each member discovers what arrives on the switches it
//! masters, and the [`Peers`] view brings the rest: the other members'
//! switches and the links arriving on theirs. The published [`Topology`]
//! is the merge of both (the member's own facts win a conflict), so
//! routing on any member computes over the whole network. Probes are
//! signed with the cluster's key ([`Peers::probe_key`]) and carry
//! wall-clock times, so the member whose switch a probe arrives on
//! believes a probe another member sent. When mastership of a switch
//! moves, the member that had it keeps its facts (`Served::HandedOver`)
//! until the new master has published its own, which it takes from them
//! (ports, the links arriving on the switch, host ports): no member's
//! view loses a link on the way, so no flow across it is deleted.
//!
//! Why one file of about 650 lines: discovery, probing and aging act on
//! one locked state (links, settling ports, nonces) and read best
//! together; the LLDP format is apart (`lldp.rs`), and so are the tests.

use crate::lldp::{ETH_TYPE_LLDP, NoRandomness, Probe, ProbeKey, Rejected};
use crate::settings::{AppSettings, Settings};
use crate::sync::lock;
use crate::views::{Link, Peers, PortRef, PortSet, Served, SwitchNode, Topology};
use baton_openflow::neutral::{ActionSpec, PacketOut, Payload, PortDesc};
use baton_openflow::{DatapathId, PortNo};
use baton_runtime::env::{Change, Publish, Snapshot, ViewAccess};
use baton_runtime::{App, Network, PacketIn, PacketInBatch, SwitchCtx, SwitchInfo};
use baton_runtime::{Configurable, SettingsError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The settings of topology discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    /// How often every live port is probed.
    #[serde(rename = "probe_interval_ms", with = "crate::settings::millis")]
    pub probe_interval: Duration,
    /// A link whose probes stop for this long is removed.
    #[serde(rename = "link_timeout_ms", with = "crate::settings::millis")]
    pub link_timeout: Duration,
    /// A probe older than this is a replay. Probes cross a link in
    /// milliseconds (Open vSwitch: 0.4-2.6 ms, `shared/OVS-NOTES.md`).
    #[serde(rename = "max_probe_age_ms", with = "crate::settings::millis")]
    pub max_probe_age: Duration,
    /// How long a port that came up is neither edge nor link port.
    #[serde(rename = "settle_time_ms", with = "crate::settings::millis")]
    pub settle_time: Duration,
    /// LLDP frames a port may send the controller per second, sustained.
    pub lldp_per_second: u32,
    /// ... and in a burst.
    pub lldp_burst: u32,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            probe_interval: Duration::from_secs(5),
            link_timeout: Duration::from_secs(16),
            max_probe_age: Duration::from_secs(2),
            settle_time: Duration::from_millis(500),
            lldp_per_second: 20,
            lldp_burst: 40,
        }
    }
}

/// How often the topology timer looks at settling ports and probe times.
const TICK: Duration = Duration::from_millis(100);

crate::counters::named_counters! {
    /// What discovery has done, for operators and tests.
    pub struct TopologyCounters, live Counters {
        /// Probes sent.
        probes_sent,
        /// Authentic probes received.
        probes_received,
        /// Links learnt (including relearnt after removal).
        links_learnt,
        /// Links removed (port down, switch gone, aged out).
        links_removed,
        /// LLDP frames that do not parse.
        malformed,
        /// LLDP frames from other LLDP speakers.
        foreign,
        /// Probes with a wrong authenticator.
        bad_authenticator,
        /// Probes too old, or seen before.
        replayed,
        /// Probes that came back to the port that sent them.
        reflected,
        /// Probes on or from a host port.
        host_port,
        /// Probes from a switch or port that is not up.
        unknown_sender,
        /// LLDP frames over the per-port rate.
        rate_limited,
    }
}

impl AppSettings for TopologyConfig {
    fn check(&self) -> Result<(), SettingsError> {
        if self.probe_interval.is_zero() {
            return Err(SettingsError::invalid(
                "probe_interval_ms",
                "must be at least 1",
            ));
        }
        if self.link_timeout <= self.probe_interval {
            return Err(SettingsError::invalid(
                "link_timeout_ms",
                format!(
                    "must be longer than the probe interval ({} ms), or every link would age out between probes",
                    self.probe_interval.as_millis()
                ),
            ));
        }
        if self.lldp_per_second == 0 {
            return Err(SettingsError::invalid(
                "lldp_per_second",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// State shared by every switch's handler, behind one lock taken for
/// port and switch events, probes, and the timer; never for ordinary
/// packet-ins.
#[derive(Default)]
struct Shared {
    /// What this instance discovered: its switches and the links arriving
    /// on them (everything, standalone).
    topo: Topology,
    /// The other members' facts, in a cluster: the view as given, and as
    /// a topology of its own (switch nodes built once per version).
    peers: Option<(Arc<Peers>, Topology)>,
    /// `topo` merged with `peers`: what is published, and what a check
    /// about the whole network reads (a probe's sender, a link's far end).
    merged: Topology,
    /// When each link's latest probe arrived.
    link_seen: HashMap<Link, Instant>,
    /// When each settling port came up.
    ///
    /// This and the next two are ordered by port, so a switch's ports are
    /// together and its leaving costs its ports (`forget_switch`).
    settling_since: BTreeMap<PortRef, Instant>,
    /// When each live port came up (in a cluster: a port is not taken for
    /// a host port in its first probe interval, see `mark_host_port`).
    up_since: BTreeMap<PortRef, Instant>,
    /// When each port last lost a link (in a cluster: a port is not taken
    /// for a host port for a link timeout after, see `mark_host_port`).
    link_lost: BTreeMap<PortRef, Instant>,
    /// The nonce of the latest probe accepted from each port.
    last_nonce: HashMap<PortRef, u64>,
    next_nonce: u64,
    last_probe_round: Option<Instant>,
    /// Links learnt here whose far end has not been heard from the other
    /// way yet: probed back at every tick until it is. Kept as they are
    /// learnt, so a tick costs them, not a scan of every link (40,000 on
    /// a 10,000-switch torus, ten times a second).
    one_way: BTreeSet<Link>,
    /// In a cluster, the switches handed over to another member, and
    /// when: their facts stay until the new master publishes the switch
    /// and the links arriving on it (it takes them from these facts when
    /// it becomes master), or [`HANDOVER_MAX`] passed.
    handed_over: BTreeMap<DatapathId, Instant>,
}

/// The most a handed-over switch's facts stay: a new master that has not
/// published its own by then may never (it failed too), and a link that
/// went meanwhile is known gone after it.
pub const HANDOVER_MAX: Duration = Duration::from_secs(5);

/// A switch's own state: nothing shared, no lock.
#[derive(Debug, Default)]
pub struct SwitchTopology {
    /// LLDP tokens per port and when they were last refilled.
    buckets: BTreeMap<PortNo, (f64, Instant)>,
    /// Ports this switch already reported as host ports (looked at for
    /// every packet-in).
    host_ports: PortSet,
}

/// The discovery application.
pub struct TopologyApp {
    inner: Arc<Inner>,
}

/// Everything the application's handlers and its timer share.
struct Inner {
    settings: Settings<TopologyConfig>,
    /// The key probes are signed with: this instance's own, or the
    /// cluster's once [`Peers`] gives it.
    key: Mutex<ProbeKey>,
    /// The runtime's clock and the wall clock when discovery started: the
    /// zero of probe send times.
    epoch: Mutex<Option<(Instant, u64)>>,
    shared: Mutex<Shared>,
    counters: Counters,
    /// The application's handle on the network, from `start`.
    net: OnceLock<Network>,
}

impl TopologyApp {
    /// Discovery with these settings and a fresh random probe key; an
    /// error if the operating system gives no randomness (there is no
    /// guessable fallback: see [`NoRandomness`]).
    pub fn new(cfg: TopologyConfig) -> Result<TopologyApp, NoRandomness> {
        TopologyApp::with_randomness(cfg, getrandom::fill)
    }

    /// Discovery with a probe key from the randomness source `fill`
    /// ([`ProbeKey::from_randomness`]).
    pub fn with_randomness<E: std::fmt::Display>(
        cfg: TopologyConfig,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<TopologyApp, NoRandomness> {
        Ok(TopologyApp::with_key(cfg, ProbeKey::from_randomness(fill)?))
    }

    /// Discovery with a given probe key (tests).
    pub fn with_key(cfg: TopologyConfig, key: ProbeKey) -> TopologyApp {
        TopologyApp {
            inner: Arc::new(Inner {
                settings: Settings::new(cfg),
                key: Mutex::new(key),
                epoch: Mutex::new(None),
                shared: Mutex::new(Shared::default()),
                counters: Counters::default(),
                net: OnceLock::new(),
            }),
        }
    }

    /// What discovery has done so far.
    pub fn counters(&self) -> TopologyCounters {
        self.inner.counters.snapshot()
    }
}

impl Inner {
    /// `now` in milliseconds since the Unix epoch: the wall clock when
    /// discovery started plus the runtime's clock since, so probe times
    /// are on one scale across the members of a cluster (whose clocks NTP
    /// keeps well within `max_probe_age` of each other) and a test clock
    /// still moves them.
    fn clock_ms(&self, now: Instant) -> u64 {
        let mut e = lock(&self.epoch);
        let (epoch, wall) = *e.get_or_insert_with(|| {
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            (now, wall)
        });
        wall + now.saturating_duration_since(epoch).as_millis() as u64
    }

    /// The probe frame for port `port` of switch `dpid`.
    fn probe_frame(
        &self,
        shared: &mut Shared,
        dpid: DatapathId,
        port: &PortDesc,
        now: Instant,
    ) -> Vec<u8> {
        shared.next_nonce = shared.next_nonce.wrapping_add(1);
        let probe = Probe {
            dpid,
            port: port.no,
            sent_ms: self.clock_ms(now),
            nonce: shared.next_nonce,
        };
        bump(&self.counters.probes_sent);
        lock(&self.key).encode(&probe, port.hw_addr)
    }

    /// Merges the peers' facts into this instance's and publishes the
    /// result. Standalone, the merge and the published version are clones
    /// of `topo` that share its maps (pointer copies, see [`Topology`]):
    /// what the next event changes is copied then, its path alone.
    fn publish(&self, shared: &mut Shared) {
        shared.merged = merge(&shared.topo, shared.peers.as_ref().map(|(_, t)| t));
        let Some(net) = self.net.get() else {
            return;
        };
        if let Err(e) = net.publish(Publish::new().view(shared.merged.clone())) {
            tracing::error!(error = %e, "cannot publish the topology");
        }
    }

    fn removed(&self, links: &[Link], shared: &mut Shared) {
        let now = self.net.get().map(Network::now);
        for l in links {
            if let Some(now) = now {
                shared.link_lost.insert(l.src, now);
                shared.link_lost.insert(l.dst, now);
            }
            shared.link_seen.remove(l);
            bump(&self.counters.links_removed);
            tracing::info!(link = %l, "link removed");
        }
    }

    /// Lets go of the facts of switches handed over to another member
    /// once another member publishes the switch and every link arriving
    /// on it these facts have, or after [`HANDOVER_MAX`]; true if any
    /// went.
    fn end_handovers(&self, shared: &mut Shared, now: Instant) -> bool {
        let elsewhere = |d: &DatapathId| {
            shared.peers.as_ref().is_some_and(|(_, t)| {
                t.switches.contains_key(d)
                    && shared
                        .topo
                        .links_to_switch(*d)
                        .all(|l| t.link_from(l.src) == Some(l.dst))
            })
        };
        let done: Vec<DatapathId> = shared
            .handed_over
            .iter()
            .filter(|(d, since)| {
                now.saturating_duration_since(**since) >= HANDOVER_MAX || elsewhere(d)
            })
            .map(|(d, _)| *d)
            .collect();
        for d in &done {
            shared.handed_over.remove(d);
            let still = shared
                .topo
                .switches
                .get(d)
                .is_some_and(|s| s.served == Served::HandedOver);
            if !still {
                continue;
            }
            let mine: Vec<Link> = shared.topo.links_to_switch(*d).collect();
            for l in &mine {
                shared.topo.remove_link(*l);
            }
            shared.topo.switches.remove(d);
            self.removed(&mine, shared);
            shared.topo.remove_switch_ports(*d);
            let to = shared
                .peers
                .as_ref()
                .and_then(|(_, t)| t.switches.get(d)?.peer().map(str::to_string));
            tracing::info!(dpid = %d, to = to.as_deref().unwrap_or("nobody yet"), "switch left the topology: handed over");
        }
        !done.is_empty()
    }

    /// Takes a token from the LLDP bucket of port `port`.
    fn admit_lldp(&self, state: &mut SwitchTopology, port: PortNo, now: Instant) -> bool {
        let (rate, burst) = (
            f64::from(self.settings.get().lldp_per_second),
            f64::from(self.settings.get().lldp_burst.max(1)),
        );
        let (tokens, at) = state.buckets.entry(port).or_insert((burst, now));
        *tokens = (*tokens + now.saturating_duration_since(*at).as_secs_f64() * rate).min(burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// An LLDP frame arrived on port `at`.
    fn on_lldp(&self, at: PortRef, pi: &PacketIn<'_>, now: Instant) {
        let decoded = lock(&self.key).decode(pi.data());
        let probe = match decoded {
            Ok(p) => p,
            Err(why) => {
                let c = &self.counters;
                bump(match why {
                    Rejected::NotLldp | Rejected::Malformed(_) => &c.malformed,
                    Rejected::Foreign => &c.foreign,
                    Rejected::BadAuthenticator => &c.bad_authenticator,
                });
                tracing::debug!(port = %at, %why, "LLDP dropped");
                return;
            }
        };
        let from = PortRef::new(probe.dpid, probe.port);
        if from == at {
            bump(&self.counters.reflected);
            return;
        }
        let now_ms = self.clock_ms(now);
        let age = now_ms.saturating_sub(probe.sent_ms);
        if age > self.settings.get().max_probe_age.as_millis() as u64
            || probe.sent_ms > now_ms + 1000
        {
            bump(&self.counters.replayed);
            tracing::warn!(port = %at, claims = %from, age_ms = age, "stale LLDP probe dropped");
            return;
        }
        let mut shared = lock(&self.shared);
        if shared.last_nonce.get(&from) == Some(&probe.nonce) {
            bump(&self.counters.replayed);
            tracing::warn!(port = %at, claims = %from, "replayed LLDP probe dropped");
            return;
        }
        let sender_up = shared
            .merged
            .switches
            .get(&from.dpid)
            .and_then(|s| s.ports.get(&from.port))
            .is_some_and(PortDesc::is_live);
        if !sender_up || !shared.topo.switches.contains_key(&at.dpid) {
            bump(&self.counters.unknown_sender);
            return;
        }
        let host_ports = &shared.merged.host_ports;
        if host_ports.contains(&at) || host_ports.contains(&from) {
            bump(&self.counters.host_port);
            tracing::warn!(port = %at, claims = %from, "LLDP on a host port dropped");
            return;
        }
        shared.last_nonce.insert(from, probe.nonce);
        bump(&self.counters.probes_received);
        let link = Link { src: from, dst: at };
        shared.link_seen.insert(link, now);
        // Both ends are link ports, settled or not.
        shared.settling_since.remove(&from);
        shared.settling_since.remove(&at);
        shared.topo.settling.remove(&from);
        let settled_now = shared.topo.settling.remove(&at).is_some();
        if let Some(displaced) = shared.topo.add_link(link) {
            self.removed(&displaced, &mut shared);
            bump(&self.counters.links_learnt);
            tracing::info!(%link, "link discovered");
            self.publish(&mut shared);
            if shared.merged.link_from(at) != Some(from) {
                // Known one way only: the probe the other way may have
                // been lost (a switch drops what reaches it before its
                // handshake is done), so probe back at once rather than a
                // probe interval later.
                shared.one_way.insert(link);
                self.probe_port(&mut shared, at, now);
            }
        } else if settled_now {
            self.publish(&mut shared);
        }
    }

    /// Sends a probe out of port `p` now, if it is live.
    fn probe_port(&self, shared: &mut Shared, p: PortRef, now: Instant) {
        let Some(net) = self.net.get() else {
            return;
        };
        let Some(s) = shared.topo.switches.get(&p.dpid).cloned() else {
            return;
        };
        if let Some(port) = s.live_ports().find(|d| d.no == p.port) {
            let frame = self.probe_frame(shared, s.dpid, port, now);
            send_probes(net, &s, &[(port.no, frame)]);
        }
    }

    /// Host traffic arrived on a settled port with no link: it is a host
    /// port until it goes down.
    ///
    /// In a cluster, not in the port's first probe interval, nor within a
    /// link timeout of its losing a link: a member that takes over switches
    /// with traffic flowing (their flows deleted, so everything comes to
    /// it), or whose neighbour's mastership moves, may see that traffic on
    /// a link port before the far end's master (another member, or a new
    /// one) has probed it again; every neighbour's master probes within
    /// the interval.
    fn mark_host_port(&self, state: &mut SwitchTopology, at: PortRef, net: &Network) {
        if state.host_ports.contains(at.port) {
            return;
        }
        let now = net.now();
        let mut shared = lock(&self.shared);
        let settings = self.settings.get();
        let within = |t: Option<&Instant>, d: Duration| {
            t.is_some_and(|t| now.saturating_duration_since(*t) < d)
        };
        // (A link lost a moment ago is most often a neighbour changing
        // master: its new master probes again within the link timeout.)
        let young = shared.peers.is_some()
            && (within(shared.up_since.get(&at), settings.probe_interval)
                || within(shared.link_lost.get(&at), settings.link_timeout));
        if young
            || shared.merged.is_link_port(at)
            || shared.topo.is_settling(at)
            || !shared.topo.switches.contains_key(&at.dpid)
        {
            return;
        }
        state.host_ports.insert(at.port);
        if shared.topo.host_ports.insert(at).is_none() {
            tracing::debug!(port = %at, "host port");
            // The other members check probes against it too.
            self.publish(&mut shared);
        }
    }

    /// The timer: settles ports, probes every live port each probe
    /// interval, and ages out links.
    fn tick(&self, net: &Network) {
        let now = net.now();
        let mut shared = lock(&self.shared);
        let mut changed = false;
        changed |= self.end_handovers(&mut shared, now);
        let settle = self.settings.get().settle_time;
        let settled: Vec<PortRef> = shared
            .settling_since
            .iter()
            .filter(|(_, since)| now.saturating_duration_since(**since) >= settle)
            .map(|(p, _)| *p)
            .collect();
        for p in settled {
            shared.settling_since.remove(&p);
            changed |= shared.topo.settling.remove(&p).is_some();
        }
        // Ports still settling without a link are probed at every tick: a
        // probe that reached a neighbour before its handshake was done was
        // dropped, and Open vSwitch keeps dropping the same frame for a
        // while (a cached datapath flow) after its table says otherwise.
        let settling: Vec<PortRef> = shared.settling_since.keys().copied().collect();
        for p in settling {
            self.probe_port(&mut shared, p, now);
        }
        // So are the far ends of links known one way only: the probe back
        // sent when the link was learnt may have been refused too (a
        // switch's kernel refuses frames on a port that has just come
        // back up), and the next probe round is a probe interval away.
        let mut one_way = std::mem::take(&mut shared.one_way);
        one_way.retain(|l| {
            shared.merged.link_from(l.src) == Some(l.dst)
                && shared.merged.link_from(l.dst) != Some(l.src)
        });
        for l in &one_way {
            self.probe_port(&mut shared, l.dst, now);
        }
        shared.one_way = one_way;
        let due = shared
            .last_probe_round
            .is_none_or(|t| now.saturating_duration_since(t) >= self.settings.get().probe_interval);
        if due {
            shared.last_probe_round = Some(now);
            let expired: Vec<Link> = shared
                .link_seen
                .iter()
                .filter(|(_, seen)| {
                    now.saturating_duration_since(**seen) >= self.settings.get().link_timeout
                })
                .map(|(l, _)| *l)
                .collect();
            for l in &expired {
                changed |= shared.topo.remove_link(*l);
                tracing::info!(link = %l, "link aged out");
            }
            self.removed(&expired, &mut shared);
            let switches: Vec<Arc<SwitchNode>> = shared.topo.switches.values().cloned().collect();
            for s in switches {
                let probes: Vec<(PortNo, Vec<u8>)> = s
                    .live_ports()
                    .map(|port| (port.no, self.probe_frame(&mut shared, s.dpid, port, now)))
                    .collect();
                send_probes(net, &s, &probes);
            }
        }
        if changed {
            self.publish(&mut shared);
        }
    }
}

/// The peers' facts as a topology: their switches, served by them, and
/// the links they discovered.
fn peer_topology(peers: &Peers) -> Topology {
    let mut t = Topology::default();
    for (node, facts) in &peers.members {
        for (&dpid, ports) in &facts.switches {
            t.switches.entry(dpid).or_insert_with(|| {
                Arc::new(SwitchNode {
                    served: Served::Peer(node.clone()),
                    dpid,
                    ports: ports.clone(),
                })
            });
        }
        for &l in &facts.links {
            t.add_link(l);
        }
        t.host_ports.extend(facts.host_ports.iter().copied());
    }
    t
}

/// This instance's topology with the peers' added: their switches, and
/// their links between known switches where neither port already has a
/// link of this instance's the same way (its own facts win).
fn merge(own: &Topology, peers: Option<&Topology>) -> Topology {
    let Some(peers) = peers else {
        return own.clone();
    };
    let mut t = own.clone();
    for (&dpid, node) in &peers.switches {
        t.switches.entry(dpid).or_insert_with(|| node.clone());
    }
    for l in peers.links() {
        let known = t.switches.contains_key(&l.src.dpid) && t.switches.contains_key(&l.dst.dpid);
        if known && t.link_from(l.src).is_none() && t.link_to(l.dst).is_none() {
            t.add_link(l);
        }
    }
    t.host_ports.extend(peers.host_ports.iter().copied());
    t
}

/// Sends each probe out of its port of `s`, if this instance serves it:
/// a switch's probes go in one write (a round probes every port of
/// 10,000 switches at once).
fn send_probes(net: &Network, s: &SwitchNode, probes: &[(PortNo, Vec<u8>)]) {
    if let Some(id) = s.here() {
        let _ = net.frames_out(id, probes);
    }
}

fn is_lldp(frame: &[u8]) -> bool {
    frame.get(12..14) == Some(&ETH_TYPE_LLDP.to_be_bytes())
}

impl App for TopologyApp {
    type Switch = SwitchTopology;

    fn name(&self) -> &str {
        "topology"
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters().named()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        Some(&self.inner.settings)
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Peers>().writes::<Topology>()
    }

    /// In a cluster: the cluster's probe key, and the other members'
    /// facts merged into the topology.
    fn view_changed(&self, _net: &Network, snapshot: &Snapshot, _changes: &[Change]) {
        let Some(peers) = snapshot.get::<Peers>() else {
            return;
        };
        let inner = &self.inner;
        if let Some(key) = peers.probe_key {
            let mut mine = lock(&inner.key);
            if mine.bytes() != &key {
                *mine = ProbeKey::from_bytes(key);
                tracing::info!("discovery probes signed with the cluster's key");
            }
        }
        let mut shared = lock(&inner.shared);
        if shared
            .peers
            .as_ref()
            .is_some_and(|(p, _)| Arc::ptr_eq(p, peers.arc()))
        {
            return;
        }
        shared.peers = Some((peers.arc().clone(), peer_topology(&peers)));
        if let Some(now) = inner.net.get().map(Network::now) {
            inner.end_handovers(&mut shared, now);
        }
        let merged = merge(&shared.topo, shared.peers.as_ref().map(|(_, t)| t));
        if merged != shared.merged {
            inner.publish(&mut shared);
        }
    }

    fn start(&self, net: &Network) {
        let inner = &self.inner;
        let start_ms = inner.clock_ms(net.now());
        // Nonces start from the clock, so that two members probing from
        // the same port in turn (mastership moved) do not repeat each
        // other's.
        lock(&inner.shared).next_nonce = start_ms << 16;
        let _ = inner.net.set(net.clone());
        let timer = self.inner.clone();
        net.every("topology", TICK, move |net| timer.tick(net));
    }

    fn switch_up(&self, sw: &mut SwitchCtx<'_>) -> SwitchTopology {
        let inner = &self.inner;
        let mut shared = lock(&inner.shared);
        let dpid = sw.dpid();
        let own = shared.topo.switches.get(&dpid);
        if shared.peers.is_some() && own.is_none_or(|s| s.here().is_none()) {
            // In a cluster, mastership came here (or back): what is known
            // of the switch stays, served here now. From the previous
            // master's facts, which stay until these are published (make
            // before break): its ports, the links arriving on it (seen
            // now: they age out unless probes keep them) and its host
            // ports.
            let now = inner.net.get().map_or_else(Instant::now, Network::now);
            let theirs = shared.peers.as_ref().map(|(_, t)| t);
            let ports = match (own, theirs.and_then(|t| t.switches.get(&dpid))) {
                (Some(s), _) | (None, Some(s)) => s.ports.clone(),
                (None, None) => BTreeMap::new(),
            };
            let (links, host_ports): (Vec<Link>, Vec<PortRef>) =
                theirs.map_or_else(Default::default, |t| {
                    (
                        t.links_to_switch(dpid).collect(),
                        t.host_ports
                            .range(PortRef::of_switch(dpid))
                            .copied()
                            .collect(),
                    )
                });
            tracing::info!(
                %dpid,
                links = links.len(),
                ports = ports.len(),
                host_ports = host_ports.len(),
                "switch taken over with what its previous master knew of it"
            );
            for l in links {
                if shared.topo.add_link(l).is_some() {
                    shared.link_seen.insert(l, now);
                }
            }
            shared.topo.host_ports.extend(host_ports);
            shared.handed_over.remove(&dpid);
            shared.topo.switches.insert(
                dpid,
                Arc::new(SwitchNode {
                    served: Served::Here(sw.id()),
                    dpid,
                    ports,
                }),
            );
            inner.publish(&mut shared);
            return SwitchTopology::default();
        }
        let node = SwitchNode {
            served: Served::Here(sw.id()),
            dpid,
            ports: BTreeMap::new(),
        };
        // A reconnecting switch starts from nothing.
        let gone = shared.topo.remove_switch(sw.dpid());
        inner.removed(&gone, &mut shared);
        shared.topo.switches.insert(sw.dpid(), Arc::new(node));
        inner.publish(&mut shared);
        SwitchTopology::default()
    }

    fn switch_down(&self, sw: &SwitchInfo, _state: SwitchTopology) {
        let inner = &self.inner;
        let mut shared = lock(&inner.shared);
        // Only if this connection is still the switch's (a reconnection
        // replaced it otherwise).
        if shared
            .topo
            .switches
            .get(&sw.dpid)
            .is_none_or(|s| s.here() != Some(sw.id))
        {
            return;
        }
        let net = inner.net.get();
        if shared.peers.is_some() && net.is_some_and(|n| n.is_connected(sw.id)) {
            // In a cluster, still connected: mastership moved to another
            // member. Its facts stay until the new master has its own
            // (make before break); `Inner::end_handovers` lets them go.
            let now = net.map_or_else(Instant::now, Network::now);
            hand_over(&mut shared, sw.dpid, now);
            tracing::info!(dpid = %sw.dpid, "switch handed over: its facts stay until its new master has its own");
            inner.publish(&mut shared);
            return;
        }
        let gone = if shared.peers.is_some() {
            // In a cluster, disconnected from this member: the links
            // leaving it for this member's other switches may still be
            // cabled, and its new master probes them (they age out if
            // nobody does); only its own go.
            let mine: Vec<Link> = shared.topo.links_to_switch(sw.dpid).collect();
            for l in &mine {
                shared.topo.remove_link(*l);
            }
            shared.topo.switches.remove(&sw.dpid);
            mine
        } else {
            shared.topo.remove_switch(sw.dpid)
        };
        inner.removed(&gone, &mut shared);
        shared.topo.remove_switch_ports(sw.dpid);
        let Shared {
            settling_since,
            up_since,
            link_lost,
            ..
        } = &mut *shared;
        for times in [settling_since, up_since, link_lost] {
            forget_switch(times, sw.dpid);
        }
        tracing::info!(dpid = %sw.dpid, "switch left the topology");
        inner.publish(&mut shared);
    }

    fn port_up(&self, sw: &mut SwitchCtx<'_>, state: &mut SwitchTopology, port: &PortDesc) {
        if !port.is_physical() {
            return;
        }
        let inner = &self.inner;
        let now = sw.net().now();
        let at = PortRef::new(sw.dpid(), port.no);
        state.host_ports.remove(port.no);
        let mut shared = lock(&inner.shared);
        update_port(&mut shared.topo, sw.dpid(), port);
        shared.topo.host_ports.remove(&at);
        shared.settling_since.insert(at, now);
        shared.up_since.insert(at, now);
        shared.topo.settling.insert(at);
        let frame = inner.probe_frame(&mut shared, sw.dpid(), port, now);
        inner.publish(&mut shared);
        drop(shared);
        sw.packet_out(&PacketOut {
            payload: Payload::Frame(&frame),
            in_port: PortNo::CONTROLLER,
            actions: &[ActionSpec::Output {
                port: port.no,
                max_len: 0,
            }],
        });
    }

    fn port_down(&self, sw: &mut SwitchCtx<'_>, state: &mut SwitchTopology, port: &PortDesc) {
        let inner = &self.inner;
        let at = PortRef::new(sw.dpid(), port.no);
        state.host_ports.remove(port.no);
        let mut shared = lock(&inner.shared);
        update_port(&mut shared.topo, sw.dpid(), port);
        let gone = shared.topo.remove_port_links(at);
        inner.removed(&gone, &mut shared);
        shared.topo.host_ports.remove(&at);
        shared.settling_since.remove(&at);
        shared.up_since.remove(&at);
        shared.topo.settling.remove(&at);
        inner.publish(&mut shared);
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, SwitchTopology>) {
        let inner = &self.inner;
        batch.for_each(|sw, state, pi| {
            let at = PortRef::new(sw.dpid(), pi.in_port());
            if is_lldp(pi.data()) {
                // Probes are the topology's alone.
                pi.stop();
                let now = sw.net().now();
                if inner.admit_lldp(state, at.port, now) {
                    inner.on_lldp(at, pi, now);
                } else {
                    bump(&inner.counters.rate_limited);
                }
                sw.drop_packet(pi);
                return;
            }
            inner.mark_host_port(state, at, sw.net());
        });
    }
}

/// Removes the entries of switch `dpid`'s ports from `times`: a range of
/// the map, not a scan of every switch's ports.
/// Marks switch `dpid` handed over to another member at `now`: its node
/// and the links arriving on it stay (not served here), its ports' timers
/// go (nothing here probes or settles them now).
fn hand_over(shared: &mut Shared, dpid: DatapathId, now: Instant) {
    if let Some(node) = shared.topo.switches.get_mut(&dpid) {
        Arc::make_mut(node).served = Served::HandedOver;
    }
    shared.handed_over.insert(dpid, now);
    let settling: Vec<PortRef> = shared
        .topo
        .settling
        .range(PortRef::of_switch(dpid))
        .copied()
        .collect();
    for p in settling {
        shared.topo.settling.remove(&p);
    }
    let Shared {
        settling_since,
        up_since,
        link_lost,
        ..
    } = shared;
    for times in [settling_since, up_since, link_lost] {
        forget_switch(times, dpid);
    }
}

fn forget_switch<V>(times: &mut BTreeMap<PortRef, V>, dpid: DatapathId) {
    let ports: Vec<PortRef> = times
        .range(PortRef::of_switch(dpid))
        .map(|(p, _)| *p)
        .collect();
    for p in &ports {
        times.remove(p);
    }
}

/// Records `port`'s new description in switch `dpid`'s node.
fn update_port(topo: &mut Topology, dpid: DatapathId, port: &PortDesc) {
    if let Some(node) = topo.switches.get_mut(&dpid) {
        let mut n = SwitchNode::clone(node);
        n.ports.insert(port.no, port.clone());
        *node = Arc::new(n);
    }
}

#[cfg(test)]
mod tests;
