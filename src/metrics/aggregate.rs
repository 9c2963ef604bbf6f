//! Aggregate metrics: counters and wall-clock extremes accumulated across records as they
//! arrive (request_count, error_request_count, min_request_timestamp, max_response_timestamp).

use serde::{Deserialize, Serialize};

use super::registry::{self, MetricDef};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RunCounters {
    request_count: u64,
    error_request_count: u64,
    first_request_epoch_ns: Option<u64>,
    last_response_epoch_ns: Option<u64>,
    /// Errors that said the prompt overflowed the context.
    #[serde(default)]
    context_overflow_count: u64,
}

impl RunCounters {
    /// A successful request that started and got its last response at these wall-clock times.
    pub fn add_success(&mut self, request_start_epoch_ns: u64, last_response_epoch_ns: u64) {
        self.request_count += 1;
        self.first_request_epoch_ns =
            Some(self.first_request_epoch_ns.map_or(request_start_epoch_ns, |t| t.min(request_start_epoch_ns)));
        self.last_response_epoch_ns =
            Some(self.last_response_epoch_ns.map_or(last_response_epoch_ns, |t| t.max(last_response_epoch_ns)));
    }

    /// A failed request; `context_overflow`: its error said the prompt overflowed the context.
    pub fn add_error(&mut self, context_overflow: bool) {
        self.error_request_count += 1;
        self.context_overflow_count += u64::from(context_overflow);
    }

    /// Adds `other`'s counts and widens the extremes to its.
    pub fn merge(&mut self, other: RunCounters) {
        self.request_count += other.request_count;
        self.error_request_count += other.error_request_count;
        self.context_overflow_count += other.context_overflow_count;
        let earliest = |a: Option<u64>, b: Option<u64>| a.into_iter().chain(b).min();
        let latest = |a: Option<u64>, b: Option<u64>| a.into_iter().chain(b).max();
        self.first_request_epoch_ns = earliest(self.first_request_epoch_ns, other.first_request_epoch_ns);
        self.last_response_epoch_ns = latest(self.last_response_epoch_ns, other.last_response_epoch_ns);
    }

    /// The aggregate values that exist: request_count once any request completed (success or
    /// error), error_request_count once one failed, the timestamps once one succeeded.
    pub fn values(&self) -> Vec<(&'static MetricDef, f64)> {
        let mut values = Vec::new();
        if self.request_count + self.error_request_count > 0 {
            values.push((&registry::REQUEST_COUNT, self.request_count as f64));
        }
        if self.error_request_count > 0 {
            values.push((&registry::ERROR_REQUEST_COUNT, self.error_request_count as f64));
            values.push((&registry::CONTEXT_OVERFLOW_COUNT, self.context_overflow_count as f64));
        }
        if let (Some(first), Some(last)) = (self.first_request_epoch_ns, self.last_response_epoch_ns) {
            values.push((&registry::MIN_REQUEST_TIMESTAMP, first as f64));
            values.push((&registry::MAX_RESPONSE_TIMESTAMP, last as f64));
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(counters: &RunCounters, def: &MetricDef) -> Option<f64> {
        counters.values().into_iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, v)| v)
    }

    #[test]
    fn counts_and_extremes() {
        let mut counters = RunCounters::default();
        assert!(counters.values().is_empty());
        counters.add_success(2_000, 9_000);
        counters.add_success(1_000, 5_000);
        counters.add_error(true);
        counters.add_error(false);
        assert_eq!(value(&counters, &registry::REQUEST_COUNT), Some(2.0));
        assert_eq!(value(&counters, &registry::ERROR_REQUEST_COUNT), Some(2.0));
        assert_eq!(value(&counters, &registry::CONTEXT_OVERFLOW_COUNT), Some(1.0));
        assert_eq!(value(&counters, &registry::MIN_REQUEST_TIMESTAMP), Some(1_000.0));
        assert_eq!(value(&counters, &registry::MAX_RESPONSE_TIMESTAMP), Some(9_000.0));
    }

    #[test]
    fn an_all_error_run_still_has_a_request_count_of_zero() {
        let mut counters = RunCounters::default();
        counters.add_error(false);
        assert_eq!(value(&counters, &registry::REQUEST_COUNT), Some(0.0));
        assert_eq!(value(&counters, &registry::CONTEXT_OVERFLOW_COUNT), Some(0.0));
        assert_eq!(value(&counters, &registry::MIN_REQUEST_TIMESTAMP), None);
    }
}
