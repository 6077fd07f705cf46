//! Application DAGs in the harness: triggered by the views applications
//! publish and by timers, their outputs published and their messages
//! delivered to the switches.

use baton_openflow::neutral::Message;
use baton_openflow::{Version, Xid, v10, v13};
use baton_runtime::dag::{Dag, DagApp, Local, Trigger};
use baton_runtime::env::{Publish, View, ViewAccess, ViewId};
use baton_runtime::testing::{Harness, Tick, Ticks};
use baton_runtime::{AnyApp, App, SwitchCtx};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The datapaths that came up, in order.
#[derive(Clone, Default)]
struct Arrivals(Vec<u64>);
impl View for Arrivals {
    const NAME: &'static str = "arrivals";
}

/// How many switches the DAG greeted.
struct Greeted(usize);
impl View for Greeted {
    const NAME: &'static str = "greeted";
}

/// Publishes `Arrivals` as switches come up (a driver, in Maestro's
/// terms).
#[derive(Default)]
struct Driver(Mutex<Arrivals>);
impl App for Driver {
    type Switch = ();
    fn name(&self) -> &str {
        "driver"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().writes::<Arrivals>()
    }
    fn switch_up(&self, sw: &mut SwitchCtx<'_>) {
        let mut seen = self.0.lock().unwrap();
        seen.0.push(sw.dpid().0);
        sw.net().publish(Publish::new().view(seen.clone())).unwrap();
    }
}

/// Sends the newest switch an ECHO_REQUEST in its version, and counts.
struct Greeter;
impl DagApp for Greeter {
    fn name(&self) -> &str {
        "greeter"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<Arrivals>().writes::<Greeted>()
    }
    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let arrivals = local.read::<Arrivals>().ok_or("no arrivals")?;
        let newest = *arrivals.0.last().ok_or("empty")?;
        let sw = *local
            .switches()
            .iter()
            .find(|s| s.dpid.0 == newest)
            .ok_or("not connected")?;
        local.send(sw.id, |out| match sw.version {
            Version::V10 => v10::Message::EchoRequest(b"hi".to_vec()).encode(Xid(7), out),
            Version::V13 => v13::Message::EchoRequest(b"hi".to_vec()).encode(Xid(7), out),
        });
        local.write(Greeted(arrivals.0.len()))
    }
}

fn echo_requests(sent: &[Message]) -> usize {
    sent.iter()
        .filter(|m| {
            matches!(
                m,
                Message::V10(v10::Message::EchoRequest(p)) | Message::V13(v13::Message::EchoRequest(p))
                    if p == b"hi"
            )
        })
        .count()
}

#[test]
fn a_view_published_by_an_application_triggers_its_dag() {
    let greet = Dag::new(
        "greet",
        vec![Arc::new(Greeter)],
        &[],
        Trigger::Views(vec![ViewId::of::<Arrivals>()]),
    )
    .unwrap();
    let mut h = Harness::with_dags(vec![AnyApp::new(Driver::default())], vec![greet]);
    let a = h.connect(1, Version::V10);
    let b = h.connect(2, Version::V13);
    assert_eq!(echo_requests(&h.sent(a)), 1);
    assert_eq!(echo_requests(&h.sent(b)), 1);
    assert_eq!(h.snapshot().get::<Greeted>().unwrap().0, 2);
    let dag = &h.dags().dags()[0];
    assert_eq!(
        dag.stats.commits.load(std::sync::atomic::Ordering::Relaxed),
        2
    );
}

#[test]
fn a_timer_triggers_its_dag_as_time_passes() {
    let tick = Dag::new(
        "tick",
        vec![Arc::new(Tick)],
        &[],
        Trigger::Every(Duration::from_secs(1)),
    )
    .unwrap();
    let mut h = Harness::with_dags(Vec::new(), vec![tick]);
    h.advance(Duration::from_millis(3500));
    assert_eq!(h.snapshot().get::<Ticks>().unwrap().0, 3);
}

/// Brings the greeting DAG ([`App::dags`]) and does nothing else.
struct Host;
impl App for Host {
    type Switch = ();
    fn name(&self) -> &str {
        "host"
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn dags(&self) -> Vec<Dag> {
        let trigger = Trigger::Views(vec![ViewId::of::<Arrivals>()]);
        vec![Dag::new("greet", vec![Arc::new(Greeter)], &[], trigger).unwrap()]
    }
}

#[test]
fn an_application_s_dags_run_while_it_runs() {
    let apps = vec![AnyApp::new(Driver::default()), AnyApp::new(Host)];
    let mut h = Harness::new(apps);
    assert_eq!(h.dags().dags()[0].name(), "greet");
    let a = h.connect(1, Version::V10);
    assert_eq!(echo_requests(&h.sent(a)), 1);
    assert!(h.stop_app("host"));
    let b = h.connect(2, Version::V13);
    assert_eq!(echo_requests(&h.sent(b)), 0, "its DAG stopped with it");
    assert!(h.start_app("host"));
    let c = h.connect(3, Version::V13);
    assert_eq!(echo_requests(&h.sent(c)), 1);
    assert_eq!(h.snapshot().get::<Greeted>().unwrap().0, 3);
}

#[test]
fn a_dag_given_by_name_replaces_the_application_s_own() {
    // The operator's "greet" runs on a timer instead of on arrivals.
    let every = Trigger::Every(Duration::from_secs(1));
    let mine = Dag::new("greet", vec![Arc::new(Greeter)], &[], every).unwrap();
    let apps = vec![AnyApp::new(Driver::default()), AnyApp::new(Host)];
    let mut h = Harness::with_dags(apps, vec![mine]);
    assert_eq!(h.dags().dags().len(), 1);
    let a = h.connect(1, Version::V10);
    assert_eq!(echo_requests(&h.sent(a)), 0, "arrivals no longer start it");
    h.advance(Duration::from_millis(1500));
    assert_eq!(echo_requests(&h.sent(a)), 1, "the timer did");
}
