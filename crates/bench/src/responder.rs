//! `baton bench responder`: a controller that does nothing but answer, the
//! ceiling any controller can reach on a machine.
//!
//! It completes the handshake (HELLO offering 1.0 and 1.3, FEATURES_REQUEST
//! in the negotiated version), answers ECHO_REQUEST, and answers every
//! PACKET_IN with a FLOW_MOD built once per connection by the codec, of
//! which only the xid, buffer_id and output port are patched per answer.
//! The offsets of those fields are not hard-coded: they are found by
//! encoding the template again with different values ([`Template::new`]).
//!
//! With `--learning` it is the ceiling of a *learning switch* instead: each
//! connection keeps the learning switch's MAC table
//! ([`baton_apps::mac_table::MacTable`]), every PACKET_IN's source is
//! learnt and its destination looked up, and the answer goes to the port
//! found (FLOOD if none). As the learning switch does, it prefetches the
//! table slots of the PACKET_IN [`PREFETCH_AHEAD`] ahead of the one it
//! answers. What it leaves out of a controller is
//! everything but the table: scheduling, applications, the exact match.
//! With cbench's 100,000 hosts per switch the tables outgrow the caches,
//! so the gap between the two responders is what the memory costs on the
//! machine at hand. With `--l2-match` or `--exact-match` as well, the
//! answer is the one the learning switch sends with its `match` setting
//! (`"l2"`, its default, or `"exact"`): a FLOW_MOD whose match is built
//! per request from the frame by the codec, so the rest of the gap to a
//! learning switch is the controller around it ([`ResponderMode`]).
//!
//! I/O is the best technique we know: one epoll loop per thread (mio), an
//! acceptor that hands connections round-robin to the threads, large
//! non-blocking reads into a per-connection buffer with every whole message
//! handled in place, all answers of a read appended to one buffer and
//! written with one `write` per connection per round.

use crate::frames::gateway_port;
use baton_apps::LearnedMatch;
use baton_apps::mac_table::{MacTable, PREFETCH_AHEAD};
use baton_openflow::header::{Header, MsgType10, MsgType13};
use baton_openflow::hello::{self, Hello};
use baton_openflow::neutral::{ActionSpec, FlowSpec, MatchSpec, encode_flow_add};
use baton_openflow::types::{BufferId, Cookie, MacAddr, PortNo, Xid};
use baton_openflow::version::Version;
use baton_openflow::{v10, v13};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Read buffer per connection.
const RBUF_LEN: usize = 256 * 1024;

/// Stop reading a connection whose peer leaves this much unread.
const MAX_PENDING: usize = 4 << 20;

const WAKER: Token = Token(usize::MAX);

/// What the responder does with each PACKET_IN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum ResponderMode {
    /// Answer with the template: the ceiling of any controller.
    #[default]
    Template,
    /// Learn the source and look the destination up in the learning
    /// switch's MAC table, then answer with the template to the port
    /// found: the ceiling of a learning switch.
    Learning,
    /// As `Learning`, answering with the learning switch's own FLOW_MOD
    /// by default: the L2 match of the frame (input port, addresses,
    /// VLAN), built per request by the codec.
    LearningL2,
    /// As `Learning`, answering with the learning switch's FLOW_MOD with
    /// `match = "exact"`: the exact match of the frame, built per request
    /// by the codec.
    LearningExact,
}

impl ResponderMode {
    /// What the answer's match is built as, for the modes that build one.
    fn learned_match(self) -> Option<LearnedMatch> {
        match self {
            ResponderMode::Template | ResponderMode::Learning => None,
            ResponderMode::LearningL2 => Some(LearnedMatch::L2),
            ResponderMode::LearningExact => Some(LearnedMatch::Exact),
        }
    }
}

/// A pre-encoded FLOW_MOD and where its xid, buffer_id and output port
/// are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    bytes: Vec<u8>,
    xid_at: usize,
    buffer_id_at: usize,
    port_at: usize,
    /// 2 in 1.0, 4 in 1.3.
    port_len: usize,
}

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0)
}

/// The FLOW_MOD the responder answers with in `version`: match on one
/// destination MAC, output to `port`.
fn encode_answer(version: Version, xid: Xid, buffer_id: BufferId, port: PortNo) -> Vec<u8> {
    let mut out = Vec::new();
    let mac = MacAddr([0, 0, 1, 0xff, 0xff, 0xff]);
    match version {
        Version::V10 => {
            let match_ = v10::Match10 {
                wildcards: v10::ofmatch::OFPFW_ALL & !v10::ofmatch::OFPFW_DL_DST,
                dl_dst: mac,
                ..v10::Match10::ALL
            };
            let head = v10::FlowModHead {
                match_,
                cookie: Cookie(0),
                command: v10::FlowModCommand::Add,
                idle_timeout: 10,
                hard_timeout: 0,
                priority: 0x8000,
                buffer_id,
                out_port: PortNo::ANY,
                flags: 0,
            };
            let actions = [v10::Action::Output { port, max_len: 0 }];
            v10::encode_flow_mod(&mut out, xid, &head, &actions);
        }
        Version::V13 => {
            let head = v13::FlowModHead {
                cookie: Cookie(0),
                cookie_mask: 0,
                table_id: 0,
                command: v13::FlowModCommand::Add,
                idle_timeout: 10,
                hard_timeout: 0,
                priority: 0x8000,
                buffer_id,
                out_port: PortNo::ANY,
                out_group: 0xffff_ffff,
                flags: 0,
            };
            let oxms = [v13::Oxm::EthDst {
                value: mac,
                mask: None,
            }];
            let actions = [v13::Action::Output { port, max_len: 0 }];
            v13::encode_flow_mod_apply(&mut out, xid, &head, &oxms, &actions);
        }
    }
    out
}

impl Template {
    /// The responder's FLOW_MOD in `version`, with the offsets of the
    /// fields [`Template::append`] patches.
    pub fn new(version: Version) -> Template {
        let (gateway, none) = (gateway_port(), BufferId(0));
        let base = encode_answer(version, Xid(0), none, gateway);
        let differs = |xid: u32, buffer_id: u32, port: PortNo| {
            first_difference(
                &base,
                &encode_answer(version, Xid(xid), BufferId(buffer_id), port),
            )
        };
        // A port whose first byte differs from the gateway's in both
        // widths (1.0's 16 bits, 1.3's 32).
        let (probe, port_len) = match version {
            Version::V10 => (PortNo(0x8000), 2),
            Version::V13 => (PortNo(0x8000_0000), 4),
        };
        Template {
            xid_at: differs(u32::MAX, 0, gateway),
            buffer_id_at: differs(0, u32::MAX, gateway),
            port_at: differs(0, 0, probe),
            port_len,
            bytes: base,
        }
    }

    /// Appends the FLOW_MOD with `xid`, `buffer_id` and output `port` to
    /// `out`.
    #[inline]
    pub fn append(&self, out: &mut Vec<u8>, xid: Xid, buffer_id: BufferId, port: PortNo) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let patch = |out: &mut Vec<u8>, off: usize, len: usize, v: u32| {
            if let Some(dst) = out.get_mut(at + off..at + off + len) {
                dst.copy_from_slice(&v.to_be_bytes()[4 - len..]);
            }
        };
        patch(out, self.xid_at, 4, xid.0);
        patch(out, self.buffer_id_at, 4, buffer_id.0);
        patch(out, self.port_at, self.port_len, port.0);
    }
}

/// The learning switch's table work on one frame (`baton_apps::learning`):
/// learn the source behind `in_port` unless it is multicast, and look the
/// destination up. The port to answer with: the one learnt, the gateway
/// without a table, or FLOOD for an unknown or multicast destination.
#[inline]
fn learn(table: Option<&mut MacTable<PortNo>>, in_port: PortNo, frame: &[u8]) -> PortNo {
    let Some(table) = table else {
        return gateway_port();
    };
    let (Some(dst), Some(src)) = (mac_at(frame, 0), mac_at(frame, 6)) else {
        return PortNo::FLOOD;
    };
    if !src.is_multicast() {
        table.insert(&src, in_port);
    }
    if dst.is_multicast() {
        return PortNo::FLOOD;
    }
    table.get(&dst).unwrap_or(PortNo::FLOOD)
}

fn mac_at(frame: &[u8], at: usize) -> Option<MacAddr> {
    Some(MacAddr(frame.get(at..at + 6)?.try_into().ok()?))
}

/// Appends the answer to one PACKET_IN (`pi`: xid, buffer id, input
/// port, frame) as the connection's [`ResponderMode`] says.
fn answer(
    table: Option<&mut MacTable<PortNo>>,
    matching: Option<LearnedMatch>,
    out: &mut Vec<u8>,
    version: Version,
    template: &Template,
    pi: (Xid, BufferId, PortNo, &[u8]),
) {
    let (xid, buffer_id, in_port, frame) = pi;
    let port = learn(table, in_port, frame);
    match matching {
        Some(matching) => append_learnt(out, version, pi, port, matching),
        None => template.append(out, xid, buffer_id, port),
    }
}

/// Appends the FLOW_MOD the learning switch would send for `frame` with
/// `match = matching`: its L2 or exact match, the buffered packet, output
/// to `port` (the same `encode_flow_add` call, with the learning
/// switch's default timeouts and priority).
fn append_learnt(
    out: &mut Vec<u8>,
    version: Version,
    pi: (Xid, BufferId, PortNo, &[u8]),
    port: PortNo,
    matching: LearnedMatch,
) {
    let (xid, buffer_id, in_port, frame) = pi;
    let actions = [ActionSpec::Output { port, max_len: 0 }];
    let exact = || MatchSpec::exact_frame(in_port, frame);
    let match_ = match matching {
        LearnedMatch::L2 => MatchSpec::l2_frame(in_port, frame).unwrap_or_else(exact),
        LearnedMatch::Exact => exact(),
    };
    let flow = FlowSpec {
        buffer_id: Some(buffer_id),
        idle_timeout: 10,
        priority: baton_apps::priority::LEARNING.base(),
        ..FlowSpec::new(match_, &actions)
    };
    encode_flow_add(out, version, xid, &flow);
}

struct RConn {
    stream: TcpStream,
    rbuf: Box<[u8]>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    readable: bool,
    writable: bool,
    version: Option<Version>,
    template: Option<Template>,
    table: Option<MacTable<PortNo>>,
    matching: Option<LearnedMatch>,
    answered: u64,
}

impl RConn {
    fn new(stream: TcpStream, mode: ResponderMode) -> RConn {
        let mut wbuf = Vec::with_capacity(64 * 1024);
        Hello::baton().encode(Version::V13, Xid(1), &mut wbuf);
        RConn {
            stream,
            rbuf: vec![0u8; RBUF_LEN].into_boxed_slice(),
            rstart: 0,
            rend: 0,
            wbuf,
            wpos: 0,
            readable: true,
            writable: true,
            version: None,
            template: None,
            table: (mode != ResponderMode::Template).then(|| MacTable::new(1 << 20)),
            matching: mode.learned_match(),
            answered: 0,
        }
    }

    /// Handles one message; `Err` closes the connection.
    fn handle(&mut self, msg: &[u8]) -> Result<(), String> {
        let h = Header::parse(msg).map_err(|e| e.to_string())?;
        if h.msg_type == 0 && self.version.is_none() {
            let body = Hello::decode_body(msg.get(8..).unwrap_or(&[]), 8).unwrap_or_default();
            let v = hello::negotiate(&[Version::V10, Version::V13], h.version, &body)
                .map_err(|e| e.to_string())?;
            self.version = Some(v);
            self.template = Some(Template::new(v));
            match v {
                Version::V10 => v10::Message::FeaturesRequest.encode(Xid(2), &mut self.wbuf),
                Version::V13 => v13::Message::FeaturesRequest.encode(Xid(2), &mut self.wbuf),
            }
            return Ok(());
        }
        let (Some(v), Some(t)) = (self.version, self.template.as_ref()) else {
            return Ok(());
        };
        match v {
            Version::V10 => match MsgType10::from(h.msg_type) {
                MsgType10::PacketIn => {
                    if let Ok(p) = v10::PacketInView::new_checked(msg) {
                        let pi = (p.xid(), p.buffer_id(), p.in_port(), p.data());
                        answer(self.table.as_mut(), self.matching, &mut self.wbuf, v, t, pi);
                        self.answered += 1;
                    }
                }
                MsgType10::EchoRequest => {
                    if let Ok(e) = v10::EchoView::new_checked(msg) {
                        v10::encode_echo_reply(&mut self.wbuf, e.xid(), e.payload());
                    }
                }
                _ => {}
            },
            Version::V13 => match MsgType13::from(h.msg_type) {
                MsgType13::PacketIn => {
                    if let Ok(p) = v13::PacketInView::new_checked(msg) {
                        let in_port = p.in_port().unwrap_or(PortNo::ANY);
                        let pi = (p.xid(), p.buffer_id(), in_port, p.data());
                        answer(self.table.as_mut(), self.matching, &mut self.wbuf, v, t, pi);
                        self.answered += 1;
                    }
                }
                MsgType13::EchoRequest => {
                    if let Ok(e) = v13::EchoView::new_checked(msg) {
                        v13::encode_echo_reply(&mut self.wbuf, e.xid(), e.payload());
                    }
                }
                _ => {}
            },
        }
        Ok(())
    }

    /// Reads and answers until the socket is drained (or a budget is
    /// spent); `Err` closes the connection.
    fn read(&mut self) -> Result<(), String> {
        for _ in 0..8 {
            if self.wbuf.len() - self.wpos > MAX_PENDING {
                return Ok(());
            }
            if self.rend == self.rbuf.len() {
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
            }
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err("closed".into()),
                Ok(n) => {
                    self.rend += n;
                    let mut ahead = self.rstart;
                    for _ in 0..PREFETCH_AHEAD {
                        ahead = self.prefetch(ahead);
                    }
                    while let Some(len) = baton_openflow::frame(&self.rbuf[self.rstart..self.rend])
                        .map_err(|e| e.to_string())?
                    {
                        ahead = self.prefetch(ahead);
                        let start = self.rstart;
                        self.rstart += len;
                        // Split borrows: the message lives in rbuf, answers
                        // go to wbuf.
                        let rbuf = std::mem::take(&mut self.rbuf);
                        let r = self.handle(&rbuf[start..start + len]);
                        self.rbuf = rbuf;
                        r?;
                    }
                    if self.rstart == self.rend {
                        self.rstart = 0;
                        self.rend = 0;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// The learning responder's prefetch (as the learning switch's):
    /// starts loading the table slots of the two MACs of the PACKET_IN
    /// read at `at`, if a whole one is, and returns where the next one
    /// starts (`at` itself if none is whole yet).
    fn prefetch(&self, at: usize) -> usize {
        let (Some(table), Some(v)) = (self.table.as_ref(), self.version) else {
            return at;
        };
        let Ok(Some(len)) = baton_openflow::frame(&self.rbuf[at..self.rend]) else {
            return at;
        };
        let msg = &self.rbuf[at..at + len];
        let frame = match v {
            Version::V10 => v10::PacketInView::new_checked(msg).map(|p| p.data()).ok(),
            Version::V13 => v13::PacketInView::new_checked(msg).map(|p| p.data()).ok(),
        };
        if let Some(f) = frame
            && let (Some(dst), Some(src)) = (mac_at(f, 0), mac_at(f, 6))
        {
            table.prefetch(&src);
            table.prefetch(&dst);
        }
        at + len
    }

    fn flush(&mut self) -> Result<(), String> {
        if !self.writable || self.wpos == self.wbuf.len() {
            return Ok(());
        }
        match self.stream.write(&self.wbuf[self.wpos..]) {
            Ok(n) => {
                self.wpos += n;
                if self.wpos == self.wbuf.len() {
                    self.wbuf.clear();
                    self.wpos = 0;
                } else if self.wpos > self.wbuf.len() / 2 {
                    self.wbuf.drain(..self.wpos);
                    self.wpos = 0;
                }
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.writable = false;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A running responder.
pub struct Responder {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    answered: Arc<Vec<AtomicU64>>,
    wakers: Vec<Arc<Waker>>,
    handles: Vec<JoinHandle<()>>,
}

impl Responder {
    /// Listens on `listen` (port 0 picks a free one) with `threads` I/O
    /// threads, answering as `mode` says; the switches' sockets get
    /// `recv_buffer` bytes of receive buffer (`None`: the kernel's
    /// autotuning).
    pub fn start(
        listen: SocketAddr,
        threads: usize,
        mode: ResponderMode,
        recv_buffer: Option<usize>,
    ) -> io::Result<Responder> {
        let threads = threads.max(1);
        let mut listener = TcpListener::bind(listen)?;
        if let Some(bytes) = recv_buffer {
            // Accepted sockets inherit it.
            rustix::net::sockopt::set_socket_recv_buffer_size(&listener, bytes)?;
        }
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect::<Vec<_>>());
        let mut senders = Vec::new();
        let mut wakers = Vec::new();
        let mut handles = Vec::new();
        for id in 0..threads {
            let poll = Poll::new()?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            let (tx, rx) = mpsc::channel::<TcpStream>();
            senders.push((tx, waker.clone()));
            wakers.push(waker);
            let (stop, answered) = (stop.clone(), answered.clone());
            handles.push(
                std::thread::Builder::new()
                    .name(format!("responder-{id}"))
                    .spawn(move || worker(poll, rx, stop, answered, id, mode))?,
            );
        }
        let mut poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, Token(0), Interest::READABLE)?;
        let acceptor_stop = stop.clone();
        handles.push(
            std::thread::Builder::new()
                .name("responder-accept".into())
                .spawn(move || {
                    let mut events = Events::with_capacity(64);
                    let mut next = 0;
                    while !acceptor_stop.load(Ordering::Acquire) {
                        if poll
                            .poll(&mut events, Some(Duration::from_millis(50)))
                            .is_err()
                        {
                            continue;
                        }
                        loop {
                            match listener.accept() {
                                Ok((s, _)) => {
                                    let _ = s.set_nodelay(true);
                                    let (tx, waker) = &senders[next % senders.len()];
                                    next += 1;
                                    if tx.send(s).is_ok() {
                                        let _ = waker.wake();
                                    }
                                }
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                                Err(_) => break,
                            }
                        }
                    }
                })?,
        );
        Ok(Responder {
            addr,
            stop,
            answered,
            wakers,
            handles,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// PACKET_INs answered so far.
    pub fn answered(&self) -> u64 {
        self.answered
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .sum()
    }

    /// Stops every thread and closes every connection; returns the
    /// PACKET_INs answered.
    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Release);
        for w in &self.wakers {
            let _ = w.wake();
        }
        for h in self.handles {
            let _ = h.join();
        }
        self.answered
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .sum()
    }
}

fn worker(
    mut poll: Poll,
    rx: mpsc::Receiver<TcpStream>,
    stop: Arc<AtomicBool>,
    answered: Arc<Vec<AtomicU64>>,
    id: usize,
    mode: ResponderMode,
) {
    let mut events = Events::with_capacity(1024);
    let mut conns: Vec<Option<RConn>> = Vec::new();
    let mut total_closed = 0u64;
    while !stop.load(Ordering::Acquire) {
        let busy = conns.iter().flatten().any(|c| {
            (c.readable && c.wbuf.len() - c.wpos <= MAX_PENDING)
                || (c.writable && c.wpos < c.wbuf.len())
        });
        let timeout = if busy {
            Duration::ZERO
        } else {
            Duration::from_millis(50)
        };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
        for ev in events.iter() {
            if ev.token() == WAKER {
                continue;
            }
            if let Some(Some(c)) = conns.get_mut(ev.token().0) {
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    c.readable = true;
                }
                if ev.is_writable() || ev.is_error() {
                    c.writable = true;
                }
            }
        }
        while let Ok(mut s) = rx.try_recv() {
            let slot = conns
                .iter()
                .position(Option::is_none)
                .unwrap_or(conns.len());
            if poll
                .registry()
                .register(&mut s, Token(slot), Interest::READABLE | Interest::WRITABLE)
                .is_ok()
            {
                if slot == conns.len() {
                    conns.push(None);
                }
                conns[slot] = Some(RConn::new(s, mode));
            }
        }
        let mut live = 0;
        for slot in conns.iter_mut() {
            let Some(c) = slot.as_mut() else { continue };
            let mut r = Ok(());
            if c.readable {
                r = c.read();
            }
            if r.is_ok() {
                r = c.flush();
            }
            if r.is_err() {
                total_closed += c.answered;
                let _ = poll.registry().deregister(&mut c.stream);
                *slot = None;
                continue;
            }
            live += c.answered;
        }
        if let Some(a) = answered.get(id) {
            a.store(total_closed + live, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patched_template_is_the_answer_encoded_afresh() {
        for v in [Version::V10, Version::V13] {
            let t = Template::new(v);
            for (xid, buffer_id, port) in [
                (Xid(0x0102_0304), BufferId(0x0a0b_0c0d), PortNo(3)),
                (Xid(7), BufferId::NONE, PortNo::FLOOD),
                (Xid(u32::MAX), BufferId(1), PortNo(0xfeed)),
            ] {
                let mut out = vec![0xaa];
                t.append(&mut out, xid, buffer_id, port);
                assert_eq!(
                    out[1..],
                    encode_answer(v, xid, buffer_id, port),
                    "{v:?} {port:?}"
                );
            }
        }
    }

    fn frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
        let mut f = [dst, src].concat();
        f.extend_from_slice(&[0x08, 0x00]);
        f
    }

    #[test]
    fn the_exact_answer_is_the_learning_switchs_flow() {
        let (a, b) = ([2, 0, 0, 0, 0, 0xa], [2, 0, 0, 0, 0, 0xb]);
        let mut f = frame(b, a);
        // An IPv4 header (TCP, 10.0.0.1 -> 10.0.0.2) and TCP ports.
        f.extend_from_slice(&[
            0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ]);
        f.extend_from_slice(&[
            0x30, 0x39, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0, 0, 0, 0, 0, 0, 0,
        ]);
        let mut out = Vec::new();
        let pi = (Xid(9), BufferId(77), PortNo(1), &f[..]);
        append_learnt(&mut out, Version::V10, pi, PortNo(2), LearnedMatch::Exact);
        let m = v10::FlowModView::new_checked(&out[..]).unwrap();
        assert_eq!((m.xid(), m.buffer_id()), (Xid(9), BufferId(77)));
        let exact = m.match_();
        // Exact: nothing wildcarded but the priority of a tag the frame
        // does not have.
        let wild = exact.wildcards & v10::ofmatch::OFPFW_ALL;
        assert_eq!(wild, v10::ofmatch::OFPFW_DL_VLAN_PCP);
        assert_eq!(
            (exact.in_port, exact.dl_src, exact.dl_dst),
            (PortNo(1), MacAddr(a), MacAddr(b))
        );
        assert_eq!((exact.nw_proto, exact.tp_src, exact.tp_dst), (6, 12345, 80));
        let actions: Vec<_> = m.actions().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            actions,
            [v10::Action::Output {
                port: PortNo(2),
                max_len: 0
            }]
        );
        // 1.3: the same flow, as the 1.3 codec writes it.
        let mut out13 = Vec::new();
        append_learnt(&mut out13, Version::V13, pi, PortNo(2), LearnedMatch::Exact);
        let m13 = v13::FlowModView::new_checked(&out13[..]).unwrap();
        assert_eq!((m13.xid(), m13.buffer_id()), (Xid(9), BufferId(77)));
    }

    #[test]
    fn the_l2_answer_is_the_default_learning_switchs_flow() {
        let (a, b) = ([2, 0, 0, 0, 0, 0xa], [2, 0, 0, 0, 0, 0xb]);
        let mut f = frame(b, a);
        f.extend_from_slice(&[
            0x45, 0, 0, 20, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ]);
        let mut out = Vec::new();
        let pi = (Xid(9), BufferId(77), PortNo(1), &f[..]);
        append_learnt(&mut out, Version::V10, pi, PortNo(2), LearnedMatch::L2);
        let m = v10::FlowModView::new_checked(&out[..]).unwrap();
        assert_eq!((m.xid(), m.buffer_id()), (Xid(9), BufferId(77)));
        let l2 = m.match_();
        use v10::ofmatch::*;
        assert_eq!(
            l2.wildcards & OFPFW_ALL,
            OFPFW_ALL & !(OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_DL_DST | OFPFW_DL_VLAN)
        );
        assert_eq!(
            (l2.in_port, l2.dl_src, l2.dl_dst, l2.dl_vlan),
            (PortNo(1), MacAddr(a), MacAddr(b), OFP_VLAN_NONE)
        );
    }

    #[test]
    fn the_learning_responder_answers_with_the_port_learnt() {
        let (a, b) = ([2, 0, 0, 0, 0, 0xa], [2, 0, 0, 0, 0, 0xb]);
        let mut table = MacTable::new(1 << 10);
        // b is not known yet: flood; a is learnt behind port 1.
        assert_eq!(
            learn(Some(&mut table), PortNo(1), &frame(b, a)),
            PortNo::FLOOD
        );
        assert_eq!(learn(Some(&mut table), PortNo(2), &frame(a, b)), PortNo(1));
        assert_eq!(learn(Some(&mut table), PortNo(1), &frame(b, a)), PortNo(2));
        // A multicast destination floods, a multicast source is not learnt.
        let group = [1, 0, 0x5e, 0, 0, 1];
        assert_eq!(
            learn(Some(&mut table), PortNo(1), &frame(group, a)),
            PortNo::FLOOD
        );
        assert_eq!(
            learn(Some(&mut table), PortNo(3), &frame(a, group)),
            PortNo(1)
        );
        assert_eq!(table.get(&MacAddr(group)), None);
        // A runt frame floods; without a table, the gateway.
        assert_eq!(learn(Some(&mut table), PortNo(1), &a), PortNo::FLOOD);
        assert_eq!(learn(None, PortNo(1), &frame(b, a)), gateway_port());
    }

    #[test]
    fn template_patches_xid_and_buffer_id() {
        for v in [Version::V10, Version::V13] {
            let t = Template::new(v);
            let mut out = Vec::new();
            t.append(&mut out, Xid(0x0102_0304), BufferId(0x0a0b_0c0d), PortNo(3));
            assert_eq!(baton_openflow::frame(&out).unwrap(), Some(out.len()));
            match v {
                Version::V10 => {
                    let f = v10::FlowModView::new_checked(&out).unwrap();
                    assert_eq!(f.xid(), Xid(0x0102_0304));
                    assert_eq!(f.buffer_id(), BufferId(0x0a0b_0c0d));
                    assert_eq!(f.command(), v10::FlowModCommand::Add);
                }
                Version::V13 => {
                    let f = v13::FlowModView::new_checked(&out).unwrap();
                    assert_eq!(f.xid(), Xid(0x0102_0304));
                    assert_eq!(f.buffer_id(), BufferId(0x0a0b_0c0d));
                }
            }
        }
    }
}
