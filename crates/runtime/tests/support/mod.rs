//! An emulated OpenFlow switch over real loopback TCP (or TLS over it),
//! for integration tests: blocking socket, codec-built messages, generous
//! timeouts (the tests assert behaviour, never timing).
#![allow(dead_code)]

use baton_openflow::hello::Hello;
use baton_openflow::neutral::{Message, PortDesc};
use baton_openflow::{BufferId, Cookie, DatapathId, PortNo, Version, Xid, v10, v13};
use baton_runtime::{AnyApp, Config, Runtime, testing};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a test waits for a message before failing.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A decoded message of either version.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    V10(v10::Message),
    V13(v13::Message),
}

pub struct TestSwitch {
    pub stream: TcpStream,
    /// TLS over `stream`, for a switch connected with
    /// [`TestSwitch::connect_tls`].
    pub tls: Option<rustls::ClientConnection>,
    buf: Vec<u8>,
    pub version: Version,
    pub dpid: u64,
    next_buffer: u32,
    /// Its ports: in FEATURES_REPLY (1.0) or the port description (1.3).
    pub ports: Vec<PortDesc>,
}

impl TestSwitch {
    /// Connects without any handshake.
    pub fn raw(addr: SocketAddr) -> TestSwitch {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        TestSwitch {
            stream,
            tls: None,
            buf: Vec::new(),
            version: Version::V10,
            dpid: 0,
            next_buffer: 1,
            ports: Vec::new(),
        }
    }

    /// Connects and completes the handshake as `version`, with `dpid`.
    pub fn connect(addr: SocketAddr, version: Version, dpid: u64) -> TestSwitch {
        TestSwitch::connect_with_ports(addr, version, dpid, Vec::new())
    }

    /// Connects over TLS as `tls` says, without any OpenFlow handshake
    /// (the TLS handshake runs as the first bytes go and come).
    pub fn raw_tls(addr: SocketAddr, tls: &Arc<rustls::ClientConfig>) -> TestSwitch {
        let mut sw = TestSwitch::raw(addr);
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        sw.tls = Some(rustls::ClientConnection::new(tls.clone(), name).expect("TLS client"));
        sw
    }

    /// [`TestSwitch::connect`] over TLS.
    pub fn connect_tls(
        addr: SocketAddr,
        tls: &Arc<rustls::ClientConfig>,
        version: Version,
        dpid: u64,
    ) -> TestSwitch {
        let sw = TestSwitch::raw_tls(addr, tls);
        sw.handshake(version, dpid, Vec::new())
    }

    /// [`TestSwitch::connect`] for a switch with these ports.
    pub fn connect_with_ports(
        addr: SocketAddr,
        version: Version,
        dpid: u64,
        ports: Vec<PortDesc>,
    ) -> TestSwitch {
        TestSwitch::raw(addr).handshake(version, dpid, ports)
    }

    /// The OpenFlow handshake, as `version` with `dpid` and `ports`.
    fn handshake(self, version: Version, dpid: u64, ports: Vec<PortDesc>) -> TestSwitch {
        let mut sw = self;
        sw.version = version;
        sw.dpid = dpid;
        sw.ports = ports;
        let hello = sw.recv_raw().expect("controller HELLO");
        assert_eq!(hello[1], 0, "first message is HELLO");
        let mut out = Vec::new();
        match version {
            // cbench: a 1.0 HELLO without a bitmap.
            Version::V10 => Hello::default().encode(Version::V10, Xid(1), &mut out),
            Version::V13 => out = testing::hello(Version::V13),
        }
        sw.send(&out);
        let req = sw.recv_raw().expect("FEATURES_REQUEST");
        assert_eq!(req[0], version.wire(), "negotiated version");
        assert_eq!(req[1], 5, "FEATURES_REQUEST");
        let xid = Xid(u32::from_be_bytes([req[4], req[5], req[6], req[7]]));
        out.clear();
        let mut features = testing::features_reply(version, DatapathId(dpid));
        if let Message::V10(v10::Message::FeaturesReply(f)) = &mut features {
            f.ports = sw.ports.iter().map(testing::phy_port).collect();
        }
        features.encode(xid, &mut out);
        sw.send(&out);
        // SET_CONFIG (type 9 in both versions) ends the controller's part.
        let cfg = sw.recv_until(|m| m[1] == 9);
        assert_eq!(cfg[0], version.wire());
        sw
    }

    /// Answers a request of transaction id `xid` with `msg`.
    pub fn reply(&mut self, xid: Xid, msg: impl Into<Message>) {
        let mut out = Vec::new();
        msg.into().encode(xid, &mut out);
        self.send(&out);
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.try_send(bytes).expect("send to controller");
    }

    /// Sends `bytes` (sealed, over TLS), blocking until they are written.
    pub fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.tls {
            None => self.stream.write_all(bytes),
            Some(tls) => {
                let mut s = rustls::Stream::new(tls, &mut self.stream);
                s.write_all(bytes)?;
                s.flush()
            }
        }
    }

    /// One read of whatever arrived (decrypted, over TLS).
    pub fn read_some(&mut self, chunk: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.tls {
            None => self.stream.read(chunk),
            Some(tls) => rustls::Stream::new(tls, &mut self.stream).read(chunk),
        }
    }

    /// Next whole message, or None after `PATIENCE` (or on EOF).
    pub fn recv_raw(&mut self) -> Option<Vec<u8>> {
        self.recv_raw_within(PATIENCE)
    }

    /// Next whole message, or None after `wait` (or on EOF).
    pub fn recv_raw_within(&mut self, wait: Duration) -> Option<Vec<u8>> {
        let deadline = Instant::now() + wait;
        loop {
            if let Ok(Some(len)) = baton_openflow::frame(&self.buf) {
                return Some(self.buf.drain(..len).collect());
            }
            if Instant::now() > deadline {
                return None;
            }
            let mut chunk = [0u8; 4096];
            match self.read_some(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return None,
            }
        }
    }

    /// Skips messages until `pred` holds; panics after `PATIENCE`.
    pub fn recv_until(&mut self, pred: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Some(m) = self.recv_raw() {
                if pred(&m) {
                    return m;
                }
            } else {
                break;
            }
        }
        panic!("expected message did not arrive");
    }

    /// Next message that is not an ECHO_REQUEST or a 1.3 port description
    /// request (both answered, as a switch would), decoded.
    pub fn recv(&mut self) -> Option<Msg> {
        loop {
            let m = self.recv_raw()?;
            if m[1] == 2 {
                self.answer_echo(&m);
                continue;
            }
            let msg = self.decode(&m);
            if let Msg::V13(v13::Message::MultipartRequest(r)) = &msg {
                if r.body == v13::multipart::MultipartRequestBody::PortDesc {
                    let xid = Xid(u32::from_be_bytes([m[4], m[5], m[6], m[7]]));
                    let mut out = Vec::new();
                    v13::Message::MultipartReply(v13::MultipartReply {
                        flags: 0,
                        body: v13::multipart::MultipartReplyBody::PortDesc(
                            self.ports.iter().map(testing::port13).collect(),
                        ),
                    })
                    .encode(xid, &mut out);
                    self.send(&out);
                    continue;
                }
            }
            return Some(msg);
        }
    }

    pub fn decode(&self, m: &[u8]) -> Msg {
        match self.version {
            Version::V10 => Msg::V10(v10::decode(m).expect("controller sent valid 1.0").1),
            Version::V13 => Msg::V13(v13::decode(m).expect("controller sent valid 1.3").1),
        }
    }

    pub fn answer_echo(&mut self, req: &[u8]) {
        let mut out = Vec::new();
        let xid = Xid(u32::from_be_bytes([req[4], req[5], req[6], req[7]]));
        match self.version {
            Version::V10 => v10::encode_echo_reply(&mut out, xid, &req[8..]),
            Version::V13 => v13::encode_echo_reply(&mut out, xid, &req[8..]),
        }
        self.send(&out);
    }

    /// Sends a PACKET_IN carrying `frame`; returns its buffer id.
    pub fn packet_in(&mut self, in_port: u32, frame: &[u8], buffered: bool) -> BufferId {
        let buffer_id = if buffered {
            self.next_buffer += 1;
            BufferId(self.next_buffer)
        } else {
            BufferId::NONE
        };
        let mut out = Vec::new();
        self.encode_packet_in(&mut out, buffer_id, in_port, frame);
        self.send(&out);
        buffer_id
    }

    pub fn encode_packet_in(
        &self,
        out: &mut Vec<u8>,
        buffer_id: BufferId,
        in_port: u32,
        frame: &[u8],
    ) {
        testing::encode_packet_in(out, self.version, buffer_id, PortNo(in_port), frame);
    }

    /// True when the controller sends nothing (but ECHO_REQUESTs, which are
    /// answered) for `d`.
    pub fn silent_for(&mut self, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        while Instant::now() < deadline {
            if let Ok(Some(len)) = baton_openflow::frame(&self.buf) {
                let m: Vec<u8> = self.buf.drain(..len).collect();
                if m[1] == 2 {
                    self.answer_echo(&m);
                    continue;
                }
                return false;
            }
            let mut chunk = [0u8; 4096];
            match self.read_some(&mut chunk) {
                Ok(0) => return true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return true,
            }
        }
        true
    }

    /// True when the controller closed the connection (EOF within
    /// `PATIENCE`, answering echoes meanwhile).
    pub fn closed_by_controller(&mut self) -> bool {
        let deadline = Instant::now() + PATIENCE;
        self.stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        while Instant::now() < deadline {
            let mut chunk = [0u8; 4096];
            match self.read_some(&mut chunk) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return true,
            }
        }
        false
    }
}

/// An Ethernet/IPv4/TCP frame from `src` to `dst`.
pub fn tcp_frame(src: [u8; 6], dst: [u8; 6]) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(src, dst)
        .ipv4([10, 0, 0, src[5]], [10, 0, 0, dst[5]], 64)
        .tcp(1234, 80, 1, 1024);
    let mut v = Vec::new();
    b.write(&mut v, &[]).unwrap();
    v
}

pub fn mac(n: u8) -> [u8; 6] {
    [0, 0, 0, 0, 0, n]
}

/// A runtime on a free loopback port with `workers` workers and no
/// keepalive traffic in the silences the tests listen to.
pub fn start_quiet(workers: usize, apps: Vec<AnyApp>) -> Runtime {
    let cfg = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers,
        echo_interval: Duration::from_secs(60),
        echo_timeout: Duration::from_secs(120),
        ..Config::default()
    };
    Runtime::start(cfg, apps).expect("runtime starts")
}

/// Waits until `cond` holds; panics after `PATIENCE`, naming `what`.
pub fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A 1.0 flow in table 0 matching everything, as a switch reports it in
/// a flow statistics reply.
pub fn flow_stats10(cookie: u64, priority: u16) -> v10::stats::FlowStats {
    v10::stats::FlowStats {
        table_id: 0,
        match_: v10::Match10::ALL,
        duration_sec: 0,
        duration_nsec: 0,
        priority,
        idle_timeout: 0,
        hard_timeout: 0,
        cookie: Cookie(cookie),
        packet_count: 0,
        byte_count: 0,
        actions: Vec::new(),
    }
}
