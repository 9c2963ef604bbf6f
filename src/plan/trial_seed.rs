//! AIPerf's `vary_seed_per_trial`: each trial of a run draws its workload (prompts, their
//! order, arrival times) from a seed of its own, the first 8 bytes (big-endian, below 2^63) of
//! SHA-256 over `"{seed}:variation:{label}:trial:{trial}"`, so a trial repeats across runs.

use ring::digest::{SHA256, digest};

use super::{Dataset, LoadMode, Plan};

/// The variation label AIPerf gives a run outside a sweep.
const NO_SWEEP_LABEL: &str = "base";

/// The seed of trial `trial` (from 0) of the variation `label` (none outside a sweep) of a run
/// seeded with `seed`.
pub fn trial_seed(seed: u64, label: Option<&str>, trial: u64) -> u64 {
    let text = format!("{seed}:variation:{}:trial:{trial}", label.unwrap_or(NO_SWEEP_LABEL));
    let hash = digest(&SHA256, text.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_ref()[..8]);
    u64::from_be_bytes(first) & (i64::MAX as u64)
}

impl Plan {
    /// The plan with its dataset drawn from `seed`, each phase's seed moved with it (so phases
    /// seeded apart stay apart).
    pub fn reseeded(mut self, seed: u64) -> Self {
        let shift = self.dataset.random_seed() ^ seed;
        match &mut self.dataset {
            Dataset::Synthetic(spec) => spec.random_seed = seed,
            Dataset::File(spec) => spec.random_seed = seed,
        }
        for phase in &mut self.phases {
            if let LoadMode::Rate { seed, .. } | LoadMode::Ramp { seed, .. } | LoadMode::Users { seed, .. } =
                &mut phase.mode
            {
                *seed ^= shift;
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_trial_has_a_seed_of_its_own_that_repeats() {
        let seeds: Vec<u64> = (0..3).map(|trial| trial_seed(42, None, trial)).collect();
        // AIPerf 0.13's derive_variation_seed(42, "base:trial:0") and (…, "base:trial:1").
        assert_eq!(seeds[..2], [6858774025263032934, 4337237111802998792]);
        assert_eq!(seeds, (0..3).map(|trial| trial_seed(42, None, trial)).collect::<Vec<_>>());
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2], "{seeds:?}");
        assert!(seeds.iter().all(|seed| *seed <= i64::MAX as u64));
        assert_ne!(trial_seed(42, Some("concurrency_4"), 0), seeds[0]);
        assert_ne!(trial_seed(43, None, 0), seeds[0]);
    }
}
