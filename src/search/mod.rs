//! Capacity search: planners that choose the next load from the runs measured so far (grid,
//! bisection, smooth isotonic, Bayesian optimisation), SLA judgement, AIPerf's recipes, and the
//! `search_history.json` / `search_checkpoint.json` artifacts. Each iteration is a normal run.

pub mod bayesian;
pub mod checkpoint;
pub mod config;
pub mod decision;
pub mod driver;
pub mod gaussian_process;
pub mod grid;
pub mod history;
pub mod isotonic;
pub mod iteration;
pub mod monotonic;
pub mod multi_tier;
pub mod planner;
pub mod point_in_plan;
pub mod pooled;
pub mod recipes;
pub mod smooth_isotonic;
#[cfg(test)]
mod testing;
pub mod tier_ordering;

pub use config::SearchConfig;
pub use driver::{Measured, Probe, SearchOutcome, Stopped, run_search};
pub use iteration::{Iteration, MetricSource};
