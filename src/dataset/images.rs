//! Synthetic images for vision chat, image edits and retrieval: seeded pictures (a gradient,
//! grain and blocks of noise) encoded as PNG (`png`) or JPEG (`jpeg-encoder`), given to each
//! synthetic entry as base64 `data:` URLs. Each image's size (about its mean when it has a
//! spread) and its format (when `random`) are AIPerf 0.13's draws from the same seed (its
//! `dataset.image.dimensions` and `dataset.image.format` streams); the pixels are this
//! project's.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use anyhow::{Context, Result};

use super::DatasetEntry;
use super::aiperf_draws::positive_normal_integer;
use crate::plan::{ImageFormat, ImageSettings, SyntheticDataset};
use crate::rng::SeededRng;
use crate::rng::aiperf_streams::derived;
use crate::rng::python::PythonRandom;

/// Keeps the image stream apart from the prompt stream drawn from the same seed.
const IMAGE_STREAM: u64 = 0x1A6E_5EED_0F1C_0DE5;
const DIMENSIONS: &str = "dataset.image.dimensions";
const FORMAT: &str = "dataset.image.format";
/// JPEG quality when the settings give none.
const DEFAULT_JPEG_QUALITY: u8 = 85;
/// Rectangles of noise drawn over each picture's gradient.
const NOISE_BLOCKS: usize = 4;
/// Grain on the gradient: each channel moves by up to this much either way.
const GRAIN: i32 = 6;

/// Gives each entry the images `spec` asks for (none when it asks for none), in entry order.
pub fn add_synthetic(spec: &SyntheticDataset, entries: &mut [DatasetEntry]) -> Result<()> {
    let Some(settings) = spec.images else { return Ok(()) };
    let mut draws = ImageDraws {
        dimensions: derived(spec.random_seed, DIMENSIONS),
        formats: derived(spec.random_seed, FORMAT),
        pixels: SeededRng::new(spec.random_seed ^ IMAGE_STREAM),
    };
    for entry in entries {
        entry.images = (0..settings.count).map(|_| data_url(&settings, &mut draws)).collect::<Result<_>>()?;
    }
    Ok(())
}

/// What an image draws: its format and size as AIPerf draws them, its pixels.
struct ImageDraws {
    dimensions: PythonRandom,
    formats: PythonRandom,
    pixels: SeededRng,
}

impl ImageDraws {
    /// `format`, or for `random` Python's `choice` of PNG and JPEG.
    fn format(&mut self, format: ImageFormat) -> ImageFormat {
        match format {
            ImageFormat::Random => [ImageFormat::Png, ImageFormat::Jpeg][self.formats.below(2)],
            format => format,
        }
    }

    /// A side of `mean` pixels, drawn about it when `stddev` is not 0 (a draw at most
    /// `MAX_SIDE_PX`, or the mean when that is larger).
    fn side(&mut self, mean: u32, stddev: u32) -> u32 {
        let drawn = match stddev {
            0 => u64::from(mean.max(1)),
            _ => positive_normal_integer(&mut self.dimensions, f64::from(mean), f64::from(stddev)),
        };
        drawn.min(u64::from(ImageSettings::MAX_SIDE_PX.max(mean))) as u32
    }
}

/// One image of `settings`, drawn from `draws`, as a `data:` URL.
fn data_url(settings: &ImageSettings, draws: &mut ImageDraws) -> Result<String> {
    let format = draws.format(settings.format);
    let width = draws.side(settings.width, settings.width_stddev);
    let height = draws.side(settings.height, settings.height_stddev);
    let rgb = picture(width as usize, height as usize, &mut draws.pixels);
    let (media_type, bytes) = match format {
        ImageFormat::Jpeg => {
            let quality = settings.quality.unwrap_or(DEFAULT_JPEG_QUALITY);
            ("image/jpeg", encode_jpeg(width, height, &rgb, quality)?)
        }
        _ => ("image/png", encode_png(width, height, &rgb)?),
    };
    Ok(format!("data:{media_type};base64,{}", BASE64.encode(bytes)))
}

/// 8-bit RGB pixels as a PNG file (fast compression: the pictures are partly noise).
fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header().context("encoding a synthetic PNG")?;
    writer.write_image_data(rgb).context("encoding a synthetic PNG")?;
    writer.finish().context("encoding a synthetic PNG")?;
    Ok(out)
}

/// 8-bit RGB pixels as a baseline JFIF JPEG of `quality` (1 to 100).
fn encode_jpeg(width: u32, height: u32, rgb: &[u8], quality: u8) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let (width, height) = (u16::try_from(width)?, u16::try_from(height)?);
    jpeg_encoder::Encoder::new(&mut out, quality)
        .encode(rgb, width, height, jpeg_encoder::ColorType::Rgb)
        .context("encoding a synthetic JPEG")?;
    Ok(out)
}

/// RGB pixels, row by row: a diagonal gradient between two random colours with a light grain,
/// and a few rectangles of plain noise, so a JPEG is about as big as a photo's.
fn picture(width: usize, height: usize, rng: &mut SeededRng) -> Vec<u8> {
    let [from, to] = [rng.next_u64(), rng.next_u64()].map(|bits| bits.to_le_bytes().map(f32::from));
    let blocks: Vec<[usize; 4]> = (0..NOISE_BLOCKS)
        .map(|_| {
            let (x, y) = (rng.below(width as u64) as usize, rng.below(height as u64) as usize);
            let (w, h) = (1 + rng.below(width as u64 / 3 + 1) as usize, 1 + rng.below(height as u64 / 3 + 1) as usize);
            [x, y, x + w, y + h]
        })
        .collect();
    let span = (width + height).saturating_sub(2).max(1) as f32;
    let mut rgb = Vec::with_capacity(width * height * 3);
    for y in 0..height {
        for x in 0..width {
            let random = rng.next_u64().to_le_bytes();
            if blocks.iter().any(|&[x0, y0, x1, y1]| (x0..x1).contains(&x) && (y0..y1).contains(&y)) {
                rgb.extend_from_slice(&random[..3]);
                continue;
            }
            let t = (x + y) as f32 / span;
            for channel in 0..3 {
                let shade = from[channel] + (to[channel] - from[channel]) * t;
                let grain = i32::from(random[channel]) % (2 * GRAIN + 1) - GRAIN;
                rgb.push((shade as i32 + grain).clamp(0, 255) as u8);
            }
        }
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Dist;

    fn spec(images: Option<ImageSettings>, seed: u64) -> SyntheticDataset {
        SyntheticDataset {
            isl: Dist::fixed(8.0),
            osl: Some(Dist::fixed(4.0)),
            random_seed: seed,
            entries: 2,
            images,
            options: Default::default(),
        }
    }

    fn images_of(images: Option<ImageSettings>, seed: u64) -> Vec<Vec<String>> {
        let mut entries =
            vec![DatasetEntry::counted(&crate::dataset::tokenizer::Tokenizer::shared_builtin(), "a".into(), None); 2];
        add_synthetic(&spec(images, seed), &mut entries).unwrap();
        entries.into_iter().map(|entry| entry.images).collect()
    }

    const PNG: ImageSettings = ImageSettings {
        count: 2,
        width: 16,
        height: 8,
        width_stddev: 0,
        height_stddev: 0,
        format: ImageFormat::Png,
        quality: None,
    };
    const JPEG: ImageSettings = ImageSettings { count: 1, width: 64, height: 40, format: ImageFormat::Jpeg, ..PNG };

    #[test]
    fn each_entry_gets_its_own_seeded_png_images() {
        let images = images_of(Some(PNG), 7);
        let (first, second) = (&images[0], &images[1]);
        assert_eq!(first.len(), 2);
        assert!(first.iter().chain(second).all(|url| url.starts_with("data:image/png;base64,iVBORw0KGgo")));
        assert_ne!(first[0], first[1]);
        assert_ne!(first, second);
        let png = BASE64.decode(first[0].trim_start_matches("data:image/png;base64,")).unwrap();
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let info = decoder.info();
        assert_eq!((info.width, info.height, info.color_type), (16, 8, png::ColorType::Rgb));
        let mut pixels = vec![0; decoder.output_buffer_size().unwrap()];
        decoder.next_frame(&mut pixels).unwrap();
        assert_eq!(pixels.len(), 16 * 8 * 3);

        // The same seed gives the same images; another seed, others.
        assert_eq!(images_of(Some(PNG), 7), images);
        assert_ne!(images_of(Some(PNG), 8)[0], *first);
    }

    #[test]
    fn jpeg_images_are_seeded_and_their_quality_sets_their_size() {
        let images = images_of(Some(JPEG), 3);
        let jpeg = BASE64.decode(images[0][0].strip_prefix("data:image/jpeg;base64,").unwrap()).unwrap();
        assert_eq!(jpeg[..4], [0xff, 0xd8, 0xff, 0xe0]);
        assert_eq!(&jpeg[6..11], b"JFIF\0");
        assert_eq!(images_of(Some(JPEG), 3), images, "the same seed, the same bytes");
        assert_ne!(images[0], images[1]);
        let low = images_of(Some(ImageSettings { quality: Some(30), ..JPEG }), 3);
        assert!(low[0][0].len() < images[0][0].len(), "{} vs {}", low[0][0].len(), images[0][0].len());
        // Smaller than raw pixels (64 × 40 × 3 bytes), yet more than a flat picture would take.
        assert!((600..64 * 40 * 3).contains(&jpeg.len()), "{} bytes", jpeg.len());
    }

    #[test]
    fn no_image_settings_give_no_images() {
        assert_eq!(images_of(None, 7), [Vec::<String>::new(), Vec::new()]);
    }

    /// CPython 3.11 with AIPerf's derivation, seed 4: for each image, `choice([png, jpeg])` from
    /// the `dataset.image.format` stream, then its width about 64 ± 16 and height about 40 ± 8
    /// (`sample_positive_normal_integer`) from the `dataset.image.dimensions` stream.
    const AIPERF_SEED_4: [(&str, u32, u32); 4] =
        [("png", 64, 28), ("jpeg", 45, 39), ("jpeg", 64, 47), ("jpeg", 72, 46)];

    #[test]
    fn spread_sizes_and_random_formats_are_aiperfs_draws() {
        let settings = ImageSettings { width_stddev: 16, height_stddev: 8, format: ImageFormat::Random, ..JPEG };
        let drawn: Vec<(&str, u32, u32)> = images_of(Some(ImageSettings { count: 2, ..settings }), 4)
            .iter()
            .flatten()
            .map(|url| {
                let (format, data) = url.strip_prefix("data:image/").unwrap().split_once(";base64,").unwrap();
                let bytes = BASE64.decode(data).unwrap();
                let (width, height) = match format {
                    "png" => {
                        let decoder = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
                        (decoder.info().width, decoder.info().height)
                    }
                    // The SOF0 segment after the JFIF header: height, then width.
                    _ => {
                        let sof = bytes.windows(2).position(|pair| pair == [0xff, 0xc0]).expect("a baseline frame");
                        let side = |at: usize| u32::from(u16::from_be_bytes([bytes[at], bytes[at + 1]]));
                        (side(sof + 7), side(sof + 5))
                    }
                };
                (if format == "png" { "png" } else { "jpeg" }, width, height)
            })
            .collect();
        assert_eq!(drawn, AIPERF_SEED_4);
    }
}
