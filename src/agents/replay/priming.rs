//! The warm-up of an agentic replay: every session mid-flight at its trajectory's cut sends its
//! last turn before the cut. Spread (AIPerf's default), the turn recorded `lead` before its cut
//! goes at `max lead − lead`, so every trajectory reaches its cut as the warm-up ends; with
//! burst phase starts they all go at once. A lead longer than the trace's idle-gap cap counts
//! as the cap (AIPerf's clamp: a stream that last sent long before its cut is primed at most
//! the cap before the warm-up's end).

use super::{Lane, Tree};

/// One priming request: lane `lane`'s stream `stream` sends turn `turn`, `at_ms` after the
/// warm-up starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Priming {
    pub lane: usize,
    pub stream: usize,
    pub turn: u32,
    pub at_ms: f64,
}

/// The priming requests of `lanes`, in lane and tree order, each lead held to `lead_cap_ms`.
pub fn priming_schedule(trees: &[Tree], lanes: &[Lane], burst: bool, lead_cap_ms: Option<f64>) -> Vec<Priming> {
    let mut primed: Vec<(Priming, Option<f64>)> = Vec::new();
    for (lane_number, lane) in lanes.iter().enumerate() {
        let tree = &trees[lane.tree];
        for stream in 0..tree.streams.len() {
            let super::StreamStart::Live { next_turn, .. } = lane.cut.starts[stream] else { continue };
            let Some(turn) = next_turn.checked_sub(1) else { continue };
            let lead_ms =
                lane.cut.priming_lead_ms(tree, stream).map(|lead| lead_cap_ms.map_or(lead, |cap| lead.min(cap)));
            primed.push((Priming { lane: lane_number, stream, turn, at_ms: 0.0 }, lead_ms));
        }
    }
    let max_lead_ms = primed.iter().filter_map(|(_, lead)| *lead).fold(0.0, f64::max);
    primed
        .into_iter()
        .map(|(priming, lead_ms)| match (burst, lead_ms) {
            (false, Some(lead_ms)) => Priming { at_ms: max_lead_ms - lead_ms, ..priming },
            _ => priming,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::shape::conversation;
    use super::super::{Lane, cut, trees};
    use super::*;

    /// Two trees whose cuts at 0.5 fall at 50 and 500 ms.
    fn lanes() -> (Vec<Tree>, Vec<Lane>) {
        let mut requests = conversation("a", None, &[0.0, 20.0, 45.0, 100.0]);
        requests.extend(conversation("b", None, &[0.0, 300.0, 480.0, 1000.0]));
        requests.extend(conversation("c", None, &[0.0, 1.0, 60.0, 100.0]));
        let trees = trees(&requests).unwrap();
        let lanes = (0..3).map(|tree| Lane { tree, cut: cut(&trees[tree], (0.5, 0.5), 1, tree).unwrap() }).collect();
        (trees, lanes)
    }

    #[test]
    fn spread_priming_lands_every_cut_at_the_end_of_the_warm_up() {
        let (trees, lanes) = lanes();
        let schedule = priming_schedule(&trees, &lanes, false, None);
        // a: primes turn 2 (45 ms, 5 before its cut); b: turn 2 (480, 20 before); c: turn 1 (1, 49 before).
        let primed: Vec<(usize, u32)> = schedule.iter().map(|p| (p.lane, p.turn)).collect();
        assert_eq!(primed, vec![(0, 2), (1, 2), (2, 1)]);
        let ends: Vec<f64> = schedule
            .iter()
            .map(|p| p.at_ms + lanes[p.lane].cut.priming_lead_ms(&trees[lanes[p.lane].tree], p.stream).unwrap())
            .collect();
        assert!(ends.iter().all(|end| (end - 49.0).abs() < 1e-9), "each reaches its cut at 49 ms: {ends:?}");
        assert_eq!(schedule.iter().map(|p| p.at_ms).fold(f64::MAX, f64::min), 0.0, "the furthest goes first");
    }

    #[test]
    fn a_lead_beyond_the_idle_gap_cap_counts_as_the_cap() {
        // Leads 5, 20 and 49 ms; held to 10: b and c go first, a 5 ms later, all ending at 10.
        let (trees, lanes) = lanes();
        let at: Vec<f64> = priming_schedule(&trees, &lanes, false, Some(10.0)).iter().map(|p| p.at_ms).collect();
        assert_eq!(at, vec![5.0, 0.0, 0.0]);
    }

    #[test]
    fn burst_priming_sends_them_all_at_once() {
        let (trees, lanes) = lanes();
        let schedule = priming_schedule(&trees, &lanes, true, None);
        assert_eq!(schedule.len(), 3);
        assert!(schedule.iter().all(|p| p.at_ms == 0.0));
    }

    #[test]
    fn a_stream_that_starts_at_or_after_the_cut_has_nothing_to_prime() {
        let requests = conversation("a", None, &[50.0, 60.0, 100.0]);
        let trees = trees(&requests).unwrap();
        let lanes = vec![Lane { tree: 0, cut: cut(&trees[0], (0.0, 0.0), 1, 0).unwrap() }];
        assert!(priming_schedule(&trees, &lanes, false, None).is_empty());
    }
}
