//! `GET /api/v1/switches`, `GET|PATCH /api/v1/switches/{dpid}`.

use super::{JsonBody, Shared, parse_dpid};
use crate::error::ApiError;
use crate::model::{ErrorBody, Switch, SwitchPatch};
use axum::Json;
use axum::extract::{Path, State};

/// Every connected switch, with its ports, counters and message rates.
#[utoipa::path(get, path = "/api/v1/switches", tag = "switches", operation_id = "list_switches",
    responses((status = 200, description = "The connected switches", body = Vec<Switch>)))]
pub(super) async fn list(State(s): State<Shared>) -> Json<Vec<Switch>> {
    let switches = s.control.switches();
    let sampler = s.sampler();
    Json(
        switches
            .iter()
            .map(|w| Switch::new(w, sampler.rates(w.info.id)))
            .collect(),
    )
}

/// One switch.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}", tag = "switches", operation_id = "get_switch",
    params(("dpid" = String, Path, description = "Datapath id: 00:00:00:00:00:00:00:01, decimal or 0x hex")),
    responses(
        (status = 200, description = "The switch", body = Switch),
        (status = 400, description = "Not a datapath id", body = ErrorBody),
        (status = 404, description = "No such switch is connected", body = ErrorBody),
    ))]
pub(super) async fn one(
    State(s): State<Shared>,
    Path(dpid): Path<String>,
) -> Result<Json<Switch>, ApiError> {
    let dpid = parse_dpid(&dpid)?;
    let sw = s.control.switch(dpid)?;
    let rates = s.sampler().rates(sw.info.id);
    Ok(Json(Switch::new(&sw, rates)))
}

/// Changes a switch's weight: its service chances per scheduling round
/// (weighted max-min fairness, Maestro §3.2.1).
#[utoipa::path(patch, path = "/api/v1/switches/{dpid}", tag = "switches", operation_id = "patch_switch",
    params(("dpid" = String, Path, description = "Datapath id")),
    request_body = SwitchPatch,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The switch, changed", body = Switch),
        (status = 400, description = "Bad JSON or datapath id", body = ErrorBody),
        (status = 404, description = "No such switch is connected", body = ErrorBody),
        (status = 422, description = "Weight out of range", body = ErrorBody),
    ))]
pub(super) async fn patch(
    State(s): State<Shared>,
    Path(dpid): Path<String>,
    JsonBody(change): JsonBody<SwitchPatch>,
) -> Result<Json<Switch>, ApiError> {
    let dpid = parse_dpid(&dpid)?;
    if let Some(w) = change.weight {
        s.control.set_weight(dpid, w)?;
    }
    let sw = s.control.switch(dpid)?;
    let rates = s.sampler().rates(sw.info.id);
    Ok(Json(Switch::new(&sw, rates)))
}
