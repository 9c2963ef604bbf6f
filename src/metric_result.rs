//! One metric's computed value: its kind, display names and statistics. The metrics registry,
//! thresholds and the run result share these types from below, so none reaches back up.

use serde::{Deserialize, Serialize};

/// How a metric is computed (spec: "Understanding Metric Types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    Record,
    Aggregate,
    Derived,
}

/// Statistics of one metric. Record metrics fill the distribution fields; aggregate and
/// derived metrics carry only `avg` (their single value), as the export schema says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub avg: f64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub p1: Option<f64>,
    pub p5: Option<f64>,
    pub p10: Option<f64>,
    pub p25: Option<f64>,
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub std: Option<f64>,
    pub count: Option<u64>,
    pub sum: Option<f64>,
}

impl Stats {
    /// The JSON block AIPerf writes for a metric: `{unit, avg, p1…p99, min, max, std, count,
    /// sum}`, leaving out the stats it lacks.
    pub fn block(&self, unit: &str) -> serde_json::Value {
        let mut block = serde_json::Map::new();
        block.insert("unit".into(), unit.into());
        block.insert("avg".into(), self.avg.into());
        let optional = [
            ("p1", self.p1),
            ("p5", self.p5),
            ("p10", self.p10),
            ("p25", self.p25),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p95", self.p95),
            ("p99", self.p99),
            ("min", self.min),
            ("max", self.max),
            ("std", self.std),
        ];
        for (name, value) in optional {
            if let Some(v) = value {
                block.insert(name.into(), v.into());
            }
        }
        if let Some(count) = self.count {
            block.insert("count".into(), count.into());
        }
        if let Some(sum) = self.sum {
            block.insert("sum".into(), sum.into());
        }
        serde_json::Value::Object(block)
    }

    /// The stats block of a single-valued (aggregate or derived) metric.
    pub fn scalar(value: f64) -> Self {
        Stats { avg: value, ..Default::default() }
    }

    /// Look a statistic up by its export name (`avg`, `p99`, `count`, …).
    pub fn get(&self, name: &str) -> Option<f64> {
        match name {
            "avg" | "mean" | "value" => Some(self.avg),
            "min" => self.min,
            "max" => self.max,
            "p1" => self.p1,
            "p5" => self.p5,
            "p10" => self.p10,
            "p25" => self.p25,
            "p50" | "median" => self.p50,
            "p75" => self.p75,
            "p90" => self.p90,
            "p95" => self.p95,
            "p99" => self.p99,
            "std" => self.std,
            "count" => self.count.map(|c| c as f64),
            "sum" => self.sum,
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricResult {
    /// The export name, e.g. `time_to_first_token`.
    pub tag: &'static str,
    /// The display name, e.g. `Time to First Token`.
    pub header: &'static str,
    /// The display unit, e.g. `ms`.
    pub unit: &'static str,
    pub kind: MetricKind,
    /// Shown in the console table (not `NO_CONSOLE`).
    pub console: bool,
    pub stats: Stats,
}
