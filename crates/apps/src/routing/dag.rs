//! Routing as an application DAG (Maestro thesis §3.2.4, Fig. 3.1: the
//! discovery DAG's IntradomainRoutingApp feeding the RouteFlowApp): a new
//! version of the topology or of the hosts triggers `routes`, which
//! computes the routes and writes them, then `route-flow`, which reads
//! them and moves or deletes the flows they no longer take.
//!
//! A link that goes moves the flows across it rather than deleting them,
//! on OpenFlow 1.3 switches: on each switch whose flows towards a host
//! crossed it, one OFPFC_MODIFY (by routing's cookie) points them all,
//! whatever their source, at the new route's next hop, and the new
//! route's other switches get a flow per host for the packets that come
//! in over the new route's link (`in_port` and Ethernet destination, so
//! a host's own first packets still reach the controller). The traffic
//! goes on as soon as the switches have them, with no packet-in per pair:
//! with deletions, every pair's next packets came back to the controller
//! (17-37 packet-ins after a fat tree's cut on Open vSwitch; none with
//! moves, BENCHMARKS.md). Deleted instead, as before, where a flow cannot be
//! moved: OpenFlow 1.0 (its MODIFY adds a flow where none matches, and
//! cannot select by cookie), a host that moved or went, no route left.
//!
//! Both run on one snapshot: `route-flow` sees the routes `routes` just
//! computed and the topology and hosts they were computed from, whatever
//! is published meanwhile, and its deletions go to the switches only when
//! the routes are committed. What `route-flow` remembers between runs
//! (the routes and hosts it last acted on, the deletions kept for
//! switches that are away) changes only once a run commits
//! ([`DagApp::committed`]): a run thrown away and repeated computes the
//! same deletions again from the same starting point. Routing's record of
//! the flows it installed (`routing/installed.rs`) forgets the deleted
//! flows when the run commits, but for those a path numbered after the
//! listing renewed meanwhile: the packet-in path may go on installing
//! without either losing track of the other's flows.

use super::installed::Installed;
use super::{Inner, from, towards};
use crate::routes::Routes;
use crate::sync::lock;
use crate::views::{HostEvent, Hosts, Link, Topology};
use baton_openflow::neutral::{self, ActionSpec, FlowSpec, MatchFields, MatchSpec};
use baton_openflow::{Cookie, DatapathId, MacAddr, PortNo, Version, Xid};
use baton_runtime::dag::{Dag, DagApp, Local, Trigger};
use baton_runtime::env::{Versioned, ViewAccess, ViewId};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Routing's DAG: `routes` -> `route-flow`, triggered by the topology and
/// the hosts.
pub(super) fn dag(inner: &Arc<Inner>) -> Result<Dag, String> {
    let trigger = Trigger::Views(vec![ViewId::of::<Topology>(), ViewId::of::<Hosts>()]);
    Dag::new(
        "routing",
        stages(inner),
        &[("routes", "route-flow")],
        trigger,
    )
    .map_err(|e| e.to_string())
}

/// Fresh `routes` and `route-flow` stages, for routing's DAG or one the
/// operator declares.
pub(super) fn stages(inner: &Arc<Inner>) -> Vec<Arc<dyn DagApp>> {
    vec![
        Arc::new(RoutesStage {
            inner: inner.clone(),
            prepared: Mutex::default(),
            after_commit: Mutex::default(),
        }),
        Arc::new(RouteFlow {
            inner: inner.clone(),
            last: Mutex::default(),
            next: Mutex::default(),
        }),
    ]
}

/// Computes the routes of a new topology (paths towards the switches with
/// hosts in advance); for new hosts only, prepares the paths towards
/// their switches on the routes there are.
struct RoutesStage {
    inner: Arc<Inner>,
    /// The routes this stage last prepared and the version of the hosts
    /// it prepared them for. A new version of the hosts on routes with the
    /// same paths ([`Routes::same_paths`]) prepares only the switches of
    /// the hosts learnt or moved since, read from the hosts' change log:
    /// walking every host at each version cost a million lookups per
    /// version while a MAC flood taught hosts (a 10,000-switch soak,
    /// BENCHMARKS.md).
    prepared: Mutex<Option<(Arc<Routes>, Hosts)>>,
    /// New routes whose paths towards every switch with hosts are
    /// prepared once the run committed: a cut's moves go out first (at
    /// 10,000 switches, a search towards each of a few hundred switches
    /// with hosts took longer than the moves).
    after_commit: Mutex<Option<(Arc<Routes>, Vec<DatapathId>)>>,
}

/// The switches of the hosts learnt or moved since version `before` of
/// the hosts, up to `now`; `None` if the log no longer says.
fn switches_of_new_hosts(before: &Hosts, now: &Hosts) -> Option<Vec<DatapathId>> {
    if !before.same_table(now) {
        return None;
    }
    let changes = now.changes_since(before.seq()).ok()?;
    let mut switches: Vec<DatapathId> = changes
        .iter()
        .filter_map(|c| match c.what {
            HostEvent::Learnt { at } | HostEvent::Moved { to: at, .. } => Some(at.dpid),
            HostEvent::Gone { .. } => None,
        })
        .collect();
    switches.sort_unstable();
    switches.dedup();
    Some(switches)
}

impl DagApp for RoutesStage {
    fn name(&self) -> &str {
        "routes"
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<Topology>()
            .reads::<Hosts>()
            .reads::<Routes>()
            .writes::<Routes>()
    }

    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let Some(topo) = local.read::<Topology>() else {
            return Ok(());
        };
        let version = local.version::<Topology>();
        let hosts = local.read::<Hosts>();
        let current = local.read::<Routes>();
        let routes = match current {
            Some(current) if current.topology().version() == version => current,
            _ => {
                let topology = Versioned::shared(version, topo);
                let routes = match &current {
                    Some(current) => current.follow(topology),
                    None => Routes::compute(topology),
                };
                if !current.as_ref().is_some_and(|c| c.same_paths(&routes)) {
                    self.inner
                        .counters
                        .computations
                        .fetch_add(1, Ordering::Relaxed);
                }
                local.write(routes)?;
                local
                    .read::<Routes>()
                    .ok_or("routes unreadable after writing them")?
            }
        };
        let mut prepared = lock(&self.prepared);
        let new_hosts = match (prepared.take(), &hosts) {
            (Some((before_routes, before)), Some(now)) if before_routes.same_paths(&routes) => {
                switches_of_new_hosts(&before, now)
            }
            _ => None,
        };
        let every_host = || hosts.iter().flat_map(|h| h.switches()).collect();
        *lock(&self.after_commit) = match new_hosts {
            Some(switches) => {
                routes.prepare(switches);
                None
            }
            None => Some((routes.clone(), every_host())),
        };
        *prepared = hosts.map(|hosts| (routes, Hosts::clone(&hosts)));
        Ok(())
    }

    fn committed(&self) {
        if let Some((routes, switches)) = lock(&self.after_commit).take() {
            routes.prepare(switches);
        }
    }
}

/// What is in sorted `before` and not in sorted `now`, and the other
/// way round: in one pass, where two sets of a network's links cost a
/// look-up per link (20,000 at 10,000 switches) at every cut.
fn sorted_difference<'a, T: Ord>(before: &'a [T], now: &'a [T]) -> (Vec<&'a T>, Vec<&'a T>) {
    let (mut gone, mut came) = (Vec::new(), Vec::new());
    let (mut b, mut n) = (before.iter().peekable(), now.iter().peekable());
    loop {
        match (b.peek(), n.peek()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                std::cmp::Ordering::Less => gone.extend(b.next()),
                std::cmp::Ordering::Greater => came.extend(n.next()),
                std::cmp::Ordering::Equal => {
                    b.next();
                    n.next();
                }
            },
            (Some(_), None) => gone.extend(b.next()),
            (None, Some(_)) => came.extend(n.next()),
            (None, None) => return (gone, came),
        }
    }
}

/// What `route-flow` last acted on.
#[derive(Default, Clone)]
struct Seen {
    routes: Option<Arc<Routes>>,
    hosts: Option<Hosts>,
}

/// What a run of `route-flow` did, kept once the run commits.
struct Done {
    seen: Seen,
    /// Deletions for switches that are away, sent when they come back.
    pending: Vec<(DatapathId, MatchSpec<'static>)>,
    /// Deletions sent.
    sent: u64,
    /// The flows deleted: forgotten once the run commits.
    forget: Doomed,
    /// The flows moved onto new routes: recorded there once it commits.
    moved: Vec<Moved>,
}

/// Flows towards `dst` moved onto a new route ([module docs](self)): the
/// switches given flows (the first one's modified), each with where its
/// links start, as [`Installed::record_towards`] takes them.
struct Moved {
    dst: MacAddr,
    hops: Vec<(DatapathId, usize)>,
    links: Vec<Link>,
}

/// The flows a run of `route-flow` deletes: towards a destination on a
/// switch (a link under them went, a shorter path came, their host
/// moved or went), and from a source on every switch that has them (it
/// moved or went); those installed by paths up to number `up_to`, the
/// last when they were listed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Doomed {
    towards: BTreeSet<(DatapathId, MacAddr)>,
    /// Towards a destination on a switch, across a link that went: moved
    /// where they can be, deleted where not.
    across_gone: BTreeSet<(DatapathId, MacAddr)>,
    from: Vec<(MacAddr, Vec<DatapathId>)>,
    /// Adopted switches whose routing flows all go (the links changed).
    adopted: Vec<DatapathId>,
    up_to: u64,
}

/// Deletes the flows the new routes no longer take: those across a link
/// that went, those longer than the shortest path now that a link came,
/// and those towards or from a host that moved or went; on switches
/// adopted from another member of a cluster, every flow when links change
/// and those of such hosts when hosts do.
struct RouteFlow {
    inner: Arc<Inner>,
    last: Mutex<Seen>,
    next: Mutex<Option<Done>>,
}

impl RouteFlow {
    /// The switches and destinations whose flows are off the new routes,
    /// added to `doomed`; whether links went or came.
    fn off_new_routes(
        installed: &Installed,
        (old, new): (&Routes, &Routes),
        hosts: Option<&Hosts>,
        doomed: &mut Doomed,
    ) -> bool {
        let (gone, came) = sorted_difference(old.links(), new.links());
        let came = !came.is_empty();
        // In a cluster, a switch whose master changed keeps routing's
        // flows (its new master adopts them): the paths through it stay.
        let before_len = doomed.towards.len();
        for l in &gone {
            doomed.across_gone.extend(installed.across(l));
        }
        if came {
            // A new link may make a shorter path: the flows whose path is
            // now longer than the shortest go, so the next packet takes
            // the short one.
            for ((dpid, mac), longest) in installed.longest() {
                let at = hosts.and_then(|h| h.at(&mac)).map(|at| at.dpid);
                let shortest = at.and_then(|to| new.path(dpid, to)).map(|p| p.len());
                if shortest.is_some_and(|n| n < longest) {
                    doomed.towards.insert((dpid, mac));
                }
            }
        }
        let off = doomed.towards.len() - before_len + doomed.across_gone.len();
        if off > 0 {
            tracing::info!(
                links_gone = gone.len(),
                link_came = came,
                switches_and_hosts = off,
                "flows off the new shortest paths moved or deleted"
            );
        }
        !gone.is_empty() || came
    }

    /// The hosts that moved or went between versions `before` and `now`
    /// of the hosts, by the hosts' change log (which costs the changes
    /// since `before`, not the hosts: it runs at each new version,
    /// continually under a MAC flood); `None` if the log no longer says.
    fn moved_or_gone(before: &Hosts, now: &Hosts) -> Option<BTreeSet<MacAddr>> {
        let changes = match before.same_table(now) {
            true => now.changes_since(before.seq()).map_err(|e| e.to_string()),
            false => Err("another host table".to_string()),
        };
        match changes {
            Ok(changes) => Some(
                changes
                    .iter()
                    .filter(|c| !matches!(c.what, HostEvent::Learnt { .. }))
                    .map(|c| c.mac)
                    .collect(),
            ),
            Err(why) => {
                tracing::warn!(%why, "routing lost track of which hosts moved: every flow it installed is deleted");
                None
            }
        }
    }

    /// The flows towards and from the hosts `changed` (every host with
    /// flows for `None`), added to `doomed`: deleted, so the next packets
    /// to or from such a host reach the controller and `devices` learns
    /// where it is now, even while it talks over flows installed before (a
    /// switch that reconnected, a port that flapped).
    fn off_changed_hosts(
        installed: &Installed,
        changed: Option<BTreeSet<MacAddr>>,
        doomed: &mut Doomed,
    ) {
        let Some(changed) = changed else {
            // Every host: the adopted switches' flows all go too.
            doomed.adopted.extend(installed.adopted.iter().copied());
            for mac in installed.hosts().collect::<Vec<_>>() {
                RouteFlow::off_host(installed, mac, doomed);
            }
            return;
        };
        for mac in changed {
            RouteFlow::off_host(installed, mac, doomed);
        }
    }

    /// The flows towards and from `mac`, recorded or on adopted switches.
    fn off_host(installed: &Installed, mac: MacAddr, doomed: &mut Doomed) {
        let adopted = installed.adopted.iter().copied();
        doomed.towards.extend(
            installed
                .towards(mac)
                .iter()
                .copied()
                .chain(adopted.clone())
                .map(|d| (d, mac)),
        );
        let mut from = installed.from(mac).to_vec();
        from.extend(adopted.filter(|d| !from.contains(d)).collect::<Vec<_>>());
        if !from.is_empty() {
            doomed.from.push((mac, from));
        }
    }
}

/// Moves flows towards a host off a link that went onto the new route
/// ([module docs](self)), for one run of `route-flow`.
struct Mover<'a> {
    routes: &'a Routes,
    hosts: Option<&'a Hosts>,
    connected: &'a HashMap<DatapathId, (baton_runtime::SwitchId, Version)>,
    /// Routing's cookie and its mask: the MODIFY selects routing's flows
    /// only, and the new flows carry it.
    cookie: Option<(Cookie, u64)>,
    /// The priority and idle timeout of routing's flows.
    flow: (u16, u16),
    /// The flows given already in this run (switch, in port, host): two
    /// moved routes that join give the rest of the way once.
    given: BTreeSet<(DatapathId, PortNo, MacAddr)>,
    moved: Vec<Moved>,
}

impl Mover<'_> {
    /// Points the flows towards `dst` on `dpid` at the new route and gives
    /// the route's other switches theirs; false, with nothing sent, where
    /// they cannot be moved (they are deleted instead).
    fn try_move(&mut self, local: &mut Local<'_>, dpid: DatapathId, dst: MacAddr) -> bool {
        let (Some(cookie), Some(&(id, Version::V13))) = (self.cookie, self.connected.get(&dpid))
        else {
            return false;
        };
        let Some(at) = self.hosts.and_then(|h| h.at(&dst)) else {
            return false;
        };
        let (mut ports, mut links) = (Vec::new(), Vec::new());
        if !self
            .routes
            .path_into(dpid, at.dpid, (&mut ports, &mut links))
        {
            return false;
        }
        ports.push(at);
        // The rest of the way first, so the moved packets never outrun
        // their flows.
        let topo = self.routes.topology();
        let mut hops = Vec::with_capacity(ports.len());
        for (i, hop) in ports.iter().enumerate().skip(1).rev() {
            let in_port = links[i - 1].dst.port;
            let served = topo.switches.get(&hop.dpid).and_then(|s| s.here());
            let (Some(hop_id), Some(&(_, version))) = (served, self.connected.get(&hop.dpid))
            else {
                // Another member's switch, or one away: its packets come
                // to the controller there.
                continue;
            };
            hops.push((hop.dpid, i));
            if !self.given.insert((hop.dpid, in_port, dst)) {
                continue;
            }
            let output = [ActionSpec::output(hop.port)];
            let flow = FlowSpec {
                match_: MatchSpec::Fields(MatchFields {
                    in_port: Some(in_port),
                    eth_dst: Some(dst),
                    ..MatchFields::ANY
                }),
                priority: self.flow.0,
                idle_timeout: self.flow.1,
                cookie: cookie.0,
                ..FlowSpec::new(MatchSpec::all(), &output)
            };
            local.send(hop_id, |out| {
                neutral::encode_flow_add(out, version, Xid(0), &flow)
            });
        }
        let output = [ActionSpec::output(ports[0].port)];
        local.send(id, |out| {
            neutral::encode_flow_modify13(out, Xid(0), &towards(dst), cookie, &output)
        });
        hops.push((dpid, 0));
        hops.reverse();
        self.moved.push(Moved { dst, hops, links });
        true
    }
}

impl DagApp for RouteFlow {
    fn name(&self) -> &str {
        "route-flow"
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Routes>().reads::<Hosts>()
    }

    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let Some(routes) = local.read::<Routes>() else {
            return Ok(());
        };
        let hosts = local.read::<Hosts>();
        let last = lock(&self.last).clone();
        // Routes with the same paths over the same switches (masters
        // included) take every flow where it went: nothing to compare.
        // Each first host on a port is a new topology under a MAC flood,
        // and comparing two topologies costs every switch and link.
        let changed = |old: &Routes| {
            !old.same_paths(&routes) || old.topology().switches != routes.topology().switches
        };
        let old_routes = last.routes.filter(|old| changed(old));
        // Read before taking the record of the flows, which the packet-in
        // path takes to install.
        let hosts_changed = match (last.hosts.as_ref(), hosts.as_deref()) {
            (Some(before), Some(now)) => Some(RouteFlow::moved_or_gone(before, now)),
            _ => None,
        };
        let mut forget = Doomed::default();
        {
            let installed = lock(&self.inner.installed);
            forget.up_to = installed.generation();
            if let Some(old) = &old_routes {
                let both = (&**old, &*routes);
                if RouteFlow::off_new_routes(&installed, both, hosts.as_deref(), &mut forget) {
                    forget.adopted.extend(installed.adopted.iter().copied());
                }
            }
            if let Some(changed) = hosts_changed {
                RouteFlow::off_changed_hosts(&installed, changed, &mut forget);
            }
        }
        // A host that moved or went has its flows deleted, not moved.
        let across_gone = std::mem::take(&mut forget.across_gone);
        forget.adopted.sort_unstable();
        forget.adopted.dedup();
        let connected: HashMap<DatapathId, _> = match forget.towards.is_empty()
            && across_gone.is_empty()
            && forget.from.is_empty()
            && forget.adopted.is_empty()
        {
            true => HashMap::new(),
            false => local
                .switches()
                .iter()
                .map(|s| (s.dpid, (s.id, s.version)))
                .collect(),
        };
        let cfg = self.inner.settings.get();
        let cookie = self.inner.net.get().and_then(|n| n.own_cookie());
        let mut mover = Mover {
            routes: &routes,
            hosts: hosts.as_deref(),
            connected: &connected,
            cookie,
            flow: (cfg.priority, cfg.idle_timeout),
            given: BTreeSet::new(),
            moved: Vec::new(),
        };
        for (dpid, mac) in across_gone {
            if !forget.towards.contains(&(dpid, mac)) && !mover.try_move(local, dpid, mac) {
                forget.towards.insert((dpid, mac));
            }
        }
        let moved = mover.moved;
        let mut doomed: Vec<(DatapathId, MatchSpec<'static>)> = forget
            .towards
            .iter()
            .map(|&(dpid, mac)| (dpid, towards(mac)))
            .collect();
        for (mac, switches) in &forget.from {
            doomed.extend(switches.iter().map(|&d| (d, from(*mac))));
        }
        let mut done = Done {
            seen: Seen {
                routes: Some(routes),
                hosts: hosts.map(|h| Hosts::clone(&h)),
            },
            pending: Vec::new(),
            sent: 0,
            forget,
            moved,
        };
        for (dpid, match_) in doomed {
            match connected.get(&dpid) {
                Some(&(id, version)) => {
                    local.send(id, |out| {
                        neutral::encode_flow_delete(out, version, Xid(0), &match_, PortNo::ANY)
                    });
                    done.sent += 1;
                }
                None => done.pending.push((dpid, match_)),
            }
        }
        // Adopted switches whose flows all go: by routing's cookie (1.3);
        // OpenFlow 1.0 cannot delete by cookie, so those towards every
        // host known.
        for dpid in &done.forget.adopted {
            let Some(&(id, version)) = connected.get(dpid) else {
                continue;
            };
            match (version, cookie) {
                (Version::V13, Some((cookie, mask))) => local.send(id, |out| {
                    neutral::encode_flow_delete_by_cookie(out, Xid(0), cookie, mask)
                }),
                _ => {
                    for host in done.seen.hosts.iter().flat_map(|h| h.list()) {
                        local.send(id, |out| {
                            neutral::encode_flow_delete(
                                out,
                                version,
                                Xid(0),
                                &towards(host.mac),
                                PortNo::ANY,
                            )
                        });
                    }
                }
            }
            done.sent += 1;
        }
        *lock(&self.next) = Some(done);
        Ok(())
    }

    fn committed(&self) {
        let Some(done) = lock(&self.next).take() else {
            return;
        };
        *lock(&self.last) = done.seen;
        let mut installed = lock(&self.inner.installed);
        for (dpid, match_) in done.pending {
            installed.pending.entry(dpid).or_default().push(match_);
        }
        let Doomed {
            towards,
            from,
            adopted,
            up_to,
            ..
        } = done.forget;
        for dpid in adopted {
            installed.adopted.remove(&dpid);
        }
        for (dpid, dst) in towards {
            installed.forget_towards(dpid, dst, up_to);
        }
        for m in &done.moved {
            // The first hop's record holds the old route's links: it goes,
            // unless a packet-in renewed it meanwhile.
            if let Some(&(first, _)) = m.hops.first() {
                installed.forget_towards(first, m.dst, up_to);
            }
            installed.record_towards(&m.hops, &m.links, m.dst);
        }
        for (src, _) in from {
            installed.forget_from(src, up_to);
        }
        let counters = &self.inner.counters;
        counters
            .flows_deleted
            .fetch_add(done.sent, Ordering::Relaxed);
        let moved = done.moved.len() as u64;
        if moved > 0 {
            counters.flows_moved.fetch_add(moved, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{RoutingApp, RoutingConfig};
    use crate::views::{Batch, Host, HostTable, PortRef, Served, SwitchNode};
    use baton_runtime::SwitchId;
    use baton_runtime::testing::port;

    /// s1 - s2 - s3: s1 served here through connection `s1`, s2 by
    /// `s2`, s3 by "c".
    fn routes(s1: u32, s2: &str) -> Arc<Routes> {
        let mut t = Topology::default();
        for (d, served) in [
            (1, Served::Here(SwitchId::new(s1, 0))),
            (2, Served::Peer(Arc::from(s2))),
            (3, Served::Peer(Arc::from("c"))),
        ] {
            t.switches.insert(
                DatapathId(d),
                Arc::new(SwitchNode {
                    served,
                    dpid: DatapathId(d),
                    ports: [(PortNo(1), port(1)), (PortNo(2), port(2))].into(),
                }),
            );
        }
        for (a, b) in [(1, 2), (2, 3)] {
            let l = Link {
                src: PortRef::new(DatapathId(a), PortNo(2)),
                dst: PortRef::new(DatapathId(b), PortNo(1)),
            };
            t.add_link(l);
            t.add_link(l.reversed());
        }
        Arc::new(Routes::compute(Versioned::new(1, t)))
    }

    fn host(n: u8, dpid: u64) -> Host {
        let now = std::time::Instant::now();
        Host {
            mac: MacAddr([2, 0, 0, 0, 0, n]),
            vlan: None,
            ipv4: Default::default(),
            ipv6: Default::default(),
            at: PortRef::new(DatapathId(dpid), PortNo(1)),
            first_seen: now,
            last_seen: now,
            at_since_ms: 0,
        }
    }

    #[test]
    fn a_sorted_difference_is_what_each_side_lacks() {
        let (gone, came) = sorted_difference(&[1, 3, 4, 7, 9], &[2, 3, 7, 8, 9, 10]);
        assert_eq!(gone, [&1, &4]);
        assert_eq!(came, [&2, &8, &10]);
        let (gone, came) = sorted_difference::<u8>(&[], &[]);
        assert!(gone.is_empty() && came.is_empty());
    }

    #[test]
    fn only_hosts_added_or_moved_have_their_switches_prepared() {
        let table = HostTable::new();
        for (n, dpid) in [(1, 1), (2, 2), (3, 3)] {
            table.insert(host(n, dpid));
        }
        let before = table.view();
        table.insert(host(2, 5)); // moved from switch 2 to 5
        let mut batch = Batch::default();
        table.remove(&host(3, 3).mac, &mut batch); // went
        table.commit(&mut batch, |_| {});
        table.insert(host(4, 4)); // came
        let mut refreshed = host(1, 1);
        refreshed.last_seen += std::time::Duration::from_secs(60);
        table.insert(refreshed); // seen again where it was
        let now = table.view();
        assert_eq!(
            switches_of_new_hosts(&before, &now),
            Some(vec![DatapathId(4), DatapathId(5)])
        );
        assert_eq!(switches_of_new_hosts(&now, &now), Some(vec![]));
        assert_eq!(
            switches_of_new_hosts(&Hosts::default(), &now),
            None,
            "another table: every host's switch is prepared"
        );
    }

    /// Routing with default settings, and a `route-flow` stage of it.
    fn route_flow() -> (RoutingApp, RouteFlow) {
        let app = RoutingApp::new(RoutingConfig::default());
        let stage = RouteFlow {
            inner: app.inner.clone(),
            last: Mutex::default(),
            next: Mutex::default(),
        };
        (app, stage)
    }

    #[test]
    fn the_flows_towards_and_from_hosts_that_went_are_listed_by_switch() {
        let (app, _) = route_flow();
        // Hosts 1 and 2 behind s1 send to the gateway 9 there; host 1
        // also sends to host 3, behind s2.
        let (s1, s2) = (DatapathId(1), DatapathId(2));
        let mac = |n| host(n, 0).mac;
        let table = HostTable::new();
        for (n, dpid) in [(1, 1), (2, 1), (9, 1), (3, 2)] {
            table.insert(host(n, dpid));
        }
        let before = table.view();
        {
            let mut installed = lock(&app.inner.installed);
            for (dpid, src, dst) in [(s1, 1, 9), (s1, 2, 9), (s2, 1, 3)] {
                installed.record(&[(dpid, 0)], &[], (mac(src), mac(dst)));
            }
        }
        let mut batch = Batch::default();
        for n in [1, 2, 9] {
            table.remove(&mac(n), &mut batch);
        }
        table.commit(&mut batch, |_| {});
        let now = table.view();
        let changed = RouteFlow::moved_or_gone(&before, &now);
        assert_eq!(changed, Some([mac(1), mac(2), mac(9)].into()));
        let mut doomed = Doomed::default();
        let mut installed = lock(&app.inner.installed);
        RouteFlow::off_changed_hosts(&installed, changed, &mut doomed);
        assert_eq!(
            doomed.towards,
            [(s1, mac(9))].into(),
            "one deletion of every flow towards the gateway"
        );
        assert_eq!(
            doomed.from,
            vec![(mac(1), vec![s1, s2]), (mac(2), vec![s1])],
            "one per switch of every flow from each host"
        );
        let up_to = installed.generation();
        for &(dpid, dst) in &doomed.towards {
            installed.forget_towards(dpid, dst, up_to);
        }
        for (src, _) in &doomed.from {
            installed.forget_from(*src, up_to);
        }
        assert_eq!(installed.towards(mac(3)), &[s2], "host 3 is still there");
        installed.forget_towards(s2, mac(3), up_to);
        assert_eq!(installed.len(), 0);
        assert!(installed.hosts().next().is_none());
    }

    #[test]
    fn a_host_table_the_log_no_longer_covers_deletes_every_flow() {
        let (app, _) = route_flow();
        let mac = |n| host(n, 0).mac;
        lock(&app.inner.installed).record(&[(DatapathId(1), 0)], &[], (mac(1), mac(2)));
        let changed = RouteFlow::moved_or_gone(&Hosts::default(), &HostTable::new().view());
        assert_eq!(changed, None, "another table");
        let mut doomed = Doomed::default();
        RouteFlow::off_changed_hosts(&lock(&app.inner.installed), changed, &mut doomed);
        assert_eq!(doomed.towards, [(DatapathId(1), mac(2))].into());
        assert_eq!(doomed.from, vec![(mac(1), vec![DatapathId(1)])]);
    }

    #[test]
    fn paths_through_a_switch_whose_master_changed_stay() {
        let (app, _) = route_flow();
        let before = routes(0, "b");
        // This member's hop on s1 of a path to a host on s3, through s2.
        let host = MacAddr([2, 0, 0, 0, 0, 9]);
        let path = before.path(DatapathId(1), DatapathId(3)).unwrap();
        let links = before.path_links(&path);
        lock(&app.inner.installed).record(
            &[(DatapathId(1), 0)],
            &links,
            (MacAddr([2, 0, 0, 0, 0, 1]), host),
        );
        let installed = lock(&app.inner.installed);
        let off = |new: &Routes| {
            let mut doomed = Doomed::default();
            let links_changed =
                RouteFlow::off_new_routes(&installed, (&before, new), None, &mut doomed);
            (doomed.towards, links_changed)
        };
        assert_eq!(off(&routes(0, "b")), (BTreeSet::new(), false));
        assert_eq!(
            off(&routes(7, "b")),
            (BTreeSet::new(), false),
            "s1 reconnected, still here: its flows stay (it kept them)"
        );
        assert_eq!(
            off(&routes(0, "c")),
            (BTreeSet::new(), false),
            "s2 changed master, which adopted the flows there: the path through it stays"
        );
    }

    #[test]
    fn adopted_switches_get_every_host_deletion_and_lose_all_when_links_change() {
        let (app, _) = route_flow();
        let mac = |n| host(n, 0).mac;
        let mut installed = lock(&app.inner.installed);
        installed.adopted.insert(DatapathId(5));
        let mut doomed = Doomed::default();
        RouteFlow::off_changed_hosts(&installed, Some([mac(9)].into()), &mut doomed);
        assert_eq!(doomed.towards, [(DatapathId(5), mac(9))].into());
        assert_eq!(doomed.from, vec![(mac(9), vec![DatapathId(5)])]);
        assert!(doomed.adopted.is_empty());
        // Every host (the log no longer says which): all of them go.
        let mut doomed = Doomed::default();
        RouteFlow::off_changed_hosts(&installed, None, &mut doomed);
        assert_eq!(doomed.adopted, vec![DatapathId(5)]);
        // A link gone: so does the routes' comparison.
        let before = routes(0, "b");
        let mut cut = Topology::clone(before.topology());
        let l = Link {
            src: PortRef::new(DatapathId(2), PortNo(2)),
            dst: PortRef::new(DatapathId(3), PortNo(1)),
        };
        cut.remove_link(l);
        cut.remove_link(l.reversed());
        let after = Routes::compute(Versioned::new(2, cut));
        let mut doomed = Doomed::default();
        assert!(RouteFlow::off_new_routes(
            &installed,
            (&before, &after),
            None,
            &mut doomed
        ));
        installed.forget_switch(DatapathId(5));
        assert!(installed.adopted.is_empty());
    }
}
