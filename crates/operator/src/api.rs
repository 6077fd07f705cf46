//! The REST API's routes under `/api/v1`, one module per resource, and the
//! OpenAPI document generated from the handlers' annotations (utoipa), so
//! the document cannot drift from the code.

mod apps;
mod events;
mod health;
mod network;
mod switches;

use crate::error::ApiError;
use axum::Json;
use axum::Router;
use axum::routing::get;
use baton_openflow::DatapathId;
use baton_runtime::control::Control;
use std::time::Instant;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The state every handler shares.
#[derive(Clone)]
pub(crate) struct Shared {
    /// The controller.
    pub control: Control,
    /// When the API started.
    pub started: Instant,
    /// Turns true when the server shuts down: open event streams end.
    pub closing: tokio::sync::watch::Receiver<bool>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "baton",
        description = "The REST API of the baton OpenFlow controller. Datapath ids are written 00:00:00:00:00:00:00:01 and accepted in that form, as a decimal or as a 0x number."
    ),
    tags(
        (name = "switches", description = "Connected switches, their ports and flows"),
        (name = "network", description = "Topology, hosts and paths, from the network applications' views"),
        (name = "apps", description = "The applications and their life cycle"),
        (name = "controller", description = "Health and version"),
    )
)]
struct ApiDoc;

/// The routes and their document, together.
fn parts() -> (Router<Shared>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(switches::list))
        .routes(routes!(switches::one))
        .routes(routes!(network::topology))
        .routes(routes!(network::hosts))
        .routes(routes!(apps::list))
        .routes(routes!(health::health))
        .routes(routes!(events::events))
        .split_for_parts()
}

/// The OpenAPI document.
pub(crate) fn openapi() -> utoipa::openapi::OpenApi {
    parts().1
}

/// Every route, with the state they share.
pub(crate) fn router(shared: Shared) -> Router {
    let (routes, doc) = parts();
    routes
        .route(
            "/api/v1/openapi.json",
            get(move || async move { Json(doc) }),
        )
        .merge(crate::ui::routes())
        .fallback(|| async { ApiError::not_found("no such path; see /api/v1/openapi.json") })
        .with_state(shared)
}

/// A datapath id from a path or query, in any of its accepted forms.
fn parse_dpid(s: &str) -> Result<DatapathId, ApiError> {
    s.parse().map_err(ApiError::bad_request)
}
