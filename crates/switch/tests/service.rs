//! Service connections (those accepted on a passive listener, as
//! `ovs-ofctl` opens them): no asynchronous messages until they ask, the
//! rule Open vSwitch follows (its DESIGN, "Asynchronous Messages"), while
//! the switch's controller receives them as before.

mod common;

use baton_openflow::Version;
use baton_openflow::switch_config::SwitchConfig;
use baton_openflow::types::{PortNo, Xid};
use baton_openflow::v13::{Action, FlowMod, FlowModHead, Instruction, Match13};
use baton_openflow::{v10, v13};
use baton_switch::inproc::ControllerId;
use baton_switch::proto::DEFAULT_ASYNC;
use baton_switch::testutil::udp_frame;
use common::*;

/// Sends `request` (if any) from connection `c` and returns every
/// message `c` has received since the last call.
fn exchange(h: &mut Harness, c: ControllerId, request: &[u8]) -> Vec<Vec<u8>> {
    if !request.is_empty() {
        h.net.send(c, request);
    }
    messages(&h.net.recv(c))
}

fn tool10(h: &mut Harness, c: ControllerId, m: Option<v10::Message>) -> Vec<v10::Message> {
    let mut b = Vec::new();
    m.inspect(|m| m.encode(Xid(7), &mut b));
    let got = exchange(h, c, &b);
    got.iter().map(|m| v10::decode(m).unwrap().1).collect()
}

fn tool13(h: &mut Harness, c: ControllerId, m: Option<v13::Message>) -> Vec<v13::Message> {
    let mut b = Vec::new();
    m.inspect(|m| m.encode(Xid(7), &mut b));
    let got = exchange(h, c, &b);
    got.iter().map(|m| v13::decode(m).unwrap().1).collect()
}

fn config(miss_send_len: u16) -> SwitchConfig {
    SwitchConfig {
        flags: 0,
        miss_send_len,
    }
}

fn is_packet_in10(msgs: &[v10::Message]) -> bool {
    matches!(msgs, [v10::Message::PacketIn(_)])
}

fn is_packet_in13(msgs: &[v13::Message]) -> bool {
    matches!(msgs, [v13::Message::PacketIn(_)])
}

#[test]
fn a_service_connection_in_10_hears_nothing_until_it_sets_a_miss_send_len() {
    let mut h = Harness::new(Version::V10, 2);
    let tool = h.connect_service();
    let miss = udp_frame(H1, H2, 53);

    h.inject(1, &miss);
    assert!(
        is_packet_in10(&h.async10()),
        "the controller hears the miss"
    );
    assert_eq!(tool10(&mut h, tool, None), [], "the tool does not");
    h.net.set_link(h.sw, PortNo(2), false);
    assert!(matches!(&h.async10()[..], [v10::Message::PortStatus(_)]));
    assert_eq!(tool10(&mut h, tool, None), []);
    // It is served all the same.
    assert_eq!(
        tool10(&mut h, tool, Some(v10::Message::BarrierRequest)),
        [v10::Message::BarrierReply]
    );

    // A nonzero miss_send_len asks for them ...
    assert_eq!(
        tool10(&mut h, tool, Some(v10::Message::SetConfig(config(128)))),
        []
    );
    h.inject(1, &miss);
    assert!(is_packet_in10(&tool10(&mut h, tool, None)));
    assert!(is_packet_in10(&h.async10()));
    // ... and zero stops them again.
    tool10(&mut h, tool, Some(v10::Message::SetConfig(config(0))));
    h.inject(1, &miss);
    assert_eq!(tool10(&mut h, tool, None), []);
    assert!(is_packet_in10(&h.async10()), "the controller still hears");
}

#[test]
fn a_service_connection_in_13_asks_with_set_async_or_set_config() {
    let mut h = Harness::new(Version::V13, 2);
    let to_controller = Instruction::ApplyActions(vec![Action::Output {
        port: PortNo::CONTROLLER,
        max_len: 0xffff,
    }]);
    let table_miss = FlowMod::from_parts(
        FlowModHead::default(),
        Match13 { fields: vec![] },
        vec![to_controller],
    );
    assert_eq!(h.send13(v13::Message::FlowMod(table_miss)), []);
    let by_async = h.connect_service();
    let by_config = h.connect_service();
    let miss = udp_frame(H1, H2, 53);

    h.inject(1, &miss);
    assert!(is_packet_in13(&h.async13()));
    assert_eq!(tool13(&mut h, by_async, None), []);
    assert_eq!(tool13(&mut h, by_config, None), []);

    let set_async = v13::Message::SetAsync(DEFAULT_ASYNC);
    assert_eq!(tool13(&mut h, by_async, Some(set_async)), []);
    let set_config = v13::Message::SetConfig(config(128));
    assert_eq!(tool13(&mut h, by_config, Some(set_config)), []);
    h.inject(1, &miss);
    assert!(is_packet_in13(&h.async13()));
    assert!(is_packet_in13(&tool13(&mut h, by_async, None)));
    assert!(is_packet_in13(&tool13(&mut h, by_config, None)));
}
