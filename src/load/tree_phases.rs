//! The phases that play an agentic trace's trees when its conversations have sub-agents: which
//! may (`check_tree_phase`), and a concurrency phase's or concurrency ramp's play of them
//! (`play_trees`); a rate phase's is `tree_arrivals.rs`. All play on the tree player
//! (`tree_player.rs`).

use std::sync::Arc;

use super::arrival::Profile;
use super::precise_timer::PreciseTimer;
use super::root_target::RootTarget;
use super::tree_player::{Manner, Player, on_runtime};
use super::{LoadContext, PhaseRun, SendWindow};
use crate::agents::replay::{self, Tree};
use crate::dataset::requests::PreparedRequest;
use crate::plan::{LoadMode, Phase, RampedQuantity};

/// How many roots a concurrency phase plays at once: fixed, or a ramp's users over time.
pub(super) enum TreeUsers {
    Fixed(usize),
    Ramped(Profile),
}

/// The trees of a phase's dataset when it has sub-agents (an agentic trace); None for any other
/// dataset, whose sessions the concurrency and rate runners play.
pub(super) fn trees_with_sub_agents(ctx: &LoadContext) -> Option<Vec<Tree>> {
    if !replay::has_sub_agents(&ctx.requests) {
        return None;
    }
    replay::trees(&ctx.requests).ok()
}

/// Whether `phase` can play the trees of `requests` when they are a trace with sub-agents: a
/// concurrency or rate phase (or ramp) plays them whole, in one process (`segmented`: not),
/// with no prefill cap.
pub fn check_tree_phase(phase: &Phase, requests: &[PreparedRequest], segmented: bool) -> Result<(), String> {
    let plays_trees =
        matches!(phase.mode, LoadMode::Concurrency { .. } | LoadMode::Rate { .. } | LoadMode::Ramp { .. });
    if !plays_trees || !replay::has_sub_agents(requests) {
        return Ok(());
    }
    let mode = match &phase.mode {
        LoadMode::Concurrency { .. } | LoadMode::Ramp { ramped: RampedQuantity::Concurrency, .. } => "concurrency",
        _ => "rate",
    };
    let prefill_capped = match &phase.mode {
        LoadMode::Concurrency { prefill_concurrency, .. } => prefill_concurrency.is_some(),
        LoadMode::Rate { prefill, .. } | LoadMode::Ramp { prefill, .. } => prefill.is_some(),
        _ => false,
    };
    if prefill_capped {
        return Err(format!(
            "`prefill_concurrency` does not apply to a trace with sub-agents, whose trees a {mode} phase plays \
             as AIPerf does (its sub-agents hold no place); leave it out"
        ));
    }
    if segmented {
        return Err(format!(
            "a {mode} phase over a trace with sub-agents keeps its trees whole and runs in one process (no \
             execution segments)"
        ));
    }
    replay::trees(requests).map(|_| ())
}

/// Play `trees` with `users` roots at once (or as many as a concurrency ramp's `users` allow
/// at each moment), as AIPerf 0.13 plays a DAG dataset in a concurrency phase: each user plays
/// a root from its first turn, its sub-agents spawned, delayed and joined as in agentic replay
/// but holding no user, and takes the next root (in dataset order, again and again) as soon as
/// its root conversation has ended; the phase's `sessions` count roots, its `requests` every
/// request.
pub(super) async fn play_trees(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    trees: Vec<Tree>,
    users: TreeUsers,
) -> SendWindow {
    on_runtime(play_seated(ctx, run, trees, users)).await
}

async fn play_seated(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, trees: Vec<Tree>, users: TreeUsers) -> SendWindow {
    let index = run.index;
    let timer = PreciseTimer::of_phase(&ctx);
    let mut player = Player::new(ctx, run, trees, index, Manner::PHASE, timer);
    let now_ns = player.ctx.clock.now_ns();
    let seated = match users {
        TreeUsers::Fixed(users) => users,
        TreeUsers::Ramped(profile) => {
            let target = RootTarget::new(profile);
            let now = target.now();
            player.root_target = Some(target);
            now
        }
    };
    for _ in 0..seated {
        player.seat_next_root(now_ns);
    }
    player.play().await;
    let _ = player.run.counters.branch_stats.set(player.branch_stats.settled());
    // A closed loop: its turns' times follow the answers, so only the timer's cost is reported.
    player.finish().pacer_cost_only()
}
