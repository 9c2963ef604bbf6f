//! The text completions endpoint (`/v1/completions`): the fields read from its payloads
//! (streamed chunks and whole responses share one shape: `choices[0].text`); its body is built
//! in `request_bodies/`.

use serde::Deserialize;
use serde::de::MapAccess;

use super::choices_payload::{self, ChoiceReader, optional_text, skip};
use super::payload::ResponseFields;

/// Fields of a streamed chunk or a whole response.
pub(crate) fn parse_payload(input: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    choices_payload::parse(input, CompletionChoice)
}

/// A completion's choice: `text` and `finish_reason`.
#[derive(Clone, Copy)]
struct CompletionChoice;

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChoiceMember {
    Text,
    FinishReason,
    #[serde(other)]
    Other,
}

impl ChoiceReader for CompletionChoice {
    type Member = ChoiceMember;
    fn read_member<'de, A: MapAccess<'de>>(
        self,
        member: ChoiceMember,
        members: &mut A,
        fields: &mut ResponseFields<'de>,
    ) -> Result<(), A::Error> {
        match member {
            ChoiceMember::Text => fields.content = optional_text(members)?,
            ChoiceMember::FinishReason => fields.finish_reason = optional_text(members)?,
            ChoiceMember::Other => skip(members)?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn text_finish_reason_and_usage_are_read() {
        let fields = parse_payload(br#"{"choices":[{"index":0,"text":" there","finish_reason":null}]}"#).unwrap();
        assert_eq!(fields.content.as_deref(), Some(" there"));
        let fields = parse_payload(br#"{"choices":[{"text":"","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#).unwrap();
        assert_eq!(fields.finish_reason.as_deref(), Some("stop"));
        assert_eq!(fields.usage.and_then(|usage| usage.completion_tokens), Some(2));
    }

    #[test]
    fn the_first_choice_counts_and_a_malformed_payload_is_an_error() {
        let fields = parse_payload(br#"{"choices":[{"text":"a"},{"text":"b","finish_reason":"stop"}]}"#).unwrap();
        assert_eq!((fields.content.as_deref(), fields.finish_reason.as_deref()), (Some("a"), None));
        let fields = parse_payload(br#"{"id":"x","choices":null,"usage":null}"#).unwrap();
        assert!(fields.content.is_none() && fields.usage.is_none());
        assert!(parse_payload(br#"{"choices":[{"text":1}]}"#).is_err());
        assert!(parse_payload(br#"{"choices":[{"text":"a"}]"#).is_err());
    }

    #[test]
    fn error_payload_is_kept() {
        let fields = parse_payload(br#"{"error":"bad things"}"#).unwrap();
        assert_eq!(fields.error, Some(Value::from("bad things")));
    }
}
