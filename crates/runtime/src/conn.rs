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

/// What applications know about switch `id` of this session.
pub(crate) fn switch_info(id: SwitchId, peer: Option<SocketAddr>, session: &Session) -> SwitchInfo {
    SwitchInfo {
        id,
        dpid: session.dpid(),
        version: session.version(),
        peer,
    }
}
