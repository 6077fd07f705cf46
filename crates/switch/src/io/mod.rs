//! The I/O layer: the only part of the crate that touches sockets,
//! threads and the clock. [`Runner`] is one switch's event loop (mio):
//! it owns the [`Switch`], a [`Backend`] that carries frames (real
//! interfaces through [`afpacket`], or in-process queues through
//! [`shared`]), active controller connections (`tcp:`, reconnecting with
//! [`target::Backoff`]) and a passive listener (`ptcp:`), and moves bytes
//! and time between them and the I/O-free [`Connection`]s.
//!
//! It logs (tracing) each controller connecting and disconnecting and
//! each port change the backend reports.

pub mod afpacket;
pub mod netlink;
pub mod shared;
pub mod target;

use crate::datapath::{Event, Transmit};
use crate::proto::{CloseReason, ConnEvent, Connection, Keepalive};
use crate::switch::Switch;
use baton_openflow::types::PortNo;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Registry, Token, Waker};
use slab::Slab;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
pub use target::{Backoff, Target};

/// Where frames enter and leave a running switch.
pub trait Backend: Send {
    /// Registers the backend's event sources with tokens `first..first+n`
    /// and returns `n`. `waker` wakes the loop, which then calls
    /// [`Backend::on_wake`] (for backends fed by other threads).
    fn register(
        &mut self,
        registry: &Registry,
        first: usize,
        waker: &Arc<Waker>,
    ) -> io::Result<usize>;
    /// Source `index` is readable: receive what is pending and run it
    /// through the switch.
    fn on_readable(&mut self, index: usize, now: Instant, sw: &mut Switch);
    /// The loop's waker fired.
    fn on_wake(&mut self, _now: Instant, _sw: &mut Switch) {}
    /// Where frames caused by controller messages go.
    fn transmit(&mut self) -> &mut dyn Transmit;
    /// Pushes out frames queued by `transmit` or `on_readable`, and
    /// retries those not sent before.
    fn flush(&mut self);
    /// Whether the backend applies link changes to the switch itself as
    /// they happen (with [`update_link`], from `on_readable` or
    /// `on_wake`); if not, the runner polls [`Backend::links`].
    fn reports_links(&self) -> bool {
        false
    }
    /// Each port's link state now: (port, up). Polled once a second
    /// unless [`Backend::reports_links`].
    fn links(&mut self) -> Vec<(PortNo, bool)>;
    /// Adds to the switch's port counters what the backend alone knows,
    /// such as frames the kernel dropped before the switch saw them
    /// (polled once a second).
    fn update_counters(&mut self, _sw: &mut Switch) {}
}

/// Records port `port`'s link state as a backend saw it: a change is
/// logged, and announced to the controllers (PORT_STATUS) by the switch.
pub fn update_link(sw: &mut Switch, port: PortNo, up: bool) {
    let Some(p) = sw.dp.ports.get(port) else {
        return;
    };
    if p.spec.link_up != up {
        tracing::info!(port = port.0, name = %p.spec.name, up, "port link changed");
        sw.set_link(port, up);
    }
}

/// How a running switch meets its controllers.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Controllers to connect to and addresses to listen on.
    pub targets: Vec<Target>,
    /// Echo keepalive for every connection.
    pub keepalive: Keepalive,
    /// Reconnect backoff for active connections.
    pub backoff: Backoff,
}

const WAKER: Token = Token(0);
const FIRST_LISTENER: usize = 1;
const FIRST_BACKEND: usize = 64;
const FIRST_CONN: usize = 1024;
/// How long the loop sleeps at most, so a stop request is seen quickly.
const MAX_SLEEP: Duration = Duration::from_millis(100);
/// How often the backend's counters are read, and link states polled
/// where the backend does not report them.
const POLL: Duration = Duration::from_secs(1);

#[derive(Debug)]
struct Active {
    addr: SocketAddr,
    backoff: Backoff,
    retry_at: Option<Instant>,
    conn: Option<usize>,
}

#[derive(Debug)]
struct Ctrl {
    stream: TcpStream,
    conn: Connection,
    peer: SocketAddr,
    active: Option<usize>,
    connected: bool,
}

/// A switch's event loop.
pub struct Runner<B: Backend> {
    poll: Poll,
    sw: Switch,
    backend: B,
    backend_sources: usize,
    listeners: Vec<TcpListener>,
    actives: Vec<Active>,
    ctrls: Slab<Ctrl>,
    opts: Options,
    waker: Arc<Waker>,
    next_poll: Instant,
    buf: Vec<u8>,
}

impl<B: Backend> Runner<B> {
    /// Binds the passive targets and registers the backend; active
    /// targets are dialled when [`Runner::run`] starts.
    pub fn new(sw: Switch, mut backend: B, opts: Options) -> io::Result<Runner<B>> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let mut listeners = Vec::new();
        let mut actives = Vec::new();
        for t in &opts.targets {
            match *t {
                Target::Passive(addr) => {
                    let mut l = TcpListener::bind(addr)?;
                    let token = Token(FIRST_LISTENER + listeners.len());
                    poll.registry()
                        .register(&mut l, token, Interest::READABLE)?;
                    tracing::info!(listen = %l.local_addr()?, "listening for controllers");
                    listeners.push(l);
                }
                Target::Active(addr) => actives.push(Active {
                    addr,
                    backoff: opts.backoff,
                    retry_at: Some(Instant::now()),
                    conn: None,
                }),
            }
        }
        let backend_sources = backend.register(poll.registry(), FIRST_BACKEND, &waker)?;
        Ok(Runner {
            poll,
            sw,
            backend,
            backend_sources,
            listeners,
            actives,
            ctrls: Slab::new(),
            opts,
            waker,
            next_poll: Instant::now(),
            buf: vec![0; 64 * 1024],
        })
    }

    /// The addresses the passive targets are bound to (with the real
    /// port when 0 was asked for).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// Wakes the loop (to see a stop request at once).
    pub fn waker(&self) -> Arc<Waker> {
        self.waker.clone()
    }

    /// The switch (for inspection between runs).
    pub fn switch(&self) -> &Switch {
        &self.sw
    }

    /// Runs until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut events = Events::with_capacity(256);
        while !stop.load(Ordering::Acquire) {
            let now = Instant::now();
            let sleep = self.next_deadline().map_or(MAX_SLEEP, |t| {
                t.saturating_duration_since(now).min(MAX_SLEEP)
            });
            match self.poll.poll(&mut events, Some(sleep)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let now = Instant::now();
            for ev in events.iter() {
                let t = ev.token().0;
                if t == WAKER.0 {
                    self.backend.on_wake(now, &mut self.sw);
                } else if (FIRST_LISTENER..FIRST_BACKEND).contains(&t) {
                    self.accept(t - FIRST_LISTENER, now);
                } else if (FIRST_BACKEND..FIRST_BACKEND + self.backend_sources).contains(&t) {
                    self.backend
                        .on_readable(t - FIRST_BACKEND, now, &mut self.sw);
                } else if t >= FIRST_CONN {
                    self.on_conn_event(t - FIRST_CONN, now, ev.is_writable());
                }
            }
            self.timers(now);
            self.dispatch_events();
            self.backend.flush();
            self.flush_conns(now);
        }
        for (_, mut c) in std::mem::take(&mut self.ctrls) {
            c.conn.close(&mut self.sw);
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
        Ok(())
    }

    fn next_deadline(&self) -> Option<Instant> {
        let conns = self.ctrls.iter().filter_map(|(_, c)| c.conn.poll_timeout());
        let retries = self.actives.iter().filter_map(|a| a.retry_at);
        conns
            .chain(retries)
            .chain(self.sw.poll_timeout())
            .chain(Some(self.next_poll))
            .min()
    }

    fn accept(&mut self, index: usize, now: Instant) {
        loop {
            let Some(l) = self.listeners.get(index) else {
                return;
            };
            match l.accept() {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    self.add_conn(stream, peer, None, true, now);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    return;
                }
            }
        }
    }

    fn add_conn(
        &mut self,
        mut stream: TcpStream,
        peer: SocketAddr,
        active: Option<usize>,
        connected: bool,
        now: Instant,
    ) {
        let entry = self.ctrls.vacant_entry();
        let token = Token(FIRST_CONN + entry.key());
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            token,
            Interest::READABLE | Interest::WRITABLE,
        ) {
            tracing::warn!(error = %e, "cannot register a controller connection");
            return;
        }
        if connected {
            tracing::info!(%peer, "controller connection open");
        }
        let conn = Connection::with_keepalive(&mut self.sw, now, self.opts.keepalive);
        let conn = if active.is_some() {
            conn
        } else {
            conn.into_service()
        };
        let key = entry.key();
        entry.insert(Ctrl {
            stream,
            conn,
            peer,
            active,
            connected,
        });
        if let Some(a) = active.and_then(|i| self.actives.get_mut(i)) {
            a.conn = Some(key);
        }
    }

    fn on_conn_event(&mut self, key: usize, now: Instant, writable: bool) {
        let Some(c) = self.ctrls.get_mut(key) else {
            return;
        };
        if !c.connected {
            if !writable {
                return;
            }
            // A non-blocking connect finished: connected, or failed.
            match c.stream.take_error() {
                Ok(None) if c.stream.peer_addr().is_ok() => {
                    c.connected = true;
                    tracing::info!(controller = %c.peer, "connected to controller");
                }
                _ => {
                    self.drop_conn(key, "connection refused", now);
                    return;
                }
            }
        }
        loop {
            let Some(c) = self.ctrls.get_mut(key) else {
                return;
            };
            match c.stream.read(&mut self.buf) {
                Ok(0) => {
                    self.drop_conn(key, "peer closed the connection", now);
                    return;
                }
                Ok(n) => {
                    c.conn
                        .handle_input(&mut self.sw, now, &self.buf[..n], self.backend.transmit());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.drop_conn(key, &e.to_string(), now);
                    return;
                }
            }
        }
    }

    fn drop_conn(&mut self, key: usize, why: &str, now: Instant) {
        let Some(mut c) = self.ctrls.try_remove(key) else {
            return;
        };
        let _ = self.poll.registry().deregister(&mut c.stream);
        c.conn.close(&mut self.sw);
        if c.connected {
            tracing::info!(controller = %c.peer, reason = why, "controller connection closed");
        }
        if let Some(a) = c.active.and_then(|i| self.actives.get_mut(i)) {
            a.conn = None;
            let d = a.backoff.next_delay();
            a.retry_at = Some(now + d);
            tracing::debug!(controller = %a.addr, retry_in = ?d, "will reconnect");
        }
    }

    fn timers(&mut self, now: Instant) {
        if self.sw.poll_timeout().is_some_and(|t| t <= now) {
            self.sw.handle_timeout(now);
        }
        for (_, c) in self.ctrls.iter_mut() {
            if c.conn.poll_timeout().is_some_and(|t| t <= now) {
                c.conn.handle_timeout(now);
            }
        }
        for i in 0..self.actives.len() {
            let a = &mut self.actives[i];
            if a.conn.is_none() && a.retry_at.is_some_and(|t| t <= now) {
                a.retry_at = None;
                let addr = a.addr;
                match TcpStream::connect(addr) {
                    Ok(s) => {
                        let _ = s.set_nodelay(true);
                        self.add_conn(s, addr, Some(i), false, now);
                    }
                    Err(e) => {
                        let d = a.backoff.next_delay();
                        a.retry_at = Some(now + d);
                        tracing::debug!(controller = %addr, error = %e, "connect failed");
                    }
                }
            }
        }
        if now >= self.next_poll {
            self.next_poll = now + POLL;
            self.backend.update_counters(&mut self.sw);
            if !self.backend.reports_links() {
                for (port, up) in self.backend.links() {
                    update_link(&mut self.sw, port, up);
                }
            }
        }
    }

    fn dispatch_events(&mut self) {
        while let Some(ev) = self.sw.poll_event() {
            if let Event::PortStatus { reason, port } = &ev {
                tracing::debug!(port = port.no.0, ?reason, "port status");
            }
            for (_, c) in self.ctrls.iter_mut() {
                c.conn.deliver(&self.sw, &ev);
            }
        }
    }

    fn flush_conns(&mut self, now: Instant) {
        let mut dead = Vec::new();
        for (key, c) in self.ctrls.iter_mut() {
            while let Some(e) = c.conn.poll_event() {
                match e {
                    ConnEvent::Connected(v) => {
                        if let Some(a) = c.active.and_then(|i| self.actives.get_mut(i)) {
                            a.backoff.reset();
                        }
                        tracing::info!(controller = %c.peer, version = %v, "controller handshake done");
                    }
                    ConnEvent::Closed(reason) => dead.push((key, reason)),
                }
            }
            while c.connected && !c.conn.output().is_empty() {
                match c.stream.write(c.conn.output()) {
                    Ok(0) => break,
                    Ok(n) => c.conn.consume_output(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        dead.push((key, CloseReason::Local));
                        break;
                    }
                }
            }
        }
        for (key, reason) in dead {
            self.drop_conn(key, &reason.to_string(), now);
        }
    }
}

/// A runner on its own thread.
pub struct Running {
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<io::Result<()>>>,
    addrs: Vec<SocketAddr>,
}

impl Running {
    /// Starts `runner` on a new thread.
    pub fn spawn<B: Backend + 'static>(mut runner: Runner<B>) -> Running {
        let stop = Arc::new(AtomicBool::new(false));
        let waker = runner.waker();
        let addrs = runner.local_addrs();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("baton-switch".into())
            .spawn(move || runner.run(&flag))
            .ok();
        Running {
            stop,
            waker,
            thread,
            addrs,
        }
    }

    /// The passive targets' bound addresses.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Stops the loop and waits for it.
    pub fn stop(mut self) -> io::Result<()> {
        self.halt()
    }

    fn halt(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("switch thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}
