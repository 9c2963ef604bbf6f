//! The console table after a `sweep(..)`: each variation's throughput and p99 latency (trial
//! means), the Pareto-optimal ones marked, and the best configurations.

use std::path::Path;

use crate::aggregate::sweep::SweepSummary;

/// The narrowest a number column gets.
const NUMBER_WIDTH: usize = 14;

pub fn render(name: &str, summary: &SweepSummary, aggregate_dir: &Path) -> String {
    let latency_header = format!("{} p99", summary.latency_metric.unwrap_or("latency"));
    let label_width = summary.cells.iter().map(|cell| cell.label.len()).max().unwrap_or(0).max("variation".len());
    let latency_width = latency_header.len().max(NUMBER_WIDTH);
    let mut text = format!(
        "sweep {name}: {} variations (aggregate: {})\n  {:<label_width$}  {:>NUMBER_WIDTH$}  {latency_header:>latency_width$}\n",
        summary.cells.len(),
        aggregate_dir.display(),
        "variation",
        "requests/sec",
    );
    for (index, cell) in summary.cells.iter().enumerate() {
        let (throughput, p99) = match summary.objectives.get(index).copied().flatten() {
            Some((throughput, p99)) => (format!("{throughput:.2}"), format!("{p99:.2}")),
            None => ("-".to_string(), "-".to_string()),
        };
        let mark = if summary.pareto.contains(&index) { "  pareto" } else { "" };
        text.push_str(&format!(
            "  {:<label_width$}  {throughput:>NUMBER_WIDTH$}  {p99:>latency_width$}{mark}\n",
            cell.label
        ));
    }
    for best in &summary.best {
        let what = if best.name == "best_throughput" { "best throughput" } else { "lowest p99 latency" };
        let label = &summary.cells[best.cell].label;
        text.push_str(&format!("  {what}: {label} ({:.2} {})\n", best.metric, best.unit));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::cell;

    #[test]
    fn variations_with_their_objectives_pareto_marks_and_the_best() {
        let summary =
            SweepSummary::new(vec![cell(1, &[(10.0, 5.0)]), cell(2, &[(8.0, 9.0)]), cell(4, &[(30.0, 20.0)])]);
        let text = render("users", &summary, Path::new("out/sweep_aggregate"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "sweep users: 3 variations (aggregate: out/sweep_aggregate)",
                "  variation    requests/sec  time_to_first_token p99",
                "  users_1             10.00                     5.00  pareto",
                "  users_2              8.00                     9.00",
                "  users_4             30.00                    20.00  pareto",
                "  best throughput: users_4 (30.00 requests/sec)",
                "  lowest p99 latency: users_1 (5.00 ms)",
            ]
        );
    }
}
