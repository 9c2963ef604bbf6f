//! The file names of a run's artifacts: AIPerf's defaults, or every one of them renamed by
//! the run's `export_prefix` (AIPerf's `--profile-export-prefix`).

use crate::plan::ServerMetricsFormat;

/// The stem of the profile exports when no prefix is given.
const DEFAULT_STEM: &str = "profile_export";

/// Names every export file of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactNames {
    prefix: Option<String>,
}

impl ArtifactNames {
    /// `prefix` as the plan holds it (already checked by `parse_prefix`).
    pub fn new(prefix: Option<&str>) -> Self {
        Self { prefix: prefix.map(str::to_owned) }
    }

    fn profile(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix.as_deref().unwrap_or(DEFAULT_STEM))
    }

    /// `profile_export_aiperf.json` or `P.json`.
    pub fn summary_json(&self) -> String {
        self.summary("json")
    }

    /// `profile_export_aiperf.csv` or `P.csv`.
    pub fn summary_csv(&self) -> String {
        self.summary("csv")
    }

    fn summary(&self, extension: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}.{extension}"),
            None => format!("{DEFAULT_STEM}_aiperf.{extension}"),
        }
    }

    /// `profile_export_aiperf_timeslices.json` or `P_timeslices.json` (AIPerf's prefixed name).
    pub fn timeslices_json(&self) -> String {
        self.timeslices("json")
    }

    /// `profile_export_aiperf_timeslices.csv` or `P_timeslices.csv`.
    pub fn timeslices_csv(&self) -> String {
        self.timeslices("csv")
    }

    fn timeslices(&self, extension: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}_timeslices.{extension}"),
            None => format!("{DEFAULT_STEM}_aiperf_timeslices.{extension}"),
        }
    }

    /// `profile_export_aiperf_aggregate.json` or `P_aiperf_aggregate.json`: the confidence
    /// aggregate of a run's trials.
    pub fn aggregate_json(&self) -> String {
        self.profile("_aiperf_aggregate.json")
    }

    /// `profile_export_aiperf_aggregate.csv` or `P_aiperf_aggregate.csv`.
    pub fn aggregate_csv(&self) -> String {
        self.profile("_aiperf_aggregate.csv")
    }

    /// `profile_export_aiperf_sweep.json` or `P_aiperf_sweep.json`: the aggregate of a sweep.
    pub fn sweep_json(&self) -> String {
        self.profile("_aiperf_sweep.json")
    }

    /// `profile_export_aiperf_sweep.csv` or `P_aiperf_sweep.csv`.
    pub fn sweep_csv(&self) -> String {
        self.profile("_aiperf_sweep.csv")
    }

    /// `profile_export.jsonl` or `P.jsonl`.
    pub fn records(&self) -> String {
        self.profile(".jsonl")
    }

    /// `profile_export.parquet` or `P.parquet`.
    pub fn records_parquet(&self) -> String {
        self.profile(".parquet")
    }

    /// `profile_export_raw.jsonl` or `P_raw.jsonl`.
    pub fn raw(&self) -> String {
        self.profile("_raw.jsonl")
    }

    /// `profile_export_console.txt` or `P_console.txt`.
    pub fn console(&self) -> String {
        self.profile("_console.txt")
    }

    /// `server_metrics_export.<ext>` or `P_server_metrics.<ext>`, as AIPerf names them.
    pub fn server_metrics(&self, format: ServerMetricsFormat) -> String {
        let extension = match format {
            ServerMetricsFormat::Json => "json",
            ServerMetricsFormat::Csv => "csv",
            ServerMetricsFormat::Jsonl => "jsonl",
            ServerMetricsFormat::Parquet => "parquet",
        };
        self.side_file("server_metrics", extension)
    }

    /// `gpu_telemetry_export.jsonl` or `P_gpu_telemetry.jsonl`.
    pub fn gpu_telemetry_jsonl(&self) -> String {
        self.side_file("gpu_telemetry", "jsonl")
    }

    /// `gpu_telemetry_export.csv` or `P_gpu_telemetry.csv`.
    pub fn gpu_telemetry_csv(&self) -> String {
        self.side_file("gpu_telemetry", "csv")
    }

    fn side_file(&self, what: &str, extension: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}_{what}.{extension}"),
            None => format!("{what}_export.{extension}"),
        }
    }
}

/// The endings AIPerf strips from a prefix, longest first, so that a prefix given as one of
/// its files' names (`bench_raw.jsonl`) names the same files as `bench`.
const EXPORT_ENDINGS: &[&str] = &[
    "_server_metrics.parquet",
    "_server_metrics.jsonl",
    "_server_metrics.json",
    "_server_metrics.csv",
    "_gpu_telemetry.jsonl",
    "_timeslices.csv",
    "_timeslices.json",
    "_raw.jsonl",
    ".parquet",
    ".csv",
    ".json",
    ".jsonl",
];

/// The prefix a scenario gave, an export file's ending stripped as AIPerf strips it
/// (`"bench.json"` and `"bench_raw.jsonl"` → `"bench"`); an error for a value that is not a
/// plain file name.
pub fn parse_prefix(value: &str) -> Result<String, String> {
    if value.contains(['/', '\\']) {
        return Err(format!("`{value}` must be a file name prefix, not a path (no `/` or `\\`)"));
    }
    let stem = EXPORT_ENDINGS.iter().find_map(|ending| value.strip_suffix(ending)).unwrap_or(value);
    if stem.trim().is_empty() || stem.trim_matches('.').is_empty() {
        return Err(format!("`{value}` must name files, e.g. \"my_benchmark\""));
    }
    Ok(stem.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_aiperf_s() {
        let names = ArtifactNames::new(None);
        assert_eq!(names.summary_json(), "profile_export_aiperf.json");
        assert_eq!(names.summary_csv(), "profile_export_aiperf.csv");
        assert_eq!(names.timeslices_json(), "profile_export_aiperf_timeslices.json");
        assert_eq!(names.timeslices_csv(), "profile_export_aiperf_timeslices.csv");
        assert_eq!(names.aggregate_json(), "profile_export_aiperf_aggregate.json");
        assert_eq!(names.aggregate_csv(), "profile_export_aiperf_aggregate.csv");
        assert_eq!(names.sweep_json(), "profile_export_aiperf_sweep.json");
        assert_eq!(names.sweep_csv(), "profile_export_aiperf_sweep.csv");
        assert_eq!(names.records(), "profile_export.jsonl");
        assert_eq!(names.raw(), "profile_export_raw.jsonl");
        assert_eq!(names.console(), "profile_export_console.txt");
        assert_eq!(names.server_metrics(ServerMetricsFormat::Parquet), "server_metrics_export.parquet");
        assert_eq!(names.gpu_telemetry_jsonl(), "gpu_telemetry_export.jsonl");
        assert_eq!(names.gpu_telemetry_csv(), "gpu_telemetry_export.csv");
    }

    #[test]
    fn a_prefix_renames_every_file() {
        let names = ArtifactNames::new(Some("bench"));
        assert_eq!(names.summary_json(), "bench.json");
        assert_eq!(names.summary_csv(), "bench.csv");
        assert_eq!(names.timeslices_json(), "bench_timeslices.json");
        assert_eq!(names.timeslices_csv(), "bench_timeslices.csv");
        assert_eq!(names.aggregate_json(), "bench_aiperf_aggregate.json");
        assert_eq!(names.aggregate_csv(), "bench_aiperf_aggregate.csv");
        assert_eq!(names.sweep_json(), "bench_aiperf_sweep.json");
        assert_eq!(names.sweep_csv(), "bench_aiperf_sweep.csv");
        assert_eq!(names.records(), "bench.jsonl");
        assert_eq!(names.raw(), "bench_raw.jsonl");
        assert_eq!(names.console(), "bench_console.txt");
        assert_eq!(names.server_metrics(ServerMetricsFormat::Json), "bench_server_metrics.json");
        assert_eq!(names.server_metrics(ServerMetricsFormat::Jsonl), "bench_server_metrics.jsonl");
        assert_eq!(names.gpu_telemetry_jsonl(), "bench_gpu_telemetry.jsonl");
        assert_eq!(names.gpu_telemetry_csv(), "bench_gpu_telemetry.csv");
    }

    #[test]
    fn prefixes_lose_their_extension_and_paths_are_refused() {
        assert_eq!(parse_prefix("my_benchmark").as_deref(), Ok("my_benchmark"));
        assert_eq!(parse_prefix("my_benchmark.json").as_deref(), Ok("my_benchmark"));
        assert_eq!(parse_prefix("run.v2.csv").as_deref(), Ok("run.v2"));
        assert_eq!(parse_prefix("run.v2").as_deref(), Ok("run.v2"));
        assert_eq!(parse_prefix("bench_raw.jsonl").as_deref(), Ok("bench"));
        assert_eq!(parse_prefix("bench_timeslices.csv").as_deref(), Ok("bench"));
        assert_eq!(parse_prefix("bench_server_metrics.parquet").as_deref(), Ok("bench"));
        assert_eq!(parse_prefix("bench.jsonl").as_deref(), Ok("bench"));
        assert_eq!(parse_prefix(".hidden").as_deref(), Ok(".hidden"));
        for bad in ["a/b", "a\\b", "", "..", " ", ".json"] {
            assert!(parse_prefix(bad).is_err(), "{bad:?} accepted");
        }
    }
}
