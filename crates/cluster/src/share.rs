//! The network views shared through etcd: each member writes the facts it
//! owns and reads the others' into the [`Peers`] view, which `topology`
//! and `devices` merge into theirs.
//!
//! A member owns what it learns from the switches it masters:
//! - `facts/NODE/switch/DPID`: a switch it masters, with its ports;
//! - `facts/NODE/link/DPID/PORT`: a link arriving on one of its switches'
//!   ports (a link is discovered where its probe arrives);
//! - `facts/NODE/host/MAC`: a host attached to one of its switches;
//! - `facts/NODE/hostport/DPID/PORT`: a port of one of its switches where
//!   host traffic was seen, so that every member refuses probes a host
//!   relays from it.
//!
//! The facts are put under the member's lease, so a member that dies
//! takes its facts with it; only what changed since the last write is
//! written ([`FactWriter`]), and a host's last-seen time, which changes
//! all the time and means nothing on another machine, is not a fact. A
//! reader keeps the other members' facts ([`PeerFacts`] per member) from
//! one read and a watch from its revision on, and publishes them whole
//! when a batch of events changed them. `probe-key` (no lease) is the key
//! every member signs discovery probes with: the first member creates it.
//!
//! Make before break: a member whose facts all go at once (its lease
//! expired: it died or was cut off; or it left) still has them in the
//! view, switch by switch, until another member publishes the switch (its
//! new master, which takes the links and hosts over from them) or
//! [`LINGER`] passed, so that a failover loses no link or host on the way
//! and no flow across them is deleted. A member that still has facts has
//! its deletions seen at once (a link that went).
//!
//! What stays each member's own: everything per switch (learning tables,
//! counters) and routing's record of its flows. Bandwidth reservations
//! are shared by [`crate::ledger`].

use crate::etcd::{Etcd, EtcdError, LeaseId};
use baton_apps::views::{Host, Hosts, PeerFacts, Peers, PortRef, Topology};
use baton_openflow::neutral::PortDesc;
use baton_openflow::{DatapathId, MacAddr, PortNo};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the facts live, under the cluster's prefix.
pub const FACTS: &str = "facts/";

/// The cluster's probe key, under the cluster's prefix.
pub const PROBE_KEY: &str = "probe-key";

/// Facts as etcd holds them: key (under the cluster's prefix) to value.
pub type Facts = BTreeMap<String, Vec<u8>>;

/// A port, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct PortFact {
    no: u32,
    name: String,
    hw_addr: String,
    admin_down: bool,
    link_down: bool,
    blocked: bool,
    speed_kbps: Option<u32>,
}

/// A link, as written: its ends as `DPID/PORT`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct LinkFact {
    src: String,
    dst: String,
}

/// A host, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct HostFact {
    mac: String,
    vlan: Option<u16>,
    ipv4: Vec<Ipv4Addr>,
    ipv6: Vec<Ipv6Addr>,
    at: String,
    at_since_ms: u64,
}

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("facts serialise")
}

pub(crate) fn parse_mac(s: &str) -> Option<MacAddr> {
    let mut b = [0u8; 6];
    let mut parts = s.split(':');
    for byte in &mut b {
        *byte = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(MacAddr(b))
}

/// The facts member `node` owns in `topo` and `hosts`: the switches it
/// serves (or has just handed over, `Served::HandedOver`) with their
/// ports, the links arriving on them, the hosts attached to them.
pub fn own_facts(node: &str, topo: Option<&Topology>, hosts: Option<&Hosts>) -> Facts {
    let mut facts = Facts::new();
    let Some(topo) = topo else {
        return facts;
    };
    // A switch handed over to another member a moment ago counts until
    // its new master has its own facts (make before break).
    let here = |d: DatapathId| topo.switches.get(&d).is_some_and(|s| s.publishes());
    for s in topo.switches.values().filter(|s| s.publishes()) {
        let ports: Vec<PortFact> = s
            .ports
            .values()
            .map(|p| PortFact {
                no: p.no.0,
                name: p.name.clone(),
                hw_addr: p.hw_addr.to_string(),
                admin_down: p.admin_down,
                link_down: p.link_down,
                blocked: p.blocked,
                speed_kbps: p.speed_kbps,
            })
            .collect();
        facts.insert(
            format!("{FACTS}{node}/switch/{:016x}", s.dpid.0),
            json(&ports),
        );
    }
    for l in topo.links().filter(|l| here(l.dst.dpid)) {
        facts.insert(
            format!("{FACTS}{node}/link/{:016x}/{}", l.dst.dpid.0, l.dst.port.0),
            json(&LinkFact {
                src: l.src.to_string(),
                dst: l.dst.to_string(),
            }),
        );
    }
    for p in topo.host_ports.iter().filter(|p| here(p.dpid)) {
        facts.insert(
            format!("{FACTS}{node}/hostport/{:016x}/{}", p.dpid.0, p.port.0),
            b"{}".to_vec(),
        );
    }
    for h in hosts
        .into_iter()
        .flat_map(|h| h.list())
        .filter(|h| here(h.at.dpid))
    {
        facts.insert(
            format!("{FACTS}{node}/host/{}", h.mac),
            json(&HostFact {
                mac: h.mac.to_string(),
                vlan: h.vlan,
                ipv4: h.ipv4.iter().copied().collect(),
                ipv6: h.ipv6.iter().copied().collect(),
                at: h.at.to_string(),
                at_since_ms: h.at_since_ms,
            }),
        );
    }
    facts
}

/// The switches members other than `me` publish facts of.
pub(crate) fn switches_of_others(etcd: &Etcd, me: &str) -> Result<BTreeSet<u64>, EtcdError> {
    let (_, kvs) = etcd.get_prefix(&format!("{}{FACTS}", crate::PREFIX))?;
    Ok(kvs
        .iter()
        .filter_map(|kv| {
            let (node, kind, name) = parse_key(kv.key.strip_prefix(crate::PREFIX)?)?;
            (node != me && kind == "switch")
                .then(|| u64::from_str_radix(name, 16).ok())
                .flatten()
        })
        .collect())
}

/// Writes a member's facts to etcd, only what changed since the last
/// write that succeeded.
#[derive(Debug, Default)]
pub struct FactWriter {
    /// What etcd holds of ours, under `lease`.
    written: Facts,
    lease: Option<LeaseId>,
    /// Keys put since the start.
    pub puts: u64,
    /// Keys deleted since the start.
    pub deletes: u64,
}

impl FactWriter {
    /// Makes etcd hold `want` under `lease`: everything again if the
    /// lease is new (the old one's keys went with it). A key whose request
    /// fails stays unwritten, for the next call; the first error is
    /// returned after trying every key.
    ///
    /// Switches are put before links and links before hosts, and deleted
    /// the other way round, so a reader never sees a link or a host on a
    /// switch it does not know.
    pub fn sync(&mut self, etcd: &Etcd, lease: LeaseId, want: &Facts) -> Result<(), EtcdError> {
        if self.lease != Some(lease) {
            self.written.clear();
            self.lease = Some(lease);
        }
        let mut first_error = None;
        let mut gone: Vec<String> = self
            .written
            .keys()
            .filter(|k| !want.contains_key(*k))
            .cloned()
            .collect();
        gone.sort_by_key(|k| std::cmp::Reverse(rank(k)));
        for key in gone {
            match etcd.delete(&format!("{}{key}", crate::PREFIX)) {
                Ok(_) => {
                    self.written.remove(&key);
                    self.deletes += 1;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        let mut changed: Vec<(&String, &Vec<u8>)> = want
            .iter()
            .filter(|(k, v)| self.written.get(*k) != Some(*v))
            .collect();
        changed.sort_by_key(|(k, _)| rank(k));
        for (key, value) in changed {
            match etcd.put(&format!("{}{key}", crate::PREFIX), value, Some(lease)) {
                Ok(_) => {
                    self.written.insert(key.clone(), value.clone());
                    self.puts += 1;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// The order facts are put in: switches, then what is on them.
fn rank(key: &str) -> u8 {
    match parse_key(key) {
        Some((_, "switch", _)) => 0,
        _ => 1,
    }
}

/// One fact read from etcd.
#[derive(Debug, Clone, PartialEq)]
enum Fact {
    Switch(DatapathId, BTreeMap<PortNo, PortDesc>),
    Link(PortRef, PortRef),
    Host(Arc<Host>),
    HostPort(PortRef),
}

impl Fact {
    /// The switch it is about: a link's where it arrives.
    fn switch(&self) -> DatapathId {
        match self {
            Fact::Switch(d, _) => *d,
            Fact::Link(_, dst) => dst.dpid,
            Fact::Host(h) => h.at.dpid,
            Fact::HostPort(p) => p.dpid,
        }
    }
}

/// Where a fact's key says it belongs: its member, and its kind and name.
fn parse_key(key: &str) -> Option<(&str, &str, &str)> {
    let rest = key.strip_prefix(FACTS)?;
    let (node, rest) = rest.split_once('/')?;
    let (kind, name) = rest.split_once('/')?;
    Some((node, kind, name))
}

/// The fact a key and value say; `None` if they do not parse.
fn parse_fact(kind: &str, value: &[u8]) -> Option<Fact> {
    match kind {
        "switch" => {
            let ports: Vec<PortFact> = serde_json::from_slice(value).ok()?;
            let mut out = BTreeMap::new();
            for p in ports {
                let desc = PortDesc {
                    no: PortNo(p.no),
                    name: p.name,
                    hw_addr: parse_mac(&p.hw_addr)?,
                    admin_down: p.admin_down,
                    link_down: p.link_down,
                    blocked: p.blocked,
                    speed_kbps: p.speed_kbps,
                };
                out.insert(desc.no, desc);
            }
            // The datapath id is the key's; the caller fills it in.
            Some(Fact::Switch(DatapathId(0), out))
        }
        "link" => {
            let l: LinkFact = serde_json::from_slice(value).ok()?;
            Some(Fact::Link(l.src.parse().ok()?, l.dst.parse().ok()?))
        }
        "host" => {
            let h: HostFact = serde_json::from_slice(value).ok()?;
            // Seen times are the reader's: another machine's clock means
            // nothing here.
            let now = Instant::now();
            Some(Fact::Host(Arc::new(Host {
                mac: parse_mac(&h.mac)?,
                vlan: h.vlan,
                ipv4: h.ipv4.into_iter().collect(),
                ipv6: h.ipv6.into_iter().collect(),
                at: h.at.parse().ok()?,
                first_seen: now,
                last_seen: now,
                at_since_ms: h.at_since_ms,
            })))
        }
        _ => None,
    }
}

/// The most a member's facts stay in the view after they all went: its
/// switches' new masters have their own by then, or never will.
pub const LINGER: Duration = baton_apps::topology::HANDOVER_MAX;

/// The other members' facts, kept from etcd's keys and events.
#[derive(Debug, Default)]
pub struct PeerState {
    me: String,
    probe_key: Option<[u8; 32]>,
    /// Facts of members that lost them all at once, by key, since when:
    /// in the view until another member publishes their switch, or
    /// [`LINGER`].
    lingering: BTreeMap<String, (Vec<u8>, Fact, Instant)>,
    /// Facts deleted since the last [`PeerState::settle`]: lingering if
    /// their member has none left then.
    dropped: BTreeMap<String, (Vec<u8>, Fact)>,
    /// The switches this member publishes (its own facts are not in the
    /// view, but a lingering switch it took over is no longer lingering).
    mine: BTreeSet<DatapathId>,
    /// Every other member's facts, by key (the order etcd gives them),
    /// with the value they were read from (the same value again is no
    /// news, though a host read again gets new seen times).
    facts: BTreeMap<String, (Vec<u8>, Fact)>,
    /// Keys already logged as malformed.
    bad: BTreeSet<String>,
}

impl PeerState {
    /// The others' facts, for member `me`.
    pub fn new(me: &str) -> PeerState {
        PeerState {
            me: me.to_string(),
            ..PeerState::default()
        }
    }

    /// Forgets every fact (before reading them all again): those not
    /// read again are deleted ones at the next [`PeerState::settle`].
    pub fn clear(&mut self) {
        self.dropped.extend(std::mem::take(&mut self.facts));
        self.mine.clear();
    }

    /// After a batch of changes (or none for a while): the facts of a
    /// member that has none left start lingering, the others deleted go;
    /// lingering facts whose switch another member publishes now, or
    /// older than [`LINGER`], go. True if the view changed.
    pub fn settle(&mut self, now: Instant) -> bool {
        let with_facts: BTreeSet<&str> = self
            .facts
            .keys()
            .filter_map(|k| Some(parse_key(k)?.0))
            .collect();
        let mut changed = false;
        for (key, (value, fact)) in std::mem::take(&mut self.dropped) {
            let Some((node, ..)) = parse_key(&key) else {
                continue;
            };
            if !with_facts.contains(node) {
                self.lingering.insert(key, (value, fact, now));
                changed = true;
            }
        }
        if self.lingering.is_empty() {
            return changed;
        }
        // Who publishes each switch now.
        let publishers: BTreeMap<DatapathId, BTreeSet<&str>> =
            self.facts
                .iter()
                .fold(BTreeMap::new(), |mut m, (k, (_, f))| {
                    if let (Fact::Switch(d, _), Some((node, ..))) = (f, parse_key(k)) {
                        m.entry(*d).or_default().insert(node);
                    }
                    m
                });
        let before = self.lingering.len();
        let mine = &self.mine;
        self.lingering.retain(|key, (_, fact, since)| {
            let taken = mine.contains(&fact.switch())
                || parse_key(key).is_some_and(|(node, ..)| {
                    publishers
                        .get(&fact.switch())
                        .is_some_and(|p| p.iter().any(|n| *n != node))
                });
            !taken && now.saturating_duration_since(*since) < LINGER
        });
        changed || self.lingering.len() != before
    }

    /// Applies a key (under the cluster's prefix) and its value, or its
    /// deletion; true if the facts changed. Keys that are not another
    /// member's facts are ignored; a malformed one is logged once and
    /// ignored.
    pub fn apply(&mut self, key: &str, value: Option<&[u8]>) -> bool {
        if key == PROBE_KEY {
            let key = value.and_then(parse_probe_key);
            let changed = key.is_some() && key != self.probe_key;
            if changed {
                self.probe_key = key;
            }
            return changed;
        }
        let Some((node, kind, name)) = parse_key(key) else {
            return false;
        };
        if node == self.me {
            if kind == "switch"
                && let Ok(d) = u64::from_str_radix(name, 16)
            {
                match value {
                    Some(_) => self.mine.insert(DatapathId(d)),
                    None => self.mine.remove(&DatapathId(d)),
                };
            }
            return false;
        }
        let Some(value) = value else {
            return match self.facts.remove(key) {
                Some(gone) => {
                    self.dropped.insert(key.to_string(), gone);
                    true
                }
                None => false,
            };
        };
        // Read again (a full read), or its member is back.
        let back = self
            .dropped
            .remove(key)
            .or_else(|| self.lingering.remove(key).map(|(v, f, _)| (v, f)));
        if let Some(old) = back {
            self.facts.insert(key.to_string(), old);
        }
        if self.facts.get(key).is_some_and(|(v, _)| v == value) {
            return false;
        }
        let fact = if kind == "hostport" {
            parse_port(name).map(Fact::HostPort)
        } else {
            parse_fact(kind, value).and_then(|f| match f {
                Fact::Switch(_, ports) => Some(Fact::Switch(
                    DatapathId(u64::from_str_radix(name, 16).ok()?),
                    ports,
                )),
                f => Some(f),
            })
        };
        match fact {
            Some(f) => {
                self.facts.insert(key.to_string(), (value.to_vec(), f));
                true
            }
            None => {
                if self.bad.insert(key.to_string()) {
                    tracing::warn!(key, "a malformed fact in etcd, ignored");
                }
                self.facts.remove(key).is_some()
            }
        }
    }

    /// How many facts of other members it holds.
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// The view of them.
    pub fn peers(&self) -> Peers {
        let mut members: BTreeMap<Arc<str>, PeerFacts> = BTreeMap::new();
        let lingering = self.lingering.iter().map(|(k, (_, f, _))| (k, f));
        for (key, fact) in self.facts.iter().map(|(k, (_, f))| (k, f)).chain(lingering) {
            let Some((node, ..)) = parse_key(key) else {
                continue;
            };
            let f = members.entry(Arc::from(node)).or_default();
            match fact {
                Fact::Switch(dpid, ports) => {
                    f.switches.insert(*dpid, ports.clone());
                }
                Fact::Link(src, dst) => {
                    f.links.insert(baton_apps::views::Link {
                        src: *src,
                        dst: *dst,
                    });
                }
                Fact::Host(h) => {
                    f.hosts.insert(h.mac, h.clone());
                }
                Fact::HostPort(p) => {
                    f.host_ports.insert(*p);
                }
            }
        }
        Peers {
            probe_key: self.probe_key,
            members: members.into_iter().map(|(n, f)| (n, Arc::new(f))).collect(),
        }
    }
}

/// A port as a key names it: `DPID/PORT`, the datapath id in 16 hex
/// digits.
fn parse_port(name: &str) -> Option<PortRef> {
    let (dpid, port) = name.split_once('/')?;
    Some(PortRef::new(
        DatapathId(u64::from_str_radix(dpid, 16).ok()?),
        PortNo(port.parse().ok()?),
    ))
}

/// A probe key as stored: 64 hex digits.
pub fn parse_probe_key(value: &[u8]) -> Option<[u8; 32]> {
    let s = std::str::from_utf8(value).ok()?.trim();
    if s.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

/// A probe key as stored.
pub fn format_probe_key(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

mod threads;
pub use threads::{Context, Seen, ShareStats, WRITE_EVERY, follow, read_loop, write_loop};

#[cfg(test)]
mod tests;
