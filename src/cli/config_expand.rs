//! `aiperf config expand FILE`: the variations a config's sweep makes, as AIPerf's command lists
//! them (index, folder, label, swept values; with `--full` each variation's whole benchmark),
//! as text, YAML or JSON, without running anything. The config is read and lowered as `aiperf
//! profile --config` would, so what it refuses this refuses too.

use std::io::Write;

use serde_json::{Map, Value, json};

use super::exit_code;
use crate::config::{Variation, read_file, search, variations};

#[derive(Debug, clap::Args)]
pub struct ExpandArgs {
    #[command(flatten)]
    pub file: super::config_file::ConfigFileArg,
    /// Also print each variation's whole benchmark (normalized)
    #[arg(short = 'F', long)]
    pub full: bool,
    /// Only the variation at this index, counted from 0 (implies --full)
    #[arg(short, long)]
    pub index: Option<usize>,
    /// text (for people), yaml or json
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Format {
    Text,
    Yaml,
    Json,
}

/// One variation as the listing shows it.
struct Listed {
    index: usize,
    dir_name: String,
    label: String,
    values: Map<String, Value>,
    benchmark: Value,
}

pub fn expand(args: &ExpandArgs) -> i32 {
    let fail = |message: String| {
        eprintln!("{message}");
        exit_code::SCRIPT_ERROR
    };
    let path = args.file.path();
    let document = match read_file(path) {
        Ok(document) => document,
        Err(error) => return fail(super::profile::in_file(error, Some(path)).message),
    };
    if document.pointer("/sweep/type").and_then(Value::as_str) == Some(search::SEARCH_SWEEP) {
        if let Err(error) = super::profile::lower_config_file(path) {
            return fail(error.message);
        }
        return fail(format!(
            "{}: an adaptive_search sweep picks its variations while it runs, so there is nothing to list beforehand (grid, zip, scenarios, sobol and latin_hypercube sweeps are listed)",
            path.display()
        ));
    }
    let points = match variations(&document) {
        Ok(points) => points,
        Err(error) => return fail(super::profile::in_file(error, Some(path)).message),
    };
    // What `aiperf profile --config` would refuse is refused here too.
    match super::profile::lower_config_file(path) {
        Ok(job) => job.notes.iter().for_each(|note| eprintln!("{note}")),
        Err(error) => return fail(error.message),
    }
    let sweep_type = sweep_type(&document);
    let total = points.len();
    let mut listed: Vec<Listed> = points.into_iter().enumerate().map(|(index, point)| listed(index, point)).collect();
    let full = args.full || args.index.is_some();
    if let Some(index) = args.index {
        if index >= total {
            return fail(format!(
                "--index {index} is out of range: the sweep has {total} variation(s), 0 to {}",
                total - 1
            ));
        }
        listed = listed.split_off(index);
        listed.truncate(1);
    }
    let text = match args.format {
        Format::Text => as_text(&listed, sweep_type, total, full),
        Format::Yaml => serde_yaml::to_string(&as_document(&listed, sweep_type, full)).unwrap_or_default(),
        Format::Json => {
            let document = as_document(&listed, sweep_type, full);
            format!("{}\n", serde_json::to_string_pretty(&document).unwrap_or_default())
        }
    };
    // A closed pipe (`| head`) is not an error of the config.
    let _ = std::io::stdout().write_all(text.as_bytes());
    exit_code::OK
}

/// AIPerf's name of the document's sweep kind (its class name), `none` without one.
fn sweep_type(document: &Value) -> &'static str {
    match document.get("sweep").filter(|sweep| !sweep.is_null()) {
        None => "none",
        Some(sweep) => match sweep.get("type").and_then(Value::as_str).unwrap_or("grid") {
            "zip" => "ZipSweep",
            "scenarios" => "ScenarioSweep",
            "sobol" => "SobolSweep",
            "latin_hypercube" => "LatinHypercubeSweep",
            _ => "GridSweep",
        },
    }
}

/// A variation with AIPerf's folder, label and values (`base` and none without a sweep).
fn listed(index: usize, point: Variation) -> Listed {
    let benchmark = point.document.get("benchmark").cloned().unwrap_or_else(|| json!({}));
    match point.reported {
        Some(reported) => {
            Listed { index, dir_name: reported.folder, label: reported.label, values: reported.values, benchmark }
        }
        None => Listed { index, dir_name: "base".into(), label: "base".into(), values: Map::new(), benchmark },
    }
}

fn as_text(listed: &[Listed], sweep_type: &str, total: usize, full: bool) -> String {
    let mut text = if listed.len() == total {
        format!("Sweep type: {sweep_type} ({total} variation{})\n\n", if total == 1 { "" } else { "s" })
    } else {
        format!("Sweep type: {sweep_type} (showing {} of {total})\n\n", listed.len())
    };
    for variation in listed {
        text.push_str(&format!("[{}] dir={}  label={}\n", variation.index, variation.dir_name, variation.label));
        if full {
            for line in serde_yaml::to_string(&variation.benchmark).unwrap_or_default().lines() {
                text.push_str(&format!("    {line}\n"));
            }
            text.push('\n');
        }
    }
    text
}

/// The YAML / JSON form: the sweep's kind and each variation, its benchmark with `full`.
fn as_document(listed: &[Listed], sweep_type: &str, full: bool) -> Value {
    let variations: Vec<Value> = listed
        .iter()
        .map(|variation| {
            let mut entry = json!({
                "index": variation.index,
                "dir_name": variation.dir_name,
                "label": variation.label,
                "values": variation.values,
            });
            if full {
                entry["benchmark"] = variation.benchmark.clone();
            }
            entry
        })
        .collect();
    json!({ "sweep_type": sweep_type, "variations": variations })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(values: Value, label: &str, folder: &str, concurrency: u64) -> Listed {
        let values = values.as_object().cloned().unwrap_or_default();
        Listed {
            index: 1,
            dir_name: folder.into(),
            label: label.into(),
            values,
            benchmark: json!({"phases": [{"name": "profiling", "concurrency": concurrency}]}),
        }
    }

    #[test]
    fn text_lists_each_variation_and_with_full_its_benchmark_indented() {
        let one =
            point(json!({"phases.profiling.concurrency": 2}), "phases.profiling.concurrency=2", "concurrency_2", 2);
        let short = as_text(std::slice::from_ref(&one), "GridSweep", 1, false);
        assert_eq!(
            short,
            "Sweep type: GridSweep (1 variation)\n\n[1] dir=concurrency_2  label=phases.profiling.concurrency=2\n"
        );
        let full = as_text(&[one], "GridSweep", 9, true);
        assert!(full.starts_with("Sweep type: GridSweep (showing 1 of 9)\n\n[1] dir=concurrency_2"), "{full}");
        assert!(full.contains("\n    phases:\n    - name: profiling\n      concurrency: 2\n\n"), "{full}");
    }

    #[test]
    fn the_document_form_carries_the_benchmark_only_with_full() {
        let one = point(json!({"phases.profiling.concurrency": 4}), "l", "d", 4);
        let short = as_document(std::slice::from_ref(&one), "ZipSweep", false);
        assert_eq!(
            short,
            json!({"sweep_type": "ZipSweep", "variations": [
                {"index": 1, "dir_name": "d", "label": "l", "values": {"phases.profiling.concurrency": 4}}
            ]})
        );
        let full = as_document(&[one], "ZipSweep", true);
        assert_eq!(full["variations"][0]["benchmark"]["phases"][0]["concurrency"], 4);
    }

    #[test]
    fn sweep_kinds_are_named_as_aiperf_names_them() {
        assert_eq!(sweep_type(&json!({})), "none");
        assert_eq!(sweep_type(&json!({"sweep": null})), "none");
        assert_eq!(sweep_type(&json!({"sweep": {"parameters": {}}})), "GridSweep");
        assert_eq!(sweep_type(&json!({"sweep": {"type": "zip"}})), "ZipSweep");
        assert_eq!(sweep_type(&json!({"sweep": {"type": "scenarios"}})), "ScenarioSweep");
        assert_eq!(sweep_type(&json!({"sweep": {"type": "latin_hypercube"}})), "LatinHypercubeSweep");
    }
}
