//! [`ApiError`]: a failed request as the API answers it, an HTTP status
//! and a JSON body `{"error": "..."}` that says what was wrong.

use crate::model::ErrorBody;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use baton_runtime::control::ControlError;
use baton_runtime::requests::RequestError;

/// A request that failed: its status and what to tell the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What was wrong.
    pub message: String,
}

impl ApiError {
    /// A 400: the request itself is wrong.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 404: what it names does not exist.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// A failure with this status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl From<ControlError> for ApiError {
    fn from(e: ControlError) -> ApiError {
        let status = match &e {
            ControlError::UnknownSwitch(_) | ControlError::UnknownApp(_) => StatusCode::NOT_FOUND,
            ControlError::AlreadyThere(_) => StatusCode::CONFLICT,
            ControlError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ControlError::Switch(RequestError::Refused(_)) => StatusCode::UNPROCESSABLE_ENTITY,
            ControlError::Switch(RequestError::TimedOut) => StatusCode::GATEWAY_TIMEOUT,
            ControlError::Switch(RequestError::Gone) => StatusCode::NOT_FOUND,
            ControlError::Switch(RequestError::WrongVersion) => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError::new(status, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response()
    }
}
