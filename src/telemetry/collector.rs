//! The telemetry loop: every interval, read local GPUs (the NVML thread) and scrape the DCGM
//! exporter endpoints that were asked for; an endpoint that fails its first scrape is dropped
//! with one warning.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::dcgm::samples_of;
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
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}

/// One DCGM scrape, or why not.
async fn scrape_dcgm(
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
    Ok(samples_of(&scrape, url, clock.epoch_ns(clock.now_ns())))
}

impl TelemetryCollector {
    /// Start sampling; `use_nvml` opens NVML (silently absent without a driver).
    pub fn start(
        use_nvml: bool,
        dcgm_urls: &[String],
        interval: Duration,
        client: ScrapeClient,
        clock: RunClock,
    ) -> anyhow::Result<Self> {
        let dcgm: Vec<String> = dcgm_urls.iter().map(|u| normalize(u)).collect();
        let mut configured = dcgm.clone();
        let nvml = if use_nvml { NvmlSampler::start(hostname()) } else { None };
        if nvml.is_some() {
            configured.insert(0, LOCAL_SOURCE.to_string());
        }
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (stop, mut stopped) = watch::channel(false);
        let sink = samples.clone();
        let task = tokio::spawn(async move {
            let mut live: Vec<Option<String>> = dcgm.into_iter().map(Some).collect();
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
                    match scrape_dcgm(&client, &url, interval.max(Duration::from_secs(2)), clock).await {
                        Ok(read) => {
                            if !answered.contains(&url) {
                                answered.push(url.clone());
                            }
                            batch.extend(read);
                        }
                        Err(e) if !answered.contains(&url) => {
                            tracing::warn!("GPU telemetry: DCGM endpoint {url} is left out ({e:#})");
                            *slot = None;
                        }
                        Err(e) => tracing::debug!("GPU telemetry: scrape of {url} failed: {e:#}"),
                    }
                }
                sink.lock().unwrap_or_else(|p| p.into_inner()).extend(batch);
            }
            answered
        });
        Ok(Self { configured, samples, stop, task })
    }

    pub async fn finish(self) -> TelemetryCollected {
        let _ = self.stop.send(true);
        let successful = self.task.await.unwrap_or_default();
        let samples = std::mem::take(&mut *self.samples.lock().unwrap_or_else(|p| p.into_inner()));
        TelemetryCollected { configured: self.configured, successful, samples }
    }
}
