//! Which reader a response's payloads go to: the endpoint kind's own, or the template's paths.

use std::sync::Arc;

use crate::plan::{Endpoint, EndpointKind};

use super::fast_payload::SkippedPrefix;
use super::payload::ResponseFields;
use super::template::TemplateReader;
use super::{
    audio_transcription, chat, completions, embeddings, image_retrieval, images_api, messages, rankings, raw,
    responses, solido_rag, tgi, video_generation,
};

/// How a response's payloads are read: by a kind's own shape, or by a template's paths.
#[derive(Debug, Clone)]
pub(crate) enum PayloadFormat {
    Kind(EndpointKind),
    Template(Arc<TemplateReader>),
}

impl PayloadFormat {
    /// The format of `endpoint`'s responses.
    pub fn of(endpoint: &Endpoint) -> Self {
        match &endpoint.request.template {
            Some(template) => PayloadFormat::Template(Arc::new(TemplateReader::new(&template.response))),
            None => PayloadFormat::Kind(endpoint.kind),
        }
    }
}

impl PayloadFormat {
    /// A stream of this format is complete when its body ends cleanly: these kinds send no
    /// `[DONE]`, and no finish reason (raw answers, SOLIDO RAG) or only when asked for (TGI's
    /// `details`).
    pub fn ends_with_the_body(&self) -> bool {
        matches!(self, PayloadFormat::Kind(EndpointKind::Raw | EndpointKind::SolidoRag | EndpointKind::Tgi))
    }
}

impl From<EndpointKind> for PayloadFormat {
    fn from(kind: EndpointKind) -> Self {
        PayloadFormat::Kind(kind)
    }
}

/// Parse one streamed event's JSON as `format` says.
pub(crate) fn parse_stream_event<'a>(
    format: &PayloadFormat,
    data: &'a [u8],
    skipped: &mut SkippedPrefix,
) -> serde_json::Result<ResponseFields<'a>> {
    match format {
        PayloadFormat::Kind(EndpointKind::Chat) => chat::parse_stream_event(data, skipped),
        PayloadFormat::Kind(EndpointKind::Responses) => responses::parse_stream_event(data),
        PayloadFormat::Kind(EndpointKind::Tgi) => tgi::parse_payload(data),
        PayloadFormat::Kind(EndpointKind::Completions) => completions::parse_stream_event(data, skipped),
        PayloadFormat::Kind(EndpointKind::Messages) => messages::parse_stream_event(data),
        PayloadFormat::Kind(EndpointKind::Raw) => raw::parse_stream_event(data),
        PayloadFormat::Kind(EndpointKind::SolidoRag) => solido_rag::parse_payload(data),
        PayloadFormat::Kind(EndpointKind::AudioTranscription) => audio_transcription::parse_stream_event(data),
        PayloadFormat::Kind(EndpointKind::ImageGeneration | EndpointKind::ImageEdit) => {
            images_api::parse_stream_event(data)
        }
        PayloadFormat::Template(reader) => reader.parse_stream_event(data),
        // Kinds that never stream read an event as they read a whole body.
        PayloadFormat::Kind(other) => parse_full_body(&PayloadFormat::Kind(*other), data),
    }
}

/// Parse a whole (non-streamed) response body as `format` says.
pub(crate) fn parse_full_body<'a>(format: &PayloadFormat, body: &'a [u8]) -> serde_json::Result<ResponseFields<'a>> {
    match format {
        PayloadFormat::Kind(EndpointKind::Chat) => chat::parse_full_body(body),
        PayloadFormat::Kind(EndpointKind::Completions) => completions::parse_payload(body),
        PayloadFormat::Kind(EndpointKind::Embeddings | EndpointKind::ChatEmbeddings | EndpointKind::NimEmbeddings) => {
            embeddings::parse_response(body)
        }
        PayloadFormat::Kind(
            kind @ (EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings),
        ) => rankings::parse_response(*kind, body),
        PayloadFormat::Kind(EndpointKind::Responses) => responses::parse_full_body(body),
        PayloadFormat::Kind(EndpointKind::Tgi) => tgi::parse_payload(body),
        PayloadFormat::Kind(EndpointKind::Messages) => messages::parse_full_body(body),
        PayloadFormat::Kind(EndpointKind::Raw) => raw::parse_full_body(body),
        PayloadFormat::Kind(EndpointKind::SolidoRag) => solido_rag::parse_payload(body),
        PayloadFormat::Kind(EndpointKind::AudioTranscription) => audio_transcription::parse_full_body(body),
        PayloadFormat::Kind(EndpointKind::ImageGeneration | EndpointKind::ImageEdit) => {
            images_api::parse_full_body(body)
        }
        PayloadFormat::Kind(EndpointKind::ImageRetrieval) => image_retrieval::parse_response(body),
        PayloadFormat::Kind(EndpointKind::VideoGeneration) => video_generation::parse_job(body),
        PayloadFormat::Kind(EndpointKind::Template) => {
            Err(serde::de::Error::custom("a template endpoint needs its response paths"))
        }
        PayloadFormat::Template(reader) => reader.parse_full_body(body),
    }
}
