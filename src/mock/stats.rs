//! Live measurements of the load the mock serves, per model name: gauges, counters and
//! latency histograms kept in atomics, so the request hot path stays cheap.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::spec_decode::SpecDecodeCounters;

/// Upper bounds (seconds) of the time-to-first-token buckets, as vLLM uses.
pub const TTFT_BOUNDS_S: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
    160.0, 640.0, 2560.0,
];
/// Upper bounds (seconds) of the inter-token-latency buckets: vLLM's, plus finer ones below
/// 10 ms, where a mock usually sits.
pub const ITL_BOUNDS_S: &[f64] = &[
    0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
    10.0, 20.0, 40.0, 80.0,
];
/// Upper bounds (seconds) of the end-to-end latency buckets: vLLM's, plus finer ones below 300 ms.
pub const E2E_BOUNDS_S: &[f64] = &[
    0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
];

/// Distinct model names tracked; requests naming further models count under the first one,
/// so clients cannot grow the metrics without bound.
const MAX_MODEL_LABELS: usize = 64;

/// A latency histogram: one counter per bucket (not cumulative) plus the `+Inf` bucket.
pub struct Histogram {
    bounds_s: &'static [f64],
    bucket_counts: Box<[AtomicU64]>,
    sum_ns: AtomicU64,
}

/// A consistent-enough copy of a histogram for rendering.
pub struct HistogramSnapshot {
    /// `(upper bound in seconds, cumulative count)` per finite bucket.
    pub cumulative: Vec<(f64, u64)>,
    /// Count of all observations (the `+Inf` bucket and `_count`).
    pub count: u64,
    pub sum_s: f64,
}

impl Histogram {
    pub fn new(bounds_s: &'static [f64]) -> Self {
        let bucket_counts = (0..=bounds_s.len()).map(|_| AtomicU64::new(0)).collect();
        Self { bounds_s, bucket_counts, sum_ns: AtomicU64::new(0) }
    }

    pub fn observe(&self, value: Duration) {
        self.observe_many(value, 1);
    }

    /// Record `times` observations of the same `value`.
    pub fn observe_many(&self, value: Duration, times: u64) {
        if times == 0 {
            return;
        }
        let seconds = value.as_secs_f64();
        let bucket = self.bounds_s.partition_point(|bound| *bound < seconds);
        self.bucket_counts[bucket].fetch_add(times, Relaxed);
        let nanos = u64::try_from(value.as_nanos()).unwrap_or(u64::MAX);
        self.sum_ns.fetch_add(nanos.saturating_mul(times), Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut running_total = 0;
        let cumulative = self
            .bounds_s
            .iter()
            .zip(self.bucket_counts.iter())
            .map(|(bound, count)| {
                running_total += count.load(Relaxed);
                (*bound, running_total)
            })
            .collect();
        let count = running_total + self.bucket_counts[self.bounds_s.len()].load(Relaxed);
        HistogramSnapshot { cumulative, count, sum_s: self.sum_ns.load(Relaxed) as f64 / 1e9 }
    }
}

/// Everything measured for one model name.
pub struct ModelStats {
    /// Requests holding a running slot (generating).
    pub running: AtomicU64,
    /// Requests queued for a running slot.
    pub waiting: AtomicU64,
    /// KV-cache tokens held by running requests (prompt plus tokens generated so far).
    pub kv_tokens: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub generation_tokens: AtomicU64,
    /// Requests that generated all their tokens (finish reason `length`).
    pub finished_by_length: AtomicU64,
    /// Prompt tokens looked up in the prefix cache, and those found there.
    pub prefix_cache_queried_tokens: AtomicU64,
    pub prefix_cache_hit_tokens: AtomicU64,
    /// Chat `video_url` parts accepted.
    pub video_inputs: AtomicU64,
    pub spec_decode: SpecDecodeCounters,
    /// Tool calls answered (`tool_calls.rs`), and the tool results the requests' histories held
    /// (chat `tool` messages, Messages `tool_result` blocks, Responses `function_call_output`s).
    pub tool_calls: AtomicU64,
    pub tool_results_received: AtomicU64,
    /// The reasoning those histories sent back (thinking blocks, reasoning items).
    pub reasoning_received: AtomicU64,
    pub time_to_first_token: Histogram,
    pub inter_token_latency: Histogram,
    pub e2e_latency: Histogram,
}

impl ModelStats {
    fn new() -> Self {
        Self {
            running: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
            kv_tokens: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            generation_tokens: AtomicU64::new(0),
            finished_by_length: AtomicU64::new(0),
            prefix_cache_queried_tokens: AtomicU64::new(0),
            prefix_cache_hit_tokens: AtomicU64::new(0),
            video_inputs: AtomicU64::new(0),
            spec_decode: SpecDecodeCounters::new(),
            tool_calls: AtomicU64::new(0),
            tool_results_received: AtomicU64::new(0),
            reasoning_received: AtomicU64::new(0),
            time_to_first_token: Histogram::new(TTFT_BOUNDS_S),
            inter_token_latency: Histogram::new(ITL_BOUNDS_S),
            e2e_latency: Histogram::new(E2E_BOUNDS_S),
        }
    }
}

/// The stats of every model name seen, in first-seen order.
pub struct StatsRegistry {
    by_model: Mutex<Vec<(String, Arc<ModelStats>)>>,
}

impl StatsRegistry {
    /// A registry that already lists `models` (so /metrics shows them before any request).
    pub fn new(models: &[String]) -> Self {
        let by_model = models.iter().map(|name| (name.clone(), Arc::new(ModelStats::new()))).collect();
        Self { by_model: Mutex::new(by_model) }
    }

    /// The stats for `model`, created on first use.
    pub fn for_model(&self, model: &str) -> Arc<ModelStats> {
        let mut by_model = self.by_model.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, stats)) = by_model.iter().find(|(name, _)| name == model) {
            return stats.clone();
        }
        if by_model.len() >= MAX_MODEL_LABELS
            && let Some((_, first)) = by_model.first()
        {
            return first.clone();
        }
        let stats = Arc::new(ModelStats::new());
        by_model.push((model.to_string(), stats.clone()));
        stats
    }

    pub fn snapshot(&self) -> Vec<(String, Arc<ModelStats>)> {
        self.by_model.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_le_inclusive() {
        let histogram = Histogram::new(&[0.01, 0.1, 1.0]);
        histogram.observe(Duration::from_millis(10));
        histogram.observe_many(Duration::from_millis(50), 2);
        histogram.observe(Duration::from_secs(3));
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.cumulative, vec![(0.01, 1), (0.1, 3), (1.0, 3)]);
        assert_eq!(snapshot.count, 4);
        assert!((snapshot.sum_s - 3.11).abs() < 1e-9, "{}", snapshot.sum_s);
    }

    #[test]
    fn registry_reuses_and_caps_model_labels() {
        let registry = StatsRegistry::new(&["a".to_string()]);
        assert!(Arc::ptr_eq(&registry.for_model("a"), &registry.for_model("a")));
        for index in 0..(MAX_MODEL_LABELS * 2) {
            registry.for_model(&format!("m{index}"));
        }
        assert_eq!(registry.snapshot().len(), MAX_MODEL_LABELS);
        assert!(Arc::ptr_eq(&registry.for_model("overflow"), &registry.for_model("a")));
    }
}
