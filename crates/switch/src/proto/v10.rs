//! OpenFlow 1.0 requests (1.0.0 §5.3 to §5.5) applied to the switch, and
//! its events in 1.0 form: features, config, flow-mods, packet-outs,
//! port-mods, statistics (desc, flow, aggregate, table, port, queue,
//! vendor), barrier, echo and vendor messages.

use super::{Connection, split};
use crate::action::compile10;
use crate::datapath::{Event, PacketInReason, Transmit};
use crate::error::OfError;
use crate::ext::ExperimenterMsg;
use crate::match10::{compile, normalize};
use crate::switch::{Command, FlowMod, Switch};
use crate::table::{NewFlow, RemovedReason, Selector, WireActions, WireMatch};
use baton_openflow::Version;
use baton_openflow::switch_config::SwitchConfig;
use baton_openflow::types::{PortNo, Xid};
use baton_openflow::v10::flow_mod::OFPFF_EMERG;
use baton_openflow::v10::messages::capabilities;
use baton_openflow::v10::stats::{
    AggregateStats, DescStats, FlowStats, FlowStatsRequest, OFPSF_REPLY_MORE, PortStats,
    StatsReply, StatsReplyBody, StatsRequest, StatsRequestBody, TableStats,
};
use baton_openflow::v10::{self, FlowModCommand, Message, ofmatch::OFPFW_ALL};
use std::time::Instant;

/// Bit `1 << OFPAT_*` for every 1.0 action the switch executes (all of
/// them: output to vendor, 1.0.0 §5.2.4).
const ACTIONS: u32 = 0x0fff;

pub(super) fn handle(
    c: &mut Connection,
    sw: &mut Switch,
    now: Instant,
    xid: Xid,
    msg: &[u8],
    tx: &mut dyn Transmit,
) {
    let Some(m) = super::decoded(c, Version::V10, v10::decode, xid, msg) else {
        return;
    };
    let r = match m {
        Message::Hello(_) | Message::EchoReply(_) | Message::Error(_) => Ok(()),
        Message::EchoRequest(p) => {
            c.send(xid, &Message::EchoReply(p));
            Ok(())
        }
        Message::FeaturesRequest => {
            let reply = Message::FeaturesReply(v10::SwitchFeatures {
                datapath_id: sw.config().datapath_id,
                n_buffers: sw.dp.buffers.capacity() as u32,
                n_tables: 1,
                capabilities: capabilities::FLOW_STATS
                    | capabilities::TABLE_STATS
                    | capabilities::PORT_STATS
                    | capabilities::ARP_MATCH_IP,
                actions: ACTIONS,
                ports: sw.dp.ports.iter().map(|p| p.desc10()).collect(),
            });
            c.send(xid, &reply);
            Ok(())
        }
        Message::GetConfigRequest => {
            let reply = Message::GetConfigReply(SwitchConfig {
                flags: sw.dp.config_flags,
                miss_send_len: sw.dp.miss_send_len,
            });
            c.send(xid, &reply);
            Ok(())
        }
        Message::SetConfig(cfg) => {
            sw.dp.config_flags = cfg.flags;
            sw.dp.miss_send_len = cfg.miss_send_len;
            c.config_set(cfg.miss_send_len);
            Ok(())
        }
        Message::FlowMod(fm) => flow_mod(sw, now, fm, tx),
        Message::PacketOut(po) => {
            let acts = compile10(&sw.context(None, true), &po.actions);
            acts.and_then(|a| sw.packet_out(now, po.buffer_id, po.in_port, &a, &po.data, tx))
        }
        Message::PortMod(pm) => sw.port_mod(pm.port_no, pm.hw_addr, pm.config, pm.mask),
        Message::StatsRequest(req) => stats(c, sw, now, xid, req),
        Message::BarrierRequest => {
            c.send(xid, &Message::BarrierReply);
            Ok(())
        }
        Message::QueueGetConfigRequest { port } => {
            let queues = Vec::new();
            c.send(xid, &Message::QueueGetConfigReply { port, queues });
            Ok(())
        }
        Message::Vendor { vendor, data } => vendor_msg(sw, vendor, &data).map(|r| {
            if let Some(data) = r {
                c.send(xid, &Message::Vendor { vendor, data });
            }
        }),
        Message::FeaturesReply(_)
        | Message::GetConfigReply(_)
        | Message::PacketIn(_)
        | Message::FlowRemoved(_)
        | Message::PortStatus(_)
        | Message::StatsReply(_)
        | Message::BarrierReply
        | Message::QueueGetConfigReply { .. } => Err(OfError::BadType),
    };
    if let Err(e) = r {
        c.send_error(e.code(Version::V10), xid, msg);
    }
}

/// A vendor message or vendor statistics request for an extension: the
/// reply's bytes after the vendor id (the subtype first).
fn vendor_msg(sw: &mut Switch, vendor: u32, data: &[u8]) -> Result<Option<Vec<u8>>, OfError> {
    let (sub, rest) = match data {
        [a, b, c, d, rest @ ..] => (u32::from_be_bytes([*a, *b, *c, *d]), rest),
        _ => return Err(OfError::BadLen),
    };
    let msg = ExperimenterMsg {
        version: Version::V10,
        exp_type: sub,
        data: rest,
    };
    Ok(sw.dp.ext.message(vendor, &msg)?.map(|r| {
        let mut out = r.exp_type.to_be_bytes().to_vec();
        out.extend_from_slice(&r.data);
        out
    }))
}

fn flow_mod(
    sw: &mut Switch,
    now: Instant,
    fm: v10::FlowMod,
    tx: &mut dyn Transmit,
) -> Result<(), OfError> {
    if fm.flags & OFPFF_EMERG != 0 {
        return Err(OfError::FlowModUnsupported);
    }
    let command = super::flow_mod_command!(fm.command, FlowModCommand);
    let wire = normalize(&fm.match_);
    let m = compile(&wire);
    let deleting = matches!(command, Command::Delete | Command::DeleteStrict);
    let apply = if deleting {
        Vec::new()
    } else {
        compile10(&sw.context(Some(&m), false), &fm.actions)?
    };
    let flow = NewFlow {
        priority: fm.priority,
        match_: m,
        wire_match: WireMatch::V10(wire),
        cookie: fm.cookie,
        idle_timeout: fm.idle_timeout,
        hard_timeout: fm.hard_timeout,
        flags: fm.flags,
        program: crate::action::Program {
            apply,
            ..Default::default()
        },
        wire_actions: WireActions::V10(fm.actions),
    };
    let req = FlowMod {
        command,
        table_id: 0,
        flow,
        cookie_mask: 0,
        buffer_id: fm.buffer_id,
        out_port: (deleting && fm.out_port != PortNo::ANY).then_some(fm.out_port),
        out_group: None,
    };
    sw.flow_mod(now, req, tx)
}

fn stats(
    c: &mut Connection,
    sw: &mut Switch,
    now: Instant,
    xid: Xid,
    req: StatsRequest,
) -> Result<(), OfError> {
    let one = |body| vec![Message::StatsReply(StatsReply { flags: 0, body })];
    let replies = match req.body {
        StatsRequestBody::Desc => one(StatsReplyBody::Desc(Box::new(DescStats {
            mfr_desc: "baton".into(),
            hw_desc: "baton-switch (software)".into(),
            sw_desc: env!("CARGO_PKG_VERSION").into(),
            serial_num: "None".into(),
            dp_desc: sw.config().description.clone(),
        }))),
        StatsRequestBody::Flow(r) => {
            let entries = flows(sw, now, &r);
            let parts = split(entries, |f| 88 + v10::action::actions_len(&f.actions));
            many(parts, StatsReplyBody::Flow)
        }
        StatsRequestBody::Aggregate(r) => {
            let entries = flows(sw, now, &r);
            one(StatsReplyBody::Aggregate(AggregateStats {
                packet_count: entries.iter().map(|f| f.packet_count).sum(),
                byte_count: entries.iter().map(|f| f.byte_count).sum(),
                flow_count: entries.len() as u32,
            }))
        }
        StatsRequestBody::Table => {
            let t = sw.table(0).ok_or(OfError::RequestEperm)?;
            one(StatsReplyBody::Table(vec![TableStats {
                table_id: 0,
                name: "classifier".into(),
                wildcards: OFPFW_ALL,
                max_entries: t.max_entries().min(u32::MAX as usize) as u32,
                active_count: t.len() as u32,
                lookup_count: t.lookups,
                matched_count: t.matched,
            }]))
        }
        StatsRequestBody::Port { port_no } => {
            let ports = sw
                .dp
                .ports
                .iter()
                .filter(|p| port_no == PortNo::ANY || p.no == port_no)
                .map(|p| PortStats {
                    port_no: p.no,
                    counters: p.counters,
                })
                .collect::<Vec<_>>();
            many(split(ports, |_| 104), StatsReplyBody::Port)
        }
        StatsRequestBody::Queue { .. } => one(StatsReplyBody::Queue(Vec::new())),
        StatsRequestBody::Vendor { vendor, data } => match vendor_msg(sw, vendor, &data)? {
            Some(data) => one(StatsReplyBody::Vendor { vendor, data }),
            None => Vec::new(),
        },
    };
    for r in replies {
        c.send(xid, &r);
    }
    Ok(())
}

/// Replies for each part, all but the last flagged "more".
fn many<T>(parts: Vec<Vec<T>>, body: impl Fn(Vec<T>) -> StatsReplyBody) -> Vec<Message> {
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            Message::StatsReply(StatsReply {
                flags: if i + 1 < n { OFPSF_REPLY_MORE } else { 0 },
                body: body(p),
            })
        })
        .collect()
}

/// The flows a flow or aggregate statistics request names.
fn flows(sw: &Switch, now: Instant, r: &FlowStatsRequest) -> Vec<FlowStats> {
    if r.table_id != 0 && r.table_id != 0xff {
        return Vec::new();
    }
    let m = compile(&normalize(&r.match_));
    let sel = Selector {
        match_: &m,
        strict: None,
        out_port: (r.out_port != PortNo::ANY).then_some(r.out_port),
        out_group: None,
        cookie: None,
    };
    let Some(t) = sw.table(0) else {
        return Vec::new();
    };
    let mut ids = t.select(&sel);
    ids.sort_unstable();
    ids.into_iter()
        .filter_map(|id| t.get(id))
        .map(|e| {
            let f = &e.flow;
            let (duration_sec, duration_nsec) = e.duration(now);
            FlowStats {
                table_id: 0,
                match_: match &f.wire_match {
                    WireMatch::V10(m) => *m,
                    WireMatch::V13(_) => v10::Match10::ALL,
                },
                duration_sec,
                duration_nsec,
                priority: f.priority,
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                cookie: f.cookie,
                packet_count: e.packets,
                byte_count: e.bytes,
                actions: match &f.wire_actions {
                    WireActions::V10(a) => a.clone(),
                    WireActions::V13(_) => Vec::new(),
                },
            }
        })
        .collect()
}

/// Encodes an event for a 1.0 controller (every controller is EQUAL and
/// gets every asynchronous message, 1.0.0 §4.1).
pub(super) fn deliver(c: &mut Connection, ev: &Event, xid: Xid) {
    let m = match ev {
        Event::PacketIn(p) => Message::PacketIn(v10::PacketIn {
            buffer_id: p.buffer_id,
            total_len: p.total_len,
            in_port: p.in_port,
            reason: match p.reason {
                PacketInReason::NoMatch => v10::PacketInReason::NoMatch,
                PacketInReason::Action | PacketInReason::InvalidTtl => v10::PacketInReason::Action,
            },
            data: p.data.clone(),
        }),
        Event::FlowRemoved(r) => {
            let f = &r.entry.flow;
            let WireMatch::V10(match_) = f.wire_match else {
                return;
            };
            Message::FlowRemoved(v10::FlowRemoved {
                match_,
                cookie: f.cookie,
                priority: f.priority,
                reason: match r.reason {
                    RemovedReason::IdleTimeout => v10::FlowRemovedReason::IdleTimeout,
                    RemovedReason::HardTimeout => v10::FlowRemovedReason::HardTimeout,
                    RemovedReason::Delete | RemovedReason::GroupDelete => {
                        v10::FlowRemovedReason::Delete
                    }
                },
                duration_sec: r.duration.0,
                duration_nsec: r.duration.1,
                idle_timeout: f.idle_timeout,
                packet_count: r.entry.packets,
                byte_count: r.entry.bytes,
            })
        }
        Event::PortStatus { reason, port } => Message::PortStatus(v10::PortStatus {
            reason: *reason,
            desc: port.desc10(),
        }),
    };
    c.send(xid, &m);
}
