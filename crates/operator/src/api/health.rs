//! `GET /api/v1/health`.

use super::Shared;
use crate::model::Health;
use axum::Json;
use axum::extract::State;

/// Whether the controller is up, its version and how many switches are
/// connected.
#[utoipa::path(get, path = "/api/v1/health", tag = "controller", operation_id = "health",
    responses((status = 200, description = "The controller is up", body = Health)))]
pub(super) async fn health(State(s): State<Shared>) -> Json<Health> {
    Json(Health {
        status: "ok".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        uptime_secs: s.started.elapsed().as_secs_f64(),
        switches: s.control.switches().len(),
    })
}
