//! Where an endpoint's requests go when it has several base urls (`UrlStrategy`) or several
//! models (`ModelSelection`), and the headers that carry a conversation's id on every turn so
//! that a router keeps it on one worker.

use serde::{Deserialize, Serialize};

/// How requests are spread over an endpoint's urls.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UrlStrategy {
    /// AIPerf's: each new conversation (each request outside conversations) takes the next url
    /// in turn, over the whole run; a conversation's later turns stay on its url.
    #[default]
    RoundRobin,
    /// Every request (each turn too) goes to the url with the fewest requests in flight.
    LeastInFlight,
    /// A conversation goes to the url its number hashes to, the same in every run, as a
    /// KV-aware router keeps a session on one worker.
    Session,
}

impl UrlStrategy {
    pub const NAMES: &'static str = "round_robin, least_in_flight or session";

    pub fn as_str(self) -> &'static str {
        match self {
            UrlStrategy::RoundRobin => "round_robin",
            UrlStrategy::LeastInFlight => "least_in_flight",
            UrlStrategy::Session => "session",
        }
    }

    /// By name, with `-` or `_` between words.
    pub fn named(name: &str) -> Option<Self> {
        match name.trim().replace('-', "_").as_str() {
            "round_robin" => Some(UrlStrategy::RoundRobin),
            "least_in_flight" => Some(UrlStrategy::LeastInFlight),
            "session" => Some(UrlStrategy::Session),
            _ => None,
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Which of an endpoint's models each request of the dataset names (AIPerf's
/// `--model-selection-strategy`), chosen once, as the dataset is built: a conversation's turns
/// keep theirs however often it is sent.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ModelSelection {
    /// The n-th request of the dataset (each turn counted) takes model n mod the model count.
    #[default]
    RoundRobin,
    /// Each request takes a model uniformly at random, from the dataset's seed.
    Random,
}

impl ModelSelection {
    pub const NAMES: &'static str = "round_robin or random";

    pub fn as_str(self) -> &'static str {
        match self {
            ModelSelection::RoundRobin => "round_robin",
            ModelSelection::Random => "random",
        }
    }

    /// By name, with `-` or `_` between words.
    pub fn named(name: &str) -> Option<Self> {
        match name.trim().replace('-', "_").as_str() {
            "round_robin" => Some(ModelSelection::RoundRobin),
            "random" => Some(ModelSelection::Random),
            _ => None,
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// AIPerf's header for a request's correlation id (a conversation's, shared by its turns).
pub const CORRELATION_HEADER: &str = "X-Correlation-ID";

/// AIPerf's environment switches that add a header carrying the correlation id, each with its
/// header and whether it is on when the variable is unset.
const SESSION_HEADER_SWITCHES: [(&str, &str, bool); 4] = [
    ("AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID", "X-Session-ID", false),
    ("AIPERF_HTTP_X_SESSION_AFFINITY_FROM_CORRELATION_ID", "X-Session-Affinity", true),
    ("AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID", "X-SMG-Routing-Key", false),
    ("AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID", "X-Dynamo-Session-ID", false),
];

/// The headers AIPerf sends with every request's correlation id when no switch is set.
pub fn default_session_headers() -> Vec<String> {
    session_headers_with(None, |_| None).unwrap_or_default()
}

/// The headers AIPerf 0.13 sends with the correlation id: `X-Correlation-ID` (or `rename`,
/// its `--session-header`), then each header whose `AIPERF_HTTP_X_…_FROM_CORRELATION_ID`
/// switch is on in this process's environment (`X-Session-Affinity` unless switched off).
pub fn aiperf_session_headers(rename: Option<&str>) -> Result<Vec<String>, String> {
    session_headers_with(rename, |variable| std::env::var(variable).ok())
}

fn session_headers_with(rename: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Result<Vec<String>, String> {
    let correlation = rename.map(str::trim).filter(|name| !name.is_empty()).unwrap_or(CORRELATION_HEADER);
    check_header_name(correlation)?;
    let mut headers = vec![correlation.to_string()];
    for (variable, header, default) in SESSION_HEADER_SWITCHES {
        let on = match env(variable) {
            Some(value) => env_switch(variable, &value)?,
            None => default,
        };
        if on && !headers.iter().any(|name| name.eq_ignore_ascii_case(header)) {
            headers.push(header.to_string());
        }
    }
    Ok(headers)
}

/// Whether `name` can be sent as a header's name.
pub fn check_header_name(name: &str) -> Result<(), String> {
    match http::HeaderName::from_bytes(name.as_bytes()) {
        Ok(_) => Ok(()),
        Err(_) => Err(format!("session header {name:?} is not a valid HTTP header name")),
    }
}

/// The boolean environment variable `variable` set to `value`, as pydantic reads one; an
/// error naming it when it is not one.
pub fn env_switch(variable: &str, value: &str) -> Result<bool, String> {
    switch_value(value).ok_or_else(|| {
        format!("environment variable {variable}: `{value}` is not a boolean (true/false, 1/0, yes/no, on/off)")
    })
}

/// A boolean as pydantic reads one from the environment.
fn switch_value(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "t" | "yes" | "y" | "on" => Some(true),
        "0" | "false" | "f" | "no" | "n" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_are_read_by_name_either_spelling() {
        assert_eq!(UrlStrategy::named("round-robin"), Some(UrlStrategy::RoundRobin));
        assert_eq!(UrlStrategy::named("least_in_flight"), Some(UrlStrategy::LeastInFlight));
        assert_eq!(UrlStrategy::named("session"), Some(UrlStrategy::Session));
        assert_eq!(UrlStrategy::named("random"), None);
        for strategy in [UrlStrategy::RoundRobin, UrlStrategy::LeastInFlight, UrlStrategy::Session] {
            assert_eq!(UrlStrategy::named(strategy.as_str()), Some(strategy));
        }
    }

    #[test]
    fn session_headers_follow_aiperfs_switches_and_rename() {
        assert_eq!(default_session_headers(), ["X-Correlation-ID", "X-Session-Affinity"]);
        let env = |variable: &str| match variable {
            "AIPERF_HTTP_X_SESSION_AFFINITY_FROM_CORRELATION_ID" => Some("false".to_string()),
            "AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID" => Some("1".to_string()),
            "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID" => Some("YES".to_string()),
            _ => None,
        };
        assert_eq!(
            session_headers_with(Some("X-Session-ID"), env).unwrap(),
            ["X-Session-ID", "X-SMG-Routing-Key", "X-Dynamo-Session-ID"],
            "renamed, affinity off, and X-Session-ID is not sent twice"
        );
        assert!(session_headers_with(Some("X Session"), |_| None).unwrap_err().contains("\"X Session\""));
        let bad = session_headers_with(None, |_| Some("maybe".to_string())).unwrap_err();
        assert!(bad.contains("AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID") && bad.contains("maybe"), "{bad}");
    }
}
