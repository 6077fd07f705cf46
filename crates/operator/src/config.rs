//! `baton run --config FILE`: the configuration file (TOML), the command
//! line over it, and what they resolve to ([`Settings`]).
//!
//! Both the file and the command line are a [`Layer`], every key
//! optional; [`Layer::over`] lays the command line over the file, key by
//! key (tables such as `weights` and `app` merge per entry), and
//! [`Sourced::resolve`] checks the result and builds what `baton run`
//! starts: the runtime's [`Config`], the applications in order with their
//! settings applied, the API's [`ApiOptions`] and the [`Tls`] files.
//! `baton config check FILE` is [`check_file`]: it does all of that and
//! starts nothing.
//!
//! Every error names where it came from (the file, with line and column,
//! or the command line), the key, and what was expected ([`ConfigError`]).
//! Unknown keys are errors, so a misspelt key does not silently keep a
//! default. `docs/baton.toml` is the commented example, loaded by a test.
//!
//! Every duration is an integer whose key names its unit (`bdu_us`,
//! `echo_interval_ms`), as in the applications' settings
//! (`probe_interval_ms`) and the API's fields (`bdu_us`), so a value
//! means the same in the file, on the command line (`--bdu-us`) and in
//! the API. A key from before that convention (`bdu = "1ms"`) is an
//! error that says what it became.

mod resolve;

pub use crate::model::{BDU_US, bdu_from_us};
pub use resolve::Sourced;

use crate::server::ApiOptions;
use baton_openflow::DatapathId;
use baton_runtime::dag::Dag;
use baton_runtime::{AnyApp, Batching, Config, SchedulerKind, parse_duration};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// Where a key was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The configuration file.
    File(PathBuf),
    /// A flag.
    CommandLine,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File(p) => write!(f, "{}", p.display()),
            Source::CommandLine => f.write_str("command line"),
        }
    }
}

/// A configuration that cannot be used: where, which key, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file or the command line.
    pub source: Source,
    /// `line:column` in the file, where known.
    pub at: Option<(usize, usize)>,
    /// The key, dotted (`api.listen`, `app.topology.probe_interval_ms`);
    /// empty for the file as a whole.
    pub key: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some((line, col)) = self.at {
            write!(f, ":{line}:{col}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": key `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A value read with its `FromStr` (schedulers, addresses, filters),
/// so that a bad one is an error naming what was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Parsed<T>(pub T);

impl<'de, T: FromStr<Err: fmt::Display>> Deserialize<'de> for Parsed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Parsed<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<T: FromStr<Err: fmt::Display>> Visitor<'_> for V<T> {
            type Value = Parsed<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Parsed<T>, E> {
                s.parse().map(Parsed).map_err(E::custom)
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// A duration key renamed when every duration became an integer whose
/// name carries its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Renamed {
    /// The old key, which held a string with a unit (`bdu = "1ms"`).
    old: &'static str,
    /// The key it became (`bdu_us`).
    new: &'static str,
    /// The new key's unit, in words.
    unit: &'static str,
    /// The new key's unit in nanoseconds.
    unit_ns: u64,
    /// The default, in the new key's unit.
    default: u64,
}

/// The duration keys renamed, with what each became.
const RENAMED: [Renamed; 4] = [
    Renamed {
        old: "bdu",
        new: "bdu_us",
        unit: "microseconds",
        unit_ns: 1_000,
        default: 1_000,
    },
    Renamed {
        old: "echo_interval",
        new: "echo_interval_ms",
        unit: "milliseconds",
        unit_ns: 1_000_000,
        default: 5_000,
    },
    Renamed {
        old: "echo_timeout",
        new: "echo_timeout_ms",
        unit: "milliseconds",
        unit_ns: 1_000_000,
        default: 15_000,
    },
    Renamed {
        old: "stats_interval",
        new: "stats_interval_ms",
        unit: "milliseconds",
        unit_ns: 1_000_000,
        default: 0,
    },
];

impl Renamed {
    /// What to say about `old = value`: what the key became, with the
    /// value in the new unit when it is a whole number of it.
    fn message(&self, value: Option<&str>) -> String {
        let ns = value
            .and_then(|v| parse_duration(v).ok())
            .and_then(|d| u64::try_from(d.as_nanos()).ok());
        let example = match ns {
            Some(ns) if ns % self.unit_ns == 0 => ns / self.unit_ns,
            _ => self.default,
        };
        format!(
            "renamed to `{}`, {} as an integer, e.g. {} = {example}",
            self.new, self.unit, self.new
        )
    }
}

/// An address to listen on, `ADDR:PORT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr(pub SocketAddr);

impl FromStr for Addr {
    type Err = String;
    fn from_str(s: &str) -> Result<Addr, String> {
        s.parse()
            .map(Addr)
            .map_err(|_| format!("bad address {s:?}: expected ADDR:PORT, e.g. 0.0.0.0:6653"))
    }
}

/// What to log: a `tracing` filter, `info` or
/// `warn,baton_runtime=debug` (the `RUST_LOG` syntax), checked when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFilter(pub String);

impl FromStr for LogFilter {
    type Err = String;
    fn from_str(s: &str) -> Result<LogFilter, String> {
        tracing_subscriber::EnvFilter::builder()
            .parse(s)
            .map(|_| LogFilter(s.to_string()))
            .map_err(|e| {
                format!("bad log filter {s:?}: {e} (expected e.g. \"info\" or \"warn,baton_runtime=debug\")")
            })
    }
}

/// Where the API listens: an address, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiListen(pub Option<SocketAddr>);

impl FromStr for ApiListen {
    type Err = String;
    fn from_str(s: &str) -> Result<ApiListen, String> {
        if s == "off" {
            return Ok(ApiListen(None));
        }
        s.parse()
            .map(|a| ApiListen(Some(a)))
            .map_err(|e| format!("bad API address {s:?}: {e} (ADDR:PORT or off)"))
    }
}

/// The `[api]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiLayer {
    /// `ADDR:PORT` or `off` (default `127.0.0.1:8080`).
    pub listen: Option<Parsed<ApiListen>>,
    /// The token mutating calls must present.
    pub token: Option<String>,
    /// A file holding the token (its surrounding whitespace dropped).
    pub token_file: Option<PathBuf>,
}

/// The `[cluster]` table: join a cluster of baton instances that act as
/// one controller, coordinated through etcd (`baton-cluster`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterLayer {
    /// The etcd client URLs (`http://127.0.0.1:2379`); none: standalone.
    pub etcd: Option<Vec<String>>,
    /// This instance's name, unique in the cluster.
    pub node: Option<String>,
    /// The lease's time to live, milliseconds, whole seconds (default
    /// 3000): a dead instance's switches get a new master within it.
    pub ttl_ms: Option<u64>,
}

/// The `[tls]` table: the files for OpenFlow over TLS on `listen_tls`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsLayer {
    /// The controller's certificate chain (PEM).
    pub cert: Option<PathBuf>,
    /// Its private key (PEM).
    pub key: Option<PathBuf>,
    /// Switches' certificates must be signed by this CA (PEM); without
    /// it they are not asked for one.
    pub client_ca: Option<PathBuf>,
}

/// One layer of configuration, the file or the command line: every key
/// optional. The file's keys are these, in TOML.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Addresses switches connect to over TCP.
    pub listen: Option<Vec<Parsed<Addr>>>,
    /// Addresses switches connect to over TLS (needs `tls.cert` and
    /// `tls.key`).
    pub listen_tls: Option<Vec<Parsed<Addr>>>,
    /// Worker threads (default: one per core).
    pub workers: Option<usize>,
    /// Pin worker i to core i.
    pub pin: Option<bool>,
    /// Workload distribution (Maestro §3.2).
    pub scheduler: Option<Parsed<SchedulerKind>>,
    /// `adaptive` or `static` (default: the scheduler's).
    pub batching: Option<Parsed<Batching>>,
    /// Batching-delay upper bound, microseconds ([`BDU_US`]).
    pub bdu_us: Option<u64>,
    /// Fixed bytes served per service chance (default: adaptive).
    pub read_size: Option<usize>,
    /// Disconnect a switch whose unsent output passes this many bytes (one
    /// whose output reaches a quarter of it is not read until it reads it
    /// all).
    pub max_output: Option<usize>,
    /// Bytes the kernel may queue from each switch (`SO_RCVBUF`; 0: the
    /// kernel's autotuning).
    pub recv_buffer: Option<usize>,
    /// Echo a switch silent for this long, milliseconds.
    pub echo_interval_ms: Option<u64>,
    /// Drop a switch silent for this long, milliseconds (more than
    /// `echo_interval_ms`).
    pub echo_timeout_ms: Option<u64>,
    /// Log a statistics line this often, milliseconds (0: never).
    pub stats_interval_ms: Option<u64>,
    /// What to log (default `info`; `RUST_LOG`, when set, wins).
    pub log: Option<Parsed<LogFilter>>,
    /// Service chances per round, by datapath id.
    #[serde(default)]
    pub weights: BTreeMap<Parsed<DatapathId>, u32>,
    /// Applications, in pipeline order.
    pub apps: Option<Vec<String>>,
    /// Settings per application, by name (passed to its `configure`).
    #[serde(default)]
    pub app: BTreeMap<String, toml::Table>,
    /// Application DAGs, by name ([`DagLayer`]).
    #[serde(default)]
    pub dag: BTreeMap<String, DagLayer>,
    /// The REST API.
    #[serde(default)]
    pub api: ApiLayer,
    /// TLS files.
    #[serde(default)]
    pub tls: TlsLayer,
    /// Joining a cluster.
    #[serde(default)]
    pub cluster: ClusterLayer,
}

/// An application DAG the operator declares (`[dag.NAME]`, Maestro thesis
/// §3.2.4): stages the applications offer ([`baton_runtime::App::dag_apps`];
/// `routing` offers `routes` and `route-flow`), the order they run in,
/// and what starts it: new versions of `views`, or a timer every
/// `every_ms`. A DAG named like an application's own replaces it:
///
/// ```toml
/// [dag.routing]
/// apps = ["routes", "route-flow"]
/// edges = [["routes", "route-flow"]]
/// views = ["topology", "hosts"]
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DagLayer {
    /// Its stages, by name.
    pub apps: Vec<String>,
    /// `[a, b]`: stage `a` runs before stage `b`.
    #[serde(default)]
    pub edges: Vec<[String; 2]>,
    /// Views whose new versions start it.
    pub views: Option<Vec<String>>,
    /// Or: it starts every this many milliseconds.
    pub every_ms: Option<u64>,
}

/// OpenFlow over TLS as configured: what `baton run` hands the runtime's
/// TLS listener. The files were found readable; their contents are the
/// listener's to parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// Addresses to accept TLS switches on.
    pub listen: Vec<SocketAddr>,
    /// The controller's certificate chain (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// Verify switches' certificates against this CA (PEM), if given.
    pub client_ca: Option<PathBuf>,
}

/// Everything `baton run` starts, checked.
#[derive(Debug)]
pub struct Settings {
    /// The runtime's configuration.
    pub runtime: Config,
    /// The applications, in pipeline order, their settings applied.
    pub apps: Vec<AnyApp>,
    /// The DAGs declared (`[dag.NAME]`), built from the applications'
    /// stages.
    pub dags: Vec<Dag>,
    /// The API, or `None` when `off`.
    pub api: Option<ApiOptions>,
    /// OpenFlow over TLS, if configured.
    pub tls: Option<Tls>,
    /// How often to log a statistics line (zero: never).
    pub stats_interval: Duration,
    /// What to log, if configured (`RUST_LOG`, when set, wins).
    pub log: Option<String>,
    /// The cluster to join, if any (`runtime.clustered` is set then).
    pub cluster: Option<baton_cluster::member::Options>,
}

/// Reads and checks `path`: the layer it holds, or an error naming the
/// file, the line and the key.
pub fn read_file(path: &Path) -> Result<Layer, ConfigError> {
    let source = Source::File(path.to_path_buf());
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        source: source.clone(),
        at: None,
        key: String::new(),
        message: format!("cannot read it: {e}"),
    })?;
    parse(&text, source)
}

/// Parses TOML `text` read from `source`.
pub fn parse(text: &str, source: Source) -> Result<Layer, ConfigError> {
    let error = |e: toml::de::Error, key: String| ConfigError {
        at: e.span().map(|s| line_col(text, s.start)),
        source: source.clone(),
        key,
        message: e.message().trim().to_string(),
    };
    let table = toml::de::DeTable::parse(text).map_err(|e| error(e, String::new()))?;
    for (key, value) in table.get_ref() {
        if let Some(r) = RENAMED.iter().find(|r| r.old == key.get_ref().as_ref()) {
            let value = match value.get_ref() {
                toml::de::DeValue::String(s) => Some(s.as_ref()),
                _ => None,
            };
            return Err(ConfigError {
                source: source.clone(),
                at: Some(line_col(text, key.span().start)),
                key: r.old.to_string(),
                message: r.message(value),
            });
        }
    }
    let de = toml::Deserializer::from(table);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." { String::new() } else { key };
        error(e.into_inner(), key)
    })
}

/// 1-based line and column of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Checks the file at `path` as `baton run --config` would, starting
/// nothing.
pub fn check_file(path: &Path) -> Result<Settings, ConfigError> {
    let file = read_file(path)?;
    Layer::default()
        .over(file, Source::File(path.to_path_buf()))
        .resolve()
}

#[cfg(test)]
mod tests;
