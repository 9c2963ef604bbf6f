//! The chat completions endpoint (`/v1/chat/completions`): the fields read from its streamed
//! chunks (`delta`) and whole responses (`message`); its body is built in `request_bodies/`.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::choices_payload::{self, ChoiceReader, optional_text, skip};
use super::payload::ResponseFields;

/// Fields of one streamed chunk (`choices[0].delta`).
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    choices_payload::parse(data, TextField::Delta)
}

/// Fields of a whole response (`choices[0].message`).
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    choices_payload::parse(body, TextField::Message)
}

/// Which member of the choice holds the text; the other one is skipped unparsed.
#[derive(Clone, Copy)]
enum TextField {
    Delta,
    Message,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChoiceMember {
    Delta,
    Message,
    FinishReason,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum MessageMember {
    Content,
    ReasoningContent,
    /// The name some servers use instead of `reasoning_content`.
    Reasoning,
    #[serde(other)]
    Other,
}

impl ChoiceReader for TextField {
    type Member = ChoiceMember;
    fn read_member<'de, A: MapAccess<'de>>(
        self,
        member: ChoiceMember,
        members: &mut A,
        fields: &mut ResponseFields<'de>,
    ) -> Result<(), A::Error> {
        match (member, self) {
            (ChoiceMember::Delta, TextField::Delta) | (ChoiceMember::Message, TextField::Message) => {
                members.next_value_seed(Message { fields })?
            }
            (ChoiceMember::FinishReason, _) => fields.finish_reason = optional_text(members)?,
            _ => skip(members)?,
        }
        Ok(())
    }
}

/// A `delta` or `message` object, or null: its text and reasoning.
struct Message<'f, 'a> {
    fields: &'f mut ResponseFields<'a>,
}

impl<'de> DeserializeSeed<'de> for Message<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Message<'_, 'de> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a message object or null")
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        let mut reasoning_content = None;
        let mut reasoning = None;
        while let Some(member) = members.next_key()? {
            match member {
                MessageMember::Content => self.fields.content = optional_text(&mut members)?,
                MessageMember::ReasoningContent => reasoning_content = optional_text(&mut members)?,
                MessageMember::Reasoning => reasoning = optional_text(&mut members)?,
                MessageMember::Other => skip(&mut members)?,
            }
        }
        self.fields.reasoning = reasoning_content.or(reasoning);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::Usage;

    #[test]
    fn delta_content_and_finish_reason_are_read() {
        let fields = parse_stream_event(
            br#"{"id":"x","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hel"));
        assert!(fields.reasoning.is_none() && fields.finish_reason.is_none() && fields.usage.is_none());

        let last = parse_stream_event(br#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#).unwrap();
        assert_eq!(last.finish_reason.as_deref(), Some("length"));
        assert!(last.content.is_none());
    }

    #[test]
    fn reasoning_comes_from_reasoning_content_or_reasoning() {
        let fields =
            parse_stream_event(br#"{"choices":[{"delta":{"content":null,"reasoning_content":"think"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("think"));
        let fields = parse_stream_event(br#"{"choices":[{"delta":{"reasoning":"ponder"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("ponder"));
    }

    #[test]
    fn usage_only_chunk_has_usage_and_no_text() {
        let fields = parse_stream_event(
            br#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":1}}}"#,
        )
        .unwrap();
        assert_eq!(
            fields.usage,
            Some(Usage {
                prompt_tokens: Some(10),
                completion_tokens: Some(4),
                total_tokens: Some(14),
                reasoning_tokens: Some(1)
            })
        );
        assert!(fields.content.is_none());
    }

    #[test]
    fn error_payload_is_kept() {
        let fields = parse_stream_event(br#"{"error":{"message":"overloaded","type":"server_error"}}"#).unwrap();
        assert_eq!(fields.error, Some(json!({"message": "overloaded", "type": "server_error"})));
    }

    #[test]
    fn whole_response_reads_the_message() {
        let fields = parse_full_body(
            br#"{"choices":[{"message":{"role":"assistant","content":"Hello","reasoning_content":"hm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hello"));
        assert_eq!(fields.reasoning.as_deref(), Some("hm"));
        assert_eq!(fields.finish_reason.as_deref(), Some("stop"));
        assert_eq!(fields.usage.and_then(|usage| usage.total_tokens), Some(3));
    }

    #[test]
    fn broken_json_is_an_error() {
        assert!(parse_stream_event(b"{\"choices\":[").is_err());
        assert!(parse_stream_event(br#"{"choices":[{"delta":{"content":"a"}}]} trailing"#).is_err());
        assert!(parse_stream_event(br#"{"choices":{"delta":{}}}"#).is_err(), "choices must be an array");
        assert!(parse_stream_event(br#"{"choices":[{"delta":{"content":7}}]}"#).is_err());
    }

    #[test]
    fn the_first_choice_counts_and_null_members_are_absent() {
        let fields = parse_stream_event(
            br#"{"choices":[{"delta":{"content":"A"}},{"delta":{"content":"B"},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("A"));
        assert!(fields.finish_reason.is_none());
        for payload in [
            &br#"{"choices":null,"usage":null,"error":null}"#[..],
            br#"{"choices":[{"delta":null,"finish_reason":null}]}"#,
            br#"{"choices":[{"delta":{"content":null,"reasoning_content":null}}]}"#,
        ] {
            let fields = parse_stream_event(payload).unwrap();
            assert!(fields.content.is_none() && fields.reasoning.is_none() && fields.finish_reason.is_none());
            assert!(fields.usage.is_none() && fields.error.is_none());
        }
    }

    #[test]
    fn reasoning_content_wins_over_reasoning_in_any_order_and_escapes_are_undone() {
        let fields =
            parse_stream_event(br#"{"choices":[{"delta":{"reasoning":"b","reasoning_content":"a\nz"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("a\nz"));
    }

    #[test]
    fn a_stream_chunk_reads_delta_and_a_whole_response_reads_message() {
        let payload = br#"{"choices":[{"delta":{"content":"d"},"message":{"content":"m"}}]}"#;
        assert_eq!(parse_stream_event(payload).unwrap().content.as_deref(), Some("d"));
        assert_eq!(parse_full_body(payload).unwrap().content.as_deref(), Some("m"));
    }
}
