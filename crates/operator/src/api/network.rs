//! `GET /api/v1/topology` and `GET /api/v1/hosts`: the network
//! applications' views, as the environment holds them now.

use super::Shared;
use crate::model::{Host, Hosts, Link, Topology};
use axum::Json;
use axum::extract::State;
use baton_apps::views;
use std::time::Instant;

/// The switches and links discovery knows (empty, version 0, without the
/// `topology` application).
#[utoipa::path(get, path = "/api/v1/topology", tag = "network",
    responses((status = 200, description = "The topology view", body = Topology)))]
pub(super) async fn topology(State(s): State<Shared>) -> Json<Topology> {
    let snapshot = s.control.snapshot();
    let Some(t) = snapshot.get::<views::Topology>() else {
        return Json(Topology {
            version: 0,
            switches: Vec::new(),
            links: Vec::new(),
        });
    };
    let mut links: Vec<Link> = t.links().map(Link::from).collect();
    links.sort();
    Json(Topology {
        version: t.version(),
        switches: t.switches.keys().map(|d| d.to_string()).collect(),
        links,
    })
}

/// The hosts the network has seen (empty, version 0, without the
/// `devices` application).
#[utoipa::path(get, path = "/api/v1/hosts", tag = "network",
    responses((status = 200, description = "The hosts view", body = Hosts)))]
pub(super) async fn hosts(State(s): State<Shared>) -> Json<Hosts> {
    let snapshot = s.control.snapshot();
    let now = Instant::now();
    Json(match snapshot.get::<views::Hosts>() {
        Some(h) => Hosts {
            version: h.version(),
            hosts: h.by_mac.values().map(|h| Host::new(h, now)).collect(),
        },
        None => Hosts {
            version: 0,
            hosts: Vec::new(),
        },
    })
}
