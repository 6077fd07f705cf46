//! `GET|PATCH /api/v1/scheduler`: the design and batching in use, each
//! worker's batches and IBT (Maestro §3.3), the BDU (changeable), and
//! fairness over the last sampling interval.

use super::{JsonBody, Shared};
use crate::error::ApiError;
use crate::model::{ErrorBody, Scheduler, SchedulerPatch, bdu_from_us};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

/// The scheduler now.
#[utoipa::path(get, path = "/api/v1/scheduler", tag = "scheduler", operation_id = "get_scheduler",
    responses((status = 200, description = "The scheduler", body = Scheduler)))]
pub(super) async fn show(State(s): State<Shared>) -> Json<Scheduler> {
    let fairness = s.sampler().fairness();
    Json(Scheduler::new(&s.control.scheduler(), fairness))
}

/// Changes the BDU.
#[utoipa::path(patch, path = "/api/v1/scheduler", tag = "scheduler", operation_id = "patch_scheduler",
    request_body = SchedulerPatch,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The scheduler, changed", body = Scheduler),
        (status = 400, description = "Bad JSON", body = ErrorBody),
        (status = 409, description = "The design or batching cannot change while running", body = ErrorBody),
        (status = 422, description = "BDU out of range", body = ErrorBody),
    ))]
pub(super) async fn patch(
    State(s): State<Shared>,
    JsonBody(change): JsonBody<SchedulerPatch>,
) -> Result<Json<Scheduler>, ApiError> {
    let now = Scheduler::new(&s.control.scheduler(), None);
    for (key, asked, running) in [
        ("scheduler", &change.scheduler, &now.scheduler),
        ("batching", &change.batching, &now.batching),
    ] {
        if let Some(asked) = asked.as_ref().filter(|a| *a != running) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "{key}: the {key} is chosen when the controller starts (`{key}` in the configuration file or --{key}); it runs {running}, not {asked}"
                ),
            ));
        }
    }
    if let Some(us) = change.bdu_us {
        let bdu = bdu_from_us(us)
            .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("bdu_us: {e}")))?;
        s.control.set_bdu(bdu)?;
    }
    let fairness = s.sampler().fairness();
    Ok(Json(Scheduler::new(&s.control.scheduler(), fairness)))
}
