//! A run's records as the report draws them, collected one at a time in bounded memory: an
//! evenly spread sample of the rows, and what a sample cannot give counted over every row.

use std::sync::Arc;

use super::in_flight_counts::InFlightCounts;
use super::record_row::RecordRow;

/// Rows kept at most (about 14 MB); a run of up to this many requests is drawn from every row.
pub const SAMPLE_ROWS: usize = 100_000;

/// A systematic sample of a stream: every `step`-th item, the first one kept; when `capacity`
/// items are held, every other one is dropped and `step` doubles. The kept items stay in
/// stream order, evenly spread over the whole stream.
#[derive(Debug, Clone)]
pub struct Systematic<T> {
    kept: Vec<T>,
    step: u64,
    seen: u64,
    capacity: usize,
}

impl<T> Systematic<T> {
    pub fn new(capacity: usize) -> Self {
        Self { kept: Vec::new(), step: 1, seen: 0, capacity: capacity.max(2) }
    }

    pub fn push(&mut self, item: T) {
        if self.seen.is_multiple_of(self.step) {
            if self.kept.len() == self.capacity {
                let mut index = 0;
                self.kept.retain(|_| {
                    index += 1;
                    index % 2 == 1
                });
                self.step *= 2;
            }
            if self.seen.is_multiple_of(self.step) {
                self.kept.push(item);
            }
        }
        self.seen += 1;
    }

    pub fn kept(&self) -> &[T] {
        &self.kept
    }

    /// 1 when every item is kept, else the k of "1 in k".
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Every item pushed, kept or not.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

/// The records of one run: a sample of the rows, the failed requests (sampled the same way,
/// apart), and exact over every row: the count, the first start, the last end, each phase's
/// first start and the requests in flight per time bucket. Phase names and error kinds are shared, not one `String` a row.
#[derive(Debug, Clone)]
pub struct Records {
    rows: Systematic<RecordRow>,
    /// (end, error kind) of each failed request kept.
    errors: Systematic<(u64, Arc<str>)>,
    /// Each phase's name and the earliest start of its requests, in order of first sight.
    phases: Vec<(Arc<str>, u64)>,
    kinds: Vec<Arc<str>>,
    first_start_ns: Option<u64>,
    last_end_ns: u64,
    in_flight: InFlightCounts,
}

impl Default for Records {
    fn default() -> Self {
        Self::with_capacity(SAMPLE_ROWS)
    }
}

impl FromIterator<RecordRow> for Records {
    fn from_iter<I: IntoIterator<Item = RecordRow>>(rows: I) -> Self {
        let mut records = Self::default();
        rows.into_iter().for_each(|row| records.push(row));
        records
    }
}

impl Records {
    /// Keeping at most `capacity` rows and as many failed requests.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            rows: Systematic::new(capacity),
            errors: Systematic::new(capacity),
            phases: Vec::new(),
            kinds: Vec::new(),
            first_start_ns: None,
            last_end_ns: 0,
            in_flight: InFlightCounts::default(),
        }
    }

    /// The shared name of a phase (`""` for none), for a row about to be pushed.
    pub fn phase(&mut self, name: &str) -> Arc<str> {
        match self.phases.iter().find(|(known, _)| &**known == name) {
            Some((known, _)) => known.clone(),
            None => {
                let shared: Arc<str> = name.into();
                self.phases.push((shared.clone(), u64::MAX));
                shared
            }
        }
    }

    /// The shared label of an error kind, for a row about to be pushed.
    pub fn error_kind(&mut self, label: &str) -> Arc<str> {
        intern(&mut self.kinds, label)
    }

    /// Counts `row` and keeps it when the sample takes it.
    pub fn push(&mut self, row: RecordRow) {
        self.first_start_ns = Some(self.first_start_ns.map_or(row.start_ns, |first| first.min(row.start_ns)));
        self.last_end_ns = self.last_end_ns.max(row.end_ns);
        self.in_flight.add(row.start_ns, row.end_ns);
        let phase = self.phase(&row.phase);
        if let Some((_, first)) = self.phases.iter_mut().find(|(known, _)| Arc::ptr_eq(known, &phase)) {
            *first = (*first).min(row.start_ns);
        }
        if let Some(kind) = &row.error {
            self.errors.push((row.end_ns, kind.clone()));
        }
        self.rows.push(row);
    }

    /// The rows kept, in the order they came.
    pub fn rows(&self) -> &[RecordRow] {
        self.rows.kept()
    }

    /// Every record counted.
    pub fn total(&self) -> u64 {
        self.rows.seen()
    }

    /// Each kept row stands for this many records (1: every row is kept).
    pub fn step(&self) -> u64 {
        self.rows.step()
    }

    /// The (end, kind) of the failed requests kept, and how many each stands for.
    pub fn errors(&self) -> (&[(u64, Arc<str>)], u64) {
        (self.errors.kept(), self.errors.step())
    }

    /// The requests in flight, counted over every record.
    pub fn in_flight(&self) -> &InFlightCounts {
        &self.in_flight
    }

    pub fn first_start_ns(&self) -> Option<u64> {
        self.first_start_ns
    }

    pub fn last_end_ns(&self) -> Option<u64> {
        self.first_start_ns.map(|_| self.last_end_ns)
    }

    /// The earliest start of a request of phase `name`.
    pub fn phase_first_start_ns(&self, name: &str) -> Option<u64> {
        self.phases.iter().find(|(known, first)| &**known == name && *first != u64::MAX).map(|(_, first)| *first)
    }

    /// `" (1 in k of N requests)"` for a chart drawn from the sample, else empty.
    pub fn sample_note(&self) -> String {
        note(self.step(), self.total(), "requests")
    }

    /// The same for a chart of the failed requests.
    pub fn error_note(&self) -> String {
        note(self.errors.step(), self.errors.seen(), "failed requests")
    }
}

fn note(step: u64, total: u64, what: &str) -> String {
    if step == 1 { String::new() } else { format!(" (1 in {step} of {total} {what})") }
}

fn intern(known: &mut Vec<Arc<str>>, text: &str) -> Arc<str> {
    if let Some(found) = known.iter().find(|k| &***k == text) {
        return found.clone();
    }
    let shared: Arc<str> = text.into();
    known.push(shared.clone());
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(records: &mut Records, start_ns: u64, phase: &str, error: Option<&str>) -> RecordRow {
        RecordRow {
            start_ns,
            end_ns: start_ns + 5,
            phase: records.phase(phase),
            ttft_ms: Some(start_ns as f64),
            itl_ms: None,
            latency_ms: None,
            isl: None,
            osl: None,
            error: error.map(|kind| records.error_kind(kind)),
        }
    }

    #[test]
    fn the_sample_is_bounded_evenly_spread_and_in_order() {
        let mut sample = Systematic::new(1000);
        (0..1_000_000u64).for_each(|i| sample.push(i));
        let kept = sample.kept();
        assert!(kept.len() <= 1000 && kept.len() > 500, "{}", kept.len());
        let step = sample.step();
        assert!(step.is_power_of_two());
        assert!(kept.iter().enumerate().all(|(i, &v)| v == i as u64 * step), "every step-th item, from the first");
        assert!(1_000_000 - kept.last().unwrap() <= step, "the sample reaches the end");
        assert_eq!(sample.seen(), 1_000_000);
    }

    #[test]
    fn a_small_run_keeps_every_row() {
        let mut records = Records::with_capacity(10);
        for i in 0..10 {
            let r = row(&mut records, i * 10, "load", None);
            records.push(r);
        }
        assert_eq!((records.rows().len(), records.step(), records.total()), (10, 1, 10));
        assert_eq!(records.sample_note(), "");
    }

    #[test]
    fn counts_span_phases_and_errors_are_exact_over_every_row() {
        let mut records = Records::with_capacity(16);
        for i in 0..1000u64 {
            let phase = if i < 100 { "warmup" } else { "load" };
            let error = (i % 10 == 3).then_some(if i % 20 == 3 { "Timeout" } else { "HTTPError" });
            let r = row(&mut records, 1_000 + i, phase, error);
            records.push(r);
        }
        assert_eq!(records.total(), 1000);
        assert!(records.rows().len() <= 16);
        assert_eq!(records.step(), 64);
        assert_eq!((records.first_start_ns(), records.last_end_ns()), (Some(1_000), Some(1_999 + 5)));
        assert_eq!(records.phase_first_start_ns("warmup"), Some(1_000));
        assert_eq!(records.phase_first_start_ns("load"), Some(1_100));
        assert_eq!(records.phase_first_start_ns("cooldown"), None);
        let (errors, per_error) = records.errors();
        assert_eq!(errors.len() as u64, 100u64.div_ceil(per_error), "100 failures, 1 in {per_error} kept");
        assert!(Arc::ptr_eq(&records.rows()[2].phase, &records.rows()[3].phase), "phase names are shared");
        assert_eq!(records.sample_note(), " (1 in 64 of 1000 requests)");
        assert_eq!(records.error_note(), " (1 in 8 of 100 failed requests)");
    }
}
