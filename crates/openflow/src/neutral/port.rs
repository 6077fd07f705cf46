//! [`PortDesc`]: a switch port as either version describes it (1.0
//! `ofp_phy_port`, 1.0.0 §5.2.1; 1.3 `ofp_port`, 1.3.5 §7.2.1), reduced to
//! what applications decide on, and the request for 1.3's port list.

use crate::types::{MacAddr, PortNo, Xid};
use crate::v13::multipart::{MultipartRequest, MultipartRequestBody};
use crate::version::Version;
use crate::{v10, v13};
use std::fmt;

/// A switch port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortDesc {
    /// Its number.
    pub no: PortNo,
    /// Its name (the interface name on Open vSwitch).
    pub name: String,
    /// Its Ethernet address.
    pub hw_addr: MacAddr,
    /// Administratively down (`OFPPC_PORT_DOWN`).
    pub admin_down: bool,
    /// No physical link (`OFPPS_LINK_DOWN`).
    pub link_down: bool,
    /// Blocked by a loop-prevention protocol: 1.0's STP state BLOCK, 1.3's
    /// `OFPPS_BLOCKED`.
    pub blocked: bool,
    /// The current bit rate in kbit/s, where the switch says: 1.3's
    /// `curr_speed`, or the fastest rate among 1.0's `curr` feature bits.
    pub speed_kbps: Option<u32>,
}

impl PortDesc {
    /// Whether the port can carry traffic: up, linked, not blocked.
    pub fn is_live(&self) -> bool {
        !(self.admin_down || self.link_down || self.blocked)
    }

    /// Whether it is a numbered switch port rather than a reserved one
    /// such as `LOCAL`.
    pub fn is_physical(&self) -> bool {
        self.no.0 >= 1 && self.no <= PortNo::MAX
    }
}

impl From<&v10::PhyPort> for PortDesc {
    fn from(p: &v10::PhyPort) -> PortDesc {
        use v10::port::{config, state};
        PortDesc {
            no: p.port_no,
            name: p.name.clone(),
            hw_addr: p.hw_addr,
            admin_down: p.config & config::PORT_DOWN != 0,
            link_down: p.state & state::LINK_DOWN != 0,
            blocked: p.state & state::STP_MASK == state::STP_BLOCK,
            speed_kbps: v10_speed_kbps(p.curr),
        }
    }
}

/// The fastest rate among 1.0 `ofp_port_features` bits, in kbit/s
/// (`None` when no rate bit is set, as for virtual ports).
fn v10_speed_kbps(curr: u32) -> Option<u32> {
    use v10::port::features::*;
    [
        (F_10GB_FD, 10_000_000),
        (F_1GB_FD | F_1GB_HD, 1_000_000),
        (F_100MB_FD | F_100MB_HD, 100_000),
        (F_10MB_FD | F_10MB_HD, 10_000),
    ]
    .into_iter()
    .find(|&(bits, _)| curr & bits != 0)
    .map(|(_, kbps)| kbps)
}

impl From<&v13::Port> for PortDesc {
    fn from(p: &v13::Port) -> PortDesc {
        use v13::port::{port_config, port_state};
        PortDesc {
            no: p.port_no,
            name: p.name.clone(),
            hw_addr: p.hw_addr,
            admin_down: p.config & port_config::PORT_DOWN != 0,
            link_down: p.state & port_state::LINK_DOWN != 0,
            blocked: p.state & port_state::BLOCKED != 0,
            speed_kbps: Some(p.curr_speed),
        }
    }
}

impl fmt::Display for PortDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.no.0, self.name)
    }
}

/// Appends the 1.3 MULTIPART_REQUEST for every port's description
/// (OFPMP_PORT_DESC, 1.3.5 §7.3.5.7). 1.0 lists the ports in
/// FEATURES_REPLY instead; nothing is written for it.
pub fn encode_port_desc_request(out: &mut Vec<u8>, version: Version, xid: Xid) {
    if version == Version::V13 {
        v13::Message::MultipartRequest(MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::PortDesc,
        })
        .encode(xid, out);
    }
}
