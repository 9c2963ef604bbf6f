//! Plays a scripted phase: its users shared out among a few script workers (`workers.rs`), each
//! user running the phase's session function again and again until the phase stops, and the
//! phase's session metrics at its end.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::clients::EndpointClients;
use super::phase::{KeptCounts, PhaseShared};
use super::tally::Tally;
use super::workers::{SessionProgram, play_share, worker_count};
use crate::load::scripted::{ScriptedPhase, SessionPlayer};

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
    fn play(&self, phase: ScriptedPhase) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let program = self.programs.get(&phase.program).cloned();
        let trial = self.trial;
        Box::pin(async move {
            let Some(program) = program else {
                tracing::error!("phase `{}`: no session function `{}`", phase.run.phase.name, phase.program);
                return;
            };
            let users = phase.users;
            let shared = Arc::new(PhaseShared {
                clients: EndpointClients::new(users, trial),
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
                run_users(&players, &program, users);
                let _ = done_tx.send(());
            });
            match started {
                Ok(_) => {
                    let _ = done_rx.await;
                }
                Err(e) => tracing::error!("cannot start the scripted sessions' threads: {e}"),
            }
            let peak_live = shared.peak_live_sessions.load(Ordering::Relaxed);
            let summary = shared.tally.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).summary(peak_live);
            let _ = shared.phase.run.counters.scripted_sessions.set(summary);
        })
    }
}

/// Share `users` out among the script workers, start them, and wait for them.
fn run_users(shared: &Arc<PhaseShared>, program: &SessionProgram, users: usize) {
    let workers = worker_count(users, shared.phase.workers);
    let mut threads = Vec::with_capacity(workers);
    for worker in 0..workers {
        let share = users / workers + usize::from(worker < users % workers);
        let (shared, program) = (shared.clone(), program.clone());
        let thread = std::thread::Builder::new()
            .name(format!("script-worker-{worker}"))
            .spawn(move || play_share(&shared, &program, share));
        match thread {
            Ok(thread) => threads.push(thread),
            Err(e) => {
                tracing::warn!(
                    "scripted sessions: started {worker} of {workers} script workers; the system refused more ({e})"
                );
                break;
            }
        }
    }
    let time = threads.into_iter().filter_map(|thread| thread.join().ok()).sum();
    let _ = shared.phase.run.counters.script_workers.set(time);
}
