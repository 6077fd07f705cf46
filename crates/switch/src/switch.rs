//! [`Switch`]: the flow tables and the [`Datapath`], the pipeline that
//! walks a packet through the tables (1.0.0 §3.4; 1.3.5 §5.1, §5.3,
//! Figure 3), and the version-neutral halves of the state-changing
//! requests (flow, group, meter and port mods, packet-outs) and of flow
//! expiry.
//!
//! The switch reads no clock and owns no socket: every call that may
//! depend on time takes `now`, frames leave through the [`Transmit`]
//! passed in, and messages for controllers wait in an event queue
//! ([`Switch::poll_event`]).

use crate::action::{Act, ActionSet, Context};
use crate::datapath::{Datapath, Event, FlowRemoved, PacketInReason, PacketState, Transmit};
use crate::error::OfError;
use crate::ext::{DuplicateExperimenter, Extension, PacketContext, Verdict};
use crate::group::Group;
use crate::key::{FlowMatch, Key};
use crate::meter::Meter;
pub use crate::mods::{
    ALL_TABLES, Command, Config, EXPIRY_INTERVAL, FLAG_CHECK_OVERLAP, FLAG_RESET_COUNTS,
    FLAG_SEND_FLOW_REM, FlowMod, GroupCommand,
};
use crate::port::{CONFIG_NO_RECV, CONFIG_SETTABLE, PortSpec};
use crate::roles::Roles;
use crate::table::{FlowTable, RemovedReason, Selector, WireActions};
use baton_openflow::Version;
use baton_openflow::packet::FlowKey;
use baton_openflow::types::{BufferId, MacAddr, PortNo, PortReason};
use std::time::Instant;

/// A software switch, without I/O.
#[derive(Debug)]
pub struct Switch {
    config: Config,
    tables: Vec<FlowTable>,
    /// Ports, groups, meters, buffers, extensions and the event queue.
    pub dp: Datapath,
    /// Controller roles.
    pub roles: Roles,
    last_expiry: Instant,
}

impl Switch {
    /// A switch with no ports and empty tables.
    pub fn new(config: Config, now: Instant) -> Switch {
        let tables = (0..config.n_tables.max(1))
            .map(|_| FlowTable::new(config.max_flows))
            .collect();
        Switch {
            dp: Datapath::new(config.version, config.n_buffers),
            tables,
            config,
            roles: Roles::default(),
            last_expiry: now,
        }
    }

    /// How it was built.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The version it speaks.
    pub fn version(&self) -> Version {
        self.config.version
    }

    /// Number of flow tables.
    pub fn n_tables(&self) -> u8 {
        self.tables.len() as u8
    }

    /// Table `id`.
    pub fn table(&self, id: u8) -> Option<&FlowTable> {
        self.tables.get(usize::from(id))
    }

    /// Table `id`, mutably (for tests and benchmarks; flows are changed
    /// through [`Switch::flow_mod`]).
    pub fn table_mut(&mut self, id: u8) -> Option<&mut FlowTable> {
        self.tables.get_mut(usize::from(id))
    }

    /// Every table.
    pub fn tables(&self) -> &[FlowTable] {
        &self.tables
    }

    /// What actions are checked against: this switch's ports, groups,
    /// meters, extensions and tables.
    pub fn context<'a>(
        &'a self,
        flow_match: Option<&'a FlowMatch>,
        packet_out: bool,
    ) -> Context<'a> {
        Context {
            version: self.config.version,
            ports: &self.dp.ports,
            groups: &self.dp.groups,
            meters: &self.dp.meters,
            ext: &self.dp.ext,
            n_tables: self.tables.len() as u8,
            flow_match,
            packet_out,
            in_bucket: false,
        }
    }

    /// Registers an extension.
    pub fn register(&mut self, ext: Box<dyn Extension>) -> Result<(), DuplicateExperimenter> {
        self.dp.ext.register(ext)
    }

    /// Adds a port (numbered from 1 in order) and announces it.
    pub fn add_port(&mut self, spec: PortSpec, now: Instant) -> PortNo {
        let no = self.dp.ports.add(spec, now);
        self.dp.port_added(no);
        no
    }

    /// Removes a port and announces it.
    pub fn remove_port(&mut self, no: PortNo) {
        if let Some(p) = self.dp.ports.remove(no) {
            self.dp.push_event(Event::PortStatus {
                reason: PortReason::Delete,
                port: Box::new(p),
            });
        }
    }

    /// Records a port's link going up or down; announces a change.
    pub fn set_link(&mut self, no: PortNo, up: bool) {
        if let Some(p) = self.dp.ports.get_mut(no) {
            if p.spec.link_up != up {
                p.spec.link_up = up;
                self.dp.port_modified(no);
            }
        }
    }

    /// The next message for the controllers.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.dp.events.pop_front()
    }

    /// A frame arrives on `in_port`: counts it, runs the packet hooks
    /// and the pipeline.
    pub fn receive(&mut self, now: Instant, in_port: PortNo, frame: &[u8], tx: &mut dyn Transmit) {
        let Some(port) = self.dp.ports.get_mut(in_port) else {
            return;
        };
        port.counters.rx_packets += 1;
        port.counters.rx_bytes += frame.len() as u64;
        if !port.is_live() || port.config & CONFIG_NO_RECV != 0 {
            port.counters.rx_dropped += 1;
            return;
        }
        let key = FlowKey::extract(in_port, frame);
        if !self.dp.ext.is_empty() {
            let ctx = PacketContext {
                in_port,
                key: &key,
                now,
            };
            if self.dp.ext.on_packet(&ctx, frame) == Verdict::Drop {
                return;
            }
        }
        let mut buf = self.dp.take_buffer();
        buf.extend_from_slice(frame);
        self.pipeline(now, PacketState::new(in_port, key), &mut buf, tx);
        self.dp.put_buffer(buf);
    }

    /// Runs a packet through the tables from table 0.
    fn pipeline(
        &mut self,
        now: Instant,
        mut st: PacketState,
        frame: &mut Vec<u8>,
        tx: &mut dyn Transmit,
    ) {
        let version = self.config.version;
        let mut set = ActionSet::default();
        let mut table_id = 0u8;
        loop {
            let metadata = st.metadata;
            let mut key = Key::of_frame(version, st.refresh(frame), frame, metadata);
            key.set(crate::key::slot::TUNNEL_ID, st.tunnel_id);
            let Some(table) = self.tables.get_mut(usize::from(table_id)) else {
                return;
            };
            st.table_id = table_id;
            let Some(id) = table.lookup(&key) else {
                // 1.0.0 §3.4: a miss goes to the controller. 1.3.5 §5.4:
                // without a table-miss flow the packet is dropped.
                if version == Version::V10 {
                    st.cookie = baton_openflow::types::Cookie(u64::MAX);
                    let len = self.dp.miss_send_len;
                    self.dp
                        .packet_in(now, &st, PacketInReason::NoMatch, len, frame);
                }
                return;
            };
            let Some(entry) = table.hit(id, now, frame.len()) else {
                return;
            };
            let f = &entry.flow;
            st.cookie = f.cookie;
            st.miss_flow = f.priority == 0 && f.match_.is_all();
            let p = &f.program;
            if let Some(m) = p.meter {
                if !self.dp.meters.admit(m, now, frame.len()) {
                    return;
                }
            }
            if !self.dp.apply(now, &mut st, &p.apply, frame, tx) {
                return;
            }
            if p.clear {
                set.clear();
            }
            set.write(&p.write);
            if let Some((v, m)) = p.metadata {
                st.metadata = (st.metadata & !m) | (v & m);
            }
            match p.goto {
                Some(next) => table_id = next,
                None => break,
            }
        }
        if !set.is_empty() {
            self.dp.apply_set(now, &mut st, &set, frame, tx);
        }
    }

    /// Applies a flow-mod (1.0.0 §4.6, 1.3.5 §6.4).
    pub fn flow_mod(
        &mut self,
        now: Instant,
        fm: FlowMod,
        tx: &mut dyn Transmit,
    ) -> Result<(), OfError> {
        let v13 = self.config.version == Version::V13;
        let n = self.tables.len();
        let table_ok = usize::from(fm.table_id) < n;
        let is_delete = matches!(fm.command, Command::Delete | Command::DeleteStrict);
        if !(table_ok || is_delete && fm.table_id == ALL_TABLES) {
            return Err(OfError::FlowModBadTableId);
        }
        let reset = !v13 || fm.flow.flags & FLAG_RESET_COUNTS != 0;
        match fm.command {
            Command::Add => {
                let check = fm.flow.flags & FLAG_CHECK_OVERLAP != 0;
                // 1.0 replaces counters with the flow; 1.3 keeps them unless
                // OFPFF_RESET_COUNTS.
                self.tables[usize::from(fm.table_id)].add(now, fm.flow, check, reset)?;
            }
            Command::Modify | Command::ModifyStrict => {
                let strict = (fm.command == Command::ModifyStrict).then_some(fm.flow.priority);
                let t = &mut self.tables[usize::from(fm.table_id)];
                let sel = Selector {
                    match_: &fm.flow.match_,
                    strict,
                    out_port: None,
                    out_group: None,
                    cookie: (v13 && fm.cookie_mask != 0)
                        .then_some((fm.flow.cookie.0, fm.cookie_mask)),
                };
                let ids = t.select(&sel);
                if ids.is_empty() {
                    // 1.0.0 §4.6: a MODIFY that matches nothing adds; 1.3.5
                    // §6.4: it does nothing.
                    if !v13 {
                        t.add(now, fm.flow, false, true)?;
                    }
                } else {
                    let reset = v13 && fm.flow.flags & FLAG_RESET_COUNTS != 0;
                    for id in ids {
                        t.modify(
                            id,
                            fm.flow.program.clone(),
                            fm.flow.wire_actions.clone(),
                            reset,
                        );
                    }
                }
            }
            Command::Delete | Command::DeleteStrict => {
                let strict = (fm.command == Command::DeleteStrict).then_some(fm.flow.priority);
                let sel = Selector {
                    match_: &fm.flow.match_,
                    strict,
                    out_port: fm.out_port,
                    out_group: fm.out_group,
                    cookie: (v13 && fm.cookie_mask != 0)
                        .then_some((fm.flow.cookie.0, fm.cookie_mask)),
                };
                self.delete_where(now, fm.table_id, &sel, RemovedReason::Delete);
                return Ok(());
            }
        }
        if fm.buffer_id != BufferId::NONE {
            self.run_buffer(now, fm.buffer_id, tx)?;
        }
        Ok(())
    }

    /// Removes the flows `sel` names from table `table_id` (or every
    /// table) and announces those that asked for it.
    fn delete_where(
        &mut self,
        now: Instant,
        table_id: u8,
        sel: &Selector<'_>,
        reason: RemovedReason,
    ) {
        for (t, table) in self.tables.iter_mut().enumerate() {
            if table_id != ALL_TABLES && usize::from(table_id) != t {
                continue;
            }
            for id in table.select(sel) {
                let entry = table.remove(id);
                removed(&mut self.dp, now, t as u8, entry, reason);
            }
        }
    }

    /// Runs buffered packet `id` through the pipeline (a FLOW_MOD or
    /// PACKET_OUT naming a buffer).
    fn run_buffer(
        &mut self,
        now: Instant,
        id: BufferId,
        tx: &mut dyn Transmit,
    ) -> Result<(), OfError> {
        let mut buf = self.dp.take_buffer();
        let port = self.dp.buffers.take(now, id, |port, f| {
            buf.extend_from_slice(f);
            port
        })?;
        let key = FlowKey::extract(port, &buf);
        self.pipeline(now, PacketState::new(port, key), &mut buf, tx);
        self.dp.put_buffer(buf);
        Ok(())
    }

    /// Applies a PACKET_OUT: the frame (from `data`, or buffer
    /// `buffer_id`) goes through `actions` as if it arrived on `in_port`;
    /// an output to `OFPP_TABLE` runs the pipeline.
    pub fn packet_out(
        &mut self,
        now: Instant,
        buffer_id: BufferId,
        in_port: PortNo,
        actions: &[Act],
        data: &[u8],
        tx: &mut dyn Transmit,
    ) -> Result<(), OfError> {
        let physical = self.dp.ports.get(in_port).is_some();
        if !physical && !matches!(in_port, PortNo::CONTROLLER | PortNo::ANY | PortNo::LOCAL) {
            return Err(OfError::BadPort);
        }
        let mut buf = self.dp.take_buffer();
        if buffer_id == BufferId::NONE {
            buf.extend_from_slice(data);
        } else if let Err(e) = self
            .dp
            .buffers
            .take(now, buffer_id, |_, f| buf.extend_from_slice(f))
        {
            self.dp.put_buffer(buf);
            return Err(e);
        }
        let mut st = PacketState::new(in_port, FlowKey::extract(in_port, &buf));
        for a in actions {
            let go_on = match a {
                Act::Output {
                    port: PortNo::TABLE,
                    ..
                } => {
                    let key = *st.refresh(&buf);
                    let mut copy = self.dp.take_buffer();
                    copy.extend_from_slice(&buf);
                    self.pipeline(now, PacketState::new(in_port, key), &mut copy, tx);
                    self.dp.put_buffer(copy);
                    true
                }
                a => self.dp.exec(now, &mut st, a, &mut buf, tx),
            };
            if !go_on {
                break;
            }
        }
        self.dp.put_buffer(buf);
        Ok(())
    }

    /// Applies a GROUP_MOD (1.3.5 §6.5); deleting a group removes the
    /// flows that name it.
    pub fn group_mod(
        &mut self,
        now: Instant,
        command: GroupCommand,
        id: u32,
        group: Option<Group>,
    ) -> Result<(), OfError> {
        match (command, group) {
            (GroupCommand::Add, Some(g)) => self.dp.groups.add(id, g),
            (GroupCommand::Modify, Some(g)) => self.dp.groups.modify(id, g),
            (GroupCommand::Delete, _) => {
                for g in self.dp.groups.delete(id) {
                    let all = FlowMatch::ALL;
                    let sel = Selector {
                        match_: &all,
                        strict: None,
                        out_port: None,
                        out_group: Some(g),
                        cookie: None,
                    };
                    self.delete_where(now, ALL_TABLES, &sel, RemovedReason::GroupDelete);
                }
                Ok(())
            }
            _ => Err(OfError::BadGroupCommand),
        }
    }

    /// Applies a METER_MOD (1.3.5 §6.6); deleting a meter removes the
    /// flows that use it.
    pub fn meter_mod(
        &mut self,
        now: Instant,
        command: GroupCommand,
        id: u32,
        meter: Option<Meter>,
    ) -> Result<(), OfError> {
        match (command, meter) {
            (GroupCommand::Add, Some(m)) => self.dp.meters.add(id, m),
            (GroupCommand::Modify, Some(m)) => self.dp.meters.modify(id, m),
            (GroupCommand::Delete, _) => {
                for m in self.dp.meters.delete(id) {
                    for (t, table) in self.tables.iter_mut().enumerate() {
                        let ids: Vec<u32> = table
                            .iter()
                            .filter(|(_, e)| e.flow.program.meter == Some(m))
                            .map(|(i, _)| i)
                            .collect();
                        for i in ids {
                            let entry = table.remove(i);
                            removed(&mut self.dp, now, t as u8, entry, RemovedReason::Delete);
                        }
                    }
                }
                Ok(())
            }
            _ => Err(OfError::BadMeterCommand),
        }
    }

    /// Applies a PORT_MOD (1.0.0 §5.3.3, 1.3.5 §7.3.4.3): the address
    /// must be the port's; the masked configuration bits change.
    pub fn port_mod(
        &mut self,
        no: PortNo,
        hw_addr: MacAddr,
        config: u32,
        mask: u32,
    ) -> Result<(), OfError> {
        let p = self.dp.ports.get_mut(no).ok_or(OfError::PortModBadPort)?;
        if p.spec.hw_addr != hw_addr {
            return Err(OfError::PortModBadHwAddr);
        }
        let mask = mask & CONFIG_SETTABLE;
        let new = (p.config & !mask) | (config & mask);
        if new != p.config {
            p.config = new;
            self.dp.port_modified(no);
        }
        Ok(())
    }

    /// The flows that use meter `id` (for meter statistics).
    pub fn meter_flow_count(&self, id: u32) -> u32 {
        self.tables
            .iter()
            .flat_map(|t| t.iter())
            .filter(|(_, e)| e.flow.program.meter == Some(id))
            .count() as u32
    }

    /// The flows that name group `id` (its reference count).
    pub fn group_ref_count(&self, id: u32) -> u32 {
        self.tables
            .iter()
            .flat_map(|t| t.iter())
            .filter(|(_, e)| e.flow.program.uses_group(id))
            .count() as u32
    }

    /// When [`Switch::handle_timeout`] next has work: flow expiry, once a
    /// second while some flow has a timeout.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.tables
            .iter()
            .any(FlowTable::has_timeouts)
            .then(|| self.last_expiry + EXPIRY_INTERVAL)
    }

    /// Expires flows whose idle or hard timeout has passed at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_expiry = now;
        for (t, table) in self.tables.iter_mut().enumerate() {
            for (entry, reason) in table.expire(now) {
                removed(&mut self.dp, now, t as u8, entry, reason);
            }
        }
    }

    /// The actions of the flows in table `t` as sent (for tests).
    pub fn wire_actions(&self, t: u8) -> Vec<&WireActions> {
        self.table(t)
            .map(|t| t.iter().map(|(_, e)| &e.flow.wire_actions).collect())
            .unwrap_or_default()
    }
}

/// Announces a removed flow if it asked for it.
fn removed(
    dp: &mut Datapath,
    now: Instant,
    table_id: u8,
    entry: crate::table::FlowEntry,
    reason: RemovedReason,
) {
    if entry.flow.flags & FLAG_SEND_FLOW_REM != 0 {
        let duration = entry.duration(now);
        dp.push_event(Event::FlowRemoved(Box::new(FlowRemoved {
            table_id,
            entry,
            reason,
            duration,
        })));
    }
}
