//! `GET /api/v1/apps`, `POST /api/v1/apps/{name}/stop|start`,
//! `PATCH /api/v1/apps/{name}`: the applications and their life cycle
//! while switches stay connected (Beacon §4).

use super::{JsonBody, Shared, blocking, query};
use crate::error::ApiError;
use crate::model::{App, AppStopped, ErrorBody, StopQuery};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use baton_runtime::control::ControlError;

/// Every application, in pipeline order, with its state, counters and
/// settings.
#[utoipa::path(get, path = "/api/v1/apps", tag = "apps", operation_id = "list_apps",
    responses((status = 200, description = "The applications", body = Vec<App>)))]
pub(super) async fn list(State(s): State<Shared>) -> Json<Vec<App>> {
    Json(s.control.apps().iter().map(App::from).collect())
}

/// The application called `name` now.
fn app(s: &Shared, name: &str) -> Result<App, ApiError> {
    s.control
        .apps()
        .iter()
        .find(|a| a.name == name)
        .map(App::from)
        .ok_or_else(|| ControlError::UnknownApp(name.to_string()).into())
}

/// Stops an application: it gets no more events, and the flows it
/// installed are deleted from every switch unless `keep_flows=true`. Every
/// switch is asked at once and waited for until one deadline (3 s,
/// however many switches); those that did not confirm are listed.
#[utoipa::path(post, path = "/api/v1/apps/{name}/stop", tag = "apps", operation_id = "stop_app",
    params(("name" = String, Path, description = "The application"), StopQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Stopped", body = AppStopped),
        (status = 404, description = "No such application", body = ErrorBody),
        (status = 409, description = "It is not running", body = ErrorBody),
    ))]
pub(super) async fn stop(
    State(s): State<Shared>,
    Path(name): Path<String>,
    q: Result<Query<StopQuery>, QueryRejection>,
) -> Result<Json<AppStopped>, ApiError> {
    let q = query(q)?;
    let control = s.control.clone();
    let n = name.clone();
    let report = blocking(move || control.stop_app(&n, q.keep_flows)).await??;
    Ok(Json(AppStopped::new(app(&s, &name)?, &report)))
}

/// Starts a stopped (or failed) application again: it hears of every
/// connected switch anew.
#[utoipa::path(post, path = "/api/v1/apps/{name}/start", tag = "apps", operation_id = "start_app",
    params(("name" = String, Path, description = "The application")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Started", body = App),
        (status = 404, description = "No such application", body = ErrorBody),
        (status = 409, description = "It is already running", body = ErrorBody),
    ))]
pub(super) async fn start(
    State(s): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<App>, ApiError> {
    let control = s.control.clone();
    let n = name.clone();
    blocking(move || control.start_app(&n)).await??;
    Ok(Json(app(&s, &name)?))
}

/// Changes some of an application's settings, all or (with an error
/// naming the key) none.
#[utoipa::path(patch, path = "/api/v1/apps/{name}", tag = "apps", operation_id = "configure_app",
    params(("name" = String, Path, description = "The application")),
    request_body(content = Object, description = "Some of its settings, by name", example = json!({"probe_interval_ms": 1000})),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Changed", body = App),
        (status = 400, description = "Bad JSON", body = ErrorBody),
        (status = 404, description = "No such application", body = ErrorBody),
        (status = 422, description = "A setting is unknown or out of range", body = ErrorBody),
    ))]
pub(super) async fn configure(
    State(s): State<Shared>,
    Path(name): Path<String>,
    JsonBody(changes): JsonBody<serde_json::Value>,
) -> Result<Json<App>, ApiError> {
    s.control.configure_app(&name, &changes)?;
    Ok(Json(app(&s, &name)?))
}
