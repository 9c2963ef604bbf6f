//! SLOs per request (spec: "Goodput Metrics"): a request is good when each of its SLO metrics
//! meets its objective — at most the objective, or at least it for LARGER_IS_BETTER metrics.

use std::collections::BTreeMap;

use super::record_values::RecordMetrics;
use super::registry::{self, MetricDef, MetricFlags};
use crate::result::MetricKind;

/// The SLOs of a run, resolved to their metrics.
#[derive(Debug, Clone)]
pub struct Slos(Vec<(&'static MetricDef, f64)>);

impl Slos {
    /// Resolve the plan's SLOs (tag → objective in the metric's unit); None when there are none.
    pub fn from_plan(slos: &BTreeMap<String, f64>) -> Result<Option<Self>, String> {
        if slos.is_empty() {
            return Ok(None);
        }
        let mut resolved = Vec::with_capacity(slos.len());
        for (tag, &objective) in slos {
            match registry::metric(tag) {
                Some(def) if is_slo_metric(def) => resolved.push((def, objective)),
                _ => return Err(format!("`{tag}` is not a per-request metric an SLO can be set on")),
            }
        }
        Ok(Some(Self(resolved)))
    }

    /// The record meets every SLO; a metric the record lacks counts as missed.
    pub fn met(&self, metrics: &RecordMetrics) -> bool {
        self.0.iter().all(|&(def, objective)| {
            let larger_is_better = def.has(MetricFlags::LARGER_IS_BETTER);
            metrics.get(def).is_some_and(|value| {
                let mut samples = value.samples().peekable();
                samples.peek().is_some()
                    && samples.all(|v| if larger_is_better { v >= objective } else { v <= objective })
            })
        })
    }
}

/// A metric each successful request has a value of, so an SLO can judge the request.
pub fn is_slo_metric(def: &MetricDef) -> bool {
    def.kind == MetricKind::Record && def.exported() && !def.has(MetricFlags::ERROR_ONLY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::record_metrics::success_metrics;
    use crate::metrics::test_support::{context, streamed_record};

    fn slos(entries: &[(&str, f64)]) -> Slos {
        let map = entries.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Slos::from_plan(&map).unwrap().unwrap()
    }

    #[test]
    fn a_request_is_good_only_when_it_meets_every_slo() {
        let ctx = context(true);
        // TTFT 10 ms, request latency 14 ms, 3 tokens.
        let record = streamed_record(0, &[10_000_000, 12_000_000, 14_000_000], " the the the", 100);
        let metrics = success_metrics(&record, &ctx);
        assert!(slos(&[("time_to_first_token", 10.0), ("request_latency", 20.0)]).met(&metrics));
        assert!(!slos(&[("time_to_first_token", 9.9), ("request_latency", 20.0)]).met(&metrics));
        assert!(!slos(&[("time_to_first_token", 50.0), ("request_latency", 13.0)]).met(&metrics));
        // Throughput per user is larger-is-better: the SLO is a minimum.
        let per_user = metrics.get(&registry::OUTPUT_TOKEN_THROUGHPUT_PER_USER).unwrap().samples().next().unwrap();
        assert!(slos(&[("output_token_throughput_per_user", per_user - 1.0)]).met(&metrics));
        assert!(!slos(&[("output_token_throughput_per_user", per_user + 1.0)]).met(&metrics));
    }

    #[test]
    fn a_missing_metric_misses_and_only_record_metrics_take_slos() {
        let non_streaming = success_metrics(&streamed_record(0, &[5_000_000], " the", 3), &context(false));
        assert!(!slos(&[("time_to_first_token", 1e9)]).met(&non_streaming));
        assert!(Slos::from_plan(&BTreeMap::new()).unwrap().is_none());
        let bad: BTreeMap<String, f64> = [("request_throughput".to_string(), 1.0)].into();
        assert!(Slos::from_plan(&bad).unwrap_err().contains("request_throughput"));
    }
}
