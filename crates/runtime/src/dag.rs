//! Application DAGs (Maestro thesis §3.2.4-3.2.5): applications composed
//! in a directed acyclic graph, each reading its input views and writing
//! its output views, run on a local environment and committed at the end.
//!
//! - A [`Dag`] names its applications ([`DagApp`]), the order they run in
//!   (edges; branches allowed), and what triggers it ([`Trigger`]). Its
//!   read set and write set are the unions of its applications' input and
//!   output views ([`crate::env::ViewAccess`]).
//! - A run ([`Dags::run`]) takes a snapshot of the global environment as
//!   its local environment: every application of the DAG that reads a view
//!   sees the same version of it, whatever is published meanwhile
//!   (§3.2.5), and an application's outputs are the inputs of those after
//!   it. Applications whose predecessors are done run together, on scoped
//!   threads (the branches of Fig. 3.1's DAG 3). At the end the outputs are
//!   published to the global environment in one step and the messages the
//!   applications queued go to the switches; a failed or panicking
//!   application aborts the run and neither happens.
//! - Concurrency control is at the granularity of views, as the thesis
//!   does it: before a run starts, [`Dags`] checks read/write and
//!   write/write conflicts with the runs in progress and queues a
//!   conflicting one until they finish; others start at once. A view
//!   written outside any DAG (an application publishing on its own) can
//!   still change under a run: the commit then finds a version it read no
//!   longer current and runs the DAG again on the new one (optimistic
//!   validation, as a transaction does), a bounded number of times. When
//!   the last of those runs is stale too, and only views that trigger the
//!   DAG changed under it, that run commits anyway (a *late commit*): it
//!   read one consistent snapshot, and the newer versions have already
//!   queued the run that brings it up to date. Without this, a DAG whose
//!   inputs change faster than it runs would never commit: measured,
//!   `routing` with 10,000 switches learning hosts gave up every run for
//!   ten minutes, so no host got a route.

use crate::env::{Change, Environment, Publish, Snapshot, View, ViewAccess, ViewId};
use crate::network::Network;
use crate::switch::{SwitchId, SwitchInfo};
use crate::sync::lock;
use std::any::Any;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How many times a run is repeated when a view it read was changed
/// outside any DAG before it could commit.
const RERUNS: u32 = 3;

/// How many times an optimistic run is repeated when another DAG changed
/// a view it read or writes ([`Concurrency::Optimistic`]).
const OPTIMISTIC_RERUNS: u32 = 1000;

/// How runs of conflicting DAGs are kept apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Concurrency {
    /// A run waits while a conflicting DAG runs (Maestro thesis §3.2.4).
    #[default]
    Queue,
    /// Every run starts at once; its commit checks that no view it read
    /// or writes changed meanwhile and reruns it otherwise.
    Optimistic,
}

/// An application in a DAG: a computation from its input views to its
/// output views.
pub trait DagApp: Send + Sync {
    /// Its name, unique in the DAG.
    fn name(&self) -> &str;

    /// The views it reads and writes.
    fn views(&self) -> ViewAccess;

    /// Computes its outputs from its inputs in `local`; an error aborts
    /// the DAG's run.
    fn run(&self, local: &mut Local<'_>) -> Result<(), String>;

    /// The run whose last attempt called [`DagApp::run`] committed, and its
    /// messages were sent: the moment to keep what the application
    /// remembers between runs (what it last acted on). A run that is
    /// thrown away or repeated never gets here, so state kept only here
    /// never runs ahead of what the switches were told.
    fn committed(&self) {}
}

/// What starts a DAG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// A new version of any of these views (a driver's event: switch up
    /// or down, port status, packet in).
    Views(Vec<ViewId>),
    /// Every period.
    Every(Duration),
}

/// The local environment as one application of a run sees it.
pub struct Local<'a> {
    snapshot: &'a Snapshot,
    /// Outputs of the applications before this one.
    upstream: &'a Publish,
    access: ViewAccess,
    app: &'a str,
    switches: &'a Switches<'a>,
    writes: Publish,
    outbox: Outbox,
}

impl Local<'_> {
    /// View `T` as this run sees it: an earlier application's output, or
    /// the version in the run's snapshot. `None` if it does not exist, or
    /// the application did not declare it reads it.
    pub fn read<T: View>(&self) -> Option<Arc<T>> {
        let id = ViewId::of::<T>();
        if !self.access.does_read(id) {
            return None;
        }
        if let Some(v) = self.writes.get(id).or_else(|| self.upstream.get(id)) {
            return v.clone().downcast::<T>().ok();
        }
        self.snapshot.get::<T>().map(|v| v.arc().clone())
    }

    /// The version of view `T` in the run's snapshot (0 if never
    /// published).
    pub fn version<T: View>(&self) -> u64 {
        self.snapshot.version::<T>()
    }

    /// Writes view `T`, for the applications after this one and for the
    /// commit; an error if the application did not declare it writes it.
    pub fn write<T: View>(&mut self, value: T) -> Result<(), String> {
        if !self.access.does_write(ViewId::of::<T>()) {
            return Err(format!(
                "application {} wrote view {} without declaring it",
                self.app,
                T::NAME
            ));
        }
        self.writes.set(value);
        Ok(())
    }

    /// The switches connected when an application of the run first
    /// asked (their ids, datapath ids and versions), to address and
    /// encode messages.
    pub fn switches(&self) -> &[SwitchInfo] {
        self.switches.get()
    }

    /// Queues one message for switch `id`, which `encode` appends (whole)
    /// to the switch's output: sent when the run commits, dropped if it
    /// does not.
    pub fn send(&mut self, id: SwitchId, encode: impl FnOnce(&mut Vec<u8>)) {
        encode(self.outbox.to.entry(id).or_default());
        self.outbox.messages += 1;
    }
}

/// The switches a run's applications address, listed when one first asks:
/// most runs send nothing, and listing 10,000 switches at every run took
/// a third of the DAG thread while a MAC flood aged out (BENCHMARKS.md).
struct Switches<'a> {
    list: &'a (dyn Fn() -> Vec<SwitchInfo> + Sync),
    listed: OnceLock<Vec<SwitchInfo>>,
}

impl Switches<'_> {
    fn get(&self) -> &[SwitchInfo] {
        self.listed.get_or_init(self.list)
    }
}

/// Why a DAG could not be built or did not commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DagError {
    /// An edge names an application the DAG does not have.
    UnknownApp(String),
    /// Two applications have the same name.
    DuplicateApp(String),
    /// The edges form a cycle through this application.
    Cycle(String),
    /// Two applications that may run at once write the same view.
    ConcurrentWrites {
        /// The view.
        view: &'static str,
        /// The two applications.
        apps: (String, String),
    },
    /// An application failed; nothing was committed.
    Failed {
        /// Which.
        app: String,
        /// What it said (or the panic's message).
        error: String,
    },
    /// Every run found a view it read changed outside any DAG.
    Stale {
        /// Runs made.
        runs: u32,
    },
}

impl fmt::Display for DagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DagError::UnknownApp(a) => write!(f, "an edge names {a}, which is not in the DAG"),
            DagError::DuplicateApp(a) => write!(f, "application {a} is in the DAG twice"),
            DagError::Cycle(a) => write!(f, "the edges form a cycle through {a}"),
            DagError::ConcurrentWrites { view, apps } => write!(
                f,
                "{} and {} may run at once and both write view {view}",
                apps.0, apps.1
            ),
            DagError::Failed { app, error } => write!(f, "application {app} failed: {error}"),
            DagError::Stale { runs } => write!(
                f,
                "gave up after {runs} runs: views it read kept changing outside any DAG"
            ),
        }
    }
}

impl std::error::Error for DagError {}

/// A DAG's figures, for the operator.
#[derive(Debug, Default)]
pub struct DagStats {
    /// Runs started (reruns included).
    pub runs: AtomicU64,
    /// Runs committed.
    pub commits: AtomicU64,
    /// Times it waited for a conflicting DAG to finish.
    pub conflicts: AtomicU64,
    /// Runs repeated because a view read changed outside any DAG.
    pub reruns: AtomicU64,
    /// Runs committed although views that trigger it had changed since
    /// they were read (the module docs' late commits).
    pub late_commits: AtomicU64,
    /// Runs aborted by a failed application.
    pub aborts: AtomicU64,
    /// The last committed run's duration, microseconds.
    pub last_us: AtomicU64,
}

/// A DAG as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DagStatus {
    /// Its name.
    pub name: String,
    /// Its applications, stage by stage: those of one stage run together,
    /// after every earlier stage.
    pub stages: Vec<Vec<String>>,
    /// What starts it: `views: a, b` or `every 1s`.
    pub trigger: String,
    /// The views it reads.
    pub reads: Vec<&'static str>,
    /// The views it writes.
    pub writes: Vec<&'static str>,
    /// Runs started (reruns included).
    pub runs: u64,
    /// Runs committed.
    pub commits: u64,
    /// Times it waited for a conflicting DAG to finish.
    pub conflicts: u64,
    /// Runs repeated because a view read changed outside any DAG.
    pub reruns: u64,
    /// Runs committed although views that trigger it had changed since
    /// they were read (a newer run follows).
    pub late_commits: u64,
    /// Runs aborted by a failed application.
    pub aborts: u64,
    /// The last committed run's duration, microseconds (0 before one).
    pub last_us: u64,
}

/// A validated DAG.
pub struct Dag {
    name: String,
    apps: Vec<Arc<dyn DagApp>>,
    /// Application indices by stage: every application's predecessors are
    /// in earlier stages; one stage's applications run together.
    stages: Vec<Vec<usize>>,
    trigger: Trigger,
    read_ids: Vec<ViewId>,
    write_ids: Vec<ViewId>,
    /// The application that brought it ([`crate::App::dags`]): it runs
    /// only while that one does.
    owner: Option<String>,
    /// Its figures.
    pub stats: DagStats,
}

impl Dag {
    /// A DAG of `apps`, where `(a, b)` in `edges` says `a` runs before
    /// `b` (by name).
    pub fn new(
        name: &str,
        apps: Vec<Arc<dyn DagApp>>,
        edges: &[(&str, &str)],
        trigger: Trigger,
    ) -> Result<Dag, DagError> {
        let index = |n: &str| {
            apps.iter()
                .position(|a| a.name() == n)
                .ok_or_else(|| DagError::UnknownApp(n.to_string()))
        };
        let mut seen = HashSet::new();
        for a in &apps {
            if !seen.insert(a.name()) {
                return Err(DagError::DuplicateApp(a.name().to_string()));
            }
        }
        let mut preds = vec![Vec::new(); apps.len()];
        for &(a, b) in edges {
            preds[index(b)?].push(index(a)?);
        }
        let stages = stages(&preds).map_err(|i| DagError::Cycle(apps[i].name().to_string()))?;
        let access: Vec<ViewAccess> = apps.iter().map(|a| a.views()).collect();
        check_concurrent_writes(&apps, &access, &preds)?;
        let mut read_ids = Vec::new();
        let mut write_ids = Vec::new();
        for a in &access {
            for &id in a.read_views() {
                if !read_ids.contains(&id) {
                    read_ids.push(id);
                }
            }
            for &id in a.written_views() {
                if !write_ids.contains(&id) {
                    write_ids.push(id);
                }
            }
        }
        Ok(Dag {
            name: name.to_string(),
            apps,
            stages,
            trigger,
            read_ids,
            write_ids,
            owner: None,
            stats: DagStats::default(),
        })
    }

    /// The DAG as application `app` brings it: it runs only while `app`
    /// does.
    pub(crate) fn owned_by(mut self, app: &str) -> Dag {
        self.owner = Some(app.to_string());
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What starts it.
    pub fn trigger(&self) -> &Trigger {
        &self.trigger
    }

    /// Its standing, for the operator.
    pub fn status(&self) -> DagStatus {
        let s = &self.stats;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        DagStatus {
            name: self.name.clone(),
            stages: self
                .stages
                .iter()
                .map(|stage| {
                    stage
                        .iter()
                        .map(|&i| self.apps[i].name().to_string())
                        .collect()
                })
                .collect(),
            trigger: match &self.trigger {
                Trigger::Views(views) => {
                    let names: Vec<&str> = views.iter().map(|v| v.name()).collect();
                    format!("views: {}", names.join(", "))
                }
                Trigger::Every(period) => format!("every {period:?}"),
            },
            reads: self.read_ids.iter().map(|v| v.name()).collect(),
            writes: self.write_ids.iter().map(|v| v.name()).collect(),
            runs: get(&s.runs),
            commits: get(&s.commits),
            conflicts: get(&s.conflicts),
            reruns: get(&s.reruns),
            late_commits: get(&s.late_commits),
            aborts: get(&s.aborts),
            last_us: get(&s.last_us),
        }
    }

    /// The views it reads: the union of its applications' inputs.
    pub fn read_set(&self) -> &[ViewId] {
        &self.read_ids
    }

    /// The views it writes: the union of its applications' outputs.
    pub fn write_set(&self) -> &[ViewId] {
        &self.write_ids
    }

    /// Whether every view of `reads` whose version `env` has moved past
    /// is one that triggers it: then the newer versions run it again.
    fn runs_again_after(&self, reads: &[(ViewId, u64)], env: &Environment) -> bool {
        let Trigger::Views(views) = &self.trigger else {
            return false;
        };
        let now = env.snapshot();
        reads
            .iter()
            .filter(|&&(id, version)| now.version_of(id) != version)
            .all(|(id, _)| views.contains(id))
    }

    /// Whether `changes` include a view that triggers it.
    pub fn triggered_by(&self, changes: &[Change]) -> bool {
        match &self.trigger {
            Trigger::Views(views) => changes.iter().any(|c| views.contains(&c.view)),
            Trigger::Every(_) => false,
        }
    }

    /// Whether it and `other` may not run at once: one writes a view the
    /// other reads or writes.
    fn conflicts_with(&self, other: &Dag) -> bool {
        let writes_into = |a: &Dag, b: &Dag| {
            a.write_ids
                .iter()
                .any(|w| b.read_ids.contains(w) || b.write_ids.contains(w))
        };
        writes_into(self, other) || writes_into(other, self)
    }

    /// One run on `snapshot`: the outputs and the messages, or the first
    /// failure.
    fn execute(
        &self,
        snapshot: &Snapshot,
        switches: &Switches<'_>,
    ) -> Result<(Publish, Outbox), DagError> {
        let mut outputs = Publish::new();
        let mut outbox = Outbox::default();
        for stage in &self.stages {
            let results: Vec<Result<(Publish, Outbox), DagError>> = if stage.len() == 1 {
                vec![self.run_app(stage[0], snapshot, switches, &outputs)]
            } else {
                std::thread::scope(|s| {
                    let handles: Vec<_> = stage
                        .iter()
                        .map(|&i| {
                            let outputs = &outputs;
                            s.spawn(move || self.run_app(i, snapshot, switches, outputs))
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|e| Err(panicked("a branch", &e))))
                        .collect()
                })
            };
            for r in results {
                let (writes, msgs) = r?;
                outputs.merge(writes);
                outbox.append(msgs);
            }
        }
        Ok((outputs, outbox))
    }

    fn run_app(
        &self,
        i: usize,
        snapshot: &Snapshot,
        switches: &Switches<'_>,
        upstream: &Publish,
    ) -> Result<(Publish, Outbox), DagError> {
        let app = &self.apps[i];
        let mut local = Local {
            snapshot,
            upstream,
            access: app.views(),
            app: app.name(),
            switches,
            writes: Publish::new(),
            outbox: Outbox::default(),
        };
        match catch_unwind(AssertUnwindSafe(|| app.run(&mut local))) {
            Ok(Ok(())) => Ok((local.writes, local.outbox)),
            Ok(Err(error)) => Err(DagError::Failed {
                app: app.name().to_string(),
                error,
            }),
            Err(e) => Err(panicked(app.name(), &e)),
        }
    }
}

impl fmt::Debug for Dag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dag")
            .field("name", &self.name)
            .field(
                "apps",
                &self.apps.iter().map(|a| a.name()).collect::<Vec<_>>(),
            )
            .field("reads", &self.read_ids)
            .field("writes", &self.write_ids)
            .finish()
    }
}

/// The messages a run queued: one buffer per switch, written with one
/// `send` when the run commits ("write once per batch per switch"):
/// message by message, `route-flow`'s deletions of a MAC flood aging out
/// (hundreds of thousands of hosts in one sweep) were as many allocations
/// and `write` calls (BENCHMARKS.md, "A 10-minute soak").
#[derive(Default)]
struct Outbox {
    to: BTreeMap<SwitchId, Vec<u8>>,
    messages: usize,
}

impl Outbox {
    /// Adds `later`'s messages after this one's, switch by switch.
    fn append(&mut self, later: Outbox) {
        for (id, bytes) in later.to {
            match self.to.entry(id) {
                Entry::Vacant(e) => {
                    e.insert(bytes);
                }
                Entry::Occupied(mut e) => e.get_mut().extend_from_slice(&bytes),
            }
        }
        self.messages += later.messages;
    }
}

fn panicked(app: &str, e: &Box<dyn Any + Send>) -> DagError {
    let error = e
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panicked".to_string());
    DagError::Failed {
        app: app.to_string(),
        error: format!("panicked: {error}"),
    }
}

/// Application indices by stage (Kahn's algorithm, stage by stage), or an
/// application on a cycle.
fn stages(preds: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, usize> {
    let mut stage_of: Vec<Option<usize>> = vec![None; preds.len()];
    let mut stages = Vec::new();
    let mut placed = 0;
    while placed < preds.len() {
        let ready: Vec<usize> = (0..preds.len())
            .filter(|&i| stage_of[i].is_none())
            .filter(|&i| preds[i].iter().all(|&p| stage_of[p].is_some()))
            .collect();
        if ready.is_empty() {
            return Err((0..preds.len())
                .find(|&i| stage_of[i].is_none())
                .unwrap_or(0));
        }
        for &i in &ready {
            stage_of[i] = Some(stages.len());
        }
        placed += ready.len();
        stages.push(ready);
    }
    Ok(stages)
}

/// Refuses two applications that may run at once (neither before the
/// other) and write the same view: which output the commit would keep
/// would be a race.
fn check_concurrent_writes(
    apps: &[Arc<dyn DagApp>],
    access: &[ViewAccess],
    preds: &[Vec<usize>],
) -> Result<(), DagError> {
    // before[i][j]: i runs before j.
    let n = apps.len();
    let mut before = vec![vec![false; n]; n];
    fn mark(j: usize, p: usize, preds: &[Vec<usize>], before: &mut [Vec<bool>]) {
        if !before[p][j] {
            before[p][j] = true;
            for &q in &preds[p] {
                mark(j, q, preds, before);
            }
        }
    }
    for j in 0..n {
        for &p in &preds[j] {
            mark(j, p, preds, &mut before);
        }
    }
    for i in 0..n {
        for j in i + 1..n {
            if before[i][j] || before[j][i] {
                continue;
            }
            if let Some(&view) = access[i]
                .written_views()
                .iter()
                .find(|v| access[j].does_write(**v))
            {
                return Err(DagError::ConcurrentWrites {
                    view: view.name(),
                    apps: (apps[i].name().to_string(), apps[j].name().to_string()),
                });
            }
        }
    }
    Ok(())
}

/// What a committed run published and sent.
#[derive(Debug)]
pub struct DagRun {
    /// The views it published.
    pub changes: Vec<Change>,
    /// Messages it sent.
    pub messages: usize,
    /// Runs it took (1 unless a view it read changed outside any DAG).
    pub runs: u32,
    /// Whether it waited for a conflicting DAG first.
    pub waited: bool,
}

/// The DAGs in progress, for concurrency control between them.
#[derive(Default)]
pub struct Dags {
    mode: Concurrency,
    running: Mutex<Vec<Arc<Dag>>>,
    finished: Condvar,
}

impl Dags {
    /// Runs kept apart by `mode`.
    pub fn new(mode: Concurrency) -> Dags {
        Dags {
            mode,
            ..Dags::default()
        }
    }

    /// Runs `dag` once on `env`: waits while a conflicting DAG runs, runs
    /// it on a snapshot (its applications see the switches `switches`
    /// lists, if they ask), commits its outputs, and hands its messages
    /// to `send`.
    pub fn run(
        &self,
        dag: &Arc<Dag>,
        env: &Environment,
        switches: impl Fn() -> Vec<SwitchInfo> + Sync,
        mut send: impl FnMut(SwitchId, &[u8]),
    ) -> Result<DagRun, DagError> {
        let switches = Switches {
            list: &switches,
            listed: OnceLock::new(),
        };
        let switches = &switches;
        if self.mode == Concurrency::Optimistic {
            return self.run_admitted(dag, env, switches, &mut send);
        }
        let waited = self.admit(dag);
        let result = self.run_admitted(dag, env, switches, &mut send);
        let mut running = lock(&self.running);
        if let Some(k) = running.iter().position(|d| Arc::ptr_eq(d, dag)) {
            running.swap_remove(k);
        }
        drop(running);
        self.finished.notify_all();
        result.map(|mut r| {
            r.waited = waited;
            r
        })
    }

    /// Waits until no running DAG conflicts with `dag`, then marks it
    /// running; true if it had to wait.
    fn admit(&self, dag: &Arc<Dag>) -> bool {
        let mut running = lock(&self.running);
        let mut waited = false;
        while running.iter().any(|d| d.conflicts_with(dag)) {
            if !waited {
                dag.stats.conflicts.fetch_add(1, Ordering::Relaxed);
                waited = true;
            }
            running = self
                .finished
                .wait(running)
                .unwrap_or_else(|e| e.into_inner());
        }
        running.push(dag.clone());
        waited
    }

    fn run_admitted(
        &self,
        dag: &Dag,
        env: &Environment,
        switches: &Switches<'_>,
        send: &mut dyn FnMut(SwitchId, &[u8]),
    ) -> Result<DagRun, DagError> {
        let stats = &dag.stats;
        let (reruns, checked): (u32, &[ViewId]) = match self.mode {
            Concurrency::Queue => (RERUNS, &[]),
            Concurrency::Optimistic => (OPTIMISTIC_RERUNS, &dag.write_ids),
        };
        for run in 1..=reruns {
            let started = Instant::now();
            stats.runs.fetch_add(1, Ordering::Relaxed);
            let snapshot = env.snapshot();
            let (outputs, outbox) = dag.execute(&snapshot, switches).inspect_err(|_| {
                stats.aborts.fetch_add(1, Ordering::Relaxed);
            })?;
            let reads: Vec<(ViewId, u64)> = dag
                .read_ids
                .iter()
                .chain(checked)
                .map(|&id| (id, snapshot.version_of(id)))
                .collect();
            let last = run == reruns && self.mode == Concurrency::Queue;
            let committed = env.commit_if_current(&reads, outputs).or_else(|writes| {
                if last && dag.runs_again_after(&reads, env) {
                    stats.late_commits.fetch_add(1, Ordering::Relaxed);
                    env.commit_if_current(&[], writes)
                } else {
                    Err(writes)
                }
            });
            match committed {
                Ok(changes) => {
                    for (id, bytes) in &outbox.to {
                        send(*id, bytes);
                    }
                    for app in &dag.apps {
                        if let Err(e) = catch_unwind(AssertUnwindSafe(|| app.committed())) {
                            let e = panicked(app.name(), &e);
                            tracing::error!(dag = %dag.name, error = %e, "after the commit");
                        }
                    }
                    stats.commits.fetch_add(1, Ordering::Relaxed);
                    stats
                        .last_us
                        .store(started.elapsed().as_micros() as u64, Ordering::Relaxed);
                    return Ok(DagRun {
                        changes,
                        messages: outbox.messages,
                        runs: run,
                        waited: false,
                    });
                }
                Err(_) => {
                    stats.reruns.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Err(DagError::Stale { runs: reruns })
    }
}

/// The DAGs to run: the applications' own (`own`, [`crate::App::dags`])
/// and those `given` (the configuration's), a given one replacing an own
/// one of the same name.
pub(crate) fn merged(own: Vec<Dag>, given: Vec<Dag>) -> Vec<Dag> {
    let mut all: Vec<Dag> = own
        .into_iter()
        .filter(|d| given.iter().all(|g| g.name != d.name))
        .collect();
    all.extend(given);
    all
}

/// The DAGs of one controller: run when their trigger fires, with the
/// concurrency control of [`Dags`].
#[derive(Default)]
pub struct DagSet {
    dags: Vec<Arc<Dag>>,
    runs: Arc<Dags>,
}

impl DagSet {
    /// These DAGs.
    pub fn new(dags: Vec<Dag>) -> DagSet {
        DagSet {
            dags: dags.into_iter().map(Arc::new).collect(),
            runs: Arc::default(),
        }
    }

    /// The DAGs, for the operator.
    pub fn dags(&self) -> &[Arc<Dag>] {
        &self.dags
    }

    /// Runs every DAG that `changes` trigger, together (each waits only
    /// for those it conflicts with), sending their messages through
    /// `net`; a DAG an application brought only if `runs` says that
    /// application runs. Their own commits are new changes, which the
    /// caller hands back here (routing's output view triggers the flows'
    /// DAG).
    pub fn on_changes(&self, net: &Network, changes: &[Change], runs: impl Fn(&str) -> bool) {
        let due: Vec<&Arc<Dag>> = self
            .dags
            .iter()
            .filter(|d| d.triggered_by(changes))
            .filter(|d| d.owner.as_deref().is_none_or(&runs))
            .collect();
        match due[..] {
            [] => {}
            [dag] => run_logged(&self.runs, dag, net),
            _ => std::thread::scope(|s| {
                for dag in due {
                    s.spawn(|| run_logged(&self.runs, dag, net));
                }
            }),
        }
    }

    /// Starts the timers of the DAGs triggered every period.
    pub fn start_timers(&self, net: &Network) {
        for dag in &self.dags {
            if let Trigger::Every(period) = dag.trigger {
                let (dag, runs) = (dag.clone(), self.runs.clone());
                net.every(&format!("dag {}", dag.name), period, move |net| {
                    run_logged(&runs, &dag, net)
                });
            }
        }
    }
}

/// Runs `dag` once, its messages sent through `net`; a failure is logged
/// (and counted in its figures).
fn run_logged(runs: &Dags, dag: &Arc<Dag>, net: &Network) {
    let sent = runs.run(
        dag,
        net.env(),
        || net.switches(),
        |id, bytes| {
            if let Err(e) = net.send(id, bytes) {
                tracing::debug!(dag = %dag.name, switch = %id, error = %e, "DAG message not sent");
            }
        },
    );
    if let Err(e) = sent {
        tracing::warn!(dag = %dag.name, error = %e, "DAG run not committed");
    }
}

#[cfg(test)]
mod tests;
