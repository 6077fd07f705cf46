//! [`PacketIn`]: a received OFPT_PACKET_IN of either version, read once
//! into plain fields (1.0.0 §5.4.1, 1.3.5 §7.4.1).

use super::packet_out::Payload;
use crate::error::{DecodeError, ErrorKind};
use crate::packet::FlowKey;
use crate::types::{BufferId, Cookie, MacAddr, PortNo, Xid};
use crate::version::Version;
use crate::{v10, v13};

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

/// A checked OFPT_PACKET_IN of either version: its fields, read once from
/// the message, and the frame, borrowed from it (1.0.0 §5.4.1, 1.3.5
/// §7.4.1). Reading it allocates nothing; accessors never panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketIn<'a> {
    version: Version,
    xid: Xid,
    buffer_id: BufferId,
    total_len: u16,
    in_port: PortNo,
    reason: PacketInReason,
    /// 1.3's table and cookie, 0 on 1.0 (the version says which): held
    /// without `Option` so that the fields take 48 bytes, one cache line
    /// with the runtime's note of where the frame lies.
    table_id: u8,
    cookie: Cookie,
    data: &'a [u8],
}

impl<'a> PacketIn<'a> {
    /// Checks a whole PACKET_IN message, dispatching on its header's
    /// version byte, and reads its fields. Other versions are
    /// [`ErrorKind::BadVersion`].
    #[inline(always)]
    pub fn parse(msg: &'a [u8]) -> Result<PacketIn<'a>, DecodeError> {
        const V10: u8 = Version::V10.wire();
        const V13: u8 = Version::V13.wire();
        match msg.first() {
            Some(&V10) => v10::PacketInView::new_checked(msg).map(|p| PacketIn {
                version: Version::V10,
                xid: p.xid(),
                buffer_id: p.buffer_id(),
                total_len: p.total_len(),
                in_port: p.in_port(),
                reason: p.reason().into(),
                table_id: 0,
                cookie: Cookie(0),
                data: p.data(),
            }),
            Some(&V13) => v13::PacketInView::new_checked(msg).map(|p| PacketIn {
                version: Version::V13,
                xid: p.xid(),
                buffer_id: p.buffer_id(),
                total_len: p.total_len(),
                // 1.3.5 §7.4.1 requires IN_PORT; a switch that leaves it
                // out gets ANY rather than a rejected message.
                in_port: p.in_port().unwrap_or(PortNo::ANY),
                reason: p.reason().into(),
                table_id: p.table_id(),
                cookie: p.cookie(),
                data: p.data(),
            }),
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

    /// The same fields with another frame: lets a caller keep the fields
    /// without the borrow of the message (`with_frame(&[])`) and attach
    /// the frame again later.
    #[inline]
    pub fn with_frame<'b>(&self, data: &'b [u8]) -> PacketIn<'b> {
        PacketIn {
            version: self.version,
            xid: self.xid,
            buffer_id: self.buffer_id,
            total_len: self.total_len,
            in_port: self.in_port,
            reason: self.reason,
            table_id: self.table_id,
            cookie: self.cookie,
            data,
        }
    }

    /// The message's version.
    #[inline]
    pub fn version(&self) -> Version {
        self.version
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// The port the packet arrived on: 1.0 `in_port`, 1.3 the match's
    /// `IN_PORT` ([`PortNo::ANY`] if a 1.3 switch left it out).
    #[inline]
    pub fn in_port(&self) -> PortNo {
        self.in_port
    }

    /// The switch's buffer holding the packet, if it buffered it.
    #[inline]
    pub fn buffer_id(&self) -> Option<BufferId> {
        self.buffer_id.get()
    }

    /// The packet for a PACKET_OUT: the switch's buffer if it kept one,
    /// otherwise the frame.
    #[inline]
    pub fn payload(&self) -> Payload<'a> {
        match self.buffer_id.get() {
            Some(id) => Payload::Buffered(id),
            None => Payload::Frame(self.data),
        }
    }

    /// Why the packet was sent.
    #[inline]
    pub fn reason(&self) -> PacketInReason {
        self.reason
    }

    /// The full length of the frame (`data` may be shorter).
    #[inline]
    pub fn total_len(&self) -> u16 {
        self.total_len
    }

    /// The frame, or its first bytes.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The frame's Ethernet destination, if the frame has one.
    #[inline]
    pub fn eth_dst(&self) -> Option<MacAddr> {
        Some(MacAddr(self.data.get(0..6)?.try_into().ok()?))
    }

    /// The frame's Ethernet source, if the frame has one.
    #[inline]
    pub fn eth_src(&self) -> Option<MacAddr> {
        Some(MacAddr(self.data.get(6..12)?.try_into().ok()?))
    }

    /// The 1.3 table the packet came from (`None` for 1.0).
    #[inline]
    pub fn table_id(&self) -> Option<u8> {
        (self.version != Version::V10).then_some(self.table_id)
    }

    /// The 1.3 cookie of the flow that sent the packet (`None` for 1.0).
    #[inline]
    pub fn cookie(&self) -> Option<Cookie> {
        (self.version != Version::V10).then_some(self.cookie)
    }

    /// The frame's header fields ([`FlowKey::extract`] of
    /// [`PacketIn::data`] on [`PacketIn::in_port`]).
    #[inline]
    pub fn key(&self) -> FlowKey {
        FlowKey::extract(self.in_port, self.data)
    }
}

/// Appends the PACKET_IN a switch of `version` sends for `frame`, which
/// arrived on `in_port`, matched no flow, and is kept in `buffer_id`
/// ([`BufferId::NONE`]: carried whole): reason NO_MATCH, `total_len` the
/// frame's length; on 1.3 in table 0 with cookie 0, the match carrying
/// `IN_PORT` as 1.3.5 §7.4.1 asks. The switch's side of the exchange, for
/// emulated and in-memory switches.
#[inline]
pub fn encode_packet_in_no_match(
    out: &mut Vec<u8>,
    version: Version,
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    frame: &[u8],
) {
    let total_len = frame.len().min(usize::from(u16::MAX)) as u16;
    match version {
        Version::V10 => v10::encode_packet_in(
            out,
            xid,
            buffer_id,
            total_len,
            in_port,
            v10::PacketInReason::NoMatch,
            frame,
        ),
        Version::V13 => v13::encode_packet_in(
            out,
            xid,
            buffer_id,
            total_len,
            v13::PacketInReason::NoMatch,
            0,
            Cookie(0),
            &[v13::Oxm::InPort(in_port)],
            frame,
        ),
    }
}
