//! OpenAI's images API bodies: `/v1/images/generations` (a JSON body with the prompt) and
//! `/v1/images/edits` (a form with the image and the prompt).

use anyhow::Result;
use serde_json::{Map, Value};

use super::multipart::Form;
use super::with_extra;
use crate::plan::Endpoint;

/// `{"prompt", "model", "response_format": "b64_json", "n": 1, "stream"?}` and the extra fields.
pub(super) fn generation_body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("prompt".into(), prompt.into());
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("response_format".into(), "b64_json".into());
    body.insert("n".into(), 1.into());
    if endpoint.streaming {
        body.insert("stream".into(), true.into());
    }
    with_extra(body, &endpoint.extra)
}

/// The form of an edit: `image` (the file), `prompt`, `model`, `response_format`, `n`,
/// `stream` when streaming, then the extra fields (the image excepted).
pub(super) fn edit_body(
    endpoint: &Endpoint,
    prompt: &str,
    image: &[u8],
    file_name: &str,
    media_type: &str,
) -> Result<Vec<u8>> {
    let mut fields = generation_body(endpoint, prompt);
    fields.remove("image");
    Ok(Form::new().file("image", file_name, media_type, image)?.json_fields(&fields)?.finish())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;
    use crate::request_bodies::multipart::BOUNDARY;

    #[test]
    fn generation_asks_for_one_base64_image_and_extras_win() {
        let mut endpoint = crate::request_bodies::test_endpoint(EndpointKind::ImageGeneration);
        endpoint.extra.insert("size".into(), "256x256".into());
        endpoint.extra.insert("n".into(), 2.into());
        assert_eq!(
            Value::Object(generation_body(&endpoint, "a cat")),
            json!({"prompt": "a cat", "model": "m", "response_format": "b64_json", "n": 2, "size": "256x256"})
        );
        let streaming = Endpoint { streaming: true, ..endpoint };
        assert_eq!(generation_body(&streaming, "a cat")["stream"], json!(true));
    }

    #[test]
    fn an_edit_is_a_form_with_the_image_first() {
        let endpoint = crate::request_bodies::test_endpoint(EndpointKind::ImageEdit);
        let body = edit_body(&endpoint, "make it blue", b"\x89PNG", "image.png", "image/png").unwrap();
        let body = String::from_utf8_lossy(&body);
        let parts: Vec<&str> = body.split(&format!("--{BOUNDARY}")).collect();
        assert!(
            parts[1].contains("name=\"image\"; filename=\"image.png\"\r\nContent-Type: image/png\r\n\r\n\u{fffd}PNG")
        );
        assert!(parts[2].ends_with("name=\"prompt\"\r\n\r\nmake it blue\r\n"), "{}", parts[2]);
        assert!(parts[3].ends_with("name=\"model\"\r\n\r\nm\r\n"));
        assert!(body.contains("name=\"n\"\r\n\r\n1\r\n"));
        assert!(!body.contains("name=\"stream\""));
    }
}
