//! Synthetic images for vision chat: seeded RGB noise encoded as PNG, sent as base64 data URLs
//! in `image_url` content parts after each prompt's text.

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;

use super::image_png;
use crate::client::with_image_parts;
use crate::load::PreparedRequest;
use crate::plan::{Dataset, ImageFormat, ImageSettings};
use crate::rng::SeededRng;

/// Keeps the image stream apart from the prompt stream drawn from the same seed.
const IMAGE_STREAM: u64 = 0x1A6E_5EED_0F1C_0DE5;

/// Adds the dataset's synthetic images (if it asks for any) to every request body, in dataset
/// order; returns the requests and the number of images each one carries.
pub fn attach(dataset: &Dataset, mut requests: Vec<PreparedRequest>) -> Result<(Vec<PreparedRequest>, u64)> {
    let Dataset::Synthetic(spec) = dataset else { return Ok((requests, 0)) };
    let Some(settings) = spec.images else { return Ok((requests, 0)) };
    let mut rng = SeededRng::new(spec.random_seed ^ IMAGE_STREAM);
    for (index, request) in requests.iter_mut().enumerate() {
        let urls: Vec<String> = (0..settings.count).map(|_| data_url(&settings, &mut rng)).collect();
        let Some(body) = with_image_parts(&request.body, &urls)
            .with_context(|| format!("adding images to request {index} of the dataset"))?
        else {
            bail!("images need a chat endpoint (kind: \"chat\"); request {index} has no `messages`");
        };
        request.body = Bytes::from(body);
    }
    Ok((requests, u64::from(settings.count)))
}

/// One image of `settings`, drawn from `rng`, as a `data:` URL.
pub fn data_url(settings: &ImageSettings, rng: &mut SeededRng) -> String {
    match settings.format {
        ImageFormat::Png => {
            let png = image_png::encode_rgb(settings.width, settings.height, &noise(settings, rng));
            format!("data:image/png;base64,{}", BASE64.encode(png))
        }
    }
}

/// Random RGB pixels, row by row.
fn noise(settings: &ImageSettings, rng: &mut SeededRng) -> Vec<u8> {
    let len = settings.width as usize * settings.height as usize * 3;
    let mut pixels = Vec::with_capacity(len + 8);
    while pixels.len() < len {
        pixels.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    pixels.truncate(len);
    pixels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Dist, SyntheticDataset};
    use serde_json::Value;

    fn dataset(images: Option<ImageSettings>, seed: u64) -> Dataset {
        Dataset::Synthetic(SyntheticDataset {
            isl: Dist { mean: 8.0, stddev: 0.0 },
            osl: Dist { mean: 4.0, stddev: 0.0 },
            random_seed: seed,
            entries: 2,
            images,
        })
    }

    fn chat_request(prompt: &str) -> PreparedRequest {
        let body = serde_json::json!({ "model": "m", "messages": [{ "role": "user", "content": prompt }] });
        PreparedRequest { body: Bytes::from(body.to_string()), input_tokens: 2, max_tokens: Some(4) }
    }

    fn image_urls(request: &PreparedRequest) -> Vec<String> {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let parts = body["messages"][0]["content"].as_array().unwrap().clone();
        assert_eq!(parts[0]["type"], "text");
        parts[1..].iter().map(|part| part["image_url"]["url"].as_str().unwrap().to_string()).collect()
    }

    const SETTINGS: ImageSettings = ImageSettings { count: 2, width: 16, height: 8, format: ImageFormat::Png };

    #[test]
    fn each_request_gets_its_own_seeded_png_images() {
        let requests = vec![chat_request("a b"), chat_request("c d")];
        let (with_images, per_request) = attach(&dataset(Some(SETTINGS), 7), requests.clone()).unwrap();
        assert_eq!(per_request, 2);
        let first = image_urls(&with_images[0]);
        let second = image_urls(&with_images[1]);
        assert_eq!(first.len(), 2);
        assert!(first.iter().chain(&second).all(|url| url.starts_with("data:image/png;base64,iVBORw0KGgo")));
        assert_ne!(first[0], first[1]);
        assert_ne!(first, second);
        let png = BASE64.decode(first[0].trim_start_matches("data:image/png;base64,")).unwrap();
        // Signature, IHDR, IDAT (zlib header, one stored block of 8 × (1 + 48) bytes, Adler-32), IEND.
        assert_eq!(png.len(), 8 + 25 + (12 + 2 + 5 + 8 * 49 + 4) + 12);

        // The same seed gives the same images; another seed, others.
        let (again, _) = attach(&dataset(Some(SETTINGS), 7), requests.clone()).unwrap();
        assert_eq!(image_urls(&again[1]), second);
        let (reseeded, _) = attach(&dataset(Some(SETTINGS), 8), requests).unwrap();
        assert_ne!(image_urls(&reseeded[0]), first);
    }

    #[test]
    fn no_image_settings_leave_the_bodies_alone() {
        let requests = vec![chat_request("a b")];
        let (same, per_request) = attach(&dataset(None, 7), requests.clone()).unwrap();
        assert_eq!((same[0].body.clone(), per_request), (requests[0].body.clone(), 0));
    }

    #[test]
    fn a_body_without_messages_cannot_carry_images() {
        let completions = PreparedRequest { body: Bytes::from(r#"{"prompt":"x"}"#), input_tokens: 1, max_tokens: None };
        let error = attach(&dataset(Some(SETTINGS), 1), vec![completions]).unwrap_err().to_string();
        assert!(error.contains("kind: \"chat\""), "{error}");
    }
}
