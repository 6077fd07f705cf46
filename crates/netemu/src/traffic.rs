//! The hosts and the pairs that talk: what each host sends when, what it
//! does with the frames that reach it, and what that measures.
//!
//! A pair (source, destination) starts with the source broadcasting an
//! ARP request for the destination's address; the destination, or the
//! controller by proxy, answers. Then the source sends its first data
//! packet; the time from there until a data packet of the pair arrives
//! is the pair's path setup. From then on the source sends a packet every
//! `send_interval` until traffic stops, or for `pair_lifetime` (churn):
//! then the pair ends, and a host whose pairs have all ended leaves the
//! network (it answers nothing from then on, the controller's probes
//! included, so the controller ages it out). An ARP request or first
//! packet without an answer is repeated every `retry`.
//!
//! Hosts consume every frame that reaches their port: they answer ARP
//! requests for their address, take ARP replies for pairs they start,
//! count the data packets meant for them, and count everything else
//! (floods, probes) as stray.
//!
//! Reroutes: when a pair's packet arrives after a gap (packets sent
//! between it and the last one that arrived are missing), and an event
//! was applied after that last packet was sent, the time from the
//! earliest such event to this arrival is a reroute time of that event.

use crate::frames::{self, Addresses, Received};
use crate::graph::{End, Graph, HostId, SwitchId};
use crate::queue::{Dest, LinkQueue};
use crate::report::{PairReport, histogram, record};
use hdrhistogram::Histogram;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;
use trace::{Hop, path_to};

mod trace;

/// Distinct paths kept per pair when tracing.
pub const MAX_PATHS: usize = 16;

/// Packets traced at once; beyond this (packets lost in flight leave
/// their traces behind) the traces in flight are dropped.
const MAX_IN_FLIGHT_TRACES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not started.
    Waiting,
    /// ARP request sent.
    Arping,
    /// First data packet sent, none arrived.
    Setup,
    /// Sending every interval.
    Flowing,
    /// Traffic is over.
    Stopped,
}

#[derive(Debug, Clone)]
struct Pair {
    src: HostId,
    dst: HostId,
    state: State,
    /// Bumped at every new timer, so older ones are ignored.
    timer: u32,
    dst_mac: [u8; 6],
    next_seq: u32,
    first_sent: Option<u64>,
    first_arrival: Option<u64>,
    received: u64,
    last_seq: Option<u32>,
    /// Sending time of the last packet that arrived.
    last_sent: u64,
    /// The last event a reroute was recorded for, plus one.
    rerouted: usize,
    paths: Vec<(Vec<SwitchId>, u64)>,
}

/// Counters of what hosts sent and got.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    /// Data packets sent.
    pub sent: u64,
    /// Distinct data packets received.
    pub received: u64,
    /// Data packets received twice or late.
    pub duplicates: u64,
    /// ARP requests sent.
    pub arp_requests: u64,
    /// Frames not meant for the host they reached.
    pub stray: u64,
    /// Pairs that ended (`pair_lifetime`).
    pub pairs_ended: u64,
    /// Hosts that left once their pairs ended.
    pub hosts_left: u64,
    /// Frames that reached a host that had left.
    pub to_departed: u64,
}

/// Timing of the traffic, in nanoseconds of the network's clock.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Between pair starts.
    pub start_interval: u64,
    /// Between packets of a set-up pair.
    pub send_interval: u64,
    /// Before an unanswered ARP request or first packet is repeated.
    pub retry: u64,
    /// How long a pair sends once set up (`None`: until traffic stops).
    pub pair_lifetime: Option<u64>,
}

/// The hosts and pairs.
#[derive(Debug)]
pub struct Hosts {
    hosts: Vec<End>,
    pairs: Vec<Pair>,
    /// Pairs by source host: `by_src[src_start[h]..src_start[h + 1]]`.
    src_start: Vec<u32>,
    by_src: Vec<u32>,
    /// Per host: its pairs that have not ended; a host at 0 whose pairs
    /// ended has left ([`Hosts::gone`]).
    uses: Vec<u32>,
    /// Per host: whether it has left.
    gone: Vec<bool>,
    timers: BinaryHeap<Reverse<(u64, u32, u32)>>,
    timing: Timing,
    stop: u64,
    scratch: Vec<u8>,
    counts: Counts,
    setup_us: Histogram<u64>,
    latency_us: Histogram<u64>,
    /// Per event: reroute times, microseconds.
    reroute_us: Vec<Histogram<u64>>,
    /// Per data packet in flight: each switch that received it, and the
    /// switch it came from (`None`: from a host).
    trace: Option<HashMap<(u32, u32), Vec<Hop>>>,
    /// The most a host's send was late, nanoseconds.
    max_late: u64,
}

fn ns(d: u64) -> Duration {
    Duration::from_nanos(d)
}

impl Hosts {
    /// The hosts of `g` and `pairs` between them (checked by the caller),
    /// for `events` scheduled events.
    pub fn new(
        g: &Graph,
        pairs: &[(HostId, HostId)],
        timing: Timing,
        events: usize,
        trace: bool,
    ) -> Hosts {
        let n = g.hosts().len();
        let mut src_start = vec![0u32; n + 1];
        for &(s, _) in pairs {
            src_start[s.0 as usize + 1] += 1;
        }
        let mut sum = 0;
        for c in src_start.iter_mut() {
            sum += *c;
            *c = sum;
        }
        let mut uses = vec![0u32; n];
        for &(s, d) in pairs {
            uses[s.0 as usize] += 1;
            uses[d.0 as usize] += 1;
        }
        let mut fill = src_start.clone();
        let mut by_src = vec![0u32; pairs.len()];
        for (i, &(s, _)) in pairs.iter().enumerate() {
            let at = &mut fill[s.0 as usize];
            by_src[*at as usize] = i as u32;
            *at += 1;
        }
        Hosts {
            hosts: g.hosts().to_vec(),
            pairs: pairs
                .iter()
                .map(|&(src, dst)| Pair {
                    src,
                    dst,
                    state: State::Waiting,
                    timer: 0,
                    dst_mac: [0; 6],
                    next_seq: 0,
                    first_sent: None,
                    first_arrival: None,
                    received: 0,
                    last_seq: None,
                    last_sent: 0,
                    rerouted: 0,
                    paths: Vec::new(),
                })
                .collect(),
            src_start,
            by_src,
            uses,
            gone: vec![false; n],
            timers: BinaryHeap::new(),
            timing,
            stop: u64::MAX,
            scratch: Vec::with_capacity(frames::DATA_LEN),
            counts: Counts::default(),
            setup_us: histogram(),
            latency_us: histogram(),
            reroute_us: (0..events).map(|_| histogram()).collect(),
            trace: trace.then(HashMap::new),
            max_late: 0,
        }
    }

    /// Starts the pairs at `start` (one every `start_interval`); nothing
    /// is sent from `stop` on.
    pub fn start(&mut self, start: u64, stop: u64) {
        self.stop = stop;
        for i in 0..self.pairs.len() {
            let at = start.saturating_add(self.timing.start_interval.saturating_mul(i as u64));
            self.arm(i as u32, at);
        }
    }

    fn arm(&mut self, pair: u32, at: u64) {
        let p = &mut self.pairs[pair as usize];
        p.timer = p.timer.wrapping_add(1);
        self.timers.push(Reverse((at, pair, p.timer)));
    }

    /// When a host next sends.
    pub fn next_due(&self) -> Option<u64> {
        self.timers.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The most a host sent after its time, nanoseconds.
    pub fn max_lateness(&self) -> u64 {
        self.max_late
    }

    /// What hosts sent and got.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Sends what is due at `now`.
    pub fn on_timers(&mut self, now: u64, q: &mut LinkQueue) {
        while let Some(&Reverse((at, pair, timer))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            self.max_late = self.max_late.max(now - at);
            let (state, current) = {
                let p = &self.pairs[pair as usize];
                (p.state, p.timer)
            };
            if current != timer {
                continue;
            }
            if now >= self.stop {
                self.pairs[pair as usize].state = State::Stopped;
                continue;
            }
            match state {
                State::Waiting | State::Arping => {
                    self.pairs[pair as usize].state = State::Arping;
                    self.send_arp(pair, now, q);
                    self.arm(pair, now + self.timing.retry);
                }
                State::Setup => {
                    self.send_data(pair, now, q);
                    self.arm(pair, now + self.timing.retry);
                }
                State::Flowing => {
                    let p = &self.pairs[pair as usize];
                    let over = self
                        .timing
                        .pair_lifetime
                        .zip(p.first_arrival)
                        .is_some_and(|(life, at)| now >= at.saturating_add(life));
                    if over {
                        self.end(pair);
                        continue;
                    }
                    self.send_data(pair, now, q);
                    self.arm(pair, now + self.timing.send_interval);
                }
                State::Stopped => {}
            }
        }
    }

    /// Pair `pair` has sent for its lifetime: it ends, and each of its
    /// hosts with no other pair left leaves.
    fn end(&mut self, pair: u32) {
        let p = &mut self.pairs[pair as usize];
        p.state = State::Stopped;
        self.counts.pairs_ended += 1;
        for h in [p.src, p.dst] {
            let uses = &mut self.uses[h.0 as usize];
            *uses = uses.saturating_sub(1);
            if *uses == 0 {
                self.gone[h.0 as usize] = true;
                self.counts.hosts_left += 1;
            }
        }
    }

    fn send_from(&mut self, h: HostId, now: u64, q: &mut LinkQueue) {
        let end = self.hosts[h.0 as usize];
        q.push(now, Dest::Switch { end, link: None }, &self.scratch);
    }

    fn send_arp(&mut self, pair: u32, now: u64, q: &mut LinkQueue) {
        let p = &self.pairs[pair as usize];
        let src = p.src;
        frames::arp_request(
            &mut self.scratch,
            Graph::host_mac(src),
            Graph::host_ip(src),
            Graph::host_ip(p.dst),
        );
        self.counts.arp_requests += 1;
        self.send_from(src, now, q);
    }

    fn send_data(&mut self, pair: u32, now: u64, q: &mut LinkQueue) {
        let p = &mut self.pairs[pair as usize];
        let a = Addresses {
            src_mac: Graph::host_mac(p.src),
            dst_mac: p.dst_mac,
            src_ip: Graph::host_ip(p.src),
            dst_ip: Graph::host_ip(p.dst),
        };
        frames::data(&mut self.scratch, &a, pair, p.next_seq, now);
        p.next_seq = p.next_seq.wrapping_add(1);
        p.first_sent.get_or_insert(now);
        let src = p.src;
        self.counts.sent += 1;
        self.send_from(src, now, q);
    }

    /// With tracing on: data packet `frame` reached switch `s` from switch
    /// `from` (`None`: from a host).
    pub fn trace_hop(&mut self, frame: &[u8], s: SwitchId, from: Option<SwitchId>) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        if let Some(key) = frames::data_fields(frame) {
            if trace.len() >= MAX_IN_FLIGHT_TRACES {
                trace.clear();
            }
            trace.entry(key).or_default().push((s, from));
        }
    }

    /// Host `h` receives `frame` at `now`; `events` are the times the
    /// scheduled events were applied so far, in order.
    pub fn receive(
        &mut self,
        h: HostId,
        frame: &[u8],
        now: u64,
        events: &[u64],
        q: &mut LinkQueue,
    ) {
        if self.gone[h.0 as usize] {
            self.counts.to_departed += 1;
            return;
        }
        let (mac, ip) = (Graph::host_mac(h), Graph::host_ip(h));
        match frames::classify(frame) {
            Received::ArpRequest {
                sender_mac,
                sender_ip,
                target_ip,
            } if target_ip == ip => {
                frames::arp_reply(&mut self.scratch, mac, ip, sender_mac, sender_ip);
                self.send_from(h, now, q);
            }
            Received::ArpReply {
                sender_mac,
                sender_ip,
                target_ip,
            } if target_ip == ip => {
                let range = self.src_start[h.0 as usize]..self.src_start[h.0 as usize + 1];
                for k in range {
                    let pair = self.by_src[k as usize];
                    let p = &mut self.pairs[pair as usize];
                    if p.state == State::Arping && Graph::host_ip(p.dst) == sender_ip {
                        p.state = State::Setup;
                        p.dst_mac = sender_mac;
                        self.send_data(pair, now, q);
                        self.arm(pair, now + self.timing.retry);
                    }
                }
            }
            Received::Data {
                dst_mac,
                pair,
                seq,
                sent_ns,
            } => {
                let ours = self
                    .pairs
                    .get(pair as usize)
                    .is_some_and(|p| p.dst == h && dst_mac == mac);
                if ours {
                    self.arrive(pair, seq, sent_ns, now, events);
                } else {
                    self.counts.stray += 1;
                }
            }
            _ => self.counts.stray += 1,
        }
    }

    fn arrive(&mut self, pair: u32, seq: u32, sent: u64, now: u64, events: &[u64]) {
        let hops = self.trace.as_mut().and_then(|t| t.remove(&(pair, seq)));
        let p = &mut self.pairs[pair as usize];
        let last = self.hosts[p.dst.0 as usize].switch;
        let path = hops.map(|h| path_to(&h, last));
        if p.last_seq.is_some_and(|l| seq <= l) {
            self.counts.duplicates += 1;
            return;
        }
        if let Some(path) = path {
            match p.paths.iter().position(|(q, _)| *q == path) {
                Some(i) => p.paths[i].1 += 1,
                None if p.paths.len() < MAX_PATHS => p.paths.push((path, 1)),
                None => {}
            }
        }
        if p.first_arrival.is_none() {
            p.first_arrival = Some(now);
            let first = p.first_sent.unwrap_or(sent);
            record(&mut self.setup_us, ns(now.saturating_sub(first)));
            if p.state == State::Setup {
                p.state = State::Flowing;
                self.arm(pair, now + self.timing.send_interval);
            }
        } else {
            record(&mut self.latency_us, ns(now.saturating_sub(sent)));
        }
        let p = &mut self.pairs[pair as usize];
        let gap = p.last_seq.is_some_and(|l| seq > l + 1);
        if gap {
            // The earliest event after the last packet that arrived.
            let k = events.partition_point(|&t| t <= p.last_sent);
            if k < events.len() && k + 1 > p.rerouted {
                p.rerouted = k + 1;
                record(&mut self.reroute_us[k], ns(now.saturating_sub(events[k])));
            }
        }
        p.last_seq = Some(seq);
        p.last_sent = sent;
        p.received += 1;
        self.counts.received += 1;
    }

    /// Reroute times per event.
    pub fn reroutes(&self) -> &[Histogram<u64>] {
        &self.reroute_us
    }

    /// For each pair whose last packets never arrived: the earliest event
    /// after its last arrival (if any), and the pair's hosts.
    pub fn open_gaps<'a>(
        &'a self,
        events: &'a [u64],
    ) -> impl Iterator<Item = (usize, HostId, HostId)> + 'a {
        self.pairs.iter().filter_map(move |p| {
            let last = p.last_seq?;
            if last.wrapping_add(1) >= p.next_seq {
                return None;
            }
            let k = events.partition_point(|&t| t <= p.last_sent);
            (k < events.len() && k + 1 > p.rerouted).then_some((k, p.src, p.dst))
        })
    }

    /// Path setup times, microseconds.
    pub fn setup_us(&self) -> &Histogram<u64> {
        &self.setup_us
    }

    /// Packet latencies, microseconds.
    pub fn latency_us(&self) -> &Histogram<u64> {
        &self.latency_us
    }

    /// Set-up pairs per second over the setup window.
    pub fn setups_per_second(&self) -> Option<f64> {
        let first = self.pairs.iter().filter_map(|p| p.first_sent).min()?;
        let last = self.pairs.iter().filter_map(|p| p.first_arrival).max()?;
        let done = self
            .pairs
            .iter()
            .filter(|p| p.first_arrival.is_some())
            .count();
        let secs = ns(last.saturating_sub(first)).as_secs_f64();
        (secs > 0.0).then(|| done as f64 / secs)
    }

    /// Each pair's outcome, its start timed from `traffic_start`.
    pub fn pair_reports(&self, traffic_start: u64) -> Vec<PairReport> {
        self.pairs
            .iter()
            .map(|p| PairReport {
                src: p.src,
                dst: p.dst,
                started: p.first_sent.map(|t| ns(t.saturating_sub(traffic_start))),
                sent: u64::from(p.next_seq),
                received: p.received,
                setup: p
                    .first_arrival
                    .zip(p.first_sent)
                    .map(|(a, s)| ns(a.saturating_sub(s))),
                paths: p.paths.clone(),
            })
            .collect()
    }

    /// The number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when no pair talks.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The switch host `h` is on.
    pub fn host_switch(&self, h: HostId) -> SwitchId {
        self.hosts[h.0 as usize].switch
    }
}
