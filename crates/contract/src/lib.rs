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
//! - [`sim`]: the events (failures, LSA flooding, SPF after a hold-down),
//!   the runs, and what they measure (the thesis's Loss-Num and SLA-V).
//!
//! So far the routers run the IGP alone: the thesis's "No Coordination".

pub mod igp;
pub mod sim;
pub mod topo;
pub mod traffic;
