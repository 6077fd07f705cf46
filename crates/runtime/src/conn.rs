//! [`Connection`]: everything baton keeps for one switch that needs no
//! socket: its session, receive buffer, staged replies and each
//! application's switch-local state. The thread serving the switch owns
//! it (`table.rs` says how ownership moves between threads); the socket
//! itself travels beside it (`io.rs`).

use crate::framing::RecvBuffer;
use crate::session::Session;
use crate::switch::{SwitchId, SwitchInfo};
use std::any::Any;
use std::net::SocketAddr;

/// One application's state for one switch (its `App::Switch`, boxed);
/// `None` until the application saw the switch come up, or while it is
/// stopped.
pub(crate) type AppSwitchState = Option<Box<dyn Any + Send>>;

/// One switch connection, without its socket.
#[derive(Debug)]
pub(crate) struct Connection {
    /// The runtime's id of this connection.
    pub id: SwitchId,
    /// The remote address, where there is one.
    pub peer: Option<SocketAddr>,
    /// The OpenFlow session.
    pub session: Session,
    /// Received bytes and the messages chopped from them.
    pub recv: RecvBuffer,
    /// Replies produced for this switch in the current batch, written
    /// with one system call when the batch is flushed (Beacon Alg. 2).
    pub out: Vec<u8>,
    /// How much of `out` has been counted by message type (`counted`
    /// bytes, `counted_msgs` messages): counted while the bytes are still
    /// in the cache, at the end of the batch that staged them, rather
    /// than when they are written, perhaps several services later
    /// (issue 12, seventh session: BENCHMARKS.md's git history).
    pub counted: usize,
    /// Messages in `out[..counted]`.
    pub counted_msgs: u64,
    /// Per-application state, by pipeline position.
    pub states: Vec<AppSwitchState>,
    /// The pipeline generation the states match.
    pub generation: u64,
    /// The tracing span of this switch (`switch{id peer dpid}`): what is
    /// logged while its messages and events are handled carries it, so
    /// one switch's story can be followed (`RUST_LOG`).
    pub span: tracing::Span,
}

impl Connection {
    /// A new connection whose session is `session` (which has already
    /// written its HELLO somewhere).
    pub fn new(id: SwitchId, peer: Option<SocketAddr>, session: Session) -> Connection {
        let span = match peer {
            Some(peer) => tracing::info_span!("switch", %id, %peer, dpid = tracing::field::Empty),
            None => tracing::info_span!("switch", %id, dpid = tracing::field::Empty),
        };
        Connection {
            id,
            peer,
            session,
            recv: RecvBuffer::default(),
            out: Vec::new(),
            counted: 0,
            counted_msgs: 0,
            states: Vec::new(),
            generation: 0,
            span,
        }
    }

    /// What applications know about it.
    pub fn info(&self) -> SwitchInfo {
        switch_info(self.id, self.peer, &self.session)
    }
}

/// Buffers a thread takes back from the switches it served when they hold
/// nothing, and lends to the next switches it serves, so that the memory
/// it reads into and writes replies into is the memory it touched last,
/// still in its cache. When each switch kept buffers of its own, with 64
/// busy switches every service staged its replies in memory last touched
/// 63 services before, and the stores waited for it: the learning
/// switch's `respond`, which stages the FLOW_MOD, took 12-14% of the
/// worker's samples against 7% with the buffers lent (perf, 64 switches
/// under cbench; issue 28, BENCHMARKS.md "Buffers lent from switch to
/// switch"). And a switch idle between services holds no buffer: with
/// 10,000 switches in latency mode the controller's memory fell by
/// about two thirds.
///
/// Buffers only move or go (none is made here). A thread keeps as many
/// spares of each kind as the switches of its batch, and at least
/// [`SpareBuffers::KEEP`]: with a fixed 64, batches of more switches than
/// that (10,000 switches in latency mode) made buffers that their
/// switches then kept, +8.4% RSS from the second minute to the tenth of
/// the 10,000-switch soak. An empty buffer that finds the spares full is
/// freed rather than kept by its switch: kept, the buffers a burst had
/// grown (a read of up to a maximal message beyond what was buffered)
/// stayed with whichever switch held them last, and with 10,000 switches
/// and the network services the memory grew with every minute of traffic
/// (BENCHMARKS.md, the soak of issue 55).
#[derive(Debug, Default)]
pub(crate) struct SpareBuffers {
    out: Vec<Vec<u8>>,
    recv: Vec<Vec<u8>>,
}

impl SpareBuffers {
    /// The fewest spare buffers of each kind a thread may keep, however
    /// few switches its batches hold.
    pub const KEEP: usize = 64;

    /// Lends `conn` a spare buffer for each one it has none of.
    pub fn lend(&mut self, conn: &mut Connection) {
        if conn.out.capacity() == 0 {
            if let Some(out) = self.out.pop() {
                conn.out = out;
            }
        }
        if !conn.recv.has_memory() {
            if let Some(buf) = self.recv.pop() {
                conn.recv.give_memory(buf);
            }
        }
    }

    /// Takes `conn`'s buffers that hold nothing: back as spares while
    /// there are fewer than `most` of their kind, freed otherwise.
    pub fn take_back(&mut self, conn: &mut Connection, most: usize) {
        if conn.out.is_empty() && conn.out.capacity() > 0 {
            let out = std::mem::take(&mut conn.out);
            if self.out.len() < most {
                self.out.push(out);
            }
        }
        if let Some(buf) = conn.recv.take_memory_if_drained()
            && self.recv.len() < most
        {
            self.recv.push(buf);
        }
    }
}

/// What applications know about switch `id` of this session.
pub(crate) fn switch_info(id: SwitchId, peer: Option<SocketAddr>, session: &Session) -> SwitchInfo {
    SwitchInfo {
        id,
        dpid: session.dpid(),
        version: session.version(),
        peer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionConfig;
    use std::time::Instant;

    fn conn(index: u32) -> Connection {
        let session = Session::new(SessionConfig::default(), Instant::now(), &mut Vec::new());
        Connection::new(SwitchId::new(index, 0), None, session)
    }

    #[test]
    fn the_next_switch_gets_the_buffers_the_last_one_gave_back() {
        let mut spares = SpareBuffers::default();
        let (mut a, mut b) = (conn(0), conn(1));
        spares.lend(&mut a);
        a.out.extend_from_slice(&[1; 100]);
        a.recv.push(&[1, 0, 0, 8]);
        // Both hold something: a keeps them.
        spares.take_back(&mut a, SpareBuffers::KEEP);
        assert!(a.out.capacity() > 0 && a.recv.has_memory());
        a.out.clear();
        a.recv.push(&[0, 0, 0, 0]);
        a.recv.next_message().unwrap().expect("a whole message");
        let (out, recv) = (a.out.as_ptr(), a.recv.slice(0, 8).as_ptr());
        spares.take_back(&mut a, SpareBuffers::KEEP);
        assert_eq!((a.out.capacity(), a.recv.has_memory()), (0, false));
        spares.lend(&mut b);
        assert_eq!(b.out.as_ptr(), out, "b writes where a wrote");
        b.recv.push(&[9; 8]);
        assert_eq!(b.recv.slice(0, 8).as_ptr(), recv, "b reads where a read");
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_spares() {
        let mut spares = SpareBuffers::default();
        let mut conns: Vec<Connection> = (0..10).map(conn).collect();
        for c in &mut conns {
            c.out.reserve(64);
            c.recv.push(&[1, 0, 0, 8, 0, 0, 0, 0]);
            c.recv.next_message().unwrap();
            spares.take_back(c, 7);
        }
        assert_eq!(spares.out.len(), 7);
        assert_eq!(spares.recv.len(), 7);
        let kept = conns
            .iter()
            .filter(|c| c.out.capacity() > 0 || c.recv.has_memory());
        assert_eq!(kept.count(), 0, "past the bound, empty buffers are freed");
    }
}
