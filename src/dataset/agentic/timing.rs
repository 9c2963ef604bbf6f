//! When a recorded trace's turns go, as AIPerf's weka loader derives it: a turn waits the idle
//! gap between the previous request's end and its own start (`t - (t_prev + api_time_prev)`,
//! at least 0), or its recorded `think_time` alone (`think_time_only`), capped by the delay
//! cap; with an idle-gap cap, long gaps between request starts of one root trace are first cut
//! to the cap (`IdleGapWarp`) and the delay cap no longer applies. `ignore_delays` drops it all.

use crate::plan::TraceHandling;

/// One recorded request's times (seconds on the trace's clock).
#[derive(Debug, Clone, Copy)]
pub(super) struct Recorded {
    pub t_s: f64,
    pub api_time_s: Option<f64>,
    pub think_time_s: Option<f64>,
}

/// A turn's recorded timestamp and its wait after the previous answer, both in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TurnTiming {
    pub timestamp_ms: Option<f64>,
    pub delay_ms: Option<f64>,
}

/// The timing of one conversation's requests, in order.
pub(super) fn turn_timings(
    requests: &[Recorded],
    handling: &TraceHandling,
    warp: Option<&IdleGapWarp>,
) -> Vec<TurnTiming> {
    if handling.ignore_delays {
        return vec![TurnTiming { timestamp_ms: None, delay_ms: None }; requests.len()];
    }
    let at = |request: &Recorded| warp.map_or(request.t_s, |warp| warp.map(request.t_s));
    let delay_cap_s = if warp.is_some() { None } else { handling.delay_cap_s };
    let mut timings = Vec::with_capacity(requests.len());
    for (k, request) in requests.iter().enumerate() {
        let delay_ms = k.checked_sub(1).map(|previous| {
            let previous = &requests[previous];
            match request.think_time_s.filter(|_| handling.think_time_only && warp.is_none()) {
                Some(think_s) => think_s * 1000.0,
                None => end_to_start_ms((at(request) - at(previous)) * 1000.0, previous.api_time_s),
            }
        });
        timings.push(TurnTiming { timestamp_ms: Some(at(request) * 1000.0), delay_ms: capped(delay_ms, delay_cap_s) });
    }
    timings
}

/// A wait no longer than the cap, at least 0; none when it is not a number.
pub(super) fn capped(delay_ms: Option<f64>, cap_s: Option<f64>) -> Option<f64> {
    let delay_ms = delay_ms.filter(|delay| delay.is_finite())?;
    let cap_ms = cap_s.map_or(f64::INFINITY, |cap| cap * 1000.0);
    Some(delay_ms.min(cap_ms).max(0.0))
}

/// The gap between two request starts less the first one's server time (a recorded overlap is 0).
fn end_to_start_ms(start_to_start_ms: f64, previous_api_time_s: Option<f64>) -> f64 {
    let api_ms = previous_api_time_s.filter(|api| api.is_finite()).map_or(0.0, |api| api * 1000.0);
    (start_to_start_ms - api_ms).max(0.0)
}

/// One gap between request starts longer than the cap.
#[derive(Debug, Clone, Copy)]
struct IdleGap {
    start_s: f64,
    end_s: f64,
    shift_before_s: f64,
    excess_s: f64,
}

/// A root trace's clock with every gap between consecutive request starts longer than the cap
/// cut to the cap: times after a cut gap move earlier by what was cut, times inside its cut
/// tail land on the cap boundary.
pub(super) struct IdleGapWarp {
    cap_s: f64,
    gaps: Vec<IdleGap>,
}

impl IdleGapWarp {
    pub fn new(mut request_starts_s: Vec<f64>, cap_s: f64) -> Self {
        request_starts_s.sort_by(f64::total_cmp);
        let mut gaps = Vec::new();
        let mut shift_s = 0.0;
        for pair in request_starts_s.windows(2) {
            let gap_s = pair[1] - pair[0];
            if gap_s > cap_s {
                let excess_s = gap_s - cap_s;
                gaps.push(IdleGap { start_s: pair[0], end_s: pair[1], shift_before_s: shift_s, excess_s });
                shift_s += excess_s;
            }
        }
        Self { cap_s, gaps }
    }

    pub fn map(&self, t_s: f64) -> f64 {
        let mut shift_s = 0.0;
        for gap in &self.gaps {
            if t_s < gap.start_s {
                return t_s - gap.shift_before_s;
            }
            if t_s < gap.end_s {
                return if t_s - gap.start_s <= self.cap_s {
                    t_s - gap.shift_before_s
                } else {
                    gap.start_s - gap.shift_before_s + self.cap_s
                };
            }
            shift_s = gap.shift_before_s + gap.excess_s;
        }
        t_s - shift_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(t_s: f64, api_time_s: Option<f64>, think_time_s: Option<f64>) -> Recorded {
        Recorded { t_s, api_time_s, think_time_s }
    }

    fn delays(timings: &[TurnTiming]) -> Vec<Option<f64>> {
        timings.iter().map(|timing| timing.delay_ms).collect()
    }

    #[test]
    fn a_turn_waits_the_idle_gap_or_its_think_time_capped() {
        let requests =
            [recorded(0.0, Some(1.0), None), recorded(3.0, Some(0.5), Some(0.25)), recorded(3.2, None, None)];
        let plain = turn_timings(&requests, &TraceHandling::default(), None);
        assert_eq!(delays(&plain), [None, Some(2000.0), Some(0.0)], "3 s - 1 s of server time; an overlap waits 0");
        assert_eq!(plain[1].timestamp_ms, Some(3000.0));
        let think = TraceHandling { think_time_only: true, ..Default::default() };
        let think = turn_timings(&requests, &think, None);
        assert_eq!(delays(&think), [None, Some(250.0), Some(0.0)], "no think time: the whole gap");
        let capped = TraceHandling { delay_cap_s: Some(1.5), ..Default::default() };
        assert_eq!(delays(&turn_timings(&requests, &capped, None)), [None, Some(1500.0), Some(0.0)]);
        let ignored = TraceHandling { ignore_delays: true, ..Default::default() };
        assert!(
            turn_timings(&requests, &ignored, None)
                .iter()
                .all(|t| *t == TurnTiming { timestamp_ms: None, delay_ms: None })
        );
    }

    #[test]
    fn long_gaps_between_request_starts_are_cut_to_the_cap() {
        // Starts 0, 20, 220 with a 60 s cap: the 200 s gap keeps 60 s, so 220 lands at 80.
        let warp = IdleGapWarp::new(vec![0.0, 20.0, 220.0], 60.0);
        assert_eq!(warp.map(220.0), 80.0);
        assert_eq!(warp.map(20.0), 20.0);
        assert_eq!(warp.map(50.0), 50.0, "inside the kept part of the gap");
        assert_eq!(warp.map(150.0), 80.0, "inside the cut tail: the cap boundary");
        assert_eq!(warp.map(230.0), 90.0);
        let requests = [recorded(0.0, None, None), recorded(220.0, None, Some(1.0))];
        let handling = TraceHandling { think_time_only: true, delay_cap_s: Some(1.0), ..Default::default() };
        let timings = turn_timings(&requests, &handling, Some(&IdleGapWarp::new(vec![0.0, 220.0], 60.0)));
        assert_eq!(delays(&timings), [None, Some(60_000.0)], "the warp wins over think time and the delay cap");
    }
}
