//! A fixed number of flow requests (parse PACKET_IN, encode the FLOW_MOD
//! with the L2 or the exact match of its frame, as the learning switch
//! does with its `match` setting), for instruction counts under
//! callgrind, which are repeatable where timings here are not:
//!
//! ```sh
//! cargo build --release -p baton-openflow --example flow_request_loop
//! valgrind --tool=callgrind target/release/examples/flow_request_loop 13 100000 l2
//! ```
//!
//! Arguments: the version (10 or 13), the number of requests, and the
//! match: `exact` (default) or `l2`. Subtract a run of 0 requests for the
//! start-up's instructions.

use baton_openflow::neutral::{self, ActionSpec, FlowSpec, MatchSpec, PacketIn};
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::{BufferId, Cookie, PortNo, Xid, v10, v13};
use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1);
    let version = args.next().unwrap_or_else(|| "10".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let l2 = args.next().as_deref() == Some("l2");
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
