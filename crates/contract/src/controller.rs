//! CONTRACT's controller as baton applications composed in the thesis's
//! two DAGs (Maestro thesis §5.3.4, Fig. 5.5), run on baton's DAG runtime
//! ([`baton_runtime::dag`]) over views in an environment of their own.
//!
//! - **Top DAG**, triggered by [`Connectivity`]: [`LinkWeightOptimization`]
//!   looks for better link weights for the links the controller's
//!   database has up and its [`TrafficMatrix`], within a budget of
//!   evaluations, and writes [`LinkWeights`] only if fewer flows are
//!   expected to lose (Fig. 5.2, "on receiving new LSAs").
//! - **Bottom DAG**, triggered by [`ApprovalRequests`]:
//!   [`GlobalObjectiveEvaluation`] approves the controller's own state
//!   once every router it reaches reports that state's fingerprint
//!   ([`Approval`]); [`FilterControl`] then places a filter for every
//!   attack on the path the approved state gives it
//!   ([`FilterConfiguration`]) (Fig. 5.2, "on receiving approval
//!   requests").
//!
//! The simulator ([`crate::sim`]) is the driver of Fig. 5.5: it publishes
//! what the controller's router learns (its [`Database`], the links up in
//! it, the requests), runs a DAG when its computation would finish in
//! simulated time (an optimisation its budget after the change, an
//! approval its evaluation time after the request), and turns the views
//! the run committed into messages to the routers. The environment
//! serialises the runs and gives the two applications of the bottom DAG
//! one consistent set of inputs, which is what the thesis relies on the
//! framework for.
//!
//! The thesis leaves open when a consistent state "should be approved";
//! this controller approves every consistent state (the routers already
//! forward by it, and holding the approval keeps their traffic in the low
//! class), and acts on the objective through the link weights.

use crate::coord::{Fingerprint, path_in_view};
use crate::igp::Router;
use crate::optimize::{Demand, Objective, Optimiser};
use crate::topo::{Dir, NodeId, Topology};
use crate::traffic::FlowId;
use baton_runtime::dag::{Concurrency, Dag, DagApp, Dags, Local, Trigger};
use baton_runtime::env::{Environment, View, ViewAccess};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// The controller's router's link-state database and its fingerprint.
#[derive(Debug)]
pub struct Database {
    /// The database (the controller takes part in the IGP as a router).
    pub router: Arc<Router>,
    /// Its fingerprint (Fig. 5.1).
    pub fp: Fingerprint,
}

impl View for Database {
    const NAME: &'static str = "contract-database";
}

/// The links up in the controller's database, by link: Fig. 5.5's
/// "Connectivity". A new version only when one of them changes.
#[derive(Debug)]
pub struct Connectivity(pub Vec<bool>);

impl View for Connectivity {
    const NAME: &'static str = "contract-connectivity";
}

/// The controller's traffic matrix: the best-effort demands as it
/// believes them.
#[derive(Debug)]
pub struct TrafficMatrix(pub Vec<Demand>);

impl View for TrafficMatrix {
    const NAME: &'static str = "contract-traffic-matrix";
}

/// The link weights the controller decided, by link: Fig. 5.5's "Link
/// weights".
#[derive(Debug)]
pub struct LinkWeights(pub Vec<u32>);

impl View for LinkWeights {
    const NAME: &'static str = "contract-link-weights";
}

/// The attacks the controller blocks: each malicious flow's id, source
/// and destination.
#[derive(Debug)]
pub struct Attacks(pub Vec<(FlowId, NodeId, NodeId)>);

impl View for Attacks {
    const NAME: &'static str = "contract-attacks";
}

/// Fig. 5.5's "Approval request": the fingerprint each router last
/// reported, and the routers the controller can reach now.
#[derive(Debug)]
pub struct ApprovalRequests {
    /// By router: its last reported fingerprint.
    pub table: Vec<Option<Fingerprint>>,
    /// By router: whether the controller reaches it.
    pub reachable: Vec<bool>,
}

impl View for ApprovalRequests {
    const NAME: &'static str = "contract-approval-requests";
}

/// The state the controller last approved: Fig. 5.5's "Approval".
#[derive(Debug)]
pub struct Approval(pub Fingerprint);

impl View for Approval {
    const NAME: &'static str = "contract-approval";
}

/// Fig. 5.5's "Filter configuration": the filters each router should
/// hold for the approved state `fp`. Every router ever given filters has
/// an entry (empty if it should now hold none), so that it drops those
/// made for older states (Fig. 5.4).
#[derive(Debug)]
pub struct FilterConfiguration {
    /// The state they are made for.
    pub fp: Fingerprint,
    /// By router: the directed links (leaving it) and the flows they
    /// block.
    pub by_router: BTreeMap<NodeId, Vec<(Dir, FlowId)>>,
}

impl View for FilterConfiguration {
    const NAME: &'static str = "contract-filter-configuration";
}

/// The top DAG's application: better link weights for the links up and
/// the traffic matrix, from the current ones, in a budget of evaluations.
pub struct LinkWeightOptimization {
    /// The network.
    pub topo: Arc<Topology>,
    /// The search.
    pub optimiser: Optimiser,
    /// Evaluations per run.
    pub evaluations: u64,
    /// The seed of a randomised search (mixed with the connectivity's
    /// version).
    pub seed: u64,
}

impl DagApp for LinkWeightOptimization {
    fn name(&self) -> &str {
        "LinkWeightOptimization"
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<Connectivity>()
            .reads::<TrafficMatrix>()
            .reads::<LinkWeights>()
            .writes::<LinkWeights>()
    }

    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let up = local.read::<Connectivity>().ok_or("no connectivity")?;
        let demands = local.read::<TrafficMatrix>().ok_or("no traffic matrix")?;
        let weights = local.read::<LinkWeights>().ok_or("no link weights")?;
        let mut obj = Objective::new(&self.topo, &up.0, &demands.0);
        let now = obj.score(&weights.0);
        // The first connectivity is version 1; the changes count from 1.
        let generation = local.version::<Connectivity>().saturating_sub(1);
        let (best, found) = self.optimiser.run(
            &mut obj,
            &weights.0,
            self.evaluations,
            self.seed ^ generation,
        );
        // New weights move traffic again, through the IGP's transient
        // loops: only worth it if fewer flows are expected to lose.
        if found.lossy < now.lossy {
            local.write(LinkWeights(best))?;
        }
        Ok(())
    }
}

/// The bottom DAG's first application: the controller's own state is
/// approved once every router it reaches reports that state, unless it
/// is approved already.
pub struct GlobalObjectiveEvaluation;

impl DagApp for GlobalObjectiveEvaluation {
    fn name(&self) -> &str {
        "GlobalObjectiveEvaluation"
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<ApprovalRequests>()
            .reads::<Database>()
            .reads::<Approval>()
            .writes::<Approval>()
    }

    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let requests = local.read::<ApprovalRequests>().ok_or("no requests")?;
        let own = local.read::<Database>().ok_or("no database")?.fp;
        let approved = local.read::<Approval>().ok_or("no approval")?.0;
        let consistent = requests
            .table
            .iter()
            .zip(&requests.reachable)
            .all(|(fp, reached)| !reached || *fp == Some(own));
        if consistent && approved != own {
            local.write(Approval(own))?;
        }
        Ok(())
    }
}

/// The bottom DAG's second application: for a new approval, each attack
/// blocked at its filter hop on the path the approved database gives
/// it, held by the router that link leaves (an outbound filter).
pub struct FilterControl {
    /// The network.
    pub topo: Arc<Topology>,
    /// The hop that holds a flow's filter, from 1 at its source.
    pub filter_hop: usize,
}

impl DagApp for FilterControl {
    fn name(&self) -> &str {
        "FilterControl"
    }

    fn views(&self) -> ViewAccess {
        ViewAccess::none()
            .reads::<Approval>()
            .reads::<Database>()
            .reads::<Attacks>()
            .reads::<FilterConfiguration>()
            .writes::<FilterConfiguration>()
    }

    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let approved = local.read::<Approval>().ok_or("no approval")?.0;
        let last = local
            .read::<FilterConfiguration>()
            .ok_or("no filter configuration")?;
        if last.fp == approved {
            return Ok(());
        }
        let db = local.read::<Database>().ok_or("no database")?;
        if db.fp != approved {
            return Err("the approved state is not the controller's".into());
        }
        let attacks = local.read::<Attacks>().ok_or("no attacks")?;
        let mut by_router: BTreeMap<NodeId, Vec<(Dir, FlowId)>> =
            last.by_router.keys().map(|&r| (r, Vec::new())).collect();
        for &(f, src, dst) in &attacks.0 {
            let path = path_in_view(&self.topo, &db.router, src, dst);
            if let Some(&d) = path.get(self.filter_hop - 1).or(path.last()) {
                by_router.entry(self.topo.tail(d)).or_default().push((d, f));
            }
        }
        local.write(FilterConfiguration {
            fp: approved,
            by_router,
        })
    }
}

/// The controller: its environment and its two DAGs.
pub struct Controller {
    env: Environment,
    runs: Dags,
    link_weights: Arc<Dag>,
    approval: Arc<Dag>,
    /// Wall-clock time in each DAG's runs, µs.
    busy_us: [Cell<u64>; 2],
}

/// What the controller starts from.
pub struct Start {
    /// The controller's router's database.
    pub database: Database,
    /// The links up.
    pub connectivity: Vec<bool>,
    /// Its traffic matrix.
    pub demands: Vec<Demand>,
    /// The link weights the routers use.
    pub weights: Vec<u32>,
    /// The attacks.
    pub attacks: Vec<(FlowId, NodeId, NodeId)>,
    /// The filters in place, made for the approved state
    /// (`database.fp`).
    pub filters: BTreeMap<NodeId, Vec<(Dir, FlowId)>>,
    /// Routers.
    pub routers: usize,
}

/// Why a DAG's run did not commit.
pub type Failed = baton_runtime::dag::DagError;

impl Controller {
    /// A controller for `topo` whose optimisation runs `optimiser` for
    /// `evaluations` per change, with the views of `start`.
    pub fn new(
        topo: Arc<Topology>,
        optimiser: Optimiser,
        evaluations: u64,
        seed: u64,
        filter_hop: usize,
        start: Start,
    ) -> Controller {
        let link_weights = Dag::new(
            "link-weights",
            vec![Arc::new(LinkWeightOptimization {
                topo: topo.clone(),
                optimiser,
                evaluations,
                seed,
            })],
            &[],
            Trigger::Views(vec![baton_runtime::env::ViewId::of::<Connectivity>()]),
        )
        .expect("one application");
        let approval = Dag::new(
            "approval",
            vec![
                Arc::new(GlobalObjectiveEvaluation),
                Arc::new(FilterControl { topo, filter_hop }),
            ],
            &[("GlobalObjectiveEvaluation", "FilterControl")],
            Trigger::Views(vec![baton_runtime::env::ViewId::of::<ApprovalRequests>()]),
        )
        .expect("a chain of two");
        let env = Environment::default();
        let fp = start.database.fp;
        env.atomically(1, |tx| {
            tx.write(Database {
                router: start.database.router.clone(),
                fp,
            });
            tx.write(Connectivity(start.connectivity.clone()));
            tx.write(TrafficMatrix(start.demands.clone()));
            tx.write(LinkWeights(start.weights.clone()));
            tx.write(Attacks(start.attacks.clone()));
            tx.write(ApprovalRequests {
                table: vec![Some(fp); start.routers],
                reachable: vec![true; start.routers],
            });
            tx.write(Approval(fp));
            tx.write(FilterConfiguration {
                fp,
                by_router: start.filters.clone(),
            });
            Ok::<_, ()>(())
        })
        .expect("a fresh environment takes the first versions");
        Controller {
            env,
            runs: Dags::new(Concurrency::Queue),
            link_weights: Arc::new(link_weights),
            approval: Arc::new(approval),
            busy_us: Default::default(),
        }
    }

    /// The DAGs, for their statistics.
    pub fn dags(&self) -> [&Arc<Dag>; 2] {
        [&self.link_weights, &self.approval]
    }

    /// Wall-clock time in each DAG's runs so far (link weights,
    /// approval), µs.
    pub fn busy_us(&self) -> [u64; 2] {
        [self.busy_us[0].get(), self.busy_us[1].get()]
    }

    /// Runs DAG `which` (0: link weights, 1: approval), timed.
    fn run(&self, which: usize) -> Result<(), Failed> {
        let dag = [&self.link_weights, &self.approval][which];
        let t0 = Instant::now();
        let r = self.runs.run(dag, &self.env, Vec::new, |_, _| {});
        let cell = &self.busy_us[which];
        cell.set(cell.get() + t0.elapsed().as_micros() as u64);
        r.map(|_| ())
    }

    /// The controller's router's database changed: a new [`Database`],
    /// and a new [`Connectivity`] if the links up in it changed; whether
    /// they did (the top DAG's trigger).
    pub fn heard(&self, router: &Router, links_up: Vec<bool>) -> bool {
        let changed = self
            .env
            .read::<Connectivity>()
            .is_none_or(|c| c.arc().0 != links_up);
        let router = Arc::new(router.clone());
        let fp = Fingerprint::of(&router);
        self.publish(|tx| {
            tx.write(Database {
                router: router.clone(),
                fp,
            });
            if changed {
                tx.write(Connectivity(links_up.clone()));
            }
        });
        changed
    }

    /// The version of [`Connectivity`]: which change of connectivity an
    /// optimisation is for.
    pub fn connectivity_version(&self) -> u64 {
        self.env.read::<Connectivity>().map_or(0, |c| c.version())
    }

    /// The top DAG: the new link weights, if it found better ones.
    pub fn optimise(&self) -> Result<Option<Arc<Vec<u32>>>, Failed> {
        let before = self.env.read::<LinkWeights>().map_or(0, |w| w.version());
        self.run(0)?;
        Ok(self
            .env
            .read::<LinkWeights>()
            .filter(|w| w.version() != before)
            .map(|w| Arc::new(w.arc().0.clone())))
    }

    /// The weights the controller decided.
    pub fn weights(&self) -> Arc<LinkWeights> {
        self.env
            .read::<LinkWeights>()
            .expect("published at the start")
            .arc()
            .clone()
    }

    /// An approval request from router `from` for state `fp`, with the
    /// routers the controller reaches now: the bottom DAG, and the state
    /// it approved with its filter configuration, if it approved one.
    pub fn request(
        &self,
        from: NodeId,
        fp: Fingerprint,
        reachable: Vec<bool>,
    ) -> Result<Option<(Fingerprint, Arc<FilterConfiguration>)>, Failed> {
        let mut table = self
            .env
            .read::<ApprovalRequests>()
            .expect("published at the start")
            .arc()
            .table
            .clone();
        table[from] = Some(fp);
        self.publish(|tx| {
            tx.write(ApprovalRequests {
                table: table.clone(),
                reachable: reachable.clone(),
            })
        });
        let before = self.env.read::<Approval>().map_or(0, |a| a.version());
        self.run(1)?;
        let approval = self.env.read::<Approval>().expect("published at the start");
        if approval.version() == before {
            return Ok(None);
        }
        let filters = self
            .env
            .read::<FilterConfiguration>()
            .expect("published at the start");
        Ok(Some((approval.arc().0, filters.arc().clone())))
    }

    /// The controller's own state now.
    pub fn own(&self) -> Fingerprint {
        self.env.read::<Database>().expect("published").arc().fp
    }

    fn publish(&self, write: impl Fn(&mut baton_runtime::env::Transaction)) {
        self.env
            .atomically(1, |tx| {
                write(tx);
                Ok::<_, ()>(())
            })
            .expect("the driver is the only writer outside the DAGs");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::igp::{Adjacency, Lsa, converged};
    use crate::topo::Link;

    fn ring() -> Arc<Topology> {
        let link = |a, b| Link {
            a,
            b,
            capacity_bps: 1e6,
            delay_us: 1_000,
        };
        Arc::new(Topology {
            name: "ring".into(),
            nodes: (0..4).map(|i| format!("r{i}")).collect(),
            links: vec![link(0, 1), link(1, 2), link(2, 3), link(3, 0)],
        })
    }

    /// A controller at router 0 of the ring, with one attack from 0 to
    /// 2 filtered on its first hop (held by router 0), and router 3
    /// once given filters too.
    fn controller(topo: &Arc<Topology>, demands: Vec<Demand>) -> (Controller, Router) {
        let up = vec![true; topo.links.len()];
        let routers = converged(topo, &[1; 4], &up);
        let router = routers[0].clone();
        let fp = Fingerprint::of(&router);
        let first = path_in_view(topo, &router, 0, 2)[0];
        let start = Start {
            database: Database {
                router: Arc::new(router.clone()),
                fp,
            },
            connectivity: up,
            demands,
            weights: vec![1; 4],
            attacks: vec![(7, 0, 2)],
            filters: BTreeMap::from([(0, vec![(first, 7)]), (3, Vec::new())]),
            routers: 4,
        };
        let c = Controller::new(topo.clone(), Optimiser::LocalSearch, 200, 1, 1, start);
        (c, router)
    }

    /// Router 0's database after link `l` failed: router 0 and the
    /// link's other end advertise without it.
    fn without(topo: &Topology, mut router: Router, l: usize) -> Router {
        let link = topo.links[l];
        for end in [link.a, link.b] {
            let seq = router.lsa(end).map_or(1, |x| x.seq) + 1;
            let links = topo
                .adjacency()
                .into_iter()
                .nth(end)
                .unwrap_or_default()
                .into_iter()
                .filter(|&(_, id)| id != l)
                .map(|(neighbour, link)| Adjacency {
                    neighbour,
                    link,
                    weight: 1,
                })
                .collect();
            router.install(Arc::new(Lsa {
                origin: end,
                seq,
                links,
            }));
        }
        router.spf();
        router
    }

    #[test]
    fn a_state_is_approved_once_every_reachable_router_reports_it_and_only_once() {
        let topo = ring();
        let (c, router) = controller(&topo, Vec::new());
        let after = without(&topo, router, 1);
        assert!(c.heard(&after, vec![true, false, true, true]));
        let own = Fingerprint::of(&after);
        assert_eq!(c.own(), own);
        let all = vec![true; 4];
        for r in 0..3 {
            assert!(c.request(r, own, all.clone()).expect("runs").is_none());
        }
        // Router 3 reports an older state: still not consistent.
        let old = c.request(
            3,
            Fingerprint::of(&converged(&topo, &[1; 4], &[true; 4])[3]),
            all,
        );
        assert!(old.expect("runs").is_none());
        // Router 3 cannot be reached: the rest agree, so it is approved.
        let reach = vec![true, true, true, false];
        let (fp, filters) = c
            .request(1, own, reach.clone())
            .expect("runs")
            .expect("approved");
        assert_eq!(fp, own);
        assert_eq!(filters.fp, own);
        // Approved already: a repeated request approves nothing.
        assert!(c.request(2, own, reach).expect("runs").is_none());
        let [_, approval] = c.dags();
        assert_eq!(
            approval
                .stats
                .commits
                .load(std::sync::atomic::Ordering::Relaxed),
            6
        );
    }

    #[test]
    fn filters_follow_the_approved_paths_and_former_holders_are_told_to_drop_theirs() {
        let topo = ring();
        let (c, router) = controller(&topo, Vec::new());
        // Cut the attack's first hop: its path from 0 to 2 leaves 0 by
        // the other link.
        let first = path_in_view(&topo, &router, 0, 2)[0];
        let after = without(&topo, router, first.link());
        c.heard(&after, (0..4).map(|l| l != first.link()).collect());
        let own = c.own();
        let mut approved = None;
        for r in 0..4 {
            approved = c.request(r, own, vec![true; 4]).expect("runs");
        }
        let (_, filters) = approved.expect("approved once all four report");
        let now = path_in_view(&topo, &after, 0, 2)[0];
        assert_ne!(now, first);
        assert_eq!(filters.by_router.get(&0), Some(&vec![(now, 7)]));
        assert_eq!(filters.by_router.get(&3), Some(&Vec::new()));
        assert_eq!(filters.by_router.len(), 2);
    }

    #[test]
    fn weights_change_only_when_fewer_flows_are_expected_to_lose() {
        let topo = ring();
        // Nothing to lose: no weights are better.
        let (c, router) = controller(&topo, Vec::new());
        c.heard(
            &without(&topo, router.clone(), 1),
            vec![true, false, true, true],
        );
        assert_eq!(c.optimise().expect("runs"), None);
        // 0.8 Mb/s from 0 to 1 and from 0 to 3: with link 3-0 heavy, the
        // second goes round by 1 and both overload link 0-1.
        let demands = vec![
            Demand {
                src: 0,
                dst: 1,
                bps: 0.8e6,
            },
            Demand {
                src: 0,
                dst: 3,
                bps: 0.8e6,
            },
        ];
        let heavy = [1, 1, 1, 20];
        let (c, _) = controller(&topo, demands.clone());
        c.publish(|tx| tx.write(LinkWeights(heavy.to_vec())));
        let mut obj = Objective::new(&topo, &[true; 4], &demands);
        assert_eq!(obj.score(&heavy).lossy, 2);
        let found = c.optimise().expect("runs").expect("better weights");
        assert!(obj.score(&found).lossy < 2);
        assert_eq!(c.weights().0, *found);
    }
}
