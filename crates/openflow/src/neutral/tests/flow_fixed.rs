//! The FLOW_MODs written in one go (1.0 with no action or one output, 1.3
//! with the L2 match, no meter and no action or one output) are the
//! general encoder's, byte for byte, whatever the frame and the fields.

use super::*;
use crate::neutral::flow::{encode_flow_add10, encode_flow_add13};
use crate::packet::tests::{icmp_frame, ipv6_ns_frame, ipv6_tcp_frame, udp_frame, vlan_udp_frame};
use proptest::prelude::*;

/// Every frame shape the key knows, and cbench's (IPv4 protocol 255);
/// each also with byte 15 (an IPv4 ToS: DSCP 46, ECN 1) set.
fn frames() -> Vec<Vec<u8>> {
    let mut cbench = tcp_frame();
    cbench[23] = 255;
    let frames = [
        tcp_frame(),
        udp_frame(),
        arp_frame(),
        icmp_frame(),
        vlan_udp_frame(),
        ipv6_tcp_frame(),
        ipv6_ns_frame(),
        cbench,
    ];
    let tos = frames.clone().map(|mut f| {
        f[15] = 0xb9;
        f
    });
    frames.into_iter().chain(tos).collect()
}

/// `encode_flow_add` for each version, after a few bytes already in
/// `out`, equals the general encoder's output.
fn assert_fixed_is_general(flow: &FlowSpec<'_>) {
    let prefix = [0xee, 0xdd, 0xcc];
    let xid = Xid(0x0102_0304);
    let (mut fixed, mut general) = (prefix.to_vec(), prefix.to_vec());
    encode_flow_add(&mut fixed, Version::V10, xid, flow);
    encode_flow_add10(&mut general, xid, flow);
    assert_eq!(fixed, general, "1.0 {flow:?}");
    let expect_len = 72 + 8 * flow.actions.len();
    assert_eq!(fixed.len() - prefix.len(), expect_len, "{flow:?}");

    let (mut fixed, mut general) = (prefix.to_vec(), prefix.to_vec());
    encode_flow_add(&mut fixed, Version::V13, xid, flow);
    encode_flow_add13(&mut general, xid, flow);
    assert_eq!(fixed, general, "1.3 {flow:?}");
    if matches!(flow.match_, MatchSpec::L2(_)) && flow.meter.is_none() {
        // The header and fixed fields, the padded match, and the
        // instruction with its one output.
        let expect_len = 48 + 40 + 24 * flow.actions.len();
        assert_eq!(fixed.len() - prefix.len(), expect_len, "{flow:?}");
    }
}

/// The matches a learning switch sends for `frame`, and two others.
fn matches(in_port: PortNo, frame: &[u8]) -> Vec<MatchSpec<'_>> {
    let mut m = vec![
        MatchSpec::exact_frame(in_port, frame),
        MatchSpec::exact(&FlowKey::extract(in_port, frame)),
        MatchSpec::all(),
    ];
    m.extend(MatchSpec::l2_frame(in_port, frame));
    m
}

#[test]
fn every_frame_shape_and_truncation_with_no_or_one_output() {
    let outputs = [
        ActionSpec::output(PortNo(2)),
        ActionSpec::Output {
            port: PortNo::CONTROLLER,
            max_len: 128,
        },
    ];
    for frame in frames() {
        for len in 0..=frame.len() {
            for in_port in [PortNo(1), PortNo::LOCAL, PortNo(0x1_0000)] {
                for match_ in matches(in_port, &frame[..len]) {
                    for actions in [&[][..], &outputs[..1], &outputs[1..]] {
                        let flow = FlowSpec {
                            buffer_id: Some(BufferId(7)),
                            idle_timeout: 10,
                            ..FlowSpec::new(match_, actions)
                        };
                        assert_fixed_is_general(&flow);
                    }
                }
            }
        }
    }
}

/// A port: a 1.0 one, a reserved one, or any 32-bit number (some have no
/// 1.0 number and are written as OFPP_NONE).
fn port() -> impl Strategy<Value = PortNo> {
    prop_oneof![0u32..0xff00, 0xffff_ff00..=u32::MAX, any::<u32>()].prop_map(PortNo)
}

proptest! {
    #[test]
    fn fixed_flow_mod_is_the_general_one(
        base in proptest::sample::select(frames()),
        random in proptest::collection::vec(any::<u8>(), 0..100),
        use_random in any::<bool>(),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..4),
        steer in any::<bool>(),
        tos in any::<u8>(),
        proto in proptest::sample::select(vec![6u8, 17, 1, 132, 255]),
        cut in any::<proptest::sample::Index>(),
        in_port in port(),
        which in 0usize..4,
        buffer_id in proptest::option::of(any::<u32>()),
        idle_timeout in any::<u16>(),
        hard_timeout in any::<u16>(),
        priority in any::<u16>(),
        cookie in any::<u64>(),
        flags in any::<u16>(),
        meter in proptest::option::of(any::<u32>()),
        outputs in proptest::collection::vec(
            (port(), prop_oneof![Just(0u16), Just(128), Just(0xffff), any::<u16>()]),
            0..=1,
        ),
    ) {
        // A known frame with a few bytes changed (or random bytes), perhaps
        // steered toward a plain IPv4 frame with any ToS (as the frame
        // tests of `packet::plain` do), cut anywhere.
        let mut frame = if use_random { random } else { base };
        if !frame.is_empty() {
            for (at, v) in edits {
                let i = at.index(frame.len());
                frame[i] = v;
            }
        }
        if steer {
            for (i, v) in [(12, 0x08), (13, 0x00), (14, 0x45), (15, tos), (20, 0), (21, 0), (23, proto)] {
                if let Some(b) = frame.get_mut(i) {
                    *b = v;
                }
            }
        }
        frame.truncate(cut.index(frame.len() + 1));
        let m = matches(in_port, &frame);
        let actions: Vec<ActionSpec> = outputs
            .into_iter()
            .map(|(port, max_len)| ActionSpec::Output { port, max_len })
            .collect();
        let flow = FlowSpec {
            match_: m[which.min(m.len() - 1)],
            priority,
            idle_timeout,
            hard_timeout,
            cookie: Cookie(cookie),
            buffer_id: buffer_id.map(BufferId),
            flags,
            actions: &actions,
            meter,
        };
        assert_fixed_is_general(&flow);
    }
}
