//! One emulator thread: an event loop over the switches it owns.
//!
//! Each iteration: wait for readiness (or a short timeout), read every
//! readable connection (large reads, every whole message handled in place),
//! then for every connection generate the requests now due straight into
//! its send buffer and write that buffer once. Readiness comes from epoll
//! edges (mio), except in throughput mode with [`Writes::Cbench`], where
//! it is cbench's loop: one level-triggered `poll(2)` over every
//! connection per iteration. Nothing allocates per
//! message: buffers, the id ring, the histograms and the probe's sample
//! vector are sized before traffic starts.

use crate::emulator::conn::{Conn, PROBE_RATE, State};
use crate::emulator::{Shared, Stage, Writes};
use crate::spec::Mode;
use crate::stats::new_histogram;
use hdrhistogram::Histogram;
use mio::{Events, Interest, Poll};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What a thread hands back when the run ends.
pub struct WorkerResult {
    /// Its switches.
    pub conns: Vec<Conn>,
    /// Latency histograms (µs) per schedule segment.
    pub hist: Vec<Histogram<u64>>,
    /// Probe samples: (µs since traffic started, delay µs).
    pub probe: Vec<(u64, u64)>,
}

/// Runs one emulator thread until the coordinator says stop.
pub fn run(shared: Arc<Shared>, id: usize, mut conns: Vec<Conn>) -> io::Result<WorkerResult> {
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(1024);
    let segments = shared.schedule.segments.len();
    let mut hist: Vec<Histogram<u64>> = (0..segments).map(|_| new_histogram()).collect();
    let has_probe = conns.iter().any(|c| c.data.probe);
    let probe_cap = if has_probe {
        (shared.schedule.end_us() / 1_000_000 + 2) as usize * (PROBE_RATE as usize + 1) * 2
    } else {
        0
    };
    let mut probe = Vec::with_capacity(probe_cap);
    let mut up_seen = vec![false; conns.len()];
    let mut learned_seen = vec![false; conns.len()];
    let mut dead_seen = vec![false; conns.len()];
    let mut last_publish = 0u64;
    let mut round = 0usize;
    let mut pfds: Vec<libc::pollfd> = Vec::with_capacity(conns.len());
    let level = shared.mode == Mode::Throughput && shared.writes == Writes::Cbench;
    loop {
        let stage = shared.stage();
        if stage == Stage::Stop {
            break;
        }
        if level && stage == Stage::Run {
            // Blocks until a socket is ready: no spinning while every send
            // buffer is 2/3 full and nothing has come back.
            let wait = Duration::from_millis(if shared.probe { 1 } else { 5 });
            poll_level(&mut pfds, &mut conns, wait)?;
        } else {
            let timeout = timeout(&shared, stage, &conns);
            if let Err(e) = poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            for ev in events.iter() {
                if let Some(c) = conns.get_mut(ev.token().0) {
                    if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                        c.readable = true;
                    }
                    if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                        c.writable = true;
                    }
                }
            }
        }
        // Start each pass at a different switch, so no switch is always
        // served first (which would bias latency-mode fairness).
        let n = conns.len();
        let first = round % n.max(1);
        round = round.wrapping_add(1);
        let now = shared.now();
        for k in 0..n {
            let c = &mut conns[(first + k) % n];
            match c.state {
                State::Pending(at) if now.us >= at => connect(&shared, &poll, c),
                State::Connecting if c.writable => {
                    // cbench leaves Nagle's algorithm on; the probe and the
                    // other modes send small writes that must not wait.
                    let nagle = level && !c.data.probe;
                    check_connected(c, !nagle)
                }
                State::Handshake | State::Up if c.readable => {
                    c.read(&now, &mut hist, &mut probe);
                }
                _ => {}
            }
            if stage != Stage::Connect && c.state == State::Up {
                c.send_arp(&now);
            }
        }
        let now = shared.now();
        let running = stage == Stage::Run;
        for k in 0..n {
            let i = (first + k) % n;
            let c = &mut conns[i];
            if running {
                let rate = if c.data.probe {
                    PROBE_RATE
                } else {
                    now.segment
                        .and_then(|s| shared.schedule.segments[s].rates.get(c.data.index))
                        .copied()
                        .unwrap_or(0.0)
                };
                c.generate(&now, shared.mode, rate);
            }
            c.flush();
            if c.state == State::Up && !up_seen[i] {
                up_seen[i] = true;
                shared.up.fetch_add(1, Ordering::AcqRel);
            }
            if c.learned && !learned_seen[i] {
                learned_seen[i] = true;
                shared.learned.fetch_add(1, Ordering::AcqRel);
            }
            if c.state == State::Dead && !dead_seen[i] {
                dead_seen[i] = true;
                shared.dead.fetch_add(1, Ordering::AcqRel);
                if !up_seen[i] {
                    shared.record_failure(c.data.index, c.data.failure.as_deref());
                }
            }
        }
        if now.us.saturating_sub(last_publish) >= 100_000 {
            last_publish = now.us;
            publish(&shared, id, &mut conns);
        }
    }
    publish(&shared, id, &mut conns);
    Ok(WorkerResult { conns, hist, probe })
}

/// cbench's readiness: one `poll(2)` over every connection, level-triggered.
/// A TCP socket is readable while data waits and writable while at most
/// 2/3 of its send buffer is queued (Linux `sk_stream_is_writeable`), so a
/// switch writes only then, as cbench's do. The probe asks to write only
/// when it has something queued, or the loop would never block.
fn poll_level(pfds: &mut Vec<libc::pollfd>, conns: &mut [Conn], wait: Duration) -> io::Result<()> {
    pfds.clear();
    pfds.extend(conns.iter().map(|c| libc::pollfd {
        fd: match (&c.stream, c.state) {
            (Some(s), State::Handshake | State::Up) => s.as_raw_fd(),
            _ => -1,
        },
        events: if c.data.probe && c.pending() == 0 {
            libc::POLLIN
        } else {
            libc::POLLIN | libc::POLLOUT
        },
        revents: 0,
    }));
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: `pfds` points to `pfds.len()` initialised pollfd structs,
    // of which poll(2) writes only the `revents` fields.
    let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(e)
        };
    }
    for (c, p) in conns.iter_mut().zip(pfds.iter()) {
        if p.fd >= 0 {
            let broken = libc::POLLHUP | libc::POLLERR;
            c.readable = p.revents & (libc::POLLIN | broken) != 0;
            c.writable = p.revents & (libc::POLLOUT | broken) != 0;
        }
    }
    Ok(())
}

fn publish(shared: &Shared, id: usize, conns: &mut [Conn]) {
    let mut responses = 0;
    let mut answered = 0;
    for c in conns.iter_mut() {
        c.settle();
    }
    for c in conns.iter().filter(|c| !c.data.probe) {
        for s in c.data.per_segment.iter() {
            responses += s.responses;
            answered += c.data.answered(s);
        }
    }
    if let Some(p) = shared.progress.get(id) {
        p.0.store(responses, Ordering::Relaxed);
        p.1.store(answered, Ordering::Relaxed);
    }
}

fn timeout(shared: &Shared, stage: Stage, conns: &[Conn]) -> Duration {
    let busy = conns.iter().any(|c| {
        (c.readable && matches!(c.state, State::Handshake | State::Up))
            || (c.writable && c.pending() > 0)
            || (stage == Stage::Run
                && shared.mode == Mode::Throughput
                && c.state == State::Up
                && c.writable
                && !c.data.probe)
    });
    if busy {
        return Duration::ZERO;
    }
    let pending_connect = conns.iter().any(|c| matches!(c.state, State::Pending(_)));
    match stage {
        Stage::Run if shared.mode == Mode::Rate || shared.probe => Duration::from_millis(1),
        Stage::Run => Duration::from_millis(5),
        _ if pending_connect => Duration::from_millis(1),
        _ => Duration::from_millis(5),
    }
}

fn connect(shared: &Shared, poll: &Poll, c: &mut Conn) {
    match mio::net::TcpStream::connect(shared.controller) {
        Ok(mut s) => {
            if let Err(e) =
                poll.registry()
                    .register(&mut s, c.token, Interest::READABLE | Interest::WRITABLE)
            {
                c.fail(format!("register: {e}"));
                return;
            }
            c.stream = Some(s);
            c.state = State::Connecting;
        }
        Err(e) => c.fail(format!("connect to {}: {e}", shared.controller)),
    }
}

fn check_connected(c: &mut Conn, nodelay: bool) {
    let Some(s) = c.stream.as_ref() else {
        return;
    };
    match s.take_error() {
        Ok(None) => {}
        Ok(Some(e)) | Err(e) => {
            c.fail(format!("connect: {e}"));
            return;
        }
    }
    match s.peer_addr() {
        Ok(_) => {
            let _ = s.set_nodelay(nodelay);
            c.start_handshake();
        }
        // Spurious wake-up: still connecting.
        Err(e) if e.kind() == io::ErrorKind::NotConnected => c.writable = false,
        Err(e) => c.fail(format!("connect: {e}")),
    }
}
