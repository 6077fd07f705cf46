//! What a flow does, in one form for both versions: [`Act`] (an action),
//! [`Program`] (a flow's compiled instructions) and [`ActionSet`] (the 1.3
//! action set, 1.3.5 §5.10), and the compilers that turn the codec's 1.0
//! actions and 1.3 instructions into them, checking each against the
//! switch (ports, groups, meters, extensions, tables) and answering the
//! error the spec names when one is wrong.
//!
//! 1.0 actions become a program with only an apply list. The MPLS
//! actions (push, pop, set and decrement the TTL, set-field on the label,
//! TC and BoS) work on the outermost label stack entry; those that need
//! an MPLS packet need a match (or an earlier push in the same list) that
//! guarantees one, else `OFPBAC_MATCH_INCONSISTENT`, as Open vSwitch
//! checks them. The TTL copies (`copy_ttl_out`, `copy_ttl_in`), which
//! Open vSwitch does not implement, are held to the same rule; they copy
//! between the outermost entry and the next one, or the IP header under
//! the last entry when its first nibble is 4 or 6. Set-field also writes
//! the pipeline's `tunnel_id` and the neighbour discovery target and
//! link-layer address options. The PBB actions (IEEE 802.1ah) push an
//! I-TAG and a new outer Ethernet header around the whole frame, pop
//! them, and set the outer I-TAG's I-SID (see [`crate::rewrite::push_pbb`]
//! for what a push writes); `pop_pbb` and the I-SID set-field need a
//! packet that is PBB by the match as the actions before left it, as the
//! MPLS ones do. Every 1.3 action type compiles; set-field is refused
//! on `in_port`, `in_phy_port`, `metadata` (written by its instruction),
//! `eth_type` and `ipv6_exthdr` (`OFPBAC_BAD_SET_TYPE`), and on
//! `ip_proto` in a flow (`OFPBAC_MATCH_INCONSISTENT`, see
//! `field_prereq_of_set`). A group action inside a group bucket is
//! refused with `OFPGMFC_CHAINING_UNSUPPORTED`, as Open vSwitch does.

use crate::error::OfError;
use crate::ext::Extensions;
use crate::key::{ETH_TYPE_PBB, FlowMatch, ISID_MASK, is_mpls, slot};
use crate::match13::{mpls_present, pbb_present, prereq_ok, vlan_present};
use crate::port::Ports;
use baton_openflow::Version;
use baton_openflow::types::{MacAddr, PortNo};
use baton_openflow::v13::oxm::{OFPVID_PRESENT, Oxm, OxmField};
use baton_openflow::{v10, v13};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

/// A header field write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetField {
    /// Ethernet source.
    EthSrc(MacAddr),
    /// Ethernet destination.
    EthDst(MacAddr),
    /// VLAN id; `push` adds a tag to an untagged frame (1.0 semantics).
    VlanVid {
        /// The 12-bit id.
        vid: u16,
        /// Add a tag when there is none.
        push: bool,
    },
    /// VLAN priority; `push` as for [`SetField::VlanVid`].
    VlanPcp {
        /// The 3-bit priority.
        pcp: u8,
        /// Add a tag when there is none.
        push: bool,
    },
    /// IP DSCP (6 bits).
    IpDscp(u8),
    /// IP ECN (2 bits).
    IpEcn(u8),
    /// IPv4 source.
    Ipv4Src(Ipv4Addr),
    /// IPv4 destination.
    Ipv4Dst(Ipv4Addr),
    /// TCP, UDP or SCTP source port.
    TpSrc(u16),
    /// TCP, UDP or SCTP destination port.
    TpDst(u16),
    /// ICMPv4 / ICMPv6 type.
    IcmpType(u8),
    /// ICMPv4 / ICMPv6 code.
    IcmpCode(u8),
    /// ARP opcode.
    ArpOp(u16),
    /// ARP sender protocol address.
    ArpSpa(Ipv4Addr),
    /// ARP target protocol address.
    ArpTpa(Ipv4Addr),
    /// ARP sender hardware address.
    ArpSha(MacAddr),
    /// ARP target hardware address.
    ArpTha(MacAddr),
    /// IPv6 source.
    Ipv6Src(Ipv6Addr),
    /// IPv6 destination.
    Ipv6Dst(Ipv6Addr),
    /// IPv6 flow label (20 bits).
    Ipv6Flabel(u32),
    /// MPLS label of the outermost entry (20 bits).
    MplsLabel(u32),
    /// MPLS traffic class of the outermost entry (3 bits).
    MplsTc(u8),
    /// MPLS bottom-of-stack bit of the outermost entry.
    MplsBos(u8),
    /// The pipeline's tunnel id (1.3): later tables match the new value;
    /// the frame does not change.
    TunnelId(u64),
    /// Target address of an ICMPv6 neighbour solicitation or
    /// advertisement.
    Ipv6NdTarget(Ipv6Addr),
    /// Source link-layer address option of a neighbour solicitation.
    Ipv6NdSll(MacAddr),
    /// Target link-layer address option of a neighbour advertisement.
    Ipv6NdTll(MacAddr),
    /// I-SID of the outer PBB I-TAG (24 bits).
    PbbIsid(u32),
}

/// Number of distinct [`SetField`] kinds (slots of an action set).
pub const SET_FIELD_KINDS: usize = 28;

impl SetField {
    /// The kind's index, for the action set's one-per-kind rule.
    pub fn kind(&self) -> usize {
        use SetField as S;
        match self {
            S::EthSrc(_) => 0,
            S::EthDst(_) => 1,
            S::VlanVid { .. } => 2,
            S::VlanPcp { .. } => 3,
            S::IpDscp(_) => 4,
            S::IpEcn(_) => 5,
            S::Ipv4Src(_) => 6,
            S::Ipv4Dst(_) => 7,
            S::TpSrc(_) => 8,
            S::TpDst(_) => 9,
            S::IcmpType(_) => 10,
            S::IcmpCode(_) => 11,
            S::ArpOp(_) => 12,
            S::ArpSpa(_) => 13,
            S::ArpTpa(_) => 14,
            S::ArpSha(_) => 15,
            S::ArpTha(_) => 16,
            S::Ipv6Src(_) => 17,
            S::Ipv6Dst(_) => 18,
            S::Ipv6Flabel(_) => 19,
            S::MplsLabel(_) => 20,
            S::MplsTc(_) => 21,
            S::MplsBos(_) => 22,
            S::TunnelId(_) => 23,
            S::Ipv6NdTarget(_) => 24,
            S::Ipv6NdSll(_) => 25,
            S::Ipv6NdTll(_) => 26,
            S::PbbIsid(_) => 27,
        }
    }
}

/// One action, in the switch's own form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Send out of a port (physical or reserved).
    Output {
        /// The port.
        port: PortNo,
        /// Bytes to send to the controller (`OFPP_CONTROLLER`).
        max_len: u16,
    },
    /// 1.0 `OFPAT_ENQUEUE`: output through a queue (queues are not
    /// modelled: the frame is sent on the port).
    Enqueue {
        /// The port.
        port: PortNo,
        /// The queue.
        queue: u32,
    },
    /// 1.3 `OFPAT_SET_QUEUE` (recorded, not modelled).
    SetQueue(u32),
    /// 1.3 `OFPAT_GROUP`.
    Group(u32),
    /// Push a VLAN tag with this TPID.
    PushVlan(u16),
    /// Pop the outer VLAN tag (1.0 `STRIP_VLAN`).
    PopVlan,
    /// Write a header field.
    Set(SetField),
    /// Set the IPv4 TTL / IPv6 hop limit.
    SetNwTtl(u8),
    /// Decrement the IPv4 TTL / IPv6 hop limit.
    DecNwTtl,
    /// Push an MPLS label stack entry; the frame gets this ethertype.
    PushMpls(u16),
    /// Pop the outermost MPLS entry; the frame gets this ethertype.
    PopMpls(u16),
    /// Set the outermost MPLS entry's TTL.
    SetMplsTtl(u8),
    /// Decrement the outermost MPLS entry's TTL.
    DecMplsTtl,
    /// Copy the TTL of the next-to-outermost header to the outermost
    /// MPLS entry.
    CopyTtlOut,
    /// Copy the outermost MPLS entry's TTL to the next-to-outermost
    /// header.
    CopyTtlIn,
    /// Push a PBB I-TAG and a new outer Ethernet header with this
    /// ethertype (0x88e7).
    PushPbb(u16),
    /// Pop the outer Ethernet header, B-TAG and I-TAG of a PBB frame.
    PopPbb,
    /// An action of a registered extension.
    Ext {
        /// Index of the extension in the switch's registry.
        index: u16,
        /// The action's body after the experimenter id.
        data: Arc<[u8]>,
    },
}

/// A flow's compiled instructions (1.3.5 §5.9); a 1.0 flow has only
/// `apply`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Program {
    /// `OFPIT_METER`.
    pub meter: Option<u32>,
    /// `OFPIT_APPLY_ACTIONS`, or a 1.0 action list.
    pub apply: Vec<Act>,
    /// `OFPIT_CLEAR_ACTIONS`.
    pub clear: bool,
    /// `OFPIT_WRITE_ACTIONS`.
    pub write: Vec<Act>,
    /// `OFPIT_WRITE_METADATA`: value and mask.
    pub metadata: Option<(u64, u64)>,
    /// `OFPIT_GOTO_TABLE`.
    pub goto: Option<u8>,
}

impl Program {
    /// True when some action outputs to `port` (the `out_port` filter of
    /// flow-mod deletes and statistics).
    pub fn outputs_to(&self, port: PortNo) -> bool {
        self.apply.iter().chain(self.write.iter()).any(|a| {
            matches!(a, Act::Output { port: p, .. } | Act::Enqueue { port: p, .. } if *p == port)
        })
    }

    /// True when some action names group `g`.
    pub fn uses_group(&self, g: u32) -> bool {
        self.apply
            .iter()
            .chain(self.write.iter())
            .any(|a| *a == Act::Group(g))
    }

    /// The groups the program names.
    pub fn groups(&self) -> impl Iterator<Item = u32> + '_ {
        self.apply
            .iter()
            .chain(self.write.iter())
            .filter_map(|a| match a {
                Act::Group(g) => Some(*g),
                _ => None,
            })
    }
}

/// The 1.3 action set: at most one action of each type, executed in the
/// order of 1.3.5 §5.10: copy TTL inwards, pop (VLAN, then PBB, then
/// MPLS), push-MPLS, push-PBB, push-VLAN, copy TTL outwards, decrement
/// TTL (MPLS, then the IP TTL action), set (`SET_MPLS_TTL`, then
/// set-field), queue, group, output. Open vSwitch orders the ones it has
/// the same way. The spec says only "apply all tag pop actions" for the
/// pop stage; the pops run in the reverse of the push stages' order, so
/// each takes off the header its push would have put outermost: the
/// outer VLAN tag (a B-TAG on a PBB frame), then the PBB encapsulation,
/// then the MPLS entry of the frame under it.
#[derive(Debug, Clone, Default)]
pub struct ActionSet {
    copy_ttl_in: bool,
    copy_ttl_out: bool,
    pop_vlan: bool,
    pop_pbb: bool,
    pop_mpls: Option<u16>,
    push_mpls: Option<u16>,
    push_pbb: Option<u16>,
    push_vlan: Option<u16>,
    dec_mpls_ttl: bool,
    ttl: Option<Act>,
    set_mpls_ttl: Option<u8>,
    sets: [Option<SetField>; SET_FIELD_KINDS],
    ext: Option<Act>,
    queue: Option<u32>,
    group: Option<u32>,
    output: Option<(PortNo, u16)>,
}

impl ActionSet {
    /// Empties the set (`OFPIT_CLEAR_ACTIONS`).
    pub fn clear(&mut self) {
        *self = ActionSet::default();
    }

    /// True when the set holds nothing.
    pub fn is_empty(&self) -> bool {
        !self.copy_ttl_in
            && !self.copy_ttl_out
            && !self.pop_vlan
            && !self.pop_pbb
            && self.pop_mpls.is_none()
            && self.push_mpls.is_none()
            && self.push_pbb.is_none()
            && self.push_vlan.is_none()
            && !self.dec_mpls_ttl
            && self.ttl.is_none()
            && self.set_mpls_ttl.is_none()
            && self.sets.iter().all(Option::is_none)
            && self.ext.is_none()
            && self.queue.is_none()
            && self.group.is_none()
            && self.output.is_none()
    }

    /// Merges actions into the set (`OFPIT_WRITE_ACTIONS`): each replaces
    /// the one of its type.
    pub fn write(&mut self, acts: &[Act]) {
        for a in acts {
            match a {
                Act::Output { port, max_len } => self.output = Some((*port, *max_len)),
                Act::Enqueue { port, queue } => {
                    self.queue = Some(*queue);
                    self.output = Some((*port, 0));
                }
                Act::SetQueue(q) => self.queue = Some(*q),
                Act::Group(g) => self.group = Some(*g),
                Act::PushVlan(t) => self.push_vlan = Some(*t),
                Act::PopVlan => self.pop_vlan = true,
                Act::PushMpls(t) => self.push_mpls = Some(*t),
                Act::PopMpls(t) => self.pop_mpls = Some(*t),
                Act::SetMplsTtl(t) => self.set_mpls_ttl = Some(*t),
                Act::DecMplsTtl => self.dec_mpls_ttl = true,
                Act::CopyTtlIn => self.copy_ttl_in = true,
                Act::CopyTtlOut => self.copy_ttl_out = true,
                Act::PushPbb(t) => self.push_pbb = Some(*t),
                Act::PopPbb => self.pop_pbb = true,
                Act::Set(s) => self.sets[s.kind()] = Some(*s),
                Act::SetNwTtl(_) | Act::DecNwTtl => self.ttl = Some(a.clone()),
                Act::Ext { .. } => self.ext = Some(a.clone()),
            }
        }
    }

    /// Calls `f` with the set's actions in execution order; a group
    /// action hides the output action (1.3.5 §5.10).
    pub fn for_each(&self, mut f: impl FnMut(&Act) -> bool) {
        let head = [
            self.copy_ttl_in.then_some(Act::CopyTtlIn),
            self.pop_vlan.then_some(Act::PopVlan),
            self.pop_pbb.then_some(Act::PopPbb),
            self.pop_mpls.map(Act::PopMpls),
            self.push_mpls.map(Act::PushMpls),
            self.push_pbb.map(Act::PushPbb),
            self.push_vlan.map(Act::PushVlan),
            self.copy_ttl_out.then_some(Act::CopyTtlOut),
            self.dec_mpls_ttl.then_some(Act::DecMplsTtl),
            self.ttl.clone(),
            self.set_mpls_ttl.map(Act::SetMplsTtl),
        ];
        let sets = self.sets.iter().flatten().map(|s| Act::Set(*s));
        let tail = [self.ext.clone(), self.queue.map(Act::SetQueue)];
        let last = match (self.group, self.output) {
            (Some(g), _) => Some(Act::Group(g)),
            (None, Some((port, max_len))) => Some(Act::Output { port, max_len }),
            (None, None) => None,
        };
        let all = head
            .into_iter()
            .flatten()
            .chain(sets)
            .chain(tail.into_iter().flatten())
            .chain(last);
        for a in all {
            if !f(&a) {
                return;
            }
        }
    }
}

/// A table of numbered things (groups, meters) that actions may name.
pub trait Known {
    /// True when `id` exists.
    fn contains(&self, id: u32) -> bool;
}

/// What actions are checked against.
pub struct Context<'a> {
    /// The switch's version.
    pub version: Version,
    /// Its ports.
    pub ports: &'a Ports,
    /// Its groups (1.3).
    pub groups: &'a dyn Known,
    /// Its meters (1.3).
    pub meters: &'a dyn Known,
    /// Its extensions.
    pub ext: &'a Extensions,
    /// Number of flow tables.
    pub n_tables: u8,
    /// The flow's match, for set-field and MPLS prerequisites (none for
    /// packet-outs and group buckets, whose packets the actions meet
    /// unchecked: an MPLS action on a packet without MPLS does nothing).
    pub flow_match: Option<&'a FlowMatch>,
    /// Checking a PACKET_OUT (output to `OFPP_TABLE` allowed).
    pub packet_out: bool,
    /// Checking a group bucket (group actions refused).
    pub in_bucket: bool,
}

impl Context<'_> {
    fn check_port(&self, port: PortNo) -> Result<(), OfError> {
        match port {
            PortNo::IN_PORT | PortNo::FLOOD | PortNo::ALL | PortNo::CONTROLLER => Ok(()),
            PortNo::TABLE if self.packet_out => Ok(()),
            p if self.ports.get(p).is_some() => Ok(()),
            _ => Err(OfError::BadOutPort),
        }
    }

    fn ext_action(&self, experimenter: u32, data: &[u8]) -> Result<Act, OfError> {
        let index = self
            .ext
            .find(experimenter)
            .ok_or(OfError::BadActionExperimenter)?;
        self.ext.check_action(index, data)?;
        Ok(Act::Ext {
            index: index as u16,
            data: Arc::from(data),
        })
    }
}

/// Compiles a 1.0 action list (1.0.0 §5.2.4).
pub fn compile10(ctx: &Context<'_>, actions: &[v10::Action]) -> Result<Vec<Act>, OfError> {
    use v10::Action as A;
    let mut out = Vec::with_capacity(actions.len());
    for a in actions {
        out.push(match a {
            A::Output { port, max_len } => {
                ctx.check_port(*port)?;
                Act::Output {
                    port: *port,
                    max_len: *max_len,
                }
            }
            A::SetVlanVid(vid) if *vid > 0x0fff => return Err(OfError::BadArgument),
            A::SetVlanVid(vid) => Act::Set(SetField::VlanVid {
                vid: *vid,
                push: true,
            }),
            A::SetVlanPcp(pcp) if *pcp > 7 => return Err(OfError::BadArgument),
            A::SetVlanPcp(pcp) => Act::Set(SetField::VlanPcp {
                pcp: *pcp,
                push: true,
            }),
            A::StripVlan => Act::PopVlan,
            A::SetDlSrc(m) => Act::Set(SetField::EthSrc(*m)),
            A::SetDlDst(m) => Act::Set(SetField::EthDst(*m)),
            A::SetNwSrc(a) => Act::Set(SetField::Ipv4Src(*a)),
            A::SetNwDst(a) => Act::Set(SetField::Ipv4Dst(*a)),
            // The ToS byte's low two bits are ECN, which 1.0 cannot set.
            A::SetNwTos(tos) if tos & 3 != 0 => return Err(OfError::BadArgument),
            A::SetNwTos(tos) => Act::Set(SetField::IpDscp(tos >> 2)),
            A::SetTpSrc(p) => Act::Set(SetField::TpSrc(*p)),
            A::SetTpDst(p) => Act::Set(SetField::TpDst(*p)),
            A::Enqueue { port, queue_id } => {
                if *port != PortNo::IN_PORT && ctx.ports.get(*port).is_none() {
                    return Err(OfError::BadOutPort);
                }
                Act::Enqueue {
                    port: *port,
                    queue: *queue_id,
                }
            }
            A::Vendor { vendor, data } => ctx.ext_action(*vendor, data)?,
        });
    }
    Ok(out)
}

/// Compiles a 1.3 action list (1.3.5 §7.2.5).
///
/// Prerequisites are checked against the flow's match as the actions
/// before have changed it, as Open vSwitch does: a push or pop of MPLS
/// gives the packet the action's ethertype, so `pop_mpls(0x0800)` on an
/// MPLS match may be followed by an IPv4 set-field, and an IPv4
/// set-field after `push_mpls` is `OFPBAC_MATCH_INCONSISTENT`. A PBB
/// push leaves an untagged PBB packet with the same Ethernet addresses;
/// a PBB pop leaves a packet the match says nothing of (the customer
/// frame), so only the pipeline fields stay known.
pub fn compile13(ctx: &Context<'_>, actions: &[v13::Action]) -> Result<Vec<Act>, OfError> {
    use v13::Action as A;
    let mut out = Vec::with_capacity(actions.len());
    let mut vlan_pushed = false;
    // The flow's match as the packet has become after the actions so far.
    let mut m = ctx.flow_match.copied();
    let need_mpls = |m: &Option<FlowMatch>| match m {
        Some(m) if !mpls_present(m) => Err(OfError::MatchInconsistent),
        _ => Ok(()),
    };
    let need_pbb = |m: &Option<FlowMatch>| match m {
        Some(m) if !pbb_present(m) => Err(OfError::MatchInconsistent),
        _ => Ok(()),
    };
    for a in actions {
        out.push(match a {
            A::Output { port, max_len } => {
                ctx.check_port(*port)?;
                Act::Output {
                    port: *port,
                    max_len: *max_len,
                }
            }
            A::PushVlan(tpid) => {
                if *tpid != 0x8100 && *tpid != 0x88a8 {
                    return Err(OfError::BadArgument);
                }
                vlan_pushed = true;
                Act::PushVlan(*tpid)
            }
            A::PopVlan => Act::PopVlan,
            A::SetQueue(q) => Act::SetQueue(*q),
            A::Group(_) if ctx.in_bucket => return Err(OfError::ChainingUnsupported),
            A::Group(g) => {
                if !ctx.groups.contains(*g) {
                    return Err(OfError::BadOutGroup);
                }
                Act::Group(*g)
            }
            A::SetNwTtl(t) => Act::SetNwTtl(*t),
            A::DecNwTtl => Act::DecNwTtl,
            A::SetField(o) => Act::Set(set_field(m.as_ref(), o, vlan_pushed)?),
            A::Experimenter { experimenter, data } => ctx.ext_action(*experimenter, data)?,
            A::PushMpls(t) => {
                if !is_mpls(*t) {
                    return Err(OfError::BadArgument);
                }
                if let Some(m) = &mut m {
                    now_carries(m, *t);
                }
                Act::PushMpls(*t)
            }
            A::PopMpls(t) => {
                need_mpls(&m)?;
                if let Some(m) = &mut m {
                    now_carries(m, *t);
                }
                Act::PopMpls(*t)
            }
            A::SetMplsTtl(t) => {
                need_mpls(&m)?;
                Act::SetMplsTtl(*t)
            }
            A::DecMplsTtl => {
                need_mpls(&m)?;
                Act::DecMplsTtl
            }
            // Open vSwitch does not implement the TTL copies; like
            // dec_mpls_ttl they need a packet that is MPLS by the match
            // as the actions before left it.
            A::CopyTtlOut => {
                need_mpls(&m)?;
                Act::CopyTtlOut
            }
            A::CopyTtlIn => {
                need_mpls(&m)?;
                Act::CopyTtlIn
            }
            A::PushPbb(t) => {
                if *t != ETH_TYPE_PBB {
                    return Err(OfError::BadArgument);
                }
                if let Some(m) = &mut m {
                    now_carries(m, *t);
                    // The VLAN tags are inside now, and the I-SID may be
                    // a copy of the old one.
                    m.exact(slot::VLAN, 0);
                    for s in [slot::VLAN_PCP, slot::PBB_ISID] {
                        m.mask.set(s, 0);
                        m.key.set(s, 0);
                    }
                }
                vlan_pushed = false;
                Act::PushPbb(*t)
            }
            A::PopPbb => {
                need_pbb(&m)?;
                if let Some(m) = &mut m {
                    only_pipeline_known(m);
                }
                vlan_pushed = false;
                Act::PopPbb
            }
        });
    }
    Ok(out)
}

/// After a push or pop of MPLS, or a push of PBB, the packet has
/// ethertype `t` and none of the fields the match fixed below the
/// Ethernet header and VLAN tags: what the match said of them no longer
/// holds.
fn now_carries(m: &mut FlowMatch, t: u16) {
    for s in [
        slot::IP_PROTO,
        slot::IP_DSCP,
        slot::IP_ECN,
        slot::ARP_OP,
        slot::ND_LL,
    ] {
        m.mask.set(s, 0);
        m.key.set(s, 0);
    }
    for w in [3, 4].into_iter().chain(slot::IPV6_SRC..slot::IPV6_SRC + 6) {
        m.mask.w[w] = 0;
        m.key.w[w] = 0;
    }
    m.exact(slot::ETH_TYPE, u64::from(t));
}

/// After a PBB pop the packet is the customer frame, of which the match
/// said nothing: only the pipeline fields (`in_port`, `metadata`,
/// `tunnel_id`) still hold.
fn only_pipeline_known(m: &mut FlowMatch) {
    let keep = [slot::IN_PORT, slot::METADATA, slot::TUNNEL_ID];
    let mut kept = FlowMatch::ALL;
    for s in keep {
        kept.set(s, m.key.get(s), m.mask.get(s));
    }
    *m = kept;
}

/// A set-field action: the field must be settable, its value in range and
/// its prerequisites in `flow_match`, the flow's match as the actions
/// before left the packet (`OFPBAC_MATCH_INCONSISTENT`).
fn set_field(
    flow_match: Option<&FlowMatch>,
    o: &Oxm,
    vlan_pushed: bool,
) -> Result<SetField, OfError> {
    if o.has_mask() {
        return Err(OfError::BadSetArgument);
    }
    let field = o.field().ok_or(OfError::BadSetType)?;
    if let Some(m) = flow_match {
        let ok = match field {
            OxmField::VlanVid | OxmField::VlanPcp => vlan_pushed || vlan_present(m),
            OxmField::EthType => true,
            _ => prereq_ok(field, m) && field_prereq_of_set(field, m),
        };
        if !ok {
            return Err(OfError::MatchInconsistent);
        }
    }
    use SetField as S;
    Ok(match *o {
        Oxm::EthDst { value, .. } => S::EthDst(value),
        Oxm::EthSrc { value, .. } => S::EthSrc(value),
        Oxm::VlanVid { value, .. } => {
            if value & OFPVID_PRESENT == 0 || value > 0x1fff {
                return Err(OfError::BadSetArgument);
            }
            S::VlanVid {
                vid: value & 0x0fff,
                push: false,
            }
        }
        Oxm::VlanPcp(p) if p <= 7 => S::VlanPcp {
            pcp: p,
            push: false,
        },
        Oxm::IpDscp(d) if d <= 63 => S::IpDscp(d),
        Oxm::IpEcn(e) if e <= 3 => S::IpEcn(e),
        Oxm::Ipv4Src { value, .. } => S::Ipv4Src(value),
        Oxm::Ipv4Dst { value, .. } => S::Ipv4Dst(value),
        Oxm::TcpSrc(p) | Oxm::UdpSrc(p) | Oxm::SctpSrc(p) => S::TpSrc(p),
        Oxm::TcpDst(p) | Oxm::UdpDst(p) | Oxm::SctpDst(p) => S::TpDst(p),
        Oxm::Icmpv4Type(t) | Oxm::Icmpv6Type(t) => S::IcmpType(t),
        Oxm::Icmpv4Code(c) | Oxm::Icmpv6Code(c) => S::IcmpCode(c),
        Oxm::ArpOp(op) => S::ArpOp(op),
        Oxm::ArpSpa { value, .. } => S::ArpSpa(value),
        Oxm::ArpTpa { value, .. } => S::ArpTpa(value),
        Oxm::ArpSha { value, .. } => S::ArpSha(value),
        Oxm::ArpTha { value, .. } => S::ArpTha(value),
        Oxm::Ipv6Src { value, .. } => S::Ipv6Src(value),
        Oxm::Ipv6Dst { value, .. } => S::Ipv6Dst(value),
        Oxm::Ipv6Flabel { value, .. } if value <= 0xf_ffff => S::Ipv6Flabel(value),
        Oxm::MplsLabel(l) if l <= 0xf_ffff => S::MplsLabel(l),
        Oxm::MplsTc(t) if t <= 7 => S::MplsTc(t),
        Oxm::MplsBos(b) if b <= 1 => S::MplsBos(b),
        Oxm::TunnelId { value, .. } => S::TunnelId(value),
        Oxm::Ipv6NdTarget(a) => S::Ipv6NdTarget(a),
        Oxm::Ipv6NdSll(m) => S::Ipv6NdSll(m),
        Oxm::Ipv6NdTll(m) => S::Ipv6NdTll(m),
        Oxm::PbbIsid { value, .. } if value <= ISID_MASK => S::PbbIsid(value),
        Oxm::VlanPcp(_)
        | Oxm::IpDscp(_)
        | Oxm::IpEcn(_)
        | Oxm::Ipv6Flabel { .. }
        | Oxm::MplsLabel(_)
        | Oxm::MplsTc(_)
        | Oxm::MplsBos(_)
        | Oxm::PbbIsid { .. } => {
            return Err(OfError::BadSetArgument);
        }
        _ => return Err(OfError::BadSetType),
    })
}

/// Setting a field needs the field's own prerequisites; setting a
/// protocol field also needs the match to fix that protocol (an
/// `IP_PROTO` set-field would change what the transport fields mean).
fn field_prereq_of_set(field: OxmField, m: &FlowMatch) -> bool {
    match field {
        OxmField::IpProto => false,
        OxmField::Icmpv4Type | OxmField::Icmpv4Code => m.exact_value(slot::IP_PROTO) == Some(1),
        _ => true,
    }
}

/// Compiles 1.3 instructions (1.3.5 §7.2.4) for a flow in table
/// `table_id`.
pub fn compile_instructions(
    ctx: &Context<'_>,
    table_id: u8,
    instructions: &[v13::Instruction],
) -> Result<Program, OfError> {
    use v13::Instruction as I;
    let mut p = Program::default();
    let mut seen = 0u8;
    for i in instructions {
        let bit = match i {
            I::GotoTable(_) => 1,
            I::WriteMetadata { .. } => 2,
            I::WriteActions(_) => 4,
            I::ApplyActions(_) => 8,
            I::ClearActions => 16,
            I::Meter(_) => 32,
            I::Experimenter { .. } => return Err(OfError::BadInstructionExperimenter),
        };
        if seen & bit != 0 {
            return Err(OfError::UnsupportedInstruction);
        }
        seen |= bit;
        match i {
            I::GotoTable(t) => {
                if *t <= table_id || *t >= ctx.n_tables {
                    return Err(OfError::BadGotoTable);
                }
                p.goto = Some(*t);
            }
            I::WriteMetadata { metadata, mask } => p.metadata = Some((*metadata, *mask)),
            I::WriteActions(a) => p.write = compile13(ctx, a)?,
            I::ApplyActions(a) => p.apply = compile13(ctx, a)?,
            I::ClearActions => p.clear = true,
            I::Meter(m) => {
                if !ctx.meters.contains(*m) {
                    return Err(OfError::UnknownMeter);
                }
                p.meter = Some(*m);
            }
            I::Experimenter { .. } => {}
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_set_keeps_one_of_each_and_orders_them() {
        let mut s = ActionSet::default();
        s.write(&[
            Act::Output {
                port: PortNo(1),
                max_len: 0,
            },
            Act::Set(SetField::EthDst(MacAddr([1; 6]))),
            Act::PushVlan(0x8100),
        ]);
        s.write(&[
            Act::Output {
                port: PortNo(2),
                max_len: 0,
            },
            Act::Set(SetField::EthDst(MacAddr([2; 6]))),
        ]);
        let seen = in_order(&s);
        assert_eq!(
            seen,
            vec![
                Act::PushVlan(0x8100),
                Act::Set(SetField::EthDst(MacAddr([2; 6]))),
                Act::Output {
                    port: PortNo(2),
                    max_len: 0
                },
            ]
        );
        // A group hides the output.
        s.write(&[Act::Group(7)]);
        let mut last = None;
        s.for_each(|a| {
            last = Some(a.clone());
            true
        });
        assert_eq!(last, Some(Act::Group(7)));
        s.clear();
        assert!(s.is_empty());
    }

    /// The actions of `s` in the order it runs them.
    fn in_order(s: &ActionSet) -> Vec<Act> {
        let mut seen = Vec::new();
        s.for_each(|a| {
            seen.push(a.clone());
            true
        });
        seen
    }

    #[test]
    fn action_set_orders_mpls_as_the_spec_does() {
        let mut s = ActionSet::default();
        // Written in reverse of 1.3.5 §5.10's order.
        s.write(&[
            Act::Set(SetField::MplsLabel(5)),
            Act::SetMplsTtl(9),
            Act::DecNwTtl,
            Act::DecMplsTtl,
            Act::PushVlan(0x8100),
            Act::PushMpls(0x8847),
            Act::PopMpls(0x0800),
            Act::PopVlan,
        ]);
        let seen = in_order(&s);
        assert_eq!(
            seen,
            vec![
                Act::PopVlan,
                Act::PopMpls(0x0800),
                Act::PushMpls(0x8847),
                Act::PushVlan(0x8100),
                Act::DecMplsTtl,
                Act::DecNwTtl,
                Act::SetMplsTtl(9),
                Act::Set(SetField::MplsLabel(5)),
            ]
        );
        // One of each: a later write replaces.
        s.write(&[Act::PushMpls(0x8848), Act::Set(SetField::MplsLabel(6))]);
        let mut pushes = Vec::new();
        s.for_each(|a| {
            if matches!(a, Act::PushMpls(_) | Act::Set(_)) {
                pushes.push(a.clone());
            }
            true
        });
        assert_eq!(
            pushes,
            vec![Act::PushMpls(0x8848), Act::Set(SetField::MplsLabel(6))]
        );
        s.clear();
        assert!(s.is_empty());
        s.write(&[Act::DecMplsTtl]);
        assert!(!s.is_empty());
    }

    #[test]
    fn pbb_isid_set_field_is_24_bits_of_a_pbb_packet() {
        let mut pbb = FlowMatch::ALL;
        pbb.exact(slot::ETH_TYPE, u64::from(ETH_TYPE_PBB));
        let o = |value| Oxm::PbbIsid { value, mask: None };
        assert_eq!(
            set_field(Some(&pbb), &o(0xff_ffff), false),
            Ok(SetField::PbbIsid(0xff_ffff))
        );
        assert_eq!(
            set_field(Some(&pbb), &o(1 << 24), false),
            Err(OfError::BadSetArgument)
        );
        assert_eq!(
            set_field(Some(&FlowMatch::ALL), &o(1), false),
            Err(OfError::MatchInconsistent)
        );
    }

    #[test]
    fn action_set_pops_pbb_between_vlan_and_mpls_and_pushes_it_between_them() {
        let mut s = ActionSet::default();
        s.write(&[
            Act::Set(SetField::PbbIsid(7)),
            Act::PushVlan(0x88a8),
            Act::PushPbb(0x88e7),
            Act::PushMpls(0x8847),
            Act::PopMpls(0x0800),
            Act::PopPbb,
            Act::PopVlan,
        ]);
        assert_eq!(
            in_order(&s),
            vec![
                Act::PopVlan,
                Act::PopPbb,
                Act::PopMpls(0x0800),
                Act::PushMpls(0x8847),
                Act::PushPbb(0x88e7),
                Act::PushVlan(0x88a8),
                Act::Set(SetField::PbbIsid(7)),
            ]
        );
        for a in [Act::PushPbb(0x88e7), Act::PopPbb] {
            s.clear();
            s.write(&[a]);
            assert!(!s.is_empty());
        }
    }

    #[test]
    fn action_set_copies_ttl_in_first_and_out_after_the_pushes() {
        let mut s = ActionSet::default();
        s.write(&[
            Act::DecMplsTtl,
            Act::CopyTtlOut,
            Act::PushVlan(0x8100),
            Act::PushMpls(0x8847),
            Act::PopVlan,
            Act::CopyTtlIn,
        ]);
        assert_eq!(
            in_order(&s),
            vec![
                Act::CopyTtlIn,
                Act::PopVlan,
                Act::PushMpls(0x8847),
                Act::PushVlan(0x8100),
                Act::CopyTtlOut,
                Act::DecMplsTtl,
            ]
        );
        s.clear();
        s.write(&[Act::CopyTtlOut]);
        assert!(!s.is_empty());
        s.clear();
        s.write(&[Act::CopyTtlIn]);
        assert!(!s.is_empty());
    }
}
