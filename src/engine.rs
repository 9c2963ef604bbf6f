//! The engine: executes one Plan end to end (mock, tokenizer, dataset, client, phases,
//! metrics thread, exports) and returns its `RunResult`.

mod artifacts;
mod metrics_thread;
mod validate;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::builtin_server::BuiltInServer;
use crate::cancel::CancelSignal;
use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::collectors::{self, RunCollectors};
use crate::control::failed_requests::{FailedRequestWatch, FailedRequestsExceeded};
use crate::control::server_requests::ServerControlRequests;
use crate::dataset::{self, chat_template::ChatTemplate, tokenizer::Tokenizer};
use crate::export::segment_files::SegmentRecordsWriter;
use crate::export::segment_histograms::SegmentHistogramsWriter;
use crate::live::{LiveMetrics, LiveServer, RunFacts};
use crate::load::in_flight_starts::{InFlightStarts, WatermarkFeed};
use crate::load::scripted::SessionHook;
use crate::load::{self, LoadContext, PhaseCounters, PhaseRun};
use crate::metrics::record_sink::RecordSink;
use crate::outputs::otel::OtelPusher;
use crate::plan::segment::{self, ExecutionSegment};
use crate::plan::{ExportLevel, LoadMode, Phase, Plan, TokenizerSpec};
use crate::result::RunResult;
use crate::rng::SeededRng;
use crate::start_at;
use crate::ui::progress::PhaseProgress;
pub use crate::ui::progress::Progress;
pub(crate) use artifacts::write_console;
use artifacts::{SegmentShare, create_artifact_dir, write_artifacts, write_inputs, write_segment_info};
use metrics_thread::{IncomingRecords, MetricsThread};
pub(crate) use metrics_thread::{metrics_context, record_processor};
pub use validate::validate;

/// How a plan is run (not part of the plan itself).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Each run writes into `<artifact_root>/<plan name>/`.
    pub artifact_root: PathBuf,
    /// The command line, for run_info (secrets removed).
    pub cli_command: Option<String>,
    /// How each phase shows on stderr.
    pub progress: Progress,
    /// Raised by a stop signal (Ctrl-C, SIGTERM, SIGHUP): stop sending, cancel in-flight
    /// requests, still write artifacts.
    pub cancel: CancelSignal,
    /// Started for a plan whose url is "mock"; such a plan fails to start without one.
    pub builtin_server: Option<Arc<dyn BuiltInServer>>,
    /// Serve each run's live metrics on this address (`--metrics-listen`), over the plan's
    /// own `metrics_listen`.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Run only this execution segment's share of each plan (`--segment I/N`), into
    /// `<run folder>/segment-I-of-N/`, with the files `aiperf merge` reads.
    pub segment: Option<ExecutionSegment>,
    /// Begin the first phase at this wall-clock time, epoch ns (`--start-at`).
    pub start_at_ns: Option<u64>,
    /// Keep idle cores awake while open-loop phases pace (`--keep-cores-awake`).
    pub keep_cores_awake: bool,
    /// Asked for each run's own extra record sinks (the report's live records).
    pub record_sinks: Option<Arc<dyn crate::metrics::record_sink::RunRecordSinks>>,
}

/// Run `plan` (this process's segment of it, with `options.segment`) and write its artifacts;
/// the result is returned even when the run was cancelled.
pub async fn execute(whole_plan: &Plan, options: &RunOptions) -> Result<RunResult> {
    execute_with_sessions(whole_plan, options, None).await
}

/// `execute`, with the player of the plan's scripted phases (`agents/scripted/`).
pub async fn execute_with_sessions(
    whole_plan: &Plan,
    options: &RunOptions,
    sessions: Option<Arc<dyn crate::load::scripted::SessionPlayer>>,
) -> Result<RunResult> {
    if sessions.is_none() && whole_plan.phases.iter().any(|phase| matches!(phase.mode, LoadMode::Scripted { .. })) {
        bail!("run `{}` has scripted sessions, which only a scenario's `run(..)` can play", whole_plan.name);
    }
    let plan = plan_of_this_process(whole_plan, options.segment)?;
    let plan = &*plan;
    // The run's own stop signal: raised by the scenario's, or by the failed-request watch.
    let options = &RunOptions { cancel: options.cancel.child(), ..options.clone() };
    let (tokenizer, chat_template, prepared) = prepare_while_checking_endpoint(plan, options).await?;
    for phase in &plan.phases {
        match &phase.mode {
            LoadMode::AgenticReplay(replay) => crate::agents::replay::check(&prepared.requests, replay, phase)
                .map_err(|e| anyhow::anyhow!("phase `{}`: {e}", phase.name))?,
            _ => crate::load::check_tree_phase(phase, &prepared.requests, options.segment.is_some())
                .map_err(|e| anyhow::anyhow!("phase `{}`: {e}", phase.name))?,
        }
    }
    let start_time = chrono::Utc::now();
    let artifact_dir = create_artifact_dir(plan, options)?;
    let _run_log = crate::outputs::run_log::RunLog::open_for(plan, &options.artifact_root, &artifact_dir)?;
    crate::outputs::user_files::write(plan, &artifact_dir)?;
    let (prepared, share) = SegmentShare::of(prepared, options.segment);
    let segment_records = options.segment.map(|_| SegmentRecordsWriter::create(&artifact_dir)).transpose()?;
    write_inputs(&prepared.requests, &artifact_dir)?;
    let benchmark_id = benchmark_id();
    let servers = RunServers::start(plan, options, &benchmark_id).await?;
    let endpoint = servers.endpoint_of(plan);
    let clock = RunClock::start();
    let control = ServerControlRequests::of(plan, &endpoint, options.segment, clock)?;
    reset_kv_cache(&control, options).await?;
    let client = connect(plan, &endpoint, clock)?
        .serving_itself(servers.builtin.is_some())
        .keep_sent_body(chat_template.is_some());
    let (sink, records) = std::sync::mpsc::channel();
    let in_flight_starts = Arc::new(InFlightStarts::default());
    let records = IncomingRecords { records, watermark: WatermarkFeed::new(in_flight_starts.clone()) };
    let prefix_blocks = prepared.theoretical_prefix_blocks();
    let sent_bodies = chat_template.is_some();
    let metrics_context =
        metrics_context(plan, &endpoint, tokenizer.clone(), clock, prepared.images, prefix_blocks, chat_template);
    let (failed_request_watch, failed_requests_verdict) = FailedRequestWatch::of(plan, &options.cancel).unzip();
    let mut sinks = segment_sinks(plan, segment_records, &artifact_dir, clock);
    sinks.extend(failed_request_watch.map(|watch| Box::new(watch) as Box<dyn RecordSink>));
    sinks.extend(options.record_sinks.as_ref().and_then(|wanted| wanted.sink_for(&artifact_dir, clock)));
    let grading = crate::accuracy::Grading::of(plan, &artifact_dir, clock, &share.whole_index)?;
    let metrics = MetricsThread::start(
        plan,
        metrics_context,
        &artifact_dir,
        records,
        servers.live_metrics(),
        sinks,
        grading.clone(),
    )?;
    let entry_limit = plan.dataset.stops_at_end().then(|| EntryLimit::of(&prepared.requests));
    let hook = sessions.map(|player| {
        Arc::new(SessionHook {
            player,
            endpoint: endpoint.clone(),
            request_timeout: Duration::from_secs_f64(plan.request_timeout_s),
            http_trace: plan.export.http_trace,
            raw: plan.export.level == ExportLevel::Raw,
            sent_bodies,
            serving_itself: servers.builtin.is_some(),
            builtin_server: options.builtin_server.clone(),
        })
    });
    let run_wide = (options, tokenizer.clone());
    let context = load_context(plan, client, prepared.requests, clock, (sink, in_flight_starts), run_wide, hook);
    let started_ns = wait_for_start_time(options).await;
    let live = servers.live_metrics();
    let target = Target { url: &endpoint.url, control: &control };
    let mut measured = measure(plan, options, &target, context, entry_limit, metrics, live.as_deref()).await?;
    servers.stop().await;
    let telemetry = measured.gathered.telemetry.take();
    measured.accuracy = grading.map(|grading| grading.summary());
    let result = run_result(plan, options, start_time, benchmark_id, &tokenizer, &artifact_dir, measured);
    if let Some(segment) = options.segment {
        write_segment_info(whole_plan, options, segment, clock, started_ns, share, &result)?;
    }
    write_artifacts(&result, telemetry.as_ref(), &artifact_dir, options.progress)?;
    if let (Some(upload), None) = (&plan.outputs.mlflow, options.segment) {
        crate::outputs::mlflow::upload_or_warn(&result, upload).await;
    }
    if let Some(exceeded) = failed_requests_verdict.as_ref().and_then(|verdict| verdict.get()) {
        return Err(FailedRequestsExceeded { artifact_dir: Some(artifact_dir), ..exceeded.clone() }.into());
    }
    Ok(result)
}

/// The KV-cache reset the plan asks for, before anything is sent; a stop signal ends the wait.
async fn reset_kv_cache(control: &ServerControlRequests, options: &RunOptions) -> Result<()> {
    tokio::select! {
        reset = control.reset_kv_cache() => Ok(reset?),
        () = options.cancel.cancelled() => bail!("stopped during the KV-cache reset; nothing was sent"),
    }
}

/// The server the phases load: its url (for the collectors) and the control requests around them.
struct Target<'a> {
    url: &'a str,
    control: &'a ServerControlRequests,
}

/// The plan this process runs: the whole plan, or its execution segment's share (the whole
/// plan checked first), checked.
fn plan_of_this_process(whole_plan: &Plan, segment: Option<ExecutionSegment>) -> Result<Cow<'_, Plan>> {
    let plan = match segment {
        Some(segment) => {
            validate(whole_plan)?;
            Cow::Owned(segment::apply(whole_plan, segment).map_err(anyhow::Error::msg)?)
        }
        None => Cow::Borrowed(whole_plan),
    };
    validate(&plan)?;
    Ok(plan)
}

/// The tokenizer and every request, built (and a bad dataset file reported) before anything is
/// sent, while the endpoint is checked; the first of them to fail, or a stop signal, stops the
/// run.
async fn prepare_while_checking_endpoint(
    plan: &Plan,
    options: &RunOptions,
) -> Result<(Arc<Tokenizer>, Option<Arc<ChatTemplate>>, dataset::requests::Prepared)> {
    let build = async {
        let tokenizer = load_tokenizer(&plan.tokenizer).await?;
        let chat_template = ChatTemplate::for_run(plan.apply_chat_template, &tokenizer)?.map(Arc::new);
        let prepared = prepare_requests(plan, &plan.endpoint, tokenizer.clone(), chat_template.clone()).await?;
        Ok((tokenizer, chat_template, prepared))
    };
    let preflight = crate::preflight::check(&plan.endpoint, &plan.preflight, &options.cancel);
    // A stop signal does not wait for a large dataset: what was being built is dropped (its
    // blocking work ends with the process).
    tokio::select! {
        joined = async { tokio::try_join!(preflight, build) } => Ok(joined?.1),
        () = options.cancel.cancelled() => bail!("stopped while the requests were being prepared; nothing was sent"),
    }
}

/// The servers a run starts beside its phases: the live metrics' and the built-in one.
struct RunServers {
    live: LiveTaps,
    builtin: Option<Box<dyn crate::builtin_server::RunningServer>>,
}

impl RunServers {
    async fn start(plan: &Plan, options: &RunOptions, benchmark_id: &str) -> Result<Self> {
        let live = start_live_metrics(plan, options, benchmark_id).await?;
        let builtin = start_builtin_server(plan, options).await?;
        Ok(Self { live, builtin })
    }

    /// The plan's endpoint, at the built-in server's url when it runs one.
    fn endpoint_of(&self, plan: &Plan) -> crate::plan::Endpoint {
        let mut endpoint = plan.endpoint.clone();
        if let Some(server) = &self.builtin {
            endpoint.url = server.base_url();
        }
        endpoint
    }

    fn live_metrics(&self) -> Option<Arc<LiveMetrics>> {
        self.live.metrics.clone()
    }

    async fn stop(self) {
        if let Some(pusher) = self.live.otel {
            pusher.stop().await;
        }
        if let Some(server) = self.live.server {
            server.stop();
        }
        if let Some(server) = self.builtin {
            server.shutdown().await;
        }
    }
}

/// A segment's record sinks: its records and its histograms, for `aiperf merge`.
fn segment_sinks(
    plan: &Plan,
    segment_records: Option<SegmentRecordsWriter>,
    artifact_dir: &std::path::Path,
    clock: RunClock,
) -> Vec<Box<dyn RecordSink>> {
    let mut segment_sinks: Vec<Box<dyn RecordSink>> = Vec::new();
    if let Some(writer) = segment_records {
        segment_sinks.push(Box::new(writer));
        segment_sinks.push(Box::new(SegmentHistogramsWriter::new(artifact_dir, clock, !plan.slos.is_empty())));
    }
    segment_sinks
}

/// What every phase's requests share: the client, the prepared requests, the record channel.
fn load_context(
    plan: &Plan,
    client: HttpClient,
    requests: Vec<dataset::requests::PreparedRequest>,
    clock: RunClock,
    (sink, in_flight_starts): (std::sync::mpsc::Sender<crate::record::RequestRecord>, Arc<InFlightStarts>),
    (options, tokenizer): (&RunOptions, Arc<Tokenizer>),
    sessions: Option<Arc<SessionHook>>,
) -> Arc<LoadContext> {
    Arc::new(LoadContext {
        client,
        order: crate::load::dataset_order::DatasetOrder::of(plan, &requests),
        requests,
        clock,
        sink,
        in_flight_starts,
        cancel: options.cancel.clone(),
        id_seed: clock.epoch_ns(0) ^ options.segment.map_or(0, |s| u64::from(s.index) << 48),
        tokenizer,
        segment: options.segment,
        keep_cores_awake: options.keep_cores_awake,
        sessions,
        replay_handoff: Default::default(),
        trace_idle_gap_cap_ms: match &plan.dataset {
            crate::plan::Dataset::File(file) => file.trace.idle_gap_cap_s.map(|cap_s| cap_s * 1000.0),
            crate::plan::Dataset::Synthetic(_) => None,
        },
    })
}

/// Wait for `--start-at` (warning when it passed before the run was ready); the wall-clock
/// epoch ns the phases start at.
async fn wait_for_start_time(options: &RunOptions) -> u64 {
    if let Some(at_ns) = options.start_at_ns {
        let late_ns = start_at::now_ns().saturating_sub(at_ns);
        if late_ns > 0 {
            tracing::warn!(
                "the start time (--start-at) passed {:.1} ms before the run was ready",
                late_ns as f64 / 1e6
            );
        }
        start_at::wait_until(at_ns, &options.cancel).await;
    }
    start_at::now_ns()
}

/// What the phases measured: their summaries, the metrics, what the collectors gathered.
struct Measured {
    phases: Vec<crate::result::PhaseSummary>,
    processed: crate::metrics::ProcessedMetrics,
    gathered: collectors::Gathered,
    /// An accuracy run's graded answers, once every record is in.
    accuracy: Option<crate::accuracy::AccuracySummary>,
}

/// Run the phases, then the metrics once every record is in.
async fn measure(
    plan: &Plan,
    options: &RunOptions,
    target: &Target<'_>,
    context: Arc<LoadContext>,
    entry_limit: Option<EntryLimit>,
    metrics: MetricsThread,
    live: Option<&LiveMetrics>,
) -> Result<Measured> {
    let (phases, gathered) =
        run_phases(plan, options, target, context, entry_limit, &metrics.profiling_start_ns, live).await?;
    let processed = metrics.join(gathered.network_rtt.clone()).await?;
    Ok(Measured { phases, processed, gathered, accuracy: None })
}

/// A new run's id: 12 hex digits drawn from the time it starts.
fn benchmark_id() -> String {
    format!("{:012x}", SeededRng::new(crate::start_at::now_ns()).next_u64() & 0xffff_ffff_ffff)
}

/// The run's result: what it was, when, and what it measured.
fn run_result(
    plan: &Plan,
    options: &RunOptions,
    start_time: chrono::DateTime<chrono::Utc>,
    benchmark_id: String,
    tokenizer: &Tokenizer,
    artifact_dir: &std::path::Path,
    measured: Measured,
) -> RunResult {
    let Measured { phases, processed, gathered, accuracy } = measured;
    let crate::metrics::ProcessedMetrics {
        mut metrics,
        error_summary,
        by_url,
        timeslices,
        spec_decode_histogram,
        token_check_causes,
        warmup_metrics,
        by_phase,
    } = processed;
    metrics.extend(accuracy.iter().flat_map(crate::accuracy::AccuracySummary::metrics));
    if let Some(fleet) = &gathered.gpu_energy {
        crate::telemetry::energy::add_efficiency_metrics(&mut metrics, fleet, crate::telemetry::energy::users_of(plan));
    }
    RunResult {
        name: plan.name.clone(),
        benchmark_id,
        start_time: start_time.format("%Y-%m-%dT%H:%M:%S%.6f").to_string(),
        end_time: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6f").to_string(),
        was_cancelled: options.cancel.is_cancelled(),
        plan: plan.clone(),
        tokenizer: tokenizer.name().to_string(),
        thresholds: crate::thresholds::evaluate(
            &plan.thresholds,
            &metrics,
            &crate::thresholds::sessions::of_results(&phases).into_iter().collect::<Vec<_>>(),
        ),
        metrics,
        warmup_metrics,
        by_phase,
        error_summary,
        by_url,
        phases,
        artifact_dir: artifact_dir.to_path_buf(),
        cli_command: options.cli_command.clone(),
        random_seed: Some(plan.dataset.random_seed()),
        server_metrics: gathered.server_metrics,
        telemetry_data: gathered.telemetry_data,
        timeslices,
        spec_decode_histogram,
        token_check_causes,
        accuracy,
    }
}

/// The live metrics, kept when the command line or the plan names an address to serve them
/// on (with AIPerf's API routes), or an OpenTelemetry collector to push them to; their server
/// and their pusher.
async fn start_live_metrics(plan: &Plan, options: &RunOptions, benchmark_id: &str) -> Result<LiveTaps> {
    let address = options
        .metrics_listen
        .or(plan.metrics_listen)
        .map(|address| crate::live::segment_address(address, options.segment))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if address.is_none() && plan.outputs.otel.is_none() {
        return Ok(LiveTaps::default());
    }
    let metrics = Arc::new(LiveMetrics::new(&plan.name, plan.phases.iter().map(|phase| phase.name.clone())));
    let server = match address {
        Some(address) => {
            let facts = RunFacts::of_plan(plan, benchmark_id, options.cli_command.as_deref());
            let server = LiveServer::start(address, metrics.clone(), facts).await?;
            eprintln!("live metrics: http://{}/metrics (AIPerf's API: /api/progress, /api/metrics)", server.address());
            Some(server)
        }
        None => None,
    };
    let otel = plan.outputs.otel.as_ref().map(|push| OtelPusher::start(plan, push, metrics.clone())).transpose()?;
    Ok(LiveTaps { metrics: Some(metrics), server, otel })
}

/// The live metrics of a run and what reads them while it runs.
#[derive(Default)]
struct LiveTaps {
    metrics: Option<Arc<LiveMetrics>>,
    server: Option<LiveServer>,
    otel: Option<OtelPusher>,
}

/// The built-in server when the url is `"mock"`, started by the caller's starter.
async fn start_builtin_server(
    plan: &Plan,
    options: &RunOptions,
) -> Result<Option<Box<dyn crate::builtin_server::RunningServer>>> {
    if !plan.endpoint.is_mock() {
        return Ok(None);
    }
    let mut config = plan.endpoint.mock.clone().unwrap_or_default();
    crate::accuracy::answer_key::answer_the_plan(&mut config, plan);
    let starter = options
        .builtin_server
        .as_ref()
        .context("the url \"mock\" needs the built-in server, which this caller does not provide")?;
    Ok(Some(starter.start(config).await.context("cannot start the built-in mock server")?))
}

/// The run's HTTP client, its pool sized for the largest phase.
fn connect(plan: &Plan, endpoint: &crate::plan::Endpoint, clock: RunClock) -> Result<HttpClient> {
    let pool_size = plan.phases.iter().map(load::connection_pool_size).max().unwrap_or(1);
    Ok(HttpClient::new(endpoint, clock, Duration::from_secs_f64(plan.request_timeout_s), pool_size)
        .with_context(|| format!("endpoint {}", plan.endpoint.url))?
        .keep_trace_details(plan.export.http_trace)
        .keep_raw(plan.export.level == ExportLevel::Raw))
}

/// Every phase in order (until a stop), with the collectors told each one's start and end;
/// they stop after the last phase that feeds the results, so a cool-down's load never reaches
/// the server metrics. The server's profiler (when asked for) runs during each results phase.
async fn run_phases(
    plan: &Plan,
    options: &RunOptions,
    target: &Target<'_>,
    context: Arc<LoadContext>,
    entry_limit: Option<EntryLimit>,
    profiling_start_ns: &std::sync::OnceLock<u64>,
    live: Option<&LiveMetrics>,
) -> Result<(Vec<crate::result::PhaseSummary>, collectors::Gathered)> {
    let clock = context.clock;
    let mut collectors = Some(RunCollectors::start(plan, target.url, clock).await?);
    let mut gathered = None;
    let last_results_phase = plan.phases.iter().rposition(|phase| phase.results);
    let mut phases = Vec::with_capacity(plan.phases.len());
    let mut dataset_drawn = 0;
    for (index, phase) in plan.phases.iter().enumerate() {
        if options.cancel.is_cancelled() {
            break;
        }
        if phase.results {
            target.control.start_profiler().await?;
        }
        if let Some(collectors) = collectors.as_mut() {
            collectors.phase_started(phase.results).await;
        }
        if phase.results {
            profiling_start_ns.get_or_init(|| clock.now_ns());
        }
        let counters = Arc::new(PhaseCounters::default());
        if let Some(live) = live {
            live.phase_started(index, counters.clone());
        }
        let phase = capped(phase, entry_limit);
        let progress = PhaseProgress::start(&phase, counters.clone(), options.progress);
        let name = Arc::from(phase.name.as_str());
        let cancel_draws = phase.cancel.as_ref().map(load::cancel_draws::CancelDraws::new);
        let run = Arc::new(PhaseRun {
            phase: phase.clone(),
            index,
            name,
            counters,
            dataset_offset: dataset_drawn,
            cancel_draws,
        });
        let summary = load::run_phase(context.clone(), run.clone()).await;
        if phase.kind == crate::plan::PhaseKind::Warmup {
            dataset_drawn += load::dataset_drawn(&context, &run);
        }
        if phase.results {
            target.control.stop_profiler().await;
        }
        progress.finish(&summary);
        if let Some(running) = collectors.as_mut() {
            running.phase_ended(index, &summary).await;
        }
        phases.push(summary);
        if let Some(why) = run.counters.run_aborted.get() {
            bail!("{why}");
        }
        if Some(index) == last_results_phase
            && let Some(running) = collectors.take()
        {
            gathered = Some(running.finish(plan.server_metrics.slice_duration_s).await);
        }
    }
    drop(context);
    if let Some(running) = collectors.take() {
        gathered = Some(running.finish(plan.server_metrics.slice_duration_s).await);
    }
    Ok((phases, gathered.unwrap_or_default()))
}

pub(crate) async fn load_tokenizer(spec: &TokenizerSpec) -> Result<Arc<Tokenizer>> {
    let spec = spec.clone();
    tokio::task::spawn_blocking(move || match &spec {
        TokenizerSpec::Model { id, .. } => Ok(Tokenizer::load(&spec).map(Arc::new).unwrap_or_else(|error| {
            tracing::warn!(
                "the model's tokenizer ({id}) cannot be had ({error:#}); tokens are counted, and synthetic \
                     prompts cut, with the built-in GPT-2 BPE instead (--tokenizer, or `tokenizer` in a scenario, \
                     names another)"
            );
            Tokenizer::shared_builtin()
        })),
        other => Tokenizer::load_shared(other),
    })
    .await
    .context("tokenizer loading was interrupted")?
}

/// Build the dataset and every request body before the first request is sent (synthetic
/// prompts shorter by what the chat template, when there is one, adds to them); none where no
/// phase reads the dataset.
async fn prepare_requests(
    plan: &Plan,
    endpoint: &crate::plan::Endpoint,
    tokenizer: Arc<Tokenizer>,
    chat_template: Option<Arc<ChatTemplate>>,
) -> Result<dataset::requests::Prepared> {
    if !plan.reads_dataset() {
        return Ok(dataset::requests::Prepared { requests: Vec::new(), images: Vec::new() });
    }
    let dataset = plan.dataset.clone();
    let endpoint = endpoint.clone();
    tokio::task::spawn_blocking(move || {
        let overhead = chat_template.map(|template| template.overhead(&tokenizer)).unwrap_or_default();
        let entries = dataset::build(&dataset, &tokenizer, overhead)?;
        dataset::requests::prepare(&dataset, &endpoint, &tokenizer, entries)
    })
    .await
    .context("dataset generation was interrupted")?
}

/// What a dataset that stops at its end (`at_end: "stop"`) lets a phase send: each entry once,
/// and a multi-turn file's sessions each once (so whole, unless the phase's limits cut them).
#[derive(Debug, Clone, Copy)]
struct EntryLimit {
    requests: u64,
    sessions: Option<u64>,
}

impl EntryLimit {
    fn of(requests: &[crate::dataset::requests::PreparedRequest]) -> Self {
        let sessions = load::file_session_count(requests);
        Self { requests: requests.len() as u64, sessions: (sessions > 0).then_some(sessions as u64) }
    }
}

/// `phase` within `limit` (a dataset that stops at its end), if it reads the dataset.
fn capped(phase: &Phase, limit: Option<EntryLimit>) -> Phase {
    let mut phase = phase.clone();
    let at_most = |own: Option<u64>, limit: u64| Some(own.map_or(limit, |own| own.min(limit)));
    if let Some(limit) = limit.filter(|_| phase.reads_dataset()) {
        phase.requests = at_most(phase.requests, limit.requests);
        if let Some(sessions) = limit.sessions {
            phase.sessions = at_most(phase.sessions, sessions);
        }
    }
    phase
}
