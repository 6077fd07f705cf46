//! `/metrics`: the controller in the Prometheus text format (0.0.4), every
//! metric named `baton_...`, gathered when scraped from what
//! [`Control`] shows and the sampler's last interval.
//!
//! [`gather`] is the list of metrics; each is one statement, so adding one
//! is one line:
//!
//! ```text
//! m.counter("baton_switch_rx_messages_total", "...").each(&switches, |s| (dpid(s), s.rx_msgs));
//! ```
//!
//! A family is written with its HELP and TYPE even when it has no samples
//! yet (no switch connected), so a dashboard's queries always name
//! metrics that exist. Counters come from the runtime's own counters,
//! which start at zero when the controller (or, per switch, the
//! connection) starts, as Prometheus expects of a counter.
//!
//! A clustered instance adds the `baton_cluster_...` families
//! ([`cluster`]) from its cluster member's status; a standalone one
//! writes none of them.

use crate::sampler::Sampler;
use baton_apps::views;
use baton_cluster::status::ClusterStatus;
use baton_runtime::control::{Control, SwitchStatus};
use baton_runtime::pipeline::Lifecycle;
use baton_runtime::stats::DELAY_BUCKETS_US;
use std::fmt::Write;

/// The media type of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Every metric now, in the text format; rates and fairness from the
/// sampler's last interval, and the cluster's when this instance is in
/// one.
pub fn gather(c: &Control, sampler: &Sampler, cluster_status: Option<&ClusterStatus>) -> String {
    let fairness = sampler.fairness();
    let stats = c.stats();
    let switches = c.switches();
    let sched = c.scheduler();
    let apps = c.apps();
    let snapshot = c.snapshot();
    let topology = snapshot.get::<views::Topology>();
    let hosts = snapshot.get::<views::Hosts>();
    let workers: Vec<(String, &baton_runtime::stats::WorkerSnapshot)> = sched
        .workers
        .iter()
        .enumerate()
        .map(|(i, w)| (i.to_string(), w))
        .collect();
    let stop_unconfirmed = c.stop_unconfirmed();
    let app_events: Vec<(&str, &str, u64)> = apps
        .iter()
        .flat_map(|a| a.counters.iter().map(|(e, n)| (a.name.as_str(), *e, *n)))
        .collect();
    let dpid = |s: &SwitchStatus| vec![("dpid", s.info.dpid.to_string())];

    let mut m = Exposition::default();
    m.gauge(
        "baton_info",
        "The controller's version and scheduler (always 1)",
    )
    .sample(
        vec![
            ("version", env!("CARGO_PKG_VERSION").to_string()),
            ("scheduler", sched.kind.name().to_string()),
        ],
        1u64,
    );
    m.gauge(
        "baton_switches_connected",
        "Switches connected (handshake done)",
    )
    .value(switches.len());
    m.counter(
        "baton_switch_rx_messages_total",
        "OpenFlow messages received from the switch",
    )
    .each(&switches, |s| (dpid(s), s.rx_msgs));
    m.counter(
        "baton_switch_tx_messages_total",
        "OpenFlow messages sent to the switch",
    )
    .each(&switches, |s| (dpid(s), s.tx_msgs));
    m.gauge(
        "baton_switch_rx_messages_per_second",
        "Messages received from the switch per second over the sampler's last interval",
    )
    .each(&switches, |s| {
        let rate = sampler.rates(s.info.id).map_or(0.0, |r| r.rx_per_sec);
        (dpid(s), rate)
    });
    m.gauge(
        "baton_switch_tx_messages_per_second",
        "Messages sent to the switch per second over the sampler's last interval",
    )
    .each(&switches, |s| {
        let rate = sampler.rates(s.info.id).map_or(0.0, |r| r.tx_per_sec);
        (dpid(s), rate)
    });
    m.counter("baton_switch_tx_bytes_total", "Bytes sent to the switch")
        .each(&switches, |s| (dpid(s), s.tx_bytes));
    m.gauge(
        "baton_switch_weight",
        "The switch's service chances per scheduling round",
    )
    .each(&switches, |s| (dpid(s), s.weight));
    m.gauge(
        "baton_switch_connected_seconds",
        "Seconds since the switch's handshake",
    )
    .each(&switches, |s| (dpid(s), s.connected_for.as_secs_f64()));
    m.counter(
        "baton_messages_received_total",
        "OpenFlow messages received from all switches, by type",
    )
    .each(&stats.messages, |k| {
        (vec![("type", k.kind.to_string())], k.received)
    });
    m.counter(
        "baton_messages_sent_total",
        "OpenFlow messages sent to all switches, by type",
    )
    .each(&stats.messages, |k| {
        (vec![("type", k.kind.to_string())], k.sent)
    });
    m.histogram(
        "baton_message_delay_seconds",
        "Time from a message's read to the write of its batch's replies (queueing and batching delay)",
    )
    .buckets(
        Vec::new(),
        DELAY_BUCKETS_US.iter().map(|&us| us as f64 / 1e6),
        &stats.delay.buckets,
        stats.delay.sum_us as f64 / 1e6,
    );
    m.counter(
        "baton_connections_accepted_total",
        "OpenFlow connections accepted",
    )
    .value(stats.accepted);
    m.counter(
        "baton_connections_closed_total",
        "OpenFlow connections closed, by reason",
    )
    .each(&stats.closed, |(reason, n)| {
        (vec![("reason", reason.to_string())], *n)
    });
    m.counter(
        "baton_worker_batches_total",
        "Input batches the worker processed",
    )
    .each(&workers, |(i, w)| (vec![("worker", i.clone())], w.batches));
    m.counter(
        "baton_worker_messages_total",
        "Messages the worker processed",
    )
    .each(&workers, |(i, w)| (vec![("worker", i.clone())], w.messages));
    m.counter("baton_worker_batch_delay_seconds_total", "Time from each batch's first read to its flush, summed (divide by batches for the mean batching delay)")
        .each(&workers, |(i, w)| (vec![("worker", i.clone())], w.mean_batch_delay_us * w.batches as f64 / 1e6));
    m.gauge(
        "baton_worker_max_batch",
        "The largest batch the worker processed",
    )
    .each(&workers, |(i, w)| {
        (vec![("worker", i.clone())], w.max_batch)
    });
    m.gauge(
        "baton_worker_ibt",
        "The worker's input batching threshold now (Maestro §3.3)",
    )
    .each(&workers, |(i, w)| (vec![("worker", i.clone())], w.ibt));
    m.gauge(
        "baton_scheduler_bdu_seconds",
        "The batching-delay upper bound",
    )
    .value(sched.bdu.as_secs_f64());
    m.gauge(
        "baton_fairness_jain",
        "Jain's index of weighted per-switch service over the last sampling interval",
    )
    .each(fairness.iter(), |f| (Vec::new(), f.jain));
    m.counter(
        "baton_app_events_total",
        "What each application has done, by counter name",
    )
    .each(&app_events, |(a, e, n)| {
        (vec![("app", a.to_string()), ("event", e.to_string())], *n)
    });
    m.counter("baton_app_panics_total", "Times the application panicked")
        .each(&apps, |a| (vec![("app", a.name.clone())], a.panics));
    m.counter(
        "baton_app_stop_unconfirmed_total",
        "Switches that did not confirm the deletion of a stopped application's flows, by reason (timed_out, gone, refused)",
    )
    .each(&stop_unconfirmed, |(a, why, n)| {
        (vec![("app", a.clone()), ("reason", why.to_string())], *n)
    });
    m.gauge(
        "baton_app_running",
        "1 while the application gets events, 0 stopped or failed",
    )
    .each(&apps, |a| {
        (
            vec![("app", a.name.clone())],
            u64::from(a.lifecycle == Lifecycle::Running),
        )
    });
    m.gauge(
        "baton_topology_switches",
        "Switches the topology view knows",
    )
    .value(topology.as_ref().map_or(0, |t| t.switches.len()));
    m.gauge(
        "baton_topology_links",
        "Links the topology view knows in both directions",
    )
    .value(
        topology
            .as_ref()
            .map_or(0, |t| t.bidirectional_links().count()),
    );
    m.gauge("baton_hosts", "Hosts the hosts view knows")
        .value(hosts.map_or(0, |h| h.len()));
    if let Some(s) = cluster_status {
        cluster(&mut m, s);
    }
    m.render()
}

/// The cluster's families, from its member's status `s`.
pub fn cluster(m: &mut Exposition, s: &ClusterStatus) {
    let endpoint = |url: &str| vec![("endpoint", url.to_string())];
    m.counter(
        "baton_cluster_role_changes_total",
        "Times this instance became or stopped being master of a datapath",
    )
    .value(s.role_changes);
    m.counter(
        "baton_cluster_facts_written_total",
        "Fact keys of the shared views (switches, links, hosts) this instance put in etcd",
    )
    .value(s.facts.written);
    m.counter(
        "baton_cluster_facts_deleted_total",
        "Fact keys of the shared views this instance deleted from etcd",
    )
    .value(s.facts.deleted);
    m.gauge(
        "baton_cluster_peer_facts",
        "Facts of the other members' (switches, links, hosts) this instance holds",
    )
    .value(s.facts.peers);
    if let Some(l) = &s.ledger {
        let counters = [
            (
                "baton_cluster_ledger_granted_total",
                "Bandwidth reservations this instance granted in the shared ledger",
                l.granted,
            ),
            (
                "baton_cluster_ledger_refused_total",
                "Bandwidth requests this instance refused: a link of the path was full",
                l.refused,
            ),
            (
                "baton_cluster_ledger_conflicts_total",
                "Shared-ledger transactions of this instance that lost a race and were decided again",
                l.conflicts,
            ),
            (
                "baton_cluster_ledger_released_total",
                "Bandwidth reservations this instance released from the shared ledger",
                l.released,
            ),
            (
                "baton_cluster_ledger_failed_total",
                "Bandwidth requests this instance could not decide (etcd out of reach, no lease)",
                l.failed,
            ),
        ];
        for (name, help, value) in counters {
            m.counter(name, help).value(value);
        }
        m.gauge(
            "baton_cluster_ledger_reservations",
            "Bandwidth reservations in the shared ledger, every instance's",
        )
        .value(l.held);
    }
    m.gauge("baton_cluster_members", "Cluster members with a live lease")
        .value(s.members.len());
    m.gauge(
        "baton_cluster_masters",
        "Datapaths each cluster member masters",
    )
    .each(&s.members, |n| (vec![("node", n.node.clone())], n.masters));
    m.gauge(
        "baton_cluster_connected",
        "1 while this instance holds a live etcd lease, 0 otherwise",
    )
    .value(u64::from(s.connected));
    m.gauge(
        "baton_cluster_etcd_up",
        "1 when the etcd endpoint answered its last status request, 0 otherwise",
    )
    .each(&s.etcd, |e| (endpoint(&e.url), u64::from(e.healthy)));
    m.gauge(
        "baton_cluster_etcd_latency_seconds",
        "How long the etcd endpoint's last status request took (none when it did not answer)",
    )
    .each(
        s.etcd.iter().filter_map(|e| e.latency_ms.map(|ms| (e, ms))),
        |(e, ms)| (endpoint(&e.url), ms / 1e3),
    );
}

/// A sample's value: integers are written exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A whole number.
    Int(u64),
    /// Any other.
    Float(f64),
}

macro_rules! number_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Number {
            fn from(v: $t) -> Number {
                Number::$v(v as _)
            }
        }
    )*};
}
number_from!(u64 => Int, u32 => Int, usize => Int, f64 => Float);

/// `Counter`, `Gauge` or `Histogram`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// A sample's labels.
type Labels = Vec<(&'static str, String)>;

/// One sample: the suffix of its name (`_bucket`, `_sum`, `_count` for a
/// histogram, empty otherwise), its labels and value.
#[derive(Debug)]
struct Sample {
    suffix: &'static str,
    labels: Labels,
    value: Number,
}

/// One metric family: its name, help, type and samples.
#[derive(Debug)]
pub struct Family {
    name: &'static str,
    help: &'static str,
    kind: Kind,
    samples: Vec<Sample>,
}

impl Family {
    /// One unlabelled sample.
    pub fn value(&mut self, v: impl Into<Number>) -> &mut Family {
        self.sample(Vec::new(), v)
    }

    /// One sample with these labels.
    pub fn sample(&mut self, labels: Labels, v: impl Into<Number>) -> &mut Family {
        debug_assert!(self.kind != Kind::Histogram, "{}: use buckets", self.name);
        self.samples.push(Sample {
            suffix: "",
            labels,
            value: v.into(),
        });
        self
    }

    /// A histogram's samples: `counts[i]` observations fell at or below
    /// `bounds[i]` and above the bound before (`counts` has one more
    /// entry, above every bound); they summed to `sum`. Written
    /// cumulative, as `_bucket{le=...}`, `_sum` and `_count`.
    pub fn buckets(
        &mut self,
        labels: Labels,
        bounds: impl IntoIterator<Item = f64>,
        counts: &[u64],
        sum: f64,
    ) -> &mut Family {
        debug_assert!(self.kind == Kind::Histogram, "{}", self.name);
        let les = bounds
            .into_iter()
            .map(|b| b.to_string())
            .chain(std::iter::once("+Inf".to_string()));
        let mut cumulative = 0;
        for (le, n) in les.zip(counts) {
            cumulative += n;
            let mut labels = labels.clone();
            labels.push(("le", le));
            self.samples.push(Sample {
                suffix: "_bucket",
                labels,
                value: Number::Int(cumulative),
            });
        }
        self.samples.push(Sample {
            suffix: "_sum",
            labels: labels.clone(),
            value: Number::Float(sum),
        });
        self.samples.push(Sample {
            suffix: "_count",
            labels,
            value: Number::Int(cumulative),
        });
        self
    }

    /// One sample per item, its labels and value from `f`.
    pub fn each<T, V: Into<Number>>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        f: impl Fn(T) -> (Labels, V),
    ) -> &mut Family {
        for item in items {
            let (labels, v) = f(item);
            self.sample(labels, v);
        }
        self
    }
}

/// Metric families in the order they were declared.
#[derive(Debug, Default)]
pub struct Exposition {
    families: Vec<Family>,
}

impl Exposition {
    /// A counter family (a total that only goes up); `name` ends in
    /// `_total`.
    pub fn counter(&mut self, name: &'static str, help: &'static str) -> &mut Family {
        debug_assert!(name.ends_with("_total"), "{name}");
        self.family(name, help, Kind::Counter)
    }

    /// A gauge family (a value now).
    pub fn gauge(&mut self, name: &'static str, help: &'static str) -> &mut Family {
        self.family(name, help, Kind::Gauge)
    }

    /// A histogram family, its samples given by [`Family::buckets`].
    pub fn histogram(&mut self, name: &'static str, help: &'static str) -> &mut Family {
        self.family(name, help, Kind::Histogram)
    }

    fn family(&mut self, name: &'static str, help: &'static str, kind: Kind) -> &mut Family {
        debug_assert!(
            self.families.iter().all(|f| f.name != name),
            "{name} declared twice"
        );
        self.families.push(Family {
            name,
            help,
            kind,
            samples: Vec::new(),
        });
        self.families.last_mut().expect("just pushed")
    }

    /// The text format: per family `# HELP`, `# TYPE`, then its samples.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        for f in &self.families {
            let kind = match f.kind {
                Kind::Counter => "counter",
                Kind::Gauge => "gauge",
                Kind::Histogram => "histogram",
            };
            let help = f.help.replace('\\', "\\\\").replace('\n', "\\n");
            let _ = writeln!(out, "# HELP {} {help}", f.name);
            let _ = writeln!(out, "# TYPE {} {kind}", f.name);
            for Sample {
                suffix,
                labels,
                value,
            } in &f.samples
            {
                out.push_str(f.name);
                out.push_str(suffix);
                if !labels.is_empty() {
                    out.push('{');
                    for (i, (k, v)) in labels.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        let v = v
                            .replace('\\', "\\\\")
                            .replace('"', "\\\"")
                            .replace('\n', "\\n");
                        let _ = write!(out, "{k}=\"{v}\"");
                    }
                    out.push('}');
                }
                let _ = match *value {
                    Number::Int(n) => writeln!(out, " {n}"),
                    Number::Float(x) if x.is_nan() => writeln!(out, " NaN"),
                    Number::Float(x) if x.is_infinite() => {
                        writeln!(out, " {}Inf", if x > 0.0 { "+" } else { "-" })
                    }
                    Number::Float(x) => writeln!(out, " {x}"),
                };
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_with_escapes_and_empty_families() {
        let mut m = Exposition::default();
        m.gauge("baton_up", "Up").value(1u64);
        m.counter("baton_things_total", "Things\nseen")
            .sample(vec![("name", "a\"b\\c".to_string())], 2.5)
            .sample(vec![("name", "x".into()), ("k", "y".into())], 3u64);
        m.gauge("baton_empty", "Nothing yet")
            .each(Vec::<u64>::new(), |v| (Vec::new(), v));
        m.gauge("baton_odd", "Odd values")
            .value(f64::INFINITY)
            .value(f64::NAN);
        assert_eq!(
            m.render(),
            "# HELP baton_up Up\n# TYPE baton_up gauge\nbaton_up 1\n\
             # HELP baton_things_total Things\\nseen\n# TYPE baton_things_total counter\n\
             baton_things_total{name=\"a\\\"b\\\\c\"} 2.5\nbaton_things_total{name=\"x\",k=\"y\"} 3\n\
             # HELP baton_empty Nothing yet\n# TYPE baton_empty gauge\n\
             # HELP baton_odd Odd values\n# TYPE baton_odd gauge\nbaton_odd +Inf\nbaton_odd NaN\n"
        );
    }

    #[test]
    fn the_cluster_families_from_its_status() {
        use baton_cluster::status::{Endpoint, Member};
        let member = |node: &str, masters| Member {
            node: node.into(),
            openflow: format!("{node}:6653"),
            api: None,
            masters,
        };
        let s = ClusterStatus {
            node: "a".into(),
            connected: true,
            members: vec![member("a", 2), member("b", 1)],
            masters: Vec::new(),
            etcd: vec![
                Endpoint {
                    url: "http://e1:2379".into(),
                    healthy: true,
                    latency_ms: Some(1.5),
                    error: None,
                },
                Endpoint {
                    url: "http://e2:2379".into(),
                    healthy: false,
                    latency_ms: None,
                    error: Some("connection refused".into()),
                },
            ],
            role_changes: 4,
            facts: baton_cluster::status::Facts {
                written: 12,
                deleted: 3,
                peers: 7,
            },
            ledger: Some(baton_cluster::status::Ledger {
                granted: 5,
                refused: 1,
                conflicts: 2,
                released: 3,
                failed: 0,
                held: 4,
            }),
        };
        let mut m = Exposition::default();
        cluster(&mut m, &s);
        let text = m.render();
        let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            samples,
            [
                "baton_cluster_role_changes_total 4",
                "baton_cluster_facts_written_total 12",
                "baton_cluster_facts_deleted_total 3",
                "baton_cluster_peer_facts 7",
                "baton_cluster_ledger_granted_total 5",
                "baton_cluster_ledger_refused_total 1",
                "baton_cluster_ledger_conflicts_total 2",
                "baton_cluster_ledger_released_total 3",
                "baton_cluster_ledger_failed_total 0",
                "baton_cluster_ledger_reservations 4",
                "baton_cluster_members 2",
                "baton_cluster_masters{node=\"a\"} 2",
                "baton_cluster_masters{node=\"b\"} 1",
                "baton_cluster_connected 1",
                "baton_cluster_etcd_up{endpoint=\"http://e1:2379\"} 1",
                "baton_cluster_etcd_up{endpoint=\"http://e2:2379\"} 0",
                "baton_cluster_etcd_latency_seconds{endpoint=\"http://e1:2379\"} 0.0015",
            ]
        );
        assert!(text.contains("# TYPE baton_cluster_role_changes_total counter\n"));
        assert!(text.contains("# TYPE baton_cluster_etcd_latency_seconds gauge\n"));
        assert_eq!(text.matches("# HELP ").count(), 15);
    }

    #[test]
    fn a_histogram_is_written_cumulative_with_sum_and_count() {
        let mut m = Exposition::default();
        m.histogram("baton_wait_seconds", "Waits").buckets(
            vec![("w", "0".into())],
            [0.001, 0.01],
            &[2, 0, 1],
            0.5,
        );
        assert_eq!(
            m.render(),
            "# HELP baton_wait_seconds Waits\n# TYPE baton_wait_seconds histogram\n\
             baton_wait_seconds_bucket{w=\"0\",le=\"0.001\"} 2\n\
             baton_wait_seconds_bucket{w=\"0\",le=\"0.01\"} 2\n\
             baton_wait_seconds_bucket{w=\"0\",le=\"+Inf\"} 3\n\
             baton_wait_seconds_sum{w=\"0\"} 0.5\nbaton_wait_seconds_count{w=\"0\"} 3\n"
        );
    }
}
