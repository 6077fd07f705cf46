//! OpenFlow 1.3 requests (1.3.5 §7.3 to §7.5) applied to the switch, and
//! its events in 1.3 form: features, config, flow, group, meter, port and
//! table mods, packet-outs, multipart requests (in `multipart13.rs`), roles, asynchronous
//! configuration, barrier, echo and experimenter messages. Slaves may not
//! change the switch (`OFPBRC_IS_SLAVE`, 1.3.5 §6.3.6).

use super::Connection;
use crate::action::{compile_instructions, compile13};
use crate::datapath::{Event, PacketInReason, Transmit};
use crate::error::OfError;
use crate::ext::ExperimenterMsg;
use crate::group::GroupTable;
use crate::match13::compile;
use crate::meter::Meter;
use crate::roles::Role;
use crate::switch::{ALL_TABLES, Command, FlowMod, GroupCommand, Switch};
use crate::table::{NewFlow, RemovedReason, WireActions, WireMatch};
use baton_openflow::Version;
use baton_openflow::switch_config::SwitchConfig;
use baton_openflow::types::{PortNo, Xid};
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::messages::{capabilities, config_flags};
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
    let Some(m) = super::decoded(c, Version::V13, v13::decode, xid, msg) else {
        return;
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
        Message::EchoRequest(p) => c.send(xid, &Message::EchoReply(p)),
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
                c.send(
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
            c.send(xid, &reply);
        }
        Message::GetConfigRequest => {
            let reply = Message::GetConfigReply(SwitchConfig {
                flags: sw.dp.config_flags,
                miss_send_len: sw.dp.miss_send_len,
            });
            c.send(xid, &reply);
        }
        Message::SetConfig(cfg) => {
            // IP reassembly is not offered (no OFPC_IP_REASM capability).
            if cfg.flags & config_flags::FRAG_MASK == config_flags::FRAG_REASM {
                return Err(OfError::SwitchConfigBadFlags);
            }
            sw.dp.config_flags = cfg.flags;
            sw.dp.miss_send_len = cfg.miss_send_len;
            c.config_set(cfg.miss_send_len);
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
        Message::MultipartRequest(req) => super::multipart13::multipart(c, sw, now, xid, req.body)?,
        Message::BarrierRequest => c.send(xid, &Message::BarrierReply),
        Message::QueueGetConfigRequest { port } => c.send(
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
            c.send(xid, &Message::RoleReply(reply));
        }
        Message::GetAsyncRequest => c.send(xid, &Message::GetAsyncReply(c.async_config)),
        Message::SetAsync(a) => c.async_set(a),
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
    let command = super::flow_mod_command!(fm.command, FlowModCommand);
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
            // 1.3.5 §7.4.1: the match holds the pipeline fields.
            if p.tunnel_id != 0 {
                fields.push(Oxm::TunnelId {
                    value: p.tunnel_id,
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
    c.send(xid, &m);
}
