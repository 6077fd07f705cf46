//! Messages that the applications handling a batch of packet-ins send to
//! switches through the [`crate::Network`] handle (a path's flows on its
//! switches after the first), staged on the handling thread and written
//! once per switch when the batch is done, before the batch's own
//! replies: one write per switch per batch for them too (Beacon Alg. 2),
//! where each went out on a write of its own, a system call per flow of
//! every path. Written before the replies, a path's later flows still
//! reach their switches before its first hop's, which sends the packet on.
//!
//! A thread-local, as the event's picture of the views is
//! (`env::pinned`), so that [`crate::Network::send`] works the same in a
//! batch and out of one (a timer, a background thread), where it writes at
//! once.

use crate::switch::SwitchId;
use std::cell::RefCell;

/// Staged messages, by switch, in the order they were staged; its buffers
/// are kept from batch to batch.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    /// Each switch's messages, in the order the switches were first
    /// staged for.
    staged: Vec<(SwitchId, Vec<u8>)>,
    /// How many of `staged` are this batch's.
    used: usize,
    /// Where each switch's entry is in `staged`, by the switch table's
    /// index (`used` or more: none).
    at: Vec<usize>,
}

thread_local! {
    static OPEN: RefCell<Option<Outbox>> = const { RefCell::new(None) };
}

/// Most bytes a staged buffer keeps between batches: a burst to one
/// switch should not pin a large buffer for good.
const KEEP: usize = 1 << 20;

impl Outbox {
    /// Appends `bytes` (whole messages) to switch `id`'s.
    fn stage(&mut self, id: SwitchId, bytes: &[u8]) {
        let i = id.index();
        if self.at.len() <= i {
            self.at.resize(i + 1, usize::MAX);
        }
        let at = self.at[i];
        if at < self.used && self.staged[at].0 == id {
            self.staged[at].1.extend_from_slice(bytes);
            return;
        }
        if self.used == self.staged.len() {
            self.staged.push((id, Vec::new()));
        }
        let (sw, buf) = &mut self.staged[self.used];
        *sw = id;
        buf.clear();
        buf.extend_from_slice(bytes);
        self.at[i] = self.used;
        self.used += 1;
    }

    /// This batch's messages, switch by switch (`write` may change them);
    /// then none.
    pub fn drain(&mut self, mut write: impl FnMut(SwitchId, &mut Vec<u8>)) {
        for (id, buf) in &mut self.staged[..self.used] {
            write(*id, buf);
            buf.clear();
            if buf.capacity() > KEEP {
                *buf = Vec::new();
            }
            if let Some(at) = self.at.get_mut(id.index()) {
                *at = usize::MAX;
            }
        }
        self.used = 0;
    }

    /// Whether nothing is staged.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }
}

/// Runs `f` with `outbox` open on this thread: what is sent to a switch
/// meanwhile through [`stage`] waits in it (for the caller to
/// [`Outbox::drain`]). A nested call stages into its own outbox.
pub(crate) fn during<R>(outbox: &mut Outbox, f: impl FnOnce() -> R) -> R {
    struct Restore<'a> {
        outbox: &'a mut Outbox,
        outer: Option<Outbox>,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let outer = self.outer.take();
            if let Some(mine) = OPEN.with(|o| std::mem::replace(&mut *o.borrow_mut(), outer)) {
                *self.outbox = mine;
            }
        }
    }
    let mine = std::mem::take(outbox);
    let outer = OPEN.with(|o| o.borrow_mut().replace(mine));
    let _restore = Restore { outbox, outer };
    f()
}

/// Stages `bytes` for switch `id` if an outbox is open on this thread;
/// false if none is (the caller writes them itself).
pub(crate) fn stage(id: SwitchId, bytes: &[u8]) -> bool {
    OPEN.with(|o| match o.borrow_mut().as_mut() {
        Some(outbox) => {
            outbox.stage(id, bytes);
            true
        }
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_sent_in_a_batch_waits_per_switch_in_order() {
        let (a, b) = (SwitchId::new(3, 0), SwitchId::new(1, 0));
        let mut outbox = Outbox::default();
        assert!(!stage(a, b"x"), "no batch: written at once");
        during(&mut outbox, || {
            assert!(stage(a, b"1"));
            assert!(stage(b, b"2"));
            assert!(stage(a, b"3"));
        });
        assert!(!stage(a, b"y"), "closed again");
        let mut written = Vec::new();
        outbox.drain(|id, bytes| written.push((id, bytes.clone())));
        assert_eq!(written, vec![(a, b"13".to_vec()), (b, b"2".to_vec())]);
        assert!(outbox.is_empty());
        // The next batch starts afresh, with the same buffers.
        during(&mut outbox, || assert!(stage(b, b"4")));
        let mut written = Vec::new();
        outbox.drain(|id, bytes| written.push((id, bytes.clone())));
        assert_eq!(written, vec![(b, b"4".to_vec())]);
    }

    #[test]
    fn a_panic_in_the_batch_closes_the_outbox() {
        let mut outbox = Outbox::default();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            during(&mut outbox, || {
                stage(SwitchId::new(0, 0), b"z");
                panic!("an application's");
            })
        }));
        assert!(caught.is_err());
        assert!(!stage(SwitchId::new(0, 0), b"after"));
        assert!(!outbox.is_empty(), "what was staged is still there");
    }
}
