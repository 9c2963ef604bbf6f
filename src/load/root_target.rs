//! How many roots of an agentic trace a concurrency ramp lets play at each moment: its users,
//! stepped as any concurrency ramp's (`Profile::stepped_value_at`), read on the ramp's tick
//! while its stages last.

use std::time::Duration;

use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::arrival::Profile;

/// How often the target is read while it moves (as a concurrency ramp steps its users).
const STEP: Duration = Duration::from_millis(20);

pub(super) struct RootTarget {
    profile: Profile,
    started: Instant,
    tick: Interval,
}

impl RootTarget {
    pub fn new(profile: Profile) -> Self {
        let mut tick = tokio::time::interval(STEP);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Self { profile, started: Instant::now(), tick }
    }

    /// The roots allowed now.
    pub fn now(&self) -> usize {
        self.profile.stepped_value_at(self.started.elapsed().as_secs_f64()).round().max(0.0) as usize
    }

    /// Whether the target may still change (its stages have not all passed).
    pub fn moving(&self) -> bool {
        self.started.elapsed().as_secs_f64() < self.profile.stages_end_s()
    }

    /// The next read of a moving target; never for none, or one that has stopped moving.
    pub async fn next(target: Option<&mut Self>) {
        match target.filter(|target| target.moving()) {
            Some(target) => {
                target.tick.tick().await;
            }
            None => std::future::pending().await,
        }
    }
}
