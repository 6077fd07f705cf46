//! # baton-operator: the operator's interface to a running controller
//!
//! Everything an operator uses to see and steer baton without reading its
//! logs (Beacon §3.2-4 and §7: its web UI and REST were what its users
//! used most): a REST API under `/api/v1` described by an OpenAPI
//! document generated from the code, a live feed of server-sent events,
//! and a web UI drawn from that feed. It builds on the runtime's
//! [`baton_runtime::control::Control`] handle and the applications' views;
//! the runtime and the applications know nothing of HTTP.
//!
//! ## Modules
//! - [`server`]: [`ApiServer`], the HTTP server on its own thread (a
//!   one-worker tokio runtime; calls that wait for switches run on its
//!   blocking pool, never on the controller's workers).
//! - `api`: the routes, one module per resource (`switches`, `network`
//!   for topology and hosts, `apps`, `health`, `events` for the live
//!   feed), and the OpenAPI document.
//! - [`model`]: what the API sends and receives, as JSON
//!   ([`model::live`]: what the live feed sends).
//! - `ui`: the web UI at `/`, its files compiled into the binary.
//! - `error`: [`ApiError`], a status and a message that says what was
//!   wrong.
#![deny(missing_docs)]

mod api;
mod error;
pub mod model;
pub mod server;
mod ui;

pub use error::ApiError;
pub use server::{ApiOptions, ApiServer};

/// The OpenAPI document of the REST API, as served at
/// `/api/v1/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api::openapi()
}
