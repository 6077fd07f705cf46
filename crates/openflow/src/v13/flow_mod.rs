//! OFPT_FLOW_MOD (`ofp_flow_mod`, 1.3.5 §7.3.4.1): the command codes and
//! flags, the fixed fields ([`FlowModHead`]), the view over received bytes,
//! the owned form and the encoders.

use crate::error::DecodeError;
use crate::header::{self, Header, MsgKind, MsgType13, finish_message, header_bytes};
use crate::types::{BufferId, Cookie, PortNo, Xid};
use crate::v13::action::Action;
use crate::v13::group::group_id;
use crate::v13::instruction::{
    Instruction, InstructionIter, InstructionType, emit_actions_instruction, emit_instructions,
};
use crate::v13::oxm::{Match13, MatchRef, Oxm, OxmIter, emit_match};
use crate::version::Version;
use crate::wire::{Put, Reader, get_u8, get_u16, get_u32, get_u64, pad8, set_u8, set_u32, set_u64};

crate::wire_enum! {
    /// `enum ofp_flow_mod_command` (1.3.5 §7.3.4.1).
    pub enum FlowModCommand: u8 {
        /// OFPFC_ADD.
        Add = 0,
        /// OFPFC_MODIFY.
        Modify = 1,
        /// OFPFC_MODIFY_STRICT.
        ModifyStrict = 2,
        /// OFPFC_DELETE.
        Delete = 3,
        /// OFPFC_DELETE_STRICT.
        DeleteStrict = 4,
    }
}

/// `enum ofp_flow_mod_flags` bits (1.3.5 §7.3.4.1).
pub mod flow_mod_flags {
    /// OFPFF_SEND_FLOW_REM: send a flow-removed message when the flow
    /// expires or is deleted.
    pub const SEND_FLOW_REM: u16 = 1 << 0;
    /// OFPFF_CHECK_OVERLAP: check for overlapping entries first.
    pub const CHECK_OVERLAP: u16 = 1 << 1;
    /// OFPFF_RESET_COUNTS: reset flow packet and byte counts.
    pub const RESET_COUNTS: u16 = 1 << 2;
    /// OFPFF_NO_PKT_COUNTS: don't keep track of packet count.
    pub const NO_PKT_COUNTS: u16 = 1 << 3;
    /// OFPFF_NO_BYT_COUNTS: don't keep track of byte count.
    pub const NO_BYT_COUNTS: u16 = 1 << 4;
}

/// `OFP_DEFAULT_PRIORITY`.
pub const OFP_DEFAULT_PRIORITY: u16 = 0x8000;

/// Byte offsets of `ofp_flow_mod`, header included.
mod field {
    use crate::wire::Field;

    pub const COOKIE: Field = 8..16;
    pub const COOKIE_MASK: Field = 16..24;
    pub const TABLE_ID: usize = 24;
    pub const COMMAND: usize = 25;
    pub const IDLE_TIMEOUT: Field = 26..28;
    pub const HARD_TIMEOUT: Field = 28..30;
    pub const PRIORITY: Field = 30..32;
    pub const BUFFER_ID: Field = 32..36;
    pub const OUT_PORT: Field = 36..40;
    pub const OUT_GROUP: Field = 40..44;
    pub const FLAGS: Field = 44..46;
    // 46..48: padding.
    /// `ofp_match`: type, length (without the padding to 8), OXMs; the
    /// instructions follow the padded match.
    pub const MATCH: usize = 48;
    pub const MATCH_LEN: Field = 50..52;
    pub const OXMS: usize = 52;
}

impl Default for FlowModHead {
    /// An ADD in table 0 at [`OFP_DEFAULT_PRIORITY`], no timeouts, no
    /// buffer, any out port and group, no flags.
    fn default() -> Self {
        FlowModHead {
            cookie: Cookie(0),
            cookie_mask: 0,
            table_id: 0,
            command: FlowModCommand::Add,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: OFP_DEFAULT_PRIORITY,
            buffer_id: BufferId::NONE,
            out_port: PortNo::ANY,
            out_group: group_id::ANY,
            flags: 0,
        }
    }
}

crate::header::message_view! {
    /// A view of an OFPT_FLOW_MOD in a buffer (1.3.5 §7.3.4.1).
    ///
    /// [`FlowModView::new_checked`] checks the header, the match with every
    /// OXM and its padding, and every instruction's header and length; the
    /// action lists inside instructions are checked as they are iterated.
    /// Accessors never panic.
    FlowModView
}

impl<T: AsRef<[u8]>> FlowModView<T> {
    /// A view of `buffer`, which must hold exactly one OFPT_FLOW_MOD, its
    /// match and its instructions all well formed, without allocating.
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let b = buffer.as_ref();
        Header::check_kind(b, Version::V13, &[MsgKind::FlowMod])?;
        let mut r = Reader::new(b);
        r.skip(field::MATCH, "ofp_flow_mod")?;
        MatchRef::parse(&mut r)?;
        let at = r.offset();
        for i in InstructionIter::new(r.take_rest(), at) {
            i?;
        }
        Ok(FlowModView { buffer })
    }

    /// The match's `length` field: type, length and OXMs, without padding.
    #[inline]
    pub fn match_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::MATCH_LEN)
    }

    /// Where the instructions start: after the padded match.
    #[inline]
    fn instructions_start(&self) -> usize {
        let len = usize::from(self.match_len());
        field::MATCH + len + pad8(len)
    }
}

crate::twin::flow_mod_head! {
    spec: "1.3.5 §7.3.4.1",
    command: read |b: &[u8], f| FlowModCommand::from(get_u8(b, f)),
        write |b: &mut [u8], f, v: FlowModCommand| set_u8(b, f, v.into()),
    out_port: read |b: &[u8], f| PortNo(get_u32(b, f)),
        write |b: &mut [u8], f, v: PortNo| set_u32(b, f, v.0),
    flags: "[`flow_mod_flags`] bits",
    own: [
        /// `cookie_mask` (modify/delete: which cookie bits must match).
        cookie_mask: u64,
            read |b: &[u8]| get_u64(b, field::COOKIE_MASK),
            write |b: &mut [u8], v| set_u64(b, field::COOKIE_MASK, v);
        /// `table_id`.
        table_id: u8,
            read |b: &[u8]| get_u8(b, field::TABLE_ID),
            write |b: &mut [u8], v| set_u8(b, field::TABLE_ID, v);
        /// `out_group` (delete: require this output group;
        /// [`group_id::ANY`] for any).
        out_group: u32,
            read |b: &[u8]| get_u32(b, field::OUT_GROUP),
            write |b: &mut [u8], v| set_u32(b, field::OUT_GROUP, v);
    ],
    body: [
        /// `match`.
        match_: Match13,
        /// `instructions`.
        instructions: Vec<Instruction>,
    ],
}

impl<'a, T: AsRef<[u8]> + ?Sized> FlowModView<&'a T> {
    /// The checked match.
    #[inline]
    pub fn match_(&self) -> MatchRef<'a> {
        let end = field::MATCH + usize::from(self.match_len());
        let oxms = self.buffer.as_ref().get(field::OXMS..end).unwrap_or(&[]);
        MatchRef::new_unchecked(oxms, field::OXMS)
    }

    /// The match's OXMs (already checked: the iterator yields no errors).
    #[inline]
    pub fn match_fields(&self) -> OxmIter<'a> {
        self.match_().iter()
    }

    /// The raw instruction bytes.
    #[inline]
    pub fn instruction_bytes(&self) -> &'a [u8] {
        let start = self.instructions_start();
        self.buffer.as_ref().get(start..).unwrap_or(&[])
    }

    /// The instructions (their headers already checked; action lists are
    /// decoded as they are iterated).
    #[inline]
    pub fn instructions(&self) -> InstructionIter<'a> {
        InstructionIter::new(self.instruction_bytes(), self.instructions_start())
    }
}

impl FlowMod {
    /// The owned form of a checked view; fails if an action inside an
    /// instruction is bad.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(v: &FlowModView<&T>) -> Result<Self, DecodeError> {
        let instructions = v
            .instructions()
            .map(|i| i.and_then(|i| i.to_owned()))
            .collect::<Result<_, _>>()?;
        Ok(FlowMod::from_parts(
            v.head(),
            v.match_().to_owned(),
            instructions,
        ))
    }

    /// Appends the whole message, [`FlowMod::buffer_len`] bytes (through
    /// [`encode_flow_mod`]).
    pub fn emit(&self, xid: Xid, out: &mut Vec<u8>) {
        encode_flow_mod(
            out,
            xid,
            &self.head(),
            &self.match_.fields,
            &self.instructions,
        );
    }

    /// Bytes of the whole message.
    pub fn buffer_len(&self) -> usize {
        field::MATCH
            + self.match_.wire_len()
            + self
                .instructions
                .iter()
                .map(Instruction::wire_len)
                .sum::<usize>()
    }
}

/// Writes the header and fixed part of an OFPT_FLOW_MOD (1.3.5 §7.3.4.1)
/// and returns where the message starts. The caller then writes the match
/// (e.g. with [`crate::v13::oxm::emit_match_with`]) and the instructions,
/// and ends with [`finish_message`]`(out, at)`. This is the building block
/// of the other FLOW_MOD encoders, for callers that write the match
/// without a slice of [`Oxm`].
#[inline]
pub fn start_flow_mod(out: &mut Vec<u8>, xid: Xid, head: &FlowModHead) -> usize {
    // Header and fixed part in one array, appended with one copy.
    let at = out.len();
    out.put_slice(&flow_mod_head_bytes(xid, head));
    at
}

/// Bytes of a FLOW_MOD before its match: the header (length 0, for
/// [`finish_message`] to fill in) and the fixed fields of `head`
/// (1.3.5 §7.3.4.1), at their constant offsets.
#[inline]
pub fn flow_mod_head_bytes(xid: Xid, head: &FlowModHead) -> [u8; FLOW_MOD_HEAD_LEN] {
    let mut b = [0u8; FLOW_MOD_HEAD_LEN];
    b[..header::HEADER_LEN].copy_from_slice(&header_bytes(
        Version::V13,
        MsgType13::FlowMod.into(),
        xid,
    ));
    FlowModView::new_unchecked(&mut b[..]).set_head(head);
    b
}

/// Length of a FLOW_MOD's header and fixed fields, where the match starts.
pub const FLOW_MOD_HEAD_LEN: usize = field::MATCH;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_from_the_buffer() {
        let head = FlowModHead {
            cookie: Cookie(1),
            cookie_mask: 2,
            table_id: 3,
            command: FlowModCommand::ModifyStrict,
            idle_timeout: 4,
            hard_timeout: 5,
            priority: 6,
            buffer_id: BufferId(7),
            out_port: PortNo(8),
            out_group: 9,
            flags: flow_mod_flags::SEND_FLOW_REM,
        };
        let actions = [Action::Output {
            port: PortNo(2),
            max_len: 0,
        }];
        let mut out = Vec::new();
        encode_flow_mod_apply(&mut out, Xid(4), &head, &[Oxm::InPort(PortNo(1))], &actions);
        let v = FlowModView::new_checked(&out[..]).unwrap();
        assert_eq!((v.xid(), v.head()), (Xid(4), head));
        assert_eq!(v.match_().in_port(), Some(PortNo(1)));
        assert_eq!(v.instructions().count(), 1);
        let fm = FlowMod::parse(&v).unwrap();
        assert_eq!(fm.buffer_len(), out.len());
        let mut v = FlowModView::new_checked(&mut out[..]).unwrap();
        v.set_priority(60);
        assert_eq!(FlowModView::new_unchecked(&out[..]).priority(), 60);
    }
}
