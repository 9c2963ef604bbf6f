//! Live metrics: the client's own counters served in Prometheus text format while a run runs.

use std::net::SocketAddr;

/// A `--metrics-listen` / `metrics_listen` address, e.g. `127.0.0.1:9464`.
pub fn listen_address(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| format!("expects an address such as 127.0.0.1:9464, got `{text}`"))
}
