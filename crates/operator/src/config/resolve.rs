//! Layers laid over each other and checked together: [`Sourced`]
//! remembers which keys the command line set, so that an error found
//! only when keys meet (a token missing for the API's address, settings
//! for an application that is not run) names the right source.

use super::bdu_from_us;
use super::{ApiOptions, ConfigError, Layer, Parsed, Settings, Source, Tls, TlsLayer};
use crate::auth::{self, Token};
use baton_apps::{DEFAULT_APPS, by_name};
use baton_runtime::dag::{Dag, DagApp, Trigger};
use baton_runtime::env::ViewId;
use baton_runtime::{AnyApp, Config};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A layer with where each of its keys came from, for errors found when
/// keys are checked together.
#[derive(Debug, Clone)]
pub struct Sourced {
    layer: Layer,
    file: Option<Source>,
    /// The keys the command line set (`apps`, `api.listen`,
    /// `weights.00:00:00:00:00:00:00:01`).
    from_flags: BTreeSet<String>,
}

macro_rules! overlay {
    ($top:ident, $base:ident, $flags:ident, $($key:ident),+) => {$(
        if $top.$key.is_some() {
            $flags.insert(stringify!($key).to_string());
            $base.$key = $top.$key;
        }
    )+};
}

impl Layer {
    /// `self` (the command line) over `file`, read from `source`.
    pub fn over(self, file: Layer, source: Source) -> Sourced {
        let top = self;
        let mut base = file;
        let mut flags = BTreeSet::new();
        overlay!(
            top,
            base,
            flags,
            listen,
            listen_tls,
            workers,
            pin,
            scheduler,
            batching,
            bdu_us,
            read_size,
            max_output,
            recv_buffer,
            echo_interval_ms,
            echo_timeout_ms,
            stats_interval_ms,
            log,
            apps
        );
        if top.api.listen.is_some() {
            flags.insert("api.listen".to_string());
            base.api.listen = top.api.listen;
        }
        // A token on the command line replaces the file's, in either form.
        if top.api.token.is_some() || top.api.token_file.is_some() {
            flags.insert("api.token".to_string());
            flags.insert("api.token_file".to_string());
            base.api.token = top.api.token;
            base.api.token_file = top.api.token_file;
        }
        for (k, t) in [
            ("tls.cert", top.tls.cert),
            ("tls.key", top.tls.key),
            ("tls.client_ca", top.tls.client_ca),
        ] {
            if let Some(t) = t {
                flags.insert(k.to_string());
                match k {
                    "tls.cert" => base.tls.cert = Some(t),
                    "tls.key" => base.tls.key = Some(t),
                    _ => base.tls.client_ca = Some(t),
                }
            }
        }
        for (k, set) in [
            ("cluster.etcd", top.cluster.etcd.is_some()),
            ("cluster.node", top.cluster.node.is_some()),
            ("cluster.ttl_ms", top.cluster.ttl_ms.is_some()),
        ] {
            if set {
                flags.insert(k.to_string());
            }
        }
        base.cluster.etcd = top.cluster.etcd.or(base.cluster.etcd);
        base.cluster.node = top.cluster.node.or(base.cluster.node);
        base.cluster.ttl_ms = top.cluster.ttl_ms.or(base.cluster.ttl_ms);
        for Parsed(dpid) in top.weights.keys() {
            flags.insert(format!("weights.{dpid}"));
        }
        base.weights.extend(top.weights);
        for name in top.app.keys() {
            flags.insert(format!("app.{name}"));
        }
        base.app.extend(top.app);
        base.dag.extend(top.dag);
        let file = matches!(source, Source::File(_)).then_some(source);
        Sourced {
            layer: base,
            file,
            from_flags: flags,
        }
    }
}

impl Sourced {
    /// Just the command line.
    pub fn flags(layer: Layer) -> Sourced {
        layer.over(Layer::default(), Source::CommandLine)
    }

    /// An error in `key`, which came from the file or the command line.
    fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        self.error_due(key, key, message)
    }

    /// An error in `key` that `cause` (which may be another key) brought
    /// about: named where `cause` was set.
    fn error_due(&self, key: &str, cause: &str, message: impl Into<String>) -> ConfigError {
        let flag = self.from_flags.contains(cause);
        ConfigError {
            source: match (&self.file, flag) {
                (Some(f), false) => f.clone(),
                _ => Source::CommandLine,
            },
            at: None,
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// Checks the keys together and builds what they describe.
    pub fn resolve(self) -> Result<Settings, ConfigError> {
        let l = &self.layer;
        let defaults = Config::default();
        let ms = |v: Option<u64>, default: Duration| v.map_or(default, Duration::from_millis);
        if l.workers == Some(0) {
            return Err(self.error("workers", "at least 1"));
        }
        if l.read_size.is_some_and(|r| r < 64) {
            return Err(self.error("read_size", "at least 64 bytes"));
        }
        let bdu = match l.bdu_us {
            Some(us) => bdu_from_us(us).map_err(|e| self.error("bdu_us", e))?,
            None => defaults.bdu,
        };
        let echo_interval = ms(l.echo_interval_ms, defaults.echo_interval);
        let echo_timeout = ms(l.echo_timeout_ms, defaults.echo_timeout);
        if echo_interval.is_zero() {
            return Err(self.error("echo_interval_ms", "at least 1 millisecond"));
        }
        if echo_timeout <= echo_interval {
            // The timeout's fault when it was given, else the interval's
            // (against the default timeout).
            let key = if l.echo_timeout_ms.is_some() {
                "echo_timeout_ms"
            } else {
                "echo_interval_ms"
            };
            return Err(self.error(
                key,
                format!(
                    "echo_timeout_ms ({} ms) must be longer than echo_interval_ms ({} ms), so that a silent switch is asked before it is dropped",
                    echo_timeout.as_millis(),
                    echo_interval.as_millis()
                ),
            ));
        }
        let mut weights = Vec::new();
        for (Parsed(dpid), &w) in &l.weights {
            if !(1..=baton_runtime::control::MAX_WEIGHT).contains(&w) {
                return Err(self.error(
                    &format!("weights.{dpid}"),
                    format!(
                        "weight {w} is out of range: 1 to {}",
                        baton_runtime::control::MAX_WEIGHT
                    ),
                ));
            }
            weights.push((*dpid, w));
        }
        // Plain TCP on the default address unless told where, or told to
        // serve TLS only (listen_tls without listen: the usual port would
        // otherwise be taken twice).
        let tls_only = l.listen.is_none() && l.listen_tls.as_ref().is_some_and(|v| !v.is_empty());
        let runtime = Config {
            listen: match &l.listen {
                Some(v) => v.iter().map(|a| a.0.0).collect(),
                None if tls_only => Vec::new(),
                None => defaults.listen.clone(),
            },
            workers: l.workers.unwrap_or(defaults.workers),
            pin: l.pin.unwrap_or(false),
            scheduler: l.scheduler.map_or(defaults.scheduler, |p| p.0),
            batching: l.batching.map(|p| p.0),
            bdu,
            min_read: l.read_size.or(defaults.min_read),
            max_read: l.read_size.unwrap_or(defaults.max_read),
            max_output: l.max_output.unwrap_or(defaults.max_output),
            recv_buffer: l.recv_buffer.unwrap_or(defaults.recv_buffer),
            echo_interval,
            echo_timeout,
            weights,
            ..defaults
        };

        let names = l
            .apps
            .clone()
            .unwrap_or_else(|| DEFAULT_APPS.iter().map(|s| s.to_string()).collect());
        if let Some(unrun) = l.app.keys().find(|k| !names.contains(k)) {
            return Err(self.error_due(
                &format!("app.{unrun}"),
                "apps",
                format!(
                    "settings for an application that is not run; apps = [{}]",
                    names.join(", ")
                ),
            ));
        }
        let mut apps = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(self.error("apps", format!("{name:?} is listed twice")));
            }
            let app = by_name(name).map_err(|e| self.error("apps", e))?;
            if let Some(table) = l.app.get(name) {
                let json = serde_json::to_value(table).map_err(|e| {
                    self.error(&format!("app.{name}"), format!("not JSON-like: {e}"))
                })?;
                app.configure(&json)
                    .map_err(|e| self.error(&format!("app.{name}"), e.to_string()))?;
            }
            apps.push(app);
        }

        let token = match (&l.api.token, &l.api.token_file) {
            (Some(_), Some(_)) => {
                return Err(self.error("api.token", "give api.token or api.token_file, not both"));
            }
            (Some(t), None) => Some(Token::new(t).map_err(|e| self.error("api.token", e))?),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    self.error(
                        "api.token_file",
                        format!("cannot read {}: {e}", path.display()),
                    )
                })?;
                Some(Token::new(&text).map_err(|e| {
                    self.error("api.token_file", format!("{}: {e}", path.display()))
                })?)
            }
            (None, None) => None,
        };
        let api = match l
            .api
            .listen
            .map_or(Some(ApiOptions::default().addr), |p| p.0.0)
        {
            None => None,
            Some(addr) => {
                auth::check_bind(addr, token.as_ref()).map_err(|e| self.error("api.listen", e))?;
                Some(ApiOptions {
                    addr,
                    token,
                    cluster: None,
                })
            }
        };

        let dags = self.dags(&apps)?;
        let tls = self.tls()?;
        let cluster = self.cluster()?;
        let runtime = Config {
            clustered: cluster.is_some(),
            ..runtime
        };
        Ok(Settings {
            cluster,
            runtime,
            apps,
            dags,
            api,
            tls,
            stats_interval: ms(l.stats_interval_ms, Duration::ZERO),
            log: l.log.as_ref().map(|f| f.0.0.clone()),
        })
    }

    /// The cluster to join: etcd URLs (plain `http://`), a node name of
    /// letters, digits, `-`, `_` and `.`, and a lease of whole seconds
    /// (at least 2).
    fn cluster(&self) -> Result<Option<baton_cluster::member::Options>, ConfigError> {
        let c = &self.layer.cluster;
        let endpoints = match &c.etcd {
            None => {
                if c.node.is_some() || c.ttl_ms.is_some() {
                    let key = if c.node.is_some() {
                        "cluster.node"
                    } else {
                        "cluster.ttl_ms"
                    };
                    return Err(self.error(key, "only with cluster.etcd (--cluster URL,...)"));
                }
                return Ok(None);
            }
            Some(v) if v.is_empty() => {
                return Err(self.error("cluster.etcd", "give at least one etcd URL"));
            }
            Some(v) => v.clone(),
        };
        if let Some(bad) = endpoints.iter().find(|u| {
            u.strip_prefix("http://")
                .is_none_or(|rest| rest.is_empty() || rest.contains('/'))
        }) {
            return Err(self.error(
                "cluster.etcd",
                format!("{bad:?} is not an etcd client URL such as http://127.0.0.1:2379"),
            ));
        }
        let node = c.node.clone().ok_or_else(|| {
            self.error_due(
                "cluster.node",
                "cluster.etcd",
                "a cluster member needs a name (--node NAME)",
            )
        })?;
        if node.is_empty()
            || !node
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.'))
        {
            return Err(self.error(
                "cluster.node",
                format!("{node:?}: use letters, digits, '-', '_' and '.'"),
            ));
        }
        let ttl_ms = c.ttl_ms.unwrap_or(3000);
        if ttl_ms < 2000 || ttl_ms % 1000 != 0 {
            return Err(self.error(
                "cluster.ttl_ms",
                format!("{ttl_ms}: whole seconds, at least 2000"),
            ));
        }
        Ok(Some(baton_cluster::member::Options {
            endpoints,
            node,
            ttl: Duration::from_millis(ttl_ms),
        }))
    }

    /// The declared DAGs, built from the stages `apps` offer.
    fn dags(&self, apps: &[AnyApp]) -> Result<Vec<Dag>, ConfigError> {
        let mut dags = Vec::new();
        for (name, d) in &self.layer.dag {
            let key = |k: &str| format!("dag.{name}.{k}");
            let offered: Vec<Arc<dyn DagApp>> = apps.iter().flat_map(|a| a.dag_apps()).collect();
            let mut stages = Vec::new();
            for stage in &d.apps {
                let found = offered.iter().find(|s| s.name() == stage).ok_or_else(|| {
                    let names: Vec<&str> = offered.iter().map(|s| s.name()).collect();
                    self.error(
                        &key("apps"),
                        format!(
                            "no application offers a stage {stage:?}; offered: {}",
                            if names.is_empty() {
                                "none".to_string()
                            } else {
                                names.join(", ")
                            }
                        ),
                    )
                })?;
                stages.push(found.clone());
            }
            let trigger = match (&d.views, d.every_ms) {
                (Some(views), None) => {
                    let known: Vec<ViewId> = stages
                        .iter()
                        .flat_map(|s| {
                            let access = s.views();
                            let mut ids = access.read_views().to_vec();
                            ids.extend_from_slice(access.written_views());
                            ids
                        })
                        .collect();
                    let mut ids = Vec::new();
                    for v in views {
                        let id = known.iter().find(|id| id.name() == v).ok_or_else(|| {
                            self.error(
                                &key("views"),
                                format!("{v:?} is not a view the DAG's stages read or write"),
                            )
                        })?;
                        ids.push(*id);
                    }
                    Trigger::Views(ids)
                }
                (None, Some(ms)) if ms > 0 => Trigger::Every(Duration::from_millis(ms)),
                (None, Some(_)) => return Err(self.error(&key("every_ms"), "at least 1")),
                _ => {
                    return Err(self.error(
                        &format!("dag.{name}"),
                        "give what starts it: views = [...] or every_ms = N, one of them",
                    ));
                }
            };
            let edges: Vec<(&str, &str)> = d
                .edges
                .iter()
                .map(|[a, b]| (a.as_str(), b.as_str()))
                .collect();
            let dag = Dag::new(name, stages, &edges, trigger)
                .map_err(|e| self.error(&format!("dag.{name}"), e.to_string()))?;
            dags.push(dag);
        }
        Ok(dags)
    }

    /// `listen_tls` with its files, each found readable.
    fn tls(&self) -> Result<Option<Tls>, ConfigError> {
        let l = &self.layer;
        let listen: Vec<SocketAddr> = l.listen_tls.iter().flatten().map(|a| a.0.0).collect();
        let t = &l.tls;
        if listen.is_empty() {
            if t != &TlsLayer::default() {
                return Err(self.error(
                    "listen_tls",
                    "the [tls] files are given but no listen_tls address to serve them on",
                ));
            }
            return Ok(None);
        }
        let readable = |key: &str, p: &Option<PathBuf>| -> Result<Option<PathBuf>, ConfigError> {
            let Some(p) = p else { return Ok(None) };
            std::fs::File::open(p)
                .map(|_| Some(p.clone()))
                .map_err(|e| self.error(key, format!("cannot read {}: {e}", p.display())))
        };
        let need = |key: &str, p: Option<PathBuf>| {
            p.ok_or_else(|| {
                self.error(
                    key,
                    "listen_tls needs a certificate and its key (PEM files)",
                )
            })
        };
        Ok(Some(Tls {
            listen,
            cert: need("tls.cert", readable("tls.cert", &t.cert)?)?,
            key: need("tls.key", readable("tls.key", &t.key)?)?,
            client_ca: readable("tls.client_ca", &t.client_ca)?,
        }))
    }
}
