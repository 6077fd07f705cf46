//! Software switch figures (BENCHMARKS.md, "Software switch"):
//! - `lookup`: classifier time per packet key (cache off) against the
//!   number of installed flows, 10 to 100,000, both versions;
//! - `forward`: the whole per-packet path through `Switch::receive`
//!   (parse, key, exact-match cache, counters, output) with 1,024 active
//!   flows' packets, against the number of installed flows;
//! - `actions`: the same path for one 1.3 flow whose actions push an
//!   MPLS entry and set its label, pop it, or push and pop a PBB
//!   header, beside one that only outputs (the actions' cost per packet
//!   is the difference);
//! - `flow_mod`: FLOW_MOD messages accepted per second through the
//!   protocol machine (decode, compile, insert);
//! - memory per flow, printed before the timings (live heap bytes after
//!   installing 100,000 flows, divided by 100,000), from a counting
//!   allocator.
//!
//! Flows use four masks (IPv4 destination /32, /24, UDP destination
//! port, in_port + Ethernet destination), as a controller installing
//! routes, ACLs and MAC entries would.
//!
//! `cargo bench -p baton-switch --bench switch` (about 4 minutes).

use baton_openflow::Version;
use baton_openflow::types::{Cookie, MacAddr, PortNo, Xid};
use baton_openflow::v13::oxm::{Match13, Oxm};
use baton_openflow::{v10, v13};
use baton_switch::key::{FlowMatch, Key};
use baton_switch::switch::{Command, FlowMod};
use baton_switch::table::{NewFlow, WireActions, WireMatch};
use baton_switch::testutil::udp_frame_sized;
use baton_switch::{Config, Connection, PortSpec, Switch, match10, match13};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

/// Counts live heap bytes.
struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: `p` came from `alloc` with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

const COUNTS: [usize; 5] = [10, 100, 1_000, 10_000, 100_000];

fn dst(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, (i >> 16) as u8, (i >> 8) as u8, i as u8)
}

/// A /24 of its own for flow `i` (11.0.0.0 and up).
fn net24(i: usize) -> Ipv4Addr {
    Ipv4Addr::from(((11 + (i >> 16) as u32) << 24) | (((i & 0xffff) as u32) << 8))
}

/// Flow `i`'s match, as a 1.0 match and as OXM fields.
fn match_of(i: usize) -> (v10::Match10, Vec<Oxm>) {
    use v10::ofmatch::*;
    let mut m = v10::Match10::ALL;
    let ip = vec![Oxm::EthType(0x0800)];
    match i % 4 {
        0 => {
            m.wildcards &= !OFPFW_DL_TYPE;
            m.dl_type = 0x0800;
            m.set_nw_dst(dst(i), 32);
            let mut f = ip;
            f.push(Oxm::Ipv4Dst {
                value: dst(i),
                mask: None,
            });
            (m, f)
        }
        1 => {
            m.wildcards &= !OFPFW_DL_TYPE;
            m.dl_type = 0x0800;
            let net = net24(i);
            m.set_nw_dst(net, 24);
            let mut f = ip;
            f.push(Oxm::Ipv4Dst {
                value: net,
                mask: Some(Ipv4Addr::new(255, 255, 255, 0)),
            });
            (m, f)
        }
        2 => {
            m.wildcards &= !(OFPFW_DL_TYPE | OFPFW_NW_PROTO | OFPFW_TP_DST);
            m.dl_type = 0x0800;
            m.nw_proto = 17;
            m.tp_dst = (i / 4) as u16;
            let mut f = ip;
            f.extend([Oxm::IpProto(17), Oxm::UdpDst((i / 4) as u16)]);
            (m, f)
        }
        _ => {
            let mac = MacAddr([
                2,
                0,
                (i >> 24) as u8,
                (i >> 16) as u8,
                (i >> 8) as u8,
                i as u8,
            ]);
            m.wildcards &= !(OFPFW_IN_PORT | OFPFW_DL_DST);
            m.in_port = PortNo(1);
            m.dl_dst = mac;
            (
                m,
                vec![
                    Oxm::InPort(PortNo(1)),
                    Oxm::EthDst {
                        value: mac,
                        mask: None,
                    },
                ],
            )
        }
    }
}

fn new_flow(version: Version, i: usize) -> NewFlow {
    let (m10, oxms) = match_of(i);
    let priority = 40 - (i % 4) as u16 * 10;
    let out = PortNo(2);
    let (match_, wire_match, program, wire_actions) = match version {
        Version::V10 => {
            let n = match10::normalize(&m10);
            let acts = vec![v10::Action::Output {
                port: out,
                max_len: 0,
            }];
            (
                match10::compile(&n),
                WireMatch::V10(n),
                acts_program(out),
                WireActions::V10(acts),
            )
        }
        Version::V13 => {
            let m = Match13 { fields: oxms };
            let inst = vec![v13::Instruction::ApplyActions(vec![v13::Action::Output {
                port: out,
                max_len: 0,
            }])];
            let fm: FlowMatch = match13::compile(&m).expect("valid");
            (
                fm,
                WireMatch::V13(m),
                acts_program(out),
                WireActions::V13(inst),
            )
        }
    };
    NewFlow {
        priority,
        match_,
        wire_match,
        cookie: Cookie(i as u64),
        idle_timeout: 0,
        hard_timeout: 0,
        flags: 0,
        program,
        wire_actions,
    }
}

fn acts_program(out: PortNo) -> baton_switch::action::Program {
    baton_switch::action::Program {
        apply: vec![baton_switch::action::Act::Output {
            port: out,
            max_len: 0,
        }],
        ..Default::default()
    }
}

fn switch_with(version: Version, n: usize) -> Switch {
    let now = Instant::now();
    let mut c = Config::new(1, version);
    c.n_tables = 1;
    let mut sw = Switch::new(c, now);
    sw.add_port(PortSpec::named("p1", 1), now);
    sw.add_port(PortSpec::named("p2", 2), now);
    let mut tx = |_: PortNo, _: &[u8]| {};
    for i in 0..n {
        let fm = FlowMod {
            command: Command::Add,
            table_id: 0,
            flow: new_flow(version, i),
            cookie_mask: 0,
            buffer_id: baton_openflow::types::BufferId::NONE,
            out_port: None,
            out_group: None,
        };
        sw.flow_mod(now, fm, &mut tx).expect("add");
    }
    while sw.poll_event().is_some() {}
    sw
}

/// 1,024 frames, each hitting one of the installed flows.
fn frames(n: usize) -> Vec<Vec<u8>> {
    (0..1024)
        .map(|k| {
            let i = (k * 7919) % n;
            let (ip, port) = match i % 4 {
                1 => (Ipv4Addr::from(u32::from(net24(i)) | 5), 9),
                2 => (Ipv4Addr::new(12, 0, 0, 1), (i / 4) as u16),
                _ => (dst(i), 9),
            };
            let mac = [
                2,
                0,
                (i >> 24) as u8,
                (i >> 16) as u8,
                (i >> 8) as u8,
                i as u8,
            ];
            udp_frame_sized(
                [2, 0, 0, 0, 0, 1],
                mac,
                [10, 0, 0, 1],
                ip.octets(),
                port,
                18,
            )
        })
        .collect()
}

fn memory_per_flow() {
    for version in [Version::V10, Version::V13] {
        let n = 100_000;
        let before = LIVE.load(Ordering::Relaxed);
        let sw = switch_with(version, n);
        let after = LIVE.load(Ordering::Relaxed);
        let empty_before = LIVE.load(Ordering::Relaxed);
        let empty = switch_with(version, 0);
        let empty_after = LIVE.load(Ordering::Relaxed);
        let per = ((after - before) - (empty_after - empty_before)) as f64 / n as f64;
        println!("memory per flow ({version}, {n} flows): {per:.0} bytes");
        drop((sw, empty));
    }
}

fn lookup(c: &mut Criterion) {
    memory_per_flow();
    let mut g = c.benchmark_group("lookup");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(1024));
    for version in [Version::V10, Version::V13] {
        for n in COUNTS {
            let mut sw = switch_with(version, n);
            let keys: Vec<Key> = frames(n)
                .iter()
                .map(|f| baton_switch::key::packet_key(version, PortNo(1), f, 0))
                .collect();
            let t = sw.table_mut(0).unwrap();
            t.set_cache(false);
            g.bench_with_input(
                BenchmarkId::new(format!("{version:?}"), n),
                &keys,
                |b, keys| {
                    b.iter(|| {
                        for k in keys {
                            black_box(t.lookup(black_box(k)));
                        }
                    })
                },
            );
        }
    }
    g.finish();
}

fn forward(c: &mut Criterion) {
    let mut g = c.benchmark_group("forward");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(1024));
    for version in [Version::V10, Version::V13] {
        for n in COUNTS {
            let mut sw = switch_with(version, n);
            let fs = frames(n);
            let now = Instant::now();
            let mut sent = 0u64;
            g.bench_function(BenchmarkId::new(format!("{version:?}"), n), |b| {
                b.iter(|| {
                    for f in &fs {
                        sw.receive(now, PortNo(1), f, &mut |_: PortNo, x: &[u8]| {
                            sent += x.len() as u64
                        });
                    }
                })
            });
            black_box(sent);
        }
    }
    g.finish();
}

/// A one-table 1.3 switch holding one flow, added through the protocol
/// machine (so its actions are compiled and checked as a controller's
/// are).
fn switch_with_actions(fields: Vec<Oxm>, actions: Vec<v13::Action>) -> Switch {
    let now = Instant::now();
    let mut sw = switch_with(Version::V13, 0);
    let mut conn = Connection::new(&mut sw, now);
    let mut b = Vec::new();
    baton_openflow::hello::Hello::baton().encode(Version::V13, Xid(0), &mut b);
    v13::Message::FlowMod(v13::FlowMod::from_parts(
        v13::FlowModHead::default(),
        Match13 { fields },
        vec![v13::Instruction::ApplyActions(actions)],
    ))
    .encode(Xid(1), &mut b);
    let mut tx = |_: PortNo, _: &[u8]| {};
    conn.handle_input(&mut sw, now, &b, &mut tx);
    assert_eq!(sw.table(0).unwrap().len(), 1, "flow refused");
    while sw.poll_event().is_some() {}
    sw
}

fn actions(c: &mut Criterion) {
    use v13::Action as A;
    const MPLS: u16 = 0x8847;
    const PBB: u16 = 0x88e7;
    let out = A::Output {
        port: PortNo(2),
        max_len: 0,
    };
    let ipv4 = frames(1024);
    let mpls: Vec<Vec<u8>> = ipv4
        .iter()
        .map(|f| {
            let mut f = f.clone();
            baton_switch::rewrite::push_mpls(&mut f, MPLS);
            f
        })
        .collect();
    // (name, match, actions, frames, bytes each output frame gains)
    let cases = [
        (
            "output",
            vec![Oxm::EthType(0x0800)],
            vec![out.clone()],
            &ipv4,
            0,
        ),
        (
            "push_mpls_set_label",
            vec![Oxm::EthType(0x0800)],
            vec![
                A::PushMpls(MPLS),
                A::SetField(Oxm::MplsLabel(100)),
                out.clone(),
            ],
            &ipv4,
            4,
        ),
        (
            "pop_mpls",
            vec![Oxm::EthType(MPLS)],
            vec![A::PopMpls(0x0800), out.clone()],
            &mpls,
            -4,
        ),
        (
            "push_pop_pbb",
            vec![Oxm::EthType(0x0800)],
            vec![A::PushPbb(PBB), A::PopPbb, out.clone()],
            &ipv4,
            0,
        ),
    ];
    let mut g = c.benchmark_group("actions");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(1024));
    for (name, fields, acts, fs, grow) in cases {
        let mut sw = switch_with_actions(fields, acts);
        let now = Instant::now();
        // Every frame is forwarded once, changed as the actions say.
        for f in fs {
            let mut n = 0;
            sw.receive(now, PortNo(1), f, &mut |p: PortNo, x: &[u8]| {
                assert_eq!((p, x.len() as isize), (PortNo(2), f.len() as isize + grow));
                n += 1;
            });
            assert_eq!(n, 1, "{name}");
        }
        let mut sent = 0u64;
        g.bench_function(BenchmarkId::new("V13", name), |b| {
            b.iter(|| {
                for f in fs {
                    sw.receive(now, PortNo(1), f, &mut |_: PortNo, x: &[u8]| {
                        sent += x.len() as u64
                    });
                }
            })
        });
        black_box(sent);
    }
    g.finish();
}

/// `n` FLOW_MOD ADDs (after a HELLO) as one byte stream.
fn flow_mods(version: Version, n: usize) -> Vec<u8> {
    let mut b = Vec::new();
    baton_openflow::hello::Hello::baton().encode(version, Xid(0), &mut b);
    for i in 0..n {
        let (m10, oxms) = match_of(i);
        match version {
            Version::V10 => v10::Message::FlowMod(v10::FlowMod {
                match_: m10,
                cookie: Cookie(0),
                command: v10::FlowModCommand::Add,
                idle_timeout: 0,
                hard_timeout: 0,
                priority: 40 - (i % 4) as u16 * 10,
                buffer_id: baton_openflow::types::BufferId::NONE,
                out_port: PortNo::ANY,
                flags: 0,
                actions: vec![v10::Action::Output {
                    port: PortNo(2),
                    max_len: 0,
                }],
            })
            .encode(Xid(i as u32), &mut b),
            Version::V13 => v13::Message::FlowMod(v13::FlowMod::from_parts(
                v13::FlowModHead {
                    priority: 40 - (i % 4) as u16 * 10,
                    ..Default::default()
                },
                Match13 { fields: oxms },
                vec![v13::Instruction::ApplyActions(vec![v13::Action::Output {
                    port: PortNo(2),
                    max_len: 0,
                }])],
            ))
            .encode(Xid(i as u32), &mut b),
        }
    }
    b
}

fn flow_mod(c: &mut Criterion) {
    let mut g = c.benchmark_group("flow_mod");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(10);
    let n = 10_000;
    g.throughput(Throughput::Elements(n as u64));
    for version in [Version::V10, Version::V13] {
        let bytes = flow_mods(version, n);
        g.bench_function(BenchmarkId::new(format!("{version:?}"), n), |b| {
            b.iter_batched(
                || {
                    let now = Instant::now();
                    let mut sw = switch_with(version, 0);
                    let conn = Connection::new(&mut sw, now);
                    (sw, conn, now)
                },
                |(mut sw, mut conn, now)| {
                    let mut tx = |_: PortNo, _: &[u8]| {};
                    conn.handle_input(&mut sw, now, &bytes, &mut tx);
                    assert_eq!(sw.table(0).unwrap().len(), n);
                    (sw, conn)
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, lookup, forward, actions, flow_mod);
criterion_main!(benches);
