//! The request uri of an endpoint: its base url checked (http or https, with a host) and
//! joined with the endpoint kind's path without doubling what the url already has.

use anyhow::{Result, anyhow};
use http::Uri;
use http::uri::Scheme;

/// Why `url` cannot be used when it carries credentials (`user:password@host`): they would go
/// out in the Host header and into every artifact that names the url; the message shows the
/// url with them masked.
pub(crate) fn credentials_problem(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (_credentials, host) = rest[..authority_end].rsplit_once('@')?;
    Some(format!(
        "endpoint url {scheme}://{}@{host}{}: credentials in a url are not sent; give the key as the endpoint's api_key (--api-key) or an Authorization header",
        crate::plan::REDACTED,
        &rest[authority_end..]
    ))
}

/// `base_url` + `endpoint_path`, e.g. `http://host:8000` → `http://host:8000/v1/chat/completions`.
pub(crate) fn request_uri(base_url: &str, endpoint_path: &str) -> Result<Uri> {
    if let Some(problem) = credentials_problem(base_url) {
        return Err(anyhow!("{problem}"));
    }
    let invalid = |why: String| anyhow!("invalid endpoint url {base_url:?}: {why}");
    let base: Uri = base_url.trim().parse().map_err(|error| invalid(format!("{error}")))?;
    let scheme = match base.scheme_str() {
        Some(scheme) if scheme.eq_ignore_ascii_case("http") => Scheme::HTTP,
        Some(scheme) if scheme.eq_ignore_ascii_case("https") => Scheme::HTTPS,
        Some(other) => return Err(invalid(format!("scheme {other:?} is not http or https"))),
        None => return Err(invalid("expected http://host[:port] or https://host[:port]".to_owned())),
    };
    let authority = base
        .authority()
        .filter(|authority| !authority.host().is_empty())
        .ok_or_else(|| invalid("no host".to_owned()))?;
    let path = join_paths(base.path().trim_end_matches('/'), endpoint_path);
    let path_and_query = match base.query() {
        Some(query) => format!("{path}?{query}"),
        None => path,
    };
    Uri::builder()
        .scheme(scheme)
        .authority(authority.clone())
        .path_and_query(path_and_query)
        .build()
        .map_err(|error| invalid(format!("{error}")))
}

/// Appends `endpoint_path` to `base_path`, minus the longest leading run of its segments that
/// `base_path` already ends with (`/v1` + `/v1/chat/completions` → `/v1/chat/completions`).
fn join_paths(base_path: &str, endpoint_path: &str) -> String {
    let segment_ends = endpoint_path
        .match_indices('/')
        .map(|(slash, _)| slash)
        .filter(|&slash| slash > 0)
        .chain([endpoint_path.len()]);
    let overlap = segment_ends.filter(|&end| base_path.ends_with(&endpoint_path[..end])).max().unwrap_or(0);
    format!("{base_path}{}", &endpoint_path[overlap..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    fn chat_uri(base_url: &str) -> String {
        request_uri(base_url, EndpointKind::Chat.path()).unwrap().to_string()
    }

    #[test]
    fn the_kind_path_is_appended_once() {
        assert_eq!(chat_uri("http://127.0.0.1:8000"), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(chat_uri("http://127.0.0.1:8000/"), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(chat_uri("http://host/v1/chat/completions"), "http://host/v1/chat/completions");
        assert_eq!(chat_uri("http://host/v1/chat/completions//"), "http://host/v1/chat/completions");
        assert_eq!(chat_uri("https://host/v1"), "https://host/v1/chat/completions");
        assert_eq!(chat_uri("https://host/proxy/"), "https://host/proxy/v1/chat/completions");
        assert_eq!(chat_uri("https://host/api/xv1"), "https://host/api/xv1/v1/chat/completions");
        assert_eq!(
            chat_uri("HTTPS://host/deploy?api-version=2"),
            "https://host/deploy/v1/chat/completions?api-version=2"
        );
        let completions = request_uri("http://host:1/v1/completions/", EndpointKind::Completions.path()).unwrap();
        assert_eq!(completions.to_string(), "http://host:1/v1/completions");
    }

    #[test]
    fn credentials_in_a_url_are_refused_and_never_shown() {
        for url in ["http://user:sk-SECRET@127.0.0.1:8000", "https://sk-SECRET@host/v1?x=1"] {
            let error = request_uri(url, EndpointKind::Chat.path()).expect_err(url).to_string();
            assert!(!error.contains("sk-SECRET"), "{error}");
            assert!(error.contains("credentials in a url are not sent"), "{error}");
        }
        assert!(credentials_problem("https://host/v1/path@x").is_none(), "an @ in the path is no credential");
        assert_eq!(
            credentials_problem("http://u:p@h:1/v1").as_deref().and_then(|p| p.split(':').nth(1)),
            Some("//<redacted>@h")
        );
    }

    #[test]
    fn bad_urls_are_errors_that_name_the_url() {
        for bad in ["mock", "ftp://host/", "http://", "localhost:8000", "http://ho st", ""] {
            let error = request_uri(bad, EndpointKind::Chat.path()).expect_err(bad).to_string();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }
}
