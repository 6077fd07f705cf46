//! One emulated switch's connection: its buffers, its request generator,
//! the ring that matches responses to requests, and its counters.
//!
//! ## Matching responses to requests
//! Every PACKET_IN carries a fresh `buffer_id` (a per-switch counter that
//! skips `OFP_NO_BUFFER`). Its send time is kept in a ring indexed by the
//! low bits of the id. A FLOW_MOD or PACKET_OUT naming an id in the ring
//! *answers* that request (once: the slot is cleared), which yields its
//! latency. So a controller that answers one request with FLOW_MOD and
//! PACKET_OUT (os-ken) is counted twice as *responses* but once as
//! *requests answered*. A response naming an id older than the ring holds
//! (its slot was reused while still unanswered) counts as answered without
//! a latency sample. A switch whose controller never echoes buffer ids
//! falls back to `min(responses, requests)` (see
//! [`SwitchData::answered`]); in latency mode such a switch treats any
//! response as the answer to its one request in flight.
//!
//! ## Cost per message
//! In throughput mode the emulator must not be slower than the tools it is
//! compared with (cbench answers about 200 instructions per request): a
//! data PACKET_IN is a patched copy ([`crate::switch::DataPacketIns`]),
//! every message updates one [`Counts`] (folded into the per-segment and
//! per-second tables when the bin changes, [`Conn::settle`]), and only one
//! response in [`THROUGHPUT_LATENCY_SAMPLE`] is timed.

use crate::frames::{MAX_HOSTS, gateway_arp, gateway_port};
use crate::spec::Mode;
use crate::switch::{Incoming, ResponseKind, SwitchProto};
use baton_openflow::BufferId;
use hdrhistogram::Histogram;
use mio::Token;
use mio::net::TcpStream;
use std::io::{self, Read, Write};

/// Bytes of PACKET_INs a switch keeps queued in user space (cbench's
/// `BUFLEN`): enough to fill a TCP send buffer in a few writes, small
/// enough that a stalled controller cannot make the emulator hoard memory.
pub const WBUF_TARGET: usize = 64 * 1024;

/// Read buffer per connection: one maximal OpenFlow message plus room.
const RBUF_LEN: usize = 128 * 1024;

/// Reads per connection per loop iteration before moving on (fairness
/// among connections of one thread). A read that does not fill the buffer
/// has drained the socket and ends the turn without a read that would
/// fail with `EAGAIN` (nginx's `ngx_unix_recv` does the same): with
/// edge-triggered readiness, data arriving later raises a new edge.
const READ_BUDGET: usize = 4;

/// In throughput mode one response in this many (by buffer id) is timed.
/// Recording into the histogram costs about 60 instructions, an eighth of
/// a request's cost before this sampling; at millions of responses per
/// second one in 64 still gives tens of thousands of samples a second.
pub const THROUGHPUT_LATENCY_SAMPLE: u32 = 64;

/// In rate mode a switch's send buffer may hold this much of its own
/// traffic beyond [`WBUF_TARGET`], so a loop iteration that ran late (the
/// emulator was descheduled) does not turn into skipped requests.
pub const RATE_SLACK_US: u64 = 20_000;

/// In latency mode, a request unanswered this long is given up on
/// (counted in `timeouts`) so a lost answer cannot stall a switch.
pub const LATENCY_TIMEOUT_US: u64 = 1_000_000;

/// The probe switch's rate (Maestro §4.1: a 5 requests/s switch).
pub const PROBE_RATE: f64 = 5.0;

/// Request and response counts over some stretch of time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// PACKET_INs sent.
    pub sent: u64,
    /// Requests the rate schedule called for that did not fit the send
    /// buffer (rate mode; the controller was not reading).
    pub skipped: u64,
    /// Responses (FLOW_MOD ADD/MODIFY_STRICT plus non-LLDP PACKET_OUT).
    pub responses: u64,
    /// Of which FLOW_MODs.
    pub flow_mods: u64,
    /// Of which PACKET_OUTs.
    pub packet_outs: u64,
    /// Requests answered by a response naming their buffer id.
    pub answered_by_id: u64,
}

impl Counts {
    /// Adds `o` to `self`.
    pub fn add(&mut self, o: &Counts) {
        self.sent += o.sent;
        self.skipped += o.skipped;
        self.responses += o.responses;
        self.flow_mods += o.flow_mods;
        self.packet_outs += o.packet_outs;
        self.answered_by_id += o.answered_by_id;
    }
}

/// Everything measured about one switch.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SwitchData {
    /// Switch number (datapath id - 1).
    pub index: usize,
    /// True for the probe switch.
    pub probe: bool,
    /// Counts per schedule segment (0 = warm-up).
    pub per_segment: Vec<Counts>,
    /// Counts per second since traffic started.
    pub per_second: Vec<Counts>,
    /// Whether the controller's responses named this switch's buffer ids.
    pub ids_echoed: bool,
    /// Responses whose body the codec rejected (counted by type).
    pub malformed: u64,
    /// OFPT_ERRORs received.
    pub peer_errors: u64,
    /// The first OFPT_ERROR, rendered.
    pub first_error: Option<String>,
    /// Latency-mode requests given up on.
    pub timeouts: u64,
    /// Why the connection ended early, if it did.
    pub failure: Option<String>,
}

impl SwitchData {
    /// Requests answered in `c`: by buffer id when the controller echoes
    /// ids, else `min(responses, sent)`.
    pub fn answered(&self, c: &Counts) -> u64 {
        if self.ids_echoed {
            c.answered_by_id
        } else {
            c.responses.min(c.sent)
        }
    }
}

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not connected yet; connect at this time (µs since the epoch).
    Pending(u64),
    /// Non-blocking connect in progress.
    Connecting,
    /// HELLO sent, waiting for FEATURES_REQUEST.
    Handshake,
    /// FEATURES_REPLY sent.
    Up,
    /// Closed (see `data.failure`).
    Dead,
}

/// The time context of one loop iteration.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    /// µs since the epoch.
    pub us: u64,
    /// µs since traffic started, if it has.
    pub since_t0: Option<u64>,
    /// The schedule segment now, if traffic is running.
    pub segment: Option<usize>,
    /// The per-second bin now, if traffic is running.
    pub second: Option<usize>,
}

/// One emulated switch and its connection.
pub struct Conn {
    /// mio token (index in the thread's connection list).
    pub token: Token,
    /// The socket, once connecting.
    pub stream: Option<TcpStream>,
    /// Connection state.
    pub state: State,
    /// Readable edge not yet drained.
    pub readable: bool,
    /// Writable edge not yet exhausted.
    pub writable: bool,
    /// Measurements.
    pub data: SwitchData,
    proto: SwitchProto,
    /// The (segment, second) bin `bin_counts` belongs to.
    bin: Option<(usize, usize)>,
    bin_counts: Counts,
    /// Time the responses whose buffer id has these low bits clear.
    latency_mask: u32,
    rbuf: Box<[u8]>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    arp: Vec<u8>,
    macs: usize,
    next_host: usize,
    next_id: u32,
    ring: Box<[u64]>,
    ring_mask: u32,
    awaiting: Option<u32>,
    awaiting_since: u64,
    credit: f64,
    last_gen_us: Option<u64>,
    /// The gateway ARP has been sent.
    pub arp_sent: bool,
    /// Something answered after the ARP (or we stopped waiting).
    pub learned: bool,
}

impl Conn {
    /// A switch that will connect at `connect_at_us`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        token: Token,
        index: usize,
        probe: bool,
        proto: SwitchProto,
        macs: usize,
        ring_len: usize,
        segments: usize,
        seconds: usize,
        connect_at_us: u64,
    ) -> Conn {
        let ring_len = ring_len.next_power_of_two().max(16);
        Conn {
            token,
            stream: None,
            state: State::Pending(connect_at_us),
            readable: false,
            writable: false,
            data: SwitchData {
                index,
                probe,
                per_segment: vec![Counts::default(); segments],
                per_second: vec![Counts::default(); seconds],
                ids_echoed: false,
                malformed: 0,
                peer_errors: 0,
                first_error: None,
                timeouts: 0,
                failure: None,
            },
            proto,
            bin: None,
            bin_counts: Counts::default(),
            latency_mask: 0,
            rbuf: vec![0u8; RBUF_LEN].into_boxed_slice(),
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(WBUF_TARGET + 4096),
            wpos: 0,
            arp: gateway_arp(index),
            macs: macs.clamp(1, MAX_HOSTS),
            next_host: 0,
            next_id: 0,
            ring: vec![0u64; ring_len].into_boxed_slice(),
            ring_mask: (ring_len - 1) as u32,
            awaiting: None,
            awaiting_since: 0,
            credit: 0.0,
            last_gen_us: None,
            arp_sent: false,
            learned: false,
        }
    }

    /// Times only one response in `n` (a power of two; 1: every one).
    pub fn sample_latency_every(&mut self, n: u32) {
        self.latency_mask = n.max(1).next_power_of_two() - 1;
    }

    /// The counts of the bin of `now` (`None` before traffic).
    #[inline]
    fn counts(&mut self, now: &Now) -> Option<&mut Counts> {
        let key = (now.segment?, now.second?);
        if self.bin != Some(key) {
            self.settle();
            self.bin = Some(key);
        }
        Some(&mut self.bin_counts)
    }

    /// Adds the counts gathered since the last call to
    /// [`SwitchData::per_segment`] and [`SwitchData::per_second`].
    pub fn settle(&mut self) {
        if let Some((seg, sec)) = self.bin {
            let c = std::mem::take(&mut self.bin_counts);
            for t in [
                self.data.per_segment.get_mut(seg),
                self.data.per_second.get_mut(sec),
            ]
            .into_iter()
            .flatten()
            {
                t.add(&c);
            }
        }
    }

    /// Bytes queued but not yet written.
    pub fn pending(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Marks the connection dead with `why` (the first reason wins).
    pub fn fail(&mut self, why: String) {
        if self.data.failure.is_none() {
            self.data.failure = Some(why);
        }
        self.state = State::Dead;
        self.stream = None;
        self.readable = false;
        self.writable = false;
    }

    /// Queues the switch's HELLO.
    pub fn start_handshake(&mut self) {
        self.proto.encode_hello(&mut self.wbuf);
        self.state = State::Handshake;
    }

    /// Reads what is there (up to a budget) and handles every whole
    /// message. Returns true when the switch just came up.
    pub fn read(
        &mut self,
        now: &Now,
        hist: &mut [Histogram<u64>],
        probe: &mut Vec<(u64, u64)>,
    ) -> bool {
        let mut came_up = false;
        for _ in 0..READ_BUDGET {
            if self.rend == self.rbuf.len() {
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
            }
            let Some(stream) = self.stream.as_mut() else {
                return came_up;
            };
            match stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => {
                    self.fail("controller closed the connection".into());
                    return came_up;
                }
                Ok(n) => {
                    let drained = self.rend + n < self.rbuf.len();
                    self.rend += n;
                    came_up |= self.process(now, hist, probe);
                    if self.state == State::Dead {
                        return came_up;
                    }
                    if drained {
                        self.readable = false;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(format!("read: {e}"));
                    return came_up;
                }
            }
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        came_up
    }

    fn process(
        &mut self,
        now: &Now,
        hist: &mut [Histogram<u64>],
        probe: &mut Vec<(u64, u64)>,
    ) -> bool {
        let mut came_up = false;
        loop {
            let avail = &self.rbuf[self.rstart..self.rend];
            let len = match baton_openflow::frame(avail) {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(e) => {
                    self.fail(format!("unframeable input: {e}"));
                    break;
                }
            };
            let msg = &self.rbuf[self.rstart..self.rstart + len];
            let inc = self.proto.handle(msg, &mut self.wbuf);
            self.rstart += len;
            match inc {
                Incoming::Response {
                    kind,
                    buffer_id,
                    malformed,
                } => self.on_response(now, kind, buffer_id, malformed, hist, probe),
                Incoming::Uncounted => {
                    if self.arp_sent {
                        self.learned = true;
                    }
                }
                Incoming::Handled => {}
                Incoming::Up => {
                    if self.state == State::Handshake {
                        self.state = State::Up;
                        came_up = true;
                    }
                }
                Incoming::PeerError(e) => {
                    self.data.peer_errors += 1;
                    if self.data.first_error.is_none() {
                        self.data.first_error = Some(e);
                    }
                }
                Incoming::Fatal(e) => {
                    self.fail(e);
                    break;
                }
            }
        }
        came_up
    }

    fn on_response(
        &mut self,
        now: &Now,
        kind: ResponseKind,
        buffer_id: Option<BufferId>,
        malformed: bool,
        hist: &mut [Histogram<u64>],
        probe: &mut Vec<(u64, u64)>,
    ) {
        // cbench: nothing counts before the switch sent its first
        // PACKET_IN (e.g. a 1.3 table-miss FLOW_MOD).
        if !self.arp_sent {
            return;
        }
        self.learned = true;
        let mut answered = false;
        let mut sent_at = None;
        if let Some(b) = buffer_id {
            let slot = (b.0 & self.ring_mask) as usize;
            let e = self.ring[slot];
            if e != 0 && (e >> 32) as u32 == b.0 {
                self.ring[slot] = 0;
                self.data.ids_echoed = true;
                answered = true;
                sent_at = Some((e & 0xffff_ffff) - 1);
            } else {
                // Older than the ring holds: answered, without a latency.
                let age = self.next_id.wrapping_sub(b.0);
                if age > self.ring.len() as u32 && age < (1 << 31) {
                    self.data.ids_echoed = true;
                    answered = true;
                }
            }
            if answered && self.awaiting == Some(b.0) {
                self.awaiting = None;
            }
        } else if !self.data.ids_echoed {
            // Latency mode without ids: any response answers the request in
            // flight.
            if let Some(id) = self.awaiting.take() {
                let slot = (id & self.ring_mask) as usize;
                let e = self.ring[slot];
                if e != 0 && (e >> 32) as u32 == id {
                    self.ring[slot] = 0;
                    sent_at = Some((e & 0xffff_ffff) - 1);
                }
            }
        }
        if malformed {
            self.data.malformed += 1;
        }
        let Some(c) = self.counts(now) else {
            return;
        };
        c.responses += 1;
        match kind {
            ResponseKind::FlowMod => c.flow_mods += 1,
            ResponseKind::PacketOut => c.packet_outs += 1,
        }
        c.answered_by_id += u64::from(answered);
        let sampled = buffer_id.is_none_or(|b| b.0 & self.latency_mask == 0);
        let seg = now.segment.unwrap_or(0);
        if let Some(sent) = sent_at.filter(|_| sampled) {
            // Send times are kept as 32-bit µs since the epoch (71 min).
            let delay = (now.us as u32).wrapping_sub(sent as u32) as u64;
            if self.data.probe {
                if probe.len() < probe.capacity() {
                    probe.push((now.since_t0.unwrap_or(0), delay));
                }
            } else if let Some(h) = hist.get_mut(seg) {
                h.saturating_record(delay.max(1));
            }
        }
    }

    /// A fresh buffer id for a request sent now, its send time in the ring,
    /// and the request counted.
    #[inline(always)]
    fn new_request(&mut self, now: &Now) -> BufferId {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        if self.next_id == BufferId::NONE.0 {
            self.next_id = 0;
        }
        let slot = (id & self.ring_mask) as usize;
        // Stored +1 so that 0 means "free".
        self.ring[slot] = ((id as u64) << 32) | ((now.us as u32 as u64) + 1).min(0xffff_ffff);
        if let Some(c) = self.counts(now) {
            c.sent += 1;
        }
        BufferId(id)
    }

    /// Queues the next data PACKET_IN.
    #[inline(always)]
    fn send_one(&mut self, now: &Now) {
        let id = self.new_request(now);
        let host = self.next_host;
        self.next_host += 1;
        if self.next_host == self.macs {
            self.next_host = 0;
        }
        self.proto.encode_data_packet_in(&mut self.wbuf, id, host);
    }

    /// Queues the gateway ARP (once).
    pub fn send_arp(&mut self, now: &Now) {
        if !self.arp_sent {
            self.arp_sent = true;
            let id = self.new_request(now);
            self.proto
                .encode_packet_in(&mut self.wbuf, id, gateway_port(), &self.arp);
        }
    }

    fn compact(&mut self) {
        if self.wpos > 0 {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
    }

    /// Generates the requests due now. `rate` is this switch's rate in the
    /// current segment (rate mode and the probe).
    pub fn generate(&mut self, now: &Now, mode: Mode, rate: f64) {
        if self.state != State::Up || now.segment.is_none() {
            return;
        }
        self.compact();
        let mode = if self.data.probe { Mode::Rate } else { mode };
        match mode {
            Mode::Throughput => {
                // cbench's top-up: as many whole requests as fit in
                // WBUF_TARGET bytes.
                let len = self.proto.data_packet_in_len();
                while self.wbuf.len() + len <= WBUF_TARGET {
                    self.send_one(now);
                }
            }
            Mode::Latency => {
                if self.awaiting.is_some()
                    && now.us.saturating_sub(self.awaiting_since) > LATENCY_TIMEOUT_US
                {
                    self.awaiting = None;
                    self.data.timeouts += 1;
                }
                if self.awaiting.is_none() {
                    self.awaiting = Some(self.next_id);
                    self.awaiting_since = now.us;
                    self.send_one(now);
                }
            }
            Mode::Rate => {
                let t = now.since_t0.unwrap_or(0);
                let last = *self.last_gen_us.get_or_insert(t);
                self.credit += rate * t.saturating_sub(last) as f64 / 1e6;
                self.last_gen_us = Some(t);
                let due = self.credit.floor();
                if due < 1.0 {
                    return;
                }
                self.credit -= due;
                let due = due as u64;
                // Absorb a late loop iteration (up to RATE_SLACK_US of this
                // switch's requests) before calling requests skipped.
                let slack =
                    (rate * RATE_SLACK_US as f64 / 1e6) as usize * self.proto.data_packet_in_len();
                let cap = WBUF_TARGET.max(slack);
                let mut sent = 0;
                while sent < due && self.wbuf.len() < cap {
                    self.send_one(now);
                    sent += 1;
                }
                if sent < due {
                    if let Some(c) = self.counts(now) {
                        c.skipped += due - sent;
                    }
                }
            }
        }
    }

    /// Writes queued bytes once, if the socket is writable.
    pub fn flush(&mut self) {
        if !self.writable || self.pending() == 0 {
            return;
        }
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        match stream.write(&self.wbuf[self.wpos..]) {
            Ok(n) => {
                self.wpos += n;
                if self.wpos == self.wbuf.len() {
                    self.wbuf.clear();
                    self.wpos = 0;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable = false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => self.fail(format!("write: {e}")),
        }
    }
}
