//! `datasets.main.system_prompt` / `system_prompt_file` (`--system-prompt`,
//! `--system-prompt-file`) lowered: the verbatim text, the file read once here so a missing
//! one stops the run before it starts.

use std::path::Path;

use serde_json::Value;

use super::values::{anchored, opt_str};
use crate::config::ConfigError;

/// The verbatim system prompt the dataset asks for, if any; both keys, an unreadable file or
/// an empty text are errors naming the key and flag.
pub fn verbatim(dataset: &Value, base_dir: &Path) -> Result<Option<String>, ConfigError> {
    let text = opt_str(dataset, "system_prompt", "datasets.main.system_prompt")?;
    let file = opt_str(dataset, "system_prompt_file", "datasets.main.system_prompt_file")?;
    let (text, what) = match (text, file) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "datasets.main.system_prompt (--system-prompt) and system_prompt_file (--system-prompt-file) are exclusive; give one",
            ));
        }
        (Some(text), None) => (text.to_string(), "datasets.main.system_prompt (--system-prompt)".to_string()),
        (None, Some(file)) => {
            let path = anchored(base_dir, file);
            let text = std::fs::read_to_string(&path).map_err(|err| {
                ConfigError::new(format!(
                    "datasets.main.system_prompt_file (--system-prompt-file): cannot read {path} as UTF-8 text: {err}"
                ))
            })?;
            (text, format!("datasets.main.system_prompt_file (--system-prompt-file) {path}"))
        }
    };
    if text.trim().is_empty() {
        return Err(ConfigError::new(format!(
            "{what}: empty or only whitespace; leave it out to send no system prompt"
        )));
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_text_or_the_file_s_text_is_sent_as_written() {
        let dir = std::env::temp_dir().join(format!("aiperf-system-prompt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("system.txt"), "You are a pirate.\nSpeak like one.\n").unwrap();
        let read = |dataset: Value| verbatim(&dataset, &dir);
        assert_eq!(read(json!({})).unwrap(), None);
        assert_eq!(read(json!({"system_prompt": "Be brief."})).unwrap().as_deref(), Some("Be brief."));
        assert_eq!(
            read(json!({"system_prompt_file": "system.txt"})).unwrap().as_deref(),
            Some("You are a pirate.\nSpeak like one.\n")
        );
        let message = |dataset: Value| read(dataset).unwrap_err().to_string();
        assert!(message(json!({"system_prompt": "a", "system_prompt_file": "system.txt"})).contains("exclusive"));
        assert!(message(json!({"system_prompt": "  "})).contains("--system-prompt): empty"));
        assert!(message(json!({"system_prompt_file": "absent.txt"})).contains("cannot read"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
