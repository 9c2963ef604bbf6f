//! What every session of a scripted phase shares: the phase, the runtime its steps go out on,
//! the other endpoints' clients, the request and session counts that stop it, the tally, the
//! token counts of the texts its sessions send again and again, and the chat bodies' fields.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::clients::EndpointClients;
use super::history::TextCounts;
use super::tally::Tally;
use crate::load::scripted::ScriptedPhase;
use crate::plan::Endpoint;
use crate::request_bodies::chat_step_base;

/// A chat step's endpoint (None: the run's own) and `max_tokens`, and that endpoint's fields.
type ChatBase = (Option<Endpoint>, Option<u64>, Arc<serde_json::Map<String, Value>>);

/// What every session of a phase shares.
pub struct PhaseShared {
    pub phase: ScriptedPhase,
    pub runtime: tokio::runtime::Handle,
    pub clients: EndpointClients,
    /// `aiperf check`'s trial: client-side waits take no time.
    pub trial: bool,
    pub next_request: AtomicU64,
    pub next_session: AtomicU64,
    /// Sessions that ended in a row as soon as they started, without a request or a wait (a
    /// step resets it).
    pub idle_sessions: AtomicU64,
    pub live_sessions: AtomicU64,
    pub peak_live_sessions: AtomicU64,
    pub tally: Mutex<Tally>,
    /// Token counts of the texts sent so far (a system prompt, a task, a tool's output), so
    /// each is counted once per phase, not once per step.
    pub token_counts: Mutex<KeptCounts>,
    /// The endpoint fields of the chat steps sent so far, by endpoint and `max_tokens`.
    pub chat_bases: Mutex<Vec<ChatBase>>,
}

/// Texts up to this long have their token counts kept.
const KEPT_COUNT_TEXT_BYTES: usize = 16 * 1024;

/// The kept texts hold at most this many bytes; later texts are counted each time.
const KEPT_COUNTS_BYTES: usize = 16 * 1024 * 1024;

/// The token counts kept, by text (its tokens, and what it gains after a joining space), and
/// the bytes of those texts. Looked up for every text of every step, texts of up to 16 KiB:
/// hashed with foldhash, not SipHash.
#[derive(Default)]
pub struct KeptCounts {
    counts: foldhash::HashMap<String, (u64, i64)>,
    bytes: usize,
}

impl KeptCounts {
    fn get(&self, text: &str) -> Option<(u64, i64)> {
        self.counts.get(text).copied()
    }

    /// Keep `text`'s count while the kept texts stay within their bytes.
    fn keep(&mut self, text: &str, tokens: (u64, i64)) {
        if self.bytes + text.len() <= KEPT_COUNTS_BYTES && self.counts.insert(text.to_string(), tokens).is_none() {
            self.bytes += text.len();
        }
    }
}

/// At most this many chat steps' endpoint fields are kept; others are built for each step.
const KEPT_CHAT_BASES: usize = 64;

/// After this many sessions in a row that ended at once (a function that fails before its
/// first step, or never takes one nor waits) the phase starts no more: it would spin, and one
/// with a request limit would never end.
pub const IDLE_SESSIONS_LIMIT: u64 = 1_000;

impl PhaseShared {
    /// The phase sends no more: its duration is over or a stop signal came.
    pub fn stopped(&self) -> bool {
        self.phase.ctx.cancel.is_cancelled() || self.phase.deadlines.sending_over()
    }

    /// Whether the phase may start another session: it sends on, its sessions are not idle,
    /// and neither its request limit nor its session limit is reached.
    pub fn may_start(&self) -> bool {
        let reached =
            |limit: Option<u64>, count: &AtomicU64| limit.is_some_and(|limit| count.load(Ordering::Relaxed) >= limit);
        !self.stopped()
            && self.idle_sessions.load(Ordering::Relaxed) < IDLE_SESSIONS_LIMIT
            && !reached(self.phase.run.phase.requests, &self.next_request)
            && !reached(self.phase.run.phase.sessions, &self.next_session)
    }

    /// The next session's id, or None once the phase starts no more.
    pub fn next_session(&self) -> Option<u64> {
        if !self.may_start() {
            return None;
        }
        let id = self.next_session.fetch_add(1, Ordering::Relaxed);
        match self.phase.run.phase.sessions {
            Some(limit) if id >= limit => None,
            _ => Some(id),
        }
    }

    /// The fields of a chat step to `endpoint` (None: the run's own) asking for `max_tokens`.
    pub fn chat_base(
        &self,
        endpoint: Option<&Endpoint>,
        max_tokens: Option<u64>,
    ) -> Arc<serde_json::Map<String, Value>> {
        let mut bases = self.chat_bases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let kept = bases.iter().find(|(known, tokens, _)| known.as_ref() == endpoint && *tokens == max_tokens);
        if let Some((_, _, base)) = kept {
            return base.clone();
        }
        let base = Arc::new(chat_step_base(endpoint.unwrap_or(&self.phase.hook.endpoint), max_tokens));
        if bases.len() < KEPT_CHAT_BASES {
            bases.push((endpoint.cloned(), max_tokens, base.clone()));
        }
        base
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, KeptCounts> {
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
            _ => {
                self.idle_sessions.store(0, Ordering::Relaxed);
                Some(index)
            }
        }
    }
}

impl TextCounts for PhaseShared {
    fn in_body(&self, text: &str, first: bool) -> u64 {
        let kept = text.len() <= KEPT_COUNT_TEXT_BYTES;
        let remembered = if kept { self.counts().get(text) } else { None };
        let (tokens, join_delta) = remembered.unwrap_or_else(|| {
            let tokenizer = &self.phase.ctx.tokenizer;
            let counted = (tokenizer.count(text) as u64, tokenizer.join_delta(text));
            if kept {
                self.counts().keep(text, counted);
            }
            counted
        });
        if first { tokens } else { tokens.saturating_add_signed(join_delta) }
    }

    fn join_delta(&self, text: &str) -> i64 {
        self.phase.ctx.tokenizer.join_delta(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_kept_up_to_their_bytes_and_a_text_once() {
        let mut kept = KeptCounts::default();
        let text = |index: usize| format!("{index:0>width$}", width = KEPT_COUNT_TEXT_BYTES);
        let fitting = KEPT_COUNTS_BYTES / KEPT_COUNT_TEXT_BYTES;
        for index in 0..fitting {
            kept.keep(&text(index), (7, 1));
            kept.keep(&text(index), (7, 1));
        }
        assert_eq!((kept.counts.len(), kept.bytes), (fitting, KEPT_COUNTS_BYTES), "each text once");
        kept.keep(&text(fitting), (7, 1));
        assert_eq!(kept.get(&text(fitting)), None, "past the bytes, a text is counted each time");
        assert_eq!(kept.get(&text(0)), Some((7, 1)));
    }
}
