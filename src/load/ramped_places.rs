//! Places that ramp up: a semaphore of `limit` places or, with a ramp, one place that gains
//! one more at even steps until it holds `limit` after the ramp's seconds (AIPerf's stepped
//! `prefill_ramp`, and `concurrency_ramp` of a rate phase's in-flight cap).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

pub(super) struct RampedPlaces {
    pub places: Arc<Semaphore>,
    /// Adds the ramp's places on time; stopped when the phase drops these places.
    grower: Option<JoinHandle<()>>,
}

impl RampedPlaces {
    /// `limit` places from now (the phase's start), ramped over `ramp_s` from 1.
    pub fn open(limit: usize, ramp_s: Option<f64>) -> Self {
        let step_times_s = step_times_s(limit, ramp_s);
        let places = Arc::new(Semaphore::new(if ramp_s.is_some() { limit.min(1) } else { limit }));
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

/// Seconds into the ramp at which the places grow to 2, 3, … `limit`.
pub(super) fn step_times_s(limit: usize, ramp_s: Option<f64>) -> Vec<f64> {
    match ramp_s {
        Some(ramp_s) if limit > 1 => {
            let steps = (limit - 1) as f64;
            (1..limit).map(|step| ramp_s * step as f64 / steps).collect()
        }
        _ => Vec::new(),
    }
}

impl Drop for RampedPlaces {
    fn drop(&mut self) {
        if let Some(grower) = &self.grower {
            grower.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_steps_by_one_evenly_to_its_limit() {
        assert_eq!(step_times_s(5, Some(2.0)), vec![0.5, 1.0, 1.5, 2.0]);
        assert_eq!(step_times_s(5, None), Vec::<f64>::new());
        assert_eq!(step_times_s(1, Some(2.0)), Vec::<f64>::new());
    }

    #[tokio::test]
    async fn ramped_places_gain_one_at_each_step() {
        let ramped = RampedPlaces::open(3, Some(0.4));
        assert_eq!(ramped.places.available_permits(), 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(ramped.places.available_permits(), 2, "one more at 0.2 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(ramped.places.available_permits(), 3, "the limit at 0.4 s");
        assert_eq!(RampedPlaces::open(3, None).places.available_permits(), 3);
    }
}
