//! Tool calls: a chat, Messages or Responses request that offers `tools` is answered with a
//! call to its first tool while its history holds fewer tool results than its depth, and with
//! text after, so an agent loop against the mock ends after a known number of turns. Each API
//! writes the call in its own shape (`messages_api.rs`, `responses_api.rs`; chat's here); the
//! call itself (its id, arguments and their pieces over the output tokens) is shared. A turn
//! also counts the reasoning its history sends back with earlier answers, for `/metrics`.

use serde::Deserialize;
use serde_json::Value;

use super::words;
use crate::dataset::tokenizer::Tokenizer;

/// Tool calls a session gets before text when the request names no depth (`mock_tool_depth`).
pub const DEFAULT_TOOL_DEPTH: u64 = 2;

/// What a request says about tools: the tools it offers, the tool results its history holds,
/// the depth it asks for, and the reasoning its history sends back with earlier answers.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ToolTurn {
    /// The first offered tool's name; None when the request offers no tool.
    pub first_tool: Option<String>,
    pub tool_results: u64,
    pub depth: Option<u64>,
    /// Messages `thinking` and `redacted_thinking` blocks, Responses `reasoning` items.
    pub reasoning_sent_back: u64,
}

#[derive(Deserialize)]
struct WireToolRequest {
    #[serde(default)]
    tools: Option<Vec<WireTool>>,
    /// Chat and Messages.
    #[serde(default)]
    messages: Option<Vec<WireItem>>,
    /// Responses (a list of items, or a string).
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    mock_tool_depth: Option<u64>,
}

/// A chat tool (`function.name`), or a Messages or Responses one (`name`).
#[derive(Deserialize)]
struct WireTool {
    #[serde(default)]
    function: Option<WireFunction>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
}

/// A chat or Messages message.
#[derive(Deserialize)]
struct WireItem {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Option<Value>,
}

/// `item`'s type.
fn type_of(item: &Value) -> Option<&str> {
    item.get("type").and_then(Value::as_str)
}

impl WireItem {
    fn blocks(&self) -> &[Value] {
        self.content.as_ref().and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
    }

    /// The tool results it holds: a chat `tool` message is one; a Messages message holds its
    /// `tool_result` blocks.
    fn tool_results(&self) -> usize {
        if self.role.as_deref() == Some("tool") {
            return 1;
        }
        self.blocks().iter().filter(|block| type_of(block) == Some("tool_result")).count()
    }

    /// The thinking blocks it holds (a Messages answer sent back).
    fn thinking_blocks(&self) -> usize {
        self.blocks().iter().filter(|block| matches!(type_of(block), Some("thinking" | "redacted_thinking"))).count()
    }
}

/// The request's tools and tool results; None for a body that mentions neither (read without
/// a second parse of the whole body) or that cannot be read.
pub fn tool_turn(body: &[u8]) -> Option<ToolTurn> {
    let finder = memchr::memmem::Finder::new(b"\"tool");
    finder.find(body)?;
    let wire: WireToolRequest = serde_json::from_slice(body).ok()?;
    let first_tool = wire
        .tools
        .unwrap_or_default()
        .into_iter()
        .find_map(|tool| tool.function.and_then(|function| function.name).or(tool.name));
    let messages = wire.messages.unwrap_or_default();
    let in_messages: usize = messages.iter().map(WireItem::tool_results).sum();
    let items = wire.input.as_ref().and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let of_type = |kind: &str| items.iter().filter(|item| type_of(item) == Some(kind)).count();
    let thinking: usize = messages.iter().map(WireItem::thinking_blocks).sum();
    Some(ToolTurn {
        first_tool,
        tool_results: (in_messages + of_type("function_call_output")) as u64,
        depth: wire.mock_tool_depth,
        reasoning_sent_back: (thinking + of_type("reasoning")) as u64,
    })
}

impl ToolTurn {
    /// The tool this turn calls: its first tool, while the results are fewer than the depth.
    pub fn calls(&self, default_depth: u64) -> Option<&str> {
        let depth = self.depth.unwrap_or(default_depth);
        self.first_tool.as_deref().filter(|_| self.tool_results < depth)
    }
}

/// The id of the call at `step` (numbered by the results the history holds).
pub fn call_id(step: u64) -> String {
    format!("call_{step}")
}

/// The call's arguments: a JSON object.
pub fn arguments(step: u64) -> String {
    format!(r#"{{"step":{step},"query":"{}"}}"#, words::output_text(2).trim())
}

/// The output tokens of the call at `step` (its time to generate, its usage): its name and
/// arguments as `tokenizer` counts them, as a client counts a tool call's output.
pub fn call_tokens(tokenizer: &Tokenizer, name: &str, step: u64) -> u64 {
    (tokenizer.count(&format!("{name}{}", arguments(step))) as u64).max(1)
}

/// How one API streams a call: the event that opens it (given the call's id), the event of a
/// piece of its arguments (JSON string content), and the events that close it.
pub struct CallShape<Open, Piece> {
    pub open: Open,
    pub piece: Piece,
    pub close: String,
}

/// The events of the first `tokens` output tokens, one entry each, as `push` writes token
/// `index`'s: the reasoning an answer streams before its call.
pub fn events_per_token(tokens: u64, push: impl Fn(&mut String, u64)) -> Vec<String> {
    (0..tokens)
        .map(|index| {
            let mut out = String::new();
            push(&mut out, index);
            out
        })
        .collect()
}

/// The streamed call's events, one entry per output token (`tokens`, at least 1), so the
/// stream paces them as it paces text tokens: the first token's event opens the call (its id
/// and name), the others carry the arguments in pieces, and the last is followed by the events
/// that close it, as a server streams a call while it decodes it. An entry may be empty (the
/// arguments are shorter than the tokens left); its token then sends nothing.
pub fn token_events(
    step: u64,
    tokens: u64,
    shape: CallShape<impl Fn(&str) -> String, impl Fn(&str) -> String>,
) -> Vec<String> {
    let quoted = json_string(&arguments(step));
    let arguments = &quoted[1..quoted.len() - 1];
    let mut events = vec![(shape.open)(&call_id(step))];
    if tokens <= 1 {
        events[0].push_str(&(shape.piece)(arguments));
    } else {
        let pieces = pieces(arguments, (tokens - 1) as usize);
        events.extend(pieces.into_iter().map(|text| if text.is_empty() { String::new() } else { (shape.piece)(text) }));
    }
    if let Some(last) = events.last_mut() {
        last.push_str(&shape.close);
    }
    events
}

/// A chat stream's call events (`chunk_head`: the chunks' members up to `choices`).
pub fn chat_token_events(chunk_head: &str, name: &str, step: u64, tokens: u64) -> Vec<String> {
    let event = |choices: &str| format!("data: {chunk_head}{choices}}}\n\n");
    let name = json_string(name);
    let shape = CallShape {
        open: |id: &str| {
            event(&format!(
                r#"[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":{name},"arguments":""}}}}]}},"finish_reason":null}}]"#
            ))
        },
        piece: |text: &str| {
            event(&format!(
                r#"[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{text}"}}}}]}},"finish_reason":null}}]"#
            ))
        },
        close: event(r#"[{"index":0,"delta":{},"finish_reason":"tool_calls"}]"#),
    };
    token_events(step, tokens, shape)
}

/// `text` (JSON string content) cut into `count` pieces of about equal length, never inside a
/// character or right after a backslash (an escape stays whole); some may be empty.
fn pieces(text: &str, count: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(count);
    let mut start = 0;
    for piece in 1..=count {
        let target = (text.len() * piece / count).max(start);
        let end = (target..text.len())
            .find(|&at| text.is_char_boundary(at) && !text[..at].ends_with('\\'))
            .unwrap_or(text.len());
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

/// The whole (non-streamed) chat answer's choice, with the `reasoning_content` of its first
/// `reasoning_tokens` when it reasoned first.
pub fn whole_choice(name: &str, step: u64, reasoning_tokens: u64) -> String {
    let id = call_id(step);
    let reasoning = match reasoning_tokens {
        0 => String::new(),
        tokens => format!(r#","reasoning_content":"{}""#, words::output_text(tokens)),
    };
    format!(
        r#"{{"index":0,"message":{{"role":"assistant","content":null{reasoning},"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":{},"arguments":{}}}}}]}},"finish_reason":"tool_calls"}}"#,
        json_string(name),
        json_string(&arguments(step))
    )
}

pub fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const TOOLS: &str = r#""tools":[{"type":"function","function":{"name":"search","parameters":{}}}]"#;

    #[test]
    fn a_call_while_the_results_are_fewer_than_the_depth_then_text() {
        let body = |results: usize, depth: &str| {
            let tool = r#"{"role":"tool","tool_call_id":"c","content":"r"}"#;
            let history: Vec<&str> =
                std::iter::once(r#"{"role":"user","content":"q"}"#).chain(std::iter::repeat_n(tool, results)).collect();
            format!(r#"{{{TOOLS},"messages":[{}]{depth}}}"#, history.join(","))
        };
        let turn = tool_turn(body(0, "").as_bytes()).unwrap();
        assert_eq!(turn.calls(DEFAULT_TOOL_DEPTH), Some("search"));
        assert_eq!(tool_turn(body(2, "").as_bytes()).unwrap().calls(DEFAULT_TOOL_DEPTH), None);
        let deeper = tool_turn(body(2, r#","mock_tool_depth":3"#).as_bytes()).unwrap();
        assert_eq!((deeper.tool_results, deeper.calls(DEFAULT_TOOL_DEPTH)), (2, Some("search")));
        assert!(tool_turn(br#"{"messages":[{"role":"user","content":"q"}]}"#).is_none());
    }

    #[test]
    fn the_reasoning_a_history_sends_back_is_counted() {
        let messages = format!(
            r#"{{{TOOLS},"messages":[{{"role":"user","content":"q"}},{{"role":"assistant","content":[
                {{"type":"thinking","thinking":"t","signature":"s"}},{{"type":"redacted_thinking","data":"d"}},
                {{"type":"tool_use","id":"c","name":"search","input":{{}}}}]}}]}}"#
        );
        assert_eq!(tool_turn(messages.as_bytes()).unwrap().reasoning_sent_back, 2);
        let input = format!(
            r#"{{{TOOLS},"input":[{{"role":"user","content":"q"}},{{"type":"reasoning","id":"rs_0","summary":[]}},
                {{"type":"function_call","call_id":"c","name":"search","arguments":"{{}}"}},
                {{"type":"function_call_output","call_id":"c","output":"r"}}]}}"#
        );
        let turn = tool_turn(input.as_bytes()).unwrap();
        assert_eq!((turn.reasoning_sent_back, turn.tool_results), (1, 1));
    }

    /// The events of a streamed call, one list per token.
    fn events_by_token(tokens: u64) -> Vec<Vec<Value>> {
        let head = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":"#;
        let events = chat_token_events(head, "search", 1, tokens);
        assert_eq!(events.len() as u64, tokens.max(1), "one entry per token");
        let parse = |text: &String| -> Vec<Value> {
            text.split("\n\n")
                .filter_map(|event| event.strip_prefix("data: "))
                .map(|data| serde_json::from_str(data).unwrap())
                .collect()
        };
        events.iter().map(parse).collect()
    }

    fn arguments_of(events: &[Vec<Value>]) -> Value {
        let arguments: String = events
            .iter()
            .flatten()
            .filter_map(|event| event["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
            .collect();
        serde_json::from_str(&arguments).unwrap()
    }

    #[test]
    fn the_streamed_call_is_openai_json_spread_over_its_tokens() {
        let events = events_by_token(8);
        assert_eq!(events[0][0]["choices"][0]["delta"]["tool_calls"][0]["id"], "call_1");
        assert_eq!(events[0][0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"], "search");
        let pieces = events[1..].iter().filter(|token| !token.is_empty()).count();
        assert_eq!(pieces, 7, "each later token carries a piece of the arguments");
        assert_eq!(arguments_of(&events)["step"], 1);
        let last = events.last().unwrap().last().unwrap();
        assert_eq!(last["choices"][0]["finish_reason"], "tool_calls");
        // More tokens than characters: some tokens send nothing, the last the finish.
        let events = events_by_token(200);
        assert_eq!(arguments_of(&events)["step"], 1);
        assert!(events[1..].iter().any(Vec::is_empty));
        assert_eq!(events[199].last().unwrap()["choices"][0]["finish_reason"], "tool_calls");
        // One token: the name, the arguments and the finish at once.
        let events = events_by_token(1);
        assert_eq!((events[0].len(), arguments_of(&events)["step"].clone()), (3, Value::from(1)));
        let whole: Value = serde_json::from_str(&whole_choice("search", 0, 0)).unwrap();
        assert_eq!(whole["message"]["tool_calls"][0]["function"]["name"], "search");
        // Its usage counts what the client counts: the name, then the arguments as sent.
        let tokenizer = Tokenizer::builtin();
        let sent = whole["message"]["tool_calls"][0]["function"]["arguments"].as_str().unwrap();
        assert_eq!(call_tokens(&tokenizer, "search", 0), tokenizer.count(&format!("search{sent}")) as u64);
        assert!(call_tokens(&tokenizer, "search", 0) > 1);
    }
}
