//! `GET /api/v1/topology`, `GET /api/v1/hosts` and `GET /api/v1/path`:
//! the network applications' views, as the environment holds them now.

use super::{Shared, query};
use crate::error::ApiError;
use crate::flow::parse_mac;
use crate::model::{ErrorBody, Hop, Host, Hosts, Link, Path, PathQuery, Topology};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use baton_apps::routes::Routes;
use baton_apps::views;
use std::time::Instant;

/// The switches and links discovery knows (empty, version 0, without the
/// `topology` application).
#[utoipa::path(get, path = "/api/v1/topology", tag = "network", operation_id = "get_topology",
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
#[utoipa::path(get, path = "/api/v1/hosts", tag = "network", operation_id = "list_hosts",
    responses((status = 200, description = "The hosts view", body = Hosts)))]
pub(super) async fn hosts(State(s): State<Shared>) -> Json<Hosts> {
    let snapshot = s.control.snapshot();
    let now = Instant::now();
    Json(match snapshot.get::<views::Hosts>() {
        Some(h) => Hosts {
            version: h.version(),
            hosts: h.list().iter().map(|h| Host::new(h, now)).collect(),
        },
        None => Hosts {
            version: 0,
            hosts: Vec::new(),
        },
    })
}

/// The switches and ports between two known hosts: where each switch on
/// the way takes the packets in and sends them on, from the `routing`
/// application's routes (computed from the topology view when it does not
/// run).
#[utoipa::path(get, path = "/api/v1/path", tag = "network", operation_id = "get_path",
    params(PathQuery),
    responses(
        (status = 200, description = "The path", body = Path),
        (status = 400, description = "Not an Ethernet address", body = ErrorBody),
        (status = 404, description = "A host is not known, or no path joins them", body = ErrorBody),
    ))]
pub(super) async fn path(
    State(s): State<Shared>,
    q: Result<Query<PathQuery>, QueryRejection>,
) -> Result<Json<Path>, ApiError> {
    let q = query(q)?;
    let bad = |k: &str, e: String| ApiError::bad_request(format!("{k}: {e}"));
    let src = parse_mac(&q.src).map_err(|e| bad("src", e))?;
    let dst = parse_mac(&q.dst).map_err(|e| bad("dst", e))?;
    let snapshot = s.control.snapshot();
    let Some(hosts) = snapshot.get::<views::Hosts>() else {
        return Err(ApiError::not_found(
            "no hosts are known: the devices application is not running",
        ));
    };
    let host = |mac| {
        hosts
            .get(&mac)
            .map(|h| h.at)
            .ok_or_else(|| ApiError::not_found(format!("host {mac} is not known")))
    };
    let (a, b) = (host(src)?, host(dst)?);
    let published = snapshot.get::<Routes>();
    let computed;
    let routes: &Routes = match &published {
        Some(r) => r,
        None => {
            let Some(t) = snapshot.get::<views::Topology>() else {
                return Err(ApiError::not_found(
                    "no topology is known: the topology application is not running",
                ));
            };
            computed = Routes::compute(t);
            &computed
        }
    };
    let topology = routes.topology();
    let no_path = || {
        ApiError::not_found(format!(
            "no path from {src} (at {}) to {dst} (at {}): no known links join their switches",
            a.dpid, b.dpid
        ))
    };
    let ports = routes.path(a.dpid, b.dpid).ok_or_else(no_path)?;
    let mut hops = Vec::with_capacity(ports.len() + 1);
    let mut at = a;
    for out in ports {
        let next = topology.link_from(out).ok_or_else(no_path)?;
        hops.push(Hop {
            dpid: at.dpid.to_string(),
            in_port: at.port.0,
            out_port: out.port.0,
        });
        at = next;
    }
    hops.push(Hop {
        dpid: at.dpid.to_string(),
        in_port: at.port.0,
        out_port: b.port.0,
    });
    Ok(Json(Path {
        src: src.to_string(),
        dst: dst.to_string(),
        topology_version: topology.version(),
        hops,
    }))
}
