//! Tests of the record processor: records in, the run's and the phases' metrics out.

use super::*;
use crate::metrics::test_support::{context, failed_record as failed, streamed_record, unmeasured_record};
use crate::result::Stats;
use std::sync::{Arc, Mutex, OnceLock};

/// What a sink was handed for one record.
struct Handed {
    request_id: String,
    cancelled: bool,
    tags: Vec<&'static str>,
}

/// Every record a sink was handed, in order; with `true`, a sink that takes the warm-up's
/// records too.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<Handed>>>, bool);

impl RecordSink for Captured {
    fn takes_warmup(&self) -> bool {
        self.1
    }

    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, _good: Option<bool>) -> Result<()> {
        let tags = metrics.entries.iter().map(|(def, _)| def.tag).collect();
        let request_id = record.x_request_id.to_string();
        self.0.lock().unwrap().push(Handed { request_id, cancelled: record.was_cancelled, tags });
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

fn stats_of<'a>(results: &'a [MetricResult], tag: &str) -> &'a Stats {
    &results.iter().find(|m| m.tag == tag).unwrap_or_else(|| panic!("no {tag}")).stats
}

#[test]
fn the_warm_up_is_measured_apart_and_written_only_where_taken() {
    let (files, others) = (Captured(Default::default(), true), Captured::default());
    let mut processor =
        RecordProcessor::new(context(true)).with_sink(Box::new(files.clone())).with_sink(Box::new(others.clone()));
    let mut warmup = unmeasured_record(Some(PhaseKind::Warmup));
    warmup.x_request_id = "warm".into();
    processor.process(warmup).unwrap();
    processor.process(streamed_record(0, &[10_000_000, 14_000_000], " the the", 100)).unwrap();
    processor.process(failed(50, 500)).unwrap();

    let ProcessedMetrics { metrics, warmup_metrics, error_summary, .. } = processor.finish().unwrap();
    // The profiling metrics: one success of 14 ms and one error; the warm-up's 90 ms is not there.
    assert_eq!(stats_of(&metrics, "request_count"), &Stats::scalar(1.0));
    assert_eq!(stats_of(&metrics, "request_latency").max, Some(14.0));
    assert_eq!(stats_of(&metrics, "error_request_count").avg, 1.0);
    assert_eq!(error_summary.len(), 1);
    // The warm-up's: its one request of 90 ms, no error.
    assert_eq!(stats_of(&warmup_metrics, "request_count"), &Stats::scalar(1.0));
    assert_eq!(stats_of(&warmup_metrics, "request_latency").max, Some(90.0));
    assert!(warmup_metrics.iter().all(|m| m.tag != "error_request_count"));

    let written = files.0.lock().unwrap();
    assert_eq!(written.len(), 3);
    assert_eq!(written[0].request_id, "warm");
    assert!(written[0].tags.contains(&"request_latency"), "the warm-up's line has its metrics");
    let others = others.0.lock().unwrap();
    assert_eq!(others.len(), 2);
    assert!(others.iter().all(|handed| handed.request_id != "warm"));
}

#[test]
fn a_phase_split_measures_each_phase_alone_and_the_run_as_before() {
    let mut processor = RecordProcessor::new(context(true)).with_phase_split(true, 2);
    let mut warmup = unmeasured_record(Some(PhaseKind::Warmup));
    warmup.origin.phase_index = 0;
    processor.process(warmup).unwrap();
    for (phase_index, latency_ns) in [(1, 10_000_000), (1, 12_000_000), (2, 20_000_000)] {
        let mut record = streamed_record(0, &[latency_ns / 2, latency_ns], " the the", 100);
        record.origin.phase_index = phase_index;
        processor.process(record).unwrap();
    }
    let mut failed_in_2 = failed(30, 500);
    failed_in_2.origin.phase_index = 2;
    processor.process(failed_in_2).unwrap();

    let processed = processor.finish().unwrap();
    assert_eq!(stats_of(&processed.metrics, "request_count"), &Stats::scalar(3.0), "the run: both profiling phases");
    let phases: Vec<usize> = processed.by_phase.iter().map(|phase| phase.phase_index).collect();
    assert_eq!(phases, [0, 1, 2]);
    let count = |at: usize| stats_of(&processed.by_phase[at].metrics, "request_count").avg;
    assert_eq!((count(0), count(1), count(2)), (1.0, 2.0, 1.0));
    assert_eq!(stats_of(&processed.by_phase[1].metrics, "request_latency").max, Some(12.0));
    assert_eq!(stats_of(&processed.by_phase[2].metrics, "request_latency").max, Some(20.0));
    assert!(processed.by_phase[1].error_summary.is_empty());
    assert_eq!(processed.by_phase[2].error_summary.len(), 1, "the error is its phase's");
    let phase_1 = &processed.by_phase[1];
    assert!(phase_1.start_ns <= phase_1.end_ns);
}

#[test]
fn the_only_results_phase_of_a_split_has_the_runs_metrics() {
    let mut processor = RecordProcessor::new(context(true)).with_phase_split(true, 1);
    processor.process(unmeasured_record(Some(PhaseKind::Warmup))).unwrap();
    for start_ns in [0, 5_000_000] {
        let mut record = streamed_record(start_ns, &[4_000_000, 8_000_000], " the the", 100);
        record.origin.phase_index = 1;
        processor.process(record).unwrap();
    }
    let processed = processor.finish().unwrap();
    let phases: Vec<usize> = processed.by_phase.iter().map(|phase| phase.phase_index).collect();
    assert_eq!(phases, [0, 1]);
    assert_eq!(processed.by_phase[1].metrics, processed.metrics);
    assert_eq!(stats_of(&processed.by_phase[0].metrics, "request_count"), &Stats::scalar(1.0));
    // Its span: the first start (0) to the last end (both answers end at 8 ms), in epoch ns.
    let phase = &processed.by_phase[1];
    assert_eq!(phase.end_ns - phase.start_ns, 8_000_000);
}

#[test]
fn without_a_warm_up_or_a_split_there_are_no_part_metrics() {
    let mut processor = RecordProcessor::new(context(true));
    processor.process(streamed_record(0, &[10_000_000, 14_000_000], " the the", 100)).unwrap();
    let processed = processor.finish().unwrap();
    assert!(processed.warmup_metrics.is_empty());
    assert!(processed.by_phase.is_empty(), "no split unless asked");
}

#[test]
fn reasoning_tokens_are_totalled_and_ttfo_waits_for_the_answer() {
    let mut processor = RecordProcessor::new(context(true));
    // Reasoning " the the" (2 tokens) in the first chunk, then the answer; and " the the the" (3).
    for (reasoning, first_answer_ns) in [(" the the", 6_000_000), (" the the the", 9_000_000)] {
        let mut record = streamed_record(0, &[2_000_000, first_answer_ns], " the", 10);
        record.reasoning = reasoning.to_string();
        record.chunks[0].has_content = false;
        record.chunks[0].has_reasoning = true;
        processor.process(record).unwrap();
    }
    let results = processor.finish().unwrap().metrics;
    let reasoning = stats_of(&results, "reasoning_token_count");
    assert_eq!((reasoning.min, reasoning.max, reasoning.avg), (Some(2.0), Some(3.0), 2.5));
    assert_eq!(stats_of(&results, "total_reasoning_tokens"), &Stats::scalar(5.0));
    // OSL = 1 answer token + reasoning: 3 and 4.
    assert_eq!(stats_of(&results, "total_osl"), &Stats::scalar(7.0));
    assert_eq!(stats_of(&results, "total_output_tokens"), &Stats::scalar(2.0));
    assert_eq!(stats_of(&results, "time_to_first_token").avg, 2.0);
    assert_eq!(stats_of(&results, "time_to_first_output_token").avg, 7.5);
}

#[test]
fn usage_discrepancies_and_osl_mismatches_are_counted_per_request() {
    let mut processor = RecordProcessor::new(context(true));
    // " the the the the" is 4 GPT-2 tokens. Requested 4 → exact; requested 8 → a mismatch.
    // Usage: 4 completion tokens (exact), then 5 (25 % off → a discrepancy).
    for (requested, completion) in [(4, 4), (8, 5)] {
        let mut record = streamed_record(0, &[1_000_000, 2_000_000], " the the the the", 20);
        record.requested_output_tokens = Some(requested);
        record.usage = Some(crate::record::Usage { completion_tokens: Some(completion), ..Default::default() });
        processor.process(record).unwrap();
    }
    let results = processor.finish().unwrap().metrics;
    assert_eq!(stats_of(&results, "usage_discrepancy_count"), &Stats::scalar(1.0));
    assert_eq!(stats_of(&results, "osl_mismatch_count"), &Stats::scalar(1.0));
    // (4 − 4) / 4 and (4 − 8) / 8: 0 % and −50 %.
    let osl_diff = stats_of(&results, "osl_mismatch_diff_pct");
    assert_eq!((osl_diff.min, osl_diff.max), (Some(-50.0), Some(0.0)));
    assert_eq!(stats_of(&results, "usage_completion_tokens_diff_pct").max, Some(25.0));
}

#[test]
fn successes_errors_and_cancellations_feed_the_right_metrics() {
    let captured = Captured::default();
    let mut processor = RecordProcessor::new(context(true)).with_sink(Box::new(captured.clone()));
    // Two successes: 3 tokens over chunks 10/12/14 ms and 20/22/24 ms, both started at 0 and 4 ms.
    processor.process(streamed_record(0, &[10_000_000, 12_000_000, 14_000_000], " the the the", 100)).unwrap();
    let mut second = streamed_record(4_000_000, &[20_000_000, 22_000_000, 24_000_000], " the the the", 300);
    second.x_request_id = "req-1".into();
    processor.process(second).unwrap();
    processor.process(failed(50, 500)).unwrap();
    processor.process(failed(70, 500)).unwrap();
    processor.process(unmeasured_record(None)).unwrap();
    processor.process(unmeasured_record(Some(PhaseKind::Warmup))).unwrap();

    let ProcessedMetrics { metrics: results, error_summary: errors, .. } = processor.finish().unwrap();
    // request_latency: 14 ms and 20 ms; the cancelled record's 90 ms is excluded.
    let latency = stats_of(&results, "request_latency");
    assert_eq!((latency.count, latency.min, latency.max), (Some(2), Some(14.0), Some(20.0)));
    assert_eq!(latency.sum, Some(34.0));
    let isl = stats_of(&results, "input_sequence_length");
    assert_eq!((isl.count, isl.avg), (Some(2), 200.0));
    // ICL pools every gap of every record: four gaps of 2 ms.
    let icl = stats_of(&results, "inter_chunk_latency");
    assert_eq!((icl.count, icl.avg), (Some(4), 2.0));
    assert_eq!(stats_of(&results, "error_isl").sum, Some(120.0));
    assert_eq!(stats_of(&results, "request_count"), &Stats::scalar(2.0));
    assert_eq!(stats_of(&results, "error_request_count").avg, 2.0);
    assert_eq!(stats_of(&results, "completed_request_count").avg, 4.0);
    assert_eq!(stats_of(&results, "request_error_rate").avg, 50.0);
    assert_eq!(stats_of(&results, "total_isl").avg, 400.0);
    assert_eq!(stats_of(&results, "total_osl").avg, 6.0);
    assert_eq!(stats_of(&results, "total_error_isl").avg, 120.0);
    // First start 0, last response 4 + 20 = 24 ms.
    let duration_s = stats_of(&results, "benchmark_duration").avg;
    assert!((duration_s - 0.024).abs() < 1e-12);
    assert!((stats_of(&results, "request_throughput").avg - 2.0 / 0.024).abs() < 1e-9);
    assert!((stats_of(&results, "output_token_throughput").avg - 6.0 / 0.024).abs() < 1e-9);
    // Internal and absent metrics are not reported; results follow the registry.
    assert!(results.iter().all(|m| m.tag != "min_request_timestamp" && m.tag != "reasoning_token_count"));
    let positions: Vec<usize> = results.iter().map(|m| registry::position(registry::metric(m.tag).unwrap())).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    assert!(results.iter().find(|m| m.tag == "time_to_first_token").unwrap().console);
    assert!(!results.iter().find(|m| m.tag == "inter_chunk_latency").unwrap().console);

    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].count, errors[0].error_details.code), (2, Some(500)));

    let handed = captured.0.lock().unwrap();
    assert_eq!(handed.len(), 5, "a sink that does not take the warm-up sees the profiling records only");
    assert_eq!(handed[1].request_id, "req-1");
    assert!(handed[0].tags.contains(&"request_latency") && handed[0].tags.contains(&"inter_chunk_latency"));
    assert!(handed[2].tags.contains(&"error_isl"));
    assert!(handed[4].cancelled && handed[4].tags.is_empty(), "a cancelled record has no metrics");
}

#[test]
fn a_request_the_phase_cancelled_is_an_error_and_a_cut_off_one_is_not() {
    let mut processor = RecordProcessor::new(context(true));
    processor.process(streamed_record(0, &[10_000_000, 12_000_000], " the the", 100)).unwrap();
    let mut cancelled = streamed_record(0, &[], "", 40);
    cancelled.end_ns = 20_000_000;
    cancelled.was_cancelled = true;
    cancelled.error = Some(crate::client::cancelled_after(std::time::Duration::from_millis(20)));
    processor.process(cancelled).unwrap();
    processor.process(unmeasured_record(None)).unwrap();

    let ProcessedMetrics { metrics: results, error_summary: errors, .. } = processor.finish().unwrap();
    assert_eq!(stats_of(&results, "request_count"), &Stats::scalar(1.0));
    assert_eq!(stats_of(&results, "error_request_count").avg, 1.0, "the cut-off record is neither");
    assert_eq!(stats_of(&results, "error_isl").sum, Some(40.0));
    assert_eq!(errors.len(), 1);
    let details = &errors[0].error_details;
    assert_eq!((details.code, details.kind.as_str()), (Some(499), "RequestCancellationError"));
    assert_eq!(details.message, "Request cancelled 0.020s after being sent");
}

#[test]
fn slos_give_good_request_count_goodput_and_fraction() {
    let slos: std::collections::BTreeMap<String, f64> = [("time_to_first_token".to_string(), 15.0)].into();
    let mut processor = RecordProcessor::new(context(true)).with_slos(Slos::from_plan(&slos).unwrap());
    // TTFTs 10, 20 and 12 ms: two of three are good; the run lasts 0 → 30 ms.
    processor.process(streamed_record(0, &[10_000_000, 12_000_000], " the the", 5)).unwrap();
    processor.process(streamed_record(0, &[20_000_000, 30_000_000], " the the", 5)).unwrap();
    processor.process(streamed_record(0, &[12_000_000, 14_000_000], " the the", 5)).unwrap();
    processor.process(failed(5, 500)).unwrap();
    let results = processor.finish().unwrap().metrics;
    assert_eq!(stats_of(&results, "good_request_count"), &Stats::scalar(2.0));
    let duration_s = stats_of(&results, "benchmark_duration").avg;
    assert!((duration_s - 0.030).abs() < 1e-6);
    assert!((stats_of(&results, "goodput").avg - 2.0 / duration_s).abs() < 1e-9);
    assert!((stats_of(&results, "good_request_fraction").avg - 2.0 / 3.0).abs() < 1e-12);
    assert!(results.iter().find(|m| m.tag == "goodput").unwrap().console);
}

#[test]
fn without_slos_there_are_no_goodput_metrics() {
    let mut processor = RecordProcessor::new(context(true));
    processor.process(streamed_record(0, &[10_000_000], " the", 5)).unwrap();
    let results = processor.finish().unwrap().metrics;
    assert!(results.iter().all(|m| !m.tag.starts_with("good")));
}

#[test]
fn time_weighted_metrics_and_timeslices_come_from_the_same_records() {
    let origin = Arc::new(OnceLock::new());
    origin.set(0).unwrap();
    let slicing = Timeslicing { slice_ns: 10_000_000, profiling_start_ns: origin };
    let mut processor = RecordProcessor::new(context(true)).with_timeslices(Some(slicing));
    // 0–8 ms and 4–16 ms (first tokens at 2 and 10 ms), then 12–18 ms.
    processor.process(streamed_record(0, &[2_000_000, 8_000_000], " the the", 10)).unwrap();
    processor.process(streamed_record(4_000_000, &[10_000_000, 16_000_000], " the the", 10)).unwrap();
    processor.process(streamed_record(12_000_000, &[14_000_000, 18_000_000], " the the", 10)).unwrap();
    let processed = processor.finish().unwrap();
    // In flight: 1 (0–4), 2 (4–8), 1 (8–12), 2 (12–16), 1 (16–18) → 26 request-ms over 18 ms.
    let concurrency = stats_of(&processed.metrics, "effective_concurrency");
    assert!((concurrency.avg - 26.0 / 18.0).abs() < 1e-9);
    assert_eq!(concurrency.count, None);
    assert!(stats_of(&processed.metrics, "effective_latency").count == Some(3));
    let slices = &processed.timeslices;
    assert_eq!(slices.len(), 2);
    assert_eq!(slices[1].index, 1);
    // The last slice ends with the run (18 ms), as AIPerf clips it; the first is whole.
    assert_eq!((slices[0].end_ns - slices[0].start_ns, slices[0].is_complete), (10_000_000, true));
    assert_eq!((slices[1].end_ns - slices[1].start_ns, slices[1].is_complete), (8_000_000, false));
    // A slice's rates are per second of its window: 2 requests in 10 ms, 1 in 8 ms.
    assert!((stats_of(&slices[0].metrics, "request_throughput").avg - 200.0).abs() < 1e-9);
    assert!((stats_of(&slices[1].metrics, "request_throughput").avg - 125.0).abs() < 1e-9);
    // Two requests started in the first slice, one in the second.
    assert_eq!(stats_of(&slices[0].metrics, "request_count").avg, 2.0);
    assert_eq!(stats_of(&slices[1].metrics, "request_count").avg, 1.0);
    // The second slice's concurrency covers 10–18 ms (the run ends at 18): 1, 2, 1 over 2, 4, 2 ms.
    let sliced = stats_of(&slices[1].metrics, "effective_concurrency");
    assert!((sliced.avg - 12.0 / 8.0).abs() < 1e-9);
}

/// 300 streamed records of 1–10 chunks (a few past 4.29 s), started 0.7 ms apart, and a
/// failed one beside every 31st, each started as its record; with `watermark`, the
/// start of the next record is given after each.
fn feed(mut processor: RecordProcessor, watermark: bool) -> ProcessedMetrics {
    for index in 0..300u64 {
        let start_ns = index * 700_000;
        let chunks: Vec<u64> = (1..=index % 9 + 1).map(|chunk| start_ns + chunk * (1_000_000 + index * 997)).collect();
        let mut record = streamed_record(start_ns, &chunks, &" the".repeat(chunks.len()), 10 + index % 13);
        if index % 50 == 7 {
            // Past 4.29 s: the latency columns turn into floats after some runs.
            record.end_ns += 5_000_000_000;
        }
        processor.process(record).unwrap();
        if index % 31 == 0 {
            let mut failed = failed(5, 500);
            (failed.scheduled_ns, failed.start_ns, failed.end_ns) = (start_ns, start_ns, start_ns + 1_000_000);
            processor.process(failed).unwrap();
        }
        if watermark {
            processor.advance_watermark(start_ns + 700_000);
        }
    }
    processor.finish().unwrap()
}

/// `ours` is `expected`, every metric and timeslice.
fn same_results(ours: &ProcessedMetrics, expected: &ProcessedMetrics) {
    assert_eq!(ours.metrics.len(), expected.metrics.len());
    for (ours, expected) in ours.metrics.iter().zip(&expected.metrics) {
        assert_eq!(ours, expected, "{}", expected.tag);
    }
    assert_eq!(ours.timeslices, expected.timeslices);
}

#[test]
fn spilled_kept_values_and_in_flight_changes_give_the_in_memory_results() {
    let origin = Arc::new(OnceLock::new());
    origin.set(0).unwrap();
    let slicing = Timeslicing { slice_ns: 50_000_000, profiling_start_ns: origin };
    let dir = tempfile::tempdir().unwrap();
    // Runs of 7 values: every column and change list writes many (and a watermark sweeps
    // every few records).
    let spill = || crate::metrics::spill::Spill::in_dir(dir.path(), 7).unwrap();
    let (spilled_unswept, spilled_swept) = (spill(), spill());
    // One clock: the spans (and so the throughputs) are the same wall-clock times.
    let clock = context(true).clock;
    let processor = || RecordProcessor::new(MetricsContext { clock, ..context(true) });
    let in_memory = feed(processor().with_timeslices(Some(slicing.clone())), false);
    let spilled = feed(processor().with_timeslices(Some(slicing.clone())).with_spill(spilled_unswept.clone()), false);
    assert!(spilled_unswept.written_bytes() > 0);
    same_results(&spilled, &in_memory);
    assert!(spilled.timeslices.len() > 3);
    assert!(stats_of(&spilled.metrics, "inter_chunk_latency").count > Some(1000));
    // Swept during the run up to each watermark: the same, in memory and spilled.
    same_results(&feed(processor().with_timeslices(Some(slicing.clone())), true), &in_memory);
    let swept = feed(processor().with_timeslices(Some(slicing)).with_spill(spilled_swept.clone()), true);
    same_results(&swept, &in_memory);
    assert!(stats_of(&swept.metrics, "effective_concurrency").max > Some(1.0));
}

#[test]
fn no_records_no_metrics() {
    let processed = RecordProcessor::new(context(true)).finish().unwrap();
    assert!(processed.metrics.is_empty() && processed.error_summary.is_empty());
    assert!(processed.timeslices.is_empty());
}
