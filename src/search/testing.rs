//! A pretend server for planner tests: time to first token climbs a staircase as the mock's
//! does (8 slots, each wave of queued users adds a whole answer), throughput saturates at 8.

use std::collections::BTreeMap;

use super::config::{
    CONCURRENCY_PATH, Dimension, DimensionKind, Direction, Objective, PlannerKind, Prior, SearchConfig, SlaFilter,
};
use super::iteration::tests::Fixed;
use super::iteration::{Bracket, Iteration};
use super::planner::{Decision, next};

/// TTFT p95 (ms) at `users`, shaped so that 200 ms holds up to `boundary` users and breaks above.
pub fn staircase(boundary: i64) -> impl Fn(f64) -> Fixed {
    move |users: f64| {
        let waves = ((users as i64 + 23 - boundary) as f64 / 8.0).floor();
        let mut stats = BTreeMap::new();
        stats.insert(("time_to_first_token".to_string(), "p95".to_string()), 20.0 + 82.0 * waves);
        stats.insert(("output_token_throughput".to_string(), "avg".to_string()), users.min(8.0) / 0.082 * 32.0);
        Fixed(stats)
    }
}

/// TTFT p95 (ms) flat at first, then steeply up (a server past its knee), crossing 200 ms
/// between `boundary` and the next user: a straight line between a far failing point and a
/// passing one lands near the passing end.
pub fn knee(boundary: i64) -> impl Fn(f64) -> Fixed {
    move |users: f64| {
        let mut stats = BTreeMap::new();
        let ttft = 50.0 + 150.0 * (users / (boundary as f64 + 0.5)).powi(6);
        stats.insert(("time_to_first_token".to_string(), "p95".to_string()), ttft);
        stats.insert(("output_token_throughput".to_string(), "avg".to_string()), users.min(8.0) / 0.082 * 32.0);
        Fixed(stats)
    }
}

pub fn config(planner: PlannerKind, lo: i64, hi: i64) -> SearchConfig {
    SearchConfig {
        planner,
        search_space: vec![Dimension {
            path: CONCURRENCY_PATH.into(),
            lo: lo as f64,
            hi: hi as f64,
            kind: DimensionKind::Int,
            prior: if planner == PlannerKind::Bayesian { Prior::LogUniform } else { Prior::Uniform },
        }],
        objectives: vec![Objective {
            metric: "output_token_throughput".into(),
            stat: "avg".into(),
            direction: Direction::Maximize,
            threshold: None,
        }],
        sla_filters: vec![SlaFilter::parse("time_to_first_token:p95:lt:200").expect("sla")],
        max_iterations: 30,
        n_initial_points: 5,
        random_seed: Some(0),
        recipe_name: None,
        grid_points: Vec::new(),
        grid_steps: None,
        request_slos: BTreeMap::new(),
        degradation: None,
        sla_tiers: Vec::new(),
        objective_pooling: Default::default(),
    }
}

/// Every iteration a planner runs against `server`, and its stop reason.
pub fn search(config: &SearchConfig, server: impl Fn(f64) -> Fixed) -> (Vec<Iteration>, String) {
    let mut history = Vec::new();
    loop {
        match next(config, &history) {
            Decision::Probe { point, probe } => {
                let source = server(point[0]);
                history.push(Iteration::measure(config, history.len(), point, probe, &source));
            }
            Decision::Stop(reason) => return (history, reason),
        }
    }
}

/// The values a 1-D planner tried, its stop reason, and the highest feasible value found.
pub fn boundary_search(
    planner: PlannerKind,
    lo: i64,
    hi: i64,
    server: impl Fn(f64) -> Fixed,
) -> (Vec<i64>, String, Option<i64>) {
    let (history, reason) = search(&config(planner, lo, hi), server);
    let tried = history.iter().map(|it| it.x() as i64).collect();
    (tried, reason, Bracket::of(&history).feasible_max.map(|f| f as i64))
}
