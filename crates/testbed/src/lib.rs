//! # baton-testbed: a whole OpenFlow network in one process, for tests
//!
//! A [`Testbed`] joins two in-memory halves: baton's applications in the
//! runtime's test harness (`baton_runtime::testing::Harness`: the real
//! sessions and pipeline, no sockets, simulated time), and a network of
//! baton's software switches (`baton_switch::inproc`: real flow tables,
//! frames carried over cables between ports). Each switch's controller
//! connection is a byte pipe between the two, pumped until both are quiet
//! after every step, so a test can say "this host sends this frame" and
//! ask "which hosts received what", with the controller installing real
//! flows on the way (Faucet's fake-table tests, with the real table).
//!
//! Time is simulated on both sides and moves only in
//! [`Testbed::advance`]; nothing here sleeps or opens a socket, so a
//! network test runs in milliseconds and the same way every time.
//! End-to-end tests against Open vSwitch live elsewhere (`crates/netlab`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use baton_openflow::packet::ArpRepr;
use baton_openflow::{MacAddr, PortNo, Version, v10, v13};
use baton_runtime::testing::Harness;
use baton_runtime::{AnyApp, SwitchId};
use baton_switch::inproc::{self, ControllerId};
use baton_switch::table::WireActions;
use baton_switch::{Config, PortSpec, Switch};
use std::time::Duration;

/// A switch of the testbed, by its datapath id's order of creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sw(pub usize);

/// A switch port: `(switch, port number)`.
pub type Port = (Sw, u32);

struct Node {
    dpid: u64,
    inproc: inproc::SwitchId,
    controller: ControllerId,
    conn: SwitchId,
}

/// Applications, software switches, cables, and hosts' ports.
pub struct Testbed {
    harness: Harness,
    net: inproc::Network,
    nodes: Vec<Node>,
}

/// How long one step of [`Testbed::advance`] is: short enough that a
/// probe sent in one step arrives in the same step (probes cross a cable
/// in no simulated time here).
const STEP: Duration = Duration::from_millis(50);

impl Testbed {
    /// A testbed running `apps` as the controller, with no switches yet.
    pub fn new(apps: Vec<AnyApp>) -> Testbed {
        let harness = Harness::new(apps);
        let net = inproc::Network::new(harness.now());
        Testbed {
            harness,
            net,
            nodes: Vec::new(),
        }
    }

    /// The controller's half (its views, its counters).
    pub fn harness(&mut self) -> &mut Harness {
        &mut self.harness
    }

    /// The switches' half.
    pub fn network(&mut self) -> &mut inproc::Network {
        &mut self.net
    }

    /// Adds a switch speaking `version` with datapath id `dpid` and ports
    /// 1..=`ports` (named `s<dpid>-eth<n>`), and connects it to the
    /// controller; returns once its handshake is done.
    pub fn switch(&mut self, dpid: u64, version: Version, ports: u32) -> Sw {
        let mut sw = Switch::new(Config::new(dpid, version), self.net.now());
        let now = self.net.now();
        for n in 1..=ports {
            sw.add_port(
                PortSpec::named(format!("s{dpid}-eth{n}"), (dpid as u32) << 8 | n),
                now,
            );
        }
        let inproc = self.net.add_switch(sw);
        let controller = self.net.connect(inproc);
        let conn = self.harness.accept();
        self.nodes.push(Node {
            dpid,
            inproc,
            controller,
            conn,
        });
        self.pump();
        Sw(self.nodes.len() - 1)
    }

    /// The datapath id of a switch.
    pub fn dpid(&self, sw: Sw) -> u64 {
        self.nodes[sw.0].dpid
    }

    /// A software switch itself (its flow tables, its ports).
    pub fn software_switch(&self, sw: Sw) -> &Switch {
        self.net.switch(self.nodes[sw.0].inproc)
    }

    /// The output ports of the flows of a switch's first table, one per
    /// output action.
    pub fn flow_outputs(&self, sw: Sw) -> Vec<u32> {
        let mut ports = Vec::new();
        for w in self.software_switch(sw).wire_actions(0) {
            match w {
                WireActions::V10(actions) => ports.extend(actions.iter().filter_map(|a| match a {
                    v10::Action::Output { port, .. } => Some(port.0),
                    _ => None,
                })),
                WireActions::V13(instructions) => {
                    for i in instructions {
                        if let v13::Instruction::ApplyActions(actions) = i {
                            ports.extend(actions.iter().filter_map(|a| match a {
                                v13::Action::Output { port, .. } => Some(port.0),
                                _ => None,
                            }));
                        }
                    }
                }
            }
        }
        ports
    }

    /// The controller's id of a switch's connection.
    pub fn connection(&self, sw: Sw) -> SwitchId {
        self.nodes[sw.0].conn
    }

    /// A switch loses its controller connection and, `after` simulated
    /// time, connects again with a new one (its flow tables kept, as a
    /// switch in fail-secure mode keeps them), and returns once the new
    /// handshake is done.
    pub fn reconnect(&mut self, sw: Sw, after: Duration) {
        let node = &self.nodes[sw.0];
        self.net.disconnect(node.controller);
        self.harness.disconnect(node.conn);
        self.advance(after);
        let inproc = self.nodes[sw.0].inproc;
        let controller = self.net.connect(inproc);
        let conn = self.harness.accept();
        let node = &mut self.nodes[sw.0];
        node.controller = controller;
        node.conn = conn;
        self.pump();
    }

    /// Connects two ports with a cable.
    pub fn cable(&mut self, a: Port, b: Port) {
        let (ia, ib) = (self.nodes[a.0.0].inproc, self.nodes[b.0.0].inproc);
        self.net.link((ia, PortNo(a.1)), (ib, PortNo(b.1)));
    }

    /// A cable's link goes down or up at both ends (each switch tells the
    /// controller with a PORT_STATUS).
    pub fn set_cable(&mut self, a: Port, b: Port, up: bool) {
        for (sw, port) in [a, b] {
            let id = self.nodes[sw.0].inproc;
            self.net.set_link(id, PortNo(port), up);
        }
        self.pump();
    }

    /// A port's link (to its host, say) goes down or up; the switch tells
    /// the controller with a PORT_STATUS.
    pub fn set_link(&mut self, port: Port, up: bool) {
        let id = self.nodes[port.0.0].inproc;
        self.net.set_link(id, PortNo(port.1), up);
        self.pump();
    }

    /// A host on `port` sends `frame`; the network and the controller run
    /// until nothing more happens.
    pub fn send(&mut self, port: Port, frame: &[u8]) {
        let id = self.nodes[port.0.0].inproc;
        self.net.inject(id, PortNo(port.1), frame);
        self.pump();
    }

    /// The frames that left the network on `port` (to its host) since the
    /// last call.
    pub fn received(&mut self, port: Port) -> Vec<Vec<u8>> {
        let id = self.nodes[port.0.0].inproc;
        self.net.take_output(id, PortNo(port.1))
    }

    /// Throws away whatever hosts were sent so far.
    pub fn clear_received(&mut self) {
        for i in 0..self.nodes.len() {
            let id = self.nodes[i].inproc;
            self.net.take_all_output(id);
        }
    }

    /// Lets `d` of simulated time pass on both halves, in steps, running
    /// timers (probes, aging, keepalive) and everything they cause.
    pub fn advance(&mut self, d: Duration) {
        let mut left = d;
        while !left.is_zero() {
            let step = STEP.min(left);
            self.harness.advance(step);
            self.net.advance(step);
            self.pump();
            left -= step;
        }
    }

    /// Carries bytes both ways between the switches and the controller
    /// until neither side has anything to say.
    pub fn pump(&mut self) {
        // A bound that no test reaches unless the two sides keep talking
        // for ever (a bug to report rather than hang on).
        for _ in 0..10_000 {
            let mut quiet = true;
            for i in 0..self.nodes.len() {
                let (c, s) = (self.nodes[i].controller, self.nodes[i].conn);
                let up = self.net.recv(c);
                if !up.is_empty() {
                    quiet = false;
                    self.harness.receive_bytes(s, &up);
                }
                let down = self.harness.take_bytes(s);
                if !down.is_empty() {
                    quiet = false;
                    self.net.send(c, &down);
                }
            }
            if quiet {
                return;
            }
        }
        panic!("the controller and the switches never stop talking");
    }
}

/// An Ethernet frame from `src` to `dst` with `ethertype` and `payload`,
/// padded to the minimum size.
pub fn ethernet(dst: MacAddr, src: MacAddr, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len().max(46));
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

/// An ARP request from `sha`/`spa` for `tpa` (broadcast).
pub fn arp_request(sha: MacAddr, spa: [u8; 4], tpa: [u8; 4]) -> Vec<u8> {
    arp(ArpRepr::request(sha, spa.into(), tpa.into()))
}

/// An ARP reply from `sha`/`spa` to `tha`/`tpa`.
pub fn arp_reply(sha: MacAddr, spa: [u8; 4], tha: MacAddr, tpa: [u8; 4]) -> Vec<u8> {
    arp(ArpRepr::reply(sha, spa.into(), tha, tpa.into()))
}

/// The frame of `repr`, written by the codec's one ARP emitter.
fn arp(repr: ArpRepr) -> Vec<u8> {
    let mut f = Vec::with_capacity(repr.frame_len());
    repr.emit_frame(&mut f);
    f
}

/// An IPv4/UDP frame from `src`/`sip` to `dst`/`dip` (checksums left 0:
/// the network does not check them).
pub fn udp(src: MacAddr, sip: [u8; 4], dst: MacAddr, dip: [u8; 4], tag: u8) -> Vec<u8> {
    let mut ip = vec![0x45, 0, 0, 29, 0, 0, 0, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&sip);
    ip.extend_from_slice(&dip);
    ip.extend_from_slice(&[0x30, 0x39, 0x30, 0x39, 0, 9, 0, 0, tag]);
    ethernet(dst, src, 0x0800, &ip)
}
