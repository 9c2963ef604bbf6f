//! The chat completions endpoint (`/v1/chat/completions`): the fields read from its streamed
//! chunks (`delta`) and whole responses (`message`); its body is built in `request_bodies/`.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::fast_payload::{self, SkippedPrefix, TextField};
use super::payload::{JsonText, ResponseFields, from_json_seed, text};
use super::wire_usage::WireUsage;
use crate::record::ToolCallPiece;
use crate::spec_decode;

/// Fields of one streamed chunk (`choices[0].delta`); `skipped` is carried from one chunk of a
/// stream to the next.
pub(crate) fn parse_stream_event<'a>(
    data: &'a [u8],
    skipped: &mut SkippedPrefix,
) -> serde_json::Result<ResponseFields<'a>> {
    parse(data, TextField::Delta, Some(skipped))
}

/// Fields of a whole response (`choices[0].message`).
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    parse(body, TextField::Message, None)
}

/// The payload is read by `fast_payload` when it takes the usual form, and otherwise
/// straight into `ResponseFields` as `serde_json` meets its members: this runs for every
/// streamed token, and building a payload struct first cost a copy of a few hundred bytes at
/// each level. Members other than these are skipped unparsed.
fn parse<'a>(
    input: &'a [u8],
    text_field: TextField,
    skipped: Option<&mut SkippedPrefix>,
) -> serde_json::Result<ResponseFields<'a>> {
    if let Some(fields) = fast_payload::read(input, text_field, skipped) {
        return Ok(fields);
    }
    read_with_serde(input, text_field)
}

/// The payload read by `serde_json`, whatever its form.
pub(super) fn read_with_serde(input: &[u8], text_field: TextField) -> serde_json::Result<ResponseFields<'_>> {
    let mut fields = ResponseFields::default();
    from_json_seed(input, Payload { text_field, fields: &mut fields })?;
    Ok(fields)
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum PayloadMember {
    Choices,
    Usage,
    Error,
    /// vLLM's per-request statistics (`speculative_decoding`).
    Metrics,
    #[serde(other)]
    Other,
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
    ToolCalls,
    #[serde(other)]
    Other,
}

/// The payload object: `choices`, `usage`, `error`, `metrics`.
struct Payload<'f, 'a> {
    text_field: TextField,
    fields: &'f mut ResponseFields<'a>,
}

/// `choices`: an array (its first element read, the rest skipped) or null.
struct FirstChoice<'f, 'a> {
    text_field: TextField,
    fields: &'f mut ResponseFields<'a>,
}

/// One choice: its `finish_reason` and the message that `text_field` names.
struct Choice<'f, 'a> {
    text_field: TextField,
    fields: &'f mut ResponseFields<'a>,
}

/// A `delta` or `message` object, or null: its text and reasoning.
struct Message<'f, 'a> {
    fields: &'f mut ResponseFields<'a>,
}

/// Each visitor is also the seed that reads its value, the way `$read` says.
macro_rules! seed_reading_with {
    ($visitor:ident, $read:ident) => {
        impl<'de> DeserializeSeed<'de> for $visitor<'_, 'de> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
                deserializer.$read(self)
            }
        }
    };
}

seed_reading_with!(Payload, deserialize_map);
seed_reading_with!(FirstChoice, deserialize_any);
seed_reading_with!(Choice, deserialize_map);
seed_reading_with!(Message, deserialize_option);

impl<'de, 'f> Visitor<'de> for Payload<'f, 'de> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a chat completion object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        while let Some(member) = members.next_key()? {
            match member {
                PayloadMember::Choices => {
                    members.next_value_seed(FirstChoice { text_field: self.text_field, fields: &mut *self.fields })?
                }
                PayloadMember::Usage => self.fields.usage = members.next_value::<Option<WireUsage>>()?.map(Into::into),
                PayloadMember::Error => self.fields.error = members.next_value::<Option<Value>>()?,
                PayloadMember::Metrics => {
                    let metrics = members.next_value::<Value>()?;
                    self.fields.spec_decode = spec_decode::from_response_metrics(&metrics)
                }
                PayloadMember::Other => {
                    members.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de, 'f> Visitor<'de> for FirstChoice<'f, 'de> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an array or null")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut elements: A) -> Result<(), A::Error> {
        elements.next_element_seed(Choice { text_field: self.text_field, fields: self.fields })?;
        while elements.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

impl<'de, 'f> Visitor<'de> for Choice<'f, 'de> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a choice object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        while let Some(member) = members.next_key()? {
            match (member, self.text_field) {
                (ChoiceMember::Delta, TextField::Delta) | (ChoiceMember::Message, TextField::Message) => {
                    members.next_value_seed(Message { fields: &mut *self.fields })?
                }
                (ChoiceMember::FinishReason, _) => {
                    self.fields.finish_reason = text(members.next_value::<Option<JsonText<'de>>>()?)
                }
                _ => {
                    members.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de, 'f> Visitor<'de> for Message<'f, 'de> {
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
                MessageMember::Content => self.fields.content = text(members.next_value::<Option<JsonText<'de>>>()?),
                MessageMember::ReasoningContent => reasoning_content = members.next_value::<Option<JsonText<'de>>>()?,
                MessageMember::Reasoning => reasoning = members.next_value::<Option<JsonText<'de>>>()?,
                MessageMember::ToolCalls => {
                    self.fields.tool_calls =
                        members.next_value::<Option<Vec<ToolCallPiece>>>()?.map(Vec::into_boxed_slice)
                }
                MessageMember::Other => {
                    members.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.fields.reasoning = text(reasoning_content.or(reasoning));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::Usage;

    /// One chunk, read as the first of its stream.
    fn stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
        parse_stream_event(data, &mut SkippedPrefix::default())
    }

    #[test]
    fn delta_content_and_finish_reason_are_read() {
        let fields = stream_event(
            br#"{"id":"x","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hel"));
        assert!(fields.reasoning.is_none() && fields.finish_reason.is_none() && fields.usage.is_none());

        let last = stream_event(br#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#).unwrap();
        assert_eq!(last.finish_reason.as_deref(), Some("length"));
        assert!(last.content.is_none());
    }

    #[test]
    fn the_usage_chunk_gives_cache_reads_and_vllm_s_speculative_decoding_statistics() {
        let fields = stream_event(
            br#"{"id":"x","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":9,"total_tokens":109,
                "prompt_tokens_details":{"cached_tokens":64}},
                "metrics":{"speculative_decoding":{"acceptance_histogram":[1,0,3],"num_spec_steps":4,"num_spec_tokens":2,
                "mean_acceptance_length":2.5,"draft_acceptance_rate":0.75,"num_accepted_draft_tokens":6,"num_draft_tokens":8}}}"#,
        )
        .unwrap();
        assert_eq!(fields.usage.and_then(|usage| usage.prompt_cache_read_tokens), Some(64));
        let stats = fields.spec_decode.unwrap();
        assert_eq!((stats.num_spec_steps, stats.num_accepted_draft_tokens, stats.num_draft_tokens), (4, 6, 8));
        assert_eq!(stats.acceptance_histogram, vec![1, 0, 3]);
        let whole = parse_full_body(
            br#"{"choices":[{"message":{"content":"hi"}}],"metrics":{"speculative_decoding":{"acceptance_histogram":[2],"num_spec_steps":2,"num_spec_tokens":0,"mean_acceptance_length":1.0,"draft_acceptance_rate":0.0,"num_accepted_draft_tokens":0,"num_draft_tokens":0}}}"#,
        )
        .unwrap();
        assert_eq!(whole.spec_decode.map(|stats| stats.num_spec_steps), Some(2));
    }

    #[test]
    fn reasoning_comes_from_reasoning_content_or_reasoning() {
        let fields = stream_event(br#"{"choices":[{"delta":{"content":null,"reasoning_content":"think"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("think"));
        let fields = stream_event(br#"{"choices":[{"delta":{"reasoning":"ponder"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("ponder"));
    }

    #[test]
    fn usage_only_chunk_has_usage_and_no_text() {
        let fields = stream_event(
            br#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":1}}}"#,
        )
        .unwrap();
        assert_eq!(
            fields.usage,
            Some(Usage {
                prompt_tokens: Some(10),
                completion_tokens: Some(4),
                total_tokens: Some(14),
                reasoning_tokens: Some(1),
                ..Default::default()
            })
        );
        assert!(fields.content.is_none());
    }

    #[test]
    fn error_payload_is_kept() {
        let fields = stream_event(br#"{"error":{"message":"overloaded","type":"server_error"}}"#).unwrap();
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
        assert!(stream_event(b"{\"choices\":[").is_err());
        assert!(stream_event(br#"{"choices":[{"delta":{"content":"a"}}]} trailing"#).is_err());
        assert!(stream_event(br#"{"choices":{"delta":{}}}"#).is_err(), "choices must be an array");
        assert!(stream_event(br#"{"choices":[{"delta":{"content":7}}]}"#).is_err());
    }

    #[test]
    fn the_first_choice_counts_and_null_members_are_absent() {
        let fields = stream_event(
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
            let fields = stream_event(payload).unwrap();
            assert!(fields.content.is_none() && fields.reasoning.is_none() && fields.finish_reason.is_none());
            assert!(fields.usage.is_none() && fields.error.is_none());
        }
    }

    #[test]
    fn reasoning_content_wins_over_reasoning_in_any_order_and_escapes_are_undone() {
        let fields = stream_event(br#"{"choices":[{"delta":{"reasoning":"b","reasoning_content":"a\nz"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("a\nz"));
    }

    #[test]
    fn tool_call_pieces_are_read_from_deltas_and_whole_messages_and_joined_on_the_record() {
        let first = br#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}"#;
        let second = br#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}}]}"#;
        assert!(fast_payload::read(first, TextField::Delta, None).is_none(), "serde_json reads tool calls");
        let mut record = crate::record::RequestRecord::new(
            crate::record::RequestOrigin {
                phase_index: 0,
                phase_name: "p".into(),
                phase_kind: crate::plan::PhaseKind::Profiling,
                index_in_phase: 0,
                dataset_index: 0,
            },
            "x".into(),
            0,
            0,
            None,
        );
        stream_event(first).unwrap().record_into(&mut record, 1);
        stream_event(second).unwrap().record_into(&mut record, 2);
        assert_eq!(record.tool_calls.len(), 1);
        assert_eq!((record.tool_calls[0].id.as_str(), record.tool_calls[0].name.as_str()), ("call_1", "f"));
        assert_eq!(record.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(record.chunks.len(), 2, "each piece is output");
        let whole = br#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
        let pieces = parse_full_body(whole).unwrap().tool_calls.unwrap();
        assert_eq!(pieces[0].function.as_ref().and_then(|f| f.name.as_deref()), Some("g"));
    }

    #[test]
    fn a_stream_chunk_reads_delta_and_a_whole_response_reads_message() {
        let payload = br#"{"choices":[{"delta":{"content":"d"},"message":{"content":"m"}}]}"#;
        assert_eq!(stream_event(payload).unwrap().content.as_deref(), Some("d"));
        assert_eq!(parse_full_body(payload).unwrap().content.as_deref(), Some("m"));
    }
}

#[cfg(test)]
mod fast_path_agrees {
    use std::borrow::Cow;

    use super::*;
    use crate::client::fast_payload::agreement;

    /// Payloads as servers send them (vLLM, SGLang, TRT-LLM, llama.cpp, OpenAI), each read by
    /// the fast path.
    const USUAL: [&str; 12] = [
        r#"{"id":"chatcmpl-6b08","object":"chat.completion.chunk","created":1795697457,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-6b08","object":"chat.completion.chunk","created":1795697457,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":"length","stop_reason":null}],"usage":null}"#,
        r#"{"id":"x","choices":[],"usage":{"prompt_tokens":10,"total_tokens":14,"completion_tokens":4,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":0}}}"#,
        r#"{"choices":[{"delta":{"content":null,"reasoning_content":"Hm, é…"},"index":0}],"system_fingerprint":"fp_44709d6fcb"}"#,
        r#" { "choices" : [ { "delta" : { "reasoning" : "b" } , "finish_reason" : null } ] } "#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":-0.0123,"bytes":[120],"top_logprobs":[{"token":"y","logprob":-4.5e-05,"bytes":null}]}]}}]}"#,
        r#"{"choices":[{"delta":{"content":"A"}},{"delta":{"content":"B"},"finish_reason":"stop"}],"timings":{"predicted_ms":12.5,"cache_n":0}}"#,
        r#"{"choices":null,"usage":null,"created":0,"flag":true,"other":false,"neg":-1}"#,
        r#"{"choices":[{"message":{"role":"assistant","content":"Hello","reasoning_content":"hm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#,
        r#"{"id":"chatcmpl-6b08","object":"chat.completion.chunk","created":1795697457,"model":"m","choices":[{"index":0,"delta":{"content":".\n\n```rust\nlet s = \"\\t\";"},"finish_reason":null}]}"#,
        r#"{"choices":[{"message":{"content":"caf\u00e9 \u20ac \/ \b\f\r\t","reasoning_content":"step 1:\n"}}]}"#,
        r#"{"id":"x","choices":[],"usage":{"prompt_tokens":90,"completion_tokens":7,"total_tokens":97,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":3,"rejected_prediction_tokens":1}}}"#,
    ];

    /// Whatever the fast path reads (after the payloads `skipped` remembers), serde_json reads
    /// the same from.
    fn check_agrees(input: &[u8], text_field: TextField, skipped: Option<&mut SkippedPrefix>) -> bool {
        agreement::agrees(input, fast_payload::read(input, text_field, skipped), || read_with_serde(input, text_field))
    }

    #[test]
    fn the_usual_payloads_are_read_fast_and_as_serde_json_reads_them() {
        for text in USUAL {
            for text_field in [TextField::Delta, TextField::Message] {
                assert!(check_agrees(text.as_bytes(), text_field, None), "not read fast: {text}");
            }
        }
        assert!(check_agrees("{\"métadonnées\":{\"é\":1},\"choices\":[]}".as_bytes(), TextField::Delta, None));
        let fields = fast_payload::read(USUAL[3].as_bytes(), TextField::Delta, None).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("Hm, é…"));
        assert!(matches!(fields.reasoning, Some(Cow::Borrowed(_))));
        assert_eq!(
            fast_payload::read(USUAL[2].as_bytes(), TextField::Delta, None)
                .unwrap()
                .usage
                .and_then(|usage| usage.reasoning_tokens),
            Some(1)
        );
    }

    #[test]
    fn what_the_fast_path_does_not_take_is_left_to_serde_json() {
        for text in [
            r#"{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}"#,
            r#"{"error":{"message":"overloaded"}}"#,
            r#"{"error":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens":2}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1.0}}"#,
            r#"{"choices":[],"usage":[1,2,3,null]}"#,
            r#"{"choices":{"delta":{}}}"#,
            r#"{"choices":[{"delta":{"content":7}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"}}]} trailing"#,
            "{\"choices\":[",
            r#"{"choices":[],"usage":{"prompt_tokens":4},"metrics":{"speculative_decoding":null}}"#,
            r#"{"choices":[],"usage":{"input_tokens":4,"cache_read_input_tokens":2}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}"#,
        ] {
            assert!(fast_payload::read(text.as_bytes(), TextField::Delta, None).is_none(), "{text}");
        }
    }

    #[test]
    fn a_stream_s_chunks_read_after_one_another_read_as_each_alone() {
        let head = r#"{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1795697457,"model":"m","#;
        let stream = [
            format!(
                r#"{head}"choices":[{{"index":0,"delta":{{"role":"assistant","content":""}},"finish_reason":null}}]}}"#
            ),
            format!(r#"{head}"choices":[{{"index":0,"delta":{{"content":" the"}},"finish_reason":null}}]}}"#),
            format!(r#"{head}"choices":[{{"index":0,"delta":{{"content":"\n"}},"finish_reason":null}}]}}"#),
            format!(r#"{head}"choices":[{{"index":0,"delta":{{"content":"\ud83d\ude00"}},"finish_reason":null}}]}}"#),
            format!(r#"{head}"choices":[{{"index":0,"delta":{{"content":" end"}},"finish_reason":"length"}}]}}"#),
            format!(r#"{head}"choices":[],"usage":{{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}}}"#),
            // Another stream's head, and a number that the remembered one only starts.
            r#"{"id":"chatcmpl-10","created":17956974570,"choices":[{"delta":{"content":"x"}}]}"#.to_string(),
            r#"{"id":"chatcmpl-10","created":17956974570.5,"choices":[{"delta":{"content":"y"}}]}"#.to_string(),
            r#"{"id":"chatcmpl-10","created":1795697457,"choices":[{"delta":{"content":"z"}}]}"#.to_string(),
        ];
        let mut skipped = SkippedPrefix::default();
        for chunk in &stream {
            let one = parse_stream_event(chunk.as_bytes(), &mut SkippedPrefix::default()).unwrap();
            let following = parse_stream_event(chunk.as_bytes(), &mut skipped).unwrap();
            assert_eq!(agreement::summary(&following), agreement::summary(&one), "{chunk}");
        }
        let mut skipped = SkippedPrefix::default();
        assert!(check_agrees(stream[0].as_bytes(), TextField::Delta, Some(&mut skipped)));
        assert!(check_agrees(stream[1].as_bytes(), TextField::Delta, Some(&mut skipped)));
        assert!(check_agrees(stream[2].as_bytes(), TextField::Delta, Some(&mut skipped)));
        assert!(!check_agrees(stream[3].as_bytes(), TextField::Delta, Some(&mut skipped)), "a surrogate: serde_json's");
        assert!(check_agrees(stream[4].as_bytes(), TextField::Delta, Some(&mut skipped)));
    }

    /// Every payload above, cut, grown and changed at random places (UTF-8 broken too): where
    /// the fast path reads the result, alone or after the payload it was made from,
    /// `serde_json` reads the same and does not refuse it.
    #[test]
    fn mangled_payloads_never_read_differently_from_serde_json() {
        let text_fields = [TextField::Delta, TextField::Message];
        let read_fast = agreement::mangled_read_fast(&USUAL, &text_fields, 40_000, read_with_serde);
        assert!(read_fast > 5_000, "only {read_fast} mangled payloads were read fast");
    }
}
