//! The 1.3 group table (1.3.5 §5.6, §7.3.4.2): all, select, indirect and
//! fast-failover groups, their buckets with counters, and bucket choice.
//!
//! Select groups pick a bucket by a hash of the packet's key, weighted
//! (so a flow always takes one path); fast-failover groups take the first
//! bucket whose watched port is live. Group chaining (a group action in a
//! bucket) is refused with `OFPGMFC_CHAINING_UNSUPPORTED`, as in Open
//! vSwitch; a fast-failover bucket must watch an existing port, and
//! watching a group is refused (`OFPGMFC_BAD_WATCH`).

use crate::action::{Act, Context, Known, compile13};
use crate::error::OfError;
use crate::port::Ports;
use baton_openflow::types::PortNo;
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::{self, GroupType};
use std::collections::BTreeMap;
use std::time::Instant;

/// Groups a switch holds by default.
pub const DEFAULT_MAX_GROUPS: usize = 65_536;

/// A bucket, compiled.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// Weight (select groups).
    pub weight: u16,
    /// Watched port (fast-failover groups), or `PortNo::ANY`.
    pub watch_port: PortNo,
    /// Actions, applied as an action set.
    pub actions: Vec<Act>,
    /// Packets through this bucket.
    pub packets: u64,
    /// Bytes through this bucket.
    pub bytes: u64,
}

/// A group.
#[derive(Debug, Clone)]
pub struct Group {
    /// Its type.
    pub group_type: GroupType,
    /// Its buckets.
    pub buckets: Vec<Bucket>,
    /// The buckets as sent, for group-desc replies.
    pub wire: Vec<v13::Bucket>,
    /// When it was added.
    pub created: Instant,
    /// Packets that went through it.
    pub packets: u64,
    /// Bytes that went through it.
    pub bytes: u64,
}

/// The group table.
#[derive(Debug, Clone)]
pub struct GroupTable {
    groups: BTreeMap<u32, Group>,
    max: usize,
}

impl Default for GroupTable {
    fn default() -> Self {
        GroupTable {
            groups: BTreeMap::new(),
            max: DEFAULT_MAX_GROUPS,
        }
    }
}

impl Known for GroupTable {
    fn contains(&self, id: u32) -> bool {
        self.groups.contains_key(&id)
    }
}

impl GroupTable {
    /// True when group `id` exists.
    pub fn contains(&self, id: u32) -> bool {
        self.groups.contains_key(&id)
    }

    /// Group `id`.
    pub fn get(&self, id: u32) -> Option<&Group> {
        self.groups.get(&id)
    }

    /// Group `id`, mutably.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Group> {
        self.groups.get_mut(&id)
    }

    /// Every group by id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Group)> {
        self.groups.iter().map(|(k, v)| (*k, v))
    }

    /// Compiles a GROUP_MOD's group, checking type, buckets and actions.
    pub fn compile(ctx: &Context<'_>, gm: &v13::GroupMod, now: Instant) -> Result<Group, OfError> {
        if gm.group_id > group_id::MAX {
            return Err(OfError::InvalidGroup);
        }
        if let GroupType::Unknown(_) = gm.group_type {
            return Err(OfError::BadGroupType);
        }
        if gm.group_type == GroupType::Indirect && gm.buckets.len() != 1 {
            return Err(OfError::InvalidGroup);
        }
        let mut buckets = Vec::with_capacity(gm.buckets.len());
        for b in &gm.buckets {
            if gm.group_type != GroupType::Select && b.weight != 0 {
                return Err(OfError::WeightUnsupported);
            }
            if gm.group_type == GroupType::FastFailover {
                if b.watch_group != group_id::ANY {
                    return Err(OfError::BadWatch);
                }
                if ctx.ports.get(b.watch_port).is_none() {
                    return Err(OfError::BadWatch);
                }
            }
            buckets.push(Bucket {
                weight: b.weight,
                watch_port: b.watch_port,
                actions: compile13(ctx, &b.actions)?,
                packets: 0,
                bytes: 0,
            });
        }
        Ok(Group {
            group_type: gm.group_type,
            buckets,
            wire: gm.buckets.clone(),
            created: now,
            packets: 0,
            bytes: 0,
        })
    }

    /// `OFPGC_ADD`.
    pub fn add(&mut self, id: u32, g: Group) -> Result<(), OfError> {
        if self.groups.contains_key(&id) {
            return Err(OfError::GroupExists);
        }
        if self.groups.len() >= self.max {
            return Err(OfError::OutOfGroups);
        }
        self.groups.insert(id, g);
        Ok(())
    }

    /// `OFPGC_MODIFY`: replaces type and buckets, keeps the group's
    /// counters.
    pub fn modify(&mut self, id: u32, mut g: Group) -> Result<(), OfError> {
        let old = self.groups.get_mut(&id).ok_or(OfError::UnknownGroup)?;
        g.created = old.created;
        g.packets = old.packets;
        g.bytes = old.bytes;
        *old = g;
        Ok(())
    }

    /// `OFPGC_DELETE`: the ids removed (`OFPG_ALL` removes all; an unknown
    /// id is not an error, 1.3.5 §6.5).
    pub fn delete(&mut self, id: u32) -> Vec<u32> {
        if id == group_id::ALL {
            let ids = self.groups.keys().copied().collect();
            self.groups.clear();
            ids
        } else {
            self.groups.remove(&id).map(|_| id).into_iter().collect()
        }
    }

    /// The buckets a packet goes through (indices), by the group's type:
    /// all of them, one chosen by `hash` among the weighted live ones, the
    /// only one, or the first live one.
    pub fn choose(&self, id: u32, hash: u64, ports: &Ports, out: &mut Vec<usize>) {
        out.clear();
        let Some(g) = self.groups.get(&id) else {
            return;
        };
        let live = |b: &Bucket| {
            b.watch_port == PortNo::ANY || ports.get(b.watch_port).is_some_and(|p| p.is_live())
        };
        match g.group_type {
            GroupType::All => out.extend(0..g.buckets.len()),
            GroupType::Indirect => out.extend((!g.buckets.is_empty()).then_some(0)),
            GroupType::FastFailover => out.extend(
                g.buckets
                    .iter()
                    .position(|b| b.watch_port != PortNo::ANY && live(b)),
            ),
            GroupType::Select => {
                let total: u64 = g
                    .buckets
                    .iter()
                    .filter(|b| live(b))
                    .map(|b| u64::from(b.weight))
                    .sum();
                if total == 0 {
                    return;
                }
                let mut pick = hash % total;
                for (i, b) in g.buckets.iter().enumerate().filter(|(_, b)| live(b)) {
                    let w = u64::from(b.weight);
                    if pick < w {
                        out.push(i);
                        return;
                    }
                    pick -= w;
                }
            }
            GroupType::Unknown(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::Extensions;
    use crate::meter::MeterTable;
    use crate::port::PortSpec;
    use baton_openflow::Version;
    use baton_openflow::v13::GroupModCommand;

    fn bucket(weight: u16, watch: u32, out: u32) -> v13::Bucket {
        v13::Bucket {
            weight,
            watch_port: PortNo(watch),
            watch_group: group_id::ANY,
            actions: vec![v13::Action::Output {
                port: PortNo(out),
                max_len: 0,
            }],
        }
    }

    fn setup() -> (Ports, GroupTable, MeterTable, Extensions) {
        let now = Instant::now();
        let mut ports = Ports::default();
        for i in 0..3 {
            ports.add(PortSpec::named(format!("p{i}"), i), now);
        }
        (
            ports,
            GroupTable::default(),
            MeterTable::default(),
            Extensions::default(),
        )
    }

    fn compile(
        ports: &Ports,
        groups: &GroupTable,
        meters: &MeterTable,
        ext: &Extensions,
        t: GroupType,
        buckets: Vec<v13::Bucket>,
    ) -> Result<Group, OfError> {
        let ctx = Context {
            version: Version::V13,
            ports,
            groups,
            meters,
            ext,
            n_tables: 1,
            flow_match: None,
            packet_out: false,
            in_bucket: true,
        };
        let gm = v13::GroupMod {
            command: GroupModCommand::Add,
            group_type: t,
            group_id: 1,
            buckets,
        };
        GroupTable::compile(&ctx, &gm, Instant::now())
    }

    #[test]
    fn fast_failover_takes_the_first_live_bucket() {
        let (mut ports, mut groups, meters, ext) = setup();
        let g = compile(
            &ports,
            &groups,
            &meters,
            &ext,
            GroupType::FastFailover,
            vec![bucket(0, 1, 1), bucket(0, 2, 2)],
        )
        .unwrap();
        groups.add(1, g).unwrap();
        let mut out = Vec::new();
        groups.choose(1, 0, &ports, &mut out);
        assert_eq!(out, [0]);
        ports.get_mut(PortNo(1)).unwrap().spec.link_up = false;
        groups.choose(1, 0, &ports, &mut out);
        assert_eq!(out, [1]);
        ports.get_mut(PortNo(2)).unwrap().config |= crate::port::CONFIG_PORT_DOWN;
        groups.choose(1, 0, &ports, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn select_spreads_by_weight_and_checks_buckets() {
        let (ports, mut groups, meters, ext) = setup();
        let any = PortNo::ANY.0;
        let g = compile(
            &ports,
            &groups,
            &meters,
            &ext,
            GroupType::Select,
            vec![bucket(1, any, 1), bucket(3, any, 2)],
        )
        .unwrap();
        groups.add(1, g.clone()).unwrap();
        assert_eq!(groups.add(1, g), Err(OfError::GroupExists));
        let mut counts = [0; 2];
        let mut out = Vec::new();
        for h in 0..400u64 {
            groups.choose(1, h, &ports, &mut out);
            counts[out[0]] += 1;
        }
        assert_eq!(counts, [100, 300]);
        assert_eq!(
            compile(&ports, &groups, &meters, &ext, GroupType::Indirect, vec![]).unwrap_err(),
            OfError::InvalidGroup
        );
        assert_eq!(
            compile(
                &ports,
                &groups,
                &meters,
                &ext,
                GroupType::All,
                vec![bucket(2, any, 1)]
            )
            .unwrap_err(),
            OfError::WeightUnsupported
        );
        let mut chained = bucket(0, any, 1);
        chained.actions = vec![v13::Action::Group(1)];
        assert_eq!(
            compile(
                &ports,
                &groups,
                &meters,
                &ext,
                GroupType::All,
                vec![chained]
            )
            .unwrap_err(),
            OfError::ChainingUnsupported
        );
        assert_eq!(groups.delete(9), Vec::<u32>::new());
        assert_eq!(groups.delete(group_id::ALL), vec![1]);
    }
}
