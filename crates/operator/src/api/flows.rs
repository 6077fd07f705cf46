//! `GET|POST|DELETE /api/v1/switches/{dpid}/flows`: a switch's flows,
//! read with a flow statistics request and changed with flow-mods that
//! a barrier confirms (the JSON forms are in [`crate::flow`]).

use super::{JsonBody, Shared, blocking, parse_dpid};
use crate::error::ApiError;
use crate::flow::{Flow, FlowDeletion, Flows, NewFlow};
use crate::model::{ErrorBody, FlowAdded, version_number};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use baton_openflow::Cookie;

/// Every flow of every table of the switch, read from it now.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}/flows", tag = "switches", operation_id = "list_flows",
    params(("dpid" = String, Path, description = "Datapath id")),
    responses(
        (status = 200, description = "The switch's flows", body = Flows),
        (status = 404, description = "No such switch is connected", body = ErrorBody),
        (status = 504, description = "The switch did not answer", body = ErrorBody),
    ))]
pub(super) async fn list(
    State(s): State<Shared>,
    Path(dpid): Path<String>,
) -> Result<Json<Flows>, ApiError> {
    let dpid = parse_dpid(&dpid)?;
    let sw = s.control.switch(dpid)?;
    let control = s.control.clone();
    let entries = blocking(move || control.flows(dpid)).await??;
    // Who installed each flow, by the top 16 bits of its cookie.
    let mut owners: Vec<(u64, String)> = s
        .control
        .apps()
        .into_iter()
        .map(|a| (u64::from(a.cookie_tag) << 48, a.name))
        .collect();
    if let Some((c, _)) = s.control.network().own_cookie() {
        owners.push((c.0, "operator".to_string()));
    }
    let owner = |c: Cookie| {
        owners
            .iter()
            .find(|(tag, _)| c.0 >> 48 == tag >> 48 && c.0 >> 48 != 0)
            .map(|(_, name)| name.clone())
    };
    Ok(Json(Flows {
        dpid: dpid.to_string(),
        version: version_number(sw.info.version).to_string(),
        flows: entries.iter().map(|f| Flow::new(f, owner)).collect(),
    }))
}

/// Adds a flow, with the operator's cookie tag, and waits for the switch
/// to confirm it.
#[utoipa::path(post, path = "/api/v1/switches/{dpid}/flows", tag = "switches", operation_id = "add_flow",
    params(("dpid" = String, Path, description = "Datapath id")),
    request_body = NewFlow,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The switch installed it", body = FlowAdded),
        (status = 400, description = "A field is wrong; the message names it", body = ErrorBody),
        (status = 404, description = "No such switch is connected", body = ErrorBody),
        (status = 409, description = "In a cluster, another instance masters the switch; the message names it and its API", body = ErrorBody),
        (status = 422, description = "The switch refused it", body = ErrorBody),
    ))]
pub(super) async fn add(
    State(s): State<Shared>,
    Path(dpid): Path<String>,
    JsonBody(flow): JsonBody<NewFlow>,
) -> Result<(StatusCode, Json<FlowAdded>), ApiError> {
    let dpid = parse_dpid(&dpid)?;
    let flow = flow.check().map_err(ApiError::bad_request)?;
    let tag = s.control.network().own_cookie().map_or(0, |(c, _)| c.0);
    let cookie = Cookie(tag | flow.spec().cookie.0);
    let control = s.control.clone();
    blocking(move || control.add_flow(dpid, &flow.spec()))
        .await?
        .map_err(|e| s.naming_master(e))?;
    Ok((
        StatusCode::CREATED,
        Json(FlowAdded {
            dpid: dpid.to_string(),
            cookie: cookie.to_string(),
        }),
    ))
}

/// Deletes the flows a match selects (any installer's), and waits for
/// the switch to confirm.
#[utoipa::path(delete, path = "/api/v1/switches/{dpid}/flows", tag = "switches", operation_id = "delete_flows",
    params(("dpid" = String, Path, description = "Datapath id")),
    request_body = FlowDeletion,
    security(("bearer" = [])),
    responses(
        (status = 204, description = "The switch deleted them"),
        (status = 400, description = "A field is wrong; the message names it", body = ErrorBody),
        (status = 404, description = "No such switch is connected", body = ErrorBody),
        (status = 409, description = "In a cluster, another instance masters the switch; the message names it and its API", body = ErrorBody),
    ))]
pub(super) async fn delete(
    State(s): State<Shared>,
    Path(dpid): Path<String>,
    JsonBody(which): JsonBody<FlowDeletion>,
) -> Result<StatusCode, ApiError> {
    let dpid = parse_dpid(&dpid)?;
    let d = which.check().map_err(ApiError::bad_request)?;
    let control = s.control.clone();
    blocking(move || control.delete_flows(dpid, &d.match_, d.which, d.out_port))
        .await?
        .map_err(|e| s.naming_master(e))?;
    Ok(StatusCode::NO_CONTENT)
}
