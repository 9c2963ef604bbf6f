//! The `metrics` block of a profile_export.jsonl line, `{tag: {"value", "unit"}}`, written into
//! the line around serde_json's values: the text around each value (`"tag":{"value":` and
//! `,"unit":"ms"}`) is the same in every line, so serde_json renders it once per metric and
//! it is copied after that, instead of escaping two names per metric in every line.

use std::collections::hash_map::Entry;

use crate::metrics::record_values::{MetricValue, RecordMetrics};
use crate::metrics::registry::{GOOD_REQUEST_COUNT, MetricDef, MetricFlags};

/// The text before and after a metric's value.
type Around = (Box<[u8]>, Box<[u8]>);

/// Writes metrics blocks, keeping each metric's text once rendered (by the metric's address).
#[derive(Default)]
pub(super) struct MetricsBlock {
    around: foldhash::HashMap<usize, Around>,
}

impl MetricsBlock {
    /// Appends the block to `line`: each metric shown per record, then, when the run has SLOs,
    /// AIPerf's good mark (1 when every SLO was met, else 0).
    pub fn write(&mut self, line: &mut Vec<u8>, metrics: &RecordMetrics, good: Option<bool>) -> serde_json::Result<()> {
        let good = good.map(|good| MetricValue::Count(u64::from(good)));
        let shown =
            metrics.entries.iter().filter(|(def, _)| !def.has(MetricFlags::NO_INDIVIDUAL_RECORDS) && def.exported());
        let entries =
            shown.map(|(def, value)| (*def, value)).chain(good.iter().map(|good| (&GOOD_REQUEST_COUNT, good)));
        line.push(b'{');
        for (index, (def, value)) in entries.enumerate() {
            if index > 0 {
                line.push(b',');
            }
            let (before, after) = self.around(def)?;
            line.extend_from_slice(before);
            serde_json::to_writer(&mut *line, value)?;
            line.extend_from_slice(after);
        }
        line.push(b'}');
        Ok(())
    }

    fn around(&mut self, def: &'static MetricDef) -> serde_json::Result<&Around> {
        Ok(match self.around.entry(std::ptr::from_ref(def) as usize) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => new.insert(rendered(def)?),
        })
    }
}

/// `"tag":{"value":` and `,"unit":"…"}`, escaped by serde_json.
fn rendered(def: &MetricDef) -> serde_json::Result<Around> {
    let mut before = serde_json::to_vec(def.tag)?;
    before.extend_from_slice(br#":{"value":"#);
    let mut after = br#","unit":"#.to_vec();
    serde_json::to_writer(&mut after, def.unit)?;
    after.push(b'}');
    Ok((before.into(), after.into()))
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::metrics::registry;

    #[test]
    fn the_block_is_what_serde_json_writes_for_the_same_map() {
        let metrics = RecordMetrics {
            entries: vec![
                (&registry::TIME_TO_FIRST_TOKEN, MetricValue::Float(266.581565)),
                (&registry::INTER_CHUNK_LATENCY, MetricValue::List(vec![0.25, 1e-7, 3.0])),
                (&registry::CREDIT_TO_START_LATENCY, MetricValue::Float(1.5)),
                (&registry::OUTPUT_SEQUENCE_LENGTH, MetricValue::Count(64)),
                (&registry::REQUEST_LATENCY, MetricValue::Float(f64::NAN)),
            ],
        };
        let mut block = MetricsBlock::default();
        for good in [None, Some(true), Some(false)] {
            // Twice each: the second line reuses the rendered text.
            for _ in 0..2 {
                let mut line = b"prefix".to_vec();
                block.write(&mut line, &metrics, good).unwrap();
                let mut expected = Map::new();
                let shown = metrics.entries.iter().filter(|(def, _)| def.tag != "credit_to_start_latency");
                for (def, value) in shown {
                    expected.insert(def.tag.into(), json!({ "value": value, "unit": def.unit }));
                }
                if let Some(good) = good {
                    expected.insert(
                        GOOD_REQUEST_COUNT.tag.into(),
                        json!({ "value": u8::from(good), "unit": GOOD_REQUEST_COUNT.unit }),
                    );
                }
                let expected = serde_json::to_string(&Value::Object(expected)).unwrap();
                assert_eq!(std::str::from_utf8(&line[6..]).unwrap(), expected);
            }
        }
        let mut line = Vec::new();
        block.write(&mut line, &RecordMetrics::default(), None).unwrap();
        assert_eq!(line, b"{}");
    }
}
