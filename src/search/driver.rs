//! The search loop: ask the planner for a point, run it (the caller's one engine), judge it,
//! and rewrite the history and the checkpoint after every iteration.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::checkpoint::{self, Checkpoint};
use super::config::SearchConfig;
use super::history;
use super::iteration::{Bracket, Iteration, MetricSource, ProbeKind};
use super::planner::{Decision, next};

/// One point to run.
pub struct Probe {
    pub iteration_idx: usize,
    /// The folder of this iteration's run, `search_iter_NNNN`.
    pub label: String,
    pub values: Map<String, Value>,
    pub point: Vec<f64>,
    pub probe: ProbeKind,
}

/// What the caller measured at a probe.
pub struct Measured {
    pub metrics: Box<dyn MetricSource>,
    pub artifact_dir: PathBuf,
}

/// Why a search stopped early: its run failed, or its files could not be written.
#[derive(Debug)]
pub enum Stopped<E> {
    Run(E),
    Files(anyhow::Error),
}

pub struct SearchOutcome {
    pub iterations: Vec<Iteration>,
    pub convergence_reason: String,
    /// Iterations taken over from a checkpoint.
    pub resumed: usize,
    pub history: Value,
}

/// Run the search in `dir` (history, checkpoint, and the iterations' folders beneath), carrying
/// on from an unfinished checkpoint of the same configuration.
pub fn run_search<E>(
    config: &SearchConfig,
    dir: &Path,
    mut measure: impl FnMut(&Probe) -> Result<Measured, E>,
) -> Result<SearchOutcome, Stopped<E>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Stopped::Files(anyhow::anyhow!("cannot create {}: {e}", dir.display())))?;
    let mut iterations =
        Checkpoint::read(dir).map_err(Stopped::Files)?.and_then(|saved| saved.resumable(config)).unwrap_or_default();
    let resumed = iterations.len();
    let started = Instant::now();
    let reason = loop {
        let (point, probe) = match next(config, &iterations) {
            Decision::Probe { point, probe } => (point, probe),
            Decision::Stop(reason) => break reason,
        };
        let iteration_idx = iterations.len();
        let request = Probe {
            iteration_idx,
            label: format!("search_iter_{iteration_idx:04}"),
            values: config.values_of(&point),
            point,
            probe,
        };
        let run_started = Instant::now();
        let measured = match measure(&request) {
            Ok(measured) => measured,
            Err(error) => {
                save(config, dir, &iterations, None, started).map_err(Stopped::Files)?;
                return Err(Stopped::Run(error));
            }
        };
        let mut iteration = Iteration::measure(config, iteration_idx, request.point, probe, measured.metrics.as_ref());
        iteration.non_monotonic_warning = !Bracket::of(&iterations).absorb(iteration.x(), iteration.feasible);
        iteration.artifact_dir = measured.artifact_dir.display().to_string();
        iteration.wall_s = run_started.elapsed().as_secs_f64();
        iterations.push(iteration);
        save(config, dir, &iterations, None, started).map_err(Stopped::Files)?;
    };
    let history = save(config, dir, &iterations, Some(&reason), started).map_err(Stopped::Files)?;
    Ok(SearchOutcome { iterations, convergence_reason: reason, resumed, history })
}

/// Rewrite the checkpoint and the history; returns the history.
fn save(
    config: &SearchConfig,
    dir: &Path,
    iterations: &[Iteration],
    reason: Option<&str>,
    started: Instant,
) -> anyhow::Result<Value> {
    let saved = Checkpoint {
        config: config.clone(),
        iterations: iterations.to_vec(),
        convergence_reason: reason.map(str::to_string),
    };
    checkpoint::write_json(&dir.join(checkpoint::FILE_NAME), &saved)?;
    let extras: Map<String, Value> = [
        ("runs".to_string(), json!(iterations.len())),
        ("runs_wall_s".to_string(), json!(iterations.iter().map(|it| it.wall_s).sum::<f64>())),
        ("session_wall_s".to_string(), json!(started.elapsed().as_secs_f64())),
    ]
    .into_iter()
    .collect();
    let document = history::document(config, iterations, reason, extras);
    checkpoint::write_json(&dir.join(history::FILE_NAME), &document)?;
    Ok(document)
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::testing::{config, staircase};
    use super::*;

    fn run(config: &SearchConfig, dir: &Path, fail_at: Option<usize>) -> Result<SearchOutcome, Stopped<String>> {
        let server = staircase(24);
        run_search(config, dir, |probe: &Probe| {
            if Some(probe.iteration_idx) == fail_at {
                return Err("interrupted".to_string());
            }
            Ok(Measured { metrics: Box::new(server(probe.point[0])), artifact_dir: dir.join(&probe.label) })
        })
    }

    #[test]
    fn a_stopped_search_resumes_from_its_checkpoint_where_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(PlannerKind::SmoothIsotonic, 1, 64);
        let whole = run(&config, &tempfile::tempdir().unwrap().path().join("s"), None).ok().unwrap();
        assert!(matches!(run(&config, dir.path(), Some(3)), Err(Stopped::Run(_))));
        let saved = Checkpoint::read(dir.path()).unwrap().unwrap();
        assert_eq!(saved.iterations.len(), 3);
        assert_eq!(saved.convergence_reason, None);
        let resumed = run(&config, dir.path(), None).ok().unwrap();
        assert_eq!(resumed.resumed, 3);
        let points = |outcome: &SearchOutcome| outcome.iterations.iter().map(Iteration::x).collect::<Vec<_>>();
        assert_eq!(points(&resumed), points(&whole));
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(history::FILE_NAME)).unwrap()).unwrap();
        assert_eq!(written["boundary_summary"]["feasible_max"]["value"], 24);
        // A finished search starts afresh rather than resuming.
        assert_eq!(run(&config, dir.path(), None).ok().unwrap().resumed, 0);
    }
}
