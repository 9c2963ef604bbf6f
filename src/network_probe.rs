//! TCP-handshake round-trip probes for the network-latency adjustment
//! (`network_latency: #{ automatic: true }`): a fresh TCP connect to the server's host:port,
//! timed and closed at once, every ping interval while a results phase runs.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// A probe that takes longer than this counts as failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How often an idle prober looks whether a results phase started.
const IDLE_POLL: Duration = Duration::from_millis(10);

/// What the probes saw.
#[derive(Debug, Default)]
pub struct Probes {
    /// Each successful handshake, ms.
    pub rtts_ms: Vec<f64>,
    /// Connects that failed or timed out.
    pub failed: u64,
}

pub struct RttProber {
    target: SocketAddr,
    probes: Arc<Mutex<Probes>>,
    active: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl RttProber {
    /// Resolve the host:port of `base_url` once (name lookups stay out of the timings) and
    /// start probing it every `interval` while active.
    pub async fn start(base_url: &str, interval: Duration) -> Result<Self> {
        let target = target_of(base_url).await?;
        let probes = Arc::new(Mutex::new(Probes::default()));
        let active = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(probe_loop(target, interval, probes.clone(), active.clone()));
        Ok(Self { target, probes, active, task })
    }

    /// Probe (results phases) or pause (warm-up, cool-down).
    pub fn set_active(&self, on: bool) {
        self.active.store(on, Ordering::Relaxed);
    }

    /// The address probed.
    pub fn target(&self) -> SocketAddr {
        self.target
    }

    /// Stop probing and hand over what the probes saw.
    pub fn finish(self) -> Probes {
        self.task.abort();
        std::mem::take(&mut *self.probes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

async fn probe_loop(target: SocketAddr, interval: Duration, probes: Arc<Mutex<Probes>>, active: Arc<AtomicBool>) {
    let mut next_probe = Instant::now();
    loop {
        if active.load(Ordering::Relaxed) && Instant::now() >= next_probe {
            next_probe = Instant::now() + interval;
            let started = Instant::now();
            let connected = tokio::time::timeout(PROBE_TIMEOUT, tokio::net::TcpStream::connect(target)).await;
            let rtt_ms = started.elapsed().as_secs_f64() * 1e3;
            let mut probes = probes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            match connected {
                Ok(Ok(_stream)) => probes.rtts_ms.push(rtt_ms),
                _ => probes.failed += 1,
            }
        }
        tokio::time::sleep(IDLE_POLL.min(interval)).await;
    }
}

/// The socket address of a url's host and port (80 / 443 by scheme when it names none).
async fn target_of(base_url: &str) -> Result<SocketAddr> {
    let uri: http::Uri = base_url.parse().with_context(|| format!("network latency: `{base_url}` is not a url"))?;
    let host = uri.host().with_context(|| format!("network latency: `{base_url}` names no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    tokio::net::lookup_host((host, port))
        .await
        .with_context(|| format!("network latency: cannot resolve {host}:{port} to probe it"))?
        .next()
        .with_context(|| format!("network latency: {host}:{port} has no address to probe"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn probes_only_while_active_and_counts_refused_connects() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let prober = RttProber::start(&url, Duration::from_millis(20)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(prober.probes.lock().unwrap().rtts_ms.is_empty(), "probed while paused");
        prober.set_active(true);
        tokio::time::sleep(Duration::from_millis(150)).await;
        let probes = prober.finish();
        assert!(probes.rtts_ms.len() >= 2, "{probes:?}");
        assert!(probes.rtts_ms.iter().all(|rtt| *rtt >= 0.0 && *rtt < PROBE_TIMEOUT.as_secs_f64() * 1e3));

        drop(listener);
        let refused = RttProber::start(&url, Duration::from_millis(20)).await.unwrap();
        refused.set_active(true);
        tokio::time::sleep(Duration::from_millis(80)).await;
        let probes = refused.finish();
        assert!(probes.rtts_ms.is_empty() && probes.failed >= 1, "{probes:?}");
    }

    #[tokio::test]
    async fn default_ports_follow_the_scheme() {
        assert_eq!(target_of("http://127.0.0.1").await.unwrap().port(), 80);
        assert_eq!(target_of("https://127.0.0.1/v1").await.unwrap().port(), 443);
        assert!(target_of("not a url").await.unwrap_err().to_string().contains("not a url"));
    }
}
