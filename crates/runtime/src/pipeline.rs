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
use crate::env::{Change, Snapshot};
use crate::event::PacketInRecord;
use crate::network::{Network, SwitchInfo};
use crate::session::{Event, PortChange};
use baton_openflow::neutral::Message;
use std::time::Instant;

/// The applications, in pipeline order, each with its own handle on the
/// network (which tags the flows it installs with its cookie).
pub(crate) struct Pipeline {
    apps: Vec<(AnyApp, Network)>,
}

impl Pipeline {
    pub fn new(apps: Vec<AnyApp>, net: &Network) -> Pipeline {
        let apps = apps
            .into_iter()
            .map(|a| {
                let own = net.for_app(a.name(), a.cookie_tag(), a.erased().views());
                (a, own)
            })
            .collect();
        Pipeline { apps }
    }

    /// The applications' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.apps
            .iter()
            .map(|(a, _)| a.name().to_string())
            .collect()
    }

    /// Hands `changes` to each application that reads a changed view, in
    /// pipeline order, with the environment as it is now.
    pub fn views_changed(&self, snapshot: &Snapshot, changes: &[Change]) {
        for (app, net) in &self.apps {
            let Some(access) = net.access() else {
                continue;
            };
            let mine: Vec<Change> = changes
                .iter()
                .filter(|c| access.does_read(c.view))
                .copied()
                .collect();
            if !mine.is_empty() {
                app.erased().view_changed(net, snapshot, &mine);
            }
        }
    }

    /// Starts every application, in order.
    pub fn start(&self) {
        for (app, net) in &self.apps {
            app.erased().start(net);
        }
    }

    /// A switch came up: each application makes its state for it, then
    /// hears of each port already known to be live (1.0 lists them in
    /// FEATURES_REPLY).
    pub fn switch_up(&self, conn: &mut Connection) {
        let mut states = Vec::with_capacity(self.apps.len());
        for (app, net) in &self.apps {
            let mut sw = SwitchCtx::new(conn, net);
            states.push(Some(app.erased().switch_up(&mut sw)));
        }
        conn.states = states;
        let live: Vec<PortChange> = conn
            .session
            .ports()
            .filter(|p| p.is_live())
            .map(|p| PortChange::Up(p.clone()))
            .collect();
        self.ports(conn, &live);
    }

    /// Ports went up or down: each application hears of each change.
    fn ports(&self, conn: &mut Connection, changes: &[PortChange]) {
        for change in changes {
            for (i, (app, net)) in self.apps.iter().enumerate() {
                let Some(mut state) = conn.states.get_mut(i).and_then(Option::take) else {
                    continue;
                };
                app.erased()
                    .port(&mut SwitchCtx::new(conn, net), &mut *state, change);
                conn.states[i] = Some(state);
            }
        }
    }

    /// A switch went down: each application gets its state back.
    pub fn switch_down(&self, info: &SwitchInfo, states: Vec<AppState>) {
        for ((app, _), state) in self.apps.iter().zip(states) {
            if let Some(state) = state {
                app.erased().switch_down(info, state);
            }
        }
    }

    /// Hands `records` to each application in turn, until every one of
    /// them has been stopped.
    fn packet_ins(&self, switches: &mut dyn BatchSwitches, records: &[PacketInRecord]) {
        for (app, (a, net)) in self.apps.iter().enumerate() {
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
    fn message(&self, conn: &mut Connection, msg: &Message) {
        for (i, (app, net)) in self.apps.iter().enumerate() {
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
    Ports {
        conn: u32,
        after: usize,
        changes: Vec<PortChange>,
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
    pub fn process(&mut self, switches: &mut dyn BatchSwitches, pipeline: &Pipeline, now: Instant) {
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
                Event::Ports(changes) => {
                    let after = self.records.len();
                    self.others.push(Other::Ports {
                        conn: m.conn,
                        after,
                        changes,
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
                    if let Some(c) = switches.get(conn as usize) {
                        pipeline.switch_up(c);
                    }
                }
                Other::Ports { conn, changes, .. } => {
                    if let Some(c) = switches.get(conn as usize) {
                        pipeline.ports(c, &changes);
                    }
                }
                Other::Message { conn, msg, .. } => {
                    if let Some(c) = switches.get(conn as usize) {
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
