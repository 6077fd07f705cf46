//! [`Sampler`]: the switches' counters read once a [`PERIOD`], turned
//! into what a single reading cannot say: each switch's message rates
//! over the last interval, and how fairly the controller served the
//! switches in it.
//!
//! Fairness is Jain's index ([`jain`]) of each switch's service in the
//! interval (messages read from it and handled) divided by its weight,
//! so a switch given weight 2 that got twice the service counts as
//! treated fairly (weighted max-min, Maestro §3.2.1). It is the measure
//! McNettle reports (McNettle §6.5). Only switches that sent something in
//! the interval count: one with nothing to send is not being treated
//! unfairly, and the runtime's counters do not say how much a switch had
//! waiting, so a switch starved of every service chance for a whole
//! interval would not show here.
//!
//! The sampler does no I/O and reads no clock: the API server's task
//! hands it the time and the switches (`server.rs`), and the tests below
//! use made-up ones.

use baton_runtime::SwitchId;
use baton_runtime::control::SwitchStatus;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How often the API server samples: often enough that a chart of rates
/// moves while one watches, seldom enough that reading every switch's
/// counters (one pass over the switch table) costs nothing measurable.
pub const PERIOD: Duration = Duration::from_secs(1);

/// A switch's message rates over the last interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Messages received from it per second.
    pub rx_per_sec: f64,
    /// Messages sent to it per second.
    pub tx_per_sec: f64,
}

/// How fairly the switches were served over the last interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fairness {
    /// Jain's index of weighted service: 1 when every switch that sent
    /// got its weight's share, 1/n when one got everything.
    pub jain: f64,
    /// The switches it counts (those that sent in the interval).
    pub switches: usize,
    /// The interval's length, seconds.
    pub interval_secs: f64,
    /// Messages handled per second over the interval, all switches.
    pub messages_per_sec: f64,
}

#[derive(Debug, Clone, Copy)]
struct Reading {
    rx: u64,
    tx: u64,
}

/// The last reading and what the interval before it gave.
#[derive(Debug, Default)]
pub struct Sampler {
    last: Option<(Instant, HashMap<SwitchId, Reading>)>,
    rates: HashMap<SwitchId, Rates>,
    fairness: Option<Fairness>,
}

impl Sampler {
    /// Takes a reading of `switches` at `now`; rates and fairness then
    /// describe the interval since the previous one. A switch that
    /// connected in between has no rate until the next reading.
    pub fn observe(&mut self, now: Instant, switches: &[SwitchStatus]) {
        let readings: HashMap<SwitchId, Reading> = switches
            .iter()
            .map(|s| {
                let r = Reading {
                    rx: s.rx_msgs,
                    tx: s.tx_msgs,
                };
                (s.info.id, r)
            })
            .collect();
        if let Some((then, before)) = &self.last {
            let secs = now.saturating_duration_since(*then).as_secs_f64();
            if secs > 0.0 {
                self.rates.clear();
                let mut shares = Vec::new();
                let mut total = 0;
                for s in switches {
                    let (Some(b), Some(r)) = (before.get(&s.info.id), readings.get(&s.info.id))
                    else {
                        continue;
                    };
                    let rx = r.rx.saturating_sub(b.rx);
                    let tx = r.tx.saturating_sub(b.tx);
                    self.rates.insert(
                        s.info.id,
                        Rates {
                            rx_per_sec: rx as f64 / secs,
                            tx_per_sec: tx as f64 / secs,
                        },
                    );
                    total += rx;
                    if rx > 0 {
                        shares.push(rx as f64 / f64::from(s.weight.max(1)));
                    }
                }
                self.fairness = jain(&shares).map(|jain| Fairness {
                    jain,
                    switches: shares.len(),
                    interval_secs: secs,
                    messages_per_sec: total as f64 / secs,
                });
            }
        }
        self.last = Some((now, readings));
    }

    /// Switch `id`'s rates over the last interval.
    pub fn rates(&self, id: SwitchId) -> Option<Rates> {
        self.rates.get(&id).copied()
    }

    /// Fairness over the last interval; `None` before two readings or
    /// when no switch sent anything.
    pub fn fairness(&self) -> Option<Fairness> {
        self.fairness
    }
}

/// Jain's fairness index of `x`: (Σx)² / (n·Σx²). 1 when all are equal,
/// 1/n when one has everything; `None` for no values or all zero.
pub fn jain(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::{DatapathId, Version};
    use baton_runtime::SwitchInfo;

    fn switch(n: u32, rx: u64, weight: u32) -> SwitchStatus {
        SwitchStatus {
            info: SwitchInfo {
                id: SwitchId::new(n, 0),
                dpid: DatapathId(u64::from(n)),
                version: Version::V13,
                peer: None,
            },
            ports: Vec::new(),
            connected_for: Duration::ZERO,
            rx_msgs: rx,
            tx_msgs: rx * 2,
            tx_bytes: 0,
            weight,
            mastership: baton_runtime::Mastership::Standalone,
            role_generation: None,
            fenced: false,
        }
    }

    #[test]
    fn jains_index_at_its_bounds() {
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
        assert_eq!(jain(&[5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain(&[9.0, 0.0, 0.0]), Some(1.0 / 3.0));
        let j = jain(&[1.0, 2.0]).unwrap();
        assert!((j - 0.9).abs() < 1e-12, "{j}");
    }

    #[test]
    fn rates_and_weighted_fairness_over_synthetic_time() {
        let t0 = Instant::now();
        let mut s = Sampler::default();
        s.observe(t0, &[switch(1, 0, 1), switch(2, 0, 2), switch(3, 0, 1)]);
        assert_eq!(s.fairness(), None);
        assert_eq!(s.rates(SwitchId::new(1, 0)), None);
        // Over two seconds: switch 2 has weight 2 and got twice the
        // service of switch 1; switch 3 sent nothing.
        let t1 = t0 + Duration::from_secs(2);
        s.observe(t1, &[switch(1, 100, 1), switch(2, 200, 2), switch(3, 0, 1)]);
        let r = s.rates(SwitchId::new(2, 0)).unwrap();
        assert_eq!((r.rx_per_sec, r.tx_per_sec), (100.0, 200.0));
        assert_eq!(s.rates(SwitchId::new(3, 0)).unwrap().rx_per_sec, 0.0);
        let f = s.fairness().unwrap();
        assert_eq!((f.jain, f.switches, f.interval_secs), (1.0, 2, 2.0));
        assert_eq!(f.messages_per_sec, 150.0);
        // Then switch 1 gets one message's service while switch 2 gets
        // thousands: close to 1/n for the two that sent.
        let t2 = t1 + Duration::from_secs(1);
        s.observe(
            t2,
            &[switch(1, 101, 1), switch(2, 10_200, 2), switch(4, 50, 1)],
        );
        let f = s.fairness().unwrap();
        assert_eq!(f.switches, 2, "switch 4 has no earlier reading");
        assert!(f.jain < 0.51, "{}", f.jain);
        assert_eq!(s.rates(SwitchId::new(4, 0)), None);
        assert_eq!(s.rates(SwitchId::new(3, 0)), None, "switch 3 left");
    }
}
