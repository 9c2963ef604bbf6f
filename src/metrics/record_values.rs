//! The values per-record metrics produce: one `MetricValue` per metric, gathered for one record
//! in a `RecordMetrics`. Shared by the per-record metric producers and their readers.

use serde::Serialize;

use super::registry::{self, MetricDef};

/// One record's value of one metric, in the metric's display unit; serialised as the bare
/// number (or list of numbers).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MetricValue {
    /// A whole number (token counts).
    Count(u64),
    Float(f64),
    /// Several values from one record (inter_chunk_latency).
    List(Vec<f64>),
}

impl MetricValue {
    /// Every number this value contributes to the metric's distribution.
    pub fn samples(&self) -> impl Iterator<Item = f64> + '_ {
        let (single, list) = match self {
            MetricValue::Count(n) => (Some(*n as f64), &[][..]),
            MetricValue::Float(v) => (Some(*v), &[][..]),
            MetricValue::List(values) => (None, values.as_slice()),
        };
        single.into_iter().chain(list.iter().copied())
    }
}

/// The metrics computed for one record, in registry order.
#[derive(Debug, Default)]
pub struct RecordMetrics {
    pub entries: Vec<(&'static MetricDef, MetricValue)>,
}

impl RecordMetrics {
    pub(crate) fn push(&mut self, def: &'static MetricDef, value: MetricValue) {
        self.entries.push((def, value));
    }

    pub(crate) fn in_registry_order(mut self) -> Self {
        // Each position is a search of the registry: once per entry, not once per comparison.
        self.entries.sort_by_cached_key(|(def, _)| registry::position(def));
        self
    }

    pub fn get(&self, def: &MetricDef) -> Option<&MetricValue> {
        self.entries.iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, v)| v)
    }

    /// `def`'s value when it is a count.
    pub fn count(&self, def: &MetricDef) -> Option<u64> {
        match self.get(def) {
            Some(MetricValue::Count(n)) => Some(*n),
            _ => None,
        }
    }
}
