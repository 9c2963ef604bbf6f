//! AIPerf 0.13's SPEED-Bench matrix (`aiperf speed-bench-report`): finished runs, one per
//! SPEED-Bench category (or `spec_al_*` benchmark), gathered into a model × category table of
//! the acceptance length, the acceptance rate (both from the server metrics the run scraped:
//! SGLang's and TRT-LLM's gauges, or vLLM's counters) or the output token throughput, with each
//! model's mean as `Overall`; printed as a table and written as CSV.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::Value;

/// The qualitative split's categories, the throughput tiers and the acceptance-length
/// benchmarks, each in the order the SPEED-Bench paper's columns take.
const QUALITATIVE: [&str; 11] = [
    "coding",
    "humanities",
    "math",
    "multilingual",
    "qa",
    "rag",
    "reasoning",
    "roleplay",
    "stem",
    "summarization",
    "writing",
];
const THROUGHPUT_TIERS: [&str; 3] = ["low_entropy", "mixed", "high_entropy"];
const SPEC_AL: [&str; 5] = ["gsm8k", "math500", "mtbench", "humaneval", "mbpp"];
/// A dataset format (or public dataset) that names a category after one of these.
const CATEGORY_PREFIXES: [&str; 2] = ["speed_bench_", "spec_al_"];
const ACCEPT_LENGTH_GAUGES: [&str; 3] =
    ["sglang:spec_accept_length", "vllm:spec_decode_mean_accepted_length", "trtllm:spec_accept_length"];
const ACCEPT_RATE_GAUGES: [&str; 3] =
    ["sglang:spec_accept_rate", "vllm:spec_decode_draft_acceptance_rate", "trtllm:spec_accept_rate"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Tokens a verify step yields (accepted drafts + 1)
    #[value(alias = "accept_length")]
    AcceptLength,
    /// Accepted draft tokens over drafted ones
    #[value(alias = "accept_rate")]
    AcceptRate,
    /// Output tokens per second
    Throughput,
}

impl Metric {
    pub fn title(self) -> &'static str {
        match self {
            Metric::AcceptLength => "Acceptance Length Report",
            Metric::AcceptRate => "Acceptance Rate Report",
            Metric::Throughput => "Throughput Report (tokens/sec)",
        }
    }
}

/// Model → category → value (`None`: the run had no such figure).
pub type Matrix = BTreeMap<String, BTreeMap<String, Option<f64>>>;

/// The run folders among `paths`: each a run folder, or a folder of them.
pub fn run_dirs(paths: &[PathBuf], warn: &mut dyn FnMut(String)) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for path in paths {
        if !path.is_dir() {
            warn(format!("{} is not a directory, skipping", path.display()));
            continue;
        }
        if path.join("profile_export_aiperf.json").is_file() {
            found.push(path.clone());
            continue;
        }
        let mut children: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|entries| entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect())
            .unwrap_or_default();
        children.sort();
        found.extend(children.into_iter().filter(|child| child.join("profile_export_aiperf.json").is_file()));
    }
    found
}

/// The matrix of `metric` over `runs`; a run it cannot place is skipped with a warning.
pub fn matrix(runs: &[PathBuf], metric: Metric, warn: &mut dyn FnMut(String)) -> Result<Matrix> {
    if runs.is_empty() {
        bail!("no aiperf run directories found");
    }
    let mut matrix = Matrix::new();
    for run in runs {
        let Some(profile) = read_json(&run.join("profile_export_aiperf.json"), warn) else { continue };
        let Some(category) = category(&profile) else {
            warn(format!("cannot determine the SPEED-Bench category of {}, skipping", run.display()));
            continue;
        };
        let value = match metric {
            Metric::Throughput => profile["output_token_throughput"]["avg"].as_f64(),
            Metric::AcceptLength | Metric::AcceptRate => {
                let path = run.join("server_metrics_export.json");
                match read_json(&path, warn) {
                    Some(server) if metric == Metric::AcceptLength => accept_length(&server["metrics"]),
                    Some(server) => accept_rate(&server["metrics"]),
                    None => None,
                }
            }
        };
        matrix.entry(model(&profile)).or_default().insert(category, value.filter(|value| value.is_finite()));
    }
    if !matrix.values().flat_map(BTreeMap::values).any(Option::is_some) {
        bail!("no SPEED-Bench results extracted");
    }
    Ok(matrix)
}

fn read_json(path: &Path, warn: &mut dyn FnMut(String)) -> Option<Value> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            warn(format!("no {}: {e}", path.display()));
            return None;
        }
    };
    serde_json::from_str(&text).map_err(|e| warn(format!("cannot read {}: {e}", path.display()))).ok()
}

/// The category a run's dataset names (`speed_bench_coding` → `coding`).
fn category(profile: &Value) -> Option<String> {
    profile["input_config"]["datasets"].as_array()?.iter().find_map(|dataset| {
        let name = dataset["format"].as_str().or(dataset["dataset"].as_str())?;
        CATEGORY_PREFIXES.iter().find_map(|prefix| name.strip_prefix(prefix)).map(str::to_string)
    })
}

fn model(profile: &Value) -> String {
    let items = profile["input_config"]["models"]["items"].as_array();
    let named =
        items.and_then(|items| items.iter().find_map(|item| item["name"].as_str().filter(|name| !name.is_empty())));
    named.unwrap_or("unknown").to_string()
}

/// A metric's first series' statistic.
fn stat(metrics: &Value, name: &str, key: &str) -> Option<f64> {
    metrics[name]["series"][0]["stats"][key].as_f64()
}

/// A gauge's mean, else vLLM's accepted tokens per draft plus the verified token, else any
/// metric whose name holds "spec", "accept" and "length".
fn accept_length(metrics: &Value) -> Option<f64> {
    if let Some(value) = ACCEPT_LENGTH_GAUGES.iter().find_map(|name| stat(metrics, name, "avg")) {
        return Some(value);
    }
    let accepted = stat(metrics, "vllm:spec_decode_num_accepted_tokens", "total");
    let drafts = stat(metrics, "vllm:spec_decode_num_drafts", "total").filter(|drafts| *drafts > 0.0);
    if let (Some(accepted), Some(drafts)) = (accepted, drafts) {
        return Some(accepted / drafts + 1.0);
    }
    metrics.as_object()?.iter().find_map(|(name, _)| {
        let lower = name.to_lowercase();
        (lower.contains("spec") && lower.contains("accept") && lower.contains("length"))
            .then(|| stat(metrics, name, "avg"))
            .flatten()
    })
}

/// A gauge's mean, else vLLM's accepted over drafted tokens.
fn accept_rate(metrics: &Value) -> Option<f64> {
    if let Some(value) = ACCEPT_RATE_GAUGES.iter().find_map(|name| stat(metrics, name, "avg")) {
        return Some(value);
    }
    let accepted = stat(metrics, "vllm:spec_decode_num_accepted_tokens", "total")?;
    let drafted = stat(metrics, "vllm:spec_decode_num_draft_tokens", "total").filter(|drafted| *drafted > 0.0)?;
    Some(accepted / drafted)
}

/// The columns: a known set's own order when every category is of it, else sorted names.
pub fn columns(matrix: &Matrix) -> Vec<String> {
    let present: std::collections::BTreeSet<&str> =
        matrix.values().flat_map(|categories| categories.keys().map(String::as_str)).collect();
    for known in [&QUALITATIVE[..], &THROUGHPUT_TIERS[..], &SPEC_AL[..]] {
        if present.iter().all(|category| known.contains(category)) {
            return known.iter().filter(|category| present.contains(*category)).map(|c| c.to_string()).collect();
        }
    }
    present.into_iter().map(str::to_string).collect()
}

/// Each model's row: its values (two decimals, `missing` where none) and their mean.
pub fn rows(matrix: &Matrix, columns: &[String], missing: &str) -> Vec<Vec<String>> {
    matrix
        .iter()
        .map(|(model, values)| {
            let cells: Vec<Option<f64>> = columns.iter().map(|column| values.get(column).copied().flatten()).collect();
            let present: Vec<f64> = cells.iter().flatten().copied().collect();
            let overall = (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64);
            let shown = |value: Option<f64>| value.map_or_else(|| missing.to_string(), |value| format!("{value:.2}"));
            std::iter::once(model.clone()).chain(cells.into_iter().map(shown)).chain([shown(overall)]).collect()
        })
        .collect()
}

/// The CSV text: `Model`, the columns, `Overall`.
pub fn csv(matrix: &Matrix, columns: &[String]) -> String {
    let quoted = |cell: &str| {
        if cell.contains([',', '"', '\n']) { format!("\"{}\"", cell.replace('"', "\"\"")) } else { cell.to_string() }
    };
    let header = std::iter::once("Model".to_string()).chain(columns.iter().cloned()).chain(["Overall".to_string()]);
    std::iter::once(header.collect::<Vec<_>>())
        .chain(rows(matrix, columns, ""))
        .map(|row| row.iter().map(|cell| quoted(cell)).collect::<Vec<_>>().join(",") + "\r\n")
        .collect()
}

/// The table as aligned text, under its title.
pub fn table(matrix: &Matrix, columns: &[String], metric: Metric) -> String {
    let header: Vec<String> =
        std::iter::once("Model".to_string()).chain(columns.iter().cloned()).chain(["Overall".to_string()]).collect();
    let body = rows(matrix, columns, "-");
    let widths: Vec<usize> = (0..header.len())
        .map(|i| std::iter::once(&header).chain(&body).map(|row| row[i].chars().count()).max().unwrap_or(0).max(8))
        .collect();
    let line = |row: &[String]| {
        row.iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, width))| if i == 0 { format!("{cell:<width$}") } else { format!("{cell:>width$}") })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut text = format!("{}\n{}\n", metric.title(), line(&header));
    text += &(widths.iter().map(|width| "-".repeat(*width)).collect::<Vec<_>>().join("  ") + "\n");
    for row in &body {
        text += &(line(row) + "\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn acceptance_comes_from_a_gauge_or_from_vllm_s_counters() {
        let vllm = json!({
            "vllm:spec_decode_num_accepted_tokens": {"series": [{"stats": {"total": 820.0}}]},
            "vllm:spec_decode_num_drafts": {"series": [{"stats": {"total": 410.0}}]},
            "vllm:spec_decode_num_draft_tokens": {"series": [{"stats": {"total": 1230.0}}]},
        });
        assert_eq!(accept_length(&vllm), Some(3.0));
        assert_eq!(accept_rate(&vllm), Some(820.0 / 1230.0));
        let sglang = json!({"sglang:spec_accept_length": {"series": [{"stats": {"avg": 2.5}}]}});
        assert_eq!(accept_length(&sglang), Some(2.5));
        assert_eq!(accept_rate(&sglang), None);
        let other = json!({"engine:spec_token_accept_length": {"series": [{"stats": {"avg": 1.7}}]}});
        assert_eq!(accept_length(&other), Some(1.7), "a name with spec, accept and length");
    }

    #[test]
    fn the_matrix_orders_known_categories_and_averages_each_model() {
        let mut matrix = Matrix::new();
        matrix.entry("m".into()).or_default().extend([("math".into(), Some(3.0)), ("coding".into(), Some(2.0))]);
        matrix.entry("n".into()).or_default().insert("coding".into(), None);
        let columns = columns(&matrix);
        assert_eq!(columns, ["coding", "math"], "the paper's order, not the alphabet's by chance");
        assert_eq!(csv(&matrix, &columns), "Model,coding,math,Overall\r\nm,2.00,3.00,2.50\r\nn,,,\r\n");
        let table = table(&matrix, &columns, Metric::AcceptLength);
        assert!(table.starts_with("Acceptance Length Report\nModel       coding      math   Overall\n"), "{table}");
        assert!(table.ends_with("n                -         -         -\n"), "{table}");
        matrix.entry("m".into()).or_default().insert("custom".into(), Some(1.0));
        assert_eq!(super::columns(&matrix), ["coding", "custom", "math"], "an unknown category: sorted names");
    }
}
