//! Finds the runs under the folders given to `aiperf plot` (a run folder, a sweep folder, or
//! any folder above them) and reads what the report draws from each: the summary
//! (`profile_export_aiperf.json`, or `P.json` with a prefix P), its records, and its
//! server-metrics and GPU exports where they exist; and any capacity search's
//! `search_history.json`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::parquet_records;
use super::record_sample::Records;
use super::records;
use super::scrapes::{self, GpuFields, Timeline};
use crate::export::ArtifactNames;

/// Folders this deep under a given folder are not searched.
const MAX_DEPTH: usize = 8;
const DEFAULT_SUMMARY: &str = "profile_export_aiperf.json";
/// How builds before AIPerf's prefixed names named a prefixed summary (`P_aiperf.json`).
const EARLIER_PREFIXED_SUMMARY: &str = "_aiperf.json";
const SWEEP_SUFFIX: &str = "_aiperf_sweep.json";

/// One run's artifacts.
#[derive(Debug)]
pub struct RunArtifacts {
    /// The run's folder relative to the folder it was found under (or that folder's name).
    pub label: String,
    pub dir: PathBuf,
    pub summary: Value,
    pub records: Records,
    pub server_metrics: BTreeMap<String, Timeline>,
    pub gpu: GpuFields,
}

/// Everything the report is made of.
#[derive(Debug)]
pub struct ReportInput {
    pub runs: Vec<RunArtifacts>,
    /// The swept parameters' names, from a sweep aggregate among the folders (first wins).
    pub sweep_parameters: Vec<String>,
    /// The confidence level of the trials' intervals, from that sweep aggregate.
    pub confidence: Option<f64>,
    /// Every capacity search's `search_history.json` among the folders, in path order.
    pub searches: Vec<Value>,
}

impl RunArtifacts {
    /// A statistic of a metric of the summary (`"time_to_first_token"`, `"p99"`).
    pub fn stat(&self, metric: &str, stat: &str) -> Option<f64> {
        self.summary.get(metric)?.get(stat)?.as_f64()
    }
}

/// Read every run found under `dirs`, in path order, its records from `collected` (by canonical
/// folder) when they are there, else from its files; an error names a folder without runs or
/// a file that cannot be read.
pub fn read(dirs: &[PathBuf], mut collected: HashMap<PathBuf, Records>) -> Result<ReportInput> {
    let mut runs = Vec::new();
    let mut sweep_parameters = Vec::new();
    let mut confidence = None;
    let mut searches = Vec::new();
    for dir in dirs {
        if !dir.is_dir() {
            bail!("{} is not a folder of run artifacts", dir.display());
        }
        let mut summaries: Vec<Summary> = Vec::new();
        let mut sweeps = Vec::new();
        let mut histories = Vec::new();
        find_files(dir, 0, &mut summaries, &mut sweeps, &mut histories)?;
        if summaries.is_empty() {
            bail!(
                "no run found in {}: it holds no profile_export_aiperf.json (or <prefix>.json beside <prefix>_console.txt)",
                dir.display()
            );
        }
        summaries.sort_by_key(|summary| natural_key(&summary.path));
        for summary in summaries {
            runs.push(read_run(dir, summary, &mut collected)?);
        }
        histories.sort_by_key(|path| natural_key(path));
        for history in histories {
            searches.push(read_json(&history)?);
        }
        if sweep_parameters.is_empty() {
            sweeps.sort();
            if let Some(sweep) = sweeps.first() {
                (sweep_parameters, confidence) = read_sweep_metadata(sweep)?;
            }
        }
    }
    Ok(ReportInput { runs, sweep_parameters, confidence, searches })
}

/// A run's summary file and the prefix its other files share (None: AIPerf's default names).
struct Summary {
    path: PathBuf,
    prefix: Option<String>,
}

impl Summary {
    /// The summary `name` in `dir` is, if it is one: AIPerf's default name, a prefix's `P.json`
    /// beside its `P_console.txt` (every run writes one; a `P.jsonl` would not tell it from
    /// `P_server_metrics.json`), or the `P_aiperf.json` of earlier builds.
    fn of(dir: &Path, name: &str) -> Option<Self> {
        let path = dir.join(name);
        if name == DEFAULT_SUMMARY {
            return Some(Summary { path, prefix: None });
        }
        let stem = name.strip_suffix(".json")?;
        let prefix = if dir.join(format!("{stem}_console.txt")).is_file() {
            stem
        } else {
            name.strip_suffix(EARLIER_PREFIXED_SUMMARY)?
        };
        Some(Summary { path, prefix: Some(prefix.to_string()) })
    }
}

fn find_files(
    dir: &Path,
    depth: usize,
    summaries: &mut Vec<Summary>,
    sweeps: &mut Vec<PathBuf>,
    searches: &mut Vec<PathBuf>,
) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry.with_context(|| format!("cannot list {}", dir.display()))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if path.is_dir() {
            // A run's per-phase summaries (`phases/<name>/`) are parts of it, not runs.
            let phase_parts = name == crate::export::phase_files::PHASES_FOLDER
                && dir.join(crate::export::phase_files::MANIFEST_FILE).is_file();
            if depth < MAX_DEPTH && !phase_parts {
                find_files(&path, depth + 1, summaries, sweeps, searches)?;
            }
        } else if name == crate::search::history::FILE_NAME {
            searches.push(path);
        } else if name.ends_with(SWEEP_SUFFIX) {
            sweeps.push(path);
        } else if let Some(summary) = Summary::of(dir, &name) {
            summaries.push(summary);
        }
    }
    Ok(())
}

/// A path's text with every run of digits as a number, so that `users_2` sorts before
/// `users_16`.
fn natural_key(path: &Path) -> Vec<(String, u64)> {
    let text = path.to_string_lossy();
    let mut key = Vec::new();
    let mut rest = text.as_ref();
    while !rest.is_empty() {
        let letters = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(letters);
        let digits = tail.find(|c: char| !c.is_ascii_digit()).unwrap_or(tail.len());
        let (number, tail) = tail.split_at(digits);
        key.push((word.to_string(), number.parse().unwrap_or(0)));
        rest = tail;
    }
    key
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))
}

fn read_run(
    root: &Path,
    Summary { path: summary_path, prefix }: Summary,
    collected: &mut HashMap<PathBuf, Records>,
) -> Result<RunArtifacts> {
    let dir = summary_path.parent().unwrap_or(root).to_path_buf();
    let names = ArtifactNames::new(prefix.as_deref());
    let summary = read_json(&summary_path)?;
    let records_path = dir.join(names.records());
    let parquet_path = dir.join(names.records_parquet());
    let records = match collected.remove(&super::live_records::canonical(&dir)) {
        Some(live) => live,
        None => {
            let mut records = Records::default();
            if records_path.is_file() {
                records::read_into(&records_path, &mut records)?;
            } else if parquet_path.is_file() {
                parquet_records::read_into(&parquet_path, &mut records)?;
            }
            records
        }
    };
    let server_path = dir.join(names.server_metrics(crate::plan::ServerMetricsFormat::Jsonl));
    let server_metrics =
        if server_path.is_file() { scrapes::read_server_metrics(&server_path)? } else { BTreeMap::new() };
    let gpu_path = dir.join(names.gpu_telemetry_jsonl());
    let gpu = if gpu_path.is_file() { scrapes::read_gpu_telemetry(&gpu_path)? } else { BTreeMap::new() };
    let relative = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
    let label = if relative.is_empty() {
        root.canonicalize()
            .unwrap_or_else(|_| root.to_path_buf())
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().to_string())
    } else {
        relative
    };
    Ok(RunArtifacts { label, dir, summary, records, server_metrics, gpu })
}

/// The swept parameters' names and the confidence level of a sweep aggregate.
fn read_sweep_metadata(path: &Path) -> Result<(Vec<String>, Option<f64>)> {
    let sweep = read_json(path)?;
    let parameters = sweep["metadata"]["sweep_parameters"].as_array().cloned().unwrap_or_default();
    let names = parameters.iter().filter_map(|p| p["name"].as_str().map(str::to_string)).collect();
    Ok((names, sweep["metadata"]["confidence_level"].as_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn runs_are_found_below_a_sweep_folder_with_its_parameters() {
        let root = tempfile::tempdir().unwrap();
        let sweep = root.path().join("s");
        write(&sweep.join("users_2/profile_export_aiperf.json"), r#"{"request_throughput":{"avg":2.0}}"#);
        write(&sweep.join("users_16/profile_export_aiperf.json"), r#"{}"#);
        // A run's per-phase summaries are not runs of their own.
        write(&sweep.join("users_16/phase_manifest.json"), r#"{"phases":[],"schema_version":1}"#);
        write(&sweep.join("users_16/phases/warmup/profile_export_aiperf.json"), r#"{}"#);
        write(&sweep.join("users_16/phases/profiling/profile_export_aiperf.json"), r#"{}"#);
        write(&sweep.join("users_1/bench.json"), r#"{"request_throughput":{"avg":1.0}}"#);
        write(&sweep.join("users_1/bench.jsonl"), r#"{"metadata":{"request_start_ns":1},"metrics":{}}"#);
        write(&sweep.join("users_1/bench_console.txt"), "");
        write(&sweep.join("users_1/bench_server_metrics.json"), r#"{}"#);
        write(&sweep.join("users_1/bench_server_metrics.jsonl"), "");
        write(&sweep.join("users_1/bench_timeslices.json"), r#"{}"#);
        write(&sweep.join("users_1/inputs.json"), r#"{}"#);
        write(&sweep.join("users_4/old_aiperf.json"), r#"{"request_throughput":{"avg":4.0}}"#);
        write(&sweep.join("users_4/old.jsonl"), r#"{"metadata":{"request_start_ns":1},"metrics":{}}"#);
        write(
            &sweep.join("sweep_aggregate/profile_export_aiperf_sweep.json"),
            r#"{"metadata":{"sweep_parameters":[{"name":"users","values":[1,2]}]}}"#,
        );
        let input = read(std::slice::from_ref(&sweep), HashMap::new()).unwrap();
        let labels: Vec<&str> = input.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["users_1", "users_2", "users_4", "users_16"]);
        assert_eq!(input.runs[0].records.total(), 1, "the prefixed records file is found");
        assert_eq!(input.runs[2].records.total(), 1, "an earlier build's prefixed records are found");
        assert_eq!(input.runs[1].stat("request_throughput", "avg"), Some(2.0));
        assert_eq!(input.sweep_parameters, ["users"]);
    }

    #[test]
    fn a_folder_without_runs_is_named() {
        let root = tempfile::tempdir().unwrap();
        let message = format!("{:#}", read(&[root.path().to_path_buf()], HashMap::new()).unwrap_err());
        assert!(message.contains("no run found in"), "{message}");
        let missing = root.path().join("nope");
        assert!(format!("{:#}", read(&[missing], HashMap::new()).unwrap_err()).contains("not a folder"));
    }
}
