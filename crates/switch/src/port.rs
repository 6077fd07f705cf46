//! The switch's ports: number, name, address, configuration, link state
//! and counters, and their descriptions in each version's wire form
//! (`ofp_phy_port`, 1.0.0 §5.2.1; `ofp_port`, 1.3.5 §7.2.1).
//!
//! Ports are numbered from 1 in the order they are added and kept in a
//! vector indexed by number, so the per-packet lookup is an index.

use baton_openflow::Version;
pub use baton_openflow::port_counters::PortCounters;
use baton_openflow::types::{MacAddr, PortNo};
use baton_openflow::{v10, v13};
use std::time::Instant;

/// `OFPPC_PORT_DOWN` (both versions).
pub const CONFIG_PORT_DOWN: u32 = 1 << 0;
/// `OFPPC_NO_RECV` (both versions).
pub const CONFIG_NO_RECV: u32 = 1 << 2;
/// `OFPPC_NO_FLOOD` (1.0; Open vSwitch keeps it in 1.3).
pub const CONFIG_NO_FLOOD: u32 = 1 << 4;
/// `OFPPC_NO_FWD` (both versions).
pub const CONFIG_NO_FWD: u32 = 1 << 5;
/// `OFPPC_NO_PACKET_IN` (both versions).
pub const CONFIG_NO_PACKET_IN: u32 = 1 << 6;
/// The configuration bits a PORT_MOD may change.
pub const CONFIG_SETTABLE: u32 =
    CONFIG_PORT_DOWN | CONFIG_NO_RECV | CONFIG_NO_FLOOD | CONFIG_NO_FWD | CONFIG_NO_PACKET_IN;

/// What the embedding program says about a port when it adds one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSpec {
    /// Name shown in FEATURES_REPLY / PORT_DESC (at most 15 bytes are
    /// sent).
    pub name: String,
    /// Hardware address.
    pub hw_addr: MacAddr,
    /// Whether the link is up.
    pub link_up: bool,
    /// Current speed in kb/s (1.3 `curr_speed`; also picks the 1.0
    /// feature bit).
    pub speed_kbps: u32,
}

impl PortSpec {
    /// A port named `name` with a locally administered address derived
    /// from `seed`, link up, 10 Gb/s.
    pub fn named(name: impl Into<String>, seed: u32) -> PortSpec {
        let s = seed.to_be_bytes();
        PortSpec {
            name: name.into(),
            hw_addr: MacAddr([0x02, 0xba, s[0], s[1], s[2], s[3]]),
            link_up: true,
            speed_kbps: 10_000_000,
        }
    }
}

/// One port.
#[derive(Debug, Clone)]
pub struct Port {
    /// Its number.
    pub no: PortNo,
    /// What it was added with.
    pub spec: PortSpec,
    /// `OFPPC_*` bits.
    pub config: u32,
    /// Counters.
    pub counters: PortCounters,
    /// When it was added (1.3 `duration`).
    pub created: Instant,
}

impl Port {
    /// Up for forwarding: link up and not administratively down.
    pub fn is_live(&self) -> bool {
        self.spec.link_up && self.config & CONFIG_PORT_DOWN == 0
    }

    fn features(&self, version: Version) -> u32 {
        // The OFPPF_* rate bits 0..=6 are the same in both versions;
        // OFPPF_COPPER moved.
        let copper = match version {
            Version::V10 => v10::port::features::COPPER,
            Version::V13 => v13::port::port_features::COPPER,
        };
        let kbps = self.spec.speed_kbps;
        let bit = if kbps >= 10_000_000 {
            1 << 6
        } else if kbps >= 1_000_000 {
            1 << 5
        } else if kbps >= 100_000 {
            1 << 3
        } else {
            1 << 1
        };
        bit | copper
    }

    /// The 1.0 `ofp_phy_port`.
    pub fn desc10(&self) -> v10::PhyPort {
        let f = self.features(Version::V10);
        v10::PhyPort {
            port_no: self.no,
            hw_addr: self.spec.hw_addr,
            name: self.spec.name.clone(),
            config: self.config,
            state: if self.spec.link_up {
                0
            } else {
                v10::port::state::LINK_DOWN
            },
            curr: f,
            advertised: f,
            supported: f,
            peer: 0,
        }
    }

    /// The 1.3 `ofp_port`.
    pub fn desc13(&self) -> v13::Port {
        use v13::port::port_state;
        let f = self.features(Version::V13);
        let mut state = 0;
        if !self.spec.link_up {
            state |= port_state::LINK_DOWN;
        }
        if self.is_live() {
            state |= port_state::LIVE;
        }
        v13::Port {
            port_no: self.no,
            hw_addr: self.spec.hw_addr,
            name: self.spec.name.clone(),
            config: self.config,
            state,
            curr: f,
            advertised: f,
            supported: f,
            peer: 0,
            curr_speed: self.spec.speed_kbps,
            max_speed: self.spec.speed_kbps,
        }
    }
}

/// The port table, indexed by port number.
#[derive(Debug, Clone, Default)]
pub struct Ports {
    slots: Vec<Option<Port>>,
}

impl Ports {
    /// Adds a port with the next free number (from 1).
    pub fn add(&mut self, spec: PortSpec, now: Instant) -> PortNo {
        let free = self.slots.iter().position(Option::is_none);
        let idx = free.unwrap_or(self.slots.len());
        let no = PortNo(idx as u32 + 1);
        let port = Port {
            no,
            spec,
            config: 0,
            counters: PortCounters::default(),
            created: now,
        };
        if idx == self.slots.len() {
            self.slots.push(Some(port));
        } else {
            self.slots[idx] = Some(port);
        }
        no
    }

    /// Removes a port.
    pub fn remove(&mut self, no: PortNo) -> Option<Port> {
        let idx = (no.0 as usize).checked_sub(1)?;
        self.slots.get_mut(idx)?.take()
    }

    /// The port numbered `no`, if it exists (reserved numbers never do).
    #[inline]
    pub fn get(&self, no: PortNo) -> Option<&Port> {
        let idx = (no.0 as usize).checked_sub(1)?;
        self.slots.get(idx)?.as_ref()
    }

    /// The port numbered `no`, mutably.
    #[inline]
    pub fn get_mut(&mut self, no: PortNo) -> Option<&mut Port> {
        let idx = (no.0 as usize).checked_sub(1)?;
        self.slots.get_mut(idx)?.as_mut()
    }

    /// Every port, by number.
    pub fn iter(&self) -> impl Iterator<Item = &Port> {
        self.slots.iter().flatten()
    }

    /// The port named `name`.
    pub fn by_name(&self, name: &str) -> Option<&Port> {
        self.iter().find(|p| p.spec.name == name)
    }

    /// One more than the highest port number in use, for walking ports
    /// by number without borrowing the table.
    pub fn end(&self) -> u32 {
        self.slots.len() as u32 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_order_of_addition_and_reuse_gaps() {
        let now = Instant::now();
        let mut p = Ports::default();
        assert_eq!(p.add(PortSpec::named("a", 1), now), PortNo(1));
        assert_eq!(p.add(PortSpec::named("b", 2), now), PortNo(2));
        assert!(p.remove(PortNo(1)).is_some());
        assert!(p.get(PortNo(1)).is_none());
        assert_eq!(p.add(PortSpec::named("c", 3), now), PortNo(1));
        assert_eq!(p.by_name("b").map(|p| p.no), Some(PortNo(2)));
        assert!(p.get(PortNo::CONTROLLER).is_none());
        assert!(p.get(PortNo(0)).is_none());
    }

    #[test]
    fn descriptions_carry_name_and_state() {
        let now = Instant::now();
        let mut p = Ports::default();
        let mut spec = PortSpec::named("veth0", 9);
        spec.link_up = false;
        let no = p.add(spec, now);
        let d = p.get(no).unwrap().desc13();
        assert_eq!(d.name, "veth0");
        assert_eq!(d.state & v13::port::port_state::LINK_DOWN, 1);
        assert_eq!(d.state & v13::port::port_state::LIVE, 0);
        let d = p.get(no).unwrap().desc10();
        assert_eq!(d.state, v10::port::state::LINK_DOWN);
    }
}
