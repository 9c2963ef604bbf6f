//! `images: #{ count: 1, width: 512, height: 512, format: "png" }` of `synthetic(#{..})`: how
//! many synthetic images go with each prompt, their size, their format (`"png"`, or `"jpeg"`
//! with an optional `quality` from 1 to 100).

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{ImageFormat, ImageSettings};

const IMAGE_KEYS: &[&str] = &["count", "width", "height", "format", "quality"];
const DEFAULT_SIDE_PX: u64 = 512;
/// Largest side accepted: images are generated and held in memory before the run.
const MAX_SIDE_PX: u64 = 4096;
const MAX_COUNT: u64 = 32;

/// The image settings of a `synthetic(#{ images: #{..} })` map.
pub fn image_settings(map: Map) -> ScriptResult<ImageSettings> {
    let mut r = MapReader::new("synthetic images", map, IMAGE_KEYS)?;
    let count = r.opt_u64("count")?.unwrap_or(1);
    if !(1..=MAX_COUNT).contains(&count) {
        return script_error(format!("synthetic images: `count` must be 1 to {MAX_COUNT}, got {count}"));
    }
    let mut side = |key: &str| -> ScriptResult<u32> {
        let px = r.opt_u64(key)?.unwrap_or(DEFAULT_SIDE_PX);
        if !(1..=MAX_SIDE_PX).contains(&px) {
            return script_error(format!("synthetic images: `{key}` must be 1 to {MAX_SIDE_PX} pixels, got {px}"));
        }
        Ok(px as u32)
    };
    let (width, height) = (side("width")?, side("height")?);
    let format = match r.opt_string("format")?.as_deref() {
        None | Some("png") => ImageFormat::Png,
        Some("jpeg" | "jpg") => ImageFormat::Jpeg,
        Some(other) => {
            return script_error(format!("synthetic images: `format` must be \"png\" or \"jpeg\", got \"{other}\""));
        }
    };
    let quality = r.opt_u64("quality")?;
    match (quality, format) {
        (Some(_), ImageFormat::Png) => {
            return script_error("synthetic images: `quality` is for format \"jpeg\" only (PNG is lossless)");
        }
        (Some(q), _) if !(1..=100).contains(&q) => {
            return script_error(format!("synthetic images: `quality` must be 1 to 100, got {q}"));
        }
        _ => {}
    }
    let quality = quality.map(|q| q as u8);
    Ok(ImageSettings { count: count as u32, width, height, format, quality })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(script: &str) -> ScriptResult<ImageSettings> {
        let map = rhai::Engine::new().eval::<Map>(script).unwrap();
        image_settings(map)
    }

    fn error(script: &str) -> String {
        settings(script).unwrap_err().to_string()
    }

    #[test]
    fn defaults_and_given_values() {
        let defaults = settings("#{}").unwrap();
        assert_eq!(
            defaults,
            ImageSettings { count: 1, width: 512, height: 512, format: ImageFormat::Png, quality: None }
        );
        let given = settings(r#"#{ count: 3, width: 64, height: 32, format: "png" }"#).unwrap();
        assert_eq!(given, ImageSettings { count: 3, width: 64, height: 32, format: ImageFormat::Png, quality: None });
        let jpeg = settings(r#"#{ format: "jpeg", quality: 60 }"#).unwrap();
        assert_eq!((jpeg.format, jpeg.quality), (ImageFormat::Jpeg, Some(60)));
        assert_eq!(settings(r#"#{ format: "jpg" }"#).unwrap().quality, None);
    }

    #[test]
    fn bad_values_name_the_key() {
        assert!(error("#{ count: 0 }").contains("`count` must be 1 to 32, got 0"));
        assert!(error("#{ width: 5000 }").contains("`width` must be 1 to 4096 pixels, got 5000"));
        assert!(error("#{ height: -1 }").contains("`height`"));
        assert!(error(r#"#{ format: "gif" }"#).contains("must be \"png\" or \"jpeg\", got \"gif\""));
        assert!(error(r#"#{ quality: 80 }"#).contains("`quality` is for format \"jpeg\" only"));
        assert!(error(r#"#{ format: "jpeg", quality: 0 }"#).contains("`quality` must be 1 to 100, got 0"));
        assert!(error("#{ widht: 5 }").contains("did you mean `width`"));
    }
}
