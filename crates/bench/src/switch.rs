//! The OpenFlow side of one emulated switch, without sockets: what it
//! answers to each controller message, how it classifies responses, and
//! how it writes its PACKET_INs. The emulator ([`crate::emulator`]) owns
//! the connection and the clock and calls in here.
//!
//! ## cbench's rules, which this follows
//! - HELLO: OpenFlow 1.0 without a version bitmap (so any controller
//!   negotiates 1.0), or, for 1.3, a HELLO of version 4 whose bitmap names
//!   only 1.3.
//! - FEATURES_REQUEST is answered with FEATURES_REPLY (datapath id =
//!   switch index + 1, [`PORTS`] ports; in 1.3 the ports are in the
//!   PORT_DESC multipart reply); the switch is up from then on.
//! - ECHO_REQUEST, GET_CONFIG_REQUEST, BARRIER_REQUEST, DESC and PORT_DESC
//!   requests and ROLE_REQUEST are answered; SET_CONFIG is remembered;
//!   anything else is ignored.
//! - A FLOW_MOD with command ADD or MODIFY_STRICT, and a PACKET_OUT that
//!   does not carry an LLDP frame, are *responses*; their `buffer_id` lets
//!   the emulator match them to requests.
//!
//! Controller messages are read through the codec's views (FLOW_MOD and
//! PACKET_OUT) or owned decoders (the rare control messages); replies are
//! written with the codec's encoders.

use crate::frames::{DataFrame, PORTS, SRC_HOST, host_mac, host_port};
use baton_openflow::header::{HEADER_LEN, Header, MsgType10, MsgType13};
use baton_openflow::hello::{self, Hello, HelloElement};
use baton_openflow::neutral::encode_packet_in_no_match;
use baton_openflow::types::{BufferId, DatapathId, MacAddr, PortNo, Xid};
use baton_openflow::version::Version;
use baton_openflow::{v10, v13};

/// Which message answered a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// OFPT_FLOW_MOD (ADD or MODIFY_STRICT).
    FlowMod,
    /// OFPT_PACKET_OUT (not LLDP).
    PacketOut,
}

/// What a controller message meant to the switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A response to a request.
    Response {
        /// FLOW_MOD or PACKET_OUT.
        kind: ResponseKind,
        /// The request it names, when it names one.
        buffer_id: Option<BufferId>,
        /// The codec rejected the message body; it was counted by its type.
        malformed: bool,
    },
    /// A FLOW_MOD or PACKET_OUT that cbench does not count (another
    /// FLOW_MOD command, or an LLDP PACKET_OUT).
    Uncounted,
    /// Handled (any reply has been appended to `out`).
    Handled,
    /// FEATURES_REQUEST answered: the switch is up.
    Up,
    /// The controller sent an OFPT_ERROR.
    PeerError(String),
    /// The connection cannot go on (incompatible version, garbage).
    Fatal(String),
}

/// A switch's data PACKET_INs, encoded once by the codec for each host
/// port and patched per request (xid, buffer_id, the host bytes of the
/// source MAC), as cbench's `make_packet_in` patches one fixed message. A
/// request then costs a copy and three stores instead of an encoding.
///
/// The offsets are not hard-coded: the xid and buffer_id are found by
/// encoding twice with different values, the host bytes are
/// [`SRC_HOST`] of the frame, which ends the message in both versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataPacketIns {
    /// One message per host port: host `h` is on port `1 + h % 3`.
    by_port: [Vec<u8>; HOST_PORTS],
    xid_at: usize,
    buffer_id_at: usize,
    host_at: usize,
}

/// The ports hosts sit on (all but the gateway's).
const HOST_PORTS: usize = PORTS as usize - 1;

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0)
}

impl DataPacketIns {
    /// The data PACKET_INs of switch `index` in `version`.
    pub fn new(index: usize, version: Version) -> DataPacketIns {
        let frame = DataFrame::new(index);
        let encode = |port: PortNo, xid: u32, buffer_id: u32| {
            let mut out = Vec::new();
            encode_packet_in_no_match(
                &mut out,
                version,
                Xid(xid),
                BufferId(buffer_id),
                port,
                frame.bytes(),
            );
            out
        };
        let by_port: [Vec<u8>; HOST_PORTS] = std::array::from_fn(|h| encode(host_port(h), 0, 0));
        let base = &by_port[0];
        DataPacketIns {
            xid_at: first_difference(base, &encode(host_port(0), u32::MAX, 0)),
            buffer_id_at: first_difference(base, &encode(host_port(0), 0, u32::MAX)),
            host_at: base.len() - frame.bytes().len() + SRC_HOST.start,
            by_port,
        }
    }

    /// Length of each message.
    pub fn message_len(&self) -> usize {
        self.by_port[0].len()
    }

    /// Appends the PACKET_IN of host `host`, which must be below
    /// [`MAX_HOSTS`](crate::frames::MAX_HOSTS).
    #[inline]
    pub fn append(&self, out: &mut Vec<u8>, xid: Xid, buffer_id: BufferId, host: usize) {
        let at = out.len();
        out.extend_from_slice(&self.by_port[host % HOST_PORTS]);
        let msg = &mut out[at..];
        // The offsets were found inside the message (`new`): in bounds.
        msg[self.xid_at..self.xid_at + 4].copy_from_slice(&xid.0.to_be_bytes());
        msg[self.buffer_id_at..self.buffer_id_at + 4].copy_from_slice(&buffer_id.0.to_be_bytes());
        // host < MAX_HOSTS (the emulator clamps --macs), so host + 1 fits
        // the three bytes.
        let h = (host as u32).wrapping_add(1).to_be_bytes();
        msg[self.host_at..self.host_at + 3].copy_from_slice(&h[1..]);
    }
}

/// One emulated switch's protocol state.
#[derive(Debug, Clone)]
pub struct SwitchProto {
    index: usize,
    version: Version,
    miss_send_len: u16,
    up: bool,
    next_xid: u32,
    data: DataPacketIns,
}

impl SwitchProto {
    /// Switch number `index` (datapath id `index + 1`) speaking `version`.
    pub fn new(index: usize, version: Version) -> SwitchProto {
        SwitchProto {
            index,
            version,
            miss_send_len: 128,
            up: false,
            next_xid: 1,
            data: DataPacketIns::new(index, version),
        }
    }

    /// The datapath id.
    pub fn dpid(&self) -> DatapathId {
        DatapathId(self.index as u64 + 1)
    }

    /// The version this switch speaks.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Whether FEATURES_REQUEST has been answered.
    pub fn is_up(&self) -> bool {
        self.up
    }

    fn xid(&mut self) -> Xid {
        let x = Xid(self.next_xid);
        self.next_xid = self.next_xid.wrapping_add(1);
        x
    }

    /// Appends the switch's HELLO.
    pub fn encode_hello(&mut self, out: &mut Vec<u8>) {
        let xid = self.xid();
        let hello = match self.version {
            // cbench: a plain 1.0 HELLO.
            Version::V10 => Hello::default(),
            Version::V13 => Hello {
                elements: vec![HelloElement::VersionBitmap(vec![hello::bitmap_of(&[
                    Version::V13,
                ])])],
            },
        };
        hello.encode(self.version, xid, out);
    }

    /// Appends a PACKET_IN (reason NO_MATCH) carrying `frame`.
    pub fn encode_packet_in(
        &mut self,
        out: &mut Vec<u8>,
        buffer_id: BufferId,
        in_port: PortNo,
        frame: &[u8],
    ) {
        let xid = self.xid();
        encode_packet_in_no_match(out, self.version, xid, buffer_id, in_port, frame);
    }

    /// Appends the PACKET_IN of the data frame from host `host` to the
    /// gateway, on the host's port: the same bytes as [`Self::encode_packet_in`]
    /// with [`DataFrame::set_host`], patched from [`DataPacketIns`].
    #[inline]
    pub fn encode_data_packet_in(&mut self, out: &mut Vec<u8>, buffer_id: BufferId, host: usize) {
        let xid = self.xid();
        self.data.append(out, xid, buffer_id, host);
    }

    /// Length of a data PACKET_IN.
    pub fn data_packet_in_len(&self) -> usize {
        self.data.message_len()
    }

    /// Handles one whole message from the controller, appending any reply
    /// to `out`.
    pub fn handle(&mut self, msg: &[u8], out: &mut Vec<u8>) -> Incoming {
        if let Some(r) = self.response(msg) {
            return r;
        }
        let h = match Header::parse(msg) {
            Ok(h) => h,
            Err(e) => return Incoming::Fatal(format!("bad header: {e}")),
        };
        if h.msg_type == 0 {
            return self.on_hello(&h, msg);
        }
        if h.version != self.version.wire() {
            return Incoming::Fatal(format!(
                "controller sent a message of version 0x{:02x}, not {}",
                h.version, self.version
            ));
        }
        match self.version {
            Version::V10 => self.handle10(&h, msg, out),
            Version::V13 => self.handle13(&h, msg, out),
        }
    }

    /// The common case, first: a well-formed FLOW_MOD or PACKET_OUT of
    /// this switch's version, read through its view (whose check covers
    /// the header). Anything else, malformed ones included, is `None` and
    /// goes through [`Self::handle`]'s general path.
    #[inline]
    fn response(&self, msg: &[u8]) -> Option<Incoming> {
        let t = *msg.get(1)?;
        match self.version {
            Version::V10 => match MsgType10::from(t) {
                MsgType10::FlowMod => v10::FlowModView::new_checked(msg).ok().map(|v| {
                    flow_mod(
                        matches!(
                            v.command(),
                            v10::FlowModCommand::Add | v10::FlowModCommand::ModifyStrict
                        ),
                        v.buffer_id(),
                    )
                }),
                MsgType10::PacketOut => v10::PacketOutView::new_checked(msg)
                    .ok()
                    .map(|v| packet_out(v.buffer_id(), v.data())),
                _ => None,
            },
            Version::V13 => match MsgType13::from(t) {
                MsgType13::FlowMod => v13::FlowModView::new_checked(msg).ok().map(|v| {
                    flow_mod(
                        matches!(
                            v.command(),
                            v13::FlowModCommand::Add | v13::FlowModCommand::ModifyStrict
                        ),
                        v.buffer_id(),
                    )
                }),
                MsgType13::PacketOut => v13::PacketOutView::new_checked(msg)
                    .ok()
                    .map(|v| packet_out(v.buffer_id(), v.data())),
                _ => None,
            },
        }
    }

    fn on_hello(&self, h: &Header, msg: &[u8]) -> Incoming {
        // 1.0.0 §5.5.1: a body we cannot read is ignored.
        let body = Hello::decode_body(msg.get(HEADER_LEN..).unwrap_or(&[]), HEADER_LEN)
            .unwrap_or_default();
        match hello::negotiate(&[self.version], h.version, &body) {
            Ok(_) => Incoming::Handled,
            Err(e) => Incoming::Fatal(e.to_string()),
        }
    }

    fn handle10(&mut self, h: &Header, msg: &[u8], out: &mut Vec<u8>) -> Incoming {
        use v10::Message as M;
        match MsgType10::from(h.msg_type) {
            // Well-formed ones were taken by `response`.
            MsgType10::FlowMod => malformed(ResponseKind::FlowMod),
            MsgType10::PacketOut => malformed(ResponseKind::PacketOut),
            MsgType10::EchoRequest => match v10::EchoView::new_checked(msg) {
                Ok(v) => {
                    v10::encode_echo_reply(out, v.xid(), v.payload());
                    Incoming::Handled
                }
                Err(e) => Incoming::Fatal(format!("bad ECHO_REQUEST: {e}")),
            },
            MsgType10::BarrierRequest => {
                v10::encode_barrier_reply(out, h.xid);
                Incoming::Handled
            }
            _ => match v10::decode(msg) {
                Ok((xid, m)) => match m {
                    M::FeaturesRequest => {
                        M::FeaturesReply(self.features10()).encode(xid, out);
                        self.up = true;
                        Incoming::Up
                    }
                    M::GetConfigRequest => {
                        M::GetConfigReply(v10::SwitchConfig {
                            flags: 0,
                            miss_send_len: self.miss_send_len,
                        })
                        .encode(xid, out);
                        Incoming::Handled
                    }
                    M::SetConfig(c) => {
                        self.miss_send_len = c.miss_send_len;
                        Incoming::Handled
                    }
                    M::StatsRequest(r) => {
                        if let v10::StatsRequestBody::Desc = r.body {
                            M::StatsReply(v10::StatsReply {
                                flags: 0,
                                body: v10::StatsReplyBody::Desc(Box::new(desc10())),
                            })
                            .encode(xid, out);
                        }
                        Incoming::Handled
                    }
                    M::Error(e) => Incoming::PeerError(format!("{e:?}")),
                    _ => Incoming::Handled,
                },
                // Something we would not answer anyway.
                Err(_) => Incoming::Handled,
            },
        }
    }

    fn handle13(&mut self, h: &Header, msg: &[u8], out: &mut Vec<u8>) -> Incoming {
        use v13::Message as M;
        use v13::multipart::{MultipartReply, MultipartReplyBody, MultipartRequestBody};
        match MsgType13::from(h.msg_type) {
            // Well-formed ones were taken by `response`.
            MsgType13::FlowMod => malformed(ResponseKind::FlowMod),
            MsgType13::PacketOut => malformed(ResponseKind::PacketOut),
            MsgType13::EchoRequest => match v13::EchoView::new_checked(msg) {
                Ok(v) => {
                    v13::encode_echo_reply(out, v.xid(), v.payload());
                    Incoming::Handled
                }
                Err(e) => Incoming::Fatal(format!("bad ECHO_REQUEST: {e}")),
            },
            MsgType13::BarrierRequest => {
                v13::encode_barrier_reply(out, h.xid);
                Incoming::Handled
            }
            _ => match v13::decode(msg) {
                Ok((xid, m)) => match m {
                    M::FeaturesRequest => {
                        M::FeaturesReply(v13::SwitchFeatures {
                            datapath_id: self.dpid(),
                            n_buffers: 256,
                            n_tables: 254,
                            auxiliary_id: 0,
                            capabilities: v13::messages::capabilities::FLOW_STATS
                                | v13::messages::capabilities::TABLE_STATS
                                | v13::messages::capabilities::PORT_STATS,
                        })
                        .encode(xid, out);
                        self.up = true;
                        Incoming::Up
                    }
                    M::GetConfigRequest => {
                        M::GetConfigReply(v13::SwitchConfig {
                            flags: 0,
                            miss_send_len: self.miss_send_len,
                        })
                        .encode(xid, out);
                        Incoming::Handled
                    }
                    M::SetConfig(c) => {
                        self.miss_send_len = c.miss_send_len;
                        Incoming::Handled
                    }
                    M::MultipartRequest(r) => {
                        let body = match r.body {
                            MultipartRequestBody::PortDesc => {
                                Some(MultipartReplyBody::PortDesc(self.ports13()))
                            }
                            MultipartRequestBody::Desc => Some(MultipartReplyBody::Desc(desc13())),
                            _ => None,
                        };
                        if let Some(body) = body {
                            M::MultipartReply(MultipartReply { flags: 0, body }).encode(xid, out);
                        }
                        Incoming::Handled
                    }
                    M::RoleRequest(r) => {
                        M::RoleReply(r).encode(xid, out);
                        Incoming::Handled
                    }
                    M::Error(e) => Incoming::PeerError(format!("{e:?}")),
                    _ => Incoming::Handled,
                },
                Err(_) => Incoming::Handled,
            },
        }
    }

    fn port_mac(&self, port: u16) -> MacAddr {
        let mut m = host_mac(self.index, 0);
        m.0[3] = 0xfe;
        m.0[4] = 0;
        m.0[5] = port as u8;
        m
    }

    fn features10(&self) -> v10::SwitchFeatures {
        use v10::messages::capabilities as cap;
        v10::SwitchFeatures {
            datapath_id: self.dpid(),
            n_buffers: 256,
            n_tables: 1,
            capabilities: cap::FLOW_STATS | cap::TABLE_STATS | cap::PORT_STATS,
            // OUTPUT through ENQUEUE (OFPAT_* 0..=11).
            actions: 0xfff,
            ports: (1..=PORTS)
                .map(|p| v10::PhyPort {
                    port_no: PortNo(p as u32),
                    hw_addr: self.port_mac(p),
                    name: port_name(self.index, p),
                    config: 0,
                    state: 0,
                    curr: v10::port::features::F_1GB_FD,
                    advertised: 0,
                    supported: 0,
                    peer: 0,
                })
                .collect(),
        }
    }

    fn ports13(&self) -> Vec<v13::Port> {
        (1..=PORTS)
            .map(|p| v13::Port {
                port_no: PortNo(p as u32),
                hw_addr: self.port_mac(p),
                name: port_name(self.index, p),
                config: 0,
                state: 0,
                curr: v13::port::port_features::F_1GB_FD,
                advertised: 0,
                supported: 0,
                peer: 0,
                curr_speed: 1_000_000,
                max_speed: 1_000_000,
            })
            .collect()
    }
}

fn port_name(index: usize, port: u16) -> String {
    format!("s{}-eth{}", index + 1, port)
}

fn desc10() -> v10::stats::DescStats {
    v10::stats::DescStats {
        mfr_desc: "baton".into(),
        hw_desc: "baton-bench emulated switch".into(),
        sw_desc: env!("CARGO_PKG_VERSION").into(),
        serial_num: "0".into(),
        dp_desc: "baton-bench".into(),
    }
}

fn desc13() -> v13::multipart::Desc {
    v13::multipart::Desc {
        mfr_desc: "baton".into(),
        hw_desc: "baton-bench emulated switch".into(),
        sw_desc: env!("CARGO_PKG_VERSION").into(),
        serial_num: "0".into(),
        dp_desc: "baton-bench".into(),
    }
}

#[inline]
fn flow_mod(counted: bool, buffer_id: BufferId) -> Incoming {
    if counted {
        Incoming::Response {
            kind: ResponseKind::FlowMod,
            buffer_id: buffer_id.get(),
            malformed: false,
        }
    } else {
        Incoming::Uncounted
    }
}

#[inline]
fn packet_out(buffer_id: BufferId, data: &[u8]) -> Incoming {
    if crate::frames::is_lldp(data) {
        Incoming::Uncounted
    } else {
        Incoming::Response {
            kind: ResponseKind::PacketOut,
            buffer_id: buffer_id.get(),
            malformed: false,
        }
    }
}

fn malformed(kind: ResponseKind) -> Incoming {
    Incoming::Response {
        kind,
        buffer_id: None,
        malformed: true,
    }
}

#[cfg(test)]
mod tests;
