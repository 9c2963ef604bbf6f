//! Derived metrics: run-level formulas over aggregate values, record-metric sums and other
//! derived values, evaluated once every record has arrived.

use std::collections::HashMap;

use super::registry::{self as r, MetricDef};

const NS_PER_SEC: f64 = 1e9;

/// What the formulas read, by tag: an aggregate's or derived metric's value, or the sum of a
/// record metric over its records.
pub type KnownValues = HashMap<&'static str, f64>;

/// The seconds a timeslice covers, where the values are a slice's: its rates are per second of
/// it (AIPerf's observation window), not of its requests' own span.
pub const OBSERVATION_WINDOW_S: &str = "observation_window_s";

type Formula = fn(&KnownValues) -> Option<f64>;

fn get(known: &KnownValues, def: &MetricDef) -> Option<f64> {
    known.get(def.tag).copied()
}

/// `amount` per second of the observation window (a timeslice's), else of the benchmark
/// duration; None for a zero-length one.
fn per_second(known: &KnownValues, amount: f64) -> Option<f64> {
    let duration_s = known.get(OBSERVATION_WINDOW_S).copied().or_else(|| get(known, &r::BENCHMARK_DURATION))?;
    (duration_s > 0.0).then(|| amount / duration_s)
}

/// `part / whole`; None when `whole` is 0.
fn ratio(part: f64, whole: f64) -> Option<f64> {
    (whole != 0.0).then(|| part / whole)
}

fn completed_requests(known: &KnownValues) -> f64 {
    get(known, &r::REQUEST_COUNT).unwrap_or(0.0) + get(known, &r::ERROR_REQUEST_COUNT).unwrap_or(0.0)
}

/// Every derived metric with its formula, each after the derived metrics it reads.
static DERIVATIONS: &[(&MetricDef, Formula)] = &[
    (&r::BENCHMARK_DURATION, |k| {
        let first_ns = get(k, &r::MIN_REQUEST_TIMESTAMP)?;
        let last_ns = get(k, &r::MAX_RESPONSE_TIMESTAMP)?;
        Some((last_ns - first_ns).max(0.0) / NS_PER_SEC)
    }),
    (&r::TOTAL_OUTPUT_TOKENS, |k| get(k, &r::OUTPUT_TOKEN_COUNT)),
    (&r::TOTAL_OSL, |k| get(k, &r::OUTPUT_SEQUENCE_LENGTH)),
    (&r::TOTAL_ISL, |k| get(k, &r::INPUT_SEQUENCE_LENGTH)),
    (&r::TOTAL_REASONING_TOKENS, |k| get(k, &r::REASONING_TOKEN_COUNT)),
    (&r::TOTAL_USAGE_PROMPT_TOKENS, |k| get(k, &r::USAGE_PROMPT_TOKENS)),
    (&r::TOTAL_USAGE_COMPLETION_TOKENS, |k| get(k, &r::USAGE_COMPLETION_TOKENS)),
    (&r::TOTAL_USAGE_TOTAL_TOKENS, |k| get(k, &r::USAGE_TOTAL_TOKENS)),
    (&r::TOTAL_ERROR_ISL, |k| get(k, &r::ERROR_ISL)),
    (&r::TOTAL_USAGE_REASONING_TOKENS, |k| get(k, &r::USAGE_REASONING_TOKENS)),
    (&r::TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS, |k| get(k, &r::USAGE_PROMPT_CACHE_READ_TOKENS)),
    (&r::TOTAL_USAGE_PROMPT_CACHE_WRITE_TOKENS, |k| get(k, &r::USAGE_PROMPT_CACHE_WRITE_TOKENS)),
    (&r::TOTAL_USAGE_PROMPT_CACHE_MISS_TOKENS, |k| get(k, &r::USAGE_PROMPT_CACHE_MISS_TOKENS)),
    (&r::TOTAL_USAGE_PROMPT_AUDIO_TOKENS, |k| get(k, &r::USAGE_PROMPT_AUDIO_TOKENS)),
    (&r::TOTAL_USAGE_COMPLETION_AUDIO_TOKENS, |k| get(k, &r::USAGE_COMPLETION_AUDIO_TOKENS)),
    (&r::TOTAL_USAGE_ACCEPTED_PREDICTION_TOKENS, |k| get(k, &r::USAGE_ACCEPTED_PREDICTION_TOKENS)),
    (&r::TOTAL_USAGE_REJECTED_PREDICTION_TOKENS, |k| get(k, &r::USAGE_REJECTED_PREDICTION_TOKENS)),
    (&r::TOTAL_USAGE_TOOL_USE_PROMPT_TOKENS, |k| get(k, &r::USAGE_TOOL_USE_PROMPT_TOKENS)),
    (&r::TOTAL_USAGE_PROMPT_AUDIO_SECONDS, |k| get(k, &r::USAGE_PROMPT_AUDIO_SECONDS)),
    (&r::OVERALL_USAGE_PROMPT_CACHE_READ_PCT, |k| {
        ratio(get(k, &r::TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS)?, get(k, &r::TOTAL_USAGE_PROMPT_TOKENS)?)
            .map(|share| share * 100.0)
    }),
    (&r::THEORETICAL_PREFIX_CACHE_HIT, |k| {
        ratio(get(k, &r::THEORETICAL_PREFIX_CACHE_HIT_BLOCKS)?, get(k, &r::THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS)?)
            .map(|share| share * 100.0)
    }),
    (&r::OVERALL_THINKING_EFFICIENCY, |k| ratio(get(k, &r::TOTAL_REASONING_TOKENS)?, get(k, &r::TOTAL_OUTPUT_TOKENS)?)),
    (&r::TOTAL_SPEC_DECODE_STEPS, |k| get(k, &r::SPEC_DECODE_STEPS)),
    (&r::TOTAL_ACCEPTED_DRAFT_TOKENS, |k| get(k, &r::SPEC_DECODE_ACCEPTED_DRAFT_TOKENS)),
    (&r::TOTAL_DRAFT_TOKENS, |k| get(k, &r::SPEC_DECODE_DRAFT_TOKENS)),
    (&r::SPEC_DECODE_TOKEN_WEIGHTED_ACCEPTANCE_LENGTH, |k| {
        ratio(get(k, &r::TOTAL_ACCEPTED_DRAFT_TOKENS)?, get(k, &r::TOTAL_SPEC_DECODE_STEPS)?)
            .map(|per_step| 1.0 + per_step)
    }),
    (&r::SPEC_DECODE_OVERALL_DRAFT_ACCEPTANCE_RATE, |k| {
        ratio(get(k, &r::TOTAL_ACCEPTED_DRAFT_TOKENS)?, get(k, &r::TOTAL_DRAFT_TOKENS)?).map(|share| share * 100.0)
    }),
    (&r::REQUEST_THROUGHPUT, |k| per_second(k, get(k, &r::REQUEST_COUNT)?)),
    (&r::OUTPUT_TOKEN_THROUGHPUT, |k| per_second(k, get(k, &r::TOTAL_OSL)?)),
    (&r::INPUT_TOKEN_THROUGHPUT, |k| per_second(k, get(k, &r::TOTAL_ISL)?)),
    (&r::TOTAL_TOKEN_THROUGHPUT, |k| per_second(k, get(k, &r::TOTAL_ISL)? + get(k, &r::TOTAL_OSL)?)),
    (&r::GOODPUT, |k| per_second(k, get(k, &r::GOOD_REQUEST_COUNT)?)),
    (&r::GOOD_REQUEST_FRACTION, |k| {
        let requests = get(k, &r::REQUEST_COUNT)?;
        (requests > 0.0).then(|| get(k, &r::GOOD_REQUEST_COUNT).unwrap_or(0.0) / requests)
    }),
    (&r::COMPLETED_REQUEST_COUNT, |k| {
        let completed = completed_requests(k);
        (completed > 0.0).then_some(completed)
    }),
    (&r::REQUEST_ERROR_RATE, |k| {
        let completed = completed_requests(k);
        (completed > 0.0).then(|| 100.0 * get(k, &r::ERROR_REQUEST_COUNT).unwrap_or(0.0) / completed)
    }),
];

/// Computes every derived metric whose dependencies have values, adding each to `known`.
pub fn derive_all(known: &mut KnownValues) -> Vec<(&'static MetricDef, f64)> {
    let mut derived = Vec::new();
    for &(def, formula) in DERIVATIONS {
        if !def.requires.iter().all(|dep| known.contains_key(dep.tag)) {
            continue;
        }
        if let Some(value) = formula(known) {
            known.insert(def.tag, value);
            derived.push((def, value));
        }
    }
    derived
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::MetricKind;

    fn known(entries: &[(&'static MetricDef, f64)]) -> KnownValues {
        entries.iter().map(|(d, v)| (d.tag, *v)).collect()
    }

    fn value(derived: &[(&'static MetricDef, f64)], def: &MetricDef) -> Option<f64> {
        derived.iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, v)| *v)
    }

    #[test]
    fn every_derived_metric_has_one_formula_after_its_derived_dependencies() {
        for def in r::METRICS.iter().filter(|m| m.kind == MetricKind::Derived) {
            let at = DERIVATIONS.iter().position(|(d, _)| std::ptr::eq(*d, *def));
            let at = at.unwrap_or_else(|| panic!("{} has no formula", def.tag));
            for dep in def.requires.iter().filter(|d| d.kind == MetricKind::Derived) {
                let dep_at = DERIVATIONS.iter().position(|(d, _)| std::ptr::eq(*d, *dep)).unwrap();
                assert!(dep_at < at, "{} is computed before its dependency {}", def.tag, dep.tag);
            }
        }
        assert_eq!(DERIVATIONS.len(), r::METRICS.iter().filter(|m| m.kind == MetricKind::Derived).count());
    }

    #[test]
    fn throughputs_totals_and_rates() {
        let mut k = known(&[
            (&r::REQUEST_COUNT, 8.0),
            (&r::ERROR_REQUEST_COUNT, 2.0),
            (&r::MIN_REQUEST_TIMESTAMP, 1_000_000_000.0),
            (&r::MAX_RESPONSE_TIMESTAMP, 5_000_000_000.0),
            (&r::OUTPUT_TOKEN_COUNT, 300.0),
            (&r::OUTPUT_SEQUENCE_LENGTH, 400.0),
            (&r::INPUT_SEQUENCE_LENGTH, 1000.0),
            (&r::ERROR_ISL, 50.0),
        ]);
        let d = derive_all(&mut k);
        assert_eq!(value(&d, &r::BENCHMARK_DURATION), Some(4.0));
        assert_eq!(value(&d, &r::REQUEST_THROUGHPUT), Some(2.0));
        assert_eq!(value(&d, &r::OUTPUT_TOKEN_THROUGHPUT), Some(100.0));
        assert_eq!(value(&d, &r::INPUT_TOKEN_THROUGHPUT), Some(250.0));
        assert_eq!(value(&d, &r::TOTAL_TOKEN_THROUGHPUT), Some(350.0));
        assert_eq!(value(&d, &r::TOTAL_OUTPUT_TOKENS), Some(300.0));
        assert_eq!(value(&d, &r::TOTAL_OSL), Some(400.0));
        assert_eq!(value(&d, &r::TOTAL_ISL), Some(1000.0));
        assert_eq!(value(&d, &r::TOTAL_ERROR_ISL), Some(50.0));
        assert_eq!(value(&d, &r::COMPLETED_REQUEST_COUNT), Some(10.0));
        assert_eq!(value(&d, &r::REQUEST_ERROR_RATE), Some(20.0));
        assert_eq!(value(&d, &r::TOTAL_REASONING_TOKENS), None);
        assert_eq!(value(&d, &r::TOTAL_USAGE_PROMPT_TOKENS), None);
        assert_eq!(value(&d, &r::GOODPUT), None, "no SLOs, no goodput");
        assert_eq!(value(&d, &r::GOOD_REQUEST_FRACTION), None);

        // A timeslice's rates are per second of its window, its benchmark duration kept.
        let mut k = known(&[
            (&r::REQUEST_COUNT, 8.0),
            (&r::MIN_REQUEST_TIMESTAMP, 1_000_000_000.0),
            (&r::MAX_RESPONSE_TIMESTAMP, 5_000_000_000.0),
        ]);
        k.insert(OBSERVATION_WINDOW_S, 2.0);
        let d = derive_all(&mut k);
        assert_eq!((value(&d, &r::BENCHMARK_DURATION), value(&d, &r::REQUEST_THROUGHPUT)), (Some(4.0), Some(4.0)));
    }

    #[test]
    fn goodput_and_good_fraction_follow_the_good_request_count() {
        let mut k = known(&[
            (&r::REQUEST_COUNT, 500.0),
            (&r::GOOD_REQUEST_COUNT, 483.0),
            (&r::MIN_REQUEST_TIMESTAMP, 0.0),
            (&r::MAX_RESPONSE_TIMESTAMP, 25_000_000_000.0),
        ]);
        let d = derive_all(&mut k);
        assert_eq!(value(&d, &r::GOODPUT), Some(483.0 / 25.0));
        assert_eq!(value(&d, &r::GOOD_REQUEST_FRACTION), Some(0.966));
    }

    #[test]
    fn cache_spec_decode_and_thinking_ratios_are_token_weighted() {
        let mut k = known(&[
            (&r::USAGE_PROMPT_TOKENS, 1000.0),
            (&r::USAGE_PROMPT_CACHE_READ_TOKENS, 640.0),
            (&r::USAGE_REASONING_TOKENS, 30.0),
            (&r::SPEC_DECODE_STEPS, 40.0),
            (&r::SPEC_DECODE_ACCEPTED_DRAFT_TOKENS, 70.0),
            (&r::SPEC_DECODE_DRAFT_TOKENS, 120.0),
            (&r::OUTPUT_TOKEN_COUNT, 200.0),
            (&r::REASONING_TOKEN_COUNT, 50.0),
            (&r::THEORETICAL_PREFIX_CACHE_HIT_BLOCKS, 33.0),
            (&r::THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS, 54.0),
        ]);
        let d = derive_all(&mut k);
        assert_eq!(value(&d, &r::THEORETICAL_PREFIX_CACHE_HIT), Some(33.0 / 54.0 * 100.0));
        assert_eq!(value(&d, &r::TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS), Some(640.0));
        assert_eq!(value(&d, &r::OVERALL_USAGE_PROMPT_CACHE_READ_PCT), Some(64.0));
        assert_eq!(value(&d, &r::TOTAL_USAGE_REASONING_TOKENS), Some(30.0));
        assert_eq!(value(&d, &r::TOTAL_USAGE_PROMPT_CACHE_WRITE_TOKENS), None);
        assert_eq!(value(&d, &r::TOTAL_SPEC_DECODE_STEPS), Some(40.0));
        // 1 + 70 / 40; 70 / 120.
        assert_eq!(value(&d, &r::SPEC_DECODE_TOKEN_WEIGHTED_ACCEPTANCE_LENGTH), Some(2.75));
        assert_eq!(value(&d, &r::SPEC_DECODE_OVERALL_DRAFT_ACCEPTANCE_RATE), Some(70.0 / 120.0 * 100.0));
        assert_eq!(value(&d, &r::OVERALL_THINKING_EFFICIENCY), Some(0.25));

        // Zero prompt tokens, zero steps, zero drafts, zero output: no ratio.
        let mut zero = known(&[
            (&r::USAGE_PROMPT_TOKENS, 0.0),
            (&r::USAGE_PROMPT_CACHE_READ_TOKENS, 0.0),
            (&r::SPEC_DECODE_STEPS, 0.0),
            (&r::SPEC_DECODE_ACCEPTED_DRAFT_TOKENS, 0.0),
            (&r::SPEC_DECODE_DRAFT_TOKENS, 0.0),
            (&r::OUTPUT_TOKEN_COUNT, 0.0),
            (&r::REASONING_TOKEN_COUNT, 0.0),
            (&r::THEORETICAL_PREFIX_CACHE_HIT_BLOCKS, 0.0),
            (&r::THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS, 0.0),
        ]);
        let d = derive_all(&mut zero);
        for def in [
            &r::THEORETICAL_PREFIX_CACHE_HIT,
            &r::OVERALL_USAGE_PROMPT_CACHE_READ_PCT,
            &r::SPEC_DECODE_TOKEN_WEIGHTED_ACCEPTANCE_LENGTH,
            &r::SPEC_DECODE_OVERALL_DRAFT_ACCEPTANCE_RATE,
            &r::OVERALL_THINKING_EFFICIENCY,
        ] {
            assert_eq!(value(&d, def), None, "{}", def.tag);
        }
        assert_eq!(value(&d, &r::TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS), Some(0.0));
    }

    #[test]
    fn a_zero_length_run_has_no_throughputs_and_an_empty_run_no_rates() {
        let mut k =
            known(&[(&r::REQUEST_COUNT, 1.0), (&r::MIN_REQUEST_TIMESTAMP, 7.0), (&r::MAX_RESPONSE_TIMESTAMP, 7.0)]);
        let d = derive_all(&mut k);
        assert_eq!(value(&d, &r::BENCHMARK_DURATION), Some(0.0));
        assert_eq!(value(&d, &r::REQUEST_THROUGHPUT), None);
        assert_eq!(value(&d, &r::REQUEST_ERROR_RATE), Some(0.0));
        assert!(derive_all(&mut KnownValues::new()).is_empty());
    }
}
