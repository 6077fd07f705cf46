//! The version-neutral forms of the requests that change a switch (flow,
//! group and meter mods), the flow-mod flags both versions share, and how
//! a switch is built ([`Config`]). The protocol machine compiles each
//! version's messages into these; [`crate::switch::Switch`] applies them.

use crate::table::NewFlow;
use baton_openflow::Version;
use baton_openflow::types::{BufferId, DatapathId, PortNo};
use std::time::Duration;

/// How often flows are checked for expiry (Open vSwitch sweeps about
/// once a second too; timeouts are whole seconds).
pub const EXPIRY_INTERVAL: Duration = Duration::from_secs(1);

/// `OFPFF_SEND_FLOW_REM` (both versions).
pub const FLAG_SEND_FLOW_REM: u16 = 1 << 0;
/// `OFPFF_CHECK_OVERLAP` (both versions).
pub const FLAG_CHECK_OVERLAP: u16 = 1 << 1;
/// `OFPFF_RESET_COUNTS` (1.3).
pub const FLAG_RESET_COUNTS: u16 = 1 << 2;

/// `OFPTT_ALL`: every table.
pub const ALL_TABLES: u8 = 0xff;

/// How a switch is built.
#[derive(Debug, Clone)]
pub struct Config {
    /// Datapath id.
    pub datapath_id: DatapathId,
    /// The one version it speaks.
    pub version: Version,
    /// Flow tables (1.0: 1; 1.3: up to 254).
    pub n_tables: u8,
    /// Flows per table before `TABLE_FULL`.
    pub max_flows: usize,
    /// Packet buffers.
    pub n_buffers: usize,
    /// `dp_desc` in the description statistics.
    pub description: String,
}

impl Config {
    /// A switch of `version` with datapath id `dpid`: one table in 1.0,
    /// 254 in 1.3 (as Open vSwitch), a million flows per table, 256
    /// buffers.
    pub fn new(dpid: u64, version: Version) -> Config {
        Config {
            datapath_id: DatapathId(dpid),
            version,
            n_tables: match version {
                Version::V10 => 1,
                Version::V13 => 254,
            },
            max_flows: 1_000_000,
            n_buffers: crate::buffer::DEFAULT_BUFFERS,
            description: "baton software switch".into(),
        }
    }
}

/// The flow-mod command (`ofp_flow_mod_command`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `OFPFC_ADD`.
    Add,
    /// `OFPFC_MODIFY`.
    Modify,
    /// `OFPFC_MODIFY_STRICT`.
    ModifyStrict,
    /// `OFPFC_DELETE`.
    Delete,
    /// `OFPFC_DELETE_STRICT`.
    DeleteStrict,
}

/// A flow-mod, compiled.
#[derive(Debug, Clone)]
pub struct FlowMod {
    /// What to do.
    pub command: Command,
    /// Which table (`ALL_TABLES` for deletes in every table).
    pub table_id: u8,
    /// The flow (for deletes only its match and priority count).
    pub flow: NewFlow,
    /// Cookie mask for modify and delete (1.3; 0: any cookie).
    pub cookie_mask: u64,
    /// A buffered packet to run through the new flows.
    pub buffer_id: BufferId,
    /// Delete only flows that output to this port.
    pub out_port: Option<PortNo>,
    /// Delete only flows that name this group.
    pub out_group: Option<u32>,
}

/// The group and meter mod commands, which share their shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupCommand {
    /// `OFPGC_ADD` / `OFPMC_ADD`.
    Add,
    /// `OFPGC_MODIFY` / `OFPMC_MODIFY`.
    Modify,
    /// `OFPGC_DELETE` / `OFPMC_DELETE`.
    Delete,
}
