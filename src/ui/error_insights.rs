//! Hints for failed requests whose errors say what to change: a server that rejects
//! `max_completion_tokens` (AIPerf's one insight), a model it does not serve, credentials it
//! refuses, its rate limit, prompts longer than its context. One line each, after the errors.

use std::fmt::Write;

use crate::metrics::registry;
use crate::record::RecordError;
use crate::result::RunResult;

/// Words with which servers refuse a field they do not know (pydantic, serde, OpenAI's own).
const UNKNOWN_FIELD_WORDS: [&str; 8] = [
    "extra_forbidden",
    "not permitted",
    "unknown field",
    "unrecognized",
    "unexpected keyword",
    "not supported",
    "unsupported",
    "not allowed",
];

/// A kind of error that has a known fix.
struct Insight {
    matches: fn(&RecordError, &str) -> bool,
    hint: &'static str,
}

const INSIGHTS: [Insight; 4] = [
    Insight {
        matches: |_, message| {
            message.contains("max_completion_tokens") && UNKNOWN_FIELD_WORDS.iter().any(|word| message.contains(word))
        },
        hint: "the server rejects `max_completion_tokens` (it takes `max_tokens`): add max_tokens_field: \"max_tokens\" \
               to the endpoint (aiperf profile: --use-legacy-max-tokens)",
    },
    Insight {
        matches: |error, message| {
            error.code == Some(404)
                && message.contains("model")
                && ["does not exist", "not found", "no such model", "unknown model"].iter().any(|w| message.contains(w))
        },
        hint: "the server does not serve the model the requests name: GET /v1/models on it lists the names it serves; \
               set the endpoint's model: to one (aiperf profile: -m)",
    },
    Insight {
        matches: |error, _| matches!(error.code, Some(401 | 403)),
        hint: "the server refused the requests' credentials: set the endpoint's api_key: (aiperf profile: --api-key), \
               or headers: for a scheme of its own (aiperf profile: -H)",
    },
    Insight {
        matches: |error, _| error.code == Some(429),
        hint: "the server rate-limited them (HTTP 429): lower the request rate or concurrency, or raise its limit",
    },
];

/// The hints that apply to `result`'s errors; empty when none does.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for insight in &INSIGHTS {
        let requests: u64 = result
            .error_summary
            .iter()
            .filter(|error| (insight.matches)(&error.error_details, &error.error_details.message.to_lowercase()))
            .map(|error| error.count)
            .sum();
        if requests > 0 {
            let _ = writeln!(out, "HINT: {requests} {}: {}.", requests_word(requests), insight.hint);
        }
    }
    let overflows = result.metric(registry::CONTEXT_OVERFLOW_COUNT.tag).map_or(0, |m| m.stats.avg.max(0.0) as u64);
    if overflows > 0 {
        let _ = writeln!(
            out,
            "HINT: {overflows} {} did not fit the model's context: lower the prompts' and outputs' lengths, or raise \
             the server's context (vLLM --max-model-len, SGLang --context-length, llama-server -c).",
            requests_word(overflows)
        );
    }
    out
}

fn requests_word(count: u64) -> &'static str {
    if count == 1 { "request" } else { "requests" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::result::{ErrorCount, Stats};

    fn error(code: Option<u16>, message: &str, count: u64) -> ErrorCount {
        ErrorCount { error_details: RecordError { code, kind: "http_error".into(), message: message.into() }, count }
    }

    #[test]
    fn each_known_error_gets_its_hint_with_the_requests_it_covers() {
        let mut result = sample_result();
        assert_eq!(render(&result), "");
        result.error_summary = vec![
            // vLLM's pydantic refusal, as AIPerf's detector reads it, in two messages.
            error(
                Some(400),
                r#"{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted'}]"}"#,
                5,
            ),
            error(Some(400), "Unrecognized request argument supplied: max_completion_tokens", 2),
            // A bad value of the field is not a field the server lacks.
            error(Some(400), "max_completion_tokens must be at least 1", 4),
            error(Some(404), "The model `llama-3` does not exist.", 3),
            error(Some(404), "no route for POST /v2/chat", 1),
            error(Some(401), "Invalid API Key", 1),
            error(Some(500), "internal error", 9),
        ];
        let text = render(&result);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("HINT: 7 requests: the server rejects `max_completion_tokens`"), "{text}");
        assert!(lines[0].contains("max_tokens_field: \"max_tokens\"") && lines[0].contains("--use-legacy-max-tokens"));
        assert!(lines[1].starts_with("HINT: 3 requests: the server does not serve the model"), "{text}");
        assert!(lines[2].starts_with("HINT: 1 request: the server refused the requests' credentials"), "{text}");

        result.error_summary = vec![error(Some(429), "Too Many Requests", 2)];
        result.metrics.push(registry::CONTEXT_OVERFLOW_COUNT.result(Stats::scalar(1.0)));
        let text = render(&result);
        assert!(text.contains("HINT: 2 requests: the server rate-limited them"), "{text}");
        assert!(text.contains("HINT: 1 request did not fit the model's context") && text.contains("llama-server -c"));
    }
}
