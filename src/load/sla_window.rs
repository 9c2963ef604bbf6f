//! One assessment window of an adaptive_scale phase: what its finished requests measured, and
//! each SLA filter's value over them (AIPerf's adaptive-scale SLA evaluator).

use std::collections::BTreeMap;

use crate::plan::{QUALITY_METRICS, SlaFilter};
use crate::record::RequestRecord;

/// What one finished request tells the controller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Observation {
    /// When it was issued (run-clock ns): requests issued before the sustain began are not
    /// judged in it.
    pub issued_ns: u64,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Outcome {
    Succeeded(RequestSample),
    Failed,
    Cancelled,
}

/// A successful request's latencies (ms) and output length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RequestSample {
    pub latency_ms: f64,
    pub ttft_ms: Option<f64>,
    pub itl_ms: Option<f64>,
    pub output_tokens: Option<u64>,
}

impl Observation {
    pub fn of(record: &RequestRecord) -> Self {
        let outcome = if record.was_cancelled {
            Outcome::Cancelled
        } else if record.error.is_some() {
            Outcome::Failed
        } else {
            Outcome::Succeeded(RequestSample::of(record))
        };
        Observation { issued_ns: record.scheduled_ns, outcome }
    }
}

impl RequestSample {
    fn of(record: &RequestRecord) -> Self {
        let ms = |ns: u64| ns as f64 / 1e6;
        let latency_ms = ms(record.end_ns.saturating_sub(record.start_ns));
        let first_token_ns = record.chunks.iter().find(|chunk| chunk.has_content || chunk.has_reasoning).map(|c| c.ns);
        let ttft_ms = first_token_ns.map(|ns| ms(ns.saturating_sub(record.start_ns)));
        let tokens_streamed = record.chunks.iter().filter(|chunk| chunk.has_content || chunk.has_reasoning).count();
        let output_tokens = record.usage.and_then(|usage| usage.completion_tokens).or(Some(tokens_streamed as u64));
        let itl_ms = match (ttft_ms, output_tokens) {
            (Some(ttft_ms), Some(tokens)) if tokens > 1 => Some((latency_ms - ttft_ms) / (tokens - 1) as f64),
            _ => None,
        };
        RequestSample { latency_ms, ttft_ms, itl_ms, output_tokens: output_tokens.filter(|_| tokens_streamed > 0) }
    }

    fn quality_value(&self, metric_tag: &str) -> Option<f64> {
        match metric_tag {
            "request_latency" => Some(self.latency_ms),
            "time_to_first_token" | "ttft" => self.ttft_ms,
            _ => self.itl_ms,
        }
    }
}

/// The requests that finished in one window.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct WindowStats {
    pub succeeded: Vec<RequestSample>,
    pub errors: u64,
    pub cancelled: u64,
    pub elapsed_s: f64,
}

impl WindowStats {
    pub fn of(observations: impl IntoIterator<Item = Observation>, elapsed_s: f64) -> Self {
        let mut stats = WindowStats { elapsed_s, ..WindowStats::default() };
        for observation in observations {
            match observation.outcome {
                Outcome::Succeeded(sample) => stats.succeeded.push(sample),
                Outcome::Failed => stats.errors += 1,
                Outcome::Cancelled => stats.cancelled += 1,
            }
        }
        stats
    }

    pub fn total(&self) -> u64 {
        self.succeeded.len() as u64 + self.errors + self.cancelled
    }

    /// Successful requests per second.
    pub fn throughput(&self) -> f64 {
        self.per_second(self.succeeded.len() as f64)
    }

    fn per_second(&self, count: f64) -> f64 {
        if self.elapsed_s > 0.0 { count / self.elapsed_s } else { 0.0 }
    }

    /// Whether a window without successes can still be judged: every filter is an error or
    /// cancellation rate that covers what went wrong (AIPerf's rule).
    pub fn judgeable_without_successes(&self, filters: &[SlaFilter]) -> bool {
        let is = |filter: &SlaFilter, tags: [&str; 2]| tags.contains(&filter.metric_tag.as_str());
        let errors = ["error_rate", "request_error_rate"];
        let cancellations = ["cancellation_rate", "request_cancellation_rate"];
        filters.iter().all(|filter| is(filter, errors) || is(filter, cancellations))
            && !(self.errors > 0 && self.cancelled > 0)
            && (self.errors == 0 || filters.iter().any(|filter| is(filter, errors)))
            && (self.cancelled == 0 || filters.iter().any(|filter| is(filter, cancellations)))
    }

    /// Each filter's value, keyed as AIPerf keys them (`metric:stat:op:threshold`).
    pub fn sla_values(&self, filters: &[SlaFilter]) -> BTreeMap<String, f64> {
        filters.iter().map(|filter| (sla_key(filter), self.value(filter, filters))).collect()
    }

    fn value(&self, filter: &SlaFilter, all: &[SlaFilter]) -> f64 {
        let tag = filter.metric_tag.as_str();
        let total = self.total() as f64;
        let fraction = |count: f64, of: f64| if of > 0.0 { count / of } else { 0.0 };
        match tag {
            _ if QUALITY_METRICS.contains(&tag) => {
                let values: Vec<f64> = self.succeeded.iter().filter_map(|sample| sample.quality_value(tag)).collect();
                statistic(&values, &filter.stat)
            }
            "output_token_throughput" => {
                self.per_second(self.succeeded.iter().filter_map(|s| s.output_tokens).sum::<u64>() as f64)
            }
            "goodput" => self.per_second(self.good_requests(all) as f64),
            "goodput_ratio" => fraction(self.good_requests(all) as f64, total),
            "success_rate" | "request_success_rate" => fraction(self.succeeded.len() as f64, total),
            "error_rate" | "request_error_rate" => {
                100.0 * fraction(self.errors as f64, (self.succeeded.len() as u64 + self.errors) as f64)
            }
            "cancellation_rate" | "request_cancellation_rate" => fraction(self.cancelled as f64, total),
            _ => self.throughput(),
        }
    }

    /// Successful requests that meet every per-request (latency) filter.
    fn good_requests(&self, filters: &[SlaFilter]) -> usize {
        let quality: Vec<&SlaFilter> =
            filters.iter().filter(|filter| QUALITY_METRICS.contains(&filter.metric_tag.as_str())).collect();
        self.succeeded
            .iter()
            .filter(|sample| {
                quality.iter().all(|filter| sample.quality_value(&filter.metric_tag).is_some_and(|v| filter.passes(v)))
            })
            .count()
    }
}

/// AIPerf's key of a filter in `sla_values`: `metric:stat:op:threshold`.
pub(super) fn sla_key(filter: &SlaFilter) -> String {
    filter.to_string()
}

/// A latency statistic over `values` (ms); infinite without values, so a latency SLA fails.
fn statistic(values: &[f64], stat: &str) -> f64 {
    if values.is_empty() {
        return f64::INFINITY;
    }
    match stat {
        "avg" => values.iter().sum::<f64>() / values.len() as f64,
        "min" => values.iter().copied().fold(f64::INFINITY, f64::min),
        "max" => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        percentile => {
            let pct = percentile.trim_start_matches('p').parse::<f64>().unwrap_or(50.0);
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            crate::metrics::stats::percentile(&sorted, pct)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ttft_ms: f64) -> Observation {
        let sample = RequestSample {
            latency_ms: ttft_ms + 62.0,
            ttft_ms: Some(ttft_ms),
            itl_ms: Some(2.0),
            output_tokens: Some(32),
        };
        Observation { issued_ns: 0, outcome: Outcome::Succeeded(sample) }
    }

    fn filter(text: &str) -> SlaFilter {
        SlaFilter::parse(text).unwrap()
    }

    #[test]
    fn latency_rate_and_goodput_values_over_a_window() {
        let mut observations: Vec<Observation> = (1..=100).map(|ms| sample(ms as f64)).collect();
        observations.push(Observation { issued_ns: 0, outcome: Outcome::Failed });
        let stats = WindowStats::of(observations, 2.0);
        let filters = [
            filter("time_to_first_token:p95:lt:200"),
            filter("ttft:max:le:50"),
            filter("request_throughput:avg:ge:10"),
            filter("goodput:avg:ge:1"),
            filter("error_rate:avg:lt:5"),
            filter("output_token_throughput:avg:ge:1"),
        ];
        let values = stats.sla_values(&filters);
        let value = |text: &str| values[&sla_key(&filter(text))];
        assert!((value("time_to_first_token:p95:lt:200") - 95.05).abs() < 1e-9);
        assert_eq!(value("ttft:max:le:50"), 100.0);
        assert_eq!(value("request_throughput:avg:ge:10"), 50.0);
        assert_eq!(value("goodput:avg:ge:1"), 25.0, "50 requests meet both TTFT filters, over 2 s");
        assert!((value("error_rate:avg:lt:5") - 100.0 / 101.0).abs() < 1e-9);
        assert_eq!(value("output_token_throughput:avg:ge:1"), 1600.0);
    }

    #[test]
    fn an_empty_window_fails_latency_slas_and_only_rate_slas_judge_failures_alone() {
        let stats = WindowStats::of([Observation { issued_ns: 0, outcome: Outcome::Failed }], 1.0);
        assert_eq!(stats.sla_values(&[filter("ttft:p95:lt:200")]).values().next(), Some(&f64::INFINITY));
        assert!(!stats.judgeable_without_successes(&[filter("ttft:p95:lt:200")]));
        assert!(stats.judgeable_without_successes(&[filter("error_rate:avg:lt:5")]));
        assert!(!stats.judgeable_without_successes(&[filter("cancellation_rate:avg:lt:5")]));
    }
}
