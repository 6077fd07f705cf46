//! OpenFlow 1.3 table features (1.3.5 §7.3.5.5): `ofp_table_features` and
//! its properties, carried by OFPMP_TABLE_FEATURES requests and replies.
//!
//! This module owns [`TableFeatures`] and every property type of
//! §7.3.5.5.2 ([`TableFeatureProp`]). Each property is a TLV whose `length`
//! excludes the padding that follows it up to a multiple of 8; the padding
//! is required on decode (as Open vSwitch requires it) and written as zeros
//! on encode. Property types this codec does not know are kept raw
//! ([`TableFeatureProp::Unknown`]) so they round-trip. Length problems in
//! properties are [`ErrorKind::BadTablePropLength`], which answers
//! OFPET_TABLE_FEATURES_FAILED / OFPTFFC_BAD_LEN.

use crate::error::{DecodeError, ErrorKind};
use crate::v13::action::ActionType;
use crate::v13::instruction::InstructionType;
use crate::v13::oxm::{OFPXMC_EXPERIMENTER, OxmHeader};
use crate::wire::{Put, Reader, pad8};

/// Size of the fixed part of `ofp_table_features` (1.3.5 §7.3.5.5.1).
pub const TABLE_FEATURES_LEN: usize = 64;

/// Size of `name` in `ofp_table_features` (`OFP_MAX_TABLE_NAME_LEN`).
pub const TABLE_NAME_LEN: usize = 32;

/// Size of `ofp_table_feature_prop_header` (type, length).
const PROP_HEADER_LEN: usize = 4;

/// `OFPIT_EXPERIMENTER` / `OFPAT_EXPERIMENTER`: the id-list element type
/// that carries an experimenter id.
const ID_EXPERIMENTER: u16 = 0xffff;

crate::wire_enum! {
    /// `enum ofp_table_feature_prop_type` (1.3.5 §7.3.5.5.2).
    pub enum TableFeaturePropType: u16 {
        /// OFPTFPT_INSTRUCTIONS.
        Instructions = 0,
        /// OFPTFPT_INSTRUCTIONS_MISS.
        InstructionsMiss = 1,
        /// OFPTFPT_NEXT_TABLES.
        NextTables = 2,
        /// OFPTFPT_NEXT_TABLES_MISS.
        NextTablesMiss = 3,
        /// OFPTFPT_WRITE_ACTIONS.
        WriteActions = 4,
        /// OFPTFPT_WRITE_ACTIONS_MISS.
        WriteActionsMiss = 5,
        /// OFPTFPT_APPLY_ACTIONS.
        ApplyActions = 6,
        /// OFPTFPT_APPLY_ACTIONS_MISS.
        ApplyActionsMiss = 7,
        /// OFPTFPT_MATCH.
        Match = 8,
        /// OFPTFPT_WILDCARDS.
        Wildcards = 10,
        /// OFPTFPT_WRITE_SETFIELD.
        WriteSetfield = 12,
        /// OFPTFPT_WRITE_SETFIELD_MISS.
        WriteSetfieldMiss = 13,
        /// OFPTFPT_APPLY_SETFIELD.
        ApplySetfield = 14,
        /// OFPTFPT_APPLY_SETFIELD_MISS.
        ApplySetfieldMiss = 15,
        /// OFPTFPT_EXPERIMENTER.
        Experimenter = 0xfffe,
        /// OFPTFPT_EXPERIMENTER_MISS.
        ExperimenterMiss = 0xffff,
    }
}

/// `ofp_table_features` (1.3.5 §7.3.5.5.1): what one flow table supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFeatures {
    /// `table_id`.
    pub table_id: u8,
    /// `name`: a 32-byte NUL-terminated field, read up to the first NUL but
    /// never including the last byte, each byte of invalid UTF-8 read as
    /// `?` (as [`Desc`](crate::v13::multipart::Desc) strings); at most 31
    /// bytes are written.
    pub name: String,
    /// `metadata_match`: bits of metadata the table can match.
    pub metadata_match: u64,
    /// `metadata_write`: bits of metadata the table can write.
    pub metadata_write: u64,
    /// `config` (OFPTC_* bits).
    pub config: u32,
    /// `max_entries`.
    pub max_entries: u32,
    /// `properties`, in wire order.
    pub properties: Vec<TableFeatureProp>,
}

/// One element of an instruction-id list (`OFPTFPT_INSTRUCTIONS[_MISS]`,
/// 1.3.5 §7.3.5.5.2): an instruction header without a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstructionId {
    /// A standard instruction type (OFPIT_*, 4 bytes on the wire). Must not
    /// be [`InstructionType::Experimenter`], which is
    /// [`InstructionId::Experimenter`].
    Standard(InstructionType),
    /// OFPIT_EXPERIMENTER: the experimenter id and any further bytes.
    Experimenter {
        /// `experimenter`.
        experimenter: u32,
        /// Bytes after the experimenter id, as received.
        data: Vec<u8>,
    },
}

/// One element of an action-id list (`OFPTFPT_*_ACTIONS[_MISS]`, 1.3.5
/// §7.3.5.5.2): an action header without a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionId {
    /// A standard action type (OFPAT_*, 4 bytes on the wire). Must not be
    /// [`ActionType::Experimenter`], which is [`ActionId::Experimenter`].
    Standard(ActionType),
    /// OFPAT_EXPERIMENTER: the experimenter id and any further bytes.
    Experimenter {
        /// `experimenter`.
        experimenter: u32,
        /// Bytes after the experimenter id, as received.
        data: Vec<u8>,
    },
}

/// One element of an OXM-id list (OFPTFPT_MATCH, _WILDCARDS, _*_SETFIELD*,
/// 1.3.5 §7.3.5.5.2): a 32-bit OXM header without payload, followed by a
/// 32-bit experimenter id for the experimenter class (a 64-bit header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OxmId {
    /// The OXM header. For OFPTFPT_MATCH, `has_mask` says the field is
    /// maskable.
    pub header: OxmHeader,
    /// The experimenter id: `Some` exactly when the class is
    /// OFPXMC_EXPERIMENTER (0xffff).
    pub experimenter: Option<u32>,
}

impl OxmId {
    /// An id for a header of a non-experimenter class.
    pub const fn new(header: OxmHeader) -> OxmId {
        OxmId {
            header,
            experimenter: None,
        }
    }
}

/// A table feature property (1.3.5 §7.3.5.5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableFeatureProp {
    /// OFPTFPT_INSTRUCTIONS: instructions supported for regular flows.
    Instructions(Vec<InstructionId>),
    /// OFPTFPT_INSTRUCTIONS_MISS: instructions supported for table-miss.
    InstructionsMiss(Vec<InstructionId>),
    /// OFPTFPT_NEXT_TABLES: tables reachable by goto-table.
    NextTables(Vec<u8>),
    /// OFPTFPT_NEXT_TABLES_MISS: the same for table-miss.
    NextTablesMiss(Vec<u8>),
    /// OFPTFPT_WRITE_ACTIONS: actions for the write-actions instruction.
    WriteActions(Vec<ActionId>),
    /// OFPTFPT_WRITE_ACTIONS_MISS.
    WriteActionsMiss(Vec<ActionId>),
    /// OFPTFPT_APPLY_ACTIONS: actions for the apply-actions instruction.
    ApplyActions(Vec<ActionId>),
    /// OFPTFPT_APPLY_ACTIONS_MISS.
    ApplyActionsMiss(Vec<ActionId>),
    /// OFPTFPT_MATCH: fields the table can match (has-mask = maskable).
    Match(Vec<OxmId>),
    /// OFPTFPT_WILDCARDS: fields that may be wildcarded.
    Wildcards(Vec<OxmId>),
    /// OFPTFPT_WRITE_SETFIELD: set-field types for write-actions.
    WriteSetfield(Vec<OxmId>),
    /// OFPTFPT_WRITE_SETFIELD_MISS.
    WriteSetfieldMiss(Vec<OxmId>),
    /// OFPTFPT_APPLY_SETFIELD: set-field types for apply-actions.
    ApplySetfield(Vec<OxmId>),
    /// OFPTFPT_APPLY_SETFIELD_MISS.
    ApplySetfieldMiss(Vec<OxmId>),
    /// OFPTFPT_EXPERIMENTER.
    Experimenter {
        /// `experimenter`.
        experimenter: u32,
        /// `exp_type`.
        exp_type: u32,
        /// `experimenter_data`, as received (without padding).
        data: Vec<u8>,
    },
    /// OFPTFPT_EXPERIMENTER_MISS.
    ExperimenterMiss {
        /// `experimenter`.
        experimenter: u32,
        /// `exp_type`.
        exp_type: u32,
        /// `experimenter_data`, as received (without padding).
        data: Vec<u8>,
    },
    /// A property type this codec does not name, kept so it round-trips.
    /// `prop_type` must not be one of the named types.
    Unknown {
        /// `type`.
        prop_type: u16,
        /// The body after the 4-byte header, without padding.
        data: Vec<u8>,
    },
}

fn prop_len_error(len: usize, at: usize, what: &'static str) -> DecodeError {
    DecodeError::new(
        ErrorKind::BadTablePropLength(len.min(u16::MAX as usize) as u16),
        at,
        what,
    )
}

/// Reads an instruction-id or action-id list: `(type, len)` headers with
/// `len == 4` for standard types and `len >= 8` (experimenter id, data)
/// for type 0xffff; the elements are not padded individually.
fn parse_ids<T>(
    body: &mut Reader,
    what: &'static str,
    standard: impl Fn(u16) -> T,
    experimenter: impl Fn(u32, Vec<u8>) -> T,
) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let at = body.offset();
        if body.remaining() < PROP_HEADER_LEN {
            return Err(prop_len_error(body.remaining(), at, what));
        }
        let ty = body.u16(what)?;
        let len = body.u16(what)? as usize;
        let rest = len
            .checked_sub(PROP_HEADER_LEN)
            .filter(|&n| n <= body.remaining())
            .ok_or_else(|| prop_len_error(len, at, what))?;
        let mut item = body.sub(rest, what)?;
        if ty == ID_EXPERIMENTER {
            if rest < 4 {
                return Err(prop_len_error(len, at, what));
            }
            let exp = item.u32(what)?;
            out.push(experimenter(exp, item.take_rest().to_vec()));
        } else {
            if rest != 0 {
                return Err(prop_len_error(len, at, what));
            }
            out.push(standard(ty));
        }
    }
    Ok(out)
}

fn emit_standard_id(out: &mut Vec<u8>, ty: u16) {
    out.put_u16(ty);
    out.put_u16(PROP_HEADER_LEN as u16);
}

fn emit_experimenter_id(out: &mut Vec<u8>, experimenter: u32, data: &[u8]) {
    out.put_u16(ID_EXPERIMENTER);
    out.put_u16(sat16(8 + data.len()));
    out.put_u32(experimenter);
    out.put_slice(data);
}

fn parse_instruction_ids(body: &mut Reader) -> Result<Vec<InstructionId>, DecodeError> {
    parse_ids(
        body,
        "instruction id",
        |t| InstructionId::Standard(InstructionType::from(t)),
        |experimenter, data| InstructionId::Experimenter { experimenter, data },
    )
}

fn parse_action_ids(body: &mut Reader) -> Result<Vec<ActionId>, DecodeError> {
    parse_ids(
        body,
        "action id",
        |t| ActionId::Standard(ActionType::from(t)),
        |experimenter, data| ActionId::Experimenter { experimenter, data },
    )
}

fn parse_oxm_ids(body: &mut Reader) -> Result<Vec<OxmId>, DecodeError> {
    let mut out = Vec::with_capacity(body.remaining() / 4);
    while !body.is_empty() {
        let at = body.offset();
        if body.remaining() < 4 {
            return Err(prop_len_error(body.remaining(), at, "oxm id"));
        }
        let header = OxmHeader::from_u32(body.u32("oxm id")?);
        let experimenter = if header.class == OFPXMC_EXPERIMENTER {
            if body.remaining() < 4 {
                return Err(prop_len_error(body.remaining() + 4, at, "oxm id"));
            }
            Some(body.u32("oxm id experimenter")?)
        } else {
            None
        };
        out.push(OxmId {
            header,
            experimenter,
        });
    }
    Ok(out)
}

fn sat16(n: usize) -> u16 {
    n.min(u16::MAX as usize) as u16
}

impl TableFeatureProp {
    /// The property's `type`.
    pub fn prop_type(&self) -> TableFeaturePropType {
        use TableFeaturePropType as T;
        match self {
            Self::Instructions(_) => T::Instructions,
            Self::InstructionsMiss(_) => T::InstructionsMiss,
            Self::NextTables(_) => T::NextTables,
            Self::NextTablesMiss(_) => T::NextTablesMiss,
            Self::WriteActions(_) => T::WriteActions,
            Self::WriteActionsMiss(_) => T::WriteActionsMiss,
            Self::ApplyActions(_) => T::ApplyActions,
            Self::ApplyActionsMiss(_) => T::ApplyActionsMiss,
            Self::Match(_) => T::Match,
            Self::Wildcards(_) => T::Wildcards,
            Self::WriteSetfield(_) => T::WriteSetfield,
            Self::WriteSetfieldMiss(_) => T::WriteSetfieldMiss,
            Self::ApplySetfield(_) => T::ApplySetfield,
            Self::ApplySetfieldMiss(_) => T::ApplySetfieldMiss,
            Self::Experimenter { .. } => T::Experimenter,
            Self::ExperimenterMiss { .. } => T::ExperimenterMiss,
            Self::Unknown { prop_type, .. } => T::from(*prop_type),
        }
    }

    /// Decodes one property and its padding (1.3.5 §7.3.5.5.2).
    pub fn parse(r: &mut Reader) -> Result<TableFeatureProp, DecodeError> {
        use TableFeaturePropType as T;
        let at = r.offset();
        let ty = T::from(r.u16("ofp_table_feature_prop_header.type")?);
        let len = r.u16("ofp_table_feature_prop_header.length")? as usize;
        let what = "ofp_table_feature_prop_header.length";
        let body_len = len
            .checked_sub(PROP_HEADER_LEN)
            .filter(|&n| n + pad8(len) <= r.remaining())
            .ok_or_else(|| prop_len_error(len, at, what))?;
        let mut body = r.sub(body_len, "table feature property")?;
        r.skip(pad8(len), "table feature property padding")?;
        let prop = match ty {
            T::Instructions => Self::Instructions(parse_instruction_ids(&mut body)?),
            T::InstructionsMiss => Self::InstructionsMiss(parse_instruction_ids(&mut body)?),
            T::NextTables => Self::NextTables(body.take_rest().to_vec()),
            T::NextTablesMiss => Self::NextTablesMiss(body.take_rest().to_vec()),
            T::WriteActions => Self::WriteActions(parse_action_ids(&mut body)?),
            T::WriteActionsMiss => Self::WriteActionsMiss(parse_action_ids(&mut body)?),
            T::ApplyActions => Self::ApplyActions(parse_action_ids(&mut body)?),
            T::ApplyActionsMiss => Self::ApplyActionsMiss(parse_action_ids(&mut body)?),
            T::Match => Self::Match(parse_oxm_ids(&mut body)?),
            T::Wildcards => Self::Wildcards(parse_oxm_ids(&mut body)?),
            T::WriteSetfield => Self::WriteSetfield(parse_oxm_ids(&mut body)?),
            T::WriteSetfieldMiss => Self::WriteSetfieldMiss(parse_oxm_ids(&mut body)?),
            T::ApplySetfield => Self::ApplySetfield(parse_oxm_ids(&mut body)?),
            T::ApplySetfieldMiss => Self::ApplySetfieldMiss(parse_oxm_ids(&mut body)?),
            T::Experimenter | T::ExperimenterMiss => {
                if body.remaining() < 8 {
                    return Err(prop_len_error(len, at, what));
                }
                let experimenter = body.u32("table feature experimenter")?;
                let exp_type = body.u32("table feature exp_type")?;
                let data = body.take_rest().to_vec();
                if ty == T::Experimenter {
                    Self::Experimenter {
                        experimenter,
                        exp_type,
                        data,
                    }
                } else {
                    Self::ExperimenterMiss {
                        experimenter,
                        exp_type,
                        data,
                    }
                }
            }
            T::Unknown(prop_type) => Self::Unknown {
                prop_type,
                data: body.take_rest().to_vec(),
            },
        };
        body.finish("table feature property")?;
        Ok(prop)
    }

    /// Appends the property and its padding to 8 bytes.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u16(self.prop_type().into());
        out.put_u16(0);
        match self {
            Self::Instructions(ids) | Self::InstructionsMiss(ids) => {
                for id in ids {
                    match id {
                        InstructionId::Standard(t) => emit_standard_id(out, (*t).into()),
                        InstructionId::Experimenter { experimenter, data } => {
                            emit_experimenter_id(out, *experimenter, data)
                        }
                    }
                }
            }
            Self::WriteActions(ids)
            | Self::WriteActionsMiss(ids)
            | Self::ApplyActions(ids)
            | Self::ApplyActionsMiss(ids) => {
                for id in ids {
                    match id {
                        ActionId::Standard(t) => emit_standard_id(out, (*t).into()),
                        ActionId::Experimenter { experimenter, data } => {
                            emit_experimenter_id(out, *experimenter, data)
                        }
                    }
                }
            }
            Self::NextTables(t) | Self::NextTablesMiss(t) => out.put_slice(t),
            Self::Match(ids)
            | Self::Wildcards(ids)
            | Self::WriteSetfield(ids)
            | Self::WriteSetfieldMiss(ids)
            | Self::ApplySetfield(ids)
            | Self::ApplySetfieldMiss(ids) => {
                for id in ids {
                    out.put_u32(id.header.to_u32());
                    if let Some(e) = id.experimenter {
                        out.put_u32(e);
                    }
                }
            }
            Self::Experimenter {
                experimenter,
                exp_type,
                data,
            }
            | Self::ExperimenterMiss {
                experimenter,
                exp_type,
                data,
            } => {
                out.put_u32(*experimenter);
                out.put_u32(*exp_type);
                out.put_slice(data);
            }
            Self::Unknown { data, .. } => out.put_slice(data),
        }
        let len = out.len() - start;
        out.patch_u16(start + 2, sat16(len));
        out.put_zeros(pad8(len));
    }
}

impl TableFeatures {
    /// Decodes one `ofp_table_features` with its properties (1.3.5
    /// §7.3.5.5.1), consuming exactly its `length` bytes.
    pub fn parse(r: &mut Reader) -> Result<TableFeatures, DecodeError> {
        let at = r.offset();
        let len = r.u16("ofp_table_features.length")? as usize;
        if len < TABLE_FEATURES_LEN || len - 2 > r.remaining() {
            return Err(DecodeError::new(
                ErrorKind::BadLength { claimed: len },
                at,
                "ofp_table_features.length",
            ));
        }
        let mut e = r.sub(len - 2, "ofp_table_features")?;
        let table_id = e.u8("ofp_table_features.table_id")?;
        e.skip(5, "ofp_table_features.pad")?;
        let name = e.fixed_string(TABLE_NAME_LEN, "ofp_table_features.name")?;
        let metadata_match = e.u64("ofp_table_features.metadata_match")?;
        let metadata_write = e.u64("ofp_table_features.metadata_write")?;
        let config = e.u32("ofp_table_features.config")?;
        let max_entries = e.u32("ofp_table_features.max_entries")?;
        let mut properties = Vec::new();
        while !e.is_empty() {
            properties.push(TableFeatureProp::parse(&mut e)?);
        }
        Ok(TableFeatures {
            table_id,
            name,
            metadata_match,
            metadata_write,
            config,
            max_entries,
            properties,
        })
    }

    /// Appends the structure, properties included, filling in `length`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u16(0);
        out.put_u8(self.table_id);
        out.put_zeros(5);
        out.put_fixed_str(self.name.as_bytes(), TABLE_NAME_LEN);
        out.put_u64(self.metadata_match);
        out.put_u64(self.metadata_write);
        out.put_u32(self.config);
        out.put_u32(self.max_entries);
        for p in &self.properties {
            p.emit(out);
        }
        let len = out.len() - start;
        out.patch_u16(start, sat16(len));
    }
}

#[cfg(test)]
mod tests;
