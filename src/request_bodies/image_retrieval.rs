//! NVIDIA NIM image retrieval's body (`/v1/infer`): the entry's images as `image_url` inputs.

use serde_json::{Map, Value, json};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"input": [{"type": "image_url", "url"}, …]}` and the extra fields.
pub(super) fn body(endpoint: &Endpoint, images: &[String]) -> Map<String, Value> {
    let input: Vec<Value> = images.iter().map(|url| json!({"type": "image_url", "url": url})).collect();
    let mut body = Map::new();
    body.insert("input".into(), Value::Array(input));
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn images_become_inputs() {
        let endpoint = crate::request_bodies::test_endpoint(EndpointKind::ImageRetrieval);
        let images = ["data:image/png;base64,AA==".to_string(), "https://x/b.jpg".to_string()];
        assert_eq!(
            Value::Object(body(&endpoint, &images)),
            json!({"input": [{"type": "image_url", "url": "data:image/png;base64,AA=="},
                             {"type": "image_url", "url": "https://x/b.jpg"}]})
        );
    }
}
