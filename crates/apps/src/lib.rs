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
//! The network services, which run a whole network (`--apps
//! topology,devices,routing`), share their state as views of the runtime's
//! environment ([`views`], [`routes`]):
//! - [`topology::TopologyApp`]: link discovery with authenticated LLDP
//!   probes ([`lldp`]); publishes the topology.
//! - [`devices::DevicesApp`]: where each host is; publishes the hosts.
//! - [`routing::RoutingApp`]: shortest-path flows between hosts, floods
//!   over a spanning tree, proxy ARP; publishes the routes.
//!
//! [`by_name`] builds an application from its command-line name.

#![deny(missing_docs)]
#![deny(unsafe_code)]

mod burn;
pub mod devices;
mod hub;
mod learning;
pub mod lldp;
pub mod mac_table;
pub mod routes;
pub mod routing;
pub mod settings;
mod sync;
pub mod topology;
pub mod views;

pub use burn::Burn;
pub use hub::Hub;
pub use learning::{GlobalLearningSwitch, LearningConfig, LearningSwitch};

use baton_runtime::AnyApp;

/// The names [`by_name`] knows.
pub const NAMES: &[&str] = &[
    "hub",
    "learning-switch",
    "global-learning-switch",
    "topology",
    "devices",
    "routing",
    "burn:NANOSECONDS",
];

/// Builds the application called `name`.
pub fn by_name(name: &str) -> Result<AnyApp, String> {
    match name {
        "hub" => Ok(AnyApp::new(Hub)),
        "learning-switch" => Ok(AnyApp::new(LearningSwitch::new(LearningConfig::default()))),
        "global-learning-switch" => Ok(AnyApp::new(GlobalLearningSwitch::new(
            LearningConfig::default(),
        ))),
        "topology" => Ok(AnyApp::new(topology::TopologyApp::new(Default::default()))),
        "devices" => Ok(AnyApp::new(devices::DevicesApp::new(Default::default()))),
        "routing" => Ok(AnyApp::new(routing::RoutingApp::new(Default::default()))),
        other if other.starts_with("burn:") => other["burn:".len()..]
            .parse::<u64>()
            .map(|ns| AnyApp::new(Burn::new(std::time::Duration::from_nanos(ns))))
            .map_err(|_| format!("bad burn time in {other:?}: burn:NANOSECONDS")),
        other => Err(format!(
            "unknown application {other:?}; one of: {}",
            NAMES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_named_application() {
        for name in [
            "hub",
            "learning-switch",
            "global-learning-switch",
            "topology",
            "devices",
            "routing",
            "burn:500",
        ] {
            let app = by_name(name).unwrap();
            assert_eq!(app.name(), name.split(':').next().unwrap());
        }
        assert!(by_name("burn:fast").is_err());
        assert!(by_name("router").is_err());
    }
}
