//! The REST API's routes under `/api/v1` and `/metrics`, one module per
//! resource, and the OpenAPI document generated from the handlers'
//! annotations (utoipa), so the document cannot drift from the code.
//!
//! What every handler shares is here: the state ([`Shared`]), JSON bodies
//! read so that an error names the field ([`JsonBody`]), query strings
//! likewise ([`query`]), and Control calls that wait for a switch run on
//! the blocking pool ([`blocking`]).

mod apps;
mod cluster;
mod dags;
mod events;
mod flows;
mod health;
mod metrics;
mod network;
mod reservations;
mod scheduler;
mod switches;

use crate::auth::{self, Token};
use crate::error::ApiError;
use crate::sampler::Sampler;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, Query, Request};
use axum::http::StatusCode;
use axum::routing::get;
use baton_cluster::status::{ClusterSource, ClusterStatus};
use baton_openflow::DatapathId;
use baton_runtime::control::{Control, ControlError};
use serde::de::DeserializeOwned;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The state every handler shares.
#[derive(Clone)]
pub(crate) struct Shared {
    /// The controller.
    pub control: Control,
    /// When the API started.
    pub started: Instant,
    /// Rates and fairness over the last sampling interval.
    pub sampler: Arc<Mutex<Sampler>>,
    /// Turns true when the server shuts down: open event streams end.
    pub closing: tokio::sync::watch::Receiver<bool>,
    /// The cluster this instance is a member of (`None`: standalone).
    pub cluster: Option<Arc<dyn ClusterSource>>,
}

impl Shared {
    /// The sampler (a poisoned lock is taken over: a reading is replaced
    /// whole each period).
    pub fn sampler(&self) -> MutexGuard<'_, Sampler> {
        self.sampler.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cluster's status now, or `None` for a standalone instance.
    pub fn cluster(&self) -> Option<ClusterStatus> {
        self.cluster.as_ref().map(|c| c.status())
    }

    /// `e` as the API says it; a change refused because another instance
    /// masters the switch names that instance and its API, where the
    /// operator can send the change.
    pub fn naming_master(&self, e: ControlError) -> ApiError {
        let ControlError::NotMaster(dpid) = &e else {
            return e.into();
        };
        let wanted = format!("{:016x}", dpid.0);
        let master = self.cluster().and_then(|c| {
            let name = c
                .masters
                .iter()
                .find(|m| m.dpid == wanted)?
                .master
                .clone()?;
            let api = c.members.iter().find(|m| m.node == name)?.api.clone();
            Some((name, api))
        });
        match master {
            Some((name, Some(api))) => ApiError::new(
                StatusCode::CONFLICT,
                format!("{e}; its master is {name}, whose API is at {api}"),
            ),
            Some((name, None)) => ApiError::new(
                StatusCode::CONFLICT,
                format!("{e}; its master is {name}, which serves no API"),
            ),
            None => e.into(),
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "baton",
        description = "The REST API of the baton OpenFlow controller. Datapath ids are written 00:00:00:00:00:00:00:01 and accepted in that form, as a decimal or as a 0x number. When the controller has a token, every call that changes something needs Authorization: Bearer TOKEN."
    ),
    modifiers(&BearerAuth),
    tags(
        (name = "switches", description = "Connected switches, their ports and flows"),
        (name = "network", description = "Topology, hosts and paths, from the network applications' views"),
        (name = "apps", description = "The applications and their life cycle"),
        (name = "dags", description = "The application DAGs and their runs"),
        (name = "reservations", description = "Bandwidth on demand: what is reserved on each link and for whom, from the bandwidth application"),
        (name = "scheduler", description = "The scheduler, its batching and its fairness"),
        (name = "controller", description = "Health, version and metrics"),
        (name = "cluster", description = "The instances that act as one controller, and which of them masters each switch"),
    )
)]
struct ApiDoc;

/// The bearer token scheme, named `bearer` by the mutating operations.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
            );
    }
}

/// The routes and their document, together.
fn parts() -> (Router<Shared>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(switches::list))
        .routes(routes!(switches::one, switches::patch))
        .routes(routes!(flows::list, flows::add, flows::delete))
        .routes(routes!(network::topology))
        .routes(routes!(network::hosts))
        .routes(routes!(network::path))
        .routes(routes!(apps::list))
        .routes(routes!(apps::stop))
        .routes(routes!(apps::start))
        .routes(routes!(apps::configure))
        .routes(routes!(dags::list))
        .routes(routes!(reservations::list, reservations::create))
        .routes(routes!(reservations::one, reservations::release))
        .routes(routes!(scheduler::show, scheduler::patch))
        .routes(routes!(cluster::show))
        .routes(routes!(health::health))
        .routes(routes!(metrics::metrics))
        .routes(routes!(events::events))
        .split_for_parts()
}

/// The OpenAPI document.
pub(crate) fn openapi() -> utoipa::openapi::OpenApi {
    parts().1
}

/// Every route, with the state they share, behind the token check.
pub(crate) fn router(shared: Shared, token: Option<Arc<Token>>) -> Router {
    let (routes, doc) = parts();
    routes
        .route(
            "/api/v1/openapi.json",
            get(move || async move { Json(doc) }),
        )
        .merge(crate::ui::routes())
        .fallback(|| async { ApiError::not_found("no such path; see /api/v1/openapi.json") })
        .layer(axum::middleware::from_fn_with_state(
            token,
            auth::require_token,
        ))
        .with_state(shared)
}

/// A datapath id from a path or query, in any of its accepted forms.
fn parse_dpid(s: &str) -> Result<DatapathId, ApiError> {
    s.parse().map_err(ApiError::bad_request)
}

/// Runs `f`, which may wait for a switch, on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the request's task failed: {e}"),
        )
    })
}

/// A query string, or a 400 that says what was wrong with it.
fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))
}

/// A JSON request body, read so that an error names the field that was
/// wrong (`match.tcp_dst: invalid type: ...`) or says where the JSON
/// broke; an empty body is an error too.
pub(crate) struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(format!("cannot read the body: {e}")))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::bad_request(
                "a JSON body is required; see /api/v1/openapi.json",
            ));
        }
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let value: T = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            ApiError::bad_request(if inner.is_syntax() || inner.is_eof() {
                format!("bad JSON: {inner}")
            } else if path == "." {
                inner.to_string()
            } else {
                format!("{path}: {inner}")
            })
        })?;
        de.end()
            .map_err(|e| ApiError::bad_request(format!("bad JSON: {e}")))?;
        Ok(JsonBody(value))
    }
}
