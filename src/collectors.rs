//! The run's side collectors (server metrics and GPU telemetry) as the engine drives them:
//! start before the first phase, phase marks, finish after profiling, exports at the end.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::clock::RunClock;
use crate::export::server_metrics_json::iso_time;
use crate::export::{ArtifactNames, gpu_telemetry};
use crate::plan::Plan;
use crate::result::RunResult;
use crate::server_metrics::fetch::scrape_client;
use crate::server_metrics::{self, Collector, CollectorSettings, ProfilingWindow, ScrapePhase, ServerMetricsResult};
use crate::telemetry::summary::telemetry_data;
use crate::telemetry::{TelemetryCollected, TelemetryCollector};

/// Final-scrape wait against real servers (AIPerf's default) and against the in-process mock.
const FLUSH_PERIOD_S: f64 = 2.0;
const MOCK_FLUSH_PERIOD_S: f64 = 0.2;

pub struct RunCollectors {
    clock: RunClock,
    server: Option<Collector>,
    telemetry: Option<TelemetryCollector>,
    profiling_start_ns: Option<u64>,
    profiling_end_ns: Option<u64>,
}

/// What the collectors gathered, ready for the result and the exports.
#[derive(Default)]
pub struct Gathered {
    pub server_metrics: Option<Arc<ServerMetricsResult>>,
    pub telemetry: Option<TelemetryCollected>,
    pub telemetry_data: Option<serde_json::Value>,
}

impl RunCollectors {
    /// Start both collectors; `base_url` is the inference server's (the mock's once started).
    pub async fn start(plan: &Plan, base_url: &str, clock: RunClock) -> Result<Self> {
        let config = &plan.server_metrics;
        let gpu = &plan.gpu_telemetry;
        // Scrapes trust what the benchmark client trusts (the endpoint's CA file, or insecure).
        let client = scrape_client(&plan.endpoint.transport.tls)?;
        let server = if config.enabled {
            let mut urls = vec![server_metrics::urls::default_for(base_url)];
            for url in &config.urls {
                let url = server_metrics::urls::normalize(url);
                if !urls.contains(&url) {
                    urls.push(url);
                }
            }
            let flush_s = config.flush_period_s.unwrap_or(if plan.endpoint.is_mock() {
                MOCK_FLUSH_PERIOD_S
            } else {
                FLUSH_PERIOD_S
            });
            let settings = CollectorSettings {
                interval: Duration::from_secs_f64(config.interval_s),
                reachability_timeout: Duration::from_secs_f64(config.reachability_timeout_s),
                flush_period: Duration::from_secs_f64(flush_s),
            };
            Some(Collector::start(urls, settings, client.clone(), clock).await?)
        } else {
            None
        };
        let telemetry = if gpu.enabled || !gpu.dcgm_urls.is_empty() {
            Some(TelemetryCollector::start(
                gpu.enabled,
                &gpu.dcgm_urls,
                Duration::from_secs_f64(gpu.interval_s),
                client,
                clock,
            )?)
        } else {
            None
        };
        Ok(Self { clock, server, telemetry, profiling_start_ns: None, profiling_end_ns: None })
    }

    fn now_epoch_ns(&self) -> u64 {
        self.clock.epoch_ns(self.clock.now_ns())
    }

    /// A phase starts now (after a boundary scrape); `results`: it feeds the metrics, so it
    /// is inside the profiling window.
    pub async fn phase_started(&mut self, results: bool) {
        if let Some(server) = &self.server {
            server.enter_phase(if results { ScrapePhase::Profiling } else { ScrapePhase::Warmup }).await;
        }
        if results && self.profiling_start_ns.is_none() {
            self.profiling_start_ns = Some(self.now_epoch_ns());
        }
    }

    /// A phase ended now; `results` as in `phase_started`.
    pub fn phase_ended(&mut self, results: bool) {
        if results {
            self.profiling_end_ns = Some(self.now_epoch_ns());
        }
    }

    /// Stop both collectors (the server one after its flush period and final scrape) and
    /// summarise the profiling window.
    pub async fn finish(self, slice_duration_s: Option<f64>) -> Gathered {
        let now = self.now_epoch_ns();
        let window = ProfilingWindow {
            start_ns: self.profiling_start_ns.unwrap_or(now),
            end_ns: self.profiling_end_ns.unwrap_or(now),
        };
        let telemetry = match self.telemetry {
            Some(collector) => Some(collector.finish().await),
            None => None,
        };
        let server_metrics = match self.server {
            Some(collector) => {
                let collected = collector.finish().await;
                let slice_ns = slice_duration_s.map(|s| (s * 1e9) as u64);
                tokio::task::spawn_blocking(move || server_metrics::aggregate(collected, window, slice_ns))
                    .await
                    .ok()
                    .map(Arc::new)
            }
            None => None,
        };
        let telemetry_data =
            telemetry.as_ref().map(|collected| telemetry_data(collected, window.start_ns, window.end_ns, iso_time));
        Gathered { server_metrics, telemetry, telemetry_data }
    }
}

/// The server-metrics and GPU telemetry files of a finished run.
pub fn write_exports(result: &RunResult, telemetry: Option<&TelemetryCollected>, dir: &Path) -> Result<()> {
    if let Some(metrics) = &result.server_metrics
        && !metrics.endpoints_successful.is_empty()
    {
        crate::export::server_metrics::write_server_metrics(metrics, result, dir)?;
    }
    if let (Some(collected), Some(data)) = (telemetry, &result.telemetry_data)
        && !collected.samples.is_empty()
    {
        let names = ArtifactNames::new(result.plan.export.prefix.as_deref());
        gpu_telemetry::write_jsonl(collected, &dir.join(names.gpu_telemetry_jsonl()))?;
        gpu_telemetry::write_csv(data, &dir.join(names.gpu_telemetry_csv()))?;
    }
    Ok(())
}
