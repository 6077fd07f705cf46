//! A fixed number of flow requests (parse PACKET_IN, encode the FLOW_MOD
//! with the L2 or the exact match of its frame, as the learning switch
//! does with its `match` setting, or patch a FLOW_MOD encoded once, as
//! `baton bench responder --learning` does), for instruction counts under
//! callgrind, which are repeatable where timings here are not:
//!
//! ```sh
//! cargo build --release -p baton-openflow --example flow_request_loop
//! valgrind --tool=callgrind target/release/examples/flow_request_loop 13 100000 l2
//! ```
//!
//! Arguments: the version (10 or 13), the number of requests, and the
//! answer: `exact` (default), `l2`, or, for 1.0, `template` (the exact
//! FLOW_MOD of the first request, its xid, buffer id and output port
//! patched: issue 28 target 2 compares `exact` with it). Subtract a run
//! of 0 requests for the start-up's instructions.

use baton_openflow::neutral::{self, ActionSpec, FlowSpec, MatchSpec, PacketIn};
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::{BufferId, Cookie, PortNo, Xid, v10, v13};
use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1);
    let version = args.next().unwrap_or_else(|| "10".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let answer = args.next().unwrap_or_else(|| "exact".into());
    let l2 = answer == "l2";
    let frame = {
        let b = etherparse::PacketBuilder::ethernet2([0, 0, 0, 0, 0, 1], [0x80, 0, 0, 0, 0, 1])
            .ipv4([192, 168, 0, 40], [192, 168, 1, 40], 64)
            .tcp(1024, 80, 1, 4096);
        let mut v = Vec::new();
        b.write(&mut v, &[0; 6]).expect("a frame fits a Vec");
        v
    };
    let mut msg = Vec::new();
    match version.as_str() {
        "13" => v13::encode_packet_in(
            &mut msg,
            Xid(1),
            BufferId(7),
            frame.len() as u16,
            v13::PacketInReason::NoMatch,
            0,
            Cookie(0),
            &[Oxm::InPort(PortNo(1))],
            &frame,
        ),
        _ => v10::encode_packet_in(
            &mut msg,
            Xid(1),
            BufferId(7),
            frame.len() as u16,
            PortNo(1),
            v10::PacketInReason::NoMatch,
            &frame,
        ),
    }
    let actions = [ActionSpec::Output {
        port: PortNo(2),
        max_len: 0,
    }];
    if answer == "template" {
        assert_eq!(version, "10", "the template answer is 1.0's");
        let total = template_answers(n, &msg, &actions);
        println!("{n} flow requests, {total} bytes of FLOW_MOD");
        return;
    }
    let mut out = Vec::with_capacity(4096);
    let mut total = 0usize;
    for _ in 0..n {
        out.clear();
        let pi = PacketIn::parse(black_box(&msg)).expect("a valid packet-in");
        let exact = || MatchSpec::exact_frame(pi.in_port(), pi.data());
        let match_ = match l2 {
            true => MatchSpec::l2_frame(pi.in_port(), pi.data()).unwrap_or_else(exact),
            false => exact(),
        };
        let flow = FlowSpec {
            buffer_id: pi.buffer_id(),
            ..FlowSpec::new(match_, &actions)
        };
        neutral::encode_flow_add(&mut out, pi.version(), pi.xid(), &flow);
        total += black_box(out.len());
    }
    println!("{n} flow requests, {total} bytes of FLOW_MOD");
}

/// `n` 1.0 flow requests answered as `baton bench responder --learning`
/// answers them: the exact FLOW_MOD of the first, encoded once, copied
/// and patched. Returns the bytes written.
#[inline(never)]
fn template_answers(n: u64, msg: &[u8], actions: &[ActionSpec]) -> usize {
    let template = {
        let pi = PacketIn::parse(msg).expect("a valid packet-in");
        let flow = FlowSpec {
            buffer_id: pi.buffer_id(),
            ..FlowSpec::new(MatchSpec::exact_frame(pi.in_port(), pi.data()), actions)
        };
        let mut bytes = Vec::new();
        neutral::encode_flow_add(&mut bytes, pi.version(), pi.xid(), &flow);
        bytes
    };
    let mut out = Vec::with_capacity(4096);
    let mut total = 0usize;
    for _ in 0..n {
        out.clear();
        let pi = PacketIn::parse(black_box(msg)).expect("a valid packet-in");
        // 1.0.0 §5.3.3: the xid at offset 4, the buffer id at 64, the
        // output action's port at 76.
        let at = out.len();
        out.extend_from_slice(&template);
        let buffer_id = pi.buffer_id().unwrap_or(BufferId::NONE);
        out[at + 4..at + 8].copy_from_slice(&pi.xid().0.to_be_bytes());
        out[at + 64..at + 68].copy_from_slice(&buffer_id.0.to_be_bytes());
        out[at + 76..at + 78].copy_from_slice(&black_box(2u16).to_be_bytes());
        total += black_box(out.len());
    }
    total
}
