//! The theoretical prefix-cache hits of a weka trace's requests, as AIPerf 0.13's pre-pass
//! counts them: with an infinite cache shared by every conversation of the trace, a request
//! hits the leading run of its hash blocks that the requests recorded before it already sent.

/// One request of a trace: its place in the recorded order and its hash blocks.
pub(super) struct BlockRequest<'a> {
    /// (time, the trace item it belongs to, its turn within a sub-agent): AIPerf's order.
    pub order: (f64, usize, usize),
    pub conversation: usize,
    pub turn: usize,
    pub hash_ids: &'a [u64],
}

/// Each conversation's turns' (hit blocks, blocks), over `conversations` conversations.
pub(super) fn prefix_hits(mut requests: Vec<BlockRequest>, conversations: usize) -> Vec<Vec<(u32, u32)>> {
    requests.sort_by(|a, b| a.order.0.total_cmp(&b.order.0).then((a.order.1, a.order.2).cmp(&(b.order.1, b.order.2))));
    let mut hits: Vec<Vec<(u32, u32)>> = vec![Vec::new(); conversations];
    let mut seen = std::collections::HashSet::new();
    for request in requests {
        let hit = request.hash_ids.iter().take_while(|block| seen.contains(*block)).count();
        seen.extend(request.hash_ids.iter().copied());
        let turns = &mut hits[request.conversation];
        if turns.len() <= request.turn {
            turns.resize(request.turn + 1, (0, 0));
        }
        turns[request.turn] = (hit as u32, request.hash_ids.len() as u32);
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_hits_the_leading_blocks_any_earlier_request_of_the_trace_sent() {
        let request = |order, conversation, turn, hash_ids| BlockRequest { order, conversation, turn, hash_ids };
        let hits = prefix_hits(
            vec![
                // Given out of order: the sub-agent's request (at 0.6 s) comes after the root's
                // second (0.5 s), whose block 4 it lacks.
                request((0.6, 2, 0), 1, 0, &[1, 2, 7]),
                request((0.0, 0, 0), 0, 0, &[1, 2, 3]),
                request((0.5, 1, 0), 0, 1, &[1, 2, 3, 4]),
                request((2.0, 3, 0), 0, 2, &[1, 2, 7, 4, 9]),
            ],
            2,
        );
        assert_eq!(hits[0], [(0, 3), (3, 4), (4, 5)], "the last: 1, 2, 7 and 4 sent before, 9 not");
        assert_eq!(hits[1], [(2, 3)]);
    }
}
