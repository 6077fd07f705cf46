//! A controller's view of an in-process switch: send owned messages,
//! get decoded replies, inject frames, read what came out.
#![allow(dead_code)]

use baton_openflow::Version;
use baton_openflow::hello::Hello;
use baton_openflow::types::{PortNo, Xid};
use baton_openflow::{frame, v10, v13};
use baton_switch::inproc::{ControllerId, Network, SwitchId};
use baton_switch::port::PortSpec;
use baton_switch::switch::{Config, Switch};
use std::time::Instant;

pub struct Harness {
    pub net: Network,
    pub sw: SwitchId,
    pub ctl: ControllerId,
    pub version: Version,
    xid: u32,
}

/// Splits a byte stream into whole messages.
pub fn messages(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Ok(Some(n)) = frame(bytes) {
        out.push(bytes[..n].to_vec());
        bytes = &bytes[n..];
    }
    assert!(bytes.is_empty(), "partial message left: {bytes:02x?}");
    out
}

impl Harness {
    /// A switch with `ports` ports named p1.. and one connected controller
    /// that has finished the handshake.
    pub fn new(version: Version, ports: usize) -> Harness {
        Harness::with_config(Config::new(1, version), ports)
    }

    pub fn with_config(config: Config, ports: usize) -> Harness {
        let version = config.version;
        let now = Instant::now();
        let mut sw = Switch::new(config, now);
        for i in 1..=ports {
            sw.add_port(PortSpec::named(format!("p{i}"), i as u32), now);
        }
        // Port-added events before any controller are dropped.
        while sw.poll_event().is_some() {}
        let mut net = Network::new(now);
        let id = net.add_switch(sw);
        let ctl = net.connect(id);
        let mut h = Harness {
            net,
            sw: id,
            ctl,
            version,
            xid: 100,
        };
        h.handshake(ctl);
        h
    }

    /// A second connection, as a tool such as `ovs-ofctl` opens on a
    /// passive listener, after its handshake.
    pub fn connect_service(&mut self) -> ControllerId {
        let c = self.net.connect_service(self.sw);
        self.handshake(c);
        c
    }

    fn handshake(&mut self, c: ControllerId) {
        let hello = self.net.recv(c);
        assert_eq!(hello[0], self.version.wire(), "switch HELLO version");
        assert_eq!(hello[1], 0, "switch sends HELLO first");
        let mut b = Vec::new();
        Hello::baton().encode(self.version, Xid(1), &mut b);
        self.net.send(c, &b);
        assert!(self.net.connection(c).unwrap().version().is_some());
    }

    /// Moves the clock and, as a live controller would, says something
    /// (an ECHO_REPLY, which needs no answer) so the keepalive is happy.
    pub fn tick(&mut self, d: std::time::Duration) {
        self.net.advance(d);
        let mut b = Vec::new();
        match self.version {
            Version::V10 => v10::Message::EchoReply(vec![]).encode(Xid(0), &mut b),
            Version::V13 => v13::Message::EchoReply(vec![]).encode(Xid(0), &mut b),
        }
        self.net.send(self.ctl, &b);
    }

    pub fn switch(&self) -> &Switch {
        self.net.switch(self.sw)
    }

    fn next_xid(&mut self) -> Xid {
        self.xid += 1;
        Xid(self.xid)
    }

    pub fn send_raw(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.net.send(self.ctl, bytes);
        messages(&self.net.recv(self.ctl))
    }

    pub fn send10(&mut self, m: v10::Message) -> Vec<v10::Message> {
        let mut b = Vec::new();
        let xid = self.next_xid();
        m.encode(xid, &mut b);
        self.send_raw(&b)
            .iter()
            .map(|m| v10::decode(m).expect("switch sent a valid 1.0 message").1)
            .collect()
    }

    pub fn send13(&mut self, m: v13::Message) -> Vec<v13::Message> {
        let mut b = Vec::new();
        let xid = self.next_xid();
        m.encode(xid, &mut b);
        self.send_raw(&b)
            .iter()
            .map(|m| v13::decode(m).expect("switch sent a valid 1.3 message").1)
            .collect()
    }

    /// Messages the switch sent on its own since the last call.
    pub fn async10(&mut self) -> Vec<v10::Message> {
        messages(&self.net.recv(self.ctl))
            .iter()
            .map(|m| v10::decode(m).unwrap().1)
            .collect()
    }

    pub fn async13(&mut self) -> Vec<v13::Message> {
        messages(&self.net.recv(self.ctl))
            .iter()
            .map(|m| v13::decode(m).unwrap().1)
            .collect()
    }

    pub fn inject(&mut self, port: u32, frame: &[u8]) {
        self.net.inject(self.sw, PortNo(port), frame);
    }

    pub fn out(&mut self, port: u32) -> Vec<Vec<u8>> {
        self.net.take_output(self.sw, PortNo(port))
    }

    /// Ports each frame came out of, after injecting `frame` on `port`.
    pub fn forward(&mut self, port: u32, frame: &[u8]) -> Vec<u32> {
        self.inject(port, frame);
        let mut out: Vec<u32> = self
            .net
            .take_all_output(self.sw)
            .into_iter()
            .map(|(p, _)| p.0)
            .collect();
        out.sort_unstable();
        out
    }
}

pub const H1: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const H2: [u8; 6] = [2, 0, 0, 0, 0, 2];
pub const H3: [u8; 6] = [2, 0, 0, 0, 0, 3];

/// OpenFlow 1.3 flow-mods and replies, shortly.
pub mod of13 {
    use baton_openflow::types::{Cookie, PortNo};
    use baton_openflow::v13::messages::ErrorType;
    use baton_openflow::v13::oxm::{Match13, Oxm};
    use baton_openflow::v13::{Action, ErrorMsg, FlowMod, FlowModHead, Instruction, Message};

    /// Output to `port`, whole packets.
    pub fn out(port: u32) -> Action {
        Action::Output {
            port: PortNo(port),
            max_len: 0xffff,
        }
    }

    /// Adds a flow to `table_id` at `priority` (its cookie too).
    pub fn add(
        table_id: u8,
        priority: u16,
        fields: Vec<Oxm>,
        instructions: Vec<Instruction>,
    ) -> Message {
        Message::FlowMod(FlowMod::from_parts(
            FlowModHead {
                table_id,
                priority,
                cookie: Cookie(priority.into()),
                ..FlowModHead::default()
            },
            Match13 { fields },
            instructions,
        ))
    }

    /// An apply-actions instruction.
    pub fn apply(a: Vec<Action>) -> Instruction {
        Instruction::ApplyActions(a)
    }

    /// Every table's features, as the switch of `h` reports them.
    pub fn table_features(
        h: &mut super::Harness,
    ) -> Vec<baton_openflow::v13::table_features::TableFeatures> {
        use baton_openflow::v13::multipart::{
            MultipartReplyBody, MultipartRequest, MultipartRequestBody,
        };
        let replies = h.send13(Message::MultipartRequest(MultipartRequest::new(
            MultipartRequestBody::TableFeatures(vec![]),
        )));
        let mut tables = Vec::new();
        for m in replies {
            match m {
                Message::MultipartReply(r) => match r.body {
                    MultipartReplyBody::TableFeatures(t) => tables.extend(t),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            }
        }
        tables
    }

    /// The standard errors among `replies`: type and code.
    pub fn errors(replies: &[Message]) -> Vec<(ErrorType, u16)> {
        replies
            .iter()
            .filter_map(|m| match m {
                Message::Error(ErrorMsg::Standard {
                    error_type, code, ..
                }) => Some((*error_type, *code)),
                _ => None,
            })
            .collect()
    }
}
