//! The error summary: failed records grouped by identical error, most frequent first.

use std::collections::HashMap;

use crate::record::RecordError;
use crate::result::ErrorCount;

#[derive(Debug, Default)]
pub struct ErrorTally {
    counts: HashMap<RecordError, u64>,
}

impl ErrorTally {
    pub fn add(&mut self, error: &RecordError) {
        self.add_count(error, 1);
    }

    /// `count` failures with `error` (a segment's error summary line).
    pub fn add_count(&mut self, error: &RecordError, count: u64) {
        match self.counts.get_mut(error) {
            Some(kept) => *kept += count,
            None => {
                self.counts.insert(error.clone(), count);
            }
        }
    }

    /// Most frequent first; ties in the errors' natural order so the output is stable.
    pub fn into_summary(self) -> Vec<ErrorCount> {
        let mut summary: Vec<ErrorCount> =
            self.counts.into_iter().map(|(error_details, count)| ErrorCount { error_details, count }).collect();
        summary.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.error_details.cmp(&b.error_details)));
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: Option<u16>, kind: &str, message: &str) -> RecordError {
        RecordError { code, kind: kind.into(), message: message.into() }
    }

    #[test]
    fn identical_errors_are_grouped_and_sorted_by_count() {
        let mut tally = ErrorTally::default();
        let timeout = error(None, "timeout", "request timed out after 5s");
        let http_500 = error(Some(500), "http_error", "internal");
        let http_503 = error(Some(503), "http_error", "unavailable");
        for e in [&http_500, &timeout, &http_503, &timeout, &http_500, &timeout] {
            tally.add(e);
        }
        let summary = tally.into_summary();
        let counts: Vec<(Option<u16>, u64)> = summary.iter().map(|e| (e.error_details.code, e.count)).collect();
        assert_eq!(counts, vec![(None, 3), (Some(500), 2), (Some(503), 1)]);
        assert_eq!(summary[0].error_details, timeout);
    }
}
