//! The emulated network without I/O: bytes and time in, bytes and events
//! out, the shape of `baton_switch::inproc` (and quinn-proto's), so a
//! test drives it deterministically on a clock of its own and the shell
//! ([`crate::driver`]) drives it on the real one with sockets.
//!
//! Every switch is a real `baton_switch::Switch` (flow tables with exact
//! and wildcard matches, priorities, idle and hard timeouts,
//! FLOW_REMOVED) with one controller [`Connection`]. A frame a switch
//! sends out of a linked port goes into the [`LinkQueue`] and reaches the
//! peer port after the link's delay; out of a host port it reaches the
//! host ([`crate::traffic`]) at once; out of an unused port or onto a
//! down link it is lost. Ports are found by indexing one flat array
//! (a switch's ports are a slice of it), so forwarding costs no look-up
//! by name or map.
//!
//! The driver's loop: [`Network::connect`] when a switch's socket
//! connects, [`Network::handle_input`] with what it read,
//! [`Network::take_dirty`] and [`Network::output`] /
//! [`Network::consume_output`] for what to write,
//! [`Network::poll_output`] for switches that became ready or must be
//! disconnected, [`Network::poll`] at [`Network::next_deadline`], until
//! [`Network::finished`]; then [`Network::report`].

mod build;
mod changes;

use crate::graph::{End, HostId, LinkId, SwitchId};
use crate::queue::{Dest, Frame, LinkQueue};
use crate::schedule::Planned;
use crate::traffic::Hosts;
use baton_openflow::types::PortNo;
use baton_switch::datapath::Transmit;
use baton_switch::proto::{ConnEvent, Connection};
use baton_switch::switch::Switch;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How often switch timers (flow expiry, keepalive) are looked at. Flow
/// timeouts are whole seconds and keepalives 5 s, so 50 ms late is
/// nothing, and a scan of 10,000 switches every 50 ms is well under 1%
/// of a core.
pub const TICK: Duration = Duration::from_millis(50);

/// Frame deliveries per [`Network::poll`] before it returns to let the
/// driver do I/O: a flood storm (a learning switch on a loop) must not
/// starve the controller connections.
pub const BUDGET: usize = 65_536;

/// What the driver must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The switch finished its handshake.
    Ready(SwitchId),
    /// Close the switch's socket (it was killed, or its connection
    /// closed), then call [`Network::disconnected`].
    Close(SwitchId),
}

/// What is behind a switch port.
#[derive(Debug, Clone, Copy)]
enum Peer {
    Unused,
    Link(LinkId, End),
    Host(HostId),
}

#[derive(Debug, Clone, Copy)]
struct LinkState {
    a: End,
    b: End,
    delay: u64,
    up: bool,
    /// Bumped at every change, so frames sent before it are lost.
    generation: u32,
}

#[derive(Debug)]
struct Node {
    sw: Switch,
    conn: Option<Connection>,
    alive: bool,
    ready: bool,
    dirty: bool,
}

/// Hands the switch's queued events to its connection; marks the switch
/// for writing when the connection has output.
fn flush(node: &mut Node, i: usize, dirty: &mut Vec<u32>) {
    while let Some(ev) = node.sw.poll_event() {
        if let Some(c) = node.conn.as_mut() {
            c.deliver(&node.sw, &ev);
        }
    }
    let has_output = node.conn.as_ref().is_some_and(|c| !c.output().is_empty());
    if has_output && !node.dirty {
        node.dirty = true;
        dirty.push(i as u32);
    }
}

/// Where a switch's frames go: its slice of the port table.
struct Tx<'a> {
    now: u64,
    ports: &'a [Peer],
    links: &'a [LinkState],
    queue: &'a mut LinkQueue,
    dropped: &'a mut u64,
}

impl Transmit for Tx<'_> {
    fn transmit(&mut self, port: PortNo, frame: &[u8]) {
        let peer = (port.0 as usize)
            .checked_sub(1)
            .and_then(|i| self.ports.get(i))
            .copied()
            .unwrap_or(Peer::Unused);
        match peer {
            Peer::Link(id, end) => {
                let l = &self.links[id.0 as usize];
                if l.up {
                    let link = Some((id, l.generation));
                    self.queue
                        .push(self.now + l.delay, Dest::Switch { end, link }, frame);
                } else {
                    *self.dropped += 1;
                }
            }
            Peer::Host(h) => self.queue.push(self.now, Dest::Host(h), frame),
            Peer::Unused => *self.dropped += 1,
        }
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX / 4)) as u64
}

/// The emulated network.
#[derive(Debug)]
pub struct Network {
    epoch: Instant,
    nodes: Vec<Node>,
    /// Switch `i`'s ports are `peers[base[i]..base[i + 1]]`, port 1 first.
    base: Vec<u32>,
    peers: Vec<Peer>,
    links: Vec<LinkState>,
    queue: LinkQueue,
    traffic: Hosts,
    plan: Vec<Planned>,
    /// When each applied event was applied (a prefix of `plan`).
    applied: Vec<u64>,
    outputs: VecDeque<Output>,
    dirty: Vec<u32>,
    ready: usize,
    all_ready: Option<u64>,
    traffic_start: Option<u64>,
    end: Option<u64>,
    warmup: u64,
    duration: u64,
    drain: u64,
    next_tick: u64,
    trace: bool,
    delivered: u64,
    dropped: u64,
    max_late: u64,
    lost_connections: usize,
}

impl Network {
    fn ns(&self, t: Instant) -> u64 {
        nanos(t.saturating_duration_since(self.epoch))
    }

    fn instant(&self, ns: u64) -> Instant {
        self.epoch + Duration::from_nanos(ns)
    }

    /// Switches in the network.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when there is no switch (never: a graph has one).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Switch `s` (for its tables and ports).
    ///
    /// # Panics
    /// If `s` is not a switch of the network.
    pub fn switch(&self, s: SwitchId) -> &Switch {
        &self.nodes[s.0 as usize].sw
    }

    /// Whether switch `s` finished its handshake.
    pub fn is_ready(&self, s: SwitchId) -> bool {
        self.nodes.get(s.0 as usize).is_some_and(|n| n.ready)
    }

    /// Switches whose handshake finished.
    pub fn ready_count(&self) -> usize {
        self.ready
    }

    /// When traffic starts (set once every switch is ready).
    pub fn traffic_start(&self) -> Option<Instant> {
        self.traffic_start.map(|t| self.instant(t))
    }

    /// Switch `s`'s socket connected: its connection starts (the HELLO is
    /// waiting in [`Network::output`]). Ignored for a killed switch or
    /// one already connected.
    pub fn connect(&mut self, s: SwitchId, now: Instant) {
        let i = s.0 as usize;
        let Some(node) = self.nodes.get_mut(i) else {
            return;
        };
        if !node.alive || node.conn.is_some() {
            return;
        }
        node.conn = Some(Connection::new(&mut node.sw, now));
        flush(node, i, &mut self.dirty);
    }

    /// Bytes the controller sent switch `s`.
    pub fn handle_input(&mut self, s: SwitchId, now: Instant, bytes: &[u8]) {
        let i = s.0 as usize;
        if i >= self.nodes.len() {
            return;
        }
        let t = self.ns(now);
        let ports = &self.peers[self.base[i] as usize..self.base[i + 1] as usize];
        let node = &mut self.nodes[i];
        let Some(conn) = node.conn.as_mut() else {
            return;
        };
        let mut tx = Tx {
            now: t,
            ports,
            links: &self.links,
            queue: &mut self.queue,
            dropped: &mut self.dropped,
        };
        conn.handle_input(&mut node.sw, now, bytes, &mut tx);
        self.after_connection(i, t);
    }

    /// Handles what switch `i`'s connection reported.
    fn after_connection(&mut self, i: usize, t: u64) {
        let node = &mut self.nodes[i];
        let (mut connected, mut closed) = (false, false);
        if let Some(c) = node.conn.as_mut() {
            while let Some(e) = c.poll_event() {
                match e {
                    ConnEvent::Connected(_) => connected = true,
                    ConnEvent::Closed(_) => closed = true,
                }
            }
        }
        flush(node, i, &mut self.dirty);
        let s = SwitchId(i as u32);
        if connected && !node.ready {
            node.ready = true;
            self.ready += 1;
            self.outputs.push_back(Output::Ready(s));
            if self.ready == self.nodes.len() {
                self.all_switches_ready(t);
            }
        }
        if closed {
            self.outputs.push_back(Output::Close(s));
        }
    }

    fn all_switches_ready(&mut self, t: u64) {
        self.all_ready = Some(t);
        let start = t + self.warmup;
        let end = start + self.duration;
        self.traffic_start = Some(start);
        self.end = Some(end);
        self.traffic.start(start, end);
    }

    /// Switch `s`'s socket is gone (the controller closed it, or the
    /// driver did after [`Output::Close`]).
    pub fn disconnected(&mut self, s: SwitchId) {
        let Some(node) = self.nodes.get_mut(s.0 as usize) else {
            return;
        };
        if let Some(mut c) = node.conn.take() {
            c.close(&mut node.sw);
            self.lost_connections += 1;
        }
    }

    /// What switch `s` has to write to its socket.
    pub fn output(&self, s: SwitchId) -> &[u8] {
        match self.nodes.get(s.0 as usize).and_then(|n| n.conn.as_ref()) {
            Some(c) => c.output(),
            None => &[],
        }
    }

    /// The first `n` bytes of [`Network::output`] were written.
    pub fn consume_output(&mut self, s: SwitchId, n: usize) {
        if let Some(c) = self
            .nodes
            .get_mut(s.0 as usize)
            .and_then(|n| n.conn.as_mut())
        {
            c.consume_output(n);
        }
    }

    /// The switches that have output since the last call, into `out`
    /// (cleared first; its allocation is reused).
    pub fn take_dirty(&mut self, out: &mut Vec<SwitchId>) {
        out.clear();
        for i in self.dirty.drain(..) {
            self.nodes[i as usize].dirty = false;
            out.push(SwitchId(i));
        }
    }

    /// The next thing the driver must act on.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Runs everything due at `now`: scheduled events, hosts' sends, frame
    /// deliveries (at most [`BUDGET`]), switch timers.
    pub fn poll(&mut self, now: Instant) {
        let t = self.ns(now);
        if let Some(start) = self.traffic_start {
            while let Some(p) = self.plan.get(self.applied.len()) {
                if start + nanos(p.at) > t {
                    break;
                }
                self.apply(self.applied.len(), t);
            }
        }
        self.traffic.on_timers(t, &mut self.queue);
        for _ in 0..BUDGET {
            let Some(f) = self.queue.pop_due(t) else {
                break;
            };
            self.deliver(f, now, t);
        }
        if t >= self.next_tick {
            self.tick(now);
            self.next_tick = t + nanos(TICK);
        }
    }

    fn deliver(&mut self, f: Frame, now: Instant, t: u64) {
        self.max_late = self.max_late.max(t.saturating_sub(f.due));
        match f.dest {
            Dest::Switch { end, link } => {
                let i = end.switch.0 as usize;
                let cut = link.is_some_and(|(id, generation)| {
                    let l = &self.links[id.0 as usize];
                    !l.up || l.generation != generation
                });
                if cut || !self.nodes[i].alive {
                    self.dropped += 1;
                } else {
                    self.delivered += 1;
                    if self.trace {
                        let from = link.map(|(id, _)| {
                            let l = &self.links[id.0 as usize];
                            if l.a == end { l.b.switch } else { l.a.switch }
                        });
                        self.traffic.trace_hop(&f.bytes, end.switch, from);
                    }
                    let ports = &self.peers[self.base[i] as usize..self.base[i + 1] as usize];
                    let node = &mut self.nodes[i];
                    let mut tx = Tx {
                        now: t,
                        ports,
                        links: &self.links,
                        queue: &mut self.queue,
                        dropped: &mut self.dropped,
                    };
                    let port = PortNo(u32::from(end.port));
                    node.sw.receive(now, port, &f.bytes, &mut tx);
                    flush(node, i, &mut self.dirty);
                }
            }
            Dest::Host(h) => {
                self.delivered += 1;
                self.traffic
                    .receive(h, &f.bytes, t, &self.applied, &mut self.queue);
            }
        }
        self.queue.recycle(f.bytes);
    }

    /// When [`Network::poll`] next has work (now, if frames are waiting).
    pub fn next_deadline(&self) -> Instant {
        let mut d = self.next_tick;
        let next_event = self
            .traffic_start
            .zip(self.plan.get(self.applied.len()))
            .map(|(start, p)| start + nanos(p.at));
        let candidates = [
            self.queue.next_due(),
            self.traffic.next_due(),
            next_event,
            self.end.map(|e| e + self.drain),
        ];
        for c in candidates.into_iter().flatten() {
            d = d.min(c);
        }
        self.instant(d)
    }

    /// True once traffic has run its duration and the drain time passed.
    pub fn finished(&self, now: Instant) -> bool {
        let t = self.ns(now);
        self.end.is_some_and(|e| t >= e + self.drain)
    }
}
