//! `devices`: where each host is (Beacon §3.3's Device Manager), published
//! as the [`Hosts`] view.
//!
//! A host is learnt from the packet-ins it causes, by its source Ethernet
//! address, with the VLAN and the IPv4 and IPv6 addresses it uses (ARP
//! sender, IPv4 source, IPv6 source), and its attachment point: the switch
//! port the frame arrived on, but only on an *edge* port of the current
//! topology (never a port with a link, nor one still settling), so a frame
//! that crossed a link never teaches a wrong location. A host seen on
//! another edge port has moved; one not seen for `host_timeout` is
//! forgotten; hosts on a port that turns out to carry a link are forgotten
//! at once.
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
//! switch), and a member forgets the hosts of a switch that another member
//! masters now.
//!
//! What only refreshes a host (its last-seen time) does not publish a new
//! version at each packet: the view's last-seen times are refreshed every
//! `refresh` period.

use crate::settings::{AppSettings, Settings};
use crate::sync::lock;
use crate::views::{Host, Hosts, Peers, PortRef, Served, Topology};
use baton_openflow::MacAddr;
use baton_openflow::packet::{Network as L3, Transport};
use baton_runtime::env::{Change, Publish, Snapshot, ViewAccess};
use baton_runtime::{App, Network, PacketInBatch, SwitchCtx};
use baton_runtime::{Configurable, SettingsError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The settings of host tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevicesConfig {
    /// A host not seen for this long is forgotten.
    #[serde(rename = "host_timeout_ms", with = "crate::settings::millis")]
    pub host_timeout: Duration,
    /// How often hosts are aged and the view's last-seen times refreshed
    /// (a change applies when the application next starts).
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

/// Most aged hosts taken out of the view per hold of the lock that the
/// packet-in path takes to learn. Taking a MAC flood's half a million
/// out in one hold (0.3-0.4 s) stalled the worker that long, every
/// switch waiting behind it; 8,192 take 6-28 ms (BENCHMARKS.md,
/// the soak's aging minute).
const AGING_CHUNK: usize = 8192;

impl Default for DevicesConfig {
    fn default() -> Self {
        DevicesConfig {
            host_timeout: Duration::from_secs(300),
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

#[derive(Default)]
struct State {
    hosts: Hosts,
    /// When each host was seen last (the view has it as of the last
    /// refresh): the hosts `hosts` holds, no more and no fewer.
    last_seen: HashMap<MacAddr, Sighting>,
    /// Since when each away host's switch or port has not been live.
    away: HashMap<MacAddr, Instant>,
    /// Whether the log has said that `max_hosts` are known (said once
    /// each time the table fills).
    full: bool,
    /// The other members' facts, in a cluster.
    peers: Option<Arc<Peers>>,
    /// The topology last followed ([`Inner::follow_topology`]).
    followed: Option<Arc<Topology>>,
}

/// When a host was seen last, and whether the view says so.
#[derive(Debug, Clone, Copy)]
struct Sighting {
    last: Instant,
    in_view: bool,
}

/// The host tracking application.
pub struct DevicesApp {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings<DevicesConfig>,
    state: Mutex<State>,
    counters: Counters,
    net: OnceLock<Network>,
}

impl DevicesApp {
    /// Host tracking with these settings.
    pub fn new(cfg: DevicesConfig) -> DevicesApp {
        DevicesApp {
            inner: Arc::new(Inner {
                settings: Settings::new(cfg),
                state: Mutex::new(State::default()),
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

/// What a frame tells about its sender.
struct Seen {
    mac: MacAddr,
    vlan: Option<u16>,
    ipv4: Option<Ipv4Addr>,
    ipv6: Option<Ipv6Addr>,
}

impl Inner {
    /// Publishes this instance's hosts, merged with the peers'.
    fn publish(&self, state: &mut State) {
        let hosts = self.merge(state);
        if let Some(net) = self.net.get() {
            if let Err(e) = net.publish(Publish::new().view(hosts)) {
                tracing::error!(error = %e, "cannot publish the hosts");
            }
        }
    }

    /// This instance's hosts with the peers' added; a host of its own that
    /// a peer saw at another port since is forgotten (it moved there).
    fn merge(&self, state: &mut State) -> Hosts {
        let Some(peers) = state.peers.clone() else {
            return state.hosts.clone();
        };
        let mut merged = state.hosts.clone();
        let mut moved = Vec::new();
        for facts in peers.members.values() {
            for (mac, theirs) in &facts.hosts {
                match merged.get(mac) {
                    Some(h) if h.at_since_ms >= theirs.at_since_ms => continue,
                    Some(h)
                        if state
                            .hosts
                            .get(mac)
                            .is_some_and(|mine| mine.at != theirs.at) =>
                    {
                        moved.push((*mac, h.at, theirs.at));
                    }
                    _ => {}
                }
                merged.insert(Host::clone(theirs));
            }
        }
        for (mac, from, to) in moved {
            self.counters.moved.fetch_add(1, Ordering::Relaxed);
            tracing::info!(%mac, %from, %to, "host moved to another member's switch");
            state.hosts.remove(&mac);
            state.last_seen.remove(&mac);
            state.away.remove(&mac);
        }
        merged
    }

    /// The peers' facts changed: publishes the new merge.
    fn follow_peers(&self, peers: &Arc<Peers>) {
        let mut state = lock(&self.state);
        if state.peers.as_ref().is_some_and(|p| Arc::ptr_eq(p, peers)) {
            return;
        }
        state.peers = Some(peers.clone());
        self.publish(&mut state);
    }

    /// Records `seen` at `at`, unless it is new and `max_hosts` are
    /// known; true if the view must change.
    fn learn(
        &self,
        state: &mut State,
        (seen, at): (Seen, PortRef),
        now: Instant,
        max_hosts: usize,
    ) -> bool {
        if state.hosts.len() >= max_hosts && state.hosts.get(&seen.mac).is_none() {
            self.counters.refused.fetch_add(1, Ordering::Relaxed);
            if !state.full {
                state.full = true;
                tracing::warn!(
                    max_hosts,
                    mac = %seen.mac,
                    "host table full: new hosts are not learnt until others age out or go"
                );
            }
            return false;
        }
        if state.hosts.len() < max_hosts {
            state.full = false;
        }
        // Seen on a live edge port: not away, wherever it was before.
        state.away.remove(&seen.mac);
        let old = state.hosts.get(&seen.mac).cloned();
        let mut host = match &old {
            Some(h) if h.at == at => Host::clone(h),
            Some(h) => {
                self.counters.moved.fetch_add(1, Ordering::Relaxed);
                tracing::info!(mac = %seen.mac, from = %h.at, to = %at, "host moved");
                Host {
                    at,
                    ipv4: BTreeSet::new(),
                    ipv6: BTreeSet::new(),
                    at_since_ms: wall_ms(),
                    ..Host::clone(h)
                }
            }
            None => {
                self.counters.learnt.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(mac = %seen.mac, at = %at, "host learnt");
                Host {
                    mac: seen.mac,
                    vlan: seen.vlan,
                    ipv4: BTreeSet::new(),
                    ipv6: BTreeSet::new(),
                    at,
                    first_seen: now,
                    last_seen: now,
                    at_since_ms: wall_ms(),
                }
            }
        };
        host.vlan = seen.vlan;
        host.ipv4.extend(seen.ipv4);
        host.ipv6.extend(seen.ipv6);
        let in_view = old.as_deref() != Some(&host);
        if in_view {
            host.last_seen = now;
            state.hosts.insert(host);
        }
        let sighting = Sighting { last: now, in_view };
        state.last_seen.insert(seen.mac, sighting);
        in_view
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
        let State { hosts, away, .. } = &mut *state;
        let concerned: Vec<&Arc<Host>> = match last {
            None => hosts.by_mac.values().collect(),
            Some(last) => topo
                .switches_changed_since(&last)
                .into_iter()
                .flat_map(|dpid| hosts.on_switch(dpid))
                .collect(),
        };
        let mut linked = Vec::new();
        let mut handed_over = Vec::new();
        for h in concerned {
            if topo.is_link_port(h.at) {
                linked.push(h.mac);
                continue;
            }
            let peer_masters = topo
                .switches
                .get(&h.at.dpid)
                .is_some_and(|s| matches!(s.served, Served::Peer(_)));
            if peer_masters {
                handed_over.push(h.mac);
                continue;
            }
            let live = topo
                .switches
                .get(&h.at.dpid)
                .and_then(|s| s.ports.get(&h.at.port))
                .is_some_and(|p| p.is_live());
            if live {
                away.remove(&h.mac);
            } else {
                away.entry(h.mac).or_insert(now);
            }
        }
        self.forget(&mut state, &linked, "its port carries a link");
        self.forget(
            &mut state,
            &handed_over,
            "another member masters its switch now",
        );
        if !linked.is_empty() || !handed_over.is_empty() {
            self.publish(&mut state);
        }
    }

    /// Forgets `macs`, saying why ([`log_hosts`]).
    fn forget(&self, state: &mut State, macs: &[MacAddr], why: &str) {
        if macs.is_empty() {
            return;
        }
        for mac in macs {
            state.hosts.remove(mac);
            state.last_seen.remove(mac);
            state.away.remove(mac);
        }
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
        self.forget(
            &mut state,
            &gone,
            "its switch or port has been away longer than the grace",
        );
        if !gone.is_empty() {
            self.publish(&mut state);
        }
    }

    /// Ages hosts out and refreshes the view's last-seen times. The walk
    /// is over the sightings, a plain hash map: the view is looked up
    /// only for the hosts that go or whose time it must refresh. Walking
    /// the view's persistent map with a lookup per host held the lock,
    /// and so the packet-in path, for the whole walk of a million hosts
    /// every `refresh` (a 10,000-switch soak, BENCHMARKS.md). The aged
    /// hosts then leave the view [`AGING_CHUNK`] at a time
    /// ([`Inner::remove_aged`]).
    fn refresh(&self, now: Instant) {
        let aged = self.walk_sightings(now);
        for chunk in aged.chunks(AGING_CHUNK) {
            self.remove_aged(chunk);
        }
        self.counters
            .aged
            .fetch_add(aged.len() as u64, Ordering::Relaxed);
        log_hosts(&aged, "aged out");
        if !aged.is_empty() {
            self.publish(&mut lock(&self.state));
        }
    }

    /// Forgets the sightings older than `host_timeout` and returns their
    /// hosts, in the view's order, for [`Inner::remove_aged`]; brings the
    /// view's last-seen times up to date, publishing them here only when
    /// no host aged ([`Inner::refresh`] publishes after the removals).
    fn walk_sightings(&self, now: Instant) -> Vec<MacAddr> {
        let mut state = lock(&self.state);
        let timeout = self.settings.get().host_timeout;
        let State {
            hosts, last_seen, ..
        } = &mut *state;
        let mut aged = Vec::new();
        let mut stale = Vec::new();
        // One pass that also forgets the aged sightings: a million
        // removals by key cost a cache miss each.
        last_seen.retain(|&mac, seen| {
            if now.saturating_duration_since(seen.last) >= timeout {
                aged.push(mac);
                return false;
            }
            if !seen.in_view {
                seen.in_view = true;
                stale.push((mac, seen.last));
            }
            true
        });
        // In the persistent maps' order: a sweep that ages out a MAC
        // flood's million hosts then walks the trees once, copying each
        // node the published view shares once, rather than hopping to a
        // random leaf for each host.
        aged.sort_unstable();
        stale.sort_unstable();
        let refreshed = !stale.is_empty();
        for (mac, last) in stale {
            if let Some(h) = hosts.get(&mac) {
                let h = Host {
                    last_seen: last,
                    ..Host::clone(h)
                };
                hosts.insert(h);
            }
        }
        if refreshed && aged.is_empty() {
            self.publish(&mut state);
        }
        aged
    }

    /// Takes `aged` hosts out of the view, but for those seen again since
    /// [`Inner::walk_sightings`] forgot their sightings: those were
    /// learnt anew meanwhile, and stay.
    fn remove_aged(&self, aged: &[MacAddr]) {
        let mut state = lock(&self.state);
        let State {
            hosts,
            last_seen,
            away,
            ..
        } = &mut *state;
        for mac in aged {
            if !last_seen.contains_key(mac) {
                hosts.remove(mac);
                away.remove(mac);
            }
        }
    }
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
fn seen(pi: &baton_runtime::PacketIn<'_>) -> Option<Seen> {
    let mac = pi.eth_src()?;
    if mac.is_multicast() || mac == MacAddr([0; 6]) {
        return None;
    }
    let key = pi.key();
    let usable4 = |ip: Ipv4Addr| !(ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast());
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
    Some(Seen {
        mac,
        vlan: key.vlan.map(|v| v.vid),
        ipv4,
        ipv6,
    })
}

impl App for DevicesApp {
    type Switch = ();

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
            inner.refresh(net.now())
        });
        let inner = self.inner.clone();
        net.every("devices-away", AWAY_CHECK, move |net| {
            inner.expire_away(net.now())
        });
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}

    fn view_changed(&self, net: &Network, snapshot: &Snapshot, _changes: &[Change]) {
        if let Some(p) = snapshot.get::<Peers>() {
            self.inner.follow_peers(p.arc());
        }
        if let Some(t) = snapshot.get::<Topology>() {
            self.inner.follow_topology(t.arc(), net.now());
        }
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        let inner = &self.inner;
        let Some(net) = inner.net.get() else {
            return;
        };
        let Some(topo) = net.view::<Topology>() else {
            return;
        };
        let now = net.now();
        let max_hosts = inner.settings.get().max_hosts;
        let mut changed = false;
        batch.for_each(|sw, _, pi| {
            let at = PortRef::new(sw.dpid(), pi.in_port());
            if !topo.is_edge_port(at) {
                return;
            }
            if let Some(s) = seen(pi) {
                let mut state = lock(&inner.state);
                changed |= inner.learn(&mut state, (s, at), now, max_hosts);
            }
        });
        if changed {
            inner.publish(&mut lock(&inner.state));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::{DatapathId, PortNo};

    fn sighting(app: &DevicesApp, last: u8, now: Instant) {
        let seen = Seen {
            mac: MacAddr([2, 0, 0, 0, 0, last]),
            vlan: None,
            ipv4: Some(Ipv4Addr::new(10, 0, 0, last)),
            ipv6: None,
        };
        let at = PortRef::new(DatapathId(1), PortNo(u32::from(last)));
        let inner = &app.inner;
        inner.learn(&mut lock(&inner.state), (seen, at), now, usize::MAX);
    }

    /// A host seen again between the walk that aged it out and its
    /// removal from the view, which the walk no longer holds the lock
    /// for, was learnt anew and stays, consistently in both tables.
    #[test]
    fn a_host_seen_again_while_it_ages_out_stays() {
        let app = DevicesApp::new(DevicesConfig::default());
        let timeout = DevicesConfig::default().host_timeout;
        let t0 = Instant::now();
        sighting(&app, 1, t0);
        sighting(&app, 2, t0);
        let later = t0 + timeout;
        let aged = app.inner.walk_sightings(later);
        assert_eq!(aged.len(), 2, "both aged out");
        sighting(&app, 1, later);
        app.inner.remove_aged(&aged);
        let state = lock(&app.inner.state);
        let listed: Vec<_> = state.hosts.by_mac.keys().copied().collect();
        assert_eq!(listed, vec![MacAddr([2, 0, 0, 0, 0, 1])]);
        assert!(state.last_seen.contains_key(&listed[0]));
        assert_eq!(state.last_seen.len(), 1);
        assert_eq!(state.hosts.by_ipv4(Ipv4Addr::new(10, 0, 0, 2)), None);
    }
}
