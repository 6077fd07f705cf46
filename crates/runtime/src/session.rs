//! One switch's OpenFlow session, with no I/O: the handshake (HELLO and
//! version negotiation, FEATURES, SET_CONFIG and, on 1.3, the table-miss
//! flow and the port description), the switch's ports kept current from
//! PORT_STATUS, echo keepalive and dead-switch detection, error replies,
//! and the phase the connection is in.
//!
//! The shape is quinn-proto's `Connection` (see `shared/STYLE.md`): bytes
//! and time go in ([`Session::handle`] with one whole message and the
//! current time; [`Session::poll_timeout`] with the current time), events
//! come out ([`Event`]), and every reply is appended to a buffer the
//! caller owns. The session never reads a clock or touches a socket, so
//! its tests feed it byte slices and a made-up time.
//!
//! Dispatch goes through the codec's message table
//! ([`MsgKind`]), not raw type numbers, and each PACKET_IN is checked
//! and read once, here ([`Event::PacketIn`] carries the parsed fields).

use baton_openflow::hello::{Hello, negotiate};
use baton_openflow::neutral::{self, Message, PacketIn, PortDesc};
use baton_openflow::types::PortReason;
use baton_openflow::v13::multipart::MultipartReplyBody;
use baton_openflow::{
    DatapathId, DecodeError, ErrorCode, ErrorKind, MsgKind, PortNo, Version, Xid,
};
use baton_openflow::{v10, v13};
use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

/// The versions baton offers in its HELLO, lowest first.
pub const VERSIONS: [Version; 2] = [Version::V10, Version::V13];

/// The payload of baton's ECHO_REQUESTs.
const ECHO_PAYLOAD: &[u8] = b"baton";

/// How many bytes of an offending message an ERROR carries back (the
/// specs ask for at least 64: 1.0.0 §5.4.4, 1.3.5 §7.4.4).
const ERROR_DATA_LEN: usize = 64;

/// What the session needs to know from the controller's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionConfig {
    /// Send ECHO_REQUEST after this long without hearing from the switch.
    pub echo_interval: Duration,
    /// Give up on a switch silent for this long (this also bounds the
    /// handshake).
    pub echo_timeout: Duration,
    /// `miss_send_len` for SET_CONFIG.
    pub miss_send_len: u16,
    /// Install the OpenFlow 1.3 table-miss flow (send to controller) at
    /// connect; without it Open vSwitch sends no PACKET_IN.
    pub table_miss_13: bool,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            echo_interval: Duration::from_secs(5),
            echo_timeout: Duration::from_secs(15),
            miss_send_len: 128,
            table_miss_13: true,
        }
    }
}

/// Where the connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Our HELLO is sent; waiting for the switch's.
    AwaitHello,
    /// FEATURES_REQUEST sent; waiting for the reply.
    AwaitFeatures,
    /// Handshake done: applications see this switch.
    Up,
    /// The session ended; nothing more is handled.
    Closed,
}

/// What the switch told us in FEATURES_REPLY (1.0.0 §5.3.1, 1.3.5 §7.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// The datapath id.
    pub dpid: DatapathId,
    /// Packets the switch can buffer at once.
    pub n_buffers: u32,
    /// Flow tables.
    pub n_tables: u8,
    /// `OFPC_*` capability bits.
    pub capabilities: u32,
    /// 1.3: 0 for the main connection, else an auxiliary connection's id.
    pub auxiliary_id: u8,
}

/// Why the session (or the controller) ends a connection. The
/// transport's failures (read and write errors, TLS, an output backlog
/// past the limit) are the runtime's own type, joined with these where a
/// switch is closed and counted; both kinds share one set of labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// The switch closed the connection.
    PeerClosed,
    /// A length field the stream cannot be framed past.
    Unframeable(DecodeError),
    /// The first message was not a HELLO.
    NotHello {
        /// Its type number.
        msg_type: u8,
    },
    /// The switch speaks no version baton speaks (HELLO_FAILED was sent).
    Incompatible {
        /// The switch's HELLO header version.
        peer_version: u8,
    },
    /// FEATURES_REPLY could not be decoded.
    BadFeatures(DecodeError),
    /// Nothing heard for the echo timeout (keepalive, or a handshake that
    /// never finished).
    Silent {
        /// How long.
        for_: Duration,
    },
    /// The same datapath connected again; this older connection goes.
    Replaced,
    /// The controller is stopping.
    Stopping,
}

impl CloseReason {
    /// A short label for counting closes by reason (metrics):
    /// `peer_closed`, `silent`, ...
    pub fn label(&self) -> &'static str {
        match self {
            CloseReason::PeerClosed => "peer_closed",
            CloseReason::Unframeable(_) => "unframeable",
            CloseReason::NotHello { .. } => "not_hello",
            CloseReason::Incompatible { .. } => "incompatible",
            CloseReason::BadFeatures(_) => "bad_features",
            CloseReason::Silent { .. } => "silent",
            CloseReason::Replaced => "replaced",
            CloseReason::Stopping => "stopping",
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::PeerClosed => f.write_str("connection closed by the switch"),
            CloseReason::Unframeable(e) => write!(f, "unrecoverable framing error: {e}"),
            CloseReason::NotHello { msg_type } => {
                write!(f, "first message was type {msg_type}, not HELLO")
            }
            CloseReason::Incompatible { peer_version } => write!(
                f,
                "no common OpenFlow version (the switch's highest is 0x{peer_version:02x})"
            ),
            CloseReason::BadFeatures(e) => write!(f, "malformed FEATURES_REPLY: {e}"),
            CloseReason::Silent { for_ } => {
                write!(
                    f,
                    "silent for {} ms, past the echo timeout",
                    for_.as_millis()
                )
            }
            CloseReason::Replaced => f.write_str("the datapath connected again"),
            CloseReason::Stopping => f.write_str("controller stopping"),
        }
    }
}

/// A port that became able to carry traffic, or stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortChange {
    /// The port is live ([`PortDesc::is_live`]): new, or back up.
    Up(PortDesc),
    /// The port is no longer live, or was removed.
    Down(PortDesc),
}

/// What one message or one timeout produced.
#[derive(Debug)]
pub enum Event<'a> {
    /// Handled by the session (a handshake step, an echo, an error reply),
    /// or nothing to do.
    Nothing,
    /// The handshake finished: [`Session::features`] has the switch's
    /// features, and applications may use the switch.
    SwitchUp,
    /// A checked PACKET_IN, its fields read once.
    PacketIn(PacketIn<'a>),
    /// Ports went up or down (the 1.3 port description, PORT_STATUS).
    /// [`Session::ports`] is already current.
    Ports(Vec<PortChange>),
    /// Any other message after the handshake, decoded, with its xid.
    Message {
        /// The message's transaction id.
        xid: Xid,
        /// The message.
        msg: Message,
    },
    /// The connection must be closed.
    Close(CloseReason),
}

/// The protocol state of one switch connection.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    phase: Phase,
    version: Version,
    features: Option<Features>,
    ports: BTreeMap<PortNo, PortDesc>,
    /// The xid of the 1.3 port description request, until its last reply.
    port_desc_xid: Option<Xid>,
    /// The ports changed since [`Session::take_ports_changed`] last said.
    ports_changed: bool,
    next_xid: u32,
    last_heard: Instant,
    echo_sent: Option<Instant>,
}

impl Session {
    /// A new connection at `now`: appends baton's HELLO (1.3.5 §6.3.1:
    /// header version our highest, with a bitmap of every version we
    /// speak) to `out`.
    pub fn new(config: SessionConfig, now: Instant, out: &mut Vec<u8>) -> Session {
        let highest = VERSIONS[VERSIONS.len() - 1];
        neutral::encode_hello(out, highest, Xid(0));
        Session {
            config,
            phase: Phase::AwaitHello,
            version: Version::V10,
            features: None,
            ports: BTreeMap::new(),
            port_desc_xid: None,
            ports_changed: false,
            next_xid: 0,
            last_heard: now,
            echo_sent: None,
        }
    }

    /// Where the connection stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The negotiated version (1.0 until the HELLOs are exchanged).
    pub fn version(&self) -> Version {
        self.version
    }

    /// The switch's features, once the handshake finished.
    pub fn features(&self) -> Option<&Features> {
        self.features.as_ref()
    }

    /// The datapath id, once the handshake finished (0 before).
    pub fn dpid(&self) -> DatapathId {
        self.features.map_or(DatapathId(0), |f| f.dpid)
    }

    /// The switch's ports, by number, as last described (1.0: from
    /// FEATURES_REPLY; 1.3: from the port description requested after it),
    /// kept current from PORT_STATUS.
    pub fn ports(&self) -> impl Iterator<Item = &PortDesc> {
        self.ports.values()
    }

    /// Whether the ports changed since the last call.
    pub fn take_ports_changed(&mut self) -> bool {
        std::mem::take(&mut self.ports_changed)
    }

    /// One port, if the switch has it.
    pub fn port(&self, no: PortNo) -> Option<&PortDesc> {
        self.ports.get(&no)
    }

    /// A fresh transaction id for a message to this switch.
    pub fn next_xid(&mut self) -> Xid {
        self.next_xid = self.next_xid.wrapping_add(1);
        Xid(self.next_xid)
    }

    /// Marks the session closed (the caller is closing the connection).
    pub fn close(&mut self) {
        self.phase = Phase::Closed;
    }

    /// Handles one whole message (as framing delimits it) received at
    /// `now`; replies go to `out`. A PACKET_IN the fast way takes
    /// ([`Session::packet_in`]) is read there; everything else, a
    /// malformed PACKET_IN included, goes the general way
    /// (`Session::handle_any`).
    #[inline]
    pub fn handle<'a>(&mut self, msg: &'a [u8], now: Instant, out: &mut Vec<u8>) -> Event<'a> {
        match self.packet_in(msg, now) {
            Some(pi) => Event::PacketIn(pi),
            None => self.handle_any(msg, now, out),
        }
    }

    /// The fast way: a well-formed PACKET_IN of a switch that is up,
    /// nearly every message under load, read as the batch frames it
    /// (`batch.rs`), inlined into the caller so that its fields reach the
    /// batch's record in registers. Returned through memory from a call,
    /// they were stored field by field and loaded back 16 bytes at a time,
    /// which the CPU cannot forward from its store buffer: the wait was
    /// half of [`Session::handle`]'s time under cbench (`perf record -e
    /// cpu-clock`). `None` for anything else: it needs
    /// [`Session::handle`], which this has not touched.
    #[inline(always)]
    pub fn packet_in<'a>(&mut self, msg: &'a [u8], now: Instant) -> Option<PacketIn<'a>> {
        if let [wire_version, msg_type, ..] = *msg
            && self.phase == Phase::Up
            && wire_version == self.version.wire()
            && MsgKind::of(self.version, msg_type) == MsgKind::PacketIn
            && let Ok(pi) = PacketIn::parse(msg)
        {
            self.last_heard = now;
            self.echo_sent = None;
            return Some(pi);
        }
        None
    }

    /// [`Session::handle`]'s general way: any message, in any phase.
    #[inline(never)]
    fn handle_any<'a>(&mut self, msg: &'a [u8], now: Instant, out: &mut Vec<u8>) -> Event<'a> {
        if self.phase == Phase::Closed {
            return Event::Nothing;
        }
        self.last_heard = now;
        self.echo_sent = None;
        // Framing guarantees the 8-byte header.
        let [wire_version, msg_type, _, _, x0, x1, x2, x3, ..] = *msg else {
            return Event::Nothing;
        };
        let xid = Xid(u32::from_be_bytes([x0, x1, x2, x3]));
        if self.phase == Phase::AwaitHello {
            return self.on_hello(msg, wire_version, msg_type, xid, out);
        }
        if wire_version != self.version.wire() {
            let e = DecodeError::new(ErrorKind::BadVersion(wire_version), 0, "ofp_header.version");
            self.reply_error(msg, xid, e.reply(self.version), out);
            return Event::Nothing;
        }
        match (MsgKind::of(self.version, msg_type), self.phase) {
            (MsgKind::PacketIn, Phase::Up) => match PacketIn::parse(msg) {
                Ok(pi) => Event::PacketIn(pi),
                Err(e) => {
                    tracing::debug!(error = %e, "malformed PACKET_IN");
                    self.reply_error(msg, xid, e.reply(self.version), out);
                    Event::Nothing
                }
            },
            (MsgKind::EchoRequest, _) => {
                neutral::encode_echo_reply(out, self.version, xid, msg.get(8..).unwrap_or(&[]));
                Event::Nothing
            }
            // The reply itself is proof of life (recorded above); a
            // second HELLO needs nothing.
            (MsgKind::EchoReply | MsgKind::Hello, _) => Event::Nothing,
            (MsgKind::FeaturesReply, Phase::AwaitFeatures) => self.on_features(msg, out),
            (_, Phase::Up) => match Message::decode(msg) {
                Ok((xid, m)) => self.on_message(xid, m),
                Err(e) => {
                    tracing::debug!(error = %e, "malformed message");
                    self.reply_error(msg, xid, e.reply(self.version), out);
                    Event::Nothing
                }
            },
            (kind, phase) => {
                tracing::debug!(
                    ?kind,
                    ?phase,
                    "message before the handshake finished; ignored"
                );
                Event::Nothing
            }
        }
    }

    fn on_hello<'a>(
        &mut self,
        msg: &[u8],
        peer_version: u8,
        msg_type: u8,
        xid: Xid,
        out: &mut Vec<u8>,
    ) -> Event<'a> {
        if msg_type != 0 {
            self.phase = Phase::Closed;
            return Event::Close(CloseReason::NotHello { msg_type });
        }
        // 1.3.5 §7.5.1: a HELLO body that is not a list of elements is
        // ignored, as if empty.
        let hello = Hello::decode_body(msg.get(8..).unwrap_or(&[]), 8).unwrap_or_default();
        match negotiate(&VERSIONS, peer_version, &hello) {
            Ok(v) => {
                self.version = v;
                self.phase = Phase::AwaitFeatures;
                let xid = self.next_xid();
                neutral::encode_features_request(out, v, xid);
                Event::Nothing
            }
            Err(e) => {
                // OFPET_HELLO_FAILED / OFPHFC_INCOMPATIBLE, in a version the
                // peer can read, with the reason in ASCII.
                let v = if peer_version >= Version::V13.wire() {
                    Version::V13
                } else {
                    Version::V10
                };
                neutral::encode_error(out, v, xid, ErrorCode::new(0, 0), e.to_string().as_bytes());
                self.phase = Phase::Closed;
                Event::Close(CloseReason::Incompatible { peer_version })
            }
        }
    }

    fn on_features<'a>(&mut self, msg: &[u8], out: &mut Vec<u8>) -> Event<'a> {
        let features = match Message::decode(msg) {
            Ok((_, Message::V10(v10::Message::FeaturesReply(f)))) => {
                self.ports = f
                    .ports
                    .iter()
                    .map(|p| (p.port_no, PortDesc::from(p)))
                    .collect();
                self.ports_changed = true;
                Features {
                    dpid: f.datapath_id,
                    n_buffers: f.n_buffers,
                    n_tables: f.n_tables,
                    capabilities: f.capabilities,
                    auxiliary_id: 0,
                }
            }
            Ok((_, Message::V13(v13::Message::FeaturesReply(f)))) => Features {
                dpid: f.datapath_id,
                n_buffers: f.n_buffers,
                n_tables: f.n_tables,
                capabilities: f.capabilities,
                auxiliary_id: f.auxiliary_id,
            },
            // The message table said FEATURES_REPLY; the decoder cannot
            // disagree, but a mismatch is no reason to panic.
            Ok(_) => return Event::Nothing,
            Err(e) => {
                self.phase = Phase::Closed;
                return Event::Close(CloseReason::BadFeatures(e));
            }
        };
        self.features = Some(features);
        self.phase = Phase::Up;
        let xid = self.next_xid();
        neutral::encode_set_config(out, self.version, xid, self.config.miss_send_len);
        if self.version == Version::V13 {
            if self.config.table_miss_13 {
                let xid = self.next_xid();
                neutral::encode_table_miss(out, xid);
            }
            // 1.3 lists no ports in FEATURES_REPLY; the handshake does not
            // wait for them (1.3.5 §7.3.5.7).
            let xid = self.next_xid();
            neutral::encode_port_desc_request(out, self.version, xid);
            self.port_desc_xid = Some(xid);
        }
        Event::SwitchUp
    }

    /// A decoded message after the handshake: port news are the session's
    /// own; the rest goes to applications.
    fn on_message<'a>(&mut self, xid: Xid, m: Message) -> Event<'a> {
        match m {
            Message::V10(v10::Message::PortStatus(ps)) => {
                self.port_status(ps.reason, PortDesc::from(&ps.desc))
            }
            Message::V13(v13::Message::PortStatus(ps)) => {
                self.port_status(ps.reason, PortDesc::from(&ps.desc))
            }
            Message::V13(v13::Message::MultipartReply(r))
                if self.port_desc_xid == Some(xid)
                    && matches!(r.body, MultipartReplyBody::PortDesc(_)) =>
            {
                if !r.more() {
                    self.port_desc_xid = None;
                }
                let MultipartReplyBody::PortDesc(ports) = r.body else {
                    return Event::Nothing;
                };
                let changes: Vec<PortChange> = ports
                    .iter()
                    .filter_map(|p| self.update_port(PortDesc::from(p)))
                    .collect();
                if changes.is_empty() {
                    Event::Nothing
                } else {
                    Event::Ports(changes)
                }
            }
            msg => Event::Message { xid, msg },
        }
    }

    fn port_status<'a>(&mut self, reason: PortReason, desc: PortDesc) -> Event<'a> {
        let change = match reason {
            PortReason::Delete => {
                self.ports_changed = true;
                self.ports
                    .remove(&desc.no)
                    .filter(PortDesc::is_live)
                    .map(|_| PortChange::Down(desc))
            }
            _ => self.update_port(desc),
        };
        match change {
            Some(c) => Event::Ports(vec![c]),
            None => Event::Nothing,
        }
    }

    /// Records a port's description; returns the change in liveness, if
    /// any.
    fn update_port(&mut self, desc: PortDesc) -> Option<PortChange> {
        let was_live = self.ports.get(&desc.no).is_some_and(PortDesc::is_live);
        let live = desc.is_live();
        self.ports.insert(desc.no, desc.clone());
        self.ports_changed = true;
        match (was_live, live) {
            (false, true) => Some(PortChange::Up(desc)),
            (true, false) => Some(PortChange::Down(desc)),
            _ => None,
        }
    }

    fn reply_error(&self, msg: &[u8], xid: Xid, code: ErrorCode, out: &mut Vec<u8>) {
        let data = &msg[..msg.len().min(ERROR_DATA_LEN)];
        neutral::encode_error(out, self.version, xid, code, data);
    }

    /// Keepalive at `now`: once the switch has been quiet for the echo
    /// interval, appends one ECHO_REQUEST to `out`; once it has been
    /// silent for the echo timeout (or never finished its handshake),
    /// says the connection must close.
    pub fn poll_timeout(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<CloseReason> {
        if self.phase == Phase::Closed {
            return None;
        }
        let silent = now.saturating_duration_since(self.last_heard);
        if silent >= self.config.echo_timeout {
            self.phase = Phase::Closed;
            return Some(CloseReason::Silent { for_: silent });
        }
        if self.phase == Phase::Up
            && self.echo_sent.is_none()
            && silent >= self.config.echo_interval
        {
            let xid = self.next_xid();
            neutral::encode_echo_request(out, self.version, xid, ECHO_PAYLOAD);
            self.echo_sent = Some(now);
        }
        None
    }

    /// When [`Session::poll_timeout`] next has something to do, if nothing
    /// is heard before then.
    pub fn next_timeout(&self) -> Instant {
        if self.phase == Phase::Up && self.echo_sent.is_none() {
            self.last_heard + self.config.echo_interval
        } else {
            self.last_heard + self.config.echo_timeout
        }
    }
}

#[cfg(test)]
mod tests;
