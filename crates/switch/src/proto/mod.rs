//! The switch's side of one controller connection, without sockets:
//! bytes and time in, bytes and events out (the shape of quinn-proto's
//! `Connection`).
//!
//! A [`Connection`] sends its HELLO at once, negotiates the switch's one
//! version (1.3.5 §6.3.1; a peer without it gets `OFPHFC_INCOMPATIBLE`
//! and the connection closes), then decodes each framed message with the
//! codec and hands it to [`v10`] or [`v13`], which apply it to the
//! [`Switch`] and append replies. A message that does not decode is
//! answered with the error the codec names; a request the switch refuses
//! with the [`OfError`] the spec names; nothing closes the connection but
//! a broken framing, a failed handshake or silence: after
//! [`Keepalive::interval`] without input an ECHO_REQUEST goes out, and
//! after [`Keepalive::timeout`] more the connection is closed.
//!
//! The driver moves bytes: [`Connection::handle_input`] with what the
//! socket read, [`Connection::output`] / [`Connection::consume_output`]
//! for what to write, [`Connection::handle_timeout`] at
//! [`Connection::poll_timeout`], and [`Connection::deliver`] for each of
//! the switch's [`Event`]s.
//!
//! A connection accepted on a passive listener is a *service* connection
//! ([`Connection::into_service`]): tools such as `ovs-ofctl` open one per
//! command and read only their own replies, so it receives no
//! asynchronous message until it asks with a SET_CONFIG carrying a
//! nonzero `miss_send_len` or (1.3) a SET_ASYNC, the rule of Open
//! vSwitch's DESIGN, "Asynchronous Messages".

mod features13;
mod multipart13;
pub mod v10;
pub mod v13;

use crate::datapath::{Event, Transmit};
use crate::error::OfError;
use crate::roles::{ControllerId, Role};
use crate::switch::Switch;
use baton_openflow::Version;
use baton_openflow::error::ErrorCode;
use baton_openflow::header::{HEADER_LEN, Header};
use baton_openflow::hello::{Hello, negotiate};
use baton_openflow::types::Xid;
use baton_openflow::v13::AsyncConfig;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Echo keepalive settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Silence before an ECHO_REQUEST is sent (Open vSwitch's
    /// `inactivity_probe` default is 5 s).
    pub interval: Duration,
    /// Further silence before the connection is closed.
    pub timeout: Duration,
}

impl Default for Keepalive {
    fn default() -> Self {
        Keepalive {
            interval: Duration::from_secs(5),
            timeout: Duration::from_secs(5),
        }
    }
}

/// Why a connection closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer speaks no version the switch speaks.
    Incompatible {
        /// The peer's HELLO version.
        peer_version: u8,
    },
    /// The first message was not a HELLO.
    NoHello,
    /// A length field below 8: the stream cannot be framed.
    BadFraming,
    /// No answer to the echo probe.
    EchoTimeout,
    /// Closed by the driver (the peer hung up, or the switch stops).
    Local,
}

impl std::fmt::Display for CloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CloseReason::Incompatible { peer_version } => {
                write!(
                    f,
                    "no common OpenFlow version (peer offers 0x{peer_version:02x})"
                )
            }
            CloseReason::NoHello => f.write_str("first message was not HELLO"),
            CloseReason::BadFraming => f.write_str("unframeable stream"),
            CloseReason::EchoTimeout => f.write_str("controller silent (echo timeout)"),
            CloseReason::Local => f.write_str("closed"),
        }
    }
}

/// What happened on a connection, for the driver to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnEvent {
    /// The handshake finished.
    Connected(Version),
    /// The connection closed; the driver should drop the socket.
    Closed(CloseReason),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Hello,
    Ready,
    Closed,
}

/// Asynchronous messages a 1.3 controller receives by default, per role
/// index (0: master or equal, 1: slave), as Open vSwitch sets them:
/// packet-ins for no-match and action, every port status, every
/// flow-removed; slaves only port status (1.3.5 §6.1.1).
pub const DEFAULT_ASYNC: AsyncConfig = AsyncConfig {
    packet_in_mask: [0b011, 0],
    port_status_mask: [0b111, 0b111],
    flow_removed_mask: [0b1111, 0],
};

/// One controller connection's protocol state.
#[derive(Debug)]
pub struct Connection {
    id: ControllerId,
    version: Version,
    state: State,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    keepalive: Keepalive,
    last_rx: Instant,
    probe_sent: Option<Instant>,
    next_xid: u32,
    async_config: AsyncConfig,
    /// Accepted on a passive listener (see the module doc).
    service: bool,
    /// A service connection that has not asked for asynchronous messages.
    quiet: bool,
    events: VecDeque<ConnEvent>,
}

impl Connection {
    /// A new connection to `sw`: registers it (as an EQUAL controller)
    /// and queues the HELLO.
    pub fn new(sw: &mut Switch, now: Instant) -> Connection {
        Connection::with_keepalive(sw, now, Keepalive::default())
    }

    /// A new connection with keepalive settings.
    pub fn with_keepalive(sw: &mut Switch, now: Instant, keepalive: Keepalive) -> Connection {
        let version = sw.version();
        let mut c = Connection {
            id: sw.roles.register(),
            version,
            state: State::Hello,
            inbuf: Vec::new(),
            out: Vec::with_capacity(4096),
            keepalive,
            last_rx: now,
            probe_sent: None,
            next_xid: 1,
            async_config: DEFAULT_ASYNC,
            service: false,
            quiet: false,
            events: VecDeque::new(),
        };
        // Offer only the switch's version (bitmap and header).
        let hello = Hello {
            elements: vec![baton_openflow::hello::HelloElement::VersionBitmap(vec![
                baton_openflow::hello::bitmap_of(&[version]),
            ])],
        };
        let xid = c.xid();
        hello.encode(version, xid, &mut c.out);
        c
    }

    /// The same connection as a service connection: no asynchronous
    /// messages until it asks for them (see the module doc).
    pub fn into_service(mut self) -> Connection {
        self.service = true;
        self.quiet = true;
        self
    }

    /// A SET_CONFIG arrived: a service connection receives asynchronous
    /// messages while its `miss_send_len` is nonzero.
    pub(crate) fn config_set(&mut self, miss_send_len: u16) {
        if self.service {
            self.quiet = miss_send_len == 0;
        }
    }

    /// A SET_ASYNC arrived: its masks apply from now on, also to a
    /// service connection.
    pub(crate) fn async_set(&mut self, config: AsyncConfig) {
        self.async_config = config;
        self.quiet = false;
    }

    /// Its handle with the switch.
    pub fn id(&self) -> ControllerId {
        self.id
    }

    /// The negotiated version, once the handshake is done.
    pub fn version(&self) -> Option<Version> {
        (self.state == State::Ready).then_some(self.version)
    }

    /// True once closed.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Bytes waiting to be written.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// The first `n` bytes of [`Connection::output`] were written.
    pub fn consume_output(&mut self, n: usize) {
        let n = n.min(self.out.len());
        self.out.drain(..n);
    }

    /// Takes every byte waiting to be written.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// The next thing to log.
    pub fn poll_event(&mut self) -> Option<ConnEvent> {
        self.events.pop_front()
    }

    /// Closes the connection (the driver's socket went away, or the
    /// switch stops) and unregisters it from the switch.
    pub fn close(&mut self, sw: &mut Switch) {
        self.close_with(CloseReason::Local);
        sw.roles.unregister(self.id);
    }

    fn close_with(&mut self, reason: CloseReason) {
        if self.state != State::Closed {
            self.state = State::Closed;
            self.events.push_back(ConnEvent::Closed(reason));
        }
    }

    fn xid(&mut self) -> Xid {
        let x = Xid(self.next_xid);
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        x
    }

    /// The controller's role (1.3; always EQUAL in 1.0).
    pub fn role(&self, sw: &Switch) -> Role {
        sw.roles.role(self.id)
    }

    /// Feeds bytes read from the socket.
    pub fn handle_input(
        &mut self,
        sw: &mut Switch,
        now: Instant,
        data: &[u8],
        tx: &mut dyn Transmit,
    ) {
        if self.state == State::Closed {
            return;
        }
        self.last_rx = now;
        self.probe_sent = None;
        let mut buf = std::mem::take(&mut self.inbuf);
        buf.extend_from_slice(data);
        let mut at = 0;
        while self.state != State::Closed {
            match baton_openflow::frame(&buf[at..]) {
                Ok(Some(len)) => {
                    self.handle_message(sw, now, &buf[at..at + len], tx);
                    at += len;
                }
                Ok(None) => break,
                Err(_) => {
                    self.close_with(CloseReason::BadFraming);
                    break;
                }
            }
        }
        buf.drain(..at);
        self.inbuf = buf;
    }

    fn handle_message(&mut self, sw: &mut Switch, now: Instant, msg: &[u8], tx: &mut dyn Transmit) {
        // frame() guarantees at least the header.
        let Ok(h) = Header::parse(msg) else { return };
        if self.state == State::Hello {
            if h.msg_type != 0 {
                self.close_with(CloseReason::NoHello);
                return;
            }
            let peer = Hello::decode_body(&msg[HEADER_LEN..], HEADER_LEN).unwrap_or_default();
            match negotiate(&[self.version], h.version, &peer) {
                Ok(_) => {
                    self.state = State::Ready;
                    self.events.push_back(ConnEvent::Connected(self.version));
                }
                Err(e) => {
                    let text = format!("{e}; this switch speaks {}", self.version);
                    self.send_error(
                        OfError::HelloIncompatible.code(self.version),
                        h.xid,
                        text.as_bytes(),
                    );
                    self.close_with(CloseReason::Incompatible {
                        peer_version: h.version,
                    });
                }
            }
            return;
        }
        match self.version {
            Version::V10 => v10::handle(self, sw, now, h.xid, msg, tx),
            Version::V13 => v13::handle(self, sw, now, h.xid, msg, tx),
        }
    }

    /// Appends a message of the connection's version.
    pub(crate) fn send(&mut self, xid: Xid, m: &impl Outgoing) {
        m.encode_into(xid, &mut self.out);
    }

    /// Appends an OFPT_ERROR with `code` and the start of `offending`
    /// (at most 64 bytes, 1.3.5 §7.4.4).
    pub(crate) fn send_error(&mut self, code: ErrorCode, xid: Xid, offending: &[u8]) {
        let data = offending[..offending.len().min(64)].to_vec();
        match self.version {
            Version::V10 => baton_openflow::v10::Message::Error(baton_openflow::v10::ErrorMsg {
                error_type: code.error_type,
                code: code.code,
                data,
            })
            .encode(xid, &mut self.out),
            Version::V13 => {
                baton_openflow::v13::Message::Error(baton_openflow::v13::ErrorMsg::Standard {
                    error_type: code.error_type.into(),
                    code: code.code,
                    data,
                })
                .encode(xid, &mut self.out)
            }
        }
    }

    /// When [`Connection::handle_timeout`] must next run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        Some(match self.probe_sent {
            None => self.last_rx + self.keepalive.interval,
            Some(t) => t + self.keepalive.timeout,
        })
    }

    /// Sends the echo probe or gives up on a silent controller.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        match self.probe_sent {
            None if now >= self.last_rx + self.keepalive.interval => {
                let xid = self.xid();
                match self.version {
                    Version::V10 => baton_openflow::v10::Message::EchoRequest(Vec::new())
                        .encode(xid, &mut self.out),
                    Version::V13 => baton_openflow::v13::Message::EchoRequest(Vec::new())
                        .encode(xid, &mut self.out),
                }
                self.probe_sent = Some(now);
            }
            Some(t) if now >= t + self.keepalive.timeout => {
                self.close_with(CloseReason::EchoTimeout);
            }
            _ => {}
        }
    }

    /// Encodes one of the switch's events for this controller, if its
    /// role and asynchronous configuration want it.
    pub fn deliver(&mut self, sw: &Switch, ev: &Event) {
        if self.state != State::Ready || self.quiet {
            return;
        }
        let xid = self.xid();
        match self.version {
            Version::V10 => v10::deliver(self, ev, xid),
            Version::V13 => {
                let slave = usize::from(self.role(sw) == Role::Slave);
                v13::deliver(self, ev, xid, slave);
            }
        }
    }
}

/// Body bytes a statistics / multipart reply may carry before the rest
/// goes in another message flagged "more" (the 16-bit length, less the
/// 1.3 multipart header).
pub(crate) const MAX_REPLY_BODY: usize = 65_535 - 16;

/// Splits `items` into runs whose lengths (by `len`) fit one reply; at
/// least one run, maybe empty.
pub(crate) fn split<T>(items: Vec<T>, mut len: impl FnMut(&T) -> usize) -> Vec<Vec<T>> {
    let mut out = vec![Vec::new()];
    let mut used = 0;
    for it in items {
        let l = len(&it);
        if used + l > MAX_REPLY_BODY && !out.last().is_some_and(Vec::is_empty) {
            out.push(Vec::new());
            used = 0;
        }
        used += l;
        if let Some(last) = out.last_mut() {
            last.push(it);
        }
    }
    out
}

/// The message in `msg` as the version's `decode` reads it, or `None`
/// after the ERROR reply that says why not has been queued on `c`.
fn decoded<M>(
    c: &mut Connection,
    version: Version,
    decode: impl FnOnce(&[u8]) -> Result<(Xid, M), baton_openflow::DecodeError>,
    xid: Xid,
    msg: &[u8],
) -> Option<M> {
    match decode(msg) {
        Ok((_, m)) => Some(m),
        Err(e) => {
            c.send_error(e.reply(version), xid, msg);
            None
        }
    }
}

/// The flow table's command for a FLOW_MOD's `command`, which 1.0 and 1.3
/// number alike (1.0.0 §5.3.3, 1.3.5 §7.3.4.1) in enums of their own;
/// `OFPFMFC_BAD_COMMAND` for a number neither defines.
macro_rules! flow_mod_command {
    ($command:expr, $enum:ident) => {
        match $command {
            $enum::Add => Command::Add,
            $enum::Modify => Command::Modify,
            $enum::ModifyStrict => Command::ModifyStrict,
            $enum::Delete => Command::Delete,
            $enum::DeleteStrict => Command::DeleteStrict,
            $enum::Unknown(_) => return Err(OfError::BadFlowModCommand),
        }
    };
}
use flow_mod_command;

/// A message of either version, as [`Connection::send`] appends it.
pub(crate) trait Outgoing {
    fn encode_into(&self, xid: Xid, out: &mut Vec<u8>);
}

impl Outgoing for baton_openflow::v10::Message {
    fn encode_into(&self, xid: Xid, out: &mut Vec<u8>) {
        self.encode(xid, out);
    }
}

impl Outgoing for baton_openflow::v13::Message {
    fn encode_into(&self, xid: Xid, out: &mut Vec<u8>) {
        self.encode(xid, out);
    }
}
