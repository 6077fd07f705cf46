//! OpenFlow 1.3 instructions (1.3.5 §7.2.4): the owned [`Instruction`],
//! the borrowed [`InstructionRef`] and the zero-allocation
//! [`InstructionIter`] used by the FLOW_MOD view.
//!
//! Every instruction is a TLV whose length is a multiple of 8; fixed-size
//! ones must have exactly their size ([`ErrorKind::BadInstructionLength`]
//! otherwise). An unknown type is [`ErrorKind::BadInstructionType`]
//! (`OFPBIC_UNKNOWN_INST`).

use crate::error::{DecodeError, ErrorKind};
use crate::v13::action::{Action, ActionIter, emit_actions};
use crate::wire::{Put, Reader, pad8};

crate::wire_enum! {
    /// `enum ofp_instruction_type` (1.3.5 §7.2.4).
    pub enum InstructionType: u16 {
        /// OFPIT_GOTO_TABLE.
        GotoTable = 1,
        /// OFPIT_WRITE_METADATA.
        WriteMetadata = 2,
        /// OFPIT_WRITE_ACTIONS.
        WriteActions = 3,
        /// OFPIT_APPLY_ACTIONS.
        ApplyActions = 4,
        /// OFPIT_CLEAR_ACTIONS.
        ClearActions = 5,
        /// OFPIT_METER.
        Meter = 6,
        /// OFPIT_EXPERIMENTER.
        Experimenter = 0xffff,
    }
}

/// One OpenFlow 1.3 instruction (1.3.5 §7.2.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// OFPIT_GOTO_TABLE: continue in this table.
    GotoTable(u8),
    /// OFPIT_WRITE_METADATA: `metadata = metadata & !mask | value & mask`.
    WriteMetadata {
        /// Metadata value to write.
        metadata: u64,
        /// Which bits to write.
        mask: u64,
    },
    /// OFPIT_WRITE_ACTIONS: merge into the action set.
    WriteActions(Vec<Action>),
    /// OFPIT_APPLY_ACTIONS: apply now.
    ApplyActions(Vec<Action>),
    /// OFPIT_CLEAR_ACTIONS: clear the action set.
    ClearActions,
    /// OFPIT_METER: apply this meter.
    Meter(u32),
    /// OFPIT_EXPERIMENTER. `data` (after the experimenter id) is padded
    /// with zeros to a multiple of 8 on encode, so only data of such a
    /// length survives a round trip unchanged.
    Experimenter {
        /// Experimenter id.
        experimenter: u32,
        /// Experimenter-defined bytes.
        data: Vec<u8>,
    },
}

/// An action list borrowed from a received message, decoded lazily.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionList<'a> {
    bytes: &'a [u8],
    base: usize,
}

impl<'a> ActionList<'a> {
    /// The list in `bytes`, which start at byte `base` of the message.
    pub fn new(bytes: &'a [u8], base: usize) -> ActionList<'a> {
        ActionList { bytes, base }
    }

    /// The actions.
    #[inline]
    pub fn iter(&self) -> ActionIter<'a> {
        ActionIter::new(self.bytes, self.base)
    }

    /// The raw bytes of the list.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Decodes every action.
    pub fn to_vec(&self) -> Result<Vec<Action>, DecodeError> {
        self.iter().collect()
    }
}

/// One instruction borrowed from a received message; action lists are
/// decoded only when iterated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionRef<'a> {
    /// OFPIT_GOTO_TABLE.
    GotoTable(u8),
    /// OFPIT_WRITE_METADATA.
    WriteMetadata {
        /// Metadata value to write.
        metadata: u64,
        /// Which bits to write.
        mask: u64,
    },
    /// OFPIT_WRITE_ACTIONS.
    WriteActions(ActionList<'a>),
    /// OFPIT_APPLY_ACTIONS.
    ApplyActions(ActionList<'a>),
    /// OFPIT_CLEAR_ACTIONS.
    ClearActions,
    /// OFPIT_METER.
    Meter(u32),
    /// OFPIT_EXPERIMENTER.
    Experimenter {
        /// Experimenter id.
        experimenter: u32,
        /// Experimenter-defined bytes.
        data: &'a [u8],
    },
}

impl<'a> InstructionRef<'a> {
    /// Reads one instruction header and body; action lists inside are not
    /// yet decoded.
    pub fn parse(r: &mut Reader<'a>) -> Result<InstructionRef<'a>, DecodeError> {
        let at = r.offset();
        let t = r.u16("ofp_instruction.type")?;
        let len = r.u16("ofp_instruction.len")?;
        let bad_len = || {
            DecodeError::new(
                ErrorKind::BadInstructionLength(len),
                at + 2,
                "ofp_instruction.len",
            )
        };
        let body_len = (len as usize)
            .checked_sub(4)
            .filter(|&n| len >= 8 && len % 8 == 0 && n <= r.remaining())
            .ok_or_else(bad_len)?;
        let mut b = r.sub(body_len, "ofp_instruction body")?;
        let exact = |n: u16| if len == n { Ok(()) } else { Err(bad_len()) };
        Ok(match InstructionType::from(t) {
            InstructionType::GotoTable => {
                exact(8)?;
                InstructionRef::GotoTable(b.u8("ofp_instruction_goto_table.table_id")?)
            }
            InstructionType::WriteMetadata => {
                exact(24)?;
                b.skip(4, "ofp_instruction_write_metadata.pad")?;
                InstructionRef::WriteMetadata {
                    metadata: b.u64("ofp_instruction_write_metadata.metadata")?,
                    mask: b.u64("ofp_instruction_write_metadata.metadata_mask")?,
                }
            }
            InstructionType::WriteActions | InstructionType::ApplyActions => {
                b.skip(4, "ofp_instruction_actions.pad")?;
                let base = b.offset();
                let list = ActionList::new(b.take_rest(), base);
                if t == u16::from(InstructionType::WriteActions) {
                    InstructionRef::WriteActions(list)
                } else {
                    InstructionRef::ApplyActions(list)
                }
            }
            InstructionType::ClearActions => {
                exact(8)?;
                InstructionRef::ClearActions
            }
            InstructionType::Meter => {
                exact(8)?;
                InstructionRef::Meter(b.u32("ofp_instruction_meter.meter_id")?)
            }
            InstructionType::Experimenter => InstructionRef::Experimenter {
                experimenter: b.u32("ofp_instruction_experimenter.experimenter")?,
                data: b.take_rest(),
            },
            InstructionType::Unknown(t) => {
                return Err(DecodeError::new(
                    ErrorKind::BadInstructionType(t),
                    at,
                    "ofp_instruction.type",
                ));
            }
        })
    }

    /// The owned form, decoding any action list.
    pub fn to_owned(&self) -> Result<Instruction, DecodeError> {
        Ok(match *self {
            InstructionRef::GotoTable(t) => Instruction::GotoTable(t),
            InstructionRef::WriteMetadata { metadata, mask } => {
                Instruction::WriteMetadata { metadata, mask }
            }
            InstructionRef::WriteActions(l) => Instruction::WriteActions(l.to_vec()?),
            InstructionRef::ApplyActions(l) => Instruction::ApplyActions(l.to_vec()?),
            InstructionRef::ClearActions => Instruction::ClearActions,
            InstructionRef::Meter(m) => Instruction::Meter(m),
            InstructionRef::Experimenter { experimenter, data } => Instruction::Experimenter {
                experimenter,
                data: data.to_vec(),
            },
        })
    }
}

impl Instruction {
    /// The instruction's type code.
    pub fn instruction_type(&self) -> InstructionType {
        match self {
            Instruction::GotoTable(_) => InstructionType::GotoTable,
            Instruction::WriteMetadata { .. } => InstructionType::WriteMetadata,
            Instruction::WriteActions(_) => InstructionType::WriteActions,
            Instruction::ApplyActions(_) => InstructionType::ApplyActions,
            Instruction::ClearActions => InstructionType::ClearActions,
            Instruction::Meter(_) => InstructionType::Meter,
            Instruction::Experimenter { .. } => InstructionType::Experimenter,
        }
    }

    /// Decodes one instruction, its actions included.
    pub fn parse(r: &mut Reader<'_>) -> Result<Instruction, DecodeError> {
        InstructionRef::parse(r)?.to_owned()
    }

    /// Appends the instruction.
    pub fn emit(&self, out: &mut Vec<u8>) {
        match self {
            Instruction::GotoTable(t) => {
                out.put_u16(InstructionType::GotoTable.into());
                out.put_u16(8);
                out.put_u8(*t);
                out.put_zeros(3);
            }
            Instruction::WriteMetadata { metadata, mask } => {
                out.put_u16(InstructionType::WriteMetadata.into());
                out.put_u16(24);
                out.put_zeros(4);
                out.put_u64(*metadata);
                out.put_u64(*mask);
            }
            Instruction::WriteActions(a) => {
                emit_actions_instruction(out, InstructionType::WriteActions, a)
            }
            Instruction::ApplyActions(a) => {
                emit_actions_instruction(out, InstructionType::ApplyActions, a)
            }
            Instruction::ClearActions => {
                out.put_u16(InstructionType::ClearActions.into());
                out.put_u16(8);
                out.put_zeros(4);
            }
            Instruction::Meter(m) => {
                out.put_u16(InstructionType::Meter.into());
                out.put_u16(8);
                out.put_u32(*m);
            }
            Instruction::Experimenter { experimenter, data } => {
                out.put_u16(InstructionType::Experimenter.into());
                let len = 8 + data.len() + pad8(data.len());
                out.put_u16(len.min(u16::MAX as usize) as u16);
                out.put_u32(*experimenter);
                out.put_slice(data);
                out.put_zeros(pad8(data.len()));
            }
        }
    }

    /// Bytes this instruction takes on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            Instruction::WriteMetadata { .. } => 24,
            Instruction::WriteActions(a) | Instruction::ApplyActions(a) => {
                8 + a.iter().map(Action::wire_len).sum::<usize>()
            }
            Instruction::Experimenter { data, .. } => 8 + data.len() + pad8(data.len()),
            _ => 8,
        }
    }
}

/// Appends an OFPIT_WRITE_ACTIONS or OFPIT_APPLY_ACTIONS instruction
/// holding `actions`, without building an [`Instruction`] (the hot path's
/// "apply these actions").
pub fn emit_actions_instruction(out: &mut Vec<u8>, kind: InstructionType, actions: &[Action]) {
    emit_actions_instruction_with(out, kind, |out| emit_actions(out, actions));
}

/// [`emit_actions_instruction`] with the actions written by
/// `write_actions`, so a caller can emit actions it converts on the fly
/// without collecting them first.
#[inline]
pub fn emit_actions_instruction_with(
    out: &mut Vec<u8>,
    kind: InstructionType,
    write_actions: impl FnOnce(&mut Vec<u8>),
) {
    let at = out.len();
    out.put_slice(&actions_instruction_head(kind));
    write_actions(out);
    finish_actions_instruction(out, at);
}

/// The first 8 bytes of an action-list instruction
/// (`ofp_instruction_actions`, 1.3.5 §7.2.4): type, a length of 0 for
/// [`finish_actions_instruction`] to fill in, padding. The actions follow.
#[inline]
pub fn actions_instruction_head(kind: InstructionType) -> [u8; 8] {
    let t = u16::from(kind).to_be_bytes();
    [t[0], t[1], 0, 0, 0, 0, 0, 0]
}

/// Fills in the length of the action-list instruction that starts at `at`
/// of `out` and runs to its end.
#[inline]
pub fn finish_actions_instruction(out: &mut Vec<u8>, at: usize) {
    let len = (out.len() - at).min(u16::MAX as usize) as u16;
    out.patch_u16(at + 2, len);
}

/// A zero-allocation iterator over an instruction list: yields each
/// instruction (action lists undecoded) and stops after the first error.
#[derive(Debug, Clone)]
pub struct InstructionIter<'a> {
    r: Reader<'a>,
    failed: bool,
}

impl<'a> InstructionIter<'a> {
    /// An iterator over the instructions in `region`, which starts at byte
    /// `base` of the message.
    #[inline]
    pub fn new(region: &'a [u8], base: usize) -> InstructionIter<'a> {
        InstructionIter {
            r: Reader::with_base(region, base),
            failed: false,
        }
    }
}

impl<'a> Iterator for InstructionIter<'a> {
    type Item = Result<InstructionRef<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let item = InstructionRef::parse(&mut self.r);
        self.failed = item.is_err();
        Some(item)
    }
}

/// Decodes a whole instruction list from `region` (at byte `base`).
pub fn parse_instructions(region: &[u8], base: usize) -> Result<Vec<Instruction>, DecodeError> {
    InstructionIter::new(region, base)
        .map(|i| i.and_then(|i| i.to_owned()))
        .collect()
}

/// Appends every instruction in `instructions`.
pub fn emit_instructions(out: &mut Vec<u8>, instructions: &[Instruction]) {
    for i in instructions {
        i.emit(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::PortNo;

    #[test]
    fn apply_actions_bytes() {
        let i = Instruction::ApplyActions(vec![Action::Output {
            port: PortNo(2),
            max_len: 0,
        }]);
        let mut out = Vec::new();
        i.emit(&mut out);
        assert_eq!(&out[..8], &[0, 4, 0, 24, 0, 0, 0, 0]);
        assert_eq!(out.len(), i.wire_len());
        assert_eq!(parse_instructions(&out, 0).unwrap(), [i]);
    }

    #[test]
    fn errors() {
        let kind = |b: &[u8]| parse_instructions(b, 0).unwrap_err().kind().clone();
        assert_eq!(
            kind(&[0, 9, 0, 8, 0, 0, 0, 0]),
            ErrorKind::BadInstructionType(9)
        );
        assert_eq!(
            kind(&[0, 1, 0, 16, 0, 0, 0, 0]),
            ErrorKind::BadInstructionLength(16)
        );
        assert_eq!(
            kind(&[0, 2, 0, 8, 0, 0, 0, 0]),
            ErrorKind::BadInstructionLength(8)
        );
        assert_eq!(
            kind(&[0, 5, 0, 4, 0, 0, 0, 0]),
            ErrorKind::BadInstructionLength(4)
        );
        // An action error inside APPLY_ACTIONS is reported where it is.
        let e = parse_instructions(&[0, 4, 0, 16, 0, 0, 0, 0, 0, 99, 0, 8, 0, 0, 0, 0], 100)
            .unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadActionType(99));
        assert_eq!(e.offset(), 108);
    }
}
