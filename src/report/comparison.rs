//! Several runs (a sweep, or folders given together): throughput against latency and
//! per-user against total token rate with their Pareto fronts, metrics (and an accuracy run's
//! accuracy) against the swept parameter (or concurrency, or request rate; with two parameters
//! one line per value of the other), and a table of key metrics with each variation's change from the first. Trials of
//! one variation count as one point, drawn with its confidence interval.

use super::artifacts::ReportInput;
use super::chart::{Chart, Series, Style, short_number};
use super::variations::{self, Variation};

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
    points: Vec<((f64, f64), (f64, f64))>,
    lower_x_better: bool,
) -> Chart {
    let means: Vec<(f64, f64)> = points.iter().map(|(point, _)| *point).collect();
    let front = pareto_front(&means, lower_x_better).into_iter().map(|i| means[i]).collect();
    Chart::xy(
        id,
        title,
        x_label,
        y_label,
        vec![Series::with_errors("runs", Style::Points, points), Series::new("Pareto front", Style::Line, front)],
    )
}

/// Each variation's (x, y) means with their confidence half-widths, for those that have both.
fn pairs(variations: &[Variation], confidence: f64, x: (&str, &str), y: (&str, &str)) -> Vec<((f64, f64), (f64, f64))> {
    variations
        .iter()
        .filter_map(|v| {
            let (ex, ey) = (v.estimate(x.0, x.1, confidence)?, v.estimate(y.0, y.1, confidence)?);
            Some(((ex.mean, ey.mean), (ex.half_width, ey.half_width)))
        })
        .collect()
}

/// The charts comparing runs; empty for a single run. Trials of one variation are drawn as
/// one point with its confidence interval.
pub fn charts(input: &ReportInput) -> Vec<Chart> {
    if input.runs.len() < 2 {
        return Vec::new();
    }
    let variations = variations::group(&input.runs);
    let confidence = input.confidence.unwrap_or(variations::DEFAULT_CONFIDENCE);
    let mut charts = vec![
        pareto_chart(
            "pareto-throughput-latency",
            "Pareto: output throughput vs request latency p50",
            "request latency p50 (ms)",
            "output tokens/s",
            pairs(&variations, confidence, ("request_latency", "p50"), ("output_token_throughput", "avg")),
            true,
        ),
        pareto_chart(
            "pareto-user-vs-total",
            "Pareto: per-user vs total output token rate",
            "output tokens/s per user (p50)",
            "output tokens/s (total)",
            pairs(
                &variations,
                confidence,
                ("output_token_throughput_per_user", "p50"),
                ("output_token_throughput", "avg"),
            ),
            false,
        ),
    ];
    if let Some(axis) = load_axis(input, &variations) {
        charts.extend(load_charts(&variations, &axis, confidence));
        charts.push(accuracy_chart(&variations, &axis, confidence));
    }
    charts.retain(|c| !c.is_empty());
    charts
}

/// What the sweep charts draw against: the parameter on x, and the parameters that split
/// the variations into one line each (empty: one line per metric).
struct LoadAxis {
    x_name: String,
    /// Each variation's x (None: not drawn).
    xs: Vec<Option<f64>>,
    /// Each variation's line, named by the values of the other swept parameters.
    lines: Vec<String>,
    split_by: Vec<String>,
}

/// Whether a swept parameter sets the load (its lines read "rate 20" across an x of sizes).
fn is_load(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["rate", "concurrency", "users"].iter().any(|load| name.contains(load))
}

/// The axis of the sweep charts: the swept parameters (x the first that is not a load when
/// a load is swept with it, one line per value of the others), else each run's results-phase
/// concurrency, else its request rate; `None` when fewer than two variations have one.
fn load_axis(input: &ReportInput, variations: &[Variation]) -> Option<LoadAxis> {
    let swept: Vec<&String> =
        input.sweep_parameters.iter().filter(|name| variations.iter().any(|v| v.values.contains_key(*name))).collect();
    if !swept.is_empty() {
        let x_name = if swept.len() > 1 && swept.iter().any(|n| is_load(n)) {
            swept.iter().find(|n| !is_load(n)).unwrap_or(&swept[0])
        } else {
            &swept[0]
        };
        let split_by: Vec<String> = swept.iter().filter(|n| *n != x_name).map(|n| n.to_string()).collect();
        let xs: Vec<Option<f64>> = variations.iter().map(|v| v.values.get(*x_name).copied()).collect();
        let lines = variations
            .iter()
            .map(|v| {
                let parts: Vec<String> = split_by
                    .iter()
                    .map(|name| format!("{name} {}", v.values.get(name).map_or("?".to_string(), |x| short_number(*x))))
                    .collect();
                parts.join(", ")
            })
            .collect();
        if xs.iter().flatten().count() >= 2 {
            return Some(LoadAxis { x_name: x_name.to_string(), xs, lines, split_by });
        }
    }
    let phase_value = |key: &str| -> Vec<Option<f64>> {
        variations
            .iter()
            .map(|v| {
                let phases = v.trials[0].summary["input_config"]["phases"].as_array()?;
                phases.iter().filter(|p| p["kind"] != "warmup").find_map(|p| p[key].as_f64())
            })
            .collect()
    };
    [("concurrency", phase_value("concurrency")), ("request rate", phase_value("rate"))]
        .into_iter()
        .find(|(_, xs)| xs.iter().flatten().count() >= 2)
        .map(|(name, xs)| LoadAxis {
            x_name: name.to_string(),
            lines: vec![String::new(); xs.len()],
            xs,
            split_by: Vec::new(),
        })
}

/// Latency and throughput against the axis: one line per metric for a sweep of one
/// parameter; for more, one chart per metric with one line per value of the others.
/// An accuracy run's accuracy (%) against the load, each variation a point (empty for runs
/// that graded nothing).
fn accuracy_chart(variations: &[Variation], axis: &LoadAxis, confidence: f64) -> Chart {
    let mut points: Vec<((f64, f64), (f64, f64))> = variations
        .iter()
        .zip(&axis.xs)
        .filter_map(|(v, x)| {
            let estimate = v.estimate(crate::accuracy::OVERALL_TAG, "avg", confidence)?;
            Some(((x.as_ref().copied()?, estimate.mean * 100.0), (0.0, estimate.half_width * 100.0)))
        })
        .collect();
    points.sort_by(|a, b| a.0.0.total_cmp(&b.0.0));
    let parameter = &axis.x_name;
    let title = format!("Accuracy vs {parameter}");
    Chart::xy(
        "accuracy-vs-load",
        &title,
        parameter,
        "accuracy (%)",
        vec![Series::with_errors("accuracy", Style::Line, points)],
    )
}

fn load_charts(variations: &[Variation], axis: &LoadAxis, confidence: f64) -> Vec<Chart> {
    let along = |metric: &str, stat: &str, line: Option<&str>| -> Vec<((f64, f64), (f64, f64))> {
        let mut points: Vec<((f64, f64), (f64, f64))> = variations
            .iter()
            .zip(&axis.xs)
            .zip(&axis.lines)
            .filter(|(_, name)| line.is_none_or(|wanted| wanted == name.as_str()))
            .filter_map(|((v, x), _)| {
                let estimate = v.estimate(metric, stat, confidence)?;
                Some(((x.as_ref().copied()?, estimate.mean), (0.0, estimate.half_width)))
            })
            .collect();
        points.sort_by(|a, b| a.0.0.total_cmp(&b.0.0));
        points
    };
    let parameter = &axis.x_name;
    if axis.split_by.is_empty() {
        let latency = [
            ("TTFT p50", "time_to_first_token", "p50"),
            ("TTFT p99", "time_to_first_token", "p99"),
            ("latency p50", "request_latency", "p50"),
            ("latency p99", "request_latency", "p99"),
        ];
        return vec![
            Chart::xy(
                "latency-vs-load",
                &format!("Latency vs {parameter}"),
                parameter,
                "ms",
                latency
                    .iter()
                    .map(|(name, metric, stat)| Series::with_errors(*name, Style::Line, along(metric, stat, None)))
                    .collect(),
            ),
            Chart::xy(
                "throughput-vs-load",
                &format!("Output throughput vs {parameter}"),
                parameter,
                "output tokens/s",
                vec![Series::with_errors(
                    "output tokens/s",
                    Style::Line,
                    along("output_token_throughput", "avg", None),
                )],
            ),
        ];
    }
    let mut line_names: Vec<&String> = Vec::new();
    for name in &axis.lines {
        if !line_names.contains(&name) {
            line_names.push(name);
        }
    }
    let per_line = |metric: &str, stat: &str| -> Vec<Series> {
        line_names
            .iter()
            .map(|name| Series::with_errors(name.as_str(), Style::Line, along(metric, stat, Some(name))))
            .collect()
    };
    let split = axis.split_by.join(", ");
    vec![
        Chart::xy(
            "latency-vs-load",
            &format!("Request latency p50 vs {parameter}, one line per {split}"),
            parameter,
            "ms",
            per_line("request_latency", "p50"),
        ),
        Chart::xy(
            "ttft-vs-load",
            &format!("TTFT p50 vs {parameter}, one line per {split}"),
            parameter,
            "ms",
            per_line("time_to_first_token", "p50"),
        ),
        Chart::xy(
            "throughput-vs-load",
            &format!("Output throughput vs {parameter}, one line per {split}"),
            parameter,
            "output tokens/s",
            per_line("output_token_throughput", "avg"),
        ),
    ]
}

/// The comparison table as HTML rows: one row per key metric, one column per variation (its
/// trials' mean ± the confidence half-width), each with its change from the first (green
/// when better, red when worse).
pub fn table_html(input: &ReportInput) -> String {
    use super::svg::escape;
    let variations = variations::group(&input.runs);
    let confidence = input.confidence.unwrap_or(variations::DEFAULT_CONFIDENCE);
    let mut html = String::from("<table class=\"compare\"><thead><tr><th>metric</th>");
    for variation in &variations {
        let trials = match variation.trials.len() {
            1 => String::new(),
            n => format!(" <span class=\"trials\">({n} trials)</span>"),
        };
        html.push_str(&format!("<th>{}{trials}</th>", escape(&variation.label)));
    }
    html.push_str("</tr></thead><tbody>");
    for (metric, stat, label, more_is_better) in KEY_METRICS {
        html.push_str(&format!("<tr><td>{label}</td>"));
        let base = variations.first().and_then(|v| v.estimate(metric, stat, confidence)).map(|e| e.mean);
        for (i, variation) in variations.iter().enumerate() {
            let Some(estimate) = variation.estimate(metric, stat, confidence) else {
                html.push_str("<td>–</td>");
                continue;
            };
            let value = estimate.mean;
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
            let interval = if estimate.trials > 1 {
                format!(" <span class=\"ci\">± {}</span>", short_number(estimate.half_width))
            } else {
                String::new()
            };
            html.push_str(&format!("<td>{}{interval}{delta}</td>", short_number(value)));
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
