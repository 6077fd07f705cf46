//! Bandwidth on demand on two instances acting as one controller (issue
//! 25): `topology,devices,bandwidth,routing` on both, one etcd, a chain
//! of four Open vSwitch bridges (OpenFlow 1.3) connected to both.
//!
//! Every pair pings: each pair's first packet is a flow request that the
//! master of its source's bridge admits against the ledger the instances
//! share, and each instance puts the reservation's flows on the bridges
//! it masters (its cookie is on every bridge of the path). Both
//! instances list the same reservations and the same load on each link.
//! The operator fills the middle link through one instance; a request
//! through the other that would oversubscribe it is refused with a 409
//! naming it; released through the other, it fits. Then the master of
//! the first bridge is killed with SIGKILL: its reservations go with its
//! lease, and every pair pings again with the survivor's. Run as root.
//! Times are printed, not asserted.

mod support;

use baton_netlab::{OfVersion, Topology};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::SECOND;
use support::cluster::{Cluster, count_by_master, node};
use support::views::wait_whole_network;

const APPS: &str = "topology,devices,bandwidth,routing";

/// A link as the API writes it, named once whichever way it is given.
fn link_name(link: &Value) -> String {
    let end = |e: &Value| format!("{}/{}", e["dpid"].as_str().unwrap(), e["port"]);
    let (a, b) = (end(&link["src"]), end(&link["dst"]));
    format!("{} - {}", a.clone().min(b.clone()), a.max(b))
}

/// What instance `i` lists: the reservations by number (without their
/// age), and each link's (capacity, reserved) by name.
type Listed = (BTreeMap<u64, Value>, BTreeMap<String, (u64, u64)>);

fn listed(c: &Cluster, i: usize) -> Option<Listed> {
    let all = c.api(i, "/api/v1/reservations").ok()?;
    let reservations = all["reservations"]
        .as_array()?
        .iter()
        .map(|r| {
            // What each instance says alike (not its age as it reads it).
            let mut r = r.clone();
            let fields = r.as_object_mut().unwrap();
            fields.remove("age_secs");
            fields.remove("expires_in_secs");
            (fields["id"].as_u64().unwrap(), r)
        })
        .collect();
    let loads = all["links"]
        .as_array()?
        .iter()
        .map(|l| {
            let kbps = |k: &str| l[k].as_u64().unwrap();
            (
                link_name(&l["link"]),
                (kbps("capacity_kbps"), kbps("reserved_kbps")),
            )
        })
        .collect();
    Some((reservations, loads))
}

/// Waits until every instance in `alive` lists the same reservations and
/// loads, `want` of them if given; what they list.
fn agreed(c: &Cluster, alive: &[usize], want: Option<usize>) -> Listed {
    agreed_within(c, alive, want, 15 * SECOND, true).unwrap()
}

/// [`agreed`] within `timeout`: `None` after it, or a failure if `must`.
fn agreed_within(
    c: &Cluster,
    alive: &[usize],
    want: Option<usize>,
    timeout: Duration,
    must: bool,
) -> Option<Listed> {
    let t0 = Instant::now();
    loop {
        let all: Vec<Option<Listed>> = alive.iter().map(|&i| listed(c, i)).collect();
        if let Some(Some(first)) = all.first()
            && all.iter().all(|l| l.as_ref() == Some(first))
            && want.is_none_or(|n| first.0.len() == n)
        {
            return Some(first.clone());
        }
        if !must && t0.elapsed() >= timeout {
            return None;
        }
        assert!(
            t0.elapsed() < timeout,
            "the instances do not list the same {want:?} reservations: {:?}\n{}\n{}",
            all.iter()
                .map(|l| l.as_ref().map(|(r, _)| r
                    .values()
                    .map(|r| format!("{} {}->{}", r["id"], r["src"], r["dst"]))
                    .collect::<Vec<_>>()))
                .collect::<Vec<_>>(),
            alive
                .iter()
                .map(|&i| format!(
                    "{}: {}\n{}",
                    node(i),
                    c.api(i, "/api/v1/apps").unwrap_or_default(),
                    ledger(c, i)
                ))
                .collect::<Vec<_>>()
                .join("\n"),
            c.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the instances in `alive` list one reservation per ordered
/// pair of the four hosts. A pair whose first packets were flooded
/// (its destination not known to its source's instance yet: hosts reach
/// the other instances through etcd) asks on its next packet: pinged
/// again once if needed, as is said.
fn all_pairs_reserved(c: &Cluster, alive: &[usize]) -> Listed {
    if let Some(l) = agreed_within(c, alive, Some(12), 3 * SECOND, false) {
        return l;
    }
    let (have, _) = agreed(c, alive, None);
    eprintln!(
        "({} reservations after the pings: pinging every pair again)",
        have.len()
    );
    c.lab.ping_all(2, 10 * SECOND).unwrap();
    agreed(c, alive, Some(12))
}

/// The shared ledger's counters as instance `i` reports them.
fn ledger(c: &Cluster, i: usize) -> Value {
    c.api(i, "/api/v1/cluster").unwrap()["ledger"].clone()
}

fn reserve(c: &Cluster, i: usize, src: usize, dst: usize, kbps: u64) -> (u16, Value) {
    let hosts = &c.topo.hosts;
    let body = json!({
        "src": hosts[src].mac.to_string(),
        "dst": hosts[dst].mac.to_string(),
        "kbps": kbps,
        "duration_secs": 600,
    });
    let t0 = Instant::now();
    let answer = c.post(i, "/api/v1/reservations", &body.to_string());
    eprintln!(
        "  through {}: {} -> {}, {kbps} kbit/s: {} in {:?}",
        node(i),
        hosts[src].name,
        hosts[dst].name,
        answer.0,
        t0.elapsed()
    );
    answer
}

/// The bridges whose flows carry reservation `id` (its cookie's low 48
/// bits), by name.
fn bridges_with(c: &Cluster, id: u64) -> Vec<String> {
    c.topo
        .switches
        .iter()
        .filter(|s| {
            let flows = c
                .lab
                .dump_flows(&s.name, OfVersion::V13)
                .unwrap_or_default();
            flows.iter().any(|f| {
                f.split(", ")
                    .find_map(|kv| kv.trim().strip_prefix("cookie=0x"))
                    .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                    .is_some_and(|cookie| cookie & ((1 << 48) - 1) == id)
            })
        })
        .map(|s| s.name.clone())
        .collect()
}

#[test]
fn two_instances_admit_against_one_shared_ledger_openflow13() {
    let c = Cluster::start(
        APPS,
        Topology::linear(4),
        OfVersion::V13,
        1,
        2,
        false,
        &[0, 1],
    );
    let first = c.wait_masters(0, &[0, 1], 30 * SECOND);
    let spread = count_by_master(&first.masters);
    eprintln!(
        "masters {:?} after {:?}: bridges per instance {spread:?}",
        first.masters, first.controllers
    );
    assert_eq!(spread.len(), 2, "both instances master a share: {spread:?}");
    wait_whole_network(&c, &[0, 1], false);

    // Every ordered pair of the four hosts pings: twelve flow requests,
    // each admitted by the master of its source's bridge.
    c.assert_all_pairs_ping();
    let (reservations, loads) = all_pairs_reserved(&c, &[0, 1]);
    let granted: Vec<u64> = (0..2)
        .map(|i| ledger(&c, i)["granted"].as_u64().unwrap())
        .collect();
    eprintln!("12 reservations listed alike by both; granted per instance {granted:?}");
    assert!(granted.iter().all(|&g| g > 0), "{granted:?}");
    assert!(granted.iter().sum::<u64>() >= 12, "{granted:?}");
    // Each is in place on every bridge of its path, whoever masters it.
    let (h1, h4) = (
        c.topo.hosts[0].mac.to_string(),
        c.topo.hosts[3].mac.to_string(),
    );
    let across = reservations
        .values()
        .find(|r| r["src"] == h1.as_str() && r["dst"] == h4.as_str())
        .unwrap();
    let id = across["id"].as_u64().unwrap();
    assert_eq!(bridges_with(&c, id), ["s1", "s2", "s3", "s4"], "{across}");
    let shown = c.show(1, "cluster");
    assert!(
        shown.contains("shared bandwidth ledger: 12 reservations"),
        "{shown}"
    );

    // The operator fills the middle link through the master of s1,
    // leaving 500 kbit/s.
    let middle = loads
        .keys()
        .find(|l| l.contains(":02/3") && l.contains(":03/2"))
        .unwrap_or_else(|| panic!("no s2-s3 link in {loads:?}"))
        .clone();
    let (capacity, reserved) = loads[&middle];
    let one = first.masters["s1"];
    let other = 1 - one;
    // h1 -> h4 holds 1000 kbit/s there already, which its new
    // reservation replaces.
    let fill = capacity - reserved + 1000 - 500;
    let (status, op) = reserve(&c, one, 0, 3, fill);
    assert_eq!(status, 201, "{op}\n{}", c.logs());
    let (_, loads) = agreed(&c, &[0, 1], Some(12));
    assert_eq!(loads[&middle], (capacity, capacity - 500));
    // Through the other instance, h2 -> h3 at 2000 kbit/s (1000 more than
    // its own) does not fit: refused, the link named.
    let (status, refused) = reserve(&c, other, 1, 2, 2000);
    assert_eq!(status, 409, "{refused}");
    let says = refused["error"].as_str().unwrap_or_default();
    assert!(says.contains("oversubscribed"), "{refused}");
    // Released through the other instance, it fits.
    let op_id = op["id"].as_u64().unwrap();
    let (status, gone) = c.call(
        other,
        "DELETE",
        &format!("/api/v1/reservations/{op_id}"),
        None,
    );
    assert!(status == 200 || status == 204, "{status} {gone}");
    let (status, fits) = reserve(&c, other, 1, 2, 2000);
    assert_eq!(status, 201, "{fits}");
    let (listed_now, _) = agreed(&c, &[0, 1], Some(11));
    assert!(!listed_now.contains_key(&op_id));
    let counters: Vec<Value> = (0..2).map(|i| ledger(&c, i)).collect();
    eprintln!("the shared ledger's counters per instance: {counters:?}");

    // kill -9 the master of s1: what it granted goes with its lease, the
    // survivor masters every bridge, and the pairs ask it again.
    c.batons[one].as_ref().unwrap().signal(9); // SIGKILL
    let settled = c.wait_masters(other, &[other], 20 * SECOND);
    let took = wait_whole_network(&c, &[other], false);
    let (left, _) = agreed(&c, &[other], None);
    eprintln!(
        "kill -9 {}: the survivor masters all after {:?}, knows the whole network {took:?} later; {} reservations left",
        node(one),
        settled.controllers,
        left.len()
    );
    assert!(left.len() < 11, "{:?}", left.keys());
    c.assert_all_pairs_ping();
    let (after, _) = all_pairs_reserved(&c, &[other]);
    eprintln!("every pair pings again: {} reservations", after.len());
}
