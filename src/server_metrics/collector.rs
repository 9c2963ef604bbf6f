//! The scrape loop: reachability and content checks (with the TRT-LLM probe and
//! auto-disable), a baseline scrape, one task per endpoint scraping every interval, a scrape
//! at each phase's start (the reference) and after a results phase's last response (its end),
//! and a final scrape after a flush period. Every fetch is kept as a `ScrapeRecord`.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::fetch::{Fetched, ScrapeClient, fetch};
use super::parse::{Scrape, parse};
use super::urls::prometheus_alternative;
use crate::clock::RunClock;

/// Which part of the run a scrape fell in (for the JSONL's phase tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ScrapePhase {
    Baseline = 0,
    Warmup = 1,
    Profiling = 2,
    Final = 3,
}

impl ScrapePhase {
    fn from_u8(value: u8) -> Self {
        match value {
            1 => ScrapePhase::Warmup,
            2 => ScrapePhase::Profiling,
            3 => ScrapePhase::Final,
            _ => ScrapePhase::Baseline,
        }
    }
}

/// One successful fetch of one endpoint.
#[derive(Debug, Clone)]
pub struct ScrapeRecord {
    pub endpoint_url: Arc<str>,
    /// Epoch ns when the request was sent.
    pub request_sent_ns: u64,
    /// Epoch ns when the whole body had arrived (the sample time).
    pub timestamp_ns: u64,
    pub latency_ns: u64,
    /// The body differed from the endpoint's previous fetch.
    pub changed: bool,
    pub phase: ScrapePhase,
    pub scrape: Arc<Scrape>,
}

/// How the scrapes are taken.
#[derive(Debug, Clone)]
pub struct CollectorSettings {
    pub interval: Duration,
    pub reachability_timeout: Duration,
    pub flush_period: Duration,
}

/// An endpoint that passed the checks (possibly swapped to its `/prometheus/metrics`).
struct LiveEndpoint {
    url: Arc<str>,
    last_body_hash: Option<u64>,
}

/// What the run's collection produced.
#[derive(Debug, Default)]
pub struct Collected {
    /// As configured (before any TRT-LLM swap).
    pub configured: Vec<String>,
    /// The URLs that returned Prometheus data (after any swap).
    pub successful: Vec<String>,
    pub records: Vec<ScrapeRecord>,
}

pub struct Collector {
    client: ScrapeClient,
    clock: RunClock,
    settings: CollectorSettings,
    configured: Vec<String>,
    endpoints: Vec<Arc<tokio::sync::Mutex<LiveEndpoint>>>,
    records: Arc<Mutex<Vec<ScrapeRecord>>>,
    phase: Arc<AtomicU8>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

fn body_hash(body: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut hasher);
    hasher.finish()
}

/// Why a fetch is not Prometheus exposition text, if it is not.
fn not_prometheus(url: &str, fetched: &Fetched) -> Option<String> {
    if !(200..300).contains(&fetched.status) {
        return Some(format!("endpoint '{url}' answered HTTP {}", fetched.status));
    }
    if fetched.is_json() {
        return Some(format!(
            "endpoint '{url}' returned non-Prometheus content-type '{}'; expected text/plain (Prometheus exposition format)",
            fetched.content_type
        ));
    }
    let body = fetched.body.as_deref().unwrap_or("");
    let scrape = parse(body);
    (scrape.samples == 0 && scrape.bad_lines > 0)
        .then(|| format!("endpoint '{url}' returned a body that is not Prometheus exposition format"))
}

impl Collector {
    /// Check every URL (reachability within the timeout, content, TRT-LLM probe), take the
    /// baseline scrape, and start scraping the endpoints that passed.
    pub async fn start(
        urls: Vec<String>,
        settings: CollectorSettings,
        client: ScrapeClient,
        clock: RunClock,
    ) -> anyhow::Result<Self> {
        let (stop, _) = watch::channel(false);
        let mut collector = Collector {
            client,
            clock,
            settings,
            configured: urls.clone(),
            endpoints: Vec::new(),
            records: Arc::new(Mutex::new(Vec::new())),
            phase: Arc::new(AtomicU8::new(ScrapePhase::Baseline as u8)),
            stop,
            tasks: Vec::new(),
        };
        for url in urls {
            let Some(url) = collector.check(&url).await else { continue };
            let endpoint =
                Arc::new(tokio::sync::Mutex::new(LiveEndpoint { url: Arc::from(url), last_body_hash: None }));
            scrape_once(
                &collector.client,
                &endpoint,
                &collector.records,
                collector.clock,
                &collector.settings,
                ScrapePhase::Baseline,
            )
            .await;
            collector.endpoints.push(endpoint);
        }
        for endpoint in &collector.endpoints {
            collector.tasks.push(tokio::spawn(scrape_loop(
                collector.client.clone(),
                endpoint.clone(),
                collector.records.clone(),
                collector.clock,
                collector.settings.clone(),
                collector.phase.clone(),
                collector.stop.subscribe(),
            )));
        }
        Ok(collector)
    }

    /// The URL to scrape for `url`, or None (with one warning) when it must be left out.
    async fn check(&self, url: &str) -> Option<String> {
        let timeout = self.settings.reachability_timeout;
        let reason = match fetch(&self.client, url, timeout).await {
            Err(e) => {
                tracing::warn!("server metrics endpoint {url} is not reachable ({e:#}); it is left out of this run");
                return None;
            }
            Ok(fetched) => match not_prometheus(url, &fetched) {
                None => return Some(url.to_string()),
                Some(reason) => reason,
            },
        };
        if let Some(alternative) = prometheus_alternative(url)
            && let Ok(fetched) = fetch(&self.client, &alternative, timeout).await
            && not_prometheus(&alternative, &fetched).is_none()
        {
            tracing::info!("server metrics: {url} is not Prometheus text; using {alternative} instead");
            return Some(alternative);
        }
        tracing::warn!(
            "Disabling server metrics collection for {url}: {reason}. To suppress this warning, set server_metrics: #{{ enabled: false }}."
        );
        None
    }

    /// Tag the following scrapes as warmup or profiling, and scrape every endpoint now, so
    /// that the phase's counters have a reference taken just before it.
    pub async fn enter_phase(&self, phase: ScrapePhase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        for endpoint in &self.endpoints {
            scrape_once(&self.client, endpoint, &self.records, self.clock, &self.settings, phase).await;
        }
    }

    /// A results phase's last response is in: scrape every endpoint now, so the phase has
    /// an end sample taken before anything else is sent.
    pub async fn end_phase(&self) {
        let tag = ScrapePhase::from_u8(self.phase.load(Ordering::Relaxed));
        for endpoint in &self.endpoints {
            scrape_once(&self.client, endpoint, &self.records, self.clock, &self.settings, tag).await;
        }
    }

    /// Stop the loops, wait the flush period, take the final scrape, and hand everything back.
    pub async fn finish(self) -> Collected {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
        if !self.endpoints.is_empty() {
            tokio::time::sleep(self.settings.flush_period).await;
        }
        let mut successful = Vec::new();
        for endpoint in &self.endpoints {
            scrape_once(&self.client, endpoint, &self.records, self.clock, &self.settings, ScrapePhase::Final).await;
            successful.push(endpoint.lock().await.url.to_string());
        }
        let mut records = std::mem::take(&mut *self.records.lock().unwrap_or_else(|p| p.into_inner()));
        records.sort_by_key(|r| r.timestamp_ns);
        let successful =
            successful.into_iter().filter(|url| records.iter().any(|r| &*r.endpoint_url == url.as_str())).collect();
        Collected { configured: self.configured, successful, records }
    }
}

async fn scrape_loop(
    client: ScrapeClient,
    endpoint: Arc<tokio::sync::Mutex<LiveEndpoint>>,
    records: Arc<Mutex<Vec<ScrapeRecord>>>,
    clock: RunClock,
    settings: CollectorSettings,
    phase: Arc<AtomicU8>,
    mut stop: watch::Receiver<bool>,
) {
    let mut ticker = tokio::time::interval(settings.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.changed() => return,
        }
        let tag = ScrapePhase::from_u8(phase.load(Ordering::Relaxed));
        scrape_once(&client, &endpoint, &records, clock, &settings, tag).await;
    }
}

/// Fetch and parse one endpoint once; failures after the checks are quiet (debug level),
/// and a body with unreadable lines is warned about once.
async fn scrape_once(
    client: &ScrapeClient,
    endpoint: &tokio::sync::Mutex<LiveEndpoint>,
    records: &Mutex<Vec<ScrapeRecord>>,
    clock: RunClock,
    settings: &CollectorSettings,
    phase: ScrapePhase,
) {
    let mut endpoint = endpoint.lock().await;
    let sent = clock.now_ns();
    let fetched = match fetch(client, &endpoint.url, settings.reachability_timeout).await {
        Ok(fetched) if (200..300).contains(&fetched.status) => fetched,
        Ok(fetched) => {
            tracing::debug!("server metrics: {} answered HTTP {}", endpoint.url, fetched.status);
            return;
        }
        Err(e) => {
            tracing::debug!("server metrics: scrape of {} failed: {e:#}", endpoint.url);
            return;
        }
    };
    let done = clock.now_ns();
    let body = fetched.body.unwrap_or_default();
    let hash = body_hash(&body);
    let scrape = parse(&body);
    if scrape.bad_lines > 0 && endpoint.last_body_hash.is_none() {
        tracing::warn!(
            "server metrics: {} lines of {} could not be read and are skipped (further scrapes are not reported)",
            scrape.bad_lines,
            endpoint.url
        );
    }
    let changed = endpoint.last_body_hash != Some(hash);
    endpoint.last_body_hash = Some(hash);
    let record = ScrapeRecord {
        endpoint_url: endpoint.url.clone(),
        request_sent_ns: clock.epoch_ns(sent),
        timestamp_ns: clock.epoch_ns(done),
        latency_ns: done - sent,
        changed,
        phase,
        scrape: Arc::new(scrape),
    };
    records.lock().unwrap_or_else(|p| p.into_inner()).push(record);
}
