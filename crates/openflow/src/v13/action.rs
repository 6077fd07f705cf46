//! OpenFlow 1.3 actions (1.3.5 §7.2.5): the owned [`Action`], its encoder,
//! and the zero-allocation [`ActionIter`] over an action list.
//!
//! Every action is a TLV whose length is a multiple of 8. Fixed-size
//! actions must have exactly their size ([`ErrorKind::BadActionLength`]
//! otherwise); an unknown type is [`ErrorKind::BadActionType`], as a switch
//! would answer `OFPBAC_BAD_TYPE`. Set-field actions carry one OXM TLV
//! padded to 8 with the fewest zero bytes.

use crate::error::{DecodeError, ErrorKind};
use crate::types::PortNo;
use crate::v13::oxm::Oxm;
use crate::wire::{Put, Reader, pad8};

crate::wire_enum! {
    /// `enum ofp_action_type` (1.3.5 §7.2.5).
    pub enum ActionType: u16 {
        /// OFPAT_OUTPUT.
        Output = 0,
        /// OFPAT_COPY_TTL_OUT.
        CopyTtlOut = 11,
        /// OFPAT_COPY_TTL_IN.
        CopyTtlIn = 12,
        /// OFPAT_SET_MPLS_TTL.
        SetMplsTtl = 15,
        /// OFPAT_DEC_MPLS_TTL.
        DecMplsTtl = 16,
        /// OFPAT_PUSH_VLAN.
        PushVlan = 17,
        /// OFPAT_POP_VLAN.
        PopVlan = 18,
        /// OFPAT_PUSH_MPLS.
        PushMpls = 19,
        /// OFPAT_POP_MPLS.
        PopMpls = 20,
        /// OFPAT_SET_QUEUE.
        SetQueue = 21,
        /// OFPAT_GROUP.
        Group = 22,
        /// OFPAT_SET_NW_TTL.
        SetNwTtl = 23,
        /// OFPAT_DEC_NW_TTL.
        DecNwTtl = 24,
        /// OFPAT_SET_FIELD.
        SetField = 25,
        /// OFPAT_PUSH_PBB.
        PushPbb = 26,
        /// OFPAT_POP_PBB.
        PopPbb = 27,
        /// OFPAT_EXPERIMENTER.
        Experimenter = 0xffff,
    }
}

/// `OFPCML_MAX`: the largest `max_len` that asks for buffering
/// (1.3.5 §7.2.5.1).
pub const OFPCML_MAX: u16 = 0xffe5;
/// `OFPCML_NO_BUFFER`: send the whole packet to the controller, unbuffered.
pub const OFPCML_NO_BUFFER: u16 = 0xffff;

/// One OpenFlow 1.3 action (1.3.5 §7.2.5).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// OFPAT_OUTPUT (`ofp_action_output`, 16 bytes): send out of `port`;
    /// `max_len` bytes to the controller when `port` is CONTROLLER
    /// ([`OFPCML_NO_BUFFER`] for the whole packet).
    Output {
        /// Output port.
        port: PortNo,
        /// Bytes to send to the controller.
        max_len: u16,
    },
    /// OFPAT_COPY_TTL_OUT: copy TTL "outwards".
    CopyTtlOut,
    /// OFPAT_COPY_TTL_IN: copy TTL "inwards".
    CopyTtlIn,
    /// OFPAT_SET_MPLS_TTL: set the MPLS TTL.
    SetMplsTtl(u8),
    /// OFPAT_DEC_MPLS_TTL: decrement the MPLS TTL.
    DecMplsTtl,
    /// OFPAT_PUSH_VLAN: push a VLAN tag with this ethertype.
    PushVlan(u16),
    /// OFPAT_POP_VLAN: pop the outer VLAN tag.
    PopVlan,
    /// OFPAT_PUSH_MPLS: push an MPLS tag with this ethertype.
    PushMpls(u16),
    /// OFPAT_POP_MPLS: pop the outer MPLS tag; the ethertype of the result.
    PopMpls(u16),
    /// OFPAT_SET_QUEUE: set the queue id for output.
    SetQueue(u32),
    /// OFPAT_GROUP: apply the group with this id.
    Group(u32),
    /// OFPAT_SET_NW_TTL: set the IP TTL.
    SetNwTtl(u8),
    /// OFPAT_DEC_NW_TTL: decrement the IP TTL.
    DecNwTtl,
    /// OFPAT_SET_FIELD (`ofp_action_set_field`): set a header field using
    /// an OXM TLV.
    SetField(Oxm),
    /// OFPAT_PUSH_PBB: push a PBB service tag with this ethertype.
    PushPbb(u16),
    /// OFPAT_POP_PBB: pop the outer PBB service tag.
    PopPbb,
    /// OFPAT_EXPERIMENTER (`ofp_action_experimenter_header`). `data` is
    /// everything after the experimenter id; it is padded with zeros to a
    /// multiple of 8 on encode, so only data of a length that is a
    /// multiple of 8 survives a round trip unchanged.
    Experimenter {
        /// Experimenter id.
        experimenter: u32,
        /// Experimenter-defined bytes.
        data: Vec<u8>,
    },
}

/// Bytes of an `ofp_action_output`.
pub const ACTION_OUTPUT_LEN: usize = 16;

/// The wire bytes of an output action (`ofp_action_output`, 1.3.5
/// §7.2.5).
#[inline]
pub fn output_bytes(port: PortNo, max_len: u16) -> [u8; ACTION_OUTPUT_LEN] {
    let [t0, t1] = u16::from(ActionType::Output).to_be_bytes();
    let [p0, p1, p2, p3] = port.0.to_be_bytes();
    let [m0, m1] = max_len.to_be_bytes();
    [t0, t1, 0, 16, p0, p1, p2, p3, m0, m1, 0, 0, 0, 0, 0, 0]
}

impl Action {
    /// The action's type code.
    pub fn action_type(&self) -> ActionType {
        match self {
            Action::Output { .. } => ActionType::Output,
            Action::CopyTtlOut => ActionType::CopyTtlOut,
            Action::CopyTtlIn => ActionType::CopyTtlIn,
            Action::SetMplsTtl(_) => ActionType::SetMplsTtl,
            Action::DecMplsTtl => ActionType::DecMplsTtl,
            Action::PushVlan(_) => ActionType::PushVlan,
            Action::PopVlan => ActionType::PopVlan,
            Action::PushMpls(_) => ActionType::PushMpls,
            Action::PopMpls(_) => ActionType::PopMpls,
            Action::SetQueue(_) => ActionType::SetQueue,
            Action::Group(_) => ActionType::Group,
            Action::SetNwTtl(_) => ActionType::SetNwTtl,
            Action::DecNwTtl => ActionType::DecNwTtl,
            Action::SetField(_) => ActionType::SetField,
            Action::PushPbb(_) => ActionType::PushPbb,
            Action::PopPbb => ActionType::PopPbb,
            Action::Experimenter { .. } => ActionType::Experimenter,
        }
    }

    /// Bytes this action takes on the wire (a multiple of 8).
    pub fn wire_len(&self) -> usize {
        match self {
            Action::Output { .. } => 16,
            Action::SetField(o) => {
                let len = 4 + o.wire_len();
                len + pad8(len)
            }
            Action::Experimenter { data, .. } => 8 + data.len() + pad8(data.len()),
            _ => 8,
        }
    }

    /// Appends the action. The fixed-size ones (all but `SET_FIELD` and
    /// experimenter actions) are written whole from one array: header
    /// and body field by field were 89 instructions for an output action
    /// (BENCHMARKS.md, "OpenFlow 1.3 against 1.0 and the codec's costs").
    pub fn emit(&self, out: &mut Vec<u8>) {
        let t = u16::from(self.action_type()).to_be_bytes();
        // `ofp_action_header` with length 8, then a 4-byte body.
        let short = |b: [u8; 4]| [t[0], t[1], 0, 8, b[0], b[1], b[2], b[3]];
        match self {
            Action::Output { port, max_len } => out.put_slice(&output_bytes(*port, *max_len)),
            Action::CopyTtlOut
            | Action::CopyTtlIn
            | Action::DecMplsTtl
            | Action::PopVlan
            | Action::DecNwTtl
            | Action::PopPbb => out.put_slice(&short([0; 4])),
            Action::SetMplsTtl(ttl) | Action::SetNwTtl(ttl) => {
                out.put_slice(&short([*ttl, 0, 0, 0]));
            }
            Action::PushVlan(e) | Action::PushMpls(e) | Action::PopMpls(e) | Action::PushPbb(e) => {
                let [e0, e1] = e.to_be_bytes();
                out.put_slice(&short([e0, e1, 0, 0]));
            }
            Action::SetQueue(v) | Action::Group(v) => out.put_slice(&short(v.to_be_bytes())),
            Action::SetField(o) => {
                out.put_slice(&t);
                out.put_u16(self.wire_len().min(u16::MAX as usize) as u16);
                o.emit(out);
                out.put_zeros(pad8(4 + o.wire_len()));
            }
            Action::Experimenter { experimenter, data } => {
                out.put_slice(&t);
                out.put_u16(self.wire_len().min(u16::MAX as usize) as u16);
                out.put_u32(*experimenter);
                out.put_slice(data);
                out.put_zeros(pad8(data.len()));
            }
        }
    }

    /// Decodes one action.
    pub fn parse(r: &mut Reader<'_>) -> Result<Action, DecodeError> {
        let at = r.offset();
        let t = r.u16("ofp_action_header.type")?;
        let len = r.u16("ofp_action_header.len")?;
        let bad_len =
            || DecodeError::new(ErrorKind::BadActionLength(len), at + 2, "ofp_action.len");
        let body_len = (len as usize)
            .checked_sub(4)
            .filter(|&n| len >= 8 && len % 8 == 0 && n <= r.remaining())
            .ok_or_else(bad_len)?;
        let mut b = r.sub(body_len, "ofp_action body")?;
        let ty = ActionType::from(t);
        let exact = |n: u16| if len == n { Ok(()) } else { Err(bad_len()) };
        let a = match ty {
            ActionType::Output => {
                exact(16)?;
                let port = PortNo(b.u32("ofp_action_output.port")?);
                let max_len = b.u16("ofp_action_output.max_len")?;
                Action::Output { port, max_len }
            }
            ActionType::CopyTtlOut => exact(8).map(|_| Action::CopyTtlOut)?,
            ActionType::CopyTtlIn => exact(8).map(|_| Action::CopyTtlIn)?,
            ActionType::DecMplsTtl => exact(8).map(|_| Action::DecMplsTtl)?,
            ActionType::PopVlan => exact(8).map(|_| Action::PopVlan)?,
            ActionType::DecNwTtl => exact(8).map(|_| Action::DecNwTtl)?,
            ActionType::PopPbb => exact(8).map(|_| Action::PopPbb)?,
            ActionType::SetMplsTtl => {
                exact(8)?;
                Action::SetMplsTtl(b.u8("ofp_action_mpls_ttl.mpls_ttl")?)
            }
            ActionType::SetNwTtl => {
                exact(8)?;
                Action::SetNwTtl(b.u8("ofp_action_nw_ttl.nw_ttl")?)
            }
            ActionType::PushVlan => {
                exact(8)?;
                Action::PushVlan(b.u16("ofp_action_push.ethertype")?)
            }
            ActionType::PushMpls => {
                exact(8)?;
                Action::PushMpls(b.u16("ofp_action_push.ethertype")?)
            }
            ActionType::PushPbb => {
                exact(8)?;
                Action::PushPbb(b.u16("ofp_action_push.ethertype")?)
            }
            ActionType::PopMpls => {
                exact(8)?;
                Action::PopMpls(b.u16("ofp_action_pop_mpls.ethertype")?)
            }
            ActionType::SetQueue => {
                exact(8)?;
                Action::SetQueue(b.u32("ofp_action_set_queue.queue_id")?)
            }
            ActionType::Group => {
                exact(8)?;
                Action::Group(b.u32("ofp_action_group.group_id")?)
            }
            ActionType::SetField => {
                let o = Oxm::parse(&mut b)?;
                // Exactly the padding that brings the action to a multiple
                // of 8: nothing else may follow the OXM.
                if b.remaining() >= 8 {
                    return Err(bad_len());
                }
                Action::SetField(o)
            }
            ActionType::Experimenter => Action::Experimenter {
                experimenter: b.u32("ofp_action_experimenter_header.experimenter")?,
                data: b.take_rest().to_vec(),
            },
            ActionType::Unknown(t) => {
                return Err(DecodeError::new(
                    ErrorKind::BadActionType(t),
                    at,
                    "ofp_action_header.type",
                ));
            }
        };
        Ok(a)
    }
}

/// A zero-allocation iterator over an action list (1.3.5 §7.2.5): yields
/// each action and stops after the first error. Only
/// [`Action::Experimenter`] and a set-field of a non-basic OXM own heap
/// data.
#[derive(Debug, Clone)]
pub struct ActionIter<'a> {
    r: Reader<'a>,
    failed: bool,
}

impl<'a> ActionIter<'a> {
    /// An iterator over the actions in `region`, which starts at byte
    /// `base` of the message.
    #[inline]
    pub fn new(region: &'a [u8], base: usize) -> ActionIter<'a> {
        ActionIter {
            r: Reader::with_base(region, base),
            failed: false,
        }
    }
}

impl Iterator for ActionIter<'_> {
    type Item = Result<Action, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let item = Action::parse(&mut self.r);
        self.failed = item.is_err();
        Some(item)
    }
}

/// Decodes a whole action list from `region` (at byte `base`).
pub fn parse_actions(region: &[u8], base: usize) -> Result<Vec<Action>, DecodeError> {
    ActionIter::new(region, base).collect()
}

/// Appends every action in `actions`.
#[inline]
pub fn emit_actions(out: &mut Vec<u8>, actions: &[Action]) {
    for a in actions {
        a.emit(out);
    }
}

/// Bytes `actions` take on the wire.
pub fn actions_wire_len(actions: &[Action]) -> usize {
    actions.iter().map(Action::wire_len).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> Result<Action, DecodeError> {
        let mut it = ActionIter::new(bytes, 0);
        let a = it.next().unwrap();
        if a.is_ok() {
            assert!(it.next().is_none());
        }
        a
    }

    #[test]
    fn output_to_controller() {
        let a = Action::Output {
            port: PortNo::CONTROLLER,
            max_len: OFPCML_NO_BUFFER,
        };
        let mut out = Vec::new();
        a.emit(&mut out);
        assert_eq!(
            out,
            [
                0, 0, 0, 16, 0xff, 0xff, 0xff, 0xfd, 0xff, 0xff, 0, 0, 0, 0, 0, 0
            ]
        );
        assert_eq!(one(&out).unwrap(), a);
    }

    #[test]
    fn set_field_is_padded() {
        let a = Action::SetField(Oxm::VlanVid {
            value: 0x1005,
            mask: None,
        });
        let mut out = Vec::new();
        a.emit(&mut out);
        assert_eq!(
            out,
            [0, 25, 0, 16, 0x80, 0, 12, 2, 0x10, 5, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(a.wire_len(), 16);
        assert_eq!(one(&out).unwrap(), a);
        // Too much padding.
        let mut long = vec![0, 25, 0, 24, 0x80, 0, 12, 2, 0x10, 5];
        long.resize(24, 0);
        assert_eq!(
            one(&long).unwrap_err().kind(),
            &ErrorKind::BadActionLength(24)
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            one(&[0, 99, 0, 8, 0, 0, 0, 0]).unwrap_err().kind(),
            &ErrorKind::BadActionType(99)
        );
        assert_eq!(
            one(&[0, 0, 0, 8, 0, 0, 0, 0]).unwrap_err().kind(),
            &ErrorKind::BadActionLength(8)
        );
        assert_eq!(
            one(&[0, 11, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0])
                .unwrap_err()
                .kind(),
            &ErrorKind::BadActionLength(12)
        );
        assert_eq!(
            one(&[0, 11, 0, 16, 0, 0, 0, 0]).unwrap_err().kind(),
            &ErrorKind::BadActionLength(16)
        );
        assert_eq!(
            one(&[0, 11, 0, 0, 0, 0, 0, 0]).unwrap_err().kind(),
            &ErrorKind::BadActionLength(0)
        );
        // The iterator stops after the first error.
        let bad = [0, 99, 0, 8, 0, 0, 0, 0, 0, 11, 0, 8, 0, 0, 0, 0];
        assert_eq!(ActionIter::new(&bad, 0).count(), 1);
    }
}
