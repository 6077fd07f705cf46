//! [`ActionSpec`]: the actions both versions express with the same
//! meaning, written as 1.0 actions or as 1.3 actions (rewrites as
//! `OFPAT_SET_FIELD`).

use crate::types::{MacAddr, PortNo};
use crate::v13::oxm::{OFPVID_PRESENT, Oxm};
use crate::{v10, v13};
use std::net::Ipv4Addr;

/// An action both versions express with the same meaning (1.0.0 §5.2.4;
/// 1.3.5 §7.2.5, rewrites as OFPAT_SET_FIELD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionSpec {
    /// Output on `port`; to the controller, send `max_len` bytes
    /// (0xffff: the whole packet, 1.3 `OFPCML_NO_BUFFER`).
    Output {
        /// The port (physical or reserved, e.g. [`PortNo::FLOOD`]).
        port: PortNo,
        /// Bytes for the controller.
        max_len: u16,
    },
    /// Set the Ethernet source.
    SetEthSrc(MacAddr),
    /// Set the Ethernet destination.
    SetEthDst(MacAddr),
    /// Set the VLAN id of the packet's tag (1.3 sets `VLAN_VID` of an
    /// existing tag; 1.0 also adds a tag to an untagged packet).
    SetVlanVid(u16),
    /// Set the VLAN priority of the packet's tag.
    SetVlanPcp(u8),
    /// Remove the outer VLAN tag (1.0 STRIP_VLAN, 1.3 POP_VLAN).
    StripVlan,
    /// Set the IPv4 source.
    SetIpv4Src(Ipv4Addr),
    /// Set the IPv4 destination.
    SetIpv4Dst(Ipv4Addr),
    /// Set the IP DSCP (6 bits; 1.0 SET_NW_TOS with `dscp << 2`).
    SetIpDscp(u8),
    /// Set the TCP source port (1.0 SET_TP_SRC).
    SetTcpSrc(u16),
    /// Set the TCP destination port (1.0 SET_TP_DST).
    SetTcpDst(u16),
    /// Set the UDP source port (1.0 SET_TP_SRC).
    SetUdpSrc(u16),
    /// Set the UDP destination port (1.0 SET_TP_DST).
    SetUdpDst(u16),
    /// Output on a queue of a port (1.0 ENQUEUE; 1.3 SET_QUEUE then
    /// OUTPUT).
    Enqueue {
        /// The port.
        port: PortNo,
        /// The queue.
        queue_id: u32,
    },
}

impl ActionSpec {
    /// Output on `port`, the whole packet if `port` is the controller.
    pub const fn output(port: PortNo) -> ActionSpec {
        ActionSpec::Output {
            port,
            max_len: 0xffff,
        }
    }

    /// The OpenFlow 1.0 action.
    pub fn to_v10(&self) -> v10::Action {
        use v10::Action as A;
        match *self {
            ActionSpec::Output { port, max_len } => A::Output { port, max_len },
            ActionSpec::SetEthSrc(m) => A::SetDlSrc(m),
            ActionSpec::SetEthDst(m) => A::SetDlDst(m),
            ActionSpec::SetVlanVid(v) => A::SetVlanVid(v & 0x0fff),
            ActionSpec::SetVlanPcp(p) => A::SetVlanPcp(p),
            ActionSpec::StripVlan => A::StripVlan,
            ActionSpec::SetIpv4Src(a) => A::SetNwSrc(a),
            ActionSpec::SetIpv4Dst(a) => A::SetNwDst(a),
            ActionSpec::SetIpDscp(d) => A::SetNwTos(d << 2),
            ActionSpec::SetTcpSrc(p) | ActionSpec::SetUdpSrc(p) => A::SetTpSrc(p),
            ActionSpec::SetTcpDst(p) | ActionSpec::SetUdpDst(p) => A::SetTpDst(p),
            ActionSpec::Enqueue { port, queue_id } => A::Enqueue { port, queue_id },
        }
    }

    /// Calls `f` with the OpenFlow 1.3 action(s), one or two.
    pub fn for_each_v13(&self, mut f: impl FnMut(v13::Action)) {
        use v13::Action as A;
        let set = |o: Oxm| A::SetField(o);
        let a = match *self {
            ActionSpec::Output { port, max_len } => A::Output { port, max_len },
            ActionSpec::SetEthSrc(value) => set(Oxm::EthSrc { value, mask: None }),
            ActionSpec::SetEthDst(value) => set(Oxm::EthDst { value, mask: None }),
            ActionSpec::SetVlanVid(v) => set(Oxm::VlanVid {
                value: OFPVID_PRESENT | (v & 0x0fff),
                mask: None,
            }),
            ActionSpec::SetVlanPcp(p) => set(Oxm::VlanPcp(p)),
            ActionSpec::StripVlan => A::PopVlan,
            ActionSpec::SetIpv4Src(value) => set(Oxm::Ipv4Src { value, mask: None }),
            ActionSpec::SetIpv4Dst(value) => set(Oxm::Ipv4Dst { value, mask: None }),
            ActionSpec::SetIpDscp(d) => set(Oxm::IpDscp(d)),
            ActionSpec::SetTcpSrc(p) => set(Oxm::TcpSrc(p)),
            ActionSpec::SetTcpDst(p) => set(Oxm::TcpDst(p)),
            ActionSpec::SetUdpSrc(p) => set(Oxm::UdpSrc(p)),
            ActionSpec::SetUdpDst(p) => set(Oxm::UdpDst(p)),
            ActionSpec::Enqueue { port, queue_id } => {
                f(A::SetQueue(queue_id));
                A::Output { port, max_len: 0 }
            }
        };
        f(a);
    }
}

/// Writes `specs` as 1.3 actions, converting each on the fly (no list is
/// built, so any number of actions costs no allocation).
pub(super) fn emit_v13_actions(out: &mut Vec<u8>, specs: &[ActionSpec]) {
    for s in specs {
        s.for_each_v13(|a| a.emit(out));
    }
}
