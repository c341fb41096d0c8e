//! Pyroscope push's Connect terms, which the guard needs as well as the handler (`push`): the
//! call's path, and an error answered as Connect's error JSON.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::Error;

/// The path of the push call.
pub const PATH: &str = "/push.v1.PusherService/Push";

/// An error as Connect's error JSON, with the HTTP status Connect pairs with its code (also
/// the guard's refusals of this path, so a Connect client shows why it was refused).
pub fn connect_error(e: &Error) -> Response {
    let code = match e.status() {
        StatusCode::BAD_REQUEST => "invalid_argument",
        StatusCode::PAYLOAD_TOO_LARGE => "resource_exhausted",
        StatusCode::UNAUTHORIZED => "unauthenticated",
        StatusCode::FORBIDDEN => "permission_denied",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        _ => "internal",
    };
    let body = serde_json::json!({ "code": code, "message": e.description() });
    let mut response = (e.status(), body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(seconds) = e.retry_after() {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// An [`Error`] answered in Connect's terms ([`connect_error`]): what the push handler
/// returns, so its steps use `?` as every other handler's do.
#[derive(Debug)]
pub struct ConnectError(pub Error);

impl From<Error> for ConnectError {
    fn from(e: Error) -> ConnectError {
        ConnectError(e)
    }
}

/// A blocking task that did not finish: `internal`, as [`Error`] has it.
impl From<crate::blocking::TaskFailed> for ConnectError {
    fn from(e: crate::blocking::TaskFailed) -> ConnectError {
        ConnectError(e.into())
    }
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        connect_error(&self.0)
    }
}
