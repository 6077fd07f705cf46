//! Bandwidth on demand (the `bandwidth` application, McNettle §4.4) as
//! `/api/v1/reservations` sends and takes it: each reservation with its
//! path, and each link with its capacity and what is reserved on it.

use super::Link;
use baton_apps::bandwidth::{self, Origin};
use serde::{Deserialize, Serialize};
use std::time::Instant;
use utoipa::ToSchema;

/// Every reservation, and every link with what is reserved on it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReservationList {
    /// Every reservation, by number (empty without the `bandwidth`
    /// application).
    pub reservations: Vec<Reservation>,
    /// Every link of the topology (each named once, in one direction),
    /// with its capacity and what is reserved on it.
    pub links: Vec<LinkLoad>,
}

/// Bandwidth held for one host pair on every link of its path.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Reservation {
    /// Its number, unique in a run (`/api/v1/reservations/{id}`).
    pub id: u64,
    /// The sending host's Ethernet address.
    #[schema(example = "00:00:00:00:00:01")]
    pub src: String,
    /// The receiving host's Ethernet address.
    #[schema(example = "00:00:00:00:00:02")]
    pub dst: String,
    /// The rate held on every link of the path, kbit/s.
    pub kbps: u64,
    /// The ports the path leaves each switch by, `DPID/PORT`, the
    /// source's switch first; the last is the destination host's port.
    #[schema(example = json!(["00:00:00:00:00:00:00:01/2", "00:00:00:00:00:00:00:02/1"]))]
    pub path: Vec<String>,
    /// The links the path crosses, each named once (either direction
    /// carries the reservation).
    pub links: Vec<Link>,
    /// Who asked, and so when it ends.
    pub origin: ReservationOrigin,
    /// Seconds until it ends, for the operator's (none for a flow
    /// request's, which ends with its flows).
    pub expires_in_secs: Option<f64>,
    /// Seconds since it was made.
    pub age_secs: f64,
}

impl Reservation {
    /// The API's form of `r`, its times counted from `now` (the
    /// controller's clock).
    pub fn new(r: &bandwidth::Reservation, now: Instant) -> Reservation {
        let (origin, expires_in_secs) = match r.origin {
            Origin::Flow => (ReservationOrigin::Flow, None),
            Origin::Operator { expires } => (
                ReservationOrigin::Operator,
                Some(expires.saturating_duration_since(now).as_secs_f64()),
            ),
        };
        Reservation {
            id: r.id.0,
            src: r.src.to_string(),
            dst: r.dst.to_string(),
            kbps: r.kbps,
            path: r.hops.iter().map(|h| h.to_string()).collect(),
            links: r.links.iter().copied().map(Link::from).collect(),
            origin,
            expires_in_secs,
            age_secs: now.saturating_duration_since(r.since).as_secs_f64(),
        }
    }
}

/// Who asked for a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReservationOrigin {
    /// A host's first packet towards another (a flow request): it ends
    /// when its flows do.
    Flow,
    /// The operator (`POST /api/v1/reservations`): it ends when its time
    /// is up or when released.
    Operator,
}

/// One link's capacity and what is reserved on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LinkLoad {
    /// The link, named once (either direction carries reservations).
    pub link: Link,
    /// What it carries, kbit/s: the configured capacity, or its slower
    /// port's speed, or the application's default.
    pub capacity_kbps: u64,
    /// What is reserved on it, kbit/s.
    pub reserved_kbps: u64,
}

impl From<&bandwidth::LinkLoad> for LinkLoad {
    fn from(l: &bandwidth::LinkLoad) -> LinkLoad {
        LinkLoad {
            link: l.link.into(),
            capacity_kbps: l.capacity_kbps,
            reserved_kbps: l.reserved_kbps,
        }
    }
}

/// What `POST /api/v1/reservations` asks for: `kbps` from host `src` to
/// host `dst` for `duration_secs`, on the shortest path, on every link
/// or on none. It replaces the pair's reservation, if any.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReservation {
    /// The sending host's Ethernet address.
    #[schema(example = "00:00:00:00:00:01")]
    pub src: String,
    /// The receiving host's Ethernet address.
    #[schema(example = "00:00:00:00:00:02")]
    pub dst: String,
    /// The rate, kbit/s, at least 1.
    #[schema(example = 2000)]
    pub kbps: u64,
    /// How long it holds, seconds: 1 to 31536000 (a year).
    #[schema(example = 600)]
    pub duration_secs: u64,
}
