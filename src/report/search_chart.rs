//! A capacity search's chart, from its `search_history.json`: every iteration on the searched
//! parameter (x) against the objective metric (y), feasible and infeasible points apart and
//! numbered in their tooltips, the SLA threshold as a level line and the boundary
//! (`feasible_max`) as a vertical mark; an SLA on another metric gets a chart of its own.

use serde_json::Value;

use super::chart::{Chart, Series, Style, short_number};

/// One line of the SLA: (metric, stat, threshold).
type Sla = (String, String, f64);

/// The searched parameter (its path in `variation_values`, its short name) and the iterations.
struct Iterations<'a> {
    path: &'a str,
    name: &'a str,
    all: &'a [Value],
}

/// The charts of one search history (`index` keeps the ids of several searches apart).
pub fn charts(history: &Value, index: usize) -> Vec<Chart> {
    let Some(x_path) = history["config"]["search_space"][0]["path"].as_str() else { return Vec::new() };
    let iterations = history["iterations"].as_array().map(Vec::as_slice).unwrap_or_default();
    let searched = Iterations { path: x_path, name: x_path.rsplit('.').next().unwrap_or(x_path), all: iterations };
    let slas: Vec<Sla> = history["config"]["sla_filters"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|f| Some((f["metric_tag"].as_str()?.into(), f["stat"].as_str()?.into(), f["threshold"].as_f64()?)))
        .collect();
    let boundary = history["boundary_summary"]["feasible_max"]["value"].as_f64();
    let id = |name: &str| if index == 0 { format!("search-{name}") } else { format!("search{}-{name}", index + 1) };
    let mut charts = Vec::new();
    let objective = &history["config"]["objectives"][0];
    if let (Some(metric), Some(stat)) = (objective["metric"].as_str(), objective["stat"].as_str()) {
        let sla = slas.iter().find(|(m, s, _)| m == metric && s == stat);
        let ys = iterations.iter().map(|it| it["objective_values"][0].as_f64()).collect();
        charts.push(iteration_chart(&id("objective"), &searched, (metric, stat, ys), sla, boundary));
    }
    if let Some((position, sla)) = slas.iter().enumerate().find(|(_, (m, s, _))| {
        objective["metric"].as_str() != Some(m.as_str()) || objective["stat"].as_str() != Some(s.as_str())
    }) {
        let ys = iterations.iter().map(|it| it["sla_values"][position].as_f64()).collect();
        charts.push(iteration_chart(&id("sla"), &searched, (&sla.0, &sla.1, ys), Some(sla), boundary));
    }
    charts.retain(|c| !c.is_empty());
    charts
}

/// The iterations as feasible and infeasible points (tooltips "#n"), with the SLA's level and
/// the boundary's mark.
fn iteration_chart(
    id: &str,
    searched: &Iterations,
    (metric, stat, ys): (&str, &str, Vec<Option<f64>>),
    sla: Option<&Sla>,
    boundary: Option<f64>,
) -> Chart {
    let mut feasible = Series::new("feasible", Style::Points, Vec::new());
    let mut infeasible = Series::new("infeasible", Style::Points, Vec::new());
    for (number, (iteration, y)) in searched.all.iter().zip(ys).enumerate() {
        let (Some(x), Some(y)) = (iteration["variation_values"][searched.path].as_f64(), y) else { continue };
        let series = if iteration["feasible"].as_bool() == Some(true) { &mut feasible } else { &mut infeasible };
        series.points.push((x, y));
        series.point_labels.push(format!("#{}", number + 1));
    }
    let xs = || feasible.points.iter().chain(&infeasible.points).map(|p| p.0);
    let (low, high) = (xs().fold(f64::INFINITY, f64::min), xs().fold(f64::NEG_INFINITY, f64::max));
    let mut series = vec![feasible, infeasible];
    if let Some((_, _, threshold)) = sla.filter(|_| low.is_finite()) {
        let name = format!("SLA {}", short_number(*threshold));
        series.push(Series::new(name, Style::Line, vec![(low, *threshold), (high, *threshold)]));
    }
    let y_label = format!("{metric} {stat}");
    let x_name = searched.name;
    let mut chart = Chart::xy(id, &format!("Search: {y_label} vs {x_name}"), x_name, &y_label, series);
    chart.marks = boundary.map(|x| (x, format!("feasible max {}", short_number(x)))).into_iter().collect();
    chart
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::report::svg;
    use crate::report::theme::Theme;

    #[test]
    fn each_iteration_is_a_point_feasible_or_not_with_the_sla_and_the_boundary() {
        let point = |users: u64, throughput: f64, ttft: f64, feasible: bool| {
            json!({"variation_values": {"phases.profiling.concurrency": users}, "objective_values": [throughput],
                   "sla_values": [ttft], "feasible": feasible})
        };
        let history = json!({
            "config": {
                "search_space": [{"path": "phases.profiling.concurrency"}],
                "objectives": [{"metric": "output_token_throughput", "stat": "avg"}],
                "sla_filters": [{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 200.0}],
            },
            "iterations": [point(1, 10.0, 20.0, true), point(64, 90.0, 900.0, false), point(24, 80.0, 180.0, true)],
            "boundary_summary": {"feasible_max": {"value": 24}},
        });
        let charts = charts(&history, 0);
        assert_eq!(charts.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["search-objective", "search-sla"]);
        let sla = svg::render(&charts[1], Theme::Light);
        assert!(sla.contains("feasible #3: concurrency 24 · time_to_first_token p95 180"), "{sla}");
        assert!(sla.contains("infeasible #2: concurrency 64"), "{sla}");
        assert!(sla.contains("SLA 200"), "the threshold line");
        assert!(sla.contains("feasible max 24"), "the boundary mark");
        assert!(!svg::render(&charts[0], Theme::Light).contains("SLA 200"), "no SLA on the throughput axis");
        assert!(super::charts(&json!({}), 0).is_empty());
    }
}
