//! The metrics of each phase apart, for a run of several measured phases (a warm-up and a
//! profiling phase, or several profiling phases): AIPerf's `phases/<name>/` summaries and
//! `phase_manifest.json`. Each phase's records are accumulated by a record processor of its
//! own (a `PhasePart`), from the metrics the run's processor computed once; a run's only
//! results phase is not measured twice: its metrics are the run's.

use std::collections::BTreeMap;

use anyhow::Result;

use super::network_adjusted::NetworkRtt;
use super::record_values::RecordMetrics;
use super::token_check_causes::TokenCheckCauses;
use crate::record::RequestRecord;
use crate::result::{ErrorCount, MetricResult, PhaseMetrics};

/// The first start and the last end of a phase's records, in epoch ns.
#[derive(Clone, Copy)]
struct Span {
    first_start_ns: u64,
    last_end_ns: u64,
}

impl Span {
    const EMPTY: Span = Span { first_start_ns: u64::MAX, last_end_ns: 0 };

    fn widen(&mut self, (start_ns, end_ns): (u64, u64)) {
        self.first_start_ns = self.first_start_ns.min(start_ns);
        self.last_end_ns = self.last_end_ns.max(end_ns);
    }
}

/// What a phase's part measured: its metrics, error summary and token-check causes.
pub(super) type PartMeasured = (Vec<MetricResult>, Vec<ErrorCount>, TokenCheckCauses);

/// What measures one phase's records (the record processor, which implements it).
pub(super) trait PhasePart {
    /// Adds one record, with its metrics, SLO mark and span in epoch ns, to the values kept.
    fn accumulate(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>, span: (u64, u64));
    /// No record from now on starts before `watermark_ns` (run clock).
    fn advance_watermark(&mut self, watermark_ns: u64);
    /// The phase's metrics, error summary and the causes of its failed token checks.
    fn finish(self, network_rtt: Option<&NetworkRtt>) -> Result<PartMeasured>;
}

/// One phase's part, its span, and whether it is a warm-up.
struct PhaseMeasure<P> {
    part: Box<P>,
    span: Span,
    warmup: bool,
}

/// The phases' parts, by phase index, each made at its phase's first record.
pub(super) struct PhaseSplit<P> {
    phases: BTreeMap<usize, PhaseMeasure<P>>,
    /// Whether the run has one results phase: then only its index and span are kept here.
    sole_results_phase: bool,
    sole: Option<(usize, Span)>,
}

impl<P: PhasePart> PhaseSplit<P> {
    /// A split of a run with `results_phases` phases that feed the results.
    pub(super) fn new(results_phases: usize) -> Self {
        Self { phases: BTreeMap::new(), sole_results_phase: results_phases == 1, sole: None }
    }

    /// Accumulates `record` (with the `metrics` and SLO mark already computed for it, and its
    /// span in epoch ns) in its phase's processor.
    pub(super) fn add(
        &mut self,
        record: &RequestRecord,
        metrics: &RecordMetrics,
        good: Option<bool>,
        span: (u64, u64),
        make: impl FnOnce() -> P,
    ) {
        let warmup = record.origin.phase_kind == crate::plan::PhaseKind::Warmup;
        if self.sole_results_phase && !warmup {
            self.sole.get_or_insert((record.origin.phase_index, Span::EMPTY)).1.widen(span);
            return;
        }
        let phase = self.phases.entry(record.origin.phase_index).or_insert_with(|| PhaseMeasure {
            part: Box::new(make()),
            span: Span::EMPTY,
            warmup,
        });
        phase.span.widen(span);
        phase.part.accumulate(record, metrics, good, span);
    }

    /// Passes the run's watermark on to the phases that feed the results (a warm-up's requests
    /// do not hold it back, so its processor never gets one).
    pub(super) fn advance_watermark(&mut self, watermark_ns: u64) {
        for phase in self.phases.values_mut().filter(|phase| !phase.warmup) {
            phase.part.advance_watermark(watermark_ns);
        }
    }

    /// Each phase's metrics, error summary and token-check causes, in phase order; the sole
    /// results phase's are the run's (`run`).
    pub(super) fn finish(
        self,
        network_rtt: Option<&NetworkRtt>,
        run: (&[MetricResult], &[ErrorCount], &TokenCheckCauses),
    ) -> Result<Vec<PhaseMetrics>> {
        let phase_metrics = |phase_index, span: Span, (metrics, error_summary, token_check_causes)| PhaseMetrics {
            phase_index,
            start_ns: span.first_start_ns,
            end_ns: span.last_end_ns.max(span.first_start_ns),
            metrics,
            error_summary,
            token_check_causes,
        };
        let mut phases = self
            .phases
            .into_iter()
            .map(|(phase_index, phase)| Ok(phase_metrics(phase_index, phase.span, phase.part.finish(network_rtt)?)))
            .collect::<Result<Vec<_>>>()?;
        if let Some((phase_index, span)) = self.sole {
            phases.push(phase_metrics(phase_index, span, (run.0.to_vec(), run.1.to_vec(), run.2.clone())));
            phases.sort_by_key(|phase| phase.phase_index);
        }
        Ok(phases)
    }
}
