//! What was in flight over time: each record adds its intervals (in flight, prefill, decode),
//! its token rates and its tokens, kept compactly (10 bytes a change of requests or tokens,
//! in blocks that grow without copying); a sorted sweep turns them into segments during which
//! every level is constant, handed on as they close: during the run up to a watermark, the rest at the end.

use super::sorted_blocks::{Keyed, SortedBlocks};
use super::sorted_runs::FixedBytes;
use super::spill::Spill;
use crate::record::RequestRecord;

const NS_PER_SEC: f64 = 1e9;
/// The most steps in which one response's output tokens enter `tokens_in_flight`.
const MAX_TOKEN_STEPS: usize = 32;
/// New changes held before a watermark sweeps them (or, when more are still held after the
/// last sweep, as many as those): a few MiB.
const SWEEP_CHANGES: usize = 1 << 18;

/// The levels that hold over one segment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Levels {
    /// Requests sent and not yet answered in full (failed ones included).
    pub requests: i64,
    /// Requests waiting for their first token.
    pub prefill: i64,
    /// Requests between their first and last token.
    pub decode: i64,
    /// Input tokens of the requests in flight plus the output tokens they have received so far.
    pub tokens: i64,
    /// Sum of the in-prefill requests' input rates (input tokens / TTFT), tokens/s.
    pub prefill_rate: f64,
    /// Sum of the in-decode requests' output rates ((OSL − 1) / decode duration), tokens/s.
    pub decode_rate: f64,
}

/// A stretch of time `[start_ns, end_ns)` with constant levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub start_ns: u64,
    pub end_ns: u64,
    pub levels: Levels,
}

impl Segment {
    /// This segment cut to `[start_ns, end_ns)`; None when they do not overlap.
    pub fn within(&self, start_ns: u64, end_ns: u64) -> Option<Segment> {
        let (start, end) = (self.start_ns.max(start_ns), self.end_ns.min(end_ns));
        (start < end).then_some(Segment { start_ns: start, end_ns: end, levels: self.levels })
    }
}

/// A whole-number level (requests or tokens in flight) moving by `delta` at `ns`; 10 bytes,
/// the bulk of what a run keeps (a larger move is kept as several).
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(2))]
struct CountChange {
    ns: u64,
    delta: i16,
}

impl FixedBytes for CountChange {
    const BYTES: usize = 10;
    fn put(self, bytes: &mut [u8]) {
        bytes[..8].copy_from_slice(&{ self.ns }.to_le_bytes());
        bytes[8..].copy_from_slice(&{ self.delta }.to_le_bytes());
    }
    fn get(bytes: &[u8]) -> Self {
        CountChange { ns: u64::get(&bytes[..8]), delta: i16::from_le_bytes([bytes[8], bytes[9]]) }
    }
}

impl Keyed for CountChange {
    fn key(&self) -> u64 {
        self.ns
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Prefill,
    Decode,
}

/// One request entering (or leaving) a phase at `ns`, its rate added (or taken off).
#[derive(Debug, Clone, Copy)]
struct PhaseChange {
    ns: u64,
    /// Negative when leaving.
    rate: f64,
    phase: Phase,
    entering: bool,
}

impl FixedBytes for PhaseChange {
    const BYTES: usize = 17;
    fn put(self, bytes: &mut [u8]) {
        bytes[..8].copy_from_slice(&self.ns.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.rate.to_le_bytes());
        bytes[16] = u8::from(self.phase == Phase::Decode) | u8::from(self.entering) << 1;
    }
    fn get(bytes: &[u8]) -> Self {
        let flags = bytes[16];
        PhaseChange {
            ns: u64::get(&bytes[..8]),
            rate: f64::from_bits(u64::get(&bytes[8..16])),
            phase: if flags & 1 == 1 { Phase::Decode } else { Phase::Prefill },
            entering: flags & 2 == 2,
        }
    }
}

impl Keyed for PhaseChange {
    fn key(&self) -> u64 {
        self.ns
    }
}

/// The changes of every record so far, and the window they fall in.
#[derive(Debug, Default)]
pub struct InFlightCurves {
    request_changes: SortedBlocks<CountChange>,
    phase_changes: SortedBlocks<PhaseChange>,
    /// The changes of the tokens in flight: most of a record's changes.
    token_changes: SortedBlocks<CountChange>,
    /// When the first request was due (AIPerf's first credit) and when the last response ended.
    window: Option<(u64, u64)>,
    /// Some record had a prefill or decode interval (a streamed answer).
    has_phases: bool,
    /// Some record carried tokens.
    has_tokens: bool,
    sweep: Sweep,
    /// Changes held after the last sweep (those at or after its watermark).
    held_after_sweep: usize,
    /// New changes that make a watermark sweep (None: `SWEEP_CHANGES`).
    sweep_changes: Option<usize>,
}

/// Where the sweep stands: the levels after every change swept so far.
#[derive(Debug, Default)]
struct Sweep {
    levels: Levels,
    /// When the last change swept happened: the open segment starts there.
    from_ns: Option<u64>,
    first_change_ns: Option<u64>,
}

/// Keeps `delta` at `ns` in `changes`, in as many `i16` pieces as it takes.
fn push_count(changes: &mut SortedBlocks<CountChange>, ns: u64, mut delta: i64) {
    while delta != 0 {
        let piece = delta.clamp(i64::from(i16::MIN), i64::from(i16::MAX));
        changes.push(CountChange { ns, delta: piece as i16 });
        delta -= piece;
    }
}

/// Token counts of a successful record, for its rates and tokens in flight.
#[derive(Debug, Clone, Copy)]
pub struct RecordTokens {
    pub input: u64,
    pub output: u64,
}

impl InFlightCurves {
    /// The changes are written to `spill`, a sorted block at a time, as they come.
    pub fn with_spill(self, spill: Spill) -> Self {
        Self {
            request_changes: self.request_changes.with_spill(Some(spill.clone())),
            phase_changes: self.phase_changes.with_spill(Some(spill.clone())),
            // A spill with shorter runs (tests) sweeps sooner.
            sweep_changes: Some(spill.run_values.min(SWEEP_CHANGES)),
            token_changes: self.token_changes.with_spill(Some(spill)),
            ..self
        }
    }

    /// Adds one record (`tokens`: its counts when it succeeded; `streaming`: its chunks mark
    /// the first and last token).
    pub fn add(&mut self, record: &RequestRecord, tokens: Option<RecordTokens>, streaming: bool) {
        let last_chunk_ns = record.chunks.last().map(|chunk| chunk.ns);
        let end_ns = record.end_ns.max(last_chunk_ns.unwrap_or(0)).max(record.start_ns);
        let (first_ns, last_ns) = self.window.unwrap_or((record.scheduled_ns, end_ns));
        self.window = Some((first_ns.min(record.scheduled_ns).min(record.start_ns), last_ns.max(end_ns)));
        if end_ns > record.start_ns {
            push_count(&mut self.request_changes, record.start_ns, 1);
            push_count(&mut self.request_changes, end_ns, -1);
        }
        let Some(tokens) = tokens else {
            return;
        };
        if let (true, Some(first), Some(last)) = (streaming, record.chunks.first(), record.chunks.last()) {
            self.add_phase(record.start_ns, first.ns, tokens.input, Phase::Prefill);
            self.add_phase(first.ns, last.ns, tokens.output.saturating_sub(1), Phase::Decode);
        }
        self.add_tokens(record, end_ns, tokens);
    }

    /// One request in a phase over `[from_ns, to_ns)`, moving `amount` tokens at an even rate.
    fn add_phase(&mut self, from_ns: u64, to_ns: u64, amount: u64, phase: Phase) {
        if to_ns <= from_ns {
            return;
        }
        self.has_phases = true;
        let rate = amount as f64 * NS_PER_SEC / (to_ns - from_ns) as f64;
        self.phase_changes.push(PhaseChange { ns: from_ns, rate, phase, entering: true });
        self.phase_changes.push(PhaseChange { ns: to_ns, rate: -rate, phase, entering: false });
    }

    /// The input tokens from the start, the output as its chunks arrive (each chunk an even
    /// share, in at most `MAX_TOKEN_STEPS` steps so that a long answer costs no more memory
    /// than a short one), all gone at the end.
    fn add_tokens(&mut self, record: &RequestRecord, end_ns: u64, tokens: RecordTokens) {
        let input = tokens.input as i64;
        let output = tokens.output as i64;
        if input + output == 0 || end_ns <= record.start_ns {
            return;
        }
        self.has_tokens = true;
        push_count(&mut self.token_changes, record.start_ns, input);
        let chunks = record.chunks.len();
        let steps = chunks.min(MAX_TOKEN_STEPS);
        let mut received = 0;
        for step in 1..=steps {
            // The last chunk of this step: its share of the output has arrived.
            let index = (step * chunks).div_ceil(steps) - 1;
            let upto = output * (index as i64 + 1) / chunks as i64;
            if upto > received {
                push_count(&mut self.token_changes, record.chunks[index].ns, upto - received);
                received = upto;
            }
        }
        push_count(&mut self.token_changes, end_ns, -(input + received));
    }

    /// `[first due, last response end]`; None before any record.
    pub fn window(&self) -> Option<(u64, u64)> {
        self.window
    }

    pub fn has_phases(&self) -> bool {
        self.has_phases
    }

    pub fn has_tokens(&self) -> bool {
        self.has_tokens
    }

    /// No record added from now on changes anything before `watermark_ns` (the start of the
    /// oldest request still in flight): once enough changes are held, those before it are
    /// swept into segments, handed to `segment` in time order, and let go.
    pub fn advance_watermark(&mut self, watermark_ns: u64, segment: &mut impl FnMut(&Segment)) {
        let held = self.request_changes.len() + self.phase_changes.len() + self.token_changes.len();
        let sweep_changes = self.sweep_changes.unwrap_or(SWEEP_CHANGES);
        if held.saturating_sub(self.held_after_sweep) >= sweep_changes.max(self.held_after_sweep) {
            self.sweep(Some(watermark_ns), segment);
            self.held_after_sweep = self.request_changes.len() + self.phase_changes.len() + self.token_changes.len();
        }
    }

    /// Sweeps the changes before `before_ns` (None: all of them) in time order, handing each
    /// segment they close to `segment`; the rest are kept for the next sweep.
    fn sweep(&mut self, before_ns: Option<u64>, segment: &mut impl FnMut(&Segment)) {
        // Equal times keep the order the changes came in: the rates of one instant add up as
        // they always have.
        let mut requests = self.request_changes.take_sorted();
        let mut phases = self.phase_changes.take_sorted();
        let mut tokens = self.token_changes.take_sorted();
        let sweep = &mut self.sweep;
        loop {
            let heads = [requests.peek_key(), phases.peek_key(), tokens.peek_key()];
            let Some(at_ns) = heads.into_iter().flatten().min() else {
                break;
            };
            if before_ns.is_some_and(|before_ns| at_ns >= before_ns) {
                break;
            }
            match sweep.from_ns {
                Some(from_ns) if at_ns > from_ns => {
                    segment(&Segment { start_ns: from_ns, end_ns: at_ns, levels: sweep.levels });
                }
                Some(_) => {}
                None => sweep.first_change_ns = Some(at_ns),
            }
            // A change from before an earlier watermark (a watermark given too late) counts
            // from where the sweep stands.
            sweep.from_ns = Some(sweep.from_ns.map_or(at_ns, |from_ns| from_ns.max(at_ns)));
            while let Some(change) = requests.next_at(at_ns) {
                sweep.levels.requests += i64::from(change.delta);
            }
            while let Some(change) = phases.next_at(at_ns) {
                apply(&mut sweep.levels, &change);
            }
            while let Some(change) = tokens.next_at(at_ns) {
                sweep.levels.tokens += i64::from(change.delta);
            }
        }
        requests.by_ref().for_each(|change| self.request_changes.push(change));
        phases.by_ref().for_each(|change| self.phase_changes.push(change));
        tokens.by_ref().for_each(|change| self.token_changes.push(change));
        if let Some(error) = [requests.error, phases.error, tokens.error].into_iter().flatten().next() {
            tracing::error!(
                "the in-flight changes could not be read back: {error}; the time-weighted metrics stop short"
            );
        }
    }

    /// Sweeps every change left and hands `segment` the last segments: the segments cover
    /// the window, zero-length ones left out, in time order but for the stretch before the
    /// first change (nothing in flight yet), which comes last.
    pub fn finish(mut self, segment: &mut impl FnMut(&Segment)) {
        let Some((window_start, window_end)) = self.window else {
            return;
        };
        self.sweep(None, segment);
        let (last_change_ns, first_change_ns) = match (self.sweep.from_ns, self.sweep.first_change_ns) {
            (Some(last), Some(first)) => (last, first),
            _ => (window_start, window_start),
        };
        if window_end > last_change_ns {
            segment(&Segment { start_ns: last_change_ns, end_ns: window_end, levels: self.sweep.levels });
        }
        if first_change_ns > window_start {
            segment(&Segment { start_ns: window_start, end_ns: first_change_ns, levels: Levels::default() });
        }
    }

    /// Every segment `finish` hands out, in the order handed.
    #[cfg(test)]
    pub fn segments(self) -> Vec<Segment> {
        let mut segments = Vec::new();
        self.finish(&mut |segment| segments.push(*segment));
        segments
    }
}

fn apply(levels: &mut Levels, change: &PhaseChange) {
    let delta = if change.entering { 1 } else { -1 };
    let (count, rate) = match change.phase {
        Phase::Prefill => (&mut levels.prefill, &mut levels.prefill_rate),
        Phase::Decode => (&mut levels.decode, &mut levels.decode_rate),
    };
    *count += delta;
    // Exactly zero once no request is in the phase, whatever the rounding of the sums.
    *rate = if *count == 0 { 0.0 } else { *rate + change.rate };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::test_support::streamed_record;

    const MS: u64 = 1_000_000;

    #[test]
    fn two_overlapping_requests_make_three_segments() {
        let mut curves = InFlightCurves::default();
        // A: 0–10 ms, first token at 4 ms, tokens at 4, 7, 10. B: 5–15 ms, tokens at 8, 15.
        curves.add(
            &streamed_record(0, &[4 * MS, 7 * MS, 10 * MS], "", 0),
            Some(RecordTokens { input: 100, output: 3 }),
            true,
        );
        curves.add(
            &streamed_record(5 * MS, &[8 * MS, 15 * MS], "", 0),
            Some(RecordTokens { input: 50, output: 2 }),
            true,
        );
        assert_eq!(curves.window(), Some((0, 15 * MS)));
        let segments = curves.segments();
        let starts: Vec<u64> = segments.iter().map(|s| s.start_ns / MS).collect();
        assert_eq!(starts, [0, 4, 5, 7, 8, 10]);
        // 5–7 ms: A decoding (2 tokens over 6 ms), B in prefill (50 tokens over 3 ms).
        let both = segments[2].levels;
        assert_eq!((both.requests, both.prefill, both.decode), (2, 1, 1));
        assert!((both.prefill_rate - 50.0 / 0.003).abs() < 1e-6);
        assert!((both.decode_rate - 2.0 / 0.006).abs() < 1e-6);
        // A's input + its first token's share (1 of 3), B's input.
        assert_eq!(both.tokens, 100 + 1 + 50);
        // After 10 ms only B, decoding its 1 remaining token over 7 ms.
        let last = segments[5].levels;
        assert_eq!((last.requests, last.prefill, last.decode, last.tokens), (1, 0, 1, 50 + 1));
        assert_eq!(segments[5].end_ns, 15 * MS);
    }

    #[test]
    fn a_long_answer_enters_tokens_in_flight_in_a_bounded_number_of_steps() {
        let mut curves = InFlightCurves::default();
        let chunk_ns: Vec<u64> = (1..=1000).map(|i| i * MS).collect();
        curves.add(&streamed_record(0, &chunk_ns, "", 0), Some(RecordTokens { input: 10, output: 1000 }), false);
        // In flight from and to; tokens at the start, in 32 steps, and gone at the end.
        assert_eq!((curves.request_changes.iter().count(), curves.token_changes.iter().count()), (2, 1 + 32 + 1));
        let added: i64 = curves.token_changes.iter().map(|c| i64::from(c.delta)).filter(|&n| n > 0).sum();
        assert_eq!(added, 10 + 1000, "every output token arrives");
        let segments = curves.segments();
        // The first step comes with chunk 32 (32 ms); the last before the end with chunk 969.
        assert_eq!((segments[1].start_ns, segments[1].levels.tokens), (32 * MS, 10 + 32));
        let last = segments.last().unwrap();
        assert_eq!((last.start_ns, last.levels.tokens), (969 * MS, 10 + 969));
    }

    #[test]
    fn failed_requests_count_in_flight_but_carry_no_tokens() {
        let mut curves = InFlightCurves::default();
        let mut failed = streamed_record(2 * MS, &[], "", 0);
        failed.scheduled_ns = MS;
        failed.end_ns = 6 * MS;
        curves.add(&failed, None, true);
        assert!(!curves.has_tokens() && !curves.has_phases());
        let segments = curves.segments();
        // Due at 1 ms: the window opens then, with nothing in flight until 2 ms (handed last).
        assert_eq!(segments.len(), 2);
        assert_eq!((segments[1].start_ns, segments[1].end_ns, segments[1].levels.requests), (MS, 2 * MS, 0));
        assert_eq!((segments[0].start_ns, segments[0].end_ns, segments[0].levels.requests), (2 * MS, 6 * MS, 1));
        assert_eq!(segments[0].within(0, 3 * MS).map(|s| (s.start_ns, s.end_ns)), Some((2 * MS, 3 * MS)));
        assert!(segments[0].within(7 * MS, 9 * MS).is_none());
    }
}
