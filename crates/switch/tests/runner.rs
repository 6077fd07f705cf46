//! The event loop over real sockets on loopback: an active controller
//! connection that reconnects with backoff when the controller drops it,
//! a passive listener, and frames through in-process ports.

use baton_openflow::Version;
use baton_openflow::hello::Hello;
use baton_openflow::switch_config::SwitchConfig;
use baton_openflow::types::{PortNo, Xid};
use baton_openflow::{frame, v13};
use baton_switch::io::shared::shared_ports;
use baton_switch::io::{Backoff, Options, Runner, Running, Target};
use baton_switch::testutil::udp_frame;
use baton_switch::{Config, PortSpec, Switch};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Reads whole messages until one of type `ty` arrives.
fn read_until(s: &mut TcpStream, ty: u8) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Ok(Some(n)) = frame(&buf) {
            let msg: Vec<u8> = buf.drain(..n).collect();
            if msg[1] == ty {
                return msg;
            }
        }
        let n = s.read(&mut chunk).expect("switch sends");
        assert!(n > 0, "switch closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn handshake(s: &mut TcpStream) -> v13::SwitchFeatures {
    read_until(s, 0);
    let mut b = Vec::new();
    Hello::baton().encode(Version::V13, Xid(1), &mut b);
    v13::Message::FeaturesRequest.encode(Xid(2), &mut b);
    s.write_all(&b).unwrap();
    match v13::decode(&read_until(s, 6)).unwrap().1 {
        v13::Message::FeaturesReply(f) => f,
        other => panic!("{other:?}"),
    }
}

fn switch() -> Switch {
    let now = Instant::now();
    let mut sw = Switch::new(Config::new(0xabc, Version::V13), now);
    sw.add_port(PortSpec::named("a", 1), now);
    sw.add_port(PortSpec::named("b", 2), now);
    sw
}

#[test]
fn an_active_connection_reconnects_after_the_controller_drops_it() {
    let ctl = TcpListener::bind("127.0.0.1:0").unwrap();
    let (backend, _handle) = shared_ports();
    let opts = Options {
        targets: vec![Target::Active(ctl.local_addr().unwrap())],
        backoff: Backoff::new(Duration::from_millis(20), Duration::from_millis(100)),
        ..Options::default()
    };
    let running = Running::spawn(Runner::new(switch(), backend, opts).unwrap());
    let (mut s, _) = ctl.accept().unwrap();
    assert_eq!(handshake(&mut s).datapath_id.0, 0xabc);
    drop(s);
    let t = Instant::now();
    let (mut s, _) = ctl.accept().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(handshake(&mut s).datapath_id.0, 0xabc);
    running.stop().unwrap();
}

#[test]
fn a_passive_listener_serves_a_controller_that_forwards_frames() {
    let (backend, ports) = shared_ports();
    let opts = Options {
        targets: vec!["ptcp:0:127.0.0.1".parse().unwrap()],
        ..Options::default()
    };
    let running = Running::spawn(Runner::new(switch(), backend, opts).unwrap());
    let addr = running.local_addrs()[0];
    let mut s = TcpStream::connect(addr).unwrap();
    handshake(&mut s);
    let fm = v13::FlowMod::from_parts(
        v13::FlowModHead::default(),
        v13::Match13 {
            fields: vec![v13::Oxm::InPort(PortNo(1))],
        },
        vec![v13::Instruction::ApplyActions(vec![v13::Action::Output {
            port: PortNo(2),
            max_len: 0,
        }])],
    );
    // A connection accepted on the listener is a service connection: as
    // controllers do, this one asks for asynchronous messages.
    let mut b = Vec::new();
    let config = SwitchConfig {
        flags: 0,
        miss_send_len: 128,
    };
    v13::Message::SetConfig(config).encode(Xid(2), &mut b);
    v13::Message::FlowMod(fm).encode(Xid(3), &mut b);
    v13::Message::BarrierRequest.encode(Xid(4), &mut b);
    s.write_all(&b).unwrap();
    read_until(&mut s, 21);
    let f = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 9);
    ports.inject(PortNo(1), &f);
    assert_eq!(ports.wait_output(PortNo(2), 1, Duration::from_secs(5)), [f]);
    // A link change reaches the controller as PORT_STATUS.
    ports.set_link(PortNo(2), false);
    let ps = read_until(&mut s, 12);
    match v13::decode(&ps).unwrap().1 {
        v13::Message::PortStatus(p) => {
            assert_eq!((p.desc.port_no, p.desc.name.as_str()), (PortNo(2), "b"))
        }
        other => panic!("{other:?}"),
    }
    running.stop().unwrap();
}
