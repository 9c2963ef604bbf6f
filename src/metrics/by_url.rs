//! The main metrics of each of the endpoint's urls when it has several: each record also
//! counts in its url's own window, whose throughput spans that url's requests.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::accumulator::MetricAccumulator;
use super::spill::Spill;
use crate::record::SentTo;
use crate::result::UrlMetrics;

/// What each url's breakdown keeps of its metrics.
const MAIN_METRICS: [&str; 7] = [
    "request_count",
    "error_request_count",
    "request_throughput",
    "output_token_throughput",
    "time_to_first_token",
    "inter_token_latency",
    "request_latency",
];

#[derive(Debug, Default)]
pub struct UrlAccumulators {
    goodput: bool,
    by_index: BTreeMap<u32, (Arc<str>, MetricAccumulator)>,
    /// Where the urls' columns write their full runs.
    spill: Option<Spill>,
}

impl UrlAccumulators {
    /// `goodput`: the run has SLOs, so good requests are counted.
    pub fn new(goodput: bool) -> Self {
        Self { goodput, by_index: BTreeMap::new(), spill: None }
    }

    /// The urls' columns write their full runs to `spill`.
    pub fn with_spill(mut self, spill: Option<Spill>) -> Self {
        self.spill = spill;
        self
    }

    /// The window of the url a request went to.
    pub fn of(&mut self, sent_to: &SentTo) -> &mut MetricAccumulator {
        let goodput = self.goodput;
        let (_, accumulator) = self
            .by_index
            .entry(sent_to.index)
            .or_insert_with(|| (sent_to.url.clone(), MetricAccumulator::new(goodput).with_spill(self.spill.clone())));
        accumulator
    }

    /// Each url's main metrics, in the order of the endpoint's urls (none with one url).
    pub fn finish(self) -> Vec<UrlMetrics> {
        self.by_index
            .into_iter()
            .map(|(url_index, (url, accumulator))| {
                let mut metrics = accumulator.finish(Vec::new, None);
                metrics.retain(|metric| MAIN_METRICS.contains(&metric.tag));
                UrlMetrics { url_index, url: url.to_string(), metrics }
            })
            .collect()
    }
}
