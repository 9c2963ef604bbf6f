//! Which prepared request a phase's `n`-th request sends: the dataset's order, again and again;
//! a shuffled file is shuffled anew for each pass after the first, as AIPerf 0.13's shuffle
//! sampler does once it has gone through every entry (the list it went through, shuffled again
//! by the same generator, so the passes are AIPerf's for the same seed); a randomly sampled file
//! draws an entry for each request, or a session for each new session of a multi-turn file, as
//! AIPerf's random sampler does.

use std::sync::Arc;

use super::PreparedRequest;
use crate::dataset::requests::conversations;
use crate::plan::{AtEnd, Dataset, FileDataset, Phase, Plan, Sampling};
use crate::rng::aiperf_streams::{SAMPLER_RANDOM, SAMPLER_SHUFFLE, derived, derived_numpy};

/// The most requests whose order is laid out ahead; later ones repeat the laid-out passes.
const MOST_LAID_OUT: u64 = 1 << 20;

#[derive(Debug, Default)]
pub struct DatasetOrder {
    /// Each pass after the first, as indices into the prepared requests (none: every pass is
    /// the first's order).
    later_passes: Vec<Vec<u32>>,
    /// The prepared request each request draws (a random file's), when not empty.
    picks: Vec<u32>,
    /// The session each new session of a multi-turn file plays.
    pub sessions: SessionOrder,
}

/// Which of a multi-turn file's sessions the run's `n`-th session plays: the file's order,
/// wrapping, a shuffled file's passes, or a random file's draw for each.
#[derive(Debug, Clone, Default)]
pub struct SessionOrder(Arc<[u32]>);

impl SessionOrder {
    /// The session (of `count`) that session `n` of the run plays.
    pub fn session(&self, n: u64, count: usize) -> usize {
        match self.0.len() as u64 {
            0 => (n % count.max(1) as u64) as usize,
            drawn => self.0[(n % drawn) as usize] as usize,
        }
    }
}

impl DatasetOrder {
    /// The order of `plan`'s prepared `requests` (of its sessions, for a multi-turn file):
    /// reshuffled passes for a shuffled file that wraps, or a draw per request (per session)
    /// for a random one, enough for the phases' requests or sessions (or as many as
    /// `MOST_LAID_OUT` allows when a phase runs for a duration; later ones repeat them).
    pub fn of(plan: &Plan, requests: &[PreparedRequest]) -> Self {
        let len = requests.len();
        let Dataset::File(file) = &plan.dataset else {
            return Self::default();
        };
        let random = |count: usize, wanted: u64| -> Vec<u32> {
            let mut rng = derived(file.random_seed, SAMPLER_RANDOM);
            (0..wanted).map(|_| rng.below(count) as u32).collect()
        };
        if requests.iter().any(|request| request.turn.is_some()) {
            let count = conversations(requests).count();
            // Each session takes at least one request.
            let wanted = laid_out(plan, |phase| match (phase.requests, phase.sessions) {
                (Some(requests), Some(sessions)) => Some(requests.min(sessions)),
                (requests, sessions) => requests.or(sessions),
            });
            let sessions: Vec<u32> = match file {
                _ if count < 2 => return Self::default(),
                file if file.draws_per_request() => random(count, wanted),
                FileDataset { sampling: Sampling::Shuffle, at_end: AtEnd::Wrap, random_seed, .. } => {
                    let later = reshuffled_passes(*random_seed, count, wanted);
                    (0..count as u32).chain(later.into_iter().flatten()).collect()
                }
                _ => return Self::default(),
            };
            return Self { sessions: SessionOrder(sessions.into()), ..Self::default() };
        }
        if len < 2 || len as u64 >= MOST_LAID_OUT {
            return Self::default();
        }
        // Warm-up phases draw first and the phases after them draw on (`dataset_offset`).
        let wanted = laid_out(plan, |phase| phase.requests);
        match file {
            file if file.draws_per_request() => Self { picks: random(len, wanted), ..Self::default() },
            FileDataset { sampling: Sampling::Shuffle, at_end: AtEnd::Wrap, random_seed, .. } => {
                Self { later_passes: reshuffled_passes(*random_seed, len, wanted), ..Self::default() }
            }
            _ => Self::default(),
        }
    }

    /// The prepared request that request `request_index` of a phase sends, of `len`.
    pub fn index(&self, request_index: u64, len: usize) -> usize {
        if !self.picks.is_empty() {
            return self.picks[(request_index % self.picks.len() as u64) as usize] as usize;
        }
        let len = len.max(1) as u64;
        let (pass, place) = (request_index / len, (request_index % len) as usize);
        if pass == 0 || self.later_passes.is_empty() {
            return place;
        }
        let later = &self.later_passes[((pass - 1) % self.later_passes.len() as u64) as usize];
        later[place] as usize
    }
}

/// The passes after the first over `len` items shuffled with `seed`, enough for `wanted`
/// takes, as indices into the first pass: the first is the items as `dataset::sampling`
/// shuffled them; the generator is brought to where that shuffle left it, then shuffles that
/// list again for each pass.
fn reshuffled_passes(seed: u64, len: usize, wanted: u64) -> Vec<Vec<u32>> {
    let passes = wanted.div_ceil(len as u64).saturating_sub(1) as usize;
    let mut generator = derived_numpy(seed, SAMPLER_SHUFFLE);
    let mut entries: Vec<u32> = (0..len as u32).collect();
    generator.shuffle(&mut entries);
    let mut place_of_entry = vec![0u32; len];
    for (place, entry) in entries.iter().enumerate() {
        place_of_entry[*entry as usize] = place as u32;
    }
    (0..passes)
        .map(|_| {
            generator.shuffle(&mut entries);
            entries.iter().map(|entry| place_of_entry[*entry as usize]).collect()
        })
        .collect()
}

/// How many draws to lay out for the phases of `plan`, each drawing at most `most` (none: for
/// as long as it runs), up to `MOST_LAID_OUT`.
fn laid_out(plan: &Plan, most: impl Fn(&Phase) -> Option<u64>) -> u64 {
    let limits: Option<Vec<u64>> = plan.phases.iter().map(most).collect();
    limits.map_or(MOST_LAID_OUT, |limits| limits.iter().sum::<u64>().min(MOST_LAID_OUT))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Endpoint, FileFormat, Phase};

    fn plan(sampling: Sampling, requests: Option<u64>) -> Plan {
        let endpoint: Endpoint = serde_json::from_value(
            serde_json::json!({ "url": "mock", "model": "m", "type": "chat", "streaming": false }),
        )
        .unwrap();
        let phase = Phase::profiling(1, requests);
        let dataset = Dataset::File(FileDataset {
            sampling,
            random_seed: 3,
            ..FileDataset::of("x.jsonl", FileFormat::SingleTurn)
        });
        Plan::new("order", endpoint, dataset, vec![phase], 60.0)
    }

    #[test]
    fn a_shuffled_file_is_reshuffled_each_pass_and_a_random_one_draws_per_request_as_aiperf_does() {
        let requests = |count: usize| -> Vec<PreparedRequest> {
            (0..count)
                .map(|_| PreparedRequest {
                    body: bytes::Bytes::new(),
                    input_tokens: 1,
                    max_tokens: None,
                    system_prompt: None,
                    user_context: None,
                    turn: None,
                    audio_seconds: None,
                    verbatim: false,
                    headers: None,
                    conversation: None,
                    answers_as_parts: false,
                    joins: Default::default(),
                    trace: None,
                })
                .collect()
        };
        let order = DatasetOrder::of(&plan(Sampling::Shuffle, Some(40)), &requests(10));
        let passes: Vec<Vec<usize>> =
            (0..4).map(|pass| (0..10).map(|place| order.index(pass * 10 + place, 10)).collect()).collect();
        assert_eq!(passes[0], (0..10).collect::<Vec<_>>(), "the first pass is the dataset's own order");
        for pass in &passes[1..] {
            let mut sorted = pass.clone();
            sorted.sort();
            assert_eq!(sorted, (0..10).collect::<Vec<_>>(), "every entry once a pass: {pass:?}");
        }
        assert!(passes[1] != passes[0] && passes[2] != passes[1], "{passes:?}");
        // AIPerf 0.13's second pass over an 8-line file with seed 3 (run beside this one): lines
        // 7, 3, 2, 6, 1, 5, 4, 0; the prepared requests are its first pass, lines 4, 7, 2, 5, 1, 3, 6, 0.
        let first_pass = [4, 7, 2, 5, 1, 3, 6, 0];
        let order = DatasetOrder::of(&plan(Sampling::Shuffle, Some(16)), &requests(8));
        let second: Vec<usize> = (8..16).map(|index| first_pass[order.index(index, 8)]).collect();
        assert_eq!(second, [7, 3, 2, 6, 1, 5, 4, 0]);
        // AIPerf 0.13's random sampler over the same file: a line drawn for each of 20 requests.
        let order = DatasetOrder::of(&plan(Sampling::Random, Some(20)), &requests(8));
        let drawn: Vec<usize> = (0..20).map(|index| order.index(index, 8)).collect();
        assert_eq!(drawn, [5, 3, 4, 1, 7, 2, 2, 6, 3, 2, 6, 1, 6, 5, 3, 7, 6, 6, 2, 2]);
        let sequential = DatasetOrder::of(&plan(Sampling::Sequential, Some(40)), &requests(10));
        assert_eq!((0..25).map(|i| sequential.index(i, 10)).collect::<Vec<_>>()[20..], [0, 1, 2, 3, 4]);
    }
}
