//! AIPerf 0.13's session sampling of a Baseten trace (`trace_session_sample_ratio`): each
//! session, taken in the order of its first request (then of its id), is kept when its draw
//! from the `dataset.loader.baseten_trace.session_sampling` stream falls under the ratio (one
//! session is drawn when none is kept); then each row without a session, in file order, the
//! same way. A trace without a session column is not sampled (AIPerf warns and replays it all).

use std::collections::{HashMap, HashSet};

use crate::plan::FileDataset;
use crate::rng::aiperf_streams::{BASETEN_SESSION_SAMPLING, derived};

/// The share of a trace's sessions to replay, drawn from the run's seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionSample {
    pub ratio: f64,
    pub seed: u64,
}

impl SessionSample {
    /// The sample the dataset `spec` asks for, if any.
    pub fn of(spec: &FileDataset) -> Option<Self> {
        spec.trace.session_sample_ratio.map(|ratio| Self { ratio, seed: spec.random_seed })
    }
}

/// Whether each of `rows` (its session, if it has one, and its start in ms) is replayed.
pub fn kept(rows: &[(Option<&str>, u64)], sample: SessionSample) -> Vec<bool> {
    let mut first_ms: HashMap<&str, u64> = HashMap::new();
    for &(session, start_ms) in rows {
        if let Some(session) = session {
            let first = first_ms.entry(session).or_insert(start_ms);
            *first = (*first).min(start_ms);
        }
    }
    let mut sessions: Vec<(u64, &str)> = first_ms.into_iter().map(|(session, first)| (first, session)).collect();
    sessions.sort_unstable();
    let mut rng = derived(sample.seed, BASETEN_SESSION_SAMPLING);
    let mut chosen: Vec<&str> =
        sessions.iter().filter(|_| rng.random() < sample.ratio).map(|&(_, session)| session).collect();
    if chosen.is_empty() && !sessions.is_empty() {
        chosen.push(sessions[rng.below(sessions.len())].1);
    }
    let chosen: HashSet<&str> = chosen.into_iter().collect();
    rows.iter()
        .map(|&(session, _)| match session {
            Some(session) => chosen.contains(session),
            None => rng.random() < sample.ratio,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPython 3.11 with AIPerf's derivation (seed 7): `uniform(0, 1)` per session in the order
    /// of (first start, id), then per row without a session: the sessions and rows AIPerf 0.13's
    /// `_sample_session_ids` keeps at a ratio of 0.5.
    #[test]
    fn sessions_and_rows_without_one_are_aiperfs_draws() {
        let rows = [
            (Some("b"), 300),
            (Some("a"), 100),
            (None, 150),
            (Some("c"), 100),
            (Some("a"), 500),
            (Some("d"), 200),
            (None, 600),
            (Some("b"), 250),
            (None, 700),
        ];
        let kept = kept(&rows, SessionSample { ratio: 0.5, seed: 7 });
        assert_eq!(kept, [false, false, true, false, false, true, true, false, false], "session d and two rows");
    }

    /// The same stream: no draw under 1e-12, then `choice` of the two sessions picks `a`.
    #[test]
    fn one_session_is_drawn_when_the_ratio_keeps_none() {
        let rows = [(Some("a"), 1), (Some("b"), 2), (Some("a"), 3)];
        assert_eq!(kept(&rows, SessionSample { ratio: 1e-12, seed: 7 }), [true, false, true]);
    }
}
