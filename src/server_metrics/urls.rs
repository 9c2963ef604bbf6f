//! Metrics endpoint URLs: the default `<base>/metrics` of the inference URL, user URLs
//! completed with a scheme and `/metrics`, and the TRT-LLM `/prometheus/metrics` alternative.

/// `host:port` → `http://host:port/metrics`; a URL with a path is kept as given.
pub fn normalize(url: &str) -> String {
    let url = url.trim();
    let with_scheme = if url.contains("://") { url.to_string() } else { format!("http://{url}") };
    let after_scheme = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
    match after_scheme.find('/') {
        Some(at) if at + 1 < after_scheme.len() => with_scheme,
        _ => format!("{}/metrics", with_scheme.trim_end_matches('/')),
    }
}

/// The metrics URL of an inference server's base URL.
pub fn default_for(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/metrics")
}

/// Where TRT-LLM serves Prometheus text when `/metrics` answers JSON: only for URLs that
/// end in `/metrics` and are not already `/prometheus/metrics`.
pub fn prometheus_alternative(url: &str) -> Option<String> {
    let base = url.strip_suffix("/metrics")?;
    if base.ends_with("/prometheus") {
        return None;
    }
    Some(format!("{base}/prometheus/metrics"))
}

/// `host:port` of a URL, as the CSV's Endpoint column shows it.
pub fn host_port(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_completed_and_alternatives_found() {
        assert_eq!(normalize("localhost:8081"), "http://localhost:8081/metrics");
        assert_eq!(normalize("http://node1:8081/"), "http://node1:8081/metrics");
        assert_eq!(normalize("https://h/custom/path"), "https://h/custom/path");
        assert_eq!(default_for("http://127.0.0.1:8000"), "http://127.0.0.1:8000/metrics");
        assert_eq!(default_for("http://127.0.0.1:8000/v1/"), "http://127.0.0.1:8000/metrics");
        assert_eq!(prometheus_alternative("http://h/metrics").as_deref(), Some("http://h/prometheus/metrics"));
        assert_eq!(prometheus_alternative("http://h/v1/metrics").as_deref(), Some("http://h/v1/prometheus/metrics"));
        assert_eq!(prometheus_alternative("http://h/prometheus/metrics"), None);
        assert_eq!(prometheus_alternative("http://h/stats"), None);
        assert_eq!(host_port("http://127.0.0.1:8000/metrics"), "127.0.0.1:8000");
    }
}
