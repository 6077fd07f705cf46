//! Starting and stopping a runtime: listeners and the acceptor thread, the
//! worker threads of the chosen scheduler, and the keepalive thread.

use crate::app::{App, Network};
use crate::config::{Config, SchedulerKind};
use crate::conn::Conn;
use crate::engine::{Shared, VERSIONS};
use crate::sched::{queues, round_robin, shared_queue};
use crate::stats::{Snapshot, WorkerStats};
use crate::switch::{SwitchTable, TaskState, lock};
use baton_openflow::hello::Hello;
use baton_openflow::{DatapathId, Xid};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const ACCEPT_WAKER: Token = Token(usize::MAX - 1);

/// A running controller runtime. Dropping it stops it.
pub struct Runtime {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    wakers: Vec<Arc<Waker>>,
    local_addrs: Vec<SocketAddr>,
    queues: Option<Arc<queues::RunQueues>>,
}

impl Runtime {
    /// Binds the listeners, starts the threads, and starts the
    /// applications (in pipeline order).
    pub fn start(config: Config, apps: Vec<Arc<dyn App>>) -> io::Result<Runtime> {
        let workers = config.workers.max(1);
        let kind = config.scheduler;
        // One poller per worker for the run-queue schedulers; one shared
        // poller for round-robin and shared-queue.
        let pollers = match kind {
            SchedulerKind::RoundRobin | SchedulerKind::SharedQueue => 1,
            _ => workers,
        };
        let mut polls = Vec::with_capacity(pollers);
        let mut registries = Vec::with_capacity(pollers);
        let mut wakers = Vec::with_capacity(pollers);
        for _ in 0..pollers {
            let poll = Poll::new()?;
            registries.push(poll.registry().try_clone()?);
            wakers.push(Arc::new(Waker::new(poll.registry(), queues::WAKER)?));
            polls.push(poll);
        }
        let table = Arc::new(SwitchTable::new(
            config.max_switches,
            registries,
            config.max_output,
        ));
        let running = Arc::new(AtomicBool::new(true));
        let net = Network {
            table: table.clone(),
            running: running.clone(),
        };
        let shared = Arc::new(Shared {
            table,
            apps,
            bdu_ns: AtomicU64::new(config.bdu.as_nanos() as u64),
            config,
            net,
            dpids: Mutex::new(Default::default()),
            workers: (0..workers)
                .map(|_| Arc::new(WorkerStats::default()))
                .collect(),
        });

        // Listeners.
        let accept_poll = Poll::new()?;
        let mut listeners = Vec::new();
        let mut local_addrs = Vec::new();
        for (i, addr) in shared.config.listen.iter().enumerate() {
            let l = TcpListener::bind(*addr)?;
            l.set_nonblocking(true)?;
            accept_poll.registry().register(
                &mut SourceFd(&l.as_raw_fd()),
                Token(i),
                Interest::READABLE,
            )?;
            local_addrs.push(l.local_addr()?);
            listeners.push(l);
        }
        let accept_waker = Arc::new(Waker::new(accept_poll.registry(), ACCEPT_WAKER)?);

        for app in &shared.apps {
            app.start(&shared.net);
        }

        let mut threads = Vec::new();
        let mut queues_handle = None;
        let cores = if shared.config.pin {
            core_affinity::get_core_ids().unwrap_or_default()
        } else {
            Vec::new()
        };
        let spawn = |name: String, core: Option<usize>, f: Box<dyn FnOnce() + Send>| {
            let core_id = core.and_then(|c| cores.get(c % cores.len().max(1)).copied());
            std::thread::Builder::new().name(name).spawn(move || {
                if let Some(c) = core_id {
                    core_affinity::set_for_current(c);
                }
                f()
            })
        };
        match kind {
            SchedulerKind::RoundRobin => {
                let rr = Arc::new(round_robin::Shared::new(
                    &shared,
                    polls.pop().expect("one poller"),
                ));
                for w in 0..workers {
                    let (s, rr) = (shared.clone(), rr.clone());
                    threads.push(spawn(
                        format!("baton-worker-{w}"),
                        Some(w),
                        Box::new(move || round_robin::run_worker(s, rr, w)),
                    )?);
                }
            }
            SchedulerKind::SharedQueue => {
                let sq = Arc::new(shared_queue::Queue::new(wakers[0].clone()));
                let poll = polls.pop().expect("one poller");
                let (s, q) = (shared.clone(), sq.clone());
                threads.push(spawn(
                    "baton-reader".into(),
                    None,
                    Box::new(move || shared_queue::run_reader(s, q, poll)),
                )?);
                for w in 0..workers {
                    let (s, q) = (shared.clone(), sq.clone());
                    threads.push(spawn(
                        format!("baton-worker-{w}"),
                        Some(w),
                        Box::new(move || shared_queue::run_worker(s, q, w)),
                    )?);
                }
            }
            SchedulerKind::Fair
            | SchedulerKind::StaticPartition
            | SchedulerKind::DynamicPartition => {
                let q = Arc::new(queues::RunQueues::new(
                    workers,
                    wakers.clone(),
                    kind == SchedulerKind::Fair,
                ));
                for (w, poll) in polls.into_iter().enumerate() {
                    let (s, q) = (shared.clone(), q.clone());
                    threads.push(spawn(
                        format!("baton-worker-{w}"),
                        Some(w),
                        Box::new(move || queues::run_worker(s, q, w, poll)),
                    )?);
                }
                if kind == SchedulerKind::DynamicPartition {
                    let s = shared.clone();
                    threads.push(spawn(
                        "baton-repartition".into(),
                        None,
                        Box::new(move || queues::run_repartitioner(s, workers)),
                    )?);
                }
                queues_handle = Some(q);
            }
        }
        {
            let s = shared.clone();
            threads.push(spawn(
                "baton-accept".into(),
                None,
                Box::new(move || run_acceptor(s, accept_poll, listeners)),
            )?);
            let s = shared.clone();
            threads.push(spawn(
                "baton-keepalive".into(),
                None,
                Box::new(move || run_keepalive(s)),
            )?);
        }
        let mut all_wakers = wakers;
        all_wakers.push(accept_waker);
        Ok(Runtime {
            shared,
            threads,
            wakers: all_wakers,
            local_addrs,
            queues: queues_handle,
        })
    }

    /// The addresses actually bound (port 0 resolved).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// A handle for sending to switches and listing them.
    pub fn network(&self) -> Network {
        self.shared.net.clone()
    }

    /// Current statistics.
    pub fn stats(&self) -> Snapshot {
        Snapshot::take(&self.shared)
    }

    /// Changes the batching-delay upper bound while running (seed 000 §3.3).
    pub fn set_bdu(&self, bdu: Duration) {
        self.shared
            .bdu_ns
            .store(bdu.as_nanos() as u64, Ordering::Relaxed);
    }

    /// The scheduler in use.
    pub fn scheduler(&self) -> SchedulerKind {
        self.shared.config.scheduler
    }

    /// Stops every thread and closes every connection.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if !self.shared.net.running.swap(false, Ordering::AcqRel) {
            return;
        }
        for w in &self.wakers {
            let _ = w.wake();
        }
        if let Some(q) = &self.queues {
            q.wake_all();
        }
        for t in self.threads.drain(..) {
            t.thread().unpark();
            let _ = t.join();
        }
        // Close what is left.
        let table = &self.shared.table;
        let hw = table
            .high_water
            .load(Ordering::Acquire)
            .min(table.slots.len());
        for i in 0..hw {
            let slot = &table.slots[i];
            if slot.state() == TaskState::Free {
                continue;
            }
            if let Some(conn) = slot.take_conn() {
                slot.state
                    .store(TaskState::Running as u8, Ordering::Release);
                crate::engine::close(&self.shared, i, conn, "controller stopping");
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn run_acceptor(shared: Arc<Shared>, mut poll: Poll, listeners: Vec<TcpListener>) {
    let mut events = Events::with_capacity(64);
    let next_home = AtomicUsize::new(0);
    let pollers = shared.table.registries.len();
    while shared.net.is_running() {
        if let Err(e) = poll.poll(&mut events, Some(Duration::from_millis(200))) {
            if e.kind() != io::ErrorKind::Interrupted {
                tracing::error!(error = %e, "accept poll failed");
                return;
            }
        }
        for ev in events.iter() {
            let Some(listener) = listeners.get(ev.token().0) else {
                continue;
            };
            loop {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        let home = next_home.fetch_add(1, Ordering::Relaxed) % shared.workers.len();
                        let poller = if pollers == 1 { 0 } else { home };
                        if let Err(e) = admit(&shared, stream, peer, home, poller) {
                            tracing::warn!(%peer, error = %e, "could not admit switch");
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        // Out of file descriptors, for example: back off
                        // rather than spin.
                        tracing::warn!(error = %e, "accept failed");
                        std::thread::sleep(Duration::from_millis(10));
                        break;
                    }
                }
            }
        }
    }
}

/// Sets up a new connection: slot, HELLO, registration.
fn admit(
    shared: &Shared,
    stream: TcpStream,
    peer: SocketAddr,
    home: usize,
    poller: usize,
) -> io::Result<()> {
    let table = &shared.table;
    // `&TcpStream` reads and writes from any thread; registration with
    // epoll goes by file descriptor.
    stream.set_nonblocking(true)?;
    stream.set_nodelay(true)?;
    let Some(idx) = table.allocate() else {
        tracing::warn!(%peer, "switch table full; refusing connection");
        let _ = stream.shutdown(Shutdown::Both);
        return Ok(());
    };
    let slot = &table.slots[idx];
    let id = slot.id(idx);
    let stream = Arc::new(stream);
    // Our HELLO first (1.3.5 §6.3.1): header version = our highest, with a
    // bitmap of all we speak.
    let mut hello = Vec::with_capacity(16);
    Hello::baton().encode(
        *VERSIONS.iter().max().expect("versions"),
        Xid(0),
        &mut hello,
    );
    if let Err(e) = (&*stream).write_all(&hello) {
        table.release(idx);
        return Err(e);
    }
    slot.home.store(home, Ordering::Release);
    slot.last_rx_ms.store(table.now_ms(), Ordering::Release);
    slot.put_conn(Box::new(Conn::new(
        id,
        stream.clone(),
        peer,
        shared.apps.len(),
    )));
    lock(&slot.out).stream = Some(stream.clone());
    slot.state.store(TaskState::Idle as u8, Ordering::Release);
    tracing::debug!(%peer, switch = %id, "connection accepted");
    if let Err(e) = table.register(id, &stream, poller) {
        slot.take_conn();
        lock(&slot.out).stream = None;
        table.release(idx);
        return Err(e);
    }
    Ok(())
}

/// Sends ECHO_REQUESTs to quiet switches and drops silent ones.
fn run_keepalive(shared: Arc<Shared>) {
    let table = &shared.table;
    let cfg = &shared.config;
    let period =
        (cfg.echo_interval / 4).clamp(Duration::from_millis(10), Duration::from_millis(500));
    let interval_ms = cfg.echo_interval.as_millis() as u64;
    let timeout_ms = cfg.echo_timeout.as_millis() as u64;
    let mut buf = Vec::with_capacity(16);
    while shared.net.is_running() {
        std::thread::park_timeout(period);
        let now = table.now_ms();
        let hw = table
            .high_water
            .load(Ordering::Acquire)
            .min(table.slots.len());
        for i in 0..hw {
            let slot = &table.slots[i];
            if slot.state() == TaskState::Free || slot.kill.load(Ordering::Acquire) {
                continue;
            }
            let quiet = now.saturating_sub(slot.last_rx_ms.load(Ordering::Relaxed));
            if quiet >= timeout_ms {
                tracing::warn!(
                    dpid = %DatapathId(slot.dpid.load(Ordering::Relaxed)),
                    switch = %slot.id(i),
                    silent_ms = quiet,
                    "switch silent past the echo timeout; disconnecting"
                );
                slot.kill.store(true, Ordering::Release);
                if let Some(s) = lock(&slot.out).stream.as_ref() {
                    let _ = s.shutdown(Shutdown::Both);
                }
                continue;
            }
            if quiet >= interval_ms
                && slot.up.load(Ordering::Acquire)
                && slot.echo_sent_ms.load(Ordering::Relaxed) == 0
            {
                let Some(version) =
                    baton_openflow::Version::from_wire(slot.version.load(Ordering::Relaxed))
                else {
                    continue;
                };
                buf.clear();
                baton_openflow::neutral::encode_echo_request(&mut buf, version, Xid(0), b"baton");
                slot.echo_sent_ms.store(now.max(1), Ordering::Relaxed);
                let _ = table.send(slot.id(i), &buf);
            }
        }
    }
}
