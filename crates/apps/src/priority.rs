//! Flow-priority bands: which application's flows win where they overlap.
//!
//! A switch matches a packet against the flow of highest priority that
//! covers it; among overlapping flows of equal priority the choice is the
//! switch's (1.3.5 §5.3: "the selected flow entry is explicitly
//! undefined"). So applications composed in one pipeline must not pick
//! their priorities each on its own: `learning-switch` and `routing` once
//! both installed at 0x8000, and which one's flow a packet took was up to
//! the switch.
//!
//! The 16-bit priority space is cut into bands, one per role, the way
//! Faucet names its bands (`faucet/valve_manager_base.py`). An application
//! installs its flows in the band of its role, at the band's
//! [`Band::base`] unless it has reason to order flows of its own inside
//! the band; a flow of a higher band always wins over one of a lower band,
//! whatever the applications' order in the pipeline:
//!
//! | band | priorities | role | who |
//! |---|---|---|---|
//! | [`TABLE_MISS`] | 0 | send what nothing else matched to the controller | the runtime (1.3 handshake) |
//! | [`FALLBACK`] | 0x0001-0x0fff | catch-all defaults: flood, drop, send to the controller | |
//! | [`LEARNING`] | 0x1000-0x3fff | flows learnt from one switch's traffic | `learning-switch`, `global-learning-switch` |
//! | [`FORWARDING`] | 0x4000-0x7fff | paths computed from the whole network | `routing` |
//! | [`OPERATOR`] | 0x8000-0xbfff | the operator's overrides | the REST API's flows (default 0x8000, OpenFlow's default priority) |
//! | [`SECURITY`] | 0xc000-0xffff | filters and drops that nothing may bypass | |
//!
//! Why this order: a path that `routing` computed from the whole topology
//! is safe on loops, a flow a learning switch learnt from one switch's
//! view is not, so routing's wins where both run; an operator's flow is a
//! deliberate exception to what the applications decided; a security drop
//! must hold against everything, the operator's mistakes included.
//!
//! The shipped applications take their default priority from their band
//! and keep it a setting (`priority`), so an operator can still move them;
//! a value outside the band is the operator's deliberate choice.

use std::ops::RangeInclusive;

/// A range of flow priorities for one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// The band's name, for messages and documentation.
    pub name: &'static str,
    lowest: u16,
    highest: u16,
}

impl Band {
    const fn new(name: &'static str, lowest: u16, highest: u16) -> Band {
        Band {
            name,
            lowest,
            highest,
        }
    }

    /// The priority an application of this role installs at unless it
    /// orders flows of its own inside the band: the band's lowest, so that
    /// the rest of the band is above it for the application's exceptions.
    pub const fn base(&self) -> u16 {
        self.lowest
    }

    /// The band's priorities.
    pub const fn range(&self) -> RangeInclusive<u16> {
        self.lowest..=self.highest
    }

    /// Whether `priority` is in the band.
    pub const fn contains(&self, priority: u16) -> bool {
        self.lowest <= priority && priority <= self.highest
    }
}

/// Priority 0: the 1.3 table-miss flow, which the runtime installs in its
/// handshake to send unmatched packets to the controller. Nothing else
/// belongs here: a flow overlapping it at the same priority would make a
/// miss undefined.
pub const TABLE_MISS: Band = Band::new("table-miss", 0, 0);

/// Catch-all defaults just above the table-miss flow: flood, drop or send
/// to the controller what no more specific flow takes.
pub const FALLBACK: Band = Band::new("fallback", 0x0001, 0x0fff);

/// Flows learnt from one switch's traffic (the learning switches): only
/// that switch's view, so below anything computed from the whole network.
pub const LEARNING: Band = Band::new("learning", 0x1000, 0x3fff);

/// Paths computed from the whole network (`routing`).
pub const FORWARDING: Band = Band::new("forwarding", 0x4000, 0x7fff);

/// The operator's overrides (flows added through the REST API, whose
/// default, OpenFlow's default priority 0x8000, is this band's base).
pub const OPERATOR: Band = Band::new("operator", 0x8000, 0xbfff);

/// Filters and drops that nothing may bypass, the operator's own flows
/// included.
pub const SECURITY: Band = Band::new("security", 0xc000, 0xffff);

/// Every band, lowest first.
pub const BANDS: [Band; 6] = [
    TABLE_MISS, FALLBACK, LEARNING, FORWARDING, OPERATOR, SECURITY,
];

/// The band `priority` is in.
pub fn band_of(priority: u16) -> Band {
    // The bands cover every priority (a test checks it); SECURITY ends at
    // the top.
    BANDS
        .into_iter()
        .find(|b| b.contains(priority))
        .unwrap_or(SECURITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bands_cover_every_priority_once_in_order() {
        let mut next = 0u32;
        for b in BANDS {
            assert_eq!(
                u32::from(*b.range().start()),
                next,
                "{} starts a gap",
                b.name
            );
            assert!(b.range().start() <= b.range().end(), "{} is empty", b.name);
            next = u32::from(*b.range().end()) + 1;
        }
        assert_eq!(next, 0x1_0000, "the bands stop short of 0xffff");
        for p in [0, 1, 0x0fff, 0x1000, 0x7fff, 0x8000, 0xbfff, 0xc000, 0xffff] {
            let b = band_of(p);
            assert!(b.contains(p));
            assert_eq!(BANDS.iter().filter(|b| b.contains(p)).count(), 1, "{p:#x}");
        }
    }

    #[test]
    fn roles_are_ordered_as_documented() {
        assert_eq!(TABLE_MISS.base(), 0);
        assert!(FALLBACK.base() > TABLE_MISS.base());
        assert!(FORWARDING.base() > *LEARNING.range().end());
        assert!(OPERATOR.base() > *FORWARDING.range().end());
        assert!(SECURITY.base() > *OPERATOR.range().end());
        // The REST API's default priority is OpenFlow's, 0x8000: an
        // operator's flow overrides the applications' by default.
        assert_eq!(band_of(0x8000), OPERATOR);
    }

    #[test]
    fn shipped_applications_default_to_their_bands_and_do_not_overlap() {
        let learning = crate::LearningConfig::default().priority;
        let routing = crate::routing::RoutingConfig::default().priority;
        assert_eq!(learning, LEARNING.base());
        assert_eq!(routing, FORWARDING.base());
        assert_ne!(learning, routing);
    }
}
