//! The traffic: best-effort flows with Pareto-distributed rates and a few
//! malicious ones, and the fluid data plane that carries them.
//!
//! Fluid, not packet-level: a flow is a rate, constant between two events
//! of the simulation, and each directed link serves two classes in strict
//! priority (the thesis's approved and unapproved traffic). What the
//! metrics need of packets is kept:
//! - **loss**: a class offered more than it gets loses the excess, every
//!   flow in it in proportion (a FIFO queue that is full drops arrivals
//!   regardless of their flow), hop by hop, so a flow that lost on one
//!   link offers less to the next. Loss starts at the instant of overload:
//!   the buffer's filling time (50 ms of the link's capacity by default)
//!   is not waited for, so loss is slightly overcounted, alike for both
//!   modes compared;
//! - **delay**: each class has a fluid queue, integrated exactly between
//!   events (it grows at the excess, up to the buffer, and drains at the
//!   spare capacity), and a flow's delay is the propagation plus each
//!   hop's queue over the capacity its class gets.
//! - traffic on a failed link, without a route, or in a forwarding loop
//!   is lost, as packets would be.

use crate::topo::{Dir, Micros, NodeId, Topology};
use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

/// A flow's number: its index in the flows.
pub type FlowId = usize;

/// A flow of traffic between two routers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flow {
    /// Where it enters.
    pub src: NodeId,
    /// Where it leaves.
    pub dst: NodeId,
    /// Its rate, bit/s.
    pub rate_bps: f64,
    /// An attack's: filters are placed to block it, and it counts in no
    /// metric.
    pub malicious: bool,
}

/// The thesis's two priorities (§5.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Routed by approved entries: normal priority.
    Approved = 0,
    /// Routed by entries not approved yet: low priority.
    Unapproved = 1,
}

/// How a flow's path ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// At its destination.
    Delivered,
    /// At a router with no route for it.
    NoRoute,
    /// In a forwarding loop.
    Loop,
    /// On a link that is down (sent there before the router knew).
    LinkDown,
    /// At a filter on the link it was about to take.
    Filtered,
    /// Its source or destination router is down.
    Gone,
}

/// Where a flow goes now: the directed links it crosses, each with the
/// class its router forwards it in, and how it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// The hops taken.
    pub hops: Vec<(Dir, Class)>,
    /// How it ends.
    pub end: End,
}

/// `count` best-effort flows between distinct random routers of `topo`
/// with rates from a Pareto distribution of shape `k` and mean `mean_bps`
/// (`k` > 1).
pub fn best_effort(
    topo: &Topology,
    count: usize,
    mean_bps: f64,
    k: f64,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<Flow> {
    let n = topo.nodes.len();
    let scale = mean_bps * (k - 1.0) / k;
    (0..count)
        .map(|_| {
            let src = rng.random_range(0..n);
            let mut dst = rng.random_range(0..n - 1);
            if dst >= src {
                dst += 1;
            }
            // Inverse transform: U in (0, 1].
            let u = 1.0 - rng.random::<f64>();
            Flow {
                src,
                dst,
                rate_bps: scale / u.powf(1.0 / k),
                malicious: false,
            }
        })
        .collect()
}

/// What one class of one directed link carries now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClassLoad {
    /// Offered, bit/s.
    pub offered: f64,
    /// The capacity it gets, bit/s.
    pub capacity: f64,
    /// The fraction of what is offered that is dropped.
    pub loss: f64,
    /// Its queue, bits.
    pub queue: f64,
    /// Bits that arrived so far.
    pub arrived: f64,
    /// ... that were dropped.
    pub dropped: f64,
    /// ... that went on.
    pub departed: f64,
}

/// The fluid data plane: each flow's rate at each hop of its path and
/// each directed link's classes.
#[derive(Debug, Clone)]
pub struct Plane {
    /// Per directed link, per [`Class`].
    pub links: Vec<[ClassLoad; 2]>,
    /// Per flow, the rate entering each hop of its path.
    pub rates: Vec<Vec<f64>>,
    /// Each directed link's buffer, bits.
    buffer: Vec<f64>,
}

/// What the data plane did over one interval, per flow.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FlowInterval {
    /// Bits sent.
    pub sent: f64,
    /// Bits delivered.
    pub delivered: f64,
    /// Bits lost to congestion.
    pub congested: f64,
    /// Bits lost for want of a working route (failed link, no route,
    /// loop).
    pub unrouted: f64,
    /// Bits stopped by a filter.
    pub filtered: f64,
    /// The longest one-way delay of what was delivered, µs.
    pub delay_us: f64,
}

impl Plane {
    /// The plane of `topo`, each link buffering `buffer_us` of its
    /// capacity.
    pub fn new(topo: &Topology, buffer_us: Micros) -> Plane {
        let buffer = topo
            .links
            .iter()
            .flat_map(|l| {
                let b = l.capacity_bps * buffer_us as f64 / 1e6;
                [b, b]
            })
            .collect();
        Plane {
            links: vec![[ClassLoad::default(); 2]; 2 * topo.links.len()],
            rates: Vec::new(),
            buffer,
        }
    }

    /// Recomputes every flow's rate at every hop and every link's load
    /// for `paths`, with `capacity` per directed link (0 for a link that
    /// is down). A flow that loses on a hop offers the rest to the next;
    /// the loads and losses are found by repeating until they settle.
    pub fn route(&mut self, flows: &[Flow], paths: &[Path], capacity: &[f64]) {
        self.rates = flows
            .iter()
            .zip(paths)
            .map(|(f, p)| vec![f.rate_bps; p.hops.len()])
            .collect();
        for _ in 0..16 {
            for (l, c) in self.links.iter_mut().zip(capacity) {
                l[0].offered = 0.0;
                l[1].offered = 0.0;
                l[0].capacity = *c;
            }
            for (rates, p) in self.rates.iter().zip(paths) {
                for (r, (dir, class)) in rates.iter().zip(&p.hops) {
                    self.links[dir.0][*class as usize].offered += r;
                }
            }
            for l in &mut self.links {
                l[0].loss = excess(l[0].offered, l[0].capacity);
                l[1].capacity = (l[0].capacity - l[0].offered).max(0.0);
                l[1].loss = excess(l[1].offered, l[1].capacity);
            }
            let mut moved = 0.0f64;
            for ((rates, p), f) in self.rates.iter_mut().zip(paths).zip(flows) {
                let mut r = f.rate_bps;
                for (slot, (dir, class)) in rates.iter_mut().zip(&p.hops) {
                    moved = moved.max((*slot - r).abs());
                    *slot = r;
                    r *= 1.0 - self.links[dir.0][*class as usize].loss;
                }
            }
            if moved < 1e-6 {
                break;
            }
        }
    }

    /// Lets `dt_us` pass at the current rates: the queues move, and each
    /// flow's bits are accounted for in `out` (added to) and in the
    /// links' counters, hop by hop from its source's rate.
    pub fn advance(
        &mut self,
        dt_us: Micros,
        flows: &[Flow],
        paths: &[Path],
        delay_us: &[Micros],
        out: &mut [FlowInterval],
    ) {
        if dt_us == 0 {
            return;
        }
        let dt = dt_us as f64 / 1e6;
        // The largest queue over the interval (at its start or its end),
        // then the queue at its end.
        let mut peak = vec![[0.0f64; 2]; self.links.len()];
        for ((l, b), pk) in self.links.iter_mut().zip(&self.buffer).zip(&mut peak) {
            for (class, c) in l.iter_mut().enumerate() {
                let end = (c.queue + (c.offered - c.capacity) * dt).clamp(0.0, *b);
                pk[class] = c.queue.max(end);
                c.queue = end;
            }
        }
        for ((f, p), o) in flows.iter().zip(paths).zip(out.iter_mut()) {
            if p.end == End::Gone {
                continue;
            }
            o.sent += f.rate_bps * dt;
            let mut r = f.rate_bps;
            let mut delay = 0.0;
            for (dir, class) in &p.hops {
                let c = &mut self.links[dir.0][*class as usize];
                c.arrived += r * dt;
                c.dropped += r * c.loss * dt;
                o.congested += r * c.loss * dt;
                r *= 1.0 - c.loss;
                c.departed += r * dt;
                let wait = if c.capacity > 0.0 {
                    peak[dir.0][*class as usize] / c.capacity * 1e6
                } else {
                    0.0
                };
                delay += delay_us[dir.link()] as f64 + wait;
            }
            match p.end {
                End::Delivered => {
                    o.delivered += r * dt;
                    if r > 0.0 {
                        o.delay_us = o.delay_us.max(delay);
                    }
                }
                End::Filtered => o.filtered += r * dt,
                End::NoRoute | End::Loop | End::LinkDown => o.unrouted += r * dt,
                End::Gone => {}
            }
        }
    }
}

/// The fraction of `offered` beyond `capacity`.
fn excess(offered: f64, capacity: f64) -> f64 {
    if offered <= capacity || offered <= 0.0 {
        0.0
    } else {
        1.0 - capacity / offered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn pareto_rates_have_the_mean_asked() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let t = Topology::random(10, 5, 1e6, &mut rng);
        for k in [2.0, 4.0, 10.0] {
            let flows = best_effort(&t, 200_000, 40_000.0, k, &mut rng);
            let mean = flows.iter().map(|f| f.rate_bps).sum::<f64>() / flows.len() as f64;
            assert!((mean / 40_000.0 - 1.0).abs() < 0.05, "k={k}: {mean}");
            assert!(flows.iter().all(|f| f.src != f.dst));
        }
    }

    #[test]
    fn an_overloaded_link_drops_the_excess_low_priority_first() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let t = Topology::random(2, 0, 1e6, &mut rng);
        let flow = |rate| Flow {
            src: 0,
            dst: 1,
            rate_bps: rate,
            malicious: false,
        };
        let d = t.links[0].dir_from(0, 0);
        let flows = [flow(600_000.0), flow(900_000.0)];
        let paths = [
            Path {
                hops: vec![(d, Class::Approved)],
                end: End::Delivered,
            },
            Path {
                hops: vec![(d, Class::Unapproved)],
                end: End::Delivered,
            },
        ];
        let mut plane = Plane::new(&t, 50_000);
        plane.route(&flows, &paths, &[1e6, 1e6]);
        assert_eq!(plane.links[d.0][0].loss, 0.0);
        assert!((plane.links[d.0][1].loss - 5.0 / 9.0).abs() < 1e-9);
        let mut out = [FlowInterval::default(); 2];
        plane.advance(1_000_000, &flows, &paths, &[t.links[0].delay_us], &mut out);
        assert!((out[0].delivered - 600_000.0).abs() < 1e-6);
        assert!((out[1].delivered - 400_000.0).abs() < 1e-3);
        assert!((out[1].congested - 500_000.0).abs() < 1e-3);
        // The low class's queue filled: its delay is the buffer's worth
        // of its share of the capacity.
        let buffer = 50_000.0;
        assert!((plane.links[d.0][1].queue - buffer).abs() < 1e-6);
        let want = t.links[0].delay_us as f64 + buffer / 400_000.0 * 1e6;
        assert!((out[1].delay_us - want).abs() < 1e-3, "{}", out[1].delay_us);
    }
}
