//! Which of a phase's requests its cancellation picks: AIPerf's cancellation stream drawn once
//! per request, in the order the phase numbers its requests (AIPerf draws as it issues each
//! credit), so with the same seed the same requests are cancelled. Each phase starts the stream
//! afresh, as AIPerf's phases each derive their own.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::plan::Cancellation;
use crate::rng::aiperf_streams::{self, CANCELLATION};
use crate::rng::python::PythonRandom;

pub struct CancelDraws {
    fraction: f64,
    after: Duration,
    drawn: Mutex<Drawn>,
}

/// The draws so far: one bit per request (set: cancelled), as requests may ask out of order.
struct Drawn {
    rng: PythonRandom,
    picked: Vec<u64>,
    count: u64,
}

impl CancelDraws {
    pub fn new(cancel: &Cancellation) -> Self {
        let drawn = Drawn { rng: aiperf_streams::derived(cancel.seed, CANCELLATION), picked: Vec::new(), count: 0 };
        Self {
            fraction: cancel.fraction,
            after: Duration::from_secs_f64(cancel.after_s.max(0.0)),
            drawn: Mutex::new(drawn),
        }
    }

    /// How long after it is sent request `request_index` is cancelled, when it is picked.
    pub fn delay(&self, request_index: u64) -> Option<Duration> {
        let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
        while drawn.count <= request_index {
            let (word, bit) = ((drawn.count / 64) as usize, drawn.count % 64);
            if bit == 0 {
                drawn.picked.push(0);
            }
            if drawn.rng.random() < self.fraction {
                drawn.picked[word] |= 1 << bit;
            }
            drawn.count += 1;
        }
        let picked = drawn.picked[(request_index / 64) as usize] >> (request_index % 64) & 1 == 1;
        picked.then_some(self.after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picked(seed: u64, fraction: f64, order: impl Iterator<Item = u64>) -> Vec<u64> {
        let draws = CancelDraws::new(&Cancellation { fraction, after_s: 0.25, seed });
        order
            .filter(|&index| {
                draws.delay(index).inspect(|&after| assert_eq!(after, Duration::from_millis(250))).is_some()
            })
            .collect()
    }

    /// CPython 3.11, AIPerf's stream for seed 42: `[i for i in range(20) if r.random() < 0.3]`.
    #[test]
    fn the_requests_picked_are_those_aiperf_cancels_whatever_order_they_ask_in() {
        assert_eq!(picked(42, 0.3, 0..20), PYTHON_PICKED_42);
        let mut backwards = picked(42, 0.3, (0..20).rev());
        backwards.sort_unstable();
        assert_eq!(backwards, PYTHON_PICKED_42);
        assert!(picked(42, 0.0, 0..200).is_empty());
        assert_eq!(picked(42, 1.0, 0..200).len(), 200);
    }

    const PYTHON_PICKED_42: [u64; 6] = [2, 3, 12, 14, 16, 19];
}
