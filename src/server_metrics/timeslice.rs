//! Fixed-width time windows over one series' samples (`slice_duration`), with a partial
//! last window marked incomplete, and the per-interval fallback for short slices.

/// One window, `[start_ns, end_ns)`; the last one also takes the sample at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub start_ns: u64,
    pub end_ns: u64,
    pub is_complete: bool,
}

/// Windows from the first to the last sample time. When `slice_ns` is shorter than the
/// median update interval, each interval between consecutive samples is its own window.
pub fn slices(times_ns: &[u64], slice_ns: u64) -> Vec<Slice> {
    let (Some(&first), Some(&last)) = (times_ns.first(), times_ns.last()) else { return Vec::new() };
    if slice_ns == 0 || last <= first {
        return Vec::new();
    }
    if median_interval_ns(times_ns).is_some_and(|median| slice_ns < median) {
        return times_ns
            .windows(2)
            .filter(|pair| pair[1] > pair[0])
            .map(|pair| Slice { start_ns: pair[0], end_ns: pair[1], is_complete: true })
            .collect();
    }
    let mut out = Vec::new();
    let mut start = first;
    while start < last {
        let full_end = start + slice_ns;
        let end = full_end.min(last);
        out.push(Slice { start_ns: start, end_ns: end, is_complete: end == full_end });
        start = full_end;
    }
    out
}

/// Median gap between consecutive samples.
pub fn median_interval_ns(times_ns: &[u64]) -> Option<u64> {
    let mut gaps: Vec<u64> = times_ns.windows(2).map(|pair| pair[1].saturating_sub(pair[0])).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_unstable();
    let mid = gaps.len() / 2;
    Some(if gaps.len().is_multiple_of(2) { (gaps[mid - 1] + gaps[mid]) / 2 } else { gaps[mid] })
}

/// Index of the last sample at or before `at_ns` (step interpolation of a cumulative value).
pub fn last_at_or_before(times_ns: &[u64], at_ns: u64) -> Option<usize> {
    times_ns.partition_point(|t| *t <= at_ns).checked_sub(1)
}

/// Indexes of the samples inside a slice (`[start, end)`, or `[start, end]` for the last).
pub fn samples_in(times_ns: &[u64], slice: &Slice, is_last: bool) -> std::ops::Range<usize> {
    let from = times_ns.partition_point(|t| *t < slice.start_ns);
    let to = if is_last {
        times_ns.partition_point(|t| *t <= slice.end_ns)
    } else {
        times_ns.partition_point(|t| *t < slice.end_ns)
    };
    from..to.max(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_windows_with_a_partial_last_one() {
        let times = [0, 1, 2, 3, 4, 5, 6, 7];
        let got = slices(&times, 3);
        assert_eq!(
            got,
            vec![
                Slice { start_ns: 0, end_ns: 3, is_complete: true },
                Slice { start_ns: 3, end_ns: 6, is_complete: true },
                Slice { start_ns: 6, end_ns: 7, is_complete: false },
            ]
        );
        assert_eq!(samples_in(&times, &got[0], false), 0..3);
        assert_eq!(samples_in(&times, &got[2], true), 6..8);
    }

    #[test]
    fn slices_shorter_than_the_update_interval_fall_back_to_per_interval() {
        let times = [0, 10, 20, 35];
        let got = slices(&times, 4);
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], Slice { start_ns: 20, end_ns: 35, is_complete: true });
    }

    #[test]
    fn step_lookup_and_median() {
        let times = [10, 20, 30];
        assert_eq!(last_at_or_before(&times, 5), None);
        assert_eq!(last_at_or_before(&times, 20), Some(1));
        assert_eq!(last_at_or_before(&times, 29), Some(1));
        assert_eq!(median_interval_ns(&[0, 10, 30, 40]), Some(10));
        assert!(slices(&[5], 10).is_empty());
    }
}
