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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_out_actions_len_is_checked() {
        let mut out = Vec::new();
        let actions = [Action::Output {
            port: PortNo::FLOOD,
            max_len: 0,
        }];
        encode_packet_out(&mut out, Xid(3), BufferId::NONE, PortNo(1), &actions, b"xy");
        let v = PacketOutView::new_checked(&out[..]).unwrap();
        assert_eq!(v.actions().collect_vec().unwrap(), actions);
        assert_eq!(v.data(), b"xy");
        assert_eq!(PacketOut::parse(&v).unwrap().buffer_len(), out.len());
        assert_eq!(&out[14..16], &[0, 8]);
        out[15] = 11; // 16 + 11 > 26
        let e = PacketOutView::new_checked(&out[..]).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 11 });
        out[15] = 10; // fits, but cuts an action
        let v = PacketOutView::new_checked(&out[..]).unwrap();
        assert!(v.actions().any(|a| a.is_err()));
    }
}
