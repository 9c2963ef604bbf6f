//! The console's accuracy table, as AIPerf prints it after the metrics: each task's correct,
//! total, unparsed and accuracy, then OVERALL; and a warning when no answer was parsed.

use super::table::draw_grid;
use crate::result::RunResult;

/// Empty for a run that graded nothing.
pub fn render(result: &RunResult) -> String {
    let Some(summary) = &result.accuracy else { return String::new() };
    let header = ["Task", "Correct", "Total", "Unparsed", "Accuracy"].map(String::from);
    let rows: Vec<[String; 5]> = summary
        .csv_rows()
        .into_iter()
        .map(|[task, correct, total, unparsed, _]| {
            let rate = match task.as_str() {
                "OVERALL" => summary.overall.accuracy_rate(),
                task => summary.per_task.get(task).map_or(0.0, |tally| tally.accuracy_rate()),
            };
            [task, correct, total, unparsed, format!("{:.2}%", rate * 100.0)]
        })
        .collect();
    let title =
        format!("aiperf | Accuracy Benchmark Results: {} ({}) | {}", summary.benchmark, summary.grader, result.name);
    let mut out = draw_grid(&title, &header, &rows);
    let overall = &summary.overall;
    if overall.total > 0 && overall.unparsed >= overall.total {
        out.push_str(
            "Warning: every accuracy answer was unparsed (accuracy 0): the grader read no answer from any reply. \
             Check that the server returns real completions for this benchmark before trusting the accuracy.\n",
        );
    }
    out
}
