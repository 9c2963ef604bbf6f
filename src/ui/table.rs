//! The console metrics tables, drawn with box characters like AIPerf's (and the breakdown by
//! url of an endpoint with several).

use crate::metrics::registry;
use crate::result::{MetricKind, MetricResult, RunResult, UrlMetrics};

pub(super) const COLUMNS: [&str; 7] = ["avg", "min", "max", "p99", "p90", "p50", "std"];

/// AIPerf's "LLM Metrics: Effective" table, in its order.
const EFFECTIVE: [&str; 10] = [
    "effective_concurrency",
    "effective_decode_throughput",
    "effective_prefill_throughput",
    "effective_decode_concurrency",
    "effective_prefill_concurrency",
    "effective_total_throughput",
    "effective_decode_throughput_per_user",
    "effective_prefill_throughput_per_user",
    "tokens_in_flight",
    "effective_latency",
];

/// AIPerf's "LLM Metrics: Active" table, in its order.
const ACTIVE: [&str; 5] = [
    "active_decode_throughput",
    "active_prefill_throughput",
    "active_decode_throughput_per_user",
    "active_prefill_throughput_per_user",
    "active_total_throughput",
];

/// AIPerf's "Usage" table (the server's usage counts), in its display order.
const USAGE: [&str; 27] = [
    "usage_prompt_tokens",
    "usage_prompt_cache_read_tokens",
    "usage_prompt_cache_write_tokens",
    "usage_prompt_cache_miss_tokens",
    "usage_prompt_audio_tokens",
    "usage_tool_use_prompt_tokens",
    "usage_prompt_audio_seconds",
    "usage_completion_tokens",
    "usage_reasoning_tokens",
    "usage_completion_audio_tokens",
    "usage_accepted_prediction_tokens",
    "usage_rejected_prediction_tokens",
    "usage_total_tokens",
    "total_usage_prompt_tokens",
    "total_usage_prompt_cache_read_tokens",
    "overall_usage_prompt_cache_read_pct",
    "total_usage_prompt_cache_write_tokens",
    "total_usage_prompt_cache_miss_tokens",
    "total_usage_prompt_audio_tokens",
    "total_usage_tool_use_prompt_tokens",
    "total_usage_prompt_audio_seconds",
    "total_usage_completion_tokens",
    "total_usage_reasoning_tokens",
    "total_usage_completion_audio_tokens",
    "total_usage_accepted_prediction_tokens",
    "total_usage_rejected_prediction_tokens",
    "total_usage_total_tokens",
];

/// AIPerf's "Spec Decode" table, in its display order.
const SPEC_DECODE: [&str; 6] = [
    "spec_decode_acceptance_length",
    "spec_decode_token_weighted_acceptance_length",
    "spec_decode_draft_acceptance_rate",
    "spec_decode_overall_draft_acceptance_rate",
    "spec_decode_accepted_per_verified",
    "spec_decode_steps",
];

/// Buckets of the accepted-draft histogram shown one by one; the rest are folded into one.
const SPEC_DECODE_HISTOGRAM_BUCKETS: usize = 8;

/// The console tables of `result` as AIPerf prints them: the Effective, Active and Usage
/// metrics (those the run has), every other console metric, then the Spec Decode metrics with
/// the pooled accepted-draft histogram, each table with a title line.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    // The time-weighted metrics are kept off the main table; the Usage and Spec Decode tables
    // hold console metrics only.
    let group = |tags: &[&str], console_only: bool| -> Vec<&MetricResult> {
        let found = |tag: &&str| result.metrics.iter().find(|m| m.tag == *tag && (m.console || !console_only));
        tags.iter().filter_map(found).collect()
    };
    for (title, tags, console_only) in
        [("Effective", &EFFECTIVE[..], false), ("Active", &ACTIVE[..], false), ("Usage", &USAGE[..], true)]
    {
        let shown = group(tags, console_only);
        if !shown.is_empty() {
            out.push_str(&draw(&format!("aiperf | LLM Metrics: {title} | {}", result.name), &shown));
        }
    }
    // Distributions first, then the single-valued metrics, as AIPerf orders them.
    let grouped = |m: &&MetricResult| USAGE.contains(&m.tag) || SPEC_DECODE.contains(&m.tag);
    let console = || result.metrics.iter().filter(|m| m.console).filter(|m| !grouped(m));
    let shown: Vec<&MetricResult> = console()
        .filter(|m| m.kind == MetricKind::Record)
        .chain(console().filter(|m| m.kind != MetricKind::Record))
        .collect();
    out.push_str(&draw(&format!("aiperf | LLM Metrics | {}", result.name), &shown));
    let spec_decode = group(&SPEC_DECODE, true);
    if !spec_decode.is_empty() {
        out.push_str(&draw(&format!("aiperf | LLM Metrics: Spec Decode | {}", result.name), &spec_decode));
    }
    if let Some(line) = acceptance_histogram_line(&result.spec_decode_histogram) {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&render_by_url(result));
    out
}

/// The share of verify steps that accepted 0, 1, 2, … drafts, on one line (from
/// `SPEC_DECODE_HISTOGRAM_BUCKETS` drafts on in one bucket); None without steps.
fn acceptance_histogram_line(histogram: &[u64]) -> Option<String> {
    let steps: u64 = histogram.iter().sum();
    let highest = histogram.iter().rposition(|count| *count > 0)?;
    let share = |count: u64| format!("{:.0}%", count as f64 / steps as f64 * 100.0);
    let shown = highest.min(SPEC_DECODE_HISTOGRAM_BUCKETS - 1);
    let mut buckets: Vec<String> = (0..=shown).map(|j| format!("{j}: {}", share(histogram[j]))).collect();
    if highest >= SPEC_DECODE_HISTOGRAM_BUCKETS {
        let folded = histogram[SPEC_DECODE_HISTOGRAM_BUCKETS..].iter().sum();
        buckets.push(format!(">={SPEC_DECODE_HISTOGRAM_BUCKETS}: {}", share(folded)));
    }
    Some(format!("Accepted drafts per step (% of steps):  {}", buckets.join("   ")))
}

const BY_URL_HEADER: [&str; 8] =
    ["URL", "Requests", "Errors", "Req/s", "TTFT avg (ms)", "ITL avg (ms)", "Latency avg (ms)", "Latency p99 (ms)"];

/// Each url's requests, errors, throughput and latencies, when the endpoint has several
/// (empty otherwise).
fn render_by_url(result: &RunResult) -> String {
    if result.by_url.is_empty() {
        return String::new();
    }
    let rows: Vec<[String; 8]> = result.by_url.iter().map(by_url_row).collect();
    draw_grid(&format!("aiperf | Metrics by URL | {}", result.name), &BY_URL_HEADER.map(str::to_string), &rows)
}

fn by_url_row(url: &UrlMetrics) -> [String; 8] {
    let metric = |tag: &str| url.metrics.iter().find(|metric| metric.tag == tag);
    let shown = |value: Option<f64>| value.map_or_else(|| "N/A".to_string(), format_number);
    let count = |tag: &str| metric(tag).map_or(0, |metric| metric.stats.avg as u64);
    let avg = |tag: &str| shown(metric(tag).map(|metric| metric.stats.avg));
    [
        format!("{} {}", url.url_index, url.url),
        count("request_count").to_string(),
        count("error_request_count").to_string(),
        avg("request_throughput"),
        avg("time_to_first_token"),
        avg("inter_token_latency"),
        avg("request_latency"),
        shown(metric("request_latency").and_then(|metric| metric.stats.p99)),
    ]
}

/// The HTTP trace-timing table (http_req_* metrics); empty when the run has none.
pub fn render_trace_timing(result: &RunResult) -> String {
    let shown: Vec<&MetricResult> = result
        .metrics
        .iter()
        .filter(|m| registry::metric(m.tag).is_some_and(|def| def.shown_in_trace_table()))
        .collect();
    if shown.is_empty() {
        return String::new();
    }
    draw(&format!("aiperf | HTTP Trace Timing | {}", result.name), &shown)
}

pub(super) fn draw(title: &str, shown: &[&MetricResult]) -> String {
    let mut rows: Vec<[String; 8]> = Vec::new();
    for metric in shown {
        let stats = &metric.stats;
        let cell = |name: &str| match (name, stats.get(name)) {
            ("avg", _) => format_number(stats.avg),
            (_, Some(value)) => format_number(value),
            (_, None) => "N/A".to_string(),
        };
        rows.push([
            label(metric),
            cell("avg"),
            cell("min"),
            cell("max"),
            cell("p99"),
            cell("p90"),
            cell("p50"),
            cell("std"),
        ]);
    }
    draw_rows(title, &rows)
}

/// A table under a centred title: `Metric` and the stat columns, then one line per row.
pub(super) fn draw_rows(title: &str, rows: &[[String; 8]]) -> String {
    let mut header: [String; 8] = Default::default();
    header[0] = "Metric".to_string();
    for (i, column) in COLUMNS.iter().enumerate() {
        header[i + 1] = column.to_string();
    }
    draw_grid(title, &header, rows)
}

/// A table under a centred title: `header`, then one line per row.
pub(super) fn draw_grid<const N: usize>(title: &str, header: &[String; N], rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows.iter().chain(std::iter::once(header)) {
        for (width, cell) in widths.iter_mut().zip(row.iter()) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |left: &str, mid: &str, right: &str| {
        let mut s = String::from(left);
        for (i, width) in widths.iter().enumerate() {
            s.push_str(&"─".repeat(width + 2));
            s.push_str(if i + 1 == widths.len() { right } else { mid });
        }
        s.push('\n');
        s
    };
    let row_text = |cells: &[String; N]| {
        let mut s = String::from("│");
        for (cell, width) in cells.iter().zip(widths.iter()) {
            s.push_str(&format!(" {cell:>width$} │"));
        }
        s.push('\n');
        s
    };
    let total_width: usize = widths.iter().map(|w| w + 3).sum::<usize>() + 1;
    let mut out = format!("{title:^total_width$}\n");
    out.push_str(&line("┌", "┬", "┐"));
    out.push_str(&row_text(header));
    out.push_str(&line("├", "┼", "┤"));
    for row in rows {
        out.push_str(&row_text(row));
    }
    out.push_str(&line("└", "┴", "┘"));
    out
}

fn label(metric: &MetricResult) -> String {
    if metric.unit.is_empty() { metric.header.to_string() } else { format!("{} ({})", metric.header, metric.unit) }
}

/// `1234567.891` → `1,234,567.89`
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let fixed = format!("{:.2}", value.abs());
    let (integer, fraction) = fixed.split_once('.').unwrap_or((&fixed, "00"));
    let sign = if value < 0.0 && !fixed.trim_start_matches(['0', '.']).is_empty() { "-" } else { "" };
    format!("{sign}{}.{fraction}", thousands(integer))
}

/// `1234567` → `1,234,567` (ASCII digits).
pub(super) fn thousands(digits: &str) -> String {
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Stats;

    #[test]
    fn numbers_get_thousands_separators_and_two_decimals() {
        assert_eq!(format_number(1234567.891), "1,234,567.89");
        assert_eq!(format_number(0.0), "0.00");
        assert_eq!(format_number(999.999), "1,000.00");
        assert_eq!(format_number(-12.5), "-12.50");
    }

    #[test]
    fn each_url_gets_a_row_and_one_url_no_table() {
        let mut result = crate::export::test_support::sample_result();
        assert!(!render(&result).contains("Metrics by URL"));
        let metrics = vec![
            registry::REQUEST_COUNT.result(Stats::scalar(60.0)),
            registry::REQUEST_LATENCY.result(Stats { p99: Some(12.5), ..Stats::scalar(10.0) }),
        ];
        result.by_url = (0..2)
            .map(|url_index| UrlMetrics {
                url_index,
                url: format!("http://127.0.0.1:900{url_index}"),
                metrics: metrics.clone(),
            })
            .collect();
        let table = render_by_url(&result);
        assert!(table.contains("Metrics by URL") && table.contains("1 http://127.0.0.1:9001"), "{table}");
        assert!(table.contains("12.50") && table.contains("N/A"), "{table}");
    }

    #[test]
    fn effective_and_active_metrics_get_their_own_tables_first() {
        let mut result = crate::export::test_support::sample_result();
        let table = render(&result);
        assert!(!table.contains("Effective") && table.contains("LLM Metrics | c8"), "{table}");
        result.metrics.push(registry::ACTIVE_TOTAL_THROUGHPUT.result(Stats::scalar(3.0)));
        result.metrics.push(registry::EFFECTIVE_LATENCY.result(Stats::scalar(2.0)));
        result.metrics.push(registry::EFFECTIVE_CONCURRENCY.result(Stats::scalar(1.0)));
        let table = render(&result);
        let at = |text: &str| table.find(text).unwrap_or_else(|| panic!("no `{text}` in\n{table}"));
        assert!(at("LLM Metrics: Effective") < at("Effective Concurrency (requests)"));
        assert!(at("Effective Concurrency (requests)") < at("Effective Latency (CO-aware) (ms)"));
        assert!(at("Effective Latency (CO-aware)") < at("LLM Metrics: Active"));
        assert!(at("Active Total Throughput (tokens/sec)") < at("LLM Metrics | c8"));
        assert!(at("LLM Metrics | c8") < at("Request Latency (ms)"));
        assert_eq!(table.matches("Effective Concurrency").count(), 1, "shown once:\n{table}");
    }

    #[test]
    fn usage_and_spec_decode_metrics_get_their_tables_around_the_main_one() {
        let mut result = crate::export::test_support::sample_result();
        result.metrics.push(registry::USAGE_PROMPT_TOKENS.result(Stats::scalar(10.0)));
        result.metrics.push(registry::USAGE_PROMPT_CACHE_READ_TOKENS.result(Stats::scalar(6.0)));
        result.metrics.push(registry::SPEC_DECODE_ACCEPTANCE_LENGTH.result(Stats::scalar(2.5)));
        result.metrics.push(registry::SPEC_DECODE_DRAFT_TOKENS.result(Stats::scalar(9.0)));
        result.spec_decode_histogram = vec![1, 1, 0, 2];
        let table = render(&result);
        let at = |text: &str| table.find(text).unwrap_or_else(|| panic!("no `{text}` in\n{table}"));
        assert!(at("LLM Metrics: Usage") < at("Usage Prompt Tokens (tokens)"));
        assert!(at("Usage Prompt Tokens (tokens)") < at("Usage Prompt Cache Read Tokens"));
        assert!(at("Usage Prompt Cache Read Tokens") < at("LLM Metrics | c8"));
        assert!(at("LLM Metrics | c8") < at("LLM Metrics: Spec Decode"));
        assert!(at("LLM Metrics: Spec Decode") < at("Acceptance Length (ratio)"));
        assert!(!table.contains("Draft Tokens"), "kept off the console:\n{table}");
        assert!(
            table.ends_with("  Accepted drafts per step (% of steps):  0: 25%   1: 25%   2: 0%   3: 50%\n"),
            "{table}"
        );
    }

    #[test]
    fn the_acceptance_histogram_folds_its_long_tail() {
        assert_eq!(acceptance_histogram_line(&[0, 0]), None);
        let mut histogram = vec![0; 12];
        histogram[0] = 2;
        histogram[9] = 1;
        histogram[11] = 1;
        let line = acceptance_histogram_line(&histogram).unwrap();
        assert!(line.ends_with("0: 50%   1: 0%   2: 0%   3: 0%   4: 0%   5: 0%   6: 0%   7: 0%   >=8: 50%"), "{line}");
    }
}
