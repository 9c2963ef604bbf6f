//! A step's answer as a session's function reads it (`r.text`, `r["ok"]`, `r.tool_calls`): a
//! type of its own whose fields are made when read, so a step whose answer goes unread costs none,
//! and whose unknown names are errors.

use std::sync::{Arc, OnceLock};

use rhai::{Array, Dynamic, Engine, Map};
use serde_json::Value;

use super::keys::{ScriptResult, script_error};
use crate::load::scripted::StepAnswer;
use crate::suggest::closest;

/// The fields an answer has, in the order a map of it lists them.
const FIELDS: [&str; 12] = [
    "cancelled",
    "error",
    "finish_reason",
    "latency_ms",
    "ok",
    "reasoning",
    "status",
    "tag",
    "text",
    "tool_calls",
    "ttft_ms",
    "usage",
];

/// One step's answer; clones share it.
#[derive(Clone)]
pub struct Answer(Arc<AnswerFields>);

struct AnswerFields {
    answer: StepAnswer,
    tag: String,
    /// The tool calls as maps, made at the first read (their arguments parsed as JSON).
    tool_calls: OnceLock<Array>,
}

impl Answer {
    pub fn new(answer: StepAnswer, tag: String) -> Self {
        Answer(Arc::new(AnswerFields { answer, tag, tool_calls: OnceLock::new() }))
    }

    /// The field `name`, or None when an answer has no such field.
    fn field(&self, name: &str) -> Option<Dynamic> {
        let AnswerFields { answer, tag, .. } = &*self.0;
        let ms = |ns: u64| ns as f64 / 1e6;
        let or_unit = |value: Option<Dynamic>| value.unwrap_or(Dynamic::UNIT);
        Some(match name {
            "cancelled" => answer.cancelled.into(),
            "error" => or_unit(answer.error.clone().map(Dynamic::from)),
            "finish_reason" => or_unit(answer.finish_reason.clone().map(Dynamic::from)),
            "latency_ms" => ms(answer.end_ns.saturating_sub(answer.start_ns)).into(),
            "ok" => answer.ok.into(),
            "reasoning" => answer.reasoning.clone().into(),
            "status" => or_unit(answer.status.map(|code| Dynamic::from(i64::from(code)))),
            "tag" => tag.clone().into(),
            "text" => answer.text.clone().into(),
            "tool_calls" => self.tool_calls().into(),
            "ttft_ms" => or_unit(answer.first_output_ns.map(|first| ms(first.saturating_sub(answer.start_ns)).into())),
            "usage" => or_unit(answer.usage.map(|usage| {
                let fields = [
                    ("completion_tokens", usage.completion_tokens),
                    ("prompt_tokens", usage.prompt_tokens),
                    ("reasoning_tokens", usage.reasoning_tokens),
                    ("total_tokens", usage.total_tokens),
                ];
                let present =
                    fields.into_iter().filter_map(|(name, value)| Some((name.into(), Dynamic::from(value? as i64))));
                Dynamic::from_map(present.collect())
            })),
            _ => return None,
        })
    }

    fn tool_calls(&self) -> Array {
        let calls = self.0.tool_calls.get_or_init(|| {
            let calls = &self.0.answer.tool_calls;
            calls
                .iter()
                .map(|call| {
                    let args = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .and_then(|json| rhai::serde::to_dynamic(json).ok())
                        .unwrap_or_default();
                    Dynamic::from_map(Map::from_iter([
                        ("args".into(), args),
                        ("arguments".into(), call.arguments.as_str().into()),
                        ("id".into(), call.id.as_str().into()),
                        ("name".into(), call.name.as_str().into()),
                    ]))
                })
                .collect()
        });
        calls.clone()
    }

    /// Every field, as a map.
    fn to_map(&self) -> Map {
        FIELDS.iter().filter_map(|&name| Some((name.into(), self.field(name)?))).collect()
    }
}

/// `r.text` and the other fields, `r["text"]` (a name an answer lacks is a script error, with the
/// nearest field: its fields are fixed, so it is a typo that would otherwise read as `()`),
/// `"text" in r`, `r.keys()`, `r.to_map()`, and printing it as its map.
pub fn register(engine: &mut Engine) {
    for name in FIELDS {
        engine.register_get(name, move |answer: &mut Answer| answer.field(name).unwrap_or_default());
    }
    // Rhai reads `r.name` without a getter of its own by this indexer too.
    engine.register_indexer_get(|answer: &mut Answer, name: &str| -> ScriptResult<Dynamic> {
        answer.field(name).map_or_else(|| no_such_field(name), Ok)
    });
    engine.register_fn("contains", |answer: &mut Answer, name: &str| answer.field(name).is_some());
    engine.register_fn("keys", |_: &mut Answer| -> Array { FIELDS.iter().map(|&name| name.into()).collect() });
    engine.register_fn("to_map", |answer: &mut Answer| answer.to_map());
    engine.register_fn("to_string", |answer: &mut Answer| Dynamic::from_map(answer.to_map()).to_string());
    engine.register_fn("to_debug", |answer: &mut Answer| format!("{:?}", Dynamic::from_map(answer.to_map())));
}

fn no_such_field(name: &str) -> ScriptResult<Dynamic> {
    let hint = closest(name, &FIELDS).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
    script_error(format!("an answer has no field `{name}`{hint}; its fields: {}", FIELDS.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ToolCall, Usage};

    fn engine_with(answer: Answer) -> (Engine, rhai::Scope<'static>) {
        let mut engine = Engine::new();
        register(&mut engine);
        let mut scope = rhai::Scope::new();
        scope.push("r", answer);
        (engine, scope)
    }

    #[test]
    fn an_answer_reads_as_its_map_did_by_property_index_and_key() {
        let answer = StepAnswer {
            ok: true,
            text: "hello".into(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "search".into(), arguments: r#"{"q":"x"}"#.into() }],
            usage: Some(Usage { completion_tokens: Some(3), ..Usage::default() }),
            start_ns: 1_000_000,
            first_output_ns: Some(3_000_000),
            end_ns: 5_000_000,
            ..StepAnswer::default()
        };
        let (engine, mut scope) = engine_with(Answer::new(answer, "plan".into()));
        let read = |script: &str, scope: &mut rhai::Scope| engine.eval_with_scope::<Dynamic>(scope, script).unwrap();
        assert_eq!(read(r#"r.text + r["text"]"#, &mut scope).to_string(), "hellohello");
        assert_eq!(read(r#"r.tool_calls[0].args.q + r.tool_calls.len()"#, &mut scope).to_string(), "x1");
        assert_eq!(read("r.usage.completion_tokens", &mut scope).as_int(), Ok(3));
        assert_eq!(read("r.ttft_ms", &mut scope).as_float(), Ok(2.0));
        assert_eq!(read("r.latency_ms", &mut scope).as_float(), Ok(4.0));
        assert!(read("r.error", &mut scope).is_unit());
        for typo in ["r.tool_call", r#"r["tool_call"]"#] {
            let error = engine.eval_with_scope::<Dynamic>(&mut scope, typo).expect_err("no such field").to_string();
            assert!(
                error.contains(
                    "an answer has no field `tool_call` (did you mean `tool_calls`?); its fields: cancelled,"
                ),
                "{error}"
            );
        }
        assert_eq!(
            read(r#"r.tag == "plan" && r.ok && !r.cancelled && "text" in r && !("x" in r)"#, &mut scope).as_bool(),
            Ok(true)
        );
        assert_eq!(read("r.keys().len() == r.to_map().len()", &mut scope).as_bool(), Ok(true));
        let shown = read("`${r}`", &mut scope).to_string();
        assert_eq!(shown, read("r.to_map().to_string()", &mut scope).to_string());
        assert!(shown.contains("hello"), "{shown}");
    }
}
