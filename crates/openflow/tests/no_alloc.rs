//! Proves the hot path allocates nothing once the output buffer has grown:
//! a counting global allocator counts allocations made by this thread
//! while a measured closure runs.
//!
//! Covered, for OpenFlow 1.0 and 1.3: PACKET_IN view parse + `FlowKey`
//! extraction + match conversion (1.0 `ofp_match`, 1.3 OXM match written
//! into the buffer), FLOW_MOD encode (exact and sparse match, flow delete,
//! table-miss), PACKET_OUT encode, ECHO_REPLY and BARRIER_REQUEST; plus key
//! extraction on every kind of frame the extractor knows.
//!
//! The file holds a single `#[test]`, and counting is per thread, so the
//! test harness's own allocations on other threads do not interfere.

use baton_openflow::neutral::{
    self, ActionSpec, FlowSpec, Ipv4Prefix, L4Match, MatchFields, MatchSpec, NetMatch, PacketIn,
    PacketOut, Payload, VlanMatch,
};
use baton_openflow::packet::FlowKey;
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::{BufferId, Cookie, MacAddr, PortNo, Version, Xid, v10, v13};
use etherparse::{
    ArpHardwareId, ArpOperation, ArpPacket, EtherType, Icmpv4Type, Icmpv6Type, PacketBuilder,
    VlanId,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    // `try_with`: the thread-local may be gone while a thread exits.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the same arguments, so
// `Counting` upholds `GlobalAlloc`'s contract exactly as `System` does;
// the counting touches only an atomic and a const-initialised
// thread-local `Cell`, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` once to warm up, then 100 more times while counting; returns
/// the allocations made by the counted runs.
fn allocations(mut f: impl FnMut()) -> usize {
    f();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for _ in 0..100 {
        f();
    }
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

const SRC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const DST: [u8; 6] = [2, 0, 0, 0, 0, 2];
const IP6_A: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const IP6_B: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn frames() -> Vec<(&'static str, Vec<u8>)> {
    let mut v = Vec::new();
    let mut push = |name, b: &dyn Fn(&mut Vec<u8>)| {
        let mut out = Vec::new();
        b(&mut out);
        v.push((name, out));
    };
    push("tcp", &|o| {
        PacketBuilder::ethernet2(SRC, DST)
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(1234, 80, 1, 1000)
            .write(o, &[0; 6])
            .unwrap()
    });
    push("vlan udp", &|o| {
        PacketBuilder::ethernet2(SRC, DST)
            .single_vlan(VlanId::try_new(7).unwrap())
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(53, 53)
            .write(o, b"q")
            .unwrap()
    });
    push("icmp", &|o| {
        PacketBuilder::ethernet2(SRC, DST)
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .icmpv4(Icmpv4Type::EchoRequest(etherparse::IcmpEchoHeader {
                id: 1,
                seq: 1,
            }))
            .write(o, b"ping")
            .unwrap()
    });
    push("arp", &|o| {
        let arp = ArpPacket::new(
            ArpHardwareId::ETHERNET,
            EtherType::IPV4,
            ArpOperation::REQUEST,
            &SRC,
            &[10, 0, 0, 1],
            &[0; 6],
            &[10, 0, 0, 2],
        )
        .unwrap();
        PacketBuilder::ethernet2(SRC, [0xff; 6])
            .arp(arp)
            .write(o)
            .unwrap()
    });
    push("ipv6 tcp", &|o| {
        PacketBuilder::ethernet2(SRC, DST)
            .ipv6(IP6_A, IP6_B, 64)
            .tcp(1, 2, 3, 4)
            .write(o, &[])
            .unwrap()
    });
    push("ipv6 nd", &|o| {
        let mut payload = IP6_B.to_vec();
        payload.extend_from_slice(&[1, 1]);
        payload.extend_from_slice(&SRC);
        PacketBuilder::ethernet2(SRC, DST)
            .ipv6(IP6_A, IP6_B, 255)
            .icmpv6(Icmpv6Type::NeighborSolicitation)
            .write(o, &payload)
            .unwrap()
    });
    v
}

fn packet_in(version: Version, frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match version {
        Version::V10 => v10::encode_packet_in(
            &mut out,
            Xid(1),
            BufferId(0x100),
            frame.len() as u16,
            PortNo(1),
            v10::PacketInReason::NoMatch,
            frame,
        ),
        Version::V13 => v13::encode_packet_in(
            &mut out,
            Xid(1),
            BufferId(0x100),
            frame.len() as u16,
            v13::PacketInReason::NoMatch,
            0,
            Cookie(0),
            &[Oxm::InPort(PortNo(1))],
            frame,
        ),
    }
    out
}

#[test]
fn hot_path_allocates_nothing() {
    let frames = frames();
    let mut out: Vec<u8> = Vec::new();
    let output = [ActionSpec::output(PortNo(2))];
    let rewrite = [
        ActionSpec::SetEthDst(MacAddr(DST)),
        ActionSpec::SetIpv4Dst(Ipv4Addr::new(10, 0, 0, 9)),
        ActionSpec::SetTcpDst(8080),
        ActionSpec::Enqueue {
            port: PortNo(3),
            queue_id: 1,
        },
        ActionSpec::output(PortNo::CONTROLLER),
    ];
    let sparse = MatchSpec::Fields(MatchFields {
        in_port: Some(PortNo(1)),
        eth_src: Some(MacAddr(SRC)),
        eth_dst: None,
        vlan: Some(VlanMatch::Tagged { vid: 7, pcp: None }),
        net: NetMatch::Ipv4 {
            src: Some(Ipv4Prefix {
                addr: Ipv4Addr::new(10, 0, 0, 0),
                len: 8,
            }),
            dst: None,
            dscp: None,
            l4: L4Match::Tcp {
                src: None,
                dst: Some(80),
            },
        },
    });
    let mut failures = Vec::new();
    let mut check = |what: String, n: usize| {
        if n != 0 {
            failures.push(format!("{what}: {n} allocations in 100 runs"));
        }
    };

    for (name, frame) in &frames {
        let n = allocations(|| {
            black_box(FlowKey::extract(PortNo(1), black_box(frame)));
        });
        check(format!("extract {name}"), n);
    }

    for v in [Version::V10, Version::V13] {
        for (name, frame) in &frames {
            let msg = packet_in(v, frame);
            let n = allocations(|| {
                let pi = PacketIn::parse(black_box(&msg)).expect("packet-in");
                let key = pi.key();
                out.clear();
                match v {
                    Version::V10 => {
                        black_box(v10::Match10::exact(&key));
                    }
                    Version::V13 => v13::oxm::emit_exact_match(&mut out, &key),
                }
            });
            check(format!("{v}: packet-in + key + match, {name}"), n);

            let key = FlowKey::extract(PortNo(1), frame);
            let n = allocations(|| {
                out.clear();
                let flow = FlowSpec {
                    buffer_id: Some(BufferId(0x100)),
                    idle_timeout: 10,
                    ..FlowSpec::new(MatchSpec::exact(&key), &output)
                };
                neutral::encode_flow_add(&mut out, v, Xid(2), &flow);
            });
            check(format!("{v}: flow-mod exact, {name}"), n);

            let n = allocations(|| {
                out.clear();
                let flow = FlowSpec {
                    buffer_id: Some(BufferId(0x100)),
                    ..FlowSpec::new(MatchSpec::exact_frame(PortNo(1), black_box(frame)), &output)
                };
                neutral::encode_flow_add(&mut out, v, Xid(2), &flow);
            });
            check(format!("{v}: flow-mod exact from the frame, {name}"), n);
        }

        let msg = packet_in(v, &frames[0].1);
        let n = allocations(|| {
            out.clear();
            let pi = PacketIn::parse(black_box(&msg)).expect("packet-in");
            let key = pi.key();
            let flow = FlowSpec {
                buffer_id: pi.buffer_id(),
                ..FlowSpec::new(MatchSpec::exact(&key), &output)
            };
            neutral::encode_flow_add(&mut out, pi.version(), pi.xid(), &flow);
            let po = PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &output,
            };
            neutral::encode_packet_out(&mut out, pi.version(), pi.xid(), &po);
        });
        check(format!("{v}: whole flow request"), n);

        let n = allocations(|| {
            out.clear();
            neutral::encode_flow_add(&mut out, v, Xid(3), &FlowSpec::new(sparse, &rewrite));
        });
        check(format!("{v}: flow-mod sparse match, 5 actions"), n);

        let n = allocations(|| {
            out.clear();
            neutral::encode_flow_delete(&mut out, v, Xid(3), &sparse, PortNo::ANY);
        });
        check(format!("{v}: flow delete"), n);

        let n = allocations(|| {
            out.clear();
            let po = PacketOut {
                payload: Payload::Frame(black_box(&frames[0].1)),
                in_port: PortNo(1),
                actions: &rewrite,
            };
            neutral::encode_packet_out(&mut out, v, Xid(4), &po);
        });
        check(format!("{v}: packet-out"), n);

        let n = allocations(|| {
            out.clear();
            neutral::encode_echo_reply(&mut out, v, Xid(5), black_box(b"payload"));
            neutral::encode_barrier_request(&mut out, v, Xid(6));
            neutral::encode_features_request(&mut out, v, Xid(7));
            neutral::encode_set_config(&mut out, v, Xid(8), 0xffff);
        });
        check(format!("{v}: echo reply, barrier, features, set-config"), n);
    }

    let n = allocations(|| {
        out.clear();
        neutral::encode_table_miss(&mut out, Xid(9));
    });
    check("1.3 table-miss".to_string(), n);

    // The counter works: a Vec allocation is seen.
    let n = allocations(|| {
        black_box(Vec::<u8>::with_capacity(black_box(16)));
    });
    assert_eq!(n, 100, "the counting allocator counts");

    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
