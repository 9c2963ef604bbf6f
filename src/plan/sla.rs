//! An SLA filter in AIPerf's form (`metric_tag`, `stat`, `op`, `threshold`): what a search
//! judges each run by and what an adaptive_scale phase holds.

use serde::{Deserialize, Serialize};

/// An SLA: the run passes when `stat(metric_tag) op threshold`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlaFilter {
    pub metric_tag: String,
    pub stat: String,
    pub op: Op,
    pub threshold: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl SlaFilter {
    /// Read AIPerf's `--search-sla` form `metric:stat:op:threshold`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(':').map(str::trim).collect();
        let [metric_tag, stat, op, threshold] = parts.as_slice() else {
            return Err(format!("expects metric:stat:op:threshold, e.g. time_to_first_token:p95:lt:200; got `{text}`"));
        };
        let op = match *op {
            "lt" => Op::Lt,
            "le" => Op::Le,
            "gt" => Op::Gt,
            "ge" => Op::Ge,
            other => return Err(format!("op must be lt, le, gt or ge; got `{other}` in `{text}`")),
        };
        let threshold = threshold
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite())
            .ok_or_else(|| format!("threshold must be a number; got `{threshold}` in `{text}`"))?;
        Ok(SlaFilter { metric_tag: metric_tag.to_string(), stat: stat.to_string(), op, threshold })
    }

    pub fn passes(&self, value: f64) -> bool {
        match self.op {
            Op::Lt => value < self.threshold,
            Op::Le => value <= self.threshold,
            Op::Gt => value > self.threshold,
            Op::Ge => value >= self.threshold,
        }
    }

    /// How far `value` is past the threshold, as a fraction of it: negative inside the SLA,
    /// growing as the load gets worse.
    pub fn margin(&self, value: f64) -> f64 {
        let scale = if self.threshold.abs() > 0.0 { self.threshold.abs() } else { 1.0 };
        match self.op {
            Op::Lt | Op::Le => (value - self.threshold) / scale,
            Op::Gt | Op::Ge => (self.threshold - value) / scale,
        }
    }
}

impl std::fmt::Display for SlaFilter {
    /// AIPerf's `--search-sla` form, `metric:stat:op:threshold`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = match self.op {
            Op::Lt => "lt",
            Op::Le => "le",
            Op::Gt => "gt",
            Op::Ge => "ge",
        };
        write!(f, "{}:{}:{op}:{}", self.metric_tag, self.stat, self.threshold)
    }
}

/// SLA filters in any of AIPerf's forms: a list of `{metric_tag, stat, op, threshold}`
/// mappings or `metric:stat:op:threshold` strings, or the compact mapping
/// `{metric: {stat: {op: threshold}}}`.
pub fn sla_filters_of(value: &serde_json::Value) -> Result<Vec<SlaFilter>, String> {
    use serde_json::Value;
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(text) => SlaFilter::parse(text).map_err(|why| format!("[{index}]: {why}")),
                mapping => {
                    let mut mapping = mapping.clone();
                    if let Some(fields) = mapping.as_object_mut() {
                        fields.entry("stat").or_insert_with(|| Value::from("p95"));
                    }
                    serde_json::from_value(mapping).map_err(|why| format!("[{index}]: {why}"))
                }
            })
            .collect(),
        Value::Object(metrics) => {
            let mut filters = Vec::new();
            for (metric, stats) in metrics {
                let stats = stats.as_object().ok_or_else(|| format!("{metric}: expected a mapping of stats"))?;
                for (stat, ops) in stats {
                    let ops =
                        ops.as_object().ok_or_else(|| format!("{metric}.{stat}: expected a mapping of operators"))?;
                    for (op, threshold) in ops {
                        let threshold = threshold.as_f64().map_or_else(|| threshold.to_string(), |t| t.to_string());
                        let text = format!("{metric}:{stat}:{op}:{}", threshold.trim_matches('"'));
                        filters.push(SlaFilter::parse(&text).map_err(|why| format!("{metric}.{stat}.{op}: {why}"))?);
                    }
                }
            }
            Ok(filters)
        }
        other => Err(format!("expected a list of filters or a metric → stat → op → threshold mapping, got {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_read_alike() {
        let expected = vec![SlaFilter::parse("time_to_first_token:p95:lt:200").unwrap()];
        let forms = [
            serde_json::json!(["time_to_first_token:p95:lt:200"]),
            serde_json::json!([{"metric_tag": "time_to_first_token", "op": "lt", "threshold": 200}]),
            serde_json::json!({"time_to_first_token": {"p95": {"lt": 200}}}),
        ];
        for form in forms {
            assert_eq!(sla_filters_of(&form).unwrap(), expected, "{form}");
        }
        assert!(
            sla_filters_of(&serde_json::json!({"ttft": {"p95": {"below": 1}}})).unwrap_err().contains("ttft.p95.below")
        );
        assert!(sla_filters_of(&serde_json::json!(3)).is_err());
    }
}
