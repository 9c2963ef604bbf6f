//! The `usage` block of OpenAI's audio and image APIs: `input_tokens`/`output_tokens` (vLLM
//! writes `prompt_tokens`/`completion_tokens`), read into the record's `Usage`.

use serde::Deserialize;

use crate::record::Usage;

#[derive(Debug, Deserialize)]
pub(crate) struct IoUsage {
    #[serde(alias = "prompt_tokens")]
    input_tokens: Option<u64>,
    #[serde(alias = "completion_tokens")]
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

impl From<IoUsage> for Usage {
    fn from(wire: IoUsage) -> Self {
        Usage {
            prompt_tokens: wire.input_tokens,
            completion_tokens: wire.output_tokens,
            total_tokens: wire.total_tokens,
            reasoning_tokens: None,
        }
    }
}
