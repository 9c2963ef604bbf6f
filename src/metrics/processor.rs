//! `RecordProcessor`: takes records one at a time, hands each one to its sinks (the
//! per-record jsonl files), accumulates metric values (for the run and, with timeslices, for the record's slice) and
//! what was in flight, and at the end turns them into stats and the error summary. The
//! warm-up's records are measured apart (AIPerf's `warmup_metrics`) and go only to the sinks
//! that write every record; with a phase split, each phase is measured apart too
//! (`phase_split.rs`).

use anyhow::Result;

use super::MetricsContext;
use super::accumulator::MetricAccumulator;
use super::by_url::UrlAccumulators;
use super::errors::ErrorTally;
use super::goodput::Slos;
use super::in_flight::{InFlightCurves, RecordTokens};
use super::network_adjusted::NetworkRtt;
use super::phase_split::{PartMeasured, PhasePart, PhaseSplit};
use super::record_metrics::{error_metrics, request_latency_ns, success_metrics};
use super::record_sink::RecordSink;
use super::record_values::{MetricValue, RecordMetrics};
use super::registry;
use super::spill::Spill;
use super::time_weighted::TimeWeighted;
use super::timeslices::{TimesliceAccumulator, Timeslicing};
use super::token_check_causes::TokenCheckCauses;
use crate::plan::PhaseKind;
use crate::record::RequestRecord;
use crate::result::{ErrorCount, MetricResult, PhaseMetrics, Timeslice, UrlMetrics};

/// What the records added up to.
#[derive(Debug)]
pub struct ProcessedMetrics {
    /// Every metric with a value, in registry order.
    pub metrics: Vec<MetricResult>,
    pub error_summary: Vec<ErrorCount>,
    /// The main metrics of each url, when the endpoint has several.
    pub by_url: Vec<UrlMetrics>,
    /// Empty unless the run asked for timeslices.
    pub timeslices: Vec<Timeslice>,
    /// The requests' accepted-draft histograms, pooled (`RunResult::spec_decode_histogram`).
    pub spec_decode_histogram: Vec<u64>,
    /// What the failed token checks point to (`RunResult::token_check_causes`).
    pub token_check_causes: TokenCheckCauses,
    /// The warm-up's metrics, measured as the run's are (AIPerf's `warmup_metrics`); empty
    /// when no warm-up record came.
    pub warmup_metrics: Vec<MetricResult>,
    /// Each phase's metrics, in phase order, when the processor splits them (`with_phase_split`).
    pub by_phase: Vec<PhaseMetrics>,
}

/// Consumes records one at a time (on its own thread): computes each record's metrics, hands
/// it to its sinks at once, and accumulates the values.
pub struct RecordProcessor {
    ctx: MetricsContext,
    /// Where each record goes as it arrives (profile_export.jsonl, profile_export_raw.jsonl).
    sinks: Vec<Box<dyn RecordSink>>,
    run: MetricAccumulator,
    in_flight: InFlightCurves,
    /// The time-weighted metrics, taken from the in-flight segments as they are swept.
    time_weighted: TimeWeighted,
    timeslices: Option<TimesliceAccumulator>,
    by_url: UrlAccumulators,
    errors: ErrorTally,
    /// The run's SLOs (goodput).
    slos: Option<Slos>,
    /// Measures the warm-up's records, from the first one on: a processor of its own without
    /// sinks or timeslices.
    warmup: Option<Box<RecordProcessor>>,
    /// Each phase's records measured apart too, when asked.
    by_phase: Option<PhaseSplit<RecordProcessor>>,
    /// Where the values of the processors made during the run (warm-up, phases) spill.
    spill: Option<Spill>,
}

impl RecordProcessor {
    pub fn new(ctx: MetricsContext) -> Self {
        Self {
            ctx,
            sinks: Vec::new(),
            run: MetricAccumulator::new(false),
            in_flight: InFlightCurves::default(),
            time_weighted: TimeWeighted::default(),
            timeslices: None,
            by_url: UrlAccumulators::default(),
            errors: ErrorTally::default(),
            slos: None,
            warmup: None,
            by_phase: None,
            spill: None,
        }
    }

    /// Also hand each record, with its metrics, to `sink` as it arrives.
    pub fn with_sink(mut self, sink: Box<dyn RecordSink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Count the successful requests that meet every one of `slos` (None: no goodput metrics).
    pub fn with_slos(mut self, slos: Option<Slos>) -> Self {
        self.run = MetricAccumulator::new(slos.is_some());
        self.by_url = UrlAccumulators::new(slos.is_some());
        self.slos = slos;
        self
    }

    /// The kept values (the run's, the timeslices', the urls') and the in-flight changes write
    /// their full runs to `spill` instead of growing without bound. After `with_slos` and
    /// `with_timeslices`.
    pub fn with_spill(mut self, spill: Spill) -> Self {
        self.run = self.run.with_spill(Some(spill.clone()));
        self.in_flight = self.in_flight.with_spill(spill.clone());
        self.time_weighted = self.time_weighted.with_spill(Some(spill.clone()));
        self.by_url = self.by_url.with_spill(Some(spill.clone()));
        self.timeslices = self.timeslices.map(|slices| slices.with_spill(Some(spill.clone())));
        self.spill = Some(spill);
        self
    }

    /// Also measure each phase's records apart (`ProcessedMetrics::by_phase`), for a run of
    /// several measured phases, `results_phases` of which feed the results.
    pub fn with_phase_split(mut self, split: bool, results_phases: usize) -> Self {
        self.by_phase = split.then(|| PhaseSplit::new(results_phases));
        self
    }

    /// A processor for part of the records (the warm-up, a phase): the same context, SLOs and
    /// spill, without sinks or timeslices.
    fn part(ctx: &MetricsContext, slos: &Option<Slos>, spill: &Option<Spill>) -> RecordProcessor {
        let processor = RecordProcessor::new(ctx.clone()).with_slos(slos.clone());
        match spill {
            Some(spill) => processor.with_spill(spill.clone()),
            None => processor,
        }
    }

    /// Also accumulate each record in its timeslice (None: no timeslices). After `with_slos`.
    pub fn with_timeslices(mut self, slicing: Option<Timeslicing>) -> Self {
        self.time_weighted = self.time_weighted.with_slices(slicing.clone());
        self.timeslices = slicing.map(|slicing| TimesliceAccumulator::new(slicing, self.slos.is_some()));
        self
    }

    /// Successful records feed the success metrics; failed ones (a request the phase's
    /// cancellation ended among them) the error metrics, the error count and the error summary;
    /// cut-off ones only their sinks' line and what was in flight. Warm-up records feed the warm-up's metrics only, and go only to the sinks that
    /// take them (`RecordSink::takes_warmup`). A chat request's input tokens are first counted
    /// again through the chat template, when the run counts with one (its body kept for that).
    pub fn process(&mut self, mut record: RequestRecord) -> Result<()> {
        if let Some(body) = record.sent_body.take()
            && let Some(template) = &self.ctx.chat_template
            && let Some(tokens) = template.count_request(&self.ctx.tokenizer, &body)
        {
            record.input_tokens = tokens;
        }
        let warmup = record.origin.phase_kind == PhaseKind::Warmup;
        let (metrics, good_mark) = self.record_metrics(&record);
        let span = self.epoch_span(&record);
        if warmup {
            let (ctx, slos, spill) = (&self.ctx, &self.slos, &self.spill);
            let processor = self.warmup.get_or_insert_with(|| Box::new(Self::part(ctx, slos, spill)));
            processor.accumulate(&record, &metrics, good_mark, span);
        } else {
            self.accumulate(&record, &metrics, good_mark, span);
        }
        let (ctx, slos, spill) = (&self.ctx, &self.slos, &self.spill);
        if let Some(split) = &mut self.by_phase {
            split.add(&record, &metrics, good_mark, span, || Self::part(ctx, slos, spill));
        }
        for sink in self.sinks.iter_mut().filter(|sink| !warmup || sink.takes_warmup()) {
            sink.write(&record, &metrics, good_mark)?;
        }
        Ok(())
    }

    /// A record's metrics (success or error ones; none for a cut-off record), and whether a
    /// success met every SLO when the run has SLOs.
    fn record_metrics(&self, record: &RequestRecord) -> (RecordMetrics, Option<bool>) {
        if record.is_valid() {
            let metrics = success_metrics(record, &self.ctx);
            let good = self.slos.as_ref().map(|slos| slos.met(&metrics));
            (metrics, good)
        } else if record.error.is_some() {
            (error_metrics(record), None)
        } else {
            (RecordMetrics::default(), None)
        }
    }

    /// A record's span in epoch ns: its start, and its start plus its latency.
    fn epoch_span(&self, record: &RequestRecord) -> (u64, u64) {
        let start_epoch_ns = self.ctx.clock.epoch_ns(record.start_ns);
        (start_epoch_ns, start_epoch_ns + request_latency_ns(record))
    }

    /// Adds one record, with its metrics and its span in epoch ns, to the values kept.
    fn accumulate(
        &mut self,
        record: &RequestRecord,
        metrics: &RecordMetrics,
        good_mark: Option<bool>,
        span: (u64, u64),
    ) {
        if record.is_valid() {
            let good = good_mark.unwrap_or(false);
            self.run.add_success(record, metrics, span, good);
            if let Some(slices) = &mut self.timeslices {
                slices.slice_for(record.start_ns, record.end_ns).add_success(record, metrics, span, good);
            }
            if let Some(sent_to) = &record.url {
                self.by_url.of(sent_to).add_success(record, metrics, span, good);
            }
            self.in_flight.add(record, Some(record_tokens(metrics)), self.ctx.streamed(record));
        } else if let Some(error) = &record.error {
            self.errors.add(error);
            self.run.add_error(record, metrics);
            if let Some(slices) = &mut self.timeslices {
                slices.slice_for(record.start_ns, record.end_ns).add_error(record, metrics);
            }
            if let Some(sent_to) = &record.url {
                self.by_url.of(sent_to).add_error(record, metrics);
            }
            self.in_flight.add(record, None, self.ctx.streamed(record));
        } else {
            self.in_flight.add(record, None, self.ctx.streamed(record));
        }
    }

    /// No record processed from now on starts before `watermark_ns` (run-clock ns: the start
    /// of the oldest request still in flight): what was in flight before it is swept into the
    /// time-weighted metrics during the run, not kept for the end.
    pub fn advance_watermark(&mut self, watermark_ns: u64) {
        let time_weighted = &mut self.time_weighted;
        self.in_flight.advance_watermark(watermark_ns, &mut |segment| time_weighted.add(segment));
        if let Some(split) = &mut self.by_phase {
            split.advance_watermark(watermark_ns);
        }
    }

    /// No record is waiting: every sink puts what it holds in its file, so that a crash while
    /// the thread waits loses nothing it processed.
    pub fn caught_up(&mut self) -> Result<()> {
        self.sinks.iter_mut().try_for_each(|sink| sink.caught_up())
    }

    /// Flush the sinks and compute every metric's stats (registry order), the error summary
    /// and the timeslices.
    pub fn finish(self) -> Result<ProcessedMetrics> {
        self.finish_adjusted(None)
    }

    /// `finish`, with the network-adjusted latencies of a run that subtracts a round trip.
    pub fn finish_adjusted(self, network_rtt: Option<&NetworkRtt>) -> Result<ProcessedMetrics> {
        let warmup_metrics = match self.warmup {
            Some(warmup) => warmup.finish_adjusted(network_rtt)?.metrics,
            None => Vec::new(),
        };
        let (has_phases, has_tokens) = (self.in_flight.has_phases(), self.in_flight.has_tokens());
        let spec_decode_histogram = self.run.spec_decode_histogram().to_vec();
        let token_check_causes = self.run.token_check_causes().clone();
        let (sinks, in_flight, mut time_weighted, run) = (self.sinks, self.in_flight, self.time_weighted, self.run);
        std::thread::scope(|scope| {
            // The files are flushed and synced, and the in-flight changes left swept into the
            // time-weighted metrics, while this thread sums up the kept values.
            let flushed = scope.spawn(move || sinks.into_iter().try_for_each(|sink| sink.finish()));
            let swept = scope.spawn(move || {
                in_flight.finish(&mut |segment| time_weighted.add(segment));
                time_weighted.finish(has_phases, has_tokens)
            });
            let mut slices_time_weighted = Default::default();
            let metrics = run.finish_run(
                || {
                    let (run_time_weighted, slices) = joined(swept);
                    slices_time_weighted = slices;
                    run_time_weighted
                },
                network_rtt,
            );
            joined(flushed)?;
            let timeslices =
                self.timeslices.map(|slices| slices.finish(slices_time_weighted, &self.ctx.clock)).unwrap_or_default();
            let by_url = self.by_url.finish();
            let error_summary = self.errors.into_summary();
            let by_phase = match self.by_phase {
                Some(split) => split.finish(network_rtt, (&metrics, &error_summary, &token_check_causes))?,
                None => Vec::new(),
            };
            Ok(ProcessedMetrics {
                metrics,
                error_summary,
                by_url,
                timeslices,
                spec_decode_histogram,
                token_check_causes,
                warmup_metrics,
                by_phase,
            })
        })
    }
}

impl PhasePart for RecordProcessor {
    fn accumulate(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>, span: (u64, u64)) {
        RecordProcessor::accumulate(self, record, metrics, good, span);
    }

    fn advance_watermark(&mut self, watermark_ns: u64) {
        RecordProcessor::advance_watermark(self, watermark_ns);
    }

    fn finish(self, network_rtt: Option<&NetworkRtt>) -> Result<PartMeasured> {
        let processed = self.finish_adjusted(network_rtt)?;
        Ok((processed.metrics, processed.error_summary, processed.token_check_causes))
    }
}

/// What a scoped thread returned; its panic, if it panicked, carried on here.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// A successful record's input and output lengths (ISL, OSL) from its metrics.
fn record_tokens(metrics: &RecordMetrics) -> RecordTokens {
    let count = |def| match metrics.get(def) {
        Some(MetricValue::Count(n)) => *n,
        _ => 0,
    };
    RecordTokens { input: count(&registry::INPUT_SEQUENCE_LENGTH), output: count(&registry::OUTPUT_SEQUENCE_LENGTH) }
}

#[cfg(test)]
mod tests;
