//! What a run emulates and how: the topology, the switches' version and
//! sizes, link delays, the traffic between hosts, the events, and how
//! the switches connect. [`Config::new`] gives the defaults, each field
//! says why it has the value it has.

use crate::error::{Error, Result};
use crate::graph::{Graph, HostId};
use crate::schedule::Schedule;
use baton_openflow::Version;
use std::net::SocketAddr;
use std::time::Duration;

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the controller listens.
    pub controller: SocketAddr,
    /// The network.
    pub topology: Graph,
    /// The OpenFlow version every switch speaks.
    pub version: Version,
    /// How each switch is built.
    pub switch: SwitchOptions,
    /// The delay of links that have none of their own (host links have
    /// none).
    pub link_delay: Duration,
    /// Which hosts talk, and how.
    pub traffic: Traffic,
    /// Link and switch events, timed from the start of traffic.
    pub events: Schedule,
    /// Time between the last switch finishing its handshake and the start
    /// of traffic, for the controller to discover the links: baton's
    /// `topology` probes a port when it comes up and lets it settle for
    /// 500 ms before it learns hosts there.
    pub warmup: Duration,
    /// How long traffic runs.
    pub duration: Duration,
    /// Time after traffic stops for the last packets to arrive before the
    /// run ends and counts what is missing as lost.
    pub drain: Duration,
    /// How the switches connect.
    pub connect: ConnectPlan,
    /// Record the switches each data packet crosses (a hash-map update per
    /// hop; for tests and for checking paths, not for throughput).
    pub trace_paths: bool,
}

/// How each emulated switch is built (see `baton_switch::Config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchOptions {
    /// Flow tables in OpenFlow 1.3 (1.0 has one). Open vSwitch has 254;
    /// an empty table costs about 150 bytes, so 254 of them take an
    /// emulated switch from about 10 KiB to 45 KiB (measured with
    /// `examples/footprint.rs` on `torus:100x100`). baton's applications
    /// use table 0 only, so one is the default.
    pub tables_13: u8,
    /// Packet buffers per switch. 64 is plenty for an emulated switch (a
    /// buffer is held only until the controller answers a PACKET_IN);
    /// when they run out frames go to the controller whole.
    pub buffers: usize,
    /// The switch's exact-match cache in front of each table: 512 KiB a
    /// table once used, so off by default (10,000 switches would need
    /// 5 GB); the tuple-space classifier alone does the look-up.
    pub flow_cache: bool,
}

impl Default for SwitchOptions {
    fn default() -> Self {
        SwitchOptions {
            tables_13: 1,
            buffers: 64,
            flow_cache: false,
        }
    }
}

/// How the switches connect to the controller: in groups, so 10,000 do
/// not storm its accept queue at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectPlan {
    /// Switches per group.
    pub group: usize,
    /// The next group connects when the previous one has finished its
    /// handshakes, or this long after it started, whichever is first.
    pub interval: Duration,
    /// Give up (with [`Error::Handshake`]) when not every switch has
    /// finished its handshake by then.
    pub timeout: Duration,
}

impl Default for ConnectPlan {
    fn default() -> Self {
        ConnectPlan {
            group: 100,
            interval: Duration::from_millis(100),
            timeout: Duration::from_secs(120),
        }
    }
}

/// Which hosts talk to which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairs {
    /// Nobody: the network only carries the controller's probes.
    None,
    /// These (source, destination) pairs.
    Explicit(Vec<(HostId, HostId)>),
    /// Every host sends to the host half the host list away (host `i` to
    /// `i + n/2` modulo `n`): on a fat tree, every pair crosses pods.
    HalfWay,
    /// `count` pairs of hosts on different switches (where there are two
    /// switches with hosts), chosen with a fixed generator from `seed`.
    Random {
        /// How many pairs.
        count: usize,
        /// The generator's seed.
        seed: u64,
    },
}

/// The traffic: pairs of hosts, each starting with an ARP request, then a
/// first data packet, then (once that arrived) one packet per
/// `send_interval`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traffic {
    /// Who talks.
    pub pairs: Pairs,
    /// Time between the starts of consecutive pairs (zero: all at once).
    pub start_interval: Duration,
    /// Time between a set-up pair's packets; it sets the resolution of the
    /// reroute times.
    pub send_interval: Duration,
    /// An ARP request or first packet with no answer is sent again after
    /// this long.
    pub retry: Duration,
    /// How long a pair sends once set up (`None`: until traffic stops);
    /// a host leaves once all its pairs ended (host churn).
    pub pair_lifetime: Option<Duration>,
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic {
            pairs: Pairs::Random { count: 64, seed: 1 },
            start_interval: Duration::ZERO,
            send_interval: Duration::from_millis(1),
            retry: Duration::from_secs(1),
            pair_lifetime: None,
        }
    }
}

impl Config {
    /// The defaults for `topology` against the controller at
    /// `controller`: OpenFlow 1.3, links without delay, 64 random pairs
    /// sending every millisecond, no events, one second of warm-up and ten
    /// of traffic.
    pub fn new(controller: SocketAddr, topology: Graph) -> Config {
        Config {
            controller,
            topology,
            version: Version::V13,
            switch: SwitchOptions::default(),
            link_delay: Duration::ZERO,
            traffic: Traffic::default(),
            events: Schedule::default(),
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(10),
            drain: Duration::from_millis(200),
            connect: ConnectPlan::default(),
            trace_paths: false,
        }
    }
}

/// SplitMix64 (Steele et al., 2014): a fixed, seedable generator, so a
/// seed always picks the same pairs.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Pairs {
    /// The pairs for `g`'s hosts, checked: hosts exist, no host talks to
    /// itself.
    pub fn resolve(&self, g: &Graph) -> Result<Vec<(HostId, HostId)>> {
        let n = g.hosts().len();
        let need_two = || {
            Error::Config(format!(
                "traffic needs at least two hosts; the topology has {n}"
            ))
        };
        match self {
            Pairs::None => Ok(Vec::new()),
            Pairs::Explicit(list) => {
                for &(s, d) in list {
                    if s.0 as usize >= n || d.0 as usize >= n || s == d {
                        return Err(Error::Config(format!(
                            "pair ({}, {}): two different hosts of {n}",
                            s.0, d.0
                        )));
                    }
                }
                Ok(list.clone())
            }
            Pairs::HalfWay => {
                if n < 2 {
                    return Err(need_two());
                }
                Ok((0..n)
                    .map(|i| (HostId(i as u32), HostId(((i + n / 2) % n) as u32)))
                    .collect())
            }
            Pairs::Random { count, seed } => {
                if n < 2 {
                    return Err(need_two());
                }
                let hosts = g.hosts();
                let spread = hosts.iter().any(|h| h.switch != hosts[0].switch);
                let mut state = *seed;
                let mut out = Vec::with_capacity(*count);
                while out.len() < *count {
                    let s = (splitmix(&mut state) % n as u64) as usize;
                    let d = (splitmix(&mut state) % n as u64) as usize;
                    let apart = if spread {
                        hosts[s].switch != hosts[d].switch
                    } else {
                        s != d
                    };
                    if apart {
                        out.push((HostId(s as u32), HostId(d as u32)));
                    }
                }
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_checked_and_reproducible() {
        let g = Graph::named("fat-tree:4").unwrap();
        let half = Pairs::HalfWay.resolve(&g).unwrap();
        assert_eq!(half.len(), 16);
        assert_eq!(half[0], (HostId(0), HostId(8)));
        let r = Pairs::Random { count: 50, seed: 7 };
        let a = r.resolve(&g).unwrap();
        assert_eq!(a, r.resolve(&g).unwrap());
        assert!(
            a.iter()
                .all(|(s, d)| g.hosts()[s.0 as usize].switch != g.hosts()[d.0 as usize].switch)
        );
        for bad in [
            Pairs::Explicit(vec![(HostId(0), HostId(0))]),
            Pairs::Explicit(vec![(HostId(0), HostId(16))]),
        ] {
            let e = bad.resolve(&g).unwrap_err().to_string();
            assert!(e.contains("two different hosts of 16"), "{e}");
        }
        let lonely = Graph::named("single:1").unwrap();
        assert!(Pairs::HalfWay.resolve(&lonely).is_err());
        assert!(Pairs::None.resolve(&lonely).unwrap().is_empty());
    }
}
