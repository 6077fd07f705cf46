//! The REST API, `/metrics` and the command-line client against a running
//! controller with software switches connected over TCP (and, for the
//! cluster, with a fixed cluster status): every endpoint,
//! bad input answered with a 4xx that says what was wrong, and the token
//! on every mutating call. One test binary, a module per concern.

mod auth;
mod client;
mod cluster;
mod dags;
mod endpoints;
mod metrics;
mod modularity;
mod path;
mod reservations;
mod support;
