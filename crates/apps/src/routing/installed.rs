//! What routing knows of the flows it installed, to delete them when
//! what they rest on changes ([`Installed`]): per switch and destination
//! host, the link their paths leave the switch by and the next switch on
//! them, and the longest of those paths (a link that goes, or a new one
//! that makes a path shorter); per destination, the switches with flows
//! towards it; per source, the switches with flows from it (a host that
//! moves or goes); and, in a cluster, the switches whose flows it took
//! over from another member, of which it has no such records (`adopted`).
//!
//! Per switch and host, not per pair of hosts. A path for a new pair
//! towards a destination already served costs one look-up per hop that
//! finds its record unchanged, and the records do not grow with the
//! pairs: cbench's 100,000 sources a switch towards one gateway are 6.4
//! million pairs at 64 switches, each of which was an entry in four maps,
//! and the emulator's paths ran at a quarter of the learning switch's
//! rate (BENCHMARKS.md). Routing's flows ask for no FLOW_REMOVED: a
//! record goes when the flows it stands for are deleted, not when they
//! idle out, so it may name a switch that no longer has them, which costs
//! at most a deletion that finds nothing.
//!
//! A record holds a path's next link, not the rest of the path: the
//! flows towards a host form a tree, and those that cross a link are
//! found by walking it upstream from the link ([`Installed::across`]).
//! Every link from each hop on was a path's length squared in records: at
//! 10,000 switches (paths of about 50 links) 1,275 of them a direction
//! per pair, most of what a soak's controller grew by (BENCHMARKS.md).

use crate::views::Link;
use baton_openflow::neutral::MatchSpec;
use baton_openflow::{DatapathId, MacAddr};
use smallvec::SmallVec;
use std::collections::{HashMap, HashSet};

/// The hash of the records: foldhash, seeded at random per process
/// (addresses are the hosts' to choose).
type Hasher = foldhash::fast::RandomState;

/// The flows on one switch towards one host.
#[derive(Debug, Default)]
struct Towards {
    /// The links their paths leave the switch by, up to the next switch
    /// on them with flows of this instance's (more than one link only
    /// across another member's switches): one, unless paths computed
    /// from different topologies differ here. One that expired stays
    /// until its host or a link goes, which at worst deletes a flow more
    /// than needed.
    links: SmallVec<[Link; 1]>,
    /// Those next switches (none where the rest of a path is another
    /// member's or the host's own switch).
    next: SmallVec<[DatapathId; 1]>,
    /// The longest of their paths from here, in links.
    longest: usize,
    /// The number of the last path that installed one.
    generation: u64,
}

/// The records holding each link ([`Installed`]'s `by_link`).
type ByLink = HashMap<Link, HashSet<(DatapathId, MacAddr), Hasher>, Hasher>;

/// The switches leading to each switch towards a host ([`Installed`]'s
/// `upstream`).
type Upstream = HashMap<(DatapathId, MacAddr), SmallVec<[DatapathId; 2]>, Hasher>;

impl Towards {
    /// Adds link `l` (canonical) to this record, `key`'s, and the record
    /// to those holding `l`.
    fn hold_link(&mut self, l: Link, key: (DatapathId, MacAddr), by_link: &mut ByLink) {
        if !self.links.contains(&l) {
            self.links.push(l);
            by_link.entry(l).or_default().insert(key);
        }
    }

    /// Records that the flows of this record, `(dpid, dst)`'s, lead to
    /// switch `n`.
    fn lead_to(
        &mut self,
        n: DatapathId,
        (dpid, dst): (DatapathId, MacAddr),
        upstream: &mut Upstream,
    ) {
        if !self.next.contains(&n) {
            self.next.push(n);
            upstream.entry((n, dst)).or_default().push(dpid);
        }
    }
}

/// The switches with flows towards or from one host, and the number of
/// the last path that installed one; most hosts' flows are on a few.
#[derive(Debug, Default)]
struct Switches {
    list: SmallVec<[DatapathId; 4]>,
    generation: u64,
}

impl Switches {
    fn add(&mut self, dpid: DatapathId, generation: u64) {
        if !self.list.contains(&dpid) {
            self.list.push(dpid);
        }
        self.generation = generation;
    }

    fn remove(&mut self, dpid: DatapathId) {
        self.list.retain(|d| *d != dpid);
    }
}

/// The flows routing installed ([module docs](self)).
#[derive(Default)]
pub(super) struct Installed {
    towards: HashMap<(DatapathId, MacAddr), Towards, Hasher>,
    /// The records whose [`Towards::links`] hold a link (either way).
    by_link: ByLink,
    /// For a switch and a destination, the switches whose flows towards
    /// it lead there ([`Towards::next`]): the tree walked upstream.
    upstream: Upstream,
    /// Each destination's switches with flows towards it.
    by_dst: HashMap<MacAddr, Switches, Hasher>,
    /// Each source's switches with flows from it.
    by_src: HashMap<MacAddr, Switches, Hasher>,
    /// Deletions that could not be sent because the switch was away: sent
    /// when it comes back, since a switch in fail-secure mode keeps its
    /// flows meanwhile.
    pub pending: HashMap<DatapathId, Vec<MatchSpec<'static>>>,
    /// The switches seen this run.
    pub seen: HashSet<DatapathId>,
    /// In a cluster, the switches this member became master of with
    /// another member's flows of routing's on them: they stay and carry
    /// traffic through the handover (make before break), but none is in
    /// the records. Every deletion towards or from a host goes to these
    /// switches too, and a change of links deletes all of them (then the
    /// switch is no longer adopted).
    pub adopted: HashSet<DatapathId>,
    /// The last path's number.
    generation: u64,
}

impl Installed {
    /// The number of the last path recorded: the deletions listed now
    /// concern the flows up to it ([`Installed::forget_towards`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Records a path of `src`'s packets towards `dst` that crosses
    /// `links`: `hops` are its switches (those with flows of this
    /// instance's), each with where its links start (`links[i..]` for the
    /// path's hop `i`).
    pub fn record(
        &mut self,
        hops: &[(DatapathId, usize)],
        links: &[Link],
        (src, dst): (MacAddr, MacAddr),
    ) {
        self.record_towards(hops, links, dst);
        let (generation, from_src) = (self.generation, self.by_src.entry(src).or_default());
        for &(dpid, _) in hops {
            from_src.add(dpid, generation);
        }
    }

    /// Records flows towards `dst` on `hops` along `links`, as
    /// [`Installed::record`] does, for every source at once: a path that
    /// `route-flow` moved off a link that went.
    pub fn record_towards(&mut self, hops: &[(DatapathId, usize)], links: &[Link], dst: MacAddr) {
        self.generation += 1;
        let generation = self.generation;
        let towards_dst = self.by_dst.entry(dst).or_default();
        for (k, &(dpid, i)) in hops.iter().enumerate() {
            let next = hops.get(k + 1).copied();
            let start = i.min(links.len());
            let end = next.map_or(links.len(), |(_, j)| j.clamp(start, links.len()));
            let t = self.towards.entry((dpid, dst)).or_default();
            t.generation = generation;
            t.longest = t.longest.max(links.len() - start);
            for l in &links[start..end] {
                t.hold_link(l.canonical(), (dpid, dst), &mut self.by_link);
            }
            if let Some((n, _)) = next {
                t.lead_to(n, (dpid, dst), &mut self.upstream);
            }
            towards_dst.add(dpid, generation);
        }
    }

    /// The switches and destinations whose flows cross link `l` (either
    /// way), in order: those whose records hold it, and every switch
    /// upstream of them towards the same host.
    pub fn across(&self, l: &Link) -> Vec<(DatapathId, MacAddr)> {
        let mut found: HashSet<(DatapathId, MacAddr), Hasher> = self
            .by_link
            .get(&l.canonical())
            .into_iter()
            .flatten()
            .copied()
            .collect();
        let mut walk: Vec<_> = found.iter().copied().collect();
        while let Some((at, dst)) = walk.pop() {
            for &up in self.upstream.get(&(at, dst)).into_iter().flatten() {
                if found.insert((up, dst)) {
                    walk.push((up, dst));
                }
            }
        }
        let mut found: Vec<_> = found.into_iter().collect();
        found.sort_unstable();
        found
    }

    /// Every switch and destination with flows, with the longest of their
    /// paths from there.
    pub fn longest(&self) -> impl Iterator<Item = ((DatapathId, MacAddr), usize)> + '_ {
        self.towards.iter().map(|(&k, t)| (k, t.longest))
    }

    /// The switches with flows towards `dst`.
    pub fn towards(&self, dst: MacAddr) -> &[DatapathId] {
        self.by_dst.get(&dst).map_or(&[], |s| &s.list)
    }

    /// The switches with flows from `src`.
    pub fn from(&self, src: MacAddr) -> &[DatapathId] {
        self.by_src.get(&src).map_or(&[], |s| &s.list)
    }

    /// Every host with flows towards or from it.
    pub fn hosts(&self) -> impl Iterator<Item = MacAddr> + '_ {
        self.by_dst.keys().chain(self.by_src.keys()).copied()
    }

    /// Forgets the flows towards `dst` on `dpid`, deleted, unless a path
    /// numbered after `up_to` installed one since (if the deletion took it
    /// too, the record costs at most a deletion more).
    pub fn forget_towards(&mut self, dpid: DatapathId, dst: MacAddr, up_to: u64) {
        let Some(t) = self.towards.get(&(dpid, dst)) else {
            return;
        };
        if t.generation > up_to {
            return;
        }
        self.drop_towards(dpid, dst);
    }

    fn drop_towards(&mut self, dpid: DatapathId, dst: MacAddr) {
        let Some(t) = self.towards.remove(&(dpid, dst)) else {
            return;
        };
        for l in &t.links {
            if let Some(s) = self.by_link.get_mut(l) {
                s.remove(&(dpid, dst));
                if s.is_empty() {
                    self.by_link.remove(l);
                }
            }
        }
        for &n in &t.next {
            self.unlink(dpid, (n, dst));
        }
        if let Some(s) = self.by_dst.get_mut(&dst) {
            s.remove(dpid);
            if s.list.is_empty() {
                self.by_dst.remove(&dst);
            }
        }
    }

    /// Forgets that `up`'s flows towards `dst` lead to switch `to`.
    fn unlink(&mut self, up: DatapathId, (to, dst): (DatapathId, MacAddr)) {
        if let Some(ups) = self.upstream.get_mut(&(to, dst)) {
            ups.retain(|d| *d != up);
            if ups.is_empty() {
                self.upstream.remove(&(to, dst));
            }
        }
    }

    /// Hands `dpid`'s links and next switches towards `dst` to the
    /// records upstream of it, which go on through it as through another
    /// member's switch: its own record is about to go, and the flows
    /// upstream still cross what lies beyond it.
    fn splice_out(&mut self, dpid: DatapathId, dst: MacAddr) {
        let Some(t) = self.towards.get(&(dpid, dst)) else {
            return;
        };
        let (links, next) = (t.links.clone(), t.next.clone());
        let ups = self.upstream.remove(&(dpid, dst)).unwrap_or_default();
        for up in ups {
            let Some(u) = self.towards.get_mut(&(up, dst)) else {
                continue;
            };
            u.next.retain(|d| *d != dpid);
            for &l in &links {
                u.hold_link(l, (up, dst), &mut self.by_link);
            }
            for &n in next.iter().filter(|&&n| n != up) {
                u.lead_to(n, (up, dst), &mut self.upstream);
            }
        }
    }

    /// Forgets the flows from `src`, deleted on every switch that had
    /// them, unless a path numbered after `up_to` installed one since.
    pub fn forget_from(&mut self, src: MacAddr, up_to: u64) {
        if self.by_src.get(&src).is_some_and(|s| s.generation <= up_to) {
            self.by_src.remove(&src);
        }
    }

    /// Switch-and-destination records, for tests and the operator.
    pub fn len(&self) -> usize {
        self.towards.len()
    }

    /// Forgets every flow on `dpid` and the deletions kept for it: another
    /// member of the cluster masters it now, or this one has just become
    /// its master (and adopts what is there).
    pub fn forget_switch(&mut self, dpid: DatapathId) {
        let dsts: Vec<MacAddr> = self
            .towards
            .keys()
            .filter(|(d, _)| *d == dpid)
            .map(|&(_, mac)| mac)
            .collect();
        for dst in dsts {
            self.splice_out(dpid, dst);
            self.drop_towards(dpid, dst);
        }
        self.by_src.retain(|_, s| {
            s.remove(dpid);
            !s.list.is_empty()
        });
        self.pending.remove(&dpid);
        self.adopted.remove(&dpid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::PortRef;
    use baton_openflow::PortNo;
    use proptest::prelude::*;
    use proptest::sample::subsequence;

    const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const B: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
    const C: MacAddr = MacAddr([2, 0, 0, 0, 0, 3]);

    fn d(n: u64) -> DatapathId {
        DatapathId(n)
    }

    fn link(a: u64, b: u64) -> Link {
        Link {
            src: PortRef::new(d(a), PortNo(2)),
            dst: PortRef::new(d(b), PortNo(1)),
        }
    }

    #[test]
    fn a_path_is_recorded_per_switch_and_destination_not_per_pair() {
        let mut installed = Installed::default();
        let (s1s2, s2s3) = (link(1, 2), link(2, 3));
        installed.record(&[(d(1), 0), (d(2), 1), (d(3), 2)], &[s1s2, s2s3], (A, C));
        installed.record(&[(d(1), 0), (d(2), 1), (d(3), 2)], &[s1s2, s2s3], (B, C));
        assert_eq!(installed.len(), 3, "one record per switch towards C");
        assert_eq!(installed.towards(C), &[d(1), d(2), d(3)]);
        assert_eq!(installed.from(A), &[d(1), d(2), d(3)]);
        assert_eq!(
            installed.across(&s2s3.reversed()),
            vec![(d(1), C), (d(2), C)]
        );
        let longest: HashMap<_, _> = installed.longest().collect();
        assert_eq!(longest[&(d(1), C)], 2);
        assert_eq!(longest[&(d(3), C)], 0);
    }

    #[test]
    fn flows_moved_for_every_source_are_recorded_towards_their_host_only() {
        let mut installed = Installed::default();
        let (s1s2, s2s3) = (link(1, 2), link(2, 3));
        installed.record_towards(&[(d(1), 0), (d(2), 1)], &[s1s2, s2s3], C);
        assert_eq!(installed.towards(C), &[d(1), d(2)]);
        assert!(installed.hosts().eq([C]), "no source named");
        assert_eq!(installed.across(&s2s3), vec![(d(1), C), (d(2), C)]);
    }

    #[test]
    fn a_record_a_newer_path_renewed_stays_when_older_flows_are_forgotten() {
        let mut installed = Installed::default();
        installed.record(&[(d(1), 0)], &[], (A, B));
        let up_to = installed.generation();
        installed.record(&[(d(2), 0)], &[], (C, B));
        installed.forget_towards(d(1), B, up_to);
        installed.forget_towards(d(2), B, up_to);
        assert_eq!(installed.towards(B), &[d(2)], "the newer one stays");
        installed.forget_from(A, up_to);
        installed.forget_from(C, up_to);
        assert!(installed.from(A).is_empty());
        assert_eq!(installed.from(C), &[d(2)]);
    }

    #[test]
    fn a_switch_forgotten_takes_its_records_along() {
        let mut installed = Installed::default();
        let s1s2 = link(1, 2);
        installed.record(&[(d(1), 0), (d(2), 1)], &[s1s2], (A, B));
        installed.pending.insert(d(1), Vec::new());
        installed.forget_switch(d(1));
        assert_eq!(installed.towards(B), &[d(2)]);
        assert_eq!(installed.from(A), &[d(2)]);
        assert!(installed.across(&s1s2).is_empty());
        assert!(installed.pending.is_empty());
        installed.forget_switch(d(2));
        assert_eq!(installed.len(), 0);
        assert!(installed.towards(B).is_empty() && installed.hosts().next().is_none());
    }

    /// A path over switches `1..=n`, every one served: its hops and links.
    fn line(n: u64) -> (Vec<(DatapathId, usize)>, Vec<Link>) {
        let hops = (1..=n).map(|s| (d(s), s as usize - 1)).collect();
        let links = (1..n).map(|s| link(s, s + 1)).collect();
        (hops, links)
    }

    #[test]
    fn a_path_costs_a_record_a_link_and_finds_everything_upstream_of_a_cut() {
        let mut installed = Installed::default();
        let (hops, links) = line(50);
        installed.record(&hops, &links, (A, B));
        let entries: usize = installed.by_link.values().map(HashSet::len).sum();
        assert_eq!(
            entries, 49,
            "one entry a link, not one per link from every hop on"
        );
        let near_the_end = installed.across(&link(47, 48));
        assert_eq!(
            near_the_end,
            (1..=47).map(|s| (d(s), B)).collect::<Vec<_>>()
        );
        let longest: HashMap<_, _> = installed.longest().collect();
        assert_eq!(longest[&(d(1), B)], 49);
        assert_eq!(longest[&(d(48), B)], 2);
    }

    #[test]
    fn a_path_across_another_members_switches_is_found_from_beyond_them() {
        let mut installed = Installed::default();
        // Switches 2 and 3 are another member's.
        let (_, links) = line(5);
        installed.record(&[(d(1), 0), (d(4), 3), (d(5), 4)], &links, (A, B));
        assert_eq!(installed.across(&link(2, 3)), vec![(d(1), B)]);
        assert_eq!(installed.across(&link(4, 5)), vec![(d(1), B), (d(4), B)]);
    }

    #[test]
    fn a_switch_forgotten_in_the_middle_leaves_the_switches_upstream_findable() {
        let mut installed = Installed::default();
        let (hops, links) = line(4);
        installed.record(&hops, &links, (A, B));
        installed.forget_switch(d(2));
        assert_eq!(installed.across(&link(3, 4)), vec![(d(1), B), (d(3), B)]);
        assert_eq!(installed.across(&link(2, 3)), vec![(d(1), B)]);
        installed.forget_towards(d(1), B, installed.generation());
        assert!(installed.across(&link(2, 3)).is_empty());
        assert_eq!(installed.across(&link(3, 4)), vec![(d(3), B)]);
        let up_to = installed.generation();
        installed.forget_towards(d(3), B, up_to);
        installed.forget_towards(d(4), B, up_to);
        assert_eq!(installed.len(), 0);
        assert!(
            installed.by_link.is_empty() && installed.upstream.is_empty(),
            "nothing left behind"
        );
    }

    proptest! {
        /// Every switch whose recorded path towards a host crosses a link
        /// further on is found from that link, whatever the paths (from
        /// different topologies, crossing each other).
        #[test]
        fn every_flow_across_a_link_is_found(
            paths in proptest::collection::vec(
                (subsequence((1u64..10).collect::<Vec<_>>(), 1..9).prop_shuffle(), 0u8..2),
                1..8,
            ),
        ) {
            let mut installed = Installed::default();
            let mut crossing: std::collections::BTreeSet<(Link, (DatapathId, MacAddr))> =
                Default::default();
            for (switches, to) in &paths {
                let dst = [B, C][*to as usize];
                let mut switches = switches.clone();
                switches.push(10 + u64::from(*to));
                let hops: Vec<_> = switches.iter().enumerate().map(|(i, &s)| (d(s), i)).collect();
                let links: Vec<_> = switches.windows(2).map(|w| link(w[0], w[1])).collect();
                installed.record(&hops, &links, (A, dst));
                for (i, &(s, _)) in hops.iter().enumerate() {
                    for l in &links[i..] {
                        crossing.insert((l.canonical(), (s, dst)));
                    }
                }
            }
            for (l, flow) in &crossing {
                prop_assert!(installed.across(l).contains(flow), "{flow:?} across {l:?}");
            }
        }
    }
}
