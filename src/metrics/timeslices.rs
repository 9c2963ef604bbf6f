//! Client-metric timeslices (AIPerf's `--slice-duration`): the profiling time cut into equal
//! slices from when profiling began; each record counts in the slice its request started in,
//! accumulated as it arrives, and each slice's time-weighted metrics cover the slice's own time.
//! As AIPerf's, the last slice ends with the run (its last answer), and a slice's rates are per
//! second of its window.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use super::accumulator::MetricAccumulator;
use super::registry::MetricDef;
use super::spill::Spill;
use crate::clock::RunClock;
use crate::result::{Stats, Timeslice};

/// How to cut the run: the slice length, and when profiling began (set by the engine when the
/// first phase whose records feed the metrics starts; run-clock ns).
#[derive(Debug, Clone)]
pub struct Timeslicing {
    pub slice_ns: u64,
    pub profiling_start_ns: Arc<OnceLock<u64>>,
}

impl Timeslicing {
    /// When slice 0 starts (0 before profiling began).
    pub fn origin_ns(&self) -> u64 {
        self.profiling_start_ns.get().copied().unwrap_or(0)
    }
}

/// The accumulators of the slices that have records so far.
#[derive(Debug)]
pub struct TimesliceAccumulator {
    slicing: Timeslicing,
    goodput: bool,
    slices: BTreeMap<u64, MetricAccumulator>,
    /// Where the slices' columns write their full runs.
    spill: Option<Spill>,
    /// When the last request seen so far ended (run-clock ns).
    last_end_ns: u64,
}

impl TimesliceAccumulator {
    pub fn new(slicing: Timeslicing, goodput: bool) -> Self {
        Self { slicing, goodput, slices: BTreeMap::new(), spill: None, last_end_ns: 0 }
    }

    /// The slices' columns write their full runs to `spill`.
    pub fn with_spill(mut self, spill: Option<Spill>) -> Self {
        self.spill = spill;
        self
    }

    /// The accumulator of the slice a request that started at `start_ns` (and ended at
    /// `end_ns`) belongs to.
    pub fn slice_for(&mut self, start_ns: u64, end_ns: u64) -> &mut MetricAccumulator {
        self.last_end_ns = self.last_end_ns.max(start_ns).max(end_ns);
        let index = start_ns.saturating_sub(self.slicing.origin_ns()) / self.slicing.slice_ns;
        let goodput = self.goodput;
        self.slices.entry(index).or_insert_with(|| MetricAccumulator::new(goodput).with_spill(self.spill.clone()))
    }

    /// Every slice from the first to the last that has records (an empty one in between
    /// keeps its time-weighted metrics, `time_weighted`'s by slice index), with times on the wall clock.
    pub fn finish(
        self,
        mut time_weighted: BTreeMap<u64, Vec<(&'static MetricDef, Stats)>>,
        clock: &RunClock,
    ) -> Vec<Timeslice> {
        let origin_ns = self.slicing.origin_ns();
        let slice_ns = self.slicing.slice_ns;
        let last = self.slices.keys().next_back().copied();
        let (mut slices, run_end_ns) = (self.slices, self.last_end_ns);
        (0..last.map_or(0, |index| index + 1))
            .map(|index| {
                let start_ns = origin_ns + index * slice_ns;
                let end_ns = (start_ns + slice_ns).min(run_end_ns.max(start_ns));
                let slice_time_weighted = || time_weighted.remove(&index).unwrap_or_default();
                let metrics = slices
                    .remove(&index)
                    .unwrap_or_else(|| MetricAccumulator::new(false))
                    .with_window_s((end_ns - start_ns) as f64 / 1e9)
                    .finish(slice_time_weighted, None);
                Timeslice {
                    index,
                    start_ns: clock.epoch_ns(start_ns),
                    end_ns: clock.epoch_ns(end_ns),
                    is_complete: end_ns == start_ns + slice_ns,
                    metrics,
                }
            })
            .collect()
    }
}
