//! Where the profiling window lies in one series' samples. Each results phase has a
//! reference sample (the last one that arrived before the phase started), an end sample
//! (the first one requested after the phase's last response; for the last results phase the
//! series' last sample, i.e. the final scrape after the flush period), and the samples in
//! between. Cumulative values (counters, histograms) become reset-aware increases from the
//! reference, placed on the phase's own time axis so that slices can interpolate them.

/// One results phase in epoch ns: from just before its first request to its last response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfilingWindow {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One measured phase (a warm-up or a results phase) of the run, with its place in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasuredPhase {
    pub phase_index: usize,
    pub window: ProfilingWindow,
    /// A results phase (else a warm-up).
    pub results: bool,
}

impl ProfilingWindow {
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }
}

/// The profiling duration of several results phases: the sum of their spans.
pub fn total_seconds(windows: &[ProfilingWindow]) -> f64 {
    windows.iter().map(ProfilingWindow::seconds).sum()
}

/// When one series' samples were taken.
#[derive(Debug, Clone, Copy)]
pub struct SampleTimes<'a> {
    /// When each scrape request was sent.
    pub sent_ns: &'a [u64],
    /// When each body had arrived (the sample time), ascending.
    pub arrived_ns: &'a [u64],
}

/// One phase's sample indexes in one series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseSamples {
    pub window: ProfilingWindow,
    /// The last sample before the phase; None when the series first appeared during it
    /// (a counter or histogram created by the phase's traffic starts from zero).
    pub reference: Option<usize>,
    /// The sample that closes the phase for cumulative values (the final scrape for the
    /// last phase), or None when the series has no sample after the reference.
    pub end: Option<usize>,
    /// The phase's last gauge sample: the first one requested after its last response.
    pub gauge_end: Option<usize>,
}

impl PhaseSamples {
    /// Indexes of the gauge samples: the reference, those inside, and the end scrape.
    pub fn gauge_range(&self) -> std::ops::Range<usize> {
        let from = self.reference.unwrap_or(0);
        let to = self.gauge_end.map_or(self.reference.map_or(0, |r| r + 1), |end| end + 1);
        from..to.max(from)
    }

    /// Whether the series has any sample for this phase.
    pub fn has_samples(&self) -> bool {
        self.reference.is_some() || self.end.is_some()
    }
}

/// Each window's samples in one series. `windows` are in time order; with
/// `final_scrape_closes`, the last one's cumulative values end at the series' last sample
/// (the final scrape after the flush period: the results phases), else each ends at the first
/// sample requested after it (a warm-up's: the next phase's reference scrape).
pub fn phase_samples(times: SampleTimes, windows: &[ProfilingWindow], final_scrape_closes: bool) -> Vec<PhaseSamples> {
    let count = times.arrived_ns.len();
    windows
        .iter()
        .enumerate()
        .map(|(i, window)| {
            let reference = times.arrived_ns.partition_point(|t| *t < window.start_ns).checked_sub(1);
            let first_inside = reference.map_or(0, |r| r + 1);
            let after_end = times.sent_ns[first_inside..]
                .iter()
                .position(|sent| *sent >= window.end_ns)
                .map(|offset| first_inside + offset);
            let last = count.checked_sub(1).filter(|last| *last >= first_inside);
            let end = if final_scrape_closes && i + 1 == windows.len() { last } else { after_end.or(last) };
            PhaseSamples { window: *window, reference, end, gauge_end: after_end.or(last) }
        })
        .collect()
}

/// The increase of a cumulative value from `earlier` to `later`: a decrease means the
/// counter restarted from zero in between (a server restart), so the increase is `later`.
pub fn increase(earlier: f64, later: f64) -> f64 {
    if later >= earlier { later - earlier } else { later }
}

/// A phase's cumulative curve: `(time, increase since the reference)`, starting at
/// `(start, 0)`, with the samples strictly inside the phase at their arrival time, and
/// ending at `(end, total)` (the end sample's value counts as reached at the last response).
pub fn cumulative_curve(times: SampleTimes, values: &[f64], phase: &PhaseSamples) -> Vec<(u64, f64)> {
    let window = phase.window;
    let mut curve = vec![(window.start_ns, 0.0)];
    let Some(end) = phase.end else {
        curve.push((window.end_ns, 0.0));
        return curve;
    };
    let first = phase.reference.map_or(0, |r| r + 1);
    let mut previous = phase.reference.map_or(0.0, |r| values[r]);
    let mut so_far = 0.0;
    for (i, (value, at)) in values.iter().zip(times.arrived_ns).enumerate().take(end + 1).skip(first) {
        so_far += increase(previous, *value);
        previous = *value;
        if i < end && *at > window.start_ns && *at < window.end_ns {
            curve.push((*at, so_far));
        }
    }
    curve.push((window.end_ns, so_far));
    curve
}

/// The curve's value at `at_ns`, linearly interpolated between its neighbouring points.
pub fn value_at(curve: &[(u64, f64)], at_ns: u64) -> f64 {
    let after = curve.partition_point(|(t, _)| *t <= at_ns);
    match (after.checked_sub(1).map(|i| curve[i]), curve.get(after)) {
        (None, _) => curve.first().map_or(0.0, |p| p.1),
        (Some(point), None) => point.1,
        (Some((t0, v0)), Some(&(t1, v1))) => {
            if t1 == t0 {
                v1
            } else {
                v0 + (v1 - v0) * (at_ns - t0) as f64 / (t1 - t0) as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn times<'a>(sent: &'a [u64], arrived: &'a [u64]) -> SampleTimes<'a> {
        SampleTimes { sent_ns: sent, arrived_ns: arrived }
    }

    #[test]
    fn reference_end_and_final_samples_per_phase() {
        // Baseline 0, reference 90, inside 200, end scrape 400 (sent after the 390 end),
        // second phase's reference 500, end 800, final 3000.
        let sent = [0, 89, 199, 399, 499, 799, 2999];
        let arrived = [1, 90, 200, 400, 500, 800, 3000];
        let windows = [ProfilingWindow { start_ns: 100, end_ns: 390 }, ProfilingWindow { start_ns: 510, end_ns: 790 }];
        let phases = phase_samples(times(&sent, &arrived), &windows, true);
        assert_eq!((phases[0].reference, phases[0].end, phases[0].gauge_end), (Some(1), Some(3), Some(3)));
        assert_eq!((phases[1].reference, phases[1].end, phases[1].gauge_end), (Some(4), Some(6), Some(5)));
        assert_eq!(phases[0].gauge_range(), 1..4);
        assert_eq!(phases[1].gauge_range(), 4..6);
        // Warm-ups: the last one too ends at the first sample requested after it, not the final one.
        let warmups = phase_samples(times(&sent, &arrived), &windows, false);
        assert_eq!((warmups[1].reference, warmups[1].end), (Some(4), Some(5)));
    }

    #[test]
    fn a_series_that_appears_during_the_phase_counts_from_zero() {
        let windows = [ProfilingWindow { start_ns: 100, end_ns: 300 }];
        let phases = phase_samples(times(&[310], &[320]), &windows, true);
        assert_eq!((phases[0].reference, phases[0].end), (None, Some(0)));
        let curve = cumulative_curve(times(&[310], &[320]), &[42.0], &phases[0]);
        assert_eq!(curve, vec![(100, 0.0), (300, 42.0)]);
    }

    #[test]
    fn a_reset_counts_the_restarted_value() {
        let (sent, arrived) = ([0, 150, 250, 350], [10, 160, 260, 360]);
        let windows = [ProfilingWindow { start_ns: 100, end_ns: 340 }];
        let phases = phase_samples(times(&sent, &arrived), &windows, true);
        // 500 → 520 (+20), restart → 3 (+3), → 10 (+7).
        let curve = cumulative_curve(times(&sent, &arrived), &[500.0, 520.0, 3.0, 10.0], &phases[0]);
        assert_eq!(curve, vec![(100, 0.0), (160, 20.0), (260, 23.0), (340, 30.0)]);
    }

    #[test]
    fn values_between_points_are_interpolated() {
        let curve = [(0, 0.0), (100 * MS, 10.0), (300 * MS, 50.0)];
        assert_eq!(value_at(&curve, 50 * MS), 5.0);
        assert_eq!(value_at(&curve, 200 * MS), 30.0);
        assert_eq!(value_at(&curve, 300 * MS), 50.0);
        assert_eq!(value_at(&curve, 400 * MS), 50.0);
    }
}
