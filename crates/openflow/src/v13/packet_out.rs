//! OFPT_PACKET_OUT (`ofp_packet_out`, 1.3.5 §7.3.7): the view over
//! received bytes, the owned form and the encoders, generated with 1.0's
//! from one definition (`crate::twin::packet_out!`).

crate::twin::packet_out! {
    version: V13,
    msg_type: MsgType13,
    spec: "1.3.5 §7.3.7",
    action: super::action,
    in_port: 12..16,
        read |b: &[u8], f| PortNo(get_u32(b, f)),
        write |b: &mut [u8], f, v: PortNo| set_u32(b, f, v.0),
    in_port_doc: "`in_port`: the packet's input port (or `PortNo::CONTROLLER`).",
    actions_len: 16..18,
    // 18..24: padding.
    actions: 24,
}
