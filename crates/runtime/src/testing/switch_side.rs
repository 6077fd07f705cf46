//! What a switch says, for tests: its HELLO, FEATURES_REPLY, PACKET_INs
//! and port descriptions, in either version.

use baton_openflow::hello::{Hello, HelloElement, bitmap_of};
use baton_openflow::neutral::{Message, PortDesc};
use baton_openflow::{BufferId, DatapathId, MacAddr, PortNo, Version, Xid, v10, v13};

/// A port with this number, named `eth<no>`, live.
pub fn port(no: u32) -> PortDesc {
    PortDesc {
        no: PortNo(no),
        name: format!("eth{no}"),
        hw_addr: MacAddr([2, 0, 0, 0, (no >> 8) as u8, no as u8]),
        admin_down: false,
        link_down: false,
        blocked: false,
        speed_kbps: None,
    }
}

/// `p` as a 1.0 `ofp_phy_port`.
pub fn phy_port(p: &PortDesc) -> v10::PhyPort {
    use v10::port::{config, state};
    v10::PhyPort {
        port_no: p.no,
        hw_addr: p.hw_addr,
        name: p.name.clone(),
        config: if p.admin_down { config::PORT_DOWN } else { 0 },
        state: if p.link_down { state::LINK_DOWN } else { 0 }
            | if p.blocked { state::STP_BLOCK } else { 0 },
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
    }
}

/// `p` as a 1.3 `ofp_port`.
pub fn port13(p: &PortDesc) -> v13::Port {
    use v13::port::{port_config, port_state};
    v13::Port {
        port_no: p.no,
        hw_addr: p.hw_addr,
        name: p.name.clone(),
        config: if p.admin_down {
            port_config::PORT_DOWN
        } else {
            0
        },
        state: if p.link_down {
            port_state::LINK_DOWN
        } else {
            0
        } | if p.blocked { port_state::BLOCKED } else { 0 },
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
        curr_speed: p.speed_kbps.unwrap_or(0),
        max_speed: 0,
    }
}

/// A switch's HELLO offering only `version` (with a version bitmap).
pub fn hello(version: Version) -> Vec<u8> {
    let mut out = Vec::new();
    Hello {
        elements: vec![HelloElement::VersionBitmap(vec![bitmap_of(&[version])])],
    }
    .encode(version, Xid(1), &mut out);
    out
}

/// A switch's FEATURES_REPLY: datapath `dpid`, 256 buffers, one table
/// (1.0) or 254 (1.3), no ports.
pub fn features_reply(version: Version, dpid: DatapathId) -> Message {
    match version {
        Version::V10 => v10::Message::FeaturesReply(v10::SwitchFeatures {
            datapath_id: dpid,
            n_buffers: 256,
            n_tables: 1,
            capabilities: 0,
            actions: 0xfff,
            ports: Vec::new(),
        })
        .into(),
        Version::V13 => v13::Message::FeaturesReply(v13::SwitchFeatures {
            datapath_id: dpid,
            n_buffers: 256,
            n_tables: 254,
            auxiliary_id: 0,
            capabilities: 0,
        })
        .into(),
    }
}

/// Appends the PACKET_IN a switch of `version` sends for `frame`, which
/// arrived on `in_port` and is kept in `buffer_id` ([`BufferId::NONE`]:
/// carried whole), with xid 0 (the codec's
/// [`encode_packet_in_no_match`](baton_openflow::neutral::encode_packet_in_no_match)).
pub fn encode_packet_in(
    out: &mut Vec<u8>,
    version: Version,
    buffer_id: BufferId,
    in_port: PortNo,
    frame: &[u8],
) {
    baton_openflow::neutral::encode_packet_in_no_match(
        out,
        version,
        Xid(0),
        buffer_id,
        in_port,
        frame,
    );
}
