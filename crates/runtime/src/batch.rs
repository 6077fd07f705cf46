//! One batch's way through the controller ([`Batch`]): every message
//! through its switch's session first, then the events to the
//! applications, in arrival order per switch.
//!
//! A PACKET_IN of a switch that is up, nearly every message under load,
//! passes its session as the batch frames it ([`Batch::add`]) and becomes
//! the record the applications read there and then, while its bytes are
//! fresh from the read; every other message waits, with its place among
//! the records, for the sessions' pass ([`Batch::process`]).
//!
//! The engine and the test harness both process batches here, so an
//! application tested with the harness meets exactly the code it runs on
//! in production.

use crate::conn::Connection;
use crate::context::BatchSwitches;
use crate::event::PacketInRecord;
use crate::framing::RecvBuffer;
use crate::pipeline::Pipeline;
use crate::session::{Event, PortChange, Session};
use baton_openflow::Xid;
use baton_openflow::neutral::Message;
use std::time::Instant;

/// Where one message for the sessions' pass lies: which held switch,
/// which bytes of its receive buffer, and how many PACKET_IN records the
/// batch had when it was framed (its events come after those).
#[derive(Debug, Clone, Copy)]
struct MsgRef {
    conn: u32,
    at: u32,
    len: u32,
    after: u32,
}

/// An event of the sessions' pass, and how many of the batch's records
/// came before it (so delivery keeps each switch's order).
#[derive(Debug)]
enum Other {
    Up {
        conn: u32,
        after: usize,
    },
    Ports {
        conn: u32,
        after: usize,
        changes: Vec<PortChange>,
    },
    Message {
        conn: u32,
        after: usize,
        xid: Xid,
        msg: Message,
    },
    /// A PACKET_IN the sessions' pass read (the first of a switch that came
    /// up in this batch): delivered alone, in its place.
    PacketIn {
        after: usize,
        record: PacketInRecord,
    },
}

/// One batch under construction, with buffers reused from batch to batch.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    msgs: Vec<MsgRef>,
    records: Vec<PacketInRecord>,
    others: Vec<Other>,
}

impl Batch {
    /// Messages in the batch.
    pub fn len(&self) -> usize {
        self.msgs.len() + self.records.len()
    }

    /// Adds the message at `at..at + len` of held switch `conn`'s receive
    /// buffer `recv`, received at `now`: a PACKET_IN its session takes the
    /// fast way ([`Session::packet_in`]) becomes a record now, anything
    /// else waits for the sessions' pass.
    #[inline]
    pub fn add(
        &mut self,
        conn: u32,
        session: &mut Session,
        recv: &RecvBuffer,
        (at, len): (u32, u32),
        now: Instant,
    ) {
        match session.packet_in(recv.slice(at, len), now) {
            Some(pi) => self.records.push(PacketInRecord::new(conn, at, len, &pi)),
            None => self.msgs.push(MsgRef {
                conn,
                at,
                len,
                after: self.records.len() as u32,
            }),
        }
    }

    /// Moves the batch's contents (one switch's, held as `0`) into `spare`,
    /// emptied, and returns it: the shared-queue reader hands them to a
    /// worker with their switch.
    pub fn take_into(&mut self, mut spare: Batch) -> Batch {
        spare.msgs.clear();
        spare.records.clear();
        std::mem::swap(&mut spare.msgs, &mut self.msgs);
        std::mem::swap(&mut spare.records, &mut self.records);
        spare
    }

    /// Adds what [`Batch::take_into`] took, its switch now held as `conn`;
    /// `part` is left empty for reuse.
    pub fn append(&mut self, part: &mut Batch, conn: u32) {
        let base = self.records.len() as u32;
        self.msgs.extend(part.msgs.drain(..).map(|m| MsgRef {
            conn,
            after: m.after + base,
            ..m
        }));
        self.records.extend(part.records.drain(..).map(|mut r| {
            r.conn = conn;
            r
        }));
    }

    /// Runs the batch: each message not yet read through its switch's
    /// session at `now`, then the events through the pipeline (packet-ins
    /// in runs, other events between them where they arrived). Empties the
    /// batch.
    pub fn process(&mut self, switches: &mut dyn BatchSwitches, pipeline: &Pipeline, now: Instant) {
        // The session logs only at debug level (malformed messages), in
        // its switch's span: entered once per run of the switch's messages,
        // and only when debug lines can be printed at all. Entering and
        // leaving a span costs the fmt subscriber hundreds of instructions,
        // and the default scheduler's small quanta (a dozen messages per
        // run at 64 switches) made it 32 of the 1,351 instructions per
        // response (BENCHMARKS.md, "Fairness and the schedulers"; the figure is in its git history).
        let spans = tracing::level_enabled!(tracing::Level::DEBUG);
        let mut entered: Option<(u32, tracing::span::EnteredSpan)> = None;
        for i in 0..self.msgs.len() {
            let m = self.msgs[i];
            let Some(conn) = switches.get(m.conn as usize) else {
                continue;
            };
            if spans && entered.as_ref().is_none_or(|(c, _)| *c != m.conn) {
                drop(entered.take());
                entered = Some((m.conn, conn.span.clone().entered()));
            }
            let Connection {
                session, recv, out, ..
            } = conn;
            let close = match session.handle(recv.slice(m.at, m.len), now, out) {
                Event::Nothing => None,
                Event::PacketIn(pi) => {
                    self.others.push(Other::PacketIn {
                        after: m.after as usize,
                        record: PacketInRecord::new(m.conn, m.at, m.len, &pi),
                    });
                    None
                }
                Event::SwitchUp => {
                    let after = m.after as usize;
                    self.others.push(Other::Up {
                        conn: m.conn,
                        after,
                    });
                    None
                }
                Event::Ports(changes) => {
                    let after = m.after as usize;
                    self.others.push(Other::Ports {
                        conn: m.conn,
                        after,
                        changes,
                    });
                    None
                }
                Event::Message { xid, msg } => {
                    let after = m.after as usize;
                    self.others.push(Other::Message {
                        conn: m.conn,
                        after,
                        xid,
                        msg,
                    });
                    None
                }
                Event::Close(reason) => Some(reason),
            };
            if let Some(reason) = close {
                switches.close(m.conn as usize, reason);
            }
        }
        drop(entered);
        self.msgs.clear();

        let mut from = 0;
        let mut others = std::mem::take(&mut self.others);
        for other in others.drain(..) {
            let after = match other {
                Other::Up { after, .. }
                | Other::Ports { after, .. }
                | Other::Message { after, .. }
                | Other::PacketIn { after, .. } => after,
            };
            if after > from {
                pipeline.packet_ins(switches, &self.records[from..after]);
                from = after;
            }
            match other {
                Other::Up { conn, .. } => {
                    switches.switch_up(conn as usize);
                    let serves = switches.serves(conn as usize);
                    if let Some(c) = switches.get(conn as usize) {
                        let _span = c.span.clone().entered();
                        if serves {
                            pipeline.switch_up(c);
                        } else {
                            pipeline.switch_unserved(c);
                        }
                    }
                }
                Other::Ports { conn, changes, .. } => {
                    if let Some(c) = switches.get(conn as usize) {
                        let _span = c.span.clone().entered();
                        pipeline.ports(c, &changes);
                    }
                }
                Other::PacketIn { record, .. } => {
                    pipeline.packet_ins(switches, std::slice::from_ref(&record));
                }
                Other::Message { conn, xid, msg, .. } => {
                    let Some(msg) = switches.reply(conn as usize, xid, msg) else {
                        continue;
                    };
                    if let Some(c) = switches.get(conn as usize) {
                        let _span = c.span.clone().entered();
                        pipeline.message(c, &msg);
                    }
                }
            }
        }
        self.others = others;
        if from < self.records.len() {
            pipeline.packet_ins(switches, &self.records[from..]);
        }
        self.records.clear();
    }
}
