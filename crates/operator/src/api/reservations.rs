//! `GET|POST /api/v1/reservations`, `GET|DELETE /api/v1/reservations/{id}`:
//! bandwidth on demand (McNettle §4.4) through the `bandwidth`
//! application's own interface ([`BandwidthApp`], reached with
//! `Control::app_of`): what is reserved on each link and for whom, the
//! operator's reservations made and released. The live feed's link loads
//! come from here too ([`live`]).
//!
//! Without the application the list is empty (as the topology is without
//! `topology`) and everything else is a 404 that says why; while it is
//! stopped, nothing can be reserved (its expiry timer and flow removals
//! are not heard), but what it holds can be listed and released.

use super::{JsonBody, Shared, blocking};
use crate::error::ApiError;
use crate::flow::parse_mac;
use crate::model::live::LiveReservations;
use crate::model::{ErrorBody, LinkLoad, NewReservation, Reservation, ReservationList};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use baton_apps::bandwidth::{BandwidthApp, ReservationId, ReserveError};
use baton_runtime::control::Control;
use baton_runtime::pipeline::Lifecycle;
use std::sync::Arc;
use std::time::Duration;

/// The longest reservation, seconds (a year).
const MAX_DURATION_SECS: u64 = 365 * 24 * 3600;

/// Every reservation and every link with its capacity and what is
/// reserved on it (empty lists without the `bandwidth` application).
#[utoipa::path(get, path = "/api/v1/reservations", tag = "reservations", operation_id = "list_reservations",
    responses((status = 200, description = "The reservations and the links' loads", body = ReservationList)))]
pub(super) async fn list(State(s): State<Shared>) -> Json<ReservationList> {
    let Some(app) = s.control.app_of::<BandwidthApp>() else {
        return Json(ReservationList {
            reservations: Vec::new(),
            links: Vec::new(),
        });
    };
    let now = s.control.network().now();
    Json(ReservationList {
        reservations: app
            .reservations()
            .iter()
            .map(|r| Reservation::new(r, now))
            .collect(),
        links: app.links().iter().map(LinkLoad::from).collect(),
    })
}

/// Reserves `kbps` from host `src` to host `dst` for `duration_secs` on
/// every link of the shortest path, or on none; the path's flows go in at
/// once. It replaces the pair's reservation, if any (a flow request's
/// too), and ends when its time is up or when released.
#[utoipa::path(post, path = "/api/v1/reservations", tag = "reservations", operation_id = "create_reservation",
    request_body = NewReservation,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Reserved on every link of the path", body = Reservation),
        (status = 400, description = "Bad JSON, a missing or unknown field, or not an Ethernet address; the message names the field", body = ErrorBody),
        (status = 404, description = "A host is not known, or the pipeline has no bandwidth application", body = ErrorBody),
        (status = 409, description = "A link of the path would be oversubscribed (the message names it, with its capacity, what is reserved on it and what was asked), no path joins the hosts (or routing has computed none yet), or the bandwidth application is stopped", body = ErrorBody),
        (status = 422, description = "A rate of 0, a duration of 0 or over a year, or the same host at both ends", body = ErrorBody),
        (status = 503, description = "The bandwidth application has not started or the controller is stopping, or the reservations kept changing under the request: try again", body = ErrorBody),
    ))]
pub(super) async fn create(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<NewReservation>,
) -> Result<(StatusCode, Json<Reservation>), ApiError> {
    let bad = |k: &str, e: String| ApiError::bad_request(format!("{k}: {e}"));
    let src = parse_mac(&req.src).map_err(|e| bad("src", e))?;
    let dst = parse_mac(&req.dst).map_err(|e| bad("dst", e))?;
    let invalid = |why: String| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, why);
    if src == dst {
        return Err(invalid(format!("src and dst are the same host, {src}")));
    }
    if req.kbps == 0 {
        return Err(invalid("kbps: at least 1 kbit/s".to_string()));
    }
    if !(1..=MAX_DURATION_SECS).contains(&req.duration_secs) {
        return Err(invalid(format!(
            "duration_secs: {} is out of range: 1 to {MAX_DURATION_SECS} (a year)",
            req.duration_secs
        )));
    }
    let app = bandwidth(&s.control)?;
    if !running(&s.control, &app) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the bandwidth application is stopped: start it (POST /api/v1/apps/bandwidth/start) to reserve",
        ));
    }
    let (kbps, duration) = (req.kbps, Duration::from_secs(req.duration_secs));
    let r = blocking(move || app.reserve(src, dst, kbps, duration))
        .await?
        .map_err(refused)?;
    let now = s.control.network().now();
    Ok((StatusCode::CREATED, Json(Reservation::new(&r, now))))
}

/// Reservation `id`.
#[utoipa::path(get, path = "/api/v1/reservations/{id}", tag = "reservations", operation_id = "get_reservation",
    params(("id" = u64, Path, description = "The reservation's number")),
    responses(
        (status = 200, description = "The reservation", body = Reservation),
        (status = 400, description = "Not a reservation number", body = ErrorBody),
        (status = 404, description = "No such reservation, or the pipeline has no bandwidth application", body = ErrorBody),
    ))]
pub(super) async fn one(
    State(s): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<Reservation>, ApiError> {
    let id = parse_id(&id)?;
    let app = bandwidth(&s.control)?;
    let ledger = app.reservations();
    let r = ledger
        .get(id)
        .ok_or_else(|| refused(ReserveError::NotFound(id)))?;
    Ok(Json(Reservation::new(r, s.control.network().now())))
}

/// Releases reservation `id` (the operator's or a flow request's): its
/// bandwidth is given back and its flows are deleted.
#[utoipa::path(delete, path = "/api/v1/reservations/{id}", tag = "reservations", operation_id = "release_reservation",
    params(("id" = u64, Path, description = "The reservation's number")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Released"),
        (status = 400, description = "Not a reservation number", body = ErrorBody),
        (status = 404, description = "No such reservation, or the pipeline has no bandwidth application", body = ErrorBody),
        (status = 503, description = "The bandwidth application has never started", body = ErrorBody),
    ))]
pub(super) async fn release(
    State(s): State<Shared>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = parse_id(&id)?;
    let app = bandwidth(&s.control)?;
    blocking(move || app.release(id)).await?.map_err(refused)?;
    Ok(StatusCode::NO_CONTENT)
}

/// What the live feed shows of bandwidth on demand: `None` without the
/// application.
pub(super) fn live(control: &Control) -> Option<LiveReservations> {
    let app = control.app_of::<BandwidthApp>()?;
    Some(LiveReservations {
        reservations: app.reservations().len(),
        links: app.links().iter().map(LinkLoad::from).collect(),
    })
}

/// The `bandwidth` application, or a 404 that says it is not there.
fn bandwidth(control: &Control) -> Result<Arc<BandwidthApp>, ApiError> {
    control.app_of::<BandwidthApp>().ok_or_else(|| {
        ApiError::not_found(
            "no reservations: the pipeline has no bandwidth application (add it before routing)",
        )
    })
}

/// Whether `app` gets events (not stopped by the operator nor failed).
fn running(control: &Control, app: &BandwidthApp) -> bool {
    let name = baton_runtime::App::name(app);
    control
        .apps()
        .iter()
        .any(|a| a.name == name && matches!(a.lifecycle, Lifecycle::Running))
}

/// A reservation number from the path.
fn parse_id(s: &str) -> Result<ReservationId, ApiError> {
    s.parse()
        .map(ReservationId)
        .map_err(|_| ApiError::bad_request(format!("bad reservation number {s:?}")))
}

/// The status and message of the application's refusal.
fn refused(e: ReserveError) -> ApiError {
    let status = match &e {
        ReserveError::UnknownHost(_) | ReserveError::NotFound(_) => StatusCode::NOT_FOUND,
        ReserveError::Oversubscribed(_) | ReserveError::NoPath { .. } => StatusCode::CONFLICT,
        ReserveError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        ReserveError::NotRunning | ReserveError::Contended | ReserveError::Unavailable(_) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
    };
    ApiError::new(status, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_apps::bandwidth::Oversubscribed;
    use baton_apps::views::{Link, PortRef};
    use baton_openflow::{DatapathId, MacAddr, PortNo};

    #[test]
    fn each_refusal_has_its_status_and_says_why() {
        let end = |s, p| PortRef::new(DatapathId(s), PortNo(p));
        let full = ReserveError::Oversubscribed(Oversubscribed {
            link: Link {
                src: end(1, 2),
                dst: end(2, 2),
            },
            capacity_kbps: 2500,
            reserved_kbps: 2000,
            kbps: 1000,
        });
        let e = refused(full);
        assert_eq!(e.status, StatusCode::CONFLICT);
        assert_eq!(
            e.message,
            "link 00:00:00:00:00:00:00:01/2 -> 00:00:00:00:00:00:00:02/2 would be oversubscribed: \
             2000 kbit/s reserved of 2500 kbit/s, 1000 kbit/s asked"
        );
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        for (e, status) in [
            (ReserveError::UnknownHost(mac), StatusCode::NOT_FOUND),
            (
                ReserveError::NotFound(ReservationId(7)),
                StatusCode::NOT_FOUND,
            ),
            (
                ReserveError::NoPath { src: mac, dst: mac },
                StatusCode::CONFLICT,
            ),
            (
                ReserveError::Invalid("no"),
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            (ReserveError::NotRunning, StatusCode::SERVICE_UNAVAILABLE),
            (ReserveError::Contended, StatusCode::SERVICE_UNAVAILABLE),
            (
                ReserveError::Unavailable("etcd".into()),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
        ] {
            let message = e.to_string();
            assert_eq!(refused(e), ApiError::new(status, message));
        }
    }

    #[test]
    fn reservation_numbers_are_decimal() {
        assert_eq!(parse_id("42").unwrap(), ReservationId(42));
        for bad in ["", "-1", "0x2a", "one"] {
            let e = parse_id(bad).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{bad}");
            assert!(e.message.contains("bad reservation number"), "{e:?}");
        }
    }
}
