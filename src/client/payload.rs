//! What one response payload (a streamed event or a whole body) says, in a form shared by the
//! endpoint kinds and the template reader, plus the borrowed wire pieces they deserialize with.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};

use crate::record::{MediaOutput, ReasoningPiece, RequestRecord, ResponseChunk, ToolCallPiece, Usage};
use crate::spec_decode::SpecDecodeStats;

/// The fields of one payload that a record keeps.
#[derive(Debug, Default)]
pub(crate) struct ResponseFields<'a> {
    pub content: Option<Cow<'a, str>>,
    pub reasoning: Option<Cow<'a, str>>,
    pub finish_reason: Option<Cow<'a, str>>,
    pub usage: Option<Usage>,
    /// The payload's `error` member, when the server reported a failure.
    pub error: Option<serde_json::Value>,
    /// Images and video figures of a media endpoint's payload (boxed: the struct is moved
    /// once per streamed event, and only media kinds fill this).
    pub media: Option<Box<MediaOutput>>,
    /// The speculative-decoding statistics at the payload's root (`metrics`), where sent.
    pub spec_decode: Option<Box<SpecDecodeStats>>,
    /// A chat answer's `tool_calls` pieces (read by `serde_json` only: the fast path hands
    /// such payloads over).
    pub tool_calls: Option<Box<[ToolCallPiece]>>,
    /// What of the answer's reasoning its API wants sent back (Messages thinking blocks and
    /// their signatures, Responses reasoning items).
    pub reasoning_pieces: Option<Box<[ReasoningPiece]>>,
}

impl ResponseFields<'_> {
    /// Append the text, keep finish_reason, usage and media figures, and log a chunk at
    /// `arrival_ns` when the payload carried text or an image.
    pub fn record_into(self, record: &mut RequestRecord, arrival_ns: u64) {
        let content = self.content.filter(|text| !text.is_empty());
        let reasoning = self.reasoning.filter(|text| !text.is_empty());
        let image = self.media.as_deref().is_some_and(MediaOutput::has_image);
        let tool_calls = self.tool_calls.filter(|pieces| !pieces.is_empty());
        let chunks_before = record.chunks.len();
        if content.is_some() || reasoning.is_some() || image || tool_calls.is_some() {
            record.chunks.push(ResponseChunk {
                ns: arrival_ns,
                has_content: content.is_some() || image || tool_calls.is_some(),
                has_reasoning: reasoning.is_some(),
            });
        }
        if let Some(media) = self.media {
            record.media.merge(*media);
        }
        if let Some(stats) = self.spec_decode {
            record.spec_decode.add(stats);
        }
        if let Some(text) = content {
            record.content.push_str(&text);
        }
        if let Some(pieces) = tool_calls {
            record.add_tool_call_pieces(pieces.into_vec());
        }
        let reasoning_before = record.reasoning.len();
        if let Some(pieces) = self.reasoning_pieces {
            record.add_reasoning_pieces(pieces.into_vec(), reasoning_before);
        }
        if let Some(text) = reasoning {
            record.reasoning.push_str(&text);
            record.extend_streamed_thinking(reasoning_before);
        }
        if let Some(reason) = self.finish_reason
            && record.finish_reason.as_deref() != Some(reason.as_ref())
        {
            record.finish_reason = Some(reason.into_owned());
        }
        if let Some(usage) = self.usage {
            let first_with_usage = record.first_chunk_usage_tokens.is_none() && record.chunks.len() > chunks_before;
            if first_with_usage {
                record.first_chunk_usage_tokens = usage.completion_tokens;
            }
            record.usage = Some(match record.usage {
                Some(earlier) => earlier.updated_by(usage),
                None => usage,
            });
        }
    }
}

/// Deserialize a payload, checking its UTF-8 once as a whole rather than string by string (a
/// payload that is not UTF-8 throughout is read as before, validating only its strings).
pub(crate) fn from_json<'a, T: Deserialize<'a>>(input: &'a [u8]) -> serde_json::Result<T> {
    from_json_seed(input, PhantomData)
}

/// `from_json` for a seed that fills in what it reads (the payload must be all there is).
pub(crate) fn from_json_seed<'a, S: DeserializeSeed<'a>>(input: &'a [u8], seed: S) -> serde_json::Result<S::Value> {
    match std::str::from_utf8(input) {
        Ok(text) => read_whole(&mut serde_json::Deserializer::from_str(text), seed),
        Err(_) => read_whole(&mut serde_json::Deserializer::from_slice(input), seed),
    }
}

/// The seed's value, then nothing but whitespace.
fn read_whole<'a, R: serde_json::de::Read<'a>, S: DeserializeSeed<'a>>(
    deserializer: &mut serde_json::Deserializer<R>,
    seed: S,
) -> serde_json::Result<S::Value> {
    let value = seed.deserialize(&mut *deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// A JSON string that borrows from the input unless it had escapes to undo.
#[derive(Debug)]
pub(crate) struct JsonText<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = JsonText<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// Unwraps an optional `JsonText` into the `Cow` that `ResponseFields` holds.
pub(crate) fn text(value: Option<JsonText<'_>>) -> Option<Cow<'_, str>> {
    value.map(|JsonText(text)| text)
}

/// `deserialize_with` for `choices`: keeps only the first element (skipping the rest without
/// building them) and takes `null` as no choice, so no `Vec` is built per payload.
pub(crate) fn first_element<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct FirstElement<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for FirstElement<T> {
        type Value = Option<T>;
        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("an array or null")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut elements: A) -> Result<Self::Value, A::Error> {
            let first = elements.next_element::<T>()?;
            while elements.next_element::<IgnoredAny>()?.is_some() {}
            Ok(first)
        }
    }
    deserializer.deserialize_any(FirstElement(PhantomData))
}

/// The text and the tool calls (id, name, arguments) a record holds after `events`, each read by
/// `parse` (an endpoint kind's stream reader).
#[cfg(test)]
pub(crate) fn text_and_calls_of(
    parse: fn(&[u8]) -> serde_json::Result<ResponseFields<'_>>,
    events: &[&str],
) -> (String, Vec<(String, String, String)>) {
    let origin = crate::record::RequestOrigin::first_profiling();
    let mut record = RequestRecord::new(origin, "req-1".into(), 0, 10, Some(64));
    for (at, data) in events.iter().enumerate() {
        parse(data.as_bytes()).expect("an event").record_into(&mut record, at as u64);
    }
    let calls = record.tool_calls.iter().map(|call| (call.id.clone(), call.name.clone(), call.arguments.clone()));
    (record.content.clone(), calls.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Sample<'a> {
        #[serde(default, borrow, deserialize_with = "first_element")]
        choices: Option<JsonText<'a>>,
    }

    #[test]
    fn json_text_borrows_plain_strings_and_owns_escaped_ones() {
        let plain: Sample = serde_json::from_slice(br#"{"choices":["abc","skipped"]}"#).unwrap();
        assert!(matches!(plain.choices, Some(JsonText(Cow::Borrowed("abc")))));
        let escaped: Sample = serde_json::from_slice(br#"{"choices":["a\nb"]}"#).unwrap();
        assert!(matches!(escaped.choices, Some(JsonText(Cow::Owned(ref text))) if text == "a\nb"));
    }

    #[test]
    fn from_json_reads_a_payload_that_is_not_utf8_outside_its_kept_strings_as_before() {
        let sample: Sample = from_json(b"{\"skipped\":\"\xff\",\"choices\":[\"ok\"]}").unwrap();
        assert!(matches!(sample.choices, Some(JsonText(Cow::Borrowed("ok")))));
        assert!(from_json::<Sample>(b"{\"choices\":[\"\xff\"]}").is_err());
    }

    #[test]
    fn choices_may_be_empty_null_or_missing() {
        for body in [&br#"{"choices":[]}"#[..], br#"{"choices":null}"#, b"{}"] {
            let sample: Sample = serde_json::from_slice(body).unwrap();
            assert!(sample.choices.is_none());
        }
    }
}
