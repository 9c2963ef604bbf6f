//! Synthetic images for vision chat, image edits and retrieval: seeded pictures (a gradient,
//! grain and blocks of noise) encoded as PNG (`png`) or JPEG (`jpeg-encoder`), given to each
//! synthetic entry as base64 `data:` URLs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use anyhow::{Context, Result};

use super::DatasetEntry;
use crate::plan::{ImageFormat, ImageSettings, SyntheticDataset};
use crate::rng::SeededRng;

/// Keeps the image stream apart from the prompt stream drawn from the same seed.
const IMAGE_STREAM: u64 = 0x1A6E_5EED_0F1C_0DE5;
/// JPEG quality when the settings give none.
const DEFAULT_JPEG_QUALITY: u8 = 85;
/// Rectangles of noise drawn over each picture's gradient.
const NOISE_BLOCKS: usize = 4;
/// Grain on the gradient: each channel moves by up to this much either way.
const GRAIN: i32 = 6;

/// Gives each entry the images `spec` asks for (none when it asks for none), in entry order.
pub fn add_synthetic(spec: &SyntheticDataset, entries: &mut [DatasetEntry]) -> Result<()> {
    let Some(settings) = spec.images else { return Ok(()) };
    let mut rng = SeededRng::new(spec.random_seed ^ IMAGE_STREAM);
    for entry in entries {
        entry.images = (0..settings.count).map(|_| data_url(&settings, &mut rng)).collect::<Result<_>>()?;
    }
    Ok(())
}

/// One image of `settings`, drawn from `rng`, as a `data:` URL.
fn data_url(settings: &ImageSettings, rng: &mut SeededRng) -> Result<String> {
    let rgb = picture(settings.width as usize, settings.height as usize, rng);
    let (media_type, bytes) = match settings.format {
        ImageFormat::Png => ("image/png", encode_png(settings.width, settings.height, &rgb)?),
        ImageFormat::Jpeg => {
            let quality = settings.quality.unwrap_or(DEFAULT_JPEG_QUALITY);
            ("image/jpeg", encode_jpeg(settings.width, settings.height, &rgb, quality)?)
        }
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

    const PNG: ImageSettings =
        ImageSettings { count: 2, width: 16, height: 8, format: ImageFormat::Png, quality: None };
    const JPEG: ImageSettings =
        ImageSettings { count: 1, width: 64, height: 40, format: ImageFormat::Jpeg, quality: None };

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
}
