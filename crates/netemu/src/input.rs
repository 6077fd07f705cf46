//! Topologies from files: a simple edge list, and the JSON files of the
//! contract crate (`crates/contract/topologies/*.json`, converted from
//! topohub). [`load`] takes what `--topology` takes: a generator's name
//! or a file.
//!
//! ## The edge list
//! One item per line; `#` starts a comment.
//! - `a b` links a port of switch `a` to a port of switch `b`;
//! - `a:3 b:1` names the ports; an end without a port gets its switch's
//!   lowest port number that no line names and no earlier line took;
//! - a third field is the link's own delay (`a b 2ms`; units `s`, `ms`,
//!   `us`, `ns`);
//! - a line with one name declares a switch (one without links, or to fix
//!   the order).
//!
//! Switches are numbered in the order they first appear; switch `i`
//! (from 0) has datapath id `i + 1`. Names are letters, digits, `_` and
//! `.`. With [`FileHosts::OnePerSwitch`] every switch gets one host, on
//! the port after its highest link port (port 1 for a switch with no
//! link).
//!
//! ## The contract crate's JSON
//! `{"nodes": [names], "links": [{"a": i, "b": j, "km": d}, ...]}`, ends
//! by index into `nodes` (other keys are ignored). Node `i` becomes switch
//! `s{i+1}` (the file's names are places, with spaces and repeats; they
//! are kept as labels) with datapath id `i + 1`; ports are numbered per
//! switch in the order of the links; a link with `km` gets its delay in
//! fibre, 5 µs per km ([`Graph::clear_link_delays`] drops them). Hosts
//! as in the edge list.

use crate::error::{Error, Result};
use crate::graph::{End, Graph, Link, MAX_PORT, SwitchId, SwitchNode, usable_name};
use crate::schedule::parse_duration;
use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::Duration;

/// Where the hosts of a file's topology go (generated topologies bring
/// their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileHosts {
    /// One host per switch, on the port after its highest link port.
    #[default]
    OnePerSwitch,
    /// No hosts.
    None,
}

/// Fibre delay per kilometre (light at about 200,000 km/s in glass).
pub const DELAY_PER_KM: Duration = Duration::from_micros(5);

/// A topology by name or file: a file that exists is read (`*.json` as
/// the contract crate's, anything else as an edge list); otherwise `spec`
/// is a generator's name ([`Graph::named`]).
pub fn load(spec: &str, hosts: FileHosts) -> Result<Graph> {
    let path = Path::new(spec);
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Topology(format!("cannot read `{spec}`: {e}")))?;
        let in_file = |e: Error| match e {
            Error::Topology(m) => Error::Topology(format!("{spec}: {m}")),
            other => other,
        };
        return if path.extension().is_some_and(|x| x == "json") {
            contract_json(&text, hosts).map_err(in_file)
        } else {
            edge_list(&text, hosts).map_err(in_file)
        };
    }
    Graph::named(spec).map_err(|e| match e {
        Error::Topology(m) => Error::Topology(format!("`{spec}` is no file, and {m}")),
        other => other,
    })
}

/// One end as written: a switch and maybe a port.
struct Written {
    switch: u32,
    port: Option<u16>,
}

/// Switch names in order of appearance.
#[derive(Default)]
struct Names {
    order: Vec<String>,
    index: HashMap<String, u32>,
}

impl Names {
    fn get(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.order.len() as u32;
        self.order.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }
}

/// Reads an edge list (see the module doc).
pub fn edge_list(text: &str, hosts: FileHosts) -> Result<Graph> {
    let mut names = Names::default();
    let mut lines: Vec<(usize, Written, Written, Option<Duration>)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        let fields: Vec<&str> = line.split_whitespace().collect();
        let bad = |m: String| Error::Topology(format!("line {n} (`{}`): {m}", raw.trim()));
        let mut end = |f: &str| -> Result<Written> {
            let (name, port) = match f.split_once(':') {
                Some((name, p)) => {
                    let port = p
                        .parse::<u16>()
                        .ok()
                        .filter(|p| (1..=MAX_PORT).contains(p))
                        .ok_or_else(|| bad(format!("port `{p}`: ports are 1 to {MAX_PORT}")))?;
                    (name, Some(port))
                }
                None => (f, None),
            };
            if !usable_name(name) {
                return Err(bad(format!(
                    "switch name `{name}`: use letters, digits, `_` and `.`"
                )));
            }
            Ok(Written {
                switch: names.get(name),
                port,
            })
        };
        match fields[..] {
            [] => {}
            [one] => {
                let w = end(one)?;
                if w.port.is_some() {
                    return Err(bad("a switch on its own takes no port".into()));
                }
            }
            [a, b] | [a, b, _] => {
                let (a, b) = (end(a)?, end(b)?);
                if a.switch == b.switch {
                    return Err(bad("a link joins two different switches".into()));
                }
                let delay = match fields.get(2) {
                    Some(d) => Some(parse_duration(d).map_err(bad)?),
                    None => None,
                };
                lines.push((n, a, b, delay));
            }
            _ => {
                return Err(bad(
                    "expected `a b`, `a:port b:port`, either with a delay, or one switch name"
                        .into(),
                ));
            }
        }
    }
    let mut ports = Ports::new(names.order.len());
    for (_, a, b, _) in &lines {
        for w in [a, b] {
            if let Some(p) = w.port {
                ports.reserve(w.switch, p);
            }
        }
    }
    let mut links = Vec::with_capacity(lines.len());
    for (n, a, b, delay) in &lines {
        let mut place = |w: &Written| -> Result<End> {
            let port = match w.port {
                Some(p) => p,
                None => ports.next(w.switch).ok_or_else(|| {
                    Error::Topology(format!(
                        "line {n}: switch `{}` has no port left (at most {MAX_PORT})",
                        names.order[w.switch as usize]
                    ))
                })?,
            };
            Ok(End {
                switch: SwitchId(w.switch),
                port,
            })
        };
        let (a, b) = (place(a)?, place(b)?);
        links.push(Link {
            a,
            b,
            delay: *delay,
        });
    }
    let switches = names
        .order
        .into_iter()
        .enumerate()
        .map(|(i, name)| SwitchNode {
            name,
            dpid: i as u64 + 1,
            label: None,
        })
        .collect();
    finish(switches, links, hosts)
}

/// Port numbers per switch: those lines name, and those handed out.
struct Ports {
    taken: Vec<BTreeSet<u16>>,
    next: Vec<u16>,
}

impl Ports {
    fn new(switches: usize) -> Ports {
        Ports {
            taken: vec![BTreeSet::new(); switches],
            next: vec![1; switches],
        }
    }

    fn reserve(&mut self, s: u32, port: u16) {
        self.taken[s as usize].insert(port);
    }

    /// The lowest port of `s` not taken, now taken.
    fn next(&mut self, s: u32) -> Option<u16> {
        let s = s as usize;
        let mut p = self.next[s];
        while self.taken[s].contains(&p) {
            p = p.checked_add(1)?;
        }
        if p > MAX_PORT {
            return None;
        }
        self.taken[s].insert(p);
        self.next[s] = p + 1;
        Some(p)
    }
}

/// Adds the hosts `hosts` asks for and checks the graph.
fn finish(switches: Vec<SwitchNode>, links: Vec<Link>, hosts: FileHosts) -> Result<Graph> {
    let mut host_ports = Vec::new();
    if hosts == FileHosts::OnePerSwitch {
        let mut top = vec![0u16; switches.len()];
        for l in &links {
            for e in [l.a, l.b] {
                let t = &mut top[e.switch.0 as usize];
                *t = (*t).max(e.port);
            }
        }
        for (i, t) in top.into_iter().enumerate() {
            if t >= MAX_PORT {
                return Err(Error::Topology(format!(
                    "switch `{}` has no port left for its host",
                    switches[i].name
                )));
            }
            host_ports.push(End {
                switch: SwitchId(i as u32),
                port: t + 1,
            });
        }
    }
    Graph::new(switches, links, host_ports)
}

#[derive(Deserialize)]
struct File {
    nodes: Vec<String>,
    links: Vec<FileLink>,
}

#[derive(Deserialize)]
struct FileLink {
    a: usize,
    b: usize,
    km: Option<f64>,
}

/// Reads one of the contract crate's topology files (see the module doc).
pub fn contract_json(text: &str, hosts: FileHosts) -> Result<Graph> {
    let f: File = serde_json::from_str(text).map_err(|e| {
        Error::Topology(format!(
            "not a topology file ({{\"nodes\": [...], \"links\": [{{\"a\", \"b\"}}]}}): {e}"
        ))
    })?;
    let n = f.nodes.len();
    let mut ports = Ports::new(n);
    let mut links = Vec::with_capacity(f.links.len());
    for (i, l) in f.links.iter().enumerate() {
        if l.a >= n || l.b >= n || l.a == l.b {
            return Err(Error::Topology(format!(
                "link {i}: ends {} and {} must be two different nodes of {n}",
                l.a, l.b
            )));
        }
        let delay = match l.km {
            Some(km) if km.is_finite() && (0.0..1e9).contains(&km) => {
                let per_km = DELAY_PER_KM.as_nanos() as f64;
                Some(Duration::from_nanos((km * per_km).round() as u64))
            }
            Some(km) => {
                return Err(Error::Topology(format!("link {i}: `km` {km} is no length")));
            }
            None => None,
        };
        let mut end = |s: usize| {
            ports
                .next(s as u32)
                .map(|port| End {
                    switch: SwitchId(s as u32),
                    port,
                })
                .ok_or_else(|| Error::Topology(format!("node {s} has more than {MAX_PORT} links")))
        };
        let (a, b) = (end(l.a)?, end(l.b)?);
        links.push(Link { a, b, delay });
    }
    let switches = f
        .nodes
        .into_iter()
        .enumerate()
        .map(|(i, label)| SwitchNode {
            name: format!("s{}", i + 1),
            dpid: i as u64 + 1,
            label: Some(label),
        })
        .collect();
    finish(switches, links, hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_list_assigns_ports_in_order_around_named_ones() {
        let g = edge_list(
            "# a triangle\n a b\n b:1 c   # b's port 1 is taken here\n c a 2ms\n lonely\n",
            FileHosts::OnePerSwitch,
        )
        .unwrap();
        let names: Vec<&str> = g.switches().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "lonely"]);
        let ports: Vec<((u32, u16), (u32, u16))> = g
            .links()
            .iter()
            .map(|l| ((l.a.switch.0, l.a.port), (l.b.switch.0, l.b.port)))
            .collect();
        // b's first free port is 2, since line 3 names port 1.
        assert_eq!(
            ports,
            [((0, 1), (1, 2)), ((1, 1), (2, 1)), ((2, 2), (0, 2))]
        );
        assert_eq!(g.links()[2].delay, Some(Duration::from_millis(2)));
        let hosts: Vec<(u32, u16)> = g.hosts().iter().map(|e| (e.switch.0, e.port)).collect();
        assert_eq!(hosts, [(0, 3), (1, 3), (2, 3), (3, 1)]);
        let none = edge_list("a b\n", FileHosts::None).unwrap();
        assert!(none.hosts().is_empty());
    }

    #[test]
    fn edge_list_errors_name_the_line() {
        for (text, want) in [
            ("a b\na a\n", "line 2"),
            ("a b c d\n", "expected `a b`"),
            ("a:0 b\n", "ports are 1 to"),
            ("a:x b\n", "port `x`"),
            ("a-1 b\n", "switch name `a-1`"),
            ("a b 3 parsecs\n", "line 1"),
            ("a b 3parsecs\n", "unit"),
            ("a:1 b\na:1 c\n", "used twice"),
            ("a:2\n", "takes no port"),
            ("", "no switches"),
        ] {
            let e = edge_list(text, FileHosts::None).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: `{want}` not in `{e}`");
        }
    }

    #[test]
    fn contract_json_numbers_nodes_and_keeps_labels() {
        let g = contract_json(
            r#"{"name": "t", "nodes": ["Oslo", "Oslo", "Bergen"],
                "links": [{"a": 0, "b": 1, "km": 0.0}, {"a": 1, "b": 2, "km": 300}]}"#,
            FileHosts::OnePerSwitch,
        )
        .unwrap();
        assert_eq!(g.switches()[1].name, "s2");
        assert_eq!(g.switches()[1].label.as_deref(), Some("Oslo"));
        assert_eq!(g.links()[1].delay, Some(Duration::from_micros(1500)));
        assert_eq!((g.links()[1].a.port, g.links()[1].b.port), (2, 1));
        assert_eq!(g.hosts().len(), 3);
        for (text, want) in [
            (
                r#"{"nodes": ["a"], "links": [{"a": 0, "b": 0}]}"#,
                "two different",
            ),
            (
                r#"{"nodes": ["a"], "links": [{"a": 0, "b": 5}]}"#,
                "two different",
            ),
            (r#"{"nodes": ["a"]}"#, "not a topology file"),
            ("[1, 2]", "not a topology file"),
        ] {
            let e = contract_json(text, FileHosts::None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "`{want}` not in `{e}`");
        }
    }

    #[test]
    fn load_says_what_it_tried() {
        let e = load("no-such-thing:7", FileHosts::None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is no file"), "{e}");
        assert_eq!(
            load("linear:3", FileHosts::None).unwrap().switches().len(),
            3
        );
    }
}
