//! Plays a scripted phase: one thread per user, each running the phase's session function
//! again and again until the phase stops, and the phase's session metrics at its end.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::clients::EndpointClients;
use super::phase::PhaseShared;
use super::session::Session;
use super::tally::{Ended, Tally};
use crate::load::scripted::{ScriptedPhase, SessionPlayer};

/// Stack of a user's thread: the script's evaluation, never a request (those run on the runtime).
const USER_STACK_BYTES: usize = 1024 * 1024;

/// How a session's function ended: Err holds the script error, naming its `file:line`.
pub type ProgramEnd = Result<(), String>;

/// A session function as the player calls it (the script side wraps the Rhai call).
pub type SessionProgram = Arc<dyn Fn(Session) -> ProgramEnd + Send + Sync>;

/// The session functions of a scenario, by the names its plans give them.
pub struct ScriptedPlayer {
    programs: HashMap<String, SessionProgram>,
}

impl ScriptedPlayer {
    pub fn new(programs: HashMap<String, SessionProgram>) -> Self {
        Self { programs }
    }
}

impl SessionPlayer for ScriptedPlayer {
    fn play(&self, phase: ScriptedPhase) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let program = self.programs.get(&phase.program).cloned();
        Box::pin(async move {
            let Some(program) = program else {
                tracing::error!("phase `{}`: no session function `{}`", phase.run.phase.name, phase.program);
                return;
            };
            let users = phase.users;
            let shared = Arc::new(PhaseShared {
                clients: EndpointClients::new(users),
                runtime: tokio::runtime::Handle::current(),
                phase,
                next_request: AtomicU64::new(0),
                next_session: AtomicU64::new(0),
                live_sessions: AtomicU64::new(0),
                peak_live_sessions: AtomicU64::new(0),
                tally: Mutex::new(Tally::default()),
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

/// Start `users` threads, each playing sessions until the phase stops, and wait for them.
fn run_users(shared: &Arc<PhaseShared>, program: &SessionProgram, users: usize) {
    let mut threads = Vec::with_capacity(users);
    for user in 0..users {
        let (shared, program) = (shared.clone(), program.clone());
        let thread = std::thread::Builder::new()
            .name(format!("session-user-{user}"))
            .stack_size(USER_STACK_BYTES)
            .spawn(move || play_sessions(&shared, &program));
        match thread {
            Ok(thread) => threads.push(thread),
            Err(e) => {
                tracing::warn!("scripted sessions: started {user} of {users} users; the system refused more ({e})");
                break;
            }
        }
    }
    for thread in threads {
        let _ = thread.join();
    }
}

/// One user: a session after another.
fn play_sessions(shared: &Arc<PhaseShared>, program: &SessionProgram) {
    while let Some(id) = shared.next_session() {
        let session = Session::new(shared.clone(), id);
        let live = shared.live_sessions.fetch_add(1, Ordering::Relaxed) + 1;
        shared.peak_live_sessions.fetch_max(live, Ordering::Relaxed);
        let ended = program(session.clone());
        shared.live_sessions.fetch_sub(1, Ordering::Relaxed);
        let outcome = session.finish(ended.err());
        let failure = match &outcome.ended {
            Ended::Failed(error) => Some(error.clone()),
            Ended::Completed | Ended::Cut => None,
        };
        let first_of_its_kind = shared.tally.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).add(outcome);
        if first_of_its_kind && let Some(error) = failure {
            eprintln!("session {id} failed: {error}");
        }
    }
}
