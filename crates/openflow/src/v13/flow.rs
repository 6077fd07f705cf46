//! The owned forms of the flow messages (1.3.5 §7.3.4.1, §7.3.7, §7.4.1,
//! §7.4.2): PACKET_IN, FLOW_REMOVED, PACKET_OUT and FLOW_MOD, their reason
//! and command codes, and [`FlowModHead`], the fixed part of a FLOW_MOD.
//!
//! PACKET_IN, PACKET_OUT and FLOW_MOD are read through their views and
//! written through the borrowed encoders of [`crate::v13::view`], so there
//! is one way to read and one way to write each of them.

use crate::error::DecodeError;
use crate::types::{BufferId, Cookie, PortNo, Xid};
use crate::v13::action::Action;
use crate::v13::group::group_id;
use crate::v13::instruction::Instruction;
use crate::v13::oxm::Match13;
use crate::v13::view;
use crate::wire::{Put, Reader};

crate::wire_enum! {
    /// `enum ofp_packet_in_reason` (1.3.5 §7.4.1).
    pub enum PacketInReason: u8 {
        /// OFPR_NO_MATCH: no matching flow (table-miss flow entry).
        NoMatch = 0,
        /// OFPR_ACTION: action explicitly output to controller.
        Action = 1,
        /// OFPR_INVALID_TTL: packet has invalid TTL.
        InvalidTtl = 2,
    }
}

crate::wire_enum! {
    /// `enum ofp_flow_removed_reason` (1.3.5 §7.4.2).
    pub enum FlowRemovedReason: u8 {
        /// OFPRR_IDLE_TIMEOUT.
        IdleTimeout = 0,
        /// OFPRR_HARD_TIMEOUT.
        HardTimeout = 1,
        /// OFPRR_DELETE: evicted by a DELETE flow mod.
        Delete = 2,
        /// OFPRR_GROUP_DELETE: group was removed.
        GroupDelete = 3,
    }
}

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

/// OFPT_PACKET_IN (`ofp_packet_in`, 1.3.5 §7.4.1), owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketIn {
    /// `buffer_id`: where the switch buffered the packet, or
    /// [`BufferId::NONE`].
    pub buffer_id: BufferId,
    /// `total_len`: full length of the frame.
    pub total_len: u16,
    /// `reason`.
    pub reason: PacketInReason,
    /// `table_id` of the table that was looked up.
    pub table_id: u8,
    /// `cookie` of the flow entry that was looked up.
    pub cookie: Cookie,
    /// `match`: the packet's metadata (at least IN_PORT).
    pub match_: Match13,
    /// The frame, or its first bytes when buffered.
    pub data: Vec<u8>,
}

impl PacketIn {
    /// Appends the whole message (through [`view::encode_packet_in`]).
    pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
        view::encode_packet_in(
            out,
            xid,
            self.buffer_id,
            self.total_len,
            self.reason,
            self.table_id,
            self.cookie,
            &self.match_.fields,
            &self.data,
        );
    }
}

/// OFPT_FLOW_REMOVED's body (`ofp_flow_removed`, 1.3.5 §7.4.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlowRemoved {
    /// `cookie`.
    pub cookie: Cookie,
    /// `priority`.
    pub priority: u16,
    /// `reason`.
    pub reason: FlowRemovedReason,
    /// `table_id`.
    pub table_id: u8,
    /// `duration_sec`: time the flow was alive, seconds.
    pub duration_sec: u32,
    /// `duration_nsec`: and nanoseconds beyond `duration_sec`.
    pub duration_nsec: u32,
    /// `idle_timeout` from the flow mod.
    pub idle_timeout: u16,
    /// `hard_timeout` from the flow mod.
    pub hard_timeout: u16,
    /// `packet_count`.
    pub packet_count: u64,
    /// `byte_count`.
    pub byte_count: u64,
    /// `match`.
    pub match_: Match13,
}

impl FlowRemoved {
    /// Decodes the body (the match must end the message).
    pub fn decode_body(r: &mut Reader<'_>) -> Result<FlowRemoved, DecodeError> {
        let fr = FlowRemoved {
            cookie: Cookie(r.u64("ofp_flow_removed.cookie")?),
            priority: r.u16("ofp_flow_removed.priority")?,
            reason: r.u8("ofp_flow_removed.reason")?.into(),
            table_id: r.u8("ofp_flow_removed.table_id")?,
            duration_sec: r.u32("ofp_flow_removed.duration_sec")?,
            duration_nsec: r.u32("ofp_flow_removed.duration_nsec")?,
            idle_timeout: r.u16("ofp_flow_removed.idle_timeout")?,
            hard_timeout: r.u16("ofp_flow_removed.hard_timeout")?,
            packet_count: r.u64("ofp_flow_removed.packet_count")?,
            byte_count: r.u64("ofp_flow_removed.byte_count")?,
            match_: Match13::parse(r)?,
        };
        r.finish("ofp_flow_removed")?;
        Ok(fr)
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u64(self.cookie.0);
        out.put_u16(self.priority);
        out.put_u8(self.reason.into());
        out.put_u8(self.table_id);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        self.match_.emit(out);
    }
}

/// OFPT_PACKET_OUT (`ofp_packet_out`, 1.3.5 §7.3.7), owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketOut {
    /// `buffer_id`, or [`BufferId::NONE`] when `data` holds the frame.
    pub buffer_id: BufferId,
    /// `in_port`: the packet's input port (or `PortNo::CONTROLLER`).
    pub in_port: PortNo,
    /// `actions`.
    pub actions: Vec<Action>,
    /// The frame (empty when buffered).
    pub data: Vec<u8>,
}

impl PacketOut {
    /// Appends the whole message (through [`view::encode_packet_out`]).
    pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
        view::encode_packet_out(
            out,
            xid,
            self.buffer_id,
            self.in_port,
            &self.actions,
            &self.data,
        );
    }
}

/// The fixed fields of a FLOW_MOD (everything but the match and the
/// instructions), as the borrowed encoders take them (1.3.5 §7.3.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowModHead {
    /// `cookie`.
    pub cookie: Cookie,
    /// `cookie_mask` (modify/delete: which cookie bits must match).
    pub cookie_mask: u64,
    /// `table_id`.
    pub table_id: u8,
    /// `command`.
    pub command: FlowModCommand,
    /// `idle_timeout`, seconds (0: none).
    pub idle_timeout: u16,
    /// `hard_timeout`, seconds (0: none).
    pub hard_timeout: u16,
    /// `priority`.
    pub priority: u16,
    /// `buffer_id` of a buffered packet to apply the flow to, or
    /// [`BufferId::NONE`].
    pub buffer_id: BufferId,
    /// `out_port` (delete: require this output port; `PortNo::ANY` for
    /// any).
    pub out_port: PortNo,
    /// `out_group` (delete: require this output group;
    /// [`group_id::ANY`] for any).
    pub out_group: u32,
    /// `flags`: [`flow_mod_flags`] bits.
    pub flags: u16,
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

/// OFPT_FLOW_MOD (`ofp_flow_mod`, 1.3.5 §7.3.4.1), owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlowMod {
    /// `cookie`.
    pub cookie: Cookie,
    /// `cookie_mask`.
    pub cookie_mask: u64,
    /// `table_id`.
    pub table_id: u8,
    /// `command`.
    pub command: FlowModCommand,
    /// `idle_timeout`.
    pub idle_timeout: u16,
    /// `hard_timeout`.
    pub hard_timeout: u16,
    /// `priority`.
    pub priority: u16,
    /// `buffer_id`.
    pub buffer_id: BufferId,
    /// `out_port`.
    pub out_port: PortNo,
    /// `out_group`.
    pub out_group: u32,
    /// `flags`: [`flow_mod_flags`] bits.
    pub flags: u16,
    /// `match`.
    pub match_: Match13,
    /// `instructions`.
    pub instructions: Vec<Instruction>,
}

impl FlowMod {
    /// The fixed fields.
    pub fn head(&self) -> FlowModHead {
        FlowModHead {
            cookie: self.cookie,
            cookie_mask: self.cookie_mask,
            table_id: self.table_id,
            command: self.command,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: self.buffer_id,
            out_port: self.out_port,
            out_group: self.out_group,
            flags: self.flags,
        }
    }

    /// A FLOW_MOD from its fixed fields, match and instructions.
    pub fn from_parts(head: FlowModHead, match_: Match13, instructions: Vec<Instruction>) -> Self {
        FlowMod {
            cookie: head.cookie,
            cookie_mask: head.cookie_mask,
            table_id: head.table_id,
            command: head.command,
            idle_timeout: head.idle_timeout,
            hard_timeout: head.hard_timeout,
            priority: head.priority,
            buffer_id: head.buffer_id,
            out_port: head.out_port,
            out_group: head.out_group,
            flags: head.flags,
            match_,
            instructions,
        }
    }

    /// Appends the whole message (through [`view::encode_flow_mod`]).
    pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
        view::encode_flow_mod(
            out,
            xid,
            &self.head(),
            &self.match_.fields,
            &self.instructions,
        );
    }
}
