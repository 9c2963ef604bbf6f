//! Token-count checks with AIPerf's thresholds: the server's `usage` against the client's
//! counts (usage diff %, usage_discrepancy_count), and the output length against the one
//! requested (osl_mismatch_diff_pct, osl_mismatch_count). The thresholds are AIPerf's
//! defaults, or its `AIPERF_METRICS_*` variables where set.

use std::sync::OnceLock;

use super::record_values::{MetricValue, RecordMetrics};
use super::registry::{self, MetricDef};
use super::token_check_causes::TokenCheckCauses;

const USAGE_PCT_VARIABLE: &str = "AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD";
const OSL_PCT_VARIABLE: &str = "AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD";
const OSL_TOKENS_VARIABLE: &str = "AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD";

/// When a request's counts fail the checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenCheckThresholds {
    /// A usage count this many percent away from the client's makes a request a discrepancy.
    pub usage_pct: f64,
    /// An output length this many percent away from the requested one is a mismatch…
    pub osl_pct: f64,
    /// …but never more than this many tokens away.
    pub osl_max_tokens: u64,
}

impl Default for TokenCheckThresholds {
    fn default() -> Self {
        Self { usage_pct: 10.0, osl_pct: 5.0, osl_max_tokens: 50 }
    }
}

impl TokenCheckThresholds {
    /// AIPerf's thresholds with the variables `env` gives, checked as AIPerf checks them
    /// (percentages from 0 to 100, the token cap at least 1).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let defaults = Self::default();
        let percent = |name: &str, default: f64| match env(name) {
            None => Ok(default),
            Some(text) => match text.trim().parse::<f64>() {
                Ok(value) if (0.0..=100.0).contains(&value) => Ok(value),
                _ => Err(format!("{name} must be a percentage from 0 to 100, got `{text}`")),
            },
        };
        let osl_max_tokens = match env(OSL_TOKENS_VARIABLE) {
            None => defaults.osl_max_tokens,
            Some(text) => match text.trim().parse::<u64>() {
                Ok(value) if value >= 1 => value,
                _ => return Err(format!("{OSL_TOKENS_VARIABLE} must be a whole number of tokens ≥ 1, got `{text}`")),
            },
        };
        Ok(Self {
            usage_pct: percent(USAGE_PCT_VARIABLE, defaults.usage_pct)?,
            osl_pct: percent(OSL_PCT_VARIABLE, defaults.osl_pct)?,
            osl_max_tokens,
        })
    }

    /// This process's, read once (a bad value, which a run refuses before it starts, gives
    /// the defaults).
    pub fn current() -> Self {
        static CURRENT: OnceLock<TokenCheckThresholds> = OnceLock::new();
        *CURRENT.get_or_init(|| Self::from_env(|name| std::env::var(name).ok()).unwrap_or_default())
    }

    /// The output missed the requested length by more than min(`osl_pct` of it, `osl_max_tokens`).
    pub fn is_osl_mismatch(&self, actual: u64, requested: u64) -> bool {
        let threshold_tokens = (requested as f64 * self.osl_pct / 100.0).min(self.osl_max_tokens as f64);
        actual.abs_diff(requested) as f64 > threshold_tokens
    }
}

/// |reported − counted| / counted × 100; None when the client counted nothing.
pub fn usage_diff_pct(reported: u64, counted: u64) -> Option<f64> {
    (counted > 0).then(|| (reported as f64 - counted as f64).abs() / counted as f64 * 100.0)
}

/// (actual − requested) / requested × 100: negative when the server stopped early.
pub fn osl_mismatch_diff_pct(actual: u64, requested: u64) -> Option<f64> {
    (requested > 0).then(|| (actual as f64 - requested as f64) / requested as f64 * 100.0)
}

/// The diff % metrics of one record: each usage field against the client's count of the same
/// thing, and the output length against the requested one.
pub fn push_diff_metrics(metrics: &mut RecordMetrics, requested_output_tokens: Option<u64>) {
    let pairs = [
        (&registry::USAGE_PROMPT_TOKENS_DIFF_PCT, &registry::USAGE_PROMPT_TOKENS, &registry::INPUT_SEQUENCE_LENGTH),
        (
            &registry::USAGE_COMPLETION_TOKENS_DIFF_PCT,
            &registry::USAGE_COMPLETION_TOKENS,
            &registry::OUTPUT_SEQUENCE_LENGTH,
        ),
        (
            &registry::USAGE_REASONING_TOKENS_DIFF_PCT,
            &registry::USAGE_REASONING_TOKENS,
            &registry::REASONING_TOKEN_COUNT,
        ),
    ];
    for (diff, reported, counted) in pairs {
        if let Some(pct) = metrics.count(reported).zip(metrics.count(counted)).and_then(|(r, c)| usage_diff_pct(r, c)) {
            metrics.push(diff, MetricValue::Float(pct));
        }
    }
    let osl = metrics.count(&registry::OUTPUT_SEQUENCE_LENGTH);
    if let Some(pct) =
        osl.zip(requested_output_tokens).and_then(|(osl, requested)| osl_mismatch_diff_pct(osl, requested))
    {
        metrics.push(&registry::OSL_MISMATCH_DIFF_PCT, MetricValue::Float(pct));
    }
}

/// How many successful requests had their counts checked, and how many failed the check.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TokenCheckTally {
    usage_checked: bool,
    usage_discrepancies: u64,
    osl_checked: bool,
    osl_mismatches: u64,
    #[serde(default)]
    causes: TokenCheckCauses,
}

impl TokenCheckTally {
    /// Counts one successful record from its metrics and the output length it asked for.
    pub fn add(&mut self, metrics: &RecordMetrics, requested_output_tokens: Option<u64>) {
        let thresholds = TokenCheckThresholds::current();
        let diff = |def: &MetricDef| metrics.get(def).and_then(|value| value.samples().next());
        let prompt = diff(&registry::USAGE_PROMPT_TOKENS_DIFF_PCT);
        let outputs =
            [diff(&registry::USAGE_COMPLETION_TOKENS_DIFF_PCT), diff(&registry::USAGE_REASONING_TOKENS_DIFF_PCT)];
        let over = |pct: Option<f64>| pct.is_some_and(|pct| pct > thresholds.usage_pct);
        let usage_off = (over(prompt), outputs.into_iter().any(over));
        if prompt.is_some() || outputs.iter().any(Option::is_some) {
            self.usage_checked = true;
            if usage_off.0 || usage_off.1 {
                self.usage_discrepancies += 1;
            }
        }
        let mut osl_mismatch = false;
        if let (Some(osl), Some(requested)) =
            (metrics.count(&registry::OUTPUT_SEQUENCE_LENGTH), requested_output_tokens)
        {
            self.osl_checked = true;
            osl_mismatch = thresholds.is_osl_mismatch(osl, requested);
            self.osl_mismatches += u64::from(osl_mismatch);
        }
        self.causes.add(metrics, requested_output_tokens, usage_off, osl_mismatch);
    }

    /// What the failed checks point to.
    pub fn causes(&self) -> &TokenCheckCauses {
        &self.causes
    }

    /// Adds `other`'s checks to these.
    pub fn merge(&mut self, other: TokenCheckTally) {
        self.usage_checked |= other.usage_checked;
        self.usage_discrepancies += other.usage_discrepancies;
        self.osl_checked |= other.osl_checked;
        self.osl_mismatches += other.osl_mismatches;
        self.causes.merge(&other.causes);
    }

    /// The counts of the checks that could be made (0 when made and passed).
    pub fn values(&self) -> Vec<(&'static MetricDef, f64)> {
        let mut values = Vec::new();
        if self.usage_checked {
            values.push((&registry::USAGE_DISCREPANCY_COUNT, self.usage_discrepancies as f64));
        }
        if self.osl_checked {
            values.push((&registry::OSL_MISMATCH_COUNT, self.osl_mismatches as f64));
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics_with(counts: &[(&'static MetricDef, u64)], requested: Option<u64>) -> RecordMetrics {
        let mut metrics = RecordMetrics::default();
        for (def, n) in counts {
            metrics.push(def, MetricValue::Count(*n));
        }
        push_diff_metrics(&mut metrics, requested);
        metrics
    }

    fn float(metrics: &RecordMetrics, def: &MetricDef) -> Option<f64> {
        metrics.get(def).and_then(|value| value.samples().next())
    }

    #[test]
    fn diff_percentages_match_the_spec_formulas() {
        assert_eq!(usage_diff_pct(110, 100), Some(10.0));
        assert_eq!(usage_diff_pct(90, 120), Some(25.0));
        assert_eq!(usage_diff_pct(5, 0), None);
        // Requested 100, got 50: −50 %; got 120: +20 %.
        assert_eq!(osl_mismatch_diff_pct(50, 100), Some(-50.0));
        assert_eq!(osl_mismatch_diff_pct(120, 100), Some(20.0));
        assert_eq!(osl_mismatch_diff_pct(7, 0), None);
    }

    #[test]
    fn the_osl_threshold_is_five_percent_capped_at_fifty_tokens() {
        let defaults = TokenCheckThresholds::default();
        let is_osl_mismatch = |actual, requested| defaults.is_osl_mismatch(actual, requested);
        // 100 requested: 5 tokens of slack.
        assert!(!is_osl_mismatch(95, 100) && !is_osl_mismatch(105, 100));
        assert!(is_osl_mismatch(94, 100) && is_osl_mismatch(106, 100));
        // 2000 requested: 5 % would be 100, the cap makes it 50.
        assert!(!is_osl_mismatch(1950, 2000));
        assert!(is_osl_mismatch(1949, 2000) && is_osl_mismatch(2051, 2000));
        // 10 requested: half a token of slack, so any miss counts.
        assert!(is_osl_mismatch(9, 10) && !is_osl_mismatch(10, 10));
    }

    #[test]
    fn the_thresholds_are_aiperfs_variables_where_set_and_checked_as_it_checks_them() {
        let with = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            TokenCheckThresholds::from_env(move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        };
        assert_eq!(with(&[]), Ok(TokenCheckThresholds::default()));
        let set = with(&[
            ("AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD", "25"),
            ("AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD", "20"),
            ("AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD", "8"),
        ])
        .unwrap();
        assert_eq!(set, TokenCheckThresholds { usage_pct: 25.0, osl_pct: 20.0, osl_max_tokens: 8 });
        // 100 requested: 20 % is 20 tokens, the cap makes it 8.
        assert!(!set.is_osl_mismatch(92, 100) && set.is_osl_mismatch(91, 100));
        assert_eq!(
            with(&[("AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD", "150")]),
            Err("AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD must be a percentage from 0 to 100, got `150`".to_string())
        );
        assert!(with(&[("AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD", "0")]).unwrap_err().contains("≥ 1"));
    }

    #[test]
    fn a_record_gets_a_diff_for_each_pair_it_has() {
        // Client: ISL 200, OSL 40 of which 10 reasoning; server: 210 prompt, 36 completion, 8 reasoning.
        let metrics = metrics_with(
            &[
                (&registry::INPUT_SEQUENCE_LENGTH, 200),
                (&registry::OUTPUT_SEQUENCE_LENGTH, 40),
                (&registry::REASONING_TOKEN_COUNT, 10),
                (&registry::USAGE_PROMPT_TOKENS, 210),
                (&registry::USAGE_COMPLETION_TOKENS, 36),
                (&registry::USAGE_REASONING_TOKENS, 8),
            ],
            Some(50),
        );
        assert_eq!(float(&metrics, &registry::USAGE_PROMPT_TOKENS_DIFF_PCT), Some(5.0));
        assert_eq!(float(&metrics, &registry::USAGE_COMPLETION_TOKENS_DIFF_PCT), Some(10.0));
        assert_eq!(float(&metrics, &registry::USAGE_REASONING_TOKENS_DIFF_PCT), Some(20.0));
        assert_eq!(float(&metrics, &registry::OSL_MISMATCH_DIFF_PCT), Some(-20.0));

        let without_usage = metrics_with(&[(&registry::OUTPUT_SEQUENCE_LENGTH, 40)], None);
        assert!(float(&without_usage, &registry::USAGE_COMPLETION_TOKENS_DIFF_PCT).is_none());
        assert!(float(&without_usage, &registry::OSL_MISMATCH_DIFF_PCT).is_none());
    }

    #[test]
    fn the_tally_counts_requests_over_the_thresholds() {
        let mut tally = TokenCheckTally::default();
        assert!(tally.values().is_empty());
        let exact = [(&registry::INPUT_SEQUENCE_LENGTH, 100), (&registry::USAGE_PROMPT_TOKENS, 100)];
        let off_by_ten_pct = [(&registry::OUTPUT_SEQUENCE_LENGTH, 100), (&registry::USAGE_COMPLETION_TOKENS, 110)];
        let off_by_more = [(&registry::OUTPUT_SEQUENCE_LENGTH, 100), (&registry::USAGE_COMPLETION_TOKENS, 111)];
        // Exactly 10 % is not over the threshold; 11 % is. Requested 100: 94 is a mismatch, 100 is not.
        tally.add(&metrics_with(&exact, None), None);
        tally.add(&metrics_with(&off_by_ten_pct, Some(100)), Some(100));
        tally.add(&metrics_with(&off_by_more, Some(94)), Some(94));
        let values = tally.values();
        assert_eq!(values.len(), 2);
        assert!(std::ptr::eq(values[0].0, &registry::USAGE_DISCREPANCY_COUNT) && values[0].1 == 1.0);
        assert!(std::ptr::eq(values[1].0, &registry::OSL_MISMATCH_COUNT) && values[1].1 == 1.0);
    }
}
