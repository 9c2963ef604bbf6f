//! The telemetry loop: every interval, read local GPUs (the NVML thread) and scrape the GPU
//! exporter endpoints that were asked for (DCGM's or AMD's device-metrics exporter, told apart
//! by their metric names); an endpoint that fails its first scrape is dropped with one
//! warning. Local AMD GPUs are read through the `amd-smi` CLI on a task of their own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::amd_smi::{AMD_SMI_SOURCE, AmdSmi};
use super::nvml::{LOCAL_SOURCE, NvmlSampler};
use super::sample::GpuSample;
use crate::clock::RunClock;
use crate::server_metrics::fetch::{ScrapeClient, fetch};
use crate::server_metrics::parse::parse;
use crate::server_metrics::urls::normalize;

/// Everything sampled, plus which sources were asked for and which answered.
#[derive(Debug, Default, Clone)]
pub struct TelemetryCollected {
    pub configured: Vec<String>,
    pub successful: Vec<String>,
    pub samples: Vec<GpuSample>,
}

pub struct TelemetryCollector {
    configured: Vec<String>,
    samples: Arc<Mutex<Vec<GpuSample>>>,
    stop: watch::Sender<bool>,
    task: JoinHandle<Vec<String>>,
    /// Ends true when amd-smi answered at least once.
    amd_smi: Option<JoinHandle<bool>>,
}

/// The shortest time between two amd-smi readings: each is a process start of a Python CLI.
const AMD_SMI_MIN_INTERVAL: Duration = Duration::from_secs(1);

/// Whether local AMD GPUs are read through amd-smi.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmdSmiUse {
    Off,
    /// Where installed; its absence is a debug line.
    WhereInstalled,
    /// Asked for: its absence is a one-line warning.
    Asked,
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}

/// One exporter scrape (DCGM's or AMD's), or why not.
async fn scrape_exporter(
    client: &ScrapeClient,
    url: &str,
    timeout: Duration,
    clock: RunClock,
) -> anyhow::Result<Vec<GpuSample>> {
    let fetched = fetch(client, url, timeout).await?;
    if !(200..300).contains(&fetched.status) {
        anyhow::bail!("HTTP {}", fetched.status);
    }
    let scrape = parse(fetched.body.as_deref().unwrap_or(""));
    let timestamp_ns = clock.epoch_ns(clock.now_ns());
    let mut samples = super::dcgm::samples_of(&scrape, url, timestamp_ns);
    samples.extend(super::amd_exporter::samples_of(&scrape, url, timestamp_ns));
    Ok(samples)
}

/// amd-smi read every `interval` (at least `AMD_SMI_MIN_INTERVAL`) into `sink` until `stopped`;
/// true when it answered once.
async fn poll_amd_smi(
    asked: bool,
    interval: Duration,
    clock: RunClock,
    sink: Arc<Mutex<Vec<GpuSample>>>,
    mut stopped: watch::Receiver<bool>,
) -> bool {
    let found = tokio::task::spawn_blocking(move || AmdSmi::find(hostname(), asked)).await;
    let Ok(Some(smi)) = found else { return false };
    let smi = Arc::new(smi);
    let mut answered = false;
    let mut ticker = tokio::time::interval(interval.max(AMD_SMI_MIN_INTERVAL));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stopped.changed() => break,
        }
        let (reader, timestamp_ns) = (smi.clone(), clock.epoch_ns(clock.now_ns()));
        match tokio::task::spawn_blocking(move || reader.sample(timestamp_ns)).await {
            Ok(Ok(read)) => {
                answered = true;
                sink.lock().unwrap_or_else(|p| p.into_inner()).extend(read);
            }
            Ok(Err(e)) => tracing::debug!("GPU telemetry: amd-smi reading failed: {e:#}"),
            Err(e) => tracing::debug!("GPU telemetry: amd-smi reading stopped: {e}"),
        }
    }
    answered
}

impl TelemetryCollector {
    /// Start sampling; `use_nvml` opens NVML (silently absent without a driver); `amd_smi`
    /// says whether local AMD GPUs are read through amd-smi.
    pub fn start(
        use_nvml: bool,
        amd_smi: AmdSmiUse,
        exporter_urls: &[String],
        interval: Duration,
        client: ScrapeClient,
        clock: RunClock,
    ) -> anyhow::Result<Self> {
        let exporters: Vec<String> = exporter_urls.iter().map(|u| normalize(u)).collect();
        let mut configured = exporters.clone();
        let nvml = if use_nvml { NvmlSampler::start(hostname()) } else { None };
        if nvml.is_some() {
            configured.insert(0, LOCAL_SOURCE.to_string());
        }
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (stop, mut stopped) = watch::channel(false);
        let amd_smi = match amd_smi {
            AmdSmiUse::Off => None,
            AmdSmiUse::WhereInstalled if !super::amd_smi::installed() => None,
            asked => {
                if super::amd_smi::installed() {
                    configured.insert(0, AMD_SMI_SOURCE.to_string());
                }
                let task = poll_amd_smi(asked == AmdSmiUse::Asked, interval, clock, samples.clone(), stop.subscribe());
                Some(tokio::spawn(task))
            }
        };
        let sink = samples.clone();
        let task = tokio::spawn(async move {
            let mut live: Vec<Option<String>> = exporters.into_iter().map(Some).collect();
            let mut answered: Vec<String> = Vec::new();
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticker.tick() => {}
                    _ = stopped.changed() => break,
                }
                let mut batch = Vec::new();
                if let Some(nvml) = &nvml
                    && let Some(read) = nvml.sample(clock.epoch_ns(clock.now_ns())).await
                {
                    if !answered.iter().any(|a| a == LOCAL_SOURCE) {
                        answered.push(LOCAL_SOURCE.to_string());
                    }
                    batch.extend(read);
                }
                for slot in &mut live {
                    let Some(url) = slot.clone() else { continue };
                    match scrape_exporter(&client, &url, interval.max(Duration::from_secs(2)), clock).await {
                        Ok(read) => {
                            if !answered.contains(&url) {
                                answered.push(url.clone());
                            }
                            batch.extend(read);
                        }
                        Err(e) if !answered.contains(&url) => {
                            tracing::warn!("GPU telemetry: exporter endpoint {url} is left out ({e:#})");
                            *slot = None;
                        }
                        Err(e) => tracing::debug!("GPU telemetry: scrape of {url} failed: {e:#}"),
                    }
                }
                sink.lock().unwrap_or_else(|p| p.into_inner()).extend(batch);
            }
            answered
        });
        Ok(Self { configured, samples, stop, task, amd_smi })
    }

    pub async fn finish(self) -> TelemetryCollected {
        let _ = self.stop.send(true);
        let mut successful = self.task.await.unwrap_or_default();
        if let Some(task) = self.amd_smi
            && task.await.unwrap_or(false)
        {
            successful.insert(0, AMD_SMI_SOURCE.to_string());
        }
        let samples = std::mem::take(&mut *self.samples.lock().unwrap_or_else(|p| p.into_inner()));
        TelemetryCollected { configured: self.configured, successful, samples }
    }
}
