//! A phase's `rate_series` (`--request-rate-series FILE`) read into rate points: inline
//! `points`, a list of them, or a JSON file (`path`, or the bare string) holding a list of
//! points or `{"points": [..]}`; each point `{time_s, qps}`.

use serde_json::Value;

use super::values::opt_f64;
use crate::config::ConfigError;
use crate::config::normalize::snake_case;
use crate::plan::RatePoint;

/// The series at `key` of a phase, None when it has none.
pub fn read(series: &Value, key: &str) -> Result<Option<Vec<RatePoint>>, ConfigError> {
    match series {
        Value::Null => Ok(None),
        Value::String(path) => from_file(path, key).map(Some),
        Value::Array(points) => read_points(points, key).map(Some),
        Value::Object(fields) => match (fields.get("path").filter(|v| !v.is_null()), fields.get("points")) {
            (Some(Value::String(path)), None) => from_file(path, key).map(Some),
            (None, Some(Value::Array(points))) => read_points(points, &format!("{key}.points")).map(Some),
            (Some(_), Some(_)) => Err(ConfigError::new(format!("{key}: give `path` or `points`, not both"))),
            _ => Err(ConfigError::new(format!("{key}: expected `points: [..]` or `path: FILE.json`"))),
        },
        other => Err(ConfigError::new(format!("{key}: expected a list of points or a JSON file's path, got {other}"))),
    }
}

fn from_file(path: &str, key: &str) -> Result<Vec<RatePoint>, ConfigError> {
    let at = format!("{key} (--request-rate-series {path})");
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::new(format!("{at}: cannot read it: {e}")))?;
    let document: Value =
        serde_json::from_str(&text).map_err(|e| ConfigError::new(format!("{at}: not valid JSON: {e}")))?;
    match &document {
        Value::Array(points) => read_points(points, &at),
        Value::Object(fields) if fields.len() == 1 => match fields.get("points") {
            Some(Value::Array(points)) => read_points(points, &at),
            _ => Err(ConfigError::new(format!("{at}: expected {{\"points\": [..]}}"))),
        },
        _ => Err(ConfigError::new(format!("{at}: expected a list of points or {{\"points\": [..]}}"))),
    }
}

fn read_points(items: &[Value], key: &str) -> Result<Vec<RatePoint>, ConfigError> {
    let mut points = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Some(fields) = item.as_object() else {
            return Err(ConfigError::new(format!("{key}[{index}]: expected {{time_s, qps}}, got {item}")));
        };
        let point: Value = fields.iter().map(|(name, value)| (snake_case(name), value.clone())).collect();
        if let Some(extra) = point
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, _)| name)
            .find(|name| !["time_s", "qps"].contains(&name.as_str()))
        {
            return Err(ConfigError::new(format!("{key}[{index}]: unknown key `{extra}`; a point has time_s and qps")));
        }
        let (Some(time_s), Some(rps)) = (
            opt_f64(&point, "time_s", &format!("{key}[{index}].time_s"))?,
            opt_f64(&point, "qps", &format!("{key}[{index}].qps"))?,
        ) else {
            return Err(ConfigError::new(format!("{key}[{index}]: a point needs time_s and qps")));
        };
        points.push(RatePoint { time_s, rps });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn points_come_inline_as_a_list_or_from_a_file() {
        let expected = vec![RatePoint { time_s: 0.0, rps: 2.0 }, RatePoint { time_s: 5.0, rps: 8.0 }];
        let inline = json!({"points": [{"time_s": 0, "qps": 2}, {"time_s": 5, "qps": 8}]});
        assert_eq!(read(&inline, "k").unwrap(), Some(expected.clone()));
        assert_eq!(
            read(&json!([{"timeS": 0, "qps": 2}, {"timeS": 5, "qps": 8}]), "k").unwrap(),
            Some(expected.clone())
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("series.json");
        std::fs::write(&file, r#"{"points": [{"time_s": 0, "qps": 2}, {"time_s": 5, "qps": 8}]}"#).unwrap();
        let path = file.display().to_string();
        assert_eq!(read(&json!({"path": path}), "k").unwrap(), Some(expected.clone()));
        assert_eq!(read(&json!(path), "k").unwrap(), Some(expected));
    }

    #[test]
    fn a_bad_point_or_file_is_named() {
        let bad = read(&json!([{"time_s": 0, "rate": 2}]), "phases.p.rate_series").unwrap_err().to_string();
        assert!(bad.contains("phases.p.rate_series[0]: unknown key `rate`"), "{bad}");
        let missing = read(&json!("/no/such/series.json"), "k").unwrap_err().to_string();
        assert!(
            missing.contains("--request-rate-series /no/such/series.json") && missing.contains("cannot read"),
            "{missing}"
        );
    }
}
