//! `GET /api/v1/apps`: the applications, in pipeline order.

use super::Shared;
use crate::model::App;
use axum::Json;
use axum::extract::State;

/// Every application, in pipeline order, with its state, counters and
/// settings.
#[utoipa::path(get, path = "/api/v1/apps", tag = "apps",
    responses((status = 200, description = "The applications", body = Vec<App>)))]
pub(super) async fn list(State(s): State<Shared>) -> Json<Vec<App>> {
    Json(s.control.apps().iter().map(App::from).collect())
}
