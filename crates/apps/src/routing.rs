//! `routing`: shortest-path forwarding between hosts (Maestro §3.1
//! Fig. 2's IntradomainRoutingApp and RouteFlowApp; Beacon §3.3's
//! Routing), with the [`Routes`] it computes published as a view.
//!
//! - When the [`Topology`](crate::views::Topology) changes, the routes are
//!   computed again off the packet-in path by routing's application DAG
//!   (`routing/dag.rs`: `routes` -> `route-flow`), and published with the topology
//!   version they were computed from; paths towards the switches that have
//!   hosts are computed then, others when first needed.
//! - A packet-in for a known host installs, on every switch of the
//!   shortest path, a flow for the packet's pair of Ethernet source and
//!   destination towards the host, the last hop first, so the packet never
//!   outruns its flows; the first hop's flow carries the packet's buffer
//!   (or the packet follows in a PACKET_OUT). Flows per pair let every
//!   host that sends reach the controller once, so `devices` learns it.
//!   Packet-ins read the routes of one snapshot: while new routes are
//!   computed they use the previous, consistent ones, and switch to the
//!   new ones at once (Maestro's stall-free RouteFlowApp).
//! - Broadcasts and packets for unknown hosts reach every edge port
//!   exactly once, so a network with loops has no storm: in one step, a
//!   PACKET_OUT from the controller to each switch with edge ports, when
//!   they came in whole on an edge port of a part of the network this
//!   instance serves entirely; otherwise over the spanning tree of the
//!   routes, hop by hop (a cluster's part that crosses to other members'
//!   switches). An ARP request for a known host is answered by proxy;
//!   the answers to `devices`' probes (to [`PROBE_MAC`]) are dropped.
//! - When a link goes, the flows whose path crossed it are moved onto the
//!   new route on OpenFlow 1.3 switches (one MODIFY per switch and host,
//!   and the rest of the way for the packets that come over the new
//!   route's links: `routing/dag.rs`), and deleted elsewhere, so the
//!   next packet takes a new path;
//!   when a host moves or goes, the flows towards it and from it are
//!   deleted, so its next packets reach the controller and `devices`
//!   learns where it is now. A deletion for a switch that is away is sent
//!   when it comes back (it kept its flows meanwhile).
//! - In a cluster, the routes are computed over the whole network (the
//!   topology and hosts merge the other members' facts), but a member
//!   installs a path's flows only on the switches it masters: a packet
//!   leaving them reaches the next member's switch with no flow there,
//!   goes to that member as a packet-in, and it installs its own hops of
//!   the same path (shortest paths have shortest suffixes, so the hops
//!   agree). A member that becomes master of a switch adopts routing's
//!   flows there rather than deleting them (make before break: a planned
//!   handover loses no packet): they are right, the views being shared,
//!   but not in its records, so every deletion towards or from a host
//!   goes to the adopted switches too, and a change of links deletes all
//!   their routing flows (`routing/installed.rs`).
//! - A packet for a known host that came over a link is forwarded only if
//!   it came along a shortest path towards the host (the switch at the
//!   link's far end is one hop further from it): copies of a flood sent
//!   before the host was known that arrive sideways or backwards are
//!   dropped.
//! - A packet from a host that is not learnt where it came in (its port
//!   still settling, or the host forgotten) is sent on without flows, so
//!   its next packets come back until the host is learnt.

mod dag;
mod installed;

use crate::priority;
use crate::routes::{EdgeSwitch, Routes, SwitchFlood};
use crate::settings::{AppSettings, Settings};
use crate::sync::lock;
use crate::views::{HostCache, Hosts, Link, PROBE_MAC, Peers, PortRef, SwitchPorts};
use baton_openflow::neutral::{
    self, ActionSpec, FlowSpec, MatchFields, MatchSpec, PacketOut, PacketOutTemplate, Payload,
};
use baton_openflow::packet::ArpRepr;
use baton_openflow::packet::Network as L3;
use baton_openflow::packet::consts::ARP_OP_REQUEST;
use baton_openflow::{Cookie, DatapathId, MacAddr, PortNo, Version};
use baton_runtime::Configurable;
use baton_runtime::dag::Dag;
use baton_runtime::env::{Versioned, ViewAccess};
use baton_runtime::{App, Network, PacketIn, PacketInBatch, SwitchCtx, SwitchInfo};
use installed::Installed;
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

/// The settings of routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// Idle timeout of installed flows, seconds.
    pub idle_timeout: u16,
    /// Priority of installed flows (default: the base of
    /// [`priority::FORWARDING`]).
    pub priority: u16,
    /// Answer ARP requests for known hosts from the controller.
    pub proxy_arp: bool,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            idle_timeout: 60,
            priority: priority::FORWARDING.base(),
            proxy_arp: true,
        }
    }
}

crate::counters::named_counters! {
    /// What routing has done.
    pub struct RoutingCounters, live Counters {
        /// Paths installed.
        paths,
        /// Packets flooded over the spanning tree.
        floods,
        /// Copies dropped because they came in on a link off the tree.
        loop_drops,
        /// Packets from hosts not learnt where they came in, sent on without
        /// installing flows.
        relayed,
        /// Packets for a known host that came over a link off its route
        /// (copies of a flood sent before the host was known), dropped:
        /// the copy on the route goes on.
        off_route,
        /// ARP requests answered by proxy.
        proxy_arp,
        /// Flows deleted because a link on their path went (where they
        /// could not be moved), or their host moved or went.
        flows_deleted,
        /// Switches whose flows towards a host were moved onto a new route
        /// when a link under them went (OpenFlow 1.3), each counted once
        /// with the rest of the new route's flows.
        flows_moved,
        /// Times the routes were computed.
        computations,
    }
}

impl AppSettings for RoutingConfig {}

/// What routing did with one packet-in, counted once per batch
/// ([`Tally`]): a relaxed `fetch_add` per packet was a locked
/// read-modify-write, as costly as a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Routed {
    /// Flooded over the spanning tree.
    Flooded,
    /// Dropped: it came in on a link off the tree.
    LoopDrop,
    /// Dropped: a copy off its host's route.
    OffRoute,
    /// Sent on without flows (its source not learnt where it came in).
    Relayed,
    /// An ARP request answered by proxy.
    ProxyArp,
    /// A path installed.
    Path,
    /// Dropped for another reason (no path, nowhere to flood).
    Dropped,
}

/// [`Routed`] outcomes of one batch, added to the counters at its end.
#[derive(Debug, Default)]
struct Tally([u64; 7]);

impl Tally {
    fn add(&mut self, r: Routed) {
        self.0[r as usize] += 1;
    }

    fn into_counters(self, c: &Counters) {
        let [floods, loop_drops, off_route, relayed, proxy_arp, paths, _] = self.0;
        for (counter, n) in [
            (&c.floods, floods),
            (&c.loop_drops, loop_drops),
            (&c.off_route, off_route),
            (&c.relayed, relayed),
            (&c.proxy_arp, proxy_arp),
            (&c.paths, paths),
        ] {
            if n > 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

/// Whether [`Inner::forward`] installs the path's flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Install {
    Yes,
    No,
}

/// What routing keeps per switch: its ports and how it floods, as one
/// version of the routes has them, worked out when the version changes
/// rather than looked up in the routes' topology at each packet.
#[derive(Debug, Default)]
pub struct SwitchRoutes {
    ports: SwitchPorts,
    /// The topology version `flood` was worked out from (0: none).
    version: u64,
    flood: SwitchFlood,
    /// Its part's switches with edge ports, for floods in one step
    /// ([`Routes::edge_flood`]), looked up at the first flood of a version.
    edge_flood: OnceCell<Option<Arc<[EdgeSwitch]>>>,
    /// The flood's PACKET_OUT for each port packets came in on, as asked.
    flood_out: Vec<PacketOutTemplate>,
    /// Where the hosts its packets name are.
    hosts: HostCache,
    /// A path being installed: its ports, its links, and the switches this
    /// instance serves with where their links start (kept for their
    /// memory).
    path: Vec<PortRef>,
    links: Vec<Link>,
    served: Vec<(DatapathId, usize)>,
}

/// How a packet that came in on a port is flooded ([`SwitchRoutes::flood_out`]).
enum Flooding<'a> {
    /// It came in on a link off the spanning tree: a copy that went round
    /// a loop.
    OffTree,
    /// By no port.
    Nowhere,
    /// With this PACKET_OUT.
    Out(&'a PacketOutTemplate),
}

impl SwitchRoutes {
    /// Brings it up to `routes`, for switch `dpid`.
    #[inline]
    fn follow(&mut self, routes: &Versioned<Routes>, dpid: DatapathId) {
        let topo = routes.topology();
        if self.version != topo.version() {
            self.ports.follow(topo, dpid);
            self.flood = routes.switch_flood(dpid);
            self.edge_flood = OnceCell::new();
            self.flood_out.clear();
            self.version = topo.version();
        }
    }

    /// How a packet that came in on `in_port` is flooded, the PACKET_OUT
    /// (for a switch of `version`) made the first time it is asked.
    #[inline]
    fn flood_out(&mut self, version: Version, in_port: PortNo) -> Flooding<'_> {
        let Some(flood) = self.flood.from(in_port) else {
            return Flooding::OffTree;
        };
        if flood.is_empty() {
            return Flooding::Nowhere;
        }
        let i = match self.flood_out.iter().position(|t| t.in_port() == in_port) {
            Some(i) => i,
            None => {
                let actions: Vec<ActionSpec> = flood.ports().map(ActionSpec::output).collect();
                self.flood_out
                    .push(PacketOutTemplate::new(version, in_port, &actions));
                self.flood_out.len() - 1
            }
        };
        Flooding::Out(&self.flood_out[i])
    }
}

thread_local! {
    /// The buffers a flood in one step encodes into: its PACKET_OUTs for
    /// the other switches, and the first switch's outputs.
    static FLOOD_SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<ActionSpec>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Sends packet `pi`, which came in on an edge port of `sw`, out of every
/// other edge port of its part (`part`, [`Routes::edge_flood`]): one
/// PACKET_OUT per switch, in the batches this worker writes, and no
/// packet-in or round trip per hop. The packet never crosses a link, so
/// no copy arrives anywhere twice, loops or not.
fn flood_at_once(sw: &mut SwitchCtx<'_>, pi: &PacketIn<'_>, part: &[EdgeSwitch]) {
    let (me, in_port) = (sw.dpid(), pi.in_port());
    FLOOD_SCRATCH.with_borrow_mut(|(bytes, outputs)| {
        let skip = ActionSpec::output(in_port);
        outputs.clear();
        if let Some(here) = part.iter().find(|s| s.dpid == me) {
            outputs.extend(here.outputs.iter().filter(|&&a| a != skip));
        }
        match outputs.is_empty() {
            // No other edge port here: the switch's buffer is let go.
            true => sw.drop_packet(pi),
            false => sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port,
                actions: outputs,
            }),
        }
        let net = sw.net();
        for s in part.iter().filter(|s| s.dpid != me) {
            let po = PacketOut {
                payload: Payload::Frame(pi.data()),
                in_port: PortNo::CONTROLLER,
                actions: &s.outputs,
            };
            // A switch that left meanwhile misses it, as it would a hop.
            let _ = net.send_with_buffer(s.id, bytes, |out, version, xid| {
                neutral::encode_packet_out(out, version, xid, &po)
            });
        }
    });
}

/// The routing application.
pub struct RoutingApp {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings<RoutingConfig>,
    net: OnceLock<Network>,
    installed: Mutex<Installed>,
    counters: Counters,
}

impl RoutingApp {
    /// Routing with these settings.
    pub fn new(cfg: RoutingConfig) -> RoutingApp {
        RoutingApp {
            inner: Arc::new(Inner {
                settings: Settings::new(cfg),
                net: OnceLock::new(),
                installed: Mutex::new(Installed::default()),
                counters: Counters::default(),
            }),
        }
    }

    /// What it has done so far.
    pub fn counters(&self) -> RoutingCounters {
        self.inner.counters.snapshot()
    }

    /// How many flows routing believes are installed.
    pub fn installed_flows(&self) -> usize {
        lock(&self.inner.installed).len()
    }
}

/// Whether a packet that came in over a link at `came_in` is on its way
/// to switch `dst`: the switch at the link's other end is one hop further
/// from `dst` than this one, so the packet took a shortest path. Any of
/// them, not only the one the routes pick: flows installed upstream from
/// other routes (another member's, computed a moment earlier or later
/// from a topology that was changing) take another path of equal length,
/// and refusing them would leave their packets nowhere to go for as long
/// as the upstream flow lives. A copy of a flood sent before the host was
/// known that reaches a switch sideways or backwards is dropped; copies
/// that reach several switches on shortest paths each go on, so the first
/// packets to a host that only some members know yet may arrive twice.
fn on_route(routes: &Routes, came_in: PortRef, dst: DatapathId) -> bool {
    let Some(prev) = routes.topology().link_to(came_in) else {
        return false;
    };
    // Hops to `dst` (none from `dst` itself).
    let hops = |from| routes.path(from, dst).map(|p| p.len());
    matches!((hops(prev.dpid), hops(came_in.dpid)), (Some(theirs), Some(ours)) if theirs == ours + 1)
}

/// The match of every flow of routing's towards host `mac`, whatever its
/// source (a non-strict delete with it removes them all).
fn towards(mac: MacAddr) -> MatchSpec<'static> {
    MatchSpec::Fields(MatchFields {
        eth_dst: Some(mac),
        ..MatchFields::ANY
    })
}

/// The match of every flow of routing's from host `mac`, whatever its
/// destination (a non-strict delete with it removes them all; on 1.0,
/// which cannot select by cookie, other applications' flows from `mac`
/// too, as with [`towards`]).
fn from(mac: MacAddr) -> MatchSpec<'static> {
    MatchSpec::Fields(MatchFields {
        eth_src: Some(mac),
        ..MatchFields::ANY
    })
}

impl Inner {
    /// The flow of a path for the pair, its output filled in per hop
    /// ([`crate::paths::Switches::install`]).
    fn flow(cfg: &RoutingConfig, (src, dst): (MacAddr, MacAddr)) -> FlowSpec<'static> {
        FlowSpec {
            match_: crate::paths::between(src, dst),
            priority: cfg.priority,
            idle_timeout: cfg.idle_timeout,
            hard_timeout: 0,
            cookie: Cookie(0),
            buffer_id: None,
            flags: 0,
            actions: &[],
            meter: None,
        }
    }

    /// Installs the path from the packet-in's switch to host `dst`'s
    /// port `at`, last hop first, and sends the packet on; or, for a
    /// packet whose source is not learnt where it came in
    /// (`Install::No`), only sends it to the path's first hop. The path
    /// goes into `here`'s buffers, its records into [`Installed`].
    #[allow(clippy::too_many_arguments)]
    fn forward(
        &self,
        sw: &mut SwitchCtx<'_>,
        here: &mut SwitchRoutes,
        pi: &PacketIn<'_>,
        routes: &Routes,
        (src, dst): (MacAddr, MacAddr),
        at: PortRef,
        (install, cfg): (Install, &RoutingConfig),
    ) -> Routed {
        let SwitchRoutes {
            path: ports,
            links,
            served,
            ..
        } = here;
        ports.clear();
        links.clear();
        if !routes.path_into(sw.dpid(), at.dpid, (ports, links)) {
            sw.drop_packet(pi);
            return Routed::Dropped;
        }
        ports.push(at);
        if ports[0].port == pi.in_port() {
            // The host is behind the port the packet came in by.
            sw.drop_packet(pi);
            return Routed::Dropped;
        }
        if install == Install::No {
            sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &[ActionSpec::output(ports[0].port)],
            });
            return Routed::Relayed;
        }
        let topo = routes.topology();
        // Another member's switch gets its flows from that member.
        served.clear();
        served.extend(
            ports
                .iter()
                .enumerate()
                .filter(|(_, p)| topo.switches.get(&p.dpid).and_then(|s| s.here()).is_some())
                .map(|(i, p)| (p.dpid, i)),
        );
        lock(&self.installed).record(served, links, (src, dst));
        let flow = Inner::flow(cfg, (src, dst));
        let net = sw.net();
        crate::paths::Switches::new(net, topo, Some(sw)).install(ports, Some(pi), |_| flow);
        Routed::Path
    }

    /// Floods the packet: from an edge port, whole, to every edge port of
    /// its part at once where this instance serves the whole part
    /// ([`flood_at_once`]); otherwise over the spanning tree from here
    /// (`flood`, this switch's).
    fn flood(
        &self,
        sw: &mut SwitchCtx<'_>,
        pi: &PacketIn<'_>,
        here: &mut SwitchRoutes,
        routes: &Routes,
    ) -> Routed {
        let dpid = sw.dpid();
        let part = here.edge_flood.get_or_init(|| {
            routes
                .edge_flood(dpid)
                .filter(|part| part.iter().any(|s| s.dpid != dpid))
        });
        if let Some(part) = part {
            let whole = pi.data().len() == usize::from(pi.total_len());
            if whole && here.ports.is_edge(pi.in_port()) {
                flood_at_once(sw, pi, part);
                return Routed::Flooded;
            }
        }
        match here.flood_out(sw.version(), pi.in_port()) {
            Flooding::OffTree => {
                sw.drop_packet(pi);
                Routed::LoopDrop
            }
            Flooding::Nowhere => {
                sw.drop_packet(pi);
                Routed::Dropped
            }
            Flooding::Out(template) => {
                let xid = sw.xid();
                template.emit(sw.out(), xid, pi.payload());
                Routed::Flooded
            }
        }
    }

    /// Forwards one packet-in of switch `sw` (`here`, its ports and
    /// floods): floods broadcasts and packets for unknown hosts, answers
    /// ARP for known ones, installs the path towards a known host.
    #[inline]
    fn route(
        &self,
        sw: &mut SwitchCtx<'_>,
        here: &mut SwitchRoutes,
        pi: &PacketIn<'_>,
        routes: &Routes,
        (hosts, cfg): (Option<&Hosts>, &RoutingConfig),
    ) -> Routed {
        let (Some(src), Some(dst)) = (pi.eth_src(), pi.eth_dst()) else {
            sw.drop_packet(pi);
            return Routed::Dropped;
        };
        let port = pi.in_port();
        if dst.is_multicast() {
            let proxied = cfg.proxy_arp
                && here.ports.is_edge(port)
                && hosts.is_some_and(|h| self.proxy_arp(sw, pi, h));
            return match proxied {
                true => Routed::ProxyArp,
                false => self.flood(sw, pi, here, routes),
            };
        }
        let Some(hosts) = hosts else {
            return self.flood(sw, pi, here, routes);
        };
        let Some(to) = here.hosts.at(hosts, &dst) else {
            if dst == PROBE_MAC {
                // A host's answer to `devices`' probe: taught it already.
                sw.drop_packet(pi);
                return Routed::Dropped;
            }
            return self.flood(sw, pi, here, routes);
        };
        let came_in = PortRef::new(sw.dpid(), port);
        let over_link = here.ports.is_link(port);
        if over_link && !on_route(routes, came_in, to.dpid) {
            // A copy of a flood sent while this host was unknown
            // (another copy reaches the switch on its route), or a
            // packet on a path that is no longer the route.
            sw.drop_packet(pi);
            return Routed::OffRoute;
        }
        // Flows for a source that is learnt where it came in, or that
        // comes over a link from a learnt host; a packet from a host not
        // learnt at its port yet (the port still settling, the host
        // forgotten while its switch was away) is only sent on, so its
        // next packets come back until `devices` learns it.
        let install = match here.hosts.at(hosts, &src) {
            Some(at) if at == came_in || over_link => Install::Yes,
            _ => Install::No,
        };
        self.forward(sw, here, pi, routes, (src, dst), to, (install, cfg))
    }

    /// Answers an ARP request for a known host from the controller; true
    /// if it did.
    fn proxy_arp(&self, sw: &mut SwitchCtx<'_>, pi: &PacketIn<'_>, hosts: &Hosts) -> bool {
        let L3::Arp(arp) = &pi.key().network else {
            return false;
        };
        if arp.op != ARP_OP_REQUEST {
            return false;
        }
        let Some(target) = hosts.mac_of(arp.tpa) else {
            return false;
        };
        let arp = ArpRepr::reply(target, arp.tpa, arp.sha, arp.spa);
        let mut reply = Vec::with_capacity(arp.frame_len());
        arp.emit_frame(&mut reply);
        sw.packet_out(&PacketOut {
            payload: Payload::Frame(&reply),
            in_port: PortNo::CONTROLLER,
            actions: &[ActionSpec::output(pi.in_port())],
        });
        sw.drop_packet(pi);
        true
    }
}

impl App for RoutingApp {
    /// The switch's ports and floods as the routes last seen have them.
    type Switch = SwitchRoutes;

    fn name(&self) -> &str {
        "routing"
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counters().named()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        Some(&self.inner.settings)
    }

    /// The packet-in path reads the routes and the hosts; the routes are
    /// written by routing's DAG ([`RoutingApp::dags`]).
    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Routes>().reads::<Hosts>()
    }

    /// `routes` -> `route-flow` (`routing/dag.rs`): new routes for a new topology,
    /// then the flows off them deleted.
    fn dags(&self) -> Vec<Dag> {
        match dag::dag(&self.inner) {
            Ok(d) => vec![d],
            Err(e) => {
                tracing::error!(error = %e, "routing's DAG is malformed");
                Vec::new()
            }
        }
    }

    /// `routes` and `route-flow`, for a `[dag.routing]` that reshapes
    /// routing's DAG (another trigger, a timer).
    fn dag_apps(&self) -> Vec<Arc<dyn baton_runtime::dag::DagApp>> {
        dag::stages(&self.inner)
    }

    fn start(&self, net: &Network) {
        let _ = self.inner.net.set(net.clone());
    }

    /// A switch that comes back gets the deletions it missed while it
    /// was away (a switch in fail-secure mode keeps its flows across
    /// reconnections; those towards or from hosts that moved or went
    /// would keep their packets from the controller). The first time a
    /// 1.3 switch is seen in a run, every flow with routing's cookie tag
    /// goes: an earlier run's, which this one knows nothing of.
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) -> SwitchRoutes {
        let mut installed = lock(&self.inner.installed);
        if sw.net().view::<Peers>().is_some() {
            // In a cluster: mastership of this switch came here, with
            // flows another member installed, right but not in this one's
            // records: adopted.
            installed.forget_switch(sw.dpid());
            installed.adopted.insert(sw.dpid());
            return SwitchRoutes::default();
        }
        for match_ in installed.pending.remove(&sw.dpid()).unwrap_or_default() {
            sw.delete_flows(&match_, PortNo::ANY);
        }
        if installed.seen.insert(sw.dpid()) {
            sw.delete_own_flows();
        }
        SwitchRoutes::default()
    }

    /// In a cluster, a switch this member no longer masters is the new
    /// master's, flows and all.
    fn switch_down(&self, sw: &SwitchInfo, _: SwitchRoutes) {
        let Some(net) = self.inner.net.get() else {
            return;
        };
        if net.view::<Peers>().is_some() {
            lock(&self.inner.installed).forget_switch(sw.dpid);
        }
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_, SwitchRoutes>) {
        let inner = &self.inner;
        let Some(net) = inner.net.get() else {
            return;
        };
        let snapshot = net.snapshot();
        let (Some(routes), hosts) = (snapshot.get::<Routes>(), snapshot.get::<Hosts>()) else {
            // No topology yet: nowhere to send anything.
            batch.for_each(|sw, _, pi| sw.drop_packet(pi));
            return;
        };
        // The snapshot holds what `devices` published in this very batch,
        // and what the applications before this one read (one picture
        // for the whole batch: `bandwidth` left a packet for an unknown
        // host here knowing what this reads).
        let cfg = inner.settings.get();
        let hosts = (hosts.as_deref(), &**cfg);
        let mut tally = Tally::default();
        batch.for_each_switch(|sw, here, events| {
            here.follow(&routes, sw.dpid());
            for pi in events.iter() {
                tally.add(inner.route(sw, here, &pi, &routes, hosts));
            }
        });
        tally.into_counters(&inner.counters);
    }
}
