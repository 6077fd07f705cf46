//! Surplus Round Robin's bookkeeping for the fair scheduler (Adiseshu,
//! Parulkar and Varghese, "A reliable and scalable striping protocol",
//! SIGCOMM 1996, §3): each service chance gives a switch its quantum; a
//! switch may take more than it has (a whole read, while its bytes are
//! fresh), and what it took beyond is its surplus, paid back one quantum
//! per chance during which it is passed over. Pure arithmetic, so that
//! the fairness it gives can be checked without sockets.

/// What a switch's service chance does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chance {
    /// Passed over: the chance pays back a quantum; `surplus` is left.
    PassOver { surplus: usize },
    /// Served: it is owed `allowance` bytes and may take up to `limit`.
    Serve { allowance: usize, limit: usize },
}

/// The chance of a switch with `surplus` bytes still to pay back, a
/// quantum of `budget` bytes (times its weight), and `whole_read` bytes
/// it may take at once.
pub(crate) fn chance(surplus: usize, budget: usize, whole_read: usize) -> Chance {
    if surplus >= budget {
        Chance::PassOver {
            surplus: surplus - budget,
        }
    } else {
        let allowance = budget - surplus;
        Chance::Serve {
            allowance,
            limit: allowance.max(whole_read),
        }
    }
}

/// The surplus after a service that took `taken` bytes against
/// `allowance`: what it took beyond, or nothing if the switch turned out
/// idle (as DRR forgets the deficit of a queue that empties, so a switch
/// that comes back is not held back for what it took long ago).
pub(crate) fn after(taken: usize, allowance: usize, idle: bool) -> usize {
    if idle {
        0
    } else {
        taken.saturating_sub(allowance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: usize = 1024;

    /// Serves a busy switch for `chances` chances, taking what `offer`
    /// says it has buffered at each (bounded by the limit); returns the
    /// bytes it was served.
    fn run(
        chances: usize,
        budget: usize,
        whole_read: usize,
        offer: impl Fn(usize) -> usize,
    ) -> usize {
        let (mut surplus, mut served) = (0, 0);
        for i in 0..chances {
            surplus = match chance(surplus, budget, whole_read) {
                Chance::PassOver { surplus } => surplus,
                Chance::Serve { allowance, limit } => {
                    let taken = offer(i).min(limit);
                    served += taken;
                    after(taken, allowance, false)
                }
            };
        }
        served
    }

    #[test]
    fn busy_switches_get_a_quantum_per_chance_whatever_they_take_at_once() {
        let chances = 1000;
        // One switch always has a whole read waiting, another only 20 KB,
        // a third only 5 KB more than a quantum every other time.
        let whole = run(chances, 16 * KB, 64 * KB, |_| 64 * KB);
        let some = run(chances, 16 * KB, 64 * KB, |_| 20 * KB);
        let uneven = run(chances, 16 * KB, 64 * KB, |i| {
            if i % 2 == 0 { 21 * KB } else { 30 * KB }
        });
        let fair = chances * 16 * KB;
        for (name, got) in [("whole", whole), ("some", some), ("uneven", uneven)] {
            // Within one whole read of the fair share.
            assert!(
                got.abs_diff(fair) <= 64 * KB,
                "{name}: {got} against {fair}"
            );
        }
    }

    #[test]
    fn a_switch_with_less_than_its_quantum_is_never_passed_over() {
        let mut surplus = 0;
        for _ in 0..100 {
            match chance(surplus, 16 * KB, 64 * KB) {
                Chance::PassOver { .. } => panic!("a light switch was passed over"),
                Chance::Serve { allowance, .. } => surplus = after(3 * KB, allowance, false),
            }
        }
        assert_eq!(surplus, 0);
    }

    #[test]
    fn a_whole_read_is_paid_back_before_the_next_service() {
        let Chance::Serve { allowance, limit } = chance(0, 16 * KB, 64 * KB) else {
            panic!("a switch without surplus is served");
        };
        assert_eq!((allowance, limit), (16 * KB, 64 * KB));
        let mut surplus = after(64 * KB, allowance, false);
        assert_eq!(surplus, 48 * KB);
        for left in [32 * KB, 16 * KB, 0] {
            assert_eq!(
                chance(surplus, 16 * KB, 64 * KB),
                Chance::PassOver { surplus: left }
            );
            surplus = left;
        }
        assert!(matches!(
            chance(surplus, 16 * KB, 64 * KB),
            Chance::Serve { .. }
        ));
    }

    #[test]
    fn an_idle_switch_is_forgiven_its_surplus() {
        assert_eq!(after(0, 16 * KB, true), 0);
        assert_eq!(after(64 * KB, 16 * KB, false), 48 * KB);
    }

    #[test]
    fn without_a_whole_read_it_is_plain_quantum_service() {
        assert_eq!(
            chance(0, 16 * KB, 0),
            Chance::Serve {
                allowance: 16 * KB,
                limit: 16 * KB
            }
        );
    }
}
