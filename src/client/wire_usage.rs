//! The `usage` block of every endpoint kind, under each vendor's names (OpenAI's chat and
//! completions, Responses, audio and image APIs, Anthropic, DeepSeek, Gemini, Bedrock,
//! Mistral), read into the record's `Usage` with AIPerf 0.13's precedence: the first name
//! present wins, and a prompt count that leaves the cache out (Anthropic) gets it added back.

use serde::de::{Deserializer, IgnoredAny};
use serde::{Deserialize, Serialize};

use crate::record::Usage;

/// Every member a usage block may carry that a `Usage` field comes from. A member given twice
/// is refused, as for any derived struct (`fast_payload` relies on it).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    prompt_tokens: Option<u64>,
    input_tokens: Option<u64>,
    #[serde(rename = "promptTokenCount")]
    prompt_token_count: Option<u64>,
    #[serde(rename = "inputTokens")]
    input_tokens_camel: Option<u64>,
    completion_tokens: Option<u64>,
    output_tokens: Option<u64>,
    #[serde(rename = "candidatesTokenCount")]
    candidates_token_count: Option<u64>,
    #[serde(rename = "outputTokens")]
    output_tokens_camel: Option<u64>,
    total_tokens: Option<u64>,
    #[serde(rename = "totalTokenCount")]
    total_token_count: Option<u64>,
    #[serde(rename = "totalTokens")]
    total_tokens_camel: Option<u64>,
    prompt_tokens_details: Option<TokenDetails>,
    input_tokens_details: Option<TokenDetails>,
    completion_tokens_details: Option<TokenDetails>,
    output_tokens_details: Option<TokenDetails>,
    cache_read_input_tokens: Option<u64>,
    prompt_cache_hit_tokens: Option<u64>,
    #[serde(rename = "cachedContentTokenCount")]
    cached_content_token_count: Option<u64>,
    #[serde(rename = "cacheReadInputTokens")]
    cache_read_input_tokens_camel: Option<u64>,
    cached_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    #[serde(rename = "cacheWriteInputTokens")]
    cache_write_input_tokens_camel: Option<u64>,
    prompt_cache_miss_tokens: Option<u64>,
    #[serde(rename = "thoughtsTokenCount")]
    thoughts_token_count: Option<u64>,
    #[serde(rename = "toolUsePromptTokenCount")]
    tool_use_prompt_token_count: Option<u64>,
    /// Mistral sends `{}` when there was no audio: anything but a number is none.
    #[serde(default, deserialize_with = "number_or_none")]
    prompt_audio_seconds: Option<f64>,
}

/// `prompt_tokens_details` / `completion_tokens_details` and their `input_`/`output_` twins.
#[derive(Debug, Default, Deserialize, Serialize, Clone, Copy, PartialEq)]
pub(crate) struct TokenDetails {
    pub cached_tokens: Option<u64>,
    pub audio_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    pub accepted_prediction_tokens: Option<u64>,
    pub rejected_prediction_tokens: Option<u64>,
}

/// The names of `WireUsage`'s members, which `fast_payload` leaves to `serde_json` unless it
/// reads them itself.
pub(crate) const MEMBERS: &[&[u8]] = &[
    b"prompt_tokens",
    b"input_tokens",
    b"promptTokenCount",
    b"inputTokens",
    b"completion_tokens",
    b"output_tokens",
    b"candidatesTokenCount",
    b"outputTokens",
    b"total_tokens",
    b"totalTokenCount",
    b"totalTokens",
    b"prompt_tokens_details",
    b"input_tokens_details",
    b"completion_tokens_details",
    b"output_tokens_details",
    b"cache_read_input_tokens",
    b"prompt_cache_hit_tokens",
    b"cachedContentTokenCount",
    b"cacheReadInputTokens",
    b"cached_tokens",
    b"cache_creation_input_tokens",
    b"cacheWriteInputTokens",
    b"prompt_cache_miss_tokens",
    b"thoughtsTokenCount",
    b"toolUsePromptTokenCount",
    b"prompt_audio_seconds",
];

fn number_or_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumberOrOther {
        Number(f64),
        Other(IgnoredAny),
    }
    Ok(match NumberOrOther::deserialize(deserializer)? {
        NumberOrOther::Number(seconds) => Some(seconds),
        NumberOrOther::Other(_) => None,
    })
}

impl WireUsage {
    /// A usage of the usual OpenAI members, as `fast_payload` reads them.
    pub(crate) fn openai(
        prompt_tokens: Option<u64>,
        completion_tokens: Option<u64>,
        total_tokens: Option<u64>,
        prompt_tokens_details: Option<TokenDetails>,
        completion_tokens_details: Option<TokenDetails>,
    ) -> Self {
        WireUsage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
            prompt_tokens_details,
            completion_tokens_details,
            ..Default::default()
        }
    }
}

/// The first of `details` that holds a value for `field`.
fn in_details(details: [Option<TokenDetails>; 2], field: fn(&TokenDetails) -> Option<u64>) -> Option<u64> {
    details.iter().flatten().find_map(field)
}

impl From<WireUsage> for Usage {
    fn from(wire: WireUsage) -> Self {
        let prompt_details = [wire.prompt_tokens_details, wire.input_tokens_details];
        let completion_details = [wire.completion_tokens_details, wire.output_tokens_details];
        let cache_read = in_details(prompt_details, |d| d.cached_tokens).or(wire
            .cache_read_input_tokens
            .or(wire.prompt_cache_hit_tokens)
            .or(wire.cached_content_token_count)
            .or(wire.cache_read_input_tokens_camel)
            .or(wire.cached_tokens));
        let cache_write = wire.cache_creation_input_tokens.or(wire.cache_write_input_tokens_camel);
        // Anthropic and Bedrock count only the uncached rest as input: their cache reads and
        // writes are added back, so the prompt count means what every other vendor's means.
        let disjoint_cache = [
            wire.cache_read_input_tokens,
            wire.cache_creation_input_tokens,
            wire.cache_read_input_tokens_camel,
            wire.cache_write_input_tokens_camel,
        ];
        let with_cache = |input: u64| input + disjoint_cache.iter().flatten().sum::<u64>();
        let prompt_tokens = wire
            .prompt_tokens
            .or(wire.input_tokens.map(with_cache))
            .or(wire.prompt_token_count)
            .or(wire.input_tokens_camel.map(with_cache));
        Usage {
            prompt_tokens,
            completion_tokens: wire
                .completion_tokens
                .or(wire.output_tokens)
                .or(wire.candidates_token_count)
                .or(wire.output_tokens_camel),
            total_tokens: wire.total_tokens.or(wire.total_token_count).or(wire.total_tokens_camel),
            reasoning_tokens: in_details(completion_details, |d| d.reasoning_tokens).or(wire.thoughts_token_count),
            prompt_cache_read_tokens: cache_read,
            prompt_cache_write_tokens: cache_write,
            prompt_cache_miss_tokens: wire.prompt_cache_miss_tokens,
            prompt_audio_tokens: in_details(prompt_details, |d| d.audio_tokens),
            completion_audio_tokens: in_details(completion_details, |d| d.audio_tokens),
            accepted_prediction_tokens: in_details(completion_details, |d| d.accepted_prediction_tokens),
            rejected_prediction_tokens: in_details(completion_details, |d| d.rejected_prediction_tokens),
            tool_use_prompt_tokens: wire.tool_use_prompt_token_count,
            prompt_audio_seconds: wire.prompt_audio_seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(json: &str) -> Usage {
        serde_json::from_str::<WireUsage>(json).unwrap().into()
    }

    #[test]
    fn openai_details_give_cache_audio_reasoning_and_prediction_tokens() {
        let u = usage(
            r#"{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,
                "prompt_tokens_details":{"cached_tokens":64,"audio_tokens":3},
                "completion_tokens_details":{"reasoning_tokens":5,"audio_tokens":2,
                    "accepted_prediction_tokens":7,"rejected_prediction_tokens":1}}"#,
        );
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.total_tokens), (Some(100), Some(20), Some(120)));
        assert_eq!((u.prompt_cache_read_tokens, u.prompt_audio_tokens), (Some(64), Some(3)));
        assert_eq!((u.reasoning_tokens, u.completion_audio_tokens), (Some(5), Some(2)));
        assert_eq!((u.accepted_prediction_tokens, u.rejected_prediction_tokens), (Some(7), Some(1)));
        assert_eq!((u.prompt_cache_write_tokens, u.prompt_cache_miss_tokens), (None, None));
    }

    #[test]
    fn anthropic_input_gets_its_cache_reads_and_writes_added_back() {
        let u = usage(
            r#"{"input_tokens":10,"output_tokens":4,"cache_read_input_tokens":80,"cache_creation_input_tokens":6}"#,
        );
        assert_eq!(u.prompt_tokens, Some(96));
        assert_eq!((u.prompt_cache_read_tokens, u.prompt_cache_write_tokens), (Some(80), Some(6)));
        assert_eq!(u.completion_tokens, Some(4));
        // Without cache members input is the whole prompt (Responses, audio APIs).
        assert_eq!(usage(r#"{"input_tokens":10}"#).prompt_tokens, Some(10));
    }

    #[test]
    fn responses_deepseek_gemini_and_mistral_names() {
        let responses = usage(
            r#"{"input_tokens":50,"output_tokens":9,"input_tokens_details":{"cached_tokens":32},"output_tokens_details":{"reasoning_tokens":4}}"#,
        );
        assert_eq!(
            (responses.prompt_tokens, responses.prompt_cache_read_tokens, responses.reasoning_tokens),
            (Some(50), Some(32), Some(4))
        );
        let deepseek = usage(r#"{"prompt_tokens":40,"prompt_cache_hit_tokens":30,"prompt_cache_miss_tokens":10}"#);
        assert_eq!((deepseek.prompt_cache_read_tokens, deepseek.prompt_cache_miss_tokens), (Some(30), Some(10)));
        let gemini = usage(
            r#"{"promptTokenCount":12,"candidatesTokenCount":3,"totalTokenCount":15,"thoughtsTokenCount":2,"toolUsePromptTokenCount":5,"cachedContentTokenCount":8}"#,
        );
        assert_eq!(
            (gemini.prompt_tokens, gemini.completion_tokens, gemini.total_tokens),
            (Some(12), Some(3), Some(15))
        );
        assert_eq!(
            (gemini.reasoning_tokens, gemini.tool_use_prompt_tokens, gemini.prompt_cache_read_tokens),
            (Some(2), Some(5), Some(8))
        );
        assert_eq!(usage(r#"{"prompt_audio_seconds":12.5}"#).prompt_audio_seconds, Some(12.5));
        assert_eq!(usage(r#"{"prompt_audio_seconds":{}}"#).prompt_audio_seconds, None);
        // The nested OpenAI read wins over a top-level synonym.
        assert_eq!(
            usage(r#"{"cached_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}"#).prompt_cache_read_tokens,
            Some(2)
        );
    }
}
