//! Which of an endpoint's models each request of the dataset names (`ModelSelection`, AIPerf's
//! `--model-selection-strategy`): an endpoint per model, and the choice for each request in
//! dataset order (every turn of a conversation counted, as AIPerf counts them); a random choice
//! is AIPerf's draw from its `composer.turn.model_selection` stream for the same seed (a ShareGPT
//! file's from its loader's own, `dataset.loader.sharegpt`).

use crate::plan::{Dataset, Endpoint, FileFormat, ModelSelection};
use crate::rng::aiperf_streams::{MODEL_SELECTION, SHAREGPT_MODEL_SELECTION, derived};
use crate::rng::python::PythonRandom;

pub struct ModelChoice {
    /// The endpoint as each model's requests see it (one when it names one model).
    endpoints: Vec<Endpoint>,
    selection: ModelSelection,
    rng: PythonRandom,
    /// The random choices drawn so far, in AIPerf's order (its composer's count of the requests).
    drawn: Vec<u32>,
    /// How many requests took the next place in that count.
    counted: usize,
}

impl ModelChoice {
    /// The choice of `endpoint`'s models for the requests of `dataset`: a random one draws from
    /// the stream AIPerf draws it from for that dataset (ShareGPT's loader has its own).
    pub fn new(endpoint: &Endpoint, dataset: &Dataset) -> Self {
        let endpoints = endpoint
            .models()
            .map(|model| Endpoint { model: model.to_string(), more_models: Vec::new(), ..endpoint.clone() })
            .collect();
        let stream = match dataset {
            Dataset::File(file) if file.format == FileFormat::Sharegpt => SHAREGPT_MODEL_SELECTION,
            _ => MODEL_SELECTION,
        };
        let rng = derived(dataset.random_seed(), stream);
        Self { endpoints, selection: endpoint.model_selection, rng, drawn: Vec::new(), counted: 0 }
    }

    /// The endpoint with its model of rank `rank` (wrapping), for a request whose trace names
    /// its model (AIPerf's weka model map).
    pub fn of_rank(&self, rank: u32) -> &Endpoint {
        &self.endpoints[rank as usize % self.endpoints.len()]
    }

    /// The endpoint, with its model, of the request AIPerf's composer made `place`-th (a
    /// sampled file's entry keeps the model of its place in the file); `None`: of the next
    /// request after the last one counted.
    pub fn of_request(&mut self, place: Option<u32>) -> &Endpoint {
        let place = match place {
            Some(place) => place as usize,
            None => {
                self.counted += 1;
                self.counted - 1
            }
        };
        let count = self.endpoints.len();
        let index = match self.selection {
            _ if count == 1 => 0,
            ModelSelection::RoundRobin => place % count,
            ModelSelection::Random => {
                while self.drawn.len() <= place {
                    self.drawn.push(self.rng.below(count) as u32);
                }
                self.drawn[place] as usize
            }
        };
        &self.endpoints[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{EndpointKind, FileDataset};

    fn endpoint(selection: ModelSelection) -> Endpoint {
        let mut endpoint = Endpoint::new("mock", "a", EndpointKind::Chat, true);
        endpoint.more_models = vec!["b".into(), "c".into()];
        endpoint.model_selection = selection;
        endpoint
    }

    fn dataset(seed: u64, format: FileFormat) -> Dataset {
        Dataset::File(FileDataset { random_seed: seed, ..FileDataset::of("prompts", format) })
    }

    fn picks(choice: &mut ModelChoice, n: usize) -> Vec<String> {
        (0..n).map(|_| choice.of_request(None).model.clone()).collect()
    }

    #[test]
    fn round_robin_takes_the_models_in_turn() {
        let mut choice = ModelChoice::new(&endpoint(ModelSelection::RoundRobin), &dataset(7, FileFormat::SingleTurn));
        assert_eq!(picks(&mut choice, 5), ["a", "b", "c", "a", "b"]);
        assert!(choice.endpoints.iter().all(|endpoint| endpoint.more_models.is_empty()));
    }

    #[test]
    fn random_draws_every_model_from_the_seed_alike_each_time() {
        let draws = |seed| {
            picks(&mut ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(seed, FileFormat::SingleTurn)), 300)
        };
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
        let mut choice = ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(5, FileFormat::SingleTurn));
        assert_eq!(picks(&mut choice, 12), ["a", "a", "b", "c", "a", "c", "c", "a", "a", "a", "a", "a"]);
    }

    /// AIPerf 0.13 over a file of 8 lines shuffled (seed 42, `--model a,b,c`): line n names
    /// the n-th model, whichever request sends it; a random choice likewise stays with its line.
    #[test]
    fn a_moved_entry_keeps_the_model_of_its_place() {
        let mut choice = ModelChoice::new(&endpoint(ModelSelection::RoundRobin), &dataset(42, FileFormat::SingleTurn));
        let sent: Vec<String> =
            [4, 6, 5, 1, 0, 3, 7, 2].map(|line| choice.of_request(Some(line)).model.clone()).to_vec();
        assert_eq!(sent, ["b", "a", "c", "b", "a", "a", "b", "c"]);
        let mut random = ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(5, FileFormat::SingleTurn));
        let backwards: Vec<String> = (0..12).rev().map(|place| random.of_request(Some(place)).model.clone()).collect();
        let in_order =
            picks(&mut ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(5, FileFormat::SingleTurn)), 12);
        assert_eq!(backwards.into_iter().rev().collect::<Vec<_>>(), in_order);
    }

    /// AIPerf 0.13 over a ShareGPT file of six turns, `--random-seed 42`: its loader names them
    /// from its own stream (`dataset.loader.sharegpt`), not the composer's (a b c c a c).
    #[test]
    fn sharegpt_turns_draw_from_the_loaders_stream() {
        let mut choice = ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(42, FileFormat::Sharegpt));
        assert_eq!(picks(&mut choice, 6), ["c", "a", "c", "b", "c", "c"]);
        let mut composer = ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(42, FileFormat::SingleTurn));
        assert_eq!(picks(&mut composer, 6), ["a", "b", "c", "c", "a", "c"]);
    }

    #[test]
    fn a_rank_takes_the_model_of_that_rank_wrapping() {
        let choice = ModelChoice::new(&endpoint(ModelSelection::Random), &dataset(1, FileFormat::SingleTurn));
        let ranked: Vec<&str> = (0..4).map(|rank| choice.of_rank(rank).model.as_str()).collect();
        assert_eq!(ranked, ["a", "b", "c", "a"]);
    }

    #[test]
    fn one_model_is_every_requests() {
        let mut choice = ModelChoice::new(
            &Endpoint::new("mock", "only", EndpointKind::Chat, true),
            &dataset(1, FileFormat::SingleTurn),
        );
        assert_eq!(picks(&mut choice, 3), ["only", "only", "only"]);
    }
}
