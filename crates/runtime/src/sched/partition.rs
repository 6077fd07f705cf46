//! Greedy re-partitioning of switches over workers by measured input rate
//! (Maestro §3.2.3, Fig. 3), used by the `dynamic-partition` scheduler.
//!
//! Sort switches by rate, highest first, and give each to the worker with
//! the least load assigned so far. Optimal partitioning is NP-complete; the
//! greedy rule is what Maestro used.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Assigns each switch (by index into `rates`) to one of `workers`
/// workers. Returns the worker of each switch. Ties go to the lower
/// worker number, and switches of equal rate keep their input order, so
/// the result is deterministic.
pub fn greedy(rates: &[f64], workers: usize) -> Vec<usize> {
    let workers = workers.max(1);
    let mut order: Vec<usize> = (0..rates.len()).collect();
    order.sort_by(|&a, &b| rates[b].total_cmp(&rates[a]).then(a.cmp(&b)));
    // Min-heap of (assigned load, worker). Loads are compared as ordered
    // bit patterns: non-negative finite f64s order like their bits.
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        (0..workers).map(|w| Reverse((0f64.to_bits(), w))).collect();
    let mut out = vec![0; rates.len()];
    for sw in order {
        let Some(Reverse((load, w))) = heap.pop() else {
            break;
        };
        out[sw] = w;
        let rate = if rates[sw].is_finite() {
            rates[sw].max(0.0)
        } else {
            0.0
        };
        heap.push(Reverse(((f64::from_bits(load) + rate).to_bits(), w)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_example_three_switches_two_workers() {
        // §3.2.3: rates r, r, 2r over 2 workers: the 2r switch alone, the
        // two r switches together.
        let a = greedy(&[1.0, 1.0, 2.0], 2);
        assert_eq!(a[2], 0);
        assert_eq!(a[0], 1);
        assert_eq!(a[1], 1);
    }

    #[test]
    fn balances_loads() {
        let rates = [9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
        let a = greedy(&rates, 3);
        let mut load = [0.0; 3];
        for (sw, &w) in a.iter().enumerate() {
            load[w] += rates[sw];
        }
        let max = load.iter().cloned().fold(0.0, f64::max);
        let min = load.iter().cloned().fold(f64::MAX, f64::min);
        assert!(max - min <= 2.0, "loads {load:?}");
    }

    #[test]
    fn handles_degenerate_inputs() {
        assert!(greedy(&[], 4).is_empty());
        assert_eq!(greedy(&[1.0, f64::NAN, -3.0], 0), vec![0, 0, 0]);
    }
}
