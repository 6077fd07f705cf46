//! `GET /api/v1/switches` and `GET /api/v1/switches/{dpid}`.

use super::Shared;
use super::parse_dpid;
use crate::error::ApiError;
use crate::model::{ErrorBody, Switch};
use axum::Json;
use axum::extract::{Path, State};

/// Every connected switch, with its ports and counters.
#[utoipa::path(get, path = "/api/v1/switches", tag = "switches",
    responses((status = 200, description = "The connected switches", body = Vec<Switch>)))]
pub(super) async fn list(State(s): State<Shared>) -> Json<Vec<Switch>> {
    Json(s.control.switches().iter().map(Switch::from).collect())
}

/// One switch.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}", tag = "switches",
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
    Ok(Json(Switch::from(&s.control.switch(dpid)?)))
}
