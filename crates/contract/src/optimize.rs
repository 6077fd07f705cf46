//! Link-weight optimisation (thesis §5.4.1): the controller looks for
//! link weights under which its traffic matrix loses the fewest flows,
//! within a budget of evaluations.
//!
//! - [`Objective`]: routes every demand as the routers would (their own
//!   SPF, [`crate::igp`]) and scores the weights: the flows that cross a
//!   link offered more than it carries (the thesis's objective), then the
//!   largest link utilisation, so that among weights losing as many flows
//!   the less loaded win.
//! - [`simplex`]: the thesis's optimiser, a simplex downhill search
//!   (Nelder and Mead, 1965) over the weights as real numbers, rounded.
//! - [`local_search`]: one weight changed at a time and kept if it helps
//!   (Fortz and Thorup's heuristic, simplified), measured against the
//!   simplex in the examples.

use crate::igp::converged;
use crate::topo::{NodeId, Topology};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// How the controller looks for link weights .
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Optimiser {
    /// The thesis's simplex downhill search.
    Simplex,
    /// One weight at a time.
    LocalSearch,
}

impl Optimiser {
    /// The best weights from `start` within `budget` evaluations of `obj`.
    pub fn run(
        self,
        obj: &mut Objective<'_>,
        start: &[u32],
        budget: u64,
        seed: u64,
    ) -> (Vec<u32>, Score) {
        match self {
            Optimiser::Simplex => simplex(obj, start, budget),
            Optimiser::LocalSearch => local_search(obj, start, budget, seed),
        }
    }
}

/// The largest weight the optimisers give.
pub const MAX_WEIGHT: u32 = 20;

/// One demand of the controller's traffic matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    /// Where it enters.
    pub src: NodeId,
    /// Where it leaves.
    pub dst: NodeId,
    /// Its rate as the controller believes it, bit/s.
    pub bps: f64,
}

/// A score: lower is better.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Score {
    /// Demands that cross an overloaded link.
    pub lossy: usize,
    /// The largest offered load over capacity.
    pub max_utilisation: f64,
}

impl Score {
    /// As one number, for the simplex: the lossy flows, then a fraction
    /// for the utilisation.
    pub fn value(&self) -> f64 {
        self.lossy as f64 + self.max_utilisation.min(100.0) / 100.0
    }
}

/// What the optimisers minimise: the network the controller sees (its
/// live links) and its traffic matrix.
pub struct Objective<'a> {
    topo: &'a Topology,
    up: &'a [bool],
    demands: &'a [Demand],
    /// Evaluations so far.
    pub evaluations: u64,
}

impl<'a> Objective<'a> {
    /// The objective over `topo` with links `up`, for `demands`.
    pub fn new(topo: &'a Topology, up: &'a [bool], demands: &'a [Demand]) -> Objective<'a> {
        Objective {
            topo,
            up,
            demands,
            evaluations: 0,
        }
    }

    /// The score of `weights`.
    pub fn score(&mut self, weights: &[u32]) -> Score {
        self.evaluations += 1;
        let n = self.topo.nodes.len();
        let routers = converged(self.topo, weights, self.up);
        let mut load = vec![0.0f64; 2 * self.topo.links.len()];
        let mut paths = Vec::with_capacity(self.demands.len());
        for d in self.demands {
            let mut at = d.src;
            let mut path = Vec::new();
            while at != d.dst && path.len() <= n {
                let Some(r) = routers[at].route(d.dst) else {
                    break;
                };
                let dir = self.topo.links[r.link].dir_from(r.link, at);
                load[dir.0] += d.bps;
                path.push(dir.0);
                at = r.next;
            }
            paths.push(path);
        }
        let over: Vec<bool> = load
            .iter()
            .enumerate()
            .map(|(i, l)| *l > self.topo.links[i / 2].capacity_bps)
            .collect();
        let lossy = paths.iter().filter(|p| p.iter().any(|&d| over[d])).count();
        let max_utilisation = load
            .iter()
            .enumerate()
            .map(|(i, l)| l / self.topo.links[i / 2].capacity_bps)
            .fold(0.0, f64::max);
        Score {
            lossy,
            max_utilisation,
        }
    }
}

/// Weights as integers from real coordinates.
fn round(x: &[f64]) -> Vec<u32> {
    x.iter()
        .map(|v| v.round().clamp(1.0, f64::from(MAX_WEIGHT)) as u32)
        .collect()
}

/// Nelder-Mead from `start`, at most `budget` evaluations: the best
/// weights found and their score.
pub fn simplex(obj: &mut Objective<'_>, start: &[u32], budget: u64) -> (Vec<u32>, Score) {
    let d = start.len();
    let first = obj.evaluations;
    let eval = |obj: &mut Objective<'_>, x: &[f64]| obj.score(&round(x));
    let x0: Vec<f64> = start.iter().map(|&w| f64::from(w)).collect();
    let s0 = eval(obj, &x0);
    let mut best = (start.to_vec(), s0);
    let mut pts: Vec<(Vec<f64>, f64)> = vec![(x0.clone(), s0.value())];
    for i in 0..d {
        if obj.evaluations - first >= budget {
            return best;
        }
        let mut x = x0.clone();
        x[i] = if x[i] + 4.0 <= f64::from(MAX_WEIGHT) {
            x[i] + 4.0
        } else {
            x[i] - 4.0
        };
        let s = eval(obj, &x);
        if s.value() < best.1.value() {
            best = (round(&x), s);
        }
        pts.push((x, s.value()));
    }
    while obj.evaluations - first < budget {
        pts.sort_by(|a, b| a.1.total_cmp(&b.1));
        let worst = pts[d].clone();
        let centroid: Vec<f64> = (0..d)
            .map(|j| pts[..d].iter().map(|p| p.0[j]).sum::<f64>() / d as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&worst.0)
                .map(|(c, w)| (c + t * (c - w)).clamp(1.0, f64::from(MAX_WEIGHT)))
                .collect()
        };
        let try_point = |obj: &mut Objective<'_>, x: Vec<f64>, best: &mut (Vec<u32>, Score)| {
            let s = eval(obj, &x);
            if s.value() < best.1.value() {
                *best = (round(&x), s);
            }
            (x, s.value())
        };
        let r = try_point(obj, along(1.0), &mut best);
        if r.1 < pts[0].1 {
            let e = try_point(obj, along(2.0), &mut best);
            pts[d] = if e.1 < r.1 { e } else { r };
        } else if r.1 < pts[d - 1].1 {
            pts[d] = r;
        } else {
            let c = try_point(
                obj,
                along(if r.1 < worst.1 { 0.5 } else { -0.5 }),
                &mut best,
            );
            if c.1 < worst.1.min(r.1) {
                pts[d] = c;
            } else {
                // Shrink towards the best.
                let b = pts[0].0.clone();
                for p in pts.iter_mut().skip(1) {
                    if obj.evaluations - first >= budget {
                        break;
                    }
                    let x: Vec<f64> =
                        p.0.iter()
                            .zip(&b)
                            .map(|(v, bv)| bv + 0.5 * (v - bv))
                            .collect();
                    *p = try_point(obj, x, &mut best);
                }
            }
        }
    }
    best
}

/// One weight at a time from `start`, at most `budget` evaluations: a
/// random link gets a random weight, kept if the score improves.
pub fn local_search(
    obj: &mut Objective<'_>,
    start: &[u32],
    budget: u64,
    seed: u64,
) -> (Vec<u32>, Score) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let first = obj.evaluations;
    let mut w = start.to_vec();
    let mut s = obj.score(&w);
    while obj.evaluations - first < budget && !w.is_empty() {
        let l = rng.random_range(0..w.len());
        let old = w[l];
        w[l] = rng.random_range(1..=MAX_WEIGHT);
        let t = obj.score(&w);
        if t.value() < s.value() {
            s = t;
        } else {
            w[l] = old;
        }
    }
    (w, s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::Link;

    /// Two parallel paths from 0 to 3 (0-1-3 and 0-2-3), 1 Mb/s each, and
    /// two 0.7 Mb/s demands from 0 to 3 and from 1 to 3.
    fn two_paths() -> Topology {
        let link = |a, b| Link {
            a,
            b,
            capacity_bps: 1e6,
            delay_us: 100,
        };
        Topology {
            name: "two".into(),
            nodes: (0..4).map(|i| i.to_string()).collect(),
            links: vec![link(0, 1), link(1, 3), link(0, 2), link(2, 3)],
        }
    }

    #[test]
    fn the_objective_counts_flows_on_overloaded_links_and_the_optimisers_spread_them() {
        let t = two_paths();
        let up = vec![true; 4];
        let demands = [
            Demand {
                src: 0,
                dst: 3,
                bps: 700_000.0,
            },
            Demand {
                src: 1,
                dst: 3,
                bps: 700_000.0,
            },
        ];
        let mut obj = Objective::new(&t, &up, &demands);
        // Equal weights: 0 -> 3 goes by 1 (the lower first hop), with 1's own.
        let s = obj.score(&[1, 1, 1, 1]);
        assert_eq!(s.lossy, 2);
        assert!((s.max_utilisation - 1.4).abs() < 1e-9);
        for (name, (w, s)) in [
            ("simplex", simplex(&mut obj, &[1, 1, 1, 1], 200)),
            (
                "local search",
                local_search(&mut obj, &[1, 1, 1, 1], 200, 1),
            ),
        ] {
            assert_eq!(s.lossy, 0, "{name}: {w:?}");
            assert!(w[0] + w[1] > w[2] + w[3], "{name}: 0 -> 3 by 2: {w:?}");
        }
    }
}
