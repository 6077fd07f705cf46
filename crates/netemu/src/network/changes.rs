//! What changes the network while it runs: scheduled events (cuts,
//! restores, kills), switch timers; and the report of what it measured.

use super::{Network, Output, Peer, flush};
use crate::graph::{End, HostId, LinkId, SwitchId};
use crate::report::{EventReport, Report, resident_bytes};
use crate::schedule::Change;
use baton_openflow::types::PortNo;
use baton_switch::proto::ConnEvent;
use std::time::{Duration, Instant};

impl Network {
    /// Applies scheduled event `k` at `t`.
    pub(super) fn apply(&mut self, k: usize, t: u64) {
        self.applied.push(t);
        match self.plan[k].change.clone() {
            Change::Cut(ids) => ids.into_iter().for_each(|id| self.set_link(id, false)),
            Change::Restore(ids) => ids.into_iter().for_each(|id| self.set_link(id, true)),
            Change::Kill(s) => self.kill(s),
        }
    }

    /// Takes link `id` down or up; both ports tell their controllers. A
    /// link of a killed switch stays down.
    fn set_link(&mut self, id: LinkId, up: bool) {
        let l = self.links[id.0 as usize];
        if l.up == up {
            return;
        }
        let alive = |e: End| self.nodes[e.switch.0 as usize].alive;
        if up && !(alive(l.a) && alive(l.b)) {
            return;
        }
        let l = &mut self.links[id.0 as usize];
        l.up = up;
        l.generation = l.generation.wrapping_add(1);
        let (a, b) = (l.a, l.b);
        for e in [a, b] {
            let i = e.switch.0 as usize;
            let node = &mut self.nodes[i];
            if node.alive {
                node.sw.set_link(PortNo(u32::from(e.port)), up);
                flush(node, i, &mut self.dirty);
            }
        }
    }

    /// Kills switch `s`: its connection closes, and its links go down.
    fn kill(&mut self, s: SwitchId) {
        let i = s.0 as usize;
        let node = &mut self.nodes[i];
        if !node.alive {
            return;
        }
        node.alive = false;
        if let Some(mut c) = node.conn.take() {
            c.close(&mut node.sw);
        }
        self.outputs.push_back(Output::Close(s));
        let ports = &self.peers[self.base[i] as usize..self.base[i + 1] as usize];
        let links: Vec<LinkId> = ports
            .iter()
            .filter_map(|p| match p {
                Peer::Link(id, _) => Some(*id),
                _ => None,
            })
            .collect();
        for id in links {
            self.set_link(id, false);
        }
    }

    /// Runs switch timers: flow expiry and keepalives.
    pub(super) fn tick(&mut self, now: Instant) {
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if !node.alive {
                continue;
            }
            if node.sw.poll_timeout().is_some_and(|d| d <= now) {
                node.sw.handle_timeout(now);
            }
            let mut closed = false;
            if let Some(c) = node.conn.as_mut() {
                if c.poll_timeout().is_some_and(|d| d <= now) {
                    c.handle_timeout(now);
                    while let Some(e) = c.poll_event() {
                        closed |= matches!(e, ConnEvent::Closed(_));
                    }
                }
            }
            flush(node, i, &mut self.dirty);
            if closed {
                self.outputs.push_back(Output::Close(SwitchId(i as u32)));
            }
        }
    }

    /// What the run measured so far.
    pub fn report(&self) -> Report {
        let since = |t: u64| Duration::from_nanos(t);
        let start = self.traffic_start.unwrap_or(0);
        let mut events: Vec<EventReport> = self
            .plan
            .iter()
            .enumerate()
            .map(|(k, p)| EventReport {
                text: p.text.clone(),
                applied: self.applied.get(k).map(|&t| since(t.saturating_sub(start))),
                reroute_us: self.traffic.reroutes()[k].clone(),
                unrecovered: 0,
                unreachable: 0,
            })
            .collect();
        let alive = |h: HostId| self.nodes[self.traffic.host_switch(h).0 as usize].alive;
        for (k, src, dst) in self.traffic.open_gaps(&self.applied) {
            if alive(src) && alive(dst) {
                events[k].unrecovered += 1;
            } else {
                events[k].unreachable += 1;
            }
        }
        let counts = self.traffic.counts();
        let pair_reports = self.traffic.pair_reports(start);
        Report {
            switches: self.nodes.len(),
            switches_ready: self.ready,
            all_ready: self.all_ready.map(since),
            traffic_started: self.traffic_start.map(since),
            pairs: self.traffic.len(),
            pairs_set_up: pair_reports.iter().filter(|p| p.setup.is_some()).count(),
            setup_us: self.traffic.setup_us().clone(),
            setups_per_second: self.traffic.setups_per_second(),
            latency_us: self.traffic.latency_us().clone(),
            packets_sent: counts.sent,
            packets_received: counts.received,
            packets_lost: counts.sent.saturating_sub(counts.received),
            duplicates: counts.duplicates,
            arp_requests: counts.arp_requests,
            stray_frames: counts.stray,
            pairs_ended: counts.pairs_ended,
            hosts_left: counts.hosts_left,
            to_departed: counts.to_departed,
            frames_delivered: self.delivered,
            frames_dropped: self.dropped + self.dropped_by_switches(),
            max_lateness: since(self.max_late.max(self.traffic.max_lateness())),
            connections_lost: self.lost_connections,
            events,
            pair_reports,
            resident_bytes: resident_bytes(),
        }
    }

    /// Frames the switches dropped themselves: sent out of a port whose
    /// link is down.
    fn dropped_by_switches(&self) -> u64 {
        self.nodes
            .iter()
            .flat_map(|n| n.sw.dp.ports.iter())
            .map(|p| p.counters.tx_dropped)
            .sum()
    }
}
