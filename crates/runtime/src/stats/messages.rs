//! Messages counted by type, in and out: a [`Tally`] kept in plain
//! integers while a batch or a write is built, added to shared
//! [`TypeCounters`] once per batch or write, so the hot path pays a
//! byte read and an increment per message and a few atomic adds per
//! batch.

use baton_openflow::{MsgKind, Version};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Raw type numbers kept apart; higher ones are counted in the last slot,
/// which neither version uses (`MsgKind::Unknown`).
const TYPES: usize = 32;

/// The versions counted: 1.0 and 1.3, by header version byte. HELLOs of
/// other versions (which baton refuses) are not counted.
const VERSIONS: [Version; 2] = [Version::V10, Version::V13];

fn version_slot(byte: u8) -> Option<usize> {
    VERSIONS.iter().position(|v| v.wire() == byte)
}

/// Counts of one direction being built, by version and raw type, with a
/// bit per type counted so that draining visits only those.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    counts: [[u32; TYPES]; 2],
    touched: [u32; 2],
}

impl Tally {
    /// Counts the message whose header starts `header` (at least its two
    /// first bytes).
    #[inline]
    pub fn count(&mut self, header: &[u8]) {
        if let (Some(&v), Some(&t)) = (header.first(), header.get(1)) {
            if let Some(v) = version_slot(v) {
                let t = usize::from(t).min(TYPES - 1);
                self.counts[v][t] += 1;
                self.touched[v] |= 1 << t;
            }
        }
    }

    /// Counts every message of `bytes`, which holds whole messages.
    pub fn count_all(&mut self, bytes: &[u8]) -> u64 {
        let mut n = 0;
        let mut rest = bytes;
        while let Ok(Some(len)) = baton_openflow::frame(rest) {
            self.count(rest);
            n += 1;
            rest = &rest[len..];
        }
        n
    }

    /// Adds the counts to `into` and starts again from zero.
    pub fn drain_into(&mut self, into: &[[AtomicU64; TYPES]; 2]) {
        for ((touched, counts), shared) in self.touched.iter_mut().zip(&mut self.counts).zip(into) {
            let mut bits = std::mem::take(touched);
            while bits != 0 {
                let t = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                shared[t].fetch_add(u64::from(std::mem::take(&mut counts[t])), Ordering::Relaxed);
            }
        }
    }
}

/// Messages received and sent, by version and raw type.
#[derive(Debug, Default)]
pub(crate) struct TypeCounters {
    pub rx: [[AtomicU64; TYPES]; 2],
    pub tx: [[AtomicU64; TYPES]; 2],
}

impl TypeCounters {
    /// Adds these counts, by the kind of message, into `by_kind`.
    pub fn add_to(&self, by_kind: &mut BTreeMap<&'static str, MessageCount>) {
        for (v, version) in VERSIONS.iter().enumerate() {
            for t in 0..TYPES {
                let rx = self.rx[v][t].load(Ordering::Relaxed);
                let tx = self.tx[v][t].load(Ordering::Relaxed);
                if rx == 0 && tx == 0 {
                    continue;
                }
                let kind = MsgKind::of(*version, t as u8).name();
                let e = by_kind.entry(kind).or_insert(MessageCount {
                    kind,
                    received: 0,
                    sent: 0,
                });
                e.received += rx;
                e.sent += tx;
            }
        }
    }
}

/// How many messages of one kind were received and sent, since start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageCount {
    /// The kind, `packet_in` ([`MsgKind::name`]).
    pub kind: &'static str,
    /// Received from switches.
    pub received: u64,
    /// Sent to switches.
    pub sent: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_across_versions() {
        let shared = TypeCounters::default();
        let mut t = Tally::default();
        // A 1.0 PACKET_IN (10), a 1.3 PACKET_IN (10), a 1.3 MULTIPART_REPLY
        // (19), a 1.0 STATS_REPLY (17), and a version-5 HELLO (not counted).
        for h in [[1u8, 10], [4, 10], [4, 19], [1, 17], [5, 0]] {
            t.count(&h);
        }
        t.drain_into(&shared.rx);
        let mut by = BTreeMap::new();
        shared.add_to(&mut by);
        assert_eq!(by["packet_in"].received, 2);
        assert_eq!(by["stats_reply"].received, 2);
        assert_eq!(by.len(), 2);
        // Drained: counting again adds.
        t.count(&[1, 10]);
        t.drain_into(&shared.rx);
        let mut by = BTreeMap::new();
        shared.add_to(&mut by);
        assert_eq!(by["packet_in"].received, 3);
    }

    #[test]
    fn counts_whole_messages_in_a_buffer() {
        let mut buf = Vec::new();
        for t in [13u8, 14, 13] {
            buf.extend_from_slice(&[4, t, 0, 8, 0, 0, 0, 1]);
        }
        let mut t = Tally::default();
        assert_eq!(t.count_all(&buf), 3);
        let shared = TypeCounters::default();
        t.drain_into(&shared.tx);
        let mut by = BTreeMap::new();
        shared.add_to(&mut by);
        assert_eq!(by["packet_out"].sent, 2);
        assert_eq!(by["flow_mod"].sent, 1);
    }
}
