//! JSON in: a posted flow or deletion checked into what the runtime
//! sends, every error naming the field (`match.tcp_dst`, `actions[1]`)
//! and what was expected.

use super::{ACTIONS, FlowDeletion, FlowMatch, NewFlow, Scalar, ValidDeletion, ValidFlow};
use baton_openflow::neutral::{
    ActionSpec, FLOW_CHECK_OVERLAP, FLOW_SEND_FLOW_REM, Ipv4Prefix, L4Match, MatchFields,
    MatchSpec, NetMatch, VlanMatch,
};
use baton_openflow::{Cookie, MacAddr, PortNo};
use baton_runtime::control::FlowSelection;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::fmt;
use std::net::Ipv4Addr;

const ETH_TYPE_IPV4: u16 = 0x0800;
const ETH_TYPE_ARP: u16 = 0x0806;
const IP_PROTO_ICMP: u8 = 1;
const IP_PROTO_TCP: u8 = 6;
const IP_PROTO_UDP: u8 = 17;
/// The cookie bits left to the operator below its 16-bit tag.
const COOKIE_BITS: u64 = (1 << 48) - 1;

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative whole number or a string")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                u64::try_from(v)
                    .map(Scalar::Num)
                    .map_err(|_| E::custom(format!("{v} is negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads an Ethernet address, `00:00:00:00:00:01` (`-` separators too).
pub fn parse_mac(s: &str) -> Result<MacAddr, String> {
    let bad = || format!("bad Ethernet address {s:?}: expected 00:00:00:00:00:01");
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 || parts.iter().any(|p| p.len() != 2) {
        return Err(bad());
    }
    let mut mac = [0u8; 6];
    for (b, p) in mac.iter_mut().zip(parts) {
        *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    Ok(MacAddr(mac))
}

/// A whole number of at most `max`.
fn int(field: &str, v: &Scalar, max: u64) -> Result<u64, String> {
    let n = match v {
        Scalar::Num(n) => Some(*n),
        Scalar::Text(s) => match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        },
    };
    match n {
        Some(n) if n <= max => Ok(n),
        Some(n) => Err(format!("{field}: {n} is out of range: 0 to {max}")),
        None => Err(format!("{field}: expected a whole number, not {v:?}")),
    }
}

/// The reserved ports by name, as OpenFlow writes them without `OFPP_`.
const PORT_NAMES: [(&str, PortNo); 8] = [
    ("in_port", PortNo::IN_PORT),
    ("table", PortNo::TABLE),
    ("normal", PortNo::NORMAL),
    ("flood", PortNo::FLOOD),
    ("all", PortNo::ALL),
    ("controller", PortNo::CONTROLLER),
    ("local", PortNo::LOCAL),
    ("any", PortNo::ANY),
];

/// A port's name if it is reserved, its number otherwise.
pub(super) fn port_text(p: PortNo) -> Option<&'static str> {
    PORT_NAMES.iter().find(|(_, n)| *n == p).map(|(s, _)| *s)
}

/// A port: a number up to `OFPP_MAX`, or a reserved name.
fn port(field: &str, v: &Scalar) -> Result<PortNo, String> {
    if let Scalar::Text(s) = v {
        let lower = s.to_ascii_lowercase();
        if let Some((_, p)) = PORT_NAMES.iter().find(|(n, _)| *n == lower) {
            return Ok(*p);
        }
        if s.parse::<u32>().is_err() {
            let names: Vec<&str> = PORT_NAMES.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "{field}: expected a port number or one of {}, not {s:?}",
                names.join(", ")
            ));
        }
    }
    int(field, v, u64::from(PortNo::MAX.0)).map(|n| PortNo(n as u32))
}

/// An IPv4 address or prefix, `10.0.0.1` or `10.0.0.0/24`.
fn prefix(field: &str, s: &str) -> Result<Ipv4Prefix, String> {
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a, l.parse::<u8>().ok().filter(|&l| l <= 32)),
        None => (s, Some(32)),
    };
    match (addr.parse::<Ipv4Addr>(), len) {
        (Ok(addr), Some(len)) => Ok(Ipv4Prefix { addr, len }),
        _ => Err(format!(
            "{field}: expected an IPv4 address or prefix (10.0.0.1, 10.0.0.0/24), not {s:?}"
        )),
    }
}

fn mac(field: &str, s: &str) -> Result<MacAddr, String> {
    parse_mac(s).map_err(|e| format!("{field}: {e}"))
}

/// `implied` (a prerequisite some field needs, named by `why`) agreed
/// with what was given, or with an earlier implication.
fn agree<T: PartialEq + fmt::Display + Copy>(
    have: &mut Option<(T, &'static str)>,
    implied: T,
    why: &'static str,
    render: impl Fn(T) -> String,
) -> Result<(), String> {
    match *have {
        Some((t, by)) if t != implied => Err(format!(
            "match.{why} needs {}, but match.{by} says {}",
            render(implied),
            render(t)
        )),
        Some(_) => Ok(()),
        None => {
            *have = Some((implied, why));
            Ok(())
        }
    }
}

impl FlowMatch {
    /// The match both versions express the same way.
    pub fn check(&self) -> Result<MatchSpec<'static>, String> {
        let u8_of = |f: &str, v: &Option<Scalar>, max: u64| -> Result<Option<u8>, String> {
            v.as_ref()
                .map(|v| int(f, v, max).map(|n| n as u8))
                .transpose()
        };
        let u16_of = |f: &str, v: &Option<Scalar>| -> Result<Option<u16>, String> {
            v.as_ref()
                .map(|v| int(f, v, u64::from(u16::MAX)).map(|n| n as u16))
                .transpose()
        };
        let in_port = self
            .in_port
            .as_ref()
            .map(|v| port("match.in_port", v))
            .transpose()?;
        let eth_src = self
            .eth_src
            .as_deref()
            .map(|s| mac("match.eth_src", s))
            .transpose()?;
        let eth_dst = self
            .eth_dst
            .as_deref()
            .map(|s| mac("match.eth_dst", s))
            .transpose()?;
        let pcp = u8_of("match.vlan_pcp", &self.vlan_pcp, 7)?;
        let vlan = match &self.vlan_vid {
            None if pcp.is_some() => {
                return Err("match.vlan_pcp needs match.vlan_vid (a VLAN id)".to_string());
            }
            None => None,
            Some(Scalar::Text(s)) if s == "none" => {
                if pcp.is_some() {
                    return Err("match.vlan_pcp cannot match untagged frames".to_string());
                }
                Some(VlanMatch::Untagged)
            }
            Some(v) => Some(VlanMatch::Tagged {
                vid: int("match.vlan_vid", v, 0x0fff)? as u16,
                pcp,
            }),
        };

        // Prerequisites (1.3.5 §7.2.3.6): each field that needs an
        // ethertype or an IP protocol implies it, and must agree with the
        // one given.
        let mut eth_type = u16_of("match.eth_type", &self.eth_type)?.map(|t| (t, "eth_type"));
        let mut ip_proto =
            u8_of("match.ip_proto", &self.ip_proto, u64::from(u8::MAX))?.map(|p| (p, "ip_proto"));
        let hex = |t: u16| format!("eth_type 0x{t:04x}");
        let proto = |p: u8| format!("ip_proto {p}");
        let ipv4_fields = [
            ("ip_proto", self.ip_proto.is_some()),
            ("ip_dscp", self.ip_dscp.is_some()),
            ("ipv4_src", self.ipv4_src.is_some()),
            ("ipv4_dst", self.ipv4_dst.is_some()),
        ];
        let transport = [
            ("tcp_src", self.tcp_src.is_some(), IP_PROTO_TCP),
            ("tcp_dst", self.tcp_dst.is_some(), IP_PROTO_TCP),
            ("udp_src", self.udp_src.is_some(), IP_PROTO_UDP),
            ("udp_dst", self.udp_dst.is_some(), IP_PROTO_UDP),
            ("icmpv4_type", self.icmpv4_type.is_some(), IP_PROTO_ICMP),
            ("icmpv4_code", self.icmpv4_code.is_some(), IP_PROTO_ICMP),
        ];
        let arp_fields = [
            ("arp_op", self.arp_op.is_some()),
            ("arp_spa", self.arp_spa.is_some()),
            ("arp_tpa", self.arp_tpa.is_some()),
        ];
        for (name, given) in ipv4_fields {
            if given {
                agree(&mut eth_type, ETH_TYPE_IPV4, name, hex)?;
            }
        }
        for (name, given, p) in transport {
            if given {
                agree(&mut eth_type, ETH_TYPE_IPV4, name, hex)?;
                agree(&mut ip_proto, p, name, proto)?;
            }
        }
        for (name, given) in arp_fields {
            if given {
                agree(&mut eth_type, ETH_TYPE_ARP, name, hex)?;
            }
        }

        let net = match eth_type.map(|(t, _)| t) {
            None => NetMatch::Any,
            Some(ETH_TYPE_IPV4) => {
                let ports = |s: &Option<Scalar>, d: &Option<Scalar>, sn: &str, dn: &str| {
                    Ok::<_, String>((u16_of(sn, s)?, u16_of(dn, d)?))
                };
                let l4 = match ip_proto.map(|(p, _)| p) {
                    None => L4Match::Any,
                    Some(IP_PROTO_TCP) => {
                        let (src, dst) = ports(
                            &self.tcp_src,
                            &self.tcp_dst,
                            "match.tcp_src",
                            "match.tcp_dst",
                        )?;
                        L4Match::Tcp { src, dst }
                    }
                    Some(IP_PROTO_UDP) => {
                        let (src, dst) = ports(
                            &self.udp_src,
                            &self.udp_dst,
                            "match.udp_src",
                            "match.udp_dst",
                        )?;
                        L4Match::Udp { src, dst }
                    }
                    Some(IP_PROTO_ICMP) => L4Match::Icmp {
                        icmp_type: u8_of("match.icmpv4_type", &self.icmpv4_type, 255)?,
                        code: u8_of("match.icmpv4_code", &self.icmpv4_code, 255)?,
                    },
                    Some(p) => L4Match::Proto(p),
                };
                NetMatch::Ipv4 {
                    src: self
                        .ipv4_src
                        .as_deref()
                        .map(|s| prefix("match.ipv4_src", s))
                        .transpose()?,
                    dst: self
                        .ipv4_dst
                        .as_deref()
                        .map(|s| prefix("match.ipv4_dst", s))
                        .transpose()?,
                    dscp: u8_of("match.ip_dscp", &self.ip_dscp, 63)?,
                    l4,
                }
            }
            Some(ETH_TYPE_ARP) => NetMatch::Arp {
                op: u16_of("match.arp_op", &self.arp_op)?,
                spa: self
                    .arp_spa
                    .as_deref()
                    .map(|s| prefix("match.arp_spa", s))
                    .transpose()?,
                tpa: self
                    .arp_tpa
                    .as_deref()
                    .map(|s| prefix("match.arp_tpa", s))
                    .transpose()?,
            },
            Some(t) => NetMatch::EthType(t),
        };
        Ok(MatchSpec::Fields(MatchFields {
            in_port,
            eth_src,
            eth_dst,
            vlan,
            net,
        }))
    }
}

/// One action, `name` or `name:ARG`.
fn action(i: usize, s: &str) -> Result<ActionSpec, String> {
    let field = format!("actions[{i}]");
    let (name, arg) = match s.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (s, None),
    };
    let need =
        |what: &str| arg.ok_or_else(|| format!("{field}: {name} needs an argument: {name}:{what}"));
    let num = |max: u64| -> Result<u64, String> {
        int(&field, &Scalar::Text(need("N")?.to_string()), max)
    };
    let addr = || -> Result<Ipv4Addr, String> {
        let a = need("ADDR")?;
        a.parse()
            .map_err(|_| format!("{field}: expected an IPv4 address, not {a:?}"))
    };
    let a = match name {
        "output" => {
            let p = need("PORT")?;
            let (p, max_len) = match p.split_once(':') {
                Some((p, len)) => (p, int(&field, &Scalar::Text(len.to_string()), 0xffff)?),
                None => (p, 0xffff),
            };
            ActionSpec::Output {
                port: port(&field, &Scalar::Text(p.to_string()))?,
                max_len: max_len as u16,
            }
        }
        "set_eth_src" => ActionSpec::SetEthSrc(mac(&field, need("MAC")?)?),
        "set_eth_dst" => ActionSpec::SetEthDst(mac(&field, need("MAC")?)?),
        "set_vlan_vid" => ActionSpec::SetVlanVid(num(0x0fff)? as u16),
        "set_vlan_pcp" => ActionSpec::SetVlanPcp(num(7)? as u8),
        "strip_vlan" | "pop_vlan" => ActionSpec::StripVlan,
        "set_ipv4_src" => ActionSpec::SetIpv4Src(addr()?),
        "set_ipv4_dst" => ActionSpec::SetIpv4Dst(addr()?),
        "set_ip_dscp" => ActionSpec::SetIpDscp(num(63)? as u8),
        "set_tcp_src" => ActionSpec::SetTcpSrc(num(0xffff)? as u16),
        "set_tcp_dst" => ActionSpec::SetTcpDst(num(0xffff)? as u16),
        "set_udp_src" => ActionSpec::SetUdpSrc(num(0xffff)? as u16),
        "set_udp_dst" => ActionSpec::SetUdpDst(num(0xffff)? as u16),
        "enqueue" => {
            let (p, q) = need("PORT:QUEUE")?
                .split_once(':')
                .ok_or_else(|| format!("{field}: enqueue needs enqueue:PORT:QUEUE"))?;
            ActionSpec::Enqueue {
                port: port(&field, &Scalar::Text(p.to_string()))?,
                queue_id: int(&field, &Scalar::Text(q.to_string()), u64::from(u32::MAX))? as u32,
            }
        }
        _ => {
            return Err(format!(
                "{field}: unknown action {s:?}; one of: {}",
                ACTIONS.join(", ")
            ));
        }
    };
    let takes_arg = !matches!(a, ActionSpec::StripVlan);
    if !takes_arg && arg.is_some() {
        return Err(format!("{field}: {name} takes no argument"));
    }
    Ok(a)
}

impl NewFlow {
    /// Checks every field.
    pub fn check(&self) -> Result<ValidFlow, String> {
        if self.cookie > COOKIE_BITS {
            return Err(format!(
                "cookie: 0x{:x} does not fit the 48 bits below the operator's tag",
                self.cookie
            ));
        }
        let actions = self
            .actions
            .iter()
            .enumerate()
            .map(|(i, s)| action(i, s))
            .collect::<Result<Vec<_>, _>>()?;
        let mut flags = 0;
        if self.send_flow_removed {
            flags |= FLOW_SEND_FLOW_REM;
        }
        if self.check_overlap {
            flags |= FLOW_CHECK_OVERLAP;
        }
        Ok(ValidFlow {
            match_: self.match_.check()?,
            actions,
            priority: self.priority,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            cookie: Cookie(self.cookie),
            flags,
        })
    }
}

impl FlowDeletion {
    /// Checks every field.
    pub fn check(&self) -> Result<ValidDeletion, String> {
        Ok(ValidDeletion {
            match_: self.match_.check()?,
            which: match self.priority {
                Some(priority) => FlowSelection::Exactly { priority },
                None => FlowSelection::Covered,
            },
            out_port: self
                .out_port
                .as_ref()
                .map(|p| port("out_port", p))
                .transpose()?
                .unwrap_or(PortNo::ANY),
        })
    }
}
