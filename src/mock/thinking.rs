//! Extended thinking on the mock's Messages API, as Anthropic's API treats it: each thinking
//! block the mock writes is signed (a signature of its text), and a request that sends thinking
//! back is held to the API's rules — a block the mock signed must carry its own text, and with
//! thinking on, an assistant turn that the request's tool results continue must lead with its
//! thinking (the API refuses it otherwise). So an agent that drops or alters its thinking fails
//! here as it would there.

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// What every signature the mock writes starts with; a signature without it (another server's)
/// is not checked.
const SIGNED_BY_MOCK: &str = "mock-";

/// The signature of a thinking block whose text is `thinking`.
pub fn signature(thinking: &str) -> String {
    let mut hasher = DefaultHasher::new();
    thinking.hash(&mut hasher);
    format!("{SIGNED_BY_MOCK}{:016x}", hasher.finish())
}

/// Type of a content block.
fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// The content blocks of a message's content (none when it is a string).
fn blocks(content: Option<&Value>) -> &[Value] {
    content.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// Check the thinking a request sends back, `contents` its messages' contents in order
/// (`thinking_on`: the request enables thinking); the error is a message for a 400 reply.
pub fn check_sent_back(contents: &[Option<&Value>], thinking_on: bool) -> Result<(), String> {
    for (at, content) in contents.iter().enumerate() {
        for (place, block) in blocks(*content).iter().enumerate() {
            if block_type(block) != Some("thinking") {
                continue;
            }
            let given = block.get("signature").and_then(Value::as_str).unwrap_or_default();
            let thinking = block.get("thinking").and_then(Value::as_str).unwrap_or_default();
            if given.starts_with(SIGNED_BY_MOCK) && given != signature(thinking) {
                return Err(format!("messages.{at}.content.{place}: Invalid `signature` in `thinking` block"));
            }
        }
    }
    let &[.., answer, results] = contents else { return Ok(()) };
    let continues_a_tool_use = blocks(results).iter().any(|block| block_type(block) == Some("tool_result"))
        && blocks(answer).iter().any(|block| block_type(block) == Some("tool_use"));
    let leads_with_thinking = blocks(answer)
        .first()
        .and_then(block_type)
        .is_some_and(|kind| kind == "thinking" || kind == "redacted_thinking");
    if thinking_on && continues_a_tool_use && !leads_with_thinking {
        let at = contents.len() - 2;
        return Err(format!(
            "messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When \
             `thinking` is enabled, a final `assistant` message must start with a thinking block",
            blocks(answer).first().and_then(block_type).unwrap_or("text")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::words;
    use super::*;

    /// A tool loop's last three messages, `answer` the content of the assistant's.
    fn tool_loop(answer: Value) -> [Value; 3] {
        [json!("find x"), answer, json!([{"type": "tool_result", "tool_use_id": "t", "content": "1"}])]
    }

    fn check(contents: &[Value; 3], thinking_on: bool) -> Result<(), String> {
        check_sent_back(&contents.each_ref().map(Some), thinking_on)
    }

    #[test]
    fn a_tool_loop_with_thinking_on_must_send_the_answer_s_own_thinking_back() {
        let call = json!({"type": "tool_use", "id": "t", "name": "f", "input": {}});
        let thought = words::output_text(3);
        let signed = json!({"type": "thinking", "thinking": thought, "signature": signature(&thought)});
        assert_eq!(check(&tool_loop(json!([signed, call])), true), Ok(()));
        let redacted = json!({"type": "redacted_thinking", "data": "x"});
        assert!(check(&tool_loop(json!([redacted, call])), true).is_ok());

        let dropped = tool_loop(json!([call]));
        let error = check(&dropped, true).unwrap_err();
        assert!(
            error.starts_with(
                "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`"
            ),
            "{error}"
        );
        assert!(check(&dropped, false).is_ok(), "thinking off: nothing to send back");

        let altered = json!({"type": "thinking", "thinking": "other", "signature": signature(&thought)});
        let error = check(&tool_loop(json!([altered, call])), true);
        assert_eq!(error, Err("messages.1.content.0: Invalid `signature` in `thinking` block".into()));
        let foreign = json!({"type": "thinking", "thinking": "other", "signature": "EqQBCkgIAR"});
        assert!(check(&tool_loop(json!([foreign, call])), true).is_ok());
    }
}
