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
    let causes = &result.token_check_causes;
    let mismatches = count_of(result, registry::OSL_MISMATCH_COUNT.tag);
    if mismatches > 0 {
        let away = format!(
            "more than min({} %, {} tokens) away from the requested one",
            thresholds.osl_pct, thresholds.osl_max_tokens
        );
        if causes.osl_as_asked == mismatches {
            let _ = writeln!(
                out,
                "NOTE: {mismatches} of {requests} requests got an output length, as the client counts it, {away}, \
                 though by the server's usage each was exactly as long as asked: {RECOUNTED}"
            );
        } else {
            render_osl_mismatches(&mut out, result, mismatches, requests, &away);
        }
    }
    let discrepancies = count_of(result, registry::USAGE_DISCREPANCY_COUNT.tag);
    if discrepancies > 0 {
        render_usage_discrepancies(&mut out, result, discrepancies, requests, thresholds.usage_pct);
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

/// Why a client's count of an output the server made exactly as long as asked differs.
const RECOUNTED: &str = "the client's tokenizer splits the streamed text into other tokens than the model generated \
    (another tokenizer does; the model's own does so for output that is not fluent text).\n  \
    OSL, ITL and the output throughputs use the client's count; use_server_token_count: true takes the server's.";

/// Outputs that missed the requested length, not all of them explained by the server's usage.
fn render_osl_mismatches(out: &mut String, result: &RunResult, mismatches: u64, requests: u64, away: &str) {
    let causes = &result.token_check_causes;
    let average_diff = result.metric(registry::OSL_MISMATCH_DIFF_PCT.tag).map_or(0.0, |m| m.stats.avg);
    let _ = writeln!(
        out,
        "WARNING: {mismatches} of {requests} requests got an output length {away} (average {average_diff:+.1} %)."
    );
    // Without the causes (a result of before them), the usual one.
    let short = if causes.osl_short + causes.osl_long == 0 { mismatches } else { causes.osl_short };
    if short > 0 {
        let _ = writeln!(
            out,
            "  {short} stopped short: the server did not honour max_tokens, usually because it stopped at EOS.\n  \
             Output-length metrics (OSL, ITL, throughput) describe what was generated, not what was asked.\n  \
             To make it generate exactly the requested length, add to the endpoint: \
             extra: #{{ ignore_eos: true }} (or min_tokens: <osl>; SGLang and TGI: min_new_tokens)."
        );
    }
    if causes.osl_long > 0 {
        let _ = writeln!(
            out,
            "  {} ran longer: the server generated past max_tokens, or the client splits the text into more tokens \
             than the model generated.",
            causes.osl_long
        );
    }
    if causes.osl_as_asked > 0 {
        let _ = writeln!(
            out,
            "  {} were exactly as long as asked by the server's usage: the client counts their text differently.",
            causes.osl_as_asked
        );
    }
    let _ = writeln!(
        out,
        "  If the difference is tokenizer disagreement instead, use tokenizer: \"<model id>\" or use_server_token_count: true."
    );
}

/// Requests whose server usage differs from the client's counts: a note when the server's own
/// counting explains every one (a chat template's tokens, outputs re-tokenized), else a warning.
fn render_usage_discrepancies(out: &mut String, result: &RunResult, discrepancies: u64, requests: u64, pct: f64) {
    let causes = &result.token_check_causes;
    let template = causes.template_extra();
    // More on every request, by amounts that vary: a template over conversations of several
    // turns does that, and so can a tokenizer that counts less than the model's.
    let server_always_more =
        causes.prompt_gap.filter(|(low, _)| *low > 0 && template.is_none() && causes.prompts_off > 0);
    let outputs_explained = causes.outputs_off == 0 || causes.outputs_as_asked();
    let explained = causes.prompts_off + causes.outputs_off > 0
        && (causes.prompts_off == 0 || template.is_some())
        && outputs_explained;
    let differs = format!(
        "for {discrepancies} of {requests} requests the server's usage differs from the client's token counts by more than {pct} %"
    );
    if explained {
        let _ = writeln!(out, "NOTE: {differs}, as the server's own counting explains (not the tokenizer):");
    } else if server_always_more.is_some() && outputs_explained {
        let _ = writeln!(
            out,
            "WARNING: {differs}: the tokenizer may not be the model's, or the server counts tokens the client does not."
        );
    } else {
        let _ = writeln!(out, "WARNING: {differs}: the tokenizer is probably not the model's.");
    }
    if let Some(extra) = template {
        let _ = writeln!(
            out,
            "  Prompts ({}): the server counts {extra} tokens more on each, the same on every request: its chat \
             template's (roles, special tokens); the ISL counts the messages' text, as AIPerf does.",
            causes.prompts_off
        );
    }
    if let Some((low, high)) = server_always_more {
        let _ = writeln!(
            out,
            "  Prompts ({}): the server counted more on every request ({low} to {high} tokens more): a chat template's \
             tokens do that, more with each message of a conversation (the ISL counts the messages' text, as AIPerf \
             does); so does a tokenizer that splits text into fewer tokens than the model's.",
            causes.prompts_off
        );
    }
    if causes.outputs_as_asked() {
        let _ = writeln!(
            out,
            "  Outputs ({}): the server generated exactly the requested length; the client's count of their text \
             differs.",
            causes.outputs_off
        );
    }
    if !explained {
        let _ = writeln!(
            out,
            "  Count with the model's own: tokenizer: \"<model id>\", or take the server's counts: \
             use_server_token_count: true."
        );
        let prompts_differ = result
            .metric(registry::USAGE_PROMPT_TOKENS_DIFF_PCT.tag)
            .is_some_and(|metric| metric.stats.max.unwrap_or(metric.stats.avg) > pct);
        if result.plan.apply_chat_template && prompts_differ {
            let _ = writeln!(
                out,
                "  The client counts the chat template's tokens too (apply_chat_template): a server that counts only \
                 the messages' text (aiperf mock does) differs by them."
            );
        }
    }
}

fn count_of(result: &RunResult, tag: &str) -> u64 {
    result.metric(tag).map_or(0, |m| m.stats.avg.max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::metrics::token_check_causes::TokenCheckCauses;
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
    fn a_chat_template_and_outputs_recounted_are_a_note_not_a_warning() {
        // As against llama-server with the model's own tokenizer: 31 template tokens on every
        // prompt, and outputs of exactly the requested 20 tokens that the client counts as 21–23.
        let mut result = sample_result();
        result.metrics.push(registry::USAGE_DISCREPANCY_COUNT.result(Stats::scalar(8.0)));
        result.metrics.push(registry::OSL_MISMATCH_COUNT.result(Stats::scalar(4.0)));
        result.token_check_causes = TokenCheckCauses {
            prompts_off: 8,
            prompt_gap: Some((31, 31)),
            outputs_off: 3,
            outputs_as_asked: 3,
            osl_as_asked: 4,
            ..Default::default()
        };
        let text = render(&result);
        assert!(!text.contains("WARNING") && !text.contains("probably not the model's"), "{text}");
        assert!(text.contains("NOTE: 4 of") && text.contains("exactly as long as asked"), "{text}");
        assert!(text.contains("NOTE: for 8 of") && text.contains("counts 31 tokens more on each"), "{text}");
        assert!(text.contains("Outputs (3)") && text.contains("use_server_token_count: true takes"), "{text}");
        assert_eq!(text.matches("use_server_token_count").count(), 1, "said once: {text}");

        // More on every request by amounts that vary (a template over conversations, or a
        // tokenizer that counts less): a warning that names both, the outputs' explanation kept.
        result.token_check_causes.prompt_gap = Some((12, 31));
        let text = render(&result);
        assert!(text.contains("WARNING: for 8 of") && text.contains("may not be the model's, or the server"), "{text}");
        assert!(text.contains("(12 to 31 tokens more)") && text.contains("Outputs (3)"), "{text}");
        // Fewer on some request: no template does that.
        result.token_check_causes.prompt_gap = Some((-4, 31));
        let text = render(&result);
        assert!(text.contains("WARNING: for 8 of") && text.contains("probably not the model's"), "{text}");
        assert!(!text.contains("Prompts (") && text.contains("Outputs (3)"), "{text}");

        // Outputs the server made longer than asked are not explained by it.
        result.token_check_causes.prompt_gap = Some((31, 31));
        result.token_check_causes.outputs_as_asked = 2;
        result.token_check_causes.osl_as_asked = 3;
        result.token_check_causes.osl_long = 1;
        let text = render(&result);
        assert!(text.contains("WARNING: for 8 of") && text.contains("Prompts (8)"), "{text}");
        assert!(
            text.contains("WARNING: 4 of") && text.contains("1 ran longer") && text.contains("3 were exactly"),
            "{text}"
        );
        assert!(!text.contains("stopped short"), "{text}");
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
