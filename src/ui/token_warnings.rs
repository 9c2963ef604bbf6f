//! End-of-run warnings about token counts: outputs that missed the requested length (the
//! server did not honour max_tokens), server usage that disagrees with the client's counts, and
//! server usage without prompt-cache reads (as AIPerf hints).

use std::fmt::Write;

use crate::metrics::registry;
use crate::metrics::token_checks::TokenCheckThresholds;
use crate::result::RunResult;

/// The warnings that apply to `result`; empty when every count was within its threshold.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let thresholds = TokenCheckThresholds::current();
    let requests = count_of(result, registry::REQUEST_COUNT.tag);
    let mismatches = count_of(result, registry::OSL_MISMATCH_COUNT.tag);
    if mismatches > 0 {
        let average_diff = result.metric(registry::OSL_MISMATCH_DIFF_PCT.tag).map_or(0.0, |m| m.stats.avg);
        let _ = writeln!(
            out,
            "WARNING: {mismatches} of {requests} requests got an output length more than \
             min({} %, {} tokens) away from the requested one \
             (average {average_diff:+.1} %): the server did not honour max_tokens, usually because it stopped at EOS.\n  \
             Output-length metrics (OSL, ITL, throughput) describe what was generated, not what was asked.\n  \
             To make it generate exactly the requested length, add to the endpoint: \
             extra: #{{ ignore_eos: true }} (or min_tokens: <osl>; SGLang and TGI: min_new_tokens).\n  \
             If the difference is tokenizer disagreement instead, use tokenizer: \"<model id>\" or \
             use_server_token_count: true.",
            thresholds.osl_pct, thresholds.osl_max_tokens
        );
    }
    let discrepancies = count_of(result, registry::USAGE_DISCREPANCY_COUNT.tag);
    if discrepancies > 0 {
        let _ = writeln!(
            out,
            "WARNING: for {discrepancies} of {requests} requests the server's usage differs from the client's token \
             counts by more than {} %: the tokenizer is probably not the model's.\n  \
             Count with the model's own: tokenizer: \"<model id>\", or take the server's counts: \
             use_server_token_count: true.",
            thresholds.usage_pct
        );
        let prompts_differ = result
            .metric(registry::USAGE_PROMPT_TOKENS_DIFF_PCT.tag)
            .is_some_and(|metric| metric.stats.max.unwrap_or(metric.stats.avg) > thresholds.usage_pct);
        if result.plan.apply_chat_template && prompts_differ {
            let _ = writeln!(
                out,
                "  The client counts the chat template's tokens too (apply_chat_template): a server that counts only \
                 the messages' text (aiperf mock does) differs by them."
            );
        }
    }
    if result.metric(registry::TOTAL_USAGE_PROMPT_TOKENS.tag).is_some()
        && result.metric(registry::TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS.tag).is_none()
    {
        let _ = writeln!(
            out,
            "NOTE: the server reports token usage but no prompt-cache reads \
             (usage.prompt_tokens_details.cached_tokens), so the prompt-cache metrics are empty; a server with \
             prefix caching reports them when asked: vLLM --enable-prompt-tokens-details, SGLang \
             --enable-cache-report (TensorRT-LLM always does)."
        );
    }
    out
}

fn count_of(result: &RunResult, tag: &str) -> u64 {
    result.metric(tag).map_or(0, |m| m.stats.avg.max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::result::Stats;

    #[test]
    fn a_run_without_mismatches_says_nothing() {
        let mut result = sample_result();
        assert_eq!(render(&result), "");
        result.metrics.push(registry::OSL_MISMATCH_COUNT.result(Stats::scalar(0.0)));
        result.metrics.push(registry::USAGE_DISCREPANCY_COUNT.result(Stats::scalar(0.0)));
        assert_eq!(render(&result), "");
    }

    #[test]
    fn mismatches_are_explained_with_what_to_do() {
        let mut result = sample_result();
        result.metrics.push(registry::OSL_MISMATCH_COUNT.result(Stats::scalar(3.0)));
        result.metrics.push(registry::OSL_MISMATCH_DIFF_PCT.result(Stats::scalar(-42.5)));
        let text = render(&result);
        let requests = count_of(&result, registry::REQUEST_COUNT.tag);
        assert!(text.contains(&format!("WARNING: 3 of {requests} requests")), "{text}");
        assert!(text.contains("(average -42.5 %)") && text.contains("did not honour max_tokens"), "{text}");
        assert!(text.contains("ignore_eos: true") && text.contains("min_tokens"), "{text}");
        assert!(!text.contains("usage differs"), "{text}");

        result.metrics.push(registry::USAGE_DISCREPANCY_COUNT.result(Stats::scalar(2.0)));
        let text = render(&result);
        assert!(text.contains("for 2 of") && text.contains("use_server_token_count: true"), "{text}");
        assert!(!text.contains("chat template"), "{text}");

        // With a chat template, a prompt count that differs may be the template's tokens.
        result.plan.apply_chat_template = true;
        result.metrics.push(registry::USAGE_PROMPT_TOKENS_DIFF_PCT.result(Stats::scalar(0.0)));
        assert!(!render(&result).contains("chat template"), "only the output counts differ");
        result.metrics.pop();
        result.metrics.push(registry::USAGE_PROMPT_TOKENS_DIFF_PCT.result(Stats::scalar(25.0)));
        assert!(render(&result).contains("counts the chat template's tokens too"));
    }

    #[test]
    fn usage_without_cache_reads_gets_one_note_and_a_reported_zero_none() {
        let mut result = sample_result();
        result.metrics.push(registry::TOTAL_USAGE_PROMPT_TOKENS.result(Stats::scalar(100.0)));
        let text = render(&result);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("no prompt-cache reads") && text.contains("--enable-prompt-tokens-details"), "{text}");
        result.metrics.push(registry::TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS.result(Stats::scalar(0.0)));
        assert_eq!(render(&result), "");
    }
}
