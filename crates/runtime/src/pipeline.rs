//! The applications in order ([`Pipeline`]), and one batch's way through
//! them ([`Batch`]): every message through its switch's session first,
//! then the events to the applications, in arrival order per switch.
//!
//! The engine and the test harness both process batches here, so an
//! application tested with the harness meets exactly the code it runs on
//! in production.

use crate::app::{AnyApp, Verdict};
use crate::conn::{AppState, Connection};
use crate::context::{BatchSwitches, RawBatch, SwitchCtx};
use crate::event::PacketInRecord;
use crate::network::{Network, SwitchInfo};
use crate::session::Event;
use baton_openflow::neutral::Message;
use std::time::Instant;

/// The applications, in pipeline order.
pub(crate) struct Pipeline {
    apps: Vec<AnyApp>,
}

impl Pipeline {
    pub fn new(apps: Vec<AnyApp>) -> Pipeline {
        Pipeline { apps }
    }

    /// The applications' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.apps.iter().map(|a| a.name().to_string()).collect()
    }

    /// Starts every application, in order.
    pub fn start(&self, net: &Network) {
        for app in &self.apps {
            app.erased().start(net);
        }
    }

    /// A switch came up: each application makes its state for it.
    pub fn switch_up(&self, conn: &mut Connection, net: &Network) {
        let mut states = Vec::with_capacity(self.apps.len());
        for app in &self.apps {
            let mut sw = SwitchCtx::new(conn, net);
            states.push(Some(app.erased().switch_up(&mut sw)));
        }
        conn.states = states;
    }

    /// A switch went down: each application gets its state back.
    pub fn switch_down(&self, info: &SwitchInfo, states: Vec<AppState>) {
        for (app, state) in self.apps.iter().zip(states) {
            if let Some(state) = state {
                app.erased().switch_down(info, state);
            }
        }
    }

    /// Hands `records` to each application in turn, until every one of
    /// them has been stopped.
    fn packet_ins(
        &self,
        switches: &mut dyn BatchSwitches,
        records: &[PacketInRecord],
        net: &Network,
    ) {
        for (app, a) in self.apps.iter().enumerate() {
            if records.iter().all(|r| r.stopped.get()) {
                break;
            }
            a.erased().packet_in(RawBatch {
                switches: &mut *switches,
                records,
                app,
                net,
            });
        }
    }

    /// Hands a message to each application in turn, until one stops it.
    fn message(&self, conn: &mut Connection, msg: &Message, net: &Network) {
        for (i, app) in self.apps.iter().enumerate() {
            // Out of the connection while the handler borrows the rest.
            let Some(mut state) = conn.states.get_mut(i).and_then(Option::take) else {
                continue;
            };
            let verdict = {
                let mut sw = SwitchCtx::new(conn, net);
                app.erased().message(&mut sw, &mut *state, msg)
            };
            conn.states[i] = Some(state);
            if verdict == Verdict::Stop {
                break;
            }
        }
    }
}

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
    Message {
        conn: u32,
        after: usize,
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
    pub fn process(
        &mut self,
        switches: &mut dyn BatchSwitches,
        pipeline: &Pipeline,
        net: &Network,
        now: Instant,
    ) {
        for i in 0..self.msgs.len() {
            let m = self.msgs[i];
            let Some(conn) = switches.get(m.conn as usize) else {
                continue;
            };
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
                Event::Message(msg) => {
                    let after = self.records.len();
                    self.others.push(Other::Message {
                        conn: m.conn,
                        after,
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
        self.msgs.clear();

        let mut from = 0;
        let mut others = std::mem::take(&mut self.others);
        for other in others.drain(..) {
            let after = match other {
                Other::Up { after, .. } | Other::Message { after, .. } => after,
            };
            if after > from {
                pipeline.packet_ins(switches, &self.records[from..after], net);
                from = after;
            }
            match other {
                Other::Up { conn, .. } => {
                    switches.switch_up(conn as usize);
                    if let Some(c) = switches.get(conn as usize) {
                        pipeline.switch_up(c, net);
                    }
                }
                Other::Message { conn, msg, .. } => {
                    if let Some(c) = switches.get(conn as usize) {
                        pipeline.message(c, &msg, net);
                    }
                }
            }
        }
        self.others = others;
        if from < self.records.len() {
            pipeline.packet_ins(switches, &self.records[from..], net);
        }
        self.records.clear();
    }
}
