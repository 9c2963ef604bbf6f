//! The run's side collectors (server metrics, GPU telemetry, network round-trip probes) as the
//! engine drives them: start before the first phase, phase marks, finish after profiling,
//! exports at the end.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::clock::RunClock;
use crate::export::server_metrics_json::iso_time;
use crate::export::{ArtifactNames, gpu_telemetry};
use crate::metrics::network_adjusted::NetworkRtt;
use crate::network_probe::RttProber;
use crate::plan::{NetworkLatency, Plan};
use crate::result::{PhaseSummary, RunResult};
use crate::server_metrics::fetch::scrape_client_for;
use crate::server_metrics::window::MeasuredPhase;
use crate::server_metrics::{self, Collector, CollectorSettings, ProfilingWindow, ScrapePhase, ServerMetricsResult};
use crate::telemetry::energy::FleetEnergy;
use crate::telemetry::summary::telemetry_data;
use crate::telemetry::{AmdSmiUse, TelemetryCollected, TelemetryCollector};

/// Final-scrape wait against real servers (AIPerf's default) and against the in-process mock.
const FLUSH_PERIOD_S: f64 = 2.0;
const MOCK_FLUSH_PERIOD_S: f64 = 0.2;

pub struct RunCollectors {
    clock: RunClock,
    server: Option<Collector>,
    telemetry: Option<TelemetryCollector>,
    /// The round trip the run subtracts: probed, or given (None: no adjustment).
    network: Option<NetworkSource>,
    /// The results and warm-up phases so far, their spans in epoch ns (the server metrics'
    /// `metrics`, `warmup_metrics` and each phase's own).
    measured: Vec<MeasuredPhase>,
}

/// What the collectors gathered, ready for the result and the exports.
#[derive(Default)]
pub struct Gathered {
    pub server_metrics: Option<Arc<ServerMetricsResult>>,
    pub telemetry: Option<TelemetryCollected>,
    pub telemetry_data: Option<serde_json::Value>,
    /// What the GPUs drew over the profiling window (the energy metrics' input).
    pub gpu_energy: Option<FleetEnergy>,
    /// The round trip to subtract from the latencies (network_adjusted_* metrics).
    pub network_rtt: Option<NetworkRtt>,
}

/// Where the subtracted round trip comes from.
enum NetworkSource {
    Probed(RttProber),
    Given(f64),
}

impl RunCollectors {
    /// Start both collectors; `base_url` is the inference server's (the mock's once started),
    /// whose `/metrics` is scraped with each further url's.
    pub async fn start(plan: &Plan, base_url: &str, clock: RunClock) -> Result<Self> {
        let config = &plan.server_metrics;
        let gpu = &plan.gpu_telemetry;
        let mut urls = Vec::new();
        if config.enabled {
            urls.push(server_metrics::urls::default_for(base_url));
            for url in plan.endpoint.more_urls.iter().map(|url| server_metrics::urls::default_for(url)) {
                if !urls.contains(&url) {
                    urls.push(url);
                }
            }
            for url in &config.urls {
                let url = server_metrics::urls::normalize(url);
                if !urls.contains(&url) {
                    urls.push(url);
                }
            }
        }
        // Scrapes trust what the benchmark client trusts (the endpoint's CA file, or insecure).
        let scraped = urls.iter().chain(&gpu.dcgm_urls).map(String::as_str);
        let client = scrape_client_for(&plan.endpoint.transport.tls, scraped)?;
        let server = if config.enabled {
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
        let telemetry = if gpu.enabled || gpu.amd_smi || !gpu.dcgm_urls.is_empty() {
            let amd_smi = match (gpu.amd_smi, gpu.enabled) {
                (true, _) => AmdSmiUse::Asked,
                (false, true) => AmdSmiUse::WhereInstalled,
                (false, false) => AmdSmiUse::Off,
            };
            Some(TelemetryCollector::start(
                gpu.enabled,
                amd_smi,
                &gpu.dcgm_urls,
                Duration::from_secs_f64(gpu.interval_s),
                client,
                clock,
            )?)
        } else {
            None
        };
        let network = match plan.network_latency {
            NetworkLatency::Off => None,
            NetworkLatency::Mean { mean_ms } => Some(NetworkSource::Given(mean_ms)),
            NetworkLatency::Automatic { ping_interval_s } => {
                Some(NetworkSource::Probed(RttProber::start(base_url, Duration::from_secs_f64(ping_interval_s)).await?))
            }
        };
        Ok(Self { clock, server, telemetry, network, measured: Vec::new() })
    }

    /// A phase is about to send its first request: scrape every endpoint first (the
    /// reference of the phase's counters); `results`: the phase feeds the metrics.
    pub async fn phase_started(&mut self, results: bool) {
        if let Some(NetworkSource::Probed(prober)) = &self.network {
            prober.set_active(results);
        }
        if let Some(server) = &self.server {
            server.enter_phase(if results { ScrapePhase::Profiling } else { ScrapePhase::Warmup }).await;
        }
    }

    /// Phase `phase_index`'s last response is in; a results phase is scraped once more (its
    /// end sample) and its span, first request to last response, joins the profiling window.
    pub async fn phase_ended(&mut self, phase_index: usize, summary: &PhaseSummary) {
        if let Some(NetworkSource::Probed(prober)) = &self.network {
            prober.set_active(false);
        }
        let window = ProfilingWindow {
            start_ns: self.clock.epoch_ns(summary.window_start_ns),
            end_ns: self.clock.epoch_ns(summary.window_end_ns),
        };
        let warmup = summary.kind == crate::plan::PhaseKind::Warmup.as_str();
        if summary.results || warmup {
            // A warm-up is closed by the next phase's reference scrape.
            self.measured.push(MeasuredPhase { phase_index, window, results: summary.results });
        }
        if !summary.results {
            return;
        }
        if let Some(server) = &self.server {
            server.end_phase().await;
        }
    }

    /// Stop both collectors (the server one after its flush period and final scrape) and
    /// summarise the profiling window.
    pub async fn finish(self, slice_duration_s: Option<f64>) -> Gathered {
        let measured = self.measured;
        let windows_of = |results: bool| -> Vec<ProfilingWindow> {
            measured.iter().filter(|phase| phase.results == results).map(|phase| phase.window).collect()
        };
        let (mut results_windows, warmup_windows) = (windows_of(true), windows_of(false));
        if results_windows.is_empty() {
            let now = self.clock.epoch_ns(self.clock.now_ns());
            results_windows.push(ProfilingWindow { start_ns: now, end_ns: now });
        }
        let window = ProfilingWindow {
            start_ns: results_windows[0].start_ns,
            end_ns: results_windows[results_windows.len() - 1].end_ns,
        };
        let telemetry = match self.telemetry {
            Some(collector) => Some(collector.finish().await),
            None => None,
        };
        let server_metrics = match self.server {
            Some(collector) => {
                let collected = collector.finish().await;
                let slice_ns = slice_duration_s.map(|s| (s * 1e9) as u64);
                tokio::task::spawn_blocking(move || {
                    server_metrics::aggregate(collected, &results_windows, &warmup_windows, &measured, slice_ns)
                })
                .await
                .ok()
                .map(Arc::new)
            }
            None => None,
        };
        let telemetry_data =
            telemetry.as_ref().map(|collected| telemetry_data(collected, window.start_ns, window.end_ns, iso_time));
        let gpu_energy =
            telemetry.as_ref().map(|collected| FleetEnergy::of(&collected.samples, window.start_ns, window.end_ns));
        let network_rtt = self.network.and_then(NetworkSource::finish);
        Gathered { server_metrics, telemetry, telemetry_data, gpu_energy, network_rtt }
    }
}

impl NetworkSource {
    /// The round trip to subtract; a probed run whose probes all failed has none (and says so).
    fn finish(self) -> Option<NetworkRtt> {
        match self {
            Self::Given(mean_ms) => Some(NetworkRtt::given(mean_ms)),
            Self::Probed(prober) => {
                let target = prober.target();
                let probes = prober.finish();
                let rtt = NetworkRtt::measured(probes.rtts_ms);
                if rtt.is_none() {
                    tracing::warn!(
                        "network latency: no TCP probe of {target} succeeded ({} failed); no network_adjusted_* metrics",
                        probes.failed
                    );
                }
                rtt
            }
        }
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
