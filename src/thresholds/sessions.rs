//! Thresholds on a scripted phase's session metrics, by their path in the summary JSON
//! (`phases[i].scripted_sessions`): `scripted_sessions.failed == 0`,
//! `scripted_sessions.session_latency_ms.p99 < 30000`, `scripted_sessions.steps.act.errors == 0`.
//! Which paths there are, and a path's value in a phase's summary.

use crate::result::PhaseSummary;
use crate::session_metrics::ScriptedSessionsSummary;

/// What a session threshold's path starts with.
pub const PREFIX: &str = "scripted_sessions";

/// The phase's counts, each a single value.
const COUNTS: [&str; 7] = ["started", "completed", "failed", "cut", "peak_live", "tool_calls", "sub_agents"];
/// The phase's distributions, each with every statistic.
const DISTRIBUTIONS: [&str; 3] = ["session_latency_ms", "steps_per_session", "tool_calls_per_session"];
/// A step tag's counts and distributions (`steps.<tag>.<name>`).
const STEP_COUNTS: [&str; 3] = ["requests", "errors", "cancelled"];
const STEP_DISTRIBUTIONS: [&str; 2] = ["latency_ms", "ttft_ms"];

/// `left` (what precedes the operator) as a session metric's path and statistic, when it starts
/// with `scripted_sessions.`: the statistic is its last part when that is one of `stats` (else
/// `avg`), and the path must name a count (`avg` only) or a distribution.
pub fn split(left: &str, stats: &[&str]) -> Option<Result<(String, String), String>> {
    let path = left.strip_prefix(PREFIX)?.strip_prefix('.')?;
    let (path, stat) = match path.rsplit_once('.') {
        Some((path, stat)) if stats.contains(&stat) => (path, stat),
        _ => (path, "avg"),
    };
    let name = match path.strip_prefix("steps.").and_then(|step| step.rsplit_once('.')) {
        Some((tag, name)) if !tag.is_empty() => name,
        _ => path,
    };
    let (counts, distributions): (&[&str], &[&str]) = match path.starts_with("steps.") {
        true => (&STEP_COUNTS, &STEP_DISTRIBUTIONS),
        false => (&COUNTS, &DISTRIBUTIONS),
    };
    let whole = format!("{PREFIX}.{path}");
    Some(if counts.contains(&name) {
        match stat {
            "avg" => Ok((whole, stat.to_string())),
            _ => Err(format!("`{whole}` is a count: write `{whole}`, not `.{stat}`")),
        }
    } else if distributions.contains(&name) {
        Ok((whole, stat.to_string()))
    } else {
        Err(format!(
            "`{left}` is no session metric: use `{PREFIX}.` with one of {}, {} (a statistic after them), \
             or `steps.<tag>.` with one of {}, {}",
            COUNTS.join(", "),
            DISTRIBUTIONS.join(", "),
            STEP_COUNTS.join(", "),
            STEP_DISTRIBUTIONS.join(", ")
        ))
    })
}

/// The value of the session metric at `path` (as `split` gave it) and `stat` in `summary`; None
/// where the summary has none (a step tag it lacks, a distribution with no value).
pub fn value(summary: &ScriptedSessionsSummary, path: &str, stat: &str) -> Option<f64> {
    let json = serde_json::to_value(summary).ok()?;
    let path = path.strip_prefix(PREFIX)?.strip_prefix('.')?;
    let found = match path.strip_prefix("steps.").and_then(|step| step.rsplit_once('.')) {
        Some((tag, name)) => json.get("steps")?.get(tag)?.get(name)?,
        None => json.get(path)?,
    };
    if found.is_object() { found.get(stat)?.as_f64() } else { found.as_f64() }
}

/// The session metrics a run's thresholds are judged on: those of its one results phase of
/// scripted sessions; None when it has none, or several.
pub fn of_results(phases: &[PhaseSummary]) -> Option<&ScriptedSessionsSummary> {
    let mut scripted =
        phases.iter().filter(|phase| phase.results).filter_map(|phase| phase.scripted_sessions.as_deref());
    let one = scripted.next()?;
    scripted.next().is_none().then_some(one)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric_result::Stats;
    use crate::session_metrics::StepTagSummary;

    const STATS: [&str; 3] = ["avg", "p50", "p99"];

    fn split_ok(left: &str) -> (String, String) {
        split(left, &STATS).expect("a session path").expect("a valid one")
    }

    #[test]
    fn paths_name_a_count_or_a_distribution_with_its_statistic() {
        assert_eq!(split_ok("scripted_sessions.failed"), ("scripted_sessions.failed".into(), "avg".into()));
        assert_eq!(
            split_ok("scripted_sessions.session_latency_ms.p99"),
            ("scripted_sessions.session_latency_ms".into(), "p99".into())
        );
        assert_eq!(
            split_ok("scripted_sessions.steps.a.b.errors"),
            ("scripted_sessions.steps.a.b.errors".into(), "avg".into())
        );
        assert_eq!(
            split_ok("scripted_sessions.steps.act.latency_ms.p50"),
            ("scripted_sessions.steps.act.latency_ms".into(), "p50".into())
        );
        assert!(split("request_latency.p99", &STATS).is_none());
        let error = |left: &str| split(left, &STATS).expect("a session path").expect_err("refused");
        assert!(error("scripted_sessions.failed.p99").contains("is a count"));
        assert!(error("scripted_sessions.latency").contains("is no session metric"));
        assert!(error("scripted_sessions.steps.act").contains("is no session metric"));
    }

    #[test]
    fn values_are_read_from_the_summary_and_missing_ones_are_none() {
        let step = StepTagSummary {
            requests: 8,
            errors: 1,
            latency_ms: Some(Stats { p50: Some(12.5), ..Stats::default() }),
            ..Default::default()
        };
        let summary = ScriptedSessionsSummary {
            failed: 2,
            session_latency_ms: Some(Stats { p99: Some(900.0), ..Stats::default() }),
            steps: [("a.b".to_string(), step)].into_iter().collect(),
            ..Default::default()
        };
        let read = |left: &str| {
            let (path, stat) = split_ok(left);
            value(&summary, &path, &stat)
        };
        assert_eq!(read("scripted_sessions.failed"), Some(2.0));
        assert_eq!(read("scripted_sessions.session_latency_ms.p99"), Some(900.0));
        assert_eq!(read("scripted_sessions.steps.a.b.errors"), Some(1.0));
        assert_eq!(read("scripted_sessions.steps.a.b.latency_ms.p50"), Some(12.5));
        assert_eq!(read("scripted_sessions.steps.other.requests"), None);
        assert_eq!(read("scripted_sessions.steps_per_session.p50"), None);
    }
}
