//! Which of an endpoint's models each request of the dataset names (`ModelSelection`, AIPerf's
//! `--model-selection-strategy`): an endpoint per model, and the choice for each request in
//! dataset order (every turn of a conversation counted, as AIPerf counts them); a random choice
//! is AIPerf's draw from its `composer.turn.model_selection` stream for the same seed.

use crate::plan::{Endpoint, ModelSelection};
use crate::rng::aiperf_streams::{MODEL_SELECTION, derived};
use crate::rng::python::PythonRandom;

pub struct ModelChoice {
    /// The endpoint as each model's requests see it (one when it names one model).
    endpoints: Vec<Endpoint>,
    selection: ModelSelection,
    rng: PythonRandom,
    chosen: usize,
}

impl ModelChoice {
    pub fn new(endpoint: &Endpoint, seed: u64) -> Self {
        let endpoints = endpoint
            .models()
            .map(|model| Endpoint { model: model.to_string(), more_models: Vec::new(), ..endpoint.clone() })
            .collect();
        Self { endpoints, selection: endpoint.model_selection, rng: derived(seed, MODEL_SELECTION), chosen: 0 }
    }

    /// The endpoint with its model of rank `rank` (wrapping), for a request whose trace names
    /// its model (AIPerf's weka model map).
    pub fn of_rank(&self, rank: u32) -> &Endpoint {
        &self.endpoints[rank as usize % self.endpoints.len()]
    }

    /// The endpoint, with its model, of the next request of the dataset.
    pub fn next_request(&mut self) -> &Endpoint {
        let count = self.endpoints.len();
        let index = match self.selection {
            _ if count == 1 => 0,
            ModelSelection::RoundRobin => self.chosen % count,
            ModelSelection::Random => self.rng.below(count),
        };
        self.chosen += 1;
        &self.endpoints[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    fn endpoint(selection: ModelSelection) -> Endpoint {
        let mut endpoint = Endpoint::new("mock", "a", EndpointKind::Chat, true);
        endpoint.more_models = vec!["b".into(), "c".into()];
        endpoint.model_selection = selection;
        endpoint
    }

    fn picks(choice: &mut ModelChoice, n: usize) -> Vec<String> {
        (0..n).map(|_| choice.next_request().model.clone()).collect()
    }

    #[test]
    fn round_robin_takes_the_models_in_turn() {
        let mut choice = ModelChoice::new(&endpoint(ModelSelection::RoundRobin), 7);
        assert_eq!(picks(&mut choice, 5), ["a", "b", "c", "a", "b"]);
        assert!(choice.endpoints.iter().all(|endpoint| endpoint.more_models.is_empty()));
    }

    #[test]
    fn random_draws_every_model_from_the_seed_alike_each_time() {
        let draws = |seed| picks(&mut ModelChoice::new(&endpoint(ModelSelection::Random), seed), 300);
        let first = draws(7);
        assert_eq!(first, draws(7), "the same seed, the same models");
        assert_ne!(first, draws(8), "another seed, other models");
        for model in ["a", "b", "c"] {
            let share = first.iter().filter(|picked| *picked == model).count();
            assert!((60..140).contains(&share), "{model}: {share} of 300");
        }
    }

    /// CPython 3.11 with AIPerf's derivation: `choice(["a", "b", "c"])` from the
    /// `composer.turn.model_selection` stream of seed 5, 12 times.
    #[test]
    fn random_choices_are_aiperfs() {
        let mut choice = ModelChoice::new(&endpoint(ModelSelection::Random), 5);
        assert_eq!(picks(&mut choice, 12), ["a", "a", "b", "c", "a", "c", "c", "a", "a", "a", "a", "a"]);
    }

    #[test]
    fn a_rank_takes_the_model_of_that_rank_wrapping() {
        let choice = ModelChoice::new(&endpoint(ModelSelection::Random), 1);
        let ranked: Vec<&str> = (0..4).map(|rank| choice.of_rank(rank).model.as_str()).collect();
        assert_eq!(ranked, ["a", "b", "c", "a"]);
    }

    #[test]
    fn one_model_is_every_requests() {
        let mut choice = ModelChoice::new(&Endpoint::new("mock", "only", EndpointKind::Chat, true), 1);
        assert_eq!(picks(&mut choice, 3), ["only", "only", "only"]);
    }
}
