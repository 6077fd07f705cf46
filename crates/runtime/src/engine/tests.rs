//! The engine over switches in memory ([`SwitchIo`]), on a real
//! controller without sockets: what it reads, frames, answers and writes.

use super::*;
use crate::config::Config;
use crate::framing::RecvBuffer;
use crate::io::{Sockets, TransportError};
use crate::session::Session;
use crate::table::{SwitchTable, TaskState};
use crate::testing;
use baton_openflow::{DatapathId, Version, v10};
use std::sync::Mutex;

/// One switch's side of the connection.
#[derive(Default)]
struct Pipe {
    /// What the switch sent and the controller has not read.
    input: Vec<u8>,
    /// The switch closed its side.
    closed: bool,
    /// What the controller wrote, and in how many writes.
    output: Vec<u8>,
    writes: usize,
}

/// Switches' sockets as bytes in memory, by slot index.
#[derive(Default)]
struct Memory {
    pipes: Mutex<Vec<Pipe>>,
}

impl Memory {
    fn with<T>(&self, idx: usize, f: impl FnOnce(&mut Pipe) -> T) -> T {
        let mut pipes = lock(&self.pipes);
        if pipes.len() <= idx {
            pipes.resize_with(idx + 1, Pipe::default);
        }
        f(&mut pipes[idx])
    }

    fn send(&self, idx: usize, bytes: &[u8]) {
        self.with(idx, |p| p.input.extend_from_slice(bytes));
    }

    /// The messages the controller wrote to switch `idx` since the last
    /// call: (type, xid) of each, and the writes they took.
    fn received(&self, idx: usize) -> (Vec<(u8, u32)>, usize) {
        self.with(idx, |p| {
            let mut msgs = Vec::new();
            let mut rest = &p.output[..];
            while let Ok(Some(len)) = baton_openflow::frame(rest) {
                let xid = u32::from_be_bytes(rest[4..8].try_into().unwrap());
                msgs.push((rest[1], xid));
                rest = &rest[len..];
            }
            assert!(rest.is_empty(), "only whole messages are written");
            p.output.clear();
            (msgs, std::mem::take(&mut p.writes))
        })
    }
}

impl SwitchIo for Memory {
    fn read(
        &self,
        idx: usize,
        recv: &mut RecvBuffer,
        want: usize,
    ) -> Result<ReadOutcome, TransportError> {
        self.with(idx, |p| {
            if p.input.is_empty() {
                return Ok(if p.closed {
                    ReadOutcome::Eof
                } else {
                    ReadOutcome::WouldBlock
                });
            }
            let mut source = &p.input[..];
            let outcome = recv
                .fill_from(&mut source, want)
                .map_err(TransportError::Read)?;
            let read = p.input.len() - source.len();
            p.input.drain(..read);
            Ok(outcome)
        })
    }

    fn write(&self, id: SwitchId, bytes: &[u8], _msgs: u64, _wait: bool) -> Written {
        self.with(id.index(), |p| {
            p.output.extend_from_slice(bytes);
            p.writes += 1;
        });
        Written::Done
    }

    fn killed(&self, _idx: usize) -> Option<Closed> {
        None
    }

    fn output_paused(&self, _idx: usize) -> bool {
        false
    }

    fn why_silent(&self, _idx: usize, _now: Instant) -> Option<TransportError> {
        None
    }
}

const ECHO_REPLY: u8 = 3;
const FEATURES_REQUEST: u8 = 5;

/// A controller with no applications, an engine over `Memory`, and the
/// switches it has connected.
struct Bench {
    ctl: Arc<Controller>,
    io: Arc<Memory>,
    engine: Engine,
    tasks: Vec<Option<Task>>,
}

impl Bench {
    fn new() -> Bench {
        let table = Arc::new(SwitchTable::new(8, crate::Mastership::Standalone));
        let sockets = Arc::new(Sockets::new(table.clone(), Vec::new(), 1 << 20));
        let ctl = Arc::new(Controller::new(
            table,
            sockets,
            Vec::new(),
            Config::default(),
        ));
        let io = Arc::new(Memory::default());
        let engine = Engine::with_io(ctl.clone(), 0, io.clone());
        Bench {
            ctl,
            io,
            engine,
            tasks: Vec::new(),
        }
    }

    /// A switch connects and finishes its OpenFlow 1.0 handshake.
    fn connect(&mut self, dpid: u64) -> usize {
        let ctl = self.ctl.clone();
        let idx = ctl.table.allocate().unwrap();
        let slot = &ctl.table.slots[idx];
        slot.state.store(TaskState::Idle as u8, Ordering::Release);
        let mut hello = Vec::new();
        let session = Session::new(ctl.session, ctl.clock.now(), &mut hello);
        let conn = Connection::new(slot.id(idx), None, session);
        self.tasks
            .resize_with(self.tasks.len().max(idx + 1), || None);
        self.tasks[idx] = Some(Task {
            conn: Box::new(conn),
        });
        self.io.send(idx, &testing::hello(Version::V10));
        self.batch(&[idx]);
        let (msgs, _) = self.io.received(idx);
        let &(_, xid) = msgs
            .iter()
            .find(|m| m.0 == FEATURES_REQUEST)
            .expect("FEATURES_REQUEST after HELLO");
        let mut reply = Vec::new();
        testing::features_reply(Version::V10, DatapathId(dpid)).encode(Xid(xid), &mut reply);
        self.io.send(idx, &reply);
        self.batch(&[idx]);
        self.io.received(idx);
        assert!(slot.up.load(Ordering::Acquire), "handshake finished");
        idx
    }

    /// One batch serving `switches` in order, each taken and handed back
    /// as a scheduler does; the released ones.
    fn batch(&mut self, switches: &[usize]) -> Vec<Released> {
        for &idx in switches {
            let slot = &self.ctl.table.slots[idx];
            assert!(slot.transition(TaskState::Idle, TaskState::Running));
            let task = self.tasks[idx].take().expect("the switch is connected");
            self.engine.serve(idx, task, 64 * 1024);
        }
        let released = self.engine.process(false).to_vec();
        for r in &released {
            let slot = &self.ctl.table.slots[r.idx];
            self.tasks[r.idx] = slot.take_task();
            slot.finish_service(false);
        }
        released
    }
}

fn echo_requests(xids: std::ops::Range<u32>) -> Vec<u8> {
    let mut out = Vec::new();
    for xid in xids {
        v10::Message::EchoRequest(b"ping".to_vec()).encode(Xid(xid), &mut out);
    }
    out
}

#[test]
fn each_switch_gets_its_replies_in_one_write_per_batch() {
    let mut bench = Bench::new();
    let a = bench.connect(1);
    let b = bench.connect(2);
    bench.io.send(a, &echo_requests(100..150));
    bench.io.send(b, &echo_requests(200..230));
    let released = bench.batch(&[a, b]);
    assert_eq!(released.len(), 2);
    assert!(released.iter().all(|r| !r.ready), "all input was served");
    for (idx, xids) in [(a, 100..150), (b, 200..230)] {
        let (msgs, writes) = bench.io.received(idx);
        let want: Vec<(u8, u32)> = xids.map(|x| (ECHO_REPLY, x)).collect();
        assert_eq!(msgs, want, "switch {idx}: every request answered, in order");
        assert_eq!(writes, 1, "switch {idx}: one write for its batch");
    }
}

#[test]
fn a_message_split_across_reads_waits_for_its_rest() {
    let mut bench = Bench::new();
    let a = bench.connect(1);
    let request = echo_requests(7..8);
    let (head, tail) = request.split_at(5);
    bench.io.send(a, head);
    bench.batch(&[a]);
    assert_eq!(
        bench.io.received(a),
        (Vec::new(), 0),
        "nothing to answer yet"
    );
    bench.io.send(a, tail);
    bench.batch(&[a]);
    assert_eq!(bench.io.received(a), (vec![(ECHO_REPLY, 7)], 1));
}

#[test]
fn a_switch_that_closes_is_closed_and_counted() {
    let mut bench = Bench::new();
    let a = bench.connect(1);
    let b = bench.connect(2);
    // The last requests before it closes are still answered; the close
    // is read by the next service (a socket returns its data, then EOF).
    bench.io.send(a, &echo_requests(1..3));
    bench.io.with(a, |p| p.closed = true);
    bench.io.send(b, &echo_requests(9..10));
    bench.batch(&[a, b]);
    assert_eq!(bench.io.received(a).0, [(ECHO_REPLY, 1), (ECHO_REPLY, 2)]);
    assert_eq!(bench.io.received(b).0, [(ECHO_REPLY, 9)]);
    let released = bench.batch(&[a, b]);
    assert_eq!(released.iter().map(|r| r.idx).collect::<Vec<_>>(), [b]);
    assert_eq!(bench.ctl.table.slots[a].state(), TaskState::Free);
    assert_eq!(lock(&bench.ctl.stats.closed).get("peer_closed"), Some(&1));
}

#[test]
fn a_switch_with_nothing_left_holds_no_buffers_and_the_next_one_gets_them() {
    let mut bench = Bench::new();
    let a = bench.connect(1);
    let b = bench.connect(2);
    let conn = |bench: &Bench, idx: usize| -> (usize, bool) {
        let c = &bench.tasks[idx].as_ref().expect("released").conn;
        (c.out.capacity(), c.recv.has_memory())
    };
    bench.io.send(a, &echo_requests(1..40));
    bench.batch(&[a]);
    assert_eq!(bench.io.received(a).0.len(), 39);
    assert_eq!(
        conn(&bench, a),
        (0, false),
        "a holds nothing between services"
    );
    // b is served with the buffers a gave back, and answered as before.
    bench.io.send(b, &echo_requests(50..60));
    bench.batch(&[b]);
    let want: Vec<(u8, u32)> = (50..60).map(|x| (ECHO_REPLY, x)).collect();
    assert_eq!(bench.io.received(b), (want, 1));
    assert_eq!(conn(&bench, b), (0, false));
    // A switch with part of a message buffered keeps it, and its bytes.
    let request = echo_requests(70..71);
    let (head, tail) = request.split_at(5);
    bench.io.send(a, head);
    bench.batch(&[a, b]);
    assert!(conn(&bench, a).1, "a keeps the buffer that holds its bytes");
    bench.io.send(a, tail);
    bench.batch(&[a]);
    assert_eq!(bench.io.received(a), (vec![(ECHO_REPLY, 70)], 1));
    assert_eq!(conn(&bench, a), (0, false));
}

#[test]
fn a_switch_paying_back_a_whole_read_is_passed_over_without_being_taken() {
    const KB: usize = 1024;
    let mut bench = Bench::new();
    let a = bench.connect(1);
    let quantum = 16 * KB;
    assert!(
        !bench.engine.pass_over(a, quantum),
        "a switch without surplus is served"
    );
    // What Surplus Round Robin leaves after a 56 KB read at this quantum.
    let slot = &bench.ctl.table.slots[a];
    slot.surplus.store(40 * KB, Ordering::Relaxed);
    bench.io.send(a, &echo_requests(1..5));
    for left in [24 * KB, 8 * KB] {
        assert!(bench.engine.pass_over(a, quantum));
        assert_eq!(
            slot.surplus.load(Ordering::Relaxed),
            left,
            "a quantum paid back"
        );
    }
    assert!(
        !bench.engine.pass_over(a, quantum),
        "less than a quantum left: served"
    );
    assert_eq!(
        bench.io.received(a),
        (Vec::new(), 0),
        "a pass-over reads and answers nothing"
    );
    bench.batch(&[a]);
    let want: Vec<(u8, u32)> = (1..5).map(|x| (ECHO_REPLY, x)).collect();
    assert_eq!(bench.io.received(a), (want, 1), "its input waited for it");
}
