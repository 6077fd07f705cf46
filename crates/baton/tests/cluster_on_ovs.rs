//! Several baton instances acting as one controller (issue 25), on Open
//! vSwitch with a real etcd, all inside one laboratory (`baton-netlab`):
//!
//! - OpenFlow 1.3: a three-member etcd, three instances (`baton run
//!   --cluster ... --node baton-N --apps learning-switch`), six bridges in
//!   a line, each connected to all three. Every bridge gets exactly one
//!   master, the one the cluster names, and every pair pings. Then the
//!   master of the most bridges is killed with SIGKILL: its bridges get
//!   new masters and pings resume (the outage is printed). One instance
//!   is cut off from etcd (its etcd connections go through proxies the
//!   test kills): it demotes itself, the others take its bridges, and no
//!   bridge ever reports two masters (sampled throughout). One etcd member
//!   restarts: mastership does not change. The killed instance comes
//!   back: it rejoins and takes a share of the bridges.
//! - A master stopped (SIGSTOP) for longer than its lease, then resumed:
//!   Open vSwitch refuses nothing from it (it sent nothing as master),
//!   and it ends a slave of every bridge.
//! - Five start-ups of three instances and six bridges: every session
//!   ends master or slave, never EQUAL.
//! - OpenFlow 1.0, which has no roles: two instances, both bridges
//!   connected to both. Only the master of each answers (no duplicate
//!   replies), and pings work.
//!
//! Learning switches here, which need nothing beyond their own switch:
//! the network services sharing their views across the instances are
//! `cluster_views_on_ovs`'s. Times are printed, not asserted. Run as root.

mod support;

use baton_netlab::{OfVersion, Proc, Topology};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use support::SECOND;
use support::cluster::{Cluster, ETCD, api_port, count_by_master, node};

#[test]
fn three_instances_one_master_per_bridge_through_failures_openflow13() {
    let mut c = Cluster::start(
        "learning-switch",
        Topology::linear(6),
        OfVersion::V13,
        3,
        3,
        true,
        &[0, 1, 2],
    );
    let first = c.wait_masters(0, &[0, 1, 2], 20 * SECOND);
    eprintln!(
        "masters {:?} after {:?} (Open vSwitch's database: {:?})",
        first.masters, first.controllers, first.ovs
    );
    // Balance: once every member is settled, none masters more than
    // ceil(6 / 3) = 2 bridges.
    let t0 = Instant::now();
    let masters = loop {
        let m = c.wait_masters(0, &[0, 1, 2], 20 * SECOND).masters;
        if count_by_master(&m).values().all(|n| *n <= 2) {
            break m;
        }
        assert!(t0.elapsed() < 30 * SECOND, "masters never balanced: {m:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!("balanced: {masters:?}");
    let cluster = c.api(1, "/api/v1/cluster").unwrap();
    assert_eq!(cluster["members"].as_array().unwrap().len(), 3, "{cluster}");
    // What an operator sees from any instance.
    let shown = c.show(2, "cluster");
    for i in 0..3 {
        assert!(shown.contains(&node(i)), "{shown}");
    }
    eprintln!("baton show cluster:\n{shown}");
    let shown = c.show(0, "switches");
    let masters_here = masters.values().filter(|m| **m == 0).count();
    assert!(
        shown.lines().next().unwrap_or_default().ends_with("ROLE"),
        "{shown}"
    );
    assert_eq!(shown.matches(" master").count(), masters_here, "{shown}");
    assert_eq!(shown.matches(" slave").count(), 6 - masters_here, "{shown}");
    // A change to a switch goes through its master; any other instance
    // refuses it and names the master and its API.
    let master = masters["s1"];
    let other = (0..3).find(|i| *i != master).unwrap();
    let flow = r#"{"match": {"eth_dst": "00:00:00:00:0b:0b"}, "priority": 4321, "cookie": 7, "actions": []}"#;
    let flows = "/api/v1/switches/00:00:00:00:00:00:00:01/flows";
    let (code, refused) = c.post(other, flows, flow);
    assert_eq!(code, 409, "{refused}");
    let says = refused["error"].as_str().unwrap_or_default().to_string();
    assert!(
        says.contains(&node(master)) && says.contains(&format!("127.0.0.1:{}", api_port(master))),
        "{refused}"
    );
    let (code, added) = c.post(master, flows, flow);
    assert_eq!(code, 201, "{added}");
    c.assert_all_pairs_ping();

    // kill -9 the master of the most bridges (of the two instances that
    // talk to etcd directly: the third is for the partition).
    let counts = count_by_master(&masters);
    let victim = if counts.get(&0) >= counts.get(&1) {
        0
    } else {
        1
    };
    let survivors: Vec<usize> = (0..3).filter(|i| *i != victim).collect();
    let (after, samples) = c.sampling(|| {
        c.batons[victim].as_ref().unwrap().signal(9); // SIGKILL
        c.wait_masters(survivors[0], &survivors, 15 * SECOND)
    });
    eprintln!(
        "kill -9 {}: its {} bridges had new masters {:?} later (Open vSwitch's database: {:?}; {samples} samples, never two masters): {:?}",
        node(victim),
        counts[&victim],
        after.controllers,
        after.ovs,
        after.masters
    );
    let reach = c
        .lab
        .wait_reachable("h1", c.topo.hosts[5].ip, 10 * SECOND)
        .unwrap();
    eprintln!("h1 reached h6 {reach:?} after the new masters");
    c.assert_all_pairs_ping();

    // The proxied instance (2) cut off from etcd.
    {
        let cut_off = 2;
        let others: Vec<usize> = survivors
            .iter()
            .copied()
            .filter(|i| *i != cut_off)
            .collect();
        let proxies = std::mem::take(&mut c.proxies);
        let (after, samples) = c.sampling(|| {
            drop(proxies);
            c.wait_masters(others[0], &others, 20 * SECOND)
        });
        eprintln!(
            "{} cut off from etcd: every bridge mastered by the rest {:?} later (Open vSwitch's database: {:?}; {samples} samples, never two masters): {:?}",
            node(cut_off),
            after.controllers,
            after.ovs,
            after.masters
        );
        let seen = c.api(cut_off, "/api/v1/cluster").unwrap();
        assert_eq!(seen["connected"], false, "{seen}");
        // It demoted itself: it serves none of its switches.
        let switches = c.api(cut_off, "/api/v1/switches").unwrap();
        let roles: Vec<&str> = switches
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["role"].as_str().unwrap())
            .collect();
        assert!(
            roles.len() == 6 && roles.iter().all(|r| *r == "slave"),
            "{roles:?}"
        );
        c.assert_all_pairs_ping();
        c.start_proxies();
        let (after, took) = c.wait_share(cut_off, &survivors);
        eprintln!(
            "{} back in touch with etcd: masters {after:?} after {took:?}",
            node(cut_off)
        );
    }

    // One etcd member restarts: mastership does not change.
    let before = c.ovs_masters();
    let member = c.etcd[1].take();
    let (restarted, samples) = c.sampling(|| {
        drop(member); // killed with its process tree
        std::thread::sleep(2 * SECOND);
        let again = c
            .lab
            .spawn(Cluster::etcd_cmd(&c.lab, 1, c.members, "existing"))
            .unwrap();
        c.lab.wait_listening(ETCD[1].0, 20 * SECOND).unwrap();
        std::thread::sleep(2 * SECOND);
        again
    });
    c.etcd[1] = Some(restarted);
    assert_eq!(
        c.ovs_masters(),
        before,
        "an etcd member's restart moved masters"
    );
    eprintln!("etcd member e1 restarted: masters unchanged ({samples} samples)");
    c.assert_all_pairs_ping();

    // The killed instance comes back, and takes a share.
    c.start_baton(victim, false);
    c.lab.reconnect_controllers().unwrap();
    let (m, took) = c.wait_share(victim, &[0, 1, 2]);
    let moved = m
        .iter()
        .filter(|(b, i)| before.get(*b) != Some(&Some(**i)))
        .count();
    eprintln!(
        "{} rejoined: masters {m:?} after {took:?}, {moved} bridges moved",
        node(victim)
    );
    c.assert_all_pairs_ping();

    // etcd lost entirely: every instance keeps the switches it masters
    // and serves them with its last state; when etcd returns, they carry
    // on with the same masters.
    let before = c.wait_masters(0, &[0, 1, 2], 20 * SECOND).masters;
    let members: Vec<Option<Proc>> = c.etcd.iter_mut().map(Option::take).collect();
    drop(members);
    std::thread::sleep(c.ttl() + 3 * SECOND);
    for i in 0..3 {
        let seen = c.api(i, "/api/v1/cluster").unwrap();
        assert_eq!(seen["connected"], false, "{seen}");
    }
    let during = c.controller_masters(&[0, 1, 2]);
    let during: BTreeMap<String, usize> = during
        .into_iter()
        .map(|(b, m)| {
            assert_eq!(m.len(), 1, "{b}: {m:?}");
            (b, m[0])
        })
        .collect();
    assert_eq!(
        during,
        before,
        "losing etcd moved or dropped masters\n{}",
        c.logs()
    );
    eprintln!("etcd lost entirely: masters kept {during:?}");
    c.assert_all_pairs_ping();
    for i in 0..c.members {
        c.etcd[i] = Some(
            c.lab
                .spawn(Cluster::etcd_cmd(&c.lab, i, c.members, "existing"))
                .unwrap(),
        );
    }
    let t0 = Instant::now();
    while !(0..3).all(|i| {
        c.api(i, "/api/v1/cluster")
            .is_ok_and(|v| v["connected"] == true)
    }) {
        assert!(
            t0.elapsed() < 30 * SECOND,
            "the instances did not get back to etcd\n{}",
            c.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let after = c.wait_masters(0, &[0, 1, 2], 20 * SECOND).masters;
    eprintln!("etcd back after {:?}: masters {after:?}", t0.elapsed());
    c.assert_all_pairs_ping();
}

#[test]
fn openflow10_switches_have_no_roles_and_only_the_master_answers() {
    let c = Cluster::start(
        "learning-switch",
        Topology::linear(2),
        OfVersion::V10,
        1,
        2,
        false,
        &[0, 1],
    );
    let names: BTreeMap<u64, String> = c
        .topo
        .switches
        .iter()
        .map(|s| (s.dpid.0, s.name.clone()))
        .collect();
    let t0 = Instant::now();
    let masters: BTreeSet<(String, String)> = loop {
        let cluster = c.api(0, "/api/v1/cluster").unwrap();
        let m: BTreeSet<(String, String)> = cluster["masters"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| {
                let name = names.get(&support::dpid(m["dpid"].as_str()?))?;
                Some((name.clone(), m["master"].as_str()?.to_string()))
            })
            .collect();
        if m.len() == 2 {
            break m;
        }
        assert!(t0.elapsed() < 20 * SECOND, "no masters: {cluster}");
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("1.0 masters {masters:?}");
    // Open vSwitch has no roles for 1.0 controllers: both are "other".
    for (bridge, roles) in c.ovs_roles() {
        assert!(
            roles.iter().all(|(_, r)| r != "master"),
            "{bridge}: {roles:?}"
        );
    }
    c.assert_all_pairs_ping();
}

/// A master paused for longer than its lease (SIGSTOP, then SIGCONT)
/// sends nothing as master when it runs again, though packet-ins reached
/// it while it was stopped: Open vSwitch, which refuses a slave's changes
/// and logs every refusal (`ofconn_send_error`, at most 10 a second), is
/// the judge. Then it is
/// a slave of every bridge and they all still ping (issue 56, item 1).
#[test]
fn a_paused_master_sends_nothing_as_master_when_it_runs_again() {
    const SIGSTOP: i32 = 19;
    const SIGCONT: i32 = 18;
    let c = Cluster::start(
        "learning-switch",
        Topology::linear(3),
        OfVersion::V13,
        1,
        2,
        false,
        &[0, 1],
    );
    let first = c.wait_masters(0, &[0, 1], 20 * SECOND);
    c.assert_all_pairs_ping();
    let counts = count_by_master(&first.masters);
    let paused = if counts.get(&0) >= counts.get(&1) {
        0
    } else {
        1
    };
    let other = 1 - paused;
    // Pings to an address nobody has: an ARP broadcast a second, which
    // each bridge sends its master as a packet-in, the paused one too.
    let arp = c
        .lab
        .ping_stream("h1", "10.0.0.200", Duration::from_millis(200))
        .unwrap();
    let stopped_at = Instant::now();
    c.batons[paused].as_ref().unwrap().signal(SIGSTOP);
    let after = c.wait_masters(other, &[other], 20 * SECOND);
    // Longer than the lease by a margin, and packet-ins queued for it.
    while stopped_at.elapsed() < c.ttl() + 3 * SECOND {
        std::thread::sleep(Duration::from_millis(100));
    }
    c.batons[paused].as_ref().unwrap().signal(SIGCONT);
    eprintln!(
        "{} stopped for {:?}: every bridge mastered by {} after {:?}",
        node(paused),
        stopped_at.elapsed(),
        node(other),
        after.controllers
    );
    let t0 = Instant::now();
    loop {
        let roles: Vec<(String, bool)> = c
            .api(paused, "/api/v1/switches")
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .map(|s| (s["role"].to_string(), s["fenced"] == true))
            .collect();
        if roles.len() == 3 && roles.iter().all(|(r, f)| r == "\"slave\"" && !f) {
            break;
        }
        assert!(
            t0.elapsed() < 10 * SECOND,
            "{} still says {roles:?}\n{}",
            node(paused),
            c.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = arp.stop();
    let refused = c.refused_as_slave(Some(paused));
    assert!(
        refused.is_empty(),
        "Open vSwitch refused changes from the paused master:\n{}\n{}",
        refused.join("\n"),
        c.logs()
    );
    eprintln!(
        "{} back: a slave of every bridge after {:?}, no change refused by Open vSwitch",
        node(paused),
        t0.elapsed()
    );
    c.assert_all_pairs_ping();
}

/// Every session ends MASTER or SLAVE, never EQUAL (issue 56, item 2):
/// three instances and six bridges started together, five times; each
/// time, once the masters are settled, Open vSwitch lists every session of
/// every bridge as master or slave ("other" is EQUAL, where a slave
/// request refused as stale and never asked again left a session, and a
/// switch takes changes from it).
#[test]
fn every_session_ends_master_or_slave_after_start_up() {
    for round in 0..5 {
        let c = Cluster::start(
            "learning-switch",
            Topology::linear(6),
            OfVersion::V13,
            1,
            3,
            false,
            &[0, 1, 2],
        );
        c.wait_masters(0, &[0, 1, 2], 20 * SECOND);
        let took = c.wait_no_equal(&format!("start-up {round}"));
        let confirmed = (0..3).all(|i| {
            c.api(i, "/api/v1/switches").is_ok_and(|v| {
                v.as_array()
                    .is_some_and(|a| a.iter().all(|s| s["role_confirmed"] == true))
            })
        });
        assert!(
            confirmed,
            "round {round}: an instance lists a role unconfirmed"
        );
        eprintln!(
            "round {round}: every session master or slave in Open vSwitch {took:?} after the masters settled"
        );
    }
}

/// The failover times of BENCHMARKS.md ("Many instances as one
/// controller"): `BATON_FAILOVER_ROUNDS` (default 10) rounds of kill -9
/// the busiest master, restart it, cut the third instance off from etcd,
/// reconnect it; each time, how long until Open vSwitch reports a new
/// master for every bridge. Printed, not asserted; run by hand:
/// `cargo test --release -p baton --test cluster_on_ovs failover_times -- --ignored --nocapture`.
#[test]
#[ignore = "a benchmark: minutes of failovers, figures printed"]
fn failover_times() {
    let rounds: usize = std::env::var("BATON_FAILOVER_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10);
    let mut c = Cluster::start(
        "learning-switch",
        Topology::linear(6),
        OfVersion::V13,
        3,
        3,
        true,
        &[0, 1, 2],
    );
    let mut masters = c.wait_masters(0, &[0, 1, 2], 20 * SECOND).masters;
    let (mut kills, mut cuts) = (Vec::new(), Vec::new());
    let (mut kills_ovs, mut cuts_ovs) = (Vec::new(), Vec::new());
    let summary = |what: &str, v: &mut Vec<Duration>| {
        v.sort();
        let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
        eprintln!(
            "{what}: {} rounds, min {}, median {}, max {}: {:?}",
            v.len(),
            ms(v[0]),
            ms(v[v.len() / 2]),
            ms(v[v.len() - 1]),
            v.iter().map(|d| ms(*d)).collect::<Vec<_>>()
        );
    };
    for round in 0..rounds {
        let counts = count_by_master(&masters);
        let victim = if counts.get(&0) >= counts.get(&1) {
            0
        } else {
            1
        };
        let survivors: Vec<usize> = (0..3).filter(|i| *i != victim).collect();
        c.batons[victim].as_ref().unwrap().signal(9); // SIGKILL
        let s = c.wait_masters(survivors[0], &survivors, 15 * SECOND);
        kills.push(s.controllers);
        kills_ovs.push(s.ovs);
        c.batons[victim] = None;
        c.start_baton(victim, false);
        c.wait_share(victim, &[0, 1, 2]);
        let proxies = std::mem::take(&mut c.proxies);
        drop(proxies);
        let s = c.wait_masters(0, &[0, 1], 20 * SECOND);
        cuts.push(s.controllers);
        cuts_ovs.push(s.ovs);
        c.start_proxies();
        masters = c.wait_share(2, &[0, 1, 2]).0;
        eprintln!(
            "round {round}: kill -9 {} {:?}, cut off {:?}",
            node(victim),
            kills[round],
            cuts[round]
        );
    }
    summary(
        "kill -9: every bridge of the dead master mastered again (the instances)",
        &mut kills,
    );
    summary(
        "kill -9: the same in Open vSwitch's database",
        &mut kills_ovs,
    );
    summary(
        "cut off from etcd: every bridge mastered by the others (the instances)",
        &mut cuts,
    );
    summary(
        "cut off from etcd: the same in Open vSwitch's database",
        &mut cuts_ovs,
    );
}
