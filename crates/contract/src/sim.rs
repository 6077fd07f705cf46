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

use crate::controller::{Controller, Database, FilterConfiguration, Start};
use crate::coord::{Entries, Fingerprint, adjust_filter};
use crate::igp::{Adjacency, Lsa, Router, converged};
use crate::optimize::{Demand, Objective, Optimiser};
use crate::topo::{Dir, LinkId, Micros, NodeId, Topology};
use crate::traffic::{Class, End, Flow, FlowId, FlowInterval, Path, Plane, best_effort};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

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
    /// that blocks it, from 1 at its source (1: the network is balanced
    /// and no attack leaks at the start, §5.4.1); the router the link
    /// leaves holds it (an outbound filter).
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
    /// A failed link's changes of state, the failure included (1: it
    /// stays down; 10: down, up, down, ... as the thesis's change
    /// frequency study, §5.4.4).
    pub toggles: u32,
    /// The time between two changes of a toggling link.
    pub toggle_every_us: Micros,
    /// The SLA thresholds, as multiples of a flow's smallest
    /// propagation delay.
    pub sla_factors: Vec<f64>,
    /// What the controller takes to evaluate a consistent state (40 ms,
    /// the thesis's figure for 161 routers).
    pub evaluation_us: Micros,
    /// The noise in the controller's traffic matrix: the standard
    /// deviation of a Gaussian added to each flow's rate, as a fraction
    /// of the mean rate (5%).
    pub noise: f64,
    /// The optimisation's time budget after a change of connectivity
    /// (2 s; 0: no optimisation).
    pub budget_us: Micros,
    /// Weight evaluations the controller does per second of budget (its
    /// speed; deterministic where wall-clock time would not be).
    pub evaluations_per_s: u64,
    /// Evaluations for the weights both modes start with.
    pub initial_evaluations: u64,
    /// The optimiser.
    pub optimiser: Optimiser,
    /// CONTRACT: when the controller stops and when it is back, if it
    /// does (its router keeps forwarding and taking part in the IGP).
    pub controller_outage_us: Option<(Micros, Micros)>,
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
            filter_hop: 1,
            hold_down_us: 1_000_000,
            lsa_processing_us: 1_000,
            buffer_us: 50_000,
            failure_at_us: 1_000_000,
            after_us: 10_000_000,
            toggles: 1,
            toggle_every_us: 100_000,
            sla_factors: vec![1.5, 2.0, 3.0, 4.0, 5.0],
            evaluation_us: 40_000,
            noise: 0.05,
            budget_us: 2_000_000,
            evaluations_per_s: 500,
            initial_evaluations: 4_000,
            optimiser: Optimiser::Simplex,
            controller_outage_us: None,
            seed: 1,
        }
    }
}

/// Who controls the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Mode {
    /// The routers' IGP alone.
    NoCoordination,
    /// CONTRACT: the routers coordinate with a controller at the router
    /// with the most links.
    Contract,
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
    /// The best-effort traffic as the controller believes it (with
    /// [`Params::noise`]).
    pub estimates: Vec<Demand>,
}

impl Setup {
    /// The start for `topo` with `weights`: best-effort flows drawn with
    /// `params.seed`, malicious flows between random routers whose path
    /// has more than `filter_hop` hops, each blocked at that hop.
    pub fn new(topo: &Topology, params: &Params, weights: Vec<u32>) -> Setup {
        let (rng, flows) = Setup::draw(topo, params);
        Setup::finish(topo, params, rng, flows, weights)
    }

    /// The start the controller makes for `topo`: [`Setup::new`] with the
    /// weights the optimiser finds from 1 everywhere for the exact
    /// traffic matrix, in [`Params::initial_evaluations`].
    pub fn optimised(topo: &Topology, params: &Params) -> Setup {
        let (rng, flows) = Setup::draw(topo, params);
        let exact: Vec<Demand> = flows
            .iter()
            .map(|f| Demand {
                src: f.src,
                dst: f.dst,
                bps: f.rate_bps,
            })
            .collect();
        let up = vec![true; topo.links.len()];
        let mut obj = Objective::new(topo, &up, &exact);
        let ones = vec![1; topo.links.len()];
        let (weights, _) =
            params
                .optimiser
                .run(&mut obj, &ones, params.initial_evaluations, params.seed);
        Setup::finish(topo, params, rng, flows, weights)
    }

    /// The best-effort flows of `params.seed`, and the generator after
    /// them.
    fn draw(topo: &Topology, params: &Params) -> (Xoshiro256PlusPlus, Vec<Flow>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(params.seed);
        let n = topo.nodes.len();
        let count = (params.flows_per_pair * (n * (n - 1)) as f64).round() as usize;
        let mean = params.load * params.capacity_bps;
        let flows = best_effort(topo, count, mean, params.pareto_k, &mut rng);
        (rng, flows)
    }

    fn finish(
        topo: &Topology,
        params: &Params,
        mut rng: Xoshiro256PlusPlus,
        mut flows: Vec<Flow>,
        weights: Vec<u32>,
    ) -> Setup {
        let mean = params.load * params.capacity_bps;
        // The noise has a generator of its own: the flows stay the same
        // whatever the noise.
        let mut noise = Xoshiro256PlusPlus::seed_from_u64(params.seed ^ 0x006e_6f69_7365);
        let estimates = flows
            .iter()
            .map(|f| Demand {
                src: f.src,
                dst: f.dst,
                bps: (f.rate_bps + gaussian(&mut noise) * params.noise * mean).max(0.0),
            })
            .collect();
        let routers = converged(topo, &weights, &vec![true; topo.links.len()]);
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
            estimates,
        }
    }
}

/// A standard normal draw (Box-Muller).
fn gaussian(rng: &mut Xoshiro256PlusPlus) -> f64 {
    use rand::RngExt;
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// The links router `view`'s database has up: advertised by both ends.
fn links_in_view(topo: &Topology, view: &Router) -> Vec<bool> {
    let mut up = vec![false; topo.links.len()];
    for a in 0..topo.nodes.len() {
        let Some(lsa) = view.lsa(a) else { continue };
        for adj in &lsa.links {
            let back = view.lsa(adj.neighbour).is_some_and(|l| {
                l.links
                    .iter()
                    .any(|b| b.neighbour == a && b.link == adj.link)
            });
            if back {
                up[adj.link] = true;
            }
        }
    }
    up
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
    /// Malicious flows carried over a link, and not stopped by a filter,
    /// at some moment.
    pub malicious_leaked: usize,
    /// LSAs delivered (control messages).
    pub lsas: u64,
    /// SPF computations.
    pub spf_runs: u64,
    /// CONTRACT: approval requests the controller received.
    pub approval_requests: u64,
    /// CONTRACT: states the controller approved.
    pub approvals: u64,
    /// CONTRACT: approval messages delivered, hop by hop.
    pub approval_messages: u64,
    /// CONTRACT: filter configurations delivered.
    pub filter_configs: u64,
    /// CONTRACT: new weights the controller pushed.
    pub weight_pushes: u64,
    /// CONTRACT: how long after the failure the controller approved its
    /// last state (the time CONTRACT took to converge), µs.
    pub approved_after_us: Option<Micros>,
    /// CONTRACT: runs of the controller's DAGs committed (link weights,
    /// approval).
    pub dag_runs: [u64; 2],
    /// CONTRACT: wall-clock time in the controller's DAG runs (link
    /// weights, approval), µs: measured, so it differs between identical
    /// runs (everything else in an outcome does not).
    pub controller_us: [u64; 2],
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
    /// An approval request reaches the controller.
    AprReq {
        from: NodeId,
        fp: Fingerprint,
    },
    /// The controller's evaluation of state `fp` is done: its approval
    /// and filters go out, if it is still the controller's state.
    Evaluated {
        fp: Fingerprint,
        filters: Arc<FilterConfiguration>,
    },
    /// An approval reaches a router (over `link`, or at the controller's
    /// own).
    Approval {
        to: NodeId,
        link: Option<LinkId>,
        fp: Fingerprint,
    },
    /// A toggling link changes state.
    Toggle(LinkId),
    /// The controller stops.
    ControllerDown,
    /// The controller is back: it reads its router's database, and every
    /// router it reaches, seeing it in the IGP again, reports its state.
    ControllerUp,
    /// The controller's optimisation `generation` is done, unless a later
    /// one started.
    Optimised(u64),
    /// New link weights from the controller reach a router.
    Weights {
        to: NodeId,
        weights: Arc<Vec<u32>>,
    },
    /// The controller's filters for a router reach it.
    Filters {
        to: NodeId,
        filters: Vec<(Dir, FlowId)>,
        fp: Fingerprint,
    },
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
    mode: Mode,
    /// CONTRACT: each router's entries.
    entries: Vec<Entries>,
    /// CONTRACT: the controller's router, and its DAGs.
    controller: Driver,
    /// CONTRACT: per router, the approvals it has flooded on.
    approvals_seen: Vec<BTreeSet<Fingerprint>>,
    /// The smallest propagation delay between routers (the unicast
    /// messages' delay).
    unicast_us: Vec<Vec<Micros>>,
    adj: Vec<Vec<(NodeId, LinkId)>>,
    /// The link weights each router advertises its links with.
    weights: Vec<Arc<Vec<u32>>>,
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
    /// Each filter: a directed link, the flow it blocks, and the state
    /// it was made for.
    filters: BTreeMap<(Dir, FlowId), Fingerprint>,
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
    approval_messages: u64,
    filter_configs: u64,
}

/// The driver of CONTRACT's controller (Fig. 5.5's "Driver" boxes): the
/// router it is at, its DAGs ([`crate::controller`]), and what the
/// messages to and from it counted.
struct Driver {
    at: NodeId,
    /// Whether the controller runs (see [`Params::controller_outage_us`]).
    up: bool,
    dags: Controller,
    /// The state every router started in, approved.
    start: Fingerprint,
    requests: u64,
    approvals: u64,
    /// When it last approved a state.
    last_approval: Option<Micros>,
    /// Weights pushed.
    pushes: u64,
}

impl<'a> Sim<'a> {
    /// A converged network of `topo` carrying `setup`'s traffic, run in
    /// `mode`.
    pub fn new(topo: &'a Topology, params: &'a Params, setup: &Setup, mode: Mode) -> Sim<'a> {
        let n = topo.nodes.len();
        let routers = converged(topo, &setup.weights, &vec![true; topo.links.len()]);
        let start = Fingerprint::of(&routers[0]);
        let adj = topo.adjacency();
        let at = (0..n)
            .max_by_key(|&r| (adj[r].len(), Reverse(r)))
            .unwrap_or(0);
        let mut sim = Sim {
            topo,
            params,
            mode,
            entries: vec![Entries::approved(n, start); n],
            controller: Driver {
                at,
                up: true,
                dags: Controller::new(
                    Arc::new(topo.clone()),
                    params.optimiser,
                    params.budget_us * params.evaluations_per_s / 1_000_000,
                    params.seed,
                    params.filter_hop,
                    Start {
                        database: Database {
                            router: Arc::new(routers[at].clone()),
                            fp: start,
                        },
                        connectivity: vec![true; topo.links.len()],
                        demands: setup.estimates.clone(),
                        weights: setup.weights.clone(),
                        attacks: setup
                            .flows
                            .iter()
                            .enumerate()
                            .filter(|(_, f)| f.malicious)
                            .map(|(id, f)| (id, f.src, f.dst))
                            .collect(),
                        filters: setup
                            .filters
                            .iter()
                            .fold(BTreeMap::new(), |mut m, &(d, f)| {
                                m.entry(topo.tail(d)).or_insert_with(Vec::new).push((d, f));
                                m
                            }),
                        routers: n,
                    },
                ),
                start,
                requests: 0,
                approvals: 0,
                last_approval: None,
                pushes: 0,
            },
            approvals_seen: vec![BTreeSet::new(); n],
            unicast_us: min_propagation(topo),
            adj,
            // One vector, shared until the controller changes a router's.
            weights: std::iter::repeat_n(Arc::new(setup.weights.clone()), n).collect(),
            link_up: vec![true; topo.links.len()],
            node_up: vec![true; n],
            seq: vec![1; n],
            routers,
            spf_pending: vec![false; n],
            events: BinaryHeap::new(),
            scheduled: 0,
            now: 0,
            flows: setup.flows.clone(),
            filters: setup.filters.iter().map(|&k| (k, start)).collect(),
            paths: Vec::new(),
            plane: Plane::new(topo, params.buffer_us),
            measured: vec![FlowInterval::default(); setup.flows.len()],
            warm_up: vec![FlowInterval::default(); setup.flows.len()],
            delays: topo.links.iter().map(|l| l.delay_us).collect(),
            leaked: vec![false; setup.flows.len()],
            dirty: true,
            lsas: 0,
            spf_runs: 0,
            approval_messages: 0,
            filter_configs: 0,
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

    /// CONTRACT: router `n`'s entries' approval state.
    pub fn entries(&self, n: NodeId) -> &Entries {
        &self.entries[n]
    }

    /// CONTRACT: the largest sum of the approvals router `n` has
    /// received (the start's if none).
    pub fn approved_upto(&self, n: NodeId) -> u64 {
        let start = self.controller.start.seq_sum;
        let seen = self.approvals_seen[n].iter().map(|f| f.seq_sum).max();
        seen.unwrap_or(start).max(start)
    }

    /// CONTRACT: the router the controller is at.
    pub fn controller_at(&self) -> NodeId {
        self.controller.at
    }

    /// The filters in place: a directed link (held by the router it
    /// leaves) and the flow it blocks.
    pub fn filters(&self) -> impl Iterator<Item = (Dir, FlowId)> + '_ {
        self.filters.keys().copied()
    }

    /// The flows, best-effort first, then the malicious ones.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// CONTRACT: whether the controller runs now.
    pub fn controller_up(&self) -> bool {
        self.controller.up && self.node_up[self.controller.at]
    }

    /// The current simulated time.
    pub fn now(&self) -> Micros {
        self.now
    }

    /// Each link's weight, as its `a` end advertises it.
    pub fn weights(&self) -> Vec<u32> {
        self.topo
            .links
            .iter()
            .enumerate()
            .map(|(id, l)| self.weights[l.a][id])
            .collect()
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
        if let Failure::Link(l) = failure {
            for i in 1..u64::from(p.toggles) {
                self.schedule(p.failure_at_us + i * p.toggle_every_us, Kind::Toggle(l));
            }
        }
        if let Some((down, back)) = p.controller_outage_us {
            self.schedule(down, Kind::ControllerDown);
            self.schedule(back, Kind::ControllerUp);
        }
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
                        self.controller_heard(to);
                    }
                }
            }
            Kind::Spf(n) => {
                self.spf_pending[n] = false;
                if self.node_up[n] {
                    self.spf_runs += 1;
                    let changed = self.routers[n].spf();
                    if !changed.is_empty() {
                        self.dirty = true;
                    }
                    if self.mode == Mode::Contract {
                        self.adapt(n, &changed);
                    }
                }
            }
            Kind::AprReq { from, fp } => self.approval_request(from, fp),
            Kind::Optimised(g) => self.optimised(g),
            Kind::Toggle(l) => self.set_link(l, !self.link_up[l]),
            Kind::ControllerDown => self.controller.up = false,
            Kind::ControllerUp => self.controller_back(),
            Kind::Weights { to, weights } => {
                if self.node_up[to] {
                    self.weights[to] = weights;
                    self.originate(to);
                }
            }
            Kind::Evaluated { fp, filters } => self.evaluated(fp, &filters),
            Kind::Approval { to, link, fp } => {
                let alive = link.is_none_or(|l| self.link_up[l]) && self.node_up[to];
                if alive && self.approvals_seen[to].insert(fp) {
                    self.approval_messages += 1;
                    if self.entries[to].approve(fp) > 0 {
                        self.dirty = true;
                    }
                    self.flood_approval(to, fp, link);
                }
            }
            Kind::Filters { to, filters, fp } => {
                if self.node_up[to] {
                    self.filter_configs += 1;
                    self.install_filters(to, filters, fp);
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
            self.set_link(l, false);
        }
    }

    /// Link `l` goes up or down: its live ends notice and advertise it.
    fn set_link(&mut self, l: LinkId, up: bool) {
        self.link_up[l] = up;
        let link = self.topo.links[l];
        for end in [link.a, link.b] {
            if self.node_up[end] {
                self.schedule(self.now, Kind::Detect(end));
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
                weight: self.weights[n][link],
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
        self.controller_heard(n);
    }

    /// Router `n`'s database changed: if it is the controller's, its
    /// views change, and if the links up in it changed the top DAG runs
    /// when its budget from now is spent (Fig. 5.2, "on receiving new
    /// LSAs").
    fn controller_heard(&mut self, n: NodeId) {
        if self.mode != Mode::Contract || n != self.controller.at || !self.controller.up {
            return;
        }
        let view = links_in_view(self.topo, &self.routers[n]);
        if self.controller.dags.heard(&self.routers[n], view) && self.params.budget_us > 0 {
            let g = self.controller.dags.connectivity_version();
            self.schedule(self.now + self.params.budget_us, Kind::Optimised(g));
        }
    }

    /// The controller's optimisation for connectivity version
    /// `generation` (the top DAG): if it finds better weights, each
    /// router at a link whose weight changes gets them.
    fn optimised(&mut self, generation: u64) {
        let c = self.controller.at;
        let dags = &self.controller.dags;
        if generation != dags.connectivity_version() || !self.node_up[c] || !self.controller.up {
            return;
        }
        let before = dags.weights();
        let weights = match dags.optimise() {
            Ok(Some(w)) => w,
            Ok(None) => return,
            Err(e) => panic!("the link-weight DAG failed: {e}"),
        };
        let mut to: BTreeSet<NodeId> = BTreeSet::new();
        for (id, l) in self.topo.links.iter().enumerate() {
            if weights[id] != before.0[id] {
                to.insert(l.a);
                to.insert(l.b);
            }
        }
        self.controller.pushes += 1;
        let reachable = self.reachable(c);
        for r in to.into_iter().filter(|r| reachable[*r]) {
            let at = self.now + self.unicast_us[c][r];
            let weights = weights.clone();
            self.schedule(at, Kind::Weights { to: r, weights });
        }
    }

    /// The controller is back (Survivability, §5.3.3): it catches up with
    /// its router's database, and each router it reaches reports the
    /// state of its own.
    fn controller_back(&mut self) {
        let c = self.controller.at;
        if self.mode != Mode::Contract || !self.node_up[c] {
            return;
        }
        self.controller.up = true;
        self.controller_heard(c);
        let reachable = self.reachable(c);
        for r in (0..self.topo.nodes.len()).filter(|&r| reachable[r]) {
            let fp = Fingerprint::of(&self.routers[r]);
            let at = self.now + self.unicast_us[r][c];
            self.schedule(at, Kind::AprReq { from: r, fp });
        }
    }

    /// Sends `lsa` from `from` over its live links but `except`.
    fn flood(&mut self, from: NodeId, lsa: &Arc<Lsa>, except: Option<LinkId>) {
        let out = self.live_links(from, except);
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

    /// Router `from`'s live links to live routers, but `except`.
    fn live_links(&self, from: NodeId, except: Option<LinkId>) -> Vec<(NodeId, LinkId)> {
        self.adj[from]
            .iter()
            .copied()
            .filter(|&(m, l)| Some(l) != except && self.link_up[l] && self.node_up[m])
            .collect()
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
                // Carried over a link and not stopped by a filter (an
                // attack whose source has no route leaks nothing).
                if f.malicious && p.end != End::Filtered && !p.hops.is_empty() {
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
            if self.filters.contains_key(&(dir, f)) {
                break End::Filtered;
            }
            if !self.link_up[r.link] || !self.node_up[r.next] {
                break End::LinkDown;
            }
            let class = if self.entries[at].is_approved(flow.dst) {
                Class::Approved
            } else {
                Class::Unapproved
            };
            hops.push((dir, class));
            at = r.next;
        };
        Path { hops, end }
    }

    /// The routers connected to `a` by live links now (`a` too, if up).
    fn reachable(&self, a: NodeId) -> Vec<bool> {
        let mut seen = vec![false; self.topo.nodes.len()];
        let mut stack = vec![a];
        while let Some(n) = stack.pop() {
            if self.node_up[n] && !std::mem::replace(&mut seen[n], true) {
                stack.extend(
                    self.adj[n]
                        .iter()
                        .filter(|&&(_, l)| self.link_up[l])
                        .map(|&(m, _)| m),
                );
            }
        }
        seen
    }

    /// A unicast message from `a` to `b`: when it arrives, if they are
    /// connected now.
    fn unicast(&self, a: NodeId, b: NodeId) -> Option<Micros> {
        self.reachable(a)[b].then(|| self.now + self.unicast_us[a][b])
    }

    /// Fig. 5.1 after router `n`'s SPF: its changed entries unapproved,
    /// its filters moved with their traffic (Fig. 5.3), and an approval
    /// request to the controller.
    fn adapt(&mut self, n: NodeId, changed: &[NodeId]) {
        let fp = Fingerprint::of(&self.routers[n]);
        self.entries[n].changed(changed, fp);
        if self.adjust_filters(n) {
            self.dirty = true;
        }
        if let Some(at) = self.unicast(n, self.controller.at) {
            self.schedule(at, Kind::AprReq { from: n, fp });
        }
    }

    /// Fig. 5.3 for router `n`'s filters: each moved to where its
    /// traffic now arrives, by `n`'s database; whether one moved.
    fn adjust_filters(&mut self, n: NodeId) -> bool {
        let fp = Fingerprint::of(&self.routers[n]);
        let mine: Vec<(Dir, FlowId)> = self
            .filters
            .keys()
            .filter(|(d, _)| self.topo.tail(*d) == n)
            .copied()
            .collect();
        let mut moved = false;
        for (on, f) in mine {
            let flow = self.flows[f];
            let to = adjust_filter(self.topo, &self.routers[n], on, flow.src, flow.dst);
            if to != on {
                self.filters.remove(&(on, f));
                self.filters.insert((to, f), fp);
                moved = true;
            }
        }
        moved
    }

    /// Fig. 5.2, the controller on an approval request: the bottom DAG
    /// runs on it; if it approved the controller's state, the approval
    /// and the filters go out when the evaluation is done.
    fn approval_request(&mut self, from: NodeId, fp: Fingerprint) {
        let c = self.controller.at;
        if !self.node_up[c] || !self.controller.up {
            return;
        }
        self.controller.requests += 1;
        let reachable = self.reachable(c);
        match self.controller.dags.request(from, fp, reachable) {
            Ok(Some((fp, filters))) => {
                let at = self.now + self.params.evaluation_us;
                self.schedule(at, Kind::Evaluated { fp, filters });
            }
            Ok(None) => {}
            Err(e) => panic!("the approval DAG failed: {e}"),
        }
    }

    /// The evaluation of state `fp` is done: if it is still the
    /// controller's state, the approval is flooded from the controller's
    /// router and each router in `filters` gets its filters.
    fn evaluated(&mut self, fp: Fingerprint, filters: &FilterConfiguration) {
        let c = self.controller.at;
        if !self.node_up[c] || !self.controller.up || self.controller.dags.own() != fp {
            return;
        }
        self.controller.approvals += 1;
        self.controller.last_approval = Some(self.now);
        self.schedule(
            self.now,
            Kind::Approval {
                to: c,
                link: None,
                fp,
            },
        );
        let reachable = self.reachable(c);
        for (&to, list) in filters.by_router.iter().filter(|(to, _)| reachable[**to]) {
            let at = self.now + self.unicast_us[c][to];
            let filters = list.clone();
            self.schedule(at, Kind::Filters { to, filters, fp });
        }
    }

    /// Floods approval `fp` on from router `from` (reliably, hop by hop).
    fn flood_approval(&mut self, from: NodeId, fp: Fingerprint, except: Option<LinkId>) {
        let out = self.live_links(from, except);
        for (to, link) in out {
            let at = self.now + self.topo.links[link].delay_us + self.params.lsa_processing_us;
            self.schedule(
                at,
                Kind::Approval {
                    to,
                    link: Some(link),
                    fp,
                },
            );
        }
    }

    /// Fig. 5.4 at router `to`: its filters made for older states go, the
    /// controller's are installed, then adjusted to its own database.
    fn install_filters(&mut self, to: NodeId, filters: Vec<(Dir, FlowId)>, fp: Fingerprint) {
        let old: Vec<(Dir, FlowId)> = self
            .filters
            .iter()
            .filter(|((d, _), made)| self.topo.tail(*d) == to && made.seq_sum < fp.seq_sum)
            .map(|(&k, _)| k)
            .collect();
        for k in old {
            self.filters.remove(&k);
        }
        for k in filters {
            self.filters.insert(k, fp);
        }
        self.adjust_filters(to);
        self.dirty = true;
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
            approval_requests: self.controller.requests,
            approvals: self.controller.approvals,
            approval_messages: self.approval_messages,
            filter_configs: self.filter_configs,
            weight_pushes: self.controller.pushes,
            approved_after_us: self
                .controller
                .last_approval
                .map(|t| t.saturating_sub(self.params.failure_at_us)),
            dag_runs: self
                .controller
                .dags
                .dags()
                .map(|d| d.stats.commits.load(Relaxed)),
            controller_us: self.controller.dags.busy_us(),
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

/// One run in `mode` on `topo` with `failure`, from `setup`.
pub fn simulate(
    topo: &Topology,
    params: &Params,
    setup: &Setup,
    mode: Mode,
    failure: Failure,
) -> Outcome {
    Sim::new(topo, params, setup, mode).run(failure, |_| {})
}
