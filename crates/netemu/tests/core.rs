//! The I/O-free core on a clock of the test's own, driven by a controller
//! written here (a hub in OpenFlow 1.0: every PACKET_IN is flooded back
//! out): probes cross links after their delay, hosts ARP and talk, a cut
//! is announced and cuts the pair off, a kill closes the switch.

use baton_netemu::{Config, Graph, HostId, Network, Output, Pairs, Schedule, SwitchId};
use baton_openflow::hello::Hello;
use baton_openflow::types::{BufferId, PortNo, Xid};
use baton_openflow::v10::{Action, Message, PacketOut};
use baton_openflow::{Version, frame, v10};
use std::time::{Duration, Instant};

const MS: Duration = Duration::from_millis(1);

/// netlab's linear:2: s1 has its host on port 1 and s2 on port 3; s2 its
/// host on port 1 and s1 on port 2. Links take 1 ms.
fn config(events: &str) -> Config {
    let mut cfg = Config::new(
        "127.0.0.1:9".parse().unwrap(),
        Graph::named("linear:2").unwrap(),
    );
    cfg.version = Version::V10;
    cfg.link_delay = MS;
    cfg.warmup = 100 * MS;
    cfg.duration = 600 * MS;
    cfg.drain = 50 * MS;
    cfg.traffic.pairs = Pairs::Explicit(vec![(HostId(0), HostId(1))]);
    cfg.traffic.send_interval = 10 * MS;
    cfg.events = Schedule::parse(events).unwrap();
    cfg.trace_paths = true;
    cfg
}

fn messages(mut bytes: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    while let Ok(Some(n)) = frame(bytes) {
        out.push(
            v10::decode(&bytes[..n])
                .expect("the switch sends valid 1.0")
                .1,
        );
        bytes = &bytes[n..];
    }
    assert!(bytes.is_empty(), "a partial message is left");
    out
}

fn encode(m: Message) -> Vec<u8> {
    let mut b = Vec::new();
    m.encode(Xid(7), &mut b);
    b
}

/// Connects both switches and finishes their handshakes.
fn connected(cfg: &Config, t0: Instant) -> Network {
    let mut net = Network::new(cfg, t0).unwrap();
    let mut hello = Vec::new();
    Hello::baton().encode(Version::V10, Xid(1), &mut hello);
    for s in [SwitchId(0), SwitchId(1)] {
        net.connect(s, t0);
        assert!(matches!(messages(net.output(s))[..], [Message::Hello(_)]));
        let n = net.output(s).len();
        net.consume_output(s, n);
        net.handle_input(s, t0, &hello);
    }
    let mut ready = Vec::new();
    while let Some(o) = net.poll_output() {
        ready.push(o);
    }
    assert_eq!(
        ready,
        [Output::Ready(SwitchId(0)), Output::Ready(SwitchId(1))]
    );
    assert_eq!(net.traffic_start(), Some(t0 + 100 * MS));
    net
}

/// What the hub saw.
#[derive(Default)]
struct Seen {
    packet_ins: usize,
    /// (switch, port, link down).
    port_status: Vec<(SwitchId, u32, bool)>,
}

/// Answers every switch's messages as a hub until nobody has output.
fn hub(net: &mut Network, t: Instant, seen: &mut Seen) {
    let mut dirty = Vec::new();
    loop {
        net.take_dirty(&mut dirty);
        if dirty.is_empty() {
            return;
        }
        for &s in &dirty {
            let out = net.output(s).to_vec();
            net.consume_output(s, out.len());
            for m in messages(&out) {
                match m {
                    Message::PacketIn(p) => {
                        seen.packet_ins += 1;
                        let po = PacketOut {
                            buffer_id: p.buffer_id,
                            in_port: p.in_port,
                            actions: vec![Action::Output {
                                port: PortNo::FLOOD,
                                max_len: 0,
                            }],
                            data: if p.buffer_id == BufferId::NONE {
                                p.data
                            } else {
                                Vec::new()
                            },
                        };
                        net.handle_input(s, t, &encode(Message::PacketOut(po)));
                    }
                    Message::PortStatus(ps) => seen.port_status.push((
                        s,
                        ps.desc.port_no.0,
                        ps.desc.state & v10::port::state::LINK_DOWN != 0,
                    )),
                    Message::EchoRequest(d) => {
                        net.handle_input(s, t, &encode(Message::EchoReply(d)));
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Runs the network with the hub, a millisecond at a time, to the end.
fn run_with_hub(net: &mut Network, t0: Instant) -> (Seen, Vec<Output>) {
    let mut seen = Seen::default();
    let mut outputs = Vec::new();
    let mut t = t0;
    while !net.finished(t) {
        net.poll(t);
        hub(net, t, &mut seen);
        while let Some(o) = net.poll_output() {
            outputs.push(o);
        }
        t += MS;
        assert!(t < t0 + Duration::from_secs(5), "the run ends by itself");
    }
    (seen, outputs)
}

#[test]
fn a_packet_out_arrives_as_a_packet_in_at_the_peer_after_the_link_delay() {
    let t0 = Instant::now();
    let mut net = connected(&config(""), t0);
    let mut probe = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0xba, 0, 0, 0, 1, 0x88, 0xcc,
    ];
    probe.extend_from_slice(&[0xab; 46]);
    let po = PacketOut {
        buffer_id: BufferId::NONE,
        in_port: PortNo::CONTROLLER,
        actions: vec![Action::Output {
            port: PortNo(3),
            max_len: 0,
        }],
        data: probe.clone(),
    };
    net.handle_input(SwitchId(0), t0, &encode(Message::PacketOut(po)));
    net.poll(t0 + MS / 2);
    assert!(
        net.output(SwitchId(1)).is_empty(),
        "not there before the delay"
    );
    net.poll(t0 + MS);
    let got = messages(net.output(SwitchId(1)));
    let [Message::PacketIn(p)] = &got[..] else {
        panic!("expected one PACKET_IN, got {got:?}");
    };
    assert_eq!(p.in_port, PortNo(2), "s2's port towards s1");
    assert_eq!(p.total_len as usize, probe.len());
    assert!(probe.starts_with(&p.data), "the probe, maybe truncated");
    // Port 2 of s1 is not in the topology: a frame sent there is lost.
    assert!(net.switch(SwitchId(0)).dp.ports.get(PortNo(2)).is_none());
}

#[test]
fn hosts_talk_over_a_hub_until_a_cut_separates_them() {
    let t0 = Instant::now();
    let cfg = config("at 300ms cut s1-s2");
    let mut net = connected(&cfg, t0);
    let (seen, outputs) = run_with_hub(&mut net, t0);
    assert!(outputs.is_empty(), "nothing to close: {outputs:?}");
    let r = net.report();
    assert_eq!((r.pairs, r.pairs_set_up), (1, 1));
    let pair = &r.pair_reports[0];
    assert!(pair.received > 10, "{pair:?}");
    assert!(pair.sent > pair.received, "packets after the cut are lost");
    assert_eq!(r.packets_lost, pair.sent - pair.received);
    assert_eq!(r.duplicates, 0);
    assert_eq!(
        pair.paths,
        [(vec![SwitchId(0), SwitchId(1)], pair.received)]
    );
    // Both ends of the link said it went down.
    let mut status = seen.port_status.clone();
    status.sort();
    assert_eq!(status, [(SwitchId(0), 3, true), (SwitchId(1), 2, true)]);
    let e = &r.events[0];
    assert_eq!(e.applied, Some(300 * MS));
    assert_eq!(
        (e.reroute_us.len(), e.unrecovered, e.unreachable),
        (0, 1, 0)
    );
    // The ARP request and reply, then each data packet, went through the
    // controller at both switches.
    assert!(seen.packet_ins >= 2 * (2 + pair.received as usize));
    assert!(r.frames_dropped > 0, "frames onto the cut link are lost");
}

#[test]
fn a_killed_switch_is_closed_and_its_peers_ports_go_down() {
    let t0 = Instant::now();
    let cfg = config("at 200ms kill s2");
    let mut net = connected(&cfg, t0);
    let (seen, outputs) = run_with_hub(&mut net, t0);
    assert_eq!(outputs, [Output::Close(SwitchId(1))]);
    assert_eq!(seen.port_status, [(SwitchId(0), 3, true)]);
    let r = net.report();
    let e = &r.events[0];
    assert_eq!(e.applied, Some(200 * MS));
    assert_eq!(
        (e.unrecovered, e.unreachable),
        (0, 1),
        "h2's switch is dead"
    );
    // Disconnecting a killed switch again is harmless.
    net.disconnected(SwitchId(1));
    assert!(net.output(SwitchId(1)).is_empty());
}

#[test]
fn bad_configuration_is_refused_with_reasons() {
    let t0 = Instant::now();
    let mut cfg = config("at 1s kill s9");
    let e = Network::new(&cfg, t0).unwrap_err().to_string();
    assert!(e.contains("no switch is called `s9`"), "{e}");
    cfg.events = Schedule::default();
    cfg.traffic.send_interval = Duration::ZERO;
    let e = Network::new(&cfg, t0).unwrap_err().to_string();
    assert!(e.contains("send interval must not be zero"), "{e}");
    cfg.traffic.send_interval = MS;
    cfg.traffic.pairs = Pairs::Explicit(vec![(HostId(0), HostId(5))]);
    let e = Network::new(&cfg, t0).unwrap_err().to_string();
    assert!(e.contains("two different hosts of 2"), "{e}");
}
