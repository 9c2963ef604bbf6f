//! One request as the report draws it: its times, its phase, the few metrics charted and its
//! error kind.

use std::sync::Arc;

/// One request as the report sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordRow {
    /// Wall clock, ns since the Unix epoch.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Shared by every row of the phase (see `Records::phase`).
    pub phase: Arc<str>,
    pub ttft_ms: Option<f64>,
    pub itl_ms: Option<f64>,
    pub latency_ms: Option<f64>,
    pub isl: Option<f64>,
    pub osl: Option<f64>,
    /// The error's type (`"HTTPError"`, `"Timeout"`, …); `None` for a request that succeeded.
    pub error: Option<Arc<str>>,
}
