//! Server metrics: scrape Prometheus endpoints during the run (collector), parse them
//! (parse), and summarise the profiling window (aggregate) for the server_metrics exports.

pub mod aggregate;
pub mod collector;
pub mod endpoint_info;
pub mod estimate;
pub mod fetch;
pub mod parse;
pub mod series_stats;
pub mod timeslice;
pub mod units;
pub mod urls;
pub mod window;

pub use aggregate::{ServerMetricsResult, aggregate};
pub use collector::{Collector, CollectorSettings, ScrapePhase};
pub use window::ProfilingWindow;
