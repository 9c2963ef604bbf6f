//! The keys of `run(#{..})` that are about running rather than the plan: `trials`,
//! `cooldown` and `confidence` repeat a plan and aggregate it (`trial_runner.rs` runs them);
//! `sweep: #{..}` labels a run of a scripted loop with its variation.

use std::time::{Duration, Instant};

use rhai::{Dynamic, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use super::run_host::{RunHost, ScenarioSweep};
use crate::aggregate::convergence::{Convergence, ConvergenceMode};
use crate::plan::RunCoordinates;
use crate::plan::run_coordinates::label_of;

/// The `run(#{..})` keys this module reads.
pub const RUN_EXTRA_KEYS: &[&str] =
    &["trials", "cooldown", "confidence", "warmup_once", "vary_seed", "convergence", "sweep", "report"];
const SWEEP_LABEL_KEYS: &[&str] = &["variation", "label", "index", "id"];
/// AIPerf's default confidence level.
const DEFAULT_CONFIDENCE: f64 = 0.95;
/// How often a cool-down looks for Ctrl-C.
const COOLDOWN_POLL: Duration = Duration::from_millis(100);

/// How often a plan runs and how its trials are aggregated.
#[derive(Debug, Clone, PartialEq)]
pub struct Repetition {
    pub trials: u64,
    /// The pause between two trials, seconds.
    pub cooldown_s: f64,
    pub confidence: f64,
    /// Only the first trial runs the warmup phases (AIPerf's `disable_warmup_after_first`).
    pub warmup_once: bool,
    /// Each trial draws its workload from a seed of its own (AIPerf's `vary_seed_per_trial`):
    /// `Some(None)` derives it from the run's seed, `Some(Some(seed))` from `seed` (`vary_seed:
    /// 42`: AIPerf derives every variation's from its config's `random_seed`).
    pub vary_seed: Option<Option<u64>>,
    /// Skip the remaining trials once a metric has settled (AIPerf's `multi_run.convergence`).
    pub convergence: Option<Convergence>,
}

impl Repetition {
    /// `trials`, `cooldown`, `confidence`, `warmup_once` and `vary_seed` from `reader` (of
    /// `run` or `sweep`).
    pub fn read(reader: &mut MapReader, what: &str) -> ScriptResult<Self> {
        let trials = reader.opt_u64("trials")?.unwrap_or(1);
        if trials == 0 {
            return script_error(format!("{what}: `trials` must be at least 1"));
        }
        let cooldown_s = reader.opt_f64("cooldown")?.unwrap_or(0.0);
        if !(cooldown_s >= 0.0 && cooldown_s.is_finite()) {
            return script_error(format!("{what}: `cooldown` must be a duration ≥ 0, e.g. seconds(2)"));
        }
        let confidence = reader.opt_f64("confidence")?.unwrap_or(DEFAULT_CONFIDENCE);
        if !(confidence > 0.0 && confidence < 1.0) {
            return script_error(format!("{what}: `confidence` must be between 0 and 1, e.g. 0.95; got {confidence}"));
        }
        let warmup_once = reader.opt_bool("warmup_once")?.unwrap_or(false);
        let vary_seed = match reader.opt_value("vary_seed") {
            None => None,
            Some(flag) if flag.is_bool() => flag.as_bool().unwrap_or(false).then_some(None),
            Some(seed) => match seed.as_int().ok().and_then(|seed| u64::try_from(seed).ok()) {
                Some(seed) => Some(Some(seed)),
                None => {
                    return script_error(format!(
                        "{what}: `vary_seed` is true, false or the seed every trial's derives from, got `{seed}`"
                    ));
                }
            },
        };
        let convergence = match reader.opt_map("convergence")? {
            Some(map) => Some(convergence_of(map, trials, what)?),
            None => None,
        };
        Ok(Self { trials, cooldown_s, confidence, warmup_once, vary_seed, convergence })
    }
}

/// `convergence: #{ metric: "request_latency", stat?: "avg", mode?: "ci_width" | "cv" |
/// "distribution", threshold?, min_runs? }`.
fn convergence_of(map: Map, trials: u64, what: &str) -> ScriptResult<Convergence> {
    let mut reader = MapReader::new("convergence", map, &["metric", "stat", "mode", "threshold", "min_runs"])?;
    let defaults = Convergence::new(&reader.string("metric")?);
    let mode = match reader.opt_string("mode")? {
        Some(name) => {
            ConvergenceMode::parse(&name).or_else(|why| script_error(format!("{what}: convergence: {why}")))?
        }
        None => defaults.mode,
    };
    let convergence = Convergence {
        stat: reader.opt_string("stat")?.unwrap_or(defaults.stat.clone()),
        mode,
        threshold: reader.opt_f64("threshold")?,
        min_runs: reader.opt_u64("min_runs")?.unwrap_or(defaults.min_runs),
        ..defaults
    };
    match convergence.mistake(trials) {
        Some(mistake) => script_error(format!("{what}: {mistake}")),
        None => Ok(convergence),
    }
}

/// What `run(#{..})` takes besides the plan.
pub struct RunExtras {
    pub repetition: Repetition,
    pub coordinates: RunCoordinates,
    /// `report: true/false`: write the run's report.html (`None`: as `--report` says).
    pub report: Option<bool>,
}

impl RunExtras {
    /// Remove this module's keys from a `run` map and read them; a labelled run without a
    /// `name` is named after its variation.
    pub fn take(map: &mut Map, scenario: &ScenarioSweep) -> ScriptResult<Self> {
        let mut own = Map::new();
        for key in RUN_EXTRA_KEYS {
            if let Some(value) = map.remove(*key) {
                own.insert((*key).into(), value);
            }
        }
        let mut reader = MapReader::new("run", own, RUN_EXTRA_KEYS)?;
        let repetition = Repetition::read(&mut reader, "run")?;
        let report = reader.opt_bool("report")?;
        let coordinates = match reader.opt_map("sweep")? {
            Some(labels) => coordinates_of(labels, scenario)?,
            None => RunCoordinates::default(),
        };
        if let Some(label) = &coordinates.variation_label {
            name_unnamed_run(map, label);
        }
        Ok(Self { repetition, coordinates, report })
    }
}

/// Give a run map without a `name` the variation's label as its name.
pub fn name_unnamed_run(map: &mut Map, label: &str) {
    if !map.contains_key("name") {
        map.insert("name".into(), label.into());
    }
}

/// `sweep: #{ variation: #{ users: 8 }, label?, index?, id? }`.
fn coordinates_of(map: Map, scenario: &ScenarioSweep) -> ScriptResult<RunCoordinates> {
    let mut reader = MapReader::new("run sweep", map, SWEEP_LABEL_KEYS)?;
    let Some(variation) = reader.opt_map("variation")? else {
        return script_error("run sweep: `variation` is required, e.g. sweep: #{ variation: #{ users: 8 } }");
    };
    let values = json_map(variation, "run sweep: `variation`")?;
    let label = reader.opt_string("label")?.unwrap_or_else(|| label_of(&values));
    let index = match reader.opt_u64("index")? {
        Some(index) => index,
        None => scenario.next_index(),
    };
    let id = match reader.opt_string("id")? {
        Some(id) => id,
        None => scenario.id(),
    };
    Ok(RunCoordinates {
        sweep_id: Some(id),
        variation_label: Some(label),
        variation_index: index,
        variation_values: values,
        ..Default::default()
    })
}

/// A Rhai map of plain values as JSON (for `variation_values`).
pub fn json_map(map: Map, what: &str) -> ScriptResult<serde_json::Map<String, serde_json::Value>> {
    match rhai::serde::from_dynamic::<serde_json::Value>(&Dynamic::from_map(map)) {
        Ok(serde_json::Value::Object(values)) => Ok(values),
        Ok(_) | Err(_) => script_error(format!("{what} must hold plain values (numbers, strings, booleans)")),
    }
}

/// The message of a script error, without Rhai's "Runtime error" decoration.
pub fn message_of(error: &rhai::EvalAltResult) -> String {
    match error {
        rhai::EvalAltResult::ErrorRuntime(message, _) => message.to_string(),
        other => other.to_string(),
    }
}

/// Wait `seconds` between trials; Ctrl-C ends the wait and the scenario.
pub fn cool_down(host: &RunHost, seconds: f64) -> ScriptResult<()> {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < until {
        if host.options.cancel.is_cancelled() {
            return script_error("interrupted during a cool-down (between trials or sweep variations)");
        }
        std::thread::sleep(COOLDOWN_POLL.min(until.saturating_duration_since(Instant::now())));
    }
    Ok(())
}
