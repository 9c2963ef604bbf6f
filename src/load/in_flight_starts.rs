//! The start of the oldest request still in flight, which lets the metrics thread sweep the
//! in-flight curves during the run (`RecordProcessor::advance_watermark`). Each request counts
//! itself in the epoch of its start from before its record can exist until after the record is
//! sent; the metrics thread reads the counts, then how many records were sent, and applies the
//! watermark once it has processed that many (the channel is first in, first out).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Epochs of 2^27 ns (134 ms): the watermark's grain.
const EPOCH_SHIFT: u32 = 27;
/// The ring of epochs (73 minutes): an older request shares its slot with a newer epoch's,
/// which only holds the watermark back.
const EPOCHS: u64 = 1 << 15;
/// A new watermark is looked for once per this many records processed.
const RECORDS_PER_LOOK: u64 = 1024;

pub struct InFlightStarts {
    epochs: Box<[AtomicU32]>,
    /// Records sent to the metrics thread so far (counted before each send).
    sent: AtomicU64,
}

impl Default for InFlightStarts {
    fn default() -> Self {
        Self { epochs: (0..EPOCHS).map(|_| AtomicU32::new(0)).collect(), sent: AtomicU64::new(0) }
    }
}

/// A request in flight since (at the latest) `start_ns`, until dropped.
pub struct InFlightStart<'a> {
    starts: &'a InFlightStarts,
    slot: usize,
}

impl Drop for InFlightStart<'_> {
    fn drop(&mut self) {
        self.starts.epochs[self.slot].fetch_sub(1, Ordering::Release);
    }
}

fn slot(epoch: u64) -> usize {
    (epoch % EPOCHS) as usize
}

impl InFlightStarts {
    /// A request whose record will start no earlier than `start_ns` (run clock); it counts
    /// until the guard is dropped, which must come after its record is sent.
    pub fn enter(&self, start_ns: u64) -> InFlightStart<'_> {
        let slot = slot(start_ns >> EPOCH_SHIFT);
        self.epochs[slot].fetch_add(1, Ordering::AcqRel);
        InFlightStart { starts: self, slot }
    }

    /// Called just before a record is sent to the metrics thread.
    pub fn note_sent(&self) {
        self.sent.fetch_add(1, Ordering::AcqRel);
    }

    /// The start of the oldest epoch in `[from_ns, now_ns]` with a request in flight; the start
    /// of `now_ns`'s epoch when there is none.
    fn oldest(&self, from_ns: u64, now_ns: u64) -> u64 {
        let (first, last) = (from_ns >> EPOCH_SHIFT, now_ns >> EPOCH_SHIFT);
        let mut scanned = (first..=last).take(EPOCHS as usize);
        // Past the ring's length every slot has been looked at: all empty, nothing is in flight.
        scanned.find(|epoch| self.epochs[slot(*epoch)].load(Ordering::Acquire) != 0).unwrap_or(last) << EPOCH_SHIFT
    }
}

/// The metrics thread's side: when a watermark may be applied.
pub struct WatermarkFeed {
    starts: Arc<InFlightStarts>,
    processed: u64,
    /// A watermark found, and how many records had been sent when it was.
    pending: Option<(u64, u64)>,
    /// The last watermark given.
    given_ns: u64,
}

impl WatermarkFeed {
    pub fn new(starts: Arc<InFlightStarts>) -> Self {
        Self { starts, processed: 0, pending: None, given_ns: 0 }
    }

    /// After each record processed: the watermark to give now, if any; `now_ns` (run clock) is
    /// read only when a new one is looked for.
    pub fn after_record(&mut self, now_ns: impl FnOnce() -> u64) -> Option<u64> {
        self.processed += 1;
        let ready = match self.pending {
            Some((watermark_ns, sent)) if self.processed >= sent => {
                self.pending = None;
                (watermark_ns > self.given_ns).then(|| {
                    self.given_ns = watermark_ns;
                    watermark_ns
                })
            }
            _ => None,
        };
        if self.pending.is_none() && self.processed.is_multiple_of(RECORDS_PER_LOOK) {
            // The counts first, then the records sent: a request no longer counted was sent before.
            let watermark_ns = self.starts.oldest(self.given_ns, now_ns());
            self.pending = Some((watermark_ns, self.starts.sent.load(Ordering::Acquire)));
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPOCH_NS: u64 = 1 << EPOCH_SHIFT;

    #[test]
    fn the_oldest_epoch_with_a_request_in_flight_holds_the_watermark() {
        let starts = InFlightStarts::default();
        assert_eq!(starts.oldest(0, 10 * EPOCH_NS + 5), 10 * EPOCH_NS, "nothing in flight: now's epoch");
        let old = starts.enter(3 * EPOCH_NS + 7);
        let newer = starts.enter(6 * EPOCH_NS);
        assert_eq!(starts.oldest(0, 10 * EPOCH_NS), 3 * EPOCH_NS);
        drop(old);
        assert_eq!(starts.oldest(0, 10 * EPOCH_NS), 6 * EPOCH_NS);
        drop(newer);
        assert_eq!(starts.oldest(0, 10 * EPOCH_NS), 10 * EPOCH_NS);
        // A request older than the ring shares a newer epoch's slot: the watermark stops there.
        let ancient = starts.enter(EPOCH_NS);
        assert_eq!(starts.oldest(EPOCHS * EPOCH_NS, (EPOCHS + 9) * EPOCH_NS), (EPOCHS + 1) * EPOCH_NS);
        drop(ancient);
        assert_eq!(starts.oldest(0, 3 * EPOCHS * EPOCH_NS), 3 * EPOCHS * EPOCH_NS, "every slot looked at");
    }

    #[test]
    fn a_watermark_is_given_only_once_the_records_sent_before_it_are_processed() {
        let starts = Arc::new(InFlightStarts::default());
        let mut feed = WatermarkFeed::new(starts.clone());
        let in_flight = starts.enter(5 * EPOCH_NS);
        for _ in 0..RECORDS_PER_LOOK + 10 {
            starts.note_sent();
        }
        let given: Vec<u64> = (0..RECORDS_PER_LOOK).filter_map(|_| feed.after_record(|| 9 * EPOCH_NS)).collect();
        assert!(given.is_empty(), "the first look comes after {RECORDS_PER_LOOK} records");
        // Found at the look (5 epochs: the request in flight), given once the 10 more sent are processed.
        let given: Vec<u64> = (0..10).filter_map(|_| feed.after_record(|| 9 * EPOCH_NS)).collect();
        assert_eq!(given, vec![5 * EPOCH_NS]);
        drop(in_flight);
        let given: Vec<u64> = (0..2 * RECORDS_PER_LOOK).filter_map(|_| feed.after_record(|| 12 * EPOCH_NS)).collect();
        assert_eq!(given, vec![12 * EPOCH_NS], "then up to now's epoch, and never given twice");
    }
}
