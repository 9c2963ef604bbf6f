//! Request header names as the HTTP/1.1 client writes them and the raw export records them:
//! each word capitalised, `ID` and `API` in capitals (`Content-Type`, `X-Request-ID`,
//! `X-Correlation-ID`), as AIPerf's client sends them. HTTP/2 sends names lower-case.

use std::borrow::Cow;

use http::HeaderName;

/// `name` as written on an HTTP/1.1 request.
pub fn wire_name(name: &HeaderName) -> Cow<'static, str> {
    let lower = name.as_str();
    let known = match lower {
        "host" => "Host",
        "content-type" => "Content-Type",
        "content-length" => "Content-Length",
        "accept" => "Accept",
        "user-agent" => "User-Agent",
        "authorization" => "Authorization",
        "x-request-id" => "X-Request-ID",
        "x-correlation-id" => "X-Correlation-ID",
        _ => return Cow::Owned(capitalised(lower)),
    };
    Cow::Borrowed(known)
}

fn capitalised(lower: &str) -> String {
    let words: Vec<String> = lower
        .split('-')
        .map(|word| match word {
            "id" | "api" => word.to_ascii_uppercase(),
            _ => {
                let mut chars = word.chars();
                chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
            }
        })
        .collect();
    words.join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_written_as_aiperf_s_client_writes_them() {
        let name = |text: &str| wire_name(&HeaderName::from_bytes(text.as_bytes()).unwrap()).into_owned();
        assert_eq!(name("content-type"), "Content-Type");
        assert_eq!(name("X-Request-ID"), "X-Request-ID");
        assert_eq!(name("x-session-affinity"), "X-Session-Affinity");
        assert_eq!(name("x-session-id"), "X-Session-ID");
        assert_eq!(name("x-api-key"), "X-API-Key");
        assert_eq!(name("anthropic-version"), "Anthropic-Version");
    }
}
