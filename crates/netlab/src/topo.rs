//! Topologies as data: switches with fixed datapath ids, hosts with fixed
//! addresses, links with fixed port numbers. No I/O: a [`Topology`] is
//! built by [`crate::Lab::build`], and its [`Topology::switch_links`] and
//! [`Topology::host_attachments`] are what a controller should discover.

use crate::error::{Error, Result};
pub use crate::ids::{Dpid, Mac};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// A switch of a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSpec {
    /// Its name: the bridge's name, and the prefix of its ports' names.
    pub name: String,
    /// Its datapath id.
    pub dpid: Dpid,
}

/// A host of a topology: a network namespace with one addressed
/// interface (on the host's first link).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// Its name: the namespace's name, and the prefix of its interfaces'.
    pub name: String,
    /// Its IPv4 address.
    pub ip: Ipv4Addr,
    /// The length of its subnet's prefix (`24` for `/24`).
    pub prefix_len: u8,
    /// Its interface's Ethernet address.
    pub mac: Mac,
}

impl HostSpec {
    /// A host from text: `HostSpec::new("h1", "10.0.0.1/24", "00:00:00:00:00:01")`.
    pub fn new(name: &str, ip_cidr: &str, mac: &str) -> Result<HostSpec> {
        let bad = || {
            Error::new(format!(
                "`{ip_cidr}` is not an IPv4 address with a prefix (10.0.0.1/24)"
            ))
        };
        let (ip, len) = ip_cidr.split_once('/').ok_or_else(bad)?;
        let prefix_len: u8 = len.parse().map_err(|_| bad())?;
        if prefix_len > 32 {
            return Err(bad());
        }
        Ok(HostSpec {
            name: name.to_string(),
            ip: ip.parse().map_err(|_| bad())?,
            prefix_len,
            mac: mac.parse()?,
        })
    }

    /// The `n`th host of a generated topology: `h<n>`, `10.0.0.0 + n` in
    /// a /16, [`Mac::numbered`]`(n)`.
    pub fn numbered(n: u32) -> HostSpec {
        HostSpec {
            name: format!("h{n}"),
            ip: Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, 0, 0)) + n),
            prefix_len: 16,
            mac: Mac::numbered(u64::from(n)),
        }
    }
}

/// One end of a link: a node (switch or host) and its port number. The
/// interface is named `<node>-eth<port>` ([`interface_name`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct End {
    /// The switch's or host's name.
    pub node: String,
    /// The port: the OpenFlow port number on a switch, the interface
    /// number on a host (`h1-eth0` is port 0).
    pub port: u16,
}

impl End {
    /// `node`'s port `port`.
    pub fn new(node: &str, port: u16) -> End {
        End {
            node: node.to_string(),
            port,
        }
    }

    /// The name of the interface at this end.
    pub fn interface(&self) -> String {
        interface_name(&self.node, self.port)
    }
}

/// A link: a veth pair between two ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkSpec {
    /// One end.
    pub a: End,
    /// The other end.
    pub b: End,
}

/// The name of `node`'s interface for `port`: `s1-eth2`, `h1-eth0`.
pub fn interface_name(node: &str, port: u16) -> String {
    format!("{node}-eth{port}")
}

/// The longest node name: with `-eth` and a port of up to 4 digits it
/// fits Linux's 15-byte interface names.
pub const MAX_NAME_LEN: usize = 7;

/// The highest port number a link may use (4 digits in interface names).
pub const MAX_PORT: u16 = 9999;

/// Checks a node name: a lowercase letter, then lowercase letters and
/// digits, at most [`MAX_NAME_LEN`] bytes, and not `lo`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = name.len() <= MAX_NAME_LEN
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name != "lo";
    if ok {
        Ok(())
    } else {
        Err(Error::new(format!(
            "`{name}` is not a usable node name: a lowercase letter, then lowercase letters or \
             digits, at most {MAX_NAME_LEN} in all (so `<name>-eth<port>` fits Linux's 15-byte \
             interface names), and not `lo`"
        )))
    }
}

/// A link between two switch ports, by datapath id and port number, the
/// smaller end first: how a controller's topology discovery reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchLink {
    /// The end with the smaller (datapath id, port).
    pub a: (Dpid, u16),
    /// The other end.
    pub b: (Dpid, u16),
}

/// Where a host is attached: what a controller's host tracking reports.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Attachment {
    /// The host's name.
    pub host: String,
    /// Its Ethernet address.
    pub mac: Mac,
    /// Its IPv4 address.
    pub ip: Ipv4Addr,
    /// The switch it is attached to.
    pub dpid: Dpid,
    /// The switch's port.
    pub port: u16,
}

/// Switches, hosts and the links between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    /// The switches.
    pub switches: Vec<SwitchSpec>,
    /// The hosts.
    pub hosts: Vec<HostSpec>,
    /// The links.
    pub links: Vec<LinkSpec>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Adds switch `name` with datapath id `dpid`.
    pub fn switch(&mut self, name: &str, dpid: u64) -> &mut Topology {
        self.switches.push(SwitchSpec {
            name: name.to_string(),
            dpid: Dpid(dpid),
        });
        self
    }

    /// Adds a host.
    pub fn host(&mut self, host: HostSpec) -> &mut Topology {
        self.hosts.push(host);
        self
    }

    /// Adds a link from `a`'s port `a_port` to `b`'s port `b_port`.
    pub fn link(&mut self, a: &str, a_port: u16, b: &str, b_port: u16) -> &mut Topology {
        self.links.push(LinkSpec {
            a: End::new(a, a_port),
            b: End::new(b, b_port),
        });
        self
    }

    /// One switch `s1` (datapath id 1) with `hosts` hosts `h1`... on ports
    /// 1, 2, ...
    pub fn single(hosts: u16) -> Topology {
        let mut t = Topology::new();
        t.switch("s1", 1);
        for i in 1..=hosts {
            t.host(HostSpec::numbered(u32::from(i)));
            t.link(&format!("h{i}"), 0, "s1", i);
        }
        t
    }

    /// A chain of `n` switches `s1`..`sn` (datapath ids 1..n), each with
    /// one host `hi`. On every switch port 1 is its host, port 2 the link
    /// to the previous switch and port 3 to the next.
    pub fn linear(n: u16) -> Topology {
        let mut t = Topology::new();
        for i in 1..=n {
            t.switch(&format!("s{i}"), u64::from(i));
            t.host(HostSpec::numbered(u32::from(i)));
            t.link(&format!("h{i}"), 0, &format!("s{i}"), 1);
            if i > 1 {
                t.link(&format!("s{}", i - 1), 3, &format!("s{i}"), 2);
            }
        }
        t
    }

    /// [`Topology::linear`] with the last switch's port 3 linked to the
    /// first's port 2: a ring of `n` (at least 3) switches.
    pub fn ring(n: u16) -> Topology {
        assert!(n >= 3, "a ring needs at least 3 switches, not {n}");
        let mut t = Topology::linear(n);
        t.link(&format!("s{n}"), 3, "s1", 2);
        t
    }

    /// A `rows` x `cols` torus (both at least 3), as Mininet's `torus`
    /// builds it: switch `s{r}x{c}` (datapath id `r * cols + c + 1`, rows
    /// and columns from 0) with one host `h{id}` on port 1, linked to its
    /// right-hand neighbour on port 3 (arriving on that neighbour's port
    /// 2) and to the one below on port 5 (arriving on its port 4), both
    /// wrapping round: every switch has four links, and every row and
    /// column is a loop.
    pub fn torus(rows: u16, cols: u16) -> Topology {
        assert!(
            rows >= 3 && cols >= 3,
            "a torus needs at least 3 x 3 switches, not {rows} x {cols}"
        );
        let name = |r: u16, c: u16| format!("s{r}x{c}");
        let mut t = Topology::new();
        for r in 0..rows {
            for c in 0..cols {
                let id = r * cols + c + 1;
                t.switch(&name(r, c), u64::from(id));
                t.host(HostSpec::numbered(u32::from(id)));
                t.link(&format!("h{id}"), 0, &name(r, c), 1);
            }
        }
        for r in 0..rows {
            for c in 0..cols {
                t.link(&name(r, c), 3, &name(r, (c + 1) % cols), 2);
                t.link(&name(r, c), 5, &name((r + 1) % rows, c), 4);
            }
        }
        t
    }

    /// A k-ary fat tree (Al-Fares et al., SIGCOMM 2008), `k` even:
    /// `(k/2)²` core switches `c1`.., `k` pods of `k/2` aggregation
    /// (`a1`..) and `k/2` edge (`e1`..) switches, `k/2` hosts per edge
    /// switch: for k = 4, 20 switches and 16 hosts. Datapath ids are
    /// numbered cores, then aggregation, then edge switches, from 1.
    ///
    /// Ports: an edge switch has its hosts on 1..=k/2 and the pod's
    /// aggregation switches on k/2+1..=k; an aggregation switch has the
    /// pod's edge switches on 1..=k/2 and its cores on k/2+1..=k
    /// (aggregation switch j of every pod reaches cores j·k/2 + m); a core
    /// switch reaches pod p on port p+1.
    pub fn fat_tree(k: u16) -> Topology {
        assert!(
            k >= 2 && k % 2 == 0,
            "a fat tree's k must be even and at least 2, not {k}"
        );
        let half = k / 2;
        let cores = half * half;
        let per_layer = k * half;
        let mut t = Topology::new();
        for c in 0..cores {
            t.switch(&format!("c{}", c + 1), u64::from(c) + 1);
        }
        for i in 0..per_layer {
            t.switch(&format!("a{}", i + 1), u64::from(cores + i) + 1);
        }
        for i in 0..per_layer {
            t.switch(&format!("e{}", i + 1), u64::from(cores + per_layer + i) + 1);
        }
        let mut host = 0u32;
        for pod in 0..k {
            for j in 0..half {
                let agg = format!("a{}", pod * half + j + 1);
                for m in 0..half {
                    let core = format!("c{}", j * half + m + 1);
                    t.link(&agg, half + 1 + m, &core, pod + 1);
                }
                for e in 0..half {
                    let edge = format!("e{}", pod * half + e + 1);
                    t.link(&edge, half + 1 + j, &agg, e + 1);
                }
            }
            for e in 0..half {
                let edge = format!("e{}", pod * half + e + 1);
                for p in 0..half {
                    host += 1;
                    t.host(HostSpec::numbered(host));
                    t.link(&format!("h{host}"), 0, &edge, p + 1);
                }
            }
        }
        t
    }

    /// A generated topology by name: `single:N`, `linear:N`, `ring:N`,
    /// `torus:RxC` or `fat-tree:K`.
    pub fn named(spec: &str) -> Result<Topology> {
        let bad = || {
            Error::new(format!(
                "`{spec}` is none of single:N, linear:N, ring:N (N >= 3), torus:RxC (R, C >= 3), fat-tree:K (K even)"
            ))
        };
        let (kind, n) = spec.split_once(':').ok_or_else(bad)?;
        if kind == "torus" {
            let (r, c) = n.split_once('x').ok_or_else(bad)?;
            let (r, c): (u16, u16) = (r.parse().map_err(|_| bad())?, c.parse().map_err(|_| bad())?);
            return if r >= 3 && c >= 3 {
                Ok(Topology::torus(r, c))
            } else {
                Err(bad())
            };
        }
        let n: u16 = n.parse().map_err(|_| bad())?;
        match kind {
            "single" if n >= 1 => Ok(Topology::single(n)),
            "linear" if n >= 1 => Ok(Topology::linear(n)),
            "ring" if n >= 3 => Ok(Topology::ring(n)),
            "fat-tree" if n >= 2 && n % 2 == 0 => Ok(Topology::fat_tree(n)),
            _ => Err(bad()),
        }
    }

    /// Checks that names are valid and unique, every link's ends exist,
    /// and no port is used twice.
    pub fn validate(&self) -> Result<()> {
        let mut names = BTreeSet::new();
        let all = self
            .switches
            .iter()
            .map(|s| &s.name)
            .chain(self.hosts.iter().map(|h| &h.name));
        for name in all {
            check_name(name)?;
            if !names.insert(name.as_str()) {
                return Err(Error::new(format!("node name `{name}` is used twice")));
            }
        }
        let mut dpids = BTreeSet::new();
        for s in &self.switches {
            if !dpids.insert(s.dpid) {
                return Err(Error::new(format!("datapath id {} is used twice", s.dpid)));
            }
        }
        let mut ports = BTreeSet::new();
        for l in &self.links {
            for end in [&l.a, &l.b] {
                if !names.contains(end.node.as_str()) {
                    return Err(Error::new(format!("link end `{}` is no node", end.node)));
                }
                if end.port > MAX_PORT || (end.port == 0 && self.is_switch(&end.node)) {
                    return Err(Error::new(format!(
                        "port {} of `{}`: switch ports are 1..={MAX_PORT}",
                        end.port, end.node
                    )));
                }
                if !ports.insert(end.clone()) {
                    return Err(Error::new(format!(
                        "port {} of `{}` is linked twice",
                        end.port, end.node
                    )));
                }
            }
        }
        Ok(())
    }

    /// Whether `name` is one of the switches.
    pub fn is_switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s.name == name)
    }

    /// The links between two switches, by datapath id and port, sorted.
    pub fn switch_links(&self) -> Vec<SwitchLink> {
        let dpid: BTreeMap<&str, Dpid> = self
            .switches
            .iter()
            .map(|s| (s.name.as_str(), s.dpid))
            .collect();
        let mut out: Vec<SwitchLink> = self
            .links
            .iter()
            .filter_map(|l| {
                let a = (*dpid.get(l.a.node.as_str())?, l.a.port);
                let b = (*dpid.get(l.b.node.as_str())?, l.b.port);
                Some(SwitchLink {
                    a: a.min(b),
                    b: a.max(b),
                })
            })
            .collect();
        out.sort();
        out
    }

    /// Where each host's addressed interface (its first link) is attached,
    /// sorted by host name; hosts linked to no switch are left out.
    pub fn host_attachments(&self) -> Vec<Attachment> {
        let mut out = Vec::new();
        for h in &self.hosts {
            let first = self.links.iter().find_map(|l| {
                if l.a.node == h.name {
                    Some(&l.b)
                } else if l.b.node == h.name {
                    Some(&l.a)
                } else {
                    None
                }
            });
            let Some(sw) = first
                .and_then(|e| Some((self.switches.iter().find(|s| s.name == e.node)?, e.port)))
            else {
                continue;
            };
            out.push(Attachment {
                host: h.name.clone(),
                mac: h.mac,
                ip: h.ip,
                dpid: sw.0.dpid,
                port: sw.1,
            });
        }
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degree(t: &Topology, node: &str) -> usize {
        t.links
            .iter()
            .filter(|l| l.a.node == node || l.b.node == node)
            .count()
    }

    #[test]
    fn hosts_are_numbered_like_mininet() {
        let h = HostSpec::numbered(300);
        assert_eq!(
            (h.name.as_str(), h.ip, h.prefix_len),
            ("h300", Ipv4Addr::new(10, 0, 1, 44), 16)
        );
        let h = HostSpec::new("h1", "10.0.0.1/24", "00:00:00:00:00:01").unwrap();
        assert_eq!(
            (h.ip, h.prefix_len, h.mac),
            (Ipv4Addr::new(10, 0, 0, 1), 24, Mac::numbered(1))
        );
        assert!(HostSpec::new("h1", "10.0.0.1", "00:00:00:00:00:01").is_err());
        assert!(HostSpec::new("h1", "10.0.0.1/33", "00:00:00:00:00:01").is_err());
    }

    #[test]
    fn names_fit_interface_names() {
        for good in ["s1", "h16", "core12", "abcdefg"] {
            check_name(good).unwrap();
            assert!(interface_name(good, MAX_PORT).len() <= 15);
        }
        for bad in ["", "S1", "1s", "s-1", "abcdefgh", "lo"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn linear_chain_ports_are_pinned() {
        let t = Topology::linear(3);
        t.validate().unwrap();
        assert_eq!((t.switches.len(), t.hosts.len(), t.links.len()), (3, 3, 5));
        let d = |n| (Dpid(n), 0u16);
        let links: Vec<_> = t
            .switch_links()
            .iter()
            .map(|l| ((l.a.0, l.a.1), (l.b.0, l.b.1)))
            .collect();
        assert_eq!(
            links,
            vec![((d(1).0, 3), (d(2).0, 2)), ((d(2).0, 3), (d(3).0, 2))]
        );
        let at = t.host_attachments();
        assert_eq!(at.len(), 3);
        assert!(
            at.iter()
                .all(|a| a.port == 1 && a.host == format!("h{}", a.dpid.0))
        );
    }

    #[test]
    fn ring_closes_the_chain() {
        let t = Topology::ring(4);
        t.validate().unwrap();
        assert_eq!(t.switch_links().len(), 4);
        assert!(t.switch_links().contains(&SwitchLink {
            a: (Dpid(1), 2),
            b: (Dpid(4), 3)
        }));
        for s in &t.switches {
            assert_eq!(
                degree(&t, &s.name),
                3,
                "{}: host and two neighbours",
                s.name
            );
        }
    }

    #[test]
    fn fat_tree_k4_has_the_papers_shape() {
        let t = Topology::fat_tree(4);
        t.validate().unwrap();
        assert_eq!((t.switches.len(), t.hosts.len()), (20, 16));
        // k³/4 host links, k³/4 edge-aggregation and k³/4 aggregation-core.
        assert_eq!((t.links.len(), t.switch_links().len()), (48, 32));
        for s in &t.switches {
            assert_eq!(
                degree(&t, &s.name),
                4,
                "{}: every switch has k ports",
                s.name
            );
        }
        // Every core reaches every pod exactly once.
        for c in 1..=4 {
            let pods: BTreeSet<u16> = t
                .links
                .iter()
                .filter(|l| l.b.node == format!("c{c}"))
                .map(|l| l.b.port)
                .collect();
            assert_eq!(pods, (1..=4).collect());
        }
        let at = t.host_attachments();
        assert_eq!(at.len(), 16);
        assert!(
            at.iter()
                .all(|a| (13..=20).contains(&a.dpid.0) && (1..=2).contains(&a.port))
        );
        let k8 = Topology::fat_tree(8);
        k8.validate().unwrap();
        assert_eq!(
            (k8.switches.len(), k8.hosts.len(), k8.links.len()),
            (80, 128, 384)
        );
    }

    #[test]
    fn torus_3x3_has_four_links_per_switch_and_a_host_each() {
        let t = Topology::torus(3, 3);
        t.validate().unwrap();
        assert_eq!((t.switches.len(), t.hosts.len()), (9, 9));
        let links = t.switch_links();
        assert_eq!(links.len(), 18);
        for s in 1..=9u64 {
            let ends = links
                .iter()
                .filter(|l| l.a.0.0 == s || l.b.0.0 == s)
                .count();
            assert_eq!(ends, 4, "switch {s}");
        }
        assert_eq!(Topology::named("torus:3x3").unwrap(), t);
        assert!(Topology::named("torus:2x3").is_err());
    }

    #[test]
    fn topologies_by_name() {
        assert_eq!(Topology::named("linear:3").unwrap(), Topology::linear(3));
        assert_eq!(Topology::named("fat-tree:4").unwrap().switches.len(), 20);
        assert_eq!(Topology::named("single:2").unwrap(), Topology::single(2));
        for bad in ["ring:2", "fat-tree:3", "mesh:4", "linear", "linear:x"] {
            assert!(Topology::named(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn validation_names_the_mistake() {
        Topology::single(2).validate().unwrap();
        let mut twice = Topology::single(1);
        twice.host(HostSpec::numbered(2)).link("h2", 0, "s1", 1);
        let mut dangling = Topology::single(1);
        dangling.link("s1", 2, "s9", 1);
        let mut same_dpid = Topology::single(1);
        same_dpid.switch("s2", 1);
        let mut port_zero = Topology::single(1);
        port_zero.link("s1", 0, "h1", 1);
        for (t, want) in [
            (twice, "port 1 of `s1` is linked twice"),
            (dangling, "`s9` is no node"),
            (same_dpid, "datapath id 0000000000000001 is used twice"),
            (port_zero, "switch ports are 1..="),
        ] {
            let got = t.validate().unwrap_err().to_string();
            assert!(got.contains(want), "`{want}` not in `{got}`");
        }
    }
}
