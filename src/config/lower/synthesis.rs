//! `datasets.main.synthesis` (the `--synthesis-*` flags) lowered to a mooncake file dataset's
//! `TraceSynthesis`; AIPerf's `allow_dataset_wrap` (its agentic replay's) is not read here.

use serde_json::Value;

use super::values::{opt_f64, opt_u64};
use crate::config::ConfigError;
use crate::plan::TraceSynthesis;

/// The dataset's synthesis, or None when it has none or only defaults.
pub fn lower(dataset: &Value) -> Result<Option<TraceSynthesis>, ConfigError> {
    let Some(node) = dataset.get("synthesis").filter(|node| !node.is_null()) else { return Ok(None) };
    let key = |field: &str| format!("datasets.main.synthesis.{field} (--synthesis-{})", field.replace('_', "-"));
    let unit = TraceSynthesis::default();
    let number =
        |field: &str, default: f64| Ok::<f64, ConfigError>(opt_f64(node, field, &key(field))?.unwrap_or(default));
    let roots = opt_u64(node, "prefix_root_multiplier", &key("prefix_root_multiplier"))?;
    let settings = TraceSynthesis {
        speedup_ratio: number("speedup_ratio", unit.speedup_ratio)?,
        prefix_len_multiplier: number("prefix_len_multiplier", unit.prefix_len_multiplier)?,
        prefix_root_multiplier: match roots {
            None => unit.prefix_root_multiplier,
            Some(roots) => u32::try_from(roots).map_err(|_| {
                ConfigError::new(format!("{}: at most {}, got {roots}", key("prefix_root_multiplier"), u32::MAX))
            })?,
        },
        prompt_len_multiplier: number("prompt_len_multiplier", unit.prompt_len_multiplier)?,
        output_len_multiplier: number("output_len_multiplier", unit.output_len_multiplier)?,
        max_isl: opt_u64(node, "max_isl", &key("max_isl"))?,
        max_osl: opt_u64(node, "max_osl", &key("max_osl"))?,
    };
    if let Some((field, problem)) = settings.problem() {
        return Err(ConfigError::new(format!("{}: {problem}", key(field))));
    }
    Ok((settings != unit).then_some(settings))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_defaults_and_mistakes() {
        assert_eq!(lower(&json!({})).unwrap(), None);
        assert_eq!(lower(&json!({"synthesis": {"speedup_ratio": 1.0}})).unwrap(), None, "defaults change nothing");
        let read = lower(&json!({"synthesis": {"speedup_ratio": 2, "max_osl": 64, "prefix_root_multiplier": 3}}));
        let expected = TraceSynthesis {
            speedup_ratio: 2.0,
            max_osl: Some(64),
            prefix_root_multiplier: 3,
            ..TraceSynthesis::default()
        };
        assert_eq!(read.unwrap(), Some(expected));
        let err = lower(&json!({"synthesis": {"prompt_len_multiplier": 0}})).unwrap_err().to_string();
        assert!(
            err.contains("datasets.main.synthesis.prompt_len_multiplier (--synthesis-prompt-len-multiplier): must be above 0, got 0"),
            "{err}"
        );
    }
}
