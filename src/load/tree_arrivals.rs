//! A rate phase (or rate ramp) over an agentic trace with sub-agents, paced as AIPerf 0.13
//! paces a DAG dataset in its rate mode: each arrival sends one root turn, the oldest root
//! turn whose delay has passed before a new root's first; a root's sub-agents, and its join
//! turns once they end, go on their own, outside the rate. The arrivals come from a pacer
//! thread (`pacer.rs`), as an open-loop phase's do; the tree player (`tree_player.rs`) sends.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::cpu_time::thread_cpu_ns;
use super::idle_spinners::IdleSpinners;
use super::open_loop::StopOnDrop;
use super::pacer;
use super::pacer_priority::PacerPriority;
use super::precise_timer::PreciseTimer;
use super::root_arrivals::RootArrivals;
use super::tree_player::{Manner, Player, on_runtime};
use super::{LoadContext, PhaseDeadlines, PhaseRun, SendWindow};
use crate::agents::replay::Tree;
use crate::plan::LoadMode;

/// Play `trees` with a root turn at each of `offsets_ns` (ns from now), at most `max_roots`
/// roots at once (a cap a rate ramp may ramp from 1); returns the arrivals' send window.
pub(super) async fn play(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    trees: Vec<Tree>,
    offsets_ns: impl Iterator<Item = u64> + Send + 'static,
    max_roots: Option<usize>,
) -> SendWindow {
    on_runtime(play_paced(ctx, run, trees, offsets_ns, max_roots)).await
}

async fn play_paced(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    trees: Vec<Tree>,
    offsets_ns: impl Iterator<Item = u64> + Send + 'static,
    max_roots: Option<usize>,
) -> SendWindow {
    let cap_ramp_s = match &run.phase.mode {
        LoadMode::Ramp { max_concurrency_ramp_s, .. } => *max_concurrency_ramp_s,
        _ => None,
    };
    let (hand_over, handed_over) = mpsc::unbounded_channel();
    let abandoned = Arc::new(AtomicBool::new(false));
    // Should this future be dropped, or the player end, the pacer stops within a nap.
    let stop_pacer = StopOnDrop(abandoned.clone());
    let (paced, pacing_done) = oneshot::channel();
    let origin_ns = ctx.clock.now_ns();
    let stop_ns = PhaseDeadlines::of(&run.phase).stop_sending.map(|stop| ctx.clock.ns_of(stop.into_std()));
    let pacer_ctx = ctx.clone();
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    let pacing = std::thread::Builder::new().name("aiperf-pacer".into()).spawn(move || {
        let ctx = pacer_ctx;
        let spinners = ctx.keep_cores_awake.then(|| IdleSpinners::start(workers)).flatten();
        let cpu_before_ns = thread_cpu_ns();
        let offsets_ns = offsets_ns.take_while(|offset_ns| stop_ns.is_none_or(|stop| origin_ns + offset_ns < stop));
        let stop = || abandoned.load(Ordering::Relaxed) || ctx.cancel.is_cancelled();
        let priority = pacer::pace(&ctx.clock, origin_ns, offsets_ns, stop, |arrival| match hand_over.send(arrival) {
            Ok(()) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        });
        let _ = paced.send(Paced {
            priority,
            cpu_ns: thread_cpu_ns().saturating_sub(cpu_before_ns),
            idle_spin_cpu_ns: spinners.map(IdleSpinners::stop),
        });
    });
    if let Err(e) = pacing {
        tracing::error!("cannot start the open-loop pacer thread: {e}; the phase sends nothing");
        return SendWindow::default();
    }
    let index = run.index;
    // The pacer keeps the idle cores awake, if asked to; the timer need not do it too.
    let timer = PreciseTimer::new(ctx.clock, false, 0);
    let mut player = Player::new(ctx, run, trees, index, Manner::PHASE, timer);
    player.arrivals = Some(RootArrivals::new(handed_over, max_roots, cap_ramp_s));
    player.play().await;
    drop(stop_pacer);
    let _ = player.run.counters.branch_stats.set(player.branch_stats.settled());
    let mut window = player.finish();
    if let Ok(paced) = pacing_done.await {
        window.add_pacer_cost(paced.cpu_ns, paced.priority, paced.idle_spin_cpu_ns);
    }
    window
}

/// What the pacer thread reports once it stops.
struct Paced {
    priority: PacerPriority,
    cpu_ns: u64,
    idle_spin_cpu_ns: Option<u64>,
}
