//! The two threads that share the views: `baton-cluster-facts-out` writes
//! this member's facts when its views change, `baton-cluster-facts-in`
//! reads the others' and publishes them as the [`Peers`] view.

use super::{FACTS, FactWriter, PROBE_KEY, PeerState, format_probe_key, own_facts};
use crate::PREFIX;
use crate::etcd::{Etcd, KeyValue, LeaseId, Revision, WatchBatch, WatchEvent};
use baton_apps::views::{Hosts, Peers, Topology};
use baton_runtime::control::Control;
use baton_runtime::env::{Publish, ViewAccess};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the writer looks at the views (two version reads when
/// nothing changed): the delay before another member learns a new link
/// or host, on top of etcd's.
pub const WRITE_EVERY: Duration = Duration::from_millis(20);

/// What the threads count, for the operator.
#[derive(Debug, Default)]
pub struct ShareStats {
    /// Fact keys put.
    pub puts: AtomicU64,
    /// Fact keys deleted.
    pub deletes: AtomicU64,
    /// Facts of other members held now.
    pub peer_facts: AtomicU64,
}

/// What the threads need of the member.
pub struct Context {
    pub etcd: Etcd,
    pub node: String,
    pub control: Control,
    /// The member's lease now, if it holds one.
    pub lease: Box<dyn Fn() -> Option<LeaseId> + Send + Sync>,
    /// Whether the member still runs.
    pub running: Box<dyn Fn() -> bool + Send + Sync>,
    pub stats: std::sync::Arc<ShareStats>,
}

/// Writes this member's facts whenever its topology or hosts views (or
/// its lease) changed; a failed write is tried again next time.
pub fn write_loop(c: &Context) {
    let mut writer = FactWriter::default();
    let mut done: Option<(u64, u64, LeaseId)> = None;
    let mut failing = false;
    while (c.running)() {
        std::thread::sleep(WRITE_EVERY);
        let Some(lease) = (c.lease)() else {
            continue;
        };
        let snapshot = c.control.snapshot();
        let now = (
            snapshot.version::<Topology>(),
            snapshot.version::<Hosts>(),
            lease,
        );
        if done == Some(now) {
            continue;
        }
        let want = own_facts(
            &c.node,
            snapshot.get::<Topology>().as_deref(),
            snapshot.get::<Hosts>().as_deref(),
        );
        match writer.sync(&c.etcd, lease, &want) {
            Ok(()) => {
                if failing {
                    tracing::info!("this member's facts are written to etcd again");
                }
                failing = false;
                done = Some(now);
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "cannot write this member's facts to etcd; trying again");
                }
                failing = true;
            }
        }
        c.stats.puts.store(writer.puts, Ordering::Relaxed);
        c.stats.deletes.store(writer.deletes, Ordering::Relaxed);
    }
}

/// The cluster's probe key: created by the first member to ask (32
/// random bytes), read by the others.
fn probe_key(etcd: &Etcd) -> Option<Vec<u8>> {
    let mut fresh = [0u8; 32];
    if let Err(e) = getrandom::fill(&mut fresh) {
        tracing::error!(error = %e, "no randomness for the cluster's probe key");
        return None;
    }
    let key = format!("{PREFIX}{PROBE_KEY}");
    match etcd.create(&key, format_probe_key(&fresh).as_bytes(), None) {
        Ok(Ok(_)) => Some(format_probe_key(&fresh).into_bytes()),
        Ok(Err(existing)) => Some(existing.value),
        Err(_) => None,
    }
}

/// Reads the other members' facts and the probe key, watches them from
/// that revision on, and publishes [`Peers`] whenever a batch changed
/// them; reads everything again when the watch breaks.
pub fn read_loop(c: &Context) {
    let net = c
        .control
        .publisher("cluster", ViewAccess::none().writes::<Peers>());
    let mut state = PeerState::new(&c.node);
    let mut published: Option<Peers> = None;
    let mut publish = |state: &PeerState| {
        let peers = state.peers();
        c.stats
            .peer_facts
            .store(state.len() as u64, Ordering::Relaxed);
        if published.as_ref() != Some(&peers) {
            published = Some(peers.clone());
            if let Err(e) = net.publish(Publish::new().view(peers)) {
                tracing::error!(error = %e, "cannot publish the peers' facts");
            }
        }
    };
    let prefix = format!("{PREFIX}{FACTS}");
    let strip = |k: &str| k.strip_prefix(PREFIX).map(str::to_string);
    // The key first: discovery across members needs it before facts.
    loop {
        if !(c.running)() {
            return;
        }
        if let Some(value) = probe_key(&c.etcd)
            && state.apply(PROBE_KEY, Some(&value))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    follow(c, &prefix, |seen| match seen {
        Seen::All(_, kvs) => {
            state.clear();
            for kv in kvs {
                if let Some(k) = strip(&kv.key) {
                    state.apply(&k, Some(&kv.value));
                }
            }
            state.settle(Instant::now());
            publish(&state);
        }
        Seen::Batch(batch) => {
            let mut changed = false;
            for event in &batch.events {
                let (kv, value) = match event {
                    WatchEvent::Put(kv) => (kv, Some(kv.value.as_slice())),
                    WatchEvent::Delete(kv) => (kv, None),
                };
                if let Some(k) = strip(&kv.key) {
                    changed |= state.apply(&k, value);
                }
            }
            changed |= state.settle(Instant::now());
            if changed {
                publish(&state);
            }
        }
        Seen::Idle => {
            if state.settle(Instant::now()) {
                publish(&state);
            }
        }
    });
}

/// What [`follow`] hands on.
pub enum Seen<'a> {
    /// Every key under the prefix, read at this revision.
    All(Revision, &'a [KeyValue]),
    /// The watch's next batch.
    Batch(&'a WatchBatch),
    /// Half a second without news.
    Idle,
}

/// Keeps up with every key under `prefix` while the member runs: `on`
/// gets them all with their revision, then each watch batch from the next
/// revision on; when the watch breaks (etcd lost, history compacted),
/// they are read again.
pub fn follow(c: &Context, prefix: &str, mut on: impl FnMut(Seen<'_>)) {
    while (c.running)() {
        let Ok((revision, kvs)) = c.etcd.get_prefix(prefix) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        on(Seen::All(revision, &kvs));
        let Ok(mut watch) = c.etcd.watch_prefix(prefix, revision + 1) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        while (c.running)() {
            match watch.next(Duration::from_millis(500)) {
                Ok(None) => on(Seen::Idle),
                Ok(Some(b)) => on(Seen::Batch(&b)),
                Err(e) => {
                    tracing::debug!(%prefix, error = %e, "a watch broke: reading again");
                    break;
                }
            }
        }
    }
}
