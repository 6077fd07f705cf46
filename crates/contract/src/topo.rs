//! The network the routers form: nodes and undirected links, each with a
//! capacity and a propagation delay. Read from the files
//! `scripts/contract-topologies.py` converted from `topohub` (committed
//! under `topologies/`), or made at random for tests.

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use serde::Deserialize;

/// A router's number: its index in [`Topology::nodes`].
pub type NodeId = usize;

/// A link's number: its index in [`Topology::links`].
pub type LinkId = usize;

/// Simulated time, microseconds.
pub type Micros = u64;

/// How far light goes in fibre in a microsecond, km.
const KM_PER_US: f64 = 0.2;

/// The shortest propagation delay a link has (two routers in one city).
pub const MIN_DELAY_US: Micros = 100;

/// An undirected link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// One end.
    pub a: NodeId,
    /// The other.
    pub b: NodeId,
    /// What it carries each way, bit/s.
    pub capacity_bps: f64,
    /// Its propagation delay.
    pub delay_us: Micros,
}

impl Link {
    /// The end that is not `n`.
    pub fn other(&self, n: NodeId) -> NodeId {
        if self.a == n { self.b } else { self.a }
    }

    /// The directed link leaving `from` ([`Dir`]).
    pub fn dir_from(&self, id: LinkId, from: NodeId) -> Dir {
        Dir(2 * id + usize::from(from != self.a))
    }
}

/// A link in one direction: `2 * link` from its `a` end, `2 * link + 1`
/// from its `b` end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dir(pub usize);

impl Dir {
    /// The undirected link.
    pub fn link(self) -> LinkId {
        self.0 / 2
    }
}

/// A network of routers.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Its name.
    pub name: String,
    /// The routers' names.
    pub nodes: Vec<String>,
    /// The links.
    pub links: Vec<Link>,
}

#[derive(Deserialize)]
struct File {
    name: String,
    nodes: Vec<String>,
    links: Vec<FileLink>,
}

#[derive(Deserialize)]
struct FileLink {
    a: usize,
    b: usize,
    km: f64,
}

/// The topologies committed with the crate, by name.
pub const BUILT_IN: [(&str, &str); 5] = [
    (
        "uninett2010",
        include_str!("../topologies/uninett2010.json"),
    ),
    ("ta2", include_str!("../topologies/ta2.json")),
    ("brain", include_str!("../topologies/brain.json")),
    (
        "north-america",
        include_str!("../topologies/north-america.json"),
    ),
    (
        "south-america",
        include_str!("../topologies/south-america.json"),
    ),
];

impl Topology {
    /// A committed topology by name, every link carrying `capacity_bps`.
    pub fn built_in(name: &str, capacity_bps: f64) -> Result<Topology, String> {
        let (_, text) = BUILT_IN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            format!("no topology {name:?}; one of: {}", names.join(", "))
        })?;
        Topology::from_json(text, capacity_bps)
    }

    /// A topology file's network (`{"name", "nodes", "links": [{"a", "b",
    /// "km"}]}`), every link carrying `capacity_bps`; a link's delay is
    /// its length in fibre, [`MIN_DELAY_US`] at least.
    pub fn from_json(text: &str, capacity_bps: f64) -> Result<Topology, String> {
        let f: File = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let n = f.nodes.len();
        let mut links = Vec::with_capacity(f.links.len());
        for (i, l) in f.links.iter().enumerate() {
            if l.a >= n || l.b >= n || l.a == l.b {
                return Err(format!("link {i}: bad ends {} and {}", l.a, l.b));
            }
            let delay = (l.km.max(0.0) / KM_PER_US).round() as Micros;
            links.push(Link {
                a: l.a,
                b: l.b,
                capacity_bps,
                delay_us: delay.max(MIN_DELAY_US),
            });
        }
        Ok(Topology {
            name: f.name,
            nodes: f.nodes,
            links,
        })
    }

    /// A random connected network of `n` routers: a random tree, then
    /// `extra` more links between routers not yet linked (as many as
    /// fit), delays from 0.1 to 10 ms.
    pub fn random(
        n: usize,
        extra: usize,
        capacity_bps: f64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Topology {
        let mut links = Vec::new();
        let mut linked = std::collections::BTreeSet::new();
        let mut add =
            |a: NodeId, b: NodeId, rng: &mut Xoshiro256PlusPlus, links: &mut Vec<Link>| {
                if a != b && linked.insert((a.min(b), a.max(b))) {
                    links.push(Link {
                        a,
                        b,
                        capacity_bps,
                        delay_us: rng.random_range(MIN_DELAY_US..=10_000),
                    });
                }
            };
        for b in 1..n {
            let a = rng.random_range(0..b);
            add(a, b, rng, &mut links);
        }
        let most = n * (n - 1) / 2;
        for _ in 0..extra * 4 {
            if links.len() >= (n - 1 + extra).min(most) {
                break;
            }
            let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
            add(a, b, rng, &mut links);
        }
        Topology {
            name: format!("random-{n}"),
            nodes: (0..n).map(|i| format!("r{i}")).collect(),
            links,
        }
    }

    /// The router a directed link leaves.
    pub fn tail(&self, d: Dir) -> NodeId {
        let l = &self.links[d.link()];
        if d.0 % 2 == 0 { l.a } else { l.b }
    }

    /// Each router's links: (neighbour, link).
    pub fn adjacency(&self) -> Vec<Vec<(NodeId, LinkId)>> {
        let mut adj = vec![Vec::new(); self.nodes.len()];
        for (id, l) in self.links.iter().enumerate() {
            adj[l.a].push((l.b, id));
            adj[l.b].push((l.a, id));
        }
        adj
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_committed_topologies_read() {
        for (name, _) in BUILT_IN {
            let t = Topology::built_in(name, 1e6).unwrap();
            assert!(t.nodes.len() >= 60, "{name}");
            assert!(t.links.iter().all(|l| l.delay_us >= MIN_DELAY_US));
        }
        let main = Topology::built_in("uninett2010", 1e6).unwrap();
        assert_eq!((main.nodes.len(), main.links.len()), (74, 101));
        assert!(Topology::built_in("rocketfuel", 1e6).is_err());
    }

    #[test]
    fn a_random_network_is_connected_and_has_no_double_links() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let t = Topology::random(30, 20, 1e6, &mut rng);
        assert_eq!(t.links.len(), 29 + 20);
        let adj = t.adjacency();
        let mut seen = [false; 30];
        let mut stack = vec![0];
        while let Some(n) = stack.pop() {
            if !std::mem::replace(&mut seen[n], true) {
                stack.extend(adj[n].iter().map(|&(m, _)| m));
            }
        }
        assert!(seen.iter().all(|s| *s));
    }
}
