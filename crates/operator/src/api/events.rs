//! `GET /api/v1/events`: the live feed, as server-sent events. Each event
//! (`event: snapshot`) carries one [`Live`] JSON object: the switches with
//! their message rates, the scheduler with Jain's fairness index, each
//! worker's IBT, throughput and batch size over the last second, the
//! topology, the hosts, the applications, the DAGs, the links' reserved
//! bandwidth and, on a clustered instance, the cluster. The web UI draws
//! from nothing else.
//!
//! A feed samples the workers' counters every [`SAMPLE_EVERY`] and sends
//! a snapshot after each sample; between samples it looks every
//! [`CHECK_EVERY`] at what an operator would wait a second for (the
//! topology's and hosts' view versions, which switches are connected, the
//! applications' states, which member masters each datapath) and sends
//! at once when one moved. A feed ends
//! when the server shuts down ([`Shared::closing`]), so that graceful
//! shutdown does not wait for clients that never hang up.
//!
//! The switches' rates and the fairness index are the API's sampler's
//! (`crate::sampler`), the same figures `GET /api/v1/switches`,
//! `/scheduler` and `/metrics` give; the workers' figures over an
//! interval are [`WorkerSampler`]'s, which takes the time from its caller
//! and is tested on synthetic time.

use super::Shared;
use super::{apps, dags, network, reservations, scheduler};
use crate::model::live::{Live, LiveSwitch, LiveWorker};
use crate::model::{Cluster, Scheduler, Worker, version_number};
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use baton_runtime::pipeline::Lifecycle;
use futures_util::Stream;
use std::convert::Infallible;
use std::time::Duration;
use tokio::time::MissedTickBehavior;

/// How often the workers' counters are sampled and a snapshot sent: once
/// a second, the resolution of the UI's charts and the API's sampler.
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// How often a feed looks for a change worth sending at once: a cut link
/// shows within a quarter of a second of discovery noticing it, for a few
/// cheap reads (two view versions, the switch list, the applications'
/// states) per client.
pub(crate) const CHECK_EVERY: Duration = Duration::from_millis(250);

/// How long a browser waits before it reconnects a broken feed.
const RETRY: Duration = Duration::from_secs(1);

/// The live feed.
#[utoipa::path(get, path = "/api/v1/events", tag = "controller", operation_id = "events",
    responses((status = 200,
        description = "Server-sent events: `event: snapshot` with a `Live` object as data, once a second and at once when the topology, the hosts, the connected switches or an application's state change",
        content_type = "text/event-stream", body = Live)))]
pub(super) async fn events(
    State(s): State<Shared>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let feed = Feed::new(s);
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// What makes a feed send before its next sample.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Fingerprint {
    topology: u64,
    hosts: u64,
    switches: Vec<u64>,
    apps: Vec<u8>,
    /// Each datapath's master, in a cluster.
    masters: Vec<(String, Option<String>)>,
}

/// One client's feed.
struct Feed {
    shared: Shared,
    workers: WorkerSampler,
    /// The scheduler at the last sample.
    scheduler: Option<Scheduler>,
    ticker: tokio::time::Interval,
    last_sample: tokio::time::Instant,
    seen: Fingerprint,
    started: bool,
}

impl Feed {
    fn new(shared: Shared) -> Feed {
        let mut ticker = tokio::time::interval(CHECK_EVERY);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Feed {
            shared,
            workers: WorkerSampler::default(),
            scheduler: None,
            ticker,
            last_sample: tokio::time::Instant::now(),
            seen: Fingerprint::default(),
            started: false,
        }
    }

    /// The next event, or `None` once the server is shutting down.
    async fn next(&mut self) -> Option<Event> {
        if *self.shared.closing.borrow() {
            return None;
        }
        if !self.started {
            self.started = true;
            self.sample().await;
            return Some(self.snapshot().await.retry(RETRY));
        }
        loop {
            tokio::select! {
                changed = self.shared.closing.changed() => {
                    if changed.is_err() || *self.shared.closing.borrow() {
                        return None;
                    }
                }
                _ = self.ticker.tick() => {}
            }
            let due = self.last_sample.elapsed() >= SAMPLE_EVERY;
            if due {
                self.sample().await;
            }
            if due || self.fingerprint() != self.seen {
                return Some(self.snapshot().await);
            }
        }
    }

    async fn sample(&mut self) {
        self.last_sample = tokio::time::Instant::now();
        let scheduler = scheduler::show(State(self.shared.clone())).await.0;
        let at = self.shared.started.elapsed();
        self.workers.sample(at, &scheduler.workers);
        self.scheduler = Some(scheduler);
    }

    fn fingerprint(&self) -> Fingerprint {
        let control = &self.shared.control;
        let snapshot = control.snapshot();
        let version = |v: Option<u64>| v.unwrap_or(0);
        Fingerprint {
            topology: version(
                snapshot
                    .get::<baton_apps::views::Topology>()
                    .map(|t| t.version()),
            ),
            hosts: version(
                snapshot
                    .get::<baton_apps::views::Hosts>()
                    .map(|h| h.version()),
            ),
            switches: control.switches().iter().map(|s| s.info.dpid.0).collect(),
            apps: control
                .apps()
                .iter()
                .map(|a| match a.lifecycle {
                    Lifecycle::Running => 0,
                    Lifecycle::Stopped => 1,
                    Lifecycle::Failed(_) => 2,
                })
                .collect(),
            masters: self
                .shared
                .cluster()
                .map(|c| c.masters.into_iter().map(|m| (m.dpid, m.master)).collect())
                .unwrap_or_default(),
        }
    }

    /// The snapshot to send now, with the last sample's workers; notes
    /// what it showed.
    async fn snapshot(&mut self) -> Event {
        self.seen = self.fingerprint();
        let s = &self.shared;
        let switches = self.switches();
        let topology = network::topology(State(s.clone())).await.0;
        let hosts = network::hosts(State(s.clone())).await.0;
        let apps = apps::list(State(s.clone())).await.0;
        let dags = dags::list(State(s.clone())).await.0;
        let reservations = reservations::live(&s.control);
        let scheduler = match &self.scheduler {
            Some(sched) => sched.clone(),
            None => scheduler::show(State(s.clone())).await.0,
        };
        let live = Live {
            at_ms: s.started.elapsed().as_millis() as u64,
            sample: self.workers.sample,
            interval_secs: self.workers.interval_secs,
            rx_per_sec: switches.iter().filter_map(|s| s.rx_per_sec).sum(),
            tx_per_sec: switches.iter().filter_map(|s| s.tx_per_sec).sum(),
            switches,
            scheduler,
            workers: self.workers.workers.clone(),
            topology,
            hosts,
            apps,
            dags,
            reservations,
            cluster: s.cluster().as_ref().map(Cluster::new),
        };
        Event::default()
            .event("snapshot")
            .json_data(&live)
            .unwrap_or_else(|e| Event::default().comment(format!("unserialisable snapshot: {e}")))
    }

    /// The connected switches with the API sampler's rates.
    fn switches(&self) -> Vec<LiveSwitch> {
        let switches = self.shared.control.switches();
        let sampler = self.shared.sampler();
        switches
            .iter()
            .map(|s| {
                let rates = sampler.rates(s.info.id);
                LiveSwitch {
                    dpid: s.info.dpid.to_string(),
                    version: version_number(s.info.version).to_string(),
                    peer: s.info.peer.map(|p| p.to_string()),
                    connected_secs: s.connected_for.as_secs_f64(),
                    rx_msgs: s.rx_msgs,
                    tx_msgs: s.tx_msgs,
                    rx_per_sec: rates.map(|r| r.rx_per_sec),
                    tx_per_sec: rates.map(|r| r.tx_per_sec),
                    weight: s.weight,
                    ports: s.ports.len(),
                    live_ports: s.ports.iter().filter(|p| p.is_live()).count(),
                }
            })
            .collect()
    }
}

/// Each worker's throughput and mean batch between successive samples of
/// its cumulative counters; the caller gives the time, so tests run on
/// synthetic time.
#[derive(Debug, Default)]
pub(crate) struct WorkerSampler {
    /// Samples taken so far.
    sample: u64,
    /// When the previous sample was taken.
    at: Option<Duration>,
    /// Seconds between the last two samples.
    interval_secs: f64,
    /// Each worker's (messages, batches) at the previous sample.
    counts: Vec<(u64, u64)>,
    workers: Vec<LiveWorker>,
}

impl WorkerSampler {
    /// Takes a sample at `at` (time since any fixed instant): the figures
    /// since the previous one (zero for the first).
    pub(crate) fn sample(&mut self, at: Duration, workers: &[Worker]) {
        let secs = self
            .at
            .map(|prev| at.saturating_sub(prev).as_secs_f64())
            .unwrap_or(0.0);
        self.workers = workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let (messages, batches) = self
                    .counts
                    .get(i)
                    .copied()
                    .unwrap_or((w.messages, w.batches));
                let dm = w.messages.saturating_sub(messages);
                let db = w.batches.saturating_sub(batches);
                LiveWorker {
                    ibt: w.ibt,
                    msg_per_sec: if secs > 0.0 { dm as f64 / secs } else { 0.0 },
                    batch: if db == 0 { 0.0 } else { dm as f64 / db as f64 },
                }
            })
            .collect();
        self.counts = workers.iter().map(|w| (w.messages, w.batches)).collect();
        self.interval_secs = secs;
        self.at = Some(at);
        self.sample += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(messages: u64, batches: u64, ibt: u32) -> Worker {
        Worker {
            worker: 0,
            batches,
            messages,
            mean_batch: 0.0,
            max_batch: 0,
            mean_batch_delay_us: 0.0,
            ibt,
        }
    }

    #[test]
    fn worker_figures_are_counted_between_samples_on_the_callers_clock() {
        let mut s = WorkerSampler::default();
        s.sample(
            Duration::from_secs(10),
            &[worker(100, 10, 10), worker(0, 0, 10)],
        );
        assert_eq!(s.sample, 1);
        assert_eq!(s.interval_secs, 0.0);
        assert_eq!(s.workers[0].msg_per_sec, 0.0);
        assert_eq!(s.workers[0].batch, 0.0);

        // Half a second later: worker 0 did 300 messages in 10 batches,
        // worker 1 nothing.
        s.sample(
            Duration::from_millis(10_500),
            &[worker(400, 20, 30), worker(0, 0, 10)],
        );
        assert_eq!(s.sample, 2);
        assert_eq!(s.interval_secs, 0.5);
        assert_eq!(s.workers[0].msg_per_sec, 600.0);
        assert_eq!(s.workers[0].batch, 30.0);
        assert_eq!(s.workers[0].ibt, 30);
        assert_eq!(s.workers[1].msg_per_sec, 0.0);
        assert_eq!(s.workers[1].batch, 0.0, "no batch in the interval");
    }

    #[test]
    fn counters_that_went_back_are_no_negative_rate() {
        let mut s = WorkerSampler::default();
        s.sample(Duration::ZERO, &[worker(1000, 100, 10)]);
        s.sample(Duration::from_secs(1), &[worker(10, 5, 10)]);
        assert_eq!(s.workers[0].msg_per_sec, 0.0);
        assert_eq!(s.workers[0].batch, 0.0);
    }
}
