//! Whether this instance serves a switch ([`Mastership`]), and what a
//! switch's slave may not send it.
//!
//! A standalone controller serves every switch. When several instances
//! act as one controller (the `baton-cluster` crate), every switch is
//! connected to all of them and exactly one is its master (OpenFlow 1.3.5
//! §6.3.7, "Multiple Controllers"); the others are slaves. Here that
//! means:
//! - the applications of a slave have no state for the switch: they hear
//!   of it (`switch_up`, then its events) only once this instance becomes
//!   its master, and lose it (`switch_down`) when it stops being master;
//! - nothing that changes a slave's switch leaves the runtime:
//!   [`crate::Network::send`] refuses it ([`crate::SendError::NotMaster`])
//!   and replies an application staged before the switch was demoted are
//!   dropped before they are written (`keep_read_only`).
//!
//! Which instance is master, and telling the switch with a
//! ROLE_REQUEST, is [`crate::control::Control::set_mastership`]'s.
//!
//! A master acts only until its [`Fence`]: the deadline of the cluster
//! lease that made it master, as far as it can know it alive. The point
//! of sending checks it (`Sockets::write_locked`, every write to a
//! switch), so after a stall (the process paused, swapped out, a VM
//! migrated) nothing the applications decided before or during it
//! reaches a switch another instance may master by now; the switch's
//! generation check (1.3.5 §6.3.7) is the second line, not the only one.

use baton_openflow::Version;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Whether this instance's applications serve a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mastership {
    /// Not in a cluster: every switch is served.
    Standalone,
    /// In a cluster, and this instance is the switch's master.
    Master,
    /// In a cluster, and another instance is (or will be) the switch's
    /// master. A switch starts here until the cluster decides.
    Slave,
}

impl Mastership {
    /// Whether the applications serve the switch.
    pub fn serves(self) -> bool {
        self != Mastership::Slave
    }

    /// The name the operator sees.
    pub fn name(self) -> &'static str {
        match self {
            Mastership::Standalone => "standalone",
            Mastership::Master => "master",
            Mastership::Slave => "slave",
        }
    }

    pub(crate) fn to_u8(self) -> u8 {
        match self {
            Mastership::Standalone => 0,
            Mastership::Master => 1,
            Mastership::Slave => 2,
        }
    }

    pub(crate) fn from_u8(v: u8) -> Mastership {
        match v {
            1 => Mastership::Master,
            2 => Mastership::Slave,
            _ => Mastership::Standalone,
        }
    }
}

/// Until when this instance may act as the master of the switches it
/// masters ([`crate::control::Control::fence_mastership`]). A slave is
/// not affected, nor a standalone controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fence {
    /// No bound: a controller not in a cluster, or a member holding on to
    /// its switches while etcd is lost for every member.
    Open,
    /// Until this instant on the monotonic clock (a lease's deadline).
    Until(Instant),
    /// Not at all: no lease is known alive.
    Closed,
}

/// A [`Fence`] every thread reads at the point of sending: nanoseconds
/// since `epoch` (`0` closed, `u64::MAX` open), one atomic.
#[derive(Debug)]
pub(crate) struct SharedFence {
    epoch: Instant,
    until_ns: AtomicU64,
}

impl SharedFence {
    pub fn open() -> SharedFence {
        SharedFence {
            epoch: Instant::now(),
            until_ns: AtomicU64::new(u64::MAX),
        }
    }

    pub fn set(&self, fence: Fence) {
        let ns = match fence {
            Fence::Open => u64::MAX,
            Fence::Closed => 0,
            Fence::Until(t) => {
                let ns = t.saturating_duration_since(self.epoch).as_nanos();
                u64::try_from(ns).unwrap_or(u64::MAX - 1).min(u64::MAX - 1)
            }
        };
        self.until_ns.store(ns, Ordering::Release);
    }

    /// Whether a master may act now.
    pub fn holds(&self) -> bool {
        match self.until_ns.load(Ordering::Acquire) {
            u64::MAX => true,
            0 => false,
            until => (self.epoch.elapsed().as_nanos() as u64) < until,
        }
    }
}

/// Whether a message of `msg_type` changes the switch's state, which a
/// slave may not do (1.3.5 §6.3.7: a slave's PACKET_OUT, FLOW_MOD,
/// GROUP_MOD, PORT_MOD, TABLE_MOD and METER_MOD are refused). OpenFlow
/// 1.0 has no roles; its PACKET_OUT, FLOW_MOD and PORT_MOD are the same
/// kind.
pub fn changes_state(version: Version, msg_type: u8) -> bool {
    match version {
        Version::V10 => matches!(msg_type, 13..=15),
        Version::V13 => matches!(msg_type, 13..=17 | 29),
    }
}

/// Whether `bytes` (whole messages) hold any message that changes state.
pub(crate) fn any_changes_state(bytes: &[u8]) -> bool {
    messages(bytes).any(|(at, len)| {
        let m = &bytes[at..at + len];
        Version::from_wire(m[0]).is_some_and(|v| changes_state(v, m[1]))
    })
}

/// Drops from `out[from..]` (whole messages) every message that changes
/// state; returns how many it dropped.
pub(crate) fn keep_read_only(out: &mut Vec<u8>, from: usize) -> usize {
    let mut write = from;
    let mut read = from;
    let mut dropped = 0;
    loop {
        let Some((_, len)) = messages(&out[read..]).next() else {
            break;
        };
        let m = &out[read..read + len];
        let drop = Version::from_wire(m[0]).is_some_and(|v| changes_state(v, m[1]));
        if drop {
            dropped += 1;
        } else {
            out.copy_within(read..read + len, write);
            write += len;
        }
        read += len;
    }
    // Anything after the last whole message stays as it was.
    out.copy_within(read.., write);
    let tail = out.len() - read;
    out.truncate(write + tail);
    dropped
}

/// Where each whole message of `bytes` lies: (offset, length), stopping
/// at the first header that does not fit.
fn messages(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let header = bytes.get(at..at + 8)?;
        let len = usize::from(u16::from_be_bytes([header[2], header[3]]));
        if len < 8 || at + len > bytes.len() {
            return None;
        }
        let here = at;
        at += len;
        Some((here, len))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fence_holds_until_its_deadline() {
        let f = SharedFence::open();
        assert!(f.holds());
        f.set(Fence::Closed);
        assert!(!f.holds());
        f.set(Fence::Until(Instant::now() + Duration::from_secs(60)));
        assert!(f.holds());
        f.set(Fence::Until(Instant::now() - Duration::from_millis(1)));
        assert!(!f.holds());
        // Before the epoch is the same as closed.
        f.set(Fence::Until(f.epoch - Duration::from_millis(1)));
        assert!(!f.holds());
        f.set(Fence::Open);
        assert!(f.holds());
    }

    fn msg(version: u8, ty: u8, body: usize) -> Vec<u8> {
        let len = (8 + body) as u16;
        let mut m = vec![version, ty, (len >> 8) as u8, len as u8, 0, 0, 0, 1];
        m.resize(8 + body, 0xab);
        m
    }

    #[test]
    fn slaves_keep_echoes_and_requests_and_lose_modifications() {
        let mut out = Vec::new();
        out.extend(msg(4, 3, 4)); // ECHO_REPLY
        out.extend(msg(4, 14, 48)); // FLOW_MOD
        out.extend(msg(4, 18, 8)); // MULTIPART_REQUEST
        out.extend(msg(4, 13, 16)); // PACKET_OUT
        out.extend(msg(4, 29, 8)); // METER_MOD
        out.extend(msg(4, 24, 16)); // ROLE_REQUEST
        let kept: Vec<u8> = [msg(4, 3, 4), msg(4, 18, 8), msg(4, 24, 16)].concat();
        assert!(any_changes_state(&out));
        assert_eq!(keep_read_only(&mut out, 0), 3);
        assert_eq!(out, kept);
        assert!(!any_changes_state(&out));
    }

    #[test]
    fn only_the_part_after_from_is_filtered() {
        let first = msg(1, 14, 64); // a 1.0 FLOW_MOD already counted
        let mut out = first.clone();
        out.extend(msg(1, 13, 8)); // 1.0 PACKET_OUT
        out.extend(msg(1, 16, 4)); // 1.0 STATS_REQUEST
        assert_eq!(keep_read_only(&mut out, first.len()), 1);
        assert_eq!(out, [first, msg(1, 16, 4)].concat());
    }

    #[test]
    fn table_mod_is_a_change_only_on_1_3() {
        // 1.0's type 16 is STATS_REQUEST; 1.3's is PORT_MOD, 17 TABLE_MOD.
        assert!(!changes_state(Version::V10, 16));
        assert!(changes_state(Version::V13, 16));
        assert!(changes_state(Version::V13, 17));
        assert!(!changes_state(Version::V13, 18));
    }
}
