//! The datapath model: ports, groups, meters, the buffer pool and the
//! extensions, and the execution of actions on a packet (output, packet-in,
//! groups, action sets, rewrites). The flow tables live beside it in
//! [`crate::switch::Switch`], which walks the pipeline and calls in here,
//! so executing a flow's actions never borrows the tables.
//!
//! Frames leave through a [`Transmit`] the caller passes in (a queue in
//! process, a ring on a real interface); controller-bound messages leave
//! as [`Event`]s for the connections to encode. Packet copies (a group
//! bucket's clone) come from a pool of reused buffers, so forwarding
//! allocates nothing once warmed up.

use crate::action::{Act, ActionSet, SetField};
use crate::buffer::BufferPool;
use crate::classifier::key_hash;
use crate::ext::{Extensions, PacketContext, Verdict};
use crate::group::GroupTable;
use crate::key::Key;
use crate::meter::MeterTable;
use crate::port::{CONFIG_NO_FLOOD, CONFIG_NO_FWD, CONFIG_NO_PACKET_IN, Port, Ports};
use crate::rewrite;
use crate::table::{FlowEntry, RemovedReason};
use baton_openflow::Version;
use baton_openflow::packet::FlowKey;
use baton_openflow::types::{BufferId, Cookie, PortNo, PortReason};
use std::collections::VecDeque;
use std::time::Instant;

/// Where frames leave the switch.
pub trait Transmit {
    /// Sends `frame` out of `port`.
    fn transmit(&mut self, port: PortNo, frame: &[u8]);
}

impl<F: FnMut(PortNo, &[u8])> Transmit for F {
    fn transmit(&mut self, port: PortNo, frame: &[u8]) {
        self(port, frame)
    }
}

/// Why a packet goes to the controller (`ofp_packet_in_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketInReason {
    /// No flow matched (1.0), or the table-miss flow sent it (1.3).
    NoMatch,
    /// An output action to the controller.
    Action,
    /// A TTL ran out (1.3 `OFPR_INVALID_TTL`).
    InvalidTtl,
}

/// A packet for the controllers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketIn {
    /// Why.
    pub reason: PacketInReason,
    /// Where it is buffered, or `BufferId::NONE`.
    pub buffer_id: BufferId,
    /// The frame's whole length.
    pub total_len: u16,
    /// Its input port.
    pub in_port: PortNo,
    /// The table that sent it.
    pub table_id: u8,
    /// The cookie of the flow that sent it (all ones when none did).
    pub cookie: Cookie,
    /// The pipeline metadata then.
    pub metadata: u64,
    /// The pipeline tunnel id then (1.3).
    pub tunnel_id: u64,
    /// The frame, or its first bytes when buffered.
    pub data: Vec<u8>,
}

/// A flow that left its table, for controllers that asked to know.
#[derive(Debug, Clone)]
pub struct FlowRemoved {
    /// Its table.
    pub table_id: u8,
    /// The flow, with its counters.
    pub entry: FlowEntry,
    /// Why.
    pub reason: RemovedReason,
    /// How long it lived, (seconds, nanoseconds).
    pub duration: (u32, u32),
}

/// A message the switch has for its controllers.
#[derive(Debug, Clone)]
pub enum Event {
    /// OFPT_PACKET_IN.
    PacketIn(PacketIn),
    /// OFPT_FLOW_REMOVED.
    FlowRemoved(Box<FlowRemoved>),
    /// OFPT_PORT_STATUS.
    PortStatus {
        /// Added, deleted or modified.
        reason: PortReason,
        /// The port's description then.
        port: Box<Port>,
    },
}

/// PACKET_INs queued beyond this are dropped (and counted): a controller
/// that cannot keep up must not make the switch grow without bound.
pub const MAX_QUEUED_EVENTS: usize = 65_536;

/// `OFPC_INVALID_TTL_TO_CONTROLLER` (1.3.5 §7.3.2).
pub const CONFIG_INVALID_TTL_TO_CONTROLLER: u16 = 1 << 2;

/// What a packet carries through the pipeline besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct PacketState {
    /// Input port.
    pub in_port: PortNo,
    /// Its fields, as last parsed.
    pub key: FlowKey,
    /// True when an action changed the frame since `key` was parsed.
    pub dirty: bool,
    /// Pipeline metadata.
    pub metadata: u64,
    /// Pipeline tunnel id (1.3 `OFPXMT_OFB_TUNNEL_ID`): 0 on arrival,
    /// since no port of this switch is a tunnel; a set-field changes it.
    pub tunnel_id: u64,
    /// The table being executed.
    pub table_id: u8,
    /// The cookie of the flow being executed (all ones outside flows).
    pub cookie: Cookie,
    /// True when that flow is a table-miss flow (priority 0, matches all).
    pub miss_flow: bool,
}

impl PacketState {
    /// The state of a frame entering the switch.
    pub fn new(in_port: PortNo, key: FlowKey) -> PacketState {
        PacketState {
            in_port,
            key,
            dirty: false,
            metadata: 0,
            tunnel_id: 0,
            table_id: 0,
            cookie: Cookie(u64::MAX),
            miss_flow: false,
        }
    }

    /// The fields, parsing the frame again if an action changed it.
    pub fn refresh(&mut self, frame: &[u8]) -> &FlowKey {
        if self.dirty {
            self.key = FlowKey::extract(self.in_port, frame);
            self.dirty = false;
        }
        &self.key
    }
}

/// The switch's datapath: everything but the flow tables.
#[derive(Debug)]
pub struct Datapath {
    /// The protocol version.
    pub version: Version,
    /// Ports.
    pub ports: Ports,
    /// Groups (1.3).
    pub groups: GroupTable,
    /// Meters (1.3).
    pub meters: MeterTable,
    /// Buffered packets.
    pub buffers: BufferPool,
    /// Extensions.
    pub ext: Extensions,
    /// `miss_send_len` (SET_CONFIG).
    pub miss_send_len: u16,
    /// `flags` (SET_CONFIG).
    pub config_flags: u16,
    /// Messages for the controllers.
    pub events: VecDeque<Event>,
    /// PACKET_INs dropped because the queue was full.
    pub dropped_events: u64,
    scratch: Vec<Vec<u8>>,
    buckets: Vec<usize>,
}

impl Datapath {
    /// An empty datapath.
    pub fn new(version: Version, n_buffers: usize) -> Datapath {
        Datapath {
            version,
            ports: Ports::default(),
            groups: GroupTable::default(),
            meters: MeterTable::default(),
            buffers: BufferPool::new(n_buffers),
            ext: Extensions::default(),
            miss_send_len: 128,
            config_flags: 0,
            events: VecDeque::new(),
            dropped_events: 0,
            scratch: Vec::new(),
            buckets: Vec::new(),
        }
    }

    /// A cleared packet buffer from the pool.
    pub fn take_buffer(&mut self) -> Vec<u8> {
        let mut b = self
            .scratch
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(2048));
        b.clear();
        b
    }

    /// Returns a buffer to the pool.
    pub fn put_buffer(&mut self, b: Vec<u8>) {
        if self.scratch.len() < 16 {
            self.scratch.push(b);
        }
    }

    /// Queues an event.
    pub fn push_event(&mut self, e: Event) {
        if matches!(e, Event::PacketIn(_)) && self.events.len() >= MAX_QUEUED_EVENTS {
            self.dropped_events += 1;
            return;
        }
        self.events.push_back(e);
    }

    /// Sends `frame` out of physical port `no`, counting it.
    #[inline]
    pub fn send(&mut self, no: PortNo, frame: &[u8], tx: &mut dyn Transmit) {
        let Some(p) = self.ports.get_mut(no) else {
            return;
        };
        if !p.is_live() || p.config & CONFIG_NO_FWD != 0 {
            p.counters.tx_dropped += 1;
            return;
        }
        p.counters.tx_packets += 1;
        p.counters.tx_bytes += frame.len() as u64;
        tx.transmit(no, frame);
    }

    /// Executes an output action.
    pub fn output(
        &mut self,
        now: Instant,
        st: &PacketState,
        port: PortNo,
        max_len: u16,
        frame: &[u8],
        tx: &mut dyn Transmit,
    ) {
        match port {
            PortNo::CONTROLLER => {
                let reason = if st.miss_flow {
                    PacketInReason::NoMatch
                } else {
                    PacketInReason::Action
                };
                self.packet_in(now, st, reason, max_len, frame);
            }
            PortNo::IN_PORT => self.send(st.in_port, frame, tx),
            PortNo::FLOOD | PortNo::ALL => {
                let all = port == PortNo::ALL;
                for n in 1..self.ports.end() {
                    let no = PortNo(n);
                    let ok = self
                        .ports
                        .get(no)
                        .is_some_and(|p| all || p.config & CONFIG_NO_FLOOD == 0);
                    if ok && no != st.in_port {
                        self.send(no, frame, tx);
                    }
                }
            }
            // OFPP_IN_PORT must be used to send a frame back where it came
            // from (1.0.0 §5.2.4, 1.3.5 §7.2.5).
            p if p == st.in_port => {}
            p => self.send(p, frame, tx),
        }
    }

    /// Queues a PACKET_IN: buffered with its first `max_len` bytes when a
    /// buffer is free (and `max_len` is not 1.3's `OFPCML_NO_BUFFER`),
    /// whole otherwise.
    pub fn packet_in(
        &mut self,
        now: Instant,
        st: &PacketState,
        reason: PacketInReason,
        max_len: u16,
        frame: &[u8],
    ) {
        if self
            .ports
            .get(st.in_port)
            .is_some_and(|p| p.config & CONFIG_NO_PACKET_IN != 0)
        {
            return;
        }
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.dropped_events += 1;
            return;
        }
        const NO_BUFFER: u16 = 0xffff;
        let buffered = if max_len == NO_BUFFER {
            None
        } else {
            self.buffers.store(now, st.in_port, frame)
        };
        let (buffer_id, len) = match buffered {
            Some(id) => (id, frame.len().min(usize::from(max_len))),
            None => (BufferId::NONE, frame.len()),
        };
        self.push_event(Event::PacketIn(PacketIn {
            reason,
            buffer_id,
            total_len: frame.len().min(usize::from(u16::MAX)) as u16,
            in_port: st.in_port,
            table_id: st.table_id,
            cookie: st.cookie,
            metadata: st.metadata,
            tunnel_id: st.tunnel_id,
            data: frame[..len].to_vec(),
        }));
    }

    /// Executes one action. Returns false when the packet must go no
    /// further (an extension dropped it, or its TTL ran out).
    pub fn exec(
        &mut self,
        now: Instant,
        st: &mut PacketState,
        act: &Act,
        frame: &mut Vec<u8>,
        tx: &mut dyn Transmit,
    ) -> bool {
        match act {
            Act::Output { port, max_len } => self.output(now, st, *port, *max_len, frame, tx),
            Act::Enqueue { port, .. } => self.output(now, st, *port, 0, frame, tx),
            Act::SetQueue(_) => {}
            Act::Group(g) => self.group(now, st, *g, frame, tx),
            Act::PushVlan(tpid) => {
                rewrite::push_vlan(frame, *tpid);
                st.dirty = true;
            }
            Act::PopVlan => {
                rewrite::pop_vlan(frame);
                st.dirty = true;
            }
            // A pipeline field: the frame does not change.
            Act::Set(SetField::TunnelId(id)) => st.tunnel_id = *id,
            Act::Set(s) => {
                rewrite::set_field(frame, s);
                st.dirty = true;
            }
            Act::SetNwTtl(t) => rewrite::set_ttl(frame, *t),
            Act::DecNwTtl => {
                if !rewrite::dec_ttl(frame) {
                    self.ttl_expired(now, st, frame);
                    return false;
                }
            }
            Act::PushMpls(t) => {
                rewrite::push_mpls(frame, *t);
                st.dirty = true;
            }
            Act::PopMpls(t) => {
                rewrite::pop_mpls(frame, *t);
                st.dirty = true;
            }
            Act::PushPbb(t) => {
                rewrite::push_pbb(frame, *t);
                st.dirty = true;
            }
            Act::PopPbb => {
                rewrite::pop_pbb(frame);
                st.dirty = true;
            }
            Act::SetMplsTtl(t) => rewrite::set_mpls_ttl(frame, *t),
            Act::CopyTtlOut => rewrite::copy_ttl_out(frame),
            Act::CopyTtlIn => rewrite::copy_ttl_in(frame),
            Act::DecMplsTtl => {
                if !rewrite::dec_mpls_ttl(frame) {
                    self.ttl_expired(now, st, frame);
                    return false;
                }
            }
            Act::Ext { index, data } => {
                let key = *st.refresh(frame);
                let ctx = PacketContext {
                    in_port: st.in_port,
                    key: &key,
                    now,
                };
                st.dirty = true;
                if self
                    .ext
                    .apply_action(usize::from(*index), &ctx, data, frame)
                    == Verdict::Drop
                {
                    return false;
                }
            }
        }
        true
    }

    /// A decrement found a TTL of 0 or 1: the packet is dropped, and sent
    /// to the controllers with reason `OFPR_INVALID_TTL` if they asked
    /// (`OFPC_INVALID_TTL_TO_CONTROLLER`, 1.3.5 §7.3.2).
    fn ttl_expired(&mut self, now: Instant, st: &PacketState, frame: &[u8]) {
        if self.config_flags & CONFIG_INVALID_TTL_TO_CONTROLLER != 0 {
            self.packet_in(now, st, PacketInReason::InvalidTtl, 0xffff, frame);
        }
    }

    /// Executes an action list in order.
    pub fn apply(
        &mut self,
        now: Instant,
        st: &mut PacketState,
        acts: &[Act],
        frame: &mut Vec<u8>,
        tx: &mut dyn Transmit,
    ) -> bool {
        acts.iter().all(|a| self.exec(now, st, a, frame, tx))
    }

    /// Executes an action set (1.3.5 §5.10).
    pub fn apply_set(
        &mut self,
        now: Instant,
        st: &mut PacketState,
        set: &ActionSet,
        frame: &mut Vec<u8>,
        tx: &mut dyn Transmit,
    ) {
        set.for_each(|a| self.exec(now, st, a, frame, tx));
    }

    /// Sends a copy of the packet through the chosen buckets of group `g`,
    /// each bucket's actions applied as an action set.
    pub fn group(
        &mut self,
        now: Instant,
        st: &mut PacketState,
        g: u32,
        frame: &[u8],
        tx: &mut dyn Transmit,
    ) {
        let hash = {
            let k = st.refresh(frame);
            let mut key = Key::of_frame(self.version, k, frame, 0);
            key.w[crate::key::slot::METADATA.word] = 0;
            key_hash(&key)
        };
        let mut chosen = std::mem::take(&mut self.buckets);
        self.groups.choose(g, hash, &self.ports, &mut chosen);
        if let Some(grp) = self.groups.get_mut(g) {
            grp.packets += 1;
            grp.bytes += frame.len() as u64;
        }
        for &b in &chosen {
            let mut set = ActionSet::default();
            match self
                .groups
                .get_mut(g)
                .and_then(|grp| grp.buckets.get_mut(b))
            {
                Some(bucket) => {
                    bucket.packets += 1;
                    bucket.bytes += frame.len() as u64;
                    set.write(&bucket.actions);
                }
                None => continue,
            }
            let mut copy = self.take_buffer();
            copy.extend_from_slice(frame);
            let mut bst = *st;
            self.apply_set(now, &mut bst, &set, &mut copy, tx);
            self.put_buffer(copy);
        }
        self.buckets = chosen;
    }

    /// Adds a port and announces it.
    pub fn port_added(&mut self, no: PortNo) {
        if let Some(p) = self.ports.get(no) {
            let port = Box::new(p.clone());
            self.push_event(Event::PortStatus {
                reason: PortReason::Add,
                port,
            });
        }
    }

    /// Announces a change to port `no`.
    pub fn port_modified(&mut self, no: PortNo) {
        if let Some(p) = self.ports.get(no) {
            let port = Box::new(p.clone());
            self.push_event(Event::PortStatus {
                reason: PortReason::Modify,
                port,
            });
        }
    }
}
