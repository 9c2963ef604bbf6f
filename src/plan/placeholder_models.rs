//! Model names AIPerf takes for placeholders (`mock-model`, `test`, `my-model`, ...): without
//! `--tokenizer` it counts their tokens with its built-in tokenizer rather than look them up on
//! the Hugging Face hub. The rule as AIPerf 0.13 states it: no path, then, lowercased with `_`
//! read as `-`, one of a few whole names or containing one of a few fragments.

/// Names that are placeholders as a whole.
const WHOLE: [&str; 7] = ["test", "mock", "fake", "dummy", "example", "sample", "placeholder"];

/// Fragments that make any name a placeholder.
const FRAGMENTS: [&str; 10] = [
    "mock-",
    "-mock",
    "fake-",
    "-fake",
    "test-model",
    "-test-model",
    "your-model",
    "my-model",
    "model-name",
    "model-id",
];

/// Whether AIPerf takes `model` for a placeholder.
pub fn is_placeholder(model: &str) -> bool {
    if model.is_empty() || model.contains(['/', '\\']) || model.starts_with(['.', '~']) {
        return false;
    }
    let name = model.to_lowercase().replace('_', "-");
    WHOLE.contains(&name.as_str()) || FRAGMENTS.iter().any(|fragment| name.contains(fragment))
}

#[cfg(test)]
mod tests {
    use super::is_placeholder;

    #[test]
    fn placeholders_are_told_as_aiperf_tells_them() {
        for name in ["mock-model", "Test_Model_v2", "fake-llama", "test", "MOCK", "my_model", "llama-mock"] {
            assert!(is_placeholder(name), "{name}");
        }
        for name in ["m", "llama", "Qwen/Qwen3-0.6B", "./mock-model", "~/fake-x", "testing", "mockingbird", ""] {
            assert!(!is_placeholder(name), "{name}");
        }
    }
}
