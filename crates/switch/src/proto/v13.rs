//! OpenFlow 1.3 requests (1.3.5 §7.3 to §7.5) applied to the switch, and
//! its events in 1.3 form: features, config, flow, group, meter, port and
//! table mods, packet-outs, multipart requests, roles, asynchronous
//! configuration, barrier, echo and experimenter messages. Slaves may not
//! change the switch (`OFPBRC_IS_SLAVE`, 1.3.5 §6.3.6).

use super::{Connection, split};
use crate::action::{compile_instructions, compile13};
use crate::datapath::{Event, PacketInReason, Transmit};
use crate::error::OfError;
use crate::ext::ExperimenterMsg;
use crate::group::GroupTable;
use crate::match13::compile;
use crate::meter::{MAX_BANDS, Meter};
use crate::roles::Role;
use crate::switch::{ALL_TABLES, Command, FlowMod, GroupCommand, Switch};
use crate::table::{NewFlow, RemovedReason, Selector, WireActions, WireMatch};
use baton_openflow::types::{PortNo, SwitchConfig, Version, Xid};
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::messages::{capabilities, config_flags};
use baton_openflow::v13::meter::{meter_flags, meter_id};
use baton_openflow::v13::multipart::{
    AggregateStats, BucketCounter, Desc, ExperimenterMultipart, FlowStats, FlowStatsRequest,
    GroupDesc, GroupFeatures, GroupStats, MeterBandStats, MeterConfig, MeterFeatures, MeterStats,
    MultipartReply, MultipartReplyBody, MultipartRequestBody, OFPMPF_REPLY_MORE, PortStats,
    TableStats,
};
use baton_openflow::v13::oxm::{Match13, Oxm};
use baton_openflow::v13::{
    self, FlowModCommand, GroupModCommand, Message, MeterModCommand, QueueConfig,
};
use std::time::Instant;

pub(super) fn handle(
    c: &mut Connection,
    sw: &mut Switch,
    now: Instant,
    xid: Xid,
    msg: &[u8],
    tx: &mut dyn Transmit,
) {
    let m = match v13::decode(msg) {
        Ok((_, m)) => m,
        Err(e) => {
            c.send_error(e.reply(Version::V13), xid, msg);
            return;
        }
    };
    let changes_state = matches!(
        m,
        Message::FlowMod(_)
            | Message::GroupMod(_)
            | Message::PortMod(_)
            | Message::TableMod(_)
            | Message::MeterMod(_)
            | Message::PacketOut(_)
    );
    let r = if changes_state && c.role(sw) == Role::Slave {
        Err(OfError::IsSlave)
    } else {
        dispatch(c, sw, now, xid, m, tx)
    };
    if let Err(e) = r {
        c.send_error(e.code(Version::V13), xid, msg);
    }
}

fn dispatch(
    c: &mut Connection,
    sw: &mut Switch,
    now: Instant,
    xid: Xid,
    m: Message,
    tx: &mut dyn Transmit,
) -> Result<(), OfError> {
    match m {
        Message::Hello(_) | Message::EchoReply(_) | Message::Error(_) => {}
        Message::EchoRequest(p) => c.send13(xid, &Message::EchoReply(p)),
        Message::Experimenter {
            experimenter,
            exp_type,
            data,
        } => {
            let msg = ExperimenterMsg {
                version: Version::V13,
                exp_type,
                data: &data,
            };
            if let Some(r) = sw.dp.ext.message(experimenter, &msg)? {
                c.send13(
                    xid,
                    &Message::Experimenter {
                        experimenter,
                        exp_type: r.exp_type,
                        data: r.data,
                    },
                );
            }
        }
        Message::FeaturesRequest => {
            let reply = Message::FeaturesReply(v13::SwitchFeatures {
                datapath_id: sw.config().datapath_id,
                n_buffers: sw.dp.buffers.capacity() as u32,
                n_tables: sw.n_tables(),
                auxiliary_id: 0,
                capabilities: capabilities::FLOW_STATS
                    | capabilities::TABLE_STATS
                    | capabilities::PORT_STATS
                    | capabilities::GROUP_STATS,
            });
            c.send13(xid, &reply);
        }
        Message::GetConfigRequest => {
            let reply = Message::GetConfigReply(SwitchConfig {
                flags: sw.dp.config_flags,
                miss_send_len: sw.dp.miss_send_len,
            });
            c.send13(xid, &reply);
        }
        Message::SetConfig(cfg) => {
            // IP reassembly is not offered (no OFPC_IP_REASM capability).
            if cfg.flags & config_flags::FRAG_MASK == config_flags::FRAG_REASM {
                return Err(OfError::SwitchConfigBadFlags);
            }
            sw.dp.config_flags = cfg.flags;
            sw.dp.miss_send_len = cfg.miss_send_len;
        }
        Message::FlowMod(fm) => flow_mod(sw, now, fm, tx)?,
        Message::GroupMod(gm) => {
            let command = match gm.command {
                GroupModCommand::Add => GroupCommand::Add,
                GroupModCommand::Modify => GroupCommand::Modify,
                GroupModCommand::Delete => GroupCommand::Delete,
                GroupModCommand::Unknown(_) => return Err(OfError::BadGroupCommand),
            };
            let group = match command {
                GroupCommand::Delete => None,
                _ => {
                    let mut ctx = sw.context(None, false);
                    ctx.in_bucket = true;
                    Some(GroupTable::compile(&ctx, &gm, now)?)
                }
            };
            sw.group_mod(now, command, gm.group_id, group)?;
        }
        Message::MeterMod(mm) => {
            let command = match mm.command {
                MeterModCommand::Add => GroupCommand::Add,
                MeterModCommand::Modify => GroupCommand::Modify,
                MeterModCommand::Delete => GroupCommand::Delete,
                MeterModCommand::Unknown(_) => return Err(OfError::BadMeterCommand),
            };
            let meter = match command {
                GroupCommand::Delete => None,
                _ => Some(Meter::compile(&mm, now)?),
            };
            sw.meter_mod(now, command, mm.meter_id, meter)?;
        }
        Message::PortMod(pm) => sw.port_mod(pm.port_no, pm.hw_addr, pm.config, pm.mask)?,
        Message::TableMod(tm) => {
            if tm.table_id != ALL_TABLES && tm.table_id >= sw.n_tables() {
                return Err(OfError::TableModBadTable);
            }
        }
        Message::PacketOut(po) => {
            let acts = compile13(&sw.context(None, true), &po.actions)?;
            sw.packet_out(now, po.buffer_id, po.in_port, &acts, &po.data, tx)?;
        }
        Message::MultipartRequest(req) => multipart(c, sw, now, xid, req.body)?,
        Message::BarrierRequest => c.send13(xid, &Message::BarrierReply),
        Message::QueueGetConfigRequest { port } => c.send13(
            xid,
            &Message::QueueGetConfigReply(QueueConfig {
                port,
                queues: Vec::new(),
            }),
        ),
        Message::RoleRequest(r) => {
            let role = sw.roles.request(c.id(), r.role, r.generation_id)?;
            let reply = v13::Role {
                role: role.wire(),
                generation_id: sw.roles.generation(),
            };
            c.send13(xid, &Message::RoleReply(reply));
        }
        Message::GetAsyncRequest => c.send13(xid, &Message::GetAsyncReply(c.async_config)),
        Message::SetAsync(a) => c.async_config = a,
        Message::FeaturesReply(_)
        | Message::GetConfigReply(_)
        | Message::PacketIn(_)
        | Message::FlowRemoved(_)
        | Message::PortStatus(_)
        | Message::MultipartReply(_)
        | Message::BarrierReply
        | Message::QueueGetConfigReply(_)
        | Message::RoleReply(_)
        | Message::GetAsyncReply(_) => return Err(OfError::BadType),
    }
    Ok(())
}

fn flow_mod(
    sw: &mut Switch,
    now: Instant,
    fm: v13::FlowMod,
    tx: &mut dyn Transmit,
) -> Result<(), OfError> {
    let command = match fm.command {
        FlowModCommand::Add => Command::Add,
        FlowModCommand::Modify => Command::Modify,
        FlowModCommand::ModifyStrict => Command::ModifyStrict,
        FlowModCommand::Delete => Command::Delete,
        FlowModCommand::DeleteStrict => Command::DeleteStrict,
        FlowModCommand::Unknown(_) => return Err(OfError::BadFlowModCommand),
    };
    let m = compile(&fm.match_)?;
    let deleting = matches!(command, Command::Delete | Command::DeleteStrict);
    let table_for_goto = if fm.table_id == ALL_TABLES {
        0
    } else {
        fm.table_id
    };
    let program = if deleting {
        Default::default()
    } else {
        compile_instructions(
            &sw.context(Some(&m), false),
            table_for_goto,
            &fm.instructions,
        )?
    };
    let flow = NewFlow {
        priority: fm.priority,
        match_: m,
        wire_match: WireMatch::V13(fm.match_),
        cookie: fm.cookie,
        idle_timeout: fm.idle_timeout,
        hard_timeout: fm.hard_timeout,
        flags: fm.flags,
        program,
        wire_actions: WireActions::V13(fm.instructions),
    };
    sw.flow_mod(
        now,
        FlowMod {
            command,
            table_id: fm.table_id,
            flow,
            cookie_mask: fm.cookie_mask,
            buffer_id: fm.buffer_id,
            out_port: (fm.out_port != PortNo::ANY).then_some(fm.out_port),
            out_group: (fm.out_group != group_id::ANY).then_some(fm.out_group),
        },
        tx,
    )
}

fn multipart(
    c: &mut Connection,
    sw: &mut Switch,
    now: Instant,
    xid: Xid,
    body: MultipartRequestBody,
) -> Result<(), OfError> {
    use MultipartReplyBody as R;
    use MultipartRequestBody as Q;
    let since = |t: Instant| {
        let d = now.saturating_duration_since(t);
        (
            d.as_secs().min(u64::from(u32::MAX)) as u32,
            d.subsec_nanos(),
        )
    };
    let replies: Vec<MultipartReplyBody> = match body {
        Q::Desc => vec![R::Desc(Desc {
            mfr_desc: "baton".into(),
            hw_desc: "baton-switch (software)".into(),
            sw_desc: env!("CARGO_PKG_VERSION").into(),
            serial_num: "None".into(),
            dp_desc: sw.config().description.clone(),
        })],
        Q::Flow(r) => {
            let entries = flows(sw, now, &r)?;
            let mut scratch = Vec::new();
            let parts = split(entries, |f| {
                scratch.clear();
                f.emit(&mut scratch);
                scratch.len()
            });
            parts.into_iter().map(R::Flow).collect()
        }
        Q::Aggregate(r) => {
            let entries = flows(sw, now, &r)?;
            vec![R::Aggregate(AggregateStats {
                packet_count: entries.iter().map(|f| f.packet_count).sum(),
                byte_count: entries.iter().map(|f| f.byte_count).sum(),
                flow_count: entries.len() as u32,
            })]
        }
        Q::Table => {
            let tables = sw
                .tables()
                .iter()
                .enumerate()
                .map(|(i, t)| TableStats {
                    table_id: i as u8,
                    active_count: t.len() as u32,
                    lookup_count: t.lookups,
                    matched_count: t.matched,
                })
                .collect();
            split(tables, |_| 24).into_iter().map(R::Table).collect()
        }
        Q::PortStats { port_no } => {
            let ports = sw
                .dp
                .ports
                .iter()
                .filter(|p| port_no == PortNo::ANY || p.no == port_no)
                .map(|p| {
                    let k = &p.counters;
                    let (duration_sec, duration_nsec) = since(p.created);
                    PortStats {
                        port_no: p.no,
                        rx_packets: k.rx_packets,
                        tx_packets: k.tx_packets,
                        rx_bytes: k.rx_bytes,
                        tx_bytes: k.tx_bytes,
                        rx_dropped: k.rx_dropped,
                        tx_dropped: k.tx_dropped,
                        rx_errors: k.rx_errors,
                        tx_errors: k.tx_errors,
                        rx_frame_err: 0,
                        rx_over_err: 0,
                        rx_crc_err: 0,
                        collisions: 0,
                        duration_sec,
                        duration_nsec,
                    }
                })
                .collect();
            split(ports, |_| 112)
                .into_iter()
                .map(R::PortStats)
                .collect()
        }
        Q::Queue { .. } => vec![R::Queue(Vec::new())],
        Q::Group { group_id: g } => {
            let groups = sw
                .dp
                .groups
                .iter()
                .filter(|(id, _)| g == group_id::ALL || *id == g)
                .map(|(id, grp)| {
                    let (duration_sec, duration_nsec) = since(grp.created);
                    GroupStats {
                        group_id: id,
                        ref_count: sw.group_ref_count(id),
                        packet_count: grp.packets,
                        byte_count: grp.bytes,
                        duration_sec,
                        duration_nsec,
                        bucket_stats: grp
                            .buckets
                            .iter()
                            .map(|b| BucketCounter {
                                packet_count: b.packets,
                                byte_count: b.bytes,
                            })
                            .collect(),
                    }
                })
                .collect();
            split(groups, |g: &GroupStats| 40 + 16 * g.bucket_stats.len())
                .into_iter()
                .map(R::Group)
                .collect()
        }
        Q::GroupDesc => {
            let descs = sw
                .dp
                .groups
                .iter()
                .map(|(id, g)| GroupDesc {
                    group_type: g.group_type,
                    group_id: id,
                    buckets: g.wire.clone(),
                })
                .collect();
            split(descs, |d: &GroupDesc| {
                8 + d.buckets.iter().map(v13::Bucket::wire_len).sum::<usize>()
            })
            .into_iter()
            .map(R::GroupDesc)
            .collect()
        }
        Q::GroupFeatures => {
            let max = crate::group::DEFAULT_MAX_GROUPS as u32;
            vec![R::GroupFeatures(GroupFeatures {
                // all, select, indirect, fast failover.
                types: 0b1111,
                // OFPGFC_SELECT_WEIGHT | OFPGFC_SELECT_LIVENESS.
                capabilities: 0b11,
                max_groups: [max; 4],
                actions: [ACTIONS; 4],
            })]
        }
        Q::Meter { meter_id: id } => {
            let stats = sw
                .dp
                .meters
                .iter()
                .filter(|(m, _)| id == meter_id::ALL || *m == id)
                .map(|(m, meter)| {
                    let (duration_sec, duration_nsec) = since(meter.created);
                    MeterStats {
                        meter_id: m,
                        flow_count: sw.meter_flow_count(m),
                        packet_in_count: meter.packets,
                        byte_in_count: meter.bytes,
                        duration_sec,
                        duration_nsec,
                        band_stats: meter
                            .bands
                            .iter()
                            .map(|b| MeterBandStats {
                                packet_band_count: b.packets,
                                byte_band_count: b.bytes,
                            })
                            .collect(),
                    }
                })
                .collect();
            split(stats, |s: &MeterStats| 40 + 16 * s.band_stats.len())
                .into_iter()
                .map(R::Meter)
                .collect()
        }
        Q::MeterConfig { meter_id: id } => {
            let configs = sw
                .dp
                .meters
                .iter()
                .filter(|(m, _)| id == meter_id::ALL || *m == id)
                .map(|(m, meter)| MeterConfig {
                    flags: meter.flags,
                    meter_id: m,
                    bands: meter.wire.clone(),
                })
                .collect();
            split(configs, |c: &MeterConfig| 8 + 16 * c.bands.len())
                .into_iter()
                .map(R::MeterConfig)
                .collect()
        }
        Q::MeterFeatures => vec![R::MeterFeatures(MeterFeatures {
            max_meter: sw.dp.meters.max(),
            // 1 << OFPMBT_DROP.
            band_types: 1 << 1,
            capabilities: u32::from(
                meter_flags::KBPS | meter_flags::PKTPS | meter_flags::BURST | meter_flags::STATS,
            ),
            max_bands: MAX_BANDS,
            max_color: 0,
        })],
        Q::PortDesc => {
            let ports = sw.dp.ports.iter().map(|p| p.desc13()).collect();
            split(ports, |_| 64).into_iter().map(R::PortDesc).collect()
        }
        Q::Experimenter(e) => {
            let msg = ExperimenterMsg {
                version: Version::V13,
                exp_type: e.exp_type,
                data: &e.data,
            };
            match sw.dp.ext.message(e.experimenter, &msg)? {
                Some(r) => vec![R::Experimenter(ExperimenterMultipart {
                    experimenter: e.experimenter,
                    exp_type: r.exp_type,
                    data: r.data,
                })],
                None => Vec::new(),
            }
        }
        Q::TableFeatures(set) if !set.is_empty() => return Err(OfError::TableFeaturesEperm),
        Q::TableFeatures(_) => {
            let mut scratch = Vec::new();
            split(super::features13::tables(sw), |t| {
                scratch.clear();
                t.emit(&mut scratch);
                scratch.len()
            })
            .into_iter()
            .map(R::TableFeatures)
            .collect()
        }
    };
    let n = replies.len();
    for (i, body) in replies.into_iter().enumerate() {
        let flags = if i + 1 < n { OFPMPF_REPLY_MORE } else { 0 };
        c.send13(
            xid,
            &Message::MultipartReply(MultipartReply { flags, body }),
        );
    }
    Ok(())
}

/// Bit `1 << OFPAT_*` for each 1.3 action the switch executes: output,
/// push/pop VLAN, set queue, group, set/dec NW TTL, set field.
const ACTIONS: u32 =
    (1 << 0) | (1 << 17) | (1 << 18) | (1 << 21) | (1 << 22) | (1 << 23) | (1 << 24) | (1 << 25);

/// The flows a flow or aggregate request names, by table then priority.
fn flows(sw: &Switch, now: Instant, r: &FlowStatsRequest) -> Result<Vec<FlowStats>, OfError> {
    if r.table_id != ALL_TABLES && r.table_id >= sw.n_tables() {
        return Err(OfError::BadTableId);
    }
    let m = compile(&r.match_)?;
    let sel = Selector {
        match_: &m,
        strict: None,
        out_port: (r.out_port != PortNo::ANY).then_some(r.out_port),
        out_group: (r.out_group != group_id::ANY).then_some(r.out_group),
        cookie: (r.cookie_mask.0 != 0).then_some((r.cookie.0, r.cookie_mask.0)),
    };
    let mut out = Vec::new();
    for (t, table) in sw.tables().iter().enumerate() {
        if r.table_id != ALL_TABLES && usize::from(r.table_id) != t {
            continue;
        }
        let mut ids = table.select(&sel);
        ids.sort_unstable();
        for e in ids.into_iter().filter_map(|id| table.get(id)) {
            let f = &e.flow;
            let (duration_sec, duration_nsec) = e.duration(now);
            out.push(FlowStats {
                table_id: t as u8,
                duration_sec,
                duration_nsec,
                priority: f.priority,
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                flags: f.flags,
                cookie: f.cookie,
                packet_count: e.packets,
                byte_count: e.bytes,
                match_: match &f.wire_match {
                    WireMatch::V13(m) => m.clone(),
                    WireMatch::V10(_) => Match13::all(),
                },
                instructions: match &f.wire_actions {
                    WireActions::V13(i) => i.clone(),
                    WireActions::V10(_) => Vec::new(),
                },
            });
        }
    }
    Ok(out)
}

/// Encodes an event for a 1.3 controller whose role index is `role`
/// (0: master or equal, 1: slave), if its asynchronous configuration
/// asks for it (1.3.5 §7.3.10).
pub(super) fn deliver(c: &mut Connection, ev: &Event, xid: Xid, role: usize) {
    let a = c.async_config;
    let wants = |mask: [u32; 2], bit: u8| mask[role] & (1 << bit) != 0;
    let m = match ev {
        Event::PacketIn(p) => {
            let reason = match p.reason {
                PacketInReason::NoMatch => v13::PacketInReason::NoMatch,
                PacketInReason::Action => v13::PacketInReason::Action,
                PacketInReason::InvalidTtl => v13::PacketInReason::InvalidTtl,
            };
            if !wants(a.packet_in_mask, reason.into()) {
                return;
            }
            let mut fields = vec![Oxm::InPort(p.in_port)];
            if p.metadata != 0 {
                fields.push(Oxm::Metadata {
                    value: p.metadata,
                    mask: None,
                });
            }
            Message::PacketIn(v13::PacketIn {
                buffer_id: p.buffer_id,
                total_len: p.total_len,
                reason,
                table_id: p.table_id,
                cookie: p.cookie,
                match_: Match13 { fields },
                data: p.data.clone(),
            })
        }
        Event::FlowRemoved(r) => {
            let reason = match r.reason {
                RemovedReason::IdleTimeout => v13::FlowRemovedReason::IdleTimeout,
                RemovedReason::HardTimeout => v13::FlowRemovedReason::HardTimeout,
                RemovedReason::Delete => v13::FlowRemovedReason::Delete,
                RemovedReason::GroupDelete => v13::FlowRemovedReason::GroupDelete,
            };
            if !wants(a.flow_removed_mask, reason.into()) {
                return;
            }
            let f = &r.entry.flow;
            let WireMatch::V13(match_) = &f.wire_match else {
                return;
            };
            Message::FlowRemoved(v13::FlowRemoved {
                cookie: f.cookie,
                priority: f.priority,
                reason,
                table_id: r.table_id,
                duration_sec: r.duration.0,
                duration_nsec: r.duration.1,
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                packet_count: r.entry.packets,
                byte_count: r.entry.bytes,
                match_: match_.clone(),
            })
        }
        Event::PortStatus { reason, port } => {
            if !wants(a.port_status_mask, (*reason).into()) {
                return;
            }
            Message::PortStatus(v13::PortStatus {
                reason: *reason,
                desc: port.desc13(),
            })
        }
    };
    c.send13(xid, &m);
}

impl Connection {
    /// Appends a 1.3 message.
    pub(crate) fn send13(&mut self, xid: Xid, m: &Message) {
        m.encode(xid, &mut self.out);
    }
}
