//! When a member may still act as master: [`LeaseClock`].
//!
//! etcd lets a lease expire `ttl` after the last keepalive it received,
//! which is after the member sent it. So a member that measures from the
//! moment it *sent* its last successful keepalive, and stops acting as
//! master `margin` before `ttl` has passed, has demoted itself before the
//! lease can have expired anywhere, and before another member can have
//! claimed its datapaths, whether etcd is unreachable, slow, or gone.

use std::time::{Duration, Instant};

/// A member's lease as it can know it.
#[derive(Debug, Clone)]
pub struct LeaseClock {
    ttl: Duration,
    margin: Duration,
    /// When the last keepalive (or the grant) that succeeded was sent.
    renewed: Option<Instant>,
}

impl LeaseClock {
    /// A lease of `ttl`, given up `margin` early (the longest an etcd
    /// request may take, twice, is a safe margin).
    pub fn new(ttl: Duration, margin: Duration) -> LeaseClock {
        LeaseClock {
            ttl,
            margin: margin.min(ttl / 2),
            renewed: None,
        }
    }

    /// A keepalive (or the grant) sent at `sent` succeeded.
    pub fn renewed(&mut self, sent: Instant) {
        self.renewed = Some(self.renewed.map_or(sent, |r| r.max(sent)));
    }

    /// The lease is gone (expired or revoked): no longer healthy.
    pub fn lost(&mut self) {
        self.renewed = None;
    }

    /// When the last keepalive (or the grant) that succeeded was sent.
    pub fn renewed_at(&self) -> Option<Instant> {
        self.renewed
    }

    /// Until when this member may act as master.
    pub fn deadline(&self) -> Option<Instant> {
        self.renewed.map(|r| r + self.ttl - self.margin)
    }

    /// Whether the lease is certainly alive at `now`.
    pub fn healthy(&self, now: Instant) -> bool {
        self.deadline().is_some_and(|d| now < d)
    }

    /// The lease's time to live.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_ends_a_margin_before_the_lease_can_expire() {
        let t0 = Instant::now();
        let mut l = LeaseClock::new(Duration::from_secs(3), Duration::from_secs(1));
        assert!(!l.healthy(t0));
        l.renewed(t0);
        assert!(l.healthy(t0 + Duration::from_millis(1999)));
        assert!(!l.healthy(t0 + Duration::from_secs(2)));
        // A late answer to an older keepalive does not move it back.
        l.renewed(t0 + Duration::from_secs(1));
        l.renewed(t0);
        assert_eq!(l.deadline(), Some(t0 + Duration::from_secs(3)));
        l.lost();
        assert!(!l.healthy(t0));
    }
}
