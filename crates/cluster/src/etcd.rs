//! # A small blocking etcd v3 client over etcd's gRPC JSON gateway
//!
//! This module owns every conversation baton has with etcd: keys (put,
//! range by prefix, delete by prefix), the two transactions mastership
//! needs (create a key only if it does not exist, delete it only if it is
//! still the one we created), leases (grant, keep alive, revoke), watches
//! of a prefix, and one member's status (for health). It also owns the
//! endpoint failover: requests go to the endpoint that last answered and,
//! when it cannot be reached, to the next ones in turn.
//!
//! ## Why hand-written
//!
//! The `etcd-client` crate speaks gRPC through `tonic`, and its build
//! script runs `protoc`, which a fresh Debian machine lacks; the README's
//! build must stay one command (`cargo build`). etcd documents a second
//! face of the same API, the gRPC JSON gateway: etcd 3.4 serves it on the
//! client port under `/v3/` (`POST /v3/kv/range` with a JSON body, and so
//! on). It needs nothing but HTTP/1.1 and JSON, which `ureq` and
//! `serde_json` give us.
//!
//! ## The gateway's JSON, as etcd 3.4.23 writes it
//!
//! - Keys and values are base64 (standard alphabet, padded).
//! - 64-bit integers are JSON strings (`"revision":"12"`); we also accept
//!   plain numbers.
//! - proto3 JSON omits default values: a missing field is zero, false, or
//!   empty (`"succeeded"` is absent when a transaction's compare failed,
//!   `"value"` when a value is empty, `"TTL"` when a lease is gone).
//! - Field names are mostly the proto's (`create_revision`, `range_end`),
//!   but a few messages use lowerCamelCase (`StatusResponse`'s
//!   `raftIndex`, `dbSize`), and leases say `ID` and `TTL`.
//! - Errors come back with a non-200 status and
//!   `{"error":..,"message":..,"code":N}` (gRPC codes).
//! - Streaming calls (`/v3/watch`, `/v3/lease/keepalive`) answer with
//!   newline-separated objects `{"result":{..}}` (or `{"error":{..}}`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::{Value, json};
use std::fmt;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::{Duration, Instant};

/// An etcd revision (the store's logical clock).
pub type Revision = i64;

/// An etcd lease's id.
pub type LeaseId = i64;

/// The most a single (non-streaming) answer may weigh.
const MAX_BODY: u64 = 64 << 20;

/// The read timeout of a watch's connection: the reader thread wakes at
/// least this often, and ends when its [`Watch`] has been dropped.
const WATCH_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// gRPC's `UNAVAILABLE`: the member cannot serve (no leader, request
/// timed out); another one may.
const CODE_UNAVAILABLE: i64 = 14;

/// What went wrong talking to etcd.
#[derive(Debug)]
pub enum EtcdError {
    /// No endpoint answered; says each endpoint's error.
    Unreachable(String),
    /// etcd answered with an error.
    Api(String),
    /// A keepalive of a lease that expired or that etcd does not know.
    LeaseGone,
    /// etcd's answer could not be understood.
    Decode(String),
}

impl fmt::Display for EtcdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EtcdError::Unreachable(why) => write!(f, "etcd unreachable: {why}"),
            EtcdError::Api(why) => write!(f, "etcd error: {why}"),
            EtcdError::LeaseGone => write!(f, "etcd lease expired or unknown"),
            EtcdError::Decode(why) => write!(f, "etcd answer not understood: {why}"),
        }
    }
}

impl std::error::Error for EtcdError {}

/// A condition of [`Etcd::txn`]: `key` was last changed at `revision`
/// (0: it does not exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModifiedAt<'a> {
    /// The key.
    pub key: &'a str,
    /// Its `mod_revision`.
    pub revision: Revision,
}

/// A change made by [`Etcd::txn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnOp<'a> {
    /// Sets `key` to `value`, attached to `lease` if given.
    Put {
        /// The key.
        key: &'a str,
        /// Its new value.
        value: &'a [u8],
        /// The lease it goes with.
        lease: Option<LeaseId>,
    },
    /// Deletes a key.
    Delete(&'a str),
}

/// One key as etcd stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key (baton's keys are UTF-8).
    pub key: String,
    /// The value's bytes.
    pub value: Vec<u8>,
    /// The revision that created the key (0 in a delete event).
    pub create_revision: Revision,
    /// The revision of the key's last change.
    pub mod_revision: Revision,
    /// The lease the key is attached to (0 for none).
    pub lease: LeaseId,
}

/// One change seen by a [`Watch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// The key was created or changed: its new state.
    Put(KeyValue),
    /// The key was deleted (or its lease expired): its key and the
    /// deletion's `mod_revision`.
    Delete(KeyValue),
}

/// The events of one watch response, all at or below `revision`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchBatch {
    /// The store's revision when etcd sent the batch (its header).
    pub revision: Revision,
    /// The events, in revision order.
    pub events: Vec<WatchEvent>,
}

/// One member's status, as `/v3/maintenance/status` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointStatus {
    /// The member id of the leader it knows (0 for none).
    pub leader: u64,
    /// The member's own id.
    pub member_id: u64,
    /// The store's revision as the member has it.
    pub revision: Revision,
    /// How long the call took.
    pub took: Duration,
}

/// A blocking etcd v3 client over the JSON gateway, with failover between
/// endpoints. Cheap to clone; clones share the "last endpoint that worked".
#[derive(Clone)]
pub struct Etcd {
    inner: Arc<Inner>,
}

struct Inner {
    endpoints: Vec<String>,
    /// The index in `endpoints` of the one that last worked.
    current: AtomicUsize,
    /// Requests: connect and the whole answer bounded by the timeout.
    agent: ureq::Agent,
    /// Watches: connect bounded by the timeout, each read by
    /// [`WATCH_READ_TIMEOUT`], the stream itself unbounded.
    watch_agent: ureq::Agent,
}

impl fmt::Debug for Etcd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Etcd")
            .field("endpoints", &self.inner.endpoints)
            .finish()
    }
}

/// Why one attempt at one endpoint failed.
enum Attempt {
    /// Try the next endpoint (connection error, or the member cannot serve).
    Next(String),
    /// Stop: the answer is final.
    Fail(EtcdError),
}

impl Etcd {
    /// A client of the members at `endpoints` (like
    /// `"http://127.0.0.1:2379"`); `timeout` bounds every request (connect
    /// and read).
    pub fn new(endpoints: &[String], timeout: Duration) -> Etcd {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(timeout)
            .timeout(timeout)
            .build();
        let watch_agent = ureq::AgentBuilder::new()
            .timeout_connect(timeout)
            .timeout_read(WATCH_READ_TIMEOUT)
            .timeout_write(timeout)
            .build();
        Etcd {
            inner: Arc::new(Inner {
                endpoints: endpoints
                    .iter()
                    .map(|e| e.trim_end_matches('/').to_string())
                    .collect(),
                current: AtomicUsize::new(0),
                agent,
                watch_agent,
            }),
        }
    }

    /// The endpoints, as given to [`Etcd::new`].
    pub fn endpoints(&self) -> &[String] {
        &self.inner.endpoints
    }

    /// Runs `attempt` against the endpoint that last worked, then the
    /// others in turn while it says [`Attempt::Next`].
    fn with_failover<T>(
        &self,
        mut attempt: impl FnMut(&str) -> Result<T, Attempt>,
    ) -> Result<T, EtcdError> {
        let n = self.inner.endpoints.len();
        if n == 0 {
            return Err(EtcdError::Unreachable("no endpoints".into()));
        }
        let first = self.inner.current.load(Ordering::Relaxed) % n;
        let mut errors = Vec::new();
        for k in 0..n {
            let i = (first + k) % n;
            let endpoint = &self.inner.endpoints[i];
            match attempt(endpoint) {
                Ok(v) => {
                    if k != 0 {
                        self.inner.current.store(i, Ordering::Relaxed);
                    }
                    return Ok(v);
                }
                Err(Attempt::Fail(e)) => return Err(e),
                Err(Attempt::Next(why)) => {
                    tracing::debug!(endpoint = %endpoint, error = %why, "etcd endpoint failed");
                    if why.contains(endpoint.as_str()) {
                        errors.push(why);
                    } else {
                        errors.push(format!("{endpoint}: {why}"));
                    }
                }
            }
        }
        Err(EtcdError::Unreachable(errors.join("; ")))
    }

    /// POSTs `body` to `path` on one endpoint and reads the JSON answer.
    fn post_once(
        agent: &ureq::Agent,
        endpoint: &str,
        path: &str,
        body: &Value,
    ) -> Result<ureq::Response, Attempt> {
        match agent
            .post(&format!("{endpoint}{path}"))
            .set("Content-Type", "application/json")
            .send_string(&body.to_string())
        {
            Ok(resp) => Ok(resp),
            Err(ureq::Error::Status(status, resp)) => {
                let text = read_body(resp).unwrap_or_default();
                let err = api_error(status, &text);
                match err.code {
                    Some(CODE_UNAVAILABLE) => Err(Attempt::Next(err.message)),
                    _ => Err(Attempt::Fail(EtcdError::Api(err.message))),
                }
            }
            Err(ureq::Error::Transport(t)) => Err(Attempt::Next(t.to_string())),
        }
    }

    /// POSTs `body` to `path` (with failover) and decodes the answer.
    fn call<T: for<'de> Deserialize<'de>>(&self, path: &str, body: Value) -> Result<T, EtcdError> {
        let text = self.with_failover(|endpoint| {
            let resp = Self::post_once(&self.inner.agent, endpoint, path, &body)?;
            read_body(resp).map_err(|e| Attempt::Next(format!("reading the answer: {e}")))
        })?;
        decode(&text)
    }

    /// A lease of `ttl` (whole seconds, at least 1; etcd may round it up
    /// to its minimum).
    pub fn grant(&self, ttl: Duration) -> Result<LeaseId, EtcdError> {
        let secs = ttl.as_secs().max(1);
        let r: LeaseGrantResponse =
            self.call("/v3/lease/grant", json!({ "TTL": secs.to_string() }))?;
        if !r.error.is_empty() {
            return Err(EtcdError::Api(r.error));
        }
        if r.id == 0 {
            return Err(EtcdError::Decode("lease grant without an ID".into()));
        }
        Ok(r.id)
    }

    /// Renews `lease` once; its remaining TTL. [`EtcdError::LeaseGone`]
    /// when etcd no longer has it.
    pub fn keep_alive(&self, lease: LeaseId) -> Result<Duration, EtcdError> {
        let body = json!({ "ID": lease.to_string() });
        let text = self.with_failover(|endpoint| {
            let resp = Self::post_once(&self.inner.agent, endpoint, "/v3/lease/keepalive", &body)?;
            read_body(resp).map_err(|e| Attempt::Next(format!("reading the answer: {e}")))
        })?;
        // A stream of one message: the first non-empty line.
        let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let msg: StreamMessage<LeaseKeepAliveResponse> = decode(line)?;
        let r = msg.into_result()?;
        if r.ttl <= 0 {
            return Err(EtcdError::LeaseGone);
        }
        Ok(Duration::from_secs(r.ttl as u64))
    }

    /// Revokes `lease`, deleting its keys. A lease etcd does not know
    /// (expired, or revoked before) is already revoked: `Ok`.
    pub fn revoke(&self, lease: LeaseId) -> Result<(), EtcdError> {
        let body = json!({ "ID": lease.to_string() });
        self.with_failover(|endpoint| {
            match Self::post_once(&self.inner.agent, endpoint, "/v3/lease/revoke", &body) {
                Ok(resp) => {
                    read_body(resp)
                        .map_err(|e| Attempt::Next(format!("reading the answer: {e}")))?;
                    Ok(())
                }
                Err(Attempt::Fail(EtcdError::Api(m))) if m.contains("lease not found") => Ok(()),
                Err(e) => Err(e),
            }
        })
    }

    /// Sets `key` to `value`, attached to `lease` if given; the revision
    /// of the change.
    pub fn put(
        &self,
        key: &str,
        value: &[u8],
        lease: Option<LeaseId>,
    ) -> Result<Revision, EtcdError> {
        let r: HeaderOnly = self.call("/v3/kv/put", put_request(key, value, lease))?;
        Ok(r.header.revision)
    }

    /// Every key starting with `prefix` (sorted by key), with the store's
    /// revision at the time of the read.
    pub fn get_prefix(&self, prefix: &str) -> Result<(Revision, Vec<KeyValue>), EtcdError> {
        let r: RangeResponse = self.call(
            "/v3/kv/range",
            json!({ "key": B64.encode(prefix), "range_end": B64.encode(prefix_end(prefix)) }),
        )?;
        let kvs = r
            .kvs
            .into_iter()
            .map(RawKv::into_kv)
            .collect::<Result<_, _>>()?;
        Ok((r.header.revision, kvs))
    }

    /// Creates `key` only if it does not exist (a transaction comparing
    /// its `create_revision` with 0). `Ok(Ok(revision of the txn))` when
    /// created, `Ok(Err(the existing key))` when it existed.
    pub fn create(
        &self,
        key: &str,
        value: &[u8],
        lease: Option<LeaseId>,
    ) -> Result<Result<Revision, KeyValue>, EtcdError> {
        let k = B64.encode(key);
        let r: TxnResponse = self.call(
            "/v3/kv/txn",
            json!({
                "compare": [{ "target": "CREATE", "result": "EQUAL", "key": k, "create_revision": "0" }],
                "success": [{ "request_put": put_request(key, value, lease) }],
                "failure": [{ "request_range": { "key": k } }],
            }),
        )?;
        if r.succeeded {
            return Ok(Ok(r.header.revision));
        }
        let existing = r
            .responses
            .into_iter()
            .filter_map(|op| op.response_range)
            .flat_map(|range| range.kvs)
            .next()
            .ok_or_else(|| {
                EtcdError::Decode("create failed but the key was not returned".into())
            })?;
        Ok(Err(existing.into_kv()?))
    }

    /// Deletes `key` only if its `create_revision` is `created` (a
    /// transaction); `Ok(true)` when deleted.
    pub fn delete_if_created(&self, key: &str, created: Revision) -> Result<bool, EtcdError> {
        let k = B64.encode(key);
        let r: TxnResponse = self.call(
            "/v3/kv/txn",
            json!({
                "compare": [{ "target": "CREATE", "result": "EQUAL", "key": k, "create_revision": created.to_string() }],
                "success": [{ "request_delete_range": { "key": k } }],
            }),
        )?;
        Ok(r.succeeded)
    }

    /// Runs `then` if every key of `when` was last changed at the
    /// revision it names (0: the key does not exist), all in one
    /// transaction; whether it ran, and the store's revision after (the
    /// revision of its changes when it ran).
    pub fn txn(
        &self,
        when: &[ModifiedAt<'_>],
        then: &[TxnOp<'_>],
    ) -> Result<(bool, Revision), EtcdError> {
        let compare: Vec<Value> = when
            .iter()
            .map(|c| {
                json!({
                    "target": "MOD",
                    "result": "EQUAL",
                    "key": B64.encode(c.key),
                    "mod_revision": c.revision.to_string(),
                })
            })
            .collect();
        let success: Vec<Value> = then
            .iter()
            .map(|op| match *op {
                TxnOp::Put { key, value, lease } => {
                    json!({ "request_put": put_request(key, value, lease) })
                }
                TxnOp::Delete(key) => json!({ "request_delete_range": { "key": B64.encode(key) } }),
            })
            .collect();
        let r: TxnResponse = self.call(
            "/v3/kv/txn",
            json!({ "compare": compare, "success": success }),
        )?;
        Ok((r.succeeded, r.header.revision))
    }

    /// Deletes `key` (nothing if it is absent); the revision after.
    pub fn delete(&self, key: &str) -> Result<Revision, EtcdError> {
        let r: HeaderOnly = self.call("/v3/kv/deleterange", json!({ "key": B64.encode(key) }))?;
        Ok(r.header.revision)
    }

    /// Deletes every key starting with `prefix`; the revision after.
    pub fn delete_prefix(&self, prefix: &str) -> Result<Revision, EtcdError> {
        let r: HeaderOnly = self.call(
            "/v3/kv/deleterange",
            json!({ "key": B64.encode(prefix), "range_end": B64.encode(prefix_end(prefix)) }),
        )?;
        Ok(r.header.revision)
    }

    /// Compacts the store's history up to `revision` (watches from before
    /// it are then cancelled).
    pub fn compact(&self, revision: Revision) -> Result<(), EtcdError> {
        let _: HeaderOnly = self.call(
            "/v3/kv/compaction",
            json!({ "revision": revision.to_string() }),
        )?;
        Ok(())
    }

    /// Watches every key under `prefix` from revision `from` (inclusive;
    /// 0 or less: from now). The [`Watch`] yields batches in revision
    /// order.
    pub fn watch_prefix(&self, prefix: &str, from: Revision) -> Result<Watch, EtcdError> {
        let mut create = json!({
            "key": B64.encode(prefix),
            "range_end": B64.encode(prefix_end(prefix)),
            "progress_notify": true,
        });
        if from > 0 {
            create["start_revision"] = json!(from.to_string());
        }
        let body = json!({ "create_request": create });
        let resp = self.with_failover(|endpoint| {
            Self::post_once(&self.inner.watch_agent, endpoint, "/v3/watch", &body)
        })?;
        let (tx, rx) = sync_channel(16);
        let reader = BufReader::new(resp.into_reader());
        std::thread::Builder::new()
            .name("etcd-watch".into())
            .spawn(move || watch_reader(reader, tx))
            .map_err(|e| EtcdError::Unreachable(format!("cannot start the watch's reader: {e}")))?;
        Ok(Watch { rx, broken: None })
    }

    /// The status of the member at `endpoint` (one of [`Etcd::endpoints`]
    /// or any other; no failover): its leader, id, revision, and how long
    /// the call took.
    pub fn status(&self, endpoint: &str) -> Result<EndpointStatus, EtcdError> {
        let start = Instant::now();
        let endpoint = endpoint.trim_end_matches('/');
        let text = match Self::post_once(
            &self.inner.agent,
            endpoint,
            "/v3/maintenance/status",
            &json!({}),
        ) {
            Ok(resp) => {
                read_body(resp).map_err(|e| EtcdError::Unreachable(format!("{endpoint}: {e}")))?
            }
            Err(Attempt::Next(why)) => {
                return Err(EtcdError::Unreachable(format!("{endpoint}: {why}")));
            }
            Err(Attempt::Fail(e)) => return Err(e),
        };
        let took = start.elapsed();
        let r: StatusResponse = decode(&text)?;
        Ok(EndpointStatus {
            leader: r.leader,
            member_id: r.header.member_id,
            revision: r.header.revision,
            took,
        })
    }
}

/// A watch of a prefix: [`Watch::next`] gives its batches. Dropping it
/// ends its reader thread (within `WATCH_READ_TIMEOUT`) and its
/// connection.
pub struct Watch {
    rx: Receiver<WatchMsg>,
    /// Set once the stream failed: every later call returns it again.
    broken: Option<String>,
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("broken", &self.broken)
            .finish()
    }
}

/// What a watch's reader thread sends.
enum WatchMsg {
    Batch(WatchBatch),
    /// The stream ended or etcd cancelled the watch.
    Broken(String),
    /// The connection was quiet for a read timeout (a probe: the send
    /// fails once the [`Watch`] is gone).
    Quiet,
}

impl Watch {
    /// The next batch, waiting at most `wait`. `Ok(None)` when nothing
    /// came in time (the watch stays usable). `Err` when the stream broke
    /// or etcd cancelled the watch (e.g. its start revision was
    /// compacted): the caller re-reads and watches again.
    pub fn next(&mut self, wait: Duration) -> Result<Option<WatchBatch>, EtcdError> {
        if let Some(why) = &self.broken {
            return Err(EtcdError::Unreachable(why.clone()));
        }
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(WatchMsg::Batch(b)) => return Ok(Some(b)),
                Ok(WatchMsg::Quiet) => continue,
                Ok(WatchMsg::Broken(why)) => {
                    self.broken = Some(why.clone());
                    return Err(if why.starts_with("watch cancelled") {
                        EtcdError::Api(why)
                    } else {
                        EtcdError::Unreachable(why)
                    });
                }
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => {
                    let why = "the watch's reader ended".to_string();
                    self.broken = Some(why.clone());
                    return Err(EtcdError::Unreachable(why));
                }
            }
        }
    }
}

/// A watch's reader thread: reads lines from the streamed answer and
/// sends what they mean, until the stream ends or the [`Watch`] is gone.
fn watch_reader(mut reader: impl BufRead, tx: SyncSender<WatchMsg>) {
    let mut line = Vec::new();
    loop {
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => {
                let _ = tx.send(WatchMsg::Broken("the watch stream ended".into()));
                return;
            }
            Ok(_) => {
                if line.last() != Some(&b'\n') {
                    // The stream ended in the middle of a line.
                    let _ = tx.send(WatchMsg::Broken(
                        "the watch stream ended mid-message".into(),
                    ));
                    return;
                }
                let msg = parse_watch_line(&line);
                line.clear();
                let stop = matches!(msg, Some(WatchMsg::Broken(_)));
                if let Some(msg) = msg {
                    if tx.send(msg).is_err() {
                        return;
                    }
                }
                if stop {
                    return;
                }
            }
            // A read timeout: keep what was read of the line, check that
            // someone still listens, and read on.
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if tx.send(WatchMsg::Quiet).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(WatchMsg::Broken(format!("reading the watch stream: {e}")));
                return;
            }
        }
    }
}

/// What one line of `/v3/watch`'s stream means: a batch, a broken watch,
/// or nothing (blank line, the "created" answer, a progress notification).
fn parse_watch_line(line: &[u8]) -> Option<WatchMsg> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t.trim(),
        Err(e) => return Some(WatchMsg::Broken(format!("watch message not UTF-8: {e}"))),
    };
    if text.is_empty() {
        return None;
    }
    let r = match decode::<StreamMessage<WatchResponse>>(text).and_then(StreamMessage::into_result)
    {
        Ok(r) => r,
        Err(e) => return Some(WatchMsg::Broken(format!("watch stream: {e}"))),
    };
    if r.canceled || r.compact_revision != 0 {
        return Some(WatchMsg::Broken(format!(
            "watch cancelled by etcd (compact_revision {}): {}",
            r.compact_revision, r.cancel_reason
        )));
    }
    if r.events.is_empty() {
        return None;
    }
    let mut events = Vec::with_capacity(r.events.len());
    for ev in r.events {
        let kv = match ev.kv.into_kv() {
            Ok(kv) => kv,
            Err(e) => return Some(WatchMsg::Broken(format!("watch stream: {e}"))),
        };
        events.push(match ev.kind.as_str() {
            "" | "PUT" => WatchEvent::Put(kv),
            "DELETE" => WatchEvent::Delete(kv),
            other => {
                return Some(WatchMsg::Broken(format!(
                    "watch event of unknown type {other:?}"
                )));
            }
        });
    }
    Some(WatchMsg::Batch(WatchBatch {
        revision: r.header.revision,
        events,
    }))
}

/// The end of the range of keys starting with `prefix`: the prefix with
/// its last byte below 0xff incremented, or `"\0"` (every key) when there
/// is none.
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// A put request's JSON.
fn put_request(key: &str, value: &[u8], lease: Option<LeaseId>) -> Value {
    let mut req = json!({ "key": B64.encode(key), "value": B64.encode(value) });
    if let Some(lease) = lease {
        req["lease"] = json!(lease.to_string());
    }
    req
}

/// Reads an answer's body as text (bounded by [`MAX_BODY`]).
///
/// The gateway ends its error answers with an HTTP trailer
/// (`Grpc-Trailer-Content-Type`), which `ureq`'s chunked decoder does not
/// expect: it fails after the whole body was read. A body that is a
/// complete JSON text is therefore kept despite an error at its end.
fn read_body(resp: ureq::Response) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    if let Err(e) = resp.into_reader().take(MAX_BODY).read_to_end(&mut bytes) {
        let complete = serde_json::Deserializer::from_slice(&bytes)
            .into_iter::<Value>()
            .try_fold(0, |n, v| v.map(|_| n + 1))
            .is_ok_and(|n| n > 0);
        if !complete {
            return Err(e);
        }
    }
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e.utf8_error()))
}

/// An error answer of the gateway.
struct ApiError {
    code: Option<i64>,
    message: String,
}

/// Understands an error answer (`{"error":..,"message":..,"code":N}`, or
/// anything else: the status and the text).
fn api_error(status: u16, text: &str) -> ApiError {
    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        message: String,
        #[serde(default)]
        error: String,
        #[serde(default)]
        code: Option<i64>,
    }
    match serde_json::from_str::<Body>(text) {
        Ok(b) if !b.message.is_empty() || !b.error.is_empty() => ApiError {
            code: b.code,
            message: if b.message.is_empty() {
                b.error
            } else {
                b.message
            },
        },
        _ => ApiError {
            code: None,
            message: format!("HTTP {status}: {}", text.trim()),
        },
    }
}

/// Decodes a JSON answer.
fn decode<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, EtcdError> {
    serde_json::from_str(text).map_err(|e| {
        let shown: String = text.chars().take(200).collect();
        EtcdError::Decode(format!("{e} in {shown:?}"))
    })
}

// ---- the gateway's JSON ----

/// An int64 as proto3 JSON writes it: a string, or a number; absent is 0.
fn de_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => s.parse().map_err(de::Error::custom),
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| de::Error::custom(format!("{n} is not an int64"))),
        Value::Null => Ok(0),
        other => Err(de::Error::custom(format!("{other} is not an int64"))),
    }
}

/// A uint64 as proto3 JSON writes it.
fn de_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => s.parse().map_err(de::Error::custom),
        Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| de::Error::custom(format!("{n} is not a uint64"))),
        Value::Null => Ok(0),
        other => Err(de::Error::custom(format!("{other} is not a uint64"))),
    }
}

/// bytes as proto3 JSON writes them: base64; absent is empty.
fn de_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    match Option::<String>::deserialize(d)? {
        Some(s) => B64.decode(s.as_bytes()).map_err(de::Error::custom),
        None => Ok(Vec::new()),
    }
}

#[derive(Deserialize, Default, Debug)]
struct Header {
    #[serde(default, deserialize_with = "de_u64")]
    member_id: u64,
    #[serde(default, deserialize_with = "de_i64")]
    revision: Revision,
}

#[derive(Deserialize, Debug)]
struct HeaderOnly {
    #[serde(default)]
    header: Header,
}

#[derive(Deserialize, Debug)]
struct RawKv {
    #[serde(default, deserialize_with = "de_bytes")]
    key: Vec<u8>,
    #[serde(default, deserialize_with = "de_bytes")]
    value: Vec<u8>,
    #[serde(default, deserialize_with = "de_i64")]
    create_revision: Revision,
    #[serde(default, deserialize_with = "de_i64")]
    mod_revision: Revision,
    #[serde(default, deserialize_with = "de_i64")]
    lease: LeaseId,
}

impl RawKv {
    fn into_kv(self) -> Result<KeyValue, EtcdError> {
        Ok(KeyValue {
            key: String::from_utf8(self.key)
                .map_err(|e| EtcdError::Decode(format!("a key is not UTF-8: {e}")))?,
            value: self.value,
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            lease: self.lease,
        })
    }
}

#[derive(Deserialize, Debug)]
struct RangeResponse {
    #[serde(default)]
    header: Header,
    #[serde(default)]
    kvs: Vec<RawKv>,
}

#[derive(Deserialize, Debug)]
struct TxnResponse {
    #[serde(default)]
    header: Header,
    #[serde(default)]
    succeeded: bool,
    #[serde(default)]
    responses: Vec<ResponseOp>,
}

#[derive(Deserialize, Debug)]
struct ResponseOp {
    #[serde(default)]
    response_range: Option<RangeResponse>,
}

#[derive(Deserialize, Debug)]
struct LeaseGrantResponse {
    #[serde(default, rename = "ID", deserialize_with = "de_i64")]
    id: LeaseId,
    #[serde(default, rename = "error")]
    error: String,
}

#[derive(Deserialize, Debug)]
struct LeaseKeepAliveResponse {
    #[serde(default, rename = "TTL", deserialize_with = "de_i64")]
    ttl: i64,
}

#[derive(Deserialize, Debug)]
struct StatusResponse {
    #[serde(default)]
    header: Header,
    #[serde(default, deserialize_with = "de_u64")]
    leader: u64,
}

#[derive(Deserialize, Debug)]
struct WatchResponse {
    #[serde(default)]
    header: Header,
    #[serde(default)]
    canceled: bool,
    #[serde(default, deserialize_with = "de_i64")]
    compact_revision: Revision,
    #[serde(default)]
    cancel_reason: String,
    #[serde(default)]
    events: Vec<RawEvent>,
}

#[derive(Deserialize, Debug)]
struct RawEvent {
    /// `"PUT"` is the default, so absent; `"DELETE"`.
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default = "empty_kv")]
    kv: RawKv,
}

fn empty_kv() -> RawKv {
    RawKv {
        key: Vec::new(),
        value: Vec::new(),
        create_revision: 0,
        mod_revision: 0,
        lease: 0,
    }
}

/// One message of a streaming answer: `{"result":..}` or `{"error":..}`.
#[derive(Deserialize, Debug)]
struct StreamMessage<T> {
    result: Option<T>,
    error: Option<Value>,
}

impl<T> StreamMessage<T> {
    fn into_result(self) -> Result<T, EtcdError> {
        match (self.result, self.error) {
            (_, Some(err)) => {
                let message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| err.to_string());
                Err(EtcdError::Api(message))
            }
            (Some(r), None) => Ok(r),
            (None, None) => Err(EtcdError::Decode(
                "a stream message with neither result nor error".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int64_fields_are_strings_or_numbers_and_absent_is_zero() {
        let r: RangeResponse = decode(
            r#"{"header":{"cluster_id":"1","member_id":"13668033151171901709","revision":"12","raft_term":"2"},
                "kvs":[{"key":"Zm9vL2E=","create_revision":"2","mod_revision":5,"version":"1","value":"YmFy","lease":"7"},
                       {"key":"Zm9vL2I=","create_revision":"3","mod_revision":"3"}],"count":"2"}"#,
        )
        .unwrap();
        assert_eq!(r.header.revision, 12);
        assert_eq!(r.header.member_id, 13668033151171901709);
        let kvs: Vec<KeyValue> = r.kvs.into_iter().map(|k| k.into_kv().unwrap()).collect();
        assert_eq!(
            kvs,
            vec![
                KeyValue {
                    key: "foo/a".into(),
                    value: b"bar".to_vec(),
                    create_revision: 2,
                    mod_revision: 5,
                    lease: 7
                },
                KeyValue {
                    key: "foo/b".into(),
                    value: vec![],
                    create_revision: 3,
                    mod_revision: 3,
                    lease: 0
                },
            ]
        );
    }

    #[test]
    fn an_empty_range_has_no_kvs_field() {
        let r: RangeResponse = decode(r#"{"header":{"revision":"2"}}"#).unwrap();
        assert!(r.kvs.is_empty());
        assert_eq!(r.header.revision, 2);
        let r: HeaderOnly = decode("{}").unwrap();
        assert_eq!(r.header.revision, 0);
    }

    #[test]
    fn a_failed_txn_omits_succeeded_and_carries_the_range() {
        let r: TxnResponse = decode(
            r#"{"header":{"revision":"2"},"responses":[{"response_range":{"header":{"revision":"2"},
                "kvs":[{"key":"Zm9vL2E=","create_revision":"2","mod_revision":"2","version":"1","value":"YmFy"}],"count":"1"}}]}"#,
        )
        .unwrap();
        assert!(!r.succeeded);
        assert_eq!(r.responses[0].response_range.as_ref().unwrap().kvs.len(), 1);
        let r: TxnResponse =
            decode(r#"{"header":{"revision":"3"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"3"}}}]}"#)
                .unwrap();
        assert!(r.succeeded);
        assert!(r.responses[0].response_range.is_none());
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(decode::<RangeResponse>(r#"{"kvs":[{"key":"!!"}]}"#).is_err());
        assert!(decode::<RangeResponse>(r#"{"header":{"revision":"x"}}"#).is_err());
        assert!(decode::<RangeResponse>(r#"{"header":{"revision":1.5}}"#).is_err());
        assert!(decode::<RangeResponse>("not json").is_err());
        let r: RangeResponse = decode(r#"{"kvs":[{"key":"/w=="}]}"#).unwrap();
        assert!(matches!(
            r.kvs.into_iter().next().unwrap().into_kv(),
            Err(EtcdError::Decode(_))
        ));
    }

    #[test]
    fn keepalive_of_an_unknown_lease_has_no_ttl() {
        let m: StreamMessage<LeaseKeepAliveResponse> =
            decode(r#"{"result":{"header":{"revision":"3"},"ID":"4111120267006481165"}}"#).unwrap();
        assert_eq!(m.into_result().unwrap().ttl, 0);
        let m: StreamMessage<LeaseKeepAliveResponse> =
            decode(r#"{"result":{"header":{"revision":"3"},"ID":"41","TTL":"5"}}"#).unwrap();
        assert_eq!(m.into_result().unwrap().ttl, 5);
        let m: StreamMessage<LeaseKeepAliveResponse> =
            decode(r#"{"error":{"grpc_code":14,"http_code":503,"message":"no leader","http_status":"Service Unavailable"}}"#)
                .unwrap();
        assert!(matches!(m.into_result(), Err(EtcdError::Api(m)) if m == "no leader"));
    }

    #[test]
    fn status_uses_camel_case_and_strings() {
        let s: StatusResponse = decode(
            r#"{"header":{"cluster_id":"1","member_id":"13668033151171901709","revision":"1","raft_term":"2"},
                "version":"3.4.23","dbSize":"20480","leader":"13668033151171901709","raftIndex":"4"}"#,
        )
        .unwrap();
        assert_eq!(s.leader, 13668033151171901709);
        assert_eq!(s.header.revision, 1);
    }

    fn batch(line: &str) -> Option<WatchMsg> {
        parse_watch_line(format!("{line}\n").as_bytes())
    }

    #[test]
    fn watch_lines() {
        assert!(batch(r#"{"result":{"header":{"revision":"4"},"created":true}}"#).is_none());
        assert!(batch("").is_none());
        // A progress notification: no events.
        assert!(batch(r#"{"result":{"header":{"revision":"9"}}}"#).is_none());
        let Some(WatchMsg::Batch(b)) = batch(
            r#"{"result":{"header":{"revision":"6"},"events":[{"kv":{"key":"dy8y","create_revision":"6","mod_revision":"6","version":"1"}},{"type":"DELETE","kv":{"key":"dy8x","mod_revision":"6"}}]}}"#,
        ) else {
            panic!("a batch")
        };
        assert_eq!(b.revision, 6);
        assert_eq!(
            b.events,
            vec![
                WatchEvent::Put(KeyValue {
                    key: "w/2".into(),
                    value: vec![],
                    create_revision: 6,
                    mod_revision: 6,
                    lease: 0
                }),
                WatchEvent::Delete(KeyValue {
                    key: "w/1".into(),
                    value: vec![],
                    create_revision: 0,
                    mod_revision: 6,
                    lease: 0
                }),
            ]
        );
        assert!(matches!(
            batch(
                r#"{"result":{"header":{"raft_term":"2"},"canceled":true,"compact_revision":"6"}}"#
            ),
            Some(WatchMsg::Broken(_))
        ));
        assert!(matches!(
            batch(r#"{"result":{"compact_revision":"6"}}"#),
            Some(WatchMsg::Broken(_))
        ));
        assert!(matches!(
            batch(r#"{"error":{"message":"boom"}}"#),
            Some(WatchMsg::Broken(_))
        ));
        assert!(matches!(batch("{garbage"), Some(WatchMsg::Broken(_))));
        assert!(matches!(
            batch(r#"{"result":{"events":[{"type":"WHAT"}]}}"#),
            Some(WatchMsg::Broken(_))
        ));
    }

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end("a/"), b"a0".to_vec());
        assert_eq!(prefix_end(""), vec![0]);
        assert_eq!(prefix_end("\u{7f}"), vec![0x80]);
    }

    #[test]
    fn error_answers() {
        let e = api_error(
            400,
            r#"{"error":"illegal base64 data at input byte 0","message":"illegal base64 data at input byte 0","code":3}"#,
        );
        assert_eq!(e.code, Some(3));
        assert_eq!(e.message, "illegal base64 data at input byte 0");
        let e = api_error(404, "Not Found\n");
        assert_eq!(e.code, None);
        assert_eq!(e.message, "HTTP 404: Not Found");
    }
}
