//! The Plan: pure data that describes one benchmark. A scenario script builds it; the
//! engine executes it; its JSON form is the `input_config` block of the exports.

mod accuracy;
mod adaptive_scale;
mod agent_split;
mod agentic_replay;
mod audio;
mod baseten_replay;
mod dataset;
mod dataset_bounds;
mod dist;
mod endpoint;
mod in_phase_ramps;
mod libraries;
mod mock_config;
mod network_latency;
mod openings;
mod outputs;
mod phase;
mod placeholder_models;
mod record_formats;
mod response_limits;
mod routing;
pub mod run_coordinates;
mod scenario_lock;
pub mod segment;
mod server_control;
mod sla;
mod spans;
mod subagent_join;
mod trace_handling;
mod trace_synthesis;
mod trial_seed;
mod video;
pub use spans::MAX_SECONDS;
pub use trial_seed::trial_seed;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use accuracy::AccuracySpec;
pub use adaptive_scale::*;
pub use agent_split::AgentSplit;
pub use agentic_replay::*;
pub use audio::*;
pub use baseten_replay::BasetenReplay;
pub use dataset::*;
pub use dataset_bounds::{MAX_PROMPT_TOKENS, prompt_length_problem};
pub use dist::*;
pub use endpoint::*;
pub use in_phase_ramps::*;
pub use libraries::LibraryUse;
pub use mock_config::{MockAnswers, MockConfig};
pub use network_latency::*;
pub use outputs::{
    DEFAULT_MLFLOW_EXPERIMENT, DEFAULT_OTEL_INTERVAL_S, MlflowUpload, OtelPush, Outputs, UserFile, UserFileFormat,
    mlflow_tracking_uri, otel_metrics_url, resource_attribute_pairs,
};
pub use phase::*;
pub use record_formats::RecordFormats;
pub use response_limits::*;
pub use routing::*;
pub use run_coordinates::{RunCoordinates, SweepOrder};
pub use scenario_lock::ScenarioLock;
pub use server_control::*;
pub use sla::{Op, SlaFilter, sla_filters_of};
pub use subagent_join::SubagentJoin;
pub use trace_handling::TraceHandling;
pub use trace_synthesis::TraceSynthesis;
pub use video::*;

/// The url that means "start the built-in mock server in-process".
pub const MOCK_URL: &str = "mock";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The run's name; its artifacts go to `<artifact dir>/<name>/`.
    pub name: String,
    pub endpoint: Endpoint,
    pub dataset: Dataset,
    pub phases: Vec<Phase>,
    pub tokenizer: TokenizerSpec,
    /// Per-request timeout, seconds.
    pub request_timeout_s: f64,
    /// What is written besides the summary, and the optional trace-timing table.
    #[serde(default, skip_serializing_if = "ExportSettings::is_default")]
    pub export: ExportSettings,
    /// Prometheus scraping of the server during the run.
    #[serde(default)]
    pub server_metrics: ServerMetricsConfig,
    /// GPU telemetry (local NVML, DCGM exporters).
    #[serde(default)]
    pub gpu_telemetry: GpuTelemetryConfig,
    /// SLOs by record-metric tag, in the metric's unit (ms for latencies); a request that meets
    /// all of them is good (goodput). Empty: no goodput metrics.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slos: BTreeMap<String, f64>,
    /// Pass/fail checks on the run's metrics, judged at its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::thresholds::Threshold>,
    /// A failed threshold stops the scenario right after this run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abort_on_fail: bool,
    /// ISL and OSL come from each response's `usage` instead of the client's tokenizer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub use_server_token_count: bool,
    /// A chat request's input tokens are counted through the tokenizer's chat template, and
    /// synthetic prompts shortened by what the template adds (AIPerf's `--apply-chat-template`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub apply_chat_template: bool,
    /// The check, before the first phase, that something answers at the endpoint's url.
    #[serde(default, skip_serializing_if = "Preflight::is_default")]
    pub preflight: Preflight,
    /// A results phase without one successful request is not a failed run (no exit code 98).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_all_failed: bool,
    /// Subtract the network round trip from the request-start-anchored latencies, as
    /// `network_adjusted_*` metrics beside the raw ones.
    #[serde(default, skip_serializing_if = "NetworkLatency::is_off")]
    pub network_latency: NetworkLatency,
    /// Serve the run's live metrics in Prometheus text format on this address while it runs
    /// (`metrics_listen`; the command line's `--metrics-listen` takes precedence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Control requests sent to the server beside the load (KV-cache reset, profiler).
    #[serde(default, skip_serializing_if = "ServerControl::is_off")]
    pub server_control: ServerControl,
    /// Stop the run once more than this share (0 to 1) of a results phase's requests failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_request_threshold: Option<f64>,
    /// OTLP metrics pushed while the run runs, an MLflow run made from it.
    #[serde(default, skip_serializing_if = "Outputs::is_off")]
    pub outputs: Outputs,
    /// Where the run sits in a sweep (sweep id, variation, trial): `run_info`, not `input_config`.
    #[serde(skip)]
    pub run_info: RunCoordinates,
    /// The scenario libraries imported before this run (`aiperf.lock`), also in `run_info`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<LibraryUse>,
    /// The AIPerf scenario whose invariants the run was held to (`--scenario`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_lock: Option<ScenarioLock>,
}

impl Plan {
    /// Whether the run measures each of its phases apart (`by_phase`, AIPerf's `phases/<name>/`):
    /// when it measures more than one (warm-ups and the phases that feed the results).
    pub fn measures_phases_apart(&self) -> bool {
        let results = self.phases.iter().filter(|phase| phase.results).count();
        results + self.phases.iter().filter(|phase| phase.kind == PhaseKind::Warmup).count() > 1
    }

    /// Whether a phase sends the dataset's requests: where every phase plays scripted sessions
    /// (which write their own), the dataset is not read.
    pub fn reads_dataset(&self) -> bool {
        self.phases.iter().any(Phase::reads_dataset)
    }

    /// Each phase's index as AIPerf lists its phases: a synthesized agentic warm-up has none,
    /// and the others count without it.
    pub fn listed_phase_indices(&self) -> Vec<Option<usize>> {
        let mut listed = 0;
        let index = |phase: &Phase| {
            (!phase.is_synthesized_warmup()).then(|| {
                listed += 1;
                listed - 1
            })
        };
        self.phases.iter().map(index).collect()
    }

    /// A run of `phases` with the builtin tokenizer, default exports and collectors, no SLOs or
    /// thresholds, tokens counted by the client, and the default pre-flight check.
    pub fn new(
        name: impl Into<String>,
        endpoint: Endpoint,
        dataset: Dataset,
        phases: Vec<Phase>,
        request_timeout_s: f64,
    ) -> Self {
        Plan {
            name: name.into(),
            endpoint,
            dataset,
            phases,
            tokenizer: TokenizerSpec::Builtin,
            request_timeout_s,
            export: ExportSettings::default(),
            server_metrics: ServerMetricsConfig::default(),
            gpu_telemetry: GpuTelemetryConfig::default(),
            slos: BTreeMap::new(),
            thresholds: Vec::new(),
            abort_on_fail: false,
            use_server_token_count: false,
            apply_chat_template: false,
            preflight: Preflight::default(),
            allow_all_failed: false,
            network_latency: NetworkLatency::Off,
            metrics_listen: None,
            server_control: ServerControl::default(),
            failed_request_threshold: None,
            outputs: Outputs::default(),
            run_info: Default::default(),
            libraries: Vec::new(),
            scenario_lock: None,
        }
    }
}

/// How much a run writes: AIPerf's export levels and its HTTP trace switch.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ExportLevel {
    /// Only the summary files.
    Summary,
    /// Also profile_export.jsonl, one line per request.
    #[default]
    Records,
    /// Also profile_export_raw.jsonl: each request's headers, body and every response event.
    Raw,
}

impl ExportLevel {
    /// profile_export.jsonl is written (records and raw).
    pub fn writes_records(self) -> bool {
        self != Self::Summary
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ExportSettings {
    pub level: ExportLevel,
    /// Names every export file `<prefix>…` instead of AIPerf's defaults (no extension, no folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Add each request's `trace_data` (timestamps, chunks, headers, addresses) to its jsonl line.
    pub http_trace: bool,
    /// Print the HTTP trace-timing table after the metrics table.
    pub trace_table: bool,
    /// Cut the profiling time into slices of this length and export the client metrics of
    /// each (profile_export_aiperf_timeslices.json/.csv); None: no timeslices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_duration_ns: Option<u64>,
    /// The files the records go to (with a level that writes records).
    #[serde(default, skip_serializing_if = "RecordFormats::is_default")]
    pub record_formats: RecordFormats,
    /// Also outputs.json: each profiled request's answer text with its ids and main metrics
    /// (AIPerf's `--export-outputs-json`), at any export level.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outputs_json: bool,
}

impl ExportSettings {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The pre-flight check: before the first phase, one GET of `<url>/v1/models`; any HTTP
/// answer means the server is there. Never done against the built-in mock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Preflight {
    pub enabled: bool,
    /// How long one attempt may take, seconds.
    pub timeout_s: f64,
    /// Keep trying until the server answers or this much time has passed, seconds (0: one try).
    pub wait_timeout_s: f64,
    /// Time between tries while waiting, seconds.
    pub wait_interval_s: f64,
    /// What counts as ready (AIPerf's `wait_for_model_mode`); None: any answer to the GET.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ReadinessMode>,
}

impl Default for Preflight {
    fn default() -> Self {
        Self { enabled: true, timeout_s: 5.0, wait_timeout_s: 0.0, wait_interval_s: 1.0, mode: None }
    }
}

/// AIPerf's readiness probes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReadinessMode {
    /// `GET /v1/models` lists the model (a 404 there: the base url answers 2xx).
    Models,
    /// A one-token request to the endpoint gets any status below 500.
    Inference,
    /// `models`, then `inference`.
    Both,
}

impl ReadinessMode {
    pub fn named(name: &str) -> Option<Self> {
        [ReadinessMode::Models, ReadinessMode::Inference, ReadinessMode::Both]
            .into_iter()
            .find(|mode| mode.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReadinessMode::Models => "models",
            ReadinessMode::Inference => "inference",
            ReadinessMode::Both => "both",
        }
    }
}

impl Preflight {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Server-metrics exports a run can write.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ServerMetricsFormat {
    Json,
    Csv,
    Jsonl,
    Parquet,
}

/// Prometheus server-metrics collection (AIPerf's defaults).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerMetricsConfig {
    /// Scrape at all (the endpoint's `<base>/metrics` plus `urls`).
    pub enabled: bool,
    /// More endpoints to scrape.
    pub urls: Vec<String>,
    /// Time between scrapes, seconds.
    pub interval_s: f64,
    pub formats: Vec<ServerMetricsFormat>,
    /// Timeslice width, seconds; no timeslices when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub slice_duration_s: Option<f64>,
    /// Wait before the final scrape, seconds (default: 2 s, 0.2 s against the mock).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flush_period_s: Option<f64>,
    /// How long the reachability test and each scrape may take, seconds.
    pub reachability_timeout_s: f64,
}

impl Default for ServerMetricsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            urls: Vec::new(),
            interval_s: 0.333,
            formats: vec![ServerMetricsFormat::Json, ServerMetricsFormat::Csv, ServerMetricsFormat::Parquet],
            slice_duration_s: None,
            flush_period_s: None,
            reachability_timeout_s: 10.0,
        }
    }
}

/// GPU telemetry: local GPUs through NVML (and amd-smi where installed), and GPU exporter
/// endpoints (DCGM's, AMD's device-metrics exporter) when listed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GpuTelemetryConfig {
    /// Read local GPUs through NVML and amd-smi (each if it is there).
    pub enabled: bool,
    /// GPU exporter /metrics URLs, DCGM's or AMD's (none by default: no probing unless asked).
    pub dcgm_urls: Vec<String>,
    /// Time between samples, seconds.
    pub interval_s: f64,
    /// amd-smi was asked for (AIPerf's `amdsmi` collector): its absence is said.
    #[serde(default)]
    pub amd_smi: bool,
}

impl Default for GpuTelemetryConfig {
    fn default() -> Self {
        Self { enabled: true, dcgm_urls: Vec::new(), interval_s: 0.333, amd_smi: false }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TokenizerSpec {
    /// The tokenizer embedded in the binary (GPT-2's BPE); works offline.
    Builtin,
    /// A Hugging Face `tokenizer.json`, or a folder that holds one.
    File { path: String },
    /// A Hugging Face model id (`gpt2`, `org/name`): cached, or downloaded from the hub once;
    /// at `revision` (a branch, tag or commit) when given, else the hub's `main`.
    Hub {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revision: Option<String>,
    },
    /// The endpoint's model's tokenizer (`id`), as AIPerf counts with it when none is named:
    /// found as `Hub` finds one, else the built-in one, with a warning.
    Model {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revision: Option<String>,
    },
    /// A tiktoken encoding (`o200k_base`, `cl100k_base`, ...), embedded; AIPerf's `builtin`.
    Encoding { name: String },
}

impl TokenizerSpec {
    pub fn name(&self) -> String {
        match self {
            TokenizerSpec::Builtin => "builtin:gpt2".to_string(),
            TokenizerSpec::File { path } => path.clone(),
            TokenizerSpec::Hub { id, .. } | TokenizerSpec::Model { id, .. } => id.clone(),
            TokenizerSpec::Encoding { name } => name.clone(),
        }
    }

    /// The hub revision the tokenizer is taken at (None: `main`).
    pub fn revision(&self) -> Option<&str> {
        match self {
            TokenizerSpec::Hub { revision, .. } | TokenizerSpec::Model { revision, .. } => revision.as_deref(),
            _ => None,
        }
    }

    /// This tokenizer at hub `revision` (AIPerf's `--tokenizer-revision`; `main`, the hub's
    /// default, changes nothing); an error for a tokenizer that is not taken from the hub.
    pub fn at_revision(self, revision: &str) -> Result<Self, String> {
        let revision = revision.trim();
        if revision.is_empty() || revision == "main" {
            return Ok(self);
        }
        let pinned = Some(revision.to_string());
        match self {
            TokenizerSpec::Hub { id, .. } => Ok(TokenizerSpec::Hub { id, revision: pinned }),
            TokenizerSpec::Model { id, .. } => Ok(TokenizerSpec::Model { id, revision: pinned }),
            other => Err(format!(
                "revision `{revision}` is for a tokenizer taken from the Hugging Face hub (a model id); `{}` is not one",
                other.name()
            )),
        }
    }

    /// AIPerf's `builtin` tokenizer: tiktoken's o200k_base encoding.
    pub fn aiperf_builtin() -> Self {
        TokenizerSpec::Encoding { name: "o200k_base".to_string() }
    }

    /// AIPerf's default for `model`: its tokenizer when it names a hub repository (`org/name`);
    /// AIPerf's built-in one for a name AIPerf takes for a placeholder (`mock-model`, `test`);
    /// this project's built-in one for any other name (`m`, which AIPerf would look up on the hub).
    pub fn default_for(model: &str) -> Self {
        match model.split_once('/') {
            Some((org, name)) if !org.is_empty() && !name.is_empty() && !name.contains('/') => {
                TokenizerSpec::Model { id: model.to_string(), revision: None }
            }
            _ if placeholder_models::is_placeholder(model) => Self::aiperf_builtin(),
            _ => TokenizerSpec::Builtin,
        }
    }
}
