//! `images: #{ count: 1, width: 512, height: 512, format: "png" }` of `synthetic(#{..})`: how
//! many synthetic images go with each prompt, their size (pixels, or `normal(512, 64)`: each
//! image's side drawn in whole pixels), their format (`"png"`, `"jpeg"` with an optional
//! `quality` from 1 to 100, or `"random"`: either, drawn for each image).

use rhai::Map;

use super::distributions::dist_of;
use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{ImageFormat, ImageSettings};

const IMAGE_KEYS: &[&str] = &["count", "width", "height", "format", "quality"];
const DEFAULT_SIDE_PX: f64 = 512.0;
const MAX_COUNT: u64 = 32;

/// The image settings of a `synthetic(#{ images: #{..} })` map.
pub fn image_settings(map: Map) -> ScriptResult<ImageSettings> {
    let mut r = MapReader::new("synthetic images", map, IMAGE_KEYS)?;
    let count = r.opt_u64("count")?.unwrap_or(1);
    if !(1..=MAX_COUNT).contains(&count) {
        return script_error(format!("synthetic images: `count` must be 1 to {MAX_COUNT}, got {count}"));
    }
    let most = ImageSettings::MAX_SIDE_PX;
    let mut side = |key: &str| -> ScriptResult<(u32, u32)> {
        let (mean, stddev) = match dist_of(&mut r, key, DEFAULT_SIDE_PX)?.as_plain_normal() {
            Some((mean, stddev)) if stddev >= 0.0 => (mean, stddev),
            _ => {
                return script_error(format!(
                    "synthetic images: `{key}` is a number of pixels or normal(mean, stddev)"
                ));
            }
        };
        if !(1.0..=f64::from(most)).contains(&mean) {
            return script_error(format!("synthetic images: `{key}` must be 1 to {most} pixels, got {mean}"));
        }
        Ok((mean as u32, (stddev as u32).min(most)))
    };
    let ((width, width_stddev), (height, height_stddev)) = (side("width")?, side("height")?);
    let format = match r.opt_string("format")?.as_deref() {
        None | Some("png") => ImageFormat::Png,
        Some("jpeg" | "jpg") => ImageFormat::Jpeg,
        Some("random") => ImageFormat::Random,
        Some(other) => {
            return script_error(format!(
                "synthetic images: `format` must be \"png\", \"jpeg\" or \"random\", got \"{other}\""
            ));
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
    Ok(ImageSettings { count: count as u32, width, height, width_stddev, height_stddev, format, quality })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(script: &str) -> ScriptResult<ImageSettings> {
        let mut engine = rhai::Engine::new();
        crate::script::distributions::register(&mut engine);
        image_settings(engine.eval::<Map>(script).unwrap())
    }

    fn error(script: &str) -> String {
        settings(script).unwrap_err().to_string()
    }

    #[test]
    fn defaults_and_given_values() {
        let defaults = settings("#{}").unwrap();
        let png = ImageSettings {
            count: 1,
            width: 512,
            height: 512,
            width_stddev: 0,
            height_stddev: 0,
            format: ImageFormat::Png,
            quality: None,
        };
        assert_eq!(defaults, png);
        let given = settings(r#"#{ count: 3, width: 64, height: 32, format: "png" }"#).unwrap();
        assert_eq!(given, ImageSettings { count: 3, width: 64, height: 32, ..png });
        let spread = settings(r#"#{ width: normal(640, 64.5), height: 480, format: "random", quality: 70 }"#).unwrap();
        assert_eq!(
            spread,
            ImageSettings {
                width: 640,
                height: 480,
                width_stddev: 64,
                format: ImageFormat::Random,
                quality: Some(70),
                ..png
            }
        );
        let jpeg = settings(r#"#{ format: "jpeg", quality: 60 }"#).unwrap();
        assert_eq!((jpeg.format, jpeg.quality), (ImageFormat::Jpeg, Some(60)));
        assert_eq!(settings(r#"#{ format: "jpg" }"#).unwrap().quality, None);
    }

    #[test]
    fn bad_values_name_the_key() {
        assert!(error("#{ count: 0 }").contains("`count` must be 1 to 32, got 0"));
        assert!(error("#{ width: 5000 }").contains("`width` must be 1 to 4096 pixels, got 5000"));
        assert!(error("#{ height: -1 }").contains("`height`"));
        assert!(error(r#"#{ format: "gif" }"#).contains("must be \"png\", \"jpeg\" or \"random\", got \"gif\""));
        assert!(
            error("#{ width: lognormal(512, 400) }").contains("`width` is a number of pixels or normal(mean, stddev)")
        );
        assert!(error(r#"#{ quality: 80 }"#).contains("`quality` is for format \"jpeg\" only"));
        assert!(error(r#"#{ format: "jpeg", quality: 0 }"#).contains("`quality` must be 1 to 100, got 0"));
        assert!(error("#{ widht: 5 }").contains("did you mean `width`"));
    }
}
