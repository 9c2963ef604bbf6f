//! `sweep(#{ grid: #{..} } or #{ zip: #{..} } or #{ points: [#{..}, ..] }, |v| run_map)`: a
//! sweep without a loop. Each variation of the parameter lists (or each point given) becomes one run (or its trials) labelled in `run_info`;
//! at the end the sweep aggregate is written and the runs come back with the best and the
//! Pareto-optimal ones; with `report: true` the sweep's report.html is written into its folder.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rhai::{Array, Dynamic, Engine, FnPtr, Map, NativeCallContext};

use super::dry_run::ScriptMode;
use super::keys::{MapReader, ScriptResult, script_error};
use super::results::RunResults;
use super::run_fn::plan_of;
use super::run_host::RunHost;
use super::trial_runner::{TRIAL, TrialLayout, TrialRunner, run_all};
use super::trials::{RUN_EXTRA_KEYS, Repetition, cool_down, json_map, message_of, name_unnamed_run};
use crate::aggregate::sweep::{SweepCell, SweepSummary};
use crate::export::{ArtifactNames, sweep_csv, sweep_json};
use crate::plan::RunCoordinates;
use crate::plan::run_coordinates::{
    ReportedVariation, SweepOrder, artifact_dir_of, folder_under, label_of, new_sweep_id,
};

const SWEEP_KEYS: &[&str] = &[
    "name",
    "grid",
    "zip",
    "points",
    "trials",
    "cooldown",
    "confidence",
    "warmup_once",
    "vary_seed",
    "convergence",
    "report",
    "pause",
    "order",
    "reported",
];

pub fn register(engine: &mut Engine, host: Arc<RunHost>) {
    let sweeps_started = Arc::new(AtomicUsize::new(0));
    engine.register_fn("sweep", move |context: NativeCallContext, options: Map, make_run: FnPtr| {
        let number = sweeps_started.fetch_add(1, Ordering::SeqCst) + 1;
        let default_name = if number == 1 {
            format!("{}_sweep", host.scenario_stem)
        } else {
            format!("{}_sweep_{number}", host.scenario_stem)
        };
        sweep(&host, &context, options, &make_run, default_name)
    });
}

/// How the parameter lists combine into variations.
enum Combination {
    /// Every combination; the last parameter (in alphabetical order) changes fastest.
    Grid,
    /// The i-th value of every list together; the lists have one length.
    Zip,
}

/// One `sweep(..)` call: its folder name, its id, how each variation repeats and in what order.
struct SweepSettings {
    name: String,
    id: String,
    repetition: Repetition,
    order: SweepOrder,
    /// The pause between two variations (in the repeated order, within a round), seconds.
    pause_s: f64,
}

impl SweepSettings {
    /// Where a variation's trials and aggregate go, as AIPerf places them: with several trials,
    /// `profile_runs/trial_0001/<label>/` and `aggregate/<label>/` in the repeated order,
    /// `<label>/profile_runs/trial_0001/` and `<label>/aggregate/` in the independent one.
    fn layout_of(&self, label: &str) -> TrialLayout {
        let under = |folders: &[&str]| -> Vec<String> {
            std::iter::once(self.name.clone()).chain(folders.iter().map(|folder| folder.to_string())).collect()
        };
        let (trial_folders, aggregate_folders, result_folders) = match self.order {
            SweepOrder::Repeated => {
                (under(&["profile_runs", TRIAL, label]), under(&["aggregate", label]), under(&["aggregate", label]))
            }
            SweepOrder::Independent => {
                (under(&[label, "profile_runs", TRIAL]), under(&[label, "aggregate"]), under(&[label]))
            }
        };
        TrialLayout {
            trial_folders,
            trial_prefix: "trial_",
            aggregate_folders,
            aggregate_single_trial: true,
            result_folders,
        }
    }

    /// The sweep aggregate's folders under the sweep's: `aggregate/sweep_aggregate` when the
    /// repeated order interleaves several trials, else `sweep_aggregate`.
    fn sweep_aggregate_folders(&self) -> Vec<String> {
        match (self.order, self.repetition.trials > 1) {
            (SweepOrder::Repeated, true) => vec!["aggregate".into(), "sweep_aggregate".into()],
            _ => vec!["sweep_aggregate".into()],
        }
    }
}

fn sweep(
    host: &RunHost,
    context: &NativeCallContext,
    options: Map,
    make_run: &FnPtr,
    default_name: String,
) -> ScriptResult<Map> {
    let mut reader = MapReader::new("sweep", options, SWEEP_KEYS)?;
    let name = reader.opt_string("name")?.unwrap_or(default_name);
    let repetition = Repetition::read(&mut reader, "sweep")?;
    let report = reader.opt_bool("report")?;
    let _collecting = super::report_after::collect_records(host, report);
    let pause_s = reader.opt_f64("pause")?.unwrap_or(0.0);
    if !(pause_s >= 0.0 && pause_s.is_finite()) {
        return script_error("sweep: `pause` (between variations) must be a duration ≥ 0, e.g. seconds(30)");
    }
    let variations = match (reader.opt_map("grid")?, reader.opt_map("zip")?, reader.opt_array("points")?) {
        (Some(lists), None, None) => variations(lists, Combination::Grid)?,
        (None, Some(lists), None) => variations(lists, Combination::Zip)?,
        (None, None, Some(points)) => given_points(points)?,
        _ => {
            return script_error(
                "sweep: give exactly one of `grid: #{..}`, `zip: #{..}` or `points: [#{..}, ..]`, e.g. grid: #{ users: [1, 4, 16] }",
            );
        }
    };
    let order = match reader.opt_string("order")? {
        None => SweepOrder::default(),
        Some(name) => match SweepOrder::parse(&name) {
            Some(order) => order,
            None => {
                return script_error(format!(
                    "sweep: `order` is \"repeated\" (trial 1 of every variation, then trial 2, …) or \"independent\" (every trial of a variation before the next), got \"{name}\""
                ));
            }
        },
    };
    let mut reported = reported(&mut reader, variations.len())?.map(Vec::into_iter);
    let settings = SweepSettings { name, id: new_sweep_id(), repetition, order, pause_s };
    let sweep_dir = artifact_dir_of(&host.options.artifact_root, &settings.name);
    let aggregate_dir = folder_under(&sweep_dir, &settings.sweep_aggregate_folders());
    let executing = host.mode == ScriptMode::Execute;
    let points: Vec<VariationPoint> = variations
        .into_iter()
        .enumerate()
        .map(|(index, variation)| {
            let values = json_map(variation.clone(), "sweep: a variation")?;
            let reported = reported.as_mut().and_then(Iterator::next);
            let label = reported.as_ref().map_or_else(|| label_of(&values), |reported| reported.folder.clone());
            Ok(VariationPoint { index, label, values, reported, variation })
        })
        .collect::<ScriptResult<_>>()?;
    let sweeper = Sweeper { host, context, make_run, settings: &settings };
    let finished = match (settings.order, settings.repetition.trials > 1) {
        (SweepOrder::Repeated, true) => sweeper.run_repeated(points),
        // One trial each: the orders run alike.
        _ => sweeper.run_independent(points),
    };
    let (runs, cells) = match finished {
        Ok(finished) => finished,
        Err(Stopped { runs, cells, label, error }) => {
            if executing && !cells.is_empty() {
                // Keep the aggregate of the variations that finished before the scenario stops.
                let names = sweep_names(&runs);
                let summary = SweepSummary::new(cells).with_failed(label, message_of(&error));
                write_sweep_aggregate(&summary, &settings, &aggregate_dir, &names)?;
            }
            return Err(error);
        }
    };
    let summary = SweepSummary::new(cells);
    if executing {
        write_sweep_aggregate(&summary, &settings, &aggregate_dir, &sweep_names(&runs))?;
        crate::ui::stdout::print(&crate::ui::sweep::render(&settings.name, &summary, &aggregate_dir));
    }
    super::report_after::write_report(host, report, &sweep_dir, &format!("sweep `{}`", settings.name))?;
    Ok(results_map(&summary, runs, &settings.id, &sweep_dir))
}

/// A sweep stopped by a failed run: the variations that finished, and the failure.
struct Stopped {
    runs: Vec<RunResults>,
    cells: Vec<SweepCell>,
    label: String,
    error: Box<rhai::EvalAltResult>,
}

type SweepRuns = Result<(Vec<RunResults>, Vec<SweepCell>), Stopped>;

/// What runs a sweep's variations: the host, the scenario's function and the sweep's settings.
struct Sweeper<'a> {
    host: &'a RunHost,
    context: &'a NativeCallContext<'a>,
    make_run: &'a FnPtr,
    settings: &'a SweepSettings,
}

impl Sweeper<'_> {
    /// Every trial of a variation before the next variation, with the pause between variations.
    fn run_independent(&self, points: Vec<VariationPoint>) -> SweepRuns {
        let Self { host, context, make_run, settings } = *self;
        let (mut runs, mut cells) = (Vec::with_capacity(points.len()), Vec::with_capacity(points.len()));
        for point in points {
            let label = point.label.clone();
            let outcome = (|| {
                if host.mode == ScriptMode::Execute && point.index > 0 {
                    cool_down(host, settings.pause_s)?;
                }
                let run_map = run_map_for(context, make_run, &point.variation)?;
                let runner = variation_runner(host, settings, &point, run_map)?;
                let (result, trials) = run_all(host, runner)?;
                Ok((result, SweepCell { values: point.values, label: point.label, trials }))
            })();
            match outcome {
                Ok((result, cell)) => {
                    runs.push(result);
                    cells.push(cell);
                }
                Err(error) => return Err(Stopped { runs, cells, label, error }),
            }
        }
        Ok((runs, cells))
    }

    /// Trial 1 of every variation, then trial 2 of every variation, …: the pause between two
    /// variations of a round, the trials' cool-down between two rounds.
    fn run_repeated(&self, points: Vec<VariationPoint>) -> SweepRuns {
        let Self { host, context, make_run, settings } = *self;
        let mut runners = Vec::with_capacity(points.len());
        for point in &points {
            let made = run_map_for(context, make_run, &point.variation)
                .and_then(|run_map| variation_runner(host, settings, point, run_map));
            match made {
                Ok(runner) => runners.push(runner),
                Err(error) => {
                    return Err(Stopped { runs: Vec::new(), cells: Vec::new(), label: point.label.clone(), error });
                }
            }
        }
        let mut first_run = true;
        while runners.iter().any(|runner| !runner.is_done()) {
            let mut first_of_round = true;
            for (runner, point) in runners.iter_mut().zip(&points) {
                if runner.is_done() {
                    continue;
                }
                let pause = if first_of_round { settings.repetition.cooldown_s } else { settings.pause_s };
                let waited = match first_run || host.mode != ScriptMode::Execute {
                    true => Ok(()),
                    false => cool_down(host, pause).map_err(|error| runner.stopped(host, error)),
                };
                if let Err(error) = waited.and_then(|()| runner.run_next(host)) {
                    // The other variations keep the trials they finished, aggregated.
                    let label = point.label.clone();
                    return match finish_all(host, runners, points, true) {
                        Ok((runs, cells)) => Err(Stopped { runs, cells, label, error }),
                        Err(stopped) => Err(stopped),
                    };
                }
                (first_run, first_of_round) = (false, false);
            }
        }
        finish_all(host, runners, points, false)
    }
}

/// Each variation's aggregate and combined result; `partly` skips those without a trial.
fn finish_all(host: &RunHost, runners: Vec<TrialRunner<'_>>, points: Vec<VariationPoint>, partly: bool) -> SweepRuns {
    let (mut runs, mut cells) = (Vec::with_capacity(points.len()), Vec::with_capacity(points.len()));
    for (runner, point) in runners.into_iter().zip(points) {
        if partly && runner.trials_run() == 0 {
            continue;
        }
        match runner.finish(host) {
            Ok((result, trials)) => {
                runs.push(result);
                cells.push(SweepCell { values: point.values, label: point.label, trials });
            }
            Err(error) => return Err(Stopped { runs, cells, label: point.label, error }),
        }
    }
    Ok((runs, cells))
}

/// The run map the scenario's function makes of `variation`, without the sweep's own keys.
fn run_map_for(context: &NativeCallContext, make_run: &FnPtr, variation: &Map) -> ScriptResult<Map> {
    let made = make_run.call_within_context::<Dynamic>(context, (Dynamic::from_map(variation.clone()),))?;
    let Some(run_map) = made.clone().try_cast::<Map>() else {
        return script_error(format!(
            "sweep: the function must return a run map #{{ endpoint: .., phases: [..] }}, got {} `{made}`",
            made.type_name()
        ));
    };
    if let Some(key) = RUN_EXTRA_KEYS.iter().find(|key| run_map.contains_key(**key)) {
        return script_error(format!("sweep: set `{key}` in sweep(#{{..}}), not in the run map its function returns"));
    }
    Ok(run_map)
}

/// One variation of a sweep: its place, its parameter values, its label (its folder's name),
/// how its runs report it when the sweep names it apart (`reported`), and its map.
struct VariationPoint {
    index: usize,
    values: serde_json::Map<String, serde_json::Value>,
    label: String,
    reported: Option<ReportedVariation>,
    variation: Map,
}

/// `reported: [#{ label, folder, values }, ..]`, one per variation in order: how each is
/// reported (`run_info.variation_label`, `variation_values`) and its folder, where a face names
/// them apart from their parameters (`aiperf profile`: AIPerf's labels, folders and dotted paths).
fn reported(reader: &mut MapReader, count: usize) -> ScriptResult<Option<Vec<ReportedVariation>>> {
    let Some(list) = reader.opt_array("reported")? else { return Ok(None) };
    if list.len() != count {
        return script_error(format!("sweep: `reported` names {} variations, the sweep has {count}", list.len()));
    }
    let each = |item: Dynamic| -> ScriptResult<ReportedVariation> {
        let Some(map) = item.clone().try_cast::<Map>() else {
            return script_error(format!("sweep: each of `reported` is #{{ label, folder, values }}, got `{item}`"));
        };
        let mut r = MapReader::new("sweep: reported", map, &["label", "folder", "values"])?;
        let label = r.opt_string("label")?.unwrap_or_default();
        let folder = r.opt_string("folder")?.unwrap_or_default();
        if label.is_empty() || folder.is_empty() {
            return script_error("sweep: each of `reported` needs a `label` and a `folder`");
        }
        let values = match rhai::serde::from_dynamic(&Dynamic::from_map(r.opt_map("values")?.unwrap_or_default())) {
            Ok(serde_json::Value::Object(values)) => values,
            _ => return script_error("sweep: a `reported` entry's `values` must be a map of plain values"),
        };
        Ok(ReportedVariation { label, folder, values })
    };
    list.into_iter().map(each).collect::<ScriptResult<_>>().map(Some)
}

/// The trials of one variation, labelled with its sweep coordinates, placed by the sweep's order.
fn variation_runner<'a>(
    host: &RunHost,
    settings: &'a SweepSettings,
    point: &VariationPoint,
    mut run_map: Map,
) -> ScriptResult<TrialRunner<'a>> {
    let label = &point.label;
    name_unnamed_run(&mut run_map, label);
    host.runs_started.fetch_add(1, Ordering::SeqCst);
    let mut plan = super::paths::anchor_plan(plan_of(run_map, label.clone())?, &host.scenario_dir);
    let (variation_label, variation_values) = match &point.reported {
        Some(reported) => (reported.label.clone(), reported.values.clone()),
        None => (label.clone(), point.values.clone()),
    };
    plan.run_info = RunCoordinates {
        sweep_id: Some(settings.id.clone()),
        run_label: Some(label.clone()),
        variation_label: Some(variation_label),
        variation_index: point.index as u64,
        variation_values,
        parent_folders: vec![settings.name.clone()],
        sweep_mode: Some(settings.order),
        ..Default::default()
    };
    Ok(TrialRunner::new(host, plan, &settings.repetition, settings.layout_of(label)))
}

/// The names of the sweep's own files: those of the `export_prefix` every variation's run
/// shares, AIPerf's defaults when they name none or differ.
fn sweep_names(runs: &[RunResults]) -> ArtifactNames {
    let mut prefixes = runs.iter().map(|run| run.0.plan.export.prefix.as_deref());
    let shared = match prefixes.next() {
        Some(first) => prefixes.all(|prefix| prefix == first).then_some(first).flatten(),
        None => None,
    };
    ArtifactNames::new(shared)
}

fn write_sweep_aggregate(
    summary: &SweepSummary,
    settings: &SweepSettings,
    dir: &std::path::Path,
    names: &ArtifactNames,
) -> ScriptResult<()> {
    let written = std::fs::create_dir_all(dir)
        .map_err(anyhow::Error::from)
        .and_then(|()| sweep_json::write(summary, &settings.id, &dir.join(names.sweep_json())))
        .and_then(|()| sweep_csv::write(summary, &dir.join(names.sweep_csv())));
    written.or_else(|e| script_error(format!("sweep `{}`: cannot write {}: {e:#}", settings.name, dir.display())))
}

/// What `sweep` returns: `#{ runs, best_throughput, best_latency, pareto, sweep_id, artifact_dir }`.
fn results_map(summary: &SweepSummary, runs: Vec<RunResults>, sweep_id: &str, dir: &std::path::Path) -> Map {
    let best = |name: &str| {
        summary
            .best
            .iter()
            .find(|best| best.name == name)
            .map_or(Dynamic::UNIT, |best| Dynamic::from(runs[best.cell].clone()))
    };
    let mut map = Map::new();
    map.insert("best_throughput".into(), best("best_throughput"));
    map.insert("best_latency".into(), best("best_latency_p99"));
    let pareto: Array = summary.pareto.iter().map(|&i| Dynamic::from(runs[i].clone())).collect();
    map.insert("pareto".into(), pareto.into());
    map.insert("sweep_id".into(), sweep_id.into());
    map.insert("artifact_dir".into(), dir.display().to_string().into());
    map.insert("runs".into(), runs.into_iter().map(Dynamic::from).collect::<Array>().into());
    map
}

/// Each variation as a map from parameter to value.
fn variations(lists: Map, combination: Combination) -> ScriptResult<Vec<Map>> {
    let mut parameters = Vec::with_capacity(lists.len());
    for (name, list) in lists {
        let Some(values) = list.clone().try_cast::<Array>() else {
            return script_error(format!("sweep: `{name}` must be a list of values, e.g. [1, 4, 16]; got `{list}`"));
        };
        if values.is_empty() {
            return script_error(format!("sweep: `{name}` has no values"));
        }
        parameters.push((name.to_string(), values));
    }
    if parameters.is_empty() {
        return script_error("sweep: name at least one parameter with its values, e.g. #{ users: [1, 4, 16] }");
    }
    match combination {
        Combination::Grid => Ok(grid(&parameters)),
        Combination::Zip => zip(&parameters),
    }
}

/// `points`: the variations as listed (`sweeps::sobol(..)`'s, say), each a map of the same names.
fn given_points(points: Array) -> ScriptResult<Vec<Map>> {
    let mut variations: Vec<Map> = Vec::with_capacity(points.len());
    for (index, point) in points.into_iter().enumerate() {
        let Some(point) = point.clone().try_cast::<Map>() else {
            return script_error(format!("sweep: `points[{index}]` must be a map of parameter values, got `{point}`"));
        };
        if point.is_empty() {
            return script_error(format!("sweep: `points[{index}]` names no parameter"));
        }
        if let Some(first) = variations.first()
            && !first.keys().eq(point.keys())
        {
            let names = |map: &Map| map.keys().map(|key| key.to_string()).collect::<Vec<_>>().join(", ");
            return script_error(format!(
                "sweep: every point names the same parameters; `points[0]` has {}, `points[{index}]` {}",
                names(first),
                names(&point)
            ));
        }
        variations.push(point);
    }
    if variations.is_empty() {
        return script_error("sweep: `points` is empty");
    }
    Ok(variations)
}

fn grid(parameters: &[(String, Array)]) -> Vec<Map> {
    parameters.iter().fold(vec![Map::new()], |partial, (name, values)| {
        partial
            .iter()
            .flat_map(|start| {
                values.iter().map(move |value| {
                    let mut variation = start.clone();
                    variation.insert(name.as_str().into(), value.clone());
                    variation
                })
            })
            .collect()
    })
}

fn zip(parameters: &[(String, Array)]) -> ScriptResult<Vec<Map>> {
    let length = parameters[0].1.len();
    if let Some((name, values)) = parameters.iter().find(|(_, values)| values.len() != length) {
        return script_error(format!(
            "sweep: the lists of `zip` need one length; `{}` has {length} values, `{name}` has {}",
            parameters[0].0,
            values.len()
        ));
    }
    Ok((0..length)
        .map(|i| parameters.iter().map(|(name, values)| (name.as_str().into(), values[i].clone())).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(pairs: &[(&str, &[i64])]) -> Map {
        pairs
            .iter()
            .map(|(name, values)| ((*name).into(), values.iter().map(|&v| Dynamic::from(v)).collect::<Array>().into()))
            .collect()
    }

    fn points(variations: &[Map]) -> Vec<Vec<(String, i64)>> {
        variations
            .iter()
            .map(|v| v.iter().map(|(name, value)| (name.to_string(), value.as_int().unwrap())).collect())
            .collect()
    }

    #[test]
    fn a_grid_is_every_combination_with_the_last_name_fastest() {
        let grid = variations(lists(&[("users", &[1, 2]), ("isl", &[10, 20, 30])]), Combination::Grid).unwrap();
        let expected: Vec<Vec<(String, i64)>> = [(10, 1), (10, 2), (20, 1), (20, 2), (30, 1), (30, 2)]
            .iter()
            .map(|&(isl, users)| vec![("isl".to_string(), isl), ("users".to_string(), users)])
            .collect();
        assert_eq!(points(&grid), expected);
    }

    #[test]
    fn a_zip_pairs_the_lists_and_needs_one_length() {
        let zipped = variations(lists(&[("users", &[1, 2]), ("isl", &[10, 20])]), Combination::Zip).unwrap();
        assert_eq!(
            points(&zipped),
            [
                vec![("isl".to_string(), 10), ("users".to_string(), 1)],
                vec![("isl".to_string(), 20), ("users".to_string(), 2)]
            ]
        );
        let uneven = variations(lists(&[("users", &[1, 2]), ("isl", &[10])]), Combination::Zip).unwrap_err();
        assert!(uneven.to_string().contains("`isl` has 1 values, `users` has 2"), "{uneven}");
        assert!(variations(lists(&[("users", &[])]), Combination::Grid).is_err());
        assert!(variations(Map::new(), Combination::Grid).is_err());
    }

    #[test]
    fn given_points_are_the_variations_and_must_name_the_same_parameters() {
        let point = |users: i64, isl: i64| -> Dynamic {
            let map: Map =
                [("users".into(), Dynamic::from(users)), ("isl".into(), Dynamic::from(isl))].into_iter().collect();
            map.into()
        };
        let given = given_points(vec![point(41, 128), point(18, 2048)]).unwrap();
        assert_eq!(
            points(&given),
            [
                vec![("isl".to_string(), 128), ("users".to_string(), 41)],
                vec![("isl".to_string(), 2048), ("users".to_string(), 18)]
            ]
        );
        let other: Map = [("rate".into(), Dynamic::from(5_i64))].into_iter().collect();
        let mixed = given_points(vec![point(1, 2), other.into()]).unwrap_err();
        assert!(mixed.to_string().contains("every point names the same parameters"), "{mixed}");
        assert!(given_points(vec![]).is_err());
        assert!(
            given_points(vec![Dynamic::from(3_i64)]).unwrap_err().to_string().contains("`points[0]` must be a map")
        );
    }
}
