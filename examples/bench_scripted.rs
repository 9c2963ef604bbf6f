//! Scripted sessions against plain requests: the same streamed chat requests (`--tokens` each)
//! sent by a closed-loop `concurrency` phase and by a scripted phase, by an `aiperf` binary
//! against a mock served by this process (zero delays unless `--ttft-ms` / `--itl-ms` say).
//! With `--steps N` (default 1) each scripted session sends N chat steps over its history and
//! the plain phase plays conversations of N turns (synthetic `turns`), so both send the same
//! conversations. With `--fan N` each scripted session runs N sub-agents at once
//! (`s.parallel`), a step each, and the plain phase has N times the users, so both keep as many
//! requests in flight. The two take turns, so a noisy machine hits them alike. Per run: the client's
//! CPU per streamed event (the child's user + sys over requests × tokens), TTFT p50 and p99
//! (with a zero-delay server, what the client adds), the dispatch delay p99, and for a scripted
//! run its script workers' busy share, CPU per event and resume delay p99 (the self-check's);
//! then each median and the ratio scripted / plain, and the scripted run's CPU per event split
//! into the script workers' and the rest's; last, the floor of the workers' share: Rhai alone
//! calling the same session function, its `s.chat` doing nothing.
//!
//!     cargo run --release --example bench_scripted -- [--runs N] [--users N] [--requests N]
//!         [--tokens N] [--steps N | --fan N] [--ttft-ms MS] [--itl-ms MS] [BINARY]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use aiperf::mock::{MockConfig, MockServer};
use anyhow::{Context, Result, bail};
use serde_json::Value;

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct Figures {
    cpu_us_per_event: f64,
    ttft_p50_ms: f64,
    ttft_p99_ms: f64,
    dispatch_p99_ms: f64,
    /// The script workers' busy share, %, their CPU per streamed event, and how long answers
    /// waited for them; NaN in a plain run.
    script_busy_percent: f64,
    script_cpu_us_per_event: f64,
    resume_p99_ms: f64,
}

/// One figure of a run, as the summary table reads it.
type Column = fn(&Figures) -> f64;

struct Settings {
    runs: usize,
    users: u64,
    requests: u64,
    tokens: u64,
    steps: u64,
    /// Sub-agents a session runs at once, a step each (1: none, the session steps itself).
    fan: u64,
    ttft_ms: f64,
    itl_ms: f64,
    binary: PathBuf,
}

fn main() -> Result<()> {
    let settings = settings()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let (ttft_ms, itl_ms) = (settings.ttft_ms, settings.itl_ms);
    let config = MockConfig { ttft_ms, itl_ms, max_running: 100_000, ..MockConfig::default() };
    let mock = runtime.block_on(MockServer::start(config, "127.0.0.1:0".parse()?))?;
    let work = std::env::temp_dir().join(format!("aiperf-bench-scripted-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let modes = ["plain", "scripted"];
    let mut figures: [Vec<Figures>; 2] = [Vec::new(), Vec::new()];
    for run in 0..settings.runs {
        for (mode, figures) in modes.iter().zip(&mut figures) {
            let scenario = work.join(format!("{mode}.rhai"));
            std::fs::write(&scenario, scenario_text(mode, &mock.base_url(), &settings))?;
            let one = one_run(&settings, &scenario, &work.join(format!("run-{run}-{mode}")))?;
            let workers = if one.script_busy_percent.is_nan() {
                String::new()
            } else {
                format!(
                    ", script workers {:.0} % busy ({:.2} µs/event), resume delay p99 {:.3} ms",
                    one.script_busy_percent, one.script_cpu_us_per_event, one.resume_p99_ms
                )
            };
            println!(
                "run {run} {mode:>8}: CPU {:.2} µs/event, TTFT p50 {:.3} ms p99 {:.3} ms, dispatch p99 {:.3} ms{workers}",
                one.cpu_us_per_event, one.ttft_p50_ms, one.ttft_p99_ms, one.dispatch_p99_ms
            );
            figures.push(one);
        }
    }
    println!(
        "{} runs each, {} users, {} requests of {} tokens, {} step(s) a session{}, server TTFT {} ms ITL {} ms; medians (scripted / plain):",
        settings.runs,
        settings.users,
        settings.requests,
        settings.tokens,
        settings.steps,
        if settings.fan > 1 { format!(" ({} sub-agents at once)", settings.fan) } else { String::new() },
        settings.ttft_ms,
        settings.itl_ms
    );
    let rows: [(&str, Column); 4] = [
        ("CPU per streamed event, µs", |f| f.cpu_us_per_event),
        ("TTFT p50, ms", |f| f.ttft_p50_ms),
        ("TTFT p99, ms", |f| f.ttft_p99_ms),
        ("dispatch delay p99, ms", |f| f.dispatch_p99_ms),
    ];
    for (name, value) in rows {
        let plain = median(figures[0].iter().map(value).collect());
        let scripted = median(figures[1].iter().map(value).collect());
        println!("  {name:<28} plain {plain:>8.3}  scripted {scripted:>8.3}  ratio {:.2}", scripted / plain);
    }
    let plain = median(figures[0].iter().map(|f| f.cpu_us_per_event).collect());
    let workers = median(figures[1].iter().map(|f| f.script_cpu_us_per_event).collect());
    let rest = median(figures[1].iter().map(|f| f.cpu_us_per_event - f.script_cpu_us_per_event).collect());
    println!(
        "  scripted CPU per event: script workers {workers:.3} µs, the rest {rest:.3} µs (ratio to plain {:.2})",
        rest / plain
    );
    if settings.fan == 1 {
        let floor = rhai_floor_us_per_request(&settings)?;
        println!(
            "  Rhai alone, the session function with an `s.chat` that does nothing, in this process: {floor:.2} µs a request ({:.3} µs/event)",
            floor / settings.tokens as f64
        );
    }
    std::fs::remove_dir_all(&work)?;
    runtime.block_on(mock.shutdown());
    Ok(())
}

fn settings() -> Result<Settings> {
    let binary = std::env::current_exe()?.parent().and_then(Path::parent).map(|dir| dir.join("aiperf"));
    let mut settings = Settings {
        runs: 5,
        users: 64,
        requests: 5000,
        tokens: 64,
        steps: 1,
        fan: 1,
        ttft_ms: 0.0,
        itl_ms: 0.0,
        binary: binary.unwrap_or_default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || -> Result<f64> { Ok(args.next().context("a number after the flag")?.parse()?) };
        match arg.as_str() {
            "--runs" => settings.runs = number()? as usize,
            "--users" => settings.users = number()? as u64,
            "--requests" => settings.requests = number()? as u64,
            "--tokens" => settings.tokens = number()? as u64,
            "--steps" => settings.steps = (number()? as u64).max(1),
            "--fan" => settings.fan = (number()? as u64).max(1),
            "--ttft-ms" => settings.ttft_ms = number()?,
            "--itl-ms" => settings.itl_ms = number()?,
            flag if flag.starts_with("--") => bail!("unknown flag {flag}"),
            _ => settings.binary = PathBuf::from(arg),
        }
    }
    if settings.fan > 1 && settings.steps > 1 {
        bail!("--fan and --steps together: the plain phase has no such shape to compare with");
    }
    if !settings.binary.exists() {
        bail!("no aiperf binary at {} (build it, or name it)", settings.binary.display());
    }
    Ok(settings)
}

/// The prompt each request sends, a constant of both scenarios.
const PROMPT: &str =
    r#"const PROMPT = "Tell me about the sea, the wind and the long ships that sail between the islands.";"#;

/// The scripted phase's session function: `steps` chat steps of `tokens`, or `fan` sub-agents
/// at once of a step each.
fn session_function(settings: &Settings) -> String {
    let Settings { tokens, steps, fan, .. } = settings;
    if *fan > 1 {
        let sub_agent = format!("|a| a.chat(#{{ user: PROMPT, max_tokens: {tokens} }})");
        return format!("|s| {{ s.parallel([{}]); }}", vec![sub_agent; *fan as usize].join(", "));
    }
    let step = format!("s.chat(#{{ user: PROMPT, max_tokens: {tokens} }});");
    let body = if *steps > 1 { format!("for step in 0..{steps} {{ {step} }}") } else { step };
    format!("|s| {{ {body} }}")
}

/// The plain or the scripted scenario: the same requests, the same users.
fn scenario_text(mode: &str, url: &str, settings: &Settings) -> String {
    let Settings { users, requests, tokens, steps, fan, .. } = settings;
    let phase = match mode {
        "plain" => format!("concurrency(#{{ users: {}, requests: {requests} }})", users * fan),
        _ => format!("users(#{{ users: {users}, requests: {requests}, session: {} }})", session_function(settings)),
    };
    let turns = if *steps > 1 { format!(", turns: {steps}") } else { String::new() };
    format!(
        r#"{PROMPT}
run(#{{
    name: "{mode}",
    endpoint: endpoint(#{{ url: "{url}", model: "m", kind: "chat", streaming: true }}),
    dataset: synthetic(#{{ isl: 20, osl: {tokens}, seed: 1{turns} }}),
    preflight: false,
    server_metrics: #{{ enabled: false }},
    gpu_telemetry: #{{ enabled: false }},
    export_level: "summary",
    phases: [{phase}],
}});
"#
    )
}

/// The floor of the script workers' CPU a request: Rhai calling the session function, as a
/// worker calls it, under the sandbox's limits, with an `s.chat` that only takes its map and
/// returns an answer. Measured on one thread with nothing else running, so its caches are warm.
fn rhai_floor_us_per_request(settings: &Settings) -> Result<f64> {
    #[derive(Clone)]
    struct Session;
    #[derive(Clone)]
    struct Answer;
    let mut engine = rhai::Engine::new();
    aiperf::script::apply_sandbox_limits(&mut engine, aiperf::script::DEFAULT_MAX_OPERATIONS);
    engine.register_type_with_name::<Session>("Session").register_type_with_name::<Answer>("Answer");
    engine.register_fn("chat", |_: &mut Session, _step: rhai::Map| rhai::Dynamic::from(Answer));
    let script = format!("{PROMPT}\n{}", session_function(settings));
    let ast = engine.compile(&script)?;
    let function: rhai::FnPtr = engine.eval_ast(&ast)?;
    let sessions = settings.requests / settings.steps;
    let started = std::time::Instant::now();
    for _ in 0..sessions {
        let _answer: rhai::Dynamic = function.call(&engine, &ast, (Session,))?;
    }
    Ok(started.elapsed().as_secs_f64() * 1e6 / (sessions * settings.steps) as f64)
}

/// Run the binary on `scenario` and read its figures.
fn one_run(settings: &Settings, scenario: &Path, artifacts: &Path) -> Result<Figures> {
    let before = children_cpu_s();
    let status = Command::new(&settings.binary)
        .args(["run", "--no-progress", "--artifact-dir"])
        .arg(artifacts)
        .arg(scenario)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()?;
    if !status.success() {
        bail!("{} failed: {status}", scenario.display());
    }
    let cpu_s = children_cpu_s() - before;
    let name = scenario.file_stem().context("scenario name")?.to_string_lossy().to_string();
    let summary: Value =
        serde_json::from_slice(&std::fs::read(artifacts.join(&name).join("profile_export_aiperf.json"))?)?;
    let stat = |metric: &str, stat: &str| summary[metric][stat].as_f64().unwrap_or(f64::NAN);
    let check = |key: &str| summary["client_self_check"][0][key].as_f64().unwrap_or(f64::NAN);
    let events = (settings.requests * settings.tokens) as f64;
    // The self-check's wall time, over which its CPU shares are taken.
    let wall_s = settings.requests as f64 / check("achieved_rate_rps");
    let figures = Figures {
        cpu_us_per_event: cpu_s * 1e6 / events,
        ttft_p50_ms: stat("time_to_first_token", "p50"),
        ttft_p99_ms: stat("time_to_first_token", "p99"),
        dispatch_p99_ms: check("dispatch_delay_p99_ms"),
        script_busy_percent: check("script_workers_busy_percent"),
        script_cpu_us_per_event: check("script_workers_cpu_percent") / 100.0 * wall_s * 1e6 / events,
        resume_p99_ms: check("script_resume_delay_p99_ms"),
    };
    std::fs::remove_dir_all(artifacts)?;
    Ok(figures)
}

/// User + system CPU seconds of the children waited for so far.
fn children_cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
