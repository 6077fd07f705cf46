//! `GET /api/v1/dags`: the application DAGs (Maestro thesis §3.2.4), their
//! read and write sets and their runs.

use super::Shared;
use crate::model::Dag;
use axum::Json;
use axum::extract::State;

/// Every application DAG with its stages, trigger, read and write sets,
/// runs, commits, conflicts, reruns, late commits and the last run's duration.
#[utoipa::path(get, path = "/api/v1/dags", tag = "dags", operation_id = "list_dags",
    responses((status = 200, description = "The DAGs", body = Vec<Dag>)))]
pub(super) async fn list(State(s): State<Shared>) -> Json<Vec<Dag>> {
    Json(s.control.dags().iter().map(Dag::from).collect())
}
