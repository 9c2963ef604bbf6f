//! A tokenizer's chat template (AIPerf's `--apply-chat-template`): the Jinja template in the
//! `chat_template.jinja` or `tokenizer_config.json` beside a `tokenizer.json`, rendered as Hugging
//! Face's `apply_chat_template` renders it (blocks trimmed and left-stripped, Python's string
//! methods, `raise_exception`, `strftime_now`, `tojson` as Python's `json.dumps`) and counted
//! without special tokens added. It gives what the template adds to a prompt (`Overhead`, which
//! synthetic prompts are shortened by) and a chat request's input tokens as the server would
//! count them (`count_request`).

use std::borrow::Cow;
use std::path::Path;

use anyhow::{Context, Result};
use minijinja::value::Kwargs;
use minijinja::{Environment, Error, ErrorKind, Value};
use serde_json::{Map, Value as Json, json};

use super::input_texts::{part_texts, tool_texts};
use super::tokenizer::Tokenizer;

const TEMPLATE: &str = "chat";
/// The prompts the template's overhead is measured with (AIPerf measures with three of its own).
const PROBES: [&str; 3] = [
    "Hello, how are you today?",
    "Could you write a Python function to reverse a string?",
    "What's the difference between TCP and UDP in networking?",
];
/// The special tokens of a `tokenizer_config.json` a template may name.
const SPECIAL_TOKENS: [&str; 7] =
    ["bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"];

pub struct ChatTemplate {
    env: Environment<'static>,
    /// The special tokens' texts by name (`bos_token`: `<s>`, ...), as the template sees them.
    special_tokens: Map<String, Json>,
}

/// What a chat template adds to a synthetic prompt's tokens: `first_turn` to a conversation's
/// first prompt (the generation prompt and one message's wrapping), `later_turn` to each later
/// one (its message's wrapping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overhead {
    pub first_turn: u64,
    pub later_turn: u64,
}

impl Overhead {
    /// The overhead of a prompt that is (or is not) its conversation's first.
    pub fn of_turn(&self, first: bool) -> u64 {
        if first { self.first_turn } else { self.later_turn }
    }
}

impl ChatTemplate {
    /// The template a run counts through (`apply_chat_template`): the one beside the tokenizer's
    /// `tokenizer.json`; a tokenizer without one (builtin, tiktoken, a model without a template)
    /// counts bare text, as AIPerf's does, and the run says so.
    pub fn for_run(apply_chat_template: bool, tokenizer: &Tokenizer) -> Result<Option<Self>> {
        if !apply_chat_template {
            return Ok(None);
        }
        let template = tokenizer.file().map_or(Ok(None), Self::beside)?;
        if template.is_none() {
            let beside = tokenizer.file().map_or_else(
                || " (a built-in tokenizer has none)".to_string(),
                |file| {
                    format!(
                        " (no chat_template.jinja, nor a chat_template in tokenizer_config.json, beside {})",
                        file.display()
                    )
                },
            );
            tracing::warn!(
                "apply_chat_template: tokenizer {} has no chat template{beside}; input tokens are counted as bare text",
                tokenizer.name()
            );
        }
        Ok(template)
    }

    /// The chat template beside `tokenizer_file`: `chat_template.jinja`, else
    /// `tokenizer_config.json`'s `chat_template` (a string, or the template named `default` of a
    /// list); None without one. A template that does not parse is an error naming its file.
    pub fn beside(tokenizer_file: &Path) -> Result<Option<Self>> {
        let config_file = tokenizer_file.with_file_name("tokenizer_config.json");
        let config: Json = match std::fs::read_to_string(&config_file) {
            Ok(text) => {
                serde_json::from_str(&text).with_context(|| format!("{} is not JSON", config_file.display()))?
            }
            Err(_) => Json::Null,
        };
        let jinja_file = tokenizer_file.with_file_name("chat_template.jinja");
        let (source, file) = match std::fs::read_to_string(&jinja_file) {
            Ok(source) => (source, jinja_file),
            Err(_) => match template_in_config(&config) {
                Some(source) => (source, config_file),
                None => return Ok(None),
            },
        };
        let special_tokens = SPECIAL_TOKENS
            .iter()
            .filter_map(|name| {
                let token = &config[*name];
                let text = token.as_str().or_else(|| token["content"].as_str())?;
                Some((name.to_string(), json!(text)))
            })
            .collect();
        let mut env = environment();
        env.add_template_owned(TEMPLATE, source)
            .with_context(|| format!("the chat template in {} does not parse", file.display()))?;
        Ok(Some(Self { env, special_tokens }))
    }

    /// The text the template makes of `messages` (each `{"role", "content"}`, maybe
    /// `tool_calls`), with the assistant's generation prompt after them when asked.
    pub fn render(&self, messages: &[Json], add_generation_prompt: bool) -> Result<String, Error> {
        let mut context = self.special_tokens.clone();
        context.insert("messages".into(), Json::Array(messages.to_vec()));
        context.insert("add_generation_prompt".into(), Json::Bool(add_generation_prompt));
        self.env.get_template(TEMPLATE)?.render(Value::from(minijinja::value::Serde(&context)))
    }

    /// What the template adds to a prompt, measured as AIPerf measures it: for each probe, one
    /// user message with the generation prompt, and user–assistant–user; a message's wrapping is
    /// half of what the two middle messages add beyond their text, the generation prompt what
    /// one message adds beyond its text and wrapping (less the special tokens the tokenizer puts
    /// before every prompt itself); each the mean over the probes, rounded. Zero when the
    /// template fails or a measure comes out negative.
    pub fn overhead(&self, tokenizer: &Tokenizer) -> Overhead {
        let prompt_specials = tokenizer.prompt_special_tokens() as f64;
        let user = |text: &str| json!({"role": "user", "content": text});
        let mut fixed = Vec::new();
        let mut wrap = Vec::new();
        for probe in PROBES {
            let assistant = json!({"role": "assistant", "content": probe});
            let single = self.render(&[user(probe)], true);
            let triple = self.render(&[user(probe), assistant, user(probe)], true);
            let (Ok(single), Ok(triple)) = (single, triple) else { return Overhead::default() };
            let (single, triple) = (tokenizer.count(&single) as f64, tokenizer.count(&triple) as f64);
            let bare = tokenizer.count(probe) as f64;
            let message_wrap = (triple - single - 2.0 * bare) / 2.0;
            let generation = single - bare - message_wrap - prompt_specials;
            if message_wrap < 0.0 || generation < 0.0 {
                return Overhead::default();
            }
            wrap.push(message_wrap);
            fixed.push(generation);
        }
        // Python's round: halves to even.
        let mean = |values: &[f64]| (values.iter().sum::<f64>() / values.len() as f64).round_ties_even() as u64;
        let (fixed, wrap) = (mean(&fixed), mean(&wrap));
        Overhead { first_turn: fixed + wrap, later_turn: wrap }
    }

    /// The input tokens of a chat-shaped request `body` as its server counts them: its messages
    /// through the template with the generation prompt, plus the tool texts the messages do
    /// not carry (tool schemas, replayed function calls), joined by spaces. None for a body that
    /// is not chat-shaped or that the template fails on (its bare count then stands).
    pub fn count_request(&self, tokenizer: &Tokenizer, body: &[u8]) -> Option<u64> {
        let payload: Json = serde_json::from_slice(body).ok()?;
        let view = ChatView::of(&payload)?;
        if view.messages.is_empty() {
            return None;
        }
        let text = self.render(&view.messages, true).ok()?;
        let tools = if view.tool_texts.is_empty() { 0 } else { tokenizer.count(&view.tool_texts.join(" ")) };
        Some((tokenizer.count(&text) + tools) as u64)
    }
}

/// `tokenizer_config.json`'s template: its `chat_template` string, or the one named `default`
/// in a list of `{name, template}`.
fn template_in_config(config: &Json) -> Option<String> {
    match &config["chat_template"] {
        Json::String(source) => Some(source.clone()),
        Json::Array(named) => named
            .iter()
            .find(|entry| entry["name"] == "default")
            .and_then(|entry| entry["template"].as_str().map(str::to_string)),
        _ => None,
    }
}

/// A Jinja environment as Hugging Face's chat templates expect it.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    let syntax = minijinja::syntax::SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build();
    // The builder fails only on bad delimiters; these are the defaults.
    if let Ok(syntax) = syntax {
        env.set_syntax(syntax);
    }
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function("raise_exception", |message: String| -> Result<Value, Error> {
        Err(Error::new(ErrorKind::InvalidOperation, message))
    });
    env.add_function("strftime_now", strftime_now);
    env.add_filter("tojson", tojson);
    env
}

/// Now, local time, in a strftime `format`.
fn strftime_now(format: String) -> Result<String, Error> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{}", chrono::Local::now().format(&format))
        .map_err(|_| Error::new(ErrorKind::InvalidOperation, format!("strftime_now: bad format {format:?}")))?;
    Ok(out)
}

/// Python's `json.dumps(value, ensure_ascii=False, indent=indent)`: `", "` and `": "` between
/// items without an indent, one item a line with one.
fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let json = serde_json::to_value(value).map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let mut out = Vec::new();
    let written = match indent {
        Some(width) => {
            let spaces = vec![b' '; width];
            let formatter = serde_json::ser::PrettyFormatter::with_indent(&spaces);
            serde::Serialize::serialize(&json, &mut serde_json::Serializer::with_formatter(&mut out, formatter))
        }
        None => {
            serde::Serialize::serialize(&json, &mut serde_json::Serializer::with_formatter(&mut out, PythonSpacing))
        }
    };
    written.map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    Ok(Value::from(String::from_utf8_lossy(&out).into_owned()))
}

/// Python's default JSON separators: `", "` between items, `": "` after a key.
struct PythonSpacing;

impl serde_json::ser::Formatter for PythonSpacing {
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// A request body as a chat template reads it, following AIPerf's reading of a payload: the
/// messages of its `messages` (or Responses `input`) array, each its role and its text parts
/// joined (media dropped), with any `tool_calls` it replays; and the tool texts outside them.
struct ChatView {
    messages: Vec<Json>,
    tool_texts: Vec<String>,
}

impl ChatView {
    /// None when the body has no array of messages or items.
    fn of(payload: &Json) -> Option<Self> {
        let mut view = Self { messages: Vec::new(), tool_texts: Vec::new() };
        let mut found = false;
        for field in ["messages", "input"] {
            let Some(items) = payload[field].as_array() else { continue };
            if !items.iter().any(|item| item.get("role").is_some() || item.get("type").is_some()) {
                continue;
            }
            found = true;
            items.iter().filter(|item| item.is_object()).for_each(|item| view.add_item(item));
        }
        if !found {
            return None;
        }
        view.tool_texts.extend(tool_texts(&payload["tools"]).into_iter().map(Cow::into_owned));
        Some(view)
    }

    fn add_item(&mut self, item: &Json) {
        let text: String = match &item["content"] {
            Json::String(text) => text.clone(),
            Json::Array(parts) => part_texts(parts).collect(),
            _ => String::new(),
        };
        let calls = item["tool_calls"].as_array().filter(|calls| !calls.is_empty());
        match item["role"].as_str() {
            Some(role) => {
                let mut message = json!({"role": role, "content": text});
                if let Some(calls) = calls {
                    message["tool_calls"] = Json::Array(calls.clone());
                }
                self.messages.push(message);
            }
            None => {
                for call in calls.into_iter().flatten() {
                    self.add_strings(&call["function"], &["name", "arguments"]);
                }
            }
        }
        match item["type"].as_str() {
            Some("function_call") => self.add_strings(item, &["name", "arguments"]),
            Some("function_call_output") => self.add_strings(item, &["output"]),
            _ => {}
        }
    }

    /// The non-empty strings at `keys` of `source`, to the tool texts.
    fn add_strings(&mut self, source: &Json, keys: &[&str]) {
        let strings = keys.iter().filter_map(|key| source[*key].as_str()).filter(|text| !text.is_empty());
        self.tool_texts.extend(strings.map(str::to_string));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ChatML, as many models' templates write it.
    const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + \
        message['content'] | trim + '<|im_end|>\\n' }}{% endfor %}\
        {% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    fn template_in(dir: &Path, config: Json) -> ChatTemplate {
        std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
        ChatTemplate::beside(&dir.join("tokenizer.json")).unwrap().unwrap()
    }

    #[test]
    fn renders_messages_as_hugging_face_does() {
        let dir = tempfile::tempdir().unwrap();
        let template = template_in(dir.path(), json!({"chat_template": CHATML}));
        let messages = [json!({"role": "system", "content": " Be brief. "}), json!({"role": "user", "content": "Hi"})];
        assert_eq!(
            template.render(&messages, true).unwrap(),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(template.render(&messages[1..], false).unwrap(), "<|im_start|>user\nHi<|im_end|>\n");
    }

    #[test]
    fn python_methods_special_tokens_tojson_and_raise_exception_work() {
        let dir = tempfile::tempdir().unwrap();
        let source = "{{ bos_token }}{% for m in messages %}{% if m.role not in ['user'] %}\
            {{ raise_exception('only user messages') }}{% endif %}{{ m.content.strip().upper() }}\
            {{ {'a': 1, 'b': [1, 2]} | tojson }}{% endfor %}";
        let template = template_in(dir.path(), json!({"bos_token": {"content": "<s>"}, "chat_template": source}));
        let user = json!({"role": "user", "content": "  hi "});
        assert_eq!(template.render(std::slice::from_ref(&user), false).unwrap(), "<s>HI{\"a\": 1, \"b\": [1, 2]}");
        let error = template.render(&[json!({"role": "tool", "content": "x"})], false).unwrap_err();
        assert!(error.to_string().contains("only user messages"), "{error}");
    }

    #[test]
    fn a_named_default_template_and_a_jinja_file_are_found_and_a_bad_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let named =
            json!({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]});
        assert_eq!(template_in(dir.path(), named).render(&[], false).unwrap(), "D");
        std::fs::write(dir.path().join("chat_template.jinja"), "J{{ messages | length }}").unwrap();
        let from_file = ChatTemplate::beside(&dir.path().join("tokenizer.json")).unwrap().unwrap();
        assert_eq!(from_file.render(&[json!({})], false).unwrap(), "J1");
        std::fs::write(dir.path().join("chat_template.jinja"), "{% for %}").unwrap();
        let error = ChatTemplate::beside(&dir.path().join("tokenizer.json")).err().unwrap();
        assert!(format!("{error:#}").contains("chat_template.jinja does not parse"), "{error:#}");
        let bare = tempfile::tempdir().unwrap();
        assert!(ChatTemplate::beside(&bare.path().join("tokenizer.json")).unwrap().is_none());
    }

    #[test]
    fn a_chat_body_is_read_as_messages_and_tool_texts() {
        let body = json!({
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "look "}, {"type": "image_url"}, {"type": "text", "text": "here"}]},
                {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "description": "does f", "parameters": {"type": "object"}}}],
        });
        let view = ChatView::of(&body).unwrap();
        assert_eq!(view.messages[0], json!({"role": "user", "content": "look here"}));
        assert_eq!(view.messages[1]["tool_calls"][0]["function"]["name"], "f");
        assert_eq!(view.tool_texts, ["f", "does f", r#"{"type":"object"}"#]);
        assert!(ChatView::of(&json!({"prompt": "hi"})).is_none());
        assert!(ChatView::of(&json!({"input": ["an", "embedding"]})).is_none());
        let responses = json!({"input": [{"type": "function_call_output", "output": "42"}]});
        assert_eq!(ChatView::of(&responses).unwrap().tool_texts, ["42"]);
    }

    #[test]
    fn overhead_and_request_counts_follow_the_rendered_text() {
        let dir = tempfile::tempdir().unwrap();
        let tokenizer = Tokenizer::builtin();
        let template = template_in(dir.path(), json!({"chat_template": CHATML}));
        // The wrapping of one message and the generation prompt, counted by hand.
        let wrap = tokenizer.count("<|im_start|>user\nX<|im_end|>\n") - tokenizer.count("X");
        let generation = tokenizer.count("<|im_start|>assistant\n");
        let overhead = template.overhead(&tokenizer);
        assert!(overhead.later_turn.abs_diff(wrap as u64) <= 1, "{overhead:?} against {wrap}");
        assert!(overhead.first_turn.abs_diff((wrap + generation) as u64) <= 1, "{overhead:?}");
        let body = json!({"messages": [{"role": "user", "content": "Hello there"}], "tools": [{"function": {"name": "lookup"}}]});
        let rendered = "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n";
        let expected = tokenizer.count(rendered) + tokenizer.count("lookup");
        assert_eq!(template.count_request(&tokenizer, body.to_string().as_bytes()), Some(expected as u64));
        assert_eq!(template.count_request(&tokenizer, br#"{"prompt": "x"}"#), None);
    }
}
