//! Building the network: the flat port table, the link states, and one
//! `baton_switch::Switch` per switch with the topology's port numbers.

use super::{LinkState, Network, Node, Peer, nanos};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::graph::{End, HostId, LinkId, SwitchId};
use crate::queue::LinkQueue;
use crate::traffic::{Hosts, Timing};
use baton_openflow::Version;
use baton_openflow::types::PortNo;
use baton_switch::port::PortSpec;
use baton_switch::switch::{Config as SwitchConfig, Switch};
use std::collections::VecDeque;
use std::time::Instant;

impl Network {
    /// The network `cfg` describes (its controller address and connect
    /// plan are the driver's business), its clock starting at `now`.
    /// Checks the schedule and the pairs against the topology.
    pub fn new(cfg: &Config, now: Instant) -> Result<Network> {
        let g = &cfg.topology;
        let plan = cfg.events.resolve(g)?;
        let pairs = cfg.traffic.pairs.resolve(g)?;
        for (what, d) in [
            ("send interval", cfg.traffic.send_interval),
            ("retry", cfg.traffic.retry),
        ] {
            if d.is_zero() {
                return Err(Error::Config(format!("the {what} must not be zero")));
            }
        }
        let n = g.switches().len();
        let mut base = Vec::with_capacity(n + 1);
        let mut total = 0u32;
        for s in 0..n {
            base.push(total);
            total += u32::from(g.max_port(SwitchId(s as u32)));
        }
        base.push(total);
        let mut peers = vec![Peer::Unused; total as usize];
        let slot = |e: End| base[e.switch.0 as usize] as usize + usize::from(e.port) - 1;
        let mut links = Vec::with_capacity(g.links().len());
        for (i, l) in g.links().iter().enumerate() {
            let id = LinkId(i as u32);
            peers[slot(l.a)] = Peer::Link(id, l.b);
            peers[slot(l.b)] = Peer::Link(id, l.a);
            links.push(LinkState {
                a: l.a,
                b: l.b,
                delay: nanos(l.delay.unwrap_or(cfg.link_delay)),
                up: true,
                generation: 0,
            });
        }
        for (h, &e) in g.hosts().iter().enumerate() {
            peers[slot(e)] = Peer::Host(HostId(h as u32));
        }
        let nodes = g
            .switches()
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let ports = &peers[base[i] as usize..base[i + 1] as usize];
                Node {
                    sw: build_switch(cfg, &s.name, s.dpid, ports, base[i], now),
                    conn: None,
                    alive: true,
                    ready: false,
                    dirty: false,
                }
            })
            .collect();
        let timing = Timing {
            start_interval: nanos(cfg.traffic.start_interval),
            send_interval: nanos(cfg.traffic.send_interval),
            retry: nanos(cfg.traffic.retry),
            pair_lifetime: cfg.traffic.pair_lifetime.map(nanos),
        };
        let traffic = Hosts::new(g, &pairs, timing, plan.len(), cfg.trace_paths);
        Ok(Network {
            epoch: now,
            nodes,
            base,
            peers,
            links,
            queue: LinkQueue::new(),
            traffic,
            plan,
            applied: Vec::new(),
            outputs: VecDeque::new(),
            dirty: Vec::new(),
            ready: 0,
            all_ready: None,
            traffic_start: None,
            end: None,
            warmup: nanos(cfg.warmup),
            duration: nanos(cfg.duration),
            drain: nanos(cfg.drain),
            next_tick: 0,
            trace: cfg.trace_paths,
            delivered: 0,
            dropped: 0,
            max_late: 0,
            lost_connections: 0,
        })
    }
}

/// A switch with a port for every number up to its highest, the unused
/// ones removed again (so port numbers are the topology's), its tables
/// as `cfg.switch` says.
fn build_switch(
    cfg: &Config,
    name: &str,
    dpid: u64,
    ports: &[Peer],
    base: u32,
    now: Instant,
) -> Switch {
    let mut c = SwitchConfig::new(dpid, cfg.version);
    c.n_tables = match cfg.version {
        Version::V10 => 1,
        Version::V13 => cfg.switch.tables_13.max(1),
    };
    c.n_buffers = cfg.switch.buffers;
    c.description = "baton netemu".into();
    let mut sw = Switch::new(c, now);
    for k in 0..ports.len() {
        // The port's address comes from its index in the whole network,
        // so no two ports share one.
        let spec = PortSpec::named(format!("{name}-eth{}", k + 1), base + k as u32 + 1);
        sw.add_port(spec, now);
    }
    for (k, p) in ports.iter().enumerate() {
        if matches!(p, Peer::Unused) {
            sw.remove_port(PortNo(k as u32 + 1));
        }
    }
    if !cfg.switch.flow_cache {
        for t in 0..sw.n_tables() {
            if let Some(table) = sw.table_mut(t) {
                table.set_cache(false);
            }
        }
    }
    // Port announcements before any controller concern nobody.
    while sw.poll_event().is_some() {}
    sw
}
