//! Frames in flight: a time-ordered queue of frames on their way to a
//! switch port or a host, with the frame buffers reused.
//!
//! A binary heap ordered by due time, then by the order of sending, so
//! frames on one link arrive in the order they were sent and frames due
//! at the same instant leave in a fixed order (the emulator is
//! deterministic given its inputs). Links may have delays of their own,
//! so a plain FIFO would not do. A frame's bytes live in a `Vec` taken
//! from a pool of spare buffers and given back after delivery
//! ([`LinkQueue::recycle`]): once the pool has warmed up, sending a frame
//! allocates nothing.

use crate::graph::{End, HostId, LinkId};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Spare buffers kept for reuse; beyond this (after a burst) they are
/// freed.
pub const MAX_SPARE: usize = 65_536;

/// Where a frame in flight is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// A switch port. `link` is the link it crosses, with the link's
    /// generation when it was sent (a frame sent before a cut is lost even
    /// if the link is up again when it arrives); `None` for a host's
    /// frame entering its switch.
    Switch {
        /// The port it arrives on.
        end: End,
        /// The link and its generation, if it crosses one.
        link: Option<(LinkId, u32)>,
    },
    /// A host.
    Host(HostId),
}

/// A frame that is due.
#[derive(Debug)]
pub struct Frame {
    /// When it arrives, in nanoseconds of the network's clock.
    pub due: u64,
    /// Where.
    pub dest: Dest,
    /// Its bytes (give them back with [`LinkQueue::recycle`]).
    pub bytes: Vec<u8>,
}

#[derive(Debug)]
struct Entry {
    due: u64,
    seq: u64,
    dest: Dest,
    bytes: Vec<u8>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        (self.due, self.seq) == (other.due, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so the max-heap yields the earliest frame first.
    fn cmp(&self, other: &Entry) -> Ordering {
        (other.due, other.seq).cmp(&(self.due, self.seq))
    }
}

/// The frames in flight.
#[derive(Debug, Default)]
pub struct LinkQueue {
    heap: BinaryHeap<Entry>,
    spare: Vec<Vec<u8>>,
    next_seq: u64,
}

impl LinkQueue {
    /// An empty queue.
    pub fn new() -> LinkQueue {
        LinkQueue::default()
    }

    /// Sends a copy of `frame` to `dest`, arriving at `due`.
    pub fn push(&mut self, due: u64, dest: Dest, frame: &[u8]) {
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(frame);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            due,
            seq,
            dest,
            bytes,
        });
    }

    /// When the next frame arrives.
    pub fn next_due(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.due)
    }

    /// The earliest frame, if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Frame> {
        if self.heap.peek()?.due > now {
            return None;
        }
        let e = self.heap.pop()?;
        Some(Frame {
            due: e.due,
            dest: e.dest,
            bytes: e.bytes,
        })
    }

    /// Gives a delivered frame's buffer back for reuse.
    pub fn recycle(&mut self, bytes: Vec<u8>) {
        if self.spare.len() < MAX_SPARE {
            self.spare.push(bytes);
        }
    }

    /// Frames in flight.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SwitchId;

    fn host(h: u32) -> Dest {
        Dest::Host(HostId(h))
    }

    #[test]
    fn earliest_first_and_in_sending_order_at_equal_times() {
        let mut q = LinkQueue::new();
        q.push(30, host(0), b"c");
        q.push(10, host(1), b"a1");
        q.push(20, host(2), b"b");
        q.push(10, host(3), b"a2");
        q.push(10, host(4), b"a3");
        assert_eq!(q.next_due(), Some(10));
        assert!(q.pop_due(9).is_none(), "nothing is due before 10");
        let mut got = Vec::new();
        while let Some(f) = q.pop_due(25) {
            got.push((f.due, f.dest, f.bytes.clone()));
            q.recycle(f.bytes);
        }
        assert_eq!(
            got,
            [
                (10, host(1), b"a1".to_vec()),
                (10, host(3), b"a2".to_vec()),
                (10, host(4), b"a3".to_vec()),
                (20, host(2), b"b".to_vec()),
            ]
        );
        assert_eq!((q.len(), q.next_due()), (1, Some(30)));
        let last = q.pop_due(u64::MAX).unwrap();
        assert_eq!(last.bytes, b"c");
        assert!(q.is_empty());
    }

    #[test]
    fn buffers_are_reused() {
        let mut q = LinkQueue::new();
        let dest = Dest::Switch {
            end: End {
                switch: SwitchId(0),
                port: 1,
            },
            link: None,
        };
        q.push(0, dest, &[7; 100]);
        let f = q.pop_due(0).unwrap();
        let ptr = f.bytes.as_ptr();
        q.recycle(f.bytes);
        q.push(1, dest, &[8; 60]);
        let g = q.pop_due(1).unwrap();
        assert_eq!(g.bytes.as_ptr(), ptr, "the spare buffer was used again");
        assert_eq!(g.bytes, [8; 60]);
    }
}
