//! The phase runner of an agentic replay (`agents/replay/`), on the tree player
//! (`tree_player.rs`): the priming stage sends the primed turns (one output token), then, with
//! a cache warm-up, plays the trees idle-free for that long and hands them over as they stand
//! (`ReplayHandoff`); the profiling stage plays them on from there (else from their cuts), each
//! later turn after its `delay`, and recycles each finished lane.

use std::cmp::Reverse;
use std::sync::Arc;
use std::time::Duration;

use super::precise_timer::PreciseTimer;
use super::tree_player::{LaneRun, Manner, Player, Recycle, on_runtime};
use super::{LoadContext, PhaseDeadlines, PhaseRun, SendWindow};
use crate::agents::replay::{self, Lane, Step, TreeRun, priming_schedule};
use crate::plan::{AgenticReplay, ReplayStage};

/// AIPerf's cap on how long an accelerated cache warm-up waits for its requests by default.
const CACHE_WARMUP_GRACE_MAX_S: f64 = 300.0;

/// Where the session numbers of the trees the cache warm-up recycles start: apart from the
/// profiling phase's, which share their correlation ids with the warm-up's first trees.
const CACHE_WARMUP_RECYCLED_SESSIONS: u64 = 1 << 40;

/// Run an agentic replay phase; its dataset was checked before the run (`agents::replay::check`).
pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, replay: &AgenticReplay) -> SendWindow {
    on_runtime(play(ctx, run, replay.clone())).await
}

async fn play(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, replay: AgenticReplay) -> SendWindow {
    let replay = &replay;
    let Ok(trees) = replay::trees(&ctx.requests) else { return SendWindow::default() };
    let Ok((lanes, next_root)) = replay::lanes(&trees, replay) else { return SendWindow::default() };
    let ids_of_phase = match replay.stage {
        ReplayStage::Priming => run.index + 1,
        ReplayStage::Profiling => run.index,
    };
    let priming = Manner {
        one_token: true,
        idle_free: false,
        recycle: Recycle::No,
        follow: false,
        hand_over: false,
        overlap: true,
    };
    let timer = PreciseTimer::of_phase(&ctx);
    let mut player = Player::new(ctx, run, trees, ids_of_phase, priming, timer);
    player.next_root = next_root;
    player.idle_cap_ns = replay.system_idle_gap_cap_s.map(|s| (s * 1e9) as u64);
    player.cache_bust = replay.cache_bust;
    match replay.stage {
        ReplayStage::Priming => {
            player.prime(&lanes, replay).await;
            if player.run.counters.run_aborted.get().is_some() {
                return player.finish();
            }
            if let Some(seconds) = replay.cache_warmup_s {
                player.press(&lanes, replay, seconds).await;
            }
        }
        ReplayStage::Profiling => {
            player.profile(&lanes, replay).await;
            let _ = player.run.counters.branch_stats.set(player.branch_stats.settled());
        }
    }
    player.finish()
}

/// The trajectories as the cache warm-up left them, for the profiling phase to play on: each
/// lane's tree and histories, and the turns due next with their recorded waits.
pub struct ReplayHandoff {
    lanes: Vec<LaneRun>,
    due: Vec<(usize, Step)>,
    next_root: usize,
    next_session: u64,
}
impl Player {
    /// The warm-up's priming requests, spread so each trajectory reaches its cut at the end;
    /// in-flight ones are cut off after the warm-up grace period, if one is set.
    async fn prime(&mut self, lanes: &[Lane], replay: &AgenticReplay) {
        for lane in lanes {
            self.add_lane(lane.tree, TreeRun::from_cut(&self.trees[lane.tree], &lane.cut, false).0);
        }
        let schedule = priming_schedule(&self.trees, lanes, replay.burst_phase_starts, self.ctx.trace_idle_gap_cap_ms);
        let now_ns = self.ctx.clock.now_ns();
        for priming in &schedule {
            let step = Step::new(priming.stream, priming.turn, priming.at_ms);
            self.queue(priming.lane, step, now_ns);
        }
        let last_ms = schedule.iter().map(|priming| priming.at_ms).fold(0.0, f64::max);
        let sending_ends = tokio::time::Instant::now() + Duration::from_secs_f64(last_ms / 1000.0);
        let grace = replay.warmup_grace_s.map(Duration::from_secs_f64);
        self.deadlines = PhaseDeadlines { stop_sending: None, cut_off: grace.map(|grace| sending_ends + grace) };
        self.play().await;
    }

    /// AIPerf's accelerated cache warm-up: the trees go on from where priming left them,
    /// idle-free and one token each, for `seconds`; then what is in flight may finish within
    /// the warm-up grace period (by default the lesser of `seconds` and 300 s).
    async fn press(&mut self, lanes: &[Lane], replay: &AgenticReplay, seconds: f64) {
        let now_ns = self.ctx.clock.now_ns();
        for (index, lane) in lanes.iter().enumerate() {
            let (run, steps) = TreeRun::from_cut(&self.trees[lane.tree], &lane.cut, true);
            self.lanes[index].run = run;
            for step in steps {
                self.queue(index, step, now_ns);
            }
        }
        self.manner = Manner {
            one_token: true,
            idle_free: true,
            recycle: Recycle::Tree,
            follow: true,
            hand_over: true,
            overlap: true,
        };
        self.next_session = CACHE_WARMUP_RECYCLED_SESSIONS;
        let stop_sending = tokio::time::Instant::now() + Duration::from_secs_f64(seconds);
        let grace_s = replay.warmup_grace_s.unwrap_or(seconds.min(CACHE_WARMUP_GRACE_MAX_S));
        let cut_off = stop_sending + Duration::from_secs_f64(grace_s);
        self.deadlines = PhaseDeadlines { stop_sending: Some(stop_sending), cut_off: Some(cut_off) };
        self.stopped = false;
        self.play().await;
        if self.run.counters.run_aborted.get().is_some() {
            return;
        }
        // Each carried-over turn waits what is left of its recorded wait, counted from the answer
        // that made it due (AIPerf's residual delay at the hand-over), at most the idle-gap cap.
        let handed_over_ns = self.ctx.clock.now_ns();
        let cap_ms = self.ctx.trace_idle_gap_cap_ms;
        let due = std::mem::take(&mut self.due).into_sorted_vec().into_iter().rev().map(|Reverse(due)| {
            let waited_ns = handed_over_ns.saturating_sub(due.queued_ns);
            (due.lane, Step::new(due.stream, due.turn, carried_wait_ms(due.recorded_wait_ns, waited_ns, cap_ms)))
        });
        let handoff = ReplayHandoff {
            lanes: std::mem::take(&mut self.lanes),
            due: due.collect(),
            next_root: self.next_root,
            next_session: self.next_session,
        };
        *self.ctx.replay_handoff.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(handoff);
    }

    /// The profiled turns: each lane's tree from where the cache warm-up left it, else from its
    /// cut, at its recorded offsets and waits.
    async fn profile(&mut self, lanes: &[Lane], replay: &AgenticReplay) {
        self.manner = Manner {
            one_token: false,
            idle_free: false,
            recycle: Recycle::Tree,
            follow: true,
            hand_over: false,
            overlap: true,
        };
        let now_ns = self.ctx.clock.now_ns();
        let handoff = self.ctx.replay_handoff.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(handoff) = handoff.filter(|handoff| handoff.lanes.len() == lanes.len()) {
            self.take_over(handoff.lanes);
            self.seed_branch_stats();
            self.next_root = handoff.next_root;
            self.next_session = handoff.next_session;
            let mut due = handoff.due;
            if replay.burst_phase_starts {
                burst_each_lane(&mut due);
            }
            for (lane, step) in due {
                self.queue(lane, step, now_ns);
            }
            self.play().await;
            return;
        }
        for lane in lanes {
            let (run, mut steps) = TreeRun::from_cut(&self.trees[lane.tree], &lane.cut, replay.burst_phase_starts);
            shift_leading_idle(&mut steps, self.ctx.trace_idle_gap_cap_ms);
            let index = self.add_lane(lane.tree, run);
            for step in steps {
                self.queue(index, step, now_ns);
            }
        }
        self.seed_branch_stats();
        self.play().await;
    }
}

/// What is left of a recorded wait of `recorded_ns` after `waited_ns`, at most the idle-gap cap.
fn carried_wait_ms(recorded_ns: u64, waited_ns: u64, cap_ms: Option<f64>) -> f64 {
    let left_ms = recorded_ns.saturating_sub(waited_ns) as f64 / 1e6;
    cap_ms.map_or(left_ms, |cap| left_ms.min(cap))
}

/// A tree's turns due after its cut moved earlier together by what the wait for the first of
/// them exceeds the idle-gap cap (AIPerf's leading-idle shift: the spacing among them kept).
fn shift_leading_idle(steps: &mut [Step], cap_ms: Option<f64>) {
    let Some(cap_ms) = cap_ms else { return };
    let first_ms = steps.iter().map(|step| step.wait_ms).fold(f64::INFINITY, f64::min);
    let excess_ms = first_ms - cap_ms;
    if excess_ms > 0.0 {
        steps.iter_mut().for_each(|step| step.wait_ms -= excess_ms);
    }
}

/// Each lane's carried-over turns moved earlier together, so its first goes at once (burst
/// phase starts).
fn burst_each_lane(due: &mut [(usize, Step)]) {
    let mut earliest_ms: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
    for (lane, step) in due.iter() {
        let earliest = earliest_ms.entry(*lane).or_insert(f64::INFINITY);
        *earliest = earliest.min(step.wait_ms);
    }
    for (lane, step) in due.iter_mut() {
        step.wait_ms -= earliest_ms[lane];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_carried_over_keeps_what_is_left_within_the_cap() {
        assert_eq!(carried_wait_ms(5_000_000_000, 1_000_000_000, None), 4000.0);
        assert_eq!(carried_wait_ms(5_000_000_000, 1_000_000_000, Some(2000.0)), 2000.0);
        assert_eq!(carried_wait_ms(1_000_000_000, 3_000_000_000, Some(2000.0)), 0.0);
    }

    #[test]
    fn the_leading_idle_past_the_cap_moves_every_turn_earlier_by_the_excess() {
        let mut steps = vec![Step::new(0, 3, 7000.0), Step::new(1, 0, 9000.0)];
        shift_leading_idle(&mut steps, Some(5000.0));
        assert_eq!(steps.iter().map(|step| step.wait_ms).collect::<Vec<_>>(), vec![5000.0, 7000.0]);
        shift_leading_idle(&mut steps, Some(6000.0));
        assert_eq!(steps[0].wait_ms, 5000.0, "within the cap: unchanged");
        shift_leading_idle(&mut steps, None);
        assert_eq!(steps[1].wait_ms, 7000.0);
    }
}
