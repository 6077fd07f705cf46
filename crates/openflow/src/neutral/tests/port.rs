//! Ports as either version describes them.

use super::*;

#[test]
fn ports_read_the_same_from_both_versions() {
    let p10 = v10::PhyPort {
        port_no: PortNo(3),
        hw_addr: MacAddr([2, 0, 0, 0, 0, 3]),
        name: "s1-eth3".into(),
        config: 0,
        state: v10::port::state::STP_FORWARD,
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
    };
    let d = PortDesc::from(&p10);
    assert_eq!(
        (d.no, d.name.as_str(), d.speed_kbps),
        (PortNo(3), "s1-eth3", None)
    );
    assert!(d.is_live() && d.is_physical());
    // 1.0 tells the rate by feature bits: the fastest set one counts.
    use v10::port::features::{COPPER, F_1GB_FD, F_10GB_FD, F_100MB_FD};
    for (curr, kbps) in [
        (F_1GB_FD | COPPER, Some(1_000_000)),
        (F_100MB_FD | F_10GB_FD, Some(10_000_000)),
        (F_100MB_FD, Some(100_000)),
        (COPPER, None),
    ] {
        let p = v10::PhyPort {
            curr,
            ..p10.clone()
        };
        assert_eq!(PortDesc::from(&p).speed_kbps, kbps, "curr {curr:#x}");
    }
    let down = v10::PhyPort {
        config: v10::port::config::PORT_DOWN,
        ..p10.clone()
    };
    assert!(PortDesc::from(&down).admin_down && !PortDesc::from(&down).is_live());
    let blocked = v10::PhyPort {
        state: v10::port::state::STP_BLOCK,
        ..p10.clone()
    };
    assert!(PortDesc::from(&blocked).blocked);
    let p13 = v13::Port {
        port_no: PortNo::LOCAL,
        hw_addr: MacAddr([2, 0, 0, 0, 0, 9]),
        name: "s1".into(),
        config: 0,
        state: v13::port::port_state::LINK_DOWN,
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
        curr_speed: 10_000_000,
        max_speed: 0,
    };
    let d = PortDesc::from(&p13);
    assert!(d.link_down && !d.is_live() && !d.is_physical());
    assert_eq!(d.speed_kbps, Some(10_000_000));
    // The 1.3 request decodes as OFPMP_PORT_DESC; 1.0 has none.
    let mut out = Vec::new();
    encode_port_desc_request(&mut out, Version::V10, Xid(1));
    assert!(out.is_empty());
    encode_port_desc_request(&mut out, Version::V13, Xid(2));
    match decode13(&out) {
        (Xid(2), v13::Message::MultipartRequest(r)) => {
            assert_eq!(r.body, v13::multipart::MultipartRequestBody::PortDesc)
        }
        other => panic!("{other:?}"),
    }
}
