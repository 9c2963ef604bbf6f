//! The network-latency adjustment (AIPerf's `--network-latency-*`): the request-start-anchored
//! latencies (time to first token, time to first output token, request latency) less the
//! mean network round trip, as `network_adjusted_*` metrics beside the raw ones, which stay
//! untouched; and the `network_rtt` summary of the round trips.

use super::registry::{self, MetricDef};
use super::stats::distribution;
use crate::result::Stats;

/// Each adjusted metric and the raw metric it is computed from.
const ADJUSTED: [(&MetricDef, &MetricDef); 3] = [
    (&registry::NETWORK_ADJUSTED_TIME_TO_FIRST_TOKEN, &registry::TIME_TO_FIRST_TOKEN),
    (&registry::NETWORK_ADJUSTED_TIME_TO_FIRST_OUTPUT_TOKEN, &registry::TIME_TO_FIRST_OUTPUT_TOKEN),
    (&registry::NETWORK_ADJUSTED_REQUEST_LATENCY, &registry::REQUEST_LATENCY),
];

/// The round trip a run subtracts: measured by TCP-handshake probes, or given.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkRtt {
    /// The round trip subtracted, ms.
    pub mean_ms: f64,
    /// Every probe's handshake time, ms; empty when the mean was given.
    pub probes_ms: Vec<f64>,
}

impl NetworkRtt {
    /// A round trip given by the user.
    pub fn given(mean_ms: f64) -> Self {
        Self { mean_ms, probes_ms: Vec::new() }
    }

    /// The mean of these probes; None without one.
    pub fn measured(probes_ms: Vec<f64>) -> Option<Self> {
        if probes_ms.is_empty() {
            return None;
        }
        let mean_ms = probes_ms.iter().sum::<f64>() / probes_ms.len() as f64;
        Some(Self { mean_ms, probes_ms })
    }

    /// `network_rtt`: the probes' distribution, or the given mean as its one value.
    fn summary(&self) -> Stats {
        distribution(&self.probes_ms).unwrap_or_else(|| Stats::scalar(self.mean_ms))
    }

    /// The adjusted metrics and `network_rtt`, from every raw record value (ms) of a tag, as
    /// `raw_values` gives them: each
    /// value less the mean round trip, floored at zero (a round trip longer than a request is
    /// measurement noise, not a negative latency).
    pub fn adjusted(&self, raw_values: impl Fn(&str) -> Option<Vec<f64>>) -> Vec<(&'static MetricDef, Stats)> {
        let mut out: Vec<(&'static MetricDef, Stats)> = ADJUSTED
            .iter()
            .filter_map(|(adjusted, raw)| {
                let values: Vec<f64> =
                    raw_values(raw.tag)?.iter().map(|value| (value - self.mean_ms).max(0.0)).collect();
                Some((*adjusted, distribution(&values)?))
            })
            .collect();
        out.push((&registry::NETWORK_RTT, self.summary()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn values_shift_by_the_mean_probe_and_floor_at_zero() {
        let rtt = NetworkRtt::measured(vec![1.0, 3.0]).unwrap();
        assert_eq!(rtt.mean_ms, 2.0);
        let samples = HashMap::from([("time_to_first_token", vec![10.0, 20.0, 1.5]), ("request_latency", vec![50.0])]);
        let adjusted = rtt.adjusted(|tag| samples.get(tag).cloned());
        let stats = |def: &MetricDef| adjusted.iter().find(|(d, _)| d.tag == def.tag).map(|(_, s)| s.clone());
        let ttft = stats(&registry::NETWORK_ADJUSTED_TIME_TO_FIRST_TOKEN).unwrap();
        assert_eq!((ttft.min, ttft.max, ttft.count), (Some(0.0), Some(18.0), Some(3)));
        assert_eq!(stats(&registry::NETWORK_ADJUSTED_REQUEST_LATENCY).unwrap().avg, 48.0);
        assert!(stats(&registry::NETWORK_ADJUSTED_TIME_TO_FIRST_OUTPUT_TOKEN).is_none());
        let probes = stats(&registry::NETWORK_RTT).unwrap();
        assert_eq!((probes.avg, probes.count), (2.0, Some(2)));
    }

    #[test]
    fn a_given_mean_is_its_own_summary_and_no_probes_is_no_adjustment() {
        let given = NetworkRtt::given(4.0);
        let adjusted = given.adjusted(|tag| (tag == "request_latency").then(|| vec![10.0]));
        assert_eq!(adjusted[0].1.avg, 6.0);
        assert_eq!(adjusted[1].1, Stats::scalar(4.0));
        assert!(NetworkRtt::measured(Vec::new()).is_none());
    }
}
