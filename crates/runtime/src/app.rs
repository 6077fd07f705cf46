//! The application API: what an application implements ([`App`]) and how
//! any application joins a pipeline ([`AnyApp`]).
//!
//! The model combines the three papers:
//! - **Beacon** §3 (listeners): applications form an ordered pipeline;
//!   each sees an event after the ones before it, and may consume it
//!   ([`crate::PacketIn::stop`], [`Verdict::Stop`]) so later applications
//!   do not see it.
//! - **Maestro** §3.3: packet-ins arrive in *batches*, possibly from
//!   several switches; within a batch each switch's events are in arrival
//!   order.
//! - **McNettle** §4: each application keeps *switch-local* state
//!   ([`App::Switch`]), mutated without locks because only one worker
//!   serves a switch at a time; state shared by all switches is the
//!   application's own field, with whatever synchronisation it chooses;
//!   background threads and timers send to any switch through
//!   [`crate::Network`].

use crate::context::{PacketInBatch, RawBatch, SwitchCtx};
use crate::env::{Change, Snapshot, ViewAccess};
use crate::network::Network;
use crate::session::PortChange;
use crate::switch::SwitchInfo;
use baton_openflow::neutral::{Message, PortDesc};
use std::any::Any;
use std::sync::Arc;

/// Whether later applications in the pipeline see a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Pass it on.
    Continue,
    /// Consume it.
    Stop,
}

/// An application. Only [`App::name`] and [`App::switch_up`] must be
/// written; every other handler does nothing unless overridden.
///
/// One instance serves every switch and every worker thread at once, hence
/// `Send + Sync`: keep what belongs to one switch in [`App::Switch`], and
/// what switches share behind the synchronisation of your choice.
pub trait App: Send + Sync + 'static {
    /// This application's state for one switch, made by
    /// [`App::switch_up`] and handed back with every event of the switch
    /// (`()` for none).
    type Switch: Send + 'static;

    /// A short name, used in logs and on the command line.
    fn name(&self) -> &str;

    /// Called once when the runtime starts, with a handle for background
    /// threads and timers.
    fn start(&self, _net: &Network) {}

    /// The views of the environment this application reads and writes
    /// ([`crate::env`]): it may publish only those it writes, and
    /// [`App::view_changed`] tells it of new versions of those it reads.
    fn views(&self) -> ViewAccess {
        ViewAccess::none()
    }

    /// Views it reads moved to new versions (`changes`; `snapshot` is the
    /// environment as it is now). Called on the runtime's view thread, off
    /// the packet-in path, once for any number of changes that happened
    /// together.
    fn view_changed(&self, _net: &Network, _snapshot: &Snapshot, _changes: &[Change]) {}

    /// The application DAGs it brings ([`crate::dag`]): run by the runtime
    /// when their trigger fires, while the application runs (`routing`
    /// computes its routes and follows them with its flows this way).
    fn dags(&self) -> Vec<crate::dag::Dag> {
        Vec::new()
    }

    /// The stages it offers for DAGs the operator declares
    /// (`[dag.NAME]` in the configuration file): fresh instances, named
    /// as in its own DAGs. A declared DAG named like one of the
    /// application's own replaces it.
    fn dag_apps(&self) -> Vec<std::sync::Arc<dyn crate::dag::DagApp>> {
        Vec::new()
    }

    /// A switch finished its handshake: make its state. Messages sent
    /// through `sw` go to the switch with the rest of the batch.
    ///
    /// In a cluster ([`crate::Mastership`]) this comes when this instance
    /// becomes the switch's master, and `switch_down` when it stops being
    /// it: an application serves only the switches its instance masters.
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) -> Self::Switch;

    /// A switch disconnected; its state is handed back for the last time.
    fn switch_down(&self, _sw: &SwitchInfo, _state: Self::Switch) {}

    /// A port became live: every live port of a switch once it is up (on
    /// 1.3 when its port description arrives), then whenever a port is
    /// added or comes back (link up, admin up, unblocked).
    fn port_up(&self, _sw: &mut SwitchCtx<'_>, _state: &mut Self::Switch, _port: &PortDesc) {}

    /// A live port went down (link down, admin down, blocked) or was
    /// removed.
    fn port_down(&self, _sw: &mut SwitchCtx<'_>, _state: &mut Self::Switch, _port: &PortDesc) {}

    /// A batch of PACKET_INs (see [`PacketInBatch::for_each`]). Every
    /// application handling the batch reads the same views through
    /// [`Network::snapshot`] and [`Network::view`] (with what the batch's
    /// own applications publish), whatever other threads publish
    /// meanwhile.
    fn packet_in(&self, _batch: &mut PacketInBatch<'_, Self::Switch>) {}

    /// Any other message from a switch after its handshake (PORT_STATUS,
    /// FLOW_REMOVED, ERROR, statistics replies, ...), decoded.
    fn message(
        &self,
        _sw: &mut SwitchCtx<'_>,
        _state: &mut Self::Switch,
        _msg: &Message,
    ) -> Verdict {
        Verdict::Continue
    }

    /// Named counts of what it has done (probes sent, hosts learnt, ...),
    /// for the operator, who sees them beside its life cycle.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// The settings the operator may read and change, if it has any:
    /// from the configuration file before it starts, from the API while it
    /// runs. An application keeps them typed (`baton_apps::settings`
    /// holds a serde struct behind an atomic pointer) and hands them out
    /// here; [`AnyApp::configure`] does the rest, the same for all.
    fn settings(&self) -> Option<&dyn Configurable> {
        None
    }
}

/// An application's settings as the operator sees them: one JSON object,
/// a value per key. Written once for every settings struct
/// (`baton_apps::settings::Settings`), not per application.
pub trait Configurable: Send + Sync {
    /// The settings now, as a JSON object.
    fn json(&self) -> serde_json::Value;

    /// Replaces them all with `next`, an object of every key: converted to
    /// the application's own type and checked, then swapped in whole, or,
    /// with an error, left as they were.
    fn replace(&self, next: serde_json::Value) -> Result<(), SettingsError>;
}

/// Why a change of settings was refused: nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// The changes are not a JSON object; what was given.
    NotAnObject(String),
    /// A key the application does not have.
    UnknownKey {
        /// The key given.
        key: String,
        /// The keys it has (none for an application without settings).
        known: Vec<String>,
    },
    /// A value the key does not take.
    Invalid {
        /// The key.
        key: String,
        /// What it must be (`must be at least 1`), or the type it takes
        /// (`invalid type: string "high", expected u16`).
        expected: String,
    },
}

impl SettingsError {
    /// `key`'s value is not what it must be: `expected` says what is.
    pub fn invalid(key: impl Into<String>, expected: impl Into<String>) -> SettingsError {
        SettingsError::Invalid {
            key: key.into(),
            expected: expected.into(),
        }
    }

    /// The key at fault, if one is.
    pub fn key(&self) -> Option<&str> {
        match self {
            SettingsError::NotAnObject(_) => None,
            SettingsError::UnknownKey { key, .. } | SettingsError::Invalid { key, .. } => Some(key),
        }
    }
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::NotAnObject(given) => {
                write!(f, "settings must be an object, not {given}")
            }
            SettingsError::UnknownKey { key, known } if known.is_empty() => {
                write!(f, "unknown setting {key:?}: it has none")
            }
            SettingsError::UnknownKey { key, known } => write!(
                f,
                "unknown setting {key:?}; the settings are: {}",
                known.join(", ")
            ),
            SettingsError::Invalid { key, expected } => write!(f, "setting {key:?}: {expected}"),
        }
    }
}

impl std::error::Error for SettingsError {}

/// Applies `changes`, a JSON object of some of the keys of `settings`
/// (`None`: an application without settings, which takes only `{}`): the
/// current object with those keys overwritten replaces the settings whole.
fn merge(
    settings: Option<&dyn Configurable>,
    changes: &serde_json::Value,
) -> Result<(), SettingsError> {
    use serde_json::Value;
    let Value::Object(changes) = changes else {
        return Err(SettingsError::NotAnObject(changes.to_string()));
    };
    let mut next = match settings.map(|s| s.json()) {
        Some(Value::Object(now)) => now,
        _ => serde_json::Map::new(),
    };
    for (key, value) in changes {
        if !next.contains_key(key) {
            return Err(SettingsError::UnknownKey {
                key: key.clone(),
                known: next.keys().cloned().collect(),
            });
        }
        next.insert(key.clone(), value.clone());
    }
    match settings {
        Some(s) => s.replace(Value::Object(next)),
        None => Ok(()),
    }
}

/// An application of any type, ready for a pipeline
/// (`AnyApp::new(LearningSwitch::default())`, or from an `Arc` to keep a
/// handle on it).
#[derive(Clone)]
pub struct AnyApp {
    app: Arc<dyn ErasedApp>,
    tag: u16,
}

impl AnyApp {
    /// Wraps `app`.
    pub fn new<A: App>(app: A) -> AnyApp {
        AnyApp::from(Arc::new(app))
    }

    /// The application's name.
    pub fn name(&self) -> &str {
        self.app.name()
    }

    /// The top 16 bits of the cookie of every flow this application
    /// installs ([`crate::SwitchCtx::add_flow`]), so its flows can be found
    /// and removed apart from other applications': a hash of its name,
    /// the same from run to run, never 0.
    pub fn cookie_tag(&self) -> u16 {
        self.tag
    }

    /// Its settings ([`App::settings`]) as they are now: a JSON object,
    /// empty for none.
    pub fn settings(&self) -> serde_json::Value {
        match self.app.settings() {
            Some(s) => s.json(),
            None => serde_json::Value::Object(Default::default()),
        }
    }

    /// Changes the settings named in `changes` (a JSON object of some of
    /// the keys of [`AnyApp::settings`]): either all of them change or,
    /// with an error that names the key and what was expected, none does.
    pub fn configure(&self, changes: &serde_json::Value) -> Result<(), SettingsError> {
        merge(self.app.settings(), changes)
    }

    /// The stages it offers for declared DAGs ([`App::dag_apps`]).
    pub fn dag_apps(&self) -> Vec<Arc<dyn crate::dag::DagApp>> {
        self.app.dag_apps()
    }

    /// The application as its own type, if it is an `A`: how a layer
    /// above the runtime (the operator's API) reaches an application's
    /// own interface, such as `bandwidth`'s reservations.
    pub fn downcast<A: App>(&self) -> Option<Arc<A>> {
        self.app.typed().downcast_ref::<Arc<A>>().cloned()
    }

    pub(crate) fn erased(&self) -> &dyn ErasedApp {
        &*self.app
    }
}

impl<A: App> From<Arc<A>> for AnyApp {
    fn from(app: Arc<A>) -> AnyApp {
        let tag = cookie_tag(app.name());
        AnyApp {
            app: Arc::new(Typed(app)),
            tag,
        }
    }
}

/// FNV-1a of `name`, folded to 16 bits; 0 is left for flows no
/// application installed.
pub(crate) fn cookie_tag(name: &str) -> u16 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    match (h ^ (h >> 16)) as u16 {
        0 => 1,
        t => t,
    }
}

impl std::fmt::Debug for AnyApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AnyApp").field(&self.name()).finish()
    }
}

/// [`App`] with its state type erased, so a pipeline can hold
/// applications of different types.
pub(crate) trait ErasedApp: Send + Sync {
    fn name(&self) -> &str;
    fn start(&self, net: &Network);
    fn views(&self) -> ViewAccess;
    fn view_changed(&self, net: &Network, snapshot: &Snapshot, changes: &[Change]);
    fn dags(&self) -> Vec<crate::dag::Dag>;
    fn dag_apps(&self) -> Vec<Arc<dyn crate::dag::DagApp>>;
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) -> Box<dyn Any + Send>;
    fn switch_down(&self, sw: &SwitchInfo, state: Box<dyn Any + Send>);
    fn port(&self, sw: &mut SwitchCtx<'_>, state: &mut (dyn Any + Send), change: &PortChange);
    fn packet_in(&self, batch: RawBatch<'_>);
    fn message(
        &self,
        sw: &mut SwitchCtx<'_>,
        state: &mut (dyn Any + Send),
        msg: &Message,
    ) -> Verdict;
    fn counters(&self) -> Vec<(&'static str, u64)>;
    fn settings(&self) -> Option<&dyn Configurable>;
    /// The `Arc<A>` itself, for [`AnyApp::downcast`].
    fn typed(&self) -> &(dyn Any + Send + Sync);
}

struct Typed<A>(Arc<A>);

impl<A: App> ErasedApp for Typed<A> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn start(&self, net: &Network) {
        self.0.start(net)
    }

    fn views(&self) -> ViewAccess {
        self.0.views()
    }

    fn view_changed(&self, net: &Network, snapshot: &Snapshot, changes: &[Change]) {
        self.0.view_changed(net, snapshot, changes)
    }

    fn dags(&self) -> Vec<crate::dag::Dag> {
        self.0.dags()
    }

    fn dag_apps(&self) -> Vec<Arc<dyn crate::dag::DagApp>> {
        self.0.dag_apps()
    }

    fn switch_up(&self, sw: &mut SwitchCtx<'_>) -> Box<dyn Any + Send> {
        Box::new(self.0.switch_up(sw))
    }

    fn switch_down(&self, sw: &SwitchInfo, state: Box<dyn Any + Send>) {
        if let Ok(state) = state.downcast::<A::Switch>() {
            self.0.switch_down(sw, *state);
        }
    }

    fn port(&self, sw: &mut SwitchCtx<'_>, state: &mut (dyn Any + Send), change: &PortChange) {
        if let Some(state) = state.downcast_mut::<A::Switch>() {
            match change {
                PortChange::Up(p) => self.0.port_up(sw, state, p),
                PortChange::Down(p) => self.0.port_down(sw, state, p),
            }
        }
    }

    fn packet_in(&self, batch: RawBatch<'_>) {
        self.0.packet_in(&mut PacketInBatch::new(batch));
    }

    fn message(
        &self,
        sw: &mut SwitchCtx<'_>,
        state: &mut (dyn Any + Send),
        msg: &Message,
    ) -> Verdict {
        match state.downcast_mut::<A::Switch>() {
            Some(state) => self.0.message(sw, state, msg),
            None => Verdict::Continue,
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.0.counters()
    }

    fn settings(&self) -> Option<&dyn Configurable> {
        self.0.settings()
    }

    fn typed(&self) -> &(dyn Any + Send + Sync) {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::sync::Mutex;

    /// Settings kept as JSON, refusing `"n"` over 10.
    struct Fake(Mutex<Value>);

    impl Configurable for Fake {
        fn json(&self) -> Value {
            self.0.lock().unwrap().clone()
        }

        fn replace(&self, next: Value) -> Result<(), SettingsError> {
            if next["n"].as_u64().is_none_or(|n| n > 10) {
                return Err(SettingsError::invalid("n", "must be at most 10"));
            }
            *self.0.lock().unwrap() = next;
            Ok(())
        }
    }

    /// An application with these settings, or none.
    struct Test(Option<Fake>);

    impl App for Test {
        type Switch = ();
        fn name(&self) -> &str {
            "test"
        }
        fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
        fn settings(&self) -> Option<&dyn Configurable> {
            self.0.as_ref().map(|s| s as &dyn Configurable)
        }
    }

    #[test]
    fn a_change_of_some_keys_keeps_the_others_or_changes_nothing() {
        let app = AnyApp::new(Test(Some(Fake(Mutex::new(json!({"n": 1, "on": true}))))));
        app.configure(&json!({"n": 2})).unwrap();
        assert_eq!(app.settings(), json!({"n": 2, "on": true}));
        let e = app.configure(&json!({"on": false, "n": 11})).unwrap_err();
        assert_eq!(e, SettingsError::invalid("n", "must be at most 10"));
        assert_eq!(e.to_string(), "setting \"n\": must be at most 10");
        let e = app.configure(&json!({"on": false, "m": 1})).unwrap_err();
        assert_eq!(e.key(), Some("m"));
        assert_eq!(
            e.to_string(),
            "unknown setting \"m\"; the settings are: n, on"
        );
        let e = app.configure(&json!([1])).unwrap_err();
        assert_eq!(e.to_string(), "settings must be an object, not [1]");
        assert_eq!(app.settings(), json!({"n": 2, "on": true}));
    }

    #[test]
    fn an_application_without_settings_takes_only_an_empty_object() {
        let app = AnyApp::new(Test(None));
        assert_eq!(app.settings(), json!({}));
        app.configure(&json!({})).unwrap();
        let e = app.configure(&json!({"n": 1})).unwrap_err();
        assert_eq!(e.to_string(), "unknown setting \"n\": it has none");
        assert!(app.configure(&json!(null)).is_err());
    }

    #[test]
    fn cookie_tags_are_stable_nonzero_and_tell_names_apart() {
        assert_eq!(cookie_tag("routing"), cookie_tag("routing"));
        let names = [
            "hub",
            "learning-switch",
            "topology",
            "devices",
            "routing",
            "",
        ];
        let mut tags: Vec<u16> = names.iter().map(|n| cookie_tag(n)).collect();
        assert!(tags.iter().all(|&t| t != 0));
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), names.len());
    }
}
