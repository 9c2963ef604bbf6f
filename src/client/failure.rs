//! Turning failures into `RecordError`s: one constructor per error kind, the root cause of a
//! connection failure, and the message inside an error body.

use std::error::Error;
use std::io;
use std::time::Duration;

use http::StatusCode;
use serde_json::Value;

use crate::record::RecordError;

/// How much of an error body becomes the message when it is not a JSON error.
const BODY_PREVIEW_CHARS: usize = 500;
/// How much of an unparseable payload is quoted in an `invalid_response` message.
const PAYLOAD_PREVIEW_CHARS: usize = 200;

fn record_error(kind: &str, code: Option<u16>, message: String) -> RecordError {
    RecordError { code, kind: kind.to_owned(), message }
}

/// The request never got a response: `<root cause> (<uri>)`.
pub(crate) fn connection_error(error: &(dyn Error + 'static), uri: &str) -> RecordError {
    record_error("connection_error", None, format!("{} ({uri})", root_cause(error)))
}

/// True when a request on a reused keep-alive connection failed because the server had
/// already closed it (before any response): such a request is sent again on a new connection.
pub(crate) fn is_stale_connection(error: &io::Error) -> bool {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<h2::Error>()) {
        Some(error) => super::http2::is_stale(error),
        None => super::http1::is_stale(error),
    }
}

/// No connection could be made: `<why> (<uri>)`.
pub(crate) fn connect_failed(why: String, uri: &str) -> RecordError {
    record_error("connection_error", None, format!("{why} ({uri})"))
}

/// A non-2xx answer: its type is the status's reason phrase (`Too Many Requests`), as AIPerf
/// 0.13 writes it, so what groups its errors groups these.
pub(crate) fn http_error(status: StatusCode, message: String) -> RecordError {
    record_error(status.canonical_reason().unwrap_or("HTTP Error"), Some(status.as_u16()), message)
}

/// A 2xx answer whose body reports an error.
pub(crate) fn response_error(status: StatusCode, message: String) -> RecordError {
    record_error("response_error", Some(status.as_u16()), message)
}

/// What an error answer's body says (`empty body` when it says nothing).
pub(crate) fn error_body_message(body: &[u8]) -> String {
    if body.iter().all(u8::is_ascii_whitespace) { "empty body".to_string() } else { message_from_body(body) }
}

/// The server reported an error inside the stream, or the stream broke off.
pub(crate) fn stream_error(message: String) -> RecordError {
    record_error("stream_error", None, message)
}

/// A payload that is not the JSON it should be; `what` names where it came from.
pub(crate) fn invalid_response(what: &str, payload: &[u8]) -> RecordError {
    record_error(
        "invalid_response",
        None,
        format!("invalid JSON in {what}: {}", preview(payload, PAYLOAD_PREVIEW_CHARS)),
    )
}

/// The phase's request cancellation ended it `after` it was sent: AIPerf's error, word for word
/// (its type, its 499 and its message), as the flag that asks for it is AIPerf's.
pub(crate) fn cancelled_after(after: Duration) -> RecordError {
    record_error(
        "RequestCancellationError",
        Some(499),
        format!("Request cancelled {:.3}s after being sent", after.as_secs_f64()),
    )
}

/// The whole request took longer than `limit`: `TimeoutError`, the type AIPerf 0.13 writes for
/// its request timeout (the message says which wait it ended).
pub(crate) fn timeout(limit: Duration, headers_arrived: bool) -> RecordError {
    let phase = if headers_arrived { "while reading the response" } else { "waiting for the response headers" };
    record_error("TimeoutError", None, format!("request timed out after {limit:?} {phase}"))
}

/// One SSE event grew past the endpoint's `max_event_bytes`.
pub(crate) fn event_too_large(limit: usize) -> RecordError {
    too_large("one SSE event", "max_event_bytes", limit)
}

/// The response body grew past the endpoint's `max_response_bytes`.
pub(crate) fn response_too_large(limit: usize) -> RecordError {
    too_large("the response body", "max_response_bytes", limit)
}

/// `response_too_large`: what passed which cap, and how to raise it.
fn too_large(what: &str, cap: &str, limit: usize) -> RecordError {
    let message = format!(
        "{what} passed {cap} ({limit} bytes); the connection was dropped. \
         Raise the cap with endpoint(#{{ limits: #{{ {cap}: <bytes> }} }})"
    );
    record_error("response_too_large", None, message)
}

/// The request could not be put together (e.g. an `x-request-id` that is not a header value).
pub(crate) fn invalid_request(message: String) -> RecordError {
    record_error("invalid_request", None, message)
}

/// The innermost cause of an error chain, with common socket failures named plainly.
pub(crate) fn root_cause(error: &(dyn Error + 'static)) -> String {
    let mut innermost = error;
    let mut current = Some(error);
    while let Some(cause) = current {
        if let Some(phrase) = cause.downcast_ref::<io::Error>().and_then(|io_error| socket_failure(io_error.kind())) {
            return phrase.to_owned();
        }
        innermost = cause;
        // An io::Error's `source()` skips the error it wraps, so step into that one directly.
        current = match cause.downcast_ref::<io::Error>().and_then(io::Error::get_ref) {
            Some(wrapped) => Some(wrapped),
            None => cause.source(),
        };
    }
    innermost.to_string()
}

fn socket_failure(kind: io::ErrorKind) -> Option<&'static str> {
    match kind {
        io::ErrorKind::ConnectionRefused => Some("connection refused"),
        io::ErrorKind::ConnectionReset => Some("connection reset by peer"),
        io::ErrorKind::ConnectionAborted => Some("connection aborted"),
        io::ErrorKind::TimedOut => Some("connection timed out"),
        io::ErrorKind::AddrNotAvailable => Some("address not available"),
        io::ErrorKind::HostUnreachable => Some("host unreachable"),
        io::ErrorKind::NetworkUnreachable => Some("network unreachable"),
        _ => None,
    }
}

/// The message of an error body: `error.message` (or similar) when it is JSON, else its text.
pub(crate) fn message_from_body(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => error_message(&value),
        Err(_) => preview(body, BODY_PREVIEW_CHARS),
    }
}

/// The human part of a JSON error: a string itself, or the `message`/`detail` of an object,
/// looking inside an `error` member first.
pub(crate) fn error_message(value: &Value) -> String {
    match value {
        Value::String(message) => message.clone(),
        Value::Object(members) => {
            if let Some(inner) = members.get("error").filter(|inner| !inner.is_null()) {
                return error_message(inner);
            }
            match members.get("message").or_else(|| members.get("detail")) {
                Some(Value::String(message)) => message.clone(),
                _ => preview(value.to_string().as_bytes(), BODY_PREVIEW_CHARS),
            }
        }
        other => preview(other.to_string().as_bytes(), BODY_PREVIEW_CHARS),
    }
}

/// The first `max_chars` characters of `bytes` (lossy UTF-8, trimmed), `…` marking a cut.
fn preview(bytes: &[u8], max_chars: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_error_bodies_give_their_message() {
        assert_eq!(
            message_from_body(br#"{"error":{"message":"model is overloaded","type":"server_error","code":503}}"#),
            "model is overloaded"
        );
        assert_eq!(message_from_body(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(message_from_body(br#"{"object":"error","message":"bad prompt"}"#), "bad prompt");
        assert_eq!(error_message(&json!("plain")), "plain");
    }

    #[test]
    fn other_bodies_are_cut_to_a_preview() {
        let long = "x".repeat(2000);
        let message = message_from_body(long.as_bytes());
        assert_eq!(message.chars().count(), BODY_PREVIEW_CHARS + 1);
        assert!(message.ends_with('…'));
        assert_eq!(message_from_body(b"  upstream timeout\n"), "upstream timeout");
    }

    /// AIPerf 0.13 writes a 401 from `aiperf mock --api-key` as `{"code": 401, "type":
    /// "Unauthorized", ..}`.
    #[test]
    fn an_error_status_is_typed_by_its_reason_phrase_as_aiperf_types_it() {
        let error = http_error(StatusCode::BAD_GATEWAY, error_body_message(b" \n"));
        assert_eq!((error.code, error.kind.as_str(), error.message.as_str()), (Some(502), "Bad Gateway", "empty body"));
        assert_eq!(http_error(StatusCode::UNAUTHORIZED, "no key".into()).kind, "Unauthorized");
        let unnamed = StatusCode::from_u16(599).expect("a status");
        assert_eq!(http_error(unnamed, "odd".into()).kind, "HTTP Error");
        assert_eq!(response_error(StatusCode::OK, "overloaded".into()).kind, "response_error");
    }

    #[test]
    fn a_response_too_large_names_the_cap_and_how_to_raise_it() {
        let error = event_too_large(1024);
        assert_eq!(error.kind, "response_too_large");
        assert!(error.message.starts_with("one SSE event passed max_event_bytes (1024 bytes)"), "{}", error.message);
        assert!(error.message.contains("limits: #{ max_event_bytes: <bytes> }"), "{}", error.message);
        assert!(response_too_large(7).message.contains("max_response_bytes (7 bytes)"));
    }

    #[test]
    fn root_cause_names_socket_failures_anywhere_in_the_chain() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        let wrapped = io::Error::other(refused);
        assert_eq!(root_cause(&wrapped), "connection refused");
        let other = io::Error::other("dns lookup failed");
        assert_eq!(root_cause(&other), "dns lookup failed");
    }
}
