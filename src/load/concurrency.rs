//! Closed-loop concurrency: N users, each sends its next request as soon as its last one ends;
//! optionally at most P of them wait for their first token (prefill) at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Semaphore;

use super::{LoadContext, PhaseDeadlines, PhaseRun, send_one};
use crate::rng::SeededRng;

pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, users: usize, prefill_concurrency: Option<usize>) {
    let prefill = prefill_concurrency.map(|places| Arc::new(Semaphore::new(places)));
    let deadlines = PhaseDeadlines::of(&run.phase);
    let issued = Arc::new(AtomicU64::new(0));
    let users = match run.phase.requests {
        Some(limit) => users.min(limit.max(1) as usize),
        None => users,
    };
    let mut workers = Vec::with_capacity(users);
    for user in 0..users {
        let (ctx, run, issued, prefill) = (ctx.clone(), run.clone(), issued.clone(), prefill.clone());
        workers.push(tokio::spawn(async move {
            let mut ids = SeededRng::new(ctx.id_seed ^ ((run.index as u64) << 32) ^ user as u64);
            loop {
                if ctx.cancel.is_cancelled() || deadlines.sending_over() {
                    break;
                }
                let request_index = issued.fetch_add(1, Ordering::Relaxed);
                if run.phase.requests.is_some_and(|limit| request_index >= limit) {
                    break;
                }
                // In a closed loop a request is due the moment its user is free.
                let scheduled_ns = ctx.clock.now_ns();
                send_one(&ctx, &run, deadlines, &mut ids, request_index, scheduled_ns, prefill.as_deref()).await;
            }
        }));
    }
    for worker in workers {
        if let Err(e) = worker.await {
            tracing::error!("a load worker stopped unexpectedly: {e}");
        }
    }
}
