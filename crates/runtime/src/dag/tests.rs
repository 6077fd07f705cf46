//! DAGs on one environment, without sockets: composition, the local
//! environment, commits and aborts, and concurrency control by the
//! recorded order of events.

use super::*;
use std::sync::mpsc;

macro_rules! views {
    ($($name:ident),*) => {$(
        #[derive(Debug, Clone, PartialEq)]
        struct $name(u64);
        impl View for $name {
            const NAME: &'static str = stringify!($name);
        }
    )*};
}
views!(A, B, C, E, F, H);

type Body = Box<dyn Fn(&mut Local<'_>) -> Result<(), String> + Send + Sync>;

/// An application made of a closure.
struct Fn_ {
    name: &'static str,
    access: ViewAccess,
    body: Body,
}

fn app(
    name: &'static str,
    access: ViewAccess,
    body: impl Fn(&mut Local<'_>) -> Result<(), String> + Send + Sync + 'static,
) -> Arc<dyn DagApp> {
    Arc::new(Fn_ {
        name,
        access,
        body: Box::new(body),
    })
}

impl DagApp for Fn_ {
    fn name(&self) -> &str {
        self.name
    }
    fn views(&self) -> ViewAccess {
        self.access.clone()
    }
    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        (self.body)(local)
    }
}

fn env_with(a: u64) -> Environment {
    let env = Environment::default();
    env.publish(Publish::new().view(A(a)).view(B(0)));
    env
}

fn on_a() -> Trigger {
    Trigger::Views(vec![ViewId::of::<A>()])
}

/// `A -> C -> E`: C = A + 1, E = C * 10.
fn chain() -> Dag {
    let first = app(
        "first",
        ViewAccess::none().reads::<A>().writes::<C>(),
        |l| {
            let a = l.read::<A>().unwrap().0;
            l.write(C(a + 1))
        },
    );
    let second = app(
        "second",
        ViewAccess::none().reads::<C>().writes::<E>(),
        |l| {
            let c = l.read::<C>().unwrap().0;
            l.send(SwitchId::new(0, 0), |out| out.push(c as u8));
            l.write(E(c * 10))
        },
    );
    Dag::new("chain", vec![first, second], &[("first", "second")], on_a()).unwrap()
}

#[test]
fn outputs_feed_later_applications_and_commit_together() {
    let env = env_with(4);
    let dag = Arc::new(chain());
    assert_eq!(dag.read_set(), [ViewId::of::<A>(), ViewId::of::<C>()]);
    assert_eq!(dag.write_set(), [ViewId::of::<C>(), ViewId::of::<E>()]);
    let mut sent = Vec::new();
    let run = Dags::default()
        .run(&dag, &env, Vec::new, |id, bytes| {
            sent.push((id, bytes.to_vec()))
        })
        .unwrap();
    assert_eq!((run.runs, run.messages, run.changes.len()), (1, 1, 2));
    let s = env.snapshot();
    assert_eq!(*s.get::<C>().unwrap(), C(5));
    assert_eq!(*s.get::<E>().unwrap(), E(50));
    // Published together: one version each, in one step.
    assert_eq!((s.version::<C>(), s.version::<E>()), (1, 1));
    assert_eq!(sent, vec![(SwitchId::new(0, 0), vec![5])]);
    assert_eq!(dag.stats.commits.load(Ordering::Relaxed), 1);
}

#[test]
fn a_run_s_messages_go_in_one_send_per_switch_in_the_order_queued() {
    let (s0, s1) = (SwitchId::new(0, 0), SwitchId::new(1, 0));
    let first = app(
        "first",
        ViewAccess::none().reads::<A>().writes::<C>(),
        move |l| {
            l.send(s1, |out| out.push(1));
            l.send(s0, |out| out.push(2));
            l.send(s0, |out| out.extend([3, 4]));
            l.write(C(0))
        },
    );
    let second = app(
        "second",
        ViewAccess::none().reads::<C>().writes::<E>(),
        move |l| {
            l.send(s0, |out| out.push(5));
            l.write(E(0))
        },
    );
    let dag =
        Arc::new(Dag::new("two", vec![first, second], &[("first", "second")], on_a()).unwrap());
    let mut sent = Vec::new();
    let run = Dags::default()
        .run(&dag, &env_with(1), Vec::new, |id, bytes| {
            sent.push((id, bytes.to_vec()))
        })
        .unwrap();
    assert_eq!(run.messages, 4);
    assert_eq!(sent, vec![(s0, vec![2, 3, 4, 5]), (s1, vec![1])]);
}

#[test]
fn the_switches_are_listed_once_and_only_when_an_application_asks() {
    let listed = AtomicU64::new(0);
    let switch = SwitchInfo {
        id: SwitchId::new(3, 0),
        dpid: baton_openflow::DatapathId(7),
        version: baton_openflow::Version::V13,
        peer: None,
    };
    let list = || {
        listed.fetch_add(1, Ordering::Relaxed);
        vec![switch]
    };
    let silent = app("silent", ViewAccess::none().reads::<A>(), |_| Ok(()));
    let quiet = Arc::new(Dag::new("quiet", vec![silent], &[], on_a()).unwrap());
    Dags::default()
        .run(&quiet, &env_with(1), list, |_, _| {})
        .unwrap();
    assert_eq!(listed.load(Ordering::Relaxed), 0, "no application asked");
    let asks = |name, access: ViewAccess| {
        app(name, access, move |l| {
            let to = l.switches()[0].id;
            l.send(to, |out| out.push(1));
            Ok(())
        })
    };
    let dag = Arc::new(
        Dag::new(
            "asking",
            vec![
                asks("first", ViewAccess::none().reads::<A>().writes::<C>()),
                asks("second", ViewAccess::none().reads::<C>()),
            ],
            &[("first", "second")],
            on_a(),
        )
        .unwrap(),
    );
    let mut sent = Vec::new();
    Dags::default()
        .run(&dag, &env_with(1), list, |id, bytes| {
            sent.push((id, bytes.to_vec()))
        })
        .unwrap();
    assert_eq!(listed.load(Ordering::Relaxed), 1, "listed once for the run");
    assert_eq!(sent, vec![(switch.id, vec![1, 1])]);
}

#[test]
fn a_dag_s_applications_never_see_a_view_change_mid_run() {
    // Both applications read A; between them, a writer outside any DAG
    // publishes a new A. Both must see the same version, and the commit,
    // finding A changed, runs the DAG again on the new one.
    let env = Arc::new(env_with(1));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let first = {
        let (env, seen) = (env.clone(), seen.clone());
        app(
            "first",
            ViewAccess::none().reads::<A>().writes::<C>(),
            move |l| {
                let a = l.read::<A>().unwrap().0;
                seen.lock().unwrap().push(("first", a));
                if a == 1 {
                    env.publish(Publish::new().view(A(2)));
                }
                l.write(C(a))
            },
        )
    };
    let second = {
        let seen = seen.clone();
        app(
            "second",
            ViewAccess::none().reads::<A>().reads::<C>().writes::<E>(),
            move |l| {
                let a = l.read::<A>().unwrap().0;
                seen.lock().unwrap().push(("second", a));
                assert_eq!(l.read::<C>().unwrap().0, a, "C was computed from this A");
                l.write(E(a))
            },
        )
    };
    let dag =
        Arc::new(Dag::new("two", vec![first, second], &[("first", "second")], on_a()).unwrap());
    let run = Dags::default()
        .run(&dag, &env, Vec::new, |_, _| {})
        .unwrap();
    assert_eq!(run.runs, 2);
    assert_eq!(
        *seen.lock().unwrap(),
        [("first", 1), ("second", 1), ("first", 2), ("second", 2)]
    );
    assert_eq!(*env.read::<E>().unwrap(), E(2));
    assert_eq!(dag.stats.reruns.load(Ordering::Relaxed), 1);
}

/// Counts its runs and the commits it heard of.
#[derive(Default)]
struct Remembers {
    runs: AtomicU64,
    committed: AtomicU64,
}

impl DagApp for Remembers {
    fn name(&self) -> &str {
        "remembers"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<A>().writes::<C>()
    }
    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        local.write(C(local.read::<A>().map_or(0, |a| a.0)))
    }
    fn committed(&self) {
        self.committed.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn only_a_committed_run_tells_its_applications() {
    let remembers = Arc::new(Remembers::default());
    // The application after it fails while A is odd.
    let judge = app("judge", ViewAccess::none().reads::<C>(), |l| {
        match l.read::<C>().unwrap().0 % 2 {
            0 => Ok(()),
            _ => Err("odd".to_string()),
        }
    });
    let apps: Vec<Arc<dyn DagApp>> = vec![remembers.clone(), judge];
    let dag = Arc::new(Dag::new("d", apps, &[("remembers", "judge")], on_a()).unwrap());
    let env = env_with(1);
    let dags = Dags::default();
    assert!(dags.run(&dag, &env, Vec::new, |_, _| {}).is_err());
    env.publish(Publish::new().view(A(2)));
    assert!(dags.run(&dag, &env, Vec::new, |_, _| {}).is_ok());
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    assert_eq!((get(&remembers.runs), get(&remembers.committed)), (2, 1));
}

#[test]
fn a_failed_or_panicking_application_commits_nothing() {
    for fail in [true, false] {
        let env = env_with(1);
        let first = app(
            "first",
            ViewAccess::none().reads::<A>().writes::<C>(),
            |l| {
                l.send(SwitchId::new(0, 0), |out| out.push(1));
                l.write(C(1))
            },
        );
        let second = app(
            "second",
            ViewAccess::none().reads::<C>().writes::<E>(),
            move |_| {
                if fail {
                    Err("no route".to_string())
                } else {
                    panic!("bug")
                }
            },
        );
        let dag =
            Arc::new(Dag::new("d", vec![first, second], &[("first", "second")], on_a()).unwrap());
        let mut sent = 0;
        let err = Dags::default()
            .run(&dag, &env, Vec::new, |_, _| sent += 1)
            .unwrap_err();
        let DagError::Failed { app, error } = err else {
            panic!("{err:?}");
        };
        assert_eq!(app, "second");
        assert!(error.contains(if fail { "no route" } else { "panicked: bug" }));
        assert!(
            env.read::<C>().is_none(),
            "the first application's output was not published"
        );
        assert_eq!(sent, 0, "its messages were not sent");
        assert_eq!(dag.stats.aborts.load(Ordering::Relaxed), 1);
    }
}

#[test]
fn branches_run_together_and_may_not_write_the_same_view() {
    // Fig. 3.1's DAG 3 shape: one application, then two branches.
    let (tx, rx) = mpsc::channel::<()>();
    let rx = Mutex::new(rx);
    let root = app("root", ViewAccess::none().reads::<A>().writes::<C>(), |l| {
        let a = l.read::<A>().unwrap().0;
        l.write(C(a))
    });
    // Each branch waits for the other: they can only both finish if they
    // run at the same time.
    let left = app(
        "left",
        ViewAccess::none().reads::<C>().writes::<E>(),
        move |l| {
            tx.send(()).unwrap();
            l.write(E(l.read::<C>().unwrap().0))
        },
    );
    let right = app(
        "right",
        ViewAccess::none().reads::<C>().writes::<F>(),
        move |l| {
            rx.lock().unwrap().recv().unwrap();
            l.write(F(l.read::<C>().unwrap().0))
        },
    );
    let edges = [("root", "left"), ("root", "right")];
    let dag = Arc::new(Dag::new("fork", vec![root, left, right], &edges, on_a()).unwrap());
    let env = env_with(3);
    Dags::default()
        .run(&dag, &env, Vec::new, |_, _| {})
        .unwrap();
    let s = env.snapshot();
    assert_eq!((s.get::<E>().unwrap().0, s.get::<F>().unwrap().0), (3, 3));

    let writer = |name| app(name, ViewAccess::none().writes::<E>(), |_| Ok(()));
    let err = Dag::new("race", vec![writer("x"), writer("y")], &[], on_a()).unwrap_err();
    assert!(
        matches!(err, DagError::ConcurrentWrites { view: "E", .. }),
        "{err:?}"
    );
    // Ordered, the same two are fine: the later output wins.
    assert!(
        Dag::new(
            "ordered",
            vec![writer("x"), writer("y")],
            &[("x", "y")],
            on_a()
        )
        .is_ok()
    );
}

#[test]
fn malformed_dags_are_refused() {
    let a = || app("a", ViewAccess::none(), |_| Ok(()));
    let b = || app("b", ViewAccess::none(), |_| Ok(()));
    let trigger = Trigger::Every(Duration::from_secs(1));
    assert_eq!(
        Dag::new(
            "cycle",
            vec![a(), b()],
            &[("a", "b"), ("b", "a")],
            trigger.clone()
        )
        .unwrap_err(),
        DagError::Cycle("a".into())
    );
    assert_eq!(
        Dag::new("unknown", vec![a()], &[("a", "z")], trigger.clone()).unwrap_err(),
        DagError::UnknownApp("z".into())
    );
    assert_eq!(
        Dag::new("twice", vec![a(), a()], &[], trigger).unwrap_err(),
        DagError::DuplicateApp("a".into())
    );
}

#[test]
fn conflicting_dags_are_serialised_and_others_overlap() {
    // DAG 1 reads A, writes C; DAG 2 reads B, writes F (no conflict with
    // 1); DAG 3 reads C, writes H (conflicts with 1: it reads what 1
    // writes). Thesis §3.2.4: 1 and 2 run concurrently, 1 and 3 in turn.
    let env = Arc::new(env_with(1));
    let events = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let (release_1, hold_1) = mpsc::channel::<()>();
    let hold_1 = Mutex::new(hold_1);
    let note = |events: &Arc<Mutex<Vec<&'static str>>>, e| events.lock().unwrap().push(e);
    let d1 = {
        let events = events.clone();
        app(
            "one",
            ViewAccess::none().reads::<A>().writes::<C>(),
            move |l| {
                note(&events, "1 starts");
                hold_1.lock().unwrap().recv().unwrap();
                note(&events, "1 ends");
                l.write(C(1))
            },
        )
    };
    let d2 = {
        let events = events.clone();
        app(
            "two",
            ViewAccess::none().reads::<B>().writes::<F>(),
            move |l| {
                note(&events, "2 runs");
                l.write(F(2))
            },
        )
    };
    let d3 = {
        let events = events.clone();
        app(
            "three",
            ViewAccess::none().reads::<C>().writes::<H>(),
            move |l| {
                note(&events, "3 runs");
                l.write(H(l.read::<C>().map_or(0, |c| c.0)))
            },
        )
    };
    let dag = |name, a| Arc::new(Dag::new(name, vec![a], &[], on_a()).unwrap());
    let (d1, d2, d3) = (dag("d1", d1), dag("d2", d2), dag("d3", d3));
    let dags = Arc::new(Dags::default());
    let spawn = |d: &Arc<Dag>| {
        let (d, dags, env) = (d.clone(), dags.clone(), env.clone());
        std::thread::spawn(move || dags.run(&d, &env, Vec::new, |_, _| {}).unwrap())
    };
    let wait_for = |what: &dyn Fn() -> bool| {
        while !what() {
            std::thread::yield_now();
        }
    };
    let t1 = spawn(&d1);
    wait_for(&|| events.lock().unwrap().contains(&"1 starts"));
    // DAG 2 does not conflict: it runs to its commit while DAG 1 is held.
    let run2 = spawn(&d2).join().unwrap();
    assert!(!run2.waited);
    // DAG 3 conflicts: it queues.
    let t3 = spawn(&d3);
    wait_for(&|| d3.stats.conflicts.load(Ordering::Relaxed) == 1);
    assert!(!events.lock().unwrap().contains(&"3 runs"));
    release_1.send(()).unwrap();
    assert!(!t1.join().unwrap().waited);
    assert!(t3.join().unwrap().waited);
    assert_eq!(
        *events.lock().unwrap(),
        ["1 starts", "2 runs", "1 ends", "3 runs"]
    );
    // DAG 3 read DAG 1's committed output.
    assert_eq!(*env.read::<H>().unwrap(), H(1));
}

#[test]
fn no_update_is_lost_in_either_mode() {
    // Two threads run the same read-modify-write DAG over one view: queued
    // runs take turns, optimistic ones rerun on conflict; either way every
    // commit counts.
    for mode in [Concurrency::Queue, Concurrency::Optimistic] {
        let env = Arc::new(env_with(0));
        env.publish(Publish::new().view(C(0)));
        let inc = app("inc", ViewAccess::none().reads::<C>().writes::<C>(), |l| {
            let c = l.read::<C>().unwrap().0;
            l.write(C(c + 1))
        });
        let dag = Arc::new(Dag::new("inc", vec![inc], &[], on_a()).unwrap());
        let dags = Arc::new(Dags::new(mode));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (dag, dags, env) = (dag.clone(), dags.clone(), env.clone());
                std::thread::spawn(move || {
                    for _ in 0..300 {
                        dags.run(&dag, &env, Vec::new, |_, _| {}).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(env.read::<C>().unwrap().0, 600, "{mode:?}");
        assert_eq!(dag.stats.commits.load(Ordering::Relaxed), 600);
    }
}

/// A DAG whose input changes under every run: when only views that
/// trigger it changed, its last run commits (the newer version runs it
/// again); when a view that does not trigger it changed, nothing commits.
#[test]
fn a_dag_outrun_by_its_trigger_commits_its_last_run_and_one_outrun_by_another_view_does_not() {
    for (trigger, stale_view_triggers) in [
        (on_a(), true),
        (Trigger::Views(vec![ViewId::of::<B>()]), false),
    ] {
        let env = Arc::new(env_with(1));
        let outrun = {
            let env = env.clone();
            app(
                "outrun",
                ViewAccess::none().reads::<A>().writes::<C>(),
                move |l| {
                    let a = l.read::<A>().unwrap().0;
                    // A writer outside any DAG publishes faster than it runs.
                    env.publish(Publish::new().view(A(a + 1)));
                    l.write(C(a))
                },
            )
        };
        let dag = Arc::new(Dag::new("outrun", vec![outrun], &[], trigger).unwrap());
        let result = Dags::default().run(&dag, &env, Vec::new, |_, _| {});
        let late = dag.stats.late_commits.load(Ordering::Relaxed);
        if stale_view_triggers {
            let run = result.unwrap();
            assert_eq!(run.runs, RERUNS);
            // What it committed was computed from one version of A: the
            // one its last run read, not the newest.
            assert_eq!(*env.read::<C>().unwrap(), C(u64::from(RERUNS)));
            assert_eq!(*env.read::<A>().unwrap(), A(u64::from(RERUNS) + 1));
            assert_eq!((late, dag.status().late_commits), (1, 1));
        } else {
            assert!(
                matches!(result, Err(DagError::Stale { runs: RERUNS })),
                "{result:?}"
            );
            assert!(env.read::<C>().is_none());
            assert_eq!(late, 0);
        }
        assert_eq!(
            dag.stats.reruns.load(Ordering::Relaxed),
            u64::from(RERUNS) - u64::from(stale_view_triggers)
        );
    }
}
