//! The election on synthetic time against a fake etcd (keys with create
//! revisions, leases that expire, a watch per member that lags and
//! delivers out of order), through member crashes and partitions from
//! etcd: no two members ever act as master of one datapath, and once
//! things calm down every datapath has exactly one master, the preferred
//! one.

use baton_cluster::assign;
use baton_cluster::elect::{Action, Elector, Key, Observed, Role};
use baton_cluster::lease::LeaseClock;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(3);
const MARGIN: Duration = Duration::from_secs(1);
const DPIDS: [u64; 6] = [1, 2, 3, 4, 5, 6];

type Event = (i64, String, Option<(Vec<u8>, i64, i64)>);

/// The fake etcd: one keyspace, its revision, leases and the event log
/// every watch reads from.
#[derive(Default)]
struct FakeEtcd {
    revision: i64,
    /// value, create revision, lease
    kv: BTreeMap<String, (Vec<u8>, i64, i64)>,
    leases: BTreeMap<i64, Instant>,
    next_lease: i64,
    log: Vec<Event>,
}

impl FakeEtcd {
    fn put(&mut self, key: &str, value: &[u8], lease: i64) {
        self.revision += 1;
        let created = self.kv.get(key).map_or(self.revision, |e| e.1);
        self.kv
            .insert(key.to_string(), (value.to_vec(), created, lease));
        self.log.push((
            self.revision,
            key.to_string(),
            Some((value.to_vec(), created, lease)),
        ));
    }

    fn delete(&mut self, key: &str) {
        if self.kv.remove(key).is_some() {
            self.revision += 1;
            self.log.push((self.revision, key.to_string(), None));
        }
    }

    fn create(&mut self, key: &str, value: &[u8], lease: i64) -> Option<i64> {
        if self.kv.contains_key(key) {
            return None;
        }
        self.put(key, value, lease);
        Some(self.revision)
    }

    fn expire(&mut self, now: Instant) {
        let dead: Vec<i64> = self
            .leases
            .iter()
            .filter(|(_, e)| **e <= now)
            .map(|(l, _)| *l)
            .collect();
        for l in dead {
            self.leases.remove(&l);
            let keys: Vec<String> = self
                .kv
                .iter()
                .filter(|(_, e)| e.2 == l)
                .map(|(k, _)| k.clone())
                .collect();
            for k in keys {
                self.delete(&k);
            }
        }
    }
}

struct Member {
    name: String,
    elector: Elector,
    observed: Observed,
    clock: LeaseClock,
    lease: Option<i64>,
    /// Where its watch has read the log to.
    cursor: usize,
    /// What its runtime was told.
    roles: BTreeMap<u64, Role>,
    alive: bool,
    partitioned: bool,
}

impl Member {
    fn new(name: &str) -> Member {
        Member {
            name: name.to_string(),
            elector: Elector::new(name),
            observed: Observed::default(),
            clock: LeaseClock::new(TTL, MARGIN),
            lease: None,
            cursor: 0,
            roles: BTreeMap::new(),
            alive: true,
            partitioned: false,
        }
    }

    /// Acts as master of `d` now: told so, and its guard has not demoted
    /// it (the guard demotes at the lease clock's deadline).
    fn acts_as_master(&self, d: u64, now: Instant) -> bool {
        self.alive && self.clock.healthy(now) && matches!(self.roles.get(&d), Some(Role::Master(_)))
    }

    fn tick(&mut self, etcd: &mut FakeEtcd, now: Instant, deliver: usize, reverse: bool) {
        if !self.alive {
            return;
        }
        if !self.partitioned {
            match self.lease {
                Some(l) if etcd.leases.contains_key(&l) => {
                    etcd.leases.insert(l, now + TTL);
                    self.clock.renewed(now);
                }
                _ => {
                    self.clock.lost();
                    etcd.next_lease += 1;
                    let l = etcd.next_lease;
                    etcd.leases.insert(l, now + TTL);
                    self.lease = Some(l);
                    self.clock.renewed(now);
                    etcd.put(&Key::Member(self.name.clone()).path(), b"{}", l);
                    for d in DPIDS {
                        etcd.put(&Key::Connected(d, self.name.clone()).path(), b"", l);
                    }
                }
            }
            // The watch: some of what is new, possibly out of order.
            let end = self.cursor.saturating_add(deliver).min(etcd.log.len());
            let mut chunk: Vec<Event> = etcd.log[self.cursor..end].to_vec();
            if reverse {
                chunk.reverse();
            }
            for (rev, key, value) in chunk {
                self.observed.apply(
                    &key,
                    value.as_ref().map(|(v, c, l)| (v.as_slice(), *c, *l)),
                    rev,
                );
            }
            self.cursor = end;
        }
        let local: BTreeSet<u64> = DPIDS.into_iter().collect();
        let healthy = self.clock.healthy(now);
        let plan = self
            .elector
            .plan(&self.observed, &local, self.lease, healthy, now);
        for action in plan {
            match action {
                Action::Become(d, role) => {
                    self.roles.insert(d, role);
                    self.elector.applied(d, role);
                }
                Action::Claim(d) if !self.partitioned => {
                    let key = Key::Master(d).path();
                    let lease = self.lease.expect("a member claims only with a lease");
                    if let Some(rev) = etcd.create(&key, self.name.as_bytes(), lease) {
                        self.observed
                            .apply(&key, Some((self.name.as_bytes(), rev, lease)), rev);
                    }
                }
                Action::Release(d, created) if !self.partitioned => {
                    let key = Key::Master(d).path();
                    if etcd.kv.get(&key).is_some_and(|e| e.1 == created) {
                        etcd.delete(&key);
                    }
                }
                Action::Claim(_) | Action::Release(..) => {}
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    Tick {
        member: usize,
        ms: u64,
        deliver: usize,
        reverse: bool,
    },
    Partition(usize),
    Heal(usize),
    Kill(usize),
    Restart(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..3usize, 10..600u64, 0..12usize, any::<bool>()).prop_map(
            |(member, ms, deliver, reverse)| Step::Tick { member, ms, deliver, reverse }
        ),
        1 => (0..3usize).prop_map(Step::Partition),
        1 => (0..3usize).prop_map(Step::Heal),
        1 => (0..3usize).prop_map(Step::Kill),
        1 => (0..3usize).prop_map(Step::Restart),
    ]
}

fn masters_of(members: &[Member], d: u64, now: Instant) -> Vec<&str> {
    members
        .iter()
        .filter(|m| m.acts_as_master(d, now))
        .map(|m| m.name.as_str())
        .collect()
}

fn check_at_most_one(members: &[Member], now: Instant) -> Result<(), TestCaseError> {
    for d in DPIDS {
        let masters = masters_of(members, d, now);
        prop_assert!(masters.len() <= 1, "datapath {d} has masters {masters:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn never_two_masters_and_one_once_calm(steps in proptest::collection::vec(step(), 1..150)) {
        let mut etcd = FakeEtcd::default();
        let mut members: Vec<Member> = ["a", "b", "c"].iter().map(|n| Member::new(n)).collect();
        let mut now = Instant::now();
        for s in steps {
            match s {
                Step::Tick { member, ms, deliver, reverse } => {
                    now += Duration::from_millis(ms);
                    etcd.expire(now);
                    members[member].tick(&mut etcd, now, deliver, reverse);
                }
                Step::Partition(i) => members[i].partitioned = true,
                Step::Heal(i) => members[i].partitioned = false,
                Step::Kill(i) => members[i].alive = false,
                Step::Restart(i) => {
                    if !members[i].alive {
                        let name = members[i].name.clone();
                        members[i] = Member::new(&name);
                    }
                }
            }
            check_at_most_one(&members, now)?;
        }
        // Calm: everyone alive and reachable, ticking with prompt watches.
        for m in &mut members {
            m.partitioned = false;
            if !m.alive {
                let name = m.name.clone();
                *m = Member::new(&name);
            }
        }
        for _ in 0..200 {
            now += Duration::from_millis(100);
            etcd.expire(now);
            for m in &mut members {
                m.tick(&mut etcd, now, usize::MAX, false);
            }
            check_at_most_one(&members, now)?;
        }
        let preferred = assign::balanced(DPIDS.iter().map(|&d| (d, ["a", "b", "c"])));
        for d in DPIDS {
            let masters = masters_of(&members, d, now);
            prop_assert_eq!(masters.len(), 1, "datapath {} has masters {:?}", d, masters);
            prop_assert_eq!(Some(&masters[0]), preferred.get(&d));
        }
    }
}
