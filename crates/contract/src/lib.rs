//! # baton-contract: CONTRACT in simulation
//!
//! The Maestro thesis's chapter 5: a central controller that optimises
//! link weights and packet filters while the routers keep running a
//! link-state IGP, coordinated so that neither undoes the other. This
//! crate is the network the thesis measured in an extended ns-2, as a
//! deterministic discrete-event simulator:
//!
//! - [`topo`]: routers and links (capacity, propagation delay), from the
//!   topologies committed under `topologies/` (converted from `topohub`
//!   by `scripts/contract-topologies.py`) or random ones;
//! - [`igp`]: each router's link-state database and SPF;
//! - [`traffic`]: best-effort flows with Pareto rates, malicious flows,
//!   and the fluid data plane with its two priority classes;
//! - [`coord`]: CONTRACT's router side: fingerprints, approvals, the
//!   local adjustment of filters;
//! - [`optimize`]: the controller's link-weight search (the thesis's
//!   simplex downhill, and a local search) for its traffic matrix;
//! - [`controller`]: CONTRACT's controller as baton applications in the
//!   thesis's two DAGs (Fig. 5.5) on baton's DAG runtime;
//! - [`sim`]: the events (failures, LSA flooding, SPF after a hold-down),
//!   the runs, and what they measure (the thesis's Loss-Num and SLA-V);
//! - [`sweep`]: the thesis's grid of failures under both modes, over
//!   several seeds in parallel, summarised with intervals.
//!
//! A run is either the IGP alone (the thesis's "No Coordination") or
//! CONTRACT: routers stamp their changed entries with the database's
//! fingerprint and put their traffic in the low class, send the
//! controller approval requests, and move their filters with their
//! traffic; the controller approves a state once every router it can
//! reach reports it, floods the approval and pushes filters for it, and
//! optimises the link weights for the links it sees whenever they change.
//! The simulator drives the controller's DAGs the way baton's drivers
//! drive an application's: it publishes what the controller's router
//! learns and turns what the DAGs commit into messages.

pub mod controller;
pub mod coord;
pub mod igp;
pub mod optimize;
pub mod sim;
pub mod sweep;
pub mod topo;
pub mod traffic;
