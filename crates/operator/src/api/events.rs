//! `GET /api/v1/events`: the live feed, as server-sent events. Each event
//! (`event: snapshot`) carries one [`Live`] JSON object: the switches with
//! their message rates, each worker's IBT and batch size, Jain's fairness
//! index, the topology, the hosts and the applications. The web UI draws
//! from nothing else.
//!
//! A feed samples the controller's counters every [`SAMPLE_EVERY`] and
//! sends a snapshot after each sample; between samples it looks every
//! [`CHECK_EVERY`] at what an operator would wait a second for (the
//! topology's and hosts' view versions, which switches are connected, the
//! applications' states) and sends at once when one moved. A feed ends
//! when the server shuts down ([`Shared::closing`]), so that graceful
//! shutdown does not wait for clients that never hang up.
//!
//! The rates are computed by [`Sampler`], which takes the time from its
//! caller and is tested on synthetic time.

use super::Shared;
use super::{apps, network};
use crate::model::live::{Live, LiveSwitch, LiveWorker};
use crate::model::version_number;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use baton_runtime::control::SwitchStatus;
use baton_runtime::pipeline::Lifecycle;
use baton_runtime::stats::WorkerSnapshot;
use futures_util::Stream;
use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;
use tokio::time::MissedTickBehavior;

/// How often the counters are sampled and a snapshot sent: once a second,
/// the resolution of the UI's charts and of the fairness interval.
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// How often a feed looks for a change worth sending at once: a cut link
/// shows within a quarter of a second of discovery noticing it, for a few
/// cheap reads (two view versions, the switch list, the applications'
/// states) per client.
pub(crate) const CHECK_EVERY: Duration = Duration::from_millis(250);

/// How long a browser waits before it reconnects a broken feed.
const RETRY: Duration = Duration::from_secs(1);

/// The live feed.
#[utoipa::path(get, path = "/api/v1/events", tag = "controller",
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
}

/// One client's feed.
struct Feed {
    shared: Shared,
    sampler: Sampler,
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
            sampler: Sampler::default(),
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
            self.sample();
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
                self.sample();
            }
            if due || self.fingerprint() != self.seen {
                return Some(self.snapshot().await);
            }
        }
    }

    fn sample(&mut self) {
        self.last_sample = tokio::time::Instant::now();
        let control = &self.shared.control;
        let at = self.shared.started.elapsed();
        self.sampler
            .sample(at, &control.switches(), &control.stats().workers);
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
        }
    }

    /// The snapshot to send now, with the last sample's rates; notes what
    /// it showed.
    async fn snapshot(&mut self) -> Event {
        self.seen = self.fingerprint();
        let s = &self.shared;
        let topology = network::topology(State(s.clone())).await.0;
        let hosts = network::hosts(State(s.clone())).await.0;
        let apps = apps::list(State(s.clone())).await.0;
        let r = &self.sampler;
        let live = Live {
            at_ms: s.started.elapsed().as_millis() as u64,
            sample: r.sample,
            interval_secs: r.interval_secs,
            switches: r.switches.clone(),
            workers: r.workers.clone(),
            rx_rate: r.switches.iter().map(|s| s.rx_rate).sum(),
            tx_rate: r.switches.iter().map(|s| s.tx_rate).sum(),
            fairness: r.fairness,
            topology,
            hosts,
            apps,
        };
        Event::default()
            .event("snapshot")
            .json_data(&live)
            .unwrap_or_else(|e| Event::default().comment(format!("unserialisable snapshot: {e}")))
    }
}

/// Counters as they were at the previous sample.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    rx: u64,
    tx: u64,
}

/// Rates from successive samples of cumulative counters; the caller gives
/// the time, so tests run on synthetic time.
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    /// Samples taken so far.
    sample: u64,
    /// When the previous sample was taken.
    at: Option<Duration>,
    /// Seconds between the last two samples.
    interval_secs: f64,
    /// Each switch's counters at the previous sample, by datapath id.
    switch_counts: HashMap<u64, Counts>,
    /// Each worker's (messages, batches) at the previous sample.
    worker_counts: Vec<(u64, u64)>,
    switches: Vec<LiveSwitch>,
    workers: Vec<LiveWorker>,
    fairness: Option<f64>,
}

impl Sampler {
    /// Takes a sample at `at` (time since any fixed instant): the rates
    /// since the previous one (zero for the first, and for a switch not
    /// there at the previous one).
    pub(crate) fn sample(
        &mut self,
        at: Duration,
        switches: &[SwitchStatus],
        workers: &[WorkerSnapshot],
    ) {
        let secs = self
            .at
            .map(|prev| at.saturating_sub(prev).as_secs_f64())
            .unwrap_or(0.0);
        let rate = |now: u64, before: u64| {
            if secs > 0.0 {
                now.saturating_sub(before) as f64 / secs
            } else {
                0.0
            }
        };
        let mut counts = HashMap::with_capacity(switches.len());
        self.switches = switches
            .iter()
            .map(|s| {
                let now = Counts {
                    rx: s.rx_msgs,
                    tx: s.tx_msgs,
                };
                let before = self
                    .switch_counts
                    .get(&s.info.dpid.0)
                    .copied()
                    .unwrap_or(now);
                counts.insert(s.info.dpid.0, now);
                LiveSwitch {
                    dpid: s.info.dpid.to_string(),
                    version: version_number(s.info.version).to_string(),
                    peer: s.info.peer.map(|p| p.to_string()),
                    connected_secs: s.connected_for.as_secs_f64(),
                    rx_msgs: s.rx_msgs,
                    tx_msgs: s.tx_msgs,
                    rx_rate: rate(now.rx, before.rx),
                    tx_rate: rate(now.tx, before.tx),
                    weight: s.weight,
                    ports: s.ports.len(),
                    live_ports: s.ports.iter().filter(|p| p.is_live()).count(),
                }
            })
            .collect();
        self.switch_counts = counts;
        self.workers = workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let (messages, batches) = self
                    .worker_counts
                    .get(i)
                    .copied()
                    .unwrap_or((w.messages, w.batches));
                let (dm, db) = (
                    w.messages.saturating_sub(messages),
                    w.batches.saturating_sub(batches),
                );
                LiveWorker {
                    ibt: w.ibt,
                    msg_rate: rate(w.messages, messages),
                    batch: if db == 0 { 0.0 } else { dm as f64 / db as f64 },
                    batch_delay_us: w.mean_batch_delay_us,
                    messages: w.messages,
                    batches: w.batches,
                }
            })
            .collect();
        self.worker_counts = workers.iter().map(|w| (w.messages, w.batches)).collect();
        self.fairness = jain(
            self.switches
                .iter()
                .map(|s| s.rx_rate / f64::from(s.weight.max(1))),
        );
        self.interval_secs = secs;
        self.at = Some(at);
        self.sample += 1;
    }
}

/// Jain's fairness index of `xs`, (Σx)² / (n·Σx²): 1 when all are equal,
/// 1/n when one has everything; `None` when there is nothing to share.
pub(crate) fn jain(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum, squares) = xs.fold((0usize, 0.0, 0.0), |(n, s, q), x| (n + 1, s + x, q + x * x));
    (n > 0 && squares > 0.0).then(|| sum * sum / (n as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::{DatapathId, Version};
    use baton_runtime::{SwitchId, SwitchInfo};

    fn switch(dpid: u64, rx: u64, tx: u64, weight: u32) -> SwitchStatus {
        SwitchStatus {
            info: SwitchInfo {
                id: SwitchId::new(0, 0),
                dpid: DatapathId(dpid),
                version: Version::V13,
                peer: None,
            },
            ports: Vec::new(),
            connected_for: Duration::from_secs(1),
            rx_msgs: rx,
            tx_msgs: tx,
            tx_bytes: 0,
            weight,
        }
    }

    fn worker(messages: u64, batches: u64, ibt: u32) -> WorkerSnapshot {
        WorkerSnapshot {
            batches,
            messages,
            mean_batch: 0.0,
            mean_batch_delay_us: 0.0,
            max_batch: 0,
            ibt,
            ibt_trace: Vec::new(),
        }
    }

    #[test]
    fn jain_is_one_when_equal_and_one_over_n_when_one_takes_all() {
        assert_eq!(jain([5.0, 5.0, 5.0, 5.0].into_iter()), Some(1.0));
        assert_eq!(jain([8.0, 0.0, 0.0, 0.0].into_iter()), Some(0.25));
        let half = jain([1.0, 3.0].into_iter()).unwrap();
        assert!((half - 0.8).abs() < 1e-12, "{half}");
        assert_eq!(jain([0.0, 0.0].into_iter()), None);
        assert_eq!(jain(std::iter::empty()), None);
    }

    #[test]
    fn rates_are_counted_between_samples_on_the_callers_clock() {
        let mut s = Sampler::default();
        s.sample(
            Duration::from_secs(10),
            &[switch(1, 100, 50, 1), switch(2, 0, 0, 1)],
            &[worker(100, 10, 10)],
        );
        assert_eq!(s.sample, 1);
        assert_eq!(s.switches[0].rx_rate, 0.0);
        assert_eq!(s.fairness, None);

        // Half a second later: switch 1 sent 200 more, switch 2 100.
        s.sample(
            Duration::from_millis(10_500),
            &[switch(1, 300, 150, 1), switch(2, 100, 0, 1)],
            &[worker(400, 20, 30)],
        );
        assert_eq!(s.interval_secs, 0.5);
        assert_eq!(s.switches[0].rx_rate, 400.0);
        assert_eq!(s.switches[0].tx_rate, 200.0);
        assert_eq!(s.switches[1].rx_rate, 200.0);
        assert_eq!(s.workers[0].msg_rate, 600.0);
        assert_eq!(s.workers[0].batch, 30.0);
        assert_eq!(s.workers[0].ibt, 30);
        // 400 and 200: (600)² / (2 · 200,000) = 0.9.
        assert!((s.fairness.unwrap() - 0.9).abs() < 1e-12);

        // Weights: switch 1 weighs 2, so 400 and 200 are its fair share.
        s.sample(
            Duration::from_millis(11_500),
            &[
                switch(1, 700, 150, 2),
                switch(2, 300, 0, 1),
                switch(3, 9, 9, 1),
            ],
            &[worker(400, 20, 20)],
        );
        assert_eq!(s.switches[2].rx_rate, 0.0, "a new switch starts at zero");
        assert_eq!(s.workers[0].batch, 0.0, "no batch in the interval");
        let f = s.fairness.unwrap();
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
    }

    #[test]
    fn a_reconnected_switch_with_lower_counters_is_not_a_negative_rate() {
        let mut s = Sampler::default();
        s.sample(Duration::ZERO, &[switch(1, 1000, 1000, 1)], &[]);
        s.sample(Duration::from_secs(1), &[switch(1, 10, 5, 1)], &[]);
        assert_eq!(s.switches[0].rx_rate, 0.0);
        assert_eq!(s.switches[0].tx_rate, 0.0);
    }
}
