//! 1.3 multipart requests (1.3.5 §7.3.5) answered from the switch: desc,
//! flow, aggregate, table, port stats, queue, group, group desc and
//! features, meter, meter config and features, table features, port desc
//! and experimenter; long answers are split into replies flagged "more".

use super::{Connection, split};
use crate::error::OfError;
use crate::ext::ExperimenterMsg;
use crate::match13::compile;
use crate::meter::MAX_BANDS;
use crate::switch::{ALL_TABLES, Switch};
use crate::table::{Selector, WireActions, WireMatch};
use baton_openflow::Version;
use baton_openflow::types::{PortNo, Xid};
use baton_openflow::v13::group::group_id;
use baton_openflow::v13::meter::{meter_flags, meter_id};
use baton_openflow::v13::multipart::{
    AggregateStats, BucketCounter, Desc, ExperimenterMultipart, FlowStats, FlowStatsRequest,
    GroupDesc, GroupFeatures, GroupStats, MeterBandStats, MeterConfig, MeterFeatures, MeterStats,
    MultipartReply, MultipartReplyBody, MultipartRequestBody, OFPMPF_REPLY_MORE, PortStats,
    TableStats,
};
use baton_openflow::v13::oxm::Match13;
use baton_openflow::v13::{self, Message};
use std::time::Instant;

pub(super) fn multipart(
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
                    let (duration_sec, duration_nsec) = since(p.created);
                    PortStats {
                        port_no: p.no,
                        counters: p.counters,
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
        c.send(
            xid,
            &Message::MultipartReply(MultipartReply { flags, body }),
        );
    }
    Ok(())
}

/// Bit `1 << OFPAT_*` for each 1.3 action the switch executes: output,
/// copy TTL out/in, set/dec MPLS TTL, push/pop VLAN, push/pop MPLS, set
/// queue, group, set/dec NW TTL, set field, push/pop PBB.
const ACTIONS: u32 = (1 << 0)
    | (1 << 11)
    | (1 << 12)
    | (1 << 15)
    | (1 << 16)
    | (1 << 17)
    | (1 << 18)
    | (1 << 19)
    | (1 << 20)
    | (1 << 21)
    | (1 << 22)
    | (1 << 23)
    | (1 << 24)
    | (1 << 25)
    | (1 << 26)
    | (1 << 27);

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
