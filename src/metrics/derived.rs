//! Derived metrics: run-level formulas over aggregate values, record-metric sums and other
//! derived values, evaluated once every record has arrived.

use std::collections::HashMap;

use super::registry::{self as r, MetricDef};

const NS_PER_SEC: f64 = 1e9;

/// What the formulas read, by tag: an aggregate's or derived metric's value, or the sum of a
/// record metric over its records.
pub type KnownValues = HashMap<&'static str, f64>;

type Formula = fn(&KnownValues) -> Option<f64>;

fn get(known: &KnownValues, def: &MetricDef) -> Option<f64> {
    known.get(def.tag).copied()
}

/// `amount` per second of benchmark duration; None for a zero-length run.
fn per_second(known: &KnownValues, amount: f64) -> Option<f64> {
    let duration_s = get(known, &r::BENCHMARK_DURATION)?;
    (duration_s > 0.0).then(|| amount / duration_s)
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
