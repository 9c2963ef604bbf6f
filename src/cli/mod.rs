//! The command line: `aiperf run <scenario.rhai>`, `aiperf check`, `aiperf mock`, `aiperf profile`
//! and `aiperf config`.

mod config;
mod mock;
mod profile;
mod run;
mod script_args;
mod signals;

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
    /// Check a scenario without sending load: syntax, imports, and every plan it builds
    #[command(after_help = "Example:\n  aiperf check scenarios/quickstart.rhai")]
    Check(CheckArgs),
    /// Serve the built-in OpenAI-compatible mock server (chat, completions, /metrics)
    #[command(
        after_help = "Example:\n  aiperf mock --port 8000 --ttft-ms 20 --itl-ms 5\n  curl -N localhost:8000/v1/chat/completions -d '{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}'"
    )]
    Mock(MockArgs),
    /// AIPerf config files (schema 2.0): `aiperf config validate FILE`
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// AIPerf's `aiperf profile`: its flags (or --config FILE.yaml) run through the same engine
    #[command(disable_help_flag = true)]
    Profile(ProfileArgs),
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
    /// Serve each run's live metrics in Prometheus text format on this address while it runs,
    /// e.g. 127.0.0.1:9464 (see docs/live-metrics.md)
    #[arg(long, value_name = "ADDRESS", value_parser = crate::live::listen_address)]
    pub metrics_listen: Option<std::net::SocketAddr>,
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
    /// Require `Authorization: Bearer <KEY>`
    #[arg(long, env = "AIPERF_MOCK_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
}

impl Cli {
    /// The tracing filter to use.
    pub fn log_filter(&self) -> String {
        match self.verbose {
            0 => self.log_level.clone(),
            1 => "info".to_string(),
            2 => "debug".to_string(),
            _ => "trace".to_string(),
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
    let code = match cli.command {
        Command::Run(args) => run::run(args, &runtime),
        Command::Check(args) => run::check(args, &runtime),
        Command::Mock(args) => mock::serve(args, &runtime),
        Command::Config(command) => config::run(command),
        Command::Profile(args) => profile::profile(&args.args, &runtime),
    };
    // Everything a command writes was awaited; what is left (a dataset build that a failed
    // pre-flight made moot) must not hold the exit.
    runtime.shutdown_background();
    code
}

/// The command line as typed, with secret values replaced (for run_info).
pub fn redacted_command_line() -> String {
    let mut redact_next = false;
    let mut set_next = false;
    let mut parts = Vec::new();
    for arg in std::env::args() {
        if redact_next {
            parts.push(crate::plan::REDACTED.to_string());
            redact_next = false;
            continue;
        }
        if std::mem::take(&mut set_next) {
            parts.push(script_args::redact_secret_value(&arg));
            continue;
        }
        set_next = arg == "--set";
        if let Some(value) = arg.strip_prefix("--set=") {
            parts.push(format!("--set={}", script_args::redact_secret_value(value)));
        } else if arg == "--api-key" {
            redact_next = true;
            parts.push(arg);
        } else if arg.starts_with("--api-key=") {
            parts.push(format!("--api-key={}", crate::plan::REDACTED));
        } else {
            parts.push(arg);
        }
    }
    parts.join(" ")
}
