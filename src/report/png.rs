//! A chart's SVG rasterised to PNG with resvg and the embedded DejaVu Sans font: no browser,
//! no system fonts.

use std::sync::Arc;

use anyhow::{Context, Result};

/// Renders SVG charts to PNG; holds the font database built once.
pub struct PngRenderer {
    options: resvg::usvg::Options<'static>,
}

impl Default for PngRenderer {
    fn default() -> Self {
        Self::new()
    }
}

/// Pixels per SVG unit: sharp enough for slides.
const SCALE: f32 = 2.0;

impl PngRenderer {
    pub fn new() -> Self {
        let mut fonts = resvg::usvg::fontdb::Database::new();
        fonts.load_font_data(dejavu::sans::regular().to_vec());
        fonts.load_font_data(dejavu::sans::bold().to_vec());
        let options =
            resvg::usvg::Options { font_family: "DejaVu Sans".into(), fontdb: Arc::new(fonts), ..Default::default() };
        Self { options }
    }

    /// The PNG bytes of `svg`.
    pub fn render(&self, svg: &str) -> Result<Vec<u8>> {
        let tree = resvg::usvg::Tree::from_str(svg, &self.options).context("the chart is not valid SVG")?;
        let size = tree.size();
        let mut pixmap =
            resvg::tiny_skia::Pixmap::new((size.width() * SCALE).ceil() as u32, (size.height() * SCALE).ceil() as u32)
                .context("the chart has no size")?;
        resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(SCALE, SCALE), &mut pixmap.as_mut());
        pixmap.encode_png().context("cannot encode the PNG")
    }
}
