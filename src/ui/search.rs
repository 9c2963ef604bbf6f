//! The console table after a `search(..)`: each iteration's point, its SLA statistics and
//! objective, whether it met every SLA, and the answer (the boundary, the best trial).

use std::path::Path;

use crate::search::SearchConfig;
use crate::search::SearchOutcome;

/// The narrowest a number column gets.
const NUMBER_WIDTH: usize = 10;

pub fn render(name: &str, config: &SearchConfig, outcome: &SearchOutcome, dir: &Path) -> String {
    let mut text = format!(
        "search {name} ({}): {} iterations, stopped: {} (history: {})\n",
        config.planner.name(),
        outcome.iterations.len(),
        outcome.convergence_reason,
        dir.join(crate::search::history::FILE_NAME).display()
    );
    let columns: Vec<String> = config
        .sla_filters
        .iter()
        .map(|f| format!("{} {}", f.metric_tag, f.stat))
        .chain(config.objectives.iter().map(|o| format!("{} {}", o.metric, o.stat)))
        .collect();
    let point_width = outcome
        .iterations
        .iter()
        .map(|it| point_label(&it.variation_values).len())
        .max()
        .unwrap_or(0)
        .max("point".len());
    text.push_str(&format!("  {:>4}  {:<point_width$}  {:<8}", "#", "point", "SLA"));
    let widths: Vec<usize> = columns.iter().map(|c| c.len().max(NUMBER_WIDTH)).collect();
    for (column, width) in columns.iter().zip(&widths) {
        text.push_str(&format!("  {column:>width$}"));
    }
    text.push('\n');
    for it in &outcome.iterations {
        let verdict = if it.feasible { "meets" } else { "misses" };
        text.push_str(&format!(
            "  {:>4}  {:<point_width$}  {verdict:<8}",
            it.iteration_idx,
            point_label(&it.variation_values)
        ));
        let objectives = it
            .objective_values
            .clone()
            .map_or(vec![None; config.objectives.len()], |v| v.into_iter().map(Some).collect());
        for (value, width) in it.sla_values.iter().chain(&objectives).zip(&widths) {
            let shown = value.map_or("-".to_string(), |v| format!("{v:.2}"));
            text.push_str(&format!("  {shown:>width$}"));
        }
        text.push('\n');
    }
    let summary = &outcome.history["boundary_summary"];
    if summary.is_object() {
        let value = |key: &str| summary[key]["value"].to_string();
        text.push_str(&format!(
            "  boundary of {}: highest that meets the SLA {}, lowest that misses {}\n",
            summary["swept_dim_path"].as_str().unwrap_or("?"),
            value("feasible_max"),
            value("infeasible_min")
        ));
    }
    if let Some(best) = outcome.history["best_trials"].as_array() {
        for trial in best {
            text.push_str(&format!(
                "  best: #{} {} {}\n",
                trial["iteration_idx"],
                point_label(trial["variation_values"].as_object().unwrap_or(&serde_json::Map::new())),
                trial["objective_values"]
            ));
        }
    }
    text
}

fn point_label(values: &serde_json::Map<String, serde_json::Value>) -> String {
    values
        .iter()
        .map(|(path, value)| format!("{}={value}", path.rsplit('.').next().unwrap_or(path)))
        .collect::<Vec<_>>()
        .join(" ")
}
