//! The bodies of the kinds whose requests carry an entry's files: an audio transcription's
//! form with its audio, an image edit's form with its image (from a `data:` URL), an image
//! retrieval's image inputs.

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::{audio_transcription, image_retrieval, images_api};
use crate::plan::{Endpoint, EndpointKind};

/// An audio file to upload: its bytes, file name and media type.
pub struct AudioUpload<'a> {
    pub bytes: &'a [u8],
    pub file_name: &'a str,
    pub media_type: &'a str,
}

/// The body for an entry of `endpoint`'s kind with its images and audio; `None` for kinds
/// whose body is the prompt's alone. An entry without the file its kind needs is an error.
pub fn media_request_body(
    endpoint: &Endpoint,
    prompt: &str,
    images: &[String],
    audio: Option<AudioUpload<'_>>,
) -> Result<Option<Vec<u8>>> {
    let kind = endpoint.kind;
    let body = match kind {
        EndpointKind::AudioTranscription => {
            let audio = audio.ok_or_else(|| {
                anyhow!(
                    "kind \"audio_transcription\" uploads an audio file; give the dataset `audio` (--audio-length-mean)"
                )
            })?;
            audio_transcription::body(endpoint, audio.bytes, audio.file_name, audio.media_type)?
        }
        EndpointKind::ImageEdit => {
            let Some(image) = images.first() else {
                bail!("kind \"image_edit\" uploads an image; give the dataset `images` (--image-width-mean)");
            };
            let (media_type, bytes) = decode_data_url(image)?;
            let file_name = format!("image.{}", media_type.strip_prefix("image/").unwrap_or("bin"));
            images_api::edit_body(endpoint, prompt, &bytes, &file_name, media_type)?
        }
        EndpointKind::ImageRetrieval => {
            if images.is_empty() {
                bail!("kind \"image_retrieval\" sends images; give the dataset `images` (--image-width-mean)");
            }
            serde_json::Value::Object(image_retrieval::body(endpoint, images)).to_string().into_bytes()
        }
        _ => return Ok(None),
    };
    Ok(Some(body))
}

/// The media type and bytes of a base64 `data:` URL (an upload needs the bytes themselves).
fn decode_data_url(url: &str) -> Result<(&str, Vec<u8>)> {
    let shown = &url[..url.len().min(40)];
    let (header, data) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
        .ok_or_else(|| anyhow!("image {shown:?}… is not a data: URL; an upload needs the image's bytes"))?;
    let media_type = header.strip_suffix(";base64").ok_or_else(|| anyhow!("image {shown:?}… is not base64-encoded"))?;
    let bytes = BASE64.decode(data).with_context(|| format!("image {shown:?}… has bad base64"))?;
    Ok((media_type, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request_bodies::multipart::BOUNDARY;

    fn endpoint(kind: EndpointKind) -> Endpoint {
        crate::request_bodies::test_endpoint(kind)
    }

    #[test]
    fn an_edit_uploads_the_first_image_s_bytes() {
        let images = ["data:image/png;base64,iVBORw==".to_string()];
        let body = media_request_body(&endpoint(EndpointKind::ImageEdit), "p", &images, None).unwrap().unwrap();
        let expected_head = format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image.png\"\r\nContent-Type: image/png\r\n\r\n"
        );
        assert!(body.starts_with(expected_head.as_bytes()));
        assert_eq!(&body[expected_head.len()..expected_head.len() + 4], b"\x89PNG");
    }

    #[test]
    fn kinds_without_their_files_or_with_url_images_are_errors() {
        let error = media_request_body(&endpoint(EndpointKind::AudioTranscription), "p", &[], None).err().unwrap();
        assert!(error.to_string().contains("uploads an audio file"), "{error}");
        let error = media_request_body(&endpoint(EndpointKind::ImageEdit), "p", &[], None).err().unwrap();
        assert!(error.to_string().contains("uploads an image"), "{error}");
        let remote = ["https://example.com/a.png".to_string()];
        let error = media_request_body(&endpoint(EndpointKind::ImageEdit), "p", &remote, None).err().unwrap();
        assert!(error.to_string().contains("is not a data: URL"), "{error}");
        assert!(media_request_body(&endpoint(EndpointKind::Chat), "p", &[], None).unwrap().is_none());
    }
}
