//! Who may change the controller through the API.
//!
//! - The API listens on a loopback address unless a [`Token`] is
//!   configured: [`check_bind`] refuses any other address without one,
//!   at start and in `baton config check`.
//! - When a token is configured (whatever the address), every call that
//!   changes something (any method but GET, HEAD and OPTIONS) must carry
//!   `Authorization: Bearer TOKEN`: 401 without it, 403 with another
//!   (`require_token`). Reading stays open, as the issue asks: the
//!   network's state is no secret from whoever can reach the address.
//!
//! The token is compared in constant time (`subtle`), and never printed
//! (its `Debug` says `Token(..)`).

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The secret a mutating call must present.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token: printable ASCII without spaces, so that it fits an HTTP
    /// header as is (surrounding whitespace, such as a file's final
    /// newline, is dropped).
    pub fn new(s: &str) -> Result<Token, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("the API token is empty".to_string());
        }
        if !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(
                "the API token must be printable ASCII without spaces (it is sent in an HTTP header)"
                    .to_string(),
            );
        }
        Ok(Token(s.to_string()))
    }

    /// The token, to send it.
    pub fn secret(&self) -> &str {
        &self.0
    }

    fn matches(&self, presented: &str) -> bool {
        self.0.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(..)")
    }
}

/// Refuses to serve on a non-loopback address without a token.
pub fn check_bind(addr: SocketAddr, token: Option<&Token>) -> Result<(), String> {
    if addr.ip().is_loopback() || token.is_some() {
        return Ok(());
    }
    Err(format!(
        "the API would listen on {addr}, which is not a loopback address, without a token: \
         set one (api.token or api.token_file in the configuration, or --api-token-file FILE) \
         or listen on 127.0.0.1"
    ))
}

/// Whether `method` changes something.
fn mutates(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Middleware: checks the bearer token of every mutating call when a
/// token is configured.
pub(crate) async fn require_token(
    State(token): State<Option<Arc<Token>>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(token) = token else {
        return next.run(req).await;
    };
    if !mutates(req.method()) {
        return next.run(req).await;
    }
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    match presented {
        None => {
            let mut r = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "this call changes the controller and needs its token: send Authorization: Bearer TOKEN",
            )
            .into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            r
        }
        Some(p) if token.matches(p) => next.run(req).await,
        Some(_) => ApiError::new(StatusCode::FORBIDDEN, "wrong token").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_needs_no_token_and_anything_else_does() {
        let t = Token::new("s3cret").unwrap();
        for a in ["127.0.0.1:8080", "[::1]:8080", "127.0.0.2:1"] {
            assert!(check_bind(a.parse().unwrap(), None).is_ok(), "{a}");
        }
        for a in ["0.0.0.0:8080", "10.0.0.1:8080", "[::]:8080"] {
            let e = check_bind(a.parse().unwrap(), None).unwrap_err();
            assert!(
                e.contains("not a loopback address") && e.contains("token"),
                "{e}"
            );
            assert!(check_bind(a.parse().unwrap(), Some(&t)).is_ok());
        }
    }

    #[test]
    fn tokens_fit_a_header_and_are_not_printed() {
        assert_eq!(Token::new("abc\n").unwrap().secret(), "abc");
        assert!(Token::new("  ").is_err());
        assert!(Token::new("a b").is_err());
        assert!(Token::new("é").is_err());
        assert_eq!(format!("{:?}", Token::new("abc").unwrap()), "Token(..)");
        assert!(Token::new("abc").unwrap().matches("abc"));
        assert!(!Token::new("abc").unwrap().matches("abd"));
        assert!(!Token::new("abc").unwrap().matches("ab"));
    }
}
