//! Groups (1.3.5 §7.3.4.2): OFPT_GROUP_MOD's body, its command and type
//! codes, and `ofp_bucket`, which group-desc replies reuse.

use crate::error::{DecodeError, ErrorKind};
use crate::types::PortNo;
use crate::v13::action::{Action, ActionIter, emit_actions};
use crate::wire::{Put, Reader};

crate::wire_enum! {
    /// `enum ofp_group_mod_command` (1.3.5 §7.3.4.2).
    pub enum GroupModCommand: u16 {
        /// OFPGC_ADD.
        Add = 0,
        /// OFPGC_MODIFY.
        Modify = 1,
        /// OFPGC_DELETE.
        Delete = 2,
    }
}

crate::wire_enum! {
    /// `enum ofp_group_type` (1.3.5 §7.3.4.2).
    pub enum GroupType: u8 {
        /// OFPGT_ALL: all buckets (multicast/broadcast).
        All = 0,
        /// OFPGT_SELECT: one bucket (multipath).
        Select = 1,
        /// OFPGT_INDIRECT: the one bucket.
        Indirect = 2,
        /// OFPGT_FF: the first live bucket (fast failover).
        FastFailover = 3,
    }
}

/// Reserved group numbers (`enum ofp_group`, 1.3.5 §7.3.4.2).
pub mod group_id {
    /// OFPG_MAX: last usable group number.
    pub const MAX: u32 = 0xffff_ff00;
    /// OFPG_ALL: all groups (group delete).
    pub const ALL: u32 = 0xffff_fffc;
    /// OFPG_ANY: wildcard group (flow stats / delete), or no group
    /// (`watch_group`).
    pub const ANY: u32 = 0xffff_ffff;
}

/// Size of `ofp_bucket` without actions.
pub const BUCKET_LEN: usize = 16;

/// `ofp_bucket` (1.3.5 §7.3.4.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Bucket {
    /// `weight` (select groups).
    pub weight: u16,
    /// `watch_port` (fast-failover groups; `PortNo::ANY` for none).
    pub watch_port: PortNo,
    /// `watch_group` (fast-failover groups; [`group_id::ANY`] for none).
    pub watch_group: u32,
    /// The bucket's actions.
    pub actions: Vec<Action>,
}

impl Bucket {
    /// Decodes one bucket; a `len` below 16 or past the input is
    /// [`ErrorKind::BadLength`].
    pub fn parse(r: &mut Reader<'_>) -> Result<Bucket, DecodeError> {
        let at = r.offset();
        let len = r.u16("ofp_bucket.len")?;
        let body_len = (len as usize)
            .checked_sub(2)
            .filter(|&n| len as usize >= BUCKET_LEN && n <= r.remaining())
            .ok_or_else(|| {
                DecodeError::new(
                    ErrorKind::BadLength {
                        claimed: len as usize,
                    },
                    at,
                    "ofp_bucket.len",
                )
            })?;
        let mut b = r.sub(body_len, "ofp_bucket")?;
        let weight = b.u16("ofp_bucket.weight")?;
        let watch_port = PortNo(b.u32("ofp_bucket.watch_port")?);
        let watch_group = b.u32("ofp_bucket.watch_group")?;
        b.skip(4, "ofp_bucket.pad")?;
        let base = b.offset();
        let actions = ActionIter::new(b.take_rest(), base).collect::<Result<_, _>>()?;
        Ok(Bucket {
            weight,
            watch_port,
            watch_group,
            actions,
        })
    }

    /// Appends the bucket.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.put_u16(0);
        out.put_u16(self.weight);
        out.put_u32(self.watch_port.0);
        out.put_u32(self.watch_group);
        out.put_zeros(4);
        emit_actions(out, &self.actions);
        let len = (out.len() - at).min(u16::MAX as usize) as u16;
        out.patch_u16(at, len);
    }

    /// Bytes this bucket takes on the wire.
    pub fn wire_len(&self) -> usize {
        BUCKET_LEN + self.actions.iter().map(Action::wire_len).sum::<usize>()
    }
}

/// Decodes the buckets filling `region` (at byte `base`).
pub fn parse_buckets(region: &[u8], base: usize) -> Result<Vec<Bucket>, DecodeError> {
    let mut r = Reader::with_base(region, base);
    let mut out = Vec::new();
    while !r.is_empty() {
        out.push(Bucket::parse(&mut r)?);
    }
    Ok(out)
}

/// Appends every bucket.
pub fn emit_buckets(out: &mut Vec<u8>, buckets: &[Bucket]) {
    for b in buckets {
        b.emit(out);
    }
}

/// The body of OFPT_GROUP_MOD (`ofp_group_mod` after the header,
/// 1.3.5 §7.3.4.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupMod {
    /// `command`.
    pub command: GroupModCommand,
    /// `type`.
    pub group_type: GroupType,
    /// `group_id`.
    pub group_id: u32,
    /// `buckets`.
    pub buckets: Vec<Bucket>,
}

impl GroupMod {
    /// Decodes the body (everything after the header; `base` is its offset
    /// in the message).
    pub fn decode_body(body: &[u8], base: usize) -> Result<GroupMod, DecodeError> {
        let mut r = Reader::with_base(body, base);
        let command = r.u16("ofp_group_mod.command")?.into();
        let group_type = r.u8("ofp_group_mod.type")?.into();
        r.skip(1, "ofp_group_mod.pad")?;
        let group_id = r.u32("ofp_group_mod.group_id")?;
        let base = r.offset();
        let buckets = parse_buckets(r.take_rest(), base)?;
        Ok(GroupMod {
            command,
            group_type,
            group_id,
            buckets,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u16(self.command.into());
        out.put_u8(self.group_type.into());
        out.put_zeros(1);
        out.put_u32(self.group_id);
        emit_buckets(out, &self.buckets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_round_trip_and_errors() {
        let b = Bucket {
            weight: 7,
            watch_port: PortNo::ANY,
            watch_group: group_id::ANY,
            actions: vec![Action::Group(3), Action::PopVlan],
        };
        let mut out = Vec::new();
        b.emit(&mut out);
        assert_eq!(out.len(), b.wire_len());
        assert_eq!(&out[..2], &[0, 32]);
        assert_eq!(parse_buckets(&out, 0).unwrap(), [b]);
        assert_eq!(
            parse_buckets(&[0, 8, 0, 0, 0, 0, 0, 0], 0)
                .unwrap_err()
                .kind(),
            &ErrorKind::BadLength { claimed: 8 }
        );
        out[1] = 40;
        assert!(parse_buckets(&out, 0).is_err());
    }
}
