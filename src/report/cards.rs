//! The summary cards at the top of a run's section: request and token rates, TTFT / ITL /
//! latency p50 and p99, errors, goodput, thresholds, and the client self-check verdict.

use serde_json::Value;

use super::artifacts::RunArtifacts;
use super::chart::short_number;
use super::svg::escape;

/// How a card is coloured.
#[derive(Clone, Copy)]
enum Tone {
    Plain,
    Good,
    Bad,
}

struct Card {
    label: &'static str,
    value: String,
    detail: String,
    tone: Tone,
}

fn stat_card(run: &RunArtifacts, label: &'static str, metric: &str, stat: &str, unit: &str) -> Option<Card> {
    let value = run.stat(metric, stat)?;
    Some(Card { label, value: short_number(value), detail: unit.to_string(), tone: Tone::Plain })
}

fn latency_card(run: &RunArtifacts, label: &'static str, metric: &str) -> Option<Card> {
    let p50 = run.stat(metric, "p50")?;
    let p99 = run.stat(metric, "p99")?;
    Some(Card {
        label,
        value: format!("{} / {}", short_number(p50), short_number(p99)),
        detail: "p50 / p99 ms".into(),
        tone: Tone::Plain,
    })
}

fn errors_card(run: &RunArtifacts) -> Card {
    let errors: f64 = run.summary["error_summary"]
        .as_array()
        .map_or(0.0, |errors| errors.iter().map(|e| e["count"].as_f64().unwrap_or(0.0)).sum());
    let rate = run.stat("request_error_rate", "avg").unwrap_or(0.0);
    Card {
        label: "errors",
        value: short_number(errors),
        detail: format!("{}% of requests", short_number(rate)),
        tone: if errors > 0.0 { Tone::Bad } else { Tone::Good },
    }
}

fn thresholds_card(summary: &Value) -> Option<Card> {
    let results = summary["thresholds"]["results"].as_array()?;
    let failed: Vec<&str> =
        results.iter().filter(|r| r["passed"] != true).filter_map(|r| r["expression"].as_str()).collect();
    Some(Card {
        label: "thresholds",
        value: format!("{} of {} passed", results.len() - failed.len(), results.len()),
        detail: if failed.is_empty() { "all passed".into() } else { format!("failed: {}", failed.join(", ")) },
        tone: if failed.is_empty() { Tone::Good } else { Tone::Bad },
    })
}

fn self_check_card(summary: &Value) -> Option<Card> {
    let checks = summary["client_self_check"].as_array()?;
    if checks.is_empty() {
        return None;
    }
    let warnings: Vec<&str> =
        checks.iter().flat_map(|c| c["warnings"].as_array().into_iter().flatten()).filter_map(Value::as_str).collect();
    let (value, tone) = if checks.iter().any(|c| c["client_bound"] == true) {
        ("client-bound", Tone::Bad)
    } else if checks.iter().any(|c| c["requests_failed"] == true) {
        ("not judged", Tone::Plain)
    } else {
        ("client kept up", Tone::Good)
    };
    Some(Card { label: "client self-check", value: value.into(), detail: warnings.join("; "), tone })
}

/// The accuracy of an accuracy run, with each task's beside it.
fn accuracy_card(summary: &Value) -> Option<Card> {
    let overall = summary[crate::accuracy::OVERALL_TAG]["avg"].as_f64()?;
    let per_task = summary["accuracy"]["per_task"].as_object();
    let tasks: Vec<String> = per_task
        .into_iter()
        .flatten()
        .filter_map(|(task, tally)| Some(format!("{task} {:.1}%", tally["accuracy_rate"].as_f64()? * 100.0)))
        .collect();
    let benchmark = summary["accuracy"]["benchmark"].as_str().unwrap_or("accuracy");
    let detail = match tasks.len() {
        0 | 1 => benchmark.to_string(),
        _ => format!("{benchmark}: {}", tasks.join(", ")),
    };
    Some(Card { label: "accuracy", value: format!("{:.1}%", overall * 100.0), detail, tone: Tone::Plain })
}

/// The cards of one run as HTML.
pub fn html(run: &RunArtifacts) -> String {
    let cards = [
        stat_card(run, "requests/s", "request_throughput", "avg", "completed per second"),
        stat_card(run, "output tokens/s", "output_token_throughput", "avg", "all users"),
        latency_card(run, "TTFT", "time_to_first_token"),
        latency_card(run, "ITL", "inter_token_latency"),
        latency_card(run, "request latency", "request_latency"),
        Some(errors_card(run)),
        stat_card(run, "goodput", "goodput", "avg", "requests/s within the SLOs"),
        stat_card(run, "prompt cache hits", "overall_usage_prompt_cache_read_pct", "avg", "% of prompt tokens"),
        stat_card(
            run,
            "trace cache reuse",
            "theoretical_prefix_cache_hit",
            "avg",
            "% of blocks an infinite cache hits",
        ),
        stat_card(
            run,
            "acceptance length",
            "spec_decode_token_weighted_acceptance_length",
            "avg",
            "tokens per verify step",
        ),
        stat_card(run, "RTFx", "rtfx", "avg", "times faster than real time"),
        accuracy_card(&run.summary),
        thresholds_card(&run.summary),
        self_check_card(&run.summary),
    ];
    let mut html = String::from("<div class=\"cards\">");
    for card in cards.into_iter().flatten() {
        let tone = match card.tone {
            Tone::Plain => "plain",
            Tone::Good => "good",
            Tone::Bad => "bad",
        };
        html.push_str(&format!(
            "<div class=\"card {tone}\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"detail\">{}</div></div>",
            escape(card.label),
            escape(&card.value),
            escape(&card.detail)
        ));
    }
    html.push_str("</div>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_acceptance_and_rtfx_cards_show_when_the_run_has_them() {
        let run = |summary: Value| RunArtifacts {
            label: "run".into(),
            dir: "run".into(),
            summary,
            records: Default::default(),
            server_metrics: Default::default(),
            gpu: Default::default(),
        };
        let plain = html(&run(serde_json::json!({})));
        assert!(!plain.contains("prompt cache hits") && !plain.contains("trace cache reuse"), "{plain}");
        let with_them = html(&run(serde_json::json!({
            "overall_usage_prompt_cache_read_pct": { "unit": "%", "avg": 64.0 },
            "spec_decode_token_weighted_acceptance_length": { "unit": "ratio", "avg": 2.75 },
            "rtfx": { "unit": "ratio", "avg": 27.0 },
            "theoretical_prefix_cache_hit": { "unit": "%", "avg": 61.1, "count": 54, "sum": 33 },
        })));
        for label in ["prompt cache hits", "trace cache reuse", "acceptance length", "RTFx"] {
            assert!(with_them.contains(label), "{label}: {with_them}");
        }
    }
}
