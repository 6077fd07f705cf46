//! A PACKET_IN as applications receive it ([`PacketIn`]), and how a batch
//! keeps one.
//!
//! The session checks and reads each PACKET_IN once; the batch keeps the
//! fields and where the frame lies in its switch's receive buffer, in one
//! cache line. Every application, and every pass an application makes
//! over a batch, reads those fields.

use baton_openflow::neutral::{self, MatchSpec};
use std::cell::Cell;
use std::ops::Deref;

/// One PACKET_IN of a batch.
#[derive(Debug)]
pub(crate) struct PacketInRecord {
    /// The held switch it came from (an index into the batch's switches).
    pub conn: u32,
    /// Where its frame lies in that switch's receive buffer.
    pub frame_at: u32,
    /// The frame's length.
    pub frame_len: u32,
    /// The fields, without the frame.
    pub fields: neutral::PacketIn<'static>,
    /// An application consumed it: later ones do not see it.
    pub stopped: Cell<bool>,
}

// A batch holds a record per PACKET_IN from its framing to the
// applications' pass (thousands under load, past the L2 cache when each
// took three lines): one cache line each.
const _: () = assert!(std::mem::size_of::<PacketInRecord>() <= 64);

impl PacketInRecord {
    /// The record of `pi`, a message that lies at `msg_at..msg_at +
    /// msg_len` of switch `conn`'s receive buffer.
    pub fn new(conn: u32, msg_at: u32, msg_len: u32, pi: &neutral::PacketIn<'_>) -> Self {
        // The frame runs to the end of the message.
        let frame_len = pi.data().len() as u32;
        PacketInRecord {
            conn,
            frame_at: msg_at + msg_len - frame_len,
            frame_len,
            fields: pi.with_frame(&[]),
            stopped: Cell::new(false),
        }
    }
}

/// A PACKET_IN, parsed once by the session: every field of
/// [`neutral::PacketIn`] (through `Deref`: `in_port()`, `buffer_id()`,
/// `reason()`, `data()`, `eth_src()`, `key()`, `payload()`, ...), and
/// [`PacketIn::stop`] to consume it.
#[derive(Debug, Clone, Copy)]
pub struct PacketIn<'a> {
    record: &'a PacketInRecord,
    fields: neutral::PacketIn<'a>,
}

impl<'a> PacketIn<'a> {
    pub(crate) fn new(record: &'a PacketInRecord, frame: &'a [u8]) -> PacketIn<'a> {
        PacketIn {
            record,
            fields: record.fields.with_frame(frame),
        }
    }

    /// The exact match of the frame, for a flow that takes exactly this
    /// packet's flow: written from the frame when the flow is encoded
    /// ([`MatchSpec::ExactFrame`]).
    #[inline]
    pub fn exact_match(&self) -> MatchSpec<'a> {
        MatchSpec::exact_frame(self.fields.in_port(), self.fields.data())
    }

    /// Consumes the packet-in: applications later in the pipeline do not
    /// see it (Beacon's `Command.STOP`).
    #[inline]
    pub fn stop(&self) {
        self.record.stopped.set(true);
    }

    /// Whether an application consumed it.
    #[inline]
    pub fn is_stopped(&self) -> bool {
        self.record.stopped.get()
    }
}

impl<'a> Deref for PacketIn<'a> {
    type Target = neutral::PacketIn<'a>;

    #[inline]
    fn deref(&self) -> &neutral::PacketIn<'a> {
        &self.fields
    }
}
