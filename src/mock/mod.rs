//! The built-in OpenAI-compatible mock server (a product feature: quickstart, tests, and a
//! target for other tools via `aiperf mock`). Serves chat and completions, streaming and not,
//! with configurable timing, plus /v1/models, /health and Prometheus /metrics (vLLM names).

mod config;

use std::net::SocketAddr;

use anyhow::Result;

pub use config::MockConfig;

/// A running mock server; dropping it (or `shutdown`) stops it.
pub struct MockServer {
    addr: SocketAddr,
}

impl MockServer {
    /// Bind `addr` (port 0 picks a free port) and serve until shut down.
    pub async fn start(config: MockConfig, addr: SocketAddr) -> Result<MockServer> {
        let _ = config;
        todo!("mock server: bind {addr}")
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting, let in-flight responses end, and return.
    pub async fn shutdown(self) {}
}
