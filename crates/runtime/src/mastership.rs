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

use baton_openflow::Version;

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
