//! What routing knows of the flows it installed, to delete them when
//! what they rest on changes ([`Installed`]): per switch and destination
//! host, the links their paths cross from that switch on and the longest
//! of those paths (a link that goes, or a new one that makes a path
//! shorter); per destination, the switches with flows towards it; per
//! source, the switches with flows from it (a host that moves or goes);
//! and, in a cluster, the switches whose flows it took over from another
//! member, of which it has no such records (`adopted`).
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
    /// Every link their paths cross from the switch on, since the first
    /// of them was installed (paths computed from different topologies may
    /// differ; one that expired leaves its links here until its host or
    /// a link goes, which at worst deletes a flow more than needed).
    links: SmallVec<[Link; 4]>,
    /// The longest of those paths, in links.
    longest: usize,
    /// The number of the last path that installed one.
    generation: u64,
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
    by_link: HashMap<Link, HashSet<(DatapathId, MacAddr), Hasher>, Hasher>,
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
        for &(dpid, i) in hops {
            let from_here = &links[i.min(links.len())..];
            let t = self.towards.entry((dpid, dst)).or_default();
            t.generation = generation;
            t.longest = t.longest.max(from_here.len());
            for l in from_here {
                let l = l.canonical();
                if !t.links.contains(&l) {
                    t.links.push(l);
                    self.by_link.entry(l).or_default().insert((dpid, dst));
                }
            }
            towards_dst.add(dpid, generation);
        }
    }

    /// The switches and destinations whose flows cross link `l` (either
    /// way).
    pub fn across(&self, l: &Link) -> impl Iterator<Item = (DatapathId, MacAddr)> + '_ {
        self.by_link
            .get(&l.canonical())
            .into_iter()
            .flatten()
            .copied()
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
        if let Some(s) = self.by_dst.get_mut(&dst) {
            s.remove(dpid);
            if s.list.is_empty() {
                self.by_dst.remove(&dst);
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
        let mut across: Vec<_> = installed.across(&s2s3.reversed()).collect();
        across.sort();
        assert_eq!(across, vec![(d(1), C), (d(2), C)]);
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
        let mut across: Vec<_> = installed.across(&s2s3).collect();
        across.sort();
        assert_eq!(across, vec![(d(1), C), (d(2), C)]);
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
        assert_eq!(installed.across(&s1s2).count(), 0);
        assert!(installed.pending.is_empty());
        installed.forget_switch(d(2));
        assert_eq!(installed.len(), 0);
        assert!(installed.towards(B).is_empty() && installed.hosts().next().is_none());
    }
}
