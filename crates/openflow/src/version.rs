//! The OpenFlow versions baton speaks. Its own module because everything
//! else (errors, headers, the shared types) depends on it and it depends
//! on nothing.

use std::fmt;

/// The OpenFlow versions baton speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// OpenFlow 1.0 (wire version 0x01), spec 1.0.0.
    V10,
    /// OpenFlow 1.3 (wire version 0x04), spec 1.3.5.
    V13,
}

impl Version {
    /// The `ofp_header.version` byte.
    pub const fn wire(self) -> u8 {
        match self {
            Version::V10 => 0x01,
            Version::V13 => 0x04,
        }
    }

    /// The version for a header byte, if baton speaks it.
    pub const fn from_wire(v: u8) -> Option<Version> {
        match v {
            0x01 => Some(Version::V10),
            0x04 => Some(Version::V13),
            _ => None,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Version::V10 => "OpenFlow 1.0",
            Version::V13 => "OpenFlow 1.3",
        })
    }
}
