//! The applications in order (`Pipeline`): delivering each event to
//! them, and their life cycle while switches stay connected.
//!
//! Beacon §4 starts and stops applications at run time through OSGi; here
//! it is a flag per application and a generation number:
//! - a stopped (or failed) application gets no events, timers or view
//!   changes; starting it again calls its `start` and, on each connected
//!   switch, its `switch_up`;
//! - each connection remembers the pipeline generation it last matched;
//!   when the generation moves (an application stopped or started), the
//!   next service of the switch hands a stopped application's state back
//!   (`switch_down`) and makes a started one's (`switch_up`);
//! - every call into an application runs under `catch_unwind`: an
//!   application that panics is logged, marked failed with its message,
//!   and stopped, and the controller and every switch carry on (the
//!   runtime's locks ignore poisoning for that reason).

use crate::app::{AnyApp, Verdict};
use crate::conn::{AppSwitchState, Connection};
use crate::context::{BatchSwitches, RawBatch, SwitchCtx};
use crate::env::{Change, Snapshot, pinned};
use crate::event::PacketInRecord;
use crate::network::Network;
use crate::session::PortChange;
use crate::switch::SwitchInfo;
use crate::sync::lock;
use baton_openflow::neutral::Message;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Where an application stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// Getting events.
    Running,
    /// Stopped by the operator.
    Stopped,
    /// Stopped because it panicked; the panic's message.
    Failed(String),
}

/// An application's standing, for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct AppStatus {
    /// Its name.
    pub name: String,
    /// Its life cycle.
    pub lifecycle: Lifecycle,
    /// How many times it panicked.
    pub panics: u64,
    /// The top 16 bits of its flows' cookies.
    pub cookie_tag: u16,
    /// The views it reads.
    pub reads: Vec<&'static str>,
    /// The views it writes.
    pub writes: Vec<&'static str>,
    /// Its counters ([`crate::App::counters`]).
    pub counters: Vec<(&'static str, u64)>,
    /// Its settings ([`AnyApp::settings`]).
    pub settings: serde_json::Value,
}

struct Entry {
    app: AnyApp,
    net: Network,
    running: AtomicBool,
    lifecycle: Mutex<Lifecycle>,
    panics: AtomicU64,
}

/// The applications, in pipeline order, each with its own handle on the
/// network (which tags the flows it installs with its cookie).
pub(crate) struct Pipeline {
    apps: Vec<Entry>,
    /// Moves each time an application stops or starts.
    generation: AtomicU64,
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

impl Pipeline {
    pub fn new(apps: Vec<AnyApp>, net: &Network) -> Pipeline {
        let apps = apps
            .into_iter()
            .map(|a| {
                let own = net.for_app(a.name(), a.cookie_tag(), a.erased().views());
                Entry {
                    app: a,
                    net: own,
                    running: AtomicBool::new(true),
                    lifecycle: Mutex::new(Lifecycle::Running),
                    panics: AtomicU64::new(0),
                }
            })
            .collect();
        Pipeline {
            apps,
            generation: AtomicU64::new(0),
        }
    }

    /// Each application's standing, in order.
    pub fn status(&self) -> Vec<AppStatus> {
        self.apps
            .iter()
            .map(|e| {
                let access = e.app.erased().views();
                AppStatus {
                    name: e.app.name().to_string(),
                    lifecycle: lock(&e.lifecycle).clone(),
                    panics: e.panics.load(Ordering::Relaxed),
                    cookie_tag: e.app.cookie_tag(),
                    reads: access.read_views().iter().map(|v| v.name()).collect(),
                    writes: access.written_views().iter().map(|v| v.name()).collect(),
                    counters: e.app.erased().counters(),
                    settings: e.app.settings(),
                }
            })
            .collect()
    }

    /// The position of the application called `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.apps.iter().position(|e| e.app.name() == name)
    }

    /// The DAGs the applications bring ([`crate::App::dags`]), each
    /// marked with its application.
    pub fn dags(&self) -> Vec<crate::dag::Dag> {
        self.apps
            .iter()
            .flat_map(|e| {
                let owner = e.app.name().to_string();
                e.app
                    .erased()
                    .dags()
                    .into_iter()
                    .map(move |d| d.owned_by(&owner))
            })
            .collect()
    }

    /// Whether the application called `name` gets events.
    pub fn runs(&self, name: &str) -> bool {
        self.find(name).is_some_and(|i| self.is_running(i))
    }

    /// The first application of type `A`.
    pub fn typed<A: crate::App>(&self) -> Option<std::sync::Arc<A>> {
        self.apps.iter().find_map(|e| e.app.downcast::<A>())
    }

    /// Application `i`'s own network handle.
    pub fn net(&self, i: usize) -> &Network {
        &self.apps[i].net
    }

    /// The generation connections compare theirs with.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Calls into application `i` if it is running; a panic marks it
    /// failed and stops it.
    fn call<R>(&self, i: usize, f: impl FnOnce(&AnyApp, &Network) -> R) -> Option<R> {
        let e = &self.apps[i];
        if !e.running.load(Ordering::Acquire) {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(|| f(&e.app, &e.net))) {
            Ok(r) => Some(r),
            Err(payload) => {
                let msg = panic_message(&*payload);
                tracing::error!(app = e.app.name(), panic = %msg, "application panicked; stopped");
                e.panics.fetch_add(1, Ordering::Relaxed);
                self.halt(i, Lifecycle::Failed(msg));
                None
            }
        }
    }

    /// Stops application `i` with `why`.
    fn halt(&self, i: usize, why: Lifecycle) {
        let e = &self.apps[i];
        e.running.store(false, Ordering::Release);
        *lock(&e.lifecycle) = why;
        e.net.stop_timers();
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Stops application `i` (the operator's request); false if it was not
    /// running.
    pub fn stop(&self, i: usize) -> bool {
        if !self.apps[i].running.load(Ordering::Acquire) {
            return false;
        }
        tracing::info!(app = self.apps[i].app.name(), "application stopped");
        self.halt(i, Lifecycle::Stopped);
        true
    }

    /// Changes application `i`'s settings ([`AnyApp::configure`]), running
    /// or not; a panic is the application's failure, as anywhere. The error
    /// says why in words, for the operator.
    pub fn configure(&self, i: usize, changes: &serde_json::Value) -> Result<(), String> {
        let e = &self.apps[i];
        match catch_unwind(AssertUnwindSafe(|| e.app.configure(changes))) {
            Ok(Ok(())) => {
                tracing::info!(app = e.app.name(), %changes, "application settings changed");
                Ok(())
            }
            Ok(Err(why)) => Err(why.to_string()),
            Err(payload) => {
                let msg = panic_message(&*payload);
                tracing::error!(app = e.app.name(), panic = %msg, "application panicked; stopped");
                e.panics.fetch_add(1, Ordering::Relaxed);
                self.halt(i, Lifecycle::Failed(msg.clone()));
                Err(format!("the application panicked: {msg}"))
            }
        }
    }

    /// Starts application `i` again; false if it was running.
    pub fn start_again(&self, i: usize) -> bool {
        let e = &self.apps[i];
        if e.running.swap(true, Ordering::AcqRel) {
            return false;
        }
        *lock(&e.lifecycle) = Lifecycle::Running;
        tracing::info!(app = e.app.name(), "application started");
        self.call(i, |app, net| app.erased().start(net));
        self.generation.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// Starts every application, in order.
    pub fn start(&self) {
        for i in 0..self.apps.len() {
            tracing::info!(app = self.apps[i].app.name(), "application started");
            self.call(i, |app, net| app.erased().start(net));
        }
    }

    /// Makes every connected switch's application states be checked again
    /// at its next batch ([`Pipeline::reconcile`]): whether this instance
    /// serves a switch changed.
    pub fn touch(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Brings a connected switch's application states in line with which
    /// applications run, and whether this instance serves the switch
    /// (`serves`, [`crate::Mastership::serves`]): a state back from each
    /// stopped one (or from every one, when it no longer serves it), a new
    /// one from each that started since.
    pub fn reconcile(&self, conn: &mut Connection, serves: bool) {
        let generation = self.generation();
        if conn.generation == generation {
            return;
        }
        conn.generation = generation;
        if conn.session.features().is_none() {
            return;
        }
        conn.states.resize_with(self.apps.len(), || None);
        let info = conn.info();
        for i in 0..self.apps.len() {
            let e = &self.apps[i];
            let running = serves && e.running.load(Ordering::Acquire);
            match (running, conn.states[i].is_some()) {
                (true, false) => {
                    let state = self.call(i, |app, net| {
                        app.erased().switch_up(&mut SwitchCtx::new(conn, net))
                    });
                    conn.states[i] = state;
                    let live: Vec<PortChange> = conn
                        .session
                        .ports()
                        .filter(|p| p.is_live())
                        .map(|p| PortChange::Up(p.clone()))
                        .collect();
                    self.ports_of(i, conn, &live);
                }
                (false, true) => {
                    let state = conn.states[i].take();
                    // A failed application is not called again.
                    if !matches!(*lock(&e.lifecycle), Lifecycle::Failed(_)) {
                        if let Some(state) = state {
                            let _ = catch_unwind(AssertUnwindSafe(|| {
                                e.app.erased().switch_down(&info, state)
                            }));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Hands `changes` to each application that reads a changed view, in
    /// pipeline order, with the environment as it is now.
    pub fn views_changed(&self, snapshot: &Snapshot, changes: &[Change]) {
        for i in 0..self.apps.len() {
            let Some(access) = self.apps[i].net.access() else {
                continue;
            };
            let mine: Vec<Change> = changes
                .iter()
                .filter(|c| access.does_read(c.view))
                .copied()
                .collect();
            if !mine.is_empty() {
                self.call(i, |app, net| {
                    app.erased().view_changed(net, snapshot, &mine)
                });
            }
        }
    }

    /// A switch came up: each running application makes its state for it,
    /// then hears of each port already known to be live (1.0 lists them in
    /// FEATURES_REPLY).
    pub fn switch_up(&self, conn: &mut Connection) {
        conn.generation = self.generation();
        conn.states = (0..self.apps.len()).map(|_| None).collect();
        for i in 0..self.apps.len() {
            let state = self.call(i, |app, net| {
                app.erased().switch_up(&mut SwitchCtx::new(conn, net))
            });
            conn.states[i] = state;
        }
        let live: Vec<PortChange> = conn
            .session
            .ports()
            .filter(|p| p.is_live())
            .map(|p| PortChange::Up(p.clone()))
            .collect();
        self.ports(conn, &live);
    }

    /// A switch came up that this instance does not serve (a cluster's
    /// slave): no application hears of it until [`Pipeline::reconcile`]
    /// finds it served.
    pub fn switch_unserved(&self, conn: &mut Connection) {
        conn.generation = self.generation();
        conn.states = (0..self.apps.len()).map(|_| None).collect();
    }

    /// Ports went up or down: each application hears of each change.
    pub fn ports(&self, conn: &mut Connection, changes: &[PortChange]) {
        for i in 0..self.apps.len() {
            self.ports_of(i, conn, changes);
        }
    }

    /// Whether application `i` gets events.
    fn is_running(&self, i: usize) -> bool {
        self.apps[i].running.load(Ordering::Acquire)
    }

    fn ports_of(&self, i: usize, conn: &mut Connection, changes: &[PortChange]) {
        for change in changes {
            if !self.is_running(i) {
                return;
            }
            let Some(mut state) = conn.states.get_mut(i).and_then(Option::take) else {
                return;
            };
            let done = self.call(i, |app, net| {
                app.erased()
                    .port(&mut SwitchCtx::new(conn, net), &mut *state, change)
            });
            if done.is_some() {
                conn.states[i] = Some(state);
            }
        }
    }

    /// A switch went down: each running application gets its state back.
    pub fn switch_down(&self, info: &SwitchInfo, states: Vec<AppSwitchState>) {
        for (i, state) in states.into_iter().enumerate() {
            if let Some(state) = state {
                self.call(i, |app, _| app.erased().switch_down(info, state));
            }
        }
    }

    /// Hands `records` to each running application in turn, until every
    /// one of them has been stopped.
    pub fn packet_ins(&self, switches: &mut dyn BatchSwitches, records: &[PacketInRecord]) {
        self.one_event(|| {
            for app in 0..self.apps.len() {
                if records.iter().all(|r| r.stopped.get()) {
                    break;
                }
                self.call(app, |a, net| {
                    a.erased().packet_in(RawBatch {
                        switches: &mut *switches,
                        records,
                        app,
                        net,
                    })
                });
            }
        })
    }

    /// Runs `f`, which hands one event to the applications in turn, with
    /// one picture of the environment for all of them
    /// ([`crate::env::pinned`]): what an application lets pass, the next
    /// acts on knowing what it knew.
    fn one_event<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.apps.first() {
            Some(e) => pinned::during(e.net.env(), f),
            None => f(),
        }
    }

    /// Hands a message to each running application in turn, until one
    /// stops it.
    pub fn message(&self, conn: &mut Connection, msg: &Message) {
        self.one_event(|| self.message_in_turn(conn, msg))
    }

    fn message_in_turn(&self, conn: &mut Connection, msg: &Message) {
        for i in 0..self.apps.len() {
            if !self.is_running(i) {
                continue;
            }
            // Out of the connection while the handler borrows the rest.
            let Some(mut state) = conn.states.get_mut(i).and_then(Option::take) else {
                continue;
            };
            let verdict = self.call(i, |app, net| {
                app.erased()
                    .message(&mut SwitchCtx::new(conn, net), &mut *state, msg)
            });
            // `None`: it panicked, and its state for this switch goes with
            // it.
            if let Some(v) = verdict {
                conn.states[i] = Some(state);
                if v == Verdict::Stop {
                    break;
                }
            }
        }
    }
}
