//! What must hold for any input to the SSE parser, checked by the `sse_parse` fuzz target and,
//! over a seeded random corpus, by `tests/sse_fuzz.rs`: no panic; the same events however the
//! bytes are split into reads; a cap only ever refuses (it never changes the events it lets
//! through), refuses the same way under every split, and no event it passes is larger than it.

use std::ops::ControlFlow;

use aiperf::client::sse::{EventTooLarge, SseParser};

/// (event type, data) of each event.
type Events = Vec<(Vec<u8>, Vec<u8>)>;

/// The events of `data` read in pieces cut at `cuts` (ascending), under `cap`.
fn parse(data: &[u8], cuts: &[usize], cap: usize) -> Result<Events, EventTooLarge> {
    let mut parser = SseParser::new(cap);
    let mut events = Events::new();
    let mut keep = |event: aiperf::client::sse::SseEvent<'_>| {
        events.push((event.event_type.to_vec(), event.data.to_vec()));
        ControlFlow::Continue(())
    };
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&data.len())) {
        let cut = cut.clamp(start, data.len());
        let _ = parser.feed(&data[start..cut], &mut keep)?;
        start = cut;
    }
    let _ = parser.finish(&mut keep);
    Ok(events)
}

/// Check every property on `data`.
pub fn check(data: &[u8]) {
    let unlimited = parse(data, &[], usize::MAX).expect("no cap, no refusal");
    let line_ends = data.iter().filter(|&&byte| byte == b'\n' || byte == b'\r').count();
    assert!(unlimited.len() <= line_ends + 1, "more events than lines");
    let seed = data.iter().fold(7usize, |acc, &byte| acc.wrapping_mul(31).wrapping_add(byte as usize));
    let len = data.len().max(1);
    let mut cuts = [seed % len, (seed / 7) % len, (seed / 49) % len];
    cuts.sort_unstable();
    let every_byte: Vec<usize> = (1..data.len()).collect();
    assert_eq!(parse(data, &cuts, usize::MAX).as_ref(), Ok(&unlimited), "split at {cuts:?}");
    assert_eq!(parse(data, &every_byte, usize::MAX).as_ref(), Ok(&unlimited), "one byte per read");

    let cap = 1 + data.len() / 3;
    let capped = parse(data, &[], cap);
    if let Ok(events) = &capped {
        assert_eq!(events, &unlimited, "a cap that refuses nothing changes nothing");
        assert!(events.iter().all(|(_, event_data)| event_data.len() <= cap), "an event past the cap got through");
    }
    assert_eq!(parse(data, &cuts, cap), capped, "the cap refuses the same way under a split");
}
