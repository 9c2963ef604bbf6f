//! The record shapes by which AIPerf 0.13's loaders claim a dataset file from its first record
//! (its pydantic models, read as pydantic reads JSON: a whole number may come as `5.0`, `"5"`
//! or `true`; a `null` stands for an optional key left out; unknown keys are allowed).

use serde_json::{Map, Value};

pub type Object = Map<String, Value>;

/// A single_turn line: one or more modalities, each given once, a time or a delay; or this
/// project's rankings line (`query` and `passages`), which no format of AIPerf's claims.
pub fn single_turn(record: &Object) -> bool {
    let ranking = record.get("query").is_some_and(is_text) && record.get("passages").is_some_and(Value::is_array);
    literal_type(record, "single_turn")
        && (modalities(record, true) || ranking)
        && timing(record)
        && image_uuids_fit(record)
        && {
            let typed =
                [("role", is_text as Check), ("session_id", is_text), ("output_length", is_whole), ("extra", is_map)];
            typed.iter().all(|(key, check)| optional(record, key, *check))
        }
}

/// A multi_turn line: `turns`, a non-empty list of single_turn objects.
pub fn multi_turn(record: &Object) -> bool {
    let turns_fit = match record.get("turns") {
        Some(Value::Array(turns)) => {
            !turns.is_empty() && turns.iter().all(|turn| turn.as_object().is_some_and(single_turn))
        }
        _ => false,
    };
    literal_type(record, "multi_turn") && optional(record, "session_id", is_text) && turns_fit
}

/// A random_pool line (claimed only where its `type` says so, or in a folder).
pub fn random_pool(record: &Object) -> bool {
    literal_type(record, "random_pool") && modalities(record, false)
}

/// A mooncake_trace line: exactly one of `input_length` (with `hash_ids` if any), `text_input`,
/// `messages` (each with a `role`, `tools` beside them) or a non-empty `payload`.
pub fn mooncake(record: &Object) -> bool {
    let typed = [
        ("input_length", is_whole as Check),
        ("text_input", is_text),
        ("messages", is_list_of_maps),
        ("tools", is_list_of_maps),
        ("payload", is_map),
        ("output_length", is_whole),
        ("hash_ids", is_list_of_whole),
        ("timestamp", is_number),
        ("delay", is_number),
        ("session_id", is_text),
        ("extra", is_map),
    ];
    if speed_bench_row(record) || !literal_type(record, "mooncake_trace") {
        return false;
    }
    if !typed.iter().all(|(key, check)| optional(record, key, *check)) {
        return false;
    }
    let inputs =
        ["input_length", "text_input", "messages", "payload"].iter().filter(|key| given(record, key).is_some());
    let messages = given(record, "messages").and_then(Value::as_array);
    inputs.count() == 1
        && (given(record, "hash_ids").is_none() || given(record, "input_length").is_some())
        && given(record, "payload").and_then(Value::as_object).is_none_or(|payload| !payload.is_empty())
        && given(record, "tools").and_then(Value::as_array).is_none_or(|tools| messages.is_some() && !tools.is_empty())
        && messages
            .is_none_or(|messages| !messages.is_empty() && messages.iter().all(|message| message.get("role").is_some()))
}

/// A bailian_trace line: `chat_id`, `timestamp`, `input_length`, `output_length`; its `type`
/// (the request's kind) a string.
pub fn bailian(record: &Object) -> bool {
    let required = [
        ("chat_id", is_whole as Check),
        ("timestamp", is_number),
        ("input_length", is_whole),
        ("output_length", is_whole),
    ];
    let defaulted = [("parent_chat_id", is_whole as Check), ("turn", is_whole), ("hash_ids", is_list_of_whole)];
    let kind = if record.contains_key("type") { "type" } else { "request_type" };
    required.iter().all(|(key, check)| record.get(*key).is_some_and(check))
        && defaulted.iter().all(|(key, check)| record.get(*key).is_none_or(check))
        && record.get(kind).is_none_or(is_text)
}

/// A SPEED-Bench row: a 32-character `question_id`, a `category` and `messages`.
pub fn speed_bench_row(record: &Object) -> bool {
    record.get("question_id").and_then(Value::as_str).is_some_and(|id| id.chars().count() == 32)
        && record.get("category").and_then(Value::as_str).is_some_and(|category| !category.is_empty())
        && record
            .get("messages")
            .and_then(Value::as_array)
            .is_some_and(|messages| !messages.is_empty() && messages.iter().all(Value::is_object))
}

/// A raw_payload line: a chat body (`messages`), not an agentic record nor an inputs file.
pub fn raw_payload(record: &Object) -> bool {
    !speed_bench_row(record)
        && record.get("messages").is_some_and(Value::is_array)
        && !record.contains_key("conversation_id")
        && !record.get("data").is_some_and(Value::is_array)
}

/// An inputs.json object: a `data` list whose first session has `payloads`.
pub fn inputs_json(record: &Object) -> bool {
    let first = record.get("data").and_then(Value::as_array).and_then(|data| data.first());
    first.and_then(|session| session.get("payloads")).is_some_and(Value::is_array)
}

/// A dag_jsonl line: a `session_id` and `turns`, one of which has `messages`, `forks` or `spawns`.
pub fn dag(record: &Object) -> bool {
    let Some(Value::Array(turns)) = record.get("turns") else { return false };
    if !record.get("session_id").is_some_and(Value::is_string) || turns.is_empty() {
        return false;
    }
    // AIPerf's probe gives up at the first turn that is not an object.
    for turn in turns {
        let Some(turn) = turn.as_object() else { return false };
        if turn.get("messages").is_some_and(Value::is_array)
            || turn.contains_key("forks")
            || turn.contains_key("spawns")
        {
            return true;
        }
    }
    false
}

/// A SageMaker Data Capture record.
pub fn sagemaker(record: &Object) -> bool {
    record.contains_key("captureData") && record.contains_key("eventMetadata")
}

/// A TraceLab row (by its keys).
pub fn tracelab(record: &Object) -> bool {
    ["session_id", "round_index", "input_tokens_total", "prefix_tokens", "newly_append_tokens", "timing_events"]
        .iter()
        .all(|key| record.contains_key(*key))
}

/// A weka trace object: `id`, `models`, a `block_size` above 0, `hash_id_scope` "local" and
/// `requests`, and no other keys than its optional ones.
pub fn weka(record: &Object) -> bool {
    const KEYS: [&str; 8] =
        ["id", "models", "block_size", "hash_id_scope", "tool_tokens", "system_tokens", "requests", "totals"];
    record.keys().all(|key| KEYS.contains(&key.as_str()))
        && record.get("id").is_some_and(is_text)
        && record.get("models").and_then(Value::as_array).is_some_and(|models| models.iter().all(is_text))
        && record.get("block_size").is_some_and(|size| is_whole(size) && number_of(size) > 0.0)
        && record.get("hash_id_scope").is_some_and(|scope| scope == "local")
        && record
            .get("requests")
            .is_some_and(|requests| requests.as_array().is_some_and(|r| r.iter().all(Value::is_object)))
        && [("tool_tokens", is_whole as Check), ("system_tokens", is_whole)]
            .iter()
            .all(|(k, c)| record.get(*k).is_none_or(c))
        && optional(record, "totals", is_map)
}

type Check = fn(&Value) -> bool;

/// The modalities of a turn: `text`/`texts`, `image`/`images`, `audio`/`audios`,
/// `video`/`videos`, each pair given once, at least one given (non-empty); where `with_uuids`,
/// image ids alone stand for as many unnamed images.
fn modalities(record: &Object, with_uuids: bool) -> bool {
    const PAIRS: [(&str, &str); 4] = [("text", "texts"), ("image", "images"), ("audio", "audios"), ("video", "videos")];
    let typed = PAIRS.iter().all(|(one, many)| optional(record, one, is_text) && optional(record, many, is_media_list));
    let single = PAIRS.iter().all(|(one, many)| !(truthy(record, one) && truthy(record, many)));
    let uuids =
        with_uuids && given(record, "image_uuids").and_then(Value::as_array).is_some_and(|uuids| !uuids.is_empty());
    let any = PAIRS.iter().any(|(one, many)| truthy(record, one) || truthy(record, many)) || uuids;
    typed && single && any
}

/// A `timestamp` or a `delay` (numbers), not both (non-zero).
fn timing(record: &Object) -> bool {
    optional(record, "timestamp", is_number)
        && optional(record, "delay", is_number)
        && !(given(record, "timestamp").is_some_and(|t| number_of(t) != 0.0)
            && given(record, "delay").is_some_and(|d| number_of(d) != 0.0))
}

/// `image_uuids`: strings, none empty, one per image of `images` (named by string), never beside
/// `image`.
fn image_uuids_fit(record: &Object) -> bool {
    let Some(uuids) = given(record, "image_uuids") else { return true };
    let Some(uuids) = uuids.as_array().filter(|uuids| uuids.iter().all(Value::is_string)) else { return false };
    let images = given(record, "images").and_then(Value::as_array).filter(|images| !images.is_empty());
    given(record, "image").is_none()
        && images.is_none_or(|images| images.iter().all(Value::is_string) && images.len() == uuids.len())
        && uuids.iter().all(|uuid| uuid != "")
}

/// The value of `key`, a `null` counting as left out.
fn given<'a>(record: &'a Object, key: &str) -> Option<&'a Value> {
    record.get(key).filter(|value| !value.is_null())
}

fn optional(record: &Object, key: &str, check: Check) -> bool {
    given(record, key).is_none_or(check)
}

/// The `type` a model pins: absent, or that name.
fn literal_type(record: &Object, name: &str) -> bool {
    record.get("type").is_none_or(|kind| kind == name)
}

fn truthy(record: &Object, key: &str) -> bool {
    match given(record, key) {
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
        None => false,
    }
}

fn is_text(value: &Value) -> bool {
    value.is_string()
}

fn is_map(value: &Value) -> bool {
    value.is_object()
}

fn is_whole(value: &Value) -> bool {
    match value {
        Value::Bool(_) => true,
        Value::Number(number) => {
            number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        Value::String(text) => text.trim().parse::<i64>().is_ok(),
        _ => false,
    }
}

fn is_number(value: &Value) -> bool {
    match value {
        Value::Bool(_) | Value::Number(_) => true,
        Value::String(text) => text.trim().parse::<f64>().is_ok(),
        _ => false,
    }
}

/// A number as pydantic reads it (a checked `is_number` value).
fn number_of(value: &Value) -> f64 {
    match value {
        Value::Bool(flag) => f64::from(u8::from(*flag)),
        Value::Number(number) => number.as_f64().unwrap_or(0.0),
        Value::String(text) => text.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn is_list_of_maps(value: &Value) -> bool {
    value.as_array().is_some_and(|items| items.iter().all(Value::is_object))
}

fn is_list_of_whole(value: &Value) -> bool {
    value.as_array().is_some_and(|items| items.iter().all(is_whole))
}

/// Strings, or media objects (`name`, `contents` of strings, an image's `uuids`).
fn is_media_list(value: &Value) -> bool {
    let Some(items) = value.as_array() else { return false };
    let media = |item: &Value| {
        item.as_object().is_some_and(|media| {
            media.get("name").is_none_or(Value::is_string)
                && ["contents", "uuids"].iter().all(|key| {
                    media.get(*key).is_none_or(|list| list.as_array().is_some_and(|l| l.iter().all(Value::is_string)))
                })
        })
    };
    items.iter().all(Value::is_string) || items.iter().all(media)
}
