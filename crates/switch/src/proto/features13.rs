//! The 1.3 table-features reply (1.3.5 §7.3.5.5): what each flow table
//! of this switch matches, sets and executes. `ovs-ofctl` asks for it
//! before it sends a flow-mod to a 1.3 switch. Changing the pipeline
//! through a table-features request is refused
//! (`OFPTFFC_EPERM`).

use crate::switch::Switch;
use baton_openflow::v13::action::ActionType;
use baton_openflow::v13::instruction::InstructionType;
use baton_openflow::v13::oxm::{OxmField, OxmHeader};
use baton_openflow::v13::table_features::{
    ActionId, InstructionId, OxmId, TableFeatureProp, TableFeatures,
};

/// Fields every table matches (with their maskability from the codec's
/// table, 1.3.5 table 12).
const MATCH: [OxmField; 40] = {
    use OxmField as F;
    [
        F::InPort,
        F::InPhyPort,
        F::Metadata,
        F::EthDst,
        F::EthSrc,
        F::EthType,
        F::VlanVid,
        F::VlanPcp,
        F::IpDscp,
        F::IpEcn,
        F::IpProto,
        F::Ipv4Src,
        F::Ipv4Dst,
        F::TcpSrc,
        F::TcpDst,
        F::UdpSrc,
        F::UdpDst,
        F::SctpSrc,
        F::SctpDst,
        F::Icmpv4Type,
        F::Icmpv4Code,
        F::ArpOp,
        F::ArpSpa,
        F::ArpTpa,
        F::ArpSha,
        F::ArpTha,
        F::Ipv6Src,
        F::Ipv6Dst,
        F::Ipv6Flabel,
        F::Ipv6Exthdr,
        F::Icmpv6Type,
        F::Icmpv6Code,
        F::Ipv6NdTarget,
        F::Ipv6NdSll,
        F::Ipv6NdTll,
        F::MplsLabel,
        F::MplsTc,
        F::MplsBos,
        F::PbbIsid,
        F::TunnelId,
    ]
};

/// Whether a set-field action may write `f` (see `action::set_field`):
/// every matched field but the pipeline's `in_port`, `in_phy_port` and
/// `metadata`, the protocol fields `eth_type` and `ip_proto`, and
/// `ipv6_exthdr`, which says what headers the packet has.
fn settable(f: &OxmField) -> bool {
    use OxmField as F;
    !matches!(
        f,
        F::InPort | F::InPhyPort | F::Metadata | F::EthType | F::IpProto | F::Ipv6Exthdr
    )
}

/// Actions the switch executes.
const ACTIONS: [ActionType; 16] = [
    ActionType::Output,
    ActionType::PushVlan,
    ActionType::PopVlan,
    ActionType::PushMpls,
    ActionType::PopMpls,
    ActionType::SetMplsTtl,
    ActionType::DecMplsTtl,
    ActionType::CopyTtlOut,
    ActionType::CopyTtlIn,
    ActionType::PushPbb,
    ActionType::PopPbb,
    ActionType::SetQueue,
    ActionType::Group,
    ActionType::SetNwTtl,
    ActionType::DecNwTtl,
    ActionType::SetField,
];

fn ids(fields: &[OxmField], masks: bool) -> Vec<OxmId> {
    fields
        .iter()
        .map(|f| {
            let maskable = masks && f.info().is_some_and(|i| i.maskable);
            OxmId::new(OxmHeader::basic(*f, maskable))
        })
        .collect()
}

/// The features of every table.
pub(super) fn tables(sw: &Switch) -> Vec<TableFeatures> {
    let n = sw.n_tables();
    let actions: Vec<ActionId> = ACTIONS.iter().map(|a| ActionId::Standard(*a)).collect();
    let set: Vec<OxmField> = MATCH.iter().copied().filter(settable).collect();
    (0..n)
        .map(|t| {
            let mut inst = vec![
                InstructionType::WriteMetadata,
                InstructionType::WriteActions,
                InstructionType::ApplyActions,
                InstructionType::ClearActions,
                InstructionType::Meter,
            ];
            if t + 1 < n {
                inst.insert(0, InstructionType::GotoTable);
            }
            let inst: Vec<InstructionId> = inst.into_iter().map(InstructionId::Standard).collect();
            let next: Vec<u8> = (t + 1..n).collect();
            TableFeatures {
                table_id: t,
                name: format!("table{t}"),
                metadata_match: u64::MAX,
                metadata_write: u64::MAX,
                config: 0,
                max_entries: sw
                    .table(t)
                    .map_or(0, |x| x.max_entries().min(u32::MAX as usize) as u32),
                properties: vec![
                    TableFeatureProp::Instructions(inst.clone()),
                    TableFeatureProp::InstructionsMiss(inst),
                    TableFeatureProp::NextTables(next.clone()),
                    TableFeatureProp::NextTablesMiss(next),
                    TableFeatureProp::WriteActions(actions.clone()),
                    TableFeatureProp::WriteActionsMiss(actions.clone()),
                    TableFeatureProp::ApplyActions(actions.clone()),
                    TableFeatureProp::ApplyActionsMiss(actions.clone()),
                    TableFeatureProp::Match(ids(&MATCH, true)),
                    TableFeatureProp::Wildcards(ids(&MATCH, false)),
                    TableFeatureProp::WriteSetfield(ids(&set, false)),
                    TableFeatureProp::WriteSetfieldMiss(ids(&set, false)),
                    TableFeatureProp::ApplySetfield(ids(&set, false)),
                    TableFeatureProp::ApplySetfieldMiss(ids(&set, false)),
                ],
            }
        })
        .collect()
}
