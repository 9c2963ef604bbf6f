//! `aiperf check`'s trial of a scenario's session functions: one session of each scripted
//! phase's function played against the built-in mock (every endpoint it calls is the mock, its
//! client-side waits take no time, nothing goes to the run's endpoints), so that an error in a
//! function shows before a run, with its `file:line`. A failed trial is a warning, not a failed
//! check: the mock's answers are not the model's.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use super::sessions::{SessionFunctions, function_of};
use crate::engine::{self, Progress, RunOptions};
use crate::plan::{
    Dataset, Dist, Endpoint, ExportLevel, LoadMode, MOCK_URL, MockConfig, Phase, PhaseKind, Plan, SyntheticDataset,
};
use crate::result::RunResult;
use crate::ui;

/// A trial session sends at most this many requests, and stops sending after this long.
const TRIAL_REQUESTS: u64 = 64;
const TRIAL_SECONDS: f64 = 10.0;

/// The session functions tried so far in a check (each once).
#[derive(Default)]
pub struct SessionTrials(Mutex<Tried>);

#[derive(Default)]
struct Tried {
    /// Their names.
    functions: Vec<String>,
    /// How many of them failed.
    failed: usize,
    /// The step tags each function's trial session sent, by its name.
    step_tags: BTreeMap<String, Vec<String>>,
}

impl SessionTrials {
    /// How many functions were tried, and how many of them failed.
    pub fn counts(&self) -> (usize, usize) {
        let tried = self.lock();
        (tried.functions.len(), tried.failed)
    }

    /// The step tags the trial session of `function` sent (none before its trial).
    pub fn step_tags(&self, function: &str) -> Vec<String> {
        self.lock().step_tags.get(function).cloned().unwrap_or_default()
    }

    /// Play one session of each scripted phase of `plan` whose function was not tried yet (on
    /// `runtime`, with the scenario's `options`), and with `say`, say how it went: a line each,
    /// a warning where it failed (a dry run, which prints plans only, plays them for their step
    /// tags alone).
    pub fn try_functions(
        &self,
        plan: &Plan,
        functions: &SessionFunctions,
        runtime: &tokio::runtime::Handle,
        options: &RunOptions,
        say: bool,
    ) {
        for phase in &plan.phases {
            let LoadMode::Scripted { session, seed, .. } = &phase.mode else { continue };
            if !self.first_time(session) {
                continue;
            }
            let mode = LoadMode::Scripted {
                users: 1,
                session: session.clone(),
                seed: *seed,
                workers: None,
                session_rate: None,
            };
            let trial = trial_plan(plan, &phase.name, mode);
            let folder = std::env::temp_dir().join(format!("aiperf-check-{}-{}", std::process::id(), self.counts().0));
            let options = RunOptions {
                artifact_root: folder.clone(),
                progress: Progress::Silent,
                metrics_listen: None,
                segment: None,
                start_at_ns: None,
                record_sinks: None,
                cancel: options.cancel.child(),
                ..options.clone()
            };
            let played = runtime.block_on(engine::execute_with_sessions(&trial, &options, functions.trial_player()));
            let _ = std::fs::remove_dir_all(&folder);
            if let Some(sessions) =
                played.as_ref().ok().and_then(|result| result.phases.first()?.scripted_sessions.as_deref())
            {
                self.lock().step_tags.insert(session.clone(), sessions.steps.keys().cloned().collect());
            }
            if !say {
                continue;
            }
            let what = format!("run `{}`, phase `{}`", plan.name, phase.name);
            match played.map_err(|error| format!("{error:#}")).and_then(|result| outcome(&result)) {
                Ok(line) => {
                    ui::stdout::print_line(&format!("{what}: one session played against the built-in mock: {line}"))
                }
                Err(error) => {
                    self.lock().failed += 1;
                    eprintln!(
                        "warning: {what}: a session played against the built-in mock failed: {error}\n  \
                         (the mock's answers are not the model's: a function that needs the model's own may fail only here)"
                    );
                }
            }
        }
    }

    /// Whether the function `session` names is tried now (false: it was already, by this name
    /// or as another of its closures).
    fn first_time(&self, session: &str) -> bool {
        let function = function_of(session);
        let mut tried = self.lock();
        let first = !tried.functions.iter().any(|known| known == function);
        if first {
            tried.functions.push(function.to_string());
        }
        first
    }

    fn lock(&self) -> MutexGuard<'_, Tried> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `plan` cut down to one session of its phase `name` (one user, `mode`) against the built-in
/// mock answering at once: the builtin tokenizer, a one-prompt dataset (sessions make their own
/// prompts), no collectors, outputs or thresholds.
fn trial_plan(plan: &Plan, name: &str, mode: LoadMode) -> Plan {
    let phase = Phase {
        name: name.to_string(),
        kind: PhaseKind::Profiling,
        mode,
        requests: Some(TRIAL_REQUESTS),
        sessions: Some(1),
        duration_s: Some(TRIAL_SECONDS),
        grace_period_s: TRIAL_SECONDS,
        results: true,
        cancel: None,
    };
    let dataset = Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(8.0), Dist::fixed(8.0), 0, 1));
    let mut trial = Plan::new(
        format!("{}-trial", plan.name),
        trial_endpoint(&plan.endpoint),
        dataset,
        vec![phase],
        plan.request_timeout_s,
    );
    trial.allow_all_failed = true;
    trial.export.level = ExportLevel::Summary;
    trial.server_metrics.enabled = false;
    trial.gpu_telemetry.enabled = false;
    trial
}

/// `endpoint` served by the built-in mock, answering at once.
fn trial_endpoint(endpoint: &Endpoint) -> Endpoint {
    let mock = match (&endpoint.mock, endpoint.is_mock()) {
        (Some(mock), true) => mock.clone(),
        _ => MockConfig::default(),
    };
    Endpoint {
        url: MOCK_URL.to_string(),
        more_urls: Vec::new(),
        api_key: mock.api_key.clone(),
        mock: Some(MockConfig { ttft_ms: 0.0, itl_ms: 0.0, prefill_ms_per_token: 0.0, ..mock }),
        transport: Default::default(),
        ..endpoint.clone()
    }
}

/// What the trial session did, or the error that ended it.
fn outcome(result: &RunResult) -> Result<String, String> {
    let Some(sessions) = result.phases.first().and_then(|phase| phase.scripted_sessions.as_deref()) else {
        return Err("it played no session".into());
    };
    if let Some(error) = sessions.errors.first() {
        return Err(error.message.clone());
    }
    let (sent, errors) = result.phases.first().map_or((0, 0), |phase| (phase.sent, phase.errors));
    // Requests the mock refused (a path or a body it does not serve), the commonest error named.
    let refused = match result.error_summary.first() {
        Some(first) if errors > 0 => {
            format!(" ({errors} failed, first: {})", ui::failures::error_text(&first.error_details))
        }
        _ => String::new(),
    };
    let ended = if sessions.completed > 0 {
        "returned".to_string()
    } else {
        format!("still going when the trial stopped it ({TRIAL_REQUESTS} requests or {TRIAL_SECONDS} s)")
    };
    let tools = match sessions.tool_calls {
        0 => String::new(),
        calls => format!(", {calls} tool calls"),
    };
    let plural = if sent == 1 { "" } else { "s" };
    Ok(format!("{sent} request{plural}{refused}{tools}, {ended}"))
}
