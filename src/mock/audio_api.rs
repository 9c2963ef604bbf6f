//! The mock's `POST /v1/audio/transcriptions`: reads the uploaded WAV file (a form with `file`
//! and `model`), and answers after the time to first token with a transcript of one word per
//! 0.4 s of audio: whole (`text`, `usage`; with `response_format=verbose_json` also the audio's
//! `duration`) or, with `stream=true`, one `transcript.text.delta` event per word and a
//! `transcript.text.done` event with the usage. A Whisper model's usage is the audio's length
//! (`{"type":"duration","seconds":…}`, as OpenAI's whisper-1 and vLLM report it), any other
//! model's is in tokens (as OpenAI's gpt-4o transcription models report it).

use std::fmt::Write;
use std::io::Cursor;
use std::sync::Arc;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::json;

use super::body::MockBody;
use super::fine_timer;
use super::form::{self, FormPart};
use super::generate::read_body;
use super::state::MockState;
use super::{reply, words};

/// Seconds of audio per transcribed word (150 words a minute).
const SECONDS_PER_WORD: f64 = 0.4;
/// Input tokens the mock reports per second of audio.
const AUDIO_TOKENS_PER_SECOND: f64 = 10.0;

pub async fn serve(state: Arc<MockState>, request: Request<Incoming>) -> Response<MockBody> {
    let headers = request.headers().clone();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let parts = match form::parse(&headers, &body) {
        Ok(parts) => parts,
        Err(message) => return reply::invalid_request(&message),
    };
    let seconds = match audio_seconds(&parts) {
        Ok(seconds) => seconds,
        Err(message) => return reply::invalid_request(&message),
    };
    if form::text(&parts, "model").is_none() {
        return reply::invalid_request("missing form field `model`");
    }
    let stream = form::text(&parts, "stream") == Some("true");
    let word_count = ((seconds / SECONDS_PER_WORD).round() as u64).max(1);
    let usage = usage(form::text(&parts, "model").unwrap_or_default(), seconds, word_count);
    fine_timer::sleep(state.timing.time_to_first_token).await;
    let text = words::output_text(word_count);
    if !stream {
        let body = match form::text(&parts, "response_format") {
            Some("verbose_json") => {
                let language = form::text(&parts, "language").unwrap_or("english");
                let segment = json!({"id": 0, "seek": 0, "start": 0.0, "end": seconds, "text": text});
                json!({"task": "transcribe", "language": language, "duration": seconds, "text": text,
                       "segments": [segment], "usage": usage})
            }
            _ => json!({"text": text, "usage": usage}),
        };
        return reply::json(StatusCode::OK, body.to_string());
    }
    let mut events = String::new();
    for index in 0..word_count {
        let delta = json!({"type": "transcript.text.delta", "delta": words::word_at(index)});
        let _ = write!(events, "data: {delta}\n\n");
    }
    let _ = write!(events, "data: {}\n\n", json!({"type": "transcript.text.done", "text": text, "usage": usage}));
    reply::with_body(StatusCode::OK, "text/event-stream", MockBody::whole(events))
}

/// The usage of a transcript of `word_count` words of `seconds` of audio by `model`.
fn usage(model: &str, seconds: f64, word_count: u64) -> serde_json::Value {
    if model.to_ascii_lowercase().contains("whisper") {
        return json!({"type": "duration", "seconds": seconds.ceil() as u64});
    }
    let input_tokens = (seconds * AUDIO_TOKENS_PER_SECOND).ceil() as u64;
    json!({"type": "tokens", "input_tokens": input_tokens, "output_tokens": word_count,
           "total_tokens": input_tokens + word_count})
}

/// The length of the uploaded `file`, which must be a WAV file.
fn audio_seconds(parts: &[FormPart<'_>]) -> Result<f64, String> {
    let file = parts.iter().find(|part| part.name == "file").ok_or("missing form file `file`")?;
    if file.file_name.is_none() {
        return Err("form field `file` is not a file upload (it has no filename)".into());
    }
    let reader = hound::WavReader::new(Cursor::new(file.bytes))
        .map_err(|error| format!("form file `file` is not a WAV file the mock can read: {error}"))?;
    Ok(f64::from(reader.duration()) / f64::from(reader.spec().sample_rate))
}
