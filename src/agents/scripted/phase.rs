//! What every session of a scripted phase shares: the phase, the runtime its steps go out on,
//! the other endpoints' clients, the request and session counts that stop it, and the tally.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::clients::EndpointClients;
use super::tally::Tally;
use crate::load::scripted::ScriptedPhase;

/// What every session of a phase shares.
pub struct PhaseShared {
    pub phase: ScriptedPhase,
    pub runtime: tokio::runtime::Handle,
    pub clients: EndpointClients,
    pub next_request: AtomicU64,
    pub next_session: AtomicU64,
    pub live_sessions: AtomicU64,
    pub peak_live_sessions: AtomicU64,
    pub tally: Mutex<Tally>,
}

impl PhaseShared {
    /// The phase sends no more: its duration is over or a stop signal came.
    pub fn stopped(&self) -> bool {
        self.phase.ctx.cancel.is_cancelled() || self.phase.deadlines.sending_over()
    }

    /// The next session's id, or None once the phase starts no more.
    pub fn next_session(&self) -> Option<u64> {
        if self.stopped() {
            return None;
        }
        if let Some(limit) = self.phase.run.phase.requests
            && self.next_request.load(Ordering::Relaxed) >= limit
        {
            return None;
        }
        let id = self.next_session.fetch_add(1, Ordering::Relaxed);
        match self.phase.run.phase.sessions {
            Some(limit) if id >= limit => None,
            _ => Some(id),
        }
    }

    /// The phase's next request index, or None once the phase sends no more.
    pub fn claim_request(&self) -> Option<u64> {
        if self.stopped() {
            return None;
        }
        let index = self.next_request.fetch_add(1, Ordering::Relaxed);
        match self.phase.run.phase.requests {
            Some(limit) if index >= limit => None,
            _ => Some(index),
        }
    }
}
