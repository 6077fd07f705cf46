//! DAG runs from two threads under the two concurrency controls of
//! `baton_runtime::dag` (Maestro thesis §3.2.4: queue a conflicting DAG;
//! or run at once and rerun on a conflicting commit), with DAGs that never
//! conflict and DAGs that always do. Each DAG is one application that
//! works `WORK_US` microseconds and writes its view from what it read.
//! Prints committed runs per second, reruns, and CPU per committed run:
//!
//!     cargo run --release -p baton-runtime --example dag_concurrency -- [WORK_US [SECONDS]]

use baton_runtime::dag::{Concurrency, Dag, DagApp, Dags, Local, Trigger};
use baton_runtime::env::{Environment, View, ViewAccess};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[path = "common/cpu.rs"]
mod cpu;
use cpu::cpu_time;

struct Left(u64);
impl View for Left {
    const NAME: &'static str = "left";
}
struct Right(u64);
impl View for Right {
    const NAME: &'static str = "right";
}

/// Reads view `V`, works, writes it plus one.
struct Work<V>(Duration, PhantomData<V>);

/// A view holding a counter.
trait Counter: View {
    fn new(n: u64) -> Self;
    fn get(&self) -> u64;
}
impl Counter for Left {
    fn new(n: u64) -> Self {
        Left(n)
    }
    fn get(&self) -> u64 {
        self.0
    }
}
impl Counter for Right {
    fn new(n: u64) -> Self {
        Right(n)
    }
    fn get(&self) -> u64 {
        self.0
    }
}

impl<V: Counter> DagApp for Work<V> {
    fn name(&self) -> &str {
        "work"
    }
    fn views(&self) -> ViewAccess {
        ViewAccess::none().reads::<V>().writes::<V>()
    }
    fn run(&self, local: &mut Local<'_>) -> Result<(), String> {
        let n = local.read::<V>().map_or(0, |v| v.get());
        let until = Instant::now() + self.0;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        local.write(V::new(n + 1))
    }
}

fn dag<V: Counter>(work: Duration) -> Arc<Dag> {
    let app: Arc<dyn DagApp> = Arc::new(Work::<V>(work, PhantomData));
    Arc::new(Dag::new(V::NAME, vec![app], &[], Trigger::Views(Vec::new())).expect("valid"))
}

/// Two threads each running its DAG for `secs`: committed runs per
/// second, reruns, CPU per committed run.
fn run(mode: Concurrency, dags: [Arc<Dag>; 2], secs: f64) -> (f64, u64, Duration) {
    let env = Arc::new(Environment::default());
    env.atomically(1, |tx| {
        tx.write(Left(0));
        tx.write(Right(0));
        Ok::<_, ()>(())
    })
    .expect("first versions");
    let runs = Arc::new(Dags::new(mode));
    let stop = Arc::new(AtomicBool::new(false));
    let (cpu0, t0) = (cpu_time(), Instant::now());
    let threads: Vec<_> = dags
        .iter()
        .map(|d| {
            let (d, runs, env, stop) = (d.clone(), runs.clone(), env.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut commits = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if runs.run(&d, &env, Vec::new, |_, _| {}).is_ok() {
                        commits += 1;
                    }
                }
                commits
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let commits: u64 = threads.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_time().saturating_sub(cpu0);
    let reruns = dags
        .iter()
        .map(|d| d.stats.reruns.load(Ordering::Relaxed))
        .sum::<u64>()
        / if Arc::ptr_eq(&dags[0], &dags[1]) {
            2
        } else {
            1
        };
    (commits as f64 / wall, reruns, cpu / commits.max(1) as u32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let work_us: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3.0);
    let work = Duration::from_micros(work_us);
    println!("two threads, {work_us} µs of work per run, {secs} s each");
    for mode in [Concurrency::Queue, Concurrency::Optimistic] {
        let disjoint = [dag::<Left>(work), dag::<Right>(work)];
        let shared = dag::<Left>(work);
        for (name, dags) in [
            ("never conflict", disjoint),
            ("always conflict", [shared.clone(), shared]),
        ] {
            let (rate, reruns, cpu) = run(mode, dags, secs);
            println!(
                "{:>10} {name:>15}: {rate:>9.0} commits/s, {reruns:>8} reruns, {:>6} µs CPU per commit",
                format!("{mode:?}"),
                cpu.as_micros()
            );
        }
    }
}
