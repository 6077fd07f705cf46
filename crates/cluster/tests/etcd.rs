//! The etcd client against real etcd members on loopback ([`LocalEtcd`]):
//! keys, transactions, leases, watches, status, and failover between the
//! members of a 3-member cluster. etcd must be installed (the tests
//! install it with `scripts/install-e2e-deps.sh` when they can, and fail
//! saying so when they cannot).

use baton_cluster::etcd::{Etcd, EtcdError, KeyValue, Revision, Watch, WatchBatch, WatchEvent};
use baton_cluster::local_etcd::LocalEtcd;
use std::time::{Duration, Instant};

/// The bound of every wait for etcd to do something.
const WAIT: Duration = Duration::from_secs(15);

fn start(members: usize) -> (LocalEtcd, Etcd) {
    let cluster = LocalEtcd::start(members).unwrap_or_else(|e| panic!("starting etcd: {e}"));
    let client = Etcd::new(&cluster.endpoints(), Duration::from_secs(5));
    (cluster, client)
}

/// Polls `cond` until it holds, failing after [`WAIT`].
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < deadline, "{what}: not within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The next batch of `watch`, failing after [`WAIT`].
fn next_batch(watch: &mut Watch) -> WatchBatch {
    watch
        .next(WAIT)
        .expect("the watch works")
        .expect("a batch in time")
}

/// Collects events from `watch` until there are `n` of them.
fn events(watch: &mut Watch, n: usize) -> Vec<(Revision, WatchEvent)> {
    let mut out = Vec::new();
    while out.len() < n {
        let b = next_batch(watch);
        for ev in b.events {
            let rev = match &ev {
                WatchEvent::Put(kv) | WatchEvent::Delete(kv) => kv.mod_revision,
            };
            assert!(
                rev <= b.revision,
                "event at {rev} in a batch at {}",
                b.revision
            );
            out.push((rev, ev));
        }
    }
    out
}

fn keys(kvs: &[KeyValue]) -> Vec<&str> {
    kvs.iter().map(|kv| kv.key.as_str()).collect()
}

#[test]
fn keys_and_transactions() {
    let (cluster, etcd) = start(1);
    assert_eq!(etcd.endpoints(), cluster.endpoints().as_slice());

    let r1 = etcd.put("t/a", b"one", None).unwrap();
    let r2 = etcd.put("t/b", b"", None).unwrap();
    etcd.put("u/c", b"other prefix", None).unwrap();
    assert!(r2 > r1);
    let (rev, kvs) = etcd.get_prefix("t/").unwrap();
    assert!(rev > r2);
    assert_eq!(keys(&kvs), ["t/a", "t/b"]);
    assert_eq!(
        kvs[0],
        KeyValue {
            key: "t/a".into(),
            value: b"one".to_vec(),
            create_revision: r1,
            mod_revision: r1,
            lease: 0
        }
    );
    assert_eq!(kvs[1].value, b"");
    assert!(etcd.get_prefix("nothing/").unwrap().1.is_empty());

    // create: once, then the existing key comes back.
    let created = etcd.create("t/m", b"first", None).unwrap().unwrap();
    let existing = etcd.create("t/m", b"second", None).unwrap().unwrap_err();
    assert_eq!(existing.value, b"first");
    assert_eq!(existing.create_revision, created);

    // delete_if_created: the wrong revision leaves it, the right one deletes.
    assert!(!etcd.delete_if_created("t/m", created + 100).unwrap());
    assert_eq!(etcd.get_prefix("t/m").unwrap().1.len(), 1);
    assert!(etcd.delete_if_created("t/m", created).unwrap());
    assert!(etcd.get_prefix("t/m").unwrap().1.is_empty());
    assert!(!etcd.delete_if_created("t/m", created).unwrap());
    // Created again, it has a new create_revision: the old one no longer deletes it.
    let again = etcd.create("t/m", b"third", None).unwrap().unwrap();
    assert!(!etcd.delete_if_created("t/m", created).unwrap());
    assert!(etcd.delete_if_created("t/m", again).unwrap());

    // delete: that key only, not those it is a prefix of.
    etcd.put("t/k", b"1", None).unwrap();
    etcd.put("t/kk", b"2", None).unwrap();
    etcd.delete("t/k").unwrap();
    assert_eq!(keys(&etcd.get_prefix("t/k").unwrap().1), ["t/kk"]);
    etcd.delete("t/k").unwrap();

    let after = etcd.delete_prefix("t/").unwrap();
    assert!(etcd.get_prefix("t/").unwrap().1.is_empty());
    assert_eq!(keys(&etcd.get_prefix("u/").unwrap().1), ["u/c"]);

    // status
    let endpoint = &cluster.endpoints()[0];
    let s = etcd.status(endpoint).unwrap();
    assert_ne!(s.member_id, 0);
    assert_eq!(s.leader, s.member_id, "a single member leads itself");
    assert_eq!(s.revision, after);
    assert!(s.took < Duration::from_secs(5));

    // An API error is an error, not a panic.
    assert!(matches!(etcd.compact(after + 1000), Err(EtcdError::Api(_))));
}

#[test]
fn leases_keep_alive_expire_and_revoke() {
    let (_cluster, etcd) = start(1);

    // Expiry: keys of a 1 s lease vanish, then keep_alive says LeaseGone.
    let short = etcd.grant(Duration::from_secs(1)).unwrap();
    etcd.put("l/short", b"x", Some(short)).unwrap();
    let (_, kvs) = etcd.get_prefix("l/").unwrap();
    assert_eq!(kvs[0].lease, short);
    eventually("the leased key vanishes", || {
        etcd.get_prefix("l/short").unwrap().1.is_empty()
    });
    assert!(matches!(etcd.keep_alive(short), Err(EtcdError::LeaseGone)));

    // Kept alive, a lease keeps its keys; keep_alive gives the TTL.
    let long = etcd.grant(Duration::from_secs(30)).unwrap();
    let created = etcd.create("l/long", b"y", Some(long)).unwrap().unwrap();
    let ttl = etcd.keep_alive(long).unwrap();
    assert!(
        ttl > Duration::ZERO && ttl <= Duration::from_secs(30),
        "{ttl:?}"
    );

    // Revoke deletes its keys at once; the lease is then gone.
    etcd.revoke(long).unwrap();
    assert!(etcd.get_prefix("l/long").unwrap().1.is_empty());
    assert!(!etcd.delete_if_created("l/long", created).unwrap());
    assert!(matches!(etcd.keep_alive(long), Err(EtcdError::LeaseGone)));
    // Revoking again is fine: it is revoked.
    etcd.revoke(long).unwrap();
    // A put with an unknown lease is an API error.
    assert!(matches!(
        etcd.put("l/x", b"", Some(long)),
        Err(EtcdError::Api(_))
    ));
}

#[test]
fn watches_see_puts_and_deletes_in_order() {
    let (_cluster, etcd) = start(1);
    let before = etcd.put("w/a", b"0", None).unwrap();

    // From a past revision: the history is replayed.
    let mut watch = etcd.watch_prefix("w/", before).unwrap();
    let r1 = etcd.put("w/b", b"1", None).unwrap();
    let r2 = etcd.put("w/a", b"2", None).unwrap();
    etcd.put("x/ignored", b"", None).unwrap();
    let r3 = etcd.delete_prefix("w/a").unwrap();
    let seen = events(&mut watch, 4);
    let summary: Vec<(Revision, &str, bool, &[u8])> = seen
        .iter()
        .map(|(rev, ev)| match ev {
            WatchEvent::Put(kv) => (*rev, kv.key.as_str(), true, kv.value.as_slice()),
            WatchEvent::Delete(kv) => (*rev, kv.key.as_str(), false, kv.value.as_slice()),
        })
        .collect();
    assert_eq!(
        summary,
        [
            (before, "w/a", true, &b"0"[..]),
            (r1, "w/b", true, b"1"),
            (r2, "w/a", true, b"2"),
            (r3, "w/a", false, b""),
        ]
    );

    // Nothing more: a timeout, and the watch still works after it.
    assert!(watch.next(Duration::from_millis(200)).unwrap().is_none());
    let r4 = etcd.put("w/c", b"3", None).unwrap();
    let b = next_batch(&mut watch);
    assert_eq!(b.revision, r4);
    assert!(matches!(&b.events[..], [WatchEvent::Put(kv)] if kv.key == "w/c"));

    // From 0: only what happens after.
    let mut now = etcd.watch_prefix("w/", 0).unwrap();
    assert!(now.next(Duration::from_millis(200)).unwrap().is_none());
    let r5 = etcd.put("w/d", b"", None).unwrap();
    assert_eq!(events(&mut now, 1)[0].0, r5);
    drop(now);

    // A watch from a compacted revision is cancelled: an error.
    etcd.compact(r4).unwrap();
    let mut old = etcd.watch_prefix("w/", r1).unwrap();
    let err = old.next(WAIT).unwrap_err();
    assert!(matches!(err, EtcdError::Api(_)), "{err}");
    assert!(
        old.next(Duration::ZERO).is_err(),
        "a broken watch stays broken"
    );
}

#[test]
fn three_members_fail_over_and_watches_resume() {
    let (mut cluster, etcd) = start(3);
    let endpoints = cluster.endpoints();
    for e in &endpoints {
        let s = etcd.status(e).unwrap();
        assert_ne!(s.leader, 0);
    }

    let mut last = etcd.put("f/0", b"a", None).unwrap();
    let mut watch = etcd.watch_prefix("f/", last + 1).unwrap();

    // The client talks to the first endpoint; it goes away.
    cluster.stop_member(0);
    assert!(matches!(
        etcd.status(&endpoints[0]),
        Err(EtcdError::Unreachable(_))
    ));

    // Requests still succeed, through the others.
    let r1 = etcd.put("f/1", b"b", None).unwrap();
    assert_eq!(keys(&etcd.get_prefix("f/").unwrap().1), ["f/0", "f/1"]);
    assert!(etcd.create("f/1", b"c", None).unwrap().is_err());
    let lease = etcd.grant(Duration::from_secs(10)).unwrap();
    etcd.keep_alive(lease).unwrap();

    // The watch was on the stopped member: it breaks (or, had it been on
    // another, it goes on). Resumed from last + 1, nothing is missed.
    let mut seen = Vec::new();
    let deadline = Instant::now() + WAIT;
    while seen.is_empty() {
        assert!(Instant::now() < deadline, "the watch did not resume");
        match watch.next(Duration::from_millis(500)) {
            Ok(Some(b)) => {
                for ev in b.events {
                    if let WatchEvent::Put(kv) = &ev {
                        last = kv.mod_revision;
                    }
                    seen.push(ev);
                }
            }
            Ok(None) => {}
            Err(_) => watch = etcd.watch_prefix("f/", last + 1).unwrap(),
        }
    }
    assert!(matches!(&seen[0], WatchEvent::Put(kv) if kv.key == "f/1" && kv.mod_revision == r1));
    assert_eq!(last, r1);

    // The member comes back and serves again.
    cluster.start_member(0).unwrap();
    let r2 = etcd.put("f/2", b"d", None).unwrap();
    eventually("the restarted member catches up", || {
        etcd.status(&endpoints[0]).is_ok_and(|s| s.revision >= r2)
    });
    let only_first = Etcd::new(&endpoints[..1], Duration::from_secs(5));
    assert_eq!(
        keys(&only_first.get_prefix("f/").unwrap().1),
        ["f/0", "f/1", "f/2"]
    );
    assert!(matches!(&events(&mut watch, 1)[0].1, WatchEvent::Put(kv) if kv.key == "f/2"));
}

#[test]
fn nothing_listening_is_unreachable() {
    // A port that was free a moment ago: nothing answers there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let etcd = Etcd::new(
        &[
            format!("http://127.0.0.1:{port}"),
            format!("http://127.0.0.1:{port}/"),
        ],
        Duration::from_secs(1),
    );
    match etcd.put("k", b"v", None) {
        Err(EtcdError::Unreachable(why)) => {
            assert_eq!(
                why.matches(&format!("127.0.0.1:{port}")).count(),
                2,
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        etcd.watch_prefix("k", 0),
        Err(EtcdError::Unreachable(_))
    ));
}
