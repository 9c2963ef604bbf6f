//! k6-style thresholds (`"request_latency.p99 < 5000"`): parsed when the plan is built,
//! evaluated against a run's metrics (and a scripted phase's session metrics, `sessions.rs`) at
//! its end. A failed threshold fails the scenario.

pub mod sessions;

use serde::{Deserialize, Serialize};

use crate::metric_result::{MetricKind, MetricResult};
use crate::metrics::registry::{self, MetricFlags};
use crate::session_metrics::ScriptedSessionsSummary;

/// `errors / (requests + errors)`, a ratio: not a registry metric, but what CI gates on.
pub const ERROR_RATE: &str = "error_rate";

const STATS: [&str; 15] =
    ["avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std", "count", "sum"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "==")]
    Eq,
}

impl Op {
    fn holds(self, actual: f64, limit: f64) -> bool {
        match self {
            Op::Lt => actual < limit,
            Op::Le => actual <= limit,
            Op::Gt => actual > limit,
            Op::Ge => actual >= limit,
            Op::Eq => actual == limit,
        }
    }
}

/// One threshold: `metric.stat op value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// As written, e.g. `request_latency.p99 < 5000`.
    pub expression: String,
    pub metric: String,
    pub stat: String,
    pub op: Op,
    pub value: f64,
}

/// A threshold's verdict on one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdOutcome {
    pub expression: String,
    /// The measured value; None when the run did not produce the metric (which fails).
    pub actual: Option<f64>,
    pub passed: bool,
}

/// Parse `metric[.stat] op number`; the stat defaults to `avg`.
pub fn parse(expression: &str) -> Result<Threshold, String> {
    let bad = |why: String| Err(format!("threshold \"{expression}\": {why}"));
    let Some(at) = expression.find(['<', '>', '=']) else {
        return bad("expected `metric.stat op number` with op one of <, <=, >, >=, ==".into());
    };
    let rest = &expression[at..];
    let (op, op_len) = if rest.starts_with("<=") {
        (Op::Le, 2)
    } else if rest.starts_with(">=") {
        (Op::Ge, 2)
    } else if rest.starts_with("==") {
        (Op::Eq, 2)
    } else if rest.starts_with('<') {
        (Op::Lt, 1)
    } else if rest.starts_with('>') {
        (Op::Gt, 1)
    } else {
        return bad("`=` is not an operator; use ==".into());
    };
    let number = rest[op_len..].trim();
    let Some(value) = number.parse::<f64>().ok().filter(|v| v.is_finite()) else {
        return bad(format!("`{number}` is not a number"));
    };
    let left = expression[..at].trim();
    if let Some(session) = sessions::split(left, &STATS) {
        let (metric, stat) = match session {
            Ok(path) => path,
            Err(why) => return bad(why),
        };
        return Ok(Threshold { expression: expression.trim().to_string(), metric, stat, op, value });
    }
    let (metric, stat) = accuracy_split(left).unwrap_or_else(|| left.split_once('.').unwrap_or((left, "avg")));
    let (metric, stat) = (metric.trim(), stat.trim());
    if let Err(why) = check_metric_stat(metric, stat) {
        return bad(why);
    }
    Ok(Threshold { expression: expression.trim().to_string(), metric: metric.into(), stat: stat.into(), op, value })
}

/// The accuracy metrics (a dot in their own names): `accuracy.overall[.avg]`.
const ACCURACY_TAGS: [&str; 2] = [crate::accuracy::OVERALL_TAG, crate::accuracy::UNPARSED_TAG];

/// `left` split into an accuracy metric and its statistic, when it names one.
fn accuracy_split(left: &str) -> Option<(&str, &str)> {
    let tag = ACCURACY_TAGS.iter().find(|tag| left == **tag || left.starts_with(&format!("{tag}.")))?;
    Some((tag, left[tag.len()..].strip_prefix('.').unwrap_or("avg")))
}

/// The names a threshold can use: every exported metric, `error_rate` and the accuracy.
pub fn metric_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = registry::METRICS.iter().filter(|d| d.exported()).map(|d| d.tag).collect();
    names.push(ERROR_RATE);
    names.extend(ACCURACY_TAGS);
    names
}

fn check_metric_stat(metric: &str, stat: &str) -> Result<(), String> {
    let single_valued = if metric == ERROR_RATE || ACCURACY_TAGS.contains(&metric) {
        true
    } else {
        match registry::metric(metric).filter(|d| d.exported()) {
            Some(def) => def.kind != MetricKind::Record && !def.has(registry::MetricFlags::TIME_WEIGHTED),
            None => {
                let names = metric_names();
                let hint = crate::suggest::closest(metric, &names)
                    .map(|near| format!(" (did you mean `{near}`?)"))
                    .unwrap_or_default();
                return Err(format!("unknown metric `{metric}`{hint}"));
            }
        }
    };
    if !STATS.contains(&stat) {
        let hint =
            crate::suggest::closest(stat, &STATS).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
        return Err(format!("unknown statistic `{stat}`{hint}; use one of {}", STATS.join(", ")));
    }
    if single_valued && stat != "avg" {
        return Err(format!("`{metric}` is a single value: write `{metric}` or `{metric}.avg`, not `.{stat}`"));
    }
    Ok(())
}

/// A threshold on a goodput metric needs SLOs in the same run.
pub fn needs_slos(threshold: &Threshold) -> bool {
    registry::metric(&threshold.metric).is_some_and(|d| d.has(MetricFlags::GOODPUT))
}

/// Whether `threshold` is on a scripted phase's session metrics.
pub fn on_sessions(threshold: &Threshold) -> bool {
    threshold.metric.strip_prefix(sessions::PREFIX).is_some_and(|rest| rest.starts_with('.'))
}

/// Judge every threshold against a run's metrics and its results phase's session metrics (for
/// a run of several trials, each trial's: their mean is judged, as the metrics' are).
pub fn evaluate(
    thresholds: &[Threshold],
    metrics: &[MetricResult],
    scripted: &[&ScriptedSessionsSummary],
) -> Vec<ThresholdOutcome> {
    thresholds
        .iter()
        .map(|t| {
            let actual = if on_sessions(t) { mean_session_value(t, scripted) } else { value_of(t, metrics) };
            ThresholdOutcome {
                expression: t.expression.clone(),
                actual,
                passed: actual.is_some_and(|v| t.op.holds(v, t.value)),
            }
        })
        .collect()
}

/// The mean of the threshold's session metric over `scripted`; None when one lacks it.
fn mean_session_value(threshold: &Threshold, scripted: &[&ScriptedSessionsSummary]) -> Option<f64> {
    let values: Option<Vec<f64>> =
        scripted.iter().map(|summary| sessions::value(summary, &threshold.metric, &threshold.stat)).collect();
    let values = values.filter(|values| !values.is_empty())?;
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

fn value_of(threshold: &Threshold, metrics: &[MetricResult]) -> Option<f64> {
    let find = |tag: &str| metrics.iter().find(|m| m.tag == tag);
    if threshold.metric == ERROR_RATE {
        let requests = find(registry::REQUEST_COUNT.tag).map_or(0.0, |m| m.stats.avg);
        let errors = find(registry::ERROR_REQUEST_COUNT.tag).map_or(0.0, |m| m.stats.avg);
        return Some(if requests + errors > 0.0 { errors / (requests + errors) } else { 0.0 });
    }
    find(&threshold.metric)?.stats.get(&threshold.stat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric_result::Stats;

    #[test]
    fn expressions_parse_with_every_operator_and_a_default_stat() {
        let t = parse("request_latency.p99 < 5000").unwrap();
        assert_eq!((t.metric.as_str(), t.stat.as_str(), t.op, t.value), ("request_latency", "p99", Op::Lt, 5000.0));
        assert_eq!(parse("goodput>=10").unwrap().op, Op::Ge);
        assert_eq!(parse("time_to_first_token <= 1.5").unwrap().stat, "avg");
        assert_eq!(parse("request_count == 4").unwrap().op, Op::Eq);
        assert_eq!(parse("error_rate > 0").unwrap().op, Op::Gt);
    }

    #[test]
    fn the_accuracy_is_a_single_value_with_a_dot_in_its_name() {
        let t = parse("accuracy.overall >= 0.7").unwrap();
        assert_eq!((t.metric.as_str(), t.stat.as_str(), t.op), ("accuracy.overall", "avg", Op::Ge));
        assert_eq!(parse("accuracy.unparsed.avg < 0.1").unwrap().metric, "accuracy.unparsed");
        assert!(parse("accuracy.overall.p99 > 0.5").unwrap_err().contains("single value"));
        let mut summary = crate::accuracy::AccuracySummary::new("gsm8k", "lighteval_gsm8k");
        (0..10).for_each(|k| summary.add("gsm8k", k < 7, false));
        let outcomes = evaluate(
            &[parse("accuracy.overall >= 0.7").unwrap(), parse("accuracy.overall > 0.7").unwrap()],
            &summary.metrics(),
            &[],
        );
        assert_eq!(outcomes.iter().map(|o| o.passed).collect::<Vec<_>>(), [true, false]);
    }

    #[test]
    fn bad_expressions_are_explained() {
        let err = |e: &str| parse(e).unwrap_err();
        assert!(err("request_latency.p99").contains("expected `metric.stat op number`"));
        assert!(err("request_latency.p99 < fast").contains("`fast` is not a number"));
        assert!(err("request_latency = 5").contains("use =="));
        assert!(err("request_latncy.p99 < 5").contains("did you mean `request_latency`?"));
        assert!(err("request_latency.avgg < 5").contains("unknown statistic `avgg` (did you mean `avg`?)"));
        assert!(err("request_throughput.p99 > 5").contains("single value"));
        // Time-weighted metrics have percentiles.
        assert!(parse("effective_concurrency.p99 <= 8").is_ok());
    }

    #[test]
    fn evaluation_reads_the_stat_and_error_rate_and_fails_missing_metrics() {
        let latency = registry::REQUEST_LATENCY.result(Stats { avg: 20.0, p99: Some(40.0), ..Default::default() });
        let requests = registry::REQUEST_COUNT.result(Stats::scalar(99.0));
        let errors = registry::ERROR_REQUEST_COUNT.result(Stats::scalar(1.0));
        let metrics = [latency, requests, errors];
        let rules: Vec<Threshold> =
            ["request_latency.p99 < 40", "request_latency.p99 <= 40", "error_rate < 0.02", "goodput > 1"]
                .iter()
                .map(|e| parse(e).unwrap())
                .collect();
        let outcomes = evaluate(&rules, &metrics, &[]);
        let verdicts: Vec<(Option<f64>, bool)> = outcomes.iter().map(|o| (o.actual, o.passed)).collect();
        assert_eq!(verdicts, [(Some(40.0), false), (Some(40.0), true), (Some(0.01), true), (None, false)]);
        assert!(needs_slos(&rules[3]) && !needs_slos(&rules[0]));
    }

    #[test]
    fn a_session_threshold_is_judged_on_the_mean_of_the_trials_session_metrics() {
        let rule = parse("scripted_sessions.failed <= 1").unwrap();
        assert!(on_sessions(&rule) && !on_sessions(&parse("request_latency.p99 < 40").unwrap()));
        let (none, two) = (
            ScriptedSessionsSummary::default(),
            ScriptedSessionsSummary { failed: 2, ..ScriptedSessionsSummary::default() },
        );
        let verdict = |scripted: &[&ScriptedSessionsSummary]| {
            let outcome = &evaluate(std::slice::from_ref(&rule), &[], scripted)[0];
            (outcome.actual, outcome.passed)
        };
        assert_eq!(verdict(&[&none, &two]), (Some(1.0), true));
        assert_eq!(verdict(&[&two]), (Some(2.0), false));
        assert_eq!(verdict(&[]), (None, false), "a run without the sessions fails it");
        assert!(parse("scripted_sessions.failed.p99 < 1").unwrap_err().contains("is a count"));
    }
}
