//! What an application is handed: [`SwitchCtx`], one switch with
//! version-neutral ways to answer it, and [`PacketInBatch`], a batch of
//! PACKET_INs with the application's state for each switch.
//!
//! Replies to a switch are appended to its staged output and written with
//! the rest of the batch, one system call per switch (Beacon Alg. 2); the
//! context fills in the switch's version and a fresh xid, so application
//! code is the same for OpenFlow 1.0 and 1.3.

use crate::conn::{Connection, switch_info};
use crate::event::{PacketIn, PacketInRecord};
use crate::framing::RecvBuffer;
use crate::network::Network;
use crate::session::{CloseReason, Session};
use crate::switch::{SwitchId, SwitchInfo};
use baton_openflow::neutral::{self, FlowSpec, MatchSpec, Message, PacketOut, Payload, PortDesc};
use baton_openflow::{DatapathId, PortNo, Version, Xid};
use std::fmt;
use std::marker::PhantomData;
use std::net::SocketAddr;

/// One switch, as a handler sees it while the switch's worker owns it.
pub struct SwitchCtx<'a> {
    id: SwitchId,
    peer: Option<SocketAddr>,
    session: &'a mut Session,
    out: &'a mut Vec<u8>,
    net: &'a Network,
}

/// A message of one version offered to a switch of the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongVersion {
    /// The switch's version.
    pub switch: Version,
    /// The message's.
    pub message: Version,
}

impl fmt::Display for WrongVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an OpenFlow {} message for an OpenFlow {} switch",
            self.message, self.switch
        )
    }
}

impl std::error::Error for WrongVersion {}

impl<'a> SwitchCtx<'a> {
    pub(crate) fn new(conn: &'a mut Connection, net: &'a Network) -> SwitchCtx<'a> {
        let Connection {
            id,
            peer,
            session,
            out,
            ..
        } = conn;
        SwitchCtx {
            id: *id,
            peer: *peer,
            session,
            out,
            net,
        }
    }

    /// Id, datapath id, version, peer.
    pub fn info(&self) -> SwitchInfo {
        switch_info(self.id, self.peer, self.session)
    }

    /// The runtime's id of this connection.
    pub fn id(&self) -> SwitchId {
        self.id
    }

    /// The switch's datapath id.
    pub fn dpid(&self) -> DatapathId {
        self.session.dpid()
    }

    /// The negotiated OpenFlow version.
    pub fn version(&self) -> Version {
        self.session.version()
    }

    /// The switch's ports, in number order, as last described.
    pub fn ports(&self) -> impl Iterator<Item = &PortDesc> {
        self.session.ports()
    }

    /// One of the switch's ports.
    pub fn port(&self, no: PortNo) -> Option<&PortDesc> {
        self.session.port(no)
    }

    /// The whole network, to reach other switches (borrowed for as long as
    /// the context's, not its own borrow: it may be held while the context
    /// writes).
    pub fn net(&self) -> &'a Network {
        self.net
    }

    /// A fresh transaction id for a message to this switch.
    pub fn xid(&mut self) -> Xid {
        self.session.next_xid()
    }

    /// Installs a flow (an OFPC_ADD FLOW_MOD; on 1.3 in table 0 with one
    /// APPLY_ACTIONS instruction). A `buffer_id` in `flow` also sends the
    /// buffered packet through the new flow.
    ///
    /// The flow's cookie carries this application's tag in its top 16 bits
    /// ([`crate::AnyApp::cookie_tag`]) and `flow.cookie`'s low 48 bits, so
    /// the application's flows can be found and removed apart from others'
    /// ([`SwitchCtx::delete_own_flows`]).
    pub fn add_flow(&mut self, flow: &FlowSpec<'_>) {
        let (version, xid) = (self.version(), self.xid());
        let flow = FlowSpec {
            cookie: self.net.tag_cookie(flow.cookie),
            ..*flow
        };
        neutral::encode_flow_add(self.out, version, xid, &flow);
    }

    /// Deletes every flow this application installed on the switch, by
    /// its cookie tag. OpenFlow 1.0 cannot delete by cookie; there this
    /// sends nothing and returns false.
    pub fn delete_own_flows(&mut self) -> bool {
        let (Version::V13, Some((cookie, mask))) = (self.version(), self.net.own_cookie()) else {
            return false;
        };
        let xid = self.xid();
        neutral::encode_flow_delete_by_cookie(self.out, xid, cookie, mask);
        true
    }

    /// Deletes every flow that `match_` covers (not strict), only those
    /// that output to `out_port` unless it is [`PortNo::ANY`].
    pub fn delete_flows(&mut self, match_: &MatchSpec, out_port: PortNo) {
        let (version, xid) = (self.version(), self.xid());
        neutral::encode_flow_delete(self.out, version, xid, match_, out_port);
    }

    /// Sends a packet out: one the switch buffered, or a frame.
    pub fn packet_out(&mut self, po: &PacketOut<'_>) {
        let (version, xid) = (self.version(), self.xid());
        neutral::encode_packet_out(self.out, version, xid, po);
    }

    /// Lets the switch free the buffer of a packet-in that nobody will
    /// forward (a PACKET_OUT with no actions); nothing for an unbuffered
    /// one.
    pub fn drop_packet(&mut self, pi: &PacketIn<'_>) {
        if let Some(id) = pi.buffer_id() {
            self.packet_out(&PacketOut {
                payload: Payload::Buffered(id),
                in_port: pi.in_port(),
                actions: &[],
            });
        }
    }

    /// Sends any message of the switch's version, with a fresh xid.
    pub fn send(&mut self, msg: &Message) -> Result<Xid, WrongVersion> {
        if msg.version() != self.version() {
            return Err(WrongVersion {
                switch: self.version(),
                message: msg.version(),
            });
        }
        let xid = self.xid();
        msg.encode(xid, self.out);
        Ok(xid)
    }

    /// The switch's staged output, for the codec's encoders directly
    /// (written with the rest of the batch).
    pub fn out(&mut self) -> &mut Vec<u8> {
        self.out
    }
}

/// The switches a batch holds, by position, and what their owner does
/// when one of them comes up or must close (the runtime's bookkeeping, or
/// the test harness's).
pub(crate) trait BatchSwitches {
    /// Switch `i` of the batch, unless it is being closed.
    fn get(&mut self, i: usize) -> Option<&mut Connection>;
    /// Switch `i` must be closed after this batch.
    fn close(&mut self, i: usize, reason: CloseReason);
    /// Switch `i` finished its handshake; called before applications hear
    /// of it.
    fn switch_up(&mut self, i: usize);
    /// Whether the applications serve switch `i` ([`crate::Mastership`]).
    fn serves(&self, i: usize) -> bool;
    /// A message with `xid` from switch `i`: taken if it answers a request
    /// ([`crate::Network::request`]), handed back for the applications
    /// otherwise.
    fn reply(&mut self, i: usize, xid: Xid, msg: Message) -> Option<Message>;
}

/// A batch as the pipeline hands it to one application, whatever the
/// application's state type.
pub(crate) struct RawBatch<'b> {
    pub switches: &'b mut dyn BatchSwitches,
    pub records: &'b [PacketInRecord],
    /// The application's position in the pipeline.
    pub app: usize,
    pub net: &'b Network,
}

/// A batch of PACKET_INs, possibly from several switches (Maestro §3.3),
/// each switch's in arrival order, as one application sees it: those that
/// earlier applications did not stop, each with its switch and this
/// application's state `S` for that switch (McNettle's switch-local state:
/// no lock, since one worker serves a switch at a time).
pub struct PacketInBatch<'b, S> {
    raw: RawBatch<'b>,
    state: PhantomData<fn(&mut S)>,
}

/// One switch's consecutive packet-ins within a batch.
pub struct Events<'a> {
    records: &'a [PacketInRecord],
    recv: &'a RecvBuffer,
}

impl<'a> Events<'a> {
    /// The packet-ins not stopped so far, in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = PacketIn<'a>> + 'a {
        let recv = self.recv;
        self.records
            .iter()
            .filter(|r| !r.stopped.get())
            .map(move |r| PacketIn::new(r, recv.slice(r.frame_at, r.frame_len)))
    }
}

impl<'b, S: 'static> PacketInBatch<'b, S> {
    pub(crate) fn new(raw: RawBatch<'b>) -> Self {
        PacketInBatch {
            raw,
            state: PhantomData,
        }
    }

    /// Packet-ins that no earlier application stopped.
    pub fn len(&self) -> usize {
        self.raw.records.iter().filter(|r| !r.stopped.get()).count()
    }

    /// True when every packet-in was stopped earlier.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with each live packet-in, its switch and this
    /// application's state for the switch.
    pub fn for_each(&mut self, mut f: impl FnMut(&mut SwitchCtx<'_>, &mut S, &PacketIn<'_>)) {
        self.for_each_switch(|sw, state, events| {
            for pi in events.iter() {
                f(sw, state, &pi);
            }
        });
    }

    /// Calls `f` once per run of consecutive packet-ins from one switch,
    /// with the switch and this application's state for it looked up once
    /// for the run: for applications that work on a switch's packet-ins
    /// together (prefetching, say).
    pub fn for_each_switch(&mut self, mut f: impl FnMut(&mut SwitchCtx<'_>, &mut S, &Events<'_>)) {
        let RawBatch {
            switches,
            records,
            app,
            net,
        } = &mut self.raw;
        let mut rest: &[PacketInRecord] = records;
        while let Some(first) = rest.first() {
            let n = rest
                .iter()
                .position(|r| r.conn != first.conn)
                .unwrap_or(rest.len());
            let (run, after) = rest.split_at(n);
            rest = after;
            if run.iter().all(|r| r.stopped.get()) {
                continue;
            }
            let Some(conn) = switches.get(first.conn as usize) else {
                continue;
            };
            let Connection {
                id,
                peer,
                session,
                recv,
                out,
                states,
                ..
            } = conn;
            let Some(state) = states
                .get_mut(*app)
                .and_then(|s| s.as_mut())
                .and_then(|b| b.downcast_mut::<S>())
            else {
                continue;
            };
            let mut sw = SwitchCtx {
                id: *id,
                peer: *peer,
                session,
                out,
                net,
            };
            let events = Events { records: run, recv };
            f(&mut sw, state, &events);
        }
    }
}
