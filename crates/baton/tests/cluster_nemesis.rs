//! A nemesis against the cluster, as Jepsen runs one against a database
//! (issue 56): three instances running the network services (two talking
//! to a three-member etcd directly, the third through proxies), four Open
//! vSwitch bridges in a line connected to all three, OpenFlow 1.3; faults
//! one after another, drawn at random (the seed is printed, and taken from
//! `BATON_NEMESIS_SEED`): kill -9 of an instance (restarted after), an
//! instance stopped for longer than its lease, the third's partition from
//! etcd (its proxies stopped, so its connections hang), an etcd member
//! restarted, and etcd lost entirely for longer than the lease.
//!
//! The switches' side of the truth checks it: Open vSwitch's roles,
//! sampled every 50 ms, never show two masters of a bridge; after each
//! fault every session of every bridge ends master or slave (never EQUAL)
//! and every pair of hosts pings; and at the end Open vSwitch's log shows
//! no change it refused from a session that was not the master. In the
//! suite: one fault of each kind. The long form draws faults at random
//! for `BATON_NEMESIS_MINUTES` (default 10; `cargo test -p baton --test
//! cluster_nemesis -- --ignored --nocapture`, 6 s or so a fault). Run as
//! root.

mod support;

use baton_netlab::{OfVersion, Proc, Topology};
use std::time::{Duration, Instant};
use support::SECOND;
use support::cluster::{Cluster, ETCD};

const SERVICES: &str = "topology,devices,routing";

#[derive(Debug, Clone, Copy)]
enum Fault {
    /// SIGKILL of instance 0 or 1, restarted once the others took over.
    Kill(usize),
    /// SIGSTOP of instance 0 or 1 for longer than the lease, then SIGCONT.
    Pause(usize),
    /// The third instance cut off from etcd (its proxies stopped) for
    /// longer than the lease, then healed.
    Partition,
    /// etcd member `m` killed and started again.
    EtcdRestart(usize),
    /// Every etcd member killed for longer than the lease, then started.
    EtcdOutage,
}

/// xorshift64*: a fixed sequence per seed, no dependency.
struct Draw(u64);

impl Draw {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn fault(&mut self) -> Fault {
        match self.next(5) {
            0 => Fault::Kill(self.next(2)),
            1 => Fault::Pause(self.next(2)),
            2 => Fault::Partition,
            3 => Fault::EtcdRestart(self.next(3)),
            _ => Fault::EtcdOutage,
        }
    }
}

/// What is left to do after a fault: start again what it killed.
enum Repair {
    Nothing,
    Baton(usize),
    Etcd(Vec<usize>),
}

/// The fault, with signals only (so that Open vSwitch can be sampled
/// meanwhile); what to start again after.
fn inflict(c: &Cluster, fault: Fault) -> Repair {
    const SIGSTOP: i32 = 19;
    const SIGCONT: i32 = 18;
    const SIGKILL: i32 = 9;
    let away = c.ttl() + 2 * SECOND;
    match fault {
        Fault::Kill(i) => {
            c.batons[i].as_ref().unwrap().signal(SIGKILL);
            let others: Vec<usize> = (0..3).filter(|j| *j != i).collect();
            c.wait_masters(others[0], &others, 20 * SECOND);
            Repair::Baton(i)
        }
        Fault::Pause(i) => {
            let p = c.batons[i].as_ref().unwrap();
            p.signal(SIGSTOP);
            std::thread::sleep(away);
            p.signal(SIGCONT);
            Repair::Nothing
        }
        Fault::Partition => {
            for p in &c.proxies {
                p.signal(SIGSTOP);
            }
            std::thread::sleep(away);
            for p in &c.proxies {
                p.signal(SIGCONT);
            }
            Repair::Nothing
        }
        Fault::EtcdRestart(m) => {
            c.etcd[m].as_ref().unwrap().signal(SIGKILL);
            std::thread::sleep(SECOND);
            Repair::Etcd(vec![m])
        }
        Fault::EtcdOutage => {
            for e in c.etcd.iter().flatten() {
                e.signal(SIGKILL);
            }
            std::thread::sleep(away);
            Repair::Etcd((0..c.members).collect())
        }
    }
}

fn repair(c: &mut Cluster, r: Repair) {
    match r {
        Repair::Nothing => {}
        Repair::Baton(i) => {
            c.batons[i] = None;
            c.start_baton(i, false);
        }
        Repair::Etcd(members) => {
            for m in members {
                c.etcd[m] = None;
                c.etcd[m] = Some(restart_etcd(c, m));
            }
        }
    }
}

fn restart_etcd(c: &Cluster, m: usize) -> Proc {
    let p = c
        .lab
        .spawn(Cluster::etcd_cmd(&c.lab, m, c.members, "existing"))
        .unwrap();
    c.lab.wait_listening(ETCD[m].0, 20 * SECOND).unwrap();
    p
}

/// Inflicts the faults `next` gives until it gives none, checking the
/// switches after each; returns how many of each kind.
fn run(mut next: impl FnMut(usize) -> Option<Fault>) -> std::collections::BTreeMap<String, usize> {
    let mut c = Cluster::start(
        SERVICES,
        Topology::linear(4),
        OfVersion::V13,
        3,
        3,
        true,
        &[0, 1, 2],
    );
    c.wait_masters(0, &[0, 1, 2], 20 * SECOND);
    c.assert_all_pairs_ping();
    let t0 = Instant::now();
    let mut kinds = std::collections::BTreeMap::new();
    let mut n = 0;
    while let Some(fault) = next(n) {
        n += 1;
        let kind = format!("{fault:?}");
        *kinds
            .entry(kind.split('(').next().unwrap_or_default().to_string())
            .or_default() += 1;
        let started = Instant::now();
        let (fixing, samples) = c.sampling(|| inflict(&c, fault));
        repair(&mut c, fixing);
        let (settled, more) = c.sampling(|| c.wait_masters(0, &[0, 1, 2], 30 * SECOND));
        let samples = samples + more;
        c.wait_no_equal(&format!("{fault:?}"));
        c.assert_all_pairs_ping();
        eprintln!(
            "fault {n} {fault:?}: {:?}, masters settled {:?} after, {samples} samples never two masters: {:?}",
            started.elapsed(),
            settled.controllers,
            settled.masters
        );
    }
    let refused = c.refused_as_slave(None);
    assert!(
        refused.is_empty(),
        "Open vSwitch refused changes from a session that was not master:\n{}\n{}",
        refused.join("\n"),
        c.logs()
    );
    eprintln!(
        "{n} faults in {:?} ({kinds:?}): never two masters, no session EQUAL, every pair pinging after each, nothing refused as not master",
        t0.elapsed()
    );
    // Before the laboratory closes, which expects its commands gone.
    drop(std::mem::take(&mut c.proxies));
    for b in c.batons.iter_mut() {
        drop(b.take());
    }
    kinds
}

#[test]
fn one_fault_of_each_kind() {
    let faults = [
        Fault::Kill(0),
        Fault::Pause(1),
        Fault::Partition,
        Fault::EtcdRestart(1),
        Fault::EtcdOutage,
    ];
    run(|n| faults.get(n).copied());
}

#[test]
#[ignore = "minutes of faults: BATON_NEMESIS_MINUTES (default 10), BATON_NEMESIS_SEED"]
fn faults_drawn_at_random() {
    let minutes: u64 = std::env::var("BATON_NEMESIS_MINUTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let seed: u64 = std::env::var("BATON_NEMESIS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("nemesis seed {seed} (BATON_NEMESIS_SEED={seed} draws the same faults)");
    let mut draw = Draw(seed);
    let until = Instant::now() + Duration::from_secs(60 * minutes);
    run(|_| (Instant::now() < until).then(|| draw.fault()));
}
