//! The emulated network as a compact graph: switches (name, datapath id),
//! links between two switch ports (each once, with an optional delay of
//! their own), and host ports. Everything else indexes into it by
//! [`SwitchId`], [`LinkId`] and [`HostId`], so the emulator's per-frame
//! work is array indexing, not name look-ups, at 10,000 switches.
//!
//! Graphs come from netlab's generators ([`Graph::named`]: the same
//! fat trees, tori, chains and rings the laboratory builds with Open
//! vSwitch), from files ([`crate::input`]), or from code ([`Graph::new`]).
//! Hosts are numbered in the order of their ports (by switch, then port),
//! and each has a fixed address: see [`Graph::host_ip`] and
//! [`Graph::host_mac`].

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::Duration;

/// The highest port number a switch may use here. Emulated switches get
/// every port up to their highest, so this bounds their size.
pub const MAX_PORT: u16 = 4096;

/// The most hosts a graph may have: each gets an address in 10.0.0.0/8.
pub const MAX_HOSTS: usize = (1 << 24) - 2;

/// A switch, by its index in [`Graph::switches`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchId(pub u32);

/// A link, by its index in [`Graph::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u32);

/// A host, by its index in [`Graph::hosts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// A switch port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct End {
    /// The switch.
    pub switch: SwitchId,
    /// Its OpenFlow port number, 1 to [`MAX_PORT`].
    pub port: u16,
}

/// One switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchNode {
    /// Its name in schedules and reports: letters, digits, `_` and `.`.
    pub name: String,
    /// Its datapath id.
    pub dpid: u64,
    /// What the source called it, when that is not a usable name (the
    /// contract crate's files name cities).
    pub label: Option<String>,
}

/// A cable between two switch ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// One end.
    pub a: End,
    /// The other end.
    pub b: End,
    /// Its own delay; `None` takes the configured link delay.
    pub delay: Option<Duration>,
}

/// Switches, the links between them and the ports hosts sit on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    switches: Vec<SwitchNode>,
    links: Vec<Link>,
    hosts: Vec<End>,
    by_name: HashMap<String, SwitchId>,
    /// Highest port number in use, per switch.
    max_port: Vec<u16>,
}

/// Whether `name` can be used in a schedule (`cut a-b`, `kill a`).
pub fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

impl Graph {
    /// A graph from its parts, checked: at least one switch; names usable
    /// ([`usable_name`]) and unique; datapath ids unique; every end on an
    /// existing switch with a port from 1 to [`MAX_PORT`]; no port used
    /// twice (by links and hosts together). Hosts are sorted by port.
    pub fn new(switches: Vec<SwitchNode>, links: Vec<Link>, mut hosts: Vec<End>) -> Result<Graph> {
        let bad = |m: String| Err(Error::Topology(m));
        if switches.is_empty() {
            return bad("no switches".into());
        }
        if switches.len() > u32::MAX as usize / 2 {
            return bad(format!("{} switches are too many", switches.len()));
        }
        if hosts.len() > MAX_HOSTS {
            return bad(format!(
                "{} hosts; at most {MAX_HOSTS} (one address each in 10.0.0.0/8)",
                hosts.len()
            ));
        }
        let mut by_name = HashMap::with_capacity(switches.len());
        let mut dpids = HashMap::with_capacity(switches.len());
        for (i, s) in switches.iter().enumerate() {
            if !usable_name(&s.name) {
                return bad(format!(
                    "switch name `{}`: use letters, digits, `_` and `.`",
                    s.name
                ));
            }
            if by_name.insert(s.name.clone(), SwitchId(i as u32)).is_some() {
                return bad(format!("switch name `{}` is used twice", s.name));
            }
            if let Some(other) = dpids.insert(s.dpid, i) {
                return bad(format!(
                    "switches `{}` and `{}` have the same datapath id {:#x}",
                    switches[other].name, s.name, s.dpid
                ));
            }
        }
        let mut max_port = vec![0u16; switches.len()];
        let mut used = std::collections::HashSet::new();
        let ends = links
            .iter()
            .flat_map(|l| [l.a, l.b])
            .chain(hosts.iter().copied());
        for e in ends {
            let Some(s) = switches.get(e.switch.0 as usize) else {
                return bad(format!(
                    "a link or host names switch #{}, which does not exist",
                    e.switch.0
                ));
            };
            if e.port == 0 || e.port > MAX_PORT {
                return bad(format!(
                    "port {} of `{}`: ports are 1 to {MAX_PORT}",
                    e.port, s.name
                ));
            }
            if !used.insert(e) {
                return bad(format!("port {} of `{}` is used twice", e.port, s.name));
            }
            let m = &mut max_port[e.switch.0 as usize];
            *m = (*m).max(e.port);
        }
        hosts.sort();
        Ok(Graph {
            switches,
            links,
            hosts,
            by_name,
            max_port,
        })
    }

    /// A generated topology by name, as netlab builds it
    /// (`baton_netlab::topo::Topology::named`): `linear:N`, `ring:N`,
    /// `single:N`, `torus:RxC`, `fat-tree:K`, with netlab's names,
    /// datapath ids and port numbers, and its hosts (one per switch, or
    /// `K/2` per edge switch of a fat tree).
    pub fn named(spec: &str) -> Result<Graph> {
        // netlab numbers switches in 16 bits; refuse what would overflow.
        let switches = match spec.split_once(':') {
            Some(("torus", rc)) => rc
                .split_once('x')
                .and_then(|(r, c)| Some(r.parse::<u64>().ok()? * c.parse::<u64>().ok()?)),
            Some(("fat-tree", k)) => k.parse::<u64>().ok().map(|k| 5 * k * k / 4),
            _ => None,
        };
        if switches.is_some_and(|n| n > u64::from(u16::MAX)) {
            return Err(Error::Topology(format!(
                "`{spec}`: generated topologies have at most {} switches",
                u16::MAX
            )));
        }
        let t = baton_netlab::topo::Topology::named(spec)
            .map_err(|e| Error::Topology(e.message().to_string()))?;
        Graph::from_netlab(&t)
    }

    /// A netlab topology's switches, switch links and host attachments.
    pub fn from_netlab(t: &baton_netlab::topo::Topology) -> Result<Graph> {
        let switches: Vec<SwitchNode> = t
            .switches
            .iter()
            .map(|s| SwitchNode {
                name: s.name.clone(),
                dpid: s.dpid.0,
                label: None,
            })
            .collect();
        let index: HashMap<&str, u32> = t
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i as u32))
            .collect();
        let end = |node: &str, port: u16| {
            index.get(node).map(|&i| End {
                switch: SwitchId(i),
                port,
            })
        };
        let mut links = Vec::new();
        let mut hosts = Vec::new();
        for l in &t.links {
            match (end(&l.a.node, l.a.port), end(&l.b.node, l.b.port)) {
                (Some(a), Some(b)) => links.push(Link { a, b, delay: None }),
                (Some(s), None) | (None, Some(s)) => hosts.push(s),
                (None, None) => {}
            }
        }
        Graph::new(switches, links, hosts)
    }

    /// The switches, by [`SwitchId`].
    pub fn switches(&self) -> &[SwitchNode] {
        &self.switches
    }

    /// The links between switches, by [`LinkId`], each once.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The ports hosts sit on, by [`HostId`], sorted.
    pub fn hosts(&self) -> &[End] {
        &self.hosts
    }

    /// The switch called `name`.
    pub fn switch_named(&self, name: &str) -> Option<SwitchId> {
        self.by_name.get(name).copied()
    }

    /// A switch's name.
    ///
    /// # Panics
    /// If `s` is not a switch of this graph.
    pub fn name(&self, s: SwitchId) -> &str {
        &self.switches[s.0 as usize].name
    }

    /// The highest port number switch `s` uses (0 when it has none).
    pub fn max_port(&self, s: SwitchId) -> u16 {
        self.max_port.get(s.0 as usize).copied().unwrap_or(0)
    }

    /// Host `h`'s IPv4 address: `10.0.0.0 + h + 1` (10.0.0.1 for the
    /// first host, as netlab and Mininet number theirs).
    pub fn host_ip(h: HostId) -> Ipv4Addr {
        Ipv4Addr::from(0x0a00_0000 + h.0 + 1)
    }

    /// The host with address `ip`, if `ip` is one of [`Graph::host_ip`]'s
    /// (the caller checks it is below the number of hosts).
    pub fn host_of_ip(ip: Ipv4Addr) -> Option<HostId> {
        let n = u32::from(ip).checked_sub(0x0a00_0001)?;
        (n < MAX_HOSTS as u32).then_some(HostId(n))
    }

    /// Host `h`'s Ethernet address: locally administered,
    /// `02:00:` then `h + 1` in 32 bits (switch ports' addresses start
    /// `02:ba:`, so they never collide).
    pub fn host_mac(h: HostId) -> [u8; 6] {
        let n = (h.0 + 1).to_be_bytes();
        [0x02, 0x00, n[0], n[1], n[2], n[3]]
    }

    /// Forgets the links' own delays, so every link takes the configured
    /// one.
    pub fn clear_link_delays(&mut self) {
        for l in &mut self.links {
            l.delay = None;
        }
    }

    /// The links of each switch, with the port at that switch: an
    /// adjacency list for shortest paths and event resolution.
    pub fn adjacency(&self) -> Vec<Vec<(LinkId, u16, SwitchId)>> {
        let mut adj = vec![Vec::new(); self.switches.len()];
        for (i, l) in self.links.iter().enumerate() {
            let id = LinkId(i as u32);
            adj[l.a.switch.0 as usize].push((id, l.a.port, l.b.switch));
            adj[l.b.switch.0 as usize].push((id, l.b.port, l.a.switch));
        }
        adj
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sw(name: &str, dpid: u64) -> SwitchNode {
        SwitchNode {
            name: name.into(),
            dpid,
            label: None,
        }
    }

    fn end(s: u32, port: u16) -> End {
        End {
            switch: SwitchId(s),
            port,
        }
    }

    #[test]
    fn checks_name_the_mistake() {
        let two = || vec![sw("a", 1), sw("b", 2)];
        let link = |a, b| Link { a, b, delay: None };
        let cases = [
            (Graph::new(vec![], vec![], vec![]), "no switches"),
            (
                Graph::new(vec![sw("a", 1), sw("a", 2)], vec![], vec![]),
                "used twice",
            ),
            (
                Graph::new(vec![sw("a", 1), sw("b", 1)], vec![], vec![]),
                "same datapath id",
            ),
            (
                Graph::new(vec![sw("a-b", 1)], vec![], vec![]),
                "use letters",
            ),
            (
                Graph::new(two(), vec![link(end(0, 1), end(2, 1))], vec![]),
                "does not exist",
            ),
            (
                Graph::new(two(), vec![link(end(0, 0), end(1, 1))], vec![]),
                "ports are 1 to",
            ),
            (
                Graph::new(two(), vec![link(end(0, 1), end(1, 1))], vec![end(0, 1)]),
                "port 1 of `a` is used twice",
            ),
        ];
        for (got, want) in cases {
            let e = got.expect_err(want).to_string();
            assert!(e.contains(want), "`{want}` not in `{e}`");
        }
    }

    #[test]
    fn addresses_are_numbered_and_invertible() {
        assert_eq!(Graph::host_ip(HostId(0)), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(Graph::host_ip(HostId(300)), Ipv4Addr::new(10, 0, 1, 45));
        assert_eq!(Graph::host_mac(HostId(0)), [2, 0, 0, 0, 0, 1]);
        for h in [0, 1, 255, 65_536, MAX_HOSTS as u32 - 1] {
            assert_eq!(
                Graph::host_of_ip(Graph::host_ip(HostId(h))),
                Some(HostId(h))
            );
        }
        assert_eq!(Graph::host_of_ip(Ipv4Addr::new(10, 0, 0, 0)), None);
        assert_eq!(Graph::host_of_ip(Ipv4Addr::new(192, 168, 0, 1)), None);
    }

    #[test]
    fn oversized_generators_are_refused_not_overflowed() {
        for spec in ["torus:300x300", "fat-tree:256"] {
            let e = Graph::named(spec).unwrap_err().to_string();
            assert!(e.contains("at most 65535 switches"), "{e}");
        }
        assert!(Graph::named("mesh:3").is_err());
    }
}
