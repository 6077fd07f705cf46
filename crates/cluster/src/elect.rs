//! The election of each datapath's master, with no I/O: what a member
//! knows of the cluster ([`Observed`], kept current from etcd's watch)
//! and what it should do about it ([`Elector::plan`]).
//!
//! Keys, under the cluster's prefix:
//! - `members/NAME`: a live member (attached to its lease);
//! - `connected/DPID/NAME`: NAME has a session with the datapath (lease);
//! - `masters/DPID`: the datapath's master, NAME (lease). It is created
//!   only where absent (an etcd transaction), so there is at most one; its
//!   create revision is the **generation id** the master sends in its
//!   ROLE_REQUEST (etcd revisions only grow, so a newer master always has
//!   a larger one and a switch refuses the older master's requests).
//!
//! A member claims a datapath it is connected to when the claim is free
//! and it is the preferred master ([`crate::assign`]), or when the claim
//! has stayed free for [`Elector::claim_grace`] (the preferred one may be
//! unable to). It hands a claim over (demoting itself first, then
//! deleting the claim) when another connected member, known for at least
//! [`Elector::settle`], is preferred: a member that joins gets its share
//! after it settled, a few datapaths per round
//! ([`Elector::max_handovers`]), never all at once. A claim dies with its
//! owner's lease, and an owner that cannot renew its lease demotes itself
//! before the lease can have expired ([`crate::lease`]), so two members
//! never both act as master of one datapath.

use crate::assign;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// A datapath id.
pub type Dpid = u64;

/// Who holds a datapath's claim, and since which etcd revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub node: String,
    /// The claim key's create revision: the generation id.
    pub created: i64,
    /// The lease it is attached to: a member trusts its own claim only
    /// under its current lease (one made under a lease that expired is
    /// gone, or about to be, whatever the watch has said so far).
    pub lease: i64,
}

/// What a member knows of the cluster from etcd.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Live members, with their record (JSON) as they wrote it.
    pub members: BTreeMap<String, Vec<u8>>,
    /// For each datapath, the members connected to it.
    pub connected: BTreeMap<Dpid, BTreeSet<String>>,
    /// Each claimed datapath's master.
    pub claims: BTreeMap<Dpid, Claim>,
    /// The largest claim revision seen per datapath, the generation a
    /// slave's ROLE_REQUEST carries.
    pub generations: BTreeMap<Dpid, i64>,
    /// The revision of the last change applied to each key, deleted keys
    /// included, so a late event never undoes a newer one.
    seen: BTreeMap<String, i64>,
}

/// A key as the cluster names it (the part after the prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Member(String),
    Connected(Dpid, String),
    Master(Dpid),
}

impl Key {
    /// The key's path under the prefix.
    pub fn path(&self) -> String {
        match self {
            Key::Member(n) => format!("members/{n}"),
            Key::Connected(d, n) => format!("connected/{d:016x}/{n}"),
            Key::Master(d) => format!("masters/{d:016x}"),
        }
    }

    /// Reads a path under the prefix; `None` for anything else.
    pub fn parse(path: &str) -> Option<Key> {
        let mut parts = path.splitn(3, '/');
        let kind = parts.next()?;
        let a = parts.next()?;
        let b = parts.next();
        let dpid = || u64::from_str_radix(a, 16).ok();
        match (kind, b) {
            ("members", None) if !a.is_empty() => Some(Key::Member(a.to_string())),
            ("connected", Some(n)) if !n.is_empty() && !n.contains('/') => {
                Some(Key::Connected(dpid()?, n.to_string()))
            }
            ("masters", None) => Some(Key::Master(dpid()?)),
            _ => None,
        }
    }
}

impl Observed {
    /// Applies a change of `key` (under the prefix) at `revision`: its new
    /// value, create revision and lease, or `None` when deleted. Changes
    /// older than one already applied to the key are ignored.
    pub fn apply(&mut self, key: &str, value: Option<(&[u8], i64, i64)>, revision: i64) {
        let Some(k) = Key::parse(key) else {
            return;
        };
        if self.seen.get(key).is_some_and(|&r| r > revision) {
            return;
        }
        self.seen.insert(key.to_string(), revision);
        match (k, value) {
            (Key::Member(n), Some((v, ..))) => {
                self.members.insert(n, v.to_vec());
            }
            (Key::Member(n), None) => {
                self.members.remove(&n);
            }
            (Key::Connected(d, n), Some(_)) => {
                self.connected.entry(d).or_default().insert(n);
            }
            (Key::Connected(d, n), None) => {
                if let Some(set) = self.connected.get_mut(&d) {
                    set.remove(&n);
                    if set.is_empty() {
                        self.connected.remove(&d);
                    }
                }
            }
            (Key::Master(d), Some((v, created, lease))) => {
                let node = String::from_utf8_lossy(v).into_owned();
                let g = self.generations.entry(d).or_default();
                *g = (*g).max(created);
                self.claims.insert(
                    d,
                    Claim {
                        node,
                        created,
                        lease,
                    },
                );
            }
            (Key::Master(d), None) => {
                self.claims.remove(&d);
            }
        }
    }

    /// Replaces what is known with a full read at `revision` (after a
    /// broken watch): keys absent from it and not changed since are gone.
    /// Each key comes with its value, create revision, modification
    /// revision and lease.
    pub fn reset(&mut self, revision: i64, keys: &[(String, Vec<u8>, i64, i64, i64)]) {
        let present: BTreeSet<&str> = keys.iter().map(|(k, ..)| k.as_str()).collect();
        let stale: Vec<String> = self
            .seen
            .iter()
            .filter(|(k, r)| **r <= revision && !present.contains(k.as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            self.apply(&k, None, revision);
        }
        for (k, v, created, modified, lease) in keys {
            self.apply(k, Some((v, *created, *lease)), *modified);
        }
    }

    /// The live members connected to `dpid`.
    fn candidates(&self, dpid: Dpid) -> impl Iterator<Item = &str> {
        self.connected
            .get(&dpid)
            .into_iter()
            .flatten()
            .filter(|n| self.members.contains_key(*n))
            .map(String::as_str)
    }

    /// The generation id a slave of `dpid` sends: the current claim's, or
    /// the last one seen.
    pub fn generation(&self, dpid: Dpid) -> u64 {
        self.generations.get(&dpid).copied().unwrap_or(0).max(0) as u64
    }
}

/// What this member is to a datapath, as the runtime was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Master, with the generation id sent.
    Master(u64),
    /// Slave, with the generation id sent.
    Slave(u64),
}

/// One step a member should take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Tell the runtime (and so the switch) this role.
    Become(Dpid, Role),
    /// Create `masters/DPID` for this member, if absent.
    Claim(Dpid),
    /// Delete `masters/DPID` if it is still the claim made at `created`.
    Release(Dpid, i64),
}

/// One member's decisions.
#[derive(Debug)]
pub struct Elector {
    me: String,
    /// How long a member must be known before others hand it datapaths.
    pub settle: Duration,
    /// How long a datapath's claim may stay free before any connected
    /// member claims it, preferred or not.
    pub claim_grace: Duration,
    /// Most handovers started in one round.
    pub max_handovers: usize,
    roles: BTreeMap<Dpid, Role>,
    first_seen: BTreeMap<String, Instant>,
    unclaimed_since: BTreeMap<Dpid, Instant>,
    /// Claims this member gave up (datapath, create revision): never
    /// trusted again, even while the watch still shows them.
    released: BTreeSet<(Dpid, i64)>,
}

impl Elector {
    /// The elector of member `me`.
    pub fn new(me: &str) -> Elector {
        Elector {
            me: me.to_string(),
            settle: Duration::from_secs(2),
            claim_grace: Duration::from_secs(2),
            max_handovers: 4,
            roles: BTreeMap::new(),
            first_seen: BTreeMap::new(),
            unclaimed_since: BTreeMap::new(),
            released: BTreeSet::new(),
        }
    }

    /// This member's name.
    pub fn me(&self) -> &str {
        &self.me
    }

    /// The role the runtime was last told for each datapath.
    pub fn roles(&self) -> &BTreeMap<Dpid, Role> {
        &self.roles
    }

    /// The runtime took `role` for `dpid` (the switch accepted it).
    pub fn applied(&mut self, dpid: Dpid, role: Role) {
        self.roles.insert(dpid, role);
    }

    /// The roles the runtime has now, replacing what this elector
    /// remembers: a datapath missing from `roles` was never given one
    /// (a new session), and gets one at the next plan.
    pub fn runtime_has(&mut self, roles: BTreeMap<Dpid, Role>) {
        self.roles = roles;
    }

    /// What to do now, given what is known (`obs`), the datapaths this
    /// member has a session with (`local`), its current lease, and whether
    /// that lease is certainly alive (`healthy`,
    /// [`crate::lease::LeaseClock::healthy`]). Demotions come first, then
    /// releases, claims and promotions.
    pub fn plan(
        &mut self,
        obs: &Observed,
        local: &BTreeSet<Dpid>,
        lease: Option<i64>,
        healthy: bool,
        now: Instant,
    ) -> Vec<Action> {
        let healthy = healthy && lease.is_some();
        self.roles.retain(|d, _| local.contains(d));
        self.first_seen.retain(|n, _| obs.members.contains_key(n));
        for n in obs.members.keys() {
            self.first_seen.entry(n.clone()).or_insert(now);
        }
        let mut demote = Vec::new();
        let mut release = Vec::new();
        let mut claim = Vec::new();
        let mut promote = Vec::new();
        if !healthy {
            for (&d, role) in &self.roles {
                if let Role::Master(g) = *role {
                    demote.push(Action::Become(d, Role::Slave(g)));
                }
            }
            return demote;
        }
        let settled = |n: &str| {
            n == self.me
                || self
                    .first_seen
                    .get(n)
                    .is_some_and(|t| now.saturating_duration_since(*t) >= self.settle)
        };
        // The preferred masters: among the members known long enough to be
        // handed datapaths, and among every member (for claims).
        let among_settled = assign::balanced(
            obs.connected
                .keys()
                .map(|&d| (d, obs.candidates(d).filter(|n| settled(n)))),
        );
        let among_all = assign::balanced(obs.connected.keys().map(|&d| (d, obs.candidates(d))));
        for &d in local {
            let claim_now = obs.claims.get(&d);
            if claim_now.is_some() {
                self.unclaimed_since.remove(&d);
            }
            let want = match claim_now {
                Some(c)
                    if c.node == self.me
                        && (Some(c.lease) != lease || self.released.contains(&(d, c.created))) =>
                {
                    // Made under a lease that is gone, or given up: it is
                    // gone, or about to be.
                    Role::Slave(c.created as u64)
                }
                Some(c) if c.node == self.me => {
                    let handover = among_settled.get(&d).is_some_and(|p| *p != self.me);
                    if handover && release.len() < self.max_handovers {
                        self.released.insert((d, c.created));
                        release.push(Action::Release(d, c.created));
                        Role::Slave(c.created as u64)
                    } else {
                        Role::Master(c.created as u64)
                    }
                }
                Some(c) => Role::Slave(c.created as u64),
                None => {
                    let since = *self.unclaimed_since.entry(d).or_insert(now);
                    let mine = among_all.get(&d) == Some(&self.me.as_str());
                    let overdue = now.saturating_duration_since(since) >= self.claim_grace;
                    if (mine || overdue) && obs.members.contains_key(&self.me) {
                        claim.push(Action::Claim(d));
                    }
                    Role::Slave(obs.generation(d))
                }
            };
            let now_role = self.roles.get(&d).copied();
            match (now_role, want) {
                (Some(Role::Slave(_)), Role::Slave(_)) => {}
                (Some(r), w) if r == w => {}
                (_, Role::Slave(_)) => demote.push(Action::Become(d, want)),
                (_, Role::Master(_)) => promote.push(Action::Become(d, want)),
            }
        }
        self.unclaimed_since
            .retain(|d, _| local.contains(d) && !obs.claims.contains_key(d));
        // Claims this member holds for datapaths it lost its session with.
        for (&d, c) in &obs.claims {
            if c.node == self.me && Some(c.lease) == lease && !local.contains(&d) {
                self.released.insert((d, c.created));
                release.push(Action::Release(d, c.created));
            }
        }
        self.released
            .retain(|(d, created)| obs.claims.get(d).is_some_and(|c| c.created == *created));
        // A release that has not shown yet (lost on the way, perhaps) is
        // asked again; deleting a claim that is gone does nothing.
        for &(d, created) in &self.released {
            let asked = Action::Release(d, created);
            if !release.contains(&asked) {
                release.push(asked);
            }
        }
        demote.extend(release);
        demote.extend(claim);
        demote.extend(promote);
        demote
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_as_written() {
        for k in [
            Key::Member("a".into()),
            Key::Connected(0x1f, "b".into()),
            Key::Master(u64::MAX),
        ] {
            assert_eq!(Key::parse(&k.path()), Some(k));
        }
        assert_eq!(Key::parse("masters/zz"), None);
        assert_eq!(Key::parse("members/"), None);
        assert_eq!(Key::parse("other/1"), None);
    }

    #[test]
    fn a_late_event_does_not_undo_a_newer_one() {
        let mut o = Observed::default();
        o.apply("masters/0000000000000001", Some((b"a", 5, 1)), 5);
        o.apply("masters/0000000000000001", None, 9);
        // The put at 5 again (a re-read raced with the watch): ignored.
        o.apply("masters/0000000000000001", Some((b"a", 5, 1)), 5);
        assert!(o.claims.is_empty());
        assert_eq!(o.generation(1), 5);
    }

    #[test]
    fn a_reset_forgets_what_is_gone_but_not_what_is_newer() {
        let mut o = Observed::default();
        o.apply("members/a", Some((b"{}", 2, 1)), 2);
        o.apply("members/b", Some((b"{}", 3, 1)), 3);
        o.apply("members/c", Some((b"{}", 12, 1)), 12);
        o.reset(10, &[("members/a".into(), b"{}".to_vec(), 2, 2, 1)]);
        let names: Vec<&String> = o.members.keys().collect();
        assert_eq!(names, ["a", "c"]);
    }
}
