//! [`ApiError`]: a failed request as the API answers it, an HTTP status
//! and a JSON body `{"error": "..."}` that says what was wrong.

use crate::model::ErrorBody;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use baton_openflow::neutral::Message;
use baton_openflow::{v10, v13};
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
            ControlError::NotMaster(_) => StatusCode::CONFLICT,
        };
        let message = match &e {
            ControlError::Switch(RequestError::Refused(m)) => refusal(m),
            e => e.to_string(),
        };
        ApiError::new(status, message)
    }
}

/// What an OFPT_ERROR says, by the names of its version's type
/// (1.0.0 §5.4.4, 1.3.5 §7.4.4).
fn refusal(m: &Message) -> String {
    const V10: [&str; 6] = [
        "HELLO_FAILED",
        "BAD_REQUEST",
        "BAD_ACTION",
        "FLOW_MOD_FAILED",
        "PORT_MOD_FAILED",
        "QUEUE_OP_FAILED",
    ];
    const V13: [&str; 14] = [
        "HELLO_FAILED",
        "BAD_REQUEST",
        "BAD_ACTION",
        "BAD_INSTRUCTION",
        "BAD_MATCH",
        "FLOW_MOD_FAILED",
        "GROUP_MOD_FAILED",
        "PORT_MOD_FAILED",
        "TABLE_MOD_FAILED",
        "QUEUE_OP_FAILED",
        "SWITCH_CONFIG_FAILED",
        "ROLE_REQUEST_FAILED",
        "METER_MOD_FAILED",
        "TABLE_FEATURES_FAILED",
    ];
    let (names, t, code): (&[&str], u16, u16) = match m {
        Message::V10(v10::Message::Error(e)) => (&V10, e.error_type, e.code),
        Message::V13(v13::Message::Error(v13::ErrorMsg::Standard {
            error_type, code, ..
        })) => (&V13, u16::from(*error_type), *code),
        other => return format!("the switch refused it: {other:?}"),
    };
    match names.get(usize::from(t)) {
        Some(name) => format!("the switch refused it: OFPET_{name}, code {code}"),
        None => format!("the switch refused it: error type {t}, code {code}"),
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
