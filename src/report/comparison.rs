//! Several runs (a sweep, or folders given together): throughput against latency and
//! per-user against total token rate with their Pareto fronts, metrics (and an accuracy run's
//! accuracy) against the swept parameter (or concurrency, or request rate), and a table of
//! key metrics with each run's change from the first.

use super::artifacts::{ReportInput, RunArtifacts};
use super::chart::{Chart, Series, Style};

/// (metric, statistic, label, whether more is better) for the table and the charts.
pub const KEY_METRICS: [(&str, &str, &str, bool); 9] = [
    ("request_throughput", "avg", "requests/s", true),
    ("output_token_throughput", "avg", "output tokens/s", true),
    ("time_to_first_token", "p50", "TTFT p50 (ms)", false),
    ("time_to_first_token", "p99", "TTFT p99 (ms)", false),
    ("inter_token_latency", "p50", "ITL p50 (ms)", false),
    ("inter_token_latency", "p99", "ITL p99 (ms)", false),
    ("request_latency", "p50", "latency p50 (ms)", false),
    ("request_latency", "p99", "latency p99 (ms)", false),
    ("request_error_rate", "avg", "errors (%)", false),
];

/// The indices of `points` that no other point beats on both: higher y and, with
/// `lower_x_better`, lower x (else higher x); sorted by x.
pub fn pareto_front(points: &[(f64, f64)], lower_x_better: bool) -> Vec<usize> {
    let better_x = |a: f64, b: f64| if lower_x_better { a <= b } else { a >= b };
    let mut front: Vec<usize> = (0..points.len())
        .filter(|&i| {
            let (x, y) = points[i];
            !points.iter().any(|&(ox, oy)| better_x(ox, x) && oy >= y && (ox != x || oy != y))
        })
        .collect();
    front.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
    front
}

fn pareto_chart(
    id: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    points: Vec<(f64, f64)>,
    lower_x_better: bool,
) -> Chart {
    let front = pareto_front(&points, lower_x_better).into_iter().map(|i| points[i]).collect();
    Chart::xy(
        id,
        title,
        x_label,
        y_label,
        vec![Series::new("runs", Style::Points, points), Series::new("Pareto front", Style::Line, front)],
    )
}

/// (run, x, y) for the runs that have both statistics.
fn pairs(runs: &[RunArtifacts], x: (&str, &str), y: (&str, &str)) -> Vec<(f64, f64)> {
    runs.iter().filter_map(|r| Some((r.stat(x.0, x.1)?, r.stat(y.0, y.1)?))).collect()
}

/// The charts comparing runs; empty for a single run.
pub fn charts(input: &ReportInput) -> Vec<Chart> {
    let runs = &input.runs;
    if runs.len() < 2 {
        return Vec::new();
    }
    let mut charts = vec![
        pareto_chart(
            "pareto-throughput-latency",
            "Pareto: output throughput vs request latency p50",
            "request latency p50 (ms)",
            "output tokens/s",
            pairs(runs, ("request_latency", "p50"), ("output_token_throughput", "avg")),
            true,
        ),
        pareto_chart(
            "pareto-user-vs-total",
            "Pareto: per-user vs total output token rate",
            "output tokens/s per user (p50)",
            "output tokens/s (total)",
            pairs(runs, ("output_token_throughput_per_user", "p50"), ("output_token_throughput", "avg")),
            false,
        ),
    ];
    if let Some((parameter, xs)) = load_axis(input) {
        let along = |metric: &str, stat: &str| -> Vec<(f64, f64)> {
            let mut points: Vec<(f64, f64)> =
                runs.iter().zip(&xs).filter_map(|(r, x)| Some((x.as_ref().copied()?, r.stat(metric, stat)?))).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points
        };
        charts.push(Chart::xy(
            "latency-vs-load",
            &format!("Latency vs {parameter}"),
            &parameter,
            "ms",
            vec![
                Series::new("TTFT p50", Style::Line, along("time_to_first_token", "p50")),
                Series::new("TTFT p99", Style::Line, along("time_to_first_token", "p99")),
                Series::new("latency p50", Style::Line, along("request_latency", "p50")),
                Series::new("latency p99", Style::Line, along("request_latency", "p99")),
            ],
        ));
        charts.push(Chart::xy(
            "throughput-vs-load",
            &format!("Output throughput vs {parameter}"),
            &parameter,
            "output tokens/s",
            vec![Series::new("output tokens/s", Style::Line, along("output_token_throughput", "avg"))],
        ));
        let accuracy_pct = along(crate::accuracy::OVERALL_TAG, "avg").into_iter().map(|(x, rate)| (x, rate * 100.0));
        charts.push(Chart::xy(
            "accuracy-vs-load",
            &format!("Accuracy vs {parameter}"),
            &parameter,
            "accuracy (%)",
            vec![Series::new("accuracy", Style::Line, accuracy_pct.collect())],
        ));
    }
    charts.retain(|c| !c.is_empty());
    charts
}

/// The load each run ran at: the swept parameter's value, else its results phase's
/// concurrency, else its request rate; `None` when fewer than two runs have one.
fn load_axis(input: &ReportInput) -> Option<(String, Vec<Option<f64>>)> {
    let swept = |name: &str| -> Vec<Option<f64>> {
        input.runs.iter().map(|r| r.summary["run_info"]["variation_values"][name].as_f64()).collect()
    };
    let phase_value = |key: &str| -> Vec<Option<f64>> {
        input
            .runs
            .iter()
            .map(|r| {
                let phases = r.summary["input_config"]["phases"].as_array()?;
                phases.iter().filter(|p| p["kind"] != "warmup").find_map(|p| p[key].as_f64())
            })
            .collect()
    };
    let candidates = input.sweep_parameters.iter().map(|name| (name.clone(), swept(name))).chain([
        ("concurrency".to_string(), phase_value("concurrency")),
        ("request rate".to_string(), phase_value("rate")),
    ]);
    candidates.into_iter().find(|(_, values)| values.iter().flatten().count() >= 2)
}

/// The comparison table as HTML rows: one row per key metric, each run's value and its
/// change from the first run (green when better, red when worse).
pub fn table_html(runs: &[RunArtifacts]) -> String {
    use super::svg::escape;
    let mut html = String::from("<table class=\"compare\"><thead><tr><th>metric</th>");
    for run in runs {
        html.push_str(&format!("<th>{}</th>", escape(&run.label)));
    }
    html.push_str("</tr></thead><tbody>");
    for (metric, stat, label, more_is_better) in KEY_METRICS {
        html.push_str(&format!("<tr><td>{label}</td>"));
        let base = runs.first().and_then(|r| r.stat(metric, stat));
        for (i, run) in runs.iter().enumerate() {
            let Some(value) = run.stat(metric, stat) else {
                html.push_str("<td>–</td>");
                continue;
            };
            let delta = match base {
                Some(base) if i > 0 && base != 0.0 => {
                    let change = (value - base) / base.abs() * 100.0;
                    let class = if change == 0.0 {
                        "same"
                    } else if (change > 0.0) == more_is_better {
                        "better"
                    } else {
                        "worse"
                    };
                    format!(" <span class=\"{class}\">{change:+.1}%</span>")
                }
                _ => String::new(),
            };
            html.push_str(&format!("<td>{}{delta}</td>", super::chart::short_number(value)));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_keeps_only_unbeaten_points() {
        // (latency, throughput): the second is beaten by the first on both.
        let points = [(10.0, 100.0), (20.0, 90.0), (30.0, 200.0), (5.0, 50.0)];
        assert_eq!(pareto_front(&points, true), vec![3, 0, 2]);
        // (per user, total): more is better on both.
        let points = [(10.0, 100.0), (5.0, 50.0), (2.0, 300.0)];
        assert_eq!(pareto_front(&points, false), vec![2, 0]);
    }
}
