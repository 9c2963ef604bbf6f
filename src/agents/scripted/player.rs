//! Plays a scripted phase: its users shared out among a few script workers (`workers.rs`), each
//! user running the phase's session function again and again until the phase stops (or, with a
//! session rate, at each start this thread hands it: `starts.rs`), and the phase's session
//! metrics at its end.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::clients::EndpointClients;
use super::phase::{KeptCounts, PhaseShared};
use super::side_mocks::SideMocks;
use super::starts::{FreeUsers, start_sessions};
use super::tally::Tally;
use super::workers::{SessionProgram, StartedSessions, WorkerQueue, play_share, worker_count};
use crate::load::scripted::{ScriptedPhase, SessionPlayer};
use crate::load::session_starts::SessionStarts;

/// The session functions of a scenario, by the names its plans give them.
pub struct ScriptedPlayer {
    programs: HashMap<String, SessionProgram>,
    trial: bool,
}

impl ScriptedPlayer {
    pub fn new(programs: HashMap<String, SessionProgram>) -> Self {
        Self { programs, trial: false }
    }

    /// A player for `aiperf check`'s trial of the functions: every endpoint a session calls is
    /// the run's built-in server, and its client-side waits take no time.
    pub fn for_trial(programs: HashMap<String, SessionProgram>) -> Self {
        Self { programs, trial: true }
    }
}

impl SessionPlayer for ScriptedPlayer {
    fn play(&self, mut phase: ScriptedPhase) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let program = self.programs.get(&phase.program).cloned();
        let starts = phase.starts.take();
        let trial = self.trial;
        Box::pin(async move {
            let Some(program) = program else {
                tracing::error!("phase `{}`: no session function `{}`", phase.run.phase.name, phase.program);
                return;
            };
            let users = phase.users;
            let shared = Arc::new(PhaseShared {
                clients: EndpointClients::new(
                    crate::load::connection_pool_size(&phase.run.phase),
                    trial,
                    SideMocks::new(phase.hook.builtin_server.clone()),
                ),
                trial,
                runtime: tokio::runtime::Handle::current(),
                phase,
                next_request: AtomicU64::new(0),
                next_session: AtomicU64::new(0),
                idle_sessions: AtomicU64::new(0),
                live_sessions: AtomicU64::new(0),
                peak_live_sessions: AtomicU64::new(0),
                tally: Mutex::new(Tally::default()),
                token_counts: Mutex::new(KeptCounts::default()),
                chat_bases: Mutex::new(Vec::new()),
            });
            let (done_tx, done_rx) = tokio::sync::oneshot::channel();
            let players = shared.clone();
            let started = std::thread::Builder::new().name("scripted-users".into()).spawn(move || {
                run_users(&players, &program, users, starts);
                let _ = done_tx.send(());
            });
            match started {
                Ok(_) => {
                    let _ = done_rx.await;
                }
                Err(e) => tracing::error!("cannot start the scripted sessions' threads: {e}"),
            }
            shared.clients.side_mocks.stop().await;
            let peak_live = shared.peak_live_sessions.load(Ordering::Relaxed);
            let summary = shared.tally.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).summary(peak_live);
            let _ = shared.phase.run.counters.scripted_sessions.set(summary);
        })
    }
}

/// Share `users` out among the script workers, start them, start the sessions at `starts`
/// (a phase with a session rate), and wait for the workers.
fn run_users(shared: &Arc<PhaseShared>, program: &SessionProgram, users: usize, starts: Option<SessionStarts>) {
    let workers = worker_count(users, shared.phase.workers);
    let shares: Vec<usize> =
        (0..workers).map(|worker| users / workers + usize::from(worker < users % workers)).collect();
    let free = FreeUsers::new(&shares);
    let time = std::thread::scope(|scope| {
        let mut threads = Vec::with_capacity(workers);
        let mut queues = Vec::with_capacity(workers);
        for (worker, &share) in shares.iter().enumerate() {
            let queue = WorkerQueue::new();
            let queue_tx = queue.tx.clone();
            let started = starts.as_ref().map(|_| StartedSessions { worker, free: &free });
            let thread = std::thread::Builder::new()
                .name(format!("script-worker-{worker}"))
                .spawn_scoped(scope, move || play_share(shared, program, share, queue, started));
            match thread {
                Ok(thread) => {
                    threads.push(thread);
                    queues.push(queue_tx);
                }
                Err(e) => {
                    tracing::warn!(
                        "scripted sessions: started {worker} of {workers} script workers; the system refused more ({e})"
                    );
                    break;
                }
            }
        }
        // Without a worker (the system refused every thread) no session could start.
        if let Some(starts) = starts.filter(|_| !queues.is_empty()) {
            (queues.len()..workers).for_each(|refused| free.retire(refused));
            start_sessions(starts, shared, &free, &queues);
        }
        threads.into_iter().filter_map(|thread| thread.join().ok()).sum()
    });
    let _ = shared.phase.run.counters.script_workers.set(time);
}
