//! `aiperf analyze-trace`'s report: AIPerf's counts and "Trace Statistics" table, with the
//! trace's sessions, duration and request rate after its counts.

use super::table::{draw_grid, format_number, thousands};
use crate::synthesis::{MetricStats, TraceAnalysis};

pub fn render(stats: &TraceAnalysis) -> String {
    let mut out = String::from("\nTrace Analysis Report\n");
    out.push_str(&format!("Total requests:   {}\n", grouped(stats.total_requests as u64)));
    out.push_str(&format!("Unique prefixes:  {}\n", grouped(stats.unique_prefixes as u64)));
    out.push_str(&format!("Prefix groups:    {}\n", grouped(stats.num_prefix_groups as u64)));
    out.push_str(&format!("Sessions:         {}\n", grouped(stats.num_sessions as u64)));
    if let Some(ms) = stats.duration_ms {
        out.push_str(&format!("Duration:         {} s\n", format_number(ms / 1000.0)));
    }
    if let Some(rate) = stats.request_rate_per_s {
        out.push_str(&format!("Request rate:     {} req/s\n", format_number(rate)));
    }
    out.push('\n');
    let header = ["Metric", "Mean", "Std Dev", "Min", "P25", "Median", "P75", "Max"].map(String::from);
    let rows = [
        ("Input Length", stats.isl_stats),
        ("Context Length", stats.context_length_stats),
        ("Unique Prompt Length", stats.unique_prompt_length_stats),
        ("Output Length", stats.osl_stats),
        ("Theoretical Hit Rates", stats.hit_rate_stats),
    ]
    .map(|(name, metric)| row(name, metric));
    out.push_str(&draw_grid("Trace Statistics", &header, &rows));
    out
}

fn row(name: &str, stats: Option<MetricStats>) -> [String; 8] {
    let cells = match stats {
        Some(s) => [s.mean, s.std_dev, s.min, s.p25, s.median, s.p75, s.max].map(format_number),
        None => std::array::from_fn(|_| "N/A".to_string()),
    };
    let mut row: [String; 8] = Default::default();
    row[0] = name.to_string();
    row[1..].clone_from_slice(&cells);
    row
}

fn grouped(count: u64) -> String {
    thousands(&count.to_string())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::synthesis::{analyze, parse};

    #[test]
    fn counts_then_the_table_with_na_for_what_the_trace_lacks() {
        let trace = "{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 3}\n{\"timestamp\": 4000, \"input_length\": 20}\n";
        let stats = analyze(&parse(Path::new("t.jsonl"), trace).unwrap(), 512).unwrap();
        let text = render(&stats);
        assert!(text.contains("Total requests:   2\n") && text.contains("Sessions:         2\n"), "{text}");
        assert!(text.contains("Request rate:     0.25 req/s\n"), "{text}");
        assert!(text.contains("│          Input Length │ 760.00 │"), "{text}");
        let hit_rates = text.lines().find(|line| line.contains("Theoretical Hit Rates")).unwrap();
        assert_eq!(hit_rates.matches("N/A").count(), 7, "{hit_rates}");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
