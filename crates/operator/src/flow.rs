//! Flows as the API writes them, in both directions: what
//! `POST /api/v1/switches/{dpid}/flows` takes ([`NewFlow`], checked into
//! a [`ValidFlow`] whose [`FlowSpec`] both versions express the same
//! way), what `DELETE` takes ([`FlowDeletion`]), and what `GET` shows
//! ([`Flow`], rendered from either version's flow statistics).
//!
//! One vocabulary for both directions, so that a flow read back can be
//! posted again:
//! - a match is an object keyed by OpenFlow 1.3 OXM field names
//!   (`in_port`, `eth_dst`, `ipv4_src`, `tcp_dst`, ...; 1.3.5 §7.2.3.7);
//!   numbers are JSON numbers or strings (`"0x0800"`), addresses strings,
//!   IPv4 prefixes `"10.0.0.0/24"`, ports a number or a reserved name
//!   (`"local"`), `vlan_vid` a number or `"none"` for untagged frames;
//! - actions are strings, `output:2`, `output:flood`, `set_eth_dst:MAC`,
//!   `strip_vlan`, `enqueue:PORT:QUEUE`, ... ([`ACTIONS`]).
//!
//! A posted match may leave out the prerequisites of its fields
//! (1.3.5 §7.2.3.6): `tcp_dst` implies `eth_type` 0x0800 and `ip_proto`
//! 6; a prerequisite given with another value is an error. Flows read
//! from a switch may hold fields a post cannot (IPv6, metadata, masks on
//! Ethernet addresses): they are shown, under their OXM names.
//!
//! - `flow/parse.rs`: JSON in, checked ([`NewFlow::check`],
//!   [`FlowDeletion::check`], [`parse_mac`]).
//! - `flow/render.rs`: flow statistics out ([`Flow::new`]).

mod parse;
mod render;

pub use parse::parse_mac;

use baton_openflow::PortNo;
use baton_openflow::neutral::{ActionSpec, FlowSpec, MatchSpec};
use baton_openflow::{BufferId, Cookie};
use baton_runtime::control::FlowSelection;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The actions a post may name, as `name` or `name:ARG`.
pub const ACTIONS: &[&str] = &[
    "output:PORT",
    "set_eth_src:MAC",
    "set_eth_dst:MAC",
    "set_vlan_vid:VID",
    "set_vlan_pcp:PCP",
    "strip_vlan",
    "set_ipv4_src:ADDR",
    "set_ipv4_dst:ADDR",
    "set_ip_dscp:DSCP",
    "set_tcp_src:PORT",
    "set_tcp_dst:PORT",
    "set_udp_src:PORT",
    "set_udp_dst:PORT",
    "enqueue:PORT:QUEUE",
];

/// A number written as a JSON number or as a string (decimal or `0x`
/// hex), or a name where the field allows one (`"local"`, `"none"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    /// A JSON number.
    Num(u64),
    /// A JSON string.
    Text(String),
}

/// The fields a flow matches, by their OpenFlow 1.3 names; absent fields
/// are wildcards.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowMatch {
    /// Input port: a number or `local`, `controller`.
    #[schema(value_type = Option<String>, example = "1")]
    pub in_port: Option<Scalar>,
    /// Ethernet source.
    #[schema(example = "00:00:00:00:00:01")]
    pub eth_src: Option<String>,
    /// Ethernet destination.
    pub eth_dst: Option<String>,
    /// Ethertype (implied by the network fields below).
    #[schema(value_type = Option<String>, example = "0x0800")]
    pub eth_type: Option<Scalar>,
    /// VLAN id, or `none` for untagged frames.
    #[schema(value_type = Option<String>)]
    pub vlan_vid: Option<Scalar>,
    /// VLAN priority (needs `vlan_vid`).
    #[schema(value_type = Option<u8>)]
    pub vlan_pcp: Option<Scalar>,
    /// IP protocol (IPv4; implied by the transport fields below).
    #[schema(value_type = Option<u8>)]
    pub ip_proto: Option<Scalar>,
    /// IP DSCP (6 bits).
    #[schema(value_type = Option<u8>)]
    pub ip_dscp: Option<Scalar>,
    /// IPv4 source, an address or a prefix.
    #[schema(example = "10.0.0.0/24")]
    pub ipv4_src: Option<String>,
    /// IPv4 destination, an address or a prefix.
    pub ipv4_dst: Option<String>,
    /// TCP source port.
    #[schema(value_type = Option<u16>)]
    pub tcp_src: Option<Scalar>,
    /// TCP destination port.
    #[schema(value_type = Option<u16>)]
    pub tcp_dst: Option<Scalar>,
    /// UDP source port.
    #[schema(value_type = Option<u16>)]
    pub udp_src: Option<Scalar>,
    /// UDP destination port.
    #[schema(value_type = Option<u16>)]
    pub udp_dst: Option<Scalar>,
    /// ICMP type.
    #[schema(value_type = Option<u8>)]
    pub icmpv4_type: Option<Scalar>,
    /// ICMP code.
    #[schema(value_type = Option<u8>)]
    pub icmpv4_code: Option<Scalar>,
    /// ARP opcode.
    #[schema(value_type = Option<u16>)]
    pub arp_op: Option<Scalar>,
    /// ARP sender IPv4 address or prefix.
    pub arp_spa: Option<String>,
    /// ARP target IPv4 address or prefix.
    pub arp_tpa: Option<String>,
}

/// A flow to add.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFlow {
    /// What it matches (`{}`: everything).
    #[serde(rename = "match", default)]
    pub match_: FlowMatch,
    /// Priority, higher wins (default 32768).
    #[serde(default = "default_priority")]
    pub priority: u16,
    /// Seconds without a hit before the switch removes it (0: never).
    #[serde(default)]
    pub idle_timeout: u16,
    /// Seconds before the switch removes it (0: never).
    #[serde(default)]
    pub hard_timeout: u16,
    /// The low 48 bits of its cookie; the top 16 are the operator's tag.
    #[serde(default)]
    pub cookie: u64,
    /// Its actions, in order (none: drop).
    #[serde(default)]
    #[schema(example = json!(["output:2"]))]
    pub actions: Vec<String>,
    /// Ask the switch for a FLOW_REMOVED when it goes.
    #[serde(default)]
    pub send_flow_removed: bool,
    /// Refuse it if it overlaps a flow of the same priority.
    #[serde(default)]
    pub check_overlap: bool,
}

fn default_priority() -> u16 {
    0x8000
}

/// Which flows to delete.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowDeletion {
    /// The match (`{}` with no `priority`: every flow).
    #[serde(rename = "match")]
    pub match_: FlowMatch,
    /// With a priority, only the flow with exactly this match and
    /// priority; without, every flow the match covers.
    pub priority: Option<u16>,
    /// Only flows that output to this port.
    #[schema(value_type = Option<String>)]
    pub out_port: Option<Scalar>,
}

/// A checked [`NewFlow`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidFlow {
    match_: MatchSpec<'static>,
    actions: Vec<ActionSpec>,
    priority: u16,
    idle_timeout: u16,
    hard_timeout: u16,
    cookie: Cookie,
    flags: u16,
}

impl ValidFlow {
    /// The flow to install.
    pub fn spec(&self) -> FlowSpec<'_> {
        FlowSpec {
            match_: self.match_,
            priority: self.priority,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            cookie: self.cookie,
            buffer_id: None::<BufferId>,
            flags: self.flags,
            actions: &self.actions,
            meter: None,
        }
    }
}

/// A checked [`FlowDeletion`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidDeletion {
    /// The match.
    pub match_: MatchSpec<'static>,
    /// Covered or exactly.
    pub which: FlowSelection,
    /// Only flows that output here ([`PortNo::ANY`]: any).
    pub out_port: PortNo,
}

/// A flow of a switch's tables, as the switch reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Flow {
    /// The table it is in.
    pub table_id: u8,
    /// Its priority.
    pub priority: u16,
    /// Its cookie, `0x` hex.
    #[schema(example = "0x9d2c000000000005")]
    pub cookie: String,
    /// The application whose cookie tag it carries, or `operator`, if
    /// any.
    pub installed_by: Option<String>,
    /// Idle timeout, seconds (0: none).
    pub idle_timeout: u16,
    /// Hard timeout, seconds (0: none).
    pub hard_timeout: u16,
    /// Seconds since it was installed.
    pub duration_secs: f64,
    /// Packets that hit it.
    pub packets: u64,
    /// Bytes that hit it.
    pub bytes: u64,
    /// What it matches, by OXM field name.
    #[serde(rename = "match")]
    #[schema(value_type = Object)]
    pub match_: BTreeMap<String, serde_json::Value>,
    /// Its actions (1.3 instructions other than apply-actions are shown
    /// as `goto_table:N`, `meter:N`, `write_actions(...)`, ...).
    pub actions: Vec<String>,
}

/// A switch's flows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Flows {
    /// Datapath id.
    pub dpid: String,
    /// `1.0` or `1.3`.
    pub version: String,
    /// Every flow of every table.
    pub flows: Vec<Flow>,
}

#[cfg(test)]
mod tests;
