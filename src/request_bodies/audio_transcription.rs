//! OpenAI audio transcription's body (`/v1/audio/transcriptions`, Whisper-style servers): the
//! audio file uploaded as a form with the model (and `stream`).

use anyhow::Result;

use super::multipart::Form;
use crate::plan::Endpoint;

/// The form: `file`, `model`, `stream` when streaming, then the endpoint's extra fields (the
/// file excepted: it is the endpoint's own).
pub(super) fn body(endpoint: &Endpoint, audio: &[u8], file_name: &str, media_type: &str) -> Result<Vec<u8>> {
    let mut form = Form::new().file("file", file_name, media_type, audio)?.text("model", &endpoint.model)?;
    if endpoint.streaming {
        form = form.text("stream", "true")?;
    }
    Ok(form.json_fields(endpoint.extra.iter().filter(|(key, _)| key.as_str() != "file"))?.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;
    use crate::request_bodies::multipart::BOUNDARY;

    #[test]
    fn the_form_carries_the_file_model_stream_and_extras_but_not_an_extra_file() {
        let mut endpoint =
            Endpoint { streaming: true, ..crate::request_bodies::test_endpoint(EndpointKind::AudioTranscription) };
        endpoint.extra.insert("language".into(), "en".into());
        endpoint.extra.insert("temperature".into(), 0.5.into());
        endpoint.extra.insert("file".into(), "ignored".into());
        let body = String::from_utf8(body(&endpoint, b"RIFFdata", "audio.wav", "audio/wav").unwrap()).unwrap();
        let parts: Vec<&str> = body.split(&format!("--{BOUNDARY}")).collect();
        assert_eq!(parts.len(), 7, "{body}");
        assert!(parts[1].contains("name=\"file\"; filename=\"audio.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFFdata"));
        assert!(parts[2].ends_with("name=\"model\"\r\n\r\nm\r\n"));
        assert!(parts[3].ends_with("name=\"stream\"\r\n\r\ntrue\r\n"));
        assert!(parts[4].ends_with("name=\"language\"\r\n\r\nen\r\n"));
        assert!(parts[5].ends_with("name=\"temperature\"\r\n\r\n0.5\r\n"));
        assert_eq!(parts[6], "--\r\n");
    }
}
