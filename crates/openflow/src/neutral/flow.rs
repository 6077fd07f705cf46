//! [`FlowSpec`]: "install this match -> these actions", and the FLOW_MODs
//! that add and delete flows in either version.

use super::action::{ActionSpec, emit_v13_actions};
use super::matching::{L2Match, MatchSpec};
use crate::header::{self, HEADER_LEN, MsgType10, MsgType13, header_bytes};
use crate::types::{BufferId, Cookie, PortNo, Xid};
use crate::v10::ofmatch::{MATCH_LEN, port_to_wire};
use crate::v13::oxm::{L2_TLVS_LEN, MATCH_BUF, OFPMT_OXM, l2_tlvs};
use crate::version::Version;
use crate::wire::{Fixed, Put, pad8};
use crate::{v10, v13};
use std::borrow::Cow;

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
    pub match_: MatchSpec<'a>,
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
    /// A meter the packets go through before the actions (1.3.5 §5.7,
    /// OFPIT_METER), added with [`encode_meter`]. 1.0 has no meters: a 1.0
    /// switch gets the flow unmetered.
    pub meter: Option<u32>,
}

impl<'a> FlowSpec<'a> {
    /// A flow with `match_` and `actions`, priority 0x8000 (both versions'
    /// default), no timeouts, cookie 0, no buffer, no flags.
    pub const fn new(match_: MatchSpec<'a>, actions: &'a [ActionSpec]) -> FlowSpec<'a> {
        FlowSpec {
            match_,
            priority: 0x8000,
            idle_timeout: 0,
            hard_timeout: 0,
            cookie: Cookie(0),
            buffer_id: None,
            flags: 0,
            actions,
            meter: None,
        }
    }
}

/// Appends a FLOW_MOD that adds `flow` (1.0.0 §5.3.3: OFPFC_ADD with an
/// `ofp_match` and actions; 1.3.5 §7.3.4.1: OFPFC_ADD in table 0 with an
/// OXM match and one OFPIT_APPLY_ACTIONS instruction, none for a drop).
pub fn encode_flow_add(out: &mut Vec<u8>, version: Version, xid: Xid, flow: &FlowSpec<'_>) {
    match version {
        Version::V10 => match *flow.actions {
            [] => encode_flow_add10_fixed(out, xid, flow, None),
            [ActionSpec::Output { port, max_len }] => {
                encode_flow_add10_fixed(out, xid, flow, Some((port, max_len)))
            }
            _ => encode_flow_add10(out, xid, flow),
        },
        Version::V13 => match (flow.meter, &flow.match_, flow.actions) {
            (None, MatchSpec::L2(l2), []) => encode_flow_add13_l2(out, xid, flow, l2, None),
            (None, MatchSpec::L2(l2), &[ActionSpec::Output { port, max_len }]) => {
                encode_flow_add13_l2(out, xid, flow, l2, Some((port, max_len)))
            }
            _ => encode_flow_add13(out, xid, flow),
        },
    }
}

/// The 1.3 fixed fields of [`encode_flow_add`]'s FLOW_MOD.
#[inline(always)]
fn flow_add13_head(flow: &FlowSpec<'_>) -> v13::FlowModHead {
    v13::FlowModHead {
        cookie: flow.cookie,
        idle_timeout: flow.idle_timeout,
        hard_timeout: flow.hard_timeout,
        priority: flow.priority,
        buffer_id: flow.buffer_id.unwrap_or(BufferId::NONE),
        flags: flow.flags,
        ..v13::FlowModHead::default()
    }
}

/// The 1.3 FLOW_MOD of [`encode_flow_add`] through the general encoder:
/// any match, actions and meter. Out of line, as [`encode_flow_add10`]:
/// inlined, with the 1.0 match written in line beside it, the 1.3 exact
/// answer took 2 ns more in `benches/hot_path.rs` (31.1 against 28.9, five
/// runs' medians), though callgrind counted 5 instructions fewer.
#[inline(never)]
pub(super) fn encode_flow_add13(out: &mut Vec<u8>, xid: Xid, flow: &FlowSpec<'_>) {
    let head = flow_add13_head(flow);
    match flow.meter {
        None => encode_flow_mod13(out, xid, &head, &flow.match_, flow.actions),
        Some(meter) => {
            encode_metered_flow_mod13(out, xid, &head, &flow.match_, flow.actions, meter)
        }
    }
}

/// The 1.3 L2 `ofp_match` with its padding: type, length, the TLVs.
const L2_MATCH13_LEN: usize = 4 + L2_TLVS_LEN + pad8(4 + L2_TLVS_LEN);

/// The 1.3 FLOW_MOD's fixed fields and its L2 match.
const L2_FLOW_ADD13_LEN: usize = v13::FLOW_MOD_HEAD_LEN + L2_MATCH13_LEN;

/// The 1.3 FLOW_MOD of [`encode_flow_add`] with the L2 match
/// ([`MatchSpec::L2`], the learning switch's default), no meter, and no
/// action or one output to `output`'s port with its `max_len`: the same
/// bytes as [`encode_flow_add13`], written in one go, as
/// [`encode_flow_add10_fixed`] writes 1.0's.
///
/// The message is `ofp_flow_mod` (1.3.5 §7.3.4.1): the header and the
/// fixed fields (48 bytes), the `ofp_match` with its four TLVs (38 bytes,
/// padded to 40; §7.2.3.1), then, with an output, one OFPIT_APPLY_ACTIONS
/// instruction (8 bytes, §7.2.4) holding one `ofp_action_output` (16
/// bytes, §7.2.5): 88 or 112 bytes, every field at a constant offset. The
/// general encoder builds the same image on the stack at running
/// positions, patches its lengths and copies it out. For issue 28 target
/// 3 (1.3 at 0.9x of 1.0 with the default match), callgrind on
/// `examples/flow_request_loop.rs`: 331 -> 272 instructions per request,
/// PACKET_IN parse included; the live worker 992-1,000 -> 877-880 per
/// response (BENCHMARKS.md, "The learning switch's match and its limit").
#[inline(always)]
fn encode_flow_add13_l2(
    out: &mut Vec<u8>,
    xid: Xid,
    flow: &FlowSpec<'_>,
    l2: &L2Match,
    output: Option<(PortNo, u16)>,
) {
    use v13::action::{ACTION_OUTPUT_LEN, output_bytes};
    use v13::instruction::{InstructionType, actions_instruction_head};
    match output {
        None => {
            if let Some(b) = append_zeroed::<L2_FLOW_ADD13_LEN>(out) {
                write_flow_add13_l2_part(b, xid, flow, l2, L2_FLOW_ADD13_LEN);
            }
        }
        Some((port, max_len)) => {
            const INSTRUCTION_LEN: usize = 8 + ACTION_OUTPUT_LEN;
            const LEN: usize = L2_FLOW_ADD13_LEN + INSTRUCTION_LEN;
            if let Some(b) = append_zeroed::<LEN>(out) {
                let (fixed, instruction) = b.split_at_mut(L2_FLOW_ADD13_LEN);
                if let Ok(fixed) = <&mut [u8; L2_FLOW_ADD13_LEN]>::try_from(fixed) {
                    write_flow_add13_l2_part(fixed, xid, flow, l2, LEN);
                }
                let mut head = actions_instruction_head(InstructionType::ApplyActions);
                head[2..4].copy_from_slice(&(INSTRUCTION_LEN as u16).to_be_bytes());
                instruction[..8].copy_from_slice(&head);
                instruction[8..].copy_from_slice(&output_bytes(port, max_len));
            }
        }
    }
}

/// Stores the header, the fixed fields and the L2 match of
/// [`encode_flow_add13_l2`]'s FLOW_MOD, the message `len` bytes long, into
/// `b` (zeros where a field is 0, and the padding).
#[inline(always)]
fn write_flow_add13_l2_part(
    b: &mut [u8; L2_FLOW_ADD13_LEN],
    xid: Xid,
    flow: &FlowSpec<'_>,
    l2: &L2Match,
    len: usize,
) {
    const MATCH: usize = v13::FLOW_MOD_HEAD_LEN;
    b[..HEADER_LEN].copy_from_slice(&header_bytes(Version::V13, MsgType13::FlowMod.into(), xid));
    b[header::field::LENGTH].copy_from_slice(&(len as u16).to_be_bytes());
    v13::FlowModView::new_unchecked(&mut b[..]).set_head(&flow_add13_head(flow));
    b[MATCH..MATCH + 2].copy_from_slice(&OFPMT_OXM.to_be_bytes());
    b[MATCH + 2..MATCH + 4].copy_from_slice(&((4 + L2_TLVS_LEN) as u16).to_be_bytes());
    b[MATCH + 4..MATCH + 4 + L2_TLVS_LEN].copy_from_slice(&l2_tlvs(
        l2.in_port,
        l2.eth_dst.0,
        l2.eth_src.0,
        l2.vid,
    ));
}

/// The 1.0 FLOW_MOD of [`encode_flow_add`] through the general encoder
/// ([`v10::encode_flow_mod_mapped`]): any actions. 1.0 has no meters, so
/// `flow.meter` is ignored. Out of line: inlined, its stack frame and
/// saved registers were paid by every call of the fixed-size paths.
#[inline(never)]
pub(super) fn encode_flow_add10(out: &mut Vec<u8>, xid: Xid, flow: &FlowSpec<'_>) {
    let head = v10::FlowModHead {
        match_: flow.match_.to_match10(),
        cookie: flow.cookie,
        command: v10::FlowModCommand::Add,
        idle_timeout: flow.idle_timeout,
        hard_timeout: flow.hard_timeout,
        priority: flow.priority,
        buffer_id: flow.buffer_id.unwrap_or(BufferId::NONE),
        out_port: PortNo::ANY,
        flags: flow.flags,
    };
    v10::encode_flow_mod_mapped(out, xid, &head, flow.actions, |a| Cow::Owned(a.to_v10()));
}

/// The 1.0 FLOW_MOD of [`encode_flow_add`] when its actions are none or
/// one output to `output`'s port with its `max_len` (the learning switch's
/// answer): the same bytes as [`encode_flow_add10`], written in one go.
///
/// The message is `ofp_flow_mod` (1.0.0 §5.3.3): the header, the 40-byte
/// `ofp_match` (§5.2.3) at offset 8, the fixed fields up to offset 72,
/// then the 8-byte `ofp_action_output` (§5.2.4) if there is one: 72 or 80
/// bytes, every field at a constant offset. It is written by hand because
/// that image has a fixed size: its zeros are appended once and every
/// field is stored in place, the match straight from the frame
/// ([`MatchSpec::write_match10`]), where the general encoder builds a
/// [`v10::FlowModHead`] and its [`v10::Match10`], converts each action and
/// patches the length afterwards. Measured for issue 28 target 2 with
/// `benches/hot_path.rs` (`answer/*` against `answer/*-general`) and with
/// callgrind on `examples/flow_request_loop.rs`: 330 -> 289 (exact) and
/// 308 -> 269 (L2) instructions per request, PACKET_IN parse included;
/// 259 and 239 once each length got its own branch and the whole was
/// inlined into [`encode_flow_add`]; then (another compiler and the
/// example's loop rewritten, 243 and 223 before) 217 and 202 with the match
/// written in line rather than called, the general encoders kept out of
/// line so this path saves fewer registers, and
/// [`crate::packet::PlainIpv4::new`]'s checks read as words (the template
/// the responder patches: 80).
#[inline(always)]
fn encode_flow_add10_fixed(
    out: &mut Vec<u8>,
    xid: Xid,
    flow: &FlowSpec<'_>,
    output: Option<(PortNo, u16)>,
) {
    use v10::action::ACTION_OUTPUT_LEN;
    use v10::flow_mod::FIXED_LEN;
    // Each branch appends zeros of a constant length (the padding and
    // OFPFC_ADD stay 0) and fills them in place: with one length computed
    // at run time, every store was bounds-checked against it (callgrind);
    // built in a stack array and copied, the image was split into its
    // bytes and cost more than the general encoder.
    match output {
        None => {
            if let Some(b) = append_zeroed::<FIXED_LEN>(out) {
                write_flow_add10_fixed_part(b, xid, flow, FIXED_LEN);
            }
        }
        Some((port, max_len)) => {
            const LEN: usize = FIXED_LEN + ACTION_OUTPUT_LEN;
            if let Some(b) = append_zeroed::<LEN>(out) {
                let (fixed, action) = b.split_at_mut(FIXED_LEN);
                if let Ok(fixed) = <&mut [u8; FIXED_LEN]>::try_from(fixed) {
                    write_flow_add10_fixed_part(fixed, xid, flow, LEN);
                }
                if let Some(bytes) = (v10::Action::Output { port, max_len }).output_bytes() {
                    action.copy_from_slice(&bytes);
                }
            }
        }
    }
}

/// Appends `N` zero bytes to `out` and returns them.
#[inline(always)]
fn append_zeroed<const N: usize>(out: &mut Vec<u8>) -> Option<&mut [u8; N]> {
    out.extend_from_slice(&[0; N]);
    out.last_chunk_mut()
}

/// Stores the fixed part of [`encode_flow_add10_fixed`]'s FLOW_MOD, the
/// message `len` bytes long, into `b` (zeros where a field is 0).
#[inline(always)]
fn write_flow_add10_fixed_part(
    b: &mut [u8; v10::flow_mod::FIXED_LEN],
    xid: Xid,
    flow: &FlowSpec<'_>,
    len: usize,
) {
    use v10::flow_mod::field;
    b[..HEADER_LEN].copy_from_slice(&header_bytes(Version::V10, MsgType10::FlowMod.into(), xid));
    b[header::field::LENGTH].copy_from_slice(&(len as u16).to_be_bytes());
    if let Ok(m) = <&mut [u8; MATCH_LEN]>::try_from(&mut b[field::MATCH]) {
        flow.match_.write_match10(m);
    }
    b[field::COOKIE].copy_from_slice(&flow.cookie.0.to_be_bytes());
    b[field::COMMAND].copy_from_slice(&u16::from(v10::FlowModCommand::Add).to_be_bytes());
    b[field::IDLE_TIMEOUT].copy_from_slice(&flow.idle_timeout.to_be_bytes());
    b[field::HARD_TIMEOUT].copy_from_slice(&flow.hard_timeout.to_be_bytes());
    b[field::PRIORITY].copy_from_slice(&flow.priority.to_be_bytes());
    let buffer_id = flow.buffer_id.unwrap_or(BufferId::NONE);
    b[field::BUFFER_ID].copy_from_slice(&buffer_id.0.to_be_bytes());
    b[field::OUT_PORT].copy_from_slice(&port_to_wire(PortNo::ANY).to_be_bytes());
    b[field::FLAGS].copy_from_slice(&flow.flags.to_be_bytes());
}

/// A 1.3 FLOW_MOD with `match_`, an OFPIT_METER instruction and an
/// APPLY_ACTIONS one (the meter runs first, 1.3.5 §5.9).
fn encode_metered_flow_mod13(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &v13::FlowModHead,
    match_: &MatchSpec,
    actions: &[ActionSpec],
    meter: u32,
) {
    use v13::instruction::{
        Instruction, InstructionType, actions_instruction_head, emit_instructions,
        finish_actions_instruction,
    };
    let at = out.len();
    out.put_slice(&v13::flow_mod_head_bytes(xid, head));
    match_.emit_oxm_match(out);
    emit_instructions(out, &[Instruction::Meter(meter)]);
    if !actions.is_empty() {
        let instruction = out.len();
        out.put_slice(&actions_instruction_head(InstructionType::ApplyActions));
        emit_v13_actions(out, actions);
        finish_actions_instruction(out, instruction);
    }
    crate::header::finish_message(out, at);
}

/// Appends a 1.3 METER_MOD (1.3.5 §7.3.4.4) that adds meter `meter` with
/// one drop band at `kbps` kbit/s (a bucket of one second's worth), or,
/// with `kbps` `None`, deletes it (and the flows that use it, §5.7). 1.0
/// has no meters: nothing is written.
pub fn encode_meter(out: &mut Vec<u8>, version: Version, xid: Xid, meter: u32, kbps: Option<u32>) {
    use v13::meter::{MeterBand, MeterMod, MeterModCommand, meter_flags};
    if version != Version::V13 {
        return;
    }
    let (command, bands) = match kbps {
        Some(rate) => (
            MeterModCommand::Add,
            vec![MeterBand::Drop {
                rate,
                burst_size: 0,
            }],
        ),
        None => (MeterModCommand::Delete, Vec::new()),
    };
    v13::Message::MeterMod(MeterMod {
        command,
        flags: meter_flags::KBPS,
        meter_id: meter,
        bands,
    })
    .encode(xid, out);
}

/// Output actions written into the stack buffer with the rest of a 1.3
/// FLOW_MOD (as the 1.0 encoder does), so that the common flow (a port or
/// a few) is appended with one copy.
const INLINE_OUTPUTS13: usize = 4;

/// A 1.3 FLOW_MOD with `match_` and one APPLY_ACTIONS instruction.
fn encode_flow_mod13(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &v13::FlowModHead,
    match_: &MatchSpec,
    actions: &[ActionSpec],
) {
    use v13::action::{ACTION_OUTPUT_LEN, output_bytes};
    use v13::instruction::{InstructionType, actions_instruction_head, finish_actions_instruction};
    // The header, the fixed fields, the match, the instruction's head and
    // up to four output actions are built on the stack at constant
    // offsets where they have them and appended with one copy; other
    // actions follow.
    let at = out.len();
    let mut b = Fixed::<
        { v13::FLOW_MOD_HEAD_LEN + MATCH_BUF + 8 + INLINE_OUTPUTS13 * ACTION_OUTPUT_LEN },
    >::new();
    b.put_array(v13::flow_mod_head_bytes(xid, head));
    match_.put_oxm_match(&mut b);
    let outputs_only = actions.len() <= INLINE_OUTPUTS13
        && actions
            .iter()
            .all(|a| matches!(a, ActionSpec::Output { .. }));
    if actions.is_empty() {
        out.put_slice(b.as_slice());
    } else if outputs_only {
        let mut instruction = actions_instruction_head(InstructionType::ApplyActions);
        let len = (8 + actions.len() * ACTION_OUTPUT_LEN) as u16;
        instruction[2..4].copy_from_slice(&len.to_be_bytes());
        b.put_array(instruction);
        for a in actions {
            if let ActionSpec::Output { port, max_len } = *a {
                b.put_array(output_bytes(port, max_len));
            }
        }
        out.put_slice(b.as_slice());
    } else {
        let instruction = at + b.as_slice().len();
        b.put_array(actions_instruction_head(InstructionType::ApplyActions));
        out.put_slice(b.as_slice());
        emit_v13_actions(out, actions);
        finish_actions_instruction(out, instruction);
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
            v10::encode_flow_mod(out, xid, &head, &[]);
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

/// Appends a 1.3 FLOW_MOD that deletes, from every table, every flow whose
/// cookie matches `cookie` in the bits of `mask` (1.3.5 §7.3.4.1: OFPFC_DELETE
/// with `cookie_mask`). 1.0 cannot delete by cookie.
pub fn encode_flow_delete_by_cookie(out: &mut Vec<u8>, xid: Xid, cookie: Cookie, mask: u64) {
    let head = v13::FlowModHead {
        table_id: v13::messages::table_id::ALL,
        command: v13::FlowModCommand::Delete,
        cookie,
        cookie_mask: mask,
        priority: 0,
        out_port: PortNo::ANY,
        ..v13::FlowModHead::default()
    };
    encode_flow_mod13(out, xid, &head, &MatchSpec::all(), &[]);
}

/// Appends a 1.3 FLOW_MOD that gives every flow of table 0 that `match_`
/// covers (not strict) and whose cookie matches `cookie` in the bits of
/// `mask` the actions `actions`; their matches, priorities, timeouts and
/// counters stay, and a FLOW_MOD that covers no flow adds none (1.3.5
/// §7.3.4.1 and §6.4, OFPFC_MODIFY). 1.0 has no counterpart: its MODIFY
/// adds a flow when none matches (1.0.0 §4.6).
pub fn encode_flow_modify13(
    out: &mut Vec<u8>,
    xid: Xid,
    match_: &MatchSpec,
    (cookie, mask): (Cookie, u64),
    actions: &[ActionSpec],
) {
    let head = v13::FlowModHead {
        command: v13::FlowModCommand::Modify,
        cookie,
        cookie_mask: mask,
        ..v13::FlowModHead::default()
    };
    encode_flow_mod13(out, xid, &head, match_, actions);
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
