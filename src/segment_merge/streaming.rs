//! The streaming merge (`aiperf merge --streaming`, or when a segment kept no records): the
//! metrics of the merged run from each segment's `segment_histograms.json` — histograms, totals
//! and error summaries added up — instead of its records. Counts, sums, means and extremes are
//! exact; percentiles come from the merged HdrHistograms (3 significant digits).

use std::path::Path;

use anyhow::{Context, Result};

use crate::export::segment_histograms::SegmentHistograms;
use crate::metrics::ProcessedMetrics;
use crate::metrics::accumulator::metric_results;
use crate::metrics::errors::ErrorTally;
use crate::metrics::histograms::MetricHistograms;
use crate::metrics::run_totals::RunTotals;

/// The metrics of the segments in `dirs` as one run; no timeslices.
pub fn merged_metrics<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Result<ProcessedMetrics> {
    let mut totals = RunTotals::default();
    let mut histograms = MetricHistograms::default();
    let mut errors = ErrorTally::default();
    for dir in dirs {
        let segment = SegmentHistograms::read(dir)?;
        totals.merge(segment.totals);
        histograms.merge(segment.histograms);
        for line in &segment.errors {
            errors.add_count(&line.error_details, line.count);
        }
    }
    let distributions = histograms.stats().context("merging the segments' segment_histograms.json")?;
    Ok(ProcessedMetrics {
        metrics: metric_results(distributions, &totals, Vec::new(), None),
        error_summary: errors.into_summary(),
        by_url: Vec::new(),
        timeslices: Vec::new(),
        spec_decode_histogram: totals.spec_decode_histogram().to_vec(),
        token_check_causes: totals.token_check_causes().clone(),
        // The segments' histograms hold the profiling records only.
        warmup_metrics: Vec::new(),
        by_phase: Vec::new(),
    })
}
