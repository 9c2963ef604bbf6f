//! The template kind's body: a request body written in the scenario, its `{{prompt}}`,
//! `{{max_tokens}}`, `{{model}}` and `{{stream}}` placeholders filled per request.

use serde_json::Value;

use crate::plan::{Endpoint, TemplateBody};

/// Every placeholder a template may hold.
pub const PLACEHOLDERS: &[&str] = &["prompt", "max_tokens", "model", "stream"];

/// The placeholder names `body` uses, in order, known or not (`{{ name }}` may have spaces).
pub fn placeholders(body: &TemplateBody) -> Vec<String> {
    let mut names = Vec::new();
    match body {
        TemplateBody::Text(text) => collect_placeholders(text, &mut names),
        TemplateBody::Json(value) => each_string(value, &mut |text| collect_placeholders(text, &mut names)),
    }
    names
}

fn collect_placeholders(text: &str, names: &mut Vec<String>) {
    names.extend(segments(text).filter_map(|segment| match segment {
        Segment::Placeholder { name, .. } => Some(name.to_string()),
        Segment::Literal(_) => None,
    }));
}

/// A piece of template text: literal text, or a `{{ name }}` placeholder as written.
enum Segment<'a> {
    Literal(&'a str),
    Placeholder { name: &'a str, written: &'a str },
}

/// `text` cut into literal runs and placeholders (an unclosed `{{` is literal).
fn segments(text: &str) -> impl Iterator<Item = Segment<'_>> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let placeholder = rest.find("{{").and_then(|open| Some((open, open + rest[open..].find("}}")? + 2)));
        let segment = match placeholder {
            Some((0, end)) => Segment::Placeholder { name: rest[2..end - 2].trim(), written: &rest[..end] },
            Some((open, _)) => Segment::Literal(&rest[..open]),
            None => Segment::Literal(rest),
        };
        let taken = match &segment {
            Segment::Literal(text) => text.len(),
            Segment::Placeholder { written, .. } => written.len(),
        };
        rest = &rest[taken..];
        Some(segment)
    })
}

fn each_string(value: &Value, visit: &mut impl FnMut(&str)) {
    match value {
        Value::String(text) => visit(text),
        Value::Array(items) => items.iter().for_each(|item| each_string(item, visit)),
        Value::Object(members) => members.values().for_each(|member| each_string(member, visit)),
        _ => {}
    }
}

/// The values of one request's placeholders.
struct Filling<'a> {
    prompt: &'a str,
    model: &'a str,
    max_tokens: Option<u64>,
    stream: bool,
}

impl Filling<'_> {
    /// The JSON value a placeholder stands for (`null` for an unset max_tokens).
    fn value(&self, name: &str) -> Option<Value> {
        match name {
            "prompt" => Some(self.prompt.into()),
            "model" => Some(self.model.into()),
            "max_tokens" => Some(self.max_tokens.map_or(Value::Null, Value::from)),
            "stream" => Some(self.stream.into()),
            _ => None,
        }
    }

    /// `text` with each placeholder replaced; strings JSON-escaped (without their quotes) when
    /// `escape` says so, other values as their JSON text.
    fn fill_text(&self, text: &str, escape: bool) -> String {
        let mut filled = String::with_capacity(text.len() + self.prompt.len());
        for segment in segments(text) {
            let (name, written) = match segment {
                Segment::Literal(text) => {
                    filled.push_str(text);
                    continue;
                }
                Segment::Placeholder { name, written } => (name, written),
            };
            match self.value(name) {
                Some(Value::String(value)) if escape => {
                    let quoted = Value::String(value).to_string();
                    filled.push_str(&quoted[1..quoted.len() - 1]);
                }
                Some(Value::String(value)) => filled.push_str(&value),
                Some(value) => filled.push_str(&value.to_string()),
                None => filled.push_str(written),
            }
        }
        filled
    }

    /// A JSON template filled: a string that is one placeholder becomes its value (a number
    /// for `{{max_tokens}}`), placeholders inside longer strings become text.
    fn fill_json(&self, template: &Value) -> Value {
        match template {
            Value::String(text) => {
                let trimmed = text.trim();
                let whole = trimmed.strip_prefix("{{").and_then(|inner| inner.strip_suffix("}}"));
                match whole.filter(|name| !name.contains("{{")).and_then(|name| self.value(name.trim())) {
                    Some(value) => value,
                    None => Value::String(self.fill_text(text, false)),
                }
            }
            Value::Array(items) => Value::Array(items.iter().map(|item| self.fill_json(item)).collect()),
            Value::Object(members) => {
                Value::Object(members.iter().map(|(key, member)| (key.clone(), self.fill_json(member))).collect())
            }
            other => other.clone(),
        }
    }
}

/// The request body of a template endpoint for one prompt (empty if it has no template).
pub(super) fn body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Vec<u8> {
    let Some(template) = &endpoint.request.template else { return Vec::new() };
    let filling = Filling { prompt, model: &endpoint.model, max_tokens, stream: endpoint.streaming };
    match &template.body {
        TemplateBody::Text(text) => filling.fill_text(text, true).into_bytes(),
        TemplateBody::Json(value) => filling.fill_json(value).to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::{EndpointKind, RequestOptions, RequestTemplate, ResponsePaths};

    fn endpoint(body: TemplateBody) -> Endpoint {
        let template = RequestTemplate { body, response: ResponsePaths::default() };
        Endpoint {
            model: "m\"1".into(),
            request: RequestOptions { template: Some(template), path: Some("/v1/custom".into()), ..Default::default() },
            ..crate::request_bodies::test_endpoint(EndpointKind::Template)
        }
    }

    fn filled(body: TemplateBody, max_tokens: Option<u64>) -> Value {
        serde_json::from_slice(&crate::request_bodies::request_body(&endpoint(body), "say \"hi\"\n", max_tokens))
            .unwrap()
    }

    #[test]
    fn a_text_template_is_filled_with_escaped_strings_and_bare_values() {
        let text = r#"{"model": "{{model}}", "prompt": "Q: {{ prompt }}", "max_tokens": {{max_tokens}}, "stream": {{stream}}}"#;
        let body = filled(TemplateBody::Text(text.into()), Some(12));
        assert_eq!(body, json!({"model": "m\"1", "prompt": "Q: say \"hi\"\n", "max_tokens": 12, "stream": false}));
        assert_eq!(filled(TemplateBody::Text(text.into()), None)["max_tokens"], Value::Null);
    }

    #[test]
    fn a_json_template_takes_typed_values_for_whole_placeholders() {
        let template = json!({"input": {"text": "{{prompt}}", "tag": "<{{model}}>"}, "n": "{{max_tokens}}",
                              "flags": ["{{stream}}", 3]});
        let body = filled(TemplateBody::Json(template), Some(7));
        assert_eq!(body, json!({"input": {"text": "say \"hi\"\n", "tag": "<m\"1>"}, "n": 7, "flags": [false, 3]}));
    }

    #[test]
    fn placeholders_are_listed_even_when_misspelt() {
        let names = placeholders(&TemplateBody::Json(json!({"a": "{{promt}} and {{ model }}", "b": ["{{x}}"]})));
        assert_eq!(names, ["promt", "model", "x"]);
        assert_eq!(placeholders(&TemplateBody::Text("a {{ b".into())), Vec::<String>::new(), "unclosed");
    }
}
