//! Which member should master a datapath: rendezvous hashing (highest
//! random weight, Thaler and Ravishankar 1998) over the members connected
//! to it.
//!
//! Every (datapath, member) pair gets a pseudo-random score, the same on
//! every member; the highest-scoring candidate is preferred. Datapaths
//! spread evenly (each datapath weighs one: balance by switch count), and
//! membership changes move few of them: a member that joins takes only
//! the datapaths it now scores highest on (about 1/n of them), and one
//! that leaves gives up only its own. Nothing else moves, so a join or a
//! departure is never a reshuffle of the whole network.

/// The preferred master of `dpid` among `candidates` (member names);
/// `None` when there are none.
pub fn preferred<'a>(dpid: u64, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .max_by_key(|node| (score(dpid, node), *node))
}

/// The pair's score: FNV-1a of the member's name, mixed with the datapath
/// id by splitmix64's finaliser (a fixed function: every member computes
/// the same).
fn score(dpid: u64, node: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in node.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h ^ dpid.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("baton-{i}")).collect()
    }

    #[test]
    fn a_thousand_datapaths_spread_evenly_over_three_members() {
        let members = names(3);
        let mut count = [0usize; 3];
        for dpid in 1..=1000u64 {
            let m = preferred(dpid, members.iter().map(String::as_str)).unwrap();
            count[members.iter().position(|x| x == m).unwrap()] += 1;
        }
        for c in count {
            assert!((250..=420).contains(&c), "{count:?}");
        }
    }

    proptest! {
        /// A member joining takes datapaths only for itself; one leaving
        /// moves only its own.
        #[test]
        fn membership_changes_move_only_what_they_must(n in 1usize..8, dpids in proptest::collection::vec(any::<u64>(), 1..200)) {
            let before = names(n);
            let after = names(n + 1);
            let newcomer = after[n].as_str();
            for &d in &dpids {
                let a = preferred(d, before.iter().map(String::as_str)).unwrap();
                let b = preferred(d, after.iter().map(String::as_str)).unwrap();
                prop_assert!(a == b || b == newcomer);
            }
        }
    }
}
