//! # baton-operator: the operator's interface to a running controller
//!
//! Everything an operator uses to see and steer baton without reading its
//! logs (Beacon §3.2-4 and §7: its web UI and REST were what its users
//! used most): a REST API under `/api/v1` described by an OpenAPI
//! document generated from the code, a live feed of server-sent events
//! and the web UI drawn from it, Prometheus metrics at `/metrics`, the
//! token that guards every change, the configuration file, and the
//! command-line client. It builds on the runtime's
//! [`baton_runtime::control::Control`] handle and the applications'
//! views, and on a clustered instance the cluster member's
//! [`baton_cluster::status::ClusterSource`]; the runtime, the
//! applications and the cluster know nothing of HTTP.
//!
//! ## Modules
//! - [`server`]: [`ApiServer`], the HTTP server on its own thread (a
//!   one-worker tokio runtime; calls that wait for switches run on its
//!   blocking pool, never on the controller's workers), and the task
//!   that feeds the sampler.
//! - `api`: the routes, one module per resource (`switches`, `flows`,
//!   `network` for topology, hosts and paths, `apps`, `scheduler`,
//!   `cluster` for a clustered instance's members and masters, `health`,
//!   `metrics`, `events` for the live feed), the OpenAPI
//!   document, and what handlers share
//!   (JSON bodies whose errors name the field, the blocking pool).
//! - [`auth`]: the [`Token`]; loopback unless one is set, and the check of
//!   every mutating call.
//! - [`client`]: `baton show` and `baton app`: the API's answers as
//!   tables, or as JSON for scripts.
//! - [`config`]: the configuration file (TOML) and the command line over
//!   it, resolved into what `baton run` starts; errors name the file, the
//!   line and the key.
//! - [`flow`]: flows as JSON, posted (checked into what both OpenFlow
//!   versions express alike) and read back (from either version's flow
//!   statistics), in one vocabulary.
//! - [`sampler`]: per-switch message rates and Jain's fairness over the
//!   last second, from counters read once a second.
//! - [`metrics`]: the Prometheus text, one line per metric.
//! - [`model`]: what the API sends and receives, as JSON
//!   ([`model::live`]: what the live feed sends).
//! - `ui`: the web UI at `/`, its files compiled into the binary.
//! - `error`: [`ApiError`], a status and a message that says what was
//!   wrong.
#![deny(missing_docs)]

mod api;
pub mod auth;
pub mod client;
pub mod config;
mod error;
pub mod flow;
pub mod metrics;
pub mod model;
pub mod sampler;
pub mod server;
mod ui;

pub use auth::Token;
pub use error::ApiError;
pub use server::{ApiOptions, ApiServer};

/// The OpenAPI document of the REST API, as served at
/// `/api/v1/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api::openapi()
}
