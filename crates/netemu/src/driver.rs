//! The I/O shell: one thread, one `mio` poller, one TCP connection per
//! emulated switch to the controller, the real clock. It moves bytes
//! between the sockets and the [`Network`] and calls [`Network::poll`]
//! when something is due; everything else is the network's.
//!
//! - Switches connect in groups ([`crate::ConnectPlan`]): the next group
//!   once the switches so far have finished their handshakes, or after
//!   the interval, so 10,000 switches do not storm the accept queue.
//! - Sockets are non-blocking with `TCP_NODELAY` (a PACKET_IN must not
//!   wait for Nagle's algorithm) and edge-triggered: each readable socket
//!   is read into one shared 64 KiB buffer, handed to the network in
//!   place, at most [`READS_PER_TURN`] times per turn (then it waits for
//!   the next turn, so one busy switch does not starve the rest); output
//!   is written until the kernel refuses, then again when the socket is
//!   writable.
//! - The process's open-file limit is raised to fit one socket per switch.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::graph::SwitchId;
use crate::network::{Network, Output};
use crate::report::Report;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Bytes read at once.
pub const READ_BUFFER: usize = 64 * 1024;

/// Reads per socket per turn of the loop.
pub const READS_PER_TURN: usize = 8;

/// The longest the loop sleeps (it must notice connection groups and the
/// handshake deadline).
const MAX_WAIT: Duration = Duration::from_millis(10);

#[derive(Debug, Default)]
struct Sock {
    stream: Option<TcpStream>,
    connected: bool,
}

/// Runs the emulation `cfg` describes against its controller and reports
/// what it measured.
pub fn run(cfg: Config) -> Result<Report> {
    let n = cfg.topology.switches().len();
    raise_open_file_limit(n as u64 + 256);
    let start = Instant::now();
    let mut net = Network::new(&cfg, start)?;
    let mut poll = Poll::new().map_err(|e| Error::io("creating the poller", e))?;
    let mut events = Events::with_capacity(1024);
    let mut socks: Vec<Sock> = (0..n).map(|_| Sock::default()).collect();
    let mut buf = vec![0u8; READ_BUFFER];
    let mut dirty = Vec::new();
    let mut readable: Vec<usize> = Vec::new();
    let mut next_group = Instant::now();
    let mut started = 0usize;
    loop {
        let now = Instant::now();
        // Connect the next group when the last one is ready or its time
        // is up.
        if started < n && (net.ready_count() >= started || now >= next_group) {
            let upto = (started + cfg.connect.group.max(1)).min(n);
            for (s, sock) in socks.iter_mut().enumerate().take(upto).skip(started) {
                connect(&poll, sock, s, cfg.controller)?;
            }
            started = upto;
            next_group = now + cfg.connect.interval;
        }
        if net.ready_count() < n && now.duration_since(start) > cfg.connect.timeout {
            return Err(Error::Handshake {
                ready: net.ready_count(),
                total: n,
                waited: cfg.connect.timeout,
            });
        }
        let wait = if readable.is_empty() {
            net.next_deadline()
                .saturating_duration_since(now)
                .min(MAX_WAIT)
        } else {
            Duration::ZERO
        };
        match poll.poll(&mut events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("polling", e)),
        }
        let now = Instant::now();
        for ev in events.iter() {
            let s = ev.token().0;
            let Some(sock) = socks.get_mut(s) else {
                continue;
            };
            if !sock.connected && sock.stream.is_some() {
                if !finish_connect(sock)? {
                    continue;
                }
                net.connect(SwitchId(s as u32), now);
            }
            if ev.is_readable() || ev.is_read_closed() {
                readable.push(s);
            }
            if ev.is_writable() {
                write_out(&mut socks[s], &mut net, s);
            }
        }
        readable.sort_unstable();
        readable.dedup();
        for s in std::mem::take(&mut readable) {
            if read_in(&mut socks[s], &mut net, s, now, &mut buf) {
                readable.push(s);
            }
        }
        net.poll(now);
        while let Some(out) = net.poll_output() {
            if let Output::Close(s) = out {
                let sock = &mut socks[s.0 as usize];
                write_out(sock, &mut net, s.0 as usize);
                if let Some(mut stream) = sock.stream.take() {
                    let _ = poll.registry().deregister(&mut stream);
                }
                net.disconnected(s);
            }
        }
        net.take_dirty(&mut dirty);
        for s in &dirty {
            write_out(&mut socks[s.0 as usize], &mut net, s.0 as usize);
        }
        if net.finished(Instant::now()) {
            return Ok(net.report());
        }
    }
}

/// Starts switch `s`'s non-blocking connect.
fn connect(poll: &Poll, sock: &mut Sock, s: usize, addr: SocketAddr) -> Result<()> {
    let what = || format!("connecting switch #{s} to {addr}");
    let mut stream = TcpStream::connect(addr).map_err(|e| Error::io(what(), e))?;
    poll.registry()
        .register(
            &mut stream,
            Token(s),
            Interest::READABLE | Interest::WRITABLE,
        )
        .map_err(|e| Error::io(what(), e))?;
    sock.stream = Some(stream);
    Ok(())
}

/// Whether the connect finished (`false`: still under way).
fn finish_connect(sock: &mut Sock) -> Result<bool> {
    let Some(stream) = sock.stream.as_ref() else {
        return Ok(false);
    };
    if let Ok(Some(e)) | Err(e) = stream.take_error() {
        return Err(Error::io("connecting to the controller", e));
    }
    match stream.peer_addr() {
        Ok(_) => {
            // Best effort: without it PACKET_INs wait for Nagle.
            let _ = stream.set_nodelay(true);
            sock.connected = true;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) => Err(Error::io("connecting to the controller", e)),
    }
}

/// Reads what switch `s`'s socket has, into the network. Returns true
/// when it may have more (the turn's reads are used up).
fn read_in(sock: &mut Sock, net: &mut Network, s: usize, now: Instant, buf: &mut [u8]) -> bool {
    let id = SwitchId(s as u32);
    let Some(stream) = sock.stream.as_mut().filter(|_| sock.connected) else {
        return false;
    };
    for _ in 0..READS_PER_TURN {
        match stream.read(buf) {
            Ok(0) => {
                sock.stream = None;
                net.disconnected(id);
                return false;
            }
            Ok(k) => net.handle_input(id, now, &buf[..k]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                sock.stream = None;
                net.disconnected(id);
                return false;
            }
        }
    }
    true
}

/// Writes switch `s`'s output until it is all out or the kernel refuses.
fn write_out(sock: &mut Sock, net: &mut Network, s: usize) {
    let id = SwitchId(s as u32);
    let Some(stream) = sock.stream.as_mut().filter(|_| sock.connected) else {
        return;
    };
    loop {
        let out = net.output(id);
        if out.is_empty() {
            return;
        }
        match stream.write(out) {
            Ok(0) => return,
            Ok(k) => net.consume_output(id, k),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                sock.stream = None;
                net.disconnected(id);
                return;
            }
        }
    }
}

/// Raises the soft limit on open files towards `want` (as far as the
/// hard limit allows), so one socket per switch fits.
fn raise_open_file_limit(want: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return;
    }
    if lim.rlim_cur >= want as libc::rlim_t {
        return;
    }
    lim.rlim_cur = (want as libc::rlim_t).min(lim.rlim_max);
    // SAFETY: setrlimit reads one valid rlimit; a failure leaves the
    // limit as it was, and connecting then reports the error.
    unsafe {
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}
