//! The thresholds' pass/fail table, printed after the metrics table.

use super::table::format_number;
use crate::result::RunResult;

/// One line per threshold with its measured value and verdict; empty when the run has none.
pub fn render(result: &RunResult) -> String {
    if result.thresholds.is_empty() {
        return String::new();
    }
    let width = result.thresholds.iter().map(|t| t.expression.chars().count()).max().unwrap_or(0);
    let verdict = if result.thresholds_passed() { "passed" } else { "FAILED" };
    let mut out = format!("thresholds {verdict} | {}\n", result.name);
    for outcome in &result.thresholds {
        let mark = if outcome.passed { "✓ pass" } else { "✗ FAIL" };
        let actual = outcome.actual.map_or_else(|| "not measured".to_string(), format_number);
        out.push_str(&format!("  {mark}  {:<width$}  actual {actual}\n", outcome.expression));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::thresholds::ThresholdOutcome;

    #[test]
    fn each_threshold_shows_its_verdict_and_value() {
        let mut result = sample_result();
        assert_eq!(render(&result), "");
        result.thresholds = vec![
            ThresholdOutcome { expression: "request_latency.p99 < 50".into(), actual: Some(40.0), passed: true },
            ThresholdOutcome { expression: "goodput > 1".into(), actual: None, passed: false },
        ];
        let text = render(&result);
        assert!(text.starts_with("thresholds FAILED | c8\n"), "{text}");
        assert!(text.contains("✓ pass  request_latency.p99 < 50  actual 40.00"), "{text}");
        assert!(text.contains("✗ FAIL  goodput > 1               actual not measured"), "{text}");
    }
}
