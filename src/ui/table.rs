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

/// The console tables of `result` as AIPerf prints them: the Effective and Active metrics
/// (those the run has), then every console metric, each with a title line.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for (group, tags) in [("Effective", &EFFECTIVE[..]), ("Active", &ACTIVE[..])] {
        let shown: Vec<&MetricResult> =
            tags.iter().filter_map(|tag| result.metrics.iter().find(|m| m.tag == *tag)).collect();
        if !shown.is_empty() {
            out.push_str(&draw(&format!("aiperf | LLM Metrics: {group} | {}", result.name), &shown));
        }
    }
    // Distributions first, then the single-valued metrics, as AIPerf orders them.
    let console = || result.metrics.iter().filter(|m| m.console);
    let shown: Vec<&MetricResult> = console()
        .filter(|m| m.kind == MetricKind::Record)
        .chain(console().filter(|m| m.kind != MetricKind::Record))
        .collect();
    out.push_str(&draw(&format!("aiperf | LLM Metrics | {}", result.name), &shown));
    out.push_str(&render_by_url(result));
    out
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
    let mut grouped = String::new();
    for (i, digit) in integer.chars().enumerate() {
        if i > 0 && (integer.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if value < 0.0 && !fixed.trim_start_matches(['0', '.']).is_empty() { "-" } else { "" };
    format!("{sign}{grouped}.{fraction}")
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
}
