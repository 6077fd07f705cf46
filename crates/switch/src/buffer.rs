//! The packet buffer pool: frames sent to a controller in a PACKET_IN are
//! kept here so that a PACKET_OUT or FLOW_MOD can name them by buffer id
//! (1.0.0 §5.4.1, 1.3.5 §7.4.1).
//!
//! The pool is bounded. A slot is free when it was never used, was taken
//! by a controller, or has waited [`BUFFER_TIMEOUT`] (Open vSwitch keeps
//! buffers for 5 s, `OVERWRITE_MSECS`); when no slot is free the frame is
//! sent whole with `OFP_NO_BUFFER`. Each id carries the slot's generation,
//! so a stale or reused id is told apart from a live one
//! (`OFPBRC_BUFFER_UNKNOWN` against `OFPBRC_BUFFER_EMPTY`). Slots keep
//! their allocation, so storing a frame allocates nothing once the pool
//! has seen frames of that size.

use crate::error::OfError;
use baton_openflow::types::{BufferId, PortNo};
use std::time::{Duration, Instant};

/// How long a buffered frame waits for its controller before its slot
/// may be reused (Open vSwitch's `OVERWRITE_MSECS`).
pub const BUFFER_TIMEOUT: Duration = Duration::from_secs(5);

/// Slots in the default pool (Open vSwitch's `PKTBUF_CNT` is 256).
pub const DEFAULT_BUFFERS: usize = 256;

const SLOT_BITS: u32 = 16;

#[derive(Debug, Clone, Default)]
struct Slot {
    frame: Vec<u8>,
    in_port: PortNo,
    stored: Option<Instant>,
    generation: u16,
}

/// A bounded pool of buffered frames.
#[derive(Debug, Clone)]
pub struct BufferPool {
    slots: Vec<Slot>,
    next: usize,
}

impl BufferPool {
    /// A pool of `n` slots (at most 65,536; 0 disables buffering).
    pub fn new(n: usize) -> BufferPool {
        BufferPool {
            slots: vec![Slot::default(); n.min(1 << SLOT_BITS)],
            next: 0,
        }
    }

    /// Number of slots (`n_buffers` in FEATURES_REPLY).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Keeps a copy of `frame`, or returns `None` when every slot holds a
    /// frame younger than [`BUFFER_TIMEOUT`].
    pub fn store(&mut self, now: Instant, in_port: PortNo, frame: &[u8]) -> Option<BufferId> {
        let n = self.slots.len();
        for i in 0..n {
            let idx = (self.next + i) % n;
            let slot = &mut self.slots[idx];
            let free = match slot.stored {
                None => true,
                Some(t) => now.saturating_duration_since(t) >= BUFFER_TIMEOUT,
            };
            if free {
                slot.generation = slot.generation.wrapping_add(1);
                slot.frame.clear();
                slot.frame.extend_from_slice(frame);
                slot.in_port = in_port;
                slot.stored = Some(now);
                self.next = (idx + 1) % n;
                let id = (u32::from(slot.generation) << SLOT_BITS) | idx as u32;
                return Some(BufferId(id));
            }
        }
        None
    }

    /// Takes the frame of buffer `id` out of the pool: calls `f` with it
    /// and its input port, then frees the slot.
    pub fn take<R>(
        &mut self,
        now: Instant,
        id: BufferId,
        f: impl FnOnce(PortNo, &[u8]) -> R,
    ) -> Result<R, OfError> {
        let idx = (id.0 & ((1 << SLOT_BITS) - 1)) as usize;
        let generation = (id.0 >> SLOT_BITS) as u16;
        let slot = self.slots.get_mut(idx).ok_or(OfError::BufferUnknown)?;
        if slot.generation != generation {
            return Err(OfError::BufferUnknown);
        }
        match slot.stored {
            None => Err(OfError::BufferEmpty),
            Some(t) if now.saturating_duration_since(t) >= BUFFER_TIMEOUT => {
                slot.stored = None;
                Err(OfError::BufferUnknown)
            }
            Some(_) => {
                slot.stored = None;
                Ok(f(slot.in_port, &slot.frame))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_take_and_reuse() {
        let t0 = Instant::now();
        let mut p = BufferPool::new(2);
        let a = p.store(t0, PortNo(1), b"aa").unwrap();
        let b = p.store(t0, PortNo(2), b"bb").unwrap();
        assert_ne!(a, b);
        // Full: the frame goes whole.
        assert_eq!(p.store(t0, PortNo(3), b"cc"), None);
        assert_eq!(
            p.take(t0, a, |port, f| (port, f.to_vec())),
            Ok((PortNo(1), b"aa".to_vec()))
        );
        assert_eq!(p.take(t0, a, |_, _| ()), Err(OfError::BufferEmpty));
        // The freed slot is reused with a new generation.
        let c = p.store(t0, PortNo(3), b"cc").unwrap();
        assert_ne!(c, a);
        assert_eq!(p.take(t0, a, |_, _| ()), Err(OfError::BufferUnknown));
        // After the timeout a slot may be overwritten, and its old id is
        // unknown.
        let later = t0 + BUFFER_TIMEOUT;
        let d = p.store(later, PortNo(4), b"dd").unwrap();
        assert_eq!(p.take(later, b, |_, _| ()), Err(OfError::BufferUnknown));
        assert_eq!(p.take(later, d, |port, _| port), Ok(PortNo(4)));
        assert_eq!(
            p.take(later, BufferId(0xffff_0123), |_, _| ()),
            Err(OfError::BufferUnknown)
        );
    }

    #[test]
    fn an_empty_pool_buffers_nothing() {
        let mut p = BufferPool::new(0);
        assert_eq!(p.store(Instant::now(), PortNo(1), b"x"), None);
    }
}
