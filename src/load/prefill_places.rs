//! A prefill cap's places: a semaphore that starts with the cap's first places and, for a
//! ramped cap, gains one at each of its step times (AIPerf's `prefill_ramp`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::plan::PrefillCap;

pub(super) struct PrefillPlaces {
    pub places: Arc<Semaphore>,
    /// Adds the ramp's places on time; stopped when the phase drops these places.
    grower: Option<JoinHandle<()>>,
}

impl PrefillPlaces {
    /// The cap's places from now (the phase's start).
    pub fn open(cap: PrefillCap) -> Self {
        let places = Arc::new(Semaphore::new(cap.initial_places()));
        let step_times_s = cap.step_times_s();
        let grower = (!step_times_s.is_empty()).then(|| {
            let (places, started) = (places.clone(), tokio::time::Instant::now());
            tokio::spawn(async move {
                for step_s in step_times_s {
                    tokio::time::sleep_until(started + Duration::from_secs_f64(step_s)).await;
                    places.add_permits(1);
                }
            })
        });
        Self { places, grower }
    }
}

impl Drop for PrefillPlaces {
    fn drop(&mut self) {
        if let Some(grower) = &self.grower {
            grower.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_ramped_cap_gains_a_place_at_each_step() {
        let prefill = PrefillPlaces::open(PrefillCap { concurrency: 3, ramp_s: Some(0.4) });
        assert_eq!(prefill.places.available_permits(), 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(prefill.places.available_permits(), 2, "one more at 0.2 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(prefill.places.available_permits(), 3, "the cap at 0.4 s");
        let flat = PrefillPlaces::open(PrefillCap { concurrency: 3, ramp_s: None });
        assert_eq!(flat.places.available_permits(), 3);
    }
}
