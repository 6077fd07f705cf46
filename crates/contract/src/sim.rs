//! The discrete-event simulation: routers flooding LSAs over links with
//! propagation delays, each running SPF a hold-down after its database
//! changed, a failure, and the fluid data plane ([`crate::traffic`])
//! recomputed whenever a forwarding table or a link changed.
//!
//! Packet-level in the control plane (each LSA is an event, delivered
//! after the link's delay and a processing time, and lost if the link
//! fails meanwhile), fluid in the data plane. Deterministic: one seeded
//! generator makes the traffic ([`Setup`]), and events at the same time
//! run in the order they were scheduled.

use crate::igp::{Adjacency, Lsa, Router};
use crate::topo::{Dir, LinkId, Micros, NodeId, Topology};
use crate::traffic::{Class, End, Flow, FlowId, FlowInterval, Path, Plane, best_effort};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::sync::Arc;

/// The experiment's settings (the thesis's defaults, §5.4.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    /// Every link's capacity, bit/s (1 Mb/s).
    pub capacity_bps: f64,
    /// The mean best-effort flow rate, as a fraction of a link's capacity
    /// (4%).
    pub load: f64,
    /// The Pareto shape of the flow rates (10: close to uniform).
    pub pareto_k: f64,
    /// Best-effort flows per ordered pair of routers (0.05).
    pub flows_per_pair: f64,
    /// Malicious flows (5).
    pub malicious: usize,
    /// A malicious flow's rate, as a fraction of a link's capacity (2).
    pub malicious_rate: f64,
    /// The hop of a malicious flow's path whose link holds the filter
    /// that blocks it, from 1 at its source (2).
    pub filter_hop: usize,
    /// The IGP's hold-down: how long after its database changed a router
    /// runs SPF (1 s).
    pub hold_down_us: Micros,
    /// What a router takes to handle an LSA before flooding it on (1 ms).
    pub lsa_processing_us: Micros,
    /// Each link's buffer, as time at its capacity (50 ms).
    pub buffer_us: Micros,
    /// When the failure happens (1 s); the metrics count from then.
    pub failure_at_us: Micros,
    /// How long the run goes on after it (10 s).
    pub after_us: Micros,
    /// The SLA thresholds, as multiples of a flow's smallest
    /// propagation delay.
    pub sla_factors: Vec<f64>,
    /// The traffic's seed.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            capacity_bps: 1e6,
            load: 0.04,
            pareto_k: 10.0,
            flows_per_pair: 0.05,
            malicious: 5,
            malicious_rate: 2.0,
            filter_hop: 2,
            hold_down_us: 1_000_000,
            lsa_processing_us: 1_000,
            buffer_us: 50_000,
            failure_at_us: 1_000_000,
            after_us: 10_000_000,
            sla_factors: vec![1.5, 2.0, 3.0, 4.0, 5.0],
            seed: 1,
        }
    }
}

/// What fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Failure {
    /// Nothing.
    None,
    /// A link.
    Link(LinkId),
    /// A router, with all its links.
    Node(NodeId),
}

/// What both modes start from: the link weights, the flows and the
/// filters that block the malicious ones (the thesis gives both the same
/// controller-made start, §5.4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Each link's weight.
    pub weights: Vec<u32>,
    /// Best-effort flows first, then the malicious ones.
    pub flows: Vec<Flow>,
    /// The filters: a directed link and the flow it blocks.
    pub filters: BTreeSet<(Dir, FlowId)>,
}

impl Setup {
    /// The start for `topo` with `weights`: best-effort flows drawn with
    /// `params.seed`, malicious flows between random routers whose path
    /// has more than `filter_hop` hops, each blocked at that hop.
    pub fn new(topo: &Topology, params: &Params, weights: Vec<u32>) -> Setup {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(params.seed);
        let n = topo.nodes.len();
        let count = (params.flows_per_pair * (n * (n - 1)) as f64).round() as usize;
        let mean = params.load * params.capacity_bps;
        let mut flows = best_effort(topo, count, mean, params.pareto_k, &mut rng);
        let routers = converged(topo, &weights);
        let mut filters = BTreeSet::new();
        let mut candidates = best_effort(topo, 50 * params.malicious.max(1), 1.0, 2.0, &mut rng);
        candidates.retain(|c| hops(topo, &routers, c.src, c.dst).len() > params.filter_hop);
        for c in candidates.into_iter().take(params.malicious) {
            let id = flows.len();
            let path = hops(topo, &routers, c.src, c.dst);
            filters.insert((path[params.filter_hop - 1], id));
            flows.push(Flow {
                rate_bps: params.malicious_rate * params.capacity_bps,
                malicious: true,
                ..c
            });
        }
        Setup {
            weights,
            flows,
            filters,
        }
    }
}

/// Every router's LSA at sequence 1 with `weights`, installed everywhere,
/// SPF run: a converged network.
fn converged(topo: &Topology, weights: &[u32]) -> Vec<Router> {
    let adj = topo.adjacency();
    let lsas: Vec<Arc<Lsa>> = (0..topo.nodes.len())
        .map(|n| {
            Arc::new(Lsa {
                origin: n,
                seq: 1,
                links: adj[n]
                    .iter()
                    .map(|&(neighbour, link)| Adjacency {
                        neighbour,
                        link,
                        weight: weights[link],
                    })
                    .collect(),
            })
        })
        .collect();
    (0..topo.nodes.len())
        .map(|n| {
            let mut r = Router::new(n, topo.nodes.len());
            for l in &lsas {
                r.install(l.clone());
            }
            r.spf();
            r
        })
        .collect()
}

/// The directed links from `src` to `dst` by the routers' tables
/// (empty when there is no loop-free route).
fn hops(topo: &Topology, routers: &[Router], src: NodeId, dst: NodeId) -> Vec<Dir> {
    let mut at = src;
    let mut path = Vec::new();
    while at != dst && path.len() <= topo.nodes.len() {
        let Some(r) = routers[at].route(dst) else {
            return Vec::new();
        };
        path.push(topo.links[r.link].dir_from(r.link, at));
        at = r.next;
    }
    path
}

/// What one run measured, from the failure on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Best-effort flows counted (those whose routers survive).
    pub flows: usize,
    /// Loss-Num: best-effort flows that lost traffic.
    pub loss_num: usize,
    /// ... of which to congestion.
    pub lost_to_congestion: usize,
    /// ... of which for want of a route (a failed link before the IGP
    /// moved off it, no route, a loop).
    pub lost_to_routing: usize,
    /// SLA-V: per threshold factor, the fraction of best-effort flows
    /// whose delivered traffic was delayed beyond it at some moment.
    pub sla_violations: Vec<(f64, f64)>,
    /// Malicious flows that got past their filters at some moment.
    pub malicious_leaked: usize,
    /// LSAs delivered (control messages).
    pub lsas: u64,
    /// SPF computations.
    pub spf_runs: u64,
}

#[derive(Debug)]
enum Kind {
    Fail(Failure),
    /// A router notices its links changed and advertises them.
    Detect(NodeId),
    Deliver {
        to: NodeId,
        link: LinkId,
        lsa: Arc<Lsa>,
    },
    Spf(NodeId),
    End,
}

#[derive(Debug)]
struct Event {
    at: Micros,
    seq: u64,
    kind: Kind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A run in progress.
pub struct Sim<'a> {
    topo: &'a Topology,
    params: &'a Params,
    adj: Vec<Vec<(NodeId, LinkId)>>,
    weights: Vec<u32>,
    link_up: Vec<bool>,
    node_up: Vec<bool>,
    /// Each router's own sequence number.
    seq: Vec<u64>,
    routers: Vec<Router>,
    spf_pending: Vec<bool>,
    events: BinaryHeap<Reverse<Event>>,
    scheduled: u64,
    now: Micros,
    flows: Vec<Flow>,
    filters: BTreeSet<(Dir, FlowId)>,
    paths: Vec<Path>,
    plane: Plane,
    measured: Vec<FlowInterval>,
    /// What the flows did before the failure (not counted).
    warm_up: Vec<FlowInterval>,
    /// Each link's propagation delay.
    delays: Vec<Micros>,
    leaked: Vec<bool>,
    dirty: bool,
    lsas: u64,
    spf_runs: u64,
}

impl<'a> Sim<'a> {
    /// A converged network of `topo` carrying `setup`'s traffic.
    pub fn new(topo: &'a Topology, params: &'a Params, setup: &Setup) -> Sim<'a> {
        let n = topo.nodes.len();
        let mut sim = Sim {
            topo,
            params,
            adj: topo.adjacency(),
            weights: setup.weights.clone(),
            link_up: vec![true; topo.links.len()],
            node_up: vec![true; n],
            seq: vec![1; n],
            routers: converged(topo, &setup.weights),
            spf_pending: vec![false; n],
            events: BinaryHeap::new(),
            scheduled: 0,
            now: 0,
            flows: setup.flows.clone(),
            filters: setup.filters.clone(),
            paths: Vec::new(),
            plane: Plane::new(topo, params.buffer_us),
            measured: vec![FlowInterval::default(); setup.flows.len()],
            warm_up: vec![FlowInterval::default(); setup.flows.len()],
            delays: topo.links.iter().map(|l| l.delay_us).collect(),
            leaked: vec![false; setup.flows.len()],
            dirty: true,
            lsas: 0,
            spf_runs: 0,
        };
        sim.reroute();
        sim
    }

    /// The routers.
    pub fn routers(&self) -> &[Router] {
        &self.routers
    }

    /// Whether each link is up.
    pub fn links_up(&self) -> &[bool] {
        &self.link_up
    }

    /// Whether each router is up.
    pub fn nodes_up(&self) -> &[bool] {
        &self.node_up
    }

    /// Whether router `n` has an SPF due (its database changed since its
    /// last one).
    pub fn spf_pending(&self, n: NodeId) -> bool {
        self.spf_pending[n]
    }

    /// The current simulated time.
    pub fn now(&self) -> Micros {
        self.now
    }

    /// The link weights.
    pub fn weights(&self) -> &[u32] {
        &self.weights
    }

    /// The data plane now.
    pub fn plane(&self) -> &Plane {
        &self.plane
    }

    /// The flows' paths now.
    pub fn paths(&self) -> &[Path] {
        &self.paths
    }

    /// What each flow has sent, delivered and lost since the failure.
    pub fn measured(&self) -> &[FlowInterval] {
        &self.measured
    }

    fn schedule(&mut self, at: Micros, kind: Kind) {
        self.scheduled += 1;
        self.events.push(Reverse(Event {
            at,
            seq: self.scheduled,
            kind,
        }));
    }

    /// Runs `failure` at the configured time and the network until the
    /// end; `watch` sees the simulation after every event (for tests).
    pub fn run(mut self, failure: Failure, mut watch: impl FnMut(&Sim<'_>)) -> Outcome {
        let p = self.params;
        self.schedule(p.failure_at_us, Kind::Fail(failure));
        self.schedule(p.failure_at_us + p.after_us, Kind::End);
        while let Some(Reverse(ev)) = self.events.pop() {
            if ev.at > self.now {
                // Before the failure the queues move but nothing counts.
                let out = if self.now >= p.failure_at_us {
                    &mut self.measured
                } else {
                    &mut self.warm_up
                };
                let dt = ev.at - self.now;
                self.plane
                    .advance(dt, &self.flows, &self.paths, &self.delays, out);
                self.now = ev.at;
            }
            let end = matches!(ev.kind, Kind::End);
            self.handle(ev.kind);
            let next_later = self.events.peek().is_none_or(|Reverse(e)| e.at > self.now);
            if self.dirty && next_later {
                self.reroute();
            }
            watch(&self);
            if end {
                break;
            }
        }
        self.outcome()
    }

    fn handle(&mut self, kind: Kind) {
        match kind {
            Kind::Fail(f) => self.fail(f),
            Kind::Detect(n) => {
                if self.node_up[n] {
                    self.originate(n);
                }
            }
            Kind::Deliver { to, link, lsa } => {
                if self.link_up[link] && self.node_up[to] {
                    self.lsas += 1;
                    if self.routers[to].install(lsa.clone()) {
                        self.flood(to, &lsa, Some(link));
                        self.hold_down(to);
                    }
                }
            }
            Kind::Spf(n) => {
                self.spf_pending[n] = false;
                if self.node_up[n] {
                    self.spf_runs += 1;
                    if !self.routers[n].spf().is_empty() {
                        self.dirty = true;
                    }
                }
            }
            Kind::End => {}
        }
    }

    fn fail(&mut self, f: Failure) {
        let links: Vec<LinkId> = match f {
            Failure::None => Vec::new(),
            Failure::Link(l) => vec![l],
            Failure::Node(n) => {
                self.node_up[n] = false;
                self.adj[n].iter().map(|&(_, l)| l).collect()
            }
        };
        for l in links {
            self.link_up[l] = false;
            let link = self.topo.links[l];
            for end in [link.a, link.b] {
                if self.node_up[end] {
                    self.schedule(self.now, Kind::Detect(end));
                }
            }
        }
        self.dirty = true;
    }

    /// Router `n` advertises its live links with a new sequence number.
    fn originate(&mut self, n: NodeId) {
        self.seq[n] += 1;
        let links = self.adj[n]
            .iter()
            .filter(|&&(m, l)| self.link_up[l] && self.node_up[m])
            .map(|&(neighbour, link)| Adjacency {
                neighbour,
                link,
                weight: self.weights[link],
            })
            .collect();
        let lsa = Arc::new(Lsa {
            origin: n,
            seq: self.seq[n],
            links,
        });
        self.routers[n].install(lsa.clone());
        self.flood(n, &lsa, None);
        self.hold_down(n);
    }

    /// Sends `lsa` from `from` over its live links but `except`.
    fn flood(&mut self, from: NodeId, lsa: &Arc<Lsa>, except: Option<LinkId>) {
        let out: Vec<(NodeId, LinkId)> = self.adj[from]
            .iter()
            .copied()
            .filter(|&(m, l)| Some(l) != except && self.link_up[l] && self.node_up[m])
            .collect();
        for (to, link) in out {
            let at = self.now + self.topo.links[link].delay_us + self.params.lsa_processing_us;
            self.schedule(
                at,
                Kind::Deliver {
                    to,
                    link,
                    lsa: lsa.clone(),
                },
            );
        }
    }

    /// SPF on router `n` a hold-down from now, unless one is due.
    fn hold_down(&mut self, n: NodeId) {
        if !std::mem::replace(&mut self.spf_pending[n], true) {
            self.schedule(self.now + self.params.hold_down_us, Kind::Spf(n));
        }
    }

    /// Every flow's path by the routers' tables now, and the plane's
    /// rates along them.
    fn reroute(&mut self) {
        self.paths = (0..self.flows.len()).map(|f| self.path(f)).collect();
        let capacity: Vec<f64> = self
            .topo
            .links
            .iter()
            .zip(&self.link_up)
            .flat_map(|(l, up)| {
                let c = if *up { l.capacity_bps } else { 0.0 };
                [c, c]
            })
            .collect();
        self.plane.route(&self.flows, &self.paths, &capacity);
        if self.now >= self.params.failure_at_us {
            for (i, (f, p)) in self.flows.iter().zip(&self.paths).enumerate() {
                if f.malicious && p.end != End::Filtered && p.end != End::Gone {
                    self.leaked[i] = true;
                }
            }
        }
        self.dirty = false;
    }

    fn path(&self, f: FlowId) -> Path {
        let flow = self.flows[f];
        if !self.node_up[flow.src] || !self.node_up[flow.dst] {
            return Path {
                hops: Vec::new(),
                end: End::Gone,
            };
        }
        let mut hops = Vec::new();
        let mut visited = vec![false; self.topo.nodes.len()];
        let mut at = flow.src;
        let end = loop {
            if at == flow.dst {
                break End::Delivered;
            }
            if std::mem::replace(&mut visited[at], true) {
                break End::Loop;
            }
            let Some(r) = self.routers[at].route(flow.dst) else {
                break End::NoRoute;
            };
            let dir = self.topo.links[r.link].dir_from(r.link, at);
            if self.filters.contains(&(dir, f)) {
                break End::Filtered;
            }
            if !self.link_up[r.link] || !self.node_up[r.next] {
                break End::LinkDown;
            }
            hops.push((dir, Class::Approved));
            at = r.next;
        };
        Path { hops, end }
    }

    fn outcome(&self) -> Outcome {
        let counted: Vec<FlowId> = (0..self.flows.len())
            .filter(|&f| {
                let flow = &self.flows[f];
                !flow.malicious && self.node_up[flow.src] && self.node_up[flow.dst]
            })
            .collect();
        let lost = |m: &FlowInterval| m.congested + m.unrouted > 1e-9 * m.sent + 1e-6;
        let min_delay = min_propagation(self.topo);
        let sla = self
            .params
            .sla_factors
            .iter()
            .map(|&k| {
                let violated = counted
                    .iter()
                    .filter(|&&f| {
                        let flow = &self.flows[f];
                        let floor = min_delay[flow.src][flow.dst] as f64;
                        self.measured[f].delay_us > k * floor
                    })
                    .count();
                (k, violated as f64 / counted.len().max(1) as f64)
            })
            .collect();
        Outcome {
            flows: counted.len(),
            loss_num: counted.iter().filter(|&&f| lost(&self.measured[f])).count(),
            lost_to_congestion: counted
                .iter()
                .filter(|&&f| self.measured[f].congested > 1e-9 * self.measured[f].sent + 1e-6)
                .count(),
            lost_to_routing: counted
                .iter()
                .filter(|&&f| self.measured[f].unrouted > 1e-9 * self.measured[f].sent + 1e-6)
                .count(),
            sla_violations: sla,
            malicious_leaked: self.leaked.iter().filter(|l| **l).count(),
            lsas: self.lsas,
            spf_runs: self.spf_runs,
        }
    }
}

/// The smallest propagation delay between every pair of routers of the
/// intact network, µs (Dijkstra from each).
pub fn min_propagation(topo: &Topology) -> Vec<Vec<Micros>> {
    let adj = topo.adjacency();
    let n = topo.nodes.len();
    (0..n)
        .map(|s| {
            let mut d = vec![Micros::MAX; n];
            let mut heap = BinaryHeap::new();
            d[s] = 0;
            heap.push(Reverse((0, s)));
            while let Some(Reverse((du, u))) = heap.pop() {
                if du > d[u] {
                    continue;
                }
                for &(v, l) in &adj[u] {
                    let dv = du + topo.links[l].delay_us;
                    if dv < d[v] {
                        d[v] = dv;
                        heap.push(Reverse((dv, v)));
                    }
                }
            }
            d
        })
        .collect()
}

/// One run of No Coordination (the routers' IGP alone) on `topo` with
/// `failure`, from `setup`.
pub fn no_coordination(
    topo: &Topology,
    params: &Params,
    setup: &Setup,
    failure: Failure,
) -> Outcome {
    Sim::new(topo, params, setup).run(failure, |_| {})
}
