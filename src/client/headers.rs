//! The headers every request of an endpoint carries, and the names of those that carry its
//! correlation id, built and checked once per client.
//! Credential values are marked sensitive and never appear in errors or logs.

use anyhow::{Result, anyhow};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue};

use super::messages;
use crate::plan::{Endpoint, EndpointKind, is_secret_header};
use crate::request_bodies::content_type_of;

/// Anthropic's key header and API version header (Messages API).
const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
const ANTHROPIC_VERSION: HeaderName = HeaderName::from_static("anthropic-version");

/// content-type (JSON, or a form for the upload kinds), accept, user-agent, authorization (from
/// the api key; `x-api-key` and `anthropic-version` for the Messages API), then the endpoint's
/// own headers, which win.
pub(crate) fn static_headers(endpoint: &Endpoint) -> Result<HeaderMap> {
    let mut headers = HeaderMap::with_capacity(4 + endpoint.headers.len());
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type_of(endpoint)));
    let accept = if endpoint.streaming { "text/event-stream" } else { "application/json" };
    headers.insert(ACCEPT, HeaderValue::from_static(accept));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("aiperf/", env!("CARGO_PKG_VERSION"))));
    if endpoint.kind == EndpointKind::Messages {
        headers.insert(ANTHROPIC_VERSION, HeaderValue::from_static(messages::API_VERSION));
    }
    if let Some(api_key) = &endpoint.api_key {
        let (name, value) = match endpoint.kind {
            EndpointKind::Messages => (X_API_KEY, api_key.trim().to_string()),
            _ => (AUTHORIZATION, format!("Bearer {}", api_key.trim())),
        };
        let mut value = HeaderValue::try_from(value)
            .map_err(|_| anyhow!("the api key cannot be sent in an HTTP header: it holds control characters"))?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    for (name, value) in &endpoint.headers {
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| anyhow!("endpoint header name {name:?} is not a valid HTTP header name"))?;
        let mut header_value = HeaderValue::from_str(value).map_err(|_| {
            anyhow!(
                "the value of endpoint header {name:?} is not a valid HTTP header value (it holds control characters)"
            )
        })?;
        header_value.set_sensitive(is_secret_header(name));
        headers.insert(header_name, header_value);
    }
    Ok(headers)
}

/// The headers that carry each request's correlation id, checked; a name that is not one is
/// an error that names it.
pub(crate) fn session_header_names(endpoint: &Endpoint) -> Result<Vec<HeaderName>> {
    endpoint
        .session_headers
        .iter()
        .map(|name| {
            HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| anyhow!("session header name {name:?} is not a valid HTTP header name"))
        })
        .collect()
}

/// Credentials shorter than this are not looked for in messages: they would mask common text.
const SHORTEST_MASKED_SECRET: usize = 6;

/// The credentials the endpoint's requests carry, as a server might quote them back: the api
/// key, and each secret header's value (with and without its `Bearer ` scheme).
pub(crate) fn secret_values(endpoint: &Endpoint) -> Vec<String> {
    let headers = endpoint.headers.iter().filter(|(name, _)| is_secret_header(name)).map(|(_, value)| value.trim());
    let mut secrets: Vec<String> = endpoint
        .api_key
        .iter()
        .map(|key| key.trim())
        .chain(headers)
        .flat_map(|value| [Some(value), value.split_once(' ').map(|(_, credential)| credential.trim())])
        .flatten()
        .filter(|secret| secret.len() >= SHORTEST_MASKED_SECRET)
        .map(str::to_owned)
        .collect();
    // The longest first, so that a value is masked whole before a part of it is looked for.
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.dedup();
    secrets
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn the_credentials_to_mask_are_the_key_and_secret_headers_values() {
        let with =
            endpoint(true, Some(" sk-123456 "), &[("Authorization", "Bearer tok-abcdef"), ("X-Team", "infra-team")]);
        assert_eq!(secret_values(&with), ["Bearer tok-abcdef", "tok-abcdef", "sk-123456"]);
        assert!(secret_values(&endpoint(true, Some("abc"), &[])).is_empty(), "too short to look for");
    }

    fn endpoint(streaming: bool, api_key: Option<&str>, headers: &[(&str, &str)]) -> Endpoint {
        Endpoint {
            api_key: api_key.map(str::to_owned),
            headers: headers
                .iter()
                .map(|&(name, value)| (name.to_owned(), value.to_owned()))
                .collect::<BTreeMap<_, _>>(),
            ..Endpoint::new("http://127.0.0.1:8000", "m", EndpointKind::Chat, streaming)
        }
    }

    #[test]
    fn defaults_key_and_extra_headers_are_all_present() {
        let headers = static_headers(&endpoint(true, Some("sk-1"), &[("X-Team", "infra")])).unwrap();
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert_eq!(headers[ACCEPT], "text/event-stream");
        assert!(headers[USER_AGENT].to_str().unwrap().starts_with("aiperf/"));
        assert_eq!(headers[AUTHORIZATION], "Bearer sk-1");
        assert!(headers[AUTHORIZATION].is_sensitive());
        assert_eq!(headers["x-team"], "infra");
        let headers = static_headers(&endpoint(false, None, &[])).unwrap();
        assert_eq!(headers[ACCEPT], "application/json");
        assert!(!headers.contains_key(AUTHORIZATION));
    }

    #[test]
    fn the_messages_api_gets_its_key_header_and_version() {
        let keyed = Endpoint { kind: EndpointKind::Messages, ..endpoint(true, Some("sk-ant"), &[]) };
        let headers = static_headers(&keyed).unwrap();
        assert_eq!(headers["x-api-key"], "sk-ant");
        assert!(headers["x-api-key"].is_sensitive());
        assert_eq!(headers["anthropic-version"], messages::API_VERSION);
        assert!(!headers.contains_key(AUTHORIZATION));
        let pinned =
            Endpoint { kind: EndpointKind::Messages, ..endpoint(true, None, &[("anthropic-version", "2099-01-01")]) };
        assert_eq!(static_headers(&pinned).unwrap()["anthropic-version"], "2099-01-01");
    }

    #[test]
    fn endpoint_headers_override_the_defaults() {
        let headers = static_headers(&endpoint(false, None, &[("Accept", "*/*")])).unwrap();
        assert_eq!(headers[ACCEPT], "*/*");
    }

    #[test]
    fn invalid_headers_are_errors_that_do_not_leak_values() {
        let error = static_headers(&endpoint(false, None, &[("bad name", "x")])).unwrap_err().to_string();
        assert!(error.contains("\"bad name\""), "{error}");
        let error = static_headers(&endpoint(false, None, &[("X-Api-Key", "sec\nret")])).unwrap_err().to_string();
        assert!(error.contains("X-Api-Key") && !error.contains("sec"), "{error}");
        let error = static_headers(&endpoint(false, Some("sk-sec\u{7f}ret"), &[])).unwrap_err().to_string();
        assert!(!error.contains("secret"), "{error}");
    }
}
