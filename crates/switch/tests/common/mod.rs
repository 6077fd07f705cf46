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
    use super::{H1, H2};
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

    /// An optional 802.1Q tag (vid, pcp), for [`eth`].
    pub fn vlan() -> impl proptest::strategy::Strategy<Value = Option<(u16, u8)>> {
        proptest::option::of((0..4096u16, 0..8u8))
    }

    /// Sends `m` and expects no reply (no error).
    pub fn ok(h: &mut super::Harness, m: Message) {
        let r = h.send13(m);
        assert!(r.is_empty(), "{r:?}");
    }

    /// A 1.3 switch with two ports and one flow, in table 0 at priority
    /// 1, with `fields` and `instructions`.
    pub fn switch_with_flow(fields: Vec<Oxm>, instructions: Vec<Instruction>) -> super::Harness {
        let mut h = super::Harness::new(baton_openflow::Version::V13, 2);
        ok(&mut h, add(0, 1, fields, instructions));
        h
    }

    /// Adds indirect group 1, whose one bucket runs `actions`, and a
    /// table-0 flow that sends every packet to it.
    pub fn via_indirect_group(h: &mut super::Harness, actions: Vec<Action>) {
        use baton_openflow::v13::{Bucket, GroupMod, GroupModCommand, GroupType};
        ok(
            h,
            Message::GroupMod(GroupMod {
                command: GroupModCommand::Add,
                group_type: GroupType::Indirect,
                group_id: 1,
                buckets: vec![Bucket {
                    weight: 0,
                    watch_port: PortNo::ANY,
                    watch_group: baton_openflow::v13::group::group_id::ANY,
                    actions,
                }],
            }),
        );
        ok(h, add(0, 1, vec![], vec![apply(vec![Action::Group(1)])]));
    }

    /// A flow in table `table_id` that sends IPv4/UDP packets to port 53
    /// out of `port`.
    pub fn udp_53_to(table_id: u8, port: u32) -> Message {
        add(
            table_id,
            1,
            vec![Oxm::EthType(0x0800), Oxm::IpProto(17), Oxm::UdpDst(53)],
            vec![apply(vec![out(port)])],
        )
    }

    /// `OFPBMC_BAD_FIELD`.
    pub const BAD_FIELD: (ErrorType, u16) = (ErrorType::BadMatch, 6);
    /// `OFPBMC_BAD_VALUE`.
    pub const BAD_VALUE: (ErrorType, u16) = (ErrorType::BadMatch, 7);
    /// `OFPBMC_BAD_WILDCARDS`.
    pub const BAD_WILDCARDS: (ErrorType, u16) = (ErrorType::BadMatch, 5);
    /// `OFPBMC_BAD_PREREQ`.
    pub const BAD_PREREQ: (ErrorType, u16) = (ErrorType::BadMatch, 9);
    /// `OFPBAC_BAD_ARGUMENT`.
    pub const BAD_ARGUMENT: (ErrorType, u16) = (ErrorType::BadAction, 5);
    /// `OFPBAC_MATCH_INCONSISTENT`.
    pub const MATCH_INCONSISTENT: (ErrorType, u16) = (ErrorType::BadAction, 10);
    /// `OFPBAC_BAD_SET_TYPE`.
    pub const BAD_SET_TYPE: (ErrorType, u16) = (ErrorType::BadAction, 13);
    /// `OFPBAC_BAD_SET_ARGUMENT`.
    pub const BAD_SET_ARGUMENT: (ErrorType, u16) = (ErrorType::BadAction, 15);

    /// A flow-mod's match fields, its actions (sent once as apply-actions,
    /// once as write-actions), and the error it gets, if any.
    pub type Case = (Vec<Oxm>, Vec<Action>, Option<(ErrorType, u16)>);

    /// Sends each case as a flow-mod to table 0 (priority 100 + its
    /// index), once with apply-actions and once with write-actions, and
    /// checks the errors it gets.
    pub fn check_cases(h: &mut super::Harness, cases: Vec<Case>) {
        for (i, (fields, actions, want)) in cases.into_iter().enumerate() {
            let dbg = format!("case {i}: {fields:?} {actions:?}");
            for instruction in [Instruction::ApplyActions, Instruction::WriteActions] {
                let got = errors(&h.send13(add(
                    0,
                    100 + i as u16,
                    fields.clone(),
                    vec![instruction(actions.clone())],
                )));
                assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "{dbg}");
            }
        }
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

    /// The network layers the tests wrap in MPLS or PBB.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum L3 {
        Ipv4,
        Ipv6,
        Arp,
    }

    /// An IPv4, IPv6 or ARP packet (IP ones carry UDP to port 53 with
    /// `body`), with its ethertype. IP TTL / hop limit `ttl`.
    pub fn l3(kind: L3, ttl: u8, body: &[u8]) -> (u16, Vec<u8>) {
        let udp_len = 8 + body.len() as u16;
        let mut udp = Vec::new();
        udp.extend_from_slice(&1000u16.to_be_bytes());
        udp.extend_from_slice(&53u16.to_be_bytes());
        udp.extend_from_slice(&udp_len.to_be_bytes());
        udp.extend_from_slice(&[0, 0]); // no checksum
        udp.extend_from_slice(body);
        match kind {
            L3::Ipv4 => {
                let mut h = vec![0x45, 0];
                h.extend_from_slice(&(20 + udp_len).to_be_bytes());
                h.extend_from_slice(&[0, 1, 0, 0, ttl, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
                let mut sum = 0u32;
                for c in h.chunks(2) {
                    sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
                }
                while sum >> 16 != 0 {
                    sum = (sum & 0xffff) + (sum >> 16);
                }
                h[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
                h.extend_from_slice(&udp);
                (0x0800, h)
            }
            L3::Ipv6 => {
                let mut h = vec![0x60, 0, 0, 0];
                h.extend_from_slice(&udp_len.to_be_bytes());
                h.extend_from_slice(&[17, ttl]);
                h.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
                h.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
                h.extend_from_slice(&udp);
                (0x86dd, h)
            }
            L3::Arp => {
                let mut h = vec![0, 1, 8, 0, 6, 4, 0, 1];
                h.extend_from_slice(&H1);
                h.extend_from_slice(&[10, 0, 0, 1]);
                h.extend_from_slice(&[0; 6]);
                h.extend_from_slice(&[10, 0, 0, 2]);
                (0x0806, h)
            }
        }
    }

    /// An Ethernet frame from H1 to H2, with an 802.1Q tag (vid, pcp) when
    /// `vlan` says so, then `ethertype` and `payload`.
    pub fn eth(vlan: Option<(u16, u8)>, ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = H2.to_vec();
        f.extend_from_slice(&H1);
        if let Some((vid, pcp)) = vlan {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&((u16::from(pcp) << 13) | vid).to_be_bytes());
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    /// A label stack entry (RFC 3032 §2.1).
    pub fn lse(label: u32, tc: u8, bos: u8, ttl: u8) -> [u8; 4] {
        ((label << 12) | (u32::from(tc) << 9) | (u32::from(bos) << 8) | u32::from(ttl))
            .to_be_bytes()
    }

    pub fn cat(a: &[u8], b: &[u8]) -> Vec<u8> {
        [a, b].concat()
    }
}
