//! # baton-apps: applications that run on the baton runtime
//!
//! - [`Hub`]: floods every packet (the smallest useful controller).
//! - [`LearningSwitch`]: McNettle's local learning controller (McNettle
//!   §4.1): each switch learns MAC -> port in a table of its own, kept as
//!   switch-local state, so it needs no synchronisation.
//! - [`GlobalLearningSwitch`]: McNettle's global learning controller
//!   (McNettle §4.2): one host table shared by every switch, sharded under
//!   read-write locks.
//! - [`Burn`]: spins a set time per PACKET_IN, to overload baton in
//!   benchmarks on small machines (always named in the figures).
//!
//! The network services, which run a whole network on any topology, loops
//! included, and are what `baton run` runs by default ([`DEFAULT_APPS`]),
//! share their state as views of the runtime's environment ([`views`],
//! [`routes`]):
//! - [`topology::TopologyApp`]: link discovery with authenticated LLDP
//!   probes ([`lldp`]); publishes the topology.
//! - [`devices::DevicesApp`]: where each host is; publishes the hosts.
//! - [`routing::RoutingApp`]: shortest-path flows between hosts, floods
//!   over a spanning tree, proxy ARP; publishes the routes.
//! - [`bandwidth::BandwidthApp`]: bandwidth on demand (McNettle §4.4),
//!   each host pair's rate reserved on its path in one transaction across
//!   views; publishes the reservations.
//!
//! Their flows sit in named priority bands, one per role ([`priority`]),
//! so that applications composed in one pipeline do not shadow each
//! other's flows by accident.
//!
//! [`by_name`] builds an application from its command-line name; [`APPS`]
//! lists them with a line each.

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod bandwidth;
mod burn;
mod counters;
pub mod devices;
mod hub;
mod learning;
pub mod lldp;
pub mod loop_guard;
pub mod mac_table;
mod paths;
pub mod priority;

/// The application writer's guide (`docs/applications.md`), whose examples
/// run as this crate's doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/applications.md")]
pub struct ApplicationsGuide;

pub mod routes;
pub mod routing;
pub mod settings;
mod sync;
pub mod topology;
pub mod views;

pub use burn::Burn;
pub use hub::Hub;
pub use learning::{
    GlobalLearningSwitch, LearnedMatch, LearningConfig, LearningSwitch, LocalSwitch,
};

use baton_runtime::AnyApp;

/// Whether an application can run a network whose switches form loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loops {
    /// It floods over a spanning tree: any topology.
    Safe,
    /// It floods out of every port: on a loop, every broadcast circulates
    /// for ever (the learning switches notice it, say so and pace their
    /// floods, but cannot stop it).
    Unsafe,
    /// It forwards nothing by itself.
    NotApplicable,
}

/// An application [`by_name`] builds, described for `baton run --help`
/// and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppInfo {
    /// Its name on the command line and in the configuration file.
    pub name: &'static str,
    /// What it does, in one line.
    pub about: &'static str,
    /// Whether it is safe on topologies with loops.
    pub loops: Loops,
}

/// Every application [`by_name`] knows.
pub const APPS: &[AppInfo] = &[
    AppInfo {
        name: "topology",
        about: "discovers the links between switches (authenticated LLDP)",
        loops: Loops::NotApplicable,
    },
    AppInfo {
        name: "devices",
        about: "tracks where each host is attached (needs topology)",
        loops: Loops::NotApplicable,
    },
    AppInfo {
        name: "routing",
        about: "shortest-path flows between hosts, floods over a spanning tree (needs topology, devices)",
        loops: Loops::Safe,
    },
    AppInfo {
        name: "bandwidth",
        about: "reserves bandwidth on each host pair's path, refuses what would oversubscribe a link (McNettle §4.4; needs topology, devices; goes before routing)",
        loops: Loops::Safe,
    },
    AppInfo {
        name: "learning-switch",
        about: "each switch learns MAC -> port and floods unknown destinations (McNettle §4.1)",
        loops: Loops::Unsafe,
    },
    AppInfo {
        name: "global-learning-switch",
        about: "a learning switch with one host table for all switches (McNettle §4.2)",
        loops: Loops::Unsafe,
    },
    AppInfo {
        name: "hub",
        about: "floods every packet",
        loops: Loops::Unsafe,
    },
    AppInfo {
        name: "burn:NANOSECONDS",
        about: "spins NANOSECONDS per packet-in, before the next application (benchmarks)",
        loops: Loops::NotApplicable,
    },
];

/// What `baton run` runs unless told otherwise: the network services,
/// which are safe on any topology.
pub const DEFAULT_APPS: &[&str] = &["topology", "devices", "routing"];

/// The applications, a line each, with whether each is safe on loops
/// (for `baton run --help`).
pub fn describe_apps() -> String {
    let width = APPS.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let mut s = String::new();
    for a in APPS {
        let loops = match a.loops {
            Loops::Safe => " [safe on loops]",
            Loops::Unsafe => " [NOT safe on loops]",
            Loops::NotApplicable => "",
        };
        s.push_str(&format!("  {:width$}  {}{loops}\n", a.name, a.about));
    }
    s
}

/// Builds the application called `name`, or says why it cannot: an
/// unknown name, a bad argument, or `topology` without randomness for its
/// probe key ([`lldp::NoRandomness`]). The error is a sentence for the
/// operator (the configuration's check prints it at startup).
pub fn by_name(name: &str) -> Result<AnyApp, String> {
    build(name, getrandom::fill)
}

/// [`by_name`], with `random` as the source of randomness for `topology`'s
/// probe key.
fn build<E: std::fmt::Display>(
    name: &str,
    random: impl FnOnce(&mut [u8]) -> Result<(), E>,
) -> Result<AnyApp, String> {
    match name {
        "hub" => Ok(AnyApp::new(Hub)),
        "learning-switch" => Ok(AnyApp::new(LearningSwitch::new(LearningConfig::default()))),
        "global-learning-switch" => Ok(AnyApp::new(GlobalLearningSwitch::new(
            LearningConfig::default(),
        ))),
        "topology" => topology::TopologyApp::with_randomness(Default::default(), random)
            .map(AnyApp::new)
            .map_err(|e| e.to_string()),
        "devices" => Ok(AnyApp::new(devices::DevicesApp::new(Default::default()))),
        "routing" => Ok(AnyApp::new(routing::RoutingApp::new(Default::default()))),
        "bandwidth" => bandwidth::BandwidthApp::new(Default::default())
            .map(AnyApp::new)
            .map_err(|e| e.to_string()),
        other if other.starts_with("burn:") => other["burn:".len()..]
            .parse::<u64>()
            .map(|ns| AnyApp::new(Burn::new(std::time::Duration::from_nanos(ns))))
            .map_err(|_| format!("bad burn time in {other:?}: burn:NANOSECONDS")),
        other => {
            let names: Vec<&str> = APPS.iter().map(|a| a.name).collect();
            Err(format!(
                "unknown application {other:?}; one of: {}",
                names.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_listed_application() {
        for info in APPS {
            let name = info.name.replace("NANOSECONDS", "500");
            let app = by_name(&name).unwrap();
            assert_eq!(app.name(), name.split(':').next().unwrap());
            assert!(describe_apps().contains(info.name));
        }
        for name in DEFAULT_APPS {
            let info = APPS.iter().find(|a| a.name == *name).unwrap();
            assert_ne!(info.loops, Loops::Unsafe, "{name} is a default");
        }
        assert!(by_name("burn:fast").is_err());
        assert!(by_name("router").is_err());
    }

    #[test]
    fn topology_refuses_to_start_without_randomness() {
        let e = build("topology", |_: &mut [u8]| Err("getrandom: no entropy"))
            .expect_err("topology without a random key");
        assert!(e.contains("topology cannot start"), "{e}");
        assert!(e.contains("getrandom: no entropy"), "{e}");
        assert!(e.contains("forge"), "{e}");
        // The other applications need no randomness.
        assert!(build("routing", |_: &mut [u8]| Err("none")).is_ok());
    }
}
