//! The command line: `aiperf run <scenario.rhai>`, `aiperf check`, `aiperf mock`, `aiperf profile`,
//! `aiperf config`, `aiperf plot`, `aiperf synthesize`, `aiperf validate`, `aiperf analyze-trace`,
//! `aiperf analyze`, `aiperf speed-bench-report`, `aiperf chat` and `aiperf lib`.

mod analyze;
mod analyze_trace;
mod chat;
mod config;
mod config_expand;
mod config_file;
mod config_init;
mod kube;
mod lib;
mod lib_test;
mod merge;
mod mock;
mod plot;
mod plugins;
mod profile;
mod run;
mod script_args;
mod signals;
mod speed_bench_report;
mod synthesize;
mod synthesize_agentic_code;
mod validate;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
pub use script_args::ScriptArgs;

/// Exit codes a CI pipeline can rely on.
pub mod exit_code {
    pub const OK: i32 = 0;
    /// The run could not be carried out (I/O, a server that cannot be started, …).
    pub const FAILURE: i32 = 1;
    /// The scenario is wrong: syntax, unknown keys, bad values. The message names file:line:column.
    pub const SCRIPT_ERROR: i32 = 2;
    /// Nothing answered at a run's endpoint (the pre-flight check: refused, unknown host, TLS,
    /// no answer in time); nothing was sent. Like sysexits' EX_UNAVAILABLE.
    pub const ENDPOINT_UNREACHABLE: i32 = 69;
    /// More of a run's requests failed than its `failed_request_threshold` allows: the run was
    /// stopped and its partial artifacts written.
    pub const FAILED_REQUEST_THRESHOLD: i32 = 97;
    /// A run's results phase ended without one successful request; its artifacts are written
    /// and the most frequent errors printed (`allow_all_failed: true` in `run` accepts it).
    pub const ALL_REQUESTS_FAILED: i32 = 98;
    /// The scenario ran, but a run failed one of its thresholds (`thresholds:` in `run`).
    pub const THRESHOLDS_FAILED: i32 = 99;
    /// Stopped by SIGHUP (artifacts of the interrupted run are still written).
    pub const HUNG_UP: i32 = 129;
    /// Interrupted with Ctrl-C, SIGINT (artifacts of the interrupted run are still written).
    pub const INTERRUPTED: i32 = 130;
    /// Stopped by SIGTERM (artifacts of the interrupted run are still written).
    pub const TERMINATED: i32 = 143;
}

const EXAMPLES: &str = "\
Examples:
  aiperf run scenarios/quickstart.rhai
      Benchmark the built-in mock server and write artifacts/quickstart/
  AIPERF_URL=http://127.0.0.1:8000 aiperf run scenarios/quickstart.rhai --artifact-dir out
      The same scenario against a real OpenAI-compatible server
  aiperf mock --port 8000 --ttft-ms 50 --itl-ms 10
      Serve the mock on a port, for other tools (vLLM bench, AIPerf, curl)";

#[derive(Debug, Parser)]
#[command(name = "aiperf", version, about = "Benchmark LLM inference servers with scenario scripts written in Rhai", after_help = EXAMPLES)]
pub struct Cli {
    /// Log level: error, warn, info, debug, trace (or a tracing filter such as `aiperf=debug`)
    #[arg(long, global = true, default_value = "warn", env = "AIPERF_LOG")]
    pub log_level: String,
    /// More logging (-v: info, -vv: debug, -vvv: trace); overrides --log-level
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario script: every run(#{..}) in it benchmarks and writes its artifacts
    #[command(
        after_help = "Examples:\n  aiperf run scenarios/quickstart.rhai --artifact-dir artifacts\n  aiperf run scenarios/mooncake.rhai --set speedup=8 --lib ~/bench-lib"
    )]
    Run(RunArgs),
    /// Check a scenario without sending load: syntax, imports, every plan it builds, and one
    /// session of each session function against the built-in mock
    #[command(after_help = "Example:\n  aiperf check scenarios/quickstart.rhai")]
    Check(CheckArgs),
    /// Serve the built-in OpenAI-compatible mock server (chat, completions, /metrics)
    #[command(
        after_help = "Example:\n  aiperf mock --port 8000 --ttft-ms 20 --itl-ms 5\n  curl -N localhost:8000/v1/chat/completions -d '{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}'"
    )]
    Mock(MockArgs),
    /// AIPerf config files (schema 2.0): `aiperf config validate FILE`, `aiperf config expand FILE`, `aiperf config init --list`
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// AIPerf's `aiperf profile`: its flags (or --config FILE.yaml) run through the same engine
    #[command(disable_help_flag = true)]
    Profile(ProfileArgs),
    /// The report of finished runs: one self-contained report.html, or PNG/SVG charts
    #[command(
        after_help = "Examples:\n  aiperf plot artifacts/quickstart\n  aiperf plot artifacts/run_a artifacts/run_b --output compare --format html,png,svg"
    )]
    Plot(plot::PlotArgs),
    /// Merge the folders of a run's execution segments (`run --segment I/N`) into one run
    #[command(
        after_help = "Example:\n  aiperf run scenario.rhai --segment 0/2 & aiperf run scenario.rhai --segment 1/2; wait\n  aiperf merge artifacts/quickstart/segment-* -o artifacts/quickstart-merged"
    )]
    Merge(MergeArgs),
    /// Kubernetes: `aiperf kube manifest SCENARIO --workers N --image IMAGE`
    #[command(subcommand)]
    Kube(KubeCommand),
    /// Reshape a mooncake trace as `aiperf profile --synthesis-*` does before a run, or generate
    /// agentic coding sessions as one (AIPerf's `agentic-code`)
    #[command(
        after_help = "Examples:\n  aiperf synthesize mooncake-trace trace.jsonl --synthesis-speedup-ratio 2 --output-file fast.jsonl\n  aiperf synthesize agentic-code --num-sessions 200 --max-isl 131072 --output traces/"
    )]
    Synthesize(synthesize::SynthesizeArgs),
    /// SPEED-Bench runs gathered into a model × category matrix (acceptance length or rate,
    /// or throughput), as a table and a CSV
    #[command(
        name = "speed-bench-report",
        after_help = "Examples:\n  aiperf speed-bench-report artifacts/\n  aiperf speed-bench-report artifacts/run_coding artifacts/run_math --metric accept-rate --format table"
    )]
    SpeedBenchReport(speed_bench_report::SpeedBenchReportArgs),
    /// AIPerf's plugin categories and what each is here: the names `aiperf profile` takes for
    /// endpoints, dataset formats, public datasets, arrival patterns, searches, ...
    #[command(
        after_help = "Examples:\n  aiperf plugins\n  aiperf plugins public_dataset_loader\n  aiperf plugins endpoint chat"
    )]
    Plugins(plugins::PluginsArgs),
    /// Check a mooncake trace line by line as a run reads it
    #[command(after_help = "Example:\n  aiperf validate mooncake-trace traces/dataset.jsonl")]
    Validate(validate::ValidateArgs),
    /// A mooncake trace's statistics: ISL/OSL, shared prefixes, cache hit rates, request rate
    #[command(after_help = "Example:\n  aiperf analyze-trace trace.jsonl --output-file trace_analysis.json")]
    AnalyzeTrace(analyze_trace::AnalyzeTraceArgs),
    /// Scenario libraries of aiperf.toml: `aiperf lib fetch | update [NAME] | list | test [DIR]`
    #[command(subcommand)]
    Lib(lib::LibCommand),
    /// Chat with an endpoint, one message at a time, each reply's TTFT, tokens/s and ITL printed
    #[command(
        after_help = "Examples:\n  aiperf chat --model Qwen/Qwen3-0.6B --url http://localhost:8000\n  aiperf chat -m mock-model --quick \"hello, who are you?\" --tokenizer builtin\n  aiperf chat -m m --no-history --system-prompt \"Answer in one line.\""
    )]
    Chat(chat::ChatArgs),
    /// Views of finished runs: `swim-lane` (sessions and concurrency over time) and
    /// `turn-messages` (what each turn sent)
    #[command(subcommand)]
    Analyze(analyze::AnalyzeCommand),
}

#[derive(Debug, Subcommand)]
pub enum KubeCommand {
    /// The objects of a distributed run: an Indexed Job of N segments, a ConfigMap with the
    /// scenario and its imports, a shared volume for the segment folders, and a merge Job
    #[command(
        after_help = "Example:\n  aiperf kube manifest scenarios/rate.rhai --workers 4 --image registry.example/aiperf:0.1 --env AIPERF_URL=http://vllm:8000 | kubectl apply -f -"
    )]
    Manifest(KubeManifestArgs),
}

#[derive(Debug, clap::Args)]
pub struct KubeManifestArgs {
    /// The scenario script (.rhai); files it imports from its folder go along
    pub scenario: PathBuf,
    /// Segments, one pod each
    #[arg(long)]
    pub workers: u32,
    /// The aiperf container image (see the Dockerfile)
    #[arg(long)]
    pub image: String,
    /// Base name of the objects (default: the scenario's file name)
    #[arg(long)]
    pub name: Option<String>,
    /// Size of the shared results volume
    #[arg(long, default_value = "1Gi")]
    pub storage: String,
    /// Storage class of the results volume (it needs ReadWriteMany)
    #[arg(long)]
    pub storage_class: Option<String>,
    /// `--start-at` for every segment (RFC 3339 or Unix seconds)
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// Environment of the aiperf containers, KEY=VALUE (repeatable), e.g. AIPERF_URL=http://server:8000
    #[arg(long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Write the YAML here instead of printing it
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The segment folders (`<run>/segment-I-of-N`), all N of them, or folders they are found below
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Where the merged run's exports go
    #[arg(short, long)]
    pub out: PathBuf,
    /// Merge the segments' histograms (`segment_histograms.json`) instead of their records:
    /// exact counts and throughputs, percentiles within 0.1 % (also used when a segment kept
    /// no `segment_records.jsonl`)
    #[arg(long)]
    pub streaming: bool,
}

#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// AIPerf `aiperf profile` flags; see `aiperf profile --help`
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario script (.rhai)
    pub scenario: PathBuf,
    /// Where run folders are written: <DIR>/<run name>/
    #[arg(long, default_value = "artifacts", env = "AIPERF_ARTIFACT_DIR")]
    pub artifact_dir: PathBuf,
    /// Do not draw progress bars
    #[arg(long)]
    pub no_progress: bool,
    /// Print every plan the scenario builds (as JSON) and send nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Run execution segment I of N (0-based): a deterministic share of every phase, merged
    /// later by `aiperf merge`. Else from $AIPERF_SEGMENT, Slurm (SLURM_PROCID of
    /// SLURM_NTASKS), or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX of --segments)
    #[arg(long, value_name = "I/N")]
    pub segment: Option<String>,
    /// How many segments a Kubernetes Indexed Job's JOB_COMPLETION_INDEX counts in (else $AIPERF_SEGMENTS)
    #[arg(long, value_name = "N")]
    pub segments: Option<u32>,
    /// Begin the first phase at this time: RFC 3339 or Unix seconds (else $AIPERF_START_AT)
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// Serve each run's live metrics in Prometheus text format on this address while it runs,
    /// e.g. 127.0.0.1:9464 (see docs/live-metrics.md)
    #[arg(long, value_name = "ADDRESS", value_parser = crate::live::listen_address)]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Write report.html into every run's and sweep's folder (`report: false` in one opts out)
    #[arg(long)]
    pub report: bool,
    /// While an open-loop phase paces, keep idle cores from sleeping with idle-priority
    /// threads, so a request due is never held up by a core waking (tighter dispatch delay;
    /// costs the idle cores' time, reported apart). Else $AIPERF_KEEP_CORES_AWAKE=1
    #[arg(long)]
    pub keep_cores_awake: bool,
    #[command(flatten)]
    pub script: ScriptArgs,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenario script (.rhai)
    pub scenario: PathBuf,
    #[command(flatten)]
    pub script: ScriptArgs,
}

#[derive(Debug, clap::Args)]
pub struct MockArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one)
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Time to first token, ms
    #[arg(long, default_value_t = 20.0)]
    pub ttft_ms: f64,
    /// Time between tokens, ms
    #[arg(long, default_value_t = 5.0)]
    pub itl_ms: f64,
    /// Output tokens when a request sets no max tokens
    #[arg(long, default_value_t = 64)]
    pub output_tokens: u64,
    /// Requests generating at once; more wait in a queue
    #[arg(long, default_value_t = 256)]
    pub max_running: usize,
    /// Model name served by /v1/models
    #[arg(long, default_value = "mock-model")]
    pub model: String,
    /// Streams an HTTP/2 connection may hold at once (SETTINGS_MAX_CONCURRENT_STREAMS), as real
    /// servers limit them (100, 128, 250); default: practically no limit
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub http2_max_streams: Option<u32>,
    /// Require `Authorization: Bearer <KEY>`
    #[arg(long, env = "AIPERF_MOCK_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Time to first token added per prompt token not read from the prefix cache, ms
    #[arg(long, default_value_t = 0.0)]
    pub prefill_ms_per_token: f64,
    /// Prefix cache capacity in blocks (0 turns the cache off)
    #[arg(long, default_value_t = 16_384)]
    pub prefix_cache_blocks: u64,
    /// Tokens per prefix cache block
    #[arg(long, default_value_t = 16)]
    pub prefix_block_tokens: u64,
    /// Draft tokens per simulated speculative decoding step (0: no speculative decoding)
    #[arg(long, default_value_t = 0)]
    pub spec_decode_tokens: u32,
    /// Share of draft tokens accepted, 0 to 1
    #[arg(long, default_value_t = 0.7)]
    pub spec_decode_acceptance: f64,
    /// Output tokens per streamed chat or completions chunk (a server's stream interval)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_interval: u64,
    /// Count prompts with this tokenizer: a tiktoken encoding (o200k_base, cl100k_base, ...),
    /// a tokenizer.json, or a Hugging Face model id [default: builtin, GPT-2's BPE]
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Answer mode: answer this share (0 to 1) of each task's questions of --accuracy-benchmark
    /// right, the rest wrong (docs/accuracy.md)
    #[arg(long, requires = "accuracy_benchmark")]
    pub accuracy_correct: Option<f64>,
    /// The accuracy benchmark the answer mode answers (read from the Hugging Face cache)
    #[arg(long, requires = "accuracy_correct")]
    pub accuracy_benchmark: Option<String>,
    /// Its tasks, as the run asks them (comma-separated)
    #[arg(long, value_delimiter = ',')]
    pub accuracy_tasks: Vec<String>,
    /// Its worked examples per question, as the run asks them
    #[arg(long)]
    pub accuracy_n_shots: Option<u32>,
    /// Chain-of-thought prompts, as the run asks them
    #[arg(long)]
    pub accuracy_enable_cot: Option<bool>,
    /// The grader whose format the answers keep
    #[arg(long)]
    pub accuracy_grader: Option<String>,
}

impl Cli {
    /// The tracing filter to use.
    pub fn log_filter(&self) -> String {
        if let Some(filter) = self.profile_log_filter() {
            return filter;
        }
        match self.verbose {
            0 => self.log_level.clone(),
            1 => "info".to_string(),
            2 => "debug".to_string(),
            _ => "trace".to_string(),
        }
    }

    /// A level was chosen (`--log-level`, `-v`, or `aiperf profile`'s own), not the default.
    pub fn log_level_chosen(&self) -> bool {
        self.verbose > 0 || self.log_level != "warn" || self.profile_log_filter().is_some()
    }

    /// `aiperf profile --log-level …` / `-v`: AIPerf's place for the level.
    fn profile_log_filter(&self) -> Option<String> {
        match &self.command {
            Command::Profile(args) => profile::log_filter_of(&args.args),
            _ => None,
        }
    }
}

/// Run the chosen command and return the process exit code.
pub fn main_with(cli: Cli) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("aiperf-worker").build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit_code::FAILURE;
        }
    };
    let verbose = cli.verbose > 0;
    let code = match cli.command {
        Command::Run(args) => run::run(args, &runtime),
        Command::Check(args) => run::check(args, &runtime),
        Command::Mock(args) => mock::serve(args, &runtime),
        Command::Config(command) => config::run(command, verbose),
        Command::Profile(args) => profile::profile(&args.args, &runtime),
        Command::Plot(args) => plot::plot(args),
        Command::Merge(args) => merge::merge(args, &runtime),
        Command::Kube(command) => kube::run(command),
        Command::Synthesize(args) => synthesize::synthesize(args),
        Command::Plugins(args) => plugins::plugins(args),
        Command::Validate(args) => validate::validate(args),
        Command::SpeedBenchReport(args) => speed_bench_report::speed_bench_report(args),
        Command::AnalyzeTrace(args) => analyze_trace::analyze_trace(args),
        Command::Lib(command) => lib::run(command, &runtime),
        Command::Chat(args) => chat::chat(args, &runtime),
        Command::Analyze(command) => analyze::run(command),
    };
    // Everything a command writes was awaited; what is left (a dataset build that a failed
    // pre-flight made moot) must not hold the exit.
    runtime.shutdown_background();
    code
}

/// The command line as typed, with secret values replaced (for run_info): `--api-key`'s, a
/// `--set` of a secret-looking name, and credential headers given with `-H`/`--header`.
pub fn redacted_command_line() -> String {
    redact_command_line(std::env::args())
}

fn redact_command_line(args: impl IntoIterator<Item = String>) -> String {
    /// What the argument before this one asks of it.
    #[derive(Clone, Copy)]
    enum Next {
        AsIs,
        Redact,
        SetValue,
        Header,
    }
    let mut next = Next::AsIs;
    let mut parts = Vec::new();
    for arg in args {
        match std::mem::replace(&mut next, Next::AsIs) {
            Next::Redact => {
                parts.push(crate::plan::REDACTED.to_string());
                continue;
            }
            Next::SetValue => {
                parts.push(script_args::redact_secret_value(&arg));
                continue;
            }
            Next::Header => {
                parts.push(redact_header_argument(&arg));
                continue;
            }
            Next::AsIs => {}
        }
        next = match arg.as_str() {
            "--set" => Next::SetValue,
            "--api-key" => Next::Redact,
            "-H" | "--header" => Next::Header,
            _ => Next::AsIs,
        };
        if let Some(value) = arg.strip_prefix("--set=") {
            parts.push(format!("--set={}", script_args::redact_secret_value(value)));
        } else if arg.starts_with("--api-key=") {
            parts.push(format!("--api-key={}", crate::plan::REDACTED));
        } else if let Some(value) = arg.strip_prefix("--header=") {
            parts.push(format!("--header={}", redact_header_argument(value)));
        } else {
            parts.push(arg);
        }
    }
    parts.join(" ")
}

/// A `-H` value (`Name: value`, or headers as JSON) with the values of credential headers
/// replaced; JSON naming one is replaced whole.
fn redact_header_argument(text: &str) -> String {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let lower = trimmed.to_ascii_lowercase();
        let names_a_secret = lower.split('"').skip(1).step_by(2).any(crate::plan::is_secret_header);
        return if names_a_secret { crate::plan::REDACTED.to_string() } else { text.to_string() };
    }
    match text.split_once(':') {
        Some((name, _)) if crate::plan::is_secret_header(name.trim()) => {
            format!("{}: {}", name.trim(), crate::plan::REDACTED)
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_command_line;

    fn redacted(line: &str) -> String {
        redact_command_line(line.split(' ').map(str::to_string))
    }

    #[test]
    fn credentials_never_reach_the_recorded_command_line() {
        assert_eq!(
            redacted(
                "aiperf profile --api-key sk-1 -H Authorization:Bearer_sk-2 --header=X-Api-Key:sk-3 -H X-Team:infra"
            ),
            "aiperf profile --api-key <redacted> -H Authorization: <redacted> --header=X-Api-Key: <redacted> -H X-Team:infra"
        );
        assert_eq!(
            redacted("aiperf profile --api-key=sk-1 --set hf_token=sk-4"),
            "aiperf profile --api-key=<redacted> --set hf_token=<redacted>"
        );
        assert_eq!(redacted(r#"aiperf profile -H {"authorization":"Bearer_sk-5"}"#), "aiperf profile -H <redacted>");
        assert_eq!(redacted(r#"aiperf profile -H {"X-Team":"infra"}"#), r#"aiperf profile -H {"X-Team":"infra"}"#);
    }
}
