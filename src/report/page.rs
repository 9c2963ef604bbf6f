//! The report's content, assembled from what was read: a comparison section for several runs
//! (with a capacity search's charts first), then one section per run (cards, scripted
//! sessions, distributions, over time, HTTP trace, server metrics, GPU), each a list of charts.

use super::artifacts::ReportInput;
use super::chart::Chart;
use super::time_axis::TimeAxis;
use super::{
    branch_counts, cards, comparison, distributions, http_trace, over_time, search_chart, server_panels, sessions_table,
};

/// A titled group of charts, with a note when there is nothing to draw.
pub struct Section {
    pub title: String,
    pub charts: Vec<Chart>,
    pub note: Option<String>,
}

/// One run's part of the page.
pub struct RunPage {
    pub label: String,
    pub dir: String,
    pub cards_html: String,
    pub sections: Vec<Section>,
}

/// The whole report.
pub struct Page {
    pub title: String,
    /// The comparison table's HTML and charts, for several runs.
    pub comparison: Option<(String, Vec<Chart>)>,
    pub runs: Vec<RunPage>,
}

impl Page {
    /// Every chart on the page, in page order.
    pub fn charts(&self) -> impl Iterator<Item = &Chart> {
        let comparison = self.comparison.iter().flat_map(|(_, charts)| charts);
        comparison.chain(self.runs.iter().flat_map(|r| r.sections.iter().flat_map(|s| &s.charts)))
    }
}

fn section(title: &str, charts: Vec<Chart>, empty_note: &str) -> Section {
    let note = charts.is_empty().then(|| empty_note.to_string());
    Section { title: title.to_string(), charts, note }
}

pub fn build(input: &ReportInput) -> Page {
    let several = input.runs.len() > 1;
    let comparison = (several || !input.searches.is_empty()).then(|| {
        let mut charts: Vec<Chart> = input
            .searches
            .iter()
            .enumerate()
            .flat_map(|(index, history)| search_chart::charts(history, index))
            .collect();
        charts.extend(comparison::charts(input));
        charts.extend(http_trace::comparison_chart(&input.runs));
        (comparison::table_html(input), charts)
    });
    let runs = input
        .runs
        .iter()
        .enumerate()
        .map(|(index, run)| {
            let prefix = if several { format!("run{}-", index + 1) } else { String::new() };
            let axis = TimeAxis::of(run);
            let no_records = "no per-request records (profile_export.jsonl or .parquet) in this run's folder";
            RunPage {
                label: run.label.clone(),
                dir: run.dir.display().to_string(),
                cards_html: format!(
                    "{}{}{}",
                    cards::html(run),
                    sessions_table::html(&run.summary),
                    branch_counts::html(&run.summary)
                ),
                sections: vec![
                    section("Distributions", distributions::charts(run, &prefix), no_records),
                    section("Over time", over_time::charts(run, &axis, &prefix), no_records),
                    section(
                        "HTTP trace breakdown",
                        http_trace::run_chart(run, &prefix).into_iter().collect(),
                        "no HTTP trace metrics in this run",
                    ),
                    section(
                        "Server metrics over time",
                        server_panels::server_charts(run, &axis, &prefix),
                        "no per-scrape server metrics: add \"jsonl\" to server_metrics formats to draw them",
                    ),
                    section(
                        "GPU telemetry",
                        server_panels::gpu_charts(run, &axis, &prefix),
                        "no GPU telemetry in this run",
                    ),
                ],
            }
        })
        .collect();
    let title = match input.runs.as_slice() {
        [one] => format!("aiperf report: {}", one.label),
        runs => format!("aiperf report: {} runs", runs.len()),
    };
    Page { title, comparison, runs }
}
