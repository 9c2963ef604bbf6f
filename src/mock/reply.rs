//! Small response builders: a JSON or text body with its content type, and OpenAI-style
//! error replies (`{"error":{"message","type","code"}}`).

use http::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};

use super::body::MockBody;

pub fn with_body(status: StatusCode, content_type: &'static str, body: MockBody) -> Response<MockBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub fn json(status: StatusCode, body: String) -> Response<MockBody> {
    with_body(status, "application/json", MockBody::whole(body))
}

pub fn error(status: StatusCode, error_type: &str, code: &str, message: &str) -> Response<MockBody> {
    let body = serde_json::json!({"error": {"message": message, "type": error_type, "code": code}});
    json(status, body.to_string())
}

pub fn invalid_request(message: &str) -> Response<MockBody> {
    error(StatusCode::BAD_REQUEST, "invalid_request_error", "invalid_request", message)
}

pub fn method_not_allowed(method: &http::Method, path: &str, allowed: &'static str) -> Response<MockBody> {
    let message = format!("method {method} is not allowed on {path}; use {allowed}");
    let mut response = error(StatusCode::METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed", &message);
    response.headers_mut().insert(ALLOW, HeaderValue::from_static(allowed));
    response
}
