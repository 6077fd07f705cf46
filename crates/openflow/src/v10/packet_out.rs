//! OFPT_PACKET_OUT (`ofp_packet_out`, 1.0.0 §5.3.6): the view over
//! received bytes, the owned form and the encoders, generated with 1.3's
//! from one definition (`crate::twin::packet_out!`).

use crate::v10::ofmatch::port_to_wire;

crate::twin::packet_out! {
    version: V10,
    msg_type: MsgType10,
    spec: "1.0.0 §5.3.6",
    action: super::action,
    in_port: 12..14,
        read |b: &[u8], f| PortNo::from_of10(get_u16(b, f)),
        write |b: &mut [u8], f, v| set_u16(b, f, port_to_wire(v)),
    in_port_doc: "`in_port`: the packet's input port, or `OFPP_NONE`.",
    actions_len: 14..16,
    actions: 16,
}
