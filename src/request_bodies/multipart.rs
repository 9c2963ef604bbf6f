//! `multipart/form-data` request bodies (RFC 7578) for the upload APIs (audio transcription,
//! image edits) and for the video and image generation bodies an endpoint asks to send as a
//! form (`form_data`): text fields and files between one fixed boundary, checked never to occur
//! in what it separates.

use anyhow::{Result, bail};

use crate::plan::{Endpoint, EndpointKind};

/// The boundary of every form aiperf sends (the content type names it).
pub(super) const BOUNDARY: &str = "aiperf-form-7d1e4c9a2f5b8036";

/// The `content-type` of a form body.
const CONTENT_TYPE: &str = "multipart/form-data; boundary=aiperf-form-7d1e4c9a2f5b8036";

/// The `content-type` of `endpoint`'s request bodies: a form for the upload kinds and where
/// the endpoint asks for one (`form_data`), JSON otherwise.
pub fn content_type_of(endpoint: &Endpoint) -> &'static str {
    match endpoint.kind {
        EndpointKind::AudioTranscription | EndpointKind::ImageEdit => CONTENT_TYPE,
        _ if endpoint.request.form_data => CONTENT_TYPE,
        _ => "application/json",
    }
}

/// The kinds whose JSON body may go as a form instead (`form_data`): flat fields, one request.
pub fn may_send_a_form(kind: EndpointKind) -> bool {
    matches!(kind, EndpointKind::VideoGeneration | EndpointKind::ImageGeneration)
}

/// A JSON body's fields as a form, as AIPerf writes one: null fields left out, strings as they
/// are, any other value as its JSON (`true`, `4`, `{"a": 1}`). A field name a form cannot
/// carry is an error naming it.
pub fn form_of(body: &serde_json::Map<String, serde_json::Value>) -> Result<Vec<u8>> {
    Ok(Form::new().json_fields(body.iter().filter(|(_, value)| !value.is_null()))?.finish())
}

/// A form being written: fields and files in the order they are added.
pub(super) struct Form {
    body: Vec<u8>,
}

impl Form {
    pub fn new() -> Self {
        Self { body: Vec::new() }
    }

    /// A text field.
    pub fn text(mut self, name: &str, value: &str) -> Result<Self> {
        self.part_header(name, None)?;
        self.push_content(value.as_bytes())?;
        Ok(self)
    }

    /// A file field with its file name and media type.
    pub fn file(mut self, name: &str, file_name: &str, media_type: &str, bytes: &[u8]) -> Result<Self> {
        self.part_header(name, Some((file_name, media_type)))?;
        self.push_content(bytes)?;
        Ok(self)
    }

    /// A text field per JSON field: strings as they are, any other value as its JSON.
    pub fn json_fields<'a>(
        mut self,
        fields: impl IntoIterator<Item = (&'a String, &'a serde_json::Value)>,
    ) -> Result<Self> {
        for (name, value) in fields {
            self = match value {
                serde_json::Value::String(text) => self.text(name, text)?,
                other => self.text(name, &other.to_string())?,
            };
        }
        Ok(self)
    }

    /// The whole body, closed by the final boundary.
    pub fn finish(mut self) -> Vec<u8> {
        self.body.extend_from_slice(b"--");
        self.body.extend_from_slice(BOUNDARY.as_bytes());
        self.body.extend_from_slice(b"--\r\n");
        self.body
    }

    fn part_header(&mut self, name: &str, file: Option<(&str, &str)>) -> Result<()> {
        if name.contains(['"', '\r', '\n']) || file.is_some_and(|(file_name, _)| file_name.contains(['"', '\r', '\n']))
        {
            bail!("form field {name:?}: names may not hold quotes or line breaks");
        }
        self.body.extend_from_slice(b"--");
        self.body.extend_from_slice(BOUNDARY.as_bytes());
        self.body.extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.body.extend_from_slice(name.as_bytes());
        self.body.push(b'"');
        if let Some((file_name, media_type)) = file {
            self.body.extend_from_slice(b"; filename=\"");
            self.body.extend_from_slice(file_name.as_bytes());
            self.body.extend_from_slice(b"\"\r\nContent-Type: ");
            self.body.extend_from_slice(media_type.as_bytes());
        }
        self.body.extend_from_slice(b"\r\n\r\n");
        Ok(())
    }

    fn push_content(&mut self, content: &[u8]) -> Result<()> {
        if content.windows(BOUNDARY.len()).any(|window| window == BOUNDARY.as_bytes()) {
            bail!("a form part holds the form's boundary {BOUNDARY:?}; it cannot be sent as multipart");
        }
        self.body.extend_from_slice(content);
        self.body.extend_from_slice(b"\r\n");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_files_are_framed_by_the_boundary() {
        let body =
            Form::new().text("model", "m").unwrap().file("file", "a.wav", "audio/wav", b"RIFF").unwrap().finish();
        let text = String::from_utf8(body).unwrap();
        assert_eq!(
            text,
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n\
                 --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n\
                 --{BOUNDARY}--\r\n"
            )
        );
        assert!(CONTENT_TYPE.ends_with(BOUNDARY));
    }

    #[test]
    fn content_holding_the_boundary_or_bad_names_are_refused() {
        let error = Form::new().text("prompt", &format!("x{BOUNDARY}y")).err().unwrap();
        assert!(error.to_string().contains("holds the form's boundary"), "{error}");
        assert!(Form::new().text("a\"b", "x").is_err());
    }
}
