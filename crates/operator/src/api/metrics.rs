//! `GET /metrics`: Prometheus text ([`crate::metrics`]).

use super::Shared;
use crate::metrics::{CONTENT_TYPE, gather};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

/// Every metric, in the Prometheus text format (0.0.4).
#[utoipa::path(get, path = "/metrics", tag = "controller", operation_id = "metrics",
    responses((status = 200, description = "The metrics", body = String, content_type = "text/plain")))]
pub(super) async fn metrics(State(s): State<Shared>) -> impl IntoResponse {
    let cluster = s.cluster();
    let text = gather(&s.control, &s.sampler(), cluster.as_ref());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], text)
}
