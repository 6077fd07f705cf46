//! `GET /api/v1/cluster`: the cluster this instance is a member of, from
//! its [`baton_cluster::status::ClusterSource`] (answered from memory,
//! never waiting for etcd); 404 on a standalone instance.

use super::Shared;
use crate::error::ApiError;
use crate::model::{Cluster, ErrorBody};
use axum::Json;
use axum::extract::State;

/// What a standalone instance answers.
pub(crate) const STANDALONE: &str = "this instance is not in a cluster (start it with --cluster)";

/// The cluster's members, which member masters each datapath, and the
/// etcd endpoints with their health.
#[utoipa::path(get, path = "/api/v1/cluster", tag = "cluster", operation_id = "get_cluster",
    responses(
        (status = 200, description = "The cluster as this instance sees it", body = Cluster),
        (status = 404, description = "This instance is standalone, not in a cluster", body = ErrorBody),
    ))]
pub(super) async fn show(State(s): State<Shared>) -> Result<Json<Cluster>, ApiError> {
    let status = s.cluster().ok_or_else(|| ApiError::not_found(STANDALONE))?;
    Ok(Json(Cluster::new(&status)))
}
