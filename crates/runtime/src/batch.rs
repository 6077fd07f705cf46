//! One batch's way through the controller ([`Batch`]): every message
//! through its switch's session first, then the events to the
//! applications, in arrival order per switch.
//!
//! The engine and the test harness both process batches here, so an
//! application tested with the harness meets exactly the code it runs on
//! in production.

use crate::conn::Connection;
use crate::context::BatchSwitches;
use crate::event::PacketInRecord;
use crate::pipeline::Pipeline;
use crate::session::{Event, PortChange};
use baton_openflow::Xid;
use baton_openflow::neutral::Message;
use std::time::Instant;

/// Where one message of a batch lies: which held switch, which bytes of
/// its receive buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MsgRef {
    pub conn: u32,
    pub at: u32,
    pub len: u32,
}

/// An event other than a packet-in, and how many packet-ins came before
/// it in the batch (so delivery keeps each switch's order).
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
        self.msgs.len()
    }

    /// Adds a message.
    pub fn push(&mut self, m: MsgRef) {
        self.msgs.push(m);
    }

    /// Takes the message positions out (the shared-queue reader hands
    /// them to a worker with their switch).
    pub fn drain_msgs(&mut self) -> impl Iterator<Item = MsgRef> + '_ {
        self.msgs.drain(..)
    }

    /// Runs the batch: each message through its switch's session at `now`,
    /// then the events through the pipeline (packet-ins in runs, other
    /// events between them where they arrived). Empties the batch.
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
                    self.records
                        .push(PacketInRecord::new(m.conn, m.at, m.len, &pi));
                    None
                }
                Event::SwitchUp => {
                    let after = self.records.len();
                    self.others.push(Other::Up {
                        conn: m.conn,
                        after,
                    });
                    None
                }
                Event::Ports(changes) => {
                    let after = self.records.len();
                    self.others.push(Other::Ports {
                        conn: m.conn,
                        after,
                        changes,
                    });
                    None
                }
                Event::Message { xid, msg } => {
                    let after = self.records.len();
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
                | Other::Message { after, .. } => after,
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
