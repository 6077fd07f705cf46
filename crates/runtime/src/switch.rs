//! How applications name a switch ([`SwitchId`]) and what they know about
//! it ([`SwitchInfo`]), and why a message could not be sent to it
//! ([`SendError`]).

use baton_openflow::{DatapathId, Version};
use std::fmt;
use std::net::SocketAddr;

/// Identifies one connection: a slot index and the slot's generation, so
/// a stale id never reaches a newer switch in the same slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchId {
    index: u32,
    generation: u32,
}

impl SwitchId {
    /// The id of the connection in slot `index`, made when the slot had
    /// been used `generation` times before (for tests; the runtime hands
    /// out the real ones).
    pub fn new(index: u32, generation: u32) -> SwitchId {
        SwitchId { index, generation }
    }

    /// The slot index (dense, reused after disconnects).
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// The slot's generation when this connection was made.
    pub(crate) fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Display for SwitchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}", self.index, self.generation)
    }
}

/// What applications know about a connected switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchInfo {
    /// The runtime's id of this connection.
    pub id: SwitchId,
    /// Its datapath id.
    pub dpid: DatapathId,
    /// The negotiated version.
    pub version: Version,
    /// The remote address, where known.
    pub peer: Option<SocketAddr>,
}

/// Why a message could not be sent to a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The switch disconnected (or the id is stale).
    Gone,
    /// Its unsent output exceeded the limit; it is being disconnected.
    Overflow,
    /// It would change the switch's state, and this instance is not the
    /// switch's master (a cluster's slave; [`crate::Mastership`]).
    NotMaster,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::Gone => "switch is not connected",
            SendError::Overflow => "switch's output backlog exceeded the limit",
            SendError::NotMaster => "another instance of the cluster is the switch's master",
        })
    }
}

impl std::error::Error for SendError {}
