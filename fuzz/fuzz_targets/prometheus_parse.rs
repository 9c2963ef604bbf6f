//! Fuzz target: the Prometheus text parser must never panic, and what it reports must be
//! consistent (no more samples than lines, bucket bounds sorted).
#![no_main]

use aiperf::server_metrics::parse::{SeriesValue, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let scrape = parse(&text);
    assert!(scrape.samples + scrape.bad_lines <= text.lines().count());
    for family in &scrape.families {
        for series in &family.series {
            if let SeriesValue::Histogram(h) = &series.value {
                assert!(h.buckets.windows(2).all(|pair| pair[0].1 < pair[1].1));
            }
        }
    }
});
