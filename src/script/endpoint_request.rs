//! The kind-specific keys of `endpoint(#{..})`: the kind and its rankings `dialect`, the
//! request `path`, `max_tokens_field`, rankings `passages`, and a template's `body` and
//! `response` paths. A key the kind cannot use is an error, not silently ignored.

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{
    Endpoint, EndpointKind, MaxTokensField, RequestOptions, RequestTemplate, ResponsePaths, TemplateBody,
};
use crate::request_bodies::template::{PLACEHOLDERS, placeholders};
use crate::suggest::closest;

/// `kind: "chat"|"completions"|"embeddings"|"rankings"|"responses"|"tgi"|"template"|"messages"|
/// "raw"|"chat_embeddings"|"nim_embeddings"|"solido_rag"` or a media kind
/// (`"audio_transcription"`, `"image_generation"`, `"image_edit"`, `"image_retrieval"`,
/// `"video_generation"`), and for rankings `dialect: "cohere"|"tei"|"nim"`.
pub(super) fn endpoint_kind(r: &mut MapReader) -> ScriptResult<EndpointKind> {
    let kind = r.choice(
        "kind",
        &[
            ("chat", EndpointKind::Chat),
            ("completions", EndpointKind::Completions),
            ("embeddings", EndpointKind::Embeddings),
            ("rankings", EndpointKind::CohereRankings),
            ("responses", EndpointKind::Responses),
            ("tgi", EndpointKind::Tgi),
            ("template", EndpointKind::Template),
            ("messages", EndpointKind::Messages),
            ("raw", EndpointKind::Raw),
            ("chat_embeddings", EndpointKind::ChatEmbeddings),
            ("nim_embeddings", EndpointKind::NimEmbeddings),
            ("solido_rag", EndpointKind::SolidoRag),
            ("audio_transcription", EndpointKind::AudioTranscription),
            ("image_generation", EndpointKind::ImageGeneration),
            ("image_edit", EndpointKind::ImageEdit),
            ("image_retrieval", EndpointKind::ImageRetrieval),
            ("video_generation", EndpointKind::VideoGeneration),
        ],
    )?;
    match (kind == EndpointKind::CohereRankings, r.has("dialect")) {
        (true, true) => r.choice(
            "dialect",
            &[
                ("cohere", EndpointKind::CohereRankings),
                ("tei", EndpointKind::TeiRankings),
                ("nim", EndpointKind::NimRankings),
            ],
        ),
        (true, false) => script_error("endpoint: kind \"rankings\" needs a `dialect`: \"cohere\", \"tei\" or \"nim\""),
        (false, true) => script_error("endpoint: `dialect` is for kind \"rankings\" only"),
        (false, false) => Ok(kind),
    }
}

/// The most passages one rankings request may carry.
const MAX_PASSAGES: u64 = 10_000;

/// `path`, `max_tokens_field`, `passages`, `body` and `response`, each checked against `kind`.
pub(super) fn request_options(r: &mut MapReader, kind: EndpointKind) -> ScriptResult<RequestOptions> {
    let is_rankings =
        matches!(kind, EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings);
    let is_template = kind == EndpointKind::Template;
    for (key, allowed, kinds) in [
        (
            "max_tokens_field",
            matches!(kind, EndpointKind::Chat | EndpointKind::Completions),
            "\"chat\" and \"completions\"",
        ),
        ("passages", is_rankings, "\"rankings\""),
        ("body", is_template, "\"template\""),
        ("response", is_template, "\"template\""),
        ("uuid_and_strip", kind == EndpointKind::Chat, "\"chat\""),
        ("per_chunk_usage", kind == EndpointKind::Chat, "\"chat\""),
        (
            "content_parts",
            matches!(
                kind,
                EndpointKind::Chat | EndpointKind::ChatEmbeddings | EndpointKind::Responses | EndpointKind::Messages
            ),
            "\"chat\", \"chat_embeddings\", \"responses\" and \"messages\"",
        ),
        ("download_video_content", kind == EndpointKind::VideoGeneration, "\"video_generation\""),
        ("video_poll_interval", kind == EndpointKind::VideoGeneration, "\"video_generation\""),
    ] {
        if r.has(key) && !allowed {
            return script_error(format!("endpoint: `{key}` is for kind {kinds} only"));
        }
    }
    let path = r.opt_string("path")?;
    if let Some(path) = path.as_deref().filter(|path| !path.starts_with('/')) {
        return script_error(format!("endpoint: `path` must start with \"/\", got \"{path}\""));
    }
    let max_tokens_field = if r.has("max_tokens_field") {
        Some(r.choice(
            "max_tokens_field",
            &[
                ("max_tokens", MaxTokensField::MaxTokens),
                ("max_completion_tokens", MaxTokensField::MaxCompletionTokens),
            ],
        )?)
    } else {
        None
    };
    let passages = r.opt_u64("passages")?;
    if let Some(passages) = passages.filter(|passages| !(1..=MAX_PASSAGES).contains(passages)) {
        return script_error(format!("endpoint: `passages` must be between 1 and {MAX_PASSAGES}, got {passages}"));
    }
    if kind == EndpointKind::Raw && path.is_none() {
        return script_error("endpoint: kind \"raw\" needs a `path`, e.g. \"/v1/chat/completions\"");
    }
    let template = if is_template { Some(request_template(r, path.is_some())?) } else { None };
    let uuid_and_strip = r.opt_bool("uuid_and_strip")?.unwrap_or(false);
    let per_chunk_usage = r.opt_bool("per_chunk_usage")?.unwrap_or(false);
    let content_parts = r.opt_bool("content_parts")?.unwrap_or(false);
    let download_video_content = r.opt_bool("download_video_content")?.unwrap_or(false);
    let video_poll_interval_s = r.opt_f64("video_poll_interval")?;
    let form_data = r.choice("request_content_type", &[("application/json", false), ("multipart/form-data", true)])?;
    Ok(RequestOptions {
        path,
        max_tokens_field,
        passages: passages.map(|passages| passages as usize),
        template,
        uuid_and_strip,
        per_chunk_usage,
        content_parts,
        download_video_content,
        video_poll_interval_s,
        form_data,
    })
}

/// A template's `body` (a map or a JSON text) and `response` paths; it needs a `path` too.
fn request_template(r: &mut MapReader, has_path: bool) -> ScriptResult<RequestTemplate> {
    let body = match r.opt_value("body") {
        None => return script_error("endpoint: kind \"template\" needs a `body` (a map or a JSON text)"),
        Some(text) if text.is_string() => TemplateBody::Text(text.to_string()),
        Some(map) if map.is_map() => match rhai::serde::from_dynamic::<serde_json::Value>(&map) {
            Ok(value) => TemplateBody::Json(value),
            Err(e) => return script_error(format!("endpoint: `body` cannot be sent as JSON: {e}")),
        },
        Some(other) => {
            return script_error(format!(
                "endpoint: `body` must be a map #{{..}} or a string, got {}",
                other.type_name()
            ));
        }
    };
    if !has_path {
        return script_error("endpoint: kind \"template\" needs a `path`, e.g. \"/v1/completions\"");
    }
    for name in placeholders(&body) {
        if !PLACEHOLDERS.contains(&name.as_str()) {
            let hint = closest(&name, PLACEHOLDERS).map(|near| format!(" (did you mean `{{{{{near}}}}}`?)"));
            let known: Vec<String> = PLACEHOLDERS.iter().map(|known| format!("{{{{{known}}}}}")).collect();
            return script_error(format!(
                "endpoint: `body` has an unknown placeholder `{{{{{name}}}}}`{}; it takes {}",
                hint.unwrap_or_default(),
                known.join(", ")
            ));
        }
    }
    let response = response_paths(r.opt_map("response")?.unwrap_or_default())?;
    Ok(RequestTemplate { body, response })
}

const RESPONSE_KEYS: &[&str] = &["text", "stream_text", "prompt_tokens", "completion_tokens", "finish_reason"];

/// `response: #{ text: "choices.0.text", stream_text, prompt_tokens, completion_tokens, finish_reason }`
fn response_paths(map: Map) -> ScriptResult<ResponsePaths> {
    let mut r = MapReader::new("endpoint response", map, RESPONSE_KEYS)?;
    Ok(ResponsePaths {
        text: r.opt_string("text")?,
        stream_text: r.opt_string("stream_text")?,
        prompt_tokens: r.opt_string("prompt_tokens")?,
        completion_tokens: r.opt_string("completion_tokens")?,
        finish_reason: r.opt_string("finish_reason")?,
    })
}

/// A template body must be JSON once its placeholders are filled (checked with sample values).
pub(super) fn check_template_fills(endpoint: &Endpoint) -> ScriptResult<()> {
    if endpoint.request.template.is_none() {
        return Ok(());
    }
    let sample = crate::request_bodies::request_body(endpoint, "a \"quoted\" prompt", Some(16));
    match serde_json::from_slice::<serde_json::Value>(&sample) {
        Ok(_) => Ok(()),
        Err(e) => script_error(format!(
            "endpoint: `body` is not JSON once its placeholders are filled ({e}): {}",
            String::from_utf8_lossy(&sample)
        )),
    }
}

#[cfg(test)]
mod tests {
    use rhai::Dynamic;

    use super::*;

    fn built(map: Map) -> Result<Endpoint, String> {
        super::super::endpoint::endpoint(map).map_err(|error| error.to_string())
    }

    fn endpoint_map(pairs: &[(&str, Dynamic)]) -> Map {
        let mut map = Map::new();
        map.insert("url".into(), Dynamic::from("mock"));
        for (key, value) in pairs {
            map.insert((*key).into(), value.clone());
        }
        map
    }

    #[test]
    fn rankings_need_a_dialect_and_other_kinds_refuse_one() {
        let nim = built(endpoint_map(&[("kind", "rankings".into()), ("dialect", "nim".into())])).unwrap();
        assert_eq!((nim.kind, nim.streaming), (EndpointKind::NimRankings, false));
        let missing = built(endpoint_map(&[("kind", "rankings".into())])).unwrap_err();
        assert!(missing.contains("needs a `dialect`"), "{missing}");
        let wrong = built(endpoint_map(&[("kind", "rankings".into()), ("dialect", "tie".into())])).unwrap_err();
        assert!(wrong.contains(r#"`dialect` must be "cohere", "tei" or "nim", got "tie""#), "{wrong}");
        let stray = built(endpoint_map(&[("kind", "chat".into()), ("dialect", "tei".into())])).unwrap_err();
        assert!(stray.contains("for kind \"rankings\" only"), "{stray}");
    }

    #[test]
    fn keys_of_other_kinds_and_streaming_embeddings_are_refused() {
        let streaming = built(endpoint_map(&[("kind", "embeddings".into()), ("streaming", true.into())])).unwrap_err();
        assert!(streaming.contains("kind \"embeddings\" does not stream"), "{streaming}");
        let many = [("kind", "rankings".into()), ("dialect", "tei".into()), ("passages", Dynamic::from(10_001_i64))];
        let many = built(endpoint_map(&many)).unwrap_err();
        assert!(many.contains("`passages` must be between 1 and 10000, got 10001"), "{many}");
        let passages = built(endpoint_map(&[("kind", "chat".into()), ("passages", Dynamic::from(3_i64))])).unwrap_err();
        assert!(passages.contains("`passages` is for kind \"rankings\" only"), "{passages}");
        let field =
            built(endpoint_map(&[("kind", "tgi".into()), ("max_tokens_field", "max_tokens".into())])).unwrap_err();
        assert!(field.contains("\"chat\" and \"completions\" only"), "{field}");
        let chat = built(endpoint_map(&[("max_tokens_field", "max_tokens".into())])).unwrap();
        assert_eq!(chat.request.max_tokens_field, Some(MaxTokensField::MaxTokens));
        let path = built(endpoint_map(&[("path", "v1/x".into())])).unwrap_err();
        assert!(path.contains("must start with \"/\""), "{path}");
    }

    #[test]
    fn templates_are_checked_before_the_run() {
        let template = |body: Dynamic| {
            built(endpoint_map(&[("kind", "template".into()), ("path", "/v1/completions".into()), ("body", body)]))
        };
        let typo = template(r#"{"prompt": "{{promt}}"}"#.into()).unwrap_err();
        assert!(typo.contains("unknown placeholder `{{promt}}` (did you mean `{{prompt}}`?)"), "{typo}");
        let broken = template(r#"{"prompt": {{prompt}}}"#.into()).unwrap_err();
        assert!(broken.contains("not JSON once its placeholders are filled"), "{broken}");
        let mut body = Map::new();
        body.insert("prompt".into(), "{{prompt}}".into());
        assert!(template(Dynamic::from(body)).is_ok());
        let no_path = built(endpoint_map(&[("kind", "template".into()), ("body", "{}".into())])).unwrap_err();
        assert!(no_path.contains("needs a `path`"), "{no_path}");
    }
}
