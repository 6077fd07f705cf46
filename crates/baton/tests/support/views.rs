//! What the instances of a cluster say of the network through their
//! APIs, against what the laboratory built (`cluster_views_on_ovs`,
//! `cluster_bandwidth_on_ovs`).

use super::cluster::{Cluster, node};
use super::{PortAt, SECOND, port_at};
use baton_netlab::Topology;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The cables instance `i` knows: each link seen in both directions, as
/// (lower end, higher end).
pub fn discovered(c: &Cluster, i: usize) -> Option<BTreeSet<(PortAt, PortAt)>> {
    let topo = c.api(i, "/api/v1/topology").ok()?;
    let directed: BTreeSet<(PortAt, PortAt)> = topo["links"]
        .as_array()?
        .iter()
        .map(|l| (port_at(&l["src"]), port_at(&l["dst"])))
        .collect();
    Some(
        directed
            .iter()
            .filter(|(a, b)| directed.contains(&(*b, *a)))
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect(),
    )
}

/// Where instance `i` says each host is.
pub fn hosts(c: &Cluster, i: usize) -> Option<BTreeMap<String, PortAt>> {
    let hosts = c.api(i, "/api/v1/hosts").ok()?;
    Some(
        hosts["hosts"]
            .as_array()?
            .iter()
            .map(|h| {
                (
                    h["mac"].as_str().unwrap().to_string(),
                    port_at(&h["attachment"]),
                )
            })
            .collect(),
    )
}

pub fn built(topo: &Topology) -> BTreeSet<(PortAt, PortAt)> {
    topo.switch_links()
        .iter()
        .map(|l| ((l.a.0.0, l.a.1), (l.b.0.0, l.b.1)))
        .collect()
}

pub fn attachments(topo: &Topology) -> BTreeMap<String, PortAt> {
    topo.host_attachments()
        .iter()
        .map(|a| (a.mac.to_string(), (a.dpid.0, a.port)))
        .collect()
}

/// What instance `i`'s discovery counted (why probes were dropped).
pub fn topology_counters(c: &Cluster, i: usize) -> String {
    c.api(i, "/api/v1/apps")
        .ok()
        .and_then(|apps| {
            apps.as_array()?
                .iter()
                .find(|a| a["name"] == "topology")
                .map(|a| a["counters"].to_string())
        })
        .unwrap_or_default()
}

/// Waits until every instance in `alive` knows the whole network: the
/// links the lab built and, with `hosts`, every host where it is.
pub fn wait_whole_network(c: &Cluster, alive: &[usize], with_hosts: bool) -> Duration {
    let t0 = Instant::now();
    let (want_links, want_hosts) = (built(&c.topo), attachments(&c.topo));
    loop {
        let lagging: Vec<String> = alive
            .iter()
            .filter_map(|&i| {
                let links = discovered(c, i).unwrap_or_default();
                let found = hosts(c, i).unwrap_or_default();
                let links_ok = links == want_links;
                let hosts_ok = !with_hosts || found == want_hosts;
                (!(links_ok && hosts_ok)).then(|| {
                    format!(
                        "{}: {}/{} links, {}/{} hosts",
                        node(i),
                        links.intersection(&want_links).count(),
                        want_links.len(),
                        found
                            .iter()
                            .filter(|(m, at)| want_hosts.get(*m) == Some(at))
                            .count(),
                        want_hosts.len()
                    )
                })
            })
            .collect();
        if lagging.is_empty() {
            return t0.elapsed();
        }
        assert!(
            t0.elapsed() < 40 * SECOND,
            "not every instance knows the whole network: {lagging:?}\n{}\ndiscovery's counters: {}",
            c.logs(),
            alive
                .iter()
                .map(|&i| format!("{}: {}", node(i), topology_counters(c, i)))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
