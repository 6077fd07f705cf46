//! The hot path of OpenFlow 1.3: borrowing views over received PACKET_IN,
//! FLOW_MOD, PACKET_OUT and ECHO messages, and encoders that write those
//! messages (and BARRIER) from borrowed inputs into a caller-owned buffer.
//!
//! A view's constructor checks the header (version 4, the expected type,
//! `length` equal to the input's length, the type's length rule) and every
//! nested length once, including the match and its padding, so the data
//! that follows is found at the right place. After that no accessor
//! panics, and none allocates. The owned messages of
//! [`crate::v13::flow`] are decoded through these views and encoded
//! through these encoders: one way to read and one way to write each
//! message.

use crate::error::{DecodeError, ErrorKind};
use crate::header::{MsgType13, finish_message, start_message};
use crate::types::{BufferId, Cookie, PortNo, Version, Xid};
use crate::v13::action::{Action, ActionIter, emit_actions};
use crate::v13::flow::{FlowMod, FlowModCommand, FlowModHead, PacketIn, PacketInReason, PacketOut};
use crate::v13::instruction::{
    Instruction, InstructionIter, InstructionType, emit_actions_instruction, emit_instructions,
};
use crate::v13::oxm::{MatchRef, Oxm, OxmIter, emit_match};
use crate::wire::{Fixed, Put, Reader};

/// Checks the header of a whole message for a view: version 4, type
/// `want`, length equal to `msg.len()` and within the type's rule. Returns
/// the xid and a reader positioned after the header.
fn open(msg: &[u8], want: MsgType13) -> Result<(Xid, Reader<'_>), DecodeError> {
    let (h, t, r) = super::open(msg)?;
    if t != want {
        return Err(DecodeError::new(
            ErrorKind::UnknownType(h.msg_type),
            1,
            "ofp_header.type",
        ));
    }
    Ok((h.xid, r))
}

/// A checked OFPT_PACKET_IN borrowed from a received message
/// (1.3.5 §7.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInView<'a> {
    xid: Xid,
    buffer_id: BufferId,
    total_len: u16,
    reason: PacketInReason,
    table_id: u8,
    cookie: Cookie,
    match_: MatchRef<'a>,
    data: &'a [u8],
}

impl<'a> PacketInView<'a> {
    /// Checks a whole PACKET_IN message (header, fixed part, match with
    /// every OXM, the 2 bytes of padding) without allocating.
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<PacketInView<'a>, DecodeError> {
        let (xid, mut r) = open(msg, MsgType13::PacketIn)?;
        let buffer_id = BufferId(r.u32("ofp_packet_in.buffer_id")?);
        let total_len = r.u16("ofp_packet_in.total_len")?;
        let reason = r.u8("ofp_packet_in.reason")?.into();
        let table_id = r.u8("ofp_packet_in.table_id")?;
        let cookie = Cookie(r.u64("ofp_packet_in.cookie")?);
        let match_ = MatchRef::parse(&mut r)?;
        r.skip(2, "ofp_packet_in.pad")?;
        Ok(PacketInView {
            xid,
            buffer_id,
            total_len,
            reason,
            table_id,
            cookie,
            match_,
            data: r.take_rest(),
        })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// `buffer_id` ([`BufferId::NONE`] when unbuffered).
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        self.buffer_id
    }

    /// `total_len`: the frame's full length.
    #[inline]
    pub fn total_len(&self) -> u16 {
        self.total_len
    }

    /// `reason`.
    #[inline]
    pub fn reason(&self) -> PacketInReason {
        self.reason
    }

    /// `table_id`.
    #[inline]
    pub fn table_id(&self) -> u8 {
        self.table_id
    }

    /// `cookie`.
    #[inline]
    pub fn cookie(&self) -> Cookie {
        self.cookie
    }

    /// The checked match.
    #[inline]
    pub fn match_(&self) -> MatchRef<'a> {
        self.match_
    }

    /// The match's OXMs (already checked: the iterator yields no errors).
    #[inline]
    pub fn match_fields(&self) -> OxmIter<'a> {
        self.match_.iter()
    }

    /// The `IN_PORT` OXM's value, which switches always include
    /// (1.3.5 §7.4.1); `None` if this one did not.
    #[inline]
    pub fn in_port(&self) -> Option<PortNo> {
        self.match_.in_port()
    }

    /// The frame (or its first bytes when buffered).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The owned form.
    pub fn to_owned(&self) -> PacketIn {
        PacketIn {
            buffer_id: self.buffer_id,
            total_len: self.total_len,
            reason: self.reason,
            table_id: self.table_id,
            cookie: self.cookie,
            match_: self.match_.to_owned(),
            data: self.data.to_vec(),
        }
    }
}

/// A checked OFPT_FLOW_MOD borrowed from a received message
/// (1.3.5 §7.3.4.1). The constructor checks the match and every
/// instruction's header and length; action lists inside instructions are
/// decoded (and checked) when iterated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowModView<'a> {
    xid: Xid,
    head: FlowModHead,
    match_: MatchRef<'a>,
    instructions: &'a [u8],
    instructions_at: usize,
}

impl<'a> FlowModView<'a> {
    /// Checks a whole FLOW_MOD message without allocating.
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<FlowModView<'a>, DecodeError> {
        let (xid, mut r) = open(msg, MsgType13::FlowMod)?;
        let head = FlowModHead {
            cookie: Cookie(r.u64("ofp_flow_mod.cookie")?),
            cookie_mask: r.u64("ofp_flow_mod.cookie_mask")?,
            table_id: r.u8("ofp_flow_mod.table_id")?,
            command: r.u8("ofp_flow_mod.command")?.into(),
            idle_timeout: r.u16("ofp_flow_mod.idle_timeout")?,
            hard_timeout: r.u16("ofp_flow_mod.hard_timeout")?,
            priority: r.u16("ofp_flow_mod.priority")?,
            buffer_id: BufferId(r.u32("ofp_flow_mod.buffer_id")?),
            out_port: PortNo(r.u32("ofp_flow_mod.out_port")?),
            out_group: r.u32("ofp_flow_mod.out_group")?,
            flags: r.u16("ofp_flow_mod.flags")?,
        };
        r.skip(2, "ofp_flow_mod.pad")?;
        let match_ = MatchRef::parse(&mut r)?;
        let instructions_at = r.offset();
        let instructions = r.take_rest();
        for i in InstructionIter::new(instructions, instructions_at) {
            i?;
        }
        Ok(FlowModView {
            xid,
            head,
            match_,
            instructions,
            instructions_at,
        })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// The fixed fields.
    #[inline]
    pub fn head(&self) -> FlowModHead {
        self.head
    }

    /// `cookie`.
    #[inline]
    pub fn cookie(&self) -> Cookie {
        self.head.cookie
    }

    /// `table_id`.
    #[inline]
    pub fn table_id(&self) -> u8 {
        self.head.table_id
    }

    /// `command`.
    #[inline]
    pub fn command(&self) -> FlowModCommand {
        self.head.command
    }

    /// `priority`.
    #[inline]
    pub fn priority(&self) -> u16 {
        self.head.priority
    }

    /// `buffer_id`.
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        self.head.buffer_id
    }

    /// The checked match.
    #[inline]
    pub fn match_(&self) -> MatchRef<'a> {
        self.match_
    }

    /// The match's OXMs (already checked: the iterator yields no errors).
    #[inline]
    pub fn match_fields(&self) -> OxmIter<'a> {
        self.match_.iter()
    }

    /// The instructions (their headers already checked; action lists are
    /// decoded as they are iterated).
    #[inline]
    pub fn instructions(&self) -> InstructionIter<'a> {
        InstructionIter::new(self.instructions, self.instructions_at)
    }

    /// The raw instruction bytes.
    #[inline]
    pub fn instruction_bytes(&self) -> &'a [u8] {
        self.instructions
    }

    /// The owned form; fails if an action inside an instruction is bad.
    pub fn to_owned(&self) -> Result<FlowMod, DecodeError> {
        let instructions = self
            .instructions()
            .map(|i| i.and_then(|i| i.to_owned()))
            .collect::<Result<_, _>>()?;
        Ok(FlowMod::from_parts(
            self.head,
            self.match_.to_owned(),
            instructions,
        ))
    }
}

/// A checked OFPT_PACKET_OUT borrowed from a received message
/// (1.3.5 §7.3.7). The constructor checks `actions_len`; actions are
/// decoded (and checked) when iterated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketOutView<'a> {
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    actions: &'a [u8],
    actions_at: usize,
    data: &'a [u8],
}

impl<'a> PacketOutView<'a> {
    /// Checks a whole PACKET_OUT message without allocating. An
    /// `actions_len` past the end is [`ErrorKind::BadLength`].
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<PacketOutView<'a>, DecodeError> {
        let (xid, mut r) = open(msg, MsgType13::PacketOut)?;
        let buffer_id = BufferId(r.u32("ofp_packet_out.buffer_id")?);
        let in_port = PortNo(r.u32("ofp_packet_out.in_port")?);
        let at = r.offset();
        let actions_len = r.u16("ofp_packet_out.actions_len")? as usize;
        r.skip(6, "ofp_packet_out.pad")?;
        if actions_len > r.remaining() {
            return Err(DecodeError::new(
                ErrorKind::BadLength {
                    claimed: actions_len,
                },
                at,
                "ofp_packet_out.actions_len",
            ));
        }
        let actions_at = r.offset();
        let actions = r.bytes(actions_len, "ofp_packet_out.actions")?;
        Ok(PacketOutView {
            xid,
            buffer_id,
            in_port,
            actions,
            actions_at,
            data: r.take_rest(),
        })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// `buffer_id`.
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        self.buffer_id
    }

    /// `in_port`.
    #[inline]
    pub fn in_port(&self) -> PortNo {
        self.in_port
    }

    /// The actions, decoded as they are iterated.
    #[inline]
    pub fn actions(&self) -> ActionIter<'a> {
        ActionIter::new(self.actions, self.actions_at)
    }

    /// The raw action bytes.
    #[inline]
    pub fn action_bytes(&self) -> &'a [u8] {
        self.actions
    }

    /// The frame (empty when buffered).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The owned form; fails if an action is bad.
    pub fn to_owned(&self) -> Result<PacketOut, DecodeError> {
        Ok(PacketOut {
            buffer_id: self.buffer_id,
            in_port: self.in_port,
            actions: self.actions().collect::<Result<_, _>>()?,
            data: self.data.to_vec(),
        })
    }
}

/// A checked OFPT_ECHO_REQUEST or OFPT_ECHO_REPLY (1.3.5 §7.5.2, §7.5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoView<'a> {
    xid: Xid,
    request: bool,
    data: &'a [u8],
}

impl<'a> EchoView<'a> {
    /// Checks a whole ECHO_REQUEST or ECHO_REPLY message.
    #[inline]
    pub fn parse(msg: &'a [u8]) -> Result<EchoView<'a>, DecodeError> {
        let (h, t, mut r) = super::open(msg)?;
        let request = match t {
            MsgType13::EchoRequest => true,
            MsgType13::EchoReply => false,
            _ => {
                return Err(DecodeError::new(
                    ErrorKind::UnknownType(h.msg_type),
                    1,
                    "ofp_header.type",
                ));
            }
        };
        Ok(EchoView {
            xid: h.xid,
            request,
            data: r.take_rest(),
        })
    }

    /// `xid`.
    #[inline]
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// True for ECHO_REQUEST, false for ECHO_REPLY.
    #[inline]
    pub fn is_request(&self) -> bool {
        self.request
    }

    /// The payload.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
}

#[inline]
fn start(out: &mut Vec<u8>, t: MsgType13, xid: Xid) -> usize {
    start_message(out, Version::V13, t.into(), xid)
}

/// Appends an OFPT_PACKET_IN (1.3.5 §7.4.1) whose match holds
/// `match_oxms`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn encode_packet_in(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    total_len: u16,
    reason: PacketInReason,
    table_id: u8,
    cookie: Cookie,
    match_oxms: &[Oxm],
    data: &[u8],
) {
    let at = start(out, MsgType13::PacketIn, xid);
    out.put_u32(buffer_id.0);
    out.put_u16(total_len);
    out.put_u8(reason.into());
    out.put_u8(table_id);
    out.put_u64(cookie.0);
    emit_match(out, match_oxms);
    out.put_zeros(2);
    out.put_slice(data);
    finish_message(out, at);
}

/// Writes the header and fixed part of an OFPT_FLOW_MOD (1.3.5 §7.3.4.1)
/// and returns where the message starts. The caller then writes the match
/// (e.g. with [`crate::v13::oxm::start_match`], [`Oxm::emit`],
/// [`crate::v13::oxm::finish_match`]) and the instructions, and ends with
/// [`finish_message`]`(out, at)`. This is the building block of the other
/// FLOW_MOD encoders, for callers that write the match without a slice of
/// [`Oxm`].
#[inline]
pub fn start_flow_mod(out: &mut Vec<u8>, xid: Xid, head: &FlowModHead) -> usize {
    let at = start(out, MsgType13::FlowMod, xid);
    // The 40 bytes after the header, appended with one copy.
    let mut b = Fixed::<40>::new();
    b.put_u64(head.cookie.0);
    b.put_u64(head.cookie_mask);
    b.put_u8(head.table_id);
    b.put_u8(head.command.into());
    b.put_u16(head.idle_timeout);
    b.put_u16(head.hard_timeout);
    b.put_u16(head.priority);
    b.put_u32(head.buffer_id.0);
    b.put_u32(head.out_port.0);
    b.put_u32(head.out_group);
    b.put_u16(head.flags);
    b.put_zeros(2);
    out.put_slice(b.as_slice());
    at
}

/// Appends an OFPT_FLOW_MOD (1.3.5 §7.3.4.1).
#[inline]
pub fn encode_flow_mod(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &FlowModHead,
    match_oxms: &[Oxm],
    instructions: &[Instruction],
) {
    let at = start_flow_mod(out, xid, head);
    emit_match(out, match_oxms);
    emit_instructions(out, instructions);
    finish_message(out, at);
}

/// Appends an OFPT_FLOW_MOD whose only instruction is OFPIT_APPLY_ACTIONS
/// with `actions`, without building an [`Instruction`]. With no actions no
/// instruction is written (the flow drops, 1.3.5 §5.9).
#[inline]
pub fn encode_flow_mod_apply(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &FlowModHead,
    match_oxms: &[Oxm],
    actions: &[Action],
) {
    let at = start_flow_mod(out, xid, head);
    emit_match(out, match_oxms);
    if !actions.is_empty() {
        emit_actions_instruction(out, InstructionType::ApplyActions, actions);
    }
    finish_message(out, at);
}

/// Appends an OFPT_PACKET_OUT (1.3.5 §7.3.7).
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

/// [`encode_packet_out`] with the actions written by `write_actions`.
#[inline]
pub fn encode_packet_out_with(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    write_actions: impl FnOnce(&mut Vec<u8>),
    data: &[u8],
) {
    let at = start(out, MsgType13::PacketOut, xid);
    out.put_u32(buffer_id.0);
    out.put_u32(in_port.0);
    let len_at = out.len();
    out.put_u16(0);
    out.put_zeros(6);
    let actions_at = out.len();
    write_actions(out);
    let actions_len = (out.len() - actions_at).min(u16::MAX as usize) as u16;
    out.patch_u16(len_at, actions_len);
    out.put_slice(data);
    finish_message(out, at);
}

/// Appends an OFPT_ECHO_REQUEST (1.3.5 §7.5.2).
#[inline]
pub fn encode_echo_request(out: &mut Vec<u8>, xid: Xid, payload: &[u8]) {
    let at = start(out, MsgType13::EchoRequest, xid);
    out.put_slice(payload);
    finish_message(out, at);
}

/// Appends an OFPT_ECHO_REPLY (1.3.5 §7.5.3), which must echo the
/// request's xid and payload.
#[inline]
pub fn encode_echo_reply(out: &mut Vec<u8>, xid: Xid, payload: &[u8]) {
    let at = start(out, MsgType13::EchoReply, xid);
    out.put_slice(payload);
    finish_message(out, at);
}

/// Appends an OFPT_BARRIER_REQUEST (1.3.5 §7.3.8).
#[inline]
pub fn encode_barrier_request(out: &mut Vec<u8>, xid: Xid) {
    let at = start(out, MsgType13::BarrierRequest, xid);
    finish_message(out, at);
}

/// Appends an OFPT_BARRIER_REPLY (1.3.5 §7.3.8).
#[inline]
pub fn encode_barrier_reply(out: &mut Vec<u8>, xid: Xid) {
    let at = start(out, MsgType13::BarrierReply, xid);
    finish_message(out, at);
}
