//! Simulated speculative decoding: after the first token, each decode step drafts k tokens,
//! accepts a prefix of them and emits the accepted ones plus one; reported per request in
//! vLLM's `metrics.speculative_decoding` shape and counted for its Prometheus families.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde_json::json;

use crate::rng::SeededRng;

/// The most draft tokens per step the mock simulates.
pub const MAX_SPEC_TOKENS: u32 = 32;

pub struct SpecDecoder {
    draft_tokens: u32,
    /// The chance that a draft token is accepted once every draft token before it was: chosen
    /// so that the expected share of draft tokens accepted is the configured rate.
    position_acceptance: f64,
}

impl SpecDecoder {
    /// `draft_tokens` (1 to `MAX_SPEC_TOKENS`) per step, of which `draft_acceptance_rate` (0 to 1)
    /// are accepted in the long run: the rate vLLM reports, accepted over drafted tokens.
    pub fn new(draft_tokens: u32, draft_acceptance_rate: f64) -> Self {
        let draft_tokens = draft_tokens.clamp(1, MAX_SPEC_TOKENS);
        let rate = draft_acceptance_rate.clamp(0.0, 1.0);
        Self { draft_tokens, position_acceptance: position_acceptance(draft_tokens, rate) }
    }

    pub fn draft_tokens(&self) -> u32 {
        self.draft_tokens
    }

    /// The decode steps of a request generating `output_tokens` (at least 1): the first token
    /// comes from the prefill, each step after it accepts draft tokens one by one until the
    /// first rejection, with a generator seeded by `seed`. A step that would pass the end
    /// emits only what is left (its acceptance still counts, as the verifier saw it).
    pub fn simulate(&self, seed: u64, output_tokens: u64) -> SpecDecodeRun {
        let mut rng = SeededRng::new(seed);
        let mut histogram = vec![0; self.draft_tokens as usize + 1];
        let mut emitted_after_step = Vec::new();
        let mut emitted = 1;
        while emitted < output_tokens {
            let mut accepted = 0;
            while accepted < self.draft_tokens as usize && rng.next_f64() < self.position_acceptance {
                accepted += 1;
            }
            histogram[accepted] += 1;
            emitted = (emitted + accepted as u64 + 1).min(output_tokens);
            emitted_after_step.push(emitted);
        }
        SpecDecodeRun { draft_tokens: self.draft_tokens, histogram, emitted_after_step }
    }
}

/// The α in [0, 1] with (α + α² + … + α^k) / k = `rate`: the expected accepted prefix of k
/// drafts over k. The left side grows with α, so bisection finds it.
fn position_acceptance(draft_tokens: u32, rate: f64) -> f64 {
    let expected_rate =
        |alpha: f64| (1..=draft_tokens).map(|power| alpha.powi(power as i32)).sum::<f64>() / f64::from(draft_tokens);
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    for _ in 0..64 {
        let middle = (low + high) / 2.0;
        if expected_rate(middle) < rate {
            low = middle;
        } else {
            high = middle;
        }
    }
    (low + high) / 2.0
}

/// One request's simulated decode steps.
#[derive(Debug)]
pub struct SpecDecodeRun {
    draft_tokens: u32,
    /// Steps by accepted draft tokens (index j: steps that accepted exactly j).
    histogram: Vec<u64>,
    /// Output tokens emitted after each step, the first token included.
    emitted_after_step: Vec<u64>,
}

impl SpecDecodeRun {
    pub fn steps(&self) -> u64 {
        self.emitted_after_step.len() as u64
    }

    pub fn accepted_tokens(&self) -> u64 {
        self.histogram.iter().zip(0..).map(|(steps, accepted)| steps * accepted).sum()
    }

    pub fn draft_tokens(&self) -> u64 {
        self.steps() * u64::from(self.draft_tokens)
    }

    /// Output tokens emitted once `steps` decode steps ran (1 before any: the prefill's).
    pub fn emitted_after(&self, steps: u64) -> u64 {
        match usize::try_from(steps).ok().and_then(|steps| steps.checked_sub(1)) {
            None => 1,
            Some(index) => self.emitted_after_step.get(index).or(self.emitted_after_step.last()).copied().unwrap_or(1),
        }
    }

    /// The decode step that emits token `index` (0: the prefill, for the first token).
    pub fn step_of_token(&self, index: u64) -> u64 {
        if index == 0 {
            return 0;
        }
        self.emitted_after_step.partition_point(|emitted| *emitted <= index) as u64 + 1
    }

    /// `{"speculative_decoding":{…}}`: vLLM's per-request metrics
    /// (`--per-request-spec-decode-metrics`), for the response root's `metrics`.
    pub fn metrics_json(&self) -> String {
        let (steps, accepted, drafted) = (self.steps(), self.accepted_tokens(), self.draft_tokens());
        let ratio = |numerator: u64, denominator: u64| {
            if denominator == 0 { 0.0 } else { numerator as f64 / denominator as f64 }
        };
        let mean_acceptance_length = if steps == 0 { 0.0 } else { 1.0 + ratio(accepted, steps) };
        json!({"speculative_decoding": {
            "acceptance_histogram": self.histogram,
            "num_spec_steps": steps,
            "num_spec_tokens": self.draft_tokens,
            "mean_acceptance_length": mean_acceptance_length,
            "draft_acceptance_rate": ratio(accepted, drafted),
            "num_accepted_draft_tokens": accepted,
            "num_draft_tokens": drafted,
        }})
        .to_string()
    }
}

/// vLLM's speculative decoding counters for one model.
pub struct SpecDecodeCounters {
    pub drafts: AtomicU64,
    pub draft_tokens: AtomicU64,
    pub accepted_tokens: AtomicU64,
    /// Accepted draft tokens by their position in the draft.
    pub accepted_per_position: [AtomicU64; MAX_SPEC_TOKENS as usize],
}

impl SpecDecodeCounters {
    pub fn new() -> Self {
        Self {
            drafts: AtomicU64::new(0),
            draft_tokens: AtomicU64::new(0),
            accepted_tokens: AtomicU64::new(0),
            accepted_per_position: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Count a finished request's steps.
    pub fn record(&self, run: &SpecDecodeRun) {
        self.drafts.fetch_add(run.steps(), Relaxed);
        self.draft_tokens.fetch_add(run.draft_tokens(), Relaxed);
        self.accepted_tokens.fetch_add(run.accepted_tokens(), Relaxed);
        // Position i was accepted by every step that accepted more than i tokens.
        let mut accepted_beyond = run.steps();
        for (position, steps) in self.accepted_per_position.iter().zip(&run.histogram) {
            accepted_beyond -= steps;
            position.fetch_add(accepted_beyond, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn over_many_seeded_steps_the_acceptance_rate_is_the_configured_one() {
        for (draft_tokens, rate) in [(1, 0.5), (3, 0.7), (5, 0.3), (4, 0.9)] {
            let decoder = SpecDecoder::new(draft_tokens, rate);
            let (mut accepted, mut drafted) = (0, 0);
            for seed in 0..200 {
                let run = decoder.simulate(seed, 1_000);
                accepted += run.accepted_tokens();
                drafted += run.draft_tokens();
            }
            let measured = accepted as f64 / drafted as f64;
            assert!((measured - rate).abs() < 0.01 * rate, "k {draft_tokens}, p {rate}: measured {measured}");
        }
    }

    #[test]
    fn the_steps_emit_accepted_plus_one_and_the_payload_adds_up() {
        let decoder = SpecDecoder::new(3, 0.6);
        let run = decoder.simulate(7, 100);
        let again = decoder.simulate(7, 100);
        assert_eq!((&again.histogram, &again.emitted_after_step), (&run.histogram, &run.emitted_after_step));
        assert_eq!(run.emitted_after(0), 1);
        assert_eq!(run.emitted_after(run.steps()), 100);
        assert_eq!(run.emitted_after(run.steps() + 5), 100);
        for step in 1..run.steps() {
            let gained = run.emitted_after(step) - run.emitted_after(step - 1);
            assert!((1..=4).contains(&gained), "step {step} emitted {gained}");
        }
        for index in 0..100 {
            let step = run.step_of_token(index);
            assert!(run.emitted_after(step) > index && (step == 0 || run.emitted_after(step - 1) <= index));
        }
        let payload: Value = serde_json::from_str(&run.metrics_json()).unwrap();
        let stats = &payload["speculative_decoding"];
        let histogram: Vec<u64> =
            stats["acceptance_histogram"].as_array().unwrap().iter().map(|count| count.as_u64().unwrap()).collect();
        assert_eq!(histogram.len(), 4, "k + 1 buckets");
        assert_eq!(histogram.iter().sum::<u64>(), stats["num_spec_steps"].as_u64().unwrap());
        let weighted: u64 = histogram.iter().zip(0..).map(|(steps, accepted)| steps * accepted).sum();
        assert_eq!(weighted, stats["num_accepted_draft_tokens"].as_u64().unwrap());
        assert_eq!(stats["num_draft_tokens"].as_u64().unwrap(), 3 * run.steps());
        assert_eq!(stats["num_spec_tokens"], 3);
        let mean = 1.0 + weighted as f64 / run.steps() as f64;
        assert!((stats["mean_acceptance_length"].as_f64().unwrap() - mean).abs() < 1e-12);
    }

    #[test]
    fn one_output_token_takes_no_step_and_the_edges_hold() {
        let run = SpecDecoder::new(2, 0.5).simulate(1, 1);
        assert_eq!((run.steps(), run.accepted_tokens()), (0, 0));
        let payload: Value = serde_json::from_str(&run.metrics_json()).unwrap();
        assert_eq!(payload["speculative_decoding"]["acceptance_histogram"], serde_json::json!([0, 0, 0]));
        assert_eq!(SpecDecoder::new(4, 1.0).simulate(1, 11).steps(), 2, "every draft accepted: 5 tokens a step");
        assert_eq!(SpecDecoder::new(4, 0.0).simulate(1, 11).steps(), 10, "none accepted: 1 token a step");
    }

    #[test]
    fn counters_count_drafts_tokens_and_positions() {
        let run = SpecDecodeRun { draft_tokens: 2, histogram: vec![1, 2, 3], emitted_after_step: vec![1; 6] };
        let counters = SpecDecodeCounters::new();
        counters.record(&run);
        assert_eq!(counters.drafts.load(Relaxed), 6);
        assert_eq!(counters.draft_tokens.load(Relaxed), 12);
        assert_eq!(counters.accepted_tokens.load(Relaxed), 8);
        let positions: Vec<u64> = counters.accepted_per_position[..3].iter().map(|count| count.load(Relaxed)).collect();
        assert_eq!(positions, [5, 3, 0]);
    }
}
