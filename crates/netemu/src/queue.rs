//! Frames in flight: a time-ordered queue of frames on their way to a
//! switch port or a host, with the frame buffers reused.
//!
//! Ordered by due time, then by the order of sending, so frames on one
//! link arrive in the order they were sent and frames due at the same
//! instant leave in a fixed order (the emulator is deterministic given its
//! inputs). Links may have delays of their own, so a FIFO alone would not
//! do; but where every link has the same delay (the usual case) frames
//! are sent in the order they are due, so a frame due no earlier than the
//! last queued goes to a FIFO, and only the others to a binary heap; the
//! earlier of the two heads leaves first. With the heap alone its pops
//! were 15% of the emulator's time in a flood of ARP requests on a k=16
//! fat tree (perf), each a walk through a heap of a hundred thousand
//! frames. A frame's bytes live in a `Vec` taken
//! from a pool of spare buffers and given back after delivery
//! ([`LinkQueue::recycle`]): once the pool has warmed up, sending a frame
//! allocates nothing.

use crate::graph::{End, HostId, LinkId};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

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
    /// Frames in the order they are due (each due no earlier than the one
    /// before).
    fifo: VecDeque<Entry>,
    /// The frames due before the FIFO's last when they were sent.
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
        let e = Entry {
            due,
            seq,
            dest,
            bytes,
        };
        if self.fifo.back().is_none_or(|last| last.due <= due) {
            self.fifo.push_back(e);
        } else {
            self.heap.push(e);
        }
    }

    /// Whether the FIFO's head leaves before the heap's.
    fn fifo_first(&self) -> Option<bool> {
        match (self.fifo.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(f), Some(h)) => Some((f.due, f.seq) < (h.due, h.seq)),
        }
    }

    /// When the next frame arrives.
    pub fn next_due(&self) -> Option<u64> {
        if self.fifo_first()? {
            self.fifo.front().map(|e| e.due)
        } else {
            self.heap.peek().map(|e| e.due)
        }
    }

    /// The earliest frame, if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Frame> {
        if self.next_due()? > now {
            return None;
        }
        let e = if self.fifo_first()? {
            self.fifo.pop_front()?
        } else {
            self.heap.pop()?
        };
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
        self.fifo.len() + self.heap.len()
    }

    /// True when nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty() && self.heap.is_empty()
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
    fn frames_leave_in_due_then_sending_order_whatever_the_delays() {
        // Uniform delays (all through the FIFO) interleaved with others.
        let mut q = LinkQueue::new();
        let mut sent = Vec::new();
        let mut state = 7u64;
        for i in 0..2_000u64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let now = i * 10;
            let due = now + if state >> 60 == 0 { state >> 50 } else { 100 };
            q.push(due, host(i as u32), &i.to_be_bytes());
            sent.push((due, i));
            if i % 3 == 0 {
                // Take out what is due, as the network does between pushes.
                while let Some(f) = q.pop_due(now) {
                    let n = u64::from_be_bytes(f.bytes[..8].try_into().unwrap());
                    let at = sent.iter().position(|&(_, s)| s == n).unwrap();
                    let first = *sent.iter().min().unwrap();
                    assert_eq!(sent.remove(at), first, "the earliest, then the first sent");
                }
            }
        }
        sent.sort();
        let mut rest = Vec::new();
        while let Some(f) = q.pop_due(u64::MAX) {
            rest.push((f.due, u64::from_be_bytes(f.bytes[..8].try_into().unwrap())));
        }
        assert_eq!(rest, sent);
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
