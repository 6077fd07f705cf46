//! A version-independent view of what applications need most, so an
//! application is written once and runs against OpenFlow 1.0 and 1.3.
//!
//! Like Beacon's and Maestro's applications (learning switch, hub,
//! routing), most controller logic needs only: a received packet-in
//! ([`PacketIn`]) and its header fields ([`FlowKey`]); "install this match
//! -> these actions" ([`FlowSpec`], [`encode_flow_add`]); "send this packet
//! out" ([`encode_packet_out`]); and the handshake and liveness messages.
//! This module gives those, dispatching on the connection's [`Version`] to
//! the per-version views and encoders of [`crate::v10`] and
//! [`crate::v13`] (it writes no wire structure of its own).
//!
//! [`ActionSpec`] and [`MatchSpec`] hold only what both versions can
//! express with the same meaning. Everything else (groups, meters,
//! multiple tables, IPv6 rewrites, ...) goes through the version modules.
//!
//! Every encoder appends to a caller-owned `out` and, once `out` has grown
//! to its working size, allocates nothing, except [`encode_hello`]
//! (connection setup only) and [`encode_error`] (off the hot path).

mod matching;

pub use matching::{Ipv4Prefix, L4Match, MatchFields, MatchSpec, NetMatch, VlanMatch};

use crate::error::{DecodeError, ErrorCode, ErrorKind};
use crate::hello::Hello;
use crate::packet::FlowKey;
use crate::types::{BufferId, Cookie, MacAddr, PortNo, Xid};
use crate::v13::oxm::{OFPVID_PRESENT, Oxm};
use crate::version::Version;
use crate::{v10, v13};
use std::net::Ipv4Addr;

/// Why the switch sent a packet in (1.0.0 §5.4.1 `ofp_packet_in_reason`,
/// 1.3.5 §7.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketInReason {
    /// No flow matched (1.0), or the table-miss flow sent it (1.3).
    NoMatch,
    /// An output-to-controller action.
    Action,
    /// An invalid TTL (1.3 only).
    InvalidTtl,
    /// Another code, as received.
    Other(u8),
}

impl From<v10::PacketInReason> for PacketInReason {
    fn from(r: v10::PacketInReason) -> Self {
        match r {
            v10::PacketInReason::NoMatch => PacketInReason::NoMatch,
            v10::PacketInReason::Action => PacketInReason::Action,
            v10::PacketInReason::Unknown(n) => PacketInReason::Other(n),
        }
    }
}

impl From<v13::PacketInReason> for PacketInReason {
    fn from(r: v13::PacketInReason) -> Self {
        match r {
            v13::PacketInReason::NoMatch => PacketInReason::NoMatch,
            v13::PacketInReason::Action => PacketInReason::Action,
            v13::PacketInReason::InvalidTtl => PacketInReason::InvalidTtl,
            v13::PacketInReason::Unknown(n) => PacketInReason::Other(n),
        }
    }
}

/// A checked OFPT_PACKET_IN of either version, borrowed from the received
/// message (1.0.0 §5.4.1, 1.3.5 §7.4.1). Accessors never panic nor
/// allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketIn<'a> {
    /// An OpenFlow 1.0 packet-in.
    V10(v10::PacketInView<&'a [u8]>),
    /// An OpenFlow 1.3 packet-in.
    V13(v13::PacketInView<&'a [u8]>),
}

impl<'a> PacketIn<'a> {
    /// Checks a whole PACKET_IN message, dispatching on its header's
    /// version byte. Other versions are [`ErrorKind::BadVersion`].
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<PacketIn<'a>, DecodeError> {
        const V10: u8 = Version::V10.wire();
        const V13: u8 = Version::V13.wire();
        match msg.first() {
            Some(&V10) => v10::PacketInView::new_checked(msg).map(PacketIn::V10),
            Some(&V13) => v13::PacketInView::new_checked(msg).map(PacketIn::V13),
            _ => Err(Self::bad_version(msg)),
        }
    }

    #[cold]
    fn bad_version(msg: &[u8]) -> DecodeError {
        match msg.first() {
            None => DecodeError::new(ErrorKind::TooShort { need: 8, have: 0 }, 0, "ofp_header"),
            Some(&v) => DecodeError::new(ErrorKind::BadVersion(v), 0, "ofp_header.version"),
        }
    }

    /// The message's version.
    #[inline]
    pub fn version(&self) -> Version {
        match self {
            PacketIn::V10(_) => Version::V10,
            PacketIn::V13(_) => Version::V13,
        }
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        match self {
            PacketIn::V10(p) => p.xid(),
            PacketIn::V13(p) => p.xid(),
        }
    }

    /// The port the packet arrived on: 1.0 `in_port`, 1.3 the match's
    /// `IN_PORT` ([`PortNo::ANY`] if a 1.3 switch left it out, which
    /// 1.3.5 §7.4.1 does not allow).
    #[inline]
    pub fn in_port(&self) -> PortNo {
        match self {
            PacketIn::V10(p) => p.in_port(),
            PacketIn::V13(p) => p.in_port().unwrap_or(PortNo::ANY),
        }
    }

    /// The switch's buffer holding the packet, if it buffered it.
    #[inline]
    pub fn buffer_id(&self) -> Option<BufferId> {
        match self {
            PacketIn::V10(p) => p.buffer_id().get(),
            PacketIn::V13(p) => p.buffer_id().get(),
        }
    }

    /// Why the packet was sent.
    #[inline]
    pub fn reason(&self) -> PacketInReason {
        match self {
            PacketIn::V10(p) => p.reason().into(),
            PacketIn::V13(p) => p.reason().into(),
        }
    }

    /// The full length of the frame (`data` may be shorter).
    #[inline]
    pub fn total_len(&self) -> u16 {
        match self {
            PacketIn::V10(p) => p.total_len(),
            PacketIn::V13(p) => p.total_len(),
        }
    }

    /// The frame, or its first bytes.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        match self {
            PacketIn::V10(p) => p.data(),
            PacketIn::V13(p) => p.data(),
        }
    }

    /// The 1.3 table the packet came from (`None` for 1.0).
    #[inline]
    pub fn table_id(&self) -> Option<u8> {
        match self {
            PacketIn::V10(_) => None,
            PacketIn::V13(p) => Some(p.table_id()),
        }
    }

    /// The 1.3 cookie of the flow that sent the packet (`None` for 1.0).
    #[inline]
    pub fn cookie(&self) -> Option<Cookie> {
        match self {
            PacketIn::V10(_) => None,
            PacketIn::V13(p) => Some(p.cookie()),
        }
    }

    /// The frame's header fields ([`FlowKey::extract`] of
    /// [`PacketIn::data`] on [`PacketIn::in_port`]).
    #[inline]
    pub fn key(&self) -> FlowKey {
        FlowKey::extract(self.in_port(), self.data())
    }
}

/// An action both versions express with the same meaning (1.0.0 §5.2.4;
/// 1.3.5 §7.2.5, rewrites as OFPAT_SET_FIELD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionSpec {
    /// Output on `port`; to the controller, send `max_len` bytes
    /// (0xffff: the whole packet, 1.3 `OFPCML_NO_BUFFER`).
    Output {
        /// The port (physical or reserved, e.g. [`PortNo::FLOOD`]).
        port: PortNo,
        /// Bytes for the controller.
        max_len: u16,
    },
    /// Set the Ethernet source.
    SetEthSrc(MacAddr),
    /// Set the Ethernet destination.
    SetEthDst(MacAddr),
    /// Set the VLAN id of the packet's tag (1.3 sets `VLAN_VID` of an
    /// existing tag; 1.0 also adds a tag to an untagged packet).
    SetVlanVid(u16),
    /// Set the VLAN priority of the packet's tag.
    SetVlanPcp(u8),
    /// Remove the outer VLAN tag (1.0 STRIP_VLAN, 1.3 POP_VLAN).
    StripVlan,
    /// Set the IPv4 source.
    SetIpv4Src(Ipv4Addr),
    /// Set the IPv4 destination.
    SetIpv4Dst(Ipv4Addr),
    /// Set the IP DSCP (6 bits; 1.0 SET_NW_TOS with `dscp << 2`).
    SetIpDscp(u8),
    /// Set the TCP source port (1.0 SET_TP_SRC).
    SetTcpSrc(u16),
    /// Set the TCP destination port (1.0 SET_TP_DST).
    SetTcpDst(u16),
    /// Set the UDP source port (1.0 SET_TP_SRC).
    SetUdpSrc(u16),
    /// Set the UDP destination port (1.0 SET_TP_DST).
    SetUdpDst(u16),
    /// Output on a queue of a port (1.0 ENQUEUE; 1.3 SET_QUEUE then
    /// OUTPUT).
    Enqueue {
        /// The port.
        port: PortNo,
        /// The queue.
        queue_id: u32,
    },
}

impl ActionSpec {
    /// Output on `port`, the whole packet if `port` is the controller.
    pub const fn output(port: PortNo) -> ActionSpec {
        ActionSpec::Output {
            port,
            max_len: 0xffff,
        }
    }

    /// The OpenFlow 1.0 action.
    pub fn to_v10(&self) -> v10::Action {
        use v10::Action as A;
        match *self {
            ActionSpec::Output { port, max_len } => A::Output { port, max_len },
            ActionSpec::SetEthSrc(m) => A::SetDlSrc(m),
            ActionSpec::SetEthDst(m) => A::SetDlDst(m),
            ActionSpec::SetVlanVid(v) => A::SetVlanVid(v & 0x0fff),
            ActionSpec::SetVlanPcp(p) => A::SetVlanPcp(p),
            ActionSpec::StripVlan => A::StripVlan,
            ActionSpec::SetIpv4Src(a) => A::SetNwSrc(a),
            ActionSpec::SetIpv4Dst(a) => A::SetNwDst(a),
            ActionSpec::SetIpDscp(d) => A::SetNwTos(d << 2),
            ActionSpec::SetTcpSrc(p) | ActionSpec::SetUdpSrc(p) => A::SetTpSrc(p),
            ActionSpec::SetTcpDst(p) | ActionSpec::SetUdpDst(p) => A::SetTpDst(p),
            ActionSpec::Enqueue { port, queue_id } => A::Enqueue { port, queue_id },
        }
    }

    /// Calls `f` with the OpenFlow 1.3 action(s), one or two.
    pub fn for_each_v13(&self, mut f: impl FnMut(v13::Action)) {
        use v13::Action as A;
        let set = |o: Oxm| A::SetField(o);
        let a = match *self {
            ActionSpec::Output { port, max_len } => A::Output { port, max_len },
            ActionSpec::SetEthSrc(value) => set(Oxm::EthSrc { value, mask: None }),
            ActionSpec::SetEthDst(value) => set(Oxm::EthDst { value, mask: None }),
            ActionSpec::SetVlanVid(v) => set(Oxm::VlanVid {
                value: OFPVID_PRESENT | (v & 0x0fff),
                mask: None,
            }),
            ActionSpec::SetVlanPcp(p) => set(Oxm::VlanPcp(p)),
            ActionSpec::StripVlan => A::PopVlan,
            ActionSpec::SetIpv4Src(value) => set(Oxm::Ipv4Src { value, mask: None }),
            ActionSpec::SetIpv4Dst(value) => set(Oxm::Ipv4Dst { value, mask: None }),
            ActionSpec::SetIpDscp(d) => set(Oxm::IpDscp(d)),
            ActionSpec::SetTcpSrc(p) => set(Oxm::TcpSrc(p)),
            ActionSpec::SetTcpDst(p) => set(Oxm::TcpDst(p)),
            ActionSpec::SetUdpSrc(p) => set(Oxm::UdpSrc(p)),
            ActionSpec::SetUdpDst(p) => set(Oxm::UdpDst(p)),
            ActionSpec::Enqueue { port, queue_id } => {
                f(A::SetQueue(queue_id));
                A::Output { port, max_len: 0 }
            }
        };
        f(a);
    }
}

/// Writes `specs` as 1.3 actions, converting each on the fly (no list is
/// built, so any number of actions costs no allocation).
fn emit_v13_actions(out: &mut Vec<u8>, specs: &[ActionSpec]) {
    for s in specs {
        s.for_each_v13(|a| a.emit(out));
    }
}

/// Flow-mod flag common to both versions: send FLOW_REMOVED when the flow
/// expires or is deleted (`OFPFF_SEND_FLOW_REM`).
pub const FLOW_SEND_FLOW_REM: u16 = 1 << 0;
/// Flow-mod flag common to both versions: refuse an overlapping flow of
/// the same priority (`OFPFF_CHECK_OVERLAP`).
pub const FLOW_CHECK_OVERLAP: u16 = 1 << 1;

/// "Install this match -> these actions" (an OFPFC_ADD FLOW_MOD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowSpec<'a> {
    /// The match.
    pub match_: MatchSpec,
    /// Priority (higher wins).
    pub priority: u16,
    /// Seconds without a hit before removal (0: never).
    pub idle_timeout: u16,
    /// Seconds before removal (0: never).
    pub hard_timeout: u16,
    /// Opaque cookie.
    pub cookie: Cookie,
    /// A buffered packet to run through the new flow.
    pub buffer_id: Option<BufferId>,
    /// [`FLOW_SEND_FLOW_REM`] / [`FLOW_CHECK_OVERLAP`] (written as is, so
    /// version-specific bits pass through).
    pub flags: u16,
    /// The actions (none: drop).
    pub actions: &'a [ActionSpec],
}

impl<'a> FlowSpec<'a> {
    /// A flow with `match_` and `actions`, priority 0x8000 (both versions'
    /// default), no timeouts, cookie 0, no buffer, no flags.
    pub const fn new(match_: MatchSpec, actions: &'a [ActionSpec]) -> FlowSpec<'a> {
        FlowSpec {
            match_,
            priority: 0x8000,
            idle_timeout: 0,
            hard_timeout: 0,
            cookie: Cookie(0),
            buffer_id: None,
            flags: 0,
            actions,
        }
    }
}

/// Appends a FLOW_MOD that adds `flow` (1.0.0 §5.3.3: OFPFC_ADD with an
/// `ofp_match` and actions; 1.3.5 §7.3.4.1: OFPFC_ADD in table 0 with an
/// OXM match and one OFPIT_APPLY_ACTIONS instruction, none for a drop).
pub fn encode_flow_add(out: &mut Vec<u8>, version: Version, xid: Xid, flow: &FlowSpec<'_>) {
    let buffer_id = flow.buffer_id.unwrap_or(BufferId::NONE);
    match version {
        Version::V10 => {
            let head = v10::FlowModHead {
                match_: flow.match_.to_match10(),
                cookie: flow.cookie,
                command: v10::FlowModCommand::Add,
                idle_timeout: flow.idle_timeout,
                hard_timeout: flow.hard_timeout,
                priority: flow.priority,
                buffer_id,
                out_port: PortNo::ANY,
                flags: flow.flags,
            };
            v10::encode_flow_mod_with(out, xid, &head, |out| {
                for a in flow.actions {
                    a.to_v10().emit(out);
                }
            });
        }
        Version::V13 => {
            let head = v13::FlowModHead {
                cookie: flow.cookie,
                idle_timeout: flow.idle_timeout,
                hard_timeout: flow.hard_timeout,
                priority: flow.priority,
                buffer_id,
                flags: flow.flags,
                ..v13::FlowModHead::default()
            };
            encode_flow_mod13(out, xid, &head, &flow.match_, flow.actions);
        }
    }
}

/// A 1.3 FLOW_MOD with `match_` and one APPLY_ACTIONS instruction.
fn encode_flow_mod13(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &v13::FlowModHead,
    match_: &MatchSpec,
    actions: &[ActionSpec],
) {
    use v13::instruction::{InstructionType, emit_actions_instruction_with};
    let at = v13::start_flow_mod(out, xid, head);
    match_.emit_oxm_match(out);
    if !actions.is_empty() {
        emit_actions_instruction_with(out, InstructionType::ApplyActions, |out| {
            emit_v13_actions(out, actions);
        });
    }
    crate::header::finish_message(out, at);
}

/// Appends a FLOW_MOD that deletes every flow matching `match_` (not
/// strict), restricted to flows that output to `out_port` unless it is
/// [`PortNo::ANY`] (1.0.0 §5.3.3 OFPFC_DELETE; 1.3.5 §7.3.4.1 OFPFC_DELETE
/// in all tables, any group).
pub fn encode_flow_delete(
    out: &mut Vec<u8>,
    version: Version,
    xid: Xid,
    match_: &MatchSpec,
    out_port: PortNo,
) {
    match version {
        Version::V10 => {
            let head = v10::FlowModHead {
                match_: match_.to_match10(),
                cookie: Cookie(0),
                command: v10::FlowModCommand::Delete,
                idle_timeout: 0,
                hard_timeout: 0,
                priority: 0,
                buffer_id: BufferId::NONE,
                out_port,
                flags: 0,
            };
            v10::encode_flow_mod_with(out, xid, &head, |_| {});
        }
        Version::V13 => {
            let head = v13::FlowModHead {
                table_id: v13::messages::table_id::ALL,
                command: v13::FlowModCommand::Delete,
                priority: 0,
                out_port,
                ..v13::FlowModHead::default()
            };
            encode_flow_mod13(out, xid, &head, match_, &[]);
        }
    }
}

/// Appends the 1.3 table-miss flow: priority 0, match everything in table
/// 0, output the whole packet to the controller (1.3.5 §5.4). An OpenFlow
/// 1.3 switch sends no PACKET_IN without it.
pub fn encode_table_miss(out: &mut Vec<u8>, xid: Xid) {
    let head = v13::FlowModHead {
        priority: 0,
        ..v13::FlowModHead::default()
    };
    let actions = [ActionSpec::Output {
        port: PortNo::CONTROLLER,
        max_len: v13::action::OFPCML_NO_BUFFER,
    }];
    encode_flow_mod13(out, xid, &head, &MatchSpec::all(), &actions);
}

/// Appends a PACKET_OUT (1.0.0 §5.3.6, 1.3.5 §7.3.7) that applies
/// `actions` to the buffered packet `buffer_id`, or to `data` when there
/// is no buffer. `in_port` is the packet's input port ([`PortNo::CONTROLLER`]
/// for a packet the controller made).
pub fn encode_packet_out(
    out: &mut Vec<u8>,
    version: Version,
    xid: Xid,
    buffer_id: Option<BufferId>,
    in_port: PortNo,
    actions: &[ActionSpec],
    data: &[u8],
) {
    let buffer_id = buffer_id.unwrap_or(BufferId::NONE);
    match version {
        Version::V10 => v10::encode_packet_out_with(
            out,
            xid,
            buffer_id,
            in_port,
            |out| {
                for a in actions {
                    a.to_v10().emit(out);
                }
            },
            data,
        ),
        Version::V13 => v13::encode_packet_out_with(
            out,
            xid,
            buffer_id,
            in_port,
            |out| emit_v13_actions(out, actions),
            data,
        ),
    }
}

/// Appends an ECHO_REPLY echoing a request's `xid` and `payload`
/// (1.0.0 §5.5.3, 1.3.5 §7.5.3).
pub fn encode_echo_reply(out: &mut Vec<u8>, version: Version, xid: Xid, payload: &[u8]) {
    match version {
        Version::V10 => v10::encode_echo_reply(out, xid, payload),
        Version::V13 => v13::encode_echo_reply(out, xid, payload),
    }
}

/// Appends an ECHO_REQUEST with `payload` (1.0.0 §5.5.2, 1.3.5 §7.5.2).
pub fn encode_echo_request(out: &mut Vec<u8>, version: Version, xid: Xid, payload: &[u8]) {
    match version {
        Version::V10 => v10::encode_echo_request(out, xid, payload),
        Version::V13 => v13::encode_echo_request(out, xid, payload),
    }
}

/// Appends an OFPT_ERROR with `code` (e.g. [`DecodeError::reply`]) and
/// `data`, usually the first 64 bytes of the offending message, or ASCII
/// text for HELLO_FAILED (1.0.0 §5.4.4, 1.3.5 §7.4.4). `data` is cut so
/// the message fits its 16-bit length. Allocates a copy of `data` (errors
/// are off the hot path and go through the owned encoders).
pub fn encode_error(out: &mut Vec<u8>, version: Version, xid: Xid, code: ErrorCode, data: &[u8]) {
    // Header (8) + type (2) + code (2).
    let data = data.get(..0xffff - 12).unwrap_or(data).to_vec();
    match version {
        Version::V10 => v10::Message::Error(v10::ErrorMsg {
            error_type: code.error_type,
            code: code.code,
            data,
        })
        .encode(xid, out),
        Version::V13 => v13::Message::Error(v13::ErrorMsg::Standard {
            error_type: code.error_type.into(),
            code: code.code,
            data,
        })
        .encode(xid, out),
    }
}

/// Appends a BARRIER_REQUEST (1.0.0 §5.3.7, 1.3.5 §7.3.8).
pub fn encode_barrier_request(out: &mut Vec<u8>, version: Version, xid: Xid) {
    match version {
        Version::V10 => v10::encode_barrier_request(out, xid),
        Version::V13 => v13::encode_barrier_request(out, xid),
    }
}

/// Appends baton's HELLO with header version `version` and a bitmap of
/// the versions baton speaks (1.3.5 §7.5.1). Allocates (connection setup
/// only).
pub fn encode_hello(out: &mut Vec<u8>, version: Version, xid: Xid) {
    Hello::baton().encode(version, xid, out);
}

/// Appends a FEATURES_REQUEST (1.0.0 §5.3.1, 1.3.5 §7.3.1).
pub fn encode_features_request(out: &mut Vec<u8>, version: Version, xid: Xid) {
    match version {
        Version::V10 => v10::Message::FeaturesRequest.encode(xid, out),
        Version::V13 => v13::Message::FeaturesRequest.encode(xid, out),
    }
}

/// Appends a SET_CONFIG with normal fragment handling and `miss_send_len`
/// (1.0.0 §5.3.2, 1.3.5 §7.3.2; 1.3's `OFPCML_NO_BUFFER` 0xffff sends
/// whole packets).
pub fn encode_set_config(out: &mut Vec<u8>, version: Version, xid: Xid, miss_send_len: u16) {
    match version {
        Version::V10 => v10::Message::SetConfig(v10::SwitchConfig {
            flags: 0,
            miss_send_len,
        })
        .encode(xid, out),
        Version::V13 => v13::Message::SetConfig(v13::SwitchConfig {
            flags: 0,
            miss_send_len,
        })
        .encode(xid, out),
    }
}

#[cfg(test)]
mod tests;
