//! The hot path: borrowing views over received PACKET_IN, FLOW_MOD,
//! PACKET_OUT, ECHO and BARRIER messages, and encoders that append those
//! messages to a caller-owned buffer from borrowed inputs (1.0.0 §5.3.3,
//! §5.3.6, §5.3.7, §5.4.1, §5.5.2).
//!
//! Views follow smoltcp's `wire` contract: the constructor checks the header
//! (version, type, `length == msg.len()`, the type's length rule) and every
//! length field once; after it succeeded, no accessor panics, and each
//! accessor reads its field at a fixed offset. Nothing here allocates,
//! except [`ActionIter`] for the body of a vendor action.
//!
//! The owned [`Message`](super::Message) encoders call these functions, so
//! there is exactly one way to write each of these messages.

use crate::error::{DecodeError, ErrorKind};
use crate::header::{HEADER_LEN, MsgType10, finish_message, header_bytes, start_message};
use crate::types::{BufferId, Cookie, PortNo, Version, Xid};
use crate::v10::action::{Action, ActionIter, emit_actions};
use crate::v10::messages::{FlowModCommand, PacketInReason};
use crate::v10::ofmatch::{MATCH_LEN, Match10, port_to_wire};
use crate::wire::{Put, Reader};

/// Byte offsets of the fields of the hot messages (1.0.0 §5.3.3, §5.3.6,
/// §5.3.7, §5.4.1), header included.
mod field {
    pub const XID: usize = 4;

    pub const PI_BUFFER_ID: usize = 8;
    pub const PI_TOTAL_LEN: usize = 12;
    pub const PI_IN_PORT: usize = 14;
    pub const PI_REASON: usize = 16;
    pub const PI_DATA: usize = 18;

    pub const FM_MATCH: usize = 8;
    pub const FM_COOKIE: usize = 48;
    pub const FM_COMMAND: usize = 56;
    pub const FM_IDLE: usize = 58;
    pub const FM_HARD: usize = 60;
    pub const FM_PRIORITY: usize = 62;
    pub const FM_BUFFER_ID: usize = 64;
    pub const FM_OUT_PORT: usize = 68;
    pub const FM_FLAGS: usize = 70;
    pub const FM_ACTIONS: usize = 72;

    pub const PO_BUFFER_ID: usize = 8;
    pub const PO_IN_PORT: usize = 12;
    pub const PO_ACTIONS_LEN: usize = 14;
    pub const PO_ACTIONS: usize = 16;
}

// Fixed-offset reads that cannot panic: an out-of-range offset (impossible
// once a constructor succeeded) reads as zero.
#[inline(always)]
fn rd_u8(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

#[inline(always)]
fn rd_u16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => u16::from_be_bytes([x, y]),
        _ => 0,
    }
}

#[inline(always)]
fn rd_u32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_be_bytes([a, b, c, d]),
        _ => 0,
    }
}

#[inline(always)]
fn rd_u64(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .map_or(0, u64::from_be_bytes)
}

/// Checks an OpenFlow 1.0 header against the whole message: 8 bytes at
/// least, version 1 ([`ErrorKind::BadVersion`]), `length == msg.len()`
/// ([`ErrorKind::BadLength`]), a known type ([`ErrorKind::UnknownType`]) and
/// the type's length rule from [`MsgType10::length_rule`].
#[inline]
pub fn check_header(msg: &[u8]) -> Result<(MsgType10, Xid), DecodeError> {
    let mut r = Reader::new(msg);
    let version = r.u8("ofp_header.version")?;
    let raw_type = r.u8("ofp_header.type")?;
    let length = r.u16("ofp_header.length")?;
    let xid = Xid(r.u32("ofp_header.xid")?);
    if version != Version::V10.wire() {
        return Err(DecodeError::new(
            ErrorKind::BadVersion(version),
            0,
            "ofp_header.version",
        ));
    }
    if usize::from(length) != msg.len() {
        return Err(DecodeError::new(
            ErrorKind::BadLength {
                claimed: usize::from(length),
            },
            2,
            "ofp_header.length",
        ));
    }
    let ty = MsgType10::from(raw_type);
    let rule = ty
        .length_rule()
        .ok_or_else(|| DecodeError::new(ErrorKind::UnknownType(raw_type), 1, "ofp_header.type"))?;
    rule.check(length, "ofp_header.length")?;
    Ok((ty, xid))
}

/// [`check_header`], and the type must be one of `want`. Another type is
/// reported as [`ErrorKind::UnknownType`]: not a type this view reads.
#[inline]
fn check_type(msg: &[u8], want: &[MsgType10]) -> Result<MsgType10, DecodeError> {
    let (ty, _) = check_header(msg)?;
    if want.contains(&ty) {
        Ok(ty)
    } else {
        Err(DecodeError::new(
            ErrorKind::UnknownType(ty.into()),
            1,
            "ofp_header.type (not the type this view reads)",
        ))
    }
}

/// A borrowed OFPT_PACKET_IN (`ofp_packet_in`, 1.0.0 §5.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInView<'a> {
    buf: &'a [u8],
}

impl<'a> PacketInView<'a> {
    /// Checks the header of a whole message; the fixed part (18 bytes) is
    /// guaranteed by the length rule.
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<Self, DecodeError> {
        // Fast path for the message the controller sees most: version 1,
        // type PACKET_IN, length field == length, at least the fixed part.
        // Anything else takes the full check for its precise error.
        if let [1, 10, l0, l1, ..] = *msg {
            if msg.len() >= 18 && usize::from(u16::from_be_bytes([l0, l1])) == msg.len() {
                return Ok(PacketInView { buf: msg });
            }
        }
        Self::parse_checked(msg)
    }

    /// The full check, out of line so the fast path above stays small.
    #[cold]
    #[inline(never)]
    fn parse_checked(msg: &'a [u8]) -> Result<Self, DecodeError> {
        check_type(msg, &[MsgType10::PacketIn])?;
        Ok(PacketInView { buf: msg })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        Xid(rd_u32(self.buf, field::XID))
    }

    /// `buffer_id` ([`BufferId::NONE`] when not buffered).
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        BufferId(rd_u32(self.buf, field::PI_BUFFER_ID))
    }

    /// `total_len`: length of the whole frame.
    #[inline]
    pub fn total_len(&self) -> u16 {
        rd_u16(self.buf, field::PI_TOTAL_LEN)
    }

    /// `in_port`.
    #[inline]
    pub fn in_port(&self) -> PortNo {
        PortNo::from_of10(rd_u16(self.buf, field::PI_IN_PORT))
    }

    /// `reason`.
    #[inline]
    pub fn reason(&self) -> PacketInReason {
        PacketInReason::from(rd_u8(self.buf, field::PI_REASON))
    }

    /// `data`: the frame (or its first `miss_send_len` bytes).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.buf.get(field::PI_DATA..).unwrap_or(&[])
    }
}

/// The fixed fields of an OFPT_FLOW_MOD (`ofp_flow_mod`, 1.0.0 §5.3.3),
/// everything but the actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowModHead {
    /// `match`.
    pub match_: Match10,
    /// `cookie`.
    pub cookie: Cookie,
    /// `command`.
    pub command: FlowModCommand,
    /// `idle_timeout` in seconds (0: none).
    pub idle_timeout: u16,
    /// `hard_timeout` in seconds (0: none).
    pub hard_timeout: u16,
    /// `priority`.
    pub priority: u16,
    /// `buffer_id`: a buffered packet to apply the flow to, or
    /// [`BufferId::NONE`].
    pub buffer_id: BufferId,
    /// `out_port`: for deletes, require an output action to this port;
    /// `OFPP_NONE` ([`PortNo::ANY`]) for no restriction.
    pub out_port: PortNo,
    /// `flags`: `OFPFF_*` bits.
    pub flags: u16,
}

impl FlowModHead {
    /// Reads the 64 bytes after the header.
    #[inline]
    pub fn parse(r: &mut Reader<'_>) -> Result<FlowModHead, DecodeError> {
        Ok(FlowModHead {
            match_: Match10::parse(r)?,
            cookie: Cookie(r.u64("ofp_flow_mod.cookie")?),
            command: FlowModCommand::from(r.u16("ofp_flow_mod.command")?),
            idle_timeout: r.u16("ofp_flow_mod.idle_timeout")?,
            hard_timeout: r.u16("ofp_flow_mod.hard_timeout")?,
            priority: r.u16("ofp_flow_mod.priority")?,
            buffer_id: BufferId(r.u32("ofp_flow_mod.buffer_id")?),
            out_port: PortNo::from_of10(r.u16("ofp_flow_mod.out_port")?),
            flags: r.u16("ofp_flow_mod.flags")?,
        })
    }

    /// Writes the 64 bytes after the header (the match and 24 bytes of
    /// fields), each at a constant offset.
    #[inline]
    pub fn write(&self, b: &mut [u8; 64]) {
        let (m, f) = b.split_at_mut(40);
        if let Ok(m) = <&mut [u8; 40]>::try_from(m) {
            self.match_.write(m);
        }
        f[0..8].copy_from_slice(&self.cookie.0.to_be_bytes());
        f[8..10].copy_from_slice(&u16::from(self.command).to_be_bytes());
        f[10..12].copy_from_slice(&self.idle_timeout.to_be_bytes());
        f[12..14].copy_from_slice(&self.hard_timeout.to_be_bytes());
        f[14..16].copy_from_slice(&self.priority.to_be_bytes());
        f[16..20].copy_from_slice(&self.buffer_id.0.to_be_bytes());
        f[20..22].copy_from_slice(&port_to_wire(self.out_port).to_be_bytes());
        f[22..24].copy_from_slice(&self.flags.to_be_bytes());
    }

    /// Appends the 64 bytes after the header.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; 64];
        self.write(&mut b);
        out.put_slice(&b);
    }
}

/// A borrowed OFPT_FLOW_MOD (`ofp_flow_mod`, 1.0.0 §5.3.3).
///
/// The actions are checked as they are iterated ([`FlowModView::actions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowModView<'a> {
    buf: &'a [u8],
}

impl<'a> FlowModView<'a> {
    /// Checks the header of a whole message; the fixed part (72 bytes) is
    /// guaranteed by the length rule.
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<Self, DecodeError> {
        check_type(msg, &[MsgType10::FlowMod])?;
        Ok(FlowModView { buf: msg })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        Xid(rd_u32(self.buf, field::XID))
    }

    /// `match`.
    #[inline]
    pub fn match_(&self) -> Match10 {
        self.buf
            .get(field::FM_MATCH..field::FM_MATCH + MATCH_LEN)
            .and_then(|s| <&[u8; MATCH_LEN]>::try_from(s).ok())
            .map_or(Match10::ALL, Match10::from_bytes)
    }

    /// `cookie`.
    #[inline]
    pub fn cookie(&self) -> Cookie {
        Cookie(rd_u64(self.buf, field::FM_COOKIE))
    }

    /// `command`.
    #[inline]
    pub fn command(&self) -> FlowModCommand {
        FlowModCommand::from(rd_u16(self.buf, field::FM_COMMAND))
    }

    /// `idle_timeout`.
    #[inline]
    pub fn idle_timeout(&self) -> u16 {
        rd_u16(self.buf, field::FM_IDLE)
    }

    /// `hard_timeout`.
    #[inline]
    pub fn hard_timeout(&self) -> u16 {
        rd_u16(self.buf, field::FM_HARD)
    }

    /// `priority`.
    #[inline]
    pub fn priority(&self) -> u16 {
        rd_u16(self.buf, field::FM_PRIORITY)
    }

    /// `buffer_id`.
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        BufferId(rd_u32(self.buf, field::FM_BUFFER_ID))
    }

    /// `out_port`.
    #[inline]
    pub fn out_port(&self) -> PortNo {
        PortNo::from_of10(rd_u16(self.buf, field::FM_OUT_PORT))
    }

    /// `flags`.
    #[inline]
    pub fn flags(&self) -> u16 {
        rd_u16(self.buf, field::FM_FLAGS)
    }

    /// All fixed fields at once.
    #[inline]
    pub fn head(&self) -> FlowModHead {
        FlowModHead {
            match_: self.match_(),
            cookie: self.cookie(),
            command: self.command(),
            idle_timeout: self.idle_timeout(),
            hard_timeout: self.hard_timeout(),
            priority: self.priority(),
            buffer_id: self.buffer_id(),
            out_port: self.out_port(),
            flags: self.flags(),
        }
    }

    /// The raw actions region.
    #[inline]
    pub fn actions_bytes(&self) -> &'a [u8] {
        self.buf.get(field::FM_ACTIONS..).unwrap_or(&[])
    }

    /// The actions, each checked as it is reached.
    #[inline]
    pub fn actions(&self) -> ActionIter<'a> {
        ActionIter::new(self.actions_bytes(), field::FM_ACTIONS)
    }
}

/// A borrowed OFPT_PACKET_OUT (`ofp_packet_out`, 1.0.0 §5.3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketOutView<'a> {
    buf: &'a [u8],
    actions_end: usize,
}

impl<'a> PacketOutView<'a> {
    /// Checks the header of a whole message and that `actions_len` fits in
    /// it ([`ErrorKind::BadLength`] otherwise).
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<Self, DecodeError> {
        check_type(msg, &[MsgType10::PacketOut])?;
        let actions_len = usize::from(rd_u16(msg, field::PO_ACTIONS_LEN));
        let actions_end = field::PO_ACTIONS + actions_len;
        if actions_end > msg.len() {
            return Err(DecodeError::new(
                ErrorKind::BadLength {
                    claimed: actions_len,
                },
                field::PO_ACTIONS_LEN,
                "ofp_packet_out.actions_len",
            ));
        }
        Ok(PacketOutView {
            buf: msg,
            actions_end,
        })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        Xid(rd_u32(self.buf, field::XID))
    }

    /// `buffer_id` ([`BufferId::NONE`] when the frame is in `data`).
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        BufferId(rd_u32(self.buf, field::PO_BUFFER_ID))
    }

    /// `in_port`.
    #[inline]
    pub fn in_port(&self) -> PortNo {
        PortNo::from_of10(rd_u16(self.buf, field::PO_IN_PORT))
    }

    /// The raw actions region (`actions_len` bytes).
    #[inline]
    pub fn actions_bytes(&self) -> &'a [u8] {
        self.buf
            .get(field::PO_ACTIONS..self.actions_end)
            .unwrap_or(&[])
    }

    /// The actions, each checked as it is reached.
    #[inline]
    pub fn actions(&self) -> ActionIter<'a> {
        ActionIter::new(self.actions_bytes(), field::PO_ACTIONS)
    }

    /// `data`: the frame, when `buffer_id` is [`BufferId::NONE`].
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.buf.get(self.actions_end..).unwrap_or(&[])
    }
}

/// Whether an ECHO or BARRIER message is the request or the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// OFPT_ECHO_REQUEST / OFPT_BARRIER_REQUEST.
    Request,
    /// OFPT_ECHO_REPLY / OFPT_BARRIER_REPLY.
    Reply,
}

/// A borrowed OFPT_ECHO_REQUEST or OFPT_ECHO_REPLY (1.0.0 §5.5.2, §5.5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoView<'a> {
    buf: &'a [u8],
    direction: Direction,
}

impl<'a> EchoView<'a> {
    /// Checks the header of a whole ECHO_REQUEST or ECHO_REPLY.
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<Self, DecodeError> {
        let ty = check_type(msg, &[MsgType10::EchoRequest, MsgType10::EchoReply])?;
        let direction = if ty == MsgType10::EchoRequest {
            Direction::Request
        } else {
            Direction::Reply
        };
        Ok(EchoView {
            buf: msg,
            direction,
        })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        Xid(rd_u32(self.buf, field::XID))
    }

    /// Request or reply.
    #[inline]
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The arbitrary payload, which a reply echoes.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.buf.get(HEADER_LEN..).unwrap_or(&[])
    }
}

/// An OFPT_BARRIER_REQUEST or OFPT_BARRIER_REPLY (1.0.0 §5.3.7): a header
/// only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BarrierView {
    /// `xid`.
    pub xid: Xid,
    /// Request or reply.
    pub direction: Direction,
}

impl BarrierView {
    /// Checks the header of a whole BARRIER_REQUEST or BARRIER_REPLY.
    #[inline]
    pub fn parse(msg: &[u8]) -> Result<Self, DecodeError> {
        let ty = check_type(msg, &[MsgType10::BarrierRequest, MsgType10::BarrierReply])?;
        Ok(BarrierView {
            xid: Xid(rd_u32(msg, field::XID)),
            direction: if ty == MsgType10::BarrierRequest {
                Direction::Request
            } else {
                Direction::Reply
            },
        })
    }
}

#[inline]
fn start(out: &mut Vec<u8>, ty: MsgType10, xid: Xid) -> usize {
    start_message(out, Version::V10, ty.into(), xid)
}

/// Appends an OFPT_PACKET_IN (1.0.0 §5.4.1).
#[inline]
pub fn encode_packet_in(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    total_len: u16,
    in_port: PortNo,
    reason: PacketInReason,
    data: &[u8],
) {
    let at = start(out, MsgType10::PacketIn, xid);
    out.put_u32(buffer_id.0);
    out.put_u16(total_len);
    out.put_u16(port_to_wire(in_port));
    out.put_u8(reason.into());
    out.put_u8(0);
    out.put_slice(data);
    finish_message(out, at);
}

/// Appends an OFPT_FLOW_MOD (1.0.0 §5.3.3) with `actions`.
#[inline]
pub fn encode_flow_mod(out: &mut Vec<u8>, xid: Xid, head: &FlowModHead, actions: &[Action]) {
    encode_flow_mod_with(out, xid, head, |out| emit_actions(out, actions));
}

/// Appends an OFPT_FLOW_MOD whose actions `write_actions` appends (for
/// callers that build actions on the fly without a slice; each must be
/// written with [`Action::emit`]).
#[inline]
pub fn encode_flow_mod_with(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &FlowModHead,
    write_actions: impl FnOnce(&mut Vec<u8>),
) {
    // Header and fixed part in one array, appended with one copy.
    let at = out.len();
    let mut b = [0u8; 72];
    let (h, body) = b.split_at_mut(8);
    h.copy_from_slice(&header_bytes(Version::V10, MsgType10::FlowMod.into(), xid));
    if let Ok(body) = <&mut [u8; 64]>::try_from(body) {
        head.write(body);
    }
    out.put_slice(&b);
    write_actions(out);
    finish_message(out, at);
}

/// Appends an OFPT_PACKET_OUT (1.0.0 §5.3.6) with `actions` and `data`.
#[inline]
pub fn encode_packet_out(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    actions: &[Action],
    data: &[u8],
) {
    encode_packet_out_with(
        out,
        xid,
        buffer_id,
        in_port,
        |out| emit_actions(out, actions),
        data,
    );
}

/// Appends an OFPT_PACKET_OUT whose actions `write_actions` appends (each
/// with [`Action::emit`]); `actions_len` is filled in afterwards.
#[inline]
pub fn encode_packet_out_with(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    write_actions: impl FnOnce(&mut Vec<u8>),
    data: &[u8],
) {
    let at = start(out, MsgType10::PacketOut, xid);
    out.put_u32(buffer_id.0);
    out.put_u16(port_to_wire(in_port));
    out.put_u16(0);
    let actions_at = out.len();
    write_actions(out);
    let actions_len = (out.len() - actions_at).min(usize::from(u16::MAX)) as u16;
    out.patch_u16(at + field::PO_ACTIONS_LEN, actions_len);
    out.put_slice(data);
    finish_message(out, at);
}

/// Appends an OFPT_ECHO_REQUEST (1.0.0 §5.5.2).
#[inline]
pub fn encode_echo_request(out: &mut Vec<u8>, xid: Xid, payload: &[u8]) {
    let at = start(out, MsgType10::EchoRequest, xid);
    out.put_slice(payload);
    finish_message(out, at);
}

/// Appends an OFPT_ECHO_REPLY (1.0.0 §5.5.3).
#[inline]
pub fn encode_echo_reply(out: &mut Vec<u8>, xid: Xid, payload: &[u8]) {
    let at = start(out, MsgType10::EchoReply, xid);
    out.put_slice(payload);
    finish_message(out, at);
}

/// Appends an OFPT_BARRIER_REQUEST (1.0.0 §5.3.7).
#[inline]
pub fn encode_barrier_request(out: &mut Vec<u8>, xid: Xid) {
    let at = start(out, MsgType10::BarrierRequest, xid);
    finish_message(out, at);
}

/// Appends an OFPT_BARRIER_REPLY (1.0.0 §5.3.7).
#[inline]
pub fn encode_barrier_reply(out: &mut Vec<u8>, xid: Xid) {
    let at = start(out, MsgType10::BarrierReply, xid);
    finish_message(out, at);
}

/// Appends a message that is a header only (FEATURES_REQUEST,
/// GET_CONFIG_REQUEST, BARRIER_*).
#[inline]
pub(crate) fn encode_empty(out: &mut Vec<u8>, ty: MsgType10, xid: Xid) {
    let at = start(out, ty, xid);
    finish_message(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_in_view_reads_fields() {
        let mut out = Vec::new();
        encode_packet_in(
            &mut out,
            Xid(7),
            BufferId(0x100),
            60,
            PortNo(2),
            PacketInReason::NoMatch,
            &[0xaa; 4],
        );
        assert_eq!(
            out,
            [
                1, 10, 0, 22, 0, 0, 0, 7, 0, 0, 1, 0, 0, 60, 0, 2, 0, 0, 0xaa, 0xaa, 0xaa, 0xaa
            ]
        );
        let v = PacketInView::parse(&out).unwrap();
        assert_eq!(v.xid(), Xid(7));
        assert_eq!(v.buffer_id(), BufferId(0x100));
        assert_eq!(v.total_len(), 60);
        assert_eq!(v.in_port(), PortNo(2));
        assert_eq!(v.reason(), PacketInReason::NoMatch);
        assert_eq!(v.data(), &[0xaa; 4]);
    }

    #[test]
    fn views_reject_wrong_headers() {
        let mut out = Vec::new();
        encode_barrier_request(&mut out, Xid(1));
        let e = PacketInView::parse(&out).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::UnknownType(18));
        assert_eq!(
            BarrierView::parse(&out).unwrap(),
            BarrierView {
                xid: Xid(1),
                direction: Direction::Request
            }
        );
        out[0] = 4;
        assert_eq!(
            BarrierView::parse(&out).unwrap_err().kind(),
            &ErrorKind::BadVersion(4)
        );
        out[0] = 1;
        out.push(0);
        assert_eq!(
            BarrierView::parse(&out).unwrap_err().kind(),
            &ErrorKind::BadLength { claimed: 8 }
        );
    }

    #[test]
    fn packet_out_actions_len_is_checked() {
        let mut out = Vec::new();
        let actions = [Action::Output {
            port: PortNo::FLOOD,
            max_len: 0,
        }];
        encode_packet_out(&mut out, Xid(3), BufferId::NONE, PortNo(1), &actions, b"xy");
        let v = PacketOutView::parse(&out).unwrap();
        assert_eq!(v.actions().collect_vec().unwrap(), actions);
        assert_eq!(v.data(), b"xy");
        assert_eq!(&out[14..16], &[0, 8]);
        out[15] = 11; // 16 + 11 > 26
        let e = PacketOutView::parse(&out).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 11 });
        out[15] = 10; // fits, but cuts an action
        let v = PacketOutView::parse(&out).unwrap();
        assert!(v.actions().any(|a| a.is_err()));
    }

    #[test]
    fn flow_mod_view_offsets() {
        let head = FlowModHead {
            match_: Match10::ALL,
            cookie: Cookie(0x0102_0304_0506_0708),
            command: FlowModCommand::DeleteStrict,
            idle_timeout: 10,
            hard_timeout: 20,
            priority: 0x8000,
            buffer_id: BufferId(5),
            out_port: PortNo::ANY,
            flags: 1,
        };
        let mut out = Vec::new();
        encode_flow_mod(&mut out, Xid(9), &head, &[Action::StripVlan]);
        assert_eq!(out.len(), 80);
        let v = FlowModView::parse(&out).unwrap();
        assert_eq!(v.head(), head);
        assert_eq!(v.xid(), Xid(9));
        assert_eq!(v.actions().collect_vec().unwrap(), [Action::StripVlan]);
    }
}
