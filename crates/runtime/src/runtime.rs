//! Starting and stopping a runtime: listeners (TCP and TLS) and the
//! acceptor thread, the worker threads of the chosen scheduler, and the
//! timer thread (session keepalive and applications' timers).

use crate::app::AnyApp;
use crate::config::{Config, SchedulerKind};
use crate::conn::Connection;
use crate::controller::Controller;
use crate::dag::{Dag, DagSet};
use crate::io::{Sockets, Transport, WAKER, shut};
use crate::mastership::Mastership;
use crate::network::Network;
use crate::sched::{Readiness, queues, round_robin, shared_queue};
use crate::session::{CloseReason, Session};
use crate::stats::{Statistics, Tally};
use crate::sync::lock;
use crate::table::{SwitchTable, Task, TaskState};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running controller runtime. Dropping it stops it.
pub struct Runtime {
    ctl: Arc<Controller>,
    threads: Vec<JoinHandle<()>>,
    wakers: Vec<Arc<Waker>>,
    local_addrs: Vec<SocketAddr>,
    local_tls_addrs: Vec<SocketAddr>,
    readiness: Arc<Readiness>,
}

/// A listening socket and what its connections speak.
struct Listener {
    socket: TcpListener,
    /// `None`: plain TCP.
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Runtime {
    /// Binds the listeners, starts the threads, and starts the
    /// applications (in pipeline order).
    pub fn start(config: Config, apps: Vec<AnyApp>) -> io::Result<Runtime> {
        Runtime::start_with_dags(config, apps, Vec::new())
    }

    /// [`Runtime::start`] with application DAGs ([`crate::dag`]), run when
    /// their trigger fires, beside the applications' own (one of `dags`
    /// named like an application's own replaces it).
    pub fn start_with_dags(
        config: Config,
        apps: Vec<AnyApp>,
        dags: Vec<Dag>,
    ) -> io::Result<Runtime> {
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
            wakers.push(Arc::new(Waker::new(poll.registry(), WAKER)?));
            polls.push(poll);
        }
        let initial = if config.clustered {
            Mastership::Slave
        } else {
            Mastership::Standalone
        };
        let table = Arc::new(SwitchTable::new(config.max_switches, initial));
        let sockets = Arc::new(Sockets::new(table.clone(), registries, config.max_output));
        let mut ctl = Controller::new(table, sockets, apps, config);
        ctl.dags = DagSet::new(crate::dag::merged(ctl.pipeline.dags(), dags));
        let ctl = Arc::new(ctl);

        // Listeners.
        let accept_poll = Poll::new()?;
        let mut listeners = Vec::new();
        let mut local_addrs = Vec::new();
        let mut local_tls_addrs = Vec::new();
        let tls = ctl.config.tls.iter().flat_map(|t| {
            t.listen
                .iter()
                .map(move |addr| (*addr, Some(t.server.clone())))
        });
        let plain = ctl.config.listen.iter().map(|addr| (*addr, None));
        let recv_buffer = recv_buffer_to_ask(ctl.config.recv_buffer);
        for (i, (addr, tls)) in plain.chain(tls).enumerate() {
            let l = TcpListener::bind(addr).map_err(|e| {
                let over = if tls.is_some() { " (TLS)" } else { "" };
                io::Error::new(e.kind(), format!("cannot listen on {addr}{over}: {e}"))
            })?;
            l.set_nonblocking(true)?;
            if let Some(bytes) = recv_buffer {
                // Accepted sockets inherit it.
                rustix::net::sockopt::set_socket_recv_buffer_size(&l, bytes)?;
            }
            accept_poll.registry().register(
                &mut SourceFd(&l.as_raw_fd()),
                Token(i),
                Interest::READABLE,
            )?;
            match tls {
                Some(_) => local_tls_addrs.push(l.local_addr()?),
                None => local_addrs.push(l.local_addr()?),
            }
            listeners.push(Listener { socket: l, tls });
        }
        let accept_waker = Arc::new(Waker::new(accept_poll.registry(), WAKER)?);

        ctl.pipeline.start();
        ctl.dags.start_timers(&ctl.net);

        let mut threads = Vec::new();
        let cores = if ctl.config.pin {
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
        let readiness = match kind {
            SchedulerKind::RoundRobin => {
                let rr = Arc::new(round_robin::Readiness::new(
                    &ctl,
                    polls.pop().expect("one poller"),
                ));
                for w in 0..workers {
                    let (c, rr) = (ctl.clone(), rr.clone());
                    threads.push(spawn(
                        format!("baton-worker-{w}"),
                        Some(w),
                        Box::new(move || round_robin::run_worker(c, rr, w)),
                    )?);
                }
                Readiness::RoundRobin(rr)
            }
            SchedulerKind::SharedQueue => {
                let sq = Arc::new(shared_queue::Queue::new(wakers[0].clone()));
                let poll = polls.pop().expect("one poller");
                let (c, q) = (ctl.clone(), sq.clone());
                threads.push(spawn(
                    "baton-reader".into(),
                    None,
                    Box::new(move || shared_queue::run_reader(c, q, poll)),
                )?);
                for w in 0..workers {
                    let (c, q) = (ctl.clone(), sq.clone());
                    threads.push(spawn(
                        format!("baton-worker-{w}"),
                        Some(w),
                        Box::new(move || shared_queue::run_worker(c, q, w)),
                    )?);
                }
                Readiness::SharedQueue(sq)
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
                    let (c, q) = (ctl.clone(), q.clone());
                    threads.push(spawn(
                        format!("baton-worker-{w}"),
                        Some(w),
                        Box::new(move || queues::run_worker(c, q, w, poll)),
                    )?);
                }
                if kind == SchedulerKind::DynamicPartition {
                    let c = ctl.clone();
                    threads.push(spawn(
                        "baton-repartition".into(),
                        None,
                        Box::new(move || queues::run_repartitioner(c, workers)),
                    )?);
                }
                Readiness::Queues(q)
            }
        };
        let readiness = Arc::new(readiness);
        let _ = ctl.readiness.set(readiness.clone());
        {
            let c = ctl.clone();
            threads.push(spawn(
                "baton-accept".into(),
                None,
                Box::new(move || run_acceptor(c, accept_poll, listeners)),
            )?);
            let (c, r) = (ctl.clone(), readiness.clone());
            threads.push(spawn(
                "baton-timers".into(),
                None,
                Box::new(move || {
                    behind_the_workers();
                    run_timers(c, r)
                }),
            )?);
            let c = ctl.clone();
            threads.push(spawn(
                "baton-views".into(),
                None,
                Box::new(move || {
                    behind_the_workers();
                    run_views(c)
                }),
            )?);
        }
        let mut all_wakers = wakers;
        all_wakers.push(accept_waker);
        Ok(Runtime {
            ctl,
            threads,
            wakers: all_wakers,
            local_addrs,
            local_tls_addrs,
            readiness,
        })
    }

    /// The addresses actually bound for plain TCP (port 0 resolved).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// The addresses actually bound for TLS (port 0 resolved).
    pub fn local_tls_addrs(&self) -> &[SocketAddr] {
        &self.local_tls_addrs
    }

    /// A handle for sending to switches and listing them.
    pub fn network(&self) -> Network {
        self.ctl.net.clone()
    }

    /// Current statistics.
    pub fn stats(&self) -> Statistics {
        Statistics::take(
            self.ctl.table.snapshots(),
            &self.ctl.workers,
            &self.ctl.stats,
            &self.ctl.table.sent_elsewhere,
        )
    }

    /// Changes the batching-delay upper bound while running (Maestro §3.3).
    pub fn set_bdu(&self, bdu: Duration) {
        self.ctl
            .bdu_ns
            .store(bdu.as_nanos() as u64, Ordering::Relaxed);
    }

    /// The scheduler in use.
    pub fn scheduler(&self) -> SchedulerKind {
        self.ctl.config.scheduler
    }

    /// The operator's handle: switches, flows, applications, scheduler.
    pub fn control(&self) -> crate::control::Control {
        crate::control::Control::new(self.ctl.clone())
    }

    /// Stops every thread and closes every connection.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if !self.ctl.fabric.running.swap(false, Ordering::AcqRel) {
            return;
        }
        for w in &self.wakers {
            let _ = w.wake();
        }
        self.readiness.wake_all();
        self.ctl.fabric.env.wake();
        for t in self.threads.drain(..) {
            t.thread().unpark();
            let _ = t.join();
        }
        // Close what is left.
        let table = &self.ctl.table;
        for (i, slot) in table.used() {
            if slot.state() == TaskState::Free {
                continue;
            }
            if let Some(task) = slot.take_task() {
                slot.state
                    .store(TaskState::Running as u8, Ordering::Release);
                self.ctl.close(i, task, &CloseReason::Stopping.into());
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn run_acceptor(ctl: Arc<Controller>, mut poll: Poll, listeners: Vec<Listener>) {
    let mut events = Events::with_capacity(64);
    let next_home = AtomicUsize::new(0);
    let pollers = ctl.sockets.pollers();
    while ctl.is_running() {
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
                match listener.socket.accept() {
                    Ok((stream, peer)) => {
                        let home = next_home.fetch_add(1, Ordering::Relaxed) % ctl.workers.len();
                        let poller = if pollers == 1 { 0 } else { home };
                        let tls = listener.tls.as_ref();
                        if let Err(e) = admit(&ctl, stream, tls, peer, home, poller) {
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

/// The receive buffer (`SO_RCVBUF`) to ask for on the listening sockets,
/// which accepted sockets inherit (the kernel doubles it for its own
/// bookkeeping), as [`Config::recv_buffer`] says and why; `None` leaves
/// the switches' buffers to the kernel's autotuning: when `bytes` is 0,
/// or when `net.core.rmem_max` is below it (the kernel would cap the
/// buffer there and turn autotuning off), which is logged at `info`
/// (stock Debian's cap is below the default).
pub fn recv_buffer_to_ask(bytes: usize) -> Option<usize> {
    if bytes == 0 {
        return None;
    }
    let rmem_max = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok());
    if recv_buffer_fits(bytes, rmem_max) {
        return Some(bytes);
    }
    tracing::info!(
        recv_buffer = bytes,
        rmem_max,
        "switches' receive buffers left to the kernel's autotuning: net.core.rmem_max \
         is below recv_buffer (raise it to use recv_buffer)"
    );
    None
}

/// Whether a receive buffer of `bytes` may be asked for under the
/// kernel's cap `rmem_max` (unknown: no).
fn recv_buffer_fits(bytes: usize, rmem_max: Option<usize>) -> bool {
    rmem_max.is_some_and(|max| bytes <= max)
}

/// Sets up a new connection: slot, session (whose HELLO goes out at
/// once over TCP, and after the handshake over TLS), registration. A TLS
/// connection's handshake runs as its input arrives, like any input.
fn admit(
    ctl: &Controller,
    stream: TcpStream,
    tls: Option<&Arc<rustls::ServerConfig>>,
    peer: SocketAddr,
    home: usize,
    poller: usize,
) -> io::Result<()> {
    let table = &ctl.table;
    // `&TcpStream` reads and writes from any thread; registration with
    // epoll goes by file descriptor.
    stream.set_nonblocking(true)?;
    stream.set_nodelay(true)?;
    let Some(idx) = table.allocate() else {
        tracing::warn!(%peer, "switch table full; refusing connection");
        shut(&stream);
        return Ok(());
    };
    let now = ctl.clock.now();
    let transport = match tls {
        None => Transport::Tcp(stream),
        Some(config) => match Transport::tls(stream, config.clone(), now) {
            Ok(t) => t,
            Err(e) => {
                table.release(idx);
                return Err(io::Error::other(e));
            }
        },
    };
    let slot = &table.slots[idx];
    let id = slot.id(idx);
    let mut hello = Vec::with_capacity(16);
    let session = Session::new(ctl.session, now, &mut hello);
    if let Err(e) = transport.greet(&hello) {
        table.release(idx);
        return Err(e);
    }
    ctl.stats.accepted.fetch_add(1, Ordering::Relaxed);
    let mut tally = Tally::default();
    tally.count_all(&hello);
    tally.drain_into(&table.sent_elsewhere.tx);
    slot.home.store(home, Ordering::Release);
    *lock(&slot.peer) = Some(peer);
    slot.accepted_ms
        .store(ctl.clock.now_ms(), Ordering::Release);
    slot.wake_at_ms
        .store(ctl.clock.ms(session.next_timeout()), Ordering::Release);
    slot.put_task(Task {
        conn: Box::new(Connection::new(id, Some(peer), session)),
    });
    // The socket before the state: whoever serves the switch reads it.
    ctl.sockets.attach(idx, transport);
    // The state before registration: readiness finds the switch `Idle`.
    slot.state.store(TaskState::Idle as u8, Ordering::Release);
    tracing::debug!(%peer, switch = %id, tls = tls.is_some(), "connection accepted");
    if let Err(e) = ctl.sockets.register(id, poller) {
        slot.take_task();
        ctl.sockets.close(idx);
        table.release(idx);
        return Err(e);
    }
    Ok(())
}

/// How much lower than the workers the runtime schedules its background
/// threads, in nice steps: `baton-timers` (applications' timers, such as
/// `devices` aging hosts out and `topology`'s probes) and `baton-views`
/// (the applications' view handlers and the DAGs). Where they share a
/// core with a busy worker they still have their turn, about a tenth of
/// it (the kernel's weights for nice 10 against nice 0 are 110 against
/// 1,024), and on an idle core all of it; but a burst of their work no
/// longer takes the core from the switches. A MAC flood of a million
/// hosts aging out at once gave the DAGs 1.2 s of CPU in 3 s on the
/// worker's core, and the switches' p99 over those 12 s rose to 1.9-2.8x
/// that of the first 12 s; with this and `devices` aging hosts in
/// chunks, 1.2-1.5x (BENCHMARKS.md, the soak).
const BACKGROUND_NICE: i32 = 10;

/// Puts the calling thread behind the workers: [`BACKGROUND_NICE`] steps
/// lower (on Linux, nice is a thread's own), and under `SCHED_BATCH`,
/// which keeps that share of the core but never preempts a running worker
/// when woken (the kernel lets batch threads in at its tick or when the
/// worker waits). Under the default policy every view change woke
/// `baton-views` onto the worker's core at once: in cbench's latency mode
/// with the default applications, each new host's version of the hosts
/// took the core from the worker, 11,000 times a second (`perf stat`,
/// the worker's involuntary context switches), and its round trips
/// waited for the views thread. A thread whose policy or priority cannot
/// be changed runs as it is.
fn behind_the_workers() {
    use rustix::process::{getpriority_process, setpriority_process};
    use thread_priority::{
        NormalThreadSchedulePolicy, ThreadPriority, ThreadPriorityValue, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    let tid = Some(rustix::thread::gettid());
    let nice = match getpriority_process(tid) {
        Ok(nice) => nice,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read a background thread's priority");
            return;
        }
    };
    let lowered = (nice + BACKGROUND_NICE).min(19);
    // The crate sets a nice value with the policy (its priority of a
    // normal policy is one): the one wanted, found through its own
    // mapping, so that the thread never passes through a lower priority,
    // which a thread without CAP_SYS_NICE could not undo (it stayed at
    // nice 19).
    let batch = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Batch);
    let priority = (0..=*ThreadPriorityValue::MAX)
        .filter_map(|p| ThreadPriorityValue::try_from(p).ok())
        .map(ThreadPriority::Crossplatform)
        .find(|p| p.to_posix(batch).is_ok_and(|n| n == lowered))
        .unwrap_or(ThreadPriority::Min);
    if let Err(e) = set_thread_priority_and_policy(thread_native_id(), priority, batch) {
        tracing::warn!(error = ?e, "cannot schedule a background thread as a batch thread");
    }
    if let Err(e) = setpriority_process(tid, lowered) {
        tracing::warn!(error = %e, "cannot lower a background thread's priority");
    }
}

/// How often the timer thread looks for switches whose sessions need
/// service: a quarter of the echo interval (the keepalive is not precise
/// to more than that), between 10 ms and 500 ms.
fn timer_tick(ctl: &Controller) -> Duration {
    (ctl.config.echo_interval / 4).clamp(Duration::from_millis(10), Duration::from_millis(500))
}

/// Runs applications' timers when due, and hands switches whose sessions
/// need service (keepalive, dead-switch detection) to their scheduler,
/// which serves them like switches with input.
fn run_timers(ctl: Arc<Controller>, readiness: Arc<Readiness>) {
    let tick = timer_tick(&ctl);
    let timers = &ctl.fabric.timers;
    while ctl.is_running() {
        let now = Instant::now();
        let next = timers
            .next_due()
            .map_or(tick, |t| t.saturating_duration_since(now).min(tick));
        std::thread::park_timeout(next);
        if !ctl.is_running() {
            break;
        }
        timers.run_due(Instant::now(), &ctl.net);
        let now_ms = ctl.clock.now_ms();
        for (i, slot) in ctl.table.used() {
            if slot.state() != TaskState::Free && slot.wake_at_ms.load(Ordering::Relaxed) <= now_ms
            {
                readiness.ready(&ctl.table, i);
            }
        }
    }
}

/// Hands new versions of views to the applications that read them
/// ([`crate::App::view_changed`]), off the packet-in path, and runs the
/// DAGs they trigger.
fn run_views(ctl: Arc<Controller>) {
    let env = &ctl.fabric.env;
    while ctl.is_running() {
        let changes = env.take_changes(Duration::from_millis(200));
        if !changes.is_empty() {
            ctl.pipeline.views_changed(&env.snapshot(), &changes);
            ctl.dags
                .on_changes(&ctl.net, &changes, |app| ctl.pipeline.runs(app));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::net::sockopt::socket_recv_buffer_size;

    /// The policy and nice value of thread `tid` of this process, from
    /// `/proc` (`sched`'s `policy` line; `stat`'s 19th field).
    fn policy_and_nice(tid: i32) -> (u32, i32) {
        let task = format!("/proc/self/task/{tid}");
        let sched = std::fs::read_to_string(format!("{task}/sched")).expect("sched");
        let policy = sched
            .lines()
            .find_map(|l| l.strip_prefix("policy")?.trim().strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .expect("a policy line");
        let stat = std::fs::read_to_string(format!("{task}/stat")).expect("stat");
        // After the command's closing parenthesis: state is field 3.
        let after = &stat[stat.rfind(')').expect("comm") + 2..];
        let nice = after
            .split(' ')
            .nth(16)
            .and_then(|n| n.parse().ok())
            .expect("nice");
        (policy, nice)
    }

    #[test]
    fn a_background_thread_runs_as_a_batch_thread_behind_the_workers() {
        const SCHED_BATCH: u32 = 3;
        let (before, after) = std::thread::spawn(|| {
            let tid = rustix::thread::gettid().as_raw_nonzero().get();
            let before = policy_and_nice(tid);
            behind_the_workers();
            (before, policy_and_nice(tid))
        })
        .join()
        .expect("the thread");
        assert_eq!(after.0, SCHED_BATCH, "before: {before:?}, after: {after:?}");
        assert_eq!(
            after.1,
            (before.1 + BACKGROUND_NICE).min(19),
            "before: {before:?}"
        );
    }

    #[test]
    fn a_receive_buffer_is_asked_for_only_under_the_kernel_s_cap() {
        assert!(recv_buffer_fits(4 << 20, Some(4 << 20)));
        assert!(
            !recv_buffer_fits(4 << 20, Some(212_992)),
            "stock Debian's cap"
        );
        assert!(!recv_buffer_fits(4 << 20, None), "cap unknown");
    }

    #[test]
    fn switches_accepted_on_a_listener_inherit_its_receive_buffer() {
        // Above the kernel's default for a new TCP socket (tcp_rmem's
        // middle figure, 128 KiB) and below stock Debian's rmem_max.
        let bytes = 200 * 1024;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let before = {
            let _client =
                TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
            let (accepted, _) = listener.accept().expect("accept");
            socket_recv_buffer_size(&accepted).expect("SO_RCVBUF")
        };
        let asked = recv_buffer_to_ask(bytes);
        if let Some(bytes) = asked {
            rustix::net::sockopt::set_socket_recv_buffer_size(&listener, bytes).expect("set");
        }
        let _client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (accepted, _) = listener.accept().expect("accept");
        let after = socket_recv_buffer_size(&accepted).expect("SO_RCVBUF");
        if asked.is_some() {
            // Linux reports twice what was asked (its bookkeeping).
            assert!(after >= bytes, "asked {bytes}, got {after}");
            assert_ne!(after, before, "still the kernel's default");
        } else {
            assert_eq!(after, before, "left to autotuning");
        }
    }
}
