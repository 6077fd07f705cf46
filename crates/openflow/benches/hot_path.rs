//! The per-flow-request hot path, both versions: PACKET_IN view parse +
//! [`FlowKey`] extraction (+ match conversion), FLOW_MOD and PACKET_OUT
//! encoding into a reused buffer, and the whole request (parse, extract,
//! encode the flow-mod), for the 60-byte TCP frame cbench sends and an
//! ARP request; and the answer to a request built three ways
//! (`answer/...`, issue 28 target 2): a pre-encoded FLOW_MOD whose xid,
//! buffer id and output port are patched (what `baton bench responder`
//! sends), the learning switch's default FLOW_MOD with the frame's L2
//! match, and its exact match written straight from the frame; in 1.0
//! also both through the general encoder (`answer/*-general`), which
//! `encode_flow_add` used for them before its fixed-size path.
//!
//! Run with `cargo bench -p baton-openflow --bench hot_path`; the timings
//! are kept short (1 s warm-up, 3 s measurement) so the run takes about a
//! minute and a half.

use baton_openflow::neutral::{
    self, ActionSpec, FlowSpec, MatchSpec, PacketIn, PacketOut, Payload,
};
use baton_openflow::packet::FlowKey;
use baton_openflow::v13::oxm::Oxm;
use baton_openflow::{BufferId, Cookie, PortNo, Version, Xid, v10, v13};
use criterion::{Criterion, criterion_group, criterion_main};
use etherparse::{ArpHardwareId, ArpOperation, ArpPacket, EtherType, PacketBuilder};
use std::borrow::Cow;
use std::hint::black_box;
use std::time::Duration;

const SRC: [u8; 6] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x01];
const DST: [u8; 6] = [0x80, 0x00, 0x00, 0x00, 0x00, 0x01];

/// A 60-byte Ethernet/IPv4/TCP frame, the size cbench's packet-ins carry.
fn tcp_frame() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(SRC, DST)
        .ipv4([192, 168, 0, 40], [192, 168, 1, 40], 64)
        .tcp(1234, 80, 1, 1000);
    let mut out = Vec::new();
    b.write(&mut out, &[0u8; 6]).expect("frame");
    out
}

/// A 42-byte ARP request.
fn arp_frame() -> Vec<u8> {
    let arp = ArpPacket::new(
        ArpHardwareId::ETHERNET,
        EtherType::IPV4,
        ArpOperation::REQUEST,
        &SRC,
        &[10, 0, 0, 1],
        &[0; 6],
        &[10, 0, 0, 2],
    )
    .expect("arp");
    let b = PacketBuilder::ethernet2(SRC, [0xff; 6]).arp(arp);
    let mut out = Vec::new();
    b.write(&mut out).expect("frame");
    out
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

fn name(v: Version) -> &'static str {
    match v {
        Version::V10 => "v10",
        Version::V13 => "v13",
    }
}

fn bench(c: &mut Criterion) {
    let tcp = tcp_frame();
    let arp = arp_frame();
    let actions = [ActionSpec::output(PortNo(2))];
    let mut out: Vec<u8> = Vec::with_capacity(4096);

    let mut g = c.benchmark_group("extract");
    g.bench_function("tcp", |b| {
        b.iter(|| FlowKey::extract(PortNo(1), black_box(&tcp)))
    });
    g.bench_function("arp", |b| {
        b.iter(|| FlowKey::extract(PortNo(1), black_box(&arp)))
    });
    g.finish();

    for v in [Version::V10, Version::V13] {
        let pi_tcp = packet_in(v, &tcp);
        let pi_arp = packet_in(v, &arp);
        let key = FlowKey::extract(PortNo(1), &tcp);
        let mut g = c.benchmark_group(name(v));

        // (a) PACKET_IN view + key + the version's exact match.
        for (label, msg) in [
            ("packet_in_key_match/tcp", &pi_tcp),
            ("packet_in_key_match/arp", &pi_arp),
        ] {
            g.bench_function(label, |b| match v {
                Version::V10 => b.iter(|| {
                    let pi = PacketIn::parse(black_box(msg)).expect("packet-in");
                    black_box(v10::Match10::exact(&pi.key()))
                }),
                Version::V13 => b.iter(|| {
                    let pi = PacketIn::parse(black_box(msg)).expect("packet-in");
                    out.clear();
                    v13::oxm::emit_exact_match(&mut out, &pi.key());
                    black_box(out.len())
                }),
            });
        }

        // (b) FLOW_MOD: exact match from the key, one output action.
        g.bench_function("flow_mod_encode", |b| {
            b.iter(|| {
                out.clear();
                let flow = FlowSpec {
                    buffer_id: Some(BufferId(0x100)),
                    ..FlowSpec::new(MatchSpec::exact(black_box(&key)), &actions)
                };
                neutral::encode_flow_add(&mut out, v, Xid(2), &flow);
                black_box(out.len())
            })
        });

        // (c) PACKET_OUT: one output action, unbuffered 60-byte frame.
        g.bench_function("packet_out_encode", |b| {
            b.iter(|| {
                out.clear();
                let po = PacketOut {
                    payload: Payload::Frame(black_box(&tcp)),
                    in_port: PortNo(1),
                    actions: &actions,
                };
                neutral::encode_packet_out(&mut out, v, Xid(3), &po);
                black_box(out.len())
            })
        });

        // (e) The answer to a request, from the frame: a patched template,
        // the L2 match, the exact match (no key: `MatchSpec::ExactFrame`).
        let template = Template::new(v, &actions);
        g.bench_function("answer/template", |b| {
            b.iter(|| {
                out.clear();
                template.append(&mut out, Xid(7), BufferId(0x100), black_box(PortNo(2)));
                black_box(out.len())
            })
        });
        let mut answers = vec![("answer/l2", true, false), ("answer/exact", false, false)];
        if v == Version::V10 {
            answers.extend([
                ("answer/l2-general", true, true),
                ("answer/exact-general", false, true),
            ]);
        }
        for (label, l2, general) in answers {
            g.bench_function(label, |b| {
                b.iter(|| {
                    out.clear();
                    let frame = black_box(&tcp[..]);
                    let exact = || MatchSpec::exact_frame(PortNo(1), frame);
                    let match_ = match l2 {
                        true => MatchSpec::l2_frame(PortNo(1), frame).unwrap_or_else(exact),
                        false => exact(),
                    };
                    let flow = FlowSpec {
                        buffer_id: Some(BufferId(0x100)),
                        idle_timeout: 10,
                        ..FlowSpec::new(match_, &actions)
                    };
                    match general {
                        true => encode_flow_add10_general(&mut out, Xid(7), &flow),
                        false => neutral::encode_flow_add(&mut out, v, Xid(7), &flow),
                    }
                    black_box(out.len())
                })
            });
        }

        // (d) The whole flow request: parse, extract, encode the flow-mod.
        g.bench_function("flow_request", |b| {
            b.iter(|| {
                out.clear();
                let pi = PacketIn::parse(black_box(&pi_tcp)).expect("packet-in");
                let key = pi.key();
                let flow = FlowSpec {
                    buffer_id: pi.buffer_id(),
                    ..FlowSpec::new(MatchSpec::exact(&key), &actions)
                };
                neutral::encode_flow_add(&mut out, pi.version(), pi.xid(), &flow);
                black_box(out.len())
            })
        });
        g.finish();
    }
}

/// The 1.0 FLOW_MOD of `neutral::encode_flow_add` through the general
/// encoder, as it was written before the learning switch's answer (no
/// action or one output) got its fixed-size path: `answer/*-general`.
fn encode_flow_add10_general(out: &mut Vec<u8>, xid: Xid, flow: &FlowSpec<'_>) {
    let head = v10::FlowModHead {
        match_: flow.match_.to_match10(),
        cookie: flow.cookie,
        command: v10::FlowModCommand::Add,
        idle_timeout: flow.idle_timeout,
        hard_timeout: flow.hard_timeout,
        priority: flow.priority,
        buffer_id: flow.buffer_id.unwrap_or(BufferId::NONE),
        out_port: PortNo::ANY,
        flags: flow.flags,
    };
    v10::encode_flow_mod_mapped(out, xid, &head, flow.actions, |a| Cow::Owned(a.to_v10()));
}

/// A FLOW_MOD encoded once, with the offsets of its xid, buffer id and
/// output port, found by encoding it again with other values (as
/// `baton bench responder`'s template is).
struct Template {
    bytes: Vec<u8>,
    xid_at: usize,
    buffer_at: usize,
    port_at: usize,
    port_len: usize,
}

impl Template {
    fn new(v: Version, actions: &[ActionSpec; 1]) -> Template {
        let frame = tcp_frame();
        let encode = |xid: u32, buffer: u32, port: u32| {
            let mut out = Vec::new();
            let actions = [ActionSpec::output(PortNo(port))];
            let flow = FlowSpec {
                buffer_id: Some(BufferId(buffer)),
                idle_timeout: 10,
                ..FlowSpec::new(MatchSpec::exact_frame(PortNo(1), &frame), &actions)
            };
            neutral::encode_flow_add(&mut out, v, Xid(xid), &flow);
            out
        };
        let ActionSpec::Output { port, .. } = actions[0] else {
            unreachable!("an output action")
        };
        let base = encode(0, 0, port.0);
        let at = |other: Vec<u8>| base.iter().zip(&other).position(|(a, b)| a != b).unwrap();
        let port_len = if v == Version::V10 { 2 } else { 4 };
        Template {
            xid_at: at(encode(u32::MAX, 0, port.0)),
            buffer_at: at(encode(0, u32::MAX, port.0)),
            port_at: at(encode(0, 0, 0x8000_0000 >> (32 - 8 * port_len))),
            port_len,
            bytes: base,
        }
    }

    #[inline]
    fn append(&self, out: &mut Vec<u8>, xid: Xid, buffer: BufferId, port: PortNo) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        out[at + self.xid_at..at + self.xid_at + 4].copy_from_slice(&xid.0.to_be_bytes());
        out[at + self.buffer_at..at + self.buffer_at + 4].copy_from_slice(&buffer.0.to_be_bytes());
        let p = &port.0.to_be_bytes()[4 - self.port_len..];
        out[at + self.port_at..at + self.port_at + self.port_len].copy_from_slice(p);
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
