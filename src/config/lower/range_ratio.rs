//! `prompts.random_range_ratio` (`--random-range-ratio`) lowered: ISL and OSL drawn as whole
//! numbers, uniformly, from a window around their means, in AIPerf's vLLM or SGLang form
//! (`prompts.random_corpus_style`, `--random-corpus-style`).

use serde_json::Value;

use crate::config::ConfigError;
use crate::plan::Dist;

const KEY: &str = "datasets.main.prompts.random_range_ratio (--random-range-ratio)";

/// The ISL and OSL windows for `isl`/`osl` given in `prompts` (both fixed; `osl` is none when
/// not given), or `None` without a ratio: vLLM `[floor(mean (1 - r)), ceil(mean (1 + r))]`
/// (r < 1; the ISL's a ratio window, the OSL's ending at least 1), SGLang `[max(1, int(mean r)), mean]` (r <= 1, one ratio
/// for both).
pub fn windows(prompts: &Value, isl: &Dist, osl: Option<&Dist>) -> Result<Option<(Dist, Dist)>, ConfigError> {
    let Some(ratio) = prompts.get("random_range_ratio").filter(|ratio| !ratio.is_null()) else {
        return Ok(None);
    };
    let sglang = match prompts.get("random_corpus_style").and_then(Value::as_str).unwrap_or("vllm") {
        "vllm" => false,
        "sglang" => true,
        other => {
            return Err(ConfigError::new(format!(
                "datasets.main.prompts.random_corpus_style (--random-corpus-style): `{other}`; vllm or sglang"
            )));
        }
    };
    if prompts.get("sequence_distribution").is_some_and(|pairs| !pairs.is_null()) {
        return Err(ConfigError::new(format!("{KEY}: cannot be combined with --seq-dist; use one or the other")));
    }
    let needs = |flag: &str| ConfigError::new(format!("{KEY}: needs {flag} set explicitly (the window's mean)"));
    if prompts.get("isl").is_none_or(Value::is_null) {
        return Err(needs("--isl"));
    }
    let Some(osl) = osl else { return Err(needs("--osl")) };
    if !isl.is_fixed() || !osl.is_fixed() {
        return Err(ConfigError::new(format!(
            "{KEY}: cannot be combined with --isl-stddev or --osl-stddev; the window already sets the spread"
        )));
    }
    let (isl_mean, osl_mean) = (isl.mean().trunc(), osl.mean().trunc());
    if isl_mean < 1.0 || osl_mean < 1.0 {
        return Err(ConfigError::new(format!("{KEY}: needs --isl and --osl of at least 1")));
    }
    let (isl_ratio, osl_ratio) = ratios(ratio)?;
    if sglang {
        if isl_ratio != osl_ratio {
            return Err(ConfigError::new(format!("{KEY}: the sglang style takes one ratio for ISL and OSL")));
        }
        if !(0.0..=1.0).contains(&isl_ratio) {
            return Err(ConfigError::new(format!("{KEY}: must be from 0 to 1 in the sglang style, got {isl_ratio}")));
        }
        let window = |mean: f64| Dist::uniform((mean * isl_ratio).trunc().max(1.0), mean);
        return Ok(Some((window(isl_mean), window(osl_mean))));
    }
    for ratio in [isl_ratio, osl_ratio] {
        if !(0.0..1.0).contains(&ratio) {
            return Err(ConfigError::new(format!("{KEY}: must be at least 0 and below 1, got {ratio}")));
        }
    }
    // The OSL's window ends at least 1; the ISL's is drawn around its mean less the tokenizer's
    // leading tokens, which only the run knows.
    let osl =
        Dist::uniform((osl_mean * (1.0 - osl_ratio)).floor().max(1.0), (osl_mean * (1.0 + osl_ratio)).ceil().max(1.0));
    Ok(Some((Dist::ratio_window(isl_mean, isl_ratio), osl)))
}

/// A number (both), `"0.3"`, `'{"input": 0.3, "output": 0.5}'` (or that map), or `[0.3, 0.5]`.
fn ratios(ratio: &Value) -> Result<(f64, f64), ConfigError> {
    let bad = || ConfigError::new(format!("{KEY}: a number or {{\"input\": r, \"output\": r}}, got `{ratio}`"));
    let pair = |value: &Value| -> Option<(f64, f64)> {
        match value {
            Value::Number(number) => number.as_f64().map(|r| (r, r)),
            Value::Object(map) => Some((map.get("input")?.as_f64()?, map.get("output")?.as_f64()?)),
            Value::Array(items) if items.len() == 2 => Some((items[0].as_f64()?, items[1].as_f64()?)),
            _ => None,
        }
    };
    match ratio {
        Value::String(text) => match text.trim().parse::<f64>() {
            Ok(r) => Ok((r, r)),
            Err(_) => serde_json::from_str::<Value>(text).ok().as_ref().and_then(pair).ok_or_else(bad),
        },
        other => pair(other).ok_or_else(bad),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lowered(prompts: Value) -> Result<Option<(Dist, Dist)>, ConfigError> {
        let dist = |field: &str| prompts.get(field).map_or(Dist::fixed(550.0), |v| Dist::from_fields(v).unwrap());
        windows(&prompts, &dist("isl"), Some(&dist("osl")))
    }

    #[test]
    fn the_vllm_window_is_symmetric_and_the_sglang_one_ends_at_the_mean() {
        let vllm = lowered(json!({"isl": 550, "osl": 150, "random_range_ratio": "0.3"})).unwrap();
        assert_eq!(vllm, Some((Dist::ratio_window(550.0, 0.3), Dist::uniform(105.0, 195.0))));
        assert_eq!(Dist::ratio_window(550.0, 0.3).as_window(), Some((385, 715)));
        let apart = lowered(json!({"isl": 100, "osl": 10, "random_range_ratio": "{\"input\": 0.5, \"output\": 0.99}"}));
        assert_eq!(apart.unwrap(), Some((Dist::ratio_window(100.0, 0.5), Dist::uniform(1.0, 20.0))));
        let sglang =
            lowered(json!({"isl": 550, "osl": 150, "random_range_ratio": 0.25, "random_corpus_style": "sglang"}));
        assert_eq!(sglang.unwrap(), Some((Dist::uniform(137.0, 550.0), Dist::uniform(37.0, 150.0))));
        assert_eq!(lowered(json!({"isl": 550})).unwrap(), None);
    }

    #[test]
    fn what_aiperf_refuses_is_refused_by_name() {
        let message = |prompts: Value| lowered(prompts).unwrap_err().to_string();
        assert!(message(json!({"osl": 9, "random_range_ratio": 0.3})).contains("needs --isl set explicitly"));
        assert!(message(json!({"isl": 9, "osl": 9, "random_range_ratio": 1.0})).contains("below 1, got 1"));
        assert!(
            message(json!({"isl": {"mean": 9, "stddev": 2}, "osl": 9, "random_range_ratio": 0.3}))
                .contains("--isl-stddev")
        );
        assert!(message(json!({"isl": 9, "osl": 9, "random_range_ratio": "wide"})).contains("got `\"wide\"`"));
        let mixed = json!({"isl": 9, "osl": 9, "random_range_ratio": [0.1, 0.2], "random_corpus_style": "sglang"});
        assert!(message(mixed).contains("one ratio for ISL and OSL"));
    }
}
