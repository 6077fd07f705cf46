//! OFPT_FLOW_MOD (`ofp_flow_mod`, 1.0.0 §5.3.3): the command codes and
//! flags, the fixed fields ([`FlowModHead`]), the view over received bytes,
//! the owned form and the encoders.

use crate::error::DecodeError;
use crate::header::{self, Header, MsgKind, MsgType10, finish_message, header_bytes};
use crate::types::{BufferId, Cookie, PortNo, Xid};
use crate::v10::action::{ACTION_OUTPUT_LEN, Action, ActionIter};
use crate::v10::ofmatch::{MATCH_LEN, Match10, port_to_wire};
use crate::version::Version;
use crate::wire::{Put, get_array, get_u16, set_u16};
use std::borrow::Cow;

crate::wire_enum! {
    /// `ofp_flow_mod_command` (1.0.0 §5.3.3).
    pub enum FlowModCommand: u16 {
        /// `OFPFC_ADD`.
        Add = 0,
        /// `OFPFC_MODIFY`: all matching flows.
        Modify = 1,
        /// `OFPFC_MODIFY_STRICT`: the flow with this exact match and priority.
        ModifyStrict = 2,
        /// `OFPFC_DELETE`: all matching flows.
        Delete = 3,
        /// `OFPFC_DELETE_STRICT`.
        DeleteStrict = 4,
    }
}

/// `OFPFF_SEND_FLOW_REM`: send FLOW_REMOVED when the flow expires or is
/// deleted (1.0.0 §5.3.3).
pub const OFPFF_SEND_FLOW_REM: u16 = 1 << 0;
/// `OFPFF_CHECK_OVERLAP`: refuse to add an overlapping flow.
pub const OFPFF_CHECK_OVERLAP: u16 = 1 << 1;
/// `OFPFF_EMERG`: an emergency flow.
pub const OFPFF_EMERG: u16 = 1 << 2;

/// Byte offsets of `ofp_flow_mod`, header included (also the neutral
/// encoder's fixed-size FLOW_MOD, `neutral::flow`).
pub(crate) mod field {
    use crate::wire::{Field, Rest};

    pub const MATCH: Field = 8..48;
    pub const COOKIE: Field = 48..56;
    pub const COMMAND: Field = 56..58;
    pub const IDLE_TIMEOUT: Field = 58..60;
    pub const HARD_TIMEOUT: Field = 60..62;
    pub const PRIORITY: Field = 62..64;
    pub const BUFFER_ID: Field = 64..68;
    pub const OUT_PORT: Field = 68..70;
    pub const FLAGS: Field = 70..72;
    pub const ACTIONS: Rest = 72..;
}

/// The fixed part, header included: where the actions start.
pub(crate) const FIXED_LEN: usize = field::ACTIONS.start;

crate::header::message_view! {
    /// A view of an OFPT_FLOW_MOD in a buffer (1.0.0 §5.3.3).
    ///
    /// [`FlowModView::new_checked`] checks the header; the actions are checked
    /// as they are iterated ([`FlowModView::actions`]). Accessors never panic.
    FlowModView
}

impl<T: AsRef<[u8]>> FlowModView<T> {
    /// A view of `buffer`, which must hold exactly one OFPT_FLOW_MOD (the
    /// header check, whose length rule covers the 72-byte fixed part).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        Header::check_kind(buffer.as_ref(), Version::V10, &[MsgKind::FlowMod])?;
        Ok(FlowModView { buffer })
    }
}

crate::twin::flow_mod_head! {
    spec: "1.0.0 §5.3.3",
    command: read |b: &[u8], f| FlowModCommand::from(get_u16(b, f)),
        write |b: &mut [u8], f, v: FlowModCommand| set_u16(b, f, v.into()),
    out_port: read |b: &[u8], f| PortNo::from_of10(get_u16(b, f)),
        write |b: &mut [u8], f, v| set_u16(b, f, port_to_wire(v)),
    flags: "`OFPFF_*` bits",
    own: [
        /// `match`.
        match_: Match10,
            read |b: &[u8]| get_array::<MATCH_LEN>(b, field::MATCH)
                .map_or(Match10::ALL, |m| Match10::from_bytes(&m)),
            write |b: &mut [u8], v: Match10| {
                if let Some(m) = b.get_mut(field::MATCH).and_then(|m| <&mut [u8; MATCH_LEN]>::try_from(m).ok()) {
                    v.write(m);
                }
            };
    ],
    body: [
        /// `actions`.
        actions: Vec<Action>,
    ],
}

impl<'a, T: AsRef<[u8]> + ?Sized> FlowModView<&'a T> {
    /// The raw actions region.
    #[inline]
    pub fn actions_bytes(&self) -> &'a [u8] {
        self.buffer.as_ref().get(field::ACTIONS).unwrap_or(&[])
    }

    /// The actions, each checked as it is reached.
    #[inline]
    pub fn actions(&self) -> ActionIter<'a> {
        ActionIter::new(self.actions_bytes(), field::ACTIONS.start)
    }
}

impl FlowMod {
    /// The owned form of a checked view; fails on the first bad action.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(v: &FlowModView<&T>) -> Result<Self, DecodeError> {
        Ok(FlowMod::from_parts(v.head(), v.actions().collect_vec()?))
    }

    /// Appends the whole message, [`FlowMod::buffer_len`] bytes (through
    /// [`encode_flow_mod`]).
    pub fn emit(&self, xid: Xid, out: &mut Vec<u8>) {
        encode_flow_mod(out, xid, &self.head(), &self.actions);
    }

    /// Bytes of the whole message.
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN + self.actions.iter().map(Action::wire_len).sum::<usize>()
    }
}

/// Appends an OFPT_FLOW_MOD (1.0.0 §5.3.3) with `actions`.
#[inline]
pub fn encode_flow_mod(out: &mut Vec<u8>, xid: Xid, head: &FlowModHead, actions: &[Action]) {
    encode_flow_mod_mapped(out, xid, head, actions, |a| Cow::Borrowed(a));
}

/// Output actions written into the stack buffer with the fixed part, so
/// that a FLOW_MOD with up to this many (nearly all of them: a learning
/// switch or a route sends one) is appended with one copy.
const INLINE_OUTPUTS: usize = 4;

/// Appends an OFPT_FLOW_MOD whose actions are `actions` converted by
/// `to_v10` (the neutral encoder converts its version-neutral actions on
/// the fly, without a slice of [`Action`]s; [`encode_flow_mod`] borrows,
/// so a vendor action is not copied). The header, the fixed fields
/// and the leading output actions are built in one stack array and
/// appended with one copy; any other actions are appended after it.
#[inline]
pub fn encode_flow_mod_mapped<A>(
    out: &mut Vec<u8>,
    xid: Xid,
    head: &FlowModHead,
    actions: &[A],
    to_v10: impl Fn(&A) -> Cow<'_, Action>,
) {
    let at = out.len();
    let mut b = [0u8; FIXED_LEN + INLINE_OUTPUTS * ACTION_OUTPUT_LEN];
    b[..header::HEADER_LEN].copy_from_slice(&header_bytes(
        Version::V10,
        MsgType10::FlowMod.into(),
        xid,
    ));
    FlowModView::new_unchecked(&mut b[..FIXED_LEN]).set_head(head);
    let mut len = FIXED_LEN;
    let mut inline = 0;
    for a in actions {
        let Some(bytes) = to_v10(a).output_bytes() else {
            break;
        };
        let Some(dst) = b.get_mut(len..len + ACTION_OUTPUT_LEN) else {
            break;
        };
        dst.copy_from_slice(&bytes);
        len += ACTION_OUTPUT_LEN;
        inline += 1;
    }
    out.put_slice(&b[..len]);
    for a in actions.get(inline..).unwrap_or_default() {
        to_v10(a).emit(out);
    }
    finish_message(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_in_and_past_the_stack_buffer_keep_their_order() {
        let head = FlowModHead {
            match_: Match10::ALL,
            cookie: Cookie(1),
            command: FlowModCommand::Add,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: 1,
            buffer_id: BufferId::NONE,
            out_port: PortNo::ANY,
            flags: 0,
        };
        let output = |p| Action::Output {
            port: PortNo(p),
            max_len: 0,
        };
        // More outputs than fit inline; a non-output action first, in the
        // middle, and none at all.
        let many: Vec<Action> = (1..=INLINE_OUTPUTS as u32 + 3).map(output).collect();
        let led = [Action::SetVlanVid(5), output(1), output(2)];
        let mixed = [output(1), Action::StripVlan, output(2), output(3)];
        for actions in [&many[..], &led[..], &mixed[..], &[]] {
            let mut out = vec![0xee; 3];
            encode_flow_mod(&mut out, Xid(2), &head, actions);
            let v = FlowModView::new_checked(&out[3..]).unwrap();
            assert_eq!(v.head(), head);
            assert_eq!(v.actions().collect_vec().unwrap(), actions);
            assert_eq!(
                usize::from(u16::from_be_bytes([out[5], out[6]])),
                out.len() - 3
            );
        }
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
        let v = FlowModView::new_checked(&out[..]).unwrap();
        assert_eq!(v.head(), head);
        assert_eq!(v.xid(), Xid(9));
        assert_eq!(v.actions().collect_vec().unwrap(), [Action::StripVlan]);
        assert_eq!(FlowMod::parse(&v).unwrap().buffer_len(), out.len());
        let mut v = FlowModView::new_checked(&mut out[..]).unwrap();
        v.set_priority(7);
        v.set_buffer_id(BufferId::NONE);
        let v = FlowModView::new_checked(&out[..]).unwrap();
        assert_eq!((v.priority(), v.buffer_id()), (7, BufferId::NONE));
    }
}
