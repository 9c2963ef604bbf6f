//! Request-rate mode: open loop at a fixed rate with constant, Poisson or gamma arrivals from
//! a seed, and an optional ceiling on requests in flight. Over an agentic trace with
//! sub-agents the arrivals pace its roots' turns (`tree_arrivals.rs`).

use std::sync::Arc;

use super::arrival::{ArrivalTimes, Profile};
use super::{LoadContext, PhaseRun, SendWindow, open_loop};
use crate::plan::Arrival;

pub(super) async fn run(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    rate_rps: f64,
    arrival: Arrival,
    max_concurrency: Option<usize>,
    seed: u64,
) -> SendWindow {
    let arrivals = ArrivalTimes::new(arrival, seed, Profile::constant(rate_rps));
    if let Some(trees) = super::tree_phases::trees_with_sub_agents(&ctx) {
        return super::tree_arrivals::play(ctx, run, trees, arrivals, max_concurrency).await;
    }
    let arrivals = super::arrival::of_segment(arrivals, ctx.segment);
    open_loop::dispatch(ctx, run, arrivals, max_concurrency).await
}
