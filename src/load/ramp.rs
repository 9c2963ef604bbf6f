//! Ramps: a rate or a number of users moved linearly through k6-style stages. A rate ramp is
//! open loop over a time-varying rate; a concurrency ramp starts and retires closed-loop users
//! in whole steps (a user playing a multi-turn file's session retires once the session ends;
//! over an agentic trace with sub-agents, the users play its trees' roots).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;

use super::arrival::{ArrivalTimes, Profile};
use super::concurrency::UserWork;
use super::ramped_places::RampedPlaces;
use super::{LoadContext, PhaseDeadlines, PhaseRun, SendWindow, open_loop, request_ids};
use crate::plan::{Arrival, PrefillCap, RampStage};

/// How often a concurrency ramp adjusts its number of users.
const USER_STEP: Duration = Duration::from_millis(20);

/// A rate ramp: from `start_rps` through the stages, then (with `hold`) the last target for
/// as long as the phase runs; at most `max_in_flight` requests at once.
pub(super) struct RateRamp<'a> {
    pub start_rps: f64,
    pub stages: &'a [RampStage],
    pub hold: bool,
    pub max_in_flight: Option<usize>,
}

pub(super) async fn run_rate(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    shape: RateRamp<'_>,
    arrival: Arrival,
    seed: u64,
) -> SendWindow {
    let profile = Profile::stages(shape.start_rps, shape.stages);
    let profile = if shape.hold { profile.holding_last_target() } else { profile };
    let arrivals = ArrivalTimes::new(arrival, seed, profile);
    if let Some(trees) = super::tree_phases::trees_with_sub_agents(&ctx) {
        return super::tree_arrivals::play(ctx, run, trees, arrivals, shape.max_in_flight).await;
    }
    let arrivals = super::arrival::of_segment(arrivals, ctx.segment);
    open_loop::dispatch(ctx, run, arrivals, shape.max_in_flight).await
}

/// A concurrency ramp: from `start_users` through the stages in whole users (then, with
/// `hold`, the last target); at most `prefill`'s places waiting for a first token.
pub(super) struct UsersRamp<'a> {
    pub start_users: f64,
    pub stages: &'a [RampStage],
    pub hold: bool,
    pub prefill: Option<PrefillCap>,
}

/// Run a concurrency ramp; the window of its precise timer's cost, where it had one.
pub(super) async fn run_concurrency(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    shape: UsersRamp<'_>,
) -> Option<SendWindow> {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let profile = Profile::stages(shape.start_users, shape.stages);
    let profile = if shape.hold { profile.holding_last_target() } else { profile };
    if let Some(trees) = super::tree_phases::trees_with_sub_agents(&ctx) {
        let users = super::tree_phases::TreeUsers::Ramped(profile);
        return Some(super::tree_phases::play_trees(ctx, run, trees, users).await);
    }
    let prefill = shape.prefill.map(|cap| RampedPlaces::open(cap.concurrency, cap.ramp_s));
    let allowed_users = Arc::new(AtomicUsize::new(0));
    let work = Arc::new(UserWork::of(&ctx, &run));
    let started = tokio::time::Instant::now();
    let mut users: Vec<Option<JoinHandle<()>>> = Vec::new();
    let mut step = tokio::time::interval(USER_STEP);
    while !ctx.cancel.is_cancelled() && !deadlines.sending_over() && !work.exhausted(&run) {
        let wanted = profile.stepped_value_at(started.elapsed().as_secs_f64()).round().max(0.0) as usize;
        allowed_users.store(wanted, Ordering::Relaxed);
        if users.len() < wanted {
            users.resize_with(wanted, || None);
        }
        for (user, slot) in users.iter_mut().enumerate().take(wanted) {
            if slot.as_ref().is_none_or(|handle| handle.is_finished()) {
                let (ctx, run, allowed_users, work) = (ctx.clone(), run.clone(), allowed_users.clone(), work.clone());
                let prefill = prefill.as_ref().map(|prefill| prefill.places.clone());
                *slot = Some(tokio::spawn(async move {
                    let mut ids = request_ids(&ctx, &run, user as u64);
                    while user < allowed_users.load(Ordering::Relaxed)
                        && !ctx.cancel.is_cancelled()
                        && !deadlines.sending_over()
                        && work.serve(&ctx, &run, deadlines, &mut ids, prefill.as_deref()).await
                    {}
                }));
            }
        }
        tokio::select! {
            _ = step.tick() => {}
            _ = ctx.cancel.cancelled() => break,
        }
    }
    for handle in users.into_iter().flatten() {
        if let Err(e) = handle.await {
            tracing::error!("a ramp user stopped unexpectedly: {e}");
        }
    }
    work.finish()
}
