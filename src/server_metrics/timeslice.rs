//! Fixed-width time windows (`slice_duration`) tiling each results phase from its start to
//! its last response, the partial last one marked incomplete.

use super::window::ProfilingWindow;

/// One window, `[start_ns, end_ns)`; the phase's last one also takes the sample at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub start_ns: u64,
    pub end_ns: u64,
    pub is_complete: bool,
}

/// Windows of `slice_ns` from the phase's start; the last one ends with the phase.
pub fn tile(window: ProfilingWindow, slice_ns: u64) -> Vec<Slice> {
    if slice_ns == 0 || window.end_ns <= window.start_ns {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = window.start_ns;
    while start < window.end_ns {
        let full_end = start.saturating_add(slice_ns);
        let end = full_end.min(window.end_ns);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_windows_from_the_phase_start_with_a_partial_last_one() {
        let got = tile(ProfilingWindow { start_ns: 10, end_ns: 17 }, 3);
        assert_eq!(
            got,
            vec![
                Slice { start_ns: 10, end_ns: 13, is_complete: true },
                Slice { start_ns: 13, end_ns: 16, is_complete: true },
                Slice { start_ns: 16, end_ns: 17, is_complete: false },
            ]
        );
        assert_eq!(tile(ProfilingWindow { start_ns: 0, end_ns: 6 }, 3).len(), 2);
        assert!(tile(ProfilingWindow { start_ns: 5, end_ns: 5 }, 10).is_empty());
    }

    #[test]
    fn median_gap() {
        assert_eq!(median_interval_ns(&[0, 10, 30, 40]), Some(10));
        assert_eq!(median_interval_ns(&[5]), None);
    }
}
