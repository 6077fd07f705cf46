//! Following a traced packet back: which switches the copy that reached
//! a host crossed, out of the records of every copy of it.

use crate::graph::SwitchId;

/// A switch that received a traced packet, and where from.
pub(super) type Hop = (SwitchId, Option<SwitchId>);

/// The path of the copy that reached `last`: back from `last` along the
/// switch each one first received the packet from, until a switch that
/// received it from a host; source switch first. Floods leave records of
/// copies that went elsewhere; they are not on this chain.
pub(super) fn path_to(hops: &[Hop], last: SwitchId) -> Vec<SwitchId> {
    let mut path = vec![last];
    let mut cur = last;
    while path.len() <= hops.len() {
        match hops.iter().find(|(s, _)| *s == cur) {
            Some((_, Some(from))) => {
                path.push(*from);
                cur = *from;
            }
            _ => break,
        }
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arriving_copy_s_path_is_followed_back_through_a_flood() {
        let s = SwitchId;
        // From a host into 0, flooded to 1 and 2, 2 on to 3, 1 on to 3
        // too (3 first got it from 2), then 3 to 4.
        let hops = [
            (s(0), None),
            (s(1), Some(s(0))),
            (s(2), Some(s(0))),
            (s(3), Some(s(2))),
            (s(3), Some(s(1))),
            (s(4), Some(s(3))),
        ];
        assert_eq!(path_to(&hops, s(4)), [s(0), s(2), s(3), s(4)]);
        assert_eq!(path_to(&hops, s(1)), [s(0), s(1)]);
        // A cycle of records ends instead of looping.
        let cyclic = [(s(0), Some(s(1))), (s(1), Some(s(0)))];
        assert!(path_to(&cyclic, s(0)).len() <= 3);
    }
}
