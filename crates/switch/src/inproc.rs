//! The in-process datapath: ports are queues, and a whole network of
//! switches, links and controller connections runs in one thread on a
//! clock the test moves (Faucet's fake table, smoltcp's `netsim`).
//!
//! A test builds a [`Network`], adds switches (each a [`Switch`] with its
//! ports), links ports of different switches, and optionally attaches
//! controller connections, which it drives with raw OpenFlow bytes
//! ([`Network::send`], [`Network::recv`]). [`Network::inject`] hands a
//! frame to a port and runs the network until no frame is in flight:
//! frames sent out of a linked port arrive at its peer, frames sent out
//! of an unlinked port wait in that port's output queue for
//! [`Network::take_output`]. A frame that would loop for ever (a flood in
//! a ring) is stopped after [`MAX_HOPS`] deliveries and counted.

use crate::datapath::Transmit;
use crate::proto::Connection;
use crate::switch::Switch;
use baton_openflow::types::PortNo;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Frame deliveries one [`Network::inject`] may cause before the rest is
/// dropped (a loop guard; a real network would melt instead).
pub const MAX_HOPS: usize = 100_000;

/// A switch's handle in a [`Network`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchId(pub usize);

/// A controller connection's handle in a [`Network`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControllerId {
    /// The switch it is attached to.
    pub switch: SwitchId,
    index: usize,
}

#[derive(Debug)]
struct Node {
    sw: Switch,
    outputs: BTreeMap<PortNo, VecDeque<Vec<u8>>>,
    conns: Vec<Option<Connection>>,
}

/// Collects a switch's transmissions.
#[derive(Default)]
struct Sent(Vec<(PortNo, Vec<u8>)>);

impl Transmit for Sent {
    fn transmit(&mut self, port: PortNo, frame: &[u8]) {
        self.0.push((port, frame.to_vec()));
    }
}

/// Switches, links and controllers in one process.
#[derive(Debug)]
pub struct Network {
    nodes: Vec<Node>,
    links: HashMap<(SwitchId, PortNo), (SwitchId, PortNo)>,
    now: Instant,
    /// Frames dropped by the loop guard.
    pub looped: u64,
}

impl Network {
    /// An empty network whose clock starts at `now`.
    pub fn new(now: Instant) -> Network {
        Network {
            nodes: Vec::new(),
            links: HashMap::new(),
            now,
            looped: 0,
        }
    }

    /// The network's clock.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Adds a switch. Events it queued before (its ports being added)
    /// concern no controller and are dropped.
    pub fn add_switch(&mut self, mut sw: Switch) -> SwitchId {
        while sw.poll_event().is_some() {}
        self.nodes.push(Node {
            sw,
            outputs: BTreeMap::new(),
            conns: Vec::new(),
        });
        SwitchId(self.nodes.len() - 1)
    }

    /// A switch.
    ///
    /// # Panics
    /// If `id` did not come from this network.
    pub fn switch(&self, id: SwitchId) -> &Switch {
        &self.nodes[id.0].sw
    }

    /// A switch, mutably (to add ports or extensions).
    ///
    /// # Panics
    /// If `id` did not come from this network.
    pub fn switch_mut(&mut self, id: SwitchId) -> &mut Switch {
        &mut self.nodes[id.0].sw
    }

    /// Adds a port to switch `sw` and tells its controllers.
    pub fn add_port(&mut self, sw: SwitchId, spec: crate::port::PortSpec) -> PortNo {
        let now = self.now;
        let no = self.nodes[sw.0].sw.add_port(spec, now);
        self.flush_events(sw);
        no
    }

    /// A port's link goes up or down; its controllers hear of it.
    pub fn set_link(&mut self, sw: SwitchId, port: PortNo, up: bool) {
        self.nodes[sw.0].sw.set_link(port, up);
        self.flush_events(sw);
    }

    /// Connects two ports with a cable.
    pub fn link(&mut self, a: (SwitchId, PortNo), b: (SwitchId, PortNo)) {
        self.links.insert(a, b);
        self.links.insert(b, a);
    }

    /// Attaches a controller connection to switch `sw` (its HELLO is
    /// waiting in [`Network::recv`]).
    pub fn connect(&mut self, sw: SwitchId) -> ControllerId {
        self.attach(sw, false)
    }

    /// Attaches a service connection, as one accepted on a passive
    /// listener (see [`Connection::into_service`]).
    pub fn connect_service(&mut self, sw: SwitchId) -> ControllerId {
        self.attach(sw, true)
    }

    fn attach(&mut self, sw: SwitchId, service: bool) -> ControllerId {
        let now = self.now;
        let node = &mut self.nodes[sw.0];
        let c = Connection::new(&mut node.sw, now);
        node.conns
            .push(Some(if service { c.into_service() } else { c }));
        ControllerId {
            switch: sw,
            index: node.conns.len() - 1,
        }
    }

    /// Detaches a controller.
    pub fn disconnect(&mut self, c: ControllerId) {
        let node = &mut self.nodes[c.switch.0];
        if let Some(mut conn) = node.conns.get_mut(c.index).and_then(Option::take) {
            conn.close(&mut node.sw);
        }
    }

    /// The connection of controller `c` (for its state).
    pub fn connection(&self, c: ControllerId) -> Option<&Connection> {
        self.nodes[c.switch.0].conns.get(c.index)?.as_ref()
    }

    /// Bytes from controller `c` to its switch; the frames this causes
    /// travel before this returns.
    pub fn send(&mut self, c: ControllerId, bytes: &[u8]) {
        let now = self.now;
        let mut sent = Sent::default();
        {
            let node = &mut self.nodes[c.switch.0];
            if let Some(conn) = node.conns.get_mut(c.index).and_then(Option::as_mut) {
                conn.handle_input(&mut node.sw, now, bytes, &mut sent);
            }
        }
        self.flush_events(c.switch);
        self.carry(c.switch, sent.0);
    }

    /// Bytes from the switch to controller `c` since the last call.
    pub fn recv(&mut self, c: ControllerId) -> Vec<u8> {
        self.nodes[c.switch.0]
            .conns
            .get_mut(c.index)
            .and_then(Option::as_mut)
            .map(Connection::take_output)
            .unwrap_or_default()
    }

    /// A frame arrives on `port` of `sw`; runs the network until nothing
    /// is in flight.
    pub fn inject(&mut self, sw: SwitchId, port: PortNo, frame: &[u8]) {
        let now = self.now;
        let mut sent = Sent::default();
        self.nodes[sw.0].sw.receive(now, port, frame, &mut sent);
        self.flush_events(sw);
        self.carry(sw, sent.0);
    }

    /// Delivers transmissions: over links to the peer switch, or into the
    /// port's output queue.
    fn carry(&mut self, from: SwitchId, first: Vec<(PortNo, Vec<u8>)>) {
        let mut queue: VecDeque<(SwitchId, PortNo, Vec<u8>)> =
            first.into_iter().map(|(p, f)| (from, p, f)).collect();
        let mut hops = 0;
        while let Some((sw, port, frame)) = queue.pop_front() {
            match self.links.get(&(sw, port)).copied() {
                Some((peer, peer_port)) => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        self.looped += 1 + queue.len() as u64;
                        return;
                    }
                    let mut sent = Sent::default();
                    let now = self.now;
                    self.nodes[peer.0]
                        .sw
                        .receive(now, peer_port, &frame, &mut sent);
                    self.flush_events(peer);
                    queue.extend(sent.0.into_iter().map(|(p, f)| (peer, p, f)));
                }
                None => self.nodes[sw.0]
                    .outputs
                    .entry(port)
                    .or_default()
                    .push_back(frame),
            }
        }
    }

    /// Hands the switch's events to its controllers.
    fn flush_events(&mut self, sw: SwitchId) {
        let node = &mut self.nodes[sw.0];
        while let Some(ev) = node.sw.poll_event() {
            for c in node.conns.iter_mut().flatten() {
                c.deliver(&node.sw, &ev);
            }
        }
    }

    /// The frames that left switch `sw` through unlinked port `port`.
    pub fn take_output(&mut self, sw: SwitchId, port: PortNo) -> Vec<Vec<u8>> {
        self.nodes[sw.0]
            .outputs
            .get_mut(&port)
            .map(|q| q.drain(..).collect())
            .unwrap_or_default()
    }

    /// Every frame waiting on an unlinked port of `sw`, by port.
    pub fn take_all_output(&mut self, sw: SwitchId) -> Vec<(PortNo, Vec<u8>)> {
        let mut out = Vec::new();
        for (p, q) in self.nodes[sw.0].outputs.iter_mut() {
            out.extend(q.drain(..).map(|f| (*p, f)));
        }
        out
    }

    /// Moves the clock forward and runs every timer that is due: flow
    /// expiry and the controllers' keepalives.
    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        let now = self.now;
        for i in 0..self.nodes.len() {
            let node = &mut self.nodes[i];
            if node.sw.poll_timeout().is_some_and(|t| t <= now) {
                node.sw.handle_timeout(now);
            }
            for c in node.conns.iter_mut().flatten() {
                if c.poll_timeout().is_some_and(|t| t <= now) {
                    c.handle_timeout(now);
                }
            }
            self.flush_events(SwitchId(i));
        }
    }
}
