//! AIPerf's `runtime` block: `api_port` / `api_host` (`--api-port`, `--api-host`) are the
//! address of the run's live server, which answers AIPerf's API routes beside the Prometheus
//! `/metrics` (`live/api.rs`; the host defaults to AIPerf's, `AIPERF_API_SERVER_HOST` or
//! 127.0.0.1); its other keys tune AIPerf's own processes and earn a note each, as their flags do.

use std::net::{SocketAddr, ToSocketAddrs};

use serde_json::Value;

use super::values::{opt_str, opt_u64};
use crate::config::ConfigError;

const HOST_VARIABLE: &str = "AIPERF_API_SERVER_HOST";
const DEFAULT_HOST: &str = "127.0.0.1";

/// The `runtime` keys of AIPerf's that change nothing here, and why (their flags' notes).
const WITHOUT_EFFECT: &[(&str, &str)] = &[
    ("ui", "the console shows a progress bar and the metrics table"),
    ("workers", "requests are sent by one async process, not worker processes"),
    ("workers_min", "requests are sent by one async process, not worker processes"),
    ("workers_per_pod", "requests are sent by one async process, not worker processes"),
    ("record_processors", "one process records every request"),
    ("record_processors_per_pod", "one process records every request"),
    ("stats_interval", "progress is drawn by one process"),
    ("communication", "there is no service mesh: one process does the work"),
    ("service_run_type", "there is no service mesh: one process does the work"),
    ("dataset_api_base_url", "there is no service mesh: one process does the work"),
];

/// A note for each key of `benchmark.runtime` that changes nothing here.
pub fn notes(benchmark: &Value) -> Vec<String> {
    let Some(runtime) = benchmark.get("runtime").and_then(Value::as_object) else { return Vec::new() };
    WITHOUT_EFFECT
        .iter()
        .filter(|(key, _)| runtime.get(*key).is_some_and(|value| !value.is_null()))
        .map(|(key, why)| format!("note: runtime.{key} has no effect here: {why}"))
        .collect()
}

/// The address `benchmark.runtime` asks the API service to listen on, if any.
pub fn address(benchmark: &Value, env: impl Fn(&str) -> Option<String>) -> Result<Option<SocketAddr>, ConfigError> {
    let runtime = benchmark.get("runtime").unwrap_or(&Value::Null);
    let port = opt_u64(runtime, "api_port", "runtime.api_port")?;
    let host = opt_str(runtime, "api_host", "runtime.api_host")?;
    let Some(port) = port else {
        return match host {
            Some(_) => Err(ConfigError::new("runtime.api_host (--api-host) requires runtime.api_port (--api-port)")),
            None => Ok(None),
        };
    };
    let port = u16::try_from(port)
        .ok()
        .filter(|port| *port > 0)
        .ok_or_else(|| ConfigError::new(format!("runtime.api_port (--api-port) is from 1 to 65535, got {port}")))?;
    let host = host.map(str::to_string).or_else(|| env(HOST_VARIABLE)).unwrap_or_else(|| DEFAULT_HOST.into());
    // An IPv6 literal comes bare (`::1`), as AIPerf takes it.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let resolved = (bare, port).to_socket_addrs().ok().and_then(|mut addresses| addresses.next());
    resolved.map(Some).ok_or_else(|| {
        ConfigError::new(format!("runtime.api_host (--api-host) `{host}` is not an address this machine can listen on"))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_port_alone_listens_on_aiperfs_default_host() {
        let address = address(&json!({"runtime": {"api_port": 9090}}), no_env).unwrap();
        assert_eq!(address, Some("127.0.0.1:9090".parse().unwrap()));
        let from_env = address_with_host_variable("0.0.0.0");
        assert_eq!(from_env, Some("0.0.0.0:9090".parse().unwrap()));
    }

    fn address_with_host_variable(host: &str) -> Option<SocketAddr> {
        let host = host.to_string();
        address(&json!({"runtime": {"api_port": 9090}}), move |name| (name == HOST_VARIABLE).then(|| host.clone()))
            .unwrap()
    }

    #[test]
    fn a_host_is_an_ip_literal_or_a_name() {
        let v6 = address(&json!({"runtime": {"api_port": 1, "api_host": "::1"}}), no_env).unwrap();
        assert_eq!(v6, Some("[::1]:1".parse().unwrap()));
        let named = address(&json!({"runtime": {"api_port": 2, "api_host": "localhost"}}), no_env).unwrap().unwrap();
        assert!(named.ip().is_loopback());
        assert_eq!(address(&json!({"runtime": {}}), no_env).unwrap(), None);
        assert_eq!(address(&json!({}), no_env).unwrap(), None);
    }

    #[test]
    fn the_keys_of_aiperfs_own_processes_earn_a_note_each() {
        let found = notes(
            &json!({"runtime": {"ui": "dashboard", "workers": {"max": 4}, "api_port": 9090, "workers_min": null}}),
        );
        assert_eq!(
            found,
            [
                "note: runtime.ui has no effect here: the console shows a progress bar and the metrics table",
                "note: runtime.workers has no effect here: requests are sent by one async process, not worker processes",
            ]
        );
        assert!(notes(&json!({})).is_empty());
    }

    #[test]
    fn a_host_without_a_port_or_a_port_out_of_range_is_refused() {
        let refused = |runtime: Value| address(&json!({ "runtime": runtime }), no_env).unwrap_err().to_string();
        assert!(refused(json!({"api_host": "0.0.0.0"})).contains("requires runtime.api_port (--api-port)"));
        assert!(refused(json!({"api_port": 70000})).contains("from 1 to 65535, got 70000"));
        assert!(refused(json!({"api_port": 0})).contains("got 0"));
        assert!(
            refused(json!({"api_port": 80, "api_host": "no such host.invalid"})).contains("`no such host.invalid`")
        );
    }
}
