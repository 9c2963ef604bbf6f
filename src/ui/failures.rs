//! Failed requests on the console: one line per kind of error, and the message of a run whose
//! results phase had no successful request (exit code 98 unless the run allows it).

use crate::record::RecordError;
use crate::result::{ErrorCount, PhaseSummary, RunResult};

/// How many kinds of error the all-failed message lists.
const TOP_ERRORS: usize = 5;

/// `  12 × HTTP 500 Internal Server Error: the message`
pub fn error_line(error: &ErrorCount) -> String {
    format!("  {} × {}", error.count, error_text(&error.error_details))
}

/// `HTTP 500 Internal Server Error: the message` for an error status (its type the status's
/// reason phrase), else `timeout: the message` or `RequestCancellationError 499: the message`.
pub fn error_text(error: &RecordError) -> String {
    let RecordError { code, kind, message } = error;
    match code {
        Some(code) if is_reason_phrase(*code, kind) => format!("HTTP {code} {kind}: {message}"),
        Some(code) => format!("{kind} {code}: {message}"),
        None => format!("{kind}: {message}"),
    }
}

fn is_reason_phrase(code: u16, kind: &str) -> bool {
    let reason = http::StatusCode::from_u16(code).ok().and_then(|status| status.canonical_reason());
    reason.unwrap_or("HTTP Error") == kind
}

/// Why the run counts as failed, with its most frequent errors (its sessions' script errors
/// when its scripted sessions failed before sending anything).
pub fn render_all_failed(result: &RunResult, phase: &PhaseSummary) -> String {
    let artifacts = format!(
        "the artifacts are in {}; a run that expects this can say allow_all_failed: true\n",
        result.artifact_dir.display()
    );
    if let Some(sessions) = phase.scripted_sessions.as_ref().filter(|_| phase.sent == 0) {
        let mut out = format!(
            "error: run `{}`: phase `{}` sent no request: {} of its {} sessions failed; the most frequent errors:\n",
            result.name, phase.name, sessions.failed, sessions.started
        );
        for error in sessions.errors.iter().take(TOP_ERRORS) {
            out.push_str(&format!("  {} × {}\n", error.sessions, error.message));
        }
        return out + artifacts.as_str();
    }
    let cancelled = match phase.cancelled {
        0 => String::new(),
        n => format!(", {n} cancelled: cut off at the phase's end or by its cancellation rate"),
    };
    let mut out = format!(
        "error: run `{}`: none of the {} requests of phase `{}` succeeded ({} failed{cancelled})",
        result.name, phase.sent, phase.name, phase.errors
    );
    out.push_str(if result.error_summary.is_empty() { "\n" } else { "; the most frequent errors:\n" });
    let mut errors: Vec<&ErrorCount> = result.error_summary.iter().collect();
    errors.sort_by_key(|error| std::cmp::Reverse(error.count));
    for error in errors.into_iter().take(TOP_ERRORS) {
        out.push_str(&error_line(error));
        out.push('\n');
    }
    out + artifacts.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordError;

    fn errors(kind: &str, code: Option<u16>, count: u64) -> ErrorCount {
        ErrorCount {
            error_details: RecordError { code, kind: kind.into(), message: format!("{kind} happened") },
            count,
        }
    }

    #[test]
    fn the_most_frequent_five_errors_are_listed_first() {
        let mut result = crate::export::test_support::sample_result();
        result.error_summary = (1..=7).map(|n| errors(&format!("kind{n}"), Some(500), n)).collect();
        let phase = PhaseSummary {
            name: "profiling".into(),
            kind: "profiling",
            sent: 28,
            completed: 0,
            errors: 28,
            cancelled: 0,
            duration_s: 1.0,
            results: true,
            window_start_ns: 0,
            window_end_ns: 1,
            sessions: None,
            scripted_sessions: None,
            branch_stats: None,
            adaptive_scale: None,
            self_check: Default::default(),
        };
        let text = render_all_failed(&result, &phase);
        let lines: Vec<&str> = text.lines().collect();
        let opening = format!("error: run `{}`: none of the 28 requests of phase `profiling` succeeded", result.name);
        assert!(lines[0].starts_with(&opening), "{text}");
        assert_eq!(lines[1], "  7 × kind7 500: kind7 happened");
        assert_eq!(lines[5], "  3 × kind3 500: kind3 happened");
        assert!(lines[6].contains("allow_all_failed: true"), "{text}");
        assert_eq!(error_line(&errors("timeout", None, 2)), "  2 × timeout: timeout happened");
        let unavailable = errors("Service Unavailable", Some(503), 4);
        assert_eq!(error_line(&unavailable), "  4 × HTTP 503 Service Unavailable: Service Unavailable happened");
    }

    #[test]
    fn a_phase_whose_requests_were_all_cancelled_measured_nothing() {
        let mut result = crate::export::test_support::sample_result();
        result.error_summary.clear();
        let phase = PhaseSummary {
            name: "profiling".into(),
            kind: "profiling",
            sent: 4,
            completed: 0,
            errors: 0,
            cancelled: 4,
            duration_s: 2.0,
            results: true,
            window_start_ns: 0,
            window_end_ns: 1,
            sessions: None,
            scripted_sessions: None,
            branch_stats: None,
            adaptive_scale: None,
            self_check: Default::default(),
        };
        result.phases = vec![phase.clone()];
        assert_eq!(result.results_phase_without_success().map(|p| p.cancelled), Some(4));
        let text = render_all_failed(&result, &phase);
        assert!(
            text.starts_with(&format!(
                "error: run `{}`: none of the 4 requests of phase `profiling` succeeded (0 failed, 4 cancelled",
                result.name
            )),
            "{text}"
        );
        assert!(!text.contains("most frequent errors"), "{text}");
        result.phases[0].completed = 1;
        assert!(result.results_phase_without_success().is_none(), "one success is a measurement");
    }
}
