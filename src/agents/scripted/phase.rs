//! What every session of a scripted phase shares: the phase, the runtime its steps go out on,
//! the other endpoints' clients, the request and session counts that stop it, the tally, and
//! the token counts of the texts its sessions send again and again.

use std::collections::HashMap;
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
    /// Token counts of the texts sent so far (a system prompt, a task, a tool's output), so
    /// each is counted once per phase, not once per step.
    pub token_counts: Mutex<HashMap<String, u64>>,
}

/// Texts up to this long have their token counts kept.
const KEPT_COUNT_TEXT_BYTES: usize = 16 * 1024;

/// At most this many texts' counts are kept; later texts are counted each time.
const KEPT_COUNTS: usize = 16 * 1024;

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

    /// The tokens of `text` as the run's tokenizer counts them.
    pub fn count_tokens(&self, text: &str) -> u64 {
        let kept = text.len() <= KEPT_COUNT_TEXT_BYTES;
        if kept && let Some(&tokens) = self.counts().get(text) {
            return tokens;
        }
        let tokens = self.phase.hook.tokenizer.count(text) as u64;
        if kept {
            let mut counts = self.counts();
            if counts.len() < KEPT_COUNTS {
                counts.insert(text.to_string(), tokens);
            }
        }
        tokens
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.token_counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
